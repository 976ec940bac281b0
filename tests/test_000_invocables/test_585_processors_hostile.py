# SPDX-License-Identifier: Apache-2.0

''' Hostile input, for every processor: each promise holds.

    Whatever a provider (or something posing as one) sends, a processor
    gives exactly one canister per model call with exactly its arguments,
    or a canister marked invalid (which the engine answers with an error
    result), or the package's own error; never another exception, never a
    call twice, never no calls as if the model had finished.
'''


import copy
import json
import time

import pytest

import invocables

from invocables import exceptions
from invocables.processors import produce_processor

from . import replay


PROVIDERS = (
    'anthropic', 'cohere', 'gemini', 'ollama', 'openai', 'openai-responses' )

_FOLDERS = {
    'anthropic': 'anthropic', 'cohere': 'cohere', 'gemini': 'gemini',
    'ollama': 'ollama', 'openai_chat': 'openai',
    'openai_responses': 'openai-responses' }
_EXPECTATIONS = json.loads( (
    replay.access_fixtures_location( ) / 'expected.json'
).read_text( encoding = 'utf-8' ) )


def _survey_captures( ):
    ''' Returns ( provider, name, payloads, expected ) of calling captures.

        Payloads are the decoded events of a stream, or the one body of a
        whole reply.
    '''
    captures = [ ]
    for name, entry in _EXPECTATIONS.items( ):
        if entry[ 'http_status' ] >= 400 or not entry[ 'expected' ]: continue
        folder = _FOLDERS.get( name.split( '/' )[ 0 ] )
        if folder is None: continue # Providers without a processor yet.
        body = ( replay.access_fixtures_location( ) / name ).read_bytes( )
        events = [ event.decode( ) for event in replay.parse_events( body ) ]
        captures.append( (
            folder, name,
            events or [ json.loads( body ) ], bool( events ),
            entry[ 'expected' ] ) )
    return captures


_captures = _survey_captures( )


def _summarize( invocations ):
    return [ ( i.name, dict( i.arguments ) ) for i in invocations ]


def _stream( provider, events, label = None ):
    accumulator = produce_processor( provider ).produce_accumulator( )
    emitted = [ ]
    for event in events:
        arguments = ( event, ) if label is None else ( event, label )
        emitted.extend( accumulator.ingest( *arguments ) )
    emitted.extend( accumulator.conclude( ) )
    return emitted


# Streams of every provider, built from one list of calls.

def _anthropic_stream( calls ):
    events = [ ]
    for index, ( identifier, name, arguments ) in enumerate( calls ):
        block = { 'type': 'tool_use', 'name': name, 'input': { } }
        if identifier is not None: block[ 'id' ] = identifier
        events.append( {
            'type': 'content_block_start', 'index': index,
            'content_block': block } )
        if arguments is not None:
            events.append( {
                'type': 'content_block_delta', 'index': index, 'delta': {
                    'type': 'input_json_delta', 'partial_json': arguments } } )
        events.append( { 'type': 'content_block_stop', 'index': index } )
    events.append( {
        'type': 'message_delta', 'delta': { 'stop_reason': 'tool_use' } } )
    events.append( { 'type': 'message_stop' } )
    return events


def _openai_stream( calls ):
    deltas = [ ]
    for index, ( identifier, name, arguments ) in enumerate( calls ):
        delta = { 'index': index, 'function': { 'name': name } }
        if identifier is not None: delta[ 'id' ] = identifier
        if arguments is not None: delta[ 'function' ][ 'arguments' ] = arguments
        deltas.append( delta )
    return [
        *( { 'choices': [ { 'index': 0, 'delta': { 'tool_calls': [ delta ] } } ] }
           for delta in deltas ),
        { 'choices': [ {
            'index': 0, 'delta': { }, 'finish_reason': 'tool_calls' } ] },
        '[DONE]' ]


def _responses_stream( calls ):
    events = [ ]
    for index, ( identifier, name, arguments ) in enumerate( calls ):
        item = { 'type': 'function_call', 'name': name, 'arguments': '' }
        if identifier is not None: item[ 'call_id' ] = identifier
        events.append( {
            'type': 'response.output_item.added', 'output_index': index,
            'item': item } )
        if arguments is not None:
            events.append( {
                'type': 'response.function_call_arguments.delta',
                'output_index': index, 'delta': arguments } )
        events.append( {
            'type': 'response.output_item.done', 'output_index': index,
            'item': dict( item, arguments = arguments ) } )
    return events


