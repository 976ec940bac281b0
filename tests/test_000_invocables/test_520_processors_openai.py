# SPDX-License-Identifier: Apache-2.0

''' OpenAI Chat Completions processor: tools, calls, streams, results. '''


import json

import openai.types.chat
import pydantic
import pytest

from hypothesis import HealthCheck, given, settings

import invocables

from invocables import exceptions
from invocables.processors import produce_processor

from . import replay


_PNG = b'\x89PNG\r\n\x1a\n' + b'\x00' * 16
_tools_adapter = pydantic.TypeAdapter(
    list[ openai.types.chat.ChatCompletionToolParam ],
    config = pydantic.ConfigDict( extra = 'forbid' ) )
_messages_adapter = pydantic.TypeAdapter(
    list[ openai.types.chat.ChatCompletionToolMessageParam ],
    config = pydantic.ConfigDict( extra = 'forbid' ) )
_assistant_adapter = pydantic.TypeAdapter(
    list[ openai.types.chat.ChatCompletionAssistantMessageParam ],
    config = pydantic.ConfigDict( extra = 'forbid' ) )
_captures = [
    capture for capture in replay.survey_captures( )
    if capture.provider == 'openai' ]


def get_weather( city: str, units: str = 'c' ) -> str:
    ''' Returns weather in city. '''
    return f"Sunny in {city} ({units})."


def snapshot( ) -> bytes:
    ''' Returns a picture. '''
    return _PNG


def _produce_ensembles( ):
    return [ invocables.produce_ensemble(
        'weather', [ get_weather, snapshot ] ) ]


def _call( identifier, name, arguments, genus = 'function' ):
    call = { 'function': { 'name': name, 'arguments': arguments } }
    if identifier is not None: call[ 'id' ] = identifier
    if genus is not None: call[ 'type' ] = genus
    return call


def _completion( *calls, stop = 'tool_calls' ):
    return {
        'id': 'chatcmpl-1', 'object': 'chat.completion', 'created': 1,
        'model': 'gpt', 'choices': [ {
            'index': 0, 'finish_reason': stop, 'logprobs': None,
            'message': {
                'role': 'assistant', 'content': None,
                'tool_calls': list( calls ) or None } } ] }


def _chunk( *deltas, stop = None, choice = 0 ):
    delta = { 'tool_calls': list( deltas ) } if deltas else { }
    return {
        'id': 'chatcmpl-1', 'object': 'chat.completion.chunk', 'created': 1,
        'model': 'gpt', 'choices': [ {
            'index': choice, 'delta': delta, 'finish_reason': stop } ] }


def _delta( index, identifier = None, name = None, arguments = None ):
    delta = { 'index': index, 'function': { } }
    if identifier is not None:
        delta[ 'id' ] = identifier
        delta[ 'type' ] = 'function'
    if name is not None: delta[ 'function' ][ 'name' ] = name
    if arguments is not None: delta[ 'function' ][ 'arguments' ] = arguments
    return delta


def _ingest( events, processor = None ):
    accumulator = ( processor or produce_processor( 'openai' ) ) \
        .produce_accumulator( )
    emitted = [ ]
    for event in events: emitted.extend( accumulator.ingest( event ) )
    emitted.extend( accumulator.conclude( ) )
    return emitted


def _summarize( invocations ):
    return [ ( i.identifier, i.name, i.arguments ) for i in invocations ]


def test_100_prepare_tools( ):
    ''' Tools are function tools, as the SDK types. '''
    tools = produce_processor( 'openai' ).prepare_tools( _produce_ensembles( ) )
    _tools_adapter.validate_python( tools )
    assert [ tool[ 'function' ][ 'name' ] for tool in tools ] == [
        'get_weather', 'snapshot' ]
    assert all( 'strict' not in tool[ 'function' ] for tool in tools )


def test_110_prepare_tools_strict( ):
    ''' Strict mode makes every property required and nullable. '''
    tools = produce_processor( 'openai', strict = True ).prepare_tools(
        _produce_ensembles( ) )
    _tools_adapter.validate_python( tools )
    function = tools[ 0 ][ 'function' ]
    assert function[ 'strict' ] is True
    assert function[ 'parameters' ][ 'required' ] == [ 'city', 'units' ]
    assert function[ 'parameters' ][ 'additionalProperties' ] is False


