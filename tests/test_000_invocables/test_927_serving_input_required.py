# SPDX-License-Identifier: Apache-2.0

''' serve asks its client for input the MCP 2026-07-28 way (multi round
    trip requests, SEP-2322): a served tool which asks (elicitation,
    sampling, roots) gets its call answered ``input_required``; the client
    sends the call again with its answers and the state, and the same
    suspended call goes on. Rounds, several requests at once, the bounds
    (number, duration) and their cleanup, tampered and spent states, the
    requests of an upstream server relayed, those of tasks; under
    2025-11-25, requests on the call's stream as before. Raw requests of
    2026-07-28 over streamable HTTP (the SDK's client sends none of them).

    The ``mcp`` SDK 1.x speaks no 2026-07-28: the tests say so by asserting
    that serve refuses such requests, and that 2025-11-25 is unchanged.
'''


import asyncio
import contextlib
import json

from typing import Any

import pytest

from mcp import ClientSession, types

import invocables

from invocables import serving
from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk

from . import mcp_support


_MODERN = sdk.MAJOR >= 2 # noqa: PLR2004
_WAIT = 10 # seconds: bounds which prove "does not hang"
_CAPABILITIES = { 'elicitation': { }, 'sampling': { }, 'roots': { } }
_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string' } },
    'required': [ 'name' ],
}


class _Gate:
    ''' What the tools did, seen by the test. '''

    def __init__( self ):
        self.cancelled = asyncio.Event( )
        self.asked = 0


def _produce_ensemble( gate: _Gate ) -> Any:
    async def rounds( context: Any ) -> str:
        ''' Asks a name, then a model, in two rounds. '''
        gate.asked += 1
        try:
            name = await context.elicit( 'Name?', _NAME_SCHEMA )
            sample = await context.sample( [ 'Greet.' ], max_tokens = 10 )
        except asyncio.CancelledError:
            gate.cancelled.set( )
            raise
        return f"{name.content[ 'name' ]}: {sample.content.text}"

    async def several( context: Any ) -> str:
        ''' Asks the user, the model and the roots at once. '''
        name, sample, roots = await asyncio.gather(
            context.elicit( 'Name?', _NAME_SCHEMA, key = 'who' ),
            context.sample( [ 'Greet.' ], key = 'greeting' ),
            context.survey_roots( key = 'roots' ) )
        return (
            f"{name.content[ 'name' ]}, {sample.content.text}, "
            f"{len( roots.roots )}" )

    return invocables.produce_ensemble(
        'asking', [ rounds, several ] )


async def _call(
    http: Any, url: str, name: str,
    responses: dict[ str, Any ] | None = None,
    state: str | None = None,
    capabilities: dict[ str, Any ] | None = None,
) -> tuple[ int, Any ]:
    ''' Posts ``tools/call`` of MCP 2026-07-28 without arguments;
        returns HTTP status and message.
    '''
    return await _post_call(
        http, url, name, { }, responses, state, capabilities )


@contextlib.asynccontextmanager
async def _serve( server: Any ):
    async with (
        mcp_support.serve_in_loop( server ) as url,
        sdk.http.AsyncClient( ) as http,
    ): yield url, http


