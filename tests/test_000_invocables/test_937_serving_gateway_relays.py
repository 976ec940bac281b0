# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway of prompts and resources which ask: what an
    upstream server asks while it makes a prompt or reads a resource
    (elicitation, sampling, log messages) reaches the downstream client
    which asked, and its answers go back up. Under MCP 2025-11-25, as
    serve's own requests; under 2026-07-28, as rounds of input
    (``input_required``) of ``prompts/get`` and ``resources/read``. Also
    the library's ensembles, given the caller's context.

    The ``mcp`` SDK 1.x speaks no 2026-07-28: the tests say so by asserting
    that serve refuses such requests.
'''


import contextlib
import json

from pathlib import Path
from typing import Any

import pytest

from mcp import types

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


_MODERN = sdk.MAJOR >= 2 # noqa: PLR2004
_UPSTREAM = (
    Path( __file__ ).parent.parent / 'data' / 'serving' / 'modules'
    / 'relay_upstream.py' )
_CAPABILITIES = { 'elicitation': { }, 'sampling': { } }


class _Downstream:
    ''' The downstream client's callbacks, recorded. '''

    def __init__( self ):
        self.logs: list[ Any ] = [ ]
        self.elicitations: list[ str ] = [ ]
        self.samplings: list[ Any ] = [ ]

    async def on_log( self, parameters: Any ) -> None:
        self.logs.append(
            ( parameters.level, parameters.data, parameters.logger ) )

    async def on_elicit( self, context: Any, parameters: Any ) -> Any:
        self.elicitations.append( parameters.message )
        content: dict[ str, Any ] = (
            { 'word': 'swordfish' } if parameters.message == 'The word?'
            else { 'view': 'fine' } )
        return types.ElicitResult( action = 'accept', content = content )

    async def on_sample( self, context: Any, parameters: Any ) -> Any:
        self.samplings.append( (
            parameters.messages[ 0 ].content.text,
            sdk.access_field( parameters, 'max_tokens' ) ) )
        return types.CreateMessageResult(
            role = 'assistant', model = 'test',
            content = types.TextContent( type = 'text', text = 'a summary' ) )

    def produce_callbacks( self ) -> dict[ str, Any ]:
        ''' Returns callbacks of the SDK's client. '''
        return {
            'logging_callback': self.on_log,
            'elicitation_callback': self.on_elicit,
            'sampling_callback': self.on_sample,
            'mode': 'legacy', # MCP 2025-11-25: requests of the server
        }


class _Liaison:
    ''' An application's answers, recorded. '''

    def __init__( self ):
        self.records: list[ Any ] = [ ]

    async def log( self, level: str, data: Any, logger: Any ) -> None:
        self.records.append( ( 'log', level, data, logger ) )

    async def elicit( self, message: str, schema: Any ) -> Any:
        self.records.append( ( 'elicit', message ) )
        content = (
            { 'word': 'mine' } if message == 'The word?'
            else { 'view': 'mine' } )
        return { 'action': 'accept', 'content': content }

    async def sample( self, messages: Any, **options: Any ) -> Any:
        self.records.append( ( 'sample', options[ 'max_tokens' ] ) )
        return { 'role': 'assistant', 'model': 'local', 'content': {
            'type': 'text', 'text': 'my summary' } }


def _produce_upstream( name: str = 'relay' ) -> Any:
    return invocables.mcp.produce_ensemble(
        name, command = [ mcp_support.SERVERS_PYTHON, str( _UPSTREAM ) ] )


@contextlib.asynccontextmanager
async def _serve( server: Any ):
    async with (
        invocables.connect_ensembles( server.ensembles ),
        mcp_support.serve_in_loop( server ) as url,
        sdk.http.AsyncClient( ) as http,
    ): yield url, http


