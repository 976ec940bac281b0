# SPDX-License-Identifier: Apache-2.0

''' serve against a hostile client of input in rounds (MCP 2026-07-28:
    ``input_required``, ``requestState``) and of tasks: forged, truncated,
    replayed and misbound states, the same state twice at once, answers of
    the wrong kind, huge, deep or many, a flood of callers which never
    answer, late answers, clients which go away; ``tasks/update``,
    ``tasks/get``, ``tasks/cancel`` and ``tasks/result`` with made-up
    identifiers, malformed or racing answers, and floods. Each gets a
    clear error (JSON-RPC, with its code) or bounded work, and leaves
    nothing running or kept.

    The ``mcp`` SDK 1.x speaks no 2026-07-28: there the tests assert that
    serve refuses such requests; those of tasks of 2025-11-25 run as they
    are.
'''


import asyncio
import contextlib
import datetime
import json
import time

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
_EXTENSION = 'io.modelcontextprotocol/tasks'
_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string' } },
    'required': [ 'name' ],
}
_INVALID_PARAMS = -32602
_BUSY = -32050 # serve's: too many calls wait for their clients
_PARSE_ERROR = -32700
_BODY_MAXIMUM = 4 * 1024 * 1024 # the SDK's bound on a request's body


class _Gate:
    ''' What the tools did, seen by the test. '''

    def __init__( self ):
        self.asked = 0
        self.cancellations = 0
        self.cancelled = asyncio.Event( )
        self.resumed = asyncio.Event( )

    def note_cancellation( self ) -> None:
        self.cancellations += 1
        self.cancelled.set( )


def _produce_ensemble( gate: _Gate ) -> Any:
    async def rounds( context: Any, label: str = '' ) -> str:
        ''' Asks a name, then a model, in two rounds. '''
        gate.asked += 1
        try:
            name = await context.elicit( 'Name?', _NAME_SCHEMA )
            sample = await context.sample( [ 'Greet.' ], max_tokens = 10 )
        except asyncio.CancelledError:
            gate.note_cancellation( )
            raise
        return f"{label}{name.content[ 'name' ]}: {sample.content.text}"

    async def keyed( context: Any ) -> str:
        ''' Asks the user and the model at once, under its keys. '''
        try:
            name, sample = await asyncio.gather(
                context.elicit( 'Name?', _NAME_SCHEMA, key = 'who' ),
                context.sample( [ 'Greet.' ], key = 'greeting' ) )
        except asyncio.CancelledError:
            gate.note_cancellation( )
            raise
        return f"{name.content[ 'name' ]}, {sample.content.text}"

    async def hang( context: Any ) -> str:
        ''' Asks a name, then never ends. '''
        try:
            await context.elicit( 'Name?', _NAME_SCHEMA )
            gate.resumed.set( )
            await asyncio.Event( ).wait( )
        except asyncio.CancelledError:
            gate.note_cancellation( )
            raise
        return 'never'

    return invocables.produce_ensemble( 'hostile', [ rounds, keyed, hang ] )


def _produce_tasked_ensemble( gate: _Gate ) -> Any:
    async def asking( context: Any ) -> str:
        ''' Asks a name, run as a task. '''
        gate.asked += 1
        try: name = await context.elicit( 'Name?', _NAME_SCHEMA )
        except asyncio.CancelledError:
            gate.note_cancellation( )
            raise
        gate.resumed.set( )
        return f"Hello, {name.content[ 'name' ]}"

    async def stuck( context: Any ) -> str:
        ''' Never ends, run as a task. '''
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError:
            gate.note_cancellation( )
            raise
        return 'never'

    annotations = { 'task_support': 'optional' }
    return invocables.produce_ensemble( 'tasked', [
        invocables.produce_invoker( asking, annotations = annotations ),
        invocables.produce_invoker( stuck, annotations = annotations ) ] )


async def _post(
    http: Any, url: str, method: str, parameters: dict[ str, Any ]
) -> tuple[ int, Any ]:
    ''' Posts request of MCP 2026-07-28 from a client which declares every
        kind of input and the tasks extension; returns HTTP status and
        message (``None`` if no JSON).
    '''
    body = {
        'jsonrpc': '2.0', 'id': 1, 'method': method,
        'params': { **parameters, '_meta': {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {
                **_CAPABILITIES, 'extensions': { _EXTENSION: { } } } } } }
    return await _post_raw( http, url, method, json.dumps( body ), next( (
        parameters[ key ] for key in ( 'name', 'taskId' )
        if key in parameters ), None ) )