@pytest.mark.asyncio
async def test_100_continued_across_rounds( ):
    ''' A tool which asks twice gets its call answered ``input_required``
        twice, each with its request (keys chosen by serve) and a state;
        the answers resume the same call (the tool ran once), which ends
        with its result. Under the SDK 1.x, no 2026-07-28.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        status, first = await _call( http, url, 'rounds' )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        result = first[ 'result' ]
        assert result[ 'resultType' ] == 'input_required'
        ( key, request ), = result[ 'inputRequests' ].items( )
        assert request[ 'method' ] == 'elicitation/create'
        assert request[ 'params' ][ 'message' ] == 'Name?'
        state = result[ 'requestState' ]
        _, second = await _call(
            http, url, 'rounds', { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) },
            state )
        result = second[ 'result' ]
        assert result[ 'resultType' ] == 'input_required'
        ( key2, request ), = result[ 'inputRequests' ].items( )
        assert request[ 'method' ] == 'sampling/createMessage'
        assert request[ 'params' ][ 'maxTokens' ] == 10 # noqa: PLR2004
        assert result[ 'requestState' ] != state
        _, third = await _call(
            http, url, 'rounds', { key2: mcp_support.produce_sampled( 'Hello' ) },
            result[ 'requestState' ] )
    result = third[ 'result' ]
    assert result[ 'resultType' ] == 'complete'
    assert result[ 'content' ][ 0 ][ 'text' ] == 'Ada: Hello'
    assert gate.asked == 1
    assert not server.continuations.continuations


@pytest.mark.asyncio
async def test_110_several_requests_at_once( ):
    ''' Requests made at once come in one result, under the tool's keys;
        answers to some leave the others asked again (a new state); the
        answers to all end the call. Keys never asked are ignored.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as ( url, http ):
        status, first = await _call( http, url, 'several' )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        result = first[ 'result' ]
        requests = result[ 'inputRequests' ]
        assert { key: request[ 'method' ] for key, request
                 in requests.items( ) } == {
            'who': 'elicitation/create',
            'greeting': 'sampling/createMessage',
            'roots': 'roots/list' }
        _, second = await _call(
            http, url, 'several',
            { 'who': mcp_support.produce_elicited( { 'name': 'Ada' } ),
              'stranger': mcp_support.produce_elicited( { 'x': 1 } ) },
            result[ 'requestState' ] )
        result = second[ 'result' ]
        assert set( result[ 'inputRequests' ] ) == { 'greeting', 'roots' }
        _, third = await _call(
            http, url, 'several',
            { 'greeting': mcp_support.produce_sampled( 'Hi' ),
              'roots': { 'roots': [ { 'uri': 'file:///a' } ] } },
            result[ 'requestState' ] )
    assert third[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'Ada, Hi, 1'


@pytest.mark.asyncio
async def test_120_answers_before_requests( ):
    ''' A first round may carry the answers under the keys which the tool
        chooses: the call ends at once.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as ( url, http ):
        status, message = await _call(
            http, url, 'several', {
                'who': mcp_support.produce_elicited( { 'name': 'Bo' } ),
                'greeting': mcp_support.produce_sampled( 'Yo' ),
                'roots': { 'roots': [ ] } } )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
    assert message[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'Bo, Yo, 0'


@pytest.mark.asyncio
async def test_130_expired_cancelled( ):
    ''' A call whose client does not come back within the duration is
        cancelled and forgotten; its state is then refused (-32602).
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], continuation_duration = 0.2 )
    async with _serve( server ) as ( url, http ):
        status, first = await _call( http, url, 'rounds' )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        result = first[ 'result' ]
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
        assert not server.continuations.continuations
        ( key, _ ), = result[ 'inputRequests' ].items( )
        _, late = await _call(
            http, url, 'rounds', { key: mcp_support.produce_elicited( { 'name': 'A' } ) },
            result[ 'requestState' ] )
    assert late[ 'error' ][ 'code' ] == -32602 # noqa: PLR2004


@pytest.mark.asyncio
async def test_140_tampered_and_spent_states( ):
    ''' A tampered state, a state of another tool and a spent state (of a
        round already answered) are refused (-32602), as is an answer of
        another kind than its request; the call still waits for its true
        next round, its state still good.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as ( url, http ):
        status, first = await _call( http, url, 'rounds' )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        result = first[ 'result' ]
        ( key, _ ), = result[ 'inputRequests' ].items( )
        state = result[ 'requestState' ]
        answer = { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) }
        _, tampered = await _call(
            http, url, 'rounds', answer, state[ : -2 ] + 'xx' )
        assert tampered[ 'error' ][ 'code' ] == -32602 # noqa: PLR2004
        _, other = await _call( http, url, 'several', answer, state )
        assert other[ 'error' ][ 'code' ] == -32602 # noqa: PLR2004
        _, wrong = await _call(
            http, url, 'rounds', { key: { 'roots': [ ] } }, state )
        assert wrong[ 'error' ][ 'code' ] == -32602 # noqa: PLR2004
        _, second = await _call( http, url, 'rounds', answer, state )
        assert second[ 'result' ][ 'resultType' ] == 'input_required'
        _, spent = await _call( http, url, 'rounds', answer, state )
        assert spent[ 'error' ][ 'code' ] == -32602 # noqa: PLR2004
    server.release_continuations( )
    assert not server.continuations.continuations


@pytest.mark.asyncio
async def test_150_bounded_in_number( ):
    ''' At most the maximum of calls wait at once: one more which asks
        gets an error (its call cancelled); the waiting one goes on.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], continuations_maximum = 1 )
    async with _serve( server ) as ( url, http ):
        status, first = await _call( http, url, 'rounds' )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        _, refused = await _call( http, url, 'rounds' )
        assert refused[ 'error' ][ 'code' ] == -32050 # noqa: PLR2004
        assert refused[ 'error' ][ 'data' ][ 'reason' ] == 'busy'
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
        result = first[ 'result' ]
        ( key, _ ), = result[ 'inputRequests' ].items( )
        _, second = await _call(
            http, url, 'rounds', { key: mcp_support.produce_elicited( { 'name': 'A' } ) },
            result[ 'requestState' ] )
        assert second[ 'result' ][ 'resultType' ] == 'input_required'
    server.release_continuations( )