def test_120_prepare_tools_strict_fallback( ):
    ''' A schema strict mode cannot express is offered without it. '''
    async def tag( context, arguments ): return 'ok'
    loose = invocables.produce_invoker( tag, name = 'tag', arguments_schema = {
        'type': 'object',
        'patternProperties': { '^x': { 'type': 'string' } } } )
    ensemble = invocables.produce_ensemble( 'mixed', [ loose, get_weather ] )
    processor = produce_processor( 'openai', strict = True )
    with pytest.warns(
        exceptions.ToolStrictnessWarning, match = 'tag'
    ): tools = processor.prepare_tools( [ ensemble ] )
    _tools_adapter.validate_python( tools )
    assert [ tool[ 'function' ].get( 'strict' ) for tool in tools ] == [
        None, True ]
    assert 'patternProperties' in tools[ 0 ][ 'function' ][ 'parameters' ]


def test_200_normalize_dict_and_typed( ):
    ''' Dicts and SDK completions give the same canisters. '''
    body = _completion(
        _call( 'call_1', 'get_weather', '{"city": "Paris"}' ),
        _call( 'call_2', 'snapshot', '' ) )
    processor = produce_processor( 'openai' )
    typed = openai.types.chat.ChatCompletion.model_validate( body )
    expected = [
        ( 'call_1', 'get_weather', { 'city': 'Paris' } ),
        ( 'call_2', 'snapshot', { } ) ]
    assert _summarize( processor.normalize_invocations( body ) ) == expected
    assert _summarize( processor.normalize_invocations( typed ) ) == expected
    assert _summarize( processor.normalize_invocations(
        typed.choices[ 0 ].message ) ) == expected
    assert _summarize( processor.normalize_invocations(
        typed.choices[ 0 ] ) ) == expected


def test_210_normalize_compatible_servers( ):
    ''' Object arguments and missing ids and types are accepted. '''
    body = _completion(
        _call( None, 'get_weather', { 'city': 'Lima' }, genus = None ),
        _call( None, 'get_weather', { 'city': 'Lima' }, genus = None ),
        _call( 'c3', 'snapshot', 'null' ) )
    invocations = produce_processor( 'openai' ).normalize_invocations( body )
    assert [ i.arguments for i in invocations ] == [
        { 'city': 'Lima' }, { 'city': 'Lima' }, { } ]
    identifiers = [ i.identifier for i in invocations ]
    assert len( set( identifiers ) ) == 3
    assert identifiers == [
        i.identifier for i in
        produce_processor( 'openai' ).normalize_invocations( body ) ]


def test_220_normalize_skips_custom_tools( ):
    ''' Custom tool calls are not function calls. '''
    body = _completion( {
        'id': 'c1', 'type': 'custom',
        'custom': { 'name': 'x', 'input': 'y' } } )
    assert produce_processor( 'openai' ).normalize_invocations( body ) == ( )


def test_230_normalize_error_body( ):
    ''' Error bodies raise provider failure. '''
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        produce_processor( 'openai' ).normalize_invocations( { 'error': {
            'message': 'No such model.', 'type': 'invalid_request_error',
            'code': 'model_not_found' } } )
    assert caught.value.genus == 'invalid_request_error'
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        produce_processor( 'openai' ).normalize_invocations(
            { 'error': 'model does not support tools' } )
    assert caught.value.message == 'model does not support tools'


def test_240_normalize_truncated( ):
    ''' Calls cut off by length raise interruption. '''
    body = _completion(
        _call( 'c1', 'get_weather', '{"city": "Par' ), stop = 'length' )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        produce_processor( 'openai' ).normalize_invocations( body )
    assert caught.value.names == ( 'get_weather', )


