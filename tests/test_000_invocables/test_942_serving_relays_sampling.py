# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway, for sampling with tools (MCP 2025-11-25): the
    tools and the tool choice of an upstream server's sampling request
    reach the downstream client, and its answer with ``tool_use`` blocks
    goes back up intact; the ensemble's sampling limits apply to the
    requests relayed as to those its own sampler answers.
'''


import contextlib
import json

import anyio
import pytest

from mcp import ClientSession, types

import invocables

from invocables import invokers, serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


_SERVER = str( mcp_support.SERVERS / 'sampling_server.py' )
_TOOL_USE = {
    'type': 'tool_use', 'id': 'call-1', 'name': 'lookup',
    'input': { 'term': 'tea' } }
_ANSWER = {
    'role': 'assistant', 'model': 'test', 'content': [ _TOOL_USE ],
    'stopReason': 'toolUse' }
_TOOLS_CAPABILITY = types.SamplingCapability(
    tools = types.SamplingToolsCapability( ) )


class _Downstream:
    ''' The downstream client's model, recorded. '''

    def __init__( self ):
        self.requests = [ ]

    async def on_sample( self, context, parameters ):
        dump = parameters.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
        self.requests.append( dump )
        if dump.get( 'tools' ) is None:
            return types.CreateMessageResult(
                role = 'assistant', model = 'test',
                content = types.TextContent( type = 'text', text = 'tea' ) )
        return types.CreateMessageResultWithTools.model_validate( _ANSWER )


class _Liaison:
    ''' An application's model, answering with a tool call. '''

    def __init__( self ):
        self.options = [ ]

    async def log( self, level, data, logger ): pass

    async def report_progress( self, progress, total, message ): pass

    async def sample( self, messages, **options ):
        self.options.append( options )
        return _ANSWER


def _produce_upstream( **keywords ):
    return invocables.mcp.produce_ensemble(
        'sampling', command = [ mcp_support.SERVERS_PYTHON, _SERVER ],
        **keywords )


@contextlib.asynccontextmanager
async def _open_client( server, **keywords ):
    ''' Yields a client of the installed mcp SDK, in memory, which may
        declare its sampling capability (``sampling_capabilities``): 2.x's
        ``Client``, or 1.x's session.
    '''
    if sdk.MAJOR >= 2:
        async with mcp_support.open_memory_client(
            server, mode = 'legacy', **keywords
        ) as client: yield client
        return
    from mcp.shared.memory import create_client_server_memory_streams
    async with (
        create_client_server_memory_streams( ) as ( ours, theirs ),
        anyio.create_task_group( ) as group,
    ):
        group.start_soon( lambda: server.run(
            *theirs, server.create_initialization_options( ) ) )
        async with ClientSession( *ours, **keywords ) as session:
            await session.initialize( )
            yield session
        group.cancel_scope.cancel( )


async def _call( server, tool, arguments, **keywords ):
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_client(
            server.produce_server( ), **keywords
        ) as client:
            result = await client.call_tool( tool, arguments )
    assert not sdk.access_field( result, 'is_error' ), result
    return json.loads( result.content[ 0 ].text )


async def _execute( upstream, tool, arguments ):
    results = await invocables.execute_invocations(
        [ invocables.InvocationCanister(
            identifier = 'c1', name = tool, arguments = arguments ) ],
        [ upstream ] )
    assert not results[ 0 ].is_error( ), results[ 0 ]
    return json.loads( results[ 0 ].content[ 0 ].text )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_100_tools_relayed( ):
    ''' The downstream client gets the tools and the tool choice of the
        upstream's request; its answer, a tool call, reaches the upstream
        intact.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    downstream = _Downstream( )
    answer = await _call(
        server, 'choose', { 'topic': 'tea' },
        sampling_callback = downstream.on_sample,
        sampling_capabilities = _TOOLS_CAPABILITY )
    assert answer == _ANSWER
    request, = downstream.requests
    assert request[ 'tools' ] == [ {
        'name': 'lookup', 'description': 'Looks a term up.',
        'inputSchema': {
            'type': 'object',
            'properties': { 'term': { 'type': 'string' } },
            'required': [ 'term' ] } } ]
    assert request[ 'toolChoice' ] == { 'mode': 'required' }
    assert request[ 'maxTokens' ] == 50
    assert request[ 'messages' ] == [ {
        'role': 'user',
        'content': { 'type': 'text', 'text': 'Look tea up.' } } ]


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_110_downstream_without_tools( ):
    ''' A downstream client which samples without tools is not asked: the
        upstream gets the error which says so.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    downstream = _Downstream( )
    answer = await _call(
        server, 'choose', { 'topic': 'tea' },
        sampling_callback = downstream.on_sample )
    assert answer.startswith( 'error ' ), answer
    assert 'sampling tools capability' in answer
    assert downstream.requests == [ ]


