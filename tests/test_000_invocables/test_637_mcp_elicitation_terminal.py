# SPDX-License-Identifier: Apache-2.0

''' The terminal elicitor, with real streams (pipes) against
    server-everything's ``trigger-elicitation-request``, and in the
    ``invocables`` command fed on its standard input.
'''


import asyncio
import io
import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

import invocables
import invocables.mcp

from invocables.mcp import callbacks
from invocables.mcp import elicitation

from . import descriptors_support
from . import mcp_support


_BOUND = 30.0
# Answers to the 13 fields of server-everything's request, with bad ones
# first where a field is asked again.
_ANSWERS = (
    '',                     # name: required, asked again
    'Ada Lovelace',
    'maybe', 'yes',         # check: not a boolean, then yes
    '',                     # firstLine: its default
    'not-an-email', 'ada@example.org',
    '',                     # homepage: optional, skipped
    '2020-13-45', '1815-12-10',
    '500', '7',             # integer: over its maximum, then 7
    '2.5',                  # number
    '2',                    # single select, by number: Rachel
    'Piano, Drums',         # multiple select, by values
    'Wonder Woman',         # titled select, by label
    '1,3',                  # titled multiple select, by numbers
    'Dogs',                 # legacy titled enum, by label
)


def _produce( elicitor ):
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    return invocables.mcp.produce_ensemble(
        'everything', command = [ program, 'stdio' ], elicitor = elicitor )


async def _elicit( lines, *, close = True ):
    ''' Calls the elicitation tool with answers written to a pipe. '''
    descriptor_read, descriptor_write = os.pipe( )
    with os.fdopen( descriptor_read, 'r' ) as reader, \
        os.fdopen( descriptor_write, 'w' ) as writer:
        writer.write( ''.join( f"{line}\n" for line in lines ) )
        writer.flush( )
        if close: writer.close( )
        shown = io.StringIO( )
        elicitor = invocables.mcp.produce_terminal_elicitor( reader, shown )
        async with _produce( elicitor ) as ensemble:
            context = invocables.InvocationContext(
                auxdata = None, invoker = None, namespace = { } )
            invoker = ensemble.access_invoker( 'trigger-elicitation-request' )
            contents = await asyncio.wait_for(
                invoker( context, { } ), _BOUND )
    text = '\n'.join( getattr( item, 'text', '' ) for item in contents )
    return text, shown.getvalue( )


def _read_raw( text ):
    ''' Returns the raw result which server-everything echoes. '''
    return json.loads( text.split( 'Raw result:', 1 )[ 1 ] )


@pytest.mark.asyncio
async def test_100_accepted( ):
    ''' Every field is described (type, description, default, choices);
        bad answers are asked again; the accepted content reaches the
        server, converted to the types of the schema.
    '''
    text, shown = await _elicit( [ *_ANSWERS, 'y' ] )
    raw = _read_raw( text )
    assert raw[ 'action' ] == 'accept'
    assert raw[ 'content' ] == {
        'name': 'Ada Lovelace', 'check': True,
        'firstLine': 'It was a dark and stormy night.',
        'email': 'ada@example.org', 'birthdate': '1815-12-10',
        'integer': 7, 'number': 2.5,
        'untitledSingleSelectEnum': 'Rachel',
        'untitledMultipleSelectEnum': [ 'Piano', 'Drums' ],
        'titledSingleSelectEnum': 'hero-3',
        'titledMultipleSelectEnum': [ 'fish-1', 'fish-3' ],
        'legacyTitledEnum': 'pet-2' }
    assert "MCP server 'everything' asks: Please provide inputs" in shown
    assert '- name (string, required)' in shown
    assert 'Your full, legal name' in shown
    assert 'default: "It was a dark and stormy night."' in shown
    assert 'hero-3 (Wonder Woman)' in shown
    assert 'This field is required.' in shown
    assert 'Not accepted: answer y or n.' in shown
    assert "'not-an-email' is not a 'email'" in shown
    assert '500 is greater than the maximum of 100' in shown


@pytest.mark.asyncio
async def test_110_declined_and_cancelled( ):
    ''' '!decline' at a field or 'decline' at the end declines; an empty
        final answer, '!cancel' or the end of input cancels.
    '''
    cases = (
        ( [ 'Ada', '!decline' ], 'decline' ),
        ( [ *_ANSWERS, 'decline' ], 'decline' ),
        ( [ *_ANSWERS, '' ], 'cancel' ),
        ( [ 'Ada', 'y', '!cancel' ], 'cancel' ),
        ( [ 'Ada', 'y' ], 'cancel' ), # then the end of input
    )
    for lines, action in cases:
        text, shown = await _elicit( lines )
        assert _read_raw( text )[ 'action' ] == action, ( lines, text )
        assert f"[elicitation] {action}." in shown


