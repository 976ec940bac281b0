# SPDX-License-Identifier: Apache-2.0

''' What the serve command says: where it serves, that it stopped, and
    each failure to start in one line with its status.
'''


import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys

from pathlib import Path

import pytest

import invocables

from . import mcp_support
from . import serving_support


_DATA = Path( __file__ ).parent.parent / 'data' / 'serving'
_CONFIGURATION = _DATA / 'invocables.toml'
_SERVING = re.compile(
    r'^invocables: serving (\d+) tools at (http://127\.0\.0\.1:(\d+)/mcp) '
    r'\(Ctrl-C stops\)$' )


def _produce_command( *arguments: str ) -> list[ str ]:
    return [ sys.executable, '-m', 'invocables', 'serve', *arguments ]


def _run( *arguments: str, stdin: str = '' ):
    return subprocess.run(
        _produce_command( *arguments ),
        env = serving_support.produce_environment( ),
        capture_output = True, text = True, timeout = 120, check = False,
        input = stdin )


@contextlib.contextmanager
def _start( *arguments: str ):
    ''' Starts serve; yields process and its first line on stderr. '''
    process = subprocess.Popen(
        _produce_command( *arguments ),
        env = serving_support.produce_environment( ),
        stdout = subprocess.PIPE, stderr = subprocess.PIPE, text = True,
        start_new_session = True )
    assert process.stderr is not None
    try: yield process, process.stderr.readline( )
    finally:
        with contextlib.suppress( ProcessLookupError ):
            os.killpg( process.pid, signal.SIGKILL )
        process.communicate( timeout = 60 )


def _assert_one_line( completion, fragment: str, status: int ) -> None:
    assert completion.returncode == status, completion.stderr
    lines = completion.stderr.splitlines( )
    assert len( lines ) == 1, completion.stderr
    assert lines[ 0 ].startswith( 'invocables' )
    assert fragment in lines[ 0 ], lines[ 0 ]
    assert 'Traceback' not in completion.stderr
    assert completion.stdout == ''


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.parametrize( 'stop', [ signal.SIGINT, signal.SIGTERM ] )
async def test_100_http_says_where_and_stops( stop ):
    ''' Over HTTP on any free port, serve says the URL which clients use
        once it serves, serves there, and says it stopped on Ctrl-C or
        SIGTERM, with status 0.
    '''
    with _start(
        '--configuration', str( _CONFIGURATION ), '--http', '--port', '0'
    ) as ( process, line ):
        match = _SERVING.match( line.rstrip( '\n' ) )
        assert match, line
        ensemble = invocables.mcp.produce_ensemble(
            'served', url = match[ 2 ] )
        async with ensemble:
            names = { invoker.name for invoker in ensemble.survey_invokers( ) }
        assert { 'greet', 'get_current_time' } <= names
        assert int( match[ 1 ] ) == len( names )
        process.send_signal( stop )
        _, rest = process.communicate( timeout = 60 )
        assert process.returncode == 0, rest
    assert rest.splitlines( )[ -1 ] == 'invocables: stopped.'
    assert 'Traceback' not in rest


@pytest.mark.slow
def test_110_workers_stop( ):
    ''' With several workers, serve says where they start, and SIGTERM
        stops them all with status 0, leaving nothing running.
    '''
    with _start(
        '--configuration', str( _CONFIGURATION ), '--http', '--port', '0',
        '--stateless', '--workers', '2'
    ) as ( process, line ):
        assert re.match(
            r'^invocables: starting 2 workers at http://127\.0\.0\.1:\d+/mcp '
            r'\(Ctrl-C stops\)$', line ), line
        descendants = mcp_support.survey_descendants( process.pid )
        process.send_signal( signal.SIGTERM )
        _, rest = process.communicate( timeout = 60 )
        assert process.returncode == 0, rest
    assert rest.splitlines( )[ -1 ] == 'invocables: stopped.'
    assert not mcp_support.wait_until_dead( descendants, 30 )


def test_200_port_in_use( ):
    ''' A port in use is one line naming port and host; status 1. '''
    with socket.socket( ) as occupant:
        occupant.bind( ( '127.0.0.1', 0 ) )
        occupant.listen( )
        port = occupant.getsockname( )[ 1 ]
        completion = _run(
            '--configuration', str( _CONFIGURATION ), '--http',
            '--port', str( port ) )
    _assert_one_line(
        completion, f"port {port} on 127.0.0.1 is in use", 1 )


@pytest.mark.parametrize( 'port', [ '99999', '-1', 'eighty' ] )
def test_210_bad_port_is_usage( port ):
    ''' A port out of range is a usage error, before anything starts. '''
    completion = _run( '--http', '--port', port )
    assert completion.returncode == 2
    assert 'argument --port' in completion.stderr
    assert 'Traceback' not in completion.stderr


def test_220_unknown_host( ):
    ''' A host which is no address of the machine is one line; status 1. '''
    completion = _run(
        '--configuration', str( _CONFIGURATION ), '--http', '--host',
        'nonexistent.invalid', '--port', '0', '--no-token' )
    _assert_one_line( completion, "'nonexistent.invalid'", 1 )


@pytest.mark.slow
def test_230_dead_upstream_is_one_line( tmp_path ):
    ''' An upstream server which dies at start stops serve in one line
        naming it, not uvicorn's traceback nor an exit blamed on a tool.
    '''
    ( tmp_path / 'servers.json' ).write_text( json.dumps( { 'mcpServers': {
        'dead': { 'command': sys.executable,
                  'args': [ '-c', 'raise SystemExit( 5 )' ] } } } ) )
    configuration = tmp_path / 'invocables.toml'
    configuration.write_text( "[[ensembles]]\nmcp_servers = 'servers.json'\n" )
    for arguments in ( ( '--http', '--port', '0' ), ( ) ):
        completion = _run(
            '--configuration', str( configuration ), *arguments )
        _assert_one_line(
            completion, "Connection to ensemble 'dead' failed: the server "
            "process exited with status 5", 1 )
        assert 'sys.exit' not in completion.stderr


@pytest.mark.slow
def test_300_stdio_speaks_on_stderr_only( ):
    ''' Over stdio, serve says so on stderr, keeps stdout for the protocol
        (empty here), and says it stopped at the end of its input.
    '''
    completion = _run( '--configuration', str( _CONFIGURATION ) )
    assert completion.returncode == 0, completion.stderr
    assert completion.stdout == ''
    assert completion.stderr.splitlines( ) == [
        'invocables: serving 4 tools over stdio (the end of the standard '
        'input or Ctrl-C stops)',
        'invocables: stopped.' ]