async def _post(
    http: Any, url: str, method: str, parameters: dict[ str, Any ],
    responses: dict[ str, Any ] | None = None, state: str | None = None,
    capabilities: dict[ str, Any ] | None = None,
) -> tuple[ int, Any ]:
    ''' Posts a request of MCP 2026-07-28 (with the client's
        capabilities); returns HTTP status and message.
    '''
    return await mcp_support.post_modern(
        http, url, method, parameters,
        capabilities = _CAPABILITIES if capabilities is None else capabilities,
        responses = responses, state = state )


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_100_prompt_requests_relayed( ):
    ''' An upstream prompt's log message, elicitation and sampling reach
        the downstream client which gets the prompt (MCP 2025-11-25); its
        answers reach the upstream, which makes the prompt of them.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **downstream.produce_callbacks( )
        ) as client:
            await client.set_logging_level( 'debug' )
            result = await client.get_prompt( 'advise', { 'topic': 'tea' } )
    answers = json.loads( result.messages[ 0 ].content.text )
    assert answers[ 'elicited' ] == {
        'action': 'accept', 'content': { 'view': 'fine' } }
    assert answers[ 'sampled' ][ 'content' ][ 'text' ] == 'a summary'
    assert downstream.elicitations == [ 'Your view on tea?' ]
    assert downstream.samplings == [ ( 'Summarize tea.', 50 ) ]
    assert downstream.logs == [ ( 'info', { 'advising': 'tea' }, 'relay' ) ]


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_105_http_upstream_prompt_relayed( ):
    ''' A streamable HTTP upstream's requests during a prompt, which come
        on the prompt's own stream, reach the downstream client likewise.
    '''
    port = mcp_support.select_port( )
    with mcp_support.serve_http(
        [ mcp_support.SERVERS_PYTHON, str( _UPSTREAM ), '--http',
          str( port ) ], port
    ) as url:
        server = serving.ToolServer( [
            invocables.mcp.produce_ensemble( 'relay', url = url ) ] )
        downstream = _Downstream( )
        async with invocables.connect_ensembles( server.ensembles ):
            async with mcp_support.open_memory_client(
                server.produce_server( ), **downstream.produce_callbacks( )
            ) as client:
                result = await client.get_prompt(
                    'advise', { 'topic': 'tea' } )
    answers = json.loads( result.messages[ 0 ].content.text )
    assert answers[ 'elicited' ][ 'content' ] == { 'view': 'fine' }
    assert answers[ 'sampled' ][ 'content' ][ 'text' ] == 'a summary'
    assert downstream.elicitations == [ 'Your view on tea?' ]


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_110_resource_requests_relayed( ):
    ''' An upstream resource's elicitation reaches the downstream client
        which reads it (MCP 2025-11-25), its URI scoped or not; the answer
        reaches the upstream.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), **downstream.produce_callbacks( )
        ) as client:
            result = await client.read_resource( 'test://relay/secret/front' )
    answer = json.loads( result.contents[ 0 ].text )
    assert answer[ 'elicited' ] == {
        'action': 'accept', 'content': { 'word': 'swordfish' } }
    assert downstream.elicitations == [ 'The word?' ]


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_120_downstream_without_callbacks( ):
    ''' A downstream client which cannot elicit or sample: the upstream
        gets the error its own client would have sent, and its prompt is
        made still.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), mode = 'legacy'
        ) as client:
            result = await client.get_prompt( 'advise', { 'topic': 'tea' } )
    answers = json.loads( result.messages[ 0 ].content.text )
    assert answers[ 'elicited' ].startswith( 'error ' )
    assert answers[ 'sampled' ].startswith( 'error ' )


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_200_prompt_in_rounds( ):
    ''' Under MCP 2026-07-28, ``prompts/get`` of an upstream prompt which
        asks is answered ``input_required``, a round per request; the
        answers, sent again with the state, go back up, and the prompt
        ends complete. Under the SDK 1.x, no 2026-07-28.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    request = { 'name': 'advise', 'arguments': { 'topic': 'tea' } }
    async with _serve( server ) as ( url, http ):
        status, first = await _post( http, url, 'prompts/get', request )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        result = first[ 'result' ]
        assert result[ 'resultType' ] == 'input_required'
        ( key, asked ), = result[ 'inputRequests' ].items( )
        assert asked[ 'method' ] == 'elicitation/create'
        assert asked[ 'params' ][ 'message' ] == 'Your view on tea?'
        _, second = await _post(
            http, url, 'prompts/get', request,
            { key: mcp_support.produce_elicited( { 'view': 'fine' } ) },
            result[ 'requestState' ] )
        result = second[ 'result' ]
        assert result[ 'resultType' ] == 'input_required'
        ( key, asked ), = result[ 'inputRequests' ].items( )
        assert asked[ 'method' ] == 'sampling/createMessage'
        _, third = await _post(
            http, url, 'prompts/get', request,
            { key: mcp_support.produce_sampled( 'a summary' ) }, result[ 'requestState' ] )
    result = third[ 'result' ]
    assert result.get( 'resultType', 'complete' ) == 'complete', result
    answers = json.loads( result[ 'messages' ][ 0 ][ 'content' ][ 'text' ] )
    assert answers[ 'elicited' ][ 'content' ] == { 'view': 'fine' }
    assert answers[ 'sampled' ][ 'content' ][ 'text' ] == 'a summary'
    assert not server.continuations.continuations


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_210_resource_in_rounds( ):
    ''' Under MCP 2026-07-28, ``resources/read`` of an upstream resource
        which asks is answered ``input_required``; the answer, sent again
        with the state, goes back up, and the read ends with the contents.
        A tampered state is refused. Under the SDK 1.x, no 2026-07-28.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    request = { 'uri': 'test://relay/secret/front' }
    async with _serve( server ) as ( url, http ):
        status, first = await _post( http, url, 'resources/read', request )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        result = first[ 'result' ]
        assert result[ 'resultType' ] == 'input_required'
        ( key, asked ), = result[ 'inputRequests' ].items( )
        assert asked[ 'params' ][ 'message' ] == 'The word?'
        answer = { key: mcp_support.produce_elicited( { 'word': 'swordfish' } ) }
        _, tampered = await _post(
            http, url, 'resources/read', request, answer,
            result[ 'requestState' ][ : -4 ] + 'AAAA' )
        assert 'error' in tampered
        _, second = await _post(
            http, url, 'resources/read', request, answer,
            result[ 'requestState' ] )
    result = second[ 'result' ]
    assert result.get( 'resultType', 'complete' ) == 'complete', result
    answer = json.loads( result[ 'contents' ][ 0 ][ 'text' ] )
    assert answer[ 'elicited' ][ 'content' ] == { 'word': 'swordfish' }


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_220_undeclared_capabilities_refused( ):
    ''' Under MCP 2026-07-28, a client which declared neither elicitation
        nor sampling is not asked: the upstream gets the error of a
        missing capability, and its prompt comes complete at once. Under
        the SDK 1.x, no 2026-07-28.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    request = { 'name': 'advise', 'arguments': { 'topic': 'tea' } }
    async with _serve( server ) as ( url, http ):
        status, first = await _post(
            http, url, 'prompts/get', request, capabilities = { } )
    if not _MODERN:
        assert status >= 400 # noqa: PLR2004
        return
    result = first[ 'result' ]
    assert result.get( 'resultType', 'complete' ) == 'complete', result
    answers = json.loads( result[ 'messages' ][ 0 ][ 'content' ][ 'text' ] )
    assert answers[ 'elicited' ].startswith( 'error -32021' )
    assert answers[ 'sampled' ].startswith( 'error -32021' )
    assert not server.continuations.continuations


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_300_ensemble_relays_to_context( ):
    ''' A relaying ensemble given the caller's context relays what its
        server asks during a prompt to that context; without a context,
        its own callbacks answer (none: the server is told so).
    '''
    upstream = _produce_upstream( )
    upstream.configure_relay( )
    liaison = _Liaison( )
    async with invocables.connect_ensembles( ( upstream, ) ):
        messages = await upstream.retrieve_prompt(
            'advise', { 'topic': 'tea' }, context = liaison )
        alone = await upstream.retrieve_prompt(
            'advise', { 'topic': 'tea' } )
        contents = await upstream.retrieve_resource(
            'test://relay/secret/front', context = liaison )
    answers = json.loads( messages[ 0 ].content[ 0 ].text )
    assert answers[ 'elicited' ][ 'content' ] == { 'view': 'mine' }
    assert answers[ 'sampled' ][ 'content' ][ 'text' ] == 'my summary'
    assert liaison.records == [
        ( 'log', 'info', { 'advising': 'tea' }, 'relay' ),
        ( 'elicit', 'Your view on tea?' ), ( 'sample', 50 ),
        ( 'elicit', 'The word?' ) ]
    answers = json.loads( alone[ 0 ].content[ 0 ].text )
    assert answers[ 'elicited' ].startswith( 'error ' )
    answer = json.loads( contents[ 0 ].text )
    assert answer[ 'elicited' ][ 'content' ] == { 'word': 'mine' }


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_310_resource_tool_relays_to_caller( ):
    ''' The tool which reads a resource (``resources_as_tools``) relays
        what the server asks while it reads to the caller of that tool;
        a server with no tool of its own still gets the resource tools.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [ mcp_support.SERVERS_PYTHON, str( _UPSTREAM ) ],
        resources_as_tools = True )
    upstream.configure_relay( )
    liaison = _Liaison( )
    async with invocables.connect_ensembles( ( upstream, ) ):
        names = [ invoker.name for invoker in upstream.survey_invokers( ) ]
        with invocables.invokers.liaise( liaison ):
            results = await invocables.execute_invocations(
                [ invocables.InvocationCanister(
                    identifier = 'c1', name = 'read_resource',
                    arguments = { 'uri': 'test://relay/secret/back' } ) ],
                [ upstream ] )
    assert names == [ 'list_resources', 'read_resource' ]
    assert not results[ 0 ].is_error( ), results[ 0 ]
    assert liaison.records == [ ( 'elicit', 'The word?' ) ]
    assert '"mine"' in results[ 0 ].content[ -1 ].text
