# SPDX-License-Identifier: Apache-2.0

''' serve's tasks at scale and between principals: a gateway lists many
    upstream tools at a cost linear in their number; each principal runs
    at most its share of the running tasks; a full store forgets its
    oldest ended task without a scan; a task of MCP 2026-07-28 which
    waits for input ends once the client's answer is overdue.
'''


import asyncio
import contextlib
import datetime

import pytest

from mcp import ClientSession, types

import invocables

from invocables import serving
from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk
from invocables.mcp import ensembles as mcp_ensembles

from . import mcp_support


_CAPABILITIES = {
    'elicitation': { },
    'extensions': { 'io.modelcontextprotocol/tasks': { } },
}
_INVALID_REQUEST = -32600
_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string' } },
    'required': [ 'name' ],
}
_OVERDUE = -32001 # the mcp SDK's REQUEST_TIMEOUT: answers overdue
_SUPPORTS = ( 'forbidden', 'optional', 'required' )
_TOKENS = { # token: ( client, subject )
    'token-ada': ( 'app', 'ada' ),
    'token-ada-again': ( 'app', 'ada' ),
    'token-bob': ( 'app', 'bob' ),
}
_TOOLS_MANY = 3000
_WAIT = 10 # seconds: bounds which prove "does not hang"
_checks = [ 0 ] # calls of is_terminal on the records of test_300


class _Gates:
    ''' Releases of the slow tool, by label; the labels started. '''

    def __init__( self ):
        self.releases: dict[ str, asyncio.Event ] = { }
        self.started: list[ str ] = [ ]

    def access( self, label ):
        return self.releases.setdefault( label, asyncio.Event( ) )


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


class _Descriptions( tuple ):
    ''' Descriptions of an upstream's tools which count their scans. '''

    __slots__ = ( )
    scans = 0

    def __iter__( self ):
        type( self ).scans += 1
        return super( ).__iter__( )


class _CountingEnsemble( mcp_ensembles.ServerEnsemble ):
    ''' Ensemble of an upstream server which counts the scans of its
        descriptions (the same tuple until its tools change).
    '''

    def survey_tools( self ):
        descriptions = super( ).survey_tools( )
        known, counted = _counted.get( 'last', ( None, None ) )
        if known is not descriptions:
            counted = _Descriptions( descriptions )
            _counted[ 'last' ] = ( descriptions, counted )
        return counted


_counted = { } # the descriptions last counted, and their counting copy


