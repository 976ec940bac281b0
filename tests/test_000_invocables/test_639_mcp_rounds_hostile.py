# SPDX-License-Identifier: Apache-2.0

''' A hostile server against the client's input in rounds and tasks (MCP
    2026-07-28): a hand-written server over stdio (``hostile_rounds_
    server.py``) which asks for input for ever, thousands of inputs at
    once, with huge or deep state and requests, of unknown kinds, out of
    shape, with keys written twice; whose tasks work for ever, at any poll
    interval, flip back from completed, end with results out of shape or
    huge, bear huge or changing identifiers, need input out of shape. Each
    call ends within its timeout with a clear error of the library, or a
    bounded result, and leaves no task running: a task which the call
    leaves is cancelled. With the mcp SDK 1.x (no 2026-07-28) the server
    speaks 2025-11-25, sending the same payloads to a client which does not
    expect them; its tasks are those of 2025-11-25.
'''


import asyncio
import json

import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.mcp import _inputs, _sdk, callbacks

from . import mcp_support


pytestmark = pytest.mark.asyncio
_MODERN = _sdk.MAJOR >= 2 # the SDK speaks 2026-07-28
_SERVER = str( mcp_support.SERVERS / 'hostile_rounds_server.py' )
_INVALID = 'not a valid MCP result'
_FLAW_MAXIMUM = 3000 # characters of a refusal quoting thousands of faults
_MESSAGE_MAXIMUM = 1000 # characters of a refusal quoting a huge text
_WAIT = 30 # seconds: bounds which prove "does not hang"


class _Answers:
    ''' An application's elicitor, recorded. '''

    def __init__( self ):
        self.elicited = [ ]

    async def elicit( self, request ):
        self.elicited.append( request.message )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'word': 'word' } )


def _produce( answers = None, *flags, **options ):
    arguments = [ *flags ] if _MODERN else [ *flags, '--legacy' ]
    if answers is not None: options.setdefault( 'elicitor', answers.elicit )
    command = [ mcp_support.SERVERS_PYTHON, _SERVER, *arguments ]
    return invocables.mcp.produce_ensemble(
        'hostile', command = command, **options )


def _produce_rounds( answers, **options ):
    ''' Returns ensemble of the server without the tasks extension. '''
    return _produce( answers, '--no-tasks', **options )


