# SPDX-License-Identifier: Apache-2.0

''' Tools which run as tasks under MCP 2026-07-28 (the tasks extension),
    called by the library's client: against serve over HTTP, fronted so
    that it speaks 2026-07-28 only (it refuses the legacy handshake as a
    server of that protocol alone does). With the mcp SDK 2.x the client
    discovers it, declares the extension and follows the tasks which the
    server makes; with 1.x (no 2026-07-28) the front is left out and the
    same calls take the 2025-11-25 path. Result, progress, cancellation,
    timeout and reconnection are checked on both paths.
'''


import asyncio
import contextlib
import json
import logging

import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables import serving
from invocables.mcp import _sdk

from . import mcp_support


pytestmark = pytest.mark.asyncio
_MODERN = _sdk.MAJOR >= 2 # the SDK speaks 2026-07-28
_REFUSAL = { 'initialize': {
    'code': -32022, 'message': 'Unsupported protocol version.',
    'data': { 'supported': [ '2026-07-28' ], 'requested': '2025-11-25' } } }
_WAIT = 30 # seconds: bounds which prove "does not hang"


class _Gate:
    ''' What the slow tool does, controlled and seen by the test. '''

    def __init__( self ):
        self.calls = 0
        self.started = asyncio.Event( )
        self.release = asyncio.Event( )
        self.cancelled = asyncio.Event( )


async def _wait_message( reports, text ):
    ''' Waits until a progress report carries a message; bounded. '''
    async def wait( ) -> None:
        while not any( report.message == text for report in reports ):
            reports.arrival.clear( )
            await reports.arrival.wait( )
    await asyncio.wait_for( wait( ), _WAIT )


def _produce_server( gate, store = None ):
    async def slow( context, label: str ) -> str:
        ''' Waits until released; reports progress first. '''
        gate.calls += 1
        await context.report_progress( 1, 2, f"started {label}" )
        gate.started.set( )
        try: await gate.release.wait( )
        except asyncio.CancelledError:
            gate.cancelled.set( )
            raise
        return f"done {label}"

    async def quick( label: str ) -> str:
        ''' Answers at once. '''
        return f"quick {label}"

    async def broken( label: str ) -> str:
        ''' Fails. '''
        raise exceptions.InvocationRefusal( f"broken {label}" )

    ensemble = invocables.produce_ensemble( 'local', [
        invocables.produce_invoker(
            slow, annotations = { 'task_support': 'required' } ),
        invocables.produce_invoker(
            broken, annotations = { 'task_support': 'required' } ),
        invocables.produce_invoker(
            quick, annotations = { 'task_support': 'forbidden' } ) ] )
    if store is None: return serving.ToolServer( [ ensemble ] )
    return serving.ToolServer( [ ensemble ], task_store = store )


def _refuse_legacy( application, seen, refusal = _REFUSAL ):
    ''' Returns the application, which answers the legacy handshake
        (``initialize``) as a server of MCP 2026-07-28 alone does: by
        default with an unsupported protocol version, naming its own (the
        refusal maps each refused method to its error). Keeps the method
        and the header ``Mcp-Name`` of each request about a task in seen.
    '''
    async def front( scope, receive, send ):
        if scope[ 'type' ] != 'http' or scope[ 'method' ] != 'POST':
            return await application( scope, receive, send )
        chunks = [ ]
        while True:
            message = await receive( )
            chunks.append( message.get( 'body', b'' ) )
            if not message.get( 'more_body' ): break
        body = b''.join( chunks )
        request = json.loads( body ) if body else { }
        method = (
            request.get( 'method' ) if isinstance( request, dict ) else '' )
        if str( method ).startswith( 'tasks/' ):
            headers = dict( scope[ 'headers' ] )
            seen.append( (
                method, request[ 'params' ][ 'taskId' ],
                headers.get( b'mcp-name', b'' ).decode( ) ) )
        if method in refusal:
            answer = json.dumps( {
                'jsonrpc': '2.0', 'id': request.get( 'id' ),
                'error': refusal[ method ] } ).encode( )
            await send( {
                'type': 'http.response.start', 'status': 400,
                'headers': [ ( b'content-type', b'application/json' ) ] } )
            await send( { 'type': 'http.response.body', 'body': answer } )
            return None
        replayed = False

        async def replay( ):
            nonlocal replayed
            if replayed: return await receive( )
            replayed = True
            return {
                'type': 'http.request', 'body': body, 'more_body': False }

        return await application( scope, replay, send )

    return front