def _cohere_stream( calls ):
    events = [ ]
    for index, ( identifier, name, arguments ) in enumerate( calls ):
        call = { 'type': 'function', 'function': { 'name': name } }
        if identifier is not None: call[ 'id' ] = identifier
        events.append( {
            'type': 'tool-call-start', 'index': index,
            'delta': { 'message': { 'tool_calls': call } } } )
        if arguments is not None:
            events.append( {
                'type': 'tool-call-delta', 'index': index, 'delta': {
                    'message': { 'tool_calls': {
                        'function': { 'arguments': arguments } } } } } )
        events.append( { 'type': 'tool-call-end', 'index': index } )
    events.append( { 'type': 'message-end', 'delta': {
        'finish_reason': 'TOOL_CALL' } } )
    return events


def _gemini_stream( calls ):
    events = [ ]
    for identifier, name, arguments in calls:
        call = { 'name': name, 'args': (
            None if arguments is None else json.loads( arguments ) ) }
        if identifier is not None: call[ 'id' ] = identifier
        events.append( { 'candidates': [ { 'content': {
            'role': 'model', 'parts': [ { 'functionCall': call } ] } } ] } )
    events.append( { 'candidates': [ {
        'content': { 'role': 'model', 'parts': [ { 'text': '' } ] },
        'finishReason': 'STOP' } ] } )
    return events


def _ollama_stream( calls ):
    events = [ ]
    for identifier, name, arguments in calls:
        call = { 'function': { 'name': name, 'arguments': arguments } }
        if identifier is not None: call[ 'id' ] = identifier
        events.append( { 'message': {
            'role': 'assistant', 'content': '', 'tool_calls': [ call ] },
            'done': False } )
    events.append( { 'message': { 'role': 'assistant', 'content': '' },
                     'done': True } )
    return events


_STREAMERS = {
    'anthropic': _anthropic_stream, 'cohere': _cohere_stream,
    'gemini': _gemini_stream, 'ollama': _ollama_stream,
    'openai': _openai_stream, 'openai-responses': _responses_stream,
}
_NOISES = {
    'anthropic': { 'type': 'brand_new_event', 'index': 0, 'x': [ 1 ] },
    'cohere': { 'type': 'brand-new-event', 'x': [ 1 ] },
    'gemini': { 'candidates': [ ], 'brandNewField': 1,
                'usageMetadata': { } },
    'ollama': { 'message': { 'role': 'assistant', 'content': '' },
                'done': False, 'brand_new_field': 1 },
    'openai': { 'choices': [ ], 'brand_new_field': { 'x': 1 } },
    'openai-responses': { 'type': 'response.brand_new_event', 'x': 1 },
}


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_100_empty_payloads_raise( provider ):
    ''' An empty payload, whole or streamed, raises response invalidity. '''
    processor = produce_processor( provider )
    with pytest.raises( exceptions.ResponseInvalidity ):
        processor.normalize_invocations( { } )
    with pytest.raises( exceptions.ResponseInvalidity ):
        processor.produce_accumulator( ).ingest( { } )


@pytest.mark.parametrize( 'provider', PROVIDERS )
@pytest.mark.parametrize(
    'capture', _captures, ids = [ capture[ 1 ] for capture in _captures ] )