async def _call( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return await asyncio.wait_for(
        ensemble.access_invoker( name )( context, arguments or { } ), _WAIT )


async def _refuse( ensemble, name, arguments = None ):
    ''' Returns refusal of call (an error of the library), within bounds.
    '''
    with pytest.raises( exceptions.Omnierror ) as caught:
        await _call( ensemble, name, arguments )
    return caught.value


async def _survey_seen( ensemble ):
    ''' Returns what the server received before, in order. '''
    contents = await _call( ensemble, 'seen' )
    return json.loads( contents[ 0 ].text )


def _count( seen, method, name = None ):
    return sum(
        1 for entry in seen
        if entry[ 'method' ] == method
        and ( name is None or entry.get( 'name' ) == name ) )


async def test_100_rounds_forever( ):
    ''' A server which requires input for ever is given at most the rounds
        limit, then the request is abandoned with a refusal which says so
        (2025-11-25: such a result is refused as invalid, at once).
    '''
    answers = _Answers( )
    async with _produce_rounds( answers ) as ensemble:
        refusal = await _refuse( ensemble, 'forever' )
        seen = await _survey_seen( ensemble )
    if not _MODERN:
        assert _INVALID in str( refusal )
        assert _count( seen, 'tools/call', 'forever' ) == 1
        assert answers.elicited == [ ]
        return
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert f"more than {_inputs.ROUNDS_MAXIMUM} rounds" in str( refusal )
    assert _count( seen, 'tools/call', 'forever' ) == (
        _inputs.ROUNDS_MAXIMUM + 1 )
    assert len( answers.elicited ) == _inputs.ROUNDS_MAXIMUM


async def test_110_state_forever( ):
    ''' A server which answers with a state alone for ever (busy) is
        asked again, with that state, up to the rounds limit, with pauses
        (no busy loop), then refused.
    '''
    async with _produce_rounds( _Answers( ) ) as ensemble:
        refusal = await _refuse( ensemble, 'state_forever' )
        seen = await _survey_seen( ensemble )
    calls = [
        entry for entry in seen if entry.get( 'name' ) == 'state_forever' ]
    if not _MODERN:
        assert _INVALID in str( refusal )
        assert len( calls ) == 1
        return
    assert f"more than {_inputs.ROUNDS_MAXIMUM} rounds" in str( refusal )
    assert len( calls ) == _inputs.ROUNDS_MAXIMUM + 1
    assert [ entry.get( 'state' ) for entry in calls[ 1 : ] ] == (
        [ len( 'busy' ) ] * _inputs.ROUNDS_MAXIMUM )


async def test_120_thousands_in_one_round( ):
    ''' A round which asks thousands of inputs at once is refused before
        any is put to the application (none is elicited); a round of the
        most allowed is answered whole.
    '''
    answers = _Answers( )
    async with _produce_rounds( answers ) as ensemble:
        refusal = await _refuse( ensemble, 'thousands', { 'count': 5000 } )
        if not _MODERN:
            assert _INVALID in str( refusal )
            assert answers.elicited == [ ]
            return
        assert isinstance( refusal, exceptions.InvocationRefusal )
        assert 'required 5000 inputs at once' in str( refusal )
        assert answers.elicited == [ ]
        contents = await _call(
            ensemble, 'thousands',
            { 'count': _inputs.REQUESTS_MAXIMUM } )
    assert contents[ 0 ].text == f"answered {_inputs.REQUESTS_MAXIMUM}"
    assert len( answers.elicited ) == _inputs.REQUESTS_MAXIMUM


async def test_130_huge_state( ):
    ''' A huge state (a million characters, each escaped) comes back
        exactly; one over the result limit is refused as oversized.
    '''
    size = 1 << 20
    async with _produce_rounds( _Answers( ) ) as ensemble:
        if _MODERN:
            contents = await _call( ensemble, 'huge_state', { 'size': size } )
            assert contents[ 0 ].text == f"exact True {size}"
        else:
            refusal = await _refuse( ensemble, 'huge_state', { 'size': size } )
            assert _INVALID in str( refusal )
    async with _produce_rounds(
        _Answers( ), result_limit = 1 << 20
    ) as ensemble:
        refusal = await _refuse( ensemble, 'huge_state', { 'size': size } )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert 'larger than' in str( refusal )


async def test_140_deep_state( ):
    ''' A state which is no text (nested arrays) is refused as invalid;
        one nested beyond any parser's depth fails its own call with a
        refusal which says so, and the session lives.
    '''
    async with _produce_rounds( _Answers( ) ) as ensemble:
        refusal = await _refuse( ensemble, 'deep_state', { 'depth': 100 } )
        assert _INVALID in str( refusal )
        refusal = await _refuse(
            ensemble, 'deep_state', { 'depth': 100000 } )
        assert isinstance( refusal, exceptions.InvocationRefusal )
        assert 'too deep to be read' in str( refusal )
        seen = await _survey_seen( ensemble )
    assert _count( seen, 'tools/call', 'deep_state' ) == 2 # the same server


async def test_150_deep_request( ):
    ''' An input request nested deeper than pydantic's parser goes (which
        JSON allows) is read nevertheless (its answer is not lost: the call
        does not wait for its timeout); one nested beyond any parser's
        depth fails its own call with a refusal which says so.
    '''
    answers = _Answers( )
    async with _produce_rounds(
        answers, timeouts = { 'deep_request': _WAIT * 2 }
    ) as ensemble:
        if _MODERN:
            contents = await _call(
                ensemble, 'deep_request', { 'depth': 100 } )
            assert contents[ 0 ].text == 'answered'
            assert answers.elicited == [ 'Deep.' ]
        else:
            refusal = await _refuse(
                ensemble, 'deep_request', { 'depth': 100 } )
            assert _INVALID in str( refusal )
        refusal = await _refuse(
            ensemble, 'deep_request', { 'depth': 3000 } )
        assert isinstance( refusal, exceptions.InvocationRefusal )
        assert 'too deep to be read' in str( refusal )


async def test_160_unknown_kinds( ):
    ''' Input requests of kinds which no client answers (a tool call, an
        unknown method) are refused as invalid; nothing is elicited.
    '''
    answers = _Answers( )
    async with _produce_rounds( answers ) as ensemble:
        refusal = await _refuse( ensemble, 'unknown_kind' )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert _INVALID in str( refusal )
    assert answers.elicited == [ ]


@pytest.mark.parametrize( 'shape', [ 'number', 'bare', 'list', 'string' ] )
async def test_170_malformed_requests( shape ):
    ''' Input requests out of shape (a number, an elicitation without
        parameters, a list, a text) are refused as invalid.
    '''
    answers = _Answers( )
    async with _produce_rounds( answers ) as ensemble:
        refusal = await _refuse( ensemble, 'malformed', { 'shape': shape } )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert _INVALID in str( refusal )
    assert answers.elicited == [ ]


async def test_175_many_malformed_requests( ):
    ''' Thousands of input requests out of shape are refused as invalid
        with a message of bounded length (the validation lists each fault),
        which says how long the whole was.
    '''
    async with _produce_rounds( _Answers( ) ) as ensemble:
        refusal = await _refuse( ensemble, 'malformed', { 'shape': 'many' } )
    message = str( refusal )
    assert _INVALID in message
    assert len( message ) < _FLAW_MAXIMUM
    if _MODERN: assert ' characters)' in message


async def test_180_empty( ):
    ''' A result which requires input but gives neither requests nor state
        is refused as invalid.
    '''
    async with _produce_rounds( _Answers( ) ) as ensemble:
        refusal = await _refuse( ensemble, 'empty' )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert _INVALID in str( refusal )


async def test_190_duplicate_keys( ):
    ''' Keys written twice (the result's type, a request's key) are read
        once, the last winning, as every JSON parser here reads them: one
        input is asked, the second; 2025-11-25 ignores the type and takes
        the result, empty.
    '''
    answers = _Answers( )
    async with _produce_rounds( answers ) as ensemble:
        contents = await _call( ensemble, 'duplicate_keys' )
    if not _MODERN:
        assert not contents
        assert answers.elicited == [ ]
        return
    assert contents[ 0 ].text == 'keys k'
    assert answers.elicited == [ 'Second.' ]


async def test_200_rounds_before_task( ):
    ''' With the tasks extension, the input which a call requires before
        its server makes a task is bounded alike: rounds, and inputs at
        once (2025-11-25: the tools are no tasks; refused as invalid).
    '''
    answers = _Answers( )
    async with _produce( answers ) as ensemble:
        refusal = await _refuse( ensemble, 'forever' )
        refusal_ = await _refuse( ensemble, 'thousands', { 'count': 5000 } )
    if not _MODERN:
        assert _INVALID in str( refusal )
        assert _INVALID in str( refusal_ )
        return
    assert f"more than {_inputs.ROUNDS_MAXIMUM} rounds" in str( refusal )
    assert 'required 5000 inputs at once' in str( refusal_ )
    assert len( answers.elicited ) == _inputs.ROUNDS_MAXIMUM


def _produce_tasks( answers = None, **options ):
    ''' Returns ensemble whose calls of ``task`` run as tasks. '''
    options.setdefault( 'timeouts', { 'task': 1.0 } )
    return _produce( answers, **options )


async def _refuse_task( ensemble, plan, interval = 10 ):
    ''' Returns refusal of a task's call, and what the server saw. '''
    refusal = await _refuse(
        ensemble, 'task', { 'plan': plan, 'interval': interval } )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    return refusal, await _survey_seen( ensemble )


def _survey_cancels( seen ):
    return [
        entry[ 'task' ] for entry in seen
        if entry[ 'method' ] == 'tasks/cancel' ]


async def test_300_working_forever( ):
    ''' A task which works for ever is left when the call's time is up:
        the call is refused within its timeout, and its task cancelled.
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'working' )
    assert 'within 1.0 seconds' in str( refusal )
    assert _survey_cancels( seen ) == [ 't1' ]


@pytest.mark.parametrize(
    'interval', [ '0', '-5', '1000000000', '1' + '0' * 400 ] )
async def test_310_poll_intervals( interval ):
    ''' A poll interval of none, below none, of days, or of more than a
        float holds, is bounded: no busy loop (few polls), no wait beyond
        the call's timeout, and the task is cancelled.
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'working', interval )
    assert 'within 1.0 seconds' in str( refusal )
    # At least 0.05 seconds apart: about 20 polls a second at most.
    assert _count( seen, 'tasks/get' ) < 60
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_320_flip_from_completed( ):
    ''' A task created completed which then says that it works is refused
        with a reason which says so, and cancelled (2025-11-25: its result
        is asked, and the refusal of that is the call's).
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'flip' )
    if not _MODERN:
        assert 'No result.' in str( refusal )
        assert _survey_cancels( seen ) == [ ]
        return
    assert 'said that it ended, then that it is working' in str( refusal )
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_330_malformed_result( ):
    ''' A completed task whose result is out of shape is refused as
        invalid; it ended, and is not cancelled.
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'malformed_result' )
    assert _INVALID in str( refusal )
    assert _survey_cancels( seen ) == [ ]