@contextlib.asynccontextmanager
async def _connect( url, token = None ):
    ''' Yields an initialized session of the SDK's client, which sends
        token (if any).
    '''
    headers = { } if token is None else {
        'Authorization': f"Bearer {token}" }
    async with (
        sdk.http.AsyncClient( headers = headers ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession( *streams ) as session,
    ):
        await session.initialize( )
        yield session


def _produce_slow_ensemble( gates ):
    async def slow( label: str ) -> str:
        ''' Waits until its label is released. '''
        gates.started.append( label )
        await gates.access( label ).wait( )
        return f"done {label}"

    return invocables.produce_ensemble( 'fair', [
        invocables.produce_invoker(
            slow, annotations = { 'task_support': 'optional' } ) ] )


async def _request( session, model, result, **parameters ):
    ''' Sends request of a model with parameters (wire names). '''
    request = model.model_validate( {
        'method': model.model_fields[ 'method' ].default,
        'params': parameters } )
    if sdk.MAJOR < 2: request = types.ClientRequest( request ) # noqa: PLR2004
    return await session.send_request( request, result )


async def _call_as_task( session, label ):
    ''' Calls the slow tool, asking for a task (MCP 2025-11-25); returns
        the task's identifier.
    '''
    parameters = {
        'name': 'slow', 'arguments': { 'label': label },
        'task': { 'ttl': 60_000 } }
    if sdk.MAJOR < 2: # noqa: PLR2004
        result = await _request(
            session, types.CallToolRequest, types.CreateTaskResult,
            **parameters )
        return sdk.access_field( result.task, 'task_id' )
    raw = await session._dispatcher.send_raw_request(
        'tools/call', parameters, None )
    task = types.CreateTaskResult.model_validate( raw ).task
    return sdk.access_field( task, 'task_id' )


async def _refusal( session, label ):
    ''' Returns the error of a call as a task which is refused. '''
    with pytest.raises( sdk.Error ) as caught:
        await asyncio.wait_for( _call_as_task( session, label ), _WAIT )
    return caught.value.error


async def _finish( session, gates, identifier, label ):
    ''' Releases the task of label; returns its result's text. '''
    gates.access( label ).set( )
    result = await asyncio.wait_for( _request(
        session, types.GetTaskPayloadRequest, types.CallToolResult,
        taskId = identifier ), _WAIT )
    return result.content[ 0 ].text


def _produce_many_tools( count ):
    ''' Produces an ensemble of count tools, of each task support in turn.
    '''
    def produce( index ):
        def tool( ) -> str:
            ''' Says its number. '''
            return str( index )
        return invocables.produce_invoker(
            tool, name = f"tool_{index}", annotations = {
                'task_support': _SUPPORTS[ index % len( _SUPPORTS ) ] } )
    return invocables.produce_ensemble(
        'many', [ produce( index ) for index in range( count ) ] )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_gateway_lists_many_tools_linearly( ):
    ''' A gateway over an upstream of thousands of tools lists them all,
        each with the task support its upstream declares, scanning the
        upstream's descriptions a bounded number of times (not once per
        tool).
    '''
    upstream = serving.ToolServer( [ _produce_many_tools( _TOOLS_MANY ) ] )
    async with mcp_support.serve_in_loop( upstream ) as url:
        model = invocables.mcp.produce_ensemble(
            'up', url = url, tasks = 'supported' )
        ensemble = _CountingEnsemble(
            model.name, model.parameters, model.configuration,
            model.options, model.features )
        gateway = serving.ToolServer( [ ensemble ] )
        async with invocables.connect_ensembles( gateway.ensembles ):
            assert len( ensemble.survey_tools( ) ) == _TOOLS_MANY
            _Descriptions.scans = 0
            async with (
                mcp_support.serve_in_loop( gateway ) as front,
                _connect( front ) as client,
            ):
                listing = await client.list_tools( )
    supports = {
        tool.name: sdk.access_field( tool.execution, 'task_support', None )
        for tool in listing.tools }
    assert supports == {
        f"tool_{index}": _SUPPORTS[ index % len( _SUPPORTS ) ]
        for index in range( _TOOLS_MANY ) }
    assert _Descriptions.scans < 10 # noqa: PLR2004


@pytest.mark.asyncio
async def test_200_principal_runs_its_share( ):
    ''' An authenticated principal runs at most its share of the running
        tasks (by default a quarter of the server's most): one more is
        refused with the error of the server's most (-32600), by any of
        its tokens, while another principal still starts its own; once
        one of its tasks ends, it starts another.
    '''
    gates = _Gates( )
    server = serving.ToolServer(
        [ _produce_slow_ensemble( gates ) ], tasks_running_maximum = 4 )
    assert server.tasks_running_per_principal_maximum == 1
    async with (
        mcp_support.serve_in_loop(
            server, token_verifier = _Verifier( ) ) as url,
        _connect( url, 'token-ada' ) as ada,
        _connect( url, 'token-ada-again' ) as again,
        _connect( url, 'token-bob' ) as bob,
    ):
        first = await _call_as_task( ada, 'a1' )
        for session in ( ada, again ):
            error = await _refusal( session, 'a2' )
            assert error.code == _INVALID_REQUEST
            assert 'tasks of your principal already' in error.message
        bobs = await _call_as_task( bob, 'b1' )
        assert await _finish( ada, gates, first, 'a1' ) == 'done a1'
        second = await _call_as_task( again, 'a3' )
        assert await _finish( again, gates, second, 'a3' ) == 'done a3'
        assert await _finish( bob, gates, bobs, 'b1' ) == 'done b1'
    assert 'a2' not in gates.started


@pytest.mark.asyncio
async def test_210_share_given( ):
    ''' A share given (``tasks_running_per_principal_maximum``) bounds
        each principal so; the server's most still bounds them all.
    '''
    gates = _Gates( )
    server = serving.ToolServer(
        [ _produce_slow_ensemble( gates ) ], tasks_running_maximum = 3,
        tasks_running_per_principal_maximum = 2 )
    async with (
        mcp_support.serve_in_loop(
            server, token_verifier = _Verifier( ) ) as url,
        _connect( url, 'token-ada' ) as ada,
        _connect( url, 'token-bob' ) as bob,
    ):
        adas = [ await _call_as_task( ada, f"a{index}" ) for index in ( 1, 2 ) ]
        error = await _refusal( ada, 'a3' )
        assert 'tasks of your principal already' in error.message
        bobs = await _call_as_task( bob, 'b1' )
        error = await _refusal( bob, 'b2' )
        assert error.code == _INVALID_REQUEST
        assert 'runs 3 tasks already' in error.message
        for identifier, label in zip( adas, ( 'a1', 'a2' ) ):
            await _finish( ada, gates, identifier, label )
        await _finish( bob, gates, bobs, 'b1' )


@pytest.mark.asyncio
async def test_220_unauthenticated_unshared( ):
    ''' Without authentication, tasks are bound by the server's most only,
        as ever: no share applies.
    '''
    gates = _Gates( )
    server = serving.ToolServer(
        [ _produce_slow_ensemble( gates ) ], tasks_running_maximum = 4 )
    async with (
        mcp_support.serve_in_loop( server ) as url,
        _connect( url ) as session,
    ):
        identifiers = [
            await _call_as_task( session, f"u{index}" )
            for index in range( 4 ) ]
        error = await _refusal( session, 'u4' )
        assert 'runs 4 tasks already' in error.message
        for index, identifier in enumerate( identifiers ):
            await _finish( session, gates, identifier, f"u{index}" )
    assert not server._running


class _CountedRecord( serving.tasks.TaskRecord ):
    ''' Record of a task which counts how often its end is checked. '''

    def is_terminal( self ) -> bool:
        _checks[ 0 ] += 1
        return super( ).is_terminal( )


@pytest.mark.asyncio
async def test_300_full_store_forgets_without_scan( ):
    ''' A full store forgets an ended task for each new one without a scan
        of those which run (long ones, created first): the work per task
        stored is bounded, whatever the number running; the tasks which
        ended first go first, those running stay.
    '''
    store = serving.MemoryTaskStore( maximum = 500 )
    now = datetime.datetime.now( datetime.timezone.utc )

    def produce( identifier, state ):
        return _CountedRecord(
            identifier = identifier, created = now, updated = now,
            ttl = 3_600_000, state = state )

    running = [ f"running-{index}" for index in range( 250 ) ]
    for identifier in running:
        await store.store_task(
            produce( identifier, serving.tasks.TaskStates.Working ) )
    _checks[ 0 ] = 0
    count = 2000
    for index in range( count ):
        await store.store_task( produce(
            f"ended-{index}", serving.tasks.TaskStates.Completed ) )
    assert _checks[ 0 ] < 5 * count
    for identifier in running:
        assert await store.retrieve_task( identifier ) is not None
    assert await store.retrieve_task( 'ended-0' ) is None
    kept = [
        index for index in range( count )
        if await store.retrieve_task( f"ended-{index}" ) is not None ]
    assert kept == list( range( count - 250, count ) )


class _Asker:
    ''' What the asking tools did, seen and steered by the test. '''

    def __init__( self ):
        self.cancelled = asyncio.Event( )
        self.proceed = asyncio.Event( )
        self.asked = 0


def _produce_asking_ensemble( asker ):
    async def asking( context ) -> str:
        ''' Asks a name, run as a task. '''
        asker.asked += 1
        try: name = await context.elicit( 'Name?', _NAME_SCHEMA )
        except asyncio.CancelledError:
            asker.cancelled.set( )
            raise
        return f"Hello, {name.content[ 'name' ]}"

    async def twice( context ) -> str:
        ''' Asks a name in rounds, works, then asks another as a task. '''
        first = await context.elicit( 'Name?', _NAME_SCHEMA )
        await asker.proceed.wait( )
        try: second = await context.elicit( 'Other?', _NAME_SCHEMA )
        except asyncio.CancelledError:
            asker.cancelled.set( )
            raise
        return f"{first.content[ 'name' ]}, {second.content[ 'name' ]}"

    return invocables.produce_ensemble( 'asking', [
        invocables.produce_invoker(
            asking, annotations = { 'task_support': 'optional' } ),
        invocables.produce_invoker( twice, annotations = {
            'task_support': 'required', 'task_input_first': True } ) ] )


async def _post( http, url, method, parameters ):
    ''' Posts a request of MCP 2026-07-28; returns its message. '''
    _, message = await mcp_support.post_modern(
        http, url, method, parameters, capabilities = _CAPABILITIES )
    return message


async def _await_failure( http, url, store, identifier ):
    ''' Returns the task of identifier (tasks/get) once it ended. '''
    await asyncio.wait_for( store.wait_task( identifier ), _WAIT )
    task = await _post( http, url, 'tasks/get', { 'taskId': identifier } )
    return task[ 'result' ]


@pytest.mark.asyncio
async def test_400_task_waiting_for_input_ends( ):
    ''' A task of MCP 2026-07-28 whose requests for input wait longer than
        ``continuation_duration`` without ``tasks/update`` fails, with an
        error which says why; its call is cancelled and its slot freed:
        the server's one slot starts another task.
    '''
    asker = _Asker( )
    store = serving.MemoryTaskStore( )
    server = serving.ToolServer(
        [ _produce_asking_ensemble( asker ) ], task_store = store,
        tasks_running_maximum = 1, continuation_duration = 0.5 )
    async with (
        mcp_support.serve_in_loop( server ) as url,
        sdk.http.AsyncClient( timeout = _WAIT * 3 ) as http,
    ):
        if sdk.MAJOR < 2: return # noqa: PLR2004 # speaks no 2026-07-28
        created = await _post(
            http, url, 'tools/call', { 'name': 'asking', 'arguments': { } } )
        identifier = created[ 'result' ][ 'taskId' ]
        task = await _await_failure( http, url, store, identifier )
        assert asker.cancelled.is_set( )
        assert task[ 'status' ] == 'failed'
        assert task[ 'error' ][ 'code' ] == _OVERDUE
        assert 'tasks/update' in task[ 'error' ][ 'message' ]
        assert 'inputRequests' not in task
        assert not server._running and not server._inputs
        created = await _post(
            http, url, 'tools/call', { 'name': 'asking', 'arguments': { } } )
        assert created[ 'result' ][ 'resultType' ] == 'task'
        assert asker.asked == 2 # noqa: PLR2004
        await server.release_tasks( )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_410_escalated_task_waiting_for_input_ends( ):
    ''' A call which asked in rounds first and then became a task
        (``task_input_first``) fails alike once its later requests wait
        too long for ``tasks/update``.
    '''
    asker = _Asker( )
    store = serving.MemoryTaskStore( )
    server = serving.ToolServer(
        [ _produce_asking_ensemble( asker ) ], task_store = store,
        continuation_duration = 3 )
    async with (
        mcp_support.serve_in_loop( server ) as url,
        sdk.http.AsyncClient( timeout = _WAIT * 3 ) as http,
    ):
        if sdk.MAJOR < 2: return # noqa: PLR2004 # speaks no 2026-07-28
        round_ = await _post(
            http, url, 'tools/call', { 'name': 'twice', 'arguments': { } } )
        result = round_[ 'result' ]
        ( key, _ ), = result[ 'inputRequests' ].items( )
        created = await _post( http, url, 'tools/call', {
            'name': 'twice', 'arguments': { },
            'inputResponses': {
                key: mcp_support.produce_elicited( { 'name': 'Di' } ) },
            'requestState': result[ 'requestState' ] } )
        identifier = created[ 'result' ][ 'taskId' ]
        asker.proceed.set( )
        task = await _await_failure( http, url, store, identifier )
        assert asker.cancelled.is_set( )
        assert task[ 'status' ] == 'failed'
        assert task[ 'error' ][ 'code' ] == _OVERDUE
        assert not server._running and not server._inputs
