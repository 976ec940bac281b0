# SPDX-License-Identifier: Apache-2.0

''' Bounds of what a hostile server says and asks: the hand-written server
    ``hostile_rounds_server.py`` returns results, prompts and resources
    which break the MCP schema thousands of times (each fault quoting a
    secret), asks for elicitations whose schemas are nested hundreds of
    levels deep, and lists a tool whose ``x-mcp-header`` designation MCP
    2026-07-28 tells a client to drop. Each answer is an error of the
    library, bounded and redacted; no deep schema reaches the application;
    a tool which the SDK drops is an omission with its reason. With the
    mcp SDK 1.x (no 2026-07-28) the server speaks 2025-11-25.
'''


import asyncio
import io
import json

import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.mcp import (
    _sdk, callbacks, elicitation, exchanges, redaction, results )

from . import mcp_support


_MODERN = _sdk.MAJOR >= 2 # the SDK speaks 2026-07-28
_SERVER = str( mcp_support.SERVERS / 'hostile_rounds_server.py' )
_INVALID = 'not a valid MCP result'
_MESSAGE_MAXIMUM = 3000 # characters of an error quoting thousands of faults
_SECRET = 'Zq9-hostile-secret-tail'
_WAIT = 30 # seconds: bounds which prove "does not hang"
# The protocols which each SDK speaks: 'legacy' reaches 2025-11-25 alone.
_PROTOCOLS = [ 'auto', 'legacy' ] if _MODERN else [ 'auto' ]


class _Answers:
    ''' An application's elicitor, recorded. '''

    def __init__( self ):
        self.elicited = [ ]

    async def elicit( self, request ):
        self.elicited.append( request.message )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'a': 'word' } )


def _produce( monkeypatch, *flags, protocol = 'auto', answers = None ):
    ''' Returns ensemble of the server, which knows its secret. '''
    monkeypatch.setenv( 'INVOCABLES_TEST_HOSTILE_SECRET', _SECRET )
    legacy = protocol == 'legacy' or not _MODERN
    arguments = [ *flags, '--no-tasks' ]
    if legacy: arguments.append( '--legacy' )
    options = { } if answers is None else { 'elicitor': answers.elicit }
    command = [ mcp_support.SERVERS_PYTHON, _SERVER, *arguments ]
    return invocables.mcp.produce_ensemble(
        'hostile', command = command,
        environment = {
            'HOSTILE_SECRET': 'env:INVOCABLES_TEST_HOSTILE_SECRET' },
        protocol = protocol, **options )


async def _call( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return await asyncio.wait_for(
        ensemble.access_invoker( name )( context, arguments or { } ), _WAIT )


async def _refuse( awaitable ):
    ''' Returns the error of the library which awaitable raises, within
        bounds. '''
    with pytest.raises( exceptions.Omnierror ) as caught:
        await asyncio.wait_for( awaitable, _WAIT )
    return caught.value


def _nest( depth ):
    ''' Returns a schema of objects nested depth levels. '''
    schema = { 'type': 'string' }
    for _ in range( depth ):
        schema = { 'type': 'object', 'properties': { 'a': schema } }
    return schema


@pytest.mark.asyncio
@pytest.mark.parametrize( 'protocol', _PROTOCOLS )
async def test_100_result_of_thousands_of_faults( monkeypatch, protocol ):
    ''' A result whose thousands of content blocks break the MCP schema,
        each quoting a secret, is refused with an account of its faults
        redacted and abbreviated, under either protocol: no megabyte of
        text goes to the model.
    '''
    async with _produce( monkeypatch, protocol = protocol ) as ensemble:
        refusal = await _refuse(
            _call( ensemble, 'flawed', { 'count': 5000 } ) )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    message = str( refusal )
    assert _INVALID in message
    assert ' characters)' in message
    assert len( message ) < _MESSAGE_MAXIMUM
    assert _SECRET not in message


@pytest.mark.asyncio
@pytest.mark.parametrize( 'protocol', _PROTOCOLS )
async def test_110_result_of_one_fault( monkeypatch, protocol ):
    ''' A result with one fault is refused whole, its secret redacted. '''
    async with _produce( monkeypatch, protocol = protocol ) as ensemble:
        refusal = await _refuse( _call( ensemble, 'flawed', { 'count': 1 } ) )
        contents = await _call( ensemble, 'seen' ) # the session lives on
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert _INVALID in str( refusal )
    assert _SECRET not in str( refusal )
    assert json.loads( contents[ 0 ].text )


def test_120_excerpt_redacts_before_cutting( ):
    ''' A server's text is redacted before it is abbreviated, so that a
        secret across the bound shows no part of it; a short text is
        quoted whole, a long one with its length.
    '''
    redactor = redaction.Redactor( secrets = ( _SECRET, ) )
    text = 'x' * 190 + _SECRET + 'y' * 5000
    excerpt = results.produce_excerpt( text, redactor.redact, repr, 200 )
    assert 'Zq9' not in excerpt
    assert excerpt.endswith( ' characters)' )
    assert len( excerpt ) < 300
    assert results.produce_excerpt( 'short', redactor.redact ) == 'short'
    assert len( results.produce_excerpt( 'z' * ( 1 << 20 ) ) ) < (
        results.EXCERPT_LENGTH_MAXIMUM + 100 )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'count', [ 1, 5000 ] )