@contextlib.asynccontextmanager
async def _serve( server, modern, seen = None, refusal = _REFUSAL ):
    ''' Serves tool server over streamable HTTP in the running loop (2.x:
        fronted to speak 2026-07-28 alone, if modern); yields its URL.
    '''
    application = serving.produce_application( server )
    if modern:
        application = _refuse_legacy(
            application, [ ] if seen is None else seen, refusal )
    async with mcp_support.serve_application( application ) as url:
        yield url


def _invoke( ensemble, name, arguments ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return ensemble.access_invoker( name )( context, arguments )


@contextlib.asynccontextmanager
async def _start( label, modern = _MODERN, seen = None, **options ):
    ''' Serves the tools; yields gate, client, reports and the call of the
        slow tool, once its task reported that it started.
    '''
    gate = _Gate( )
    reports = mcp_support.Reports( )
    async with _serve( _produce_server( gate ), modern, seen ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, reporter = reports.append, **options )
        async with client:
            call = asyncio.ensure_future(
                _invoke( client, 'slow', { 'label': label } ) )
            await _wait_message( reports, f"started {label}" )
            yield gate, client, reports, call


def _verify_protocol( client, modern = _MODERN ):
    ''' Asserts the protocol of the client's session: 2026-07-28 with the
        tasks extension of its server (2.x), else 2025-11-25 tasks.
    '''
    session = client.connection
    assert _sdk.is_modern( session ) is modern
    assert _sdk.accepts_tasks( session ) # capability, or extension


async def test_100_result_and_progress( caplog ):
    ''' The call runs as a task: its status messages reach the client's
        reporter as progress (waited for), and its result, inlined by
        ``tasks/get`` under 2026-07-28, is the call's.
    '''
    caplog.set_level( logging.DEBUG, logger = 'invocables.mcp._tasks' )
    seen = [ ]
    async with _start( 'a', seen = seen ) as ( gate, client, _, call ):
        _verify_protocol( client )
        gate.release.set( )
        content = await asyncio.wait_for( call, _WAIT )
    assert content[ 0 ].text == 'done a'
    assert gate.calls == 1
    assert any(
        "runs tool 'slow' as task" in record.getMessage( )
        for record in caplog.records )
    # Under 2026-07-28, each request about the task names it in Mcp-Name.
    assert bool( seen ) is _MODERN
    assert all(
        method == 'tasks/get' and header == identifier
        for method, identifier, header in seen )


async def test_110_answered_at_once( ):
    ''' A tool which the server does not run as a task answers the call
        at once, also where every call may become a task (2026-07-28).
    '''
    async with _start( 'b' ) as ( gate, client, _, call ):
        content = await asyncio.wait_for(
            _invoke( client, 'quick', { 'label': 'b' } ), _WAIT )
        gate.release.set( )
        await asyncio.wait_for( call, _WAIT )
    assert content[ 0 ].text == 'quick b'


async def test_120_cancelled_midway( ):
    ''' Cancelling the call midway cancels the task (``tasks/cancel``):
        the tool's coroutine on the server is cancelled.
    '''
    seen = [ ]
    async with _start( 'c', seen = seen ) as ( gate, client, _, call ):
        _verify_protocol( client )
        call.cancel( )
        with pytest.raises( asyncio.CancelledError ): await call
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
    cancels = [ entry for entry in seen if entry[ 0 ] == 'tasks/cancel' ]
    assert len( cancels ) == ( 1 if _MODERN else 0 )
    assert all( header == identifier for _, identifier, header in cancels )


async def test_130_timeout( ):
    ''' A call whose time is up is refused and cancels its task: the tool
        on the server is cancelled.
    '''
    async with _start( 'd', timeouts = { 'slow': 1.0 } ) as (
        gate, client, _, call
    ):
        _verify_protocol( client )
        with pytest.raises(
            exceptions.InvocationRefusal, match = 'within 1.0 seconds'
        ): await asyncio.wait_for( call, _WAIT )
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )


async def test_135_deadline_of_engine( ):
    ''' The execution engine's deadline ends the call with an error result
        for the model, within the timeout and its grace, and cancels the
        task: the tool on the server is cancelled.
    '''
    gate = _Gate( )
    async with _serve( _produce_server( gate ), _MODERN ) as url:
        client = invocables.mcp.produce_ensemble( 'remote', url = url )
        async with client:
            _verify_protocol( client )
            call = invocables.InvocationCanister(
                identifier = 'x', name = 'slow',
                arguments = { 'label': 'h' } )
            result, = await asyncio.wait_for(
                invocables.execute_invocations(
                    [ call ], [ client ], timeout = 1.0 ), _WAIT )
            await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
    assert result.error is not None
    assert gate.calls == 1