async def _post_raw(
    http: Any, url: str, method: str, body: str, name: str | None
) -> tuple[ int, Any ]:
    ''' Posts the text of a request of MCP 2026-07-28, as it is. '''
    headers = {
        'Accept': 'application/json, text/event-stream',
        'Content-Type': 'application/json',
        'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method }
    if name is not None: headers[ 'Mcp-Name' ] = name
    response = await http.post( url, headers = headers, content = body )
    text = response.text
    if 'text/event-stream' in response.headers.get( 'content-type', '' ):
        text = next( (
            line[ len( 'data:' ) : ] for line in text.splitlines( )
            if line.startswith( 'data:' ) and 'jsonrpc' in line ), '' )
    try: message = json.loads( text )
    except ValueError: message = None
    return response.status_code, message


async def _call(
    http: Any, url: str, name: str,
    responses: Any = None, state: Any = None,
    arguments: dict[ str, Any ] | None = None,
) -> tuple[ int, Any ]:
    ''' Posts ``tools/call`` of MCP 2026-07-28, with answers and state if
        any.
    '''
    parameters: dict[ str, Any ] = {
        'name': name, 'arguments': arguments or { } }
    if responses is not None: parameters[ 'inputResponses' ] = responses
    if state is not None: parameters[ 'requestState' ] = state
    return await _post( http, url, 'tools/call', parameters )


async def _open_round(
    http: Any, url: str, name: str = 'rounds', **fields: Any
) -> tuple[ str, str ]:
    ''' Calls tool; returns the key of its one request and the state. '''
    _, message = await _call( http, url, name, **fields )
    result = message[ 'result' ]
    assert result[ 'resultType' ] == 'input_required', result
    ( key, _ ), = result[ 'inputRequests' ].items( )
    return key, result[ 'requestState' ]


def _code( message: Any ) -> int | None:
    return message[ 'error' ][ 'code' ] if message else None


@contextlib.asynccontextmanager
async def _serve( server: Any ):
    async with (
        mcp_support.serve_in_loop( server ) as url,
        sdk.http.AsyncClient( timeout = _WAIT * 3 ) as http,
    ): yield url, http


async def _refused_under_legacy( http: Any, url: str ) -> bool:
    ''' Returns whether serve speaks 2026-07-28 (SDK 2.x); under the SDK
        1.x, asserts that it refuses a call of 2026-07-28.
    '''
    if _MODERN: return False
    status, _ = await _call( http, url, 'rounds' )
    assert status >= 400 # noqa: PLR2004
    return True


@pytest.mark.asyncio
async def test_100_forged_states_refused( ):
    ''' A forged, truncated, empty or non-string state is refused with the
        error of invalid parameters (-32602), which says nothing of why;
        the call it names still waits, and its true state resumes it.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        answer = { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) }
        for forged in (
            state[ : len( state ) // 2 ], state[ : -1 ], state + 'A',
            'v1.' + 'A' * 60, 'v2' + state[ 2 : ], '', 'x' * 10_000, 42,
            { 'state': state }, [ state ],
        ):
            _, message = await _call( http, url, 'rounds', answer, forged )
            assert _code( message ) == _INVALID_PARAMS, forged
            assert 'reason' not in message[ 'error' ][ 'message' ]
        assert len( server.continuations.continuations ) == 1
        _, message = await _call( http, url, 'rounds', answer, state )
        assert message[ 'result' ][ 'resultType' ] == 'input_required'
    server.release_continuations( )
    assert gate.asked == 1


@pytest.mark.asyncio
async def test_110_state_bound_to_tool_and_arguments( ):
    ''' A true state sent with another tool or other arguments than those
        of its call is refused (-32602); the call still waits for its
        round.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round(
            http, url, arguments = { 'label': 'a' } )
        answer = { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) }
        for name, arguments in (
            ( 'rounds', { 'label': 'b' } ), ( 'rounds', { } ),
            ( 'rounds', { 'label': 'a', 'extra': 1 } ),
            ( 'keyed', { 'label': 'a' } ), ( 'hang', { } ),
        ):
            _, message = await _call(
                http, url, name, answer, state, arguments )
            assert _code( message ) == _INVALID_PARAMS, ( name, arguments )
        _, message = await _call(
            http, url, 'rounds', answer, state, { 'label': 'a' } )
        assert message[ 'result' ][ 'resultType' ] == 'input_required'
    server.release_continuations( )