def test_245_normalize_truncated_names_only_cut_calls( ):
    ''' A whole reply stopped on length names only the calls it cut off,
        and says what happened (not "end of stream").
    '''
    body = _completion(
        _call( 'c1', 'get_weather', '{"city": "Paris"}' ),
        _call( 'c2', 'snapshot', '' ),
        _call( 'c3', 'get_weather', '{"city": "Par' ), stop = 'length' )
    with pytest.raises( exceptions.InvocationTruncation ) as caught:
        produce_processor( 'openai' ).normalize_invocations( body )
    assert caught.value.names == ( 'snapshot', 'get_weather' )
    message = str( caught.value )
    assert 'end of stream' not in message
    assert "stopped for reason 'length'" in message
    whole = _completion(
        _call( 'c1', 'get_weather', '{"city": "Paris"}' ), stop = 'length' )
    invocation, = produce_processor( 'openai' ).normalize_invocations( whole )
    assert invocation.arguments == { 'city': 'Paris' }


def test_250_normalize_invalid_arguments( ):
    ''' Undecodable arguments give canisters with invalidity. '''
    body = _completion(
        _call( 'c1', 'get_weather', '{"city": "Paris"' ),
        _call( 'c2', 'get_weather', '["Paris"]' ) )
    invocations = produce_processor( 'openai' ).normalize_invocations( body )
    assert all( not invocables.__.is_absent( i.invalidity )
                for i in invocations )


def test_260_normalize_empty( ):
    ''' Completions without choices or calls give nothing. '''
    processor = produce_processor( 'openai' )
    assert processor.normalize_invocations( { 'choices': [ ] } ) == ( )
    assert processor.normalize_invocations(
        _completion( stop = 'stop' ) ) == ( )


def test_265_normalize_foreign_payloads( ):
    ''' Empty or foreign payloads raise instead of giving no calls. '''
    processor = produce_processor( 'openai' )
    for body in (
        { },
        { 'type': 'message', 'role': 'assistant', 'content': [ {
            'type': 'tool_use', 'id': 't', 'name': 'f', 'input': { } } ] },
        { 'candidates': [ ] },
        { 'output': [ ] },
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )


def test_270_normalize_choice_option( ):
    ''' Option 'choice' selects the choice read, by its index. '''
    body = _completion( _call( 'a', 'f', '{}' ) )
    other = dict( body[ 'choices' ][ 0 ], index = 1, message = {
        'role': 'assistant', 'tool_calls': [ _call( 'b', 'g', '{}' ) ] } )
    body[ 'choices' ] = [ other, body[ 'choices' ][ 0 ] ]
    first = produce_processor( 'openai' ).normalize_invocations( body )
    second = produce_processor(
        'openai', choice = 1 ).normalize_invocations( body )
    assert [ i.identifier for i in first ] == [ 'a' ]
    assert [ i.identifier for i in second ] == [ 'b' ]
    for choice in ( -1, '1', True ):
        with pytest.raises( exceptions.ConfigurationInvalidity ):
            produce_processor( 'openai', choice = choice )
    absent = produce_processor( 'openai', choice = 2 )
    with pytest.raises( exceptions.ResponseInvalidity ):
        absent.normalize_invocations( body )
    accumulator = absent.produce_accumulator( )
    accumulator.ingest( _chunk( _delta( 0, 'a', 'f', '{}' ) ) )
    accumulator.ingest( _chunk( stop = 'tool_calls' ) )
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.conclude( )


def test_300_accumulate_typed( ):
    ''' Typed chunks give calls at finish reason. '''
    chunks = [
        _chunk( _delta( 0, 'call_a', 'get_weather', '' ) ),
        _chunk( _delta( 0, arguments = '{"city":' ) ),
        _chunk( _delta( 1, 'call_b', 'snapshot', '{}' ) ),
        _chunk( _delta( 0, arguments = ' "Oslo"}' ) ),
        _chunk( stop = 'tool_calls' ),
    ]
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    emitted = [
        accumulator.ingest(
            openai.types.chat.ChatCompletionChunk.model_validate( chunk ) )
        for chunk in chunks ]
    assert [ len( batch ) for batch in emitted ] == [ 0, 0, 0, 0, 2 ]
    assert _summarize( emitted[ 4 ] ) == [
        ( 'call_a', 'get_weather', { 'city': 'Oslo' } ),
        ( 'call_b', 'snapshot', { } ) ]
    assert accumulator.ingest( '[DONE]' ) == ( )
    assert accumulator.conclude( ) == ( )