async def test_340_huge_result( ):
    ''' A huge result (three megabytes) is taken whole within the result
        limit, and refused as oversized beyond it.
    '''
    async with _produce_tasks( ) as ensemble:
        contents = await _call(
            ensemble, 'task', { 'plan': 'huge_result', 'interval': 10 } )
        assert len( contents[ 0 ].text ) == 3 << 20
    async with _produce_tasks( result_limit = 1 << 20 ) as ensemble:
        refusal = await _refuse(
            ensemble, 'task', { 'plan': 'huge_result', 'interval': 10 } )
    assert isinstance( refusal, exceptions.InvocationRefusal )
    assert 'larger than' in str( refusal )


@pytest.mark.parametrize( 'plan', [ 'huge_id', 'failed_huge' ] )
async def test_350_huge_texts( plan ):
    ''' A task whose identifier, or the message of whose failure, is a
        megabyte is refused with a message of bounded length, which says
        how long the text was (2025-11-25: the identifier).
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, _ = await _refuse_task( ensemble, plan )
    message = str( refusal )
    assert len( message ) < _MESSAGE_MAXIMUM
    if plan == 'huge_id' or _MODERN: assert ' characters)' in message


async def test_360_identifier_changes( ):
    ''' A task whose polls name other tasks is followed by its own
        identifier alone, to its end.
    '''
    async with _produce_tasks( ) as ensemble:
        contents = await _call(
            ensemble, 'task', { 'plan': 'id_changes', 'interval': 10 } )
        seen = await _survey_seen( ensemble )
    assert contents[ 0 ].text == 'ok'
    polls = [ entry for entry in seen if entry[ 'method' ] == 'tasks/get' ]
    assert len( polls ) == 3
    assert { entry[ 'task' ] for entry in polls } == { 't1' }


async def test_370_input_malformed( ):
    ''' A task which needs input out of shape is refused as invalid, and
        cancelled (2025-11-25: its result is asked; refused, it is
        cancelled too).
    '''
    async with _produce_tasks( _Answers( ) ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'input_malformed' )
    assert ( _INVALID if _MODERN else 'No result.' ) in str( refusal )
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_375_input_many_malformed( ):
    ''' A task which needs thousands of inputs out of shape is refused as
        invalid with a message of bounded length, and cancelled.
    '''
    async with _produce_tasks( _Answers( ) ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'input_malformed_many' )
    assert ( _INVALID if _MODERN else 'No result.' ) in str( refusal )
    assert len( str( refusal ) ) < _FLAW_MAXIMUM
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_380_input_thousands( ):
    ''' A task which needs thousands of inputs at once is refused before
        any is elicited, and cancelled.
    '''
    answers = _Answers( )
    async with _produce_tasks( answers ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'input_thousands' )
    assert (
        'required 5000 inputs at once' if _MODERN else 'No result.'
    ) in str( refusal )
    assert answers.elicited == [ ]
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_390_input_forever( ):
    ''' A task which needs new input on every poll is answered up to the
        rounds limit, then refused and cancelled, once.
    '''
    answers = _Answers( )
    async with _produce_tasks(
        answers, timeouts = { 'task': _WAIT * 2 }
    ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'input_forever' )
    assert _survey_cancels( seen ) == [ 't1' ]
    if not _MODERN:
        assert 'No result.' in str( refusal )
        return
    assert f"more than {_inputs.ROUNDS_MAXIMUM} rounds" in str( refusal )
    assert _count( seen, 'tasks/update' ) == _inputs.ROUNDS_MAXIMUM
    assert len( answers.elicited ) == _inputs.ROUNDS_MAXIMUM


async def test_400_input_not_given( ):
    ''' A task which needs an input which the client cannot give (no
        elicitor) is refused and cancelled: it would wait for ever.
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'input_answerless' )
    assert (
        'could not be given' if _MODERN else 'No result.'
    ) in str( refusal )
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_410_poll_error( ):
    ''' A task whose poll is answered by an error is refused with that
        error (its final period not doubled), and cancelled.
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'get_error' )
    assert str( refusal ).endswith( 'did not complete: The task store broke.' )
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_420_unknown_status( ):
    ''' A task whose status is of no protocol is polled, boundedly, until
        the call's time is up (2025-11-25: its state is refused as
        invalid), then cancelled.
    '''
    async with _produce_tasks( ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'unknown_status' )
    assert _survey_cancels( seen ) == [ 't1' ]
    if not _MODERN:
        assert _INVALID in str( refusal )
        return
    assert 'within 1.0 seconds' in str( refusal )
    assert _count( seen, 'tasks/get' ) < 60


async def test_430_cancel_unanswered( ):
    ''' A task whose cancellation is never answered holds the call no
        longer than its timeout and the grace: it is refused all the same.
    '''
    async with _produce_tasks( grace = 1.0 ) as ensemble:
        refusal, seen = await _refuse_task( ensemble, 'cancel_deaf' )
    assert 'within 1.0 seconds' in str( refusal )
    assert _survey_cancels( seen ) == [ 't1' ]


async def test_440_unsolicited_task( ):
    ''' A task which the client did not ask for (its session declares no
        tasks) is refused as invalid (2025-11-25: a tool which requires
        tasks is left out then).
    '''
    async with _produce_tasks( tasks = 'never' ) as ensemble:
        if not _MODERN:
            with pytest.raises( exceptions.InvokerAbsence ):
                ensemble.access_invoker( 'task' )
            return
        refusal, _ = await _refuse_task( ensemble, 'working' )
    assert _INVALID in str( refusal )


async def test_450_secret_in_identifier( monkeypatch ):
    ''' A task whose identifier and error bear a secret of the server
        (with a quote and a backslash, which quoting escapes; across the
        bound of the abbreviated identifier) is refused with the secret
        redacted before it is quoted or cut: no part of it shows.
    '''
    secret = 'Zq9\\w"x\'secret-tail'
    monkeypatch.setenv( 'INVOCABLES_TEST_HOSTILE_SECRET', secret )
    async with _produce_tasks( environment = {
        'HOSTILE_SECRET': 'env:INVOCABLES_TEST_HOSTILE_SECRET' }
    ) as ensemble:
        refusal, _ = await _refuse_task( ensemble, 'secret_id' )
    message = str( refusal )
    assert len( message ) < _MESSAGE_MAXIMUM
    assert 'Zq9' not in message
    assert 'secret-tail' not in message


async def test_460_listing_checked_by_discovered_protocol( ):
    ''' The tools a server lists are checked by the protocol of the
        session: a tool whose output schema is an array, which MCP
        2026-07-28 allows, stays in a discovered session (the first
        handshake refused), as it was checked by 2025-11-25 before. The
        SDK 1.x, which knows one model of listings, checks no output
        schema's type: it keeps the tool too.
    '''
    async with _produce( ) as ensemble:
        tools = { tool.name: tool for tool in ensemble.survey_tools( ) }
        omissions = [
            omission.name for omission in ensemble.survey_omissions( ) ]
    assert tools[ 'arrayed' ].outschema[ 'type' ] == 'array'
    assert 'arrayed' not in omissions
