# SPDX-License-Identifier: Apache-2.0

''' serve binds each task to the principal of the request which created
    it (MCP 2025-11-25, security of tasks): over HTTP with a token
    verifier, a client of another principal finds no such task, by any
    method, nor lists it. A task's tool which elicits has accepted answers
    checked against the requested schema; its store pages at the cost of
    a page. Seen by the SDK's client session and raw requests.
'''


import asyncio
import contextlib
import json

import pytest

from mcp import ClientSession, types

import invocables

from invocables import serving
from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk

from . import mcp_support


_EXTENSION = 'io.modelcontextprotocol/tasks'
_MODERN = '2026-07-28'
_WAIT = 10 # seconds: bounds which prove "does not hang"
_TOKENS = { # token: ( client, subject )
    'token-ada': ( 'app', 'ada' ),
    'token-ada-again': ( 'app', 'ada' ),
    'token-bob': ( 'app', 'bob' ),
    'token-eve': ( 'other', None ),
}


class _Verifier:
    ''' Accepts the tokens of a few principals, as a token verifier of
        the mcp SDK (introspection, say) would.
    '''

    async def verify_token( self, token ):
        from mcp.server.auth.provider import AccessToken
        found = _TOKENS.get( token )
        if found is None: return None
        client, subject = found
        return AccessToken(
            token = token, client_id = client, scopes = [ ],
            subject = subject )


class _Gate:
    ''' What the slow tool does, controlled and seen by the test. '''

    def __init__( self ):
        self.started = asyncio.Event( )
        self.release = asyncio.Event( )
        self.cancelled = asyncio.Event( )


def _produce_ensemble( gate ):
    async def slow( label: str ) -> str:
        ''' Waits until released. '''
        gate.started.set( )
        try: await gate.release.wait( )
        except asyncio.CancelledError:
            gate.cancelled.set( )
            raise
        return f"done {label}"

    async def ask( context ) -> str:
        ''' Asks a name; says it. '''
        answer = await context.elicit( 'Name?', _NAME_SCHEMA )
        return f"hello {answer.content[ 'name' ]}"

    return invocables.produce_ensemble( 'bound', [
        invocables.produce_invoker(
            slow, annotations = { 'task_support': 'optional' } ),
        invocables.produce_invoker( ask ) ] )


_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string', 'maxLength': 8 } },
    'required': [ 'name' ] }


@contextlib.asynccontextmanager
async def _serve( server, verifier = None ):
    ''' Serves a tool server over streamable HTTP on a free port of
        127.0.0.1, with a token verifier if any; yields the URL.
    '''
    async with mcp_support.serve_in_loop(
        server, token_verifier = verifier
    ) as url: yield url


def _produce_headers( token ):
    return { } if token is None else { 'Authorization': f"Bearer {token}" }