async def test_140_followed_across_reconnection( ):
    ''' When the session is lost while the task runs, the client
        reconnects (with the same protocol) and follows the same task: the
        tool runs once, and its result reaches the call.
    '''
    async with _start( 'e' ) as ( gate, client, _, call ):
        lost = client.connection
        # The session ends as a network failure would end it.
        client._state.connection.request_stop( 'the test cut it' )
        gate.release.set( )
        content = await asyncio.wait_for( call, _WAIT )
        assert client.connection is not lost # a new session
        _verify_protocol( client )
    assert content[ 0 ].text == 'done e'
    assert gate.calls == 1


async def test_150_legacy_server_keeps_legacy_tasks( ):
    ''' A server which also speaks the legacy handshake (serve unfronted)
        is spoken to in 2025-11-25, with its tasks, whatever the SDK.
    '''
    async with _start( 'f', modern = False ) as ( gate, client, _, call ):
        _verify_protocol( client, modern = False )
        gate.release.set( )
        content = await asyncio.wait_for( call, _WAIT )
    assert content[ 0 ].text == 'done f'


async def test_160_never_declares_extension( ):
    ''' With option ``tasks`` ``'never'``, the session declares no tasks
        extension: under 2026-07-28 the server refuses the tool which
        requires tasks (missing client capability); under 2025-11-25 the
        tool is left out.
    '''
    gate = _Gate( )
    async with _serve( _produce_server( gate ), _MODERN ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, tasks = 'never' )
        async with client:
            names = { tool.name for tool in client.survey_tools( ) }
            if not _MODERN:
                assert names == { 'quick' }
                return
            with pytest.raises( exceptions.Omnierror, match = 'extension' ):
                await asyncio.wait_for(
                    _invoke( client, 'slow', { 'label': 'g' } ), _WAIT )
    assert gate.calls == 0


async def test_170_tool_error( ):
    ''' A tool error of a task (the result of the call, inlined under
        2026-07-28) is the call's refusal, on both paths.
    '''
    async with _start( 'i' ) as ( gate, client, _, call ):
        with pytest.raises(
            exceptions.InvocationRefusal, match = 'broken i'
        ):
            await asyncio.wait_for(
                _invoke( client, 'broken', { 'label': 'i' } ), _WAIT )
        gate.release.set( )
        await asyncio.wait_for( call, _WAIT )


_HEADERLESS = { 'initialize': {
    'code': -32600, 'message': 'Missing MCP-Protocol-Version header' } }


async def test_180_handshake_refused_otherwise( ):
    ''' A server of 2026-07-28 alone which refuses the legacy handshake
        otherwise (a missing protocol header, as the conformance suite's
        server does) is discovered too (2.x).
    '''
    gate = _Gate( )
    async with _serve(
        _produce_server( gate ), _MODERN, refusal = _HEADERLESS
    ) as url:
        client = invocables.mcp.produce_ensemble( 'remote', url = url )
        async with client:
            _verify_protocol( client )
            content = await asyncio.wait_for(
                _invoke( client, 'quick', { 'label': 'j' } ), _WAIT )
    assert content[ 0 ].text == 'quick j'


async def test_190_everything_refused( ):
    ''' A server which refuses both the handshake and ``server/discover``
        fails the connection with the handshake's refusal (1.x: with the
        status of its answer, as the SDK's transport reports it).
    '''
    refusal = _REFUSAL | { 'server/discover': {
        'code': -32601, 'message': 'Method not found' } }
    server = _produce_server( _Gate( ) )
    async with _serve( server, True, refusal = refusal ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, connect_timeout = 10 )
        with pytest.raises(
            exceptions.ConnectionFailure,
            match = 'Unsupported protocol version' if _MODERN else '400'
        ):
            await asyncio.wait_for( client.connect( ), _WAIT )


async def test_175_task_failed_elsewhere( ):
    ''' A task which fails (here, as a worker of the server which shares
        its store would fail it) fails the call with the task's error
        (inlined by ``tasks/get`` under 2026-07-28; from ``tasks/result``
        under 2025-11-25).
    '''
    import dataclasses
    gate = _Gate( )
    store = serving.MemoryTaskStore( )
    reports = mcp_support.Reports( )
    server = _produce_server( gate, store )
    async with _serve( server, _MODERN ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, reporter = reports.append )
        async with client:
            call = asyncio.ensure_future(
                _invoke( client, 'slow', { 'label': 'k' } ) )
            await _wait_message( reports, 'started k' )
            ( record, ), _ = await store.survey_tasks( None )
            await store.store_task( dataclasses.replace(
                record, state = serving.TaskStates.Failed,
                error = { 'code': -32603, 'message': 'The worker failed.' } ) )
            with pytest.raises(
                exceptions.InvocationRefusal, match = 'The worker failed'
            ): await asyncio.wait_for( call, _WAIT )
            gate.release.set( )


