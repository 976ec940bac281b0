# SPDX-License-Identifier: Apache-2.0

''' OpenAI Responses processor: tools, calls, streams, results. '''


import base64
import json

import openai.types.responses
import pydantic
import pytest

from hypothesis import HealthCheck, given, settings

import invocables

from invocables import exceptions
from invocables.processors import produce_processor

from . import replay


_PNG = b'\x89PNG\r\n\x1a\n' + b'\x00' * 16
_PROVIDER = 'openai-responses'
_tools_adapter = pydantic.TypeAdapter(
    list[ openai.types.responses.FunctionToolParam ],
    config = pydantic.ConfigDict( extra = 'forbid' ) )
_items_adapter = pydantic.TypeAdapter(
    list[ openai.types.responses.ResponseInputItemParam ] )
_events_adapter = pydantic.TypeAdapter(
    openai.types.responses.ResponseStreamEvent )
_captures = [
    capture for capture in replay.survey_captures( )
    if capture.provider == _PROVIDER ]


def get_capital( country: str ) -> str:
    ''' Returns capital of country. '''
    return { 'France': 'Paris' }.get( country, 'unknown' )


def snapshot( ) -> bytes:
    ''' Returns a picture. '''
    return _PNG


def _produce_ensembles( ):
    return [ invocables.produce_ensemble(
        'geography', [ get_capital, snapshot ] ) ]


def _item( item_id, call_id, name, arguments, status = 'completed' ):
    return {
        'type': 'function_call', 'id': item_id, 'call_id': call_id,
        'name': name, 'arguments': arguments, 'status': status }


def _response( *items, status = 'completed' ):
    return {
        'id': 'resp_1', 'object': 'response', 'created_at': 1,
        'status': status, 'error': None, 'incomplete_details': None,
        'instructions': None, 'model': 'gpt', 'output': list( items ),
        'parallel_tool_calls': True, 'temperature': 1.0,
        'tool_choice': 'auto', 'top_p': 1.0,
        'tools': [ {
            'type': 'function', 'name': 'get_capital', 'strict': False,
            'parameters': { 'type': 'object' } } ] }


def _added( index, item ):
    return {
        'type': 'response.output_item.added', 'output_index': index,
        'item': item, 'sequence_number': 1 }


def _delta( index, item_id, fragment ):
    return {
        'type': 'response.function_call_arguments.delta',
        'output_index': index, 'item_id': item_id, 'delta': fragment,
        'sequence_number': 1 }


def _done( index, item_id, arguments ):
    return {
        'type': 'response.function_call_arguments.done',
        'output_index': index, 'item_id': item_id, 'arguments': arguments,
        'name': 'x', 'sequence_number': 1 }


def _item_done( index, item ):
    return {
        'type': 'response.output_item.done', 'output_index': index,
        'item': item, 'sequence_number': 1 }


def _ingest( events, processor = None ):
    accumulator = ( processor or produce_processor( _PROVIDER ) ) \
        .produce_accumulator( )
    emitted = [ ]
    for event in events: emitted.extend( accumulator.ingest( event ) )
    emitted.extend( accumulator.conclude( ) )
    return emitted


def _summarize( invocations ):
    return [ ( i.identifier, i.name, i.arguments ) for i in invocations ]


def test_100_prepare_tools( ):
    ''' Tools are function tools with strict set, as the SDK types. '''
    tools = produce_processor( _PROVIDER ).prepare_tools(
        _produce_ensembles( ) )
    _tools_adapter.validate_python( tools )
    assert [ ( tool[ 'name' ], tool[ 'strict' ] ) for tool in tools ] == [
        ( 'get_capital', False ), ( 'snapshot', False ) ]


def test_110_prepare_tools_strict( ):
    ''' Strict mode gives strict schemas, or falls back per tool. '''
    async def tag( context, arguments ): return 'ok'
    loose = invocables.produce_invoker( tag, name = 'tag', arguments_schema = {
        'type': 'object',
        'patternProperties': { '^x': { 'type': 'string' } } } )
    ensembles = [ invocables.produce_ensemble(
        'mixed', [ loose, get_capital ] ) ]
    processor = produce_processor( _PROVIDER, strict = True )
    with pytest.warns(
        exceptions.ToolStrictnessWarning, match = 'tag'
    ): tools = processor.prepare_tools( ensembles )
    _tools_adapter.validate_python( tools )
    assert [ tool[ 'strict' ] for tool in tools ] == [ False, True ]


