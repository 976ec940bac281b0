# SPDX-License-Identifier: Apache-2.0

''' The final event of a stream, kept by the shared accumulator for every
    provider: a call which comes after it raises response invalidity
    naming the tool, and calls which come with it are emitted.

    Gemini (whose calls may also be continued and closed) and Ollama
    (whose ``done`` chunk ends the stream) note that event as the other
    providers do, rather than each with a flag of its own.
'''


import pytest

from invocables import exceptions
from invocables.processors import produce_processor

from .test_587_processors_hostile_replies import STREAMING
from .test_587_processors_hostile_replies import _PARTS as PARTS
from .test_587_processors_hostile_replies import _stream as stream


def _gemini( *calls, finish = None ):
    candidate = { 'content': { 'role': 'model', 'parts': [
        { 'functionCall': call } for call in calls ] } }
    if finish: candidate[ 'finishReason' ] = finish
    return { 'candidates': [ candidate ] }


def _ollama( calls = None, done = False ):
    message = { 'role': 'assistant', 'content': '' }
    if calls is not None: message[ 'tool_calls' ] = calls
    chunk = { 'model': 'qwen3', 'message': message, 'done': done }
    if done: chunk[ 'done_reason' ] = 'stop'
    return chunk


def _partial( path, text, continues ):
    return { 'partialArgs': [
        { 'jsonPath': path, 'stringValue': text,
          'willContinue': continues } ], 'willContinue': continues }


@pytest.mark.parametrize( 'provider', STREAMING )
def test_100_call_after_final_event_named( provider ):
    ''' The error for a call after the final event names the call's tool,
        for every provider alike.
    '''
    events = stream( provider, [ ( 0, 'call1', 'add', '{"a": 1}' ) ] )
    produce, _ = PARTS[ provider ]
    late = [
        event for part in produce( 1, 'call2', 'multiply', '{"a": 5}' )
        for event in part ]
    accumulator = produce_processor( provider ).produce_accumulator( )
    for event in events: accumulator.ingest( event )
    with pytest.raises( exceptions.ResponseInvalidity ) as caught:
        for event in late: accumulator.ingest( event )
    assert "'multiply'" in str( caught.value )
    assert 'final event' in str( caught.value )
    assert [ emission.invocation.name
             for emission in accumulator.survey_invocations( ) ] == [ 'add' ]


def test_110_gemini_partial_arguments_after_finish_refused( ):
    ''' Partial arguments for a Gemini call left open at the final chunk
        raise response invalidity, as do the close and a new call: the
        call is never completed with arguments sent after the end.
    '''
    for late in (
        _gemini( _partial( '$.city', 'lo', False ) ),
        _gemini( { } ),
        _gemini( { 'name': 'other', 'willContinue': True } ),
    ):
        accumulator = produce_processor( 'gemini' ).produce_accumulator( )
        accumulator.ingest( _gemini( { 'name': 'find', 'willContinue': True } ) )
        accumulator.ingest( _gemini(
            _partial( '$.city', 'Os', True ), finish = 'MAX_TOKENS' ) )
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( late )
        assert accumulator.survey_invocations( ) == ( )


def test_120_gemini_calls_with_final_chunk_emitted( ):
    ''' A Gemini chunk which closes a streamed call and carries a whole
        one, with its finish reason, emits both: the end is read after the
        parts of its chunk.
    '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    accumulator.ingest( _gemini( { 'name': 'find', 'willContinue': True } ) )
    emitted = accumulator.ingest( _gemini(
        _partial( '$.city', 'Oslo', False ),
        { 'name': 'time', 'args': { 'zone': 'UTC' } },
        finish = 'STOP' ) )
    assert [ ( i.name, dict( i.arguments ) ) for i in emitted ] == [
        ( 'find', { 'city': 'Oslo' } ), ( 'time', { 'zone': 'UTC' } ) ]
    assert accumulator.ingest( _gemini( ) ) == ( )
    assert accumulator.conclude( ) == ( )


def test_130_ollama_calls_of_done_chunk_emitted( ):
    ''' Calls in Ollama's ``done`` chunk itself are emitted; a later
        chunk without calls is taken; a later call raises, naming its
        tool, and is never emitted.
    '''
    accumulator = produce_processor( 'ollama' ).produce_accumulator( )
    emitted = accumulator.ingest( _ollama( [ { 'function': {
        'name': 'find', 'arguments': { 'city': 'Oslo' } } } ], done = True ) )
    assert [ i.name for i in emitted ] == [ 'find' ]
    assert accumulator.ingest( _ollama( ) ) == ( )
    with pytest.raises( exceptions.ResponseInvalidity ) as caught:
        accumulator.ingest( _ollama( [ { 'function': {
            'name': 'late', 'arguments': { } } } ] ) )
    assert "'late'" in str( caught.value )
    assert len( accumulator.survey_invocations( ) ) == 1
