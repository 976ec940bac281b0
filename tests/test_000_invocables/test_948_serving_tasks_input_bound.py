# SPDX-License-Identifier: Apache-2.0

''' serve bounds the wait of a task of MCP 2025-11-25 for its client's
    input: a task whose tool asks (elicitation, sampling) and whose client
    never answers, fetched by ``tasks/result`` or never fetched, fails
    after ``continuation_duration`` with an error which says why; its
    tool is cancelled and its place among the running tasks (the server's
    and its principal's) freed. Only the waits count: a tool which works
    longer, answered in time, completes. Seen by the SDK's client session
    over streamable HTTP.
'''


import asyncio
import contextlib

import pytest

from mcp import ClientSession, types

import invocables

from invocables import serving
from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk

from . import mcp_support


_DURATION = 0.5 # seconds a task waits for input: short, for the tests
# Seconds a task waits for input where the test must act meanwhile: long
# enough for a request on the loopback, however busy the machine.
_DURATION_AMPLE = 2.0
_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string' } },
    'required': [ 'name' ],
}
_OVERDUE = -32001 # the mcp SDK's REQUEST_TIMEOUT: answers overdue
_TOKENS = { # token: ( client, subject )
    'token-ada': ( 'app', 'ada' ),
    'token-bob': ( 'app', 'bob' ),
}
_WAIT = 10 # seconds: bounds which prove "does not hang"


class _Probe:
    ''' What the tools did, seen and steered by the test. '''

    def __init__( self ):
        self.asked = 0
        self.cancelled = asyncio.Event( )
        self.started = asyncio.Event( )
        self.before = asyncio.Event( ) # releases work before the question
        self.answered = asyncio.Event( )
        self.after = asyncio.Event( ) # releases work after the answer


class _Verifier:
    ''' Accepts the tokens of a few principals, as a token verifier of
        the mcp SDK would.
    '''

    async def verify_token( self, token ):
        from mcp.server.auth.provider import AccessToken
        found = _TOKENS.get( token )
        if found is None: return None
        client, subject = found
        return AccessToken(
            token = token, client_id = client, scopes = [ ],
            subject = subject )


def _produce_ensemble( probe ):
    async def asking( context ) -> str:
        ''' Asks a name. '''
        probe.asked += 1
        try: answer = await context.elicit( 'Name?', _NAME_SCHEMA )
        except asyncio.CancelledError:
            probe.cancelled.set( )
            raise
        return f"hello {answer.content[ 'name' ]}"

    async def sampling( context ) -> str:
        ''' Asks the client's model. '''
        probe.asked += 1
        try: sample = await context.sample( [ 'Greet.' ], max_tokens = 10 )
        except asyncio.CancelledError:
            probe.cancelled.set( )
            raise
        return sample.content.text

    async def working( context ) -> str:
        ''' Works, asks a name, works again. '''
        probe.started.set( )
        await probe.before.wait( )
        answer = await context.elicit( 'Name?', _NAME_SCHEMA )
        probe.answered.set( )
        await probe.after.wait( )
        return f"done {answer.content[ 'name' ]}"

    return invocables.produce_ensemble( 'bounded', [
        invocables.produce_invoker( asking ),
        invocables.produce_invoker( sampling ),
        invocables.produce_invoker( working ) ] )