async def test_200_prompt_out_of_shape( monkeypatch, count ):
    ''' A prompt whose messages break the MCP schema (once, or thousands
        of times, each quoting a secret) raises an error of the library
        (the prompt's absence; a refusal of a long account under 2026-07-
        28), bounded and redacted, never the SDK's validation error.
    '''
    async with _produce( monkeypatch, '--features' ) as ensemble:
        error = await _refuse( ensemble.retrieve_prompt(
            'flawed', { 'count': str( count ) } ) )
    assert isinstance(
        error, ( exceptions.PromptAbsence, exceptions.InvocationRefusal ) )
    if count == 1: assert isinstance( error, exceptions.PromptAbsence )
    message = str( error )
    assert _INVALID in message
    assert len( message ) < _MESSAGE_MAXIMUM
    assert _SECRET not in message


@pytest.mark.asyncio
@pytest.mark.parametrize( 'count', [ 1, 5000 ] )
async def test_210_resource_out_of_shape( monkeypatch, count ):
    ''' A resource whose contents break the MCP schema (once, or thousands
        of times, each quoting a secret) raises an error of the library,
        bounded and redacted, never the SDK's validation error.
    '''
    async with _produce( monkeypatch, '--features' ) as ensemble:
        error = await _refuse( ensemble.retrieve_resource(
            f"hostile://flawed?count={count}" ) )
    assert isinstance(
        error, ( exceptions.ResourceAbsence, exceptions.InvocationRefusal ) )
    if count == 1: assert isinstance( error, exceptions.ResourceAbsence )
    message = str( error )
    assert _INVALID in message
    assert len( message ) < _MESSAGE_MAXIMUM
    assert _SECRET not in message


@pytest.mark.asyncio
async def test_220_prompt_and_resource_unknown( monkeypatch ):
    ''' An unknown prompt or resource is absent, as before. '''
    async with _produce( monkeypatch, '--features' ) as ensemble:
        prompt = await _refuse( ensemble.retrieve_prompt( 'nothing' ) )
        resource = await _refuse(
            ensemble.retrieve_resource( 'hostile://nothing' ) )
    assert isinstance( prompt, exceptions.PromptAbsence )
    assert isinstance( resource, exceptions.ResourceAbsence )


