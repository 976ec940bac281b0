# SPDX-License-Identifier: Apache-2.0

''' serve runs tool calls as tasks (MCP 2025-11-25) for clients which ask:
    created at once, polled, fetched, cancelled, listed, found again by a
    new session; progress goes to the original token. Seen by the SDK's
    own client session over streamable HTTP, with raw requests.
'''


import asyncio
import contextlib
import datetime
import json

from pathlib import Path

import pytest

from mcp import ClientSession, types

import invocables

from invocables import serving
from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk

from . import mcp_support


_DATA = Path( __file__ ).parent.parent / 'data' / 'serving'
_WAIT = 10 # seconds: bounds which prove "does not hang"
_serve = mcp_support.serve_in_loop


class _Gate:
    ''' What the slow tool does, controlled and seen by the test. '''

    def __init__( self ):
        self.started = asyncio.Event( )
        self.release = asyncio.Event( )
        self.cancelled = asyncio.Event( )


class _Notes( list ):
    ''' Notifications which the client received; waited on, not timed. '''

    def __init__( self ):
        super( ).__init__( )
        self.arrival = asyncio.Event( )

    def append( self, note ) -> None:
        super( ).append( note )
        self.arrival.set( )

    async def wait_progress( self, progress ) -> None:
        ''' Waits until progress of a value arrived. '''
        while not any(
            ( _access_progress( note ) or ( None, ) * 5 )[ 1 ] == progress
            for note in self
        ):
            self.arrival.clear( )
            await self.arrival.wait( )


def _produce_ensemble( gate ):
    async def slow( context, label: str ) -> str:
        ''' Waits until released; reports progress first. '''
        await context.report_progress( 1, 2, f"started {label}" )
        gate.started.set( )
        try: await gate.release.wait( )
        except asyncio.CancelledError:
            gate.cancelled.set( )
            raise
        await context.log( 'info', f"finishing {label}" )
        await context.report_progress( 2, 2, f"finished {label}" )
        return f"done {label}"

    def refuse( reason: str ) -> str:
        ''' Refuses, always. '''
        raise invocables.exceptions.InvocationRefusal( reason )

    def explode( ) -> str:
        ''' Fails, as a broken tool does. '''
        raise RuntimeError( 'a secret detail' )

    return invocables.produce_ensemble( 'local', [
        invocables.produce_invoker( slow ), refuse, explode ] )