_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string' } },
    'required': [ 'name' ] }


def _produce_asking_server( ):
    async def rounds( context ) -> str:
        ''' Asks a name, then a model, in two rounds. '''
        name = await context.elicit( 'Name?', _NAME_SCHEMA )
        sample = await context.sample( [ 'Greet.' ], max_tokens = 10 )
        return f"{name.content[ 'name' ]}: {sample.content.text}"

    async def first( context ) -> str:
        ''' Asks a name before it becomes a task. '''
        name = await context.elicit( 'Name first?', _NAME_SCHEMA )
        return f"Hello, {name.content[ 'name' ]}"

    async def endless( context ) -> str:
        ''' Asks a name, over and over. '''
        for _ in range( 20 ):
            await context.elicit( 'Again?', _NAME_SCHEMA )
        return 'asked 20 times'

    ensemble = invocables.produce_ensemble( 'asking', [
        invocables.produce_invoker(
            rounds, annotations = { 'task_support': 'required' } ),
        invocables.produce_invoker(
            endless, annotations = { 'task_support': 'required' } ),
        invocables.produce_invoker( first, annotations = {
            'task_support': 'required', 'task_input_first': True } ) ] )
    return serving.ToolServer( [ ensemble ] )


@pytest.mark.parametrize( 'modern', sorted( { _MODERN, False } ) )
async def test_200_task_asks_for_input( modern ):
    ''' A task which asks for input, in two rounds, is answered by the
        ensemble's elicitor and sampler, as a call's questions are: under
        2026-07-28 its state ``input_required`` carries the requests,
        which ``tasks/update`` answers (``Mcp-Name`` naming the task); a
        tool which asks before it becomes a task is answered in rounds.
        Under 2025-11-25 (both majors), the requests go on the stream of
        ``tasks/result``, naming the task, and their answers resume it.
    '''
    from invocables.mcp import callbacks
    asked = [ ]

    async def elicitor( request ):
        asked.append( request.message )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'name': 'Ada' } )

    async def sampler( request ):
        asked.append( 'sample' )
        return callbacks.SamplingResponse( text = 'hi', model = 'm1' )

    seen = [ ]
    async with _serve( _produce_asking_server( ), modern, seen ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, elicitor = elicitor, sampler = sampler )
        async with client:
            _verify_protocol( client, modern = modern )
            contents = await asyncio.wait_for(
                _invoke( client, 'rounds', { } ), _WAIT )
            first = await asyncio.wait_for(
                _invoke( client, 'first', { } ), _WAIT )
    assert contents[ 0 ].text == 'Ada: hi'
    assert first[ 0 ].text == 'Hello, Ada'
    assert asked == [ 'Name?', 'sample', 'Name first?' ]
    if not modern: return
    updates = [ entry for entry in seen if entry[ 0 ] == 'tasks/update' ]
    assert len( updates ) == 2 # noqa: PLR2004
    assert all( identifier == name for _, identifier, name in updates )


@pytest.mark.slow
@pytest.mark.parametrize( 'modern', sorted( { _MODERN, False } ) )
async def test_210_task_asks_too_often( modern ):
    ''' A task which asks for input round after round is cancelled after
        the rounds limit (MCP 2026-07-28), and the call refused, saying
        so. Under 2025-11-25 (both majors), rounds are not counted: each
        request goes on the stream of ``tasks/result`` and is answered.
    '''
    from invocables.mcp import _inputs, callbacks
    asked = [ ]

    async def elicitor( request ):
        asked.append( request.message )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'name': 'Ada' } )

    seen = [ ]
    async with _serve( _produce_asking_server( ), modern, seen ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, elicitor = elicitor )
        async with client:
            if not modern:
                contents = await asyncio.wait_for(
                    _invoke( client, 'endless', { } ), _WAIT )
                assert contents[ 0 ].text == 'asked 20 times'
                assert asked == [ 'Again?' ] * 20
                return
            with pytest.raises( exceptions.InvocationRefusal ) as refusal:
                await asyncio.wait_for(
                    _invoke( client, 'endless', { } ), _WAIT )
    assert f"more than {_inputs.ROUNDS_MAXIMUM} rounds" in str(
        refusal.value )
    assert len( asked ) == _inputs.ROUNDS_MAXIMUM
    assert [ entry[ 0 ] for entry in seen ].count( 'tasks/cancel' ) == 1