@pytest.mark.asyncio
async def test_230_prompt_of_huge_error( monkeypatch ):
    ''' A server which refuses a prompt with a message of a megabyte,
        which begins with a secret, makes the prompt absent with its
        message redacted and abbreviated.
    '''
    async with _produce( monkeypatch, '--features' ) as ensemble:
        error = await _refuse( ensemble.retrieve_prompt( 'huge_error' ) )
    assert isinstance( error, exceptions.PromptAbsence )
    message = str( error )
    assert ' characters)' in message
    assert len( message ) < _MESSAGE_MAXIMUM
    assert 'Zq9' not in message


@pytest.mark.asyncio
@pytest.mark.parametrize( 'depth', [ 130, 300 ] )
async def test_300_deep_elicitation_during_call( monkeypatch, depth ):
    ''' An elicitation asked during a call (2025-11-25) whose schema is
        nested hundreds of levels deep never reaches the application's
        elicitor: the server gets an error which says why (the SDK 1.x
        refuses it first), and the call goes on.
    '''
    answers = _Answers( )
    async with _produce(
        monkeypatch, protocol = 'legacy', answers = answers
    ) as ensemble:
        contents = await _call( ensemble, 'deep_elicit', { 'depth': depth } )
    assert answers.elicited == [ ]
    text = contents[ 0 ].text
    assert text.startswith( 'error ' )
    # The SDK 1.x refuses such a request itself, before the client does.
    if _MODERN: assert 'nested deeper than' in text