@pytest.mark.asyncio
async def test_160_undeclared_capability_refused( ):
    ''' A client which does not declare elicitation is not asked: the
        tool's request fails, and its call, which failed, is answered with
        the error of a missing client capability (-32021), which names
        it.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as ( url, http ):
        status, message = await _call(
            http, url, 'rounds', capabilities = { 'sampling': { } } )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
    error = message[ 'error' ]
    assert error[ 'code' ] == -32021 # noqa: PLR2004
    assert error[ 'data' ][ 'requiredCapabilities' ] == { 'elicitation': { } }


@pytest.mark.asyncio
async def test_170_legacy_session_unchanged( ):
    ''' Under MCP 2025-11-25 (the handshake), the tool's requests go to
        the client on the call's stream, as before; no state, no
        continuation.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )

    async def elicit( context: Any, parameters: Any ) -> Any:
        return types.ElicitResult(
            action = 'accept', content = { 'name': 'Cy' } )

    async def sample( context: Any, parameters: Any ) -> Any:
        return types.CreateMessageResult(
            role = 'assistant', model = 'test',
            content = types.TextContent( type = 'text', text = 'Hey' ) )

    async with (
        mcp_support.serve_in_loop( server ) as url,
        sdk.http.AsyncClient( ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession(
            *streams, elicitation_callback = elicit,
            sampling_callback = sample ) as session,
    ):
        await session.initialize( )
        result = await asyncio.wait_for(
            session.call_tool( 'rounds', { } ), _WAIT )
    assert result.content[ 0 ].text == 'Cy: Hey'
    assert not server.continuations.continuations


_EXTENSION = 'io.modelcontextprotocol/tasks'


async def _post( http: Any, url: str, method: str, parameters: Any ) -> Any:
    ''' Posts request of MCP 2026-07-28 from a client which declares the
        tasks extension; returns the message.
    '''
    _, message = await mcp_support.post_modern(
        http, url, method, parameters, capabilities = {
            **_CAPABILITIES, 'extensions': { _EXTENSION: { } } } )
    return message


async def _poll( http: Any, url: str, identifier: str, status: str ) -> Any:
    ''' Returns the task once of a status (bounded: no hang). '''
    async def poll( ) -> Any:
        while True:
            message = await _post(
                http, url, 'tasks/get', { 'taskId': identifier } )
            if message[ 'result' ][ 'status' ] == status:
                return message[ 'result' ]
            await asyncio.sleep( 0.05 )
    return await asyncio.wait_for( poll( ), _WAIT )


@pytest.mark.asyncio
async def test_200_task_input_required( ):
    ''' A tool run as a task (MCP 2026-07-28) which asks makes its task
        ``input_required``, its requests on ``tasks/get``; ``tasks/update``
        answers some (acknowledged; the others still asked), then the
        rest, and the task completes with the answers.
    '''
    async def asking( context: Any ) -> str:
        ''' Asks two questions at once. '''
        first, second = await asyncio.gather(
            context.elicit( 'One?', _NAME_SCHEMA ),
            context.elicit( 'Two?', _NAME_SCHEMA ) )
        return f"{first.content[ 'name' ]} {second.content[ 'name' ]}"

    ensemble = invocables.produce_ensemble( 'tasked', [
        invocables.produce_invoker(
            asking, annotations = { 'task_support': 'optional' } ) ] )
    server = serving.ToolServer( [ ensemble ] )
    async with _serve( server ) as ( url, http ):
        if not _MODERN:
            status, _ = await _call( http, url, 'asking' )
            assert status >= 400 # noqa: PLR2004
            return
        created = await _post(
            http, url, 'tools/call', { 'name': 'asking', 'arguments': { } } )
        identifier = created[ 'result' ][ 'taskId' ]
        task = await _poll( http, url, identifier, 'input_required' )
        keys = sorted( task[ 'inputRequests' ] )
        assert len( keys ) == 2 # noqa: PLR2004
        acknowledged = await _post( http, url, 'tasks/update', {
            'taskId': identifier,
            'inputResponses': { keys[ 0 ]: mcp_support.produce_elicited( { 'name': 'a' } ) } } )
        assert acknowledged[ 'result' ].get( 'resultType' ) == 'complete'
        task = await _poll( http, url, identifier, 'input_required' )
        assert list( task[ 'inputRequests' ] ) == [ keys[ 1 ] ]
        await _post( http, url, 'tasks/update', {
            'taskId': identifier,
            'inputResponses': { keys[ 1 ]: mcp_support.produce_elicited( { 'name': 'b' } ) } } )
        task = await _poll( http, url, identifier, 'completed' )
    texts = { task[ 'result' ][ 'content' ][ 0 ][ 'text' ] }
    assert texts <= { 'a b', 'b a' }
    await server.release_tasks( )


@pytest.mark.asyncio
async def test_210_input_before_task( ):
    ''' A tool run as a task which declares ``task_input_first`` asks in
        rounds first (``input_required``, no task); once it asks no more,
        its call becomes a task (``resultType: "task"``, no state), whose
        result has the answers. Its annotation is not listed as MCP's.
    '''
    async def first( context: Any ) -> str:
        ''' Asks a name, then works. '''
        name = await context.elicit( 'Name?', _NAME_SCHEMA )
        await asyncio.sleep( 0.05 )
        return f"Hello, {name.content[ 'name' ]}"

    ensemble = invocables.produce_ensemble( 'tasked', [
        invocables.produce_invoker( first, annotations = {
            'task_support': 'required', 'task_input_first': True } ) ] )
    server = serving.ToolServer( [ ensemble ] )
    async with _serve( server ) as ( url, http ):
        if not _MODERN:
            status, _ = await _call( http, url, 'first' )
            assert status >= 400 # noqa: PLR2004
            return
        listing = await _post( http, url, 'tools/list', { } )
        assert listing[ 'result' ][ 'tools' ][ 0 ].get( 'annotations' ) is None
        round_ = await _post(
            http, url, 'tools/call', { 'name': 'first', 'arguments': { } } )
        result = round_[ 'result' ]
        assert result[ 'resultType' ] == 'input_required'
        assert 'taskId' not in result
        ( key, _ ), = result[ 'inputRequests' ].items( )
        created = await _post( http, url, 'tools/call', {
            'name': 'first', 'arguments': { },
            'inputResponses': { key: mcp_support.produce_elicited( { 'name': 'Di' } ) },
            'requestState': result[ 'requestState' ] } )
        task = created[ 'result' ]
        assert task[ 'resultType' ] == 'task'
        assert 'requestState' not in task
        assert 'inputRequests' not in task
        done = await _poll( http, url, task[ 'taskId' ], 'completed' )
    assert done[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'Hello, Di'
    await server.release_tasks( )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_300_upstream_requests_in_rounds( ):
    ''' An upstream server's elicitation and sampling during a call (MCP
        2025-11-25 upstream, relayed to the call's context) reach a client
        of MCP 2026-07-28 as the input requests of rounds; its answers go
        back up, and the upstream call ends.
    '''
    upstream = invocables.mcp.produce_ensemble(
        'relay', command = [
            mcp_support.SERVERS_PYTHON,
            str( mcp_support.SERVERS / 'relay_server.py' ) ] )
    server = serving.ToolServer( [ upstream ] )
    async with (
        invocables.connect_ensembles( server.ensembles ),
        _serve( server ) as ( url, http ),
    ):
        status, first = await _post_call(
            http, url, 'consult', { 'topic': 'tea' } )
        if not _MODERN:
            assert status >= 400 # noqa: PLR2004
            return
        result = first[ 'result' ]
        ( key, request ), = result[ 'inputRequests' ].items( )
        assert request[ 'params' ][ 'message' ] == 'Your view on tea?'
        _, second = await _post_call(
            http, url, 'consult', { 'topic': 'tea' },
            { key: mcp_support.produce_elicited( { 'view': 'fine' } ) },
            result[ 'requestState' ] )
        result = second[ 'result' ]
        ( key, request ), = result[ 'inputRequests' ].items( )
        assert request[ 'method' ] == 'sampling/createMessage'
        assert request[ 'params' ][ 'systemPrompt' ] == 'Be brief.'
        _, third = await _post_call(
            http, url, 'consult', { 'topic': 'tea' },
            { key: mcp_support.produce_sampled( 'a summary' ) }, result[ 'requestState' ] )
    result = third[ 'result' ]
    assert not result.get( 'isError' ), result
    answers = json.loads( result[ 'content' ][ 0 ][ 'text' ] )
    assert answers[ 'elicited' ][ 'content' ] == { 'view': 'fine' }
    assert answers[ 'sampled' ][ 'content' ][ 'text' ] == 'a summary'


async def _post_call(
    http: Any, url: str, name: str, arguments: dict[ str, Any ],
    responses: dict[ str, Any ] | None = None, state: str | None = None,
    capabilities: dict[ str, Any ] | None = None,
) -> tuple[ int, Any ]:
    ''' Posts ``tools/call`` of MCP 2026-07-28 with arguments (and the
        client's capabilities); returns HTTP status and message.
    '''
    return await mcp_support.post_modern(
        http, url, 'tools/call', { 'name': name, 'arguments': arguments },
        capabilities = _CAPABILITIES if capabilities is None else capabilities,
        responses = responses, state = state )