def test_110_foreign_payloads_never_silent( provider, capture ):
    ''' Another provider's reply with calls raises, or gives exactly its
        calls (a compatible shape): never no calls, as if the model had
        finished.
    '''
    origin, _, payloads, streaming, expected = capture
    if origin == provider: return
    calls = [ ( call[ 'name' ], call[ 'arguments' ] ) for call in expected ]
    try:
        if streaming: emitted = _stream( provider, payloads )
        else:
            emitted = list( produce_processor(
                provider ).normalize_invocations( payloads[ 0 ] ) )
    except ( exceptions.ResponseInvalidity,
             exceptions.InvocationInterruption ): return
    assert _summarize( emitted ) == calls


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_120_unknown_event_types_silent( provider ):
    ''' Events of types the accumulator does not know, which providers add
        all the time, never break a stream.
    '''
    events = _STREAMERS[ provider ]( [ ( 'c1', 'f', '{"a": 1}' ) ] )
    noisy = [ _NOISES[ provider ], *events[ : 1 ], _NOISES[ provider ],
              *events[ 1 : ], _NOISES[ provider ] ]
    assert _summarize( _stream( provider, noisy ) ) == [ ( 'f', { 'a': 1 } ) ]


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_130_reuse_refused( provider ):
    ''' A concluded accumulator refuses events with a clear error. '''
    events = _STREAMERS[ provider ]( [ ( 'c1', 'f', '{"a": 1}' ) ] )
    accumulator = produce_processor( provider ).produce_accumulator( )
    for event in events: accumulator.ingest( event )
    accumulator.conclude( )
    with pytest.raises( exceptions.AccumulatorReuseInvalidity ) as caught:
        accumulator.ingest( events[ 0 ] )
    assert 'produce_accumulator' in str( caught.value )
    assert accumulator.conclude( ) == ( )


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_140_missing_and_duplicated_ids( provider, caplog ):
    ''' Calls without ids get distinct ids; an id names one call, so that a
        call repeating an id is not run again (with a warning).
    '''
    calls = [
        ( None, 'f', '{"a": 1}' ), ( None, 'f', '{"a": 1}' ),
        ( 'same', 'g', '{"b": 2}' ), ( 'same', 'g', '{"b": 3}' ) ]
    emitted = _stream( provider, _STREAMERS[ provider ]( calls ) )
    assert _summarize( emitted ) == [
        ( 'f', { 'a': 1 } ), ( 'f', { 'a': 1 } ), ( 'g', { 'b': 2 } ) ]
    assert emitted[ 0 ].identifier != emitted[ 1 ].identifier
    assert emitted[ 2 ].identifier == 'same'
    assert "call id 'same' to more than one call" in caplog.text


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_150_nulls_where_text_expected( provider ):
    ''' Null ids and arguments give synthesized ids and no arguments. '''
    emitted = _stream(
        provider, _STREAMERS[ provider ]( [ ( None, 'f', None ) ] ) )
    assert _summarize( emitted ) == [ ( 'f', { } ) ]
    assert emitted[ 0 ].identifier.startswith( 'call_' )


@pytest.mark.parametrize( 'provider', PROVIDERS )
@pytest.mark.parametrize( 'arguments', [ '[1]', '3', '"text"', 'true' ] )
def test_160_non_object_arguments_invalid( provider, arguments ):
    ''' Arguments which are JSON but not an object give an invalid call,
        which the engine answers with an error result.
    '''
    emitted = _stream(
        provider, _STREAMERS[ provider ]( [ ( 'c1', 'f', arguments ) ] ) )
    assert len( emitted ) == 1
    assert emitted[ 0 ].arguments == { }
    assert not invocables.__.is_absent( emitted[ 0 ].invalidity )


@pytest.mark.asyncio
async def test_165_invalid_arguments_become_error_results( ):
    ''' The engine turns an invalid canister into an error result. '''
    def f( a: int ) -> int:
        ''' Returns a. '''
        return a
    ensembles = [ invocables.produce_ensemble( 'tools', [ f ] ) ]
    processor = produce_processor( 'openai' )
    emitted = _stream( 'openai', _openai_stream( [ ( 'c1', 'f', '[1]' ) ] ) )
    results = await processor.execute_invocations( emitted, ensembles )
    assert results[ 0 ].is_error( )
    assert 'not an object' in results[ 0 ].error.message


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_170_huge_arguments_linear( provider ):
    ''' Huge arguments in small fragments are read in linear time: 4 MB in
        100-byte fragments well within a bound that quadratic joining
        (about 80 GB of copies) could never meet.
    '''
    value = 'x' * ( 4 * 1024 * 1024 )
    text = json.dumps( { 'a': value } )
    fragments = [ text[ i : i + 100 ] for i in range( 0, len( text ), 100 ) ]
    events = _STREAMERS[ provider ]( [ ( 'c1', 'f', text ) ] )
    if provider in ( 'anthropic', 'openai', 'cohere', 'openai-responses' ):
        events = _fragment( provider, events, fragments )
    started = time.monotonic( )
    emitted = _stream( provider, events )
    elapsed = time.monotonic( ) - started
    assert len( emitted[ 0 ].arguments[ 'a' ] ) == len( value )
    assert elapsed < 60