@pytest.mark.asyncio
async def test_120_replayed_states_refused( ):
    ''' A state replayed after its round was answered, or after the call
        ended, is refused (-32602): the tool does not run again.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        first = { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) }
        _, message = await _call( http, url, 'rounds', first, state )
        ( key2, _ ), = message[ 'result' ][ 'inputRequests' ].items( )
        state2 = message[ 'result' ][ 'requestState' ]
        second = { key2: mcp_support.produce_sampled( 'Hi' ) }
        _, message = await _call( http, url, 'rounds', second, state2 )
        assert message[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'Ada: Hi'
        for answer, replayed in ( ( first, state ), ( second, state2 ) ):
            _, message = await _call( http, url, 'rounds', answer, replayed )
            assert _code( message ) == _INVALID_PARAMS
    assert gate.asked == 1
    assert not server.continuations.continuations


@pytest.mark.asyncio
async def test_130_same_state_at_once( ):
    ''' The same state sent many times at once resumes its call once: one
        round goes on, the others are refused (-32602); the tool ran once.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        answer = { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) }
        replies = await asyncio.wait_for( asyncio.gather( *(
            _call( http, url, 'rounds', answer, state )
            for _ in range( 12 ) ) ), _WAIT )
        messages = [ message for _, message in replies ]
        going = [ message for message in messages if 'result' in message ]
        assert len( going ) == 1
        assert going[ 0 ][ 'result' ][ 'resultType' ] == 'input_required'
        assert all(
            _code( message ) == _INVALID_PARAMS
            for message in messages if 'result' not in message )
        assert len( server.continuations.continuations ) == 1
    server.release_continuations( )
    assert gate.asked == 1