def test_310_accumulate_shared_index( ):
    ''' Calls sharing an index but not an id are distinct calls. '''
    emitted = _ingest( [
        _chunk( _delta( 0, 'call_a', 'f', '{"n": 1}' ) ),
        _chunk( _delta( 0, 'call_b', 'f', '{"n": 2}' ) ),
        _chunk( _delta( 0, 'call_c', 'g', '{"n"' ) ),
        _chunk( _delta( 0, arguments = ': 3}' ) ),
        _chunk( stop = 'tool_calls' ),
    ] )
    assert _summarize( emitted ) == [
        ( 'call_a', 'f', { 'n': 1 } ), ( 'call_b', 'f', { 'n': 2 } ),
        ( 'call_c', 'g', { 'n': 3 } ) ]


def test_320_accumulate_without_ids( ):
    ''' Whole calls without ids or index get distinct synthesized ids. '''
    emitted = _ingest( [
        { 'choices': [ { 'delta': { 'tool_calls': [
            { 'function': { 'name': 'f', 'arguments': { 'n': 1 } } },
            { 'function': { 'name': 'g', 'arguments': { 'n': 2 } } },
        ] } } ] },
        { 'choices': [ { 'delta': { }, 'finish_reason': 'tool_calls' } ] },
    ] )
    assert [ ( i.name, i.arguments ) for i in emitted ] == [
        ( 'f', { 'n': 1 } ), ( 'g', { 'n': 2 } ) ]
    assert len( { i.identifier for i in emitted } ) == 2


def test_330_accumulate_done_completes( ):
    ''' [DONE] completes calls when no finish reason came. '''
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    accumulator.ingest( _chunk( _delta( 3, 'call_a', 'f', '{}' ) ) )
    emitted = accumulator.ingest( '[DONE]' )
    assert _summarize( emitted ) == [ ( 'call_a', 'f', { } ) ]


def test_340_accumulate_truncated( ):
    ''' Calls cut off by length are never emitted. '''
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    accumulator.ingest( _chunk( _delta( 0, 'call_a', 'f', '{"x": [' ) ) )
    assert accumulator.ingest( _chunk( stop = 'length' ) ) == ( )
    assert accumulator.ingest( '[DONE]' ) == ( )
    assert accumulator.survey_partials( )[ 0 ].text == '{"x": ['
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert 'length' in str( caught.value )


def test_350_accumulate_cut_stream( ):
    ''' Calls open when the stream ends are interrupted. '''
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    accumulator.ingest( _chunk( _delta( 0, 'call_a', 'f', '{}' ) ) )
    with pytest.raises( exceptions.InvocationInterruption ):
        accumulator.conclude( )


def test_360_accumulate_first_choice_only( ):
    ''' With n > 1, streams give the calls of the choice which whole
        replies give: the first one.
    '''
    processor = produce_processor( 'openai' )
    chunks = [
        _chunk( _delta( 0, 'a', 'f', '{}' ), choice = 0 ),
        _chunk( _delta( 0, 'b', 'g', '{}' ), choice = 1 ),
        _chunk( stop = 'tool_calls', choice = 1 ),
        _chunk( stop = 'tool_calls', choice = 0 ),
    ]
    assert [ i.identifier for i in _ingest( chunks, processor ) ] == [ 'a' ]
    body = _completion( _call( 'a', 'f', '{}' ) )
    body[ 'choices' ].append( dict(
        body[ 'choices' ][ 0 ], index = 1, message = {
            'role': 'assistant', 'tool_calls': [ _call( 'b', 'g', '{}' ) ] } ) )
    assert [ i.identifier for i in processor.normalize_invocations(
        body ) ] == [ 'a' ]
    other = produce_processor( 'openai', choice = 1 )
    assert [ i.identifier for i in _ingest( chunks, other ) ] == [ 'b' ]
    assert [ i.identifier for i in other.normalize_invocations(
        body ) ] == [ 'b' ]


def test_370_accumulate_error_chunk( ):
    ''' Error payloads in a stream raise provider failure. '''
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    with pytest.raises( exceptions.ProviderFailure ):
        accumulator.ingest( { 'error': {
            'message': 'Server error', 'type': 'server_error' } } )