@contextlib.asynccontextmanager
async def _connect( url, notes = None ):
    ''' Yields an initialized session of the SDK's client. '''
    async def handle( message ):
        if notes is not None: notes.append( sdk.access_message( message ) )

    async with (
        sdk.http.AsyncClient( ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession( *streams, message_handler = handle ) as session,
    ):
        await session.initialize( )
        yield session


async def _request( session, model, result, **parameters ):
    ''' Sends request of a model with parameters (wire names). '''
    fields = { 'method': model.model_fields[ 'method' ].default }
    if parameters: fields[ 'params' ] = parameters
    request = model.model_validate( fields )
    if sdk.MAJOR < 2: request = types.ClientRequest( request )
    return await session.send_request( request, result )


async def _call_as_task( session, name, arguments, token = None ):
    ''' Calls tool, asking for a task; returns the task. '''
    parameters = {
        'name': name, 'arguments': arguments, 'task': { 'ttl': 60_000 } }
    if token is not None: parameters[ '_meta' ] = { 'progressToken': token }
    if sdk.MAJOR < 2:
        result = await _request(
            session, types.CallToolRequest, types.CreateTaskResult,
            **parameters )
        return result.task
    # The 2.x session checks results of tools/call as CallToolResult: a
    # task is sent and read through its dispatcher (JSON-RPC as is).
    raw = await session._dispatcher.send_raw_request(
        'tools/call', parameters, None )
    return types.CreateTaskResult.model_validate( raw ).task


async def _get( session, identifier ):
    return await _request(
        session, types.GetTaskRequest, types.GetTaskResult,
        taskId = identifier )


async def _fetch( session, identifier ):
    return await _request(
        session, types.GetTaskPayloadRequest, types.CallToolResult,
        taskId = identifier )


def _access_capabilities( session ):
    if sdk.MAJOR < 2: return session.get_server_capabilities( )
    return session.initialize_result.capabilities


def _field( model, name ):
    return sdk.access_field( model, name )


@pytest.mark.asyncio
async def test_100_capability_and_listing( ):
    ''' serve advertises tasks of tool calls, their list and cancellation;
        local tools may run as tasks (``optional``).
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        tasks = _access_capabilities( session ).tasks
        assert tasks is not None
        assert tasks.list is not None and tasks.cancel is not None
        assert tasks.requests.tools.call is not None
        listing = await session.list_tools( )
        for tool in listing.tools:
            assert _field( tool.execution, 'task_support' ) == 'optional'


@pytest.mark.asyncio
async def test_110_task_created_polled_fetched( ):
    ''' A call asking for a task gets it at once, working; it completes
        when the tool ends, and its result is the call's.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        task = await _call_as_task( session, 'slow', { 'label': 'a' } )
        identifier = _field( task, 'task_id' )
        assert task.status == 'working'
        assert len( identifier ) >= 32
        assert _field( task, 'created_at' )
        assert _field( task, 'poll_interval' ) > 0
        assert task.ttl == 60_000
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        state = await _get( session, identifier )
        assert state.status == 'working'
        assert _field( state, 'status_message' ) == 'started a'
        fetching = asyncio.ensure_future( _fetch( session, identifier ) )
        gate.release.set( )
        result = await asyncio.wait_for( fetching, _WAIT )
        assert not _field( result, 'is_error' )
        assert result.content[ 0 ].text == 'done a'
        state = await _get( session, identifier )
        assert state.status == 'completed'


@pytest.mark.asyncio
async def test_120_tool_error_completes( ):
    ''' A tool's error is a completed task whose result is an error; a
        completed task cannot be cancelled.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        task = await _call_as_task( session, 'refuse', { 'reason': 'no' } )
        identifier = _field( task, 'task_id' )
        result = await asyncio.wait_for(
            _fetch( session, identifier ), _WAIT )
        assert _field( result, 'is_error' )
        assert result.content[ 0 ].text == 'no'
        state = await _get( session, identifier )
        assert state.status == 'completed'
        with pytest.raises( sdk.Error ) as caught:
            await _request(
                session, types.CancelTaskRequest, types.CancelTaskResult,
                taskId = identifier )
        assert caught.value.error.code == -32602
        assert 'completed' in caught.value.error.message


@pytest.mark.asyncio
async def test_122_failure_fails( ):
    ''' A call which fails (a tool's exception, which the server's options
        make a failure rather than an error result) is a failed task,
        whose result is a protocol error, without the exception's text.
    '''
    server = serving.ToolServer(
        [ _produce_ensemble( _Gate( ) ) ],
        failure_policy = invocables.FailurePolicies.Raise )
    async with _serve( server ) as url, _connect( url ) as session:
        task = await _call_as_task( session, 'explode', { } )
        identifier = _field( task, 'task_id' )
        with pytest.raises( sdk.Error ) as caught:
            await asyncio.wait_for( _fetch( session, identifier ), _WAIT )
        assert caught.value.error.code == -32603
        assert 'secret' not in caught.value.error.message
        state = await _get( session, identifier )
        assert state.status == 'failed'


@pytest.mark.asyncio
async def test_125_invalid_arguments_complete( ):
    ''' A task's call goes through the engine as any call: arguments
        which break the schema are refused before the tool runs, an error
        result of a completed task.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        task = await _call_as_task( session, 'slow', { 'label': 3 } )
        result = await asyncio.wait_for(
            _fetch( session, _field( task, 'task_id' ) ), _WAIT )
        assert _field( result, 'is_error' )
        assert 'label' in result.content[ 0 ].text
    assert not gate.started.is_set( )


@pytest.mark.asyncio
async def test_130_cancelled_midway( ):
    ''' Cancelling a working task cancels the tool's coroutine; the task
        is cancelled, has no result, and cannot be cancelled again.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        task = await _call_as_task( session, 'slow', { 'label': 'b' } )
        identifier = _field( task, 'task_id' )
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        cancelled = await _request(
            session, types.CancelTaskRequest, types.CancelTaskResult,
            taskId = identifier )
        assert cancelled.status == 'cancelled'
        assert gate.cancelled.is_set( )
        state = await _get( session, identifier )
        assert state.status == 'cancelled'
        with pytest.raises( sdk.Error ) as caught:
            await _request(
                session, types.CancelTaskRequest, types.CancelTaskResult,
                taskId = identifier )
        assert caught.value.error.code == -32602
        with pytest.raises( sdk.Error ):
            await asyncio.wait_for( _fetch( session, identifier ), _WAIT )


@pytest.mark.asyncio
async def test_140_unknown_task( ):
    ''' An unknown task is an error of invalid parameters, for each
        method.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        for model, result in (
            ( types.GetTaskRequest, types.GetTaskResult ),
            ( types.GetTaskPayloadRequest, types.CallToolResult ),
            ( types.CancelTaskRequest, types.CancelTaskResult ),
        ):
            with pytest.raises( sdk.Error ) as caught:
                await _request( session, model, result, taskId = 'nothing' )
            assert caught.value.error.code == -32602
            assert 'nothing' in caught.value.error.message


@pytest.mark.asyncio
async def test_150_found_by_new_session( ):
    ''' Tasks belong to the server: a client which reconnects, in a new
        session, polls and fetches the task of its first session.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as url:
        async with _connect( url ) as session:
            task = await _call_as_task( session, 'slow', { 'label': 'c' } )
            identifier = _field( task, 'task_id' )
            await asyncio.wait_for( gate.started.wait( ), _WAIT )
        async with _connect( url ) as session:
            state = await _get( session, identifier )
            assert state.status == 'working'
            fetching = asyncio.ensure_future( _fetch( session, identifier ) )
            gate.release.set( )
            result = await asyncio.wait_for( fetching, _WAIT )
    assert result.content[ 0 ].text == 'done c'
    assert not gate.cancelled.is_set( )


@pytest.mark.asyncio
async def test_160_progress_to_original_token( ):
    ''' Progress of the tool, after the task was returned, reaches the
        client with the token of the request which started the task; it
        and the tool's log messages name the task.
    '''
    gate = _Gate( )
    notes = _Notes( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with (
        _serve( server ) as url, _connect( url, notes ) as session,
    ):
        task = await _call_as_task(
            session, 'slow', { 'label': 'd' }, token = 'token-d' )
        identifier = _field( task, 'task_id' )
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        gate.release.set( )
        await asyncio.wait_for( _fetch( session, identifier ), _WAIT )
        await asyncio.wait_for( notes.wait_progress( 2 ), _WAIT )
    related = { 'io.modelcontextprotocol/related-task': {
        'taskId': identifier } }
    progress = [ _access_progress( note ) for note in notes ]
    assert ( 'token-d', 2, 2, 'finished d', related ) in progress
    messages = ( getattr( note, 'root', note ) for note in notes )
    logs = [
        ( message.params.data, _thaw( message.params.meta ) )
        for message in messages
        if isinstance( message, types.LoggingMessageNotification ) ]
    assert logs == [ ( 'finishing d', related ) ]


@pytest.mark.asyncio
async def test_170_listed_by_pages( ):
    ''' tasks/list gives the tasks a page at a time, from the store given
        to the server; an unknown cursor is an error.
    '''
    gate = _Gate( )
    gate.release.set( )
    store = serving.MemoryTaskStore( page_size = 1 )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], task_store = store )
    async with _serve( server ) as url, _connect( url ) as session:
        identifiers = [ ]
        for label in ( 'e', 'f' ):
            task = await _call_as_task( session, 'slow', { 'label': label } )
            identifiers.append( _field( task, 'task_id' ) )
            await asyncio.wait_for(
                _fetch( session, identifiers[ -1 ] ), _WAIT )
        first = await _request(
            session, types.ListTasksRequest, types.ListTasksResult )
        cursor = _field( first, 'next_cursor' )
        assert cursor is not None
        second = await _request(
            session, types.ListTasksRequest, types.ListTasksResult,
            cursor = cursor )
        assert _field( second, 'next_cursor' ) is None
        listed = [
            ( _field( task, 'task_id' ), task.status )
            for task in ( *first.tasks, *second.tasks ) ]
        assert listed == [
            ( identifier, 'completed' ) for identifier in identifiers ]
        with pytest.raises( sdk.Error ) as caught:
            await _request(
                session, types.ListTasksRequest, types.ListTasksResult,
                cursor = 'nowhere' )
        assert caught.value.error.code == -32602
    assert ( await store.retrieve_task( identifiers[ 0 ] ) ) is not None


@pytest.mark.asyncio
async def test_175_running_bounded( ):
    ''' A server runs a bounded number of tasks at once: a client which
        asks for one more gets an error, and a task once the first ended.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], tasks_running_maximum = 1 )
    async with _serve( server ) as url, _connect( url ) as session:
        task = await _call_as_task( session, 'slow', { 'label': 'k' } )
        with pytest.raises( sdk.Error ) as caught:
            await _call_as_task( session, 'slow', { 'label': 'l' } )
        assert caught.value.error.code == -32600
        assert 'runs 1 tasks already' in caught.value.error.message
        gate.release.set( )
        await asyncio.wait_for(
            _fetch( session, _field( task, 'task_id' ) ), _WAIT )
        task = await _call_as_task( session, 'slow', { 'label': 'm' } )
        result = await asyncio.wait_for(
            _fetch( session, _field( task, 'task_id' ) ), _WAIT )
        assert result.content[ 0 ].text == 'done m'