@pytest.mark.asyncio
async def test_140_answers_of_wrong_kind_refused( ):
    ''' An answer of another kind than its request, or which accepts an
        elicitation with content which breaks the requested schema, is
        refused (-32602, naming its key): in a round, the call still waits
        with its state good; given before its request, in a first round,
        the call ends with that error, the tool never sees the wrong
        answer, and nothing waits.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        for wrong in (
            mcp_support.produce_sampled( 'x' ), { 'roots': [ ] }, { 'action': 'maybe' },
            { 'action': 'accept', 'content': { 'name': { 'deep': 1 } } },
            mcp_support.produce_elicited( { } ), mcp_support.produce_elicited( { 'name': 5 } ),
            mcp_support.produce_elicited( { 'name': [ 'a', 'b' ] } ),
        ):
            _, message = await _call(
                http, url, 'rounds', { key: wrong }, state )
            assert _code( message ) == _INVALID_PARAMS, wrong
        _, message = await _call(
            http, url, 'rounds', { key: mcp_support.produce_elicited( { 'name': 'A' } ) },
            state )
        assert message[ 'result' ][ 'resultType' ] == 'input_required'
        server.release_continuations( )
        _, message = await _call( http, url, 'keyed', {
            'who': mcp_support.produce_sampled( 'not a name' ),
            'greeting': mcp_support.produce_elicited( { 'name': 'not a sample' } ) } )
        assert _code( message ) == _INVALID_PARAMS
        assert 'does not answer' in message[ 'error' ][ 'message' ]
        _, message = await _call( http, url, 'keyed', {
            'who': mcp_support.produce_elicited( { 'nom': 'x' } ), 'greeting': mcp_support.produce_sampled( 'Hi' ) } )
        assert _code( message ) == _INVALID_PARAMS
        assert 'requested schema' in message[ 'error' ][ 'message' ]
    assert not server.continuations.continuations


@pytest.mark.asyncio
async def test_150_huge_answers_bounded( ):
    ''' A request beyond the transport's bound on a body is refused
        before it reaches the call, which still waits; a large answer
        within the bound is taken as any other.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        huge = { key: mcp_support.produce_elicited( { 'name': 'x' * _BODY_MAXIMUM } ) }
        status, message = await _call( http, url, 'rounds', huge, state )
        assert status >= 400 # noqa: PLR2004
        assert message is None or 'error' in message
        assert len( server.continuations.continuations ) == 1
        large = { key: mcp_support.produce_elicited( { 'name': 'y' * ( _BODY_MAXIMUM // 8 ) } ) }
        _, message = await _call( http, url, 'rounds', large, state )
        assert message[ 'result' ][ 'resultType' ] == 'input_required'
    server.release_continuations( )


@pytest.mark.asyncio
async def test_160_deep_answers_refused( ):
    ''' An answer nested beyond the parser's depth is a parse error
        (-32700), not a crash; the call still waits, its state good.
    '''
    server = serving.ToolServer( [ _produce_ensemble( _Gate( ) ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        depth = 100_000
        body = json.dumps( {
            'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {
                'name': 'rounds', 'arguments': { }, 'requestState': state,
                'inputResponses': { key: 'NESTED' } } } ).replace(
                    '"NESTED"', '[' * depth + ']' * depth )
        _, message = await _post_raw(
            http, url, 'tools/call', body, 'rounds' )
        assert _code( message ) in ( _PARSE_ERROR, _INVALID_PARAMS )
        _, message = await _call(
            http, url, 'rounds', { key: mcp_support.produce_elicited( { 'name': 'A' } ) },
            state )
        assert message[ 'result' ][ 'resultType' ] == 'input_required'
    server.release_continuations( )


@pytest.mark.asyncio
async def test_170_thousands_of_keys_never_asked( ):
    ''' Thousands of answers under keys never asked are ignored: given in
        a first round, none is kept while the call waits; given in a later
        round beside the true answer, the call goes on.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_ensemble( gate ) ] )
    strangers = {
        f"stranger-{index}": mcp_support.produce_elicited( { 'name': str( index ) } )
        for index in range( 5000 ) }
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url, responses = strangers )
        continuation, = server.continuations.continuations.values( )
        assert not continuation.answers
        answers = { **strangers, key: mcp_support.produce_elicited( { 'name': 'Ada' } ) }
        _, message = await _call( http, url, 'rounds', answers, state )
        result = message[ 'result' ]
        ( key2, request ), = result[ 'inputRequests' ].items( )
        assert request[ 'method' ] == 'sampling/createMessage'
        _, message = await _call(
            http, url, 'rounds', { key2: mcp_support.produce_sampled( 'Hi' ) },
            result[ 'requestState' ] )
        assert message[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'Ada: Hi'
    assert not server.continuations.continuations
    assert gate.asked == 1


@pytest.mark.asyncio
async def test_180_refused_answers_keep_deadline( ):
    ''' A client which answers wrongly, again and again, does not keep its
        call waiting: a round whose answers are refused keeps its
        deadline (that of its sealed state), and the call is cancelled at
        its end, its state then expired.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], continuation_duration = 0.5 )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        continuation, = server.continuations.continuations.values( )
        assert continuation.timer is not None
        deadline = continuation.timer.when( )
        _, message = await _call(
            http, url, 'rounds', { key: mcp_support.produce_sampled( 'x' ) }, state )
        assert _code( message ) == _INVALID_PARAMS
        assert continuation.timer.when( ) == deadline

        async def pester( ) -> str:
            while True:
                _, message = await _call(
                    http, url, 'rounds', { key: { 'roots': [ ] } }, state )
                text = message[ 'error' ][ 'message' ]
                if 'does not answer' not in text: return text

        text = await asyncio.wait_for( pester( ), _WAIT )
        assert text == 'Invalid or expired requestState'
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
    assert not server.continuations.continuations


@pytest.mark.asyncio
async def test_185_empty_rounds_keep_deadline( ):
    ''' A client which sends round after round without answering does not
        keep its call waiting: each such round gets the requests again
        under a new state, but keeps the deadline, and the call is
        cancelled at its end, its last state then expired.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], continuation_duration = 0.5 )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        continuation, = server.continuations.continuations.values( )
        assert continuation.timer is not None
        deadline = continuation.timer.when( )
        key2, state2 = await _open_round(
            http, url, responses = { }, state = state )
        assert ( key2, continuation.timer.when( ) ) == ( key, deadline )
        assert state2 != state

        async def stall( state: str ) -> str:
            while True:
                _, message = await _call(
                    http, url, 'rounds', { 'stranger': mcp_support.produce_sampled( 'x' ) },
                    state )
                if 'error' in message: return message[ 'error' ][ 'message' ]
                state = message[ 'result' ][ 'requestState' ]

        text = await asyncio.wait_for( stall( state2 ), _WAIT )
        assert text == 'Invalid or expired requestState'
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
    assert not server.continuations.continuations
    assert gate.asked == 1


@pytest.mark.asyncio
async def test_190_state_starts_no_task( ):
    ''' A state of a call in rounds of a tool which may run as a task,
        sent again and again by a client which declares the tasks
        extension, continues its call once (which becomes a task, its
        answers taken), and is refused after (-32602): it starts no other
        call, and nothing waits.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_tasked_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        _, message = await mcp_support.post_modern(
            http, url, 'tools/call', { 'name': 'asking', 'arguments': { } },
            capabilities = _CAPABILITIES )
        result = message[ 'result' ]
        ( key, _ ), = result[ 'inputRequests' ].items( )
        answer = { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) }
        replies = [
            await _call( http, url, 'asking', answer,
                         result[ 'requestState' ] )
            for _ in range( 4 ) ]
        task = replies[ 0 ][ 1 ][ 'result' ]
        assert task[ 'resultType' ] == 'task'
        assert all(
            _code( message ) == _INVALID_PARAMS
            for _, message in replies[ 1 : ] )
        done = await _poll_terminal( http, url, task[ 'taskId' ] )
    assert done[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'Hello, Ada'
    assert gate.asked == 1
    assert not server.continuations.continuations
    assert not server._running and not server._inputs


@pytest.mark.asyncio
async def test_200_callers_never_answering_bounded( ):
    ''' Callers which open rounds and never answer, one after another or
        at once, are bounded: the maximum of calls wait, each one more is
        refused at once (serve's busy error, -32050, saying why and the
        maximum) and its call cancelled; released, the waiting calls are
        cancelled too, and nothing is kept.
    '''
    gate = _Gate( )
    maximum, callers = 3, 60
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], continuations_maximum = maximum )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        replies = [ # a third one after another, the rest at once
            await _call( http, url, 'rounds' )
            for _ in range( callers // 3 ) ]
        replies.extend( await asyncio.wait_for( asyncio.gather( *(
            _call( http, url, 'rounds' )
            for _ in range( callers - len( replies ) ) ) ), _WAIT * 3 ) )
        waiting = [
            message for _, message in replies
            if message.get( 'result', { } ).get( 'resultType' )
            == 'input_required' ]
        refused = [
            message for _, message in replies if 'error' in message ]
        assert len( waiting ) == maximum
        assert len( refused ) == callers - maximum
        assert all(
            _code( message ) == _BUSY == serving._continuations.BUSY
            and 'Too many calls' in message[ 'error' ][ 'message' ]
            and message[ 'error' ][ 'data' ] == {
                'reason': 'busy', 'maximum': maximum }
            for message in refused )
        assert len( server.continuations.continuations ) == maximum
        server.release_continuations( )
        assert not server.continuations.continuations

        async def wait_cancellations( ) -> None:
            while gate.cancellations < callers:
                gate.cancelled.clear( )
                await gate.cancelled.wait( )

        await asyncio.wait_for( wait_cancellations( ), _WAIT )
        _, message = await _call(
            http, url, 'rounds',
            { 'elicitation-1': mcp_support.produce_elicited( { 'name': 'A' } ) },
            waiting[ 0 ][ 'result' ][ 'requestState' ] )
        assert _code( message ) == _INVALID_PARAMS
    assert gate.asked == callers


@pytest.mark.asyncio
async def test_210_answer_after_expiry( ):
    ''' A client which answers after its call's round expired gets the
        error of an expired state (-32602); its call was cancelled, and
        nothing waits.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], continuation_duration = 0.2 )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url )
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
        assert not server.continuations.continuations
        _, message = await _call(
            http, url, 'rounds', { key: mcp_support.produce_elicited( { 'name': 'A' } ) },
            state )
    assert _code( message ) == _INVALID_PARAMS
    assert message[ 'error' ][ 'message' ] == (
        'Invalid or expired requestState' )


@pytest.mark.asyncio
async def test_220_disconnect_mid_round( ):
    ''' A client which goes away while its resumed call runs gets that
        call cancelled; nothing waits. One which goes away while its call
        waits gets it cancelled at the end of its round.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_ensemble( gate ) ], continuation_duration = 0.3 )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        key, state = await _open_round( http, url, 'hang' )
        going = asyncio.ensure_future( _call(
            http, url, 'hang', { key: mcp_support.produce_elicited( { 'name': 'A' } ) },
            state ) )
        await asyncio.wait_for( gate.resumed.wait( ), _WAIT )
        going.cancel( )
        await asyncio.gather( going, return_exceptions = True )
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
        assert not server.continuations.continuations
        gate.cancelled.clear( )
        await _open_round( http, url, 'hang' )
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
        assert not server.continuations.continuations
    assert gate.cancellations == 2 # noqa: PLR2004


@pytest.mark.asyncio
async def test_230_shutdown_releases_everything( ):
    ''' A server shut down while calls wait for their clients and tasks
        run (one waiting for input, one working, answered by a
        ``tasks/update`` it ignores) cancels them all: nothing is kept,
        nothing runs.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [
        _produce_ensemble( gate ), _produce_tasked_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        for _ in range( 3 ): await _open_round( http, url )
        await _open_task( http, url, gate )
        _, created = await _post(
            http, url, 'tools/call', { 'name': 'stuck', 'arguments': { } } )
        identifier = created[ 'result' ][ 'taskId' ]
        _, message = await _post( http, url, 'tasks/update', {
            'taskId': identifier,
            'inputResponses': { 'x': mcp_support.produce_elicited( { 'name': 'A' } ) } } )
        assert 'result' in message
        _, message = await _post(
            http, url, 'tasks/get', { 'taskId': identifier } )
        assert message[ 'result' ][ 'status' ] == 'working'
        assert len( server.continuations.continuations ) == 3 # noqa: PLR2004
    assert not server.continuations.continuations
    assert not server._running and not server._inputs

    async def wait_cancellations( ) -> None:
        while gate.cancellations < 5: # noqa: PLR2004
            gate.cancelled.clear( )
            await gate.cancelled.wait( )

    await asyncio.wait_for( wait_cancellations( ), _WAIT )


_TASK_METHODS_LEGACY = (
    ( types.GetTaskRequest, types.GetTaskResult ),
    ( types.GetTaskPayloadRequest, types.CallToolResult ),
    ( types.CancelTaskRequest, types.CancelTaskResult ),
)


@contextlib.asynccontextmanager
async def _connect( url: str ):
    ''' Yields an initialized session of the SDK's client (2025-11-25). '''
    async with (
        sdk.http.AsyncClient( ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession( *streams ) as session,
    ):
        await session.initialize( )
        yield session


async def _request( session: Any, model: Any, result: Any, **fields: Any ):
    ''' Sends request of a model with parameters (wire names). '''
    request = model.model_validate( {
        'method': model.model_fields[ 'method' ].default,
        'params': fields } )
    if sdk.MAJOR < 2: request = types.ClientRequest( request ) # noqa: PLR2004
    return await session.send_request( request, result )


async def _call_as_task( session: Any, name: str, ttl: int ) -> str:
    ''' Calls tool as a task (2025-11-25); returns the task's identifier.
    '''
    parameters = { 'name': name, 'arguments': { }, 'task': { 'ttl': ttl } }
    if sdk.MAJOR < 2: # noqa: PLR2004
        result = await _request(
            session, types.CallToolRequest, types.CreateTaskResult,
            **parameters )
        return result.task.taskId
    raw = await session._dispatcher.send_raw_request(
        'tools/call', parameters, None )
    return raw[ 'task' ][ 'taskId' ]


@pytest.mark.asyncio
async def test_300_made_up_task_identifiers( ):
    ''' A made-up task identifier gets the error of invalid parameters
        (-32602) naming it, from ``tasks/get``, ``tasks/result`` and
        ``tasks/cancel`` (2025-11-25), and from ``tasks/get``,
        ``tasks/cancel`` and ``tasks/update`` (2026-07-28).
    '''
    server = serving.ToolServer( [ _produce_tasked_ensemble( _Gate( ) ) ] )
    made_up = 'Xq' * 16
    async with _serve( server ) as ( url, http ):
        async with _connect( url ) as session:
            for model, result in _TASK_METHODS_LEGACY:
                with pytest.raises( sdk.Error ) as caught:
                    await asyncio.wait_for( _request(
                        session, model, result, taskId = made_up ), _WAIT )
                assert caught.value.error.code == _INVALID_PARAMS
                assert made_up in caught.value.error.message
        if await _refused_under_legacy( http, url ): return
        for method in ( 'tasks/get', 'tasks/cancel', 'tasks/update' ):
            _, message = await _post(
                http, url, method, { 'taskId': made_up } )
            assert _code( message ) == _INVALID_PARAMS, method
            assert made_up in message[ 'error' ][ 'message' ]


async def _open_task(
    http: Any, url: str, gate: _Gate
) -> tuple[ str, str ]:
    ''' Calls the asking tool as a task (2026-07-28); returns its
        identifier and the key of its request, once it waits.
    '''
    _, created = await _post(
        http, url, 'tools/call', { 'name': 'asking', 'arguments': { } } )
    identifier = created[ 'result' ][ 'taskId' ]

    async def poll( ) -> str:
        while True:
            _, message = await _post(
                http, url, 'tasks/get', { 'taskId': identifier } )
            requests = message[ 'result' ].get( 'inputRequests' )
            if requests: return next( iter( requests ) )
            await asyncio.sleep( 0.02 )

    return identifier, await asyncio.wait_for( poll( ), _WAIT )


async def _poll_terminal( http: Any, url: str, identifier: str ) -> Any:
    ''' Returns the task once terminal (bounded: no hang). '''
    async def poll( ) -> Any:
        while True:
            _, message = await _post(
                http, url, 'tasks/get', { 'taskId': identifier } )
            if message[ 'result' ][ 'status' ] in (
                'completed', 'failed', 'cancelled'
            ): return message[ 'result' ]
            await asyncio.sleep( 0.02 )
    return await asyncio.wait_for( poll( ), _WAIT )


@pytest.mark.asyncio
async def test_310_task_updates_malformed( ):
    ''' ``tasks/update`` with answers which are no object, of the wrong
        kind, or which break the requested schema, is refused (-32602),
        the task still waiting; answers under
        keys never asked are acknowledged and ignored; answers to a task
        which waits no more are acknowledged, the task unchanged.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_tasked_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        identifier, key = await _open_task( http, url, gate )
        for responses in ( 'answers', [ 1, 2 ], 42, True ):
            _, message = await _post( http, url, 'tasks/update', {
                'taskId': identifier, 'inputResponses': responses } )
            assert _code( message ) == _INVALID_PARAMS, responses
        for wrong in ( mcp_support.produce_sampled( 'wrong' ), mcp_support.produce_elicited( { 'nom': 'x' } ) ):
            _, message = await _post( http, url, 'tasks/update', {
                'taskId': identifier, 'inputResponses': { key: wrong } } )
            assert _code( message ) == _INVALID_PARAMS
        _, message = await _post( http, url, 'tasks/update', {
            'taskId': identifier, 'inputResponses': {
                f"stranger-{index}": mcp_support.produce_elicited( { } )
                for index in range( 2000 ) } } )
        assert 'result' in message
        _, message = await _post(
            http, url, 'tasks/get', { 'taskId': identifier } )
        assert message[ 'result' ][ 'status' ] == 'input_required'
        assert list( message[ 'result' ][ 'inputRequests' ] ) == [ key ]
        await _post( http, url, 'tasks/update', {
            'taskId': identifier,
            'inputResponses': { key: mcp_support.produce_elicited( { 'name': 'Ada' } ) } } )
        done = await _poll_terminal( http, url, identifier )
        _, message = await _post( http, url, 'tasks/update', {
            'taskId': identifier,
            'inputResponses': { key: mcp_support.produce_elicited( { 'name': 'Bo' } ) } } )
        assert 'result' in message
        _, message = await _post(
            http, url, 'tasks/get', { 'taskId': identifier } )
    assert done[ 'result' ][ 'content' ][ 0 ][ 'text' ] == 'Hello, Ada'
    assert message[ 'result' ][ 'result' ] == done[ 'result' ]
    assert not server._running and not server._inputs


@pytest.mark.asyncio
async def test_320_task_updates_at_once( ):
    ''' The same answer sent many times at once by ``tasks/update``
        resumes the tool once; the task completes with it.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_tasked_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        identifier, key = await _open_task( http, url, gate )
        replies = await asyncio.wait_for( asyncio.gather( *(
            _post( http, url, 'tasks/update', {
                'taskId': identifier, 'inputResponses': {
                    key: mcp_support.produce_elicited( { 'name': f"n{index}" } ) } } )
            for index in range( 10 ) ) ), _WAIT )
        assert all( 'result' in message for _, message in replies )
        done = await _poll_terminal( http, url, identifier )
    assert done[ 'status' ] == 'completed'
    assert done[ 'result' ][ 'content' ][ 0 ][ 'text' ].startswith(
        'Hello, n' )
    assert gate.asked == 1
    assert not server._running and not server._inputs


@pytest.mark.asyncio
async def test_330_cancel_while_answering( ):
    ''' A task cancelled while its answers arrive ends (cancelled, or
        completed if its tool ended first): nothing runs, nothing waits,
        and a later answer is acknowledged and ignored.
    '''
    gate = _Gate( )
    server = serving.ToolServer( [ _produce_tasked_ensemble( gate ) ] )
    async with _serve( server ) as ( url, http ):
        if await _refused_under_legacy( http, url ): return
        for _ in range( 3 ):
            identifier, key = await _open_task( http, url, gate )
            answer = {
                'taskId': identifier,
                'inputResponses': { key: mcp_support.produce_elicited( { 'name': 'A' } ) } }
            replies = await asyncio.wait_for( asyncio.gather(
                _post( http, url, 'tasks/update', answer ),
                _post( http, url, 'tasks/cancel', { 'taskId': identifier } ),
            ), _WAIT )
            assert all( 'result' in message for _, message in replies )
            done = await _poll_terminal( http, url, identifier )
            assert done[ 'status' ] in ( 'cancelled', 'completed' )
            _, message = await _post( http, url, 'tasks/update', answer )
            assert 'result' in message
    assert not server._running and not server._inputs


@pytest.mark.asyncio
async def test_340_task_ends_with_its_record( ):
    ''' A task whose call never ends, on a server without a timeout, is
        cancelled once its record expires (none could read its result):
        nothing runs on.
    '''
    gate = _Gate( )
    server = serving.ToolServer(
        [ _produce_tasked_ensemble( gate ) ], timeout = None )
    async with mcp_support.serve_in_loop( server ) as url:
        async with _connect( url ) as session:
            identifier = await asyncio.wait_for(
                _call_as_task( session, 'stuck', 1000 ), _WAIT )
            await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )
            with pytest.raises( sdk.Error ) as caught:
                await _request(
                    session, types.GetTaskRequest, types.GetTaskResult,
                    taskId = identifier )
    assert caught.value.error.code == _INVALID_PARAMS
    assert not server._running


@pytest.mark.asyncio
async def test_350_flood_of_task_polls( ):
    ''' A flood of ``tasks/get`` against a full store costs no scan of all
        its records each: twenty thousand polls among a thousand records
        end well within a generous bound; through serve, every poll is
        answered and the store keeps its records. A store churned through
        by thousands of tasks keeps its maximum, and bounded bookkeeping.
    '''
    store = serving.MemoryTaskStore( )
    now = datetime.datetime.now( datetime.timezone.utc )
    for index in range( store.maximum ):
        await store.store_task( serving.tasks.TaskRecord(
            identifier = f"task-{index}", created = now, updated = now,
            ttl = 3_600_000, state = serving.tasks.TaskStates.Completed ) )
    start = time.monotonic( )
    for index in range( 20_000 ):
        assert await store.retrieve_task( f"task-{index % 1000}" )
    assert time.monotonic( ) - start < _WAIT / 2
    server = serving.ToolServer(
        [ _produce_tasked_ensemble( _Gate( ) ) ], task_store = store )
    async with (
        mcp_support.serve_in_loop( server ) as url,
        _connect( url ) as session,
    ):
        results = await asyncio.wait_for( asyncio.gather( *(
            _request(
                session, types.GetTaskRequest, types.GetTaskResult,
                taskId = f"task-{index}" )
            for index in range( 300 ) ) ), _WAIT * 3 )
    assert { _status( result ) for result in results } == { 'completed' }
    assert len( ( await store.survey_tasks( None ) )[ 0 ] ) == store.page_size
    small = serving.MemoryTaskStore( maximum = 50 )
    for index in range( 5000 ):
        await small.store_task( serving.tasks.TaskRecord(
            identifier = f"churn-{index}", created = now, updated = now,
            ttl = 3_600_000 + index,
            state = serving.tasks.TaskStates.Completed ) )
    assert len( small._tasks ) == small.maximum
    assert len( small._expiries._heap ) <= 3 * small.maximum + 64


def _status( result: Any ) -> str:
    return str( getattr( result, 'status' ) )