def test_200_normalize_dict_and_typed( ):
    ''' Dicts, SDK responses and output lists give call_id canisters. '''
    body = _response(
        { 'type': 'reasoning', 'id': 'rs_1', 'summary': [ ] },
        _item( 'fc_1', 'call_1', 'get_capital', '{"country": "France"}' ),
        _item( 'fc_2', 'call_2', 'snapshot', '' ) )
    processor = produce_processor( _PROVIDER )
    typed = openai.types.responses.Response.model_validate( body )
    expected = [
        ( 'call_1', 'get_capital', { 'country': 'France' } ),
        ( 'call_2', 'snapshot', { } ) ]
    assert _summarize( processor.normalize_invocations( body ) ) == expected
    assert _summarize( processor.normalize_invocations( typed ) ) == expected
    assert _summarize(
        processor.normalize_invocations( typed.output ) ) == expected


def test_210_normalize_ignores_tools( ):
    ''' Echoed tool definitions are not calls. '''
    assert produce_processor( _PROVIDER ).normalize_invocations(
        _response( ) ) == ( )


def test_220_normalize_error_bodies( ):
    ''' Error bodies and failed responses raise provider failure. '''
    processor = produce_processor( _PROVIDER )
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        processor.normalize_invocations( { 'error': {
            'message': 'No model.', 'type': 'invalid_request_error',
            'code': 'model_not_found', 'param': 'model' } } )
    assert caught.value.message == 'No model.'
    failed = _response( status = 'failed' )
    failed[ 'error' ] = { 'code': 'server_error', 'message': 'Oops.' }
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        processor.normalize_invocations( failed )
    assert caught.value.genus == 'server_error'


def test_230_normalize_incomplete( ):
    ''' Incomplete function call items raise interruption. '''
    body = _response(
        _item( 'fc_1', 'call_1', 'get_capital', '{"coun', 'incomplete' ),
        status = 'incomplete' )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        produce_processor( _PROVIDER ).normalize_invocations( body )
    assert caught.value.names == ( 'get_capital', )


def test_240_normalize_foreign_payloads( ):
    ''' Empty or foreign payloads raise instead of giving no calls. '''
    processor = produce_processor( _PROVIDER )
    for body in ( { }, { 'choices': [ ] }, { 'content': [ ] } ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )
    assert processor.normalize_invocations( { 'output': [ ] } ) == ( )


def test_300_accumulate_typed( ):
    ''' Typed events give the call at its arguments done event, once. '''
    item = _item( 'fc_1', 'call_1', 'get_capital', '', 'in_progress' )
    events = [ _events_adapter.validate_python( event ) for event in (
        _added( 0, item ),
        _delta( 0, 'fc_1', '{"country":' ), _delta( 0, 'fc_1', '"France"}' ),
        _done( 0, 'fc_1', '{"country":"France"}' ),
        _item_done( 0, _item(
            'fc_1', 'call_1', 'get_capital', '{"country":"France"}' ) ),
    ) ]
    accumulator = produce_processor( _PROVIDER ).produce_accumulator( )
    emitted = [ accumulator.ingest( event ) for event in events ]
    assert [ len( batch ) for batch in emitted ] == [ 0, 0, 0, 1, 0 ]
    assert _summarize( emitted[ 3 ] ) == [
        ( 'call_1', 'get_capital', { 'country': 'France' } ) ]
    assert accumulator.conclude( ) == ( )


def test_310_accumulate_item_done_only( ):
    ''' An item seen only when done is emitted from the item. '''
    emitted = _ingest( [
        _item_done( 4, _item( 'fc_9', 'call_9', 'snapshot', '{}' ) ) ] )
    assert _summarize( emitted ) == [ ( 'call_9', 'snapshot', { } ) ]