@pytest.mark.asyncio
async def test_120_application_liaison( ):
    ''' In an application's loop, the liaison gets the tools and the tool
        choice as MCP's wire mappings; its answer, a mapping with a tool
        call, reaches the upstream intact.
    '''
    upstream = _produce_upstream( )
    upstream.configure_relay( )
    liaison = _Liaison( )
    async with upstream:
        with invokers.liaise( liaison ):
            answer = await _execute( upstream, 'choose', { 'topic': 'tea' } )
    assert answer == _ANSWER
    options, = liaison.options
    assert options[ 'tools' ][ 0 ][ 'name' ] == 'lookup'
    assert options[ 'tools' ][ 0 ][ 'inputSchema' ][ 'required' ] == [
        'term' ]
    assert options[ 'tool_choice' ] == { 'mode': 'required' }


@pytest.mark.asyncio
async def test_130_tools_without_caller_refused( ):
    ''' Without a caller to ask, a request with tools is refused: the
        ensemble's own sampler, which takes no tools, is not asked.
    '''
    asked = [ ]

    def sample( request ):
        asked.append( request )
        return { 'role': 'assistant', 'model': 'local', 'content': {
            'type': 'text', 'text': 'tea' } }

    upstream = _produce_upstream( sampler = sample )
    upstream.configure_relay( )
    async with upstream:
        answer = await _execute( upstream, 'choose', { 'topic': 'tea' } )
    assert 'Nobody can answer sampling with tools' in answer
    assert asked == [ ]


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_200_request_limit_relayed( ):
    ''' The limit of sampling requests per session applies to those
        relayed to the downstream client: the one beyond it is refused,
        and the client is not asked.
    '''
    server = serving.ToolServer( [ _produce_upstream(
        sampling_limits = invocables.mcp.SamplingLimits( requests = 2 ) ) ] )
    downstream = _Downstream( )
    answers = await _call(
        server, 'repeat', { 'count': 3 },
        sampling_callback = downstream.on_sample )
    assert answers[ : 2 ] == [ 'ok', 'ok' ]
    assert 'at most 2 sampling requests' in answers[ 2 ]
    assert len( downstream.requests ) == 2


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_205_request_limit_per_call( ):
    ''' Relayed requests count per call, not per upstream session, which
        a gateway keeps for every client: calls after one which reached
        the limit are served.
    '''
    server = serving.ToolServer( [ _produce_upstream(
        sampling_limits = invocables.mcp.SamplingLimits( requests = 2 ) ) ] )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_client(
            server.produce_server( ),
            sampling_callback = downstream.on_sample,
        ) as client:
            results = [
                await client.call_tool( 'repeat', { 'count': 2 } )
                for _ in range( 3 ) ]
    answers = [ json.loads( result.content[ 0 ].text ) for result in results ]
    assert answers == [ [ 'ok', 'ok' ] ] * 3
    assert len( downstream.requests ) == 6


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_210_token_limit_relayed( ):
    ''' The limit of tokens per request applies to the requests relayed.
    '''
    server = serving.ToolServer( [ _produce_upstream(
        sampling_limits = invocables.mcp.SamplingLimits( tokens = 5 ) ) ] )
    downstream = _Downstream( )
    answers = await _call(
        server, 'repeat', { 'count': 1 },
        sampling_callback = downstream.on_sample )
    assert 'asks for 10 tokens' in answers[ 0 ]
    assert downstream.requests == [ ]


@pytest.mark.asyncio
async def test_220_request_counted_once( ):
    ''' A relaying session whose caller has no liaison: its own sampler
        answers, and each request counts once against the limit.
    '''
    asked = [ ]

    def sample( request ):
        asked.append( request )
        return { 'role': 'assistant', 'model': 'local', 'content': {
            'type': 'text', 'text': 'tea' } }

    upstream = _produce_upstream(
        sampler = sample,
        sampling_limits = invocables.mcp.SamplingLimits( requests = 2 ) )
    upstream.configure_relay( )
    async with upstream:
        answers = await _execute( upstream, 'repeat', { 'count': 3 } )
    assert answers[ : 2 ] == [ 'ok', 'ok' ]
    assert 'at most 2 sampling requests' in answers[ 2 ]
    assert len( asked ) == 2