@contextlib.asynccontextmanager
async def _connect( url, token = None, elicit = None ):
    ''' Yields an initialized session of the SDK's client, which sends
        token (if any) and answers elicitation by elicit (if any).
    '''
    headers = { } if token is None else {
        'Authorization': f"Bearer {token}" }
    options = { } if elicit is None else { 'elicitation_callback': elicit }
    async with (
        sdk.http.AsyncClient( headers = headers ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession( *streams, **options ) as session,
    ):
        await session.initialize( )
        yield session


async def _request( session, model, result, **parameters ):
    ''' Sends request of a model with parameters (wire names). '''
    request = model.model_validate( {
        'method': model.model_fields[ 'method' ].default,
        'params': parameters } )
    if sdk.MAJOR < 2: request = types.ClientRequest( request ) # noqa: PLR2004
    return await session.send_request( request, result )


async def _call_as_task( session, name ):
    ''' Calls tool, asking for a task (MCP 2025-11-25); returns the task's
        identifier.
    '''
    parameters = { 'name': name, 'arguments': { }, 'task': { 'ttl': 60_000 } }
    if sdk.MAJOR < 2: # noqa: PLR2004
        result = await _request(
            session, types.CallToolRequest, types.CreateTaskResult,
            **parameters )
        return sdk.access_field( result.task, 'task_id' )
    # The 2.x session checks results of tools/call as CallToolResult: a
    # task is sent and read through its dispatcher (JSON-RPC as is).
    raw = await session._dispatcher.send_raw_request(
        'tools/call', parameters, None )
    task = types.CreateTaskResult.model_validate( raw ).task
    return sdk.access_field( task, 'task_id' )


async def _get( session, identifier ):
    return await asyncio.wait_for( _request(
        session, types.GetTaskRequest, types.GetTaskResult,
        taskId = identifier ), _WAIT )


async def _fetch( session, identifier ):
    return await _request(
        session, types.GetTaskPayloadRequest, types.CallToolResult,
        taskId = identifier )


async def _await_end( store, identifier ):
    ''' Waits until the task of identifier ended; bounded: no hang. '''
    await asyncio.wait_for( store.wait_task( identifier ), _WAIT )


def _verify_overdue( error, duration = _DURATION ):
    ''' Asserts that error is that of answers overdue, of tasks/result. '''
    assert error.code == _OVERDUE
    assert f"waited {duration:g} seconds" in error.message
    assert '(tasks/result)' in error.message
    assert sdk.access_field( error, 'data' ) == {
        'reason': 'input_overdue', 'duration': duration }


async def _verify_failed( session, identifier, duration = _DURATION ):
    ''' Asserts that the task failed for answers overdue: by
        ``tasks/get`` (its status message says why) and ``tasks/result``
        (the error).
    '''
    state = await _get( session, identifier )
    assert state.status == 'failed'
    message = sdk.access_field( state, 'status_message' )
    assert f"waited {duration:g} seconds" in message
    with pytest.raises( sdk.Error ) as caught:
        await asyncio.wait_for( _fetch( session, identifier ), _WAIT )
    _verify_overdue( caught.value.error, duration )


@pytest.mark.asyncio
async def test_100_unfetched_task_fails( ):
    ''' A task whose tool asks, never fetched by ``tasks/result`` (its
        request never sent), fails once it waited ``continuation_duration``
        for input: ``tasks/get`` shows ``failed``, its status message
        saying why, and ``tasks/result`` gives the error ``-32001``; its
        tool is cancelled, and the server's one place runs another task.
    '''
    probe = _Probe( )
    store = serving.MemoryTaskStore( )
    server = serving.ToolServer(
        [ _produce_ensemble( probe ) ], task_store = store,
        tasks_running_maximum = 1, continuation_duration = _DURATION )
    async with (
        mcp_support.serve_in_loop( server ) as url,
        _connect( url ) as session,
    ):
        identifier = await _call_as_task( session, 'asking' )
        await _await_end( store, identifier )
        assert probe.cancelled.is_set( )
        assert not server._running and not server._asks._askings
        await _verify_failed( session, identifier )
        again = await _call_as_task( session, 'asking' )
        assert again != identifier
        assert probe.asked == 2 # noqa: PLR2004
        await server.release_tasks( )


@pytest.mark.asyncio
async def test_110_fetched_unanswered_task_fails( ):
    ''' A task whose request went to its client on the stream of
        ``tasks/result``, and which the client never answers, fails alike:
        the open ``tasks/result`` ends with the error ``-32001`` without
        the answer; the tool is cancelled and its place freed.
    '''
    probe = _Probe( )
    store = serving.MemoryTaskStore( )
    received = asyncio.Event( )
    never = asyncio.Event( )

    async def elicit( context, parameters ):
        received.set( )
        await never.wait( )
        return types.ElicitResult(
            action = 'accept', content = { 'name': 'Late' } )

    server = serving.ToolServer(
        [ _produce_ensemble( probe ) ], task_store = store,
        tasks_running_maximum = 1, continuation_duration = _DURATION )
    async with (
        mcp_support.serve_in_loop( server ) as url,
        _connect( url, elicit = elicit ) as session,
        _connect( url ) as other,
    ):
        identifier = await _call_as_task( session, 'asking' )
        fetching = asyncio.ensure_future( _fetch( session, identifier ) )
        await asyncio.wait_for( received.wait( ), _WAIT )
        await _await_end( store, identifier )
        assert probe.cancelled.is_set( )
        assert not server._running
        # The 1.x client reads nothing while its callback runs: another
        # session looks, then the callback answers, too late.
        state = await _get( other, identifier )
        assert state.status == 'failed'
        never.set( )
        with pytest.raises( sdk.Error ) as caught:
            await asyncio.wait_for( fetching, _WAIT )
        _verify_overdue( caught.value.error )
        again = await _call_as_task( other, 'asking' )
        assert again != identifier
        await server.release_tasks( )


@pytest.mark.asyncio
async def test_120_principal_share_freed( ):
    ''' A principal whose task waits for an answer of its model (sampling)
        holds its share of the running tasks until the wait is overdue:
        one more task of it is refused meanwhile, and starts once the
        first failed.
    '''
    probe = _Probe( )
    store = serving.MemoryTaskStore( )
    server = serving.ToolServer(
        [ _produce_ensemble( probe ) ], task_store = store,
        tasks_running_maximum = 4, tasks_running_per_principal_maximum = 1,
        continuation_duration = _DURATION_AMPLE )
    async with (
        mcp_support.serve_in_loop(
            server, token_verifier = _Verifier( ) ) as url,
        _connect( url, 'token-ada' ) as ada,
    ):
        identifier = await _call_as_task( ada, 'sampling' )
        with pytest.raises( sdk.Error ) as caught:
            await asyncio.wait_for( _call_as_task( ada, 'sampling' ), _WAIT )
        assert 'tasks of your principal already' in caught.value.error.message
        await _await_end( store, identifier )
        assert probe.cancelled.is_set( )
        await _verify_failed( ada, identifier, _DURATION_AMPLE )
        again = await _call_as_task( ada, 'sampling' )
        assert again != identifier
        await server.release_tasks( )


@pytest.mark.asyncio
async def test_130_working_time_uncounted( ):
    ''' The bound counts the waits for input only: a task which works
        longer than ``continuation_duration`` before it asks, and again
        after its answer (given in time, on the stream of
        ``tasks/result``), completes with its result, while tasks which
        asked meanwhile and were never answered failed.
    '''
    probe = _Probe( )
    store = serving.MemoryTaskStore( )

    async def elicit( context, parameters ):
        return types.ElicitResult(
            action = 'accept', content = { 'name': 'Ada' } )

    server = serving.ToolServer(
        [ _produce_ensemble( probe ) ], task_store = store,
        continuation_duration = _DURATION_AMPLE )
    async with (
        mcp_support.serve_in_loop( server ) as url,
        _connect( url, elicit = elicit ) as session,
    ):
        identifier = await _call_as_task( session, 'working' )
        await asyncio.wait_for( probe.started.wait( ), _WAIT )
        # A task never answered: once it failed, the duration passed.
        await _await_end( store, await _call_as_task( session, 'asking' ) )
        assert ( await _get( session, identifier ) ).status == 'working'
        fetching = asyncio.ensure_future( _fetch( session, identifier ) )
        probe.before.set( )
        await asyncio.wait_for( probe.answered.wait( ), _WAIT )
        await _await_end( store, await _call_as_task( session, 'asking' ) )
        assert ( await _get( session, identifier ) ).status == 'working'
        probe.after.set( )
        result = await asyncio.wait_for( fetching, _WAIT )
        assert result.content[ 0 ].text == 'done Ada'
        state = await _get( session, identifier )
        assert state.status == 'completed'
    assert not server._running