@contextlib.asynccontextmanager
async def _connect( url, token = None, elicit = None ):
    ''' Yields an initialized session of the SDK's client, which sends
        token (if any) and answers elicitation by elicit (if any).
    '''
    options = { } if elicit is None else { 'elicitation_callback': elicit }
    async with (
        sdk.http.AsyncClient( headers = _produce_headers( token ) ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession( *streams, **options ) as session,
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


async def _call_as_task( session, name, arguments ):
    ''' Calls tool, asking for a task; returns the task's identifier. '''
    parameters = {
        'name': name, 'arguments': arguments, 'task': { 'ttl': 60_000 } }
    if sdk.MAJOR < 2:
        result = await _request(
            session, types.CallToolRequest, types.CreateTaskResult,
            **parameters )
        return sdk.access_field( result.task, 'task_id' )
    raw = await session._dispatcher.send_raw_request(
        'tools/call', parameters, None )
    task = types.CreateTaskResult.model_validate( raw ).task
    return sdk.access_field( task, 'task_id' )


_METHODS = (
    ( types.GetTaskRequest, types.GetTaskResult ),
    ( types.GetTaskPayloadRequest, types.CallToolResult ),
    ( types.CancelTaskRequest, types.CancelTaskResult ),
)


async def _refusal( session, model, result, identifier ):
    ''' Returns code and message of the error of a request on a task, the
        identifier replaced by a mark (to compare tasks).
    '''
    with pytest.raises( sdk.Error ) as caught:
        await asyncio.wait_for( _request(
            session, model, result, taskId = identifier ), _WAIT )
    error = caught.value.error
    return error.code, error.message.replace( identifier, '<task>' )


async def _list( session, cursor = None ):
    ''' Returns identifiers of a page of the tasks, and the next cursor.
    '''
    parameters = { } if cursor is None else { 'cursor': cursor }
    listing = await _request(
        session, types.ListTasksRequest, types.ListTasksResult,
        **parameters )
    return (
        [ sdk.access_field( task, 'task_id' ) for task in listing.tasks ],
        sdk.access_field( listing, 'next_cursor' ) )


@pytest.mark.asyncio
async def test_100_other_principal_finds_no_task( ):
    ''' A task created with a token is unknown to a client of another
        principal, by ``tasks/get``, ``tasks/result`` and ``tasks/cancel``:
        the very error of a task which never was (its existence is not
        told); its tool goes on, and its own principal, by another token
        and session, still reaches it.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server, _Verifier( ) ) as url:
        async with _connect( url, 'token-ada' ) as owner:
            identifier = await _call_as_task( owner, 'slow', { 'label': 'a' } )
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        for token in ( 'token-bob', 'token-eve' ):
            async with _connect( url, token ) as other:
                for model, result in _METHODS:
                    refused = await _refusal(
                        other, model, result, identifier )
                    unknown = await _refusal(
                        other, model, result, 'x' * len( identifier ) )
                    assert refused == unknown
                    assert refused[ 0 ] == -32602 # noqa: PLR2004
        assert not gate.cancelled.is_set( )
        async with _connect( url, 'token-ada-again' ) as owner:
            state = await _request(
                owner, types.GetTaskRequest, types.GetTaskResult,
                taskId = identifier )
            assert state.status == 'working'
            fetching = asyncio.ensure_future( _request(
                owner, types.GetTaskPayloadRequest, types.CallToolResult,
                taskId = identifier ) )
            gate.release.set( )
            result = await asyncio.wait_for( fetching, _WAIT )
            assert result.content[ 0 ].text == 'done a'


@pytest.mark.asyncio
async def test_110_cancel_by_other_principal_refused( ):
    ''' A client of another principal cannot cancel a task: refused as
        unknown, the tool runs on; its owner cancels it.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with (
        _serve( server, _Verifier( ) ) as url,
        _connect( url, 'token-ada' ) as owner,
        _connect( url, 'token-bob' ) as other,
    ):
        identifier = await _call_as_task( owner, 'slow', { 'label': 'c' } )
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        code, _ = await _refusal(
            other, types.CancelTaskRequest, types.CancelTaskResult,
            identifier )
        assert code == -32602 # noqa: PLR2004
        assert not gate.cancelled.is_set( )
        assert server._running
        cancelled = await _request(
            owner, types.CancelTaskRequest, types.CancelTaskResult,
            taskId = identifier )
        assert cancelled.status == 'cancelled'
        assert gate.cancelled.is_set( )


@pytest.mark.asyncio
async def test_120_listed_to_own_principal_only( ):
    ''' ``tasks/list`` gives each principal its own tasks, by pages; a
        cursor of one principal's pages is unknown to another.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ],
        task_store = serving.MemoryTaskStore( page_size = 2 ) )
    async with (
        _serve( server, _Verifier( ) ) as url,
        _connect( url, 'token-ada' ) as ada,
        _connect( url, 'token-bob' ) as bob,
    ):
        owned = [
            await _call_as_task( ada, 'slow', { 'label': str( index ) } )
            for index in range( 3 ) ]
        bobs = [ await _call_as_task( bob, 'slow', { 'label': 'b' } ) ]
        first, cursor = await _list( ada )
        assert cursor is not None
        second, after = await _list( ada, cursor )
        assert after is None
        assert first + second == owned
        assert await _list( bob ) == ( bobs, None )
        with pytest.raises( sdk.Error ) as caught:
            await _list( bob, cursor )
        assert caught.value.error.code == -32602 # noqa: PLR2004
        async with _connect( url, 'token-eve' ) as eve:
            assert await _list( eve ) == ( [ ], None )
        gate.release.set( )


@pytest.mark.asyncio
async def test_130_modern_other_principal_finds_no_task( ):
    ''' Under MCP 2026-07-28 (mcp SDK 2.x), ``tasks/get``,
        ``tasks/update`` and ``tasks/cancel`` of another principal find
        no task, as one which never was; the owner's do. The SDK 1.x
        knows no 2026-07-28: serve refuses such requests.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server, _Verifier( ) ) as url:
        async with sdk.http.AsyncClient(
            headers = _produce_headers( 'token-ada' )
        ) as http:
            status, created = await _post_modern(
                http, url, 'tools/call',
                { 'name': 'slow', 'arguments': { 'label': 'm' } },
                name = 'slow' )
        if sdk.MAJOR < 2:
            assert status >= 400 # noqa: PLR2004
            return
        identifier = created[ 'result' ][ 'taskId' ]
        await asyncio.wait_for( gate.started.wait( ), _WAIT )
        async with sdk.http.AsyncClient(
            headers = _produce_headers( 'token-bob' )
        ) as http:
            for method in ( 'tasks/get', 'tasks/update', 'tasks/cancel' ):
                _, refused = await _post_modern(
                    http, url, method, { 'taskId': identifier } )
                _, unknown = await _post_modern(
                    http, url, method, { 'taskId': 'y' * len( identifier ) } )
                assert refused[ 'error' ][ 'code' ] == -32602 # noqa: PLR2004
                assert refused[ 'error' ][ 'message' ].replace(
                    identifier, '<task>' ) == unknown[ 'error' ][
                    'message' ].replace( 'y' * len( identifier ), '<task>' )
        assert not gate.cancelled.is_set( )
        async with sdk.http.AsyncClient(
            headers = _produce_headers( 'token-ada-again' )
        ) as http:
            _, state = await _post_modern(
                http, url, 'tasks/get', { 'taskId': identifier } )
            assert state[ 'result' ][ 'status' ] == 'working'
            gate.release.set( )


async def _post_modern( http, url, method, parameters, name = None ):
    ''' Posts request of MCP 2026-07-28 from a client which declares the
        tasks extension and elicitation; returns HTTP status and message.
    '''
    body = {
        'jsonrpc': '2.0', 'id': 1, 'method': method,
        'params': { **parameters, '_meta': {
            'io.modelcontextprotocol/protocolVersion': _MODERN,
            'io.modelcontextprotocol/clientCapabilities': {
                'elicitation': { }, 'extensions': { _EXTENSION: { } } },
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
async def test_135_modern_escalated_task_bound( ):
    ''' Under MCP 2026-07-28 (mcp SDK 2.x), a call which asks in rounds
        first (``task_input_first``) and then becomes a task is bound to
        the principal of the round which made it one: another finds no
        such task. The SDK 1.x knows no 2026-07-28: serve refuses.
    '''
    gate = _Gate( )

    async def first( context ) -> str:
        ''' Asks a name, then waits until released. '''
        answer = await context.elicit( 'Name?', _NAME_SCHEMA )
        await gate.release.wait( )
        return f"hello {answer.content[ 'name' ]}"

    ensemble = invocables.produce_ensemble( 'first', [
        invocables.produce_invoker( first, annotations = {
            'task_support': 'required', 'task_input_first': True } ) ] )
    server = serving.ToolServer( [ ensemble ] )
    call = { 'name': 'first', 'arguments': { } }
    async with (
        _serve( server, _Verifier( ) ) as url,
        sdk.http.AsyncClient( headers = _produce_headers( 'token-ada' ) )
        as ada,
        sdk.http.AsyncClient( headers = _produce_headers( 'token-bob' ) )
        as bob,
    ):
        status, round_ = await _post_modern(
            ada, url, 'tools/call', call, name = 'first' )
        if sdk.MAJOR < 2:
            assert status >= 400 # noqa: PLR2004
            return
        result = round_[ 'result' ]
        ( key, _ ), = result[ 'inputRequests' ].items( )
        answer = { 'action': 'accept', 'content': { 'name': 'Di' } }
        _, created = await _post_modern( ada, url, 'tools/call', {
            **call, 'inputResponses': { key: answer },
            'requestState': result[ 'requestState' ] }, name = 'first' )
        identifier = created[ 'result' ][ 'taskId' ]
        _, refused = await _post_modern(
            bob, url, 'tasks/get', { 'taskId': identifier } )
        assert refused[ 'error' ][ 'code' ] == -32602 # noqa: PLR2004
        _, state = await _post_modern(
            ada, url, 'tasks/get', { 'taskId': identifier } )
        assert state[ 'result' ][ 'status' ] == 'working'
        gate.release.set( )
    await server.release_tasks( )


@pytest.mark.asyncio
async def test_140_unauthenticated_unbound( ):
    ''' Without authentication (stdio, or HTTP on the loopback without a
        token), tasks are bound to no one: a new session reaches and lists
        a task by its identifier, as before.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as url:
        async with _connect( url ) as first:
            identifier = await _call_as_task( first, 'slow', { 'label': 'u' } )
        async with _connect( url ) as second:
            state = await _request(
                second, types.GetTaskRequest, types.GetTaskResult,
                taskId = identifier )
            assert state.status == 'working'
            assert await _list( second ) == ( [ identifier ], None )
            gate.release.set( )


@pytest.mark.asyncio
async def test_150_elicited_answer_checked( ):
    ''' A task's tool which elicits (MCP 2025-11-25: on the stream of
        ``tasks/result``) has an accepted answer which breaks the requested
        schema refused, with the error of MCP 2026-07-28's rounds (invalid
        parameters, saying where): the tool does not get it, and the task
        completes with the tool's error. An answer which matches passes.
    '''
    answers = [ { 'name': 'far too long a name' }, { 'name': 'Ada' } ]

    async def elicit( context, parameters ):
        return types.ElicitResult(
            action = 'accept', content = answers.pop( 0 ) )

    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with (
        _serve( server ) as url, _connect( url, elicit = elicit ) as session
    ):
        for expected in ( 'schema', 'hello Ada' ):
            identifier = await _call_as_task( session, 'ask', { } )
            result = await asyncio.wait_for( _request(
                session, types.GetTaskPayloadRequest, types.CallToolResult,
                taskId = identifier ), _WAIT )
            text = result.content[ 0 ].text
            assert expected in text
            assert sdk.access_field( result, 'is_error' ) == (
                expected == 'schema' )
        assert not answers


def test_160_elicited_answer_error( ):
    ''' The check of an elicited answer raises the error of invalid
        parameters, naming the answer, where and why; a declined answer,
        or one which matches, is returned as it is.
    '''
    from invocables.serving import _liaisons
    breaking = types.ElicitResult(
        action = 'accept', content = { 'name': 'far too long a name' } )
    with pytest.raises( sdk.Error ) as caught:
        _liaisons.validate_elicitation( _NAME_SCHEMA, breaking, 'It' )
    error = caught.value.error
    assert error.code == -32602 # noqa: PLR2004
    assert error.message.startswith(
        'It does not match the requested schema at name:' )
    declined = types.ElicitResult( action = 'decline' )
    fitting = types.ElicitResult(
        action = 'accept', content = { 'name': 'Ada' } )
    for answer in ( declined, fitting ):
        assert _liaisons.validate_elicitation(
            _NAME_SCHEMA, answer, 'It' ) is answer


class _Counted( dict ):
    ''' Records by identifier, counting passes over all of them. '''

    passes = 0

    def __iter__( self ):
        self.passes += 1
        return super( ).__iter__( )

    def values( self ):
        self.passes += 1
        return super( ).values( )


def _produce_record( identifier, principal = None ):
    import datetime
    now = datetime.datetime.now( datetime.timezone.utc )
    return serving.TaskRecord(
        identifier = identifier, created = now, updated = now,
        ttl = 3_600_000, principal = principal )


@pytest.mark.asyncio
async def test_170_paged_without_scan( ):
    ''' A page of a full store's tasks costs the page, not a pass over
        every record; the pages give each principal's records once, oldest
        first, and a cursor outlives the record it followed.
    '''
    store = serving.MemoryTaskStore( maximum = 5000, page_size = 50 )
    for index in range( 3000 ):
        principal = 'ada' if index % 3 else 'bob'
        await store.store_task(
            _produce_record( f"task-{index:05}", principal ) )
    store._tasks = _Counted( store._tasks )
    seen, cursor, pages = [ ], None, 0
    while True:
        page, cursor = await store.survey_tasks( cursor, 'ada' )
        seen.extend( record.identifier for record in page )
        pages += 1
        if cursor is None: break
        if pages == 3: # the record the cursor follows goes
            store._tasks.pop( seen[ -1 ] )
            store._listings.forget( seen[ -1 ] )
    assert store._tasks.passes == 0
    assert seen == [
        f"task-{index:05}" for index in range( 3000 ) if index % 3 ]
    assert pages == 40 # noqa: PLR2004
    bobs, after = await store.survey_tasks( None, 'bob' )
    assert len( bobs ) == 50 and after is not None # noqa: PLR2004
    assert await store.survey_tasks( None ) == ( ( ), None )


@pytest.mark.asyncio
async def test_180_cursors_refused( ):
    ''' A cursor not given for a principal's listing is refused
        (:py:class:`invocables.exceptions.TaskAbsence`): another's, one
        made up, one past the end; forgotten records leave little behind.
    '''
    store = serving.MemoryTaskStore( page_size = 1 )
    for index in range( 3 ):
        await store.store_task( _produce_record( f"t{index}", 'ada' ) )
    await store.store_task( _produce_record( 'u0', 'bob' ) )
    _, cursor = await store.survey_tasks( None, 'ada' )
    assert cursor is not None
    epoch = cursor.partition( '.' )[ 0 ]
    for wrong in (
        ( cursor, 'bob' ), ( cursor, None ), ( 'nowhere', 'ada' ),
        ( f"{epoch}.99", 'ada' ), ( f"{epoch}.-1", 'ada' ),
        ( f"{epoch}.{'9' * 40}", 'ada' ), ( f"{epoch}.\u0661", 'ada' ),
    ):
        with pytest.raises( invocables.exceptions.TaskAbsence ):
            await store.survey_tasks( *wrong )
    listings = serving._taskbinding.Listings( )
    for index in range( 1000 ):
        listings.note( f"k{index}", 'ada' )
    for index in range( 999 ):
        listings.forget( f"k{index}" )
    assert len( listings ) == 1
    assert len( listings._listings[ 'ada' ].places ) <= 2 + 64 # noqa: PLR2004
    assert listings.survey( 'ada', None, 10 ) == ( [ 'k999' ], None )
