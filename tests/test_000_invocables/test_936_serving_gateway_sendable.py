# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway sends what it can: an upstream server's texts which
    are not Unicode (lone surrogates, JSON escapes of UTF-16 halves) reach
    the client escaped, its secrets redacted, in every listing, content,
    completion and relayed request (before, the answer could not be
    written as JSON: the client got an error without an id, and a relayed
    elicitation hung the call); a blob of a JSON document holding a secret
    goes out redacted; the identifier of a visit which holds a secret goes
    out as an opaque stand-in, under which the visit completes too. The
    upstream is ``servers/spilling_server.py``.
'''


import asyncio
import base64
import json

import pytest

from mcp import types

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


_SECRET = 'Zq9-spill-Spill-4417'
_SENDABLE = 'a\\ud800b ***'


class _Downstream:
    ''' The downstream client, which records all it receives. '''

    def __init__( self ):
        self.received = [ ]
        self.visits = [ ]
        self.completions = [ ]
        self.completed = asyncio.Event( )

    async def on_log( self, parameters ):
        self.received.append( ( 'log', _dump( parameters ) ) )

    async def on_elicit( self, context, parameters ):
        self.received.append( ( 'elicit', _dump( parameters ) ) )
        identifier = sdk.access_field( parameters, 'elicitation_id', None )
        if identifier is None: return types.ElicitResult( action = 'decline' )
        self.visits.append( identifier )
        return types.ElicitResult( action = 'accept' )

    async def on_sample( self, context, parameters ):
        self.received.append( ( 'sample', _dump( parameters ) ) )
        return types.CreateMessageResult(
            role = 'assistant', model = 'test',
            content = types.TextContent( type = 'text', text = 'fine' ) )

    async def on_progress( self, value, total, message ):
        self.received.append( ( 'progress', [ value, total, message ] ) )

    async def on_message( self, message ):
        message = getattr( message, 'root', message )
        if not isinstance( message, types.ElicitCompleteNotification ):
            return
        self.completions.append(
            sdk.access_field( message.params, 'elicitation_id' ) )
        self.completed.set( )

    def produce_callbacks( self ):
        return {
            'logging_callback': self.on_log,
            'elicitation_callback': self.on_elicit,
            'sampling_callback': self.on_sample,
            'message_handler': self.on_message,
            'mode': 'legacy' }


def _dump( model ):
    return model.model_dump( mode = 'json', by_alias = True )


def _encode( value ):
    ''' Returns value as UTF-8 JSON, as a transport writes it: raises if
        it is not sendable; fails if it holds the secret. '''
    text = json.dumps( value, ensure_ascii = False )
    assert _SECRET not in text, text
    return text.encode( 'utf-8' )


def _produce_server( monkeypatch ):
    monkeypatch.setenv( 'INVOCABLES_TEST_SPILL', _SECRET )
    upstream = invocables.mcp.produce_ensemble(
        'spilling',
        command = mcp_support.produce_server_command( 'spilling_server.py' ),
        environment = { 'SPILL': 'env:INVOCABLES_TEST_SPILL' } )
    return serving.ToolServer( [ upstream ] )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_100_features_sendable( monkeypatch ):
    ''' Prompts, resources and templates listed, a prompt's messages, a
        resource's text, completion values: sendable and redacted; an
        entry whose name or URI is not sendable, or holds the secret, is
        left out.
    '''
    server = _produce_server( monkeypatch )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            answers = [
                await client.list_prompts( ),
                await client.list_resources( ),
                await client.list_resource_templates( ),
                await client.get_prompt( 'p', { 'who': 'x' } ),
                await client.read_resource( 'file:///r.txt' ),
                await client.complete(
                    types.PromptReference( type = 'ref/prompt', name = 'p' ),
                    { 'name': 'who', 'value': 'a' } ) ]
    prompts, resources, templates, prompt, contents, completion = [
        _dump( answer ) for answer in answers ]
    _encode( [ prompts, resources, templates, prompt, contents ] )
    _encode( completion )
    assert [ item[ 'name' ] for item in prompts[ 'prompts' ] ] == [ 'p' ]
    assert prompts[ 'prompts' ][ 0 ][ 'description' ] == _SENDABLE
    assert [ item[ 'uri' ] for item in resources[ 'resources' ] ] == [
        'file:///r.txt', 'file:///config.json' ]
    assert resources[ 'resources' ][ 0 ][ 'name' ] == _SENDABLE
    assert [
        item[ 'uriTemplate' ] for item in templates[ 'resourceTemplates' ]
    ] == [ 'file:///t/{x}' ]
    assert prompt[ 'messages' ][ 0 ][ 'content' ][ 'text' ] == _SENDABLE
    assert contents[ 'contents' ][ 0 ][ 'text' ] == _SENDABLE
    assert completion[ 'completion' ][ 'values' ] == [
        _SENDABLE, 'k-***', 'ok' ]


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_110_errors_sendable( monkeypatch ):
    ''' The upstream's refusal of a prompt reaches the client as an
        error whose message is sendable and redacted.
    '''
    server = _produce_server( monkeypatch )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            with pytest.raises( Exception ) as caught:
                await client.get_prompt( 'p', { 'who': 'fail' } )
            listed = await client.list_prompts( )
    message = str( caught.value )
    _encode( message )
    assert _SENDABLE in message
    assert listed.prompts


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_200_blobs_redacted( monkeypatch ):
    ''' A blob of a JSON document holding the secret, read as a resource
        or returned by a tool, reaches the client redacted (still
        base64).
    '''
    server = _produce_server( monkeypatch )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            read = await client.read_resource( 'file:///config.json' )
            called = await client.call_tool( 'config', { } )
    for contents in ( read.contents[ 0 ], called.content[ 0 ].resource ):
        data = base64.b64decode( contents.blob )
        assert json.loads( data ) == { 'config': { 'api_key': '***' } }


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_300_relayed_sendable( monkeypatch ):
    ''' What the upstream asks and tells during a call reaches the client
        sendable and redacted: a log message (its data and logger),
        progress (its message; a total JSON cannot carry is left out), an
        elicitation (its message and schema), a sampling request; each
        call ends with the upstream's answer.
    '''
    server = _produce_server( monkeypatch )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **downstream.produce_callbacks( )
        ) as client:
            await client.set_logging_level( 'debug' )
            for name in ( 'log', 'progress', 'elicit', 'sample' ):
                result = await asyncio.wait_for( client.call_tool(
                    name, { }, progress_callback = downstream.on_progress ),
                    30 )
                assert not result.isError if hasattr(
                    result, 'isError' ) else not result.is_error
    received = dict( downstream.received )
    _encode( received )
    assert received[ 'log' ][ 'logger' ] == 'lg-***'
    assert received[ 'log' ][ 'data' ] == { 'said': _SENDABLE }
    assert received[ 'progress' ] == [ 1, None, _SENDABLE ]
    elicited = received[ 'elicit' ]
    assert elicited[ 'message' ] == _SENDABLE
    assert elicited[ 'requestedSchema' ][ 'properties' ][ 'a' ][
        'description' ] == _SENDABLE
    sampled = received[ 'sample' ]
    assert sampled[ 'messages' ][ 0 ][ 'content' ][ 'text' ] == _SENDABLE
    assert sampled[ 'systemPrompt' ] == _SENDABLE


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_310_visits_stand_in( monkeypatch ):
    ''' The identifier of a visit which holds the secret, or is not
        sendable, reaches the client as an opaque stand-in, and the
        upstream's word that the visit is complete under the same; a
        plain identifier goes as it is.
    '''
    server = _produce_server( monkeypatch )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **downstream.produce_callbacks( )
        ) as client:
            for name in ( 'visit', 'visit_lone', 'visit_plain' ):
                downstream.completed.clear( )
                await asyncio.wait_for( client.call_tool( name, { } ), 30 )
                await asyncio.wait_for( downstream.completed.wait( ), 10 )
    _encode( [ downstream.received, downstream.completions ] )
    hidden, lone, plain = downstream.visits
    assert downstream.completions == downstream.visits
    assert len( { hidden, lone, plain } ) == 3 # noqa: PLR2004
    for identifier in ( hidden, lone, plain ):
        assert identifier.startswith( 'visit-' ) and len( identifier ) > 20
    assert hidden != lone