def test_320_accumulate_interleaved( ):
    ''' Parallel calls keyed by output index and item id may interleave. '''
    emitted = _ingest( [
        _added( 1, _item( 'fc_a', 'call_a', 'f', '' ) ),
        _added( 2, _item( 'fc_b', 'call_b', 'g', '' ) ),
        _delta( 2, 'fc_b', '{"b":' ), _delta( 1, 'fc_a', '{"a":' ),
        _delta( 1, 'fc_x', 'junk' ),
        _delta( 2, 'fc_b', '2}' ), _delta( 1, 'fc_a', '1}' ),
        _item_done( 2, _item( 'fc_b', 'call_b', 'g', '{"b":2}' ) ),
        _item_done( 1, _item( 'fc_a', 'call_a', 'f', '{"a":1}' ) ),
    ] )
    assert _summarize( emitted ) == [
        ( 'call_b', 'g', { 'b': 2 } ), ( 'call_a', 'f', { 'a': 1 } ) ]


def test_330_accumulate_incomplete( ):
    ''' Calls cut off are not emitted; conclusion names them. '''
    accumulator = produce_processor( _PROVIDER ).produce_accumulator( )
    for event in (
        _added( 0, _item( 'fc_1', 'call_1', 'write', '' ) ),
        _delta( 0, 'fc_1', '{"text": "ab' ),
        _item_done( 0, _item(
            'fc_1', 'call_1', 'write', '{"text": "ab', 'incomplete' ) ),
        { 'type': 'response.incomplete', 'response': {
            'incomplete_details': { 'reason': 'max_output_tokens' } } },
    ): assert accumulator.ingest( event ) == ( )
    assert accumulator.survey_partials( )[ 0 ].identifier == 'call_1'
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert 'max_output_tokens' in str( caught.value )


def test_340_accumulate_errors( ):
    ''' Error events and failed responses raise provider failure. '''
    accumulator = produce_processor( _PROVIDER ).produce_accumulator( )
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        accumulator.ingest( {
            'type': 'error', 'code': 'rate_limit_exceeded',
            'message': 'Slow down.', 'param': None } )
    assert caught.value.genus == 'rate_limit_exceeded'
    with pytest.raises( exceptions.ProviderFailure ):
        accumulator.ingest( { 'type': 'response.failed', 'response': {
            'error': { 'code': 'server_error', 'message': 'Oops.' } } } )


def _strip( event, *names ):
    event = json.loads( json.dumps( event ) )
    for name in names:
        event.pop( name, None )
        if isinstance( event.get( 'item' ), dict ):
            event[ 'item' ].pop( name, None )
    return event


def test_350_accumulate_items_without_ids_once( ):
    ''' A call whose item carries no id is emitted once, not again at its
        output_item.done.
    '''
    item = _item( 'fc_1', 'call_1', 'get_capital', '', 'in_progress' )
    whole = _item( 'fc_1', 'call_1', 'get_capital', '{"country":"Peru"}' )
    events = [
        _added( 0, item ), _delta( 0, 'fc_1', '{"country":"Peru"}' ),
        _done( 0, 'fc_1', '{"country":"Peru"}' ), _item_done( 0, whole ) ]
    for names in ( ( 'id', ), ( 'id', 'item_id' ), ( 'item_id', ) ):
        emitted = _ingest( [ _strip( event, *names ) for event in events ] )
        assert _summarize( emitted ) == [
            ( 'call_1', 'get_capital', { 'country': 'Peru' } ) ], names


def test_352_accumulate_item_at_other_index_once( ):
    ''' A call repeated at another output index (its item id or call id
        already emitted) is not emitted again.
    '''
    item = _item( 'fc_1', 'call_1', 'get_capital', '{"country":"Peru"}' )
    emitted = _ingest( [
        _added( 1, dict( item, arguments = '' ) ),
        _done( 1, 'fc_1', '{"country":"Peru"}' ),
        _item_done( -1, item ),
        _item_done( 7, _strip( item, 'id' ) ),
    ] )
    assert _summarize( emitted ) == [
        ( 'call_1', 'get_capital', { 'country': 'Peru' } ) ]
    body = _response( item, item )
    invocations = produce_processor( _PROVIDER ).normalize_invocations( body )
    assert [ i.identifier for i in invocations ] == [ 'call_1' ]