@pytest.mark.asyncio
async def test_180_ordinary_call_unchanged( ):
    ''' A call which asks no task is answered with the call's result. '''
    gate = _Gate( )
    gate.release.set( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        result = await session.call_tool( 'slow', { 'label': 'g' } )
        assert result.content[ 0 ].text == 'done g'
        listing = await _request(
            session, types.ListTasksRequest, types.ListTasksResult )
        assert listing.tasks == [ ]


@pytest.mark.asyncio
async def test_190_stop_cancels_running( ):
    ''' When the server stops, the calls of working tasks are cancelled:
        nothing is left running.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as url:
        async with _connect( url ) as session:
            task = await _call_as_task( session, 'slow', { 'label': 'h' } )
            await asyncio.wait_for( gate.started.wait( ), _WAIT )
    assert gate.cancelled.is_set( )
    record = await server.task_store.retrieve_task(
        _field( task, 'task_id' ) )
    assert record.state is serving.TaskStates.Cancelled


@pytest.mark.asyncio
async def test_200_expired_forgotten( ):
    ''' A task past its time to live is forgotten by the memory store. '''
    store = serving.MemoryTaskStore( )
    now = datetime.datetime.now( datetime.timezone.utc )
    created = now - datetime.timedelta( seconds = 2 )
    for identifier, ttl in ( ( 'old', 1000 ), ( 'young', 60_000 ) ):
        await store.store_task( serving.TaskRecord(
            identifier = identifier, created = created, updated = created,
            ttl = ttl ) )
    assert await store.retrieve_task( 'old' ) is None
    assert ( await store.retrieve_task( 'young' ) ).identifier == 'young'
    await store.wait_task( 'old' ) # forgotten: returns at once
    tasks, cursor = await store.survey_tasks( None )
    assert [ task.identifier for task in tasks ] == [ 'young' ]
    assert cursor is None


@pytest.mark.asyncio
async def test_210_without_store( ):
    ''' Without a task store, serve offers no tasks: no capability, no
        task support listed, and a call asking for a task is answered
        with its result.
    '''
    gate = _Gate( )
    gate.release.set( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], task_store = None )
    async with _serve( server ) as url, _connect( url ) as session:
        assert _access_capabilities( session ).tasks is None
        listing = await session.list_tools( )
        assert all( tool.execution is None for tool in listing.tools )
        result = await _request(
            session, types.CallToolRequest, types.CallToolResult,
            name = 'slow', arguments = { 'label': 'i' },
            task = { 'ttl': 1000 } )
        assert result.content[ 0 ].text == 'done i'


def _access_progress( note ):
    note = getattr( note, 'root', note )
    if not isinstance( note, types.ProgressNotification ): return None
    parameters = note.params
    return (
        _field( parameters, 'progress_token' ), parameters.progress,
        parameters.total, parameters.message, _thaw( parameters.meta ) )


def _thaw( meta ):
    ''' Returns metadata as a dictionary (SDK 1.x: a model). '''
    if hasattr( meta, 'model_dump' ): return meta.model_dump( )
    return meta


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_220_modern_session_ignores_task( ):
    ''' A session of MCP 2026-07-28 (the SDK 2.x client's default), which
        knows no tasks of 2025-11-25, sees no task support and gets the
        call's result though it asks for a task. The SDK 1.x speaks no
        2026-07-28: its session, of the handshake, gets a task.
    '''
    gate = _Gate( )
    gate.release.set( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with (
        invocables.connect_ensembles( server.ensembles ),
        mcp_support.open_memory_client( server.produce_server( ) ) as client,
    ):
        session = getattr( client, 'session', client )
        listing = await client.list_tools( )
        modern = sdk.MAJOR >= 2
        assert all(
            ( tool.execution is None ) is modern for tool in listing.tools )
        result = await _request(
            session, types.CallToolRequest,
            types.CallToolResult if modern else types.CreateTaskResult,
            name = 'slow', arguments = { 'label': 'j' },
            task = { 'ttl': 1000 } )
        if modern: assert result.content[ 0 ].text == 'done j'
        else: assert result.task.status == 'working'
    await server.release_tasks( )


@pytest.mark.asyncio
async def test_230_stateless( ):
    ''' Served statelessly (every request stands alone), a task runs
        beyond the request which started it and is fetched by another.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with (
        _serve( server, stateless = True ) as url,
        _connect( url ) as session,
    ):
        task = await _call_as_task(
            session, 'slow', { 'label': 'n' }, token = 'token-n' )
        identifier = _field( task, 'task_id' )
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        state = await _get( session, identifier )
        assert state.status == 'working'
        fetching = asyncio.ensure_future( _fetch( session, identifier ) )
        gate.release.set( )
        result = await asyncio.wait_for( fetching, _WAIT )
    assert result.content[ 0 ].text == 'done n'


# The tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks):
# requests of that protocol, raw (the SDK 2.x client sends no tasks/*).

_EXTENSION = 'io.modelcontextprotocol/tasks'
_MODERN = '2026-07-28'


_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string' } },
    'required': [ 'name' ] }


class _Answerer:
    ''' Answers the server's requests, as the SDK's client callbacks;
        keeps what it was asked and the task each request named.
    '''

    def __init__( self ):
        self.asked = [ ]
        self.tasks = [ ]

    async def elicit( self, context, parameters ):
        self.asked.append( parameters.message )
        self._note( parameters )
        return types.ElicitResult(
            action = 'accept', content = { 'name': 'Ada' } )

    async def sample( self, context, parameters ):
        self.asked.append( parameters.messages[ 0 ].content.text )
        self._note( parameters )
        return types.CreateMessageResult(
            role = 'assistant', model = 'm1',
            content = types.TextContent( type = 'text', text = 'hi' ) )

    def _note( self, parameters ):
        meta = _thaw( parameters.meta ) or { }
        related = meta.get( 'io.modelcontextprotocol/related-task' ) or { }
        self.tasks.append( related.get( 'taskId' ) )


def _produce_asking_ensemble( gate ):
    async def ask( context ) -> str:
        ''' Asks a name, then the model, once released. '''
        await gate.release.wait( )
        gate.started.set( )
        try:
            name = await context.elicit( 'Name?', _NAME_SCHEMA )
            sample = await context.sample( [ 'Greet.' ], max_tokens = 10 )
        except asyncio.CancelledError:
            gate.cancelled.set( )
            raise
        return f"{name.content[ 'name' ]}: {sample.content.text}"

    return invocables.produce_ensemble( 'asking', [
        invocables.produce_invoker( ask ) ] )


@contextlib.asynccontextmanager
async def _connect_answering( url, answerer ):
    ''' Yields an initialized session of the SDK's client which answers
        elicitation and sampling.
    '''
    async with (
        sdk.http.AsyncClient( ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession(
            *streams, elicitation_callback = answerer.elicit,
            sampling_callback = answerer.sample ) as session,
    ):
        await session.initialize( )
        yield session


async def _wait_status( session, identifier, status ):
    ''' Polls task until its status; returns its state. Bounded. '''
    async def wait( ):
        while True:
            state = await _get( session, identifier )
            if state.status == status: return state
            await asyncio.sleep( 0.05 )
    return await asyncio.wait_for( wait( ), _WAIT )


async def _wait_delivery( server, identifier ):
    ''' Waits until a ``tasks/result`` of the task is open on the server.
    '''
    while identifier not in server._asks._askings:
        await asyncio.sleep( 0.01 )


@pytest.mark.asyncio
async def test_240_task_asks_before_result( ):
    ''' A task's tool which asks its client waits for input
        (``input_required``, its status message naming the question); its
        requests, made before any ``tasks/result``, go on the stream of
        the next one, naming the task; the answers resume the tool, and
        the task completes with its result.
    '''
    gate = _Gate( )
    answerer = _Answerer( )
    server = serving.ToolServer( [ _produce_asking_ensemble( gate ) ] )
    async with (
        _serve( server ) as url, _connect_answering( url, answerer ) as session
    ):
        task = await _call_as_task( session, 'ask', { } )
        identifier = _field( task, 'task_id' )
        gate.release.set( )
        state = await _wait_status( session, identifier, 'input_required' )
        assert 'Name?' in _field( state, 'status_message' )
        assert answerer.asked == [ ]
        result = await asyncio.wait_for( _fetch( session, identifier ), _WAIT )
        assert result.content[ 0 ].text == 'Ada: hi'
        assert answerer.asked == [ 'Name?', 'Greet.' ]
        assert answerer.tasks == [ identifier, identifier ]
        state = await _get( session, identifier )
        assert state.status == 'completed'


@pytest.mark.asyncio
async def test_250_task_asks_during_result( ):
    ''' A task's tool which asks while ``tasks/result`` is open has its
        requests sent on that stream; the result follows the answers.
    '''
    gate = _Gate( )
    answerer = _Answerer( )
    server = serving.ToolServer( [ _produce_asking_ensemble( gate ) ] )
    async with (
        _serve( server ) as url, _connect_answering( url, answerer ) as session
    ):
        task = await _call_as_task( session, 'ask', { } )
        identifier = _field( task, 'task_id' )
        fetching = asyncio.ensure_future( _fetch( session, identifier ) )
        await asyncio.wait_for( _wait_delivery( server, identifier ), _WAIT )
        gate.release.set( )
        result = await asyncio.wait_for( fetching, _WAIT )
        assert result.content[ 0 ].text == 'Ada: hi'
        assert answerer.asked == [ 'Name?', 'Greet.' ]
        assert answerer.tasks == [ identifier, identifier ]


@pytest.mark.asyncio
async def test_260_cancelled_while_asking( ):
    ''' Cancelling a task whose tool waits for input cancels the tool;
        the task is cancelled, its request never sent, and
        ``tasks/result`` is an error.
    '''
    gate = _Gate( )
    answerer = _Answerer( )
    server = serving.ToolServer( [ _produce_asking_ensemble( gate ) ] )
    async with (
        _serve( server ) as url, _connect_answering( url, answerer ) as session
    ):
        task = await _call_as_task( session, 'ask', { } )
        identifier = _field( task, 'task_id' )
        gate.release.set( )
        await _wait_status( session, identifier, 'input_required' )
        cancelled = await _request(
            session, types.CancelTaskRequest, types.CancelTaskResult,
            taskId = identifier )
        assert cancelled.status == 'cancelled'
        assert gate.cancelled.is_set( )
        with pytest.raises( sdk.Error ):
            await asyncio.wait_for( _fetch( session, identifier ), _WAIT )
        assert answerer.asked == [ ]


@pytest.mark.asyncio
async def test_265_cancelled_while_client_answers( ):
    ''' Cancelling a task whose request the client has but did not
        answer yet cancels the tool; the open ``tasks/result`` ends with
        an error, without waiting for the answer.
    '''
    gate = _Gate( )
    answerer = _Answerer( )
    asked = asyncio.Event( )
    never = asyncio.Event( )

    async def elicit( context, parameters ):
        asked.set( )
        await never.wait( )

    answerer.elicit = elicit
    fetched = asyncio.Event( )

    class Server( serving.ToolServer ):
        ''' Tells when a ``tasks/result`` ends. '''

        async def retrieve_task_result( self, context, parameters ):
            try: return await super( ).retrieve_task_result(
                context, parameters )
            finally: fetched.set( )

    server = Server( [ _produce_asking_ensemble( gate ) ] )
    async with (
        _serve( server ) as url, _connect_answering( url, answerer ) as session
    ):
        task = await _call_as_task( session, 'ask', { } )
        identifier = _field( task, 'task_id' )
        gate.release.set( )
        fetching = asyncio.ensure_future( _fetch( session, identifier ) )
        await asyncio.wait_for( asked.wait( ), _WAIT )
        # Another session cancels: the 1.x client reads nothing while its
        # callback runs.
        async with _connect( url ) as other:
            cancelled = await asyncio.wait_for( _request(
                other, types.CancelTaskRequest, types.CancelTaskResult,
                taskId = identifier ), _WAIT )
        assert cancelled.status == 'cancelled'
        assert gate.cancelled.is_set( )
        # The open tasks/result ended on the server, unanswered.
        await asyncio.wait_for( fetched.wait( ), _WAIT )
        never.set( )
        with pytest.raises( sdk.Error ):
            await asyncio.wait_for( fetching, _WAIT )


@pytest.mark.asyncio
async def test_270_stateless_asking( ):
    ''' Served statelessly (no stream on which the client could answer),
        a task's tool which asks its client is refused: the task
        completes with the tool's error, naming the elicitation, and
        nothing is asked.
    '''
    gate = _Gate( )
    answerer = _Answerer( )
    server = serving.ToolServer( [ _produce_asking_ensemble( gate ) ] )
    async with (
        _serve( server, stateless = True ) as url,
        _connect_answering( url, answerer ) as session,
    ):
        task = await _call_as_task( session, 'ask', { } )
        identifier = _field( task, 'task_id' )
        gate.release.set( )
        result = await asyncio.wait_for( _fetch( session, identifier ), _WAIT )
        state = await _get( session, identifier )
    assert state.status == 'completed'
    assert _field( result, 'is_error' )
    assert 'elicitation' in result.content[ 0 ].text
    assert answerer.asked == [ ]


@pytest.mark.asyncio
async def test_280_result_dropped_while_asking( ):
    ''' A request whose ``tasks/result`` the client dropped before it
        answered is sent again on the next one (the 2.x client cancels
        the dropped request; 1.x's does not, and the answer comes on the
        first stream): either way, the answer resumes the tool.
    '''
    gate = _Gate( )
    answerer = _Answerer( )
    asked = asyncio.Event( )
    release = asyncio.Event( )
    elicit_answering = answerer.elicit

    async def elicit( context, parameters ):
        if not asked.is_set( ):
            asked.set( )
            await release.wait( )
        return await elicit_answering( context, parameters )

    answerer.elicit = elicit
    server = serving.ToolServer( [ _produce_asking_ensemble( gate ) ] )
    async with (
        _serve( server ) as url, _connect_answering( url, answerer ) as session
    ):
        task = await _call_as_task( session, 'ask', { } )
        identifier = _field( task, 'task_id' )
        gate.release.set( )
        fetching = asyncio.ensure_future( _fetch( session, identifier ) )
        await asyncio.wait_for( asked.wait( ), _WAIT )
        fetching.cancel( )
        release.set( )
        result = await asyncio.wait_for( _fetch( session, identifier ), _WAIT )
    assert result.content[ 0 ].text == 'Ada: hi'
    assert answerer.asked[ -1 ] == 'Greet.'


def _produce_declaring_ensemble( gate ):
    async def slow( context, label: str ) -> str:
        ''' Waits until released. '''
        gate.started.set( )
        try: await gate.release.wait( )
        except asyncio.CancelledError:
            gate.cancelled.set( )
            raise
        return f"done {label}"

    def quick( ) -> str:
        ''' Answers at once. '''
        return 'quick'

    return invocables.produce_ensemble( 'declaring', [
        invocables.produce_invoker(
            slow, annotations = { 'task_support': 'optional' } ),
        invocables.produce_invoker(
            slow, name = 'slow_required',
            annotations = { 'task_support': 'required', 'title': 'Slow' } ),
        invocables.produce_invoker(
            quick, annotations = { 'task_support': 'forbidden' } ),
        invocables.produce_invoker( quick, name = 'undeclared' ) ] )


async def _post_modern(
    http, url, method, parameters, extension = True, name = None
):
    ''' Posts request of MCP 2026-07-28; returns HTTP status and message.
    '''
    capabilities = { 'extensions': { _EXTENSION: { } } } if extension else { }
    body = {
        'jsonrpc': '2.0', 'id': 1, 'method': method,
        'params': { **parameters, '_meta': {
            'io.modelcontextprotocol/protocolVersion': _MODERN,
            'io.modelcontextprotocol/clientCapabilities': capabilities,
        } } }
    headers = {
        'Accept': 'application/json, text/event-stream',
        'MCP-Protocol-Version': _MODERN, 'Mcp-Method': method }
    if name is not None: headers[ 'Mcp-Name' ] = name
    response = await http.post( url, json = body, headers = headers )
    text = response.text
    if 'text/event-stream' in response.headers.get( 'content-type', '' ):
        text = next(
            line[ len( 'data:' ) : ] for line in text.splitlines( )
            if line.startswith( 'data:' ) and 'jsonrpc' in line )
    try: message = json.loads( text )
    except ValueError: message = None
    return response.status_code, message


@pytest.mark.asyncio
async def test_300_declared_support_listed( ):
    ''' Local tools declare their task support (annotation
        ``task_support``), listed as the tool's; undeclared, they may run
        as tasks (``optional``). The annotation is no MCP annotation.
    '''
    server = serving.ToolServer( [ _produce_declaring_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as url, _connect( url ) as session:
        listing = await session.list_tools( )
    supports = {
        tool.name: _field( tool.execution, 'task_support' )
        for tool in listing.tools }
    assert supports == {
        'slow': 'optional', 'slow_required': 'required',
        'quick': 'forbidden', 'undeclared': 'optional' }
    annotated = { tool.name: tool.annotations for tool in listing.tools }
    assert annotated[ 'slow' ] is None
    assert annotated[ 'slow_required' ].title == 'Slow'
    assert 'task_support' not in annotated[ 'slow_required' ].model_dump( )


def test_305_declared_support_invalid( ):
    ''' A task support other than forbidden, optional or required is
        named when the tool is served.
    '''
    ensemble = invocables.produce_ensemble( 'wrong', [
        invocables.produce_invoker(
            lambda: 'x', name = 'odd',
            annotations = { 'task_support': 'sometimes' } ) ] )
    designation = invocables.naming.access_nomenclature(
        ( ensemble, ) ).access_designation( 'odd' )
    with pytest.raises( invocables.exceptions.InvokerInvalidity ) as caught:
        serving.produce_tool( designation )
    assert 'sometimes' in str( caught.value )


@pytest.mark.asyncio
async def test_310_modern_task_lifecycle( ):
    ''' Under MCP 2026-07-28 (mcp SDK 2.x), serve advertises the tasks
        extension; a tool which declares task support, called by a client
        which declares the extension, is a task (flat ``CreateTaskResult``)
        whose ``tasks/get`` inlines the result; ``tasks/cancel`` is an
        empty acknowledgement, also of a terminal task. The SDK 1.x knows
        no 2026-07-28: serve refuses such requests.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_declaring_ensemble( gate ) ] )
    async with _serve( server ) as url, sdk.http.AsyncClient( ) as http:
        status, created = await _post_modern(
            http, url, 'tools/call',
            { 'name': 'slow', 'arguments': { 'label': 'm' } }, name = 'slow' )
        if sdk.MAJOR < 2:
            assert status >= 400
            return
        task = created[ 'result' ]
        assert task[ 'resultType' ] == 'task'
        assert task[ 'status' ] == 'working'
        assert task[ 'ttlMs' ] > 0 and task[ 'pollIntervalMs' ] > 0
        assert not { 'task', 'ttl', 'pollInterval', 'requestState' } & set(
            task )
        identifier = task[ 'taskId' ]
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        _, state = await _post_modern(
            http, url, 'tasks/get', { 'taskId': identifier } )
        assert state[ 'result' ][ 'status' ] == 'working'
        assert 'result' not in state[ 'result' ]
        gate.release.set( )
        await asyncio.wait_for(
            server.task_store.wait_task( identifier ), _WAIT )
        _, state = await _post_modern(
            http, url, 'tasks/get', { 'taskId': identifier } )
        detailed = state[ 'result' ]
        assert detailed[ 'status' ] == 'completed'
        assert detailed[ 'resultType' ] == 'complete'
        assert detailed[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'done m'
        assert 'io.modelcontextprotocol/related-task' not in (
            detailed[ 'result' ].get( '_meta' ) or { } )
        _, acknowledged = await _post_modern(
            http, url, 'tasks/cancel', { 'taskId': identifier } )
        assert set( acknowledged[ 'result' ] ) <= { 'resultType', '_meta' }
        for method in ( 'tasks/get', 'tasks/cancel' ):
            _, unknown = await _post_modern(
                http, url, method, { 'taskId': 'nothing' } )
            assert unknown[ 'error' ][ 'code' ] == -32602
        for method in ( 'tasks/result', 'tasks/list' ):
            _, removed = await _post_modern(
                http, url, method, { 'taskId': identifier } )
            assert removed[ 'error' ][ 'code' ] == -32601


@pytest.mark.asyncio
async def test_320_modern_cancelled( ):
    ''' Under MCP 2026-07-28, cancelling a working task cancels the tool's
        coroutine; the task is then cancelled.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_declaring_ensemble( gate ) ] )
    async with _serve( server ) as url, sdk.http.AsyncClient( ) as http:
        status, created = await _post_modern(
            http, url, 'tools/call',
            { 'name': 'slow', 'arguments': { 'label': 'c' } }, name = 'slow' )
        if sdk.MAJOR < 2:
            assert status >= 400
            return
        identifier = created[ 'result' ][ 'taskId' ]
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        _, acknowledged = await _post_modern(
            http, url, 'tasks/cancel', { 'taskId': identifier } )
        assert acknowledged[ 'result' ][ 'resultType' ] == 'complete'
        assert gate.cancelled.is_set( )
        _, state = await _post_modern(
            http, url, 'tasks/get', { 'taskId': identifier } )
        assert state[ 'result' ][ 'status' ] == 'cancelled'


@pytest.mark.asyncio
async def test_330_modern_without_extension( ):
    ''' Under MCP 2026-07-28, a client which does not declare the tasks
        extension gets the results of task-supporting tools at once, an
        error (missing client capability) for a tool which requires a
        task and for ``tasks/*``; undeclared and forbidding tools never
        are tasks. The SDK 1.x knows no 2026-07-28: serve refuses.
    '''
    gate = _Gate( )
    gate.release.set( )
    server = serving.ToolServer( [ _produce_declaring_ensemble( gate ) ] )
    async with _serve( server ) as url, sdk.http.AsyncClient( ) as http:
        status, called = await _post_modern(
            http, url, 'tools/call',
            { 'name': 'slow', 'arguments': { 'label': 's' } },
            extension = False, name = 'slow' )
        if sdk.MAJOR < 2:
            assert status >= 400
            return
        assert called[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'done s'
        _, refused = await _post_modern(
            http, url, 'tools/call',
            { 'name': 'slow_required', 'arguments': { 'label': 'r' } },
            extension = False, name = 'slow_required' )
        assert refused[ 'error' ][ 'code' ] == -32021
        assert _EXTENSION in (
            refused[ 'error' ][ 'data' ][ 'requiredCapabilities' ][
                'extensions' ] )
        for method in ( 'tasks/get', 'tasks/cancel', 'tasks/update' ):
            _, gated = await _post_modern(
                http, url, method, { 'taskId': 'any' }, extension = False )
            assert gated[ 'error' ][ 'code' ] == -32021
        for name in ( 'quick', 'undeclared' ):
            _, called = await _post_modern(
                http, url, 'tools/call', { 'name': name, 'arguments': { } },
                name = name )
            assert called[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'quick'


def test_340_descriptor_declares_support( monkeypatch ):
    ''' An ensemble descriptor declares its tools' task support (TOML
        ``annotations = { task_support = ... }``); an unknown value is
        named, with its file and key.
    '''
    from invocables import descriptors
    monkeypatch.syspath_prepend( str( _DATA / 'modules' ) )
    data = _DATA / 'conformance' / 'conformance.toml'
    descriptor = descriptors.produce_ensemble_descriptor( data )
    supports = {
        invoker.name: invoker.annotations.get( 'task_support' )
        for invoker in descriptor.invokers }
    assert supports[ 'greet' ] == 'forbidden'
    assert supports[ 'slow_compute' ] == 'optional'
    assert supports[ 'failing_job' ] == 'required'
    assert supports[ 'test_simple_text' ] is None


def test_345_descriptor_invalid_support( tmp_path ):
    ''' A descriptor's unknown task support is a descriptor error which
        names the value and the choices.
    '''
    from invocables import descriptors
    path = tmp_path / 'odd.toml'
    path.write_text(
        "[invoker]\nname = 'odd'\nimplementation = 'operator:add'\n"
        "annotations = { task_support = 'sometimes' }\n"
        "[arguments]\ntype = 'object'\n" )
    invalidity = invocables.exceptions.DescriptorInvalidity
    with pytest.raises( invalidity ) as caught:
        descriptors.produce_invoker_descriptor( path )
    assert 'sometimes' in str( caught.value )
    assert 'forbidden, optional, required' in str( caught.value )