@pytest.mark.asyncio
async def test_120_url_request( ):
    ''' A request to visit a URL shows it and asks to confirm. '''
    shown = io.StringIO( )
    elicitor = elicitation.produce_terminal_elicitor(
        io.StringIO( 'y\n' ), shown )
    response = await elicitor( callbacks.ElicitationRequest(
        ensemble = 'web', message = 'Sign in.',
        url = 'https://example.org/sign-in' ) )
    assert response.action is callbacks.ElicitationActions.Accept
    assert 'Open this URL: https://example.org/sign-in' in shown.getvalue( )


def test_130_answers_converted_and_validated( ):
    ''' Answers become values of the field's type, or a reason. '''
    integer = { 'type': 'integer', 'minimum': 1 }
    assert elicitation.validate_answer( integer, '3' ) == 3
    for text, reason in (
        ( '0', 'less than the minimum' ), ( '2.5', 'whole number' ),
        ( 'x', 'a number' ),
    ):
        with pytest.raises( ValueError, match = reason ):
            elicitation.validate_answer( integer, text )
    number = { 'type': 'number' }
    assert elicitation.validate_answer( number, '4' ) == 4
    assert elicitation.validate_answer( number, '4.5' ) == 4.5
    assert elicitation.validate_answer( { 'type': 'boolean' }, 'NO' ) is False
    choice = { 'type': 'string', 'enum': [ 'a', 'b' ] }
    with pytest.raises( ValueError, match = 'choose one of a, b' ):
        elicitation.validate_answer( choice, 'c' )
    assert elicitation.validate_answer( choice, '2' ) == 'b'


# The command, fed on its standard input.

def _write_configuration( folder ):
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    ( folder / 'everything.toml' ).write_text(
        "[ensemble]\nname = 'everything'\n\n[mcp]\n"
        f"command = [ {json.dumps( program )}, 'stdio' ]\n"
        "startup_timeout = 20\n" )
    path = folder / 'invocables.toml'
    path.write_text( "[[ensembles]]\nsource = 'everything.toml'\n" )
    return path


def _produce_environment( tmp_path ):
    environment = dict( os.environ )
    environment.pop( 'INVOCABLES_CONFIGURATION', None )
    environment[ 'XDG_CONFIG_HOME' ] = str( tmp_path / 'xdg' )
    environment[ 'PYTHONPATH' ] = str( descriptors_support.TESTS )
    return environment


def _produce_command( configuration ):
    return [
        sys.executable, '-m', 'invocables', 'invoke',
        '--configuration', str( configuration ),
        'trigger-elicitation-request' ]


@pytest.mark.slow
def test_200_command_reads_standard_input( tmp_path ):
    ''' The invoke command asks on the standard error stream and reads the
        answers from the standard input; at its end, it cancels.
    '''
    configuration = _write_configuration( tmp_path )
    for lines, action in (
        ( [ *_ANSWERS, 'y' ], 'accept' ), ( [ ], 'cancel' ),
    ):
        process = subprocess.run(
            _produce_command( configuration ), cwd = tmp_path,
            env = _produce_environment( tmp_path ),
            input = ''.join( f"{line}\n" for line in lines ),
            capture_output = True, text = True, timeout = 60, check = False )
        assert process.returncode == 0, process.stderr
        raw = _read_raw( process.stdout )
        assert raw[ 'action' ] == action
        assert ( raw.get( 'content', { } ).get( 'name' ) == 'Ada Lovelace' ) \
            is ( action == 'accept' )
        assert "MCP server 'everything' asks" in process.stderr
        assert 'Traceback' not in process.stderr


@pytest.mark.slow
def test_210_command_interrupted_cancels( tmp_path ):
    ''' Ctrl-C (SIGINT) while the command asks cancels the elicitation,
        not the command: the server is told 'cancel'.
    '''
    configuration = _write_configuration( tmp_path )
    process = subprocess.Popen(
        _produce_command( configuration ), cwd = tmp_path,
        env = _produce_environment( tmp_path ),
        stdin = subprocess.PIPE, stdout = subprocess.PIPE,
        stderr = subprocess.PIPE )
    try:
        _wait_for_text( process.stderr, b'  name: ', 60 )
        process.send_signal( signal.SIGINT )
        stdout, stderr = process.communicate( timeout = 60 )
    finally:
        if process.poll( ) is None: process.kill( )
    assert process.returncode == 0, stderr
    assert _read_raw( stdout.decode( ) )[ 'action' ] == 'cancel'
    assert b'[elicitation] cancel.' in stderr


def _wait_for_text( stream, text, timeout ):
    ''' Reads stream until text appears; bounded: no hang. '''
    deadline = time.monotonic( ) + timeout
    seen = b''
    while text not in seen:
        remaining = deadline - time.monotonic( )
        assert remaining > 0, seen
        ready, _, _ = select.select( [ stream ], [ ], [ ], remaining )
        if not ready: continue
        chunk = os.read( stream.fileno( ), 4096 )
        assert chunk, seen
        seen += chunk