def test_355_accumulate_object_arguments_merged( ):
    ''' Object-valued argument deltas are merged, not refused or lost. '''
    emitted = _ingest( [
        _added( 0, _item( 'fc_1', 'call_1', 'f', '' ) ),
        _delta( 0, 'fc_1', { 'a': 1 } ), _delta( 0, 'fc_1', { 'b': 2 } ),
        _item_done( 0, _strip(
            _item( 'fc_1', 'call_1', 'f', None ), 'arguments' ) ),
    ] )
    assert _summarize( emitted ) == [ ( 'call_1', 'f', { 'a': 1, 'b': 2 } ) ]


def test_360_accumulate_foreign_events( ):
    ''' Events without a type raise; unknown types are ignored. '''
    accumulator = produce_processor( _PROVIDER ).produce_accumulator( )
    assert accumulator.ingest( { 'type': 'response.brand_new.event' } ) == ( )
    for event in ( { }, { 'choices': [ ] }, 'text' ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( event )
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.ingest( _added( None, _item( 'fc', 'c', 'f', '' ) ) )


def test_400_nativize_results( ):
    ''' Results become function call outputs, as the SDK types. '''
    results = [
        invocables.ResultCanister(
            invocation_id = 'call_1',
            content = ( invocables.TextContent( text = 'Paris' ), ) ),
        invocables.ResultCanister(
            invocation_id = 'call_2',
            content = (
                invocables.ImageContent( data = _PNG, media_type = 'image/png' ),
                invocables.ImageContent(
                    data = b'BM', media_type = 'image/bmp' ),
                invocables.TextContent( text = 'caption' ) ) ),
        invocables.ResultCanister(
            invocation_id = 'call_3',
            content = ( invocables.ImageContent(
                data = _PNG, media_type = 'image/png' ), ),
            error = invocables.Fault(
                genus = invocables.FaultGenera.Refusal, message = 'No.' ) ),
    ]
    items = produce_processor( _PROVIDER ).nativize_results( results )
    _items_adapter.validate_python( items )
    assert [ item[ 'call_id' ] for item in items ] == [
        'call_1', 'call_2', 'call_3' ]
    assert items[ 0 ][ 'output' ] == 'Paris'
    image, standin, caption = items[ 1 ][ 'output' ]
    assert image[ 'image_url' ] == (
        'data:image/png;base64,' + base64.b64encode( _PNG ).decode( ) )
    assert 'image/bmp' in standin[ 'text' ]
    assert caption == { 'type': 'input_text', 'text': 'caption' }
    assert items[ 2 ][ 'output' ][ 0 ][ 'text' ] == 'Error: No.'


@pytest.mark.asyncio
async def test_500_round_trip( ):
    ''' Prepare, normalize, execute and nativize, with ids matched. '''
    processor = produce_processor( _PROVIDER )
    ensembles = _produce_ensembles( )
    tools = processor.prepare_tools( ensembles )
    body = _response(
        _item( 'fc_1', 'call_1', tools[ 0 ][ 'name' ],
            '{"country": "France"}' ),
        _item( 'fc_2', 'call_2', tools[ 1 ][ 'name' ], '{}' ),
        _item( 'fc_3', 'call_3', 'nonesuch', '{}' ) )
    invocations = processor.normalize_invocations(
        openai.types.responses.Response.model_validate( body ) )
    async with ensembles[ 0 ]:
        results = await processor.execute_invocations(
            invocations, ensembles )
    items = processor.nativize_results( results )
    _items_adapter.validate_python( items )
    assert [ item[ 'call_id' ] for item in items ] == [
        'call_1', 'call_2', 'call_3' ]
    assert items[ 0 ][ 'output' ] == 'Paris'
    assert items[ 1 ][ 'output' ][ 0 ][ 'type' ] == 'input_image'
    assert 'nonesuch' in items[ 2 ][ 'output' ]


@settings(
    max_examples = 300, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( replay.produce_json_strategy( ) )
def test_900_normalize_arbitrary( body ):
    ''' Arbitrary JSON bodies give canisters or package errors. '''
    replay.check_normalize_robust( produce_processor( _PROVIDER ), body )


@settings(
    max_examples = 300, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( replay.produce_events_strategy( _captures ) )
def test_910_ingest_arbitrary( events ):
    ''' Arbitrary and mangled event sequences never crash otherwise. '''
    replay.check_events_robust( produce_processor( _PROVIDER ), events )