@pytest.mark.asyncio
async def test_310_deep_input_request( monkeypatch ):
    ''' An input request (2026-07-28) whose schema is nested deeper than
        the bound never reaches the application's elicitor: the call is
        refused with an error of the library (the SDK 2.x finds its
        request too deep to handle; 2025-11-25: such a result is refused
        as invalid).
    '''
    answers = _Answers( )
    async with _produce( monkeypatch, answers = answers ) as ensemble:
        refusal = await _refuse( _call(
            ensemble, 'deep_request',
            { 'depth': exchanges.SCHEMA_DEPTH_MAXIMUM // 2 + 2 } ) )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert answers.elicited == [ ]
    assert len( str( refusal ) ) < _MESSAGE_MAXIMUM


def test_320_depth_measured_without_recursion( ):
    ''' The depth of a schema is measured without recursion, in one pass
        which stops at the bound: a flat schema and one nested within the
        bound pass; one nested a hundred thousand levels is found deep at
        once, where a recursive walk would exhaust Python's recursion.
    '''
    bound = exchanges.SCHEMA_DEPTH_MAXIMUM
    flat = {
        'type': 'object', 'properties': {
            'name': { 'type': 'string' },
            'size': { 'type': 'string', 'enum': [ 'S', 'M', 'L' ] } } }
    assert not exchanges.is_schema_deep( flat )
    # Each level of nesting is two levels of JSON: schema, properties.
    assert not exchanges.is_schema_deep( _nest( ( bound - 1 ) // 2 ) )
    assert exchanges.is_schema_deep( _nest( bound // 2 ) )
    assert exchanges.is_schema_deep( _nest( 100_000 ) )
    assert exchanges.is_schema_deep( [ [ [ 1 ] ] ], maximum = 2 )


def test_330_content_checked_against_deep_schema( ):
    ''' Content checked against a schema nested deeper than the bound is
        refused at once (keyword ``depth``), without a recursion error;
        within the bound, it is checked as before.
    '''
    for depth in ( 400, 100_000 ):
        breach = exchanges.validate_content( _nest( depth ), { 'a': 'x' } )
        assert breach is not None
        assert breach[ 1 ] == 'depth'
    assert exchanges.validate_content( _nest( 100 ), { } ) is None
    breach = exchanges.validate_content( _nest( 100 ), { 'a': 'x' } )
    assert breach is not None and breach[ 1 ] == 'type'


def _fan( depth ):
    ''' Returns schema of definitions which each apply the next twice:
        2**depth subschemas for the value of property a. '''
    definitions = {
        f"d{index}": { 'allOf': [
            { '$ref': f"#/$defs/d{index + 1}" },
            { '$ref': f"#/$defs/d{index + 1}" } ] }
        for index in range( depth ) }
    definitions[ f"d{depth}" ] = { 'type': 'string' }
    return {
        'type': 'object', '$defs': definitions,
        'properties': { 'a': { '$ref': '#/$defs/d0' } } }


def test_335_content_checked_against_fanned_schema( ):
    ''' Content checked against a server's schema which applies more
        subschemas to one value than the bound (2**30 here) is refused at
        once (keyword ``fanout``); within the bound, it is checked as
        before. An answer to a field of such a schema is refused too.
    '''
    breach = exchanges.validate_content( _fan( 30 ), { 'a': 'x' } )
    assert breach is not None
    assert breach[ 1 ] == 'fanout'
    assert exchanges.validate_content( _fan( 8 ), { 'a': 'x' } ) is None
    breach = exchanges.validate_content( _fan( 8 ), { 'a': 1 } )
    assert breach is not None and breach[ 1 ] == 'type'
    with pytest.raises( ValueError, match = 'too many subschemas' ):
        elicitation.validate_answer( _fan( 30 ), 'x' )


@pytest.mark.asyncio
async def test_340_terminal_elicitor_declines_deep_schema( ):
    ''' The terminal elicitor, given a schema nested too deep, shows none
        of its fields and declines.
    '''
    shown = io.StringIO( )
    elicitor = elicitation.produce_terminal_elicitor(
        io.StringIO( 'word\n' ), shown )
    response = await elicitor( callbacks.ElicitationRequest(
        ensemble = 'deep', message = 'Deep.', schema = _nest( 10_000 ) ) )
    assert response.action is callbacks.ElicitationActions.Decline
    assert 'nested too deep' in shown.getvalue( )
    assert '  a:' not in shown.getvalue( )


@pytest.mark.asyncio
async def test_400_tool_of_bad_header( monkeypatch ):
    ''' A tool whose x-mcp-header designation is no token, which the SDK
        drops under MCP 2026-07-28, is an omission with its reason,
        abbreviated and redacted (the designation quotes the server's
        secret); the other tools work. Under 2025-11-25 (and the SDK
        1.x) the designation means nothing and the tool stays.
    '''
    async with _produce( monkeypatch, '--bad-header' ) as ensemble:
        tools = { tool.name for tool in ensemble.survey_tools( ) }
        omissions = {
            omission.name: omission.reason
            for omission in ensemble.survey_omissions( ) }
        contents = await _call( ensemble, 'seen' )
    assert json.loads( contents[ 0 ].text )
    if not _MODERN:
        assert 'headed' in tools
        assert 'headed' not in omissions
        return
    assert 'headed' not in tools
    reason = omissions[ 'headed' ]
    assert 'x-mcp-header' in reason
    assert len( reason ) < 500
    assert _SECRET not in reason
    assert '***' in reason
    assert set( omissions ) == { 'headed' }


@pytest.mark.asyncio
async def test_410_tool_of_bad_header_legacy( monkeypatch ):
    ''' Under 2025-11-25 a tool of a bad x-mcp-header designation stays,
        and is no omission.
    '''
    async with _produce(
        monkeypatch, '--bad-header', protocol = 'legacy'
    ) as ensemble:
        tools = { tool.name for tool in ensemble.survey_tools( ) }
        omissions = [
            omission.name for omission in ensemble.survey_omissions( ) ]
    assert 'headed' in tools
    assert 'headed' not in omissions


@pytest.mark.asyncio
async def test_500_call_refused_at_length( monkeypatch ):
    ''' A server which refuses a call with a JSON-RPC error of a mebibyte
        (quoting its secret) gets a refusal of the library, abbreviated
        with its length and redacted.
    '''
    async with _produce( monkeypatch ) as ensemble:
        refusal = await _refuse( _call( ensemble, 'refuse_huge' ) )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    message = str( refusal )
    assert len( message ) < _MESSAGE_MAXIMUM
    assert ' characters)' in message
    assert _SECRET not in message
    assert '*** refused.' in message