def test_380_accumulate_object_arguments_later( ):
    ''' Object arguments in a delta after the opening one are merged, never
        dropped.
    '''
    emitted = _ingest( [
        _chunk( _delta( 0, 'call_a', 'get_weather' ) ),
        _chunk( _delta( 0, arguments = { 'city': 'Lima' } ) ),
        _chunk( _delta( 0, arguments = { 'units': 'f' } ) ),
        _chunk( stop = 'tool_calls' ),
    ] )
    assert _summarize( emitted ) == [
        ( 'call_a', 'get_weather', { 'city': 'Lima', 'units': 'f' } ) ]
    assert invocables.__.is_absent( emitted[ 0 ].invalidity )


def test_385_accumulate_unreadable_arguments_invalid( ):
    ''' Arguments which cannot be read give an invalid call, never {}. '''
    emitted = _ingest( [
        _chunk( _delta( 0, 'a', 'f', '{"x": 1}' ) ),
        _chunk( _delta( 0, arguments = { 'y': 2 } ) ),
        _chunk( _delta( 1, 'b', 'g' ) ),
        _chunk( _delta( 1, arguments = [ 1 ] ) ),
        _chunk( _delta( 2, 'c', 'h', '[1]' ) ),
        _chunk( _delta( 3, 'd', 'k', '3' ) ),
        _chunk( stop = 'tool_calls' ),
    ] )
    assert [ i.identifier for i in emitted ] == [ 'a', 'b', 'c', 'd' ]
    assert all( i.arguments == { } for i in emitted )
    assert all( not invocables.__.is_absent( i.invalidity ) for i in emitted )


def test_390_accumulate_truncated_names_only_cut_calls( ):
    ''' A stream stopped on length emits the calls with whole arguments and
        interrupts only those cut off.
    '''
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    accumulator.ingest( _chunk( _delta( 0, 'a', 'f', '{"x": 1}' ) ) )
    accumulator.ingest( _chunk( _delta( 1, 'b', 'g', '{"y": [' ) ) )
    emitted = accumulator.ingest( _chunk( stop = 'length' ) )
    assert [ i.identifier for i in emitted ] == [ 'a' ]
    assert accumulator.ingest( '[DONE]' ) == ( )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'g', )


def test_395_accumulate_refuses_reuse( ):
    ''' An accumulator concluded after truncation refuses a new stream,
        rather than keeping its truncation state.
    '''
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    accumulator.ingest( _chunk( _delta( 0, 'a', 'f', '{"x": [' ) ) )
    accumulator.ingest( _chunk( stop = 'length' ) )
    with pytest.raises( exceptions.InvocationInterruption ):
        accumulator.conclude( )
    with pytest.raises( exceptions.AccumulatorReuseInvalidity ):
        accumulator.ingest( _chunk( _delta( 0, 'b', 'g', '{}' ) ) )


def test_398_produce_message( ):
    ''' The accumulator gives the assistant message to append: text, and
        calls with their ids and arguments as sent.
    '''
    accumulator = produce_processor( 'openai' ).produce_accumulator( )
    for chunk in (
        { 'choices': [ { 'index': 0, 'delta': {
            'role': 'assistant', 'content': 'Let me ' } } ] },
        { 'choices': [ { 'index': 0, 'delta': { 'content': 'check.' } } ] },
        _chunk( _delta( 0, 'call_a', 'get_weather', '{"city":' ) ),
        _chunk( _delta( 0, arguments = ' "Oslo"}' ) ),
        { 'choices': [ { 'delta': { 'tool_calls': [ {
            'index': 1, 'function': { 'name': 'snapshot',
                                      'arguments': { } } } ] } } ] },
        _chunk( stop = 'tool_calls' ),
    ): accumulator.ingest( chunk )
    invocations = accumulator.ingest( '[DONE]' ) + accumulator.conclude( )
    assert invocations == ( )
    message = accumulator.produce_message( )
    identifier = accumulator.survey_invocations( )[ 1 ].invocation.identifier
    assert message == {
        'role': 'assistant', 'content': 'Let me check.',
        'tool_calls': [
            { 'id': 'call_a', 'type': 'function', 'function': {
                'name': 'get_weather', 'arguments': '{"city": "Oslo"}' } },
            { 'id': identifier, 'type': 'function', 'function': {
                'name': 'snapshot', 'arguments': '{}' } } ] }
    _assistant_adapter.validate_python( [ message ] )
    empty = produce_processor( 'openai' ).produce_accumulator( )
    empty.ingest( { 'choices': [ { 'delta': { 'content': 'Hi.' },
                                   'finish_reason': 'stop' } ] } )
    assert empty.produce_message( ) == {
        'role': 'assistant', 'content': 'Hi.' }