def _fragment( provider, events, fragments ):
    ''' Replaces the argument event of a stream by one per fragment. '''
    fragmented = [ ]
    for event in events:
        if not _is_argument_delta( provider, event ):
            if provider == 'openai-responses' and 'item' in event:
                event = dict( event, item = dict(
                    event[ 'item' ], arguments = None ) )
            fragmented.append( event )
            continue
        for fragment in fragments:
            copied = copy.deepcopy( event )
            _replace_fragment( provider, copied, fragment )
            fragmented.append( copied )
    return fragmented


def _is_argument_delta( provider, event ):
    if not isinstance( event, dict ): return False
    match provider:
        case 'anthropic': return event[ 'type' ] == 'content_block_delta'
        case 'cohere': return event[ 'type' ] == 'tool-call-delta'
        case 'openai':
            return bool( event[ 'choices' ] ) and 'tool_calls' in event[
                'choices' ][ 0 ][ 'delta' ]
        case _: return event[ 'type' ].endswith( 'arguments.delta' )


def _replace_fragment( provider, event, fragment ):
    match provider:
        case 'anthropic': event[ 'delta' ][ 'partial_json' ] = fragment
        case 'openai':
            event[ 'choices' ][ 0 ][ 'delta' ][ 'tool_calls' ][ 0 ][
                'function' ][ 'arguments' ] = fragment
        case 'cohere':
            event[ 'delta' ][ 'message' ][ 'tool_calls' ][ 'function' ][
                'arguments' ] = fragment
        case _: event[ 'delta' ] = fragment


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_180_deep_arguments_invalid( provider ):
    ''' Arguments nested beyond any sense give an invalid call or the
        package's error, never a recursion error.
    '''
    text = '{"a":' + '[' * 100_000 + ']' * 100_000 + '}'
    events = _STREAMERS[ provider ]( [ ( 'c1', 'f', '{}' ) ] )
    events = json.loads( json.dumps( events ).replace(
        json.dumps( '{}' ), json.dumps( text ) ) )
    if provider == 'gemini':
        with pytest.raises( exceptions.Omnierror ):
            _stream( provider, [ json.dumps( events[ 0 ] ).replace(
                '"args": {}', '"args": ' + text ) ] )
        return
    emitted = _stream( provider, events )
    assert emitted[ 0 ].arguments == { }
    assert 'nested too deeply' in emitted[ 0 ].invalidity


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_190_repeated_streams_ignored_or_refused( provider ):
    ''' A stream whose events all come twice gives each call once, or the
        package's error: never a call twice.
    '''
    events = _STREAMERS[ provider ]( [
        ( 'c1', 'f', '{"a": 1}' ), ( 'c2', 'g', '{"b": 2}' ) ] )
    try: emitted = _stream( provider, [ *events, *events ] )
    except exceptions.ResponseInvalidity: return
    assert sorted( i.identifier for i in emitted ) == [ 'c1', 'c2' ]


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_200_message_of_stream( provider ):
    ''' Where an accumulator assembles messages, the message holds each call
        once, with its id and arguments.
    '''
    events = _STREAMERS[ provider ]( [
        ( 'c1', 'f', '{"a": 1}' ), ( None, 'g', '{"b": 2}' ) ] )
    accumulator = produce_processor( provider ).produce_accumulator( )
    emitted = [ ]
    for event in events: emitted.extend( accumulator.ingest( event ) )
    emitted.extend( accumulator.conclude( ) )
    try: message = accumulator.produce_message( )
    except exceptions.ProviderNoSupport:
        assert provider == 'openai-responses'
        return
    text = json.dumps( message )
    for invocation in emitted:
        if provider in ( 'gemini', 'ollama' ) and (
            invocation.identifier.startswith( 'call_' )
        ): continue
        assert text.count( json.dumps( invocation.identifier ) ) == 1