def test_400_nativize_results( ):
    ''' Results become tool messages of text, as the SDK types. '''
    results = [
        invocables.ResultCanister(
            invocation_id = 'call_1',
            content = ( invocables.TextContent( text = 'Sunny.' ), ) ),
        invocables.ResultCanister(
            invocation_id = 'call_2',
            content = (
                invocables.ImageContent( data = _PNG, media_type = 'image/png' ),
                invocables.StructureContent( data = { 'a': 1 } ) ) ),
        invocables.ResultCanister(
            invocation_id = 'call_3',
            error = invocables.Fault(
                genus = invocables.FaultGenera.Timeout, message = 'Slow.' ) ),
    ]
    messages = produce_processor( 'openai' ).nativize_results( results )
    _messages_adapter.validate_python( messages )
    assert [ message[ 'tool_call_id' ] for message in messages ] == [
        'call_1', 'call_2', 'call_3' ]
    assert messages[ 0 ][ 'content' ] == 'Sunny.'
    assert 'image/png' in messages[ 1 ][ 'content' ]
    assert '{"a": 1}' in messages[ 1 ][ 'content' ]
    assert messages[ 2 ][ 'content' ] == 'Error: Slow.'


@pytest.mark.asyncio
async def test_500_round_trip( ):
    ''' Prepare, normalize, execute and nativize, with ids matched. '''
    processor = produce_processor( 'openai' )
    ensembles = _produce_ensembles( )
    tools = processor.prepare_tools( ensembles )
    names = [ tool[ 'function' ][ 'name' ] for tool in tools ]
    body = _completion(
        _call( 'call_w', names[ 0 ], json.dumps( { 'city': 'Lima' } ) ),
        _call( '', names[ 1 ], '' ),
        _call( 'call_x', names[ 0 ], '{"city": ' ) )
    invocations = processor.normalize_invocations(
        openai.types.chat.ChatCompletion.model_validate( body ) )
    async with ensembles[ 0 ]:
        results = await processor.execute_invocations(
            invocations, ensembles )
    messages = processor.nativize_results( results )
    _messages_adapter.validate_python( messages )
    assert [ message[ 'tool_call_id' ] for message in messages ] == [
        invocation.identifier for invocation in invocations ]
    assert messages[ 0 ][ 'content' ] == 'Sunny in Lima (c).'
    assert 'image/png' in messages[ 1 ][ 'content' ]
    assert 'not valid JSON' in messages[ 2 ][ 'content' ]


@pytest.mark.asyncio
async def test_510_round_trip_strict( ):
    ''' In strict mode, nulls for optional properties are removed. '''
    processor = produce_processor( 'openai', strict = True )
    ensembles = _produce_ensembles( )
    emitted = _ingest( [
        _chunk( _delta( 0, 'call_a', 'get_weather',
            '{"city": "Quito", "units": null}' ) ),
        _chunk( stop = 'tool_calls' ) ], processor )
    results = await processor.execute_invocations( emitted, ensembles )
    messages = processor.nativize_results( results )
    assert messages == [ {
        'role': 'tool', 'tool_call_id': 'call_a',
        'content': 'Sunny in Quito (c).' } ]


@settings(
    max_examples = 300, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( replay.produce_json_strategy( ) )
def test_900_normalize_arbitrary( body ):
    ''' Arbitrary JSON bodies give canisters or package errors. '''
    replay.check_normalize_robust( produce_processor( 'openai' ), body )


@settings(
    max_examples = 300, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( replay.produce_events_strategy( _captures ) )
def test_910_ingest_arbitrary( events ):
    ''' Arbitrary and mangled event sequences never crash otherwise. '''
    replay.check_events_robust( produce_processor( 'openai' ), events )
