# SPDX-License-Identifier: Apache-2.0

''' Anthropic Messages processor: tools, calls, streams, results. '''


import base64

import anthropic.types
import pydantic
import pytest

from hypothesis import HealthCheck, given, settings

import invocables

from invocables import exceptions
from invocables.processors import produce_processor

from . import replay


_PNG = b'\x89PNG\r\n\x1a\n' + b'\x00' * 16
_tools_adapter = pydantic.TypeAdapter(
    list[ anthropic.types.ToolParam ],
    config = pydantic.ConfigDict( extra = 'forbid' ) )
_messages_adapter = pydantic.TypeAdapter(
    list[ anthropic.types.MessageParam ] )
_events_adapter = pydantic.TypeAdapter(
    anthropic.types.RawMessageStreamEvent )
_captures = [
    capture for capture in replay.survey_captures( )
    if capture.provider == 'anthropic' ]


def get_weather( location: str, units: str = 'c' ) -> str:
    ''' Returns weather at location. '''
    return f"Sunny in {location} ({units})."


def snapshot( ) -> bytes:
    ''' Returns a picture. '''
    return _PNG


def _produce_ensembles( ):
    return [ invocables.produce_ensemble(
        'weather', [ get_weather, snapshot ] ) ]


def _use( identifier, name, arguments ):
    return {
        'type': 'tool_use', 'id': identifier, 'name': name,
        'input': arguments }


def _message( *blocks, stop = 'tool_use' ):
    return {
        'id': 'msg_1', 'type': 'message', 'role': 'assistant',
        'model': 'claude', 'content': list( blocks ), 'stop_reason': stop,
        'stop_sequence': None,
        'usage': { 'input_tokens': 1, 'output_tokens': 1 } }


def _stream( *events ):
    return [ _events_adapter.validate_python( event ) for event in events ]


def _start( index, identifier, name, initial = None ):
    return {
        'type': 'content_block_start', 'index': index,
        'content_block': {
            'type': 'tool_use', 'id': identifier, 'name': name,
            'input': { } if initial is None else initial } }


def _delta( index, fragment ):
    return {
        'type': 'content_block_delta', 'index': index,
        'delta': { 'type': 'input_json_delta', 'partial_json': fragment } }


def _stop( index ):
    return { 'type': 'content_block_stop', 'index': index }


def _ingest( events, processor = None ):
    accumulator = ( processor or produce_processor( 'anthropic' ) ) \
        .produce_accumulator( )
    emitted = [ ]
    for event in events: emitted.extend( accumulator.ingest( event ) )
    emitted.extend( accumulator.conclude( ) )
    return emitted


def test_100_prepare_tools( ):
    ''' Tools are name, description and input schema, as the SDK types. '''
    tools = produce_processor( 'anthropic' ).prepare_tools(
        _produce_ensembles( ) )
    _tools_adapter.validate_python( tools )
    assert [ tool[ 'name' ] for tool in tools ] == [ 'get_weather', 'snapshot' ]
    assert tools[ 0 ][ 'description' ] == 'Returns weather at location.'
    assert tools[ 0 ][ 'input_schema' ][ 'required' ] == [ 'location' ]


def test_110_prepare_tools_scoped_and_plain( ):
    ''' Colliding names are scoped; empty descriptions are left out. '''
    async def probe( context, arguments ): return 'ok'
    first = invocables.produce_ensemble( 'first', [
        invocables.produce_invoker( probe, name = 'probe', description = '',
            arguments_schema = { 'type': 'object' } ) ] )
    second = invocables.produce_ensemble( 'second', [
        invocables.produce_invoker( probe, name = 'probe', description = '',
            arguments_schema = { 'type': 'object' } ) ] )
    tools = produce_processor( 'anthropic' ).prepare_tools( [ first, second ] )
    _tools_adapter.validate_python( tools )
    assert [ tool[ 'name' ] for tool in tools ] == [
        'first__probe', 'second__probe' ]
    assert all( 'description' not in tool for tool in tools )


def test_120_prepare_tools_one_bad_schema( ):
    ''' A schema Anthropic refuses leaves only that tool out. '''
    async def odd( context, arguments ): return 'ok'
    bad = invocables.produce_invoker( odd, name = 'odd', arguments_schema = {
        'type': 'object', 'properties': { 'a': { 'type': 'string' } },
        'anyOf': [ { 'required': [ 'a' ] }, { 'type': 'string' } ] } )
    ensemble = invocables.produce_ensemble( 'mixed', [ bad, get_weather ] )
    with pytest.warns( exceptions.ToolExclusionWarning ):
        tools = produce_processor( 'anthropic' ).prepare_tools( [ ensemble ] )
    assert [ tool[ 'name' ] for tool in tools ] == [ 'get_weather' ]


def test_200_normalize_dict_and_typed( ):
    ''' Dicts and SDK messages give the same canisters. '''
    body = _message(
        { 'type': 'text', 'text': 'Checking.' },
        _use( 'toolu_1', 'get_weather', { 'location': 'Paris' } ),
        _use( 'toolu_2', 'get_weather', { 'location': 'Rome' } ) )
    processor = produce_processor( 'anthropic' )
    plain = processor.normalize_invocations( body )
    typed = processor.normalize_invocations(
        anthropic.types.Message.model_validate( body ) )
    for invocations in ( plain, typed ):
        assert [ ( i.identifier, i.name, i.arguments ) for i in invocations ] \
            == [ ( 'toolu_1', 'get_weather', { 'location': 'Paris' } ),
                 ( 'toolu_2', 'get_weather', { 'location': 'Rome' } ) ]


def test_210_normalize_skips_server_blocks( ):
    ''' Server-executed blocks and other content are skipped. '''
    body = _message(
        { 'type': 'thinking', 'thinking': 'hm', 'signature': 's' },
        { 'type': 'server_tool_use', 'id': 'srvtoolu_1',
          'name': 'web_search', 'input': { 'query': 'x' } },
        { 'type': 'web_search_tool_result', 'tool_use_id': 'srvtoolu_1',
          'content': [ ] },
        { 'type': 'text', 'text': 'done' }, stop = 'end_turn' )
    assert produce_processor( 'anthropic' ).normalize_invocations( body ) \
        == ( )


def test_220_normalize_error_body( ):
    ''' Error bodies raise provider failure with status and type. '''
    body = {
        'type': 'error',
        'error': { 'type': 'overloaded_error', 'message': 'Overloaded' } }
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        produce_processor( 'anthropic' ).normalize_invocations( body )
    failure = caught.value
    assert ( failure.status, failure.genus, failure.message ) == (
        529, 'overloaded_error', 'Overloaded' )


def test_230_normalize_truncated( ):
    ''' A tool_use block cut off by max_tokens raises interruption. '''
    body = _message(
        _use( 'toolu_1', 'make_file', { } ), stop = 'max_tokens' )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        produce_processor( 'anthropic' ).normalize_invocations( body )
    assert caught.value.names == ( 'make_file', )


def test_235_normalize_truncated_says_what( ):
    ''' A whole reply cut off says the stop reason, not "end of stream",
        and names only the cut-off block.
    '''
    body = _message(
        _use( 'toolu_1', 'get_weather', { 'location': 'Oslo' } ),
        _use( 'toolu_2', 'make_file', { } ), stop = 'max_tokens' )
    with pytest.raises( exceptions.InvocationTruncation ) as caught:
        produce_processor( 'anthropic' ).normalize_invocations( body )
    assert caught.value.names == ( 'make_file', )
    assert 'end of stream' not in str( caught.value )
    assert "stopped for reason 'max_tokens'" in str( caught.value )


def test_240_normalize_message_param( ):
    ''' Message params with text content or string input are read. '''
    processor = produce_processor( 'anthropic' )
    assert processor.normalize_invocations(
        { 'role': 'assistant', 'content': 'plain' } ) == ( )
    invocations = processor.normalize_invocations( {
        'role': 'assistant',
        'content': [ _use( None, 'f', '{"a": 1}' ), _use( '', 'f', None ) ] } )
    assert [ i.arguments for i in invocations ] == [ { 'a': 1 }, { } ]
    assert len( { i.identifier for i in invocations } ) == 2
    blocks = [ _use( 'toolu_1', 'f', { } ), 1, 'text' ]
    invocations = processor.normalize_invocations( blocks )
    assert [ i.identifier for i in invocations ] == [ 'toolu_1' ]


def test_250_normalize_malformed( ):
    ''' Malformed shapes raise response invalidity. '''
    processor = produce_processor( 'anthropic' )
    for body in (
        { 'content': { 'type': 'tool_use' } },
        { 'content': [ { 'type': 'tool_use', 'name': 5 } ] },
        'text', None, 5,
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )


def test_255_normalize_foreign_payloads( ):
    ''' Empty or foreign payloads raise instead of giving no calls. '''
    processor = produce_processor( 'anthropic' )
    for body in (
        { },
        { 'choices': [ { 'index': 0, 'message': {
            'role': 'assistant', 'tool_calls': [ {
                'id': 'c', 'type': 'function',
                'function': { 'name': 'f', 'arguments': '{}' } } ] } } ] },
        { 'role': 'assistant', 'content': None, 'tool_calls': [ ] },
        { 'candidates': [ ] },
        { 'output': [ ] },
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )


def test_260_normalize_bad_input( ):
    ''' Input which is not an object gives an invalid canister. '''
    invocations = produce_processor( 'anthropic' ).normalize_invocations(
        _message( _use( 'toolu_1', 'f', [ 1 ] ) ) )
    assert invocations[ 0 ].arguments == { }
    assert 'array' in invocations[ 0 ].invalidity


def test_300_accumulate_typed( ):
    ''' Typed stream events give each call at its block stop. '''
    events = _stream(
        { 'type': 'message_start', 'message': _message( stop = None ) },
        { 'type': 'content_block_start', 'index': 0,
          'content_block': { 'type': 'text', 'text': '' } },
        { 'type': 'content_block_delta', 'index': 0,
          'delta': { 'type': 'text_delta', 'text': 'Hi' } },
        _stop( 0 ),
        _start( 1, 'toolu_a', 'get_weather' ),
        _delta( 1, '' ), _delta( 1, '{"location": ' ), _delta( 1, '"Oslo"}' ),
        _stop( 1 ),
        _start( 2, 'toolu_b', 'snapshot' ), _stop( 2 ),
        { 'type': 'message_delta', 'delta': { 'stop_reason': 'tool_use' },
          'usage': { 'output_tokens': 5 } },
        { 'type': 'message_stop' } )
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    emitted = [ accumulator.ingest( event ) for event in events ]
    assert [ len( batch ) for batch in emitted ] == [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0 ]
    assert emitted[ 8 ][ 0 ].arguments == { 'location': 'Oslo' }
    assert ( emitted[ 10 ][ 0 ].identifier, emitted[ 10 ][ 0 ].arguments ) \
        == ( 'toolu_b', { } )
    assert accumulator.conclude( ) == ( )


def test_310_accumulate_labels( ):
    ''' Events without type are read by their SSE label. '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    start = _start( 0, 'toolu_a', 'f' )
    del start[ 'type' ]
    accumulator.ingest( start, 'content_block_start' )
    emitted = accumulator.ingest( { 'index': 0 }, 'content_block_stop' )
    assert [ i.identifier for i in emitted ] == [ 'toolu_a' ]


def test_320_accumulate_error_event( ):
    ''' Error events raise provider failure. '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        accumulator.ingest( { 'type': 'error', 'error': {
            'type': 'rate_limit_error', 'message': 'Slow down' } } )
    assert caught.value.status == 429


def test_330_accumulate_initial_input( ):
    ''' Whole input at block start is used when no fragment follows. '''
    emitted = _ingest( [
        _start( 0, 'toolu_a', 'f', { 'k': 'v' } ), _stop( 0 ) ] )
    assert emitted[ 0 ].arguments == { 'k': 'v' }


def test_340_accumulate_server_tools_ignored( ):
    ''' Deltas of server tools are ignored. '''
    emitted = _ingest( [
        { 'type': 'content_block_start', 'index': 0, 'content_block': {
            'type': 'server_tool_use', 'id': 'srvtoolu_1', 'name': 'x',
            'input': { } } },
        _delta( 0, '{"code": 1}' ), _stop( 0 ) ] )
    assert emitted == [ ]


def test_350_accumulate_truncated( ):
    ''' A block without stop is never emitted; conclusion names it. '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    for event in (
        _start( 0, 'toolu_a', 'make_file' ), _delta( 0, '{"lines": ["a' ),
        { 'type': 'message_delta', 'delta': { 'stop_reason': 'max_tokens' } },
    ): assert accumulator.ingest( event ) == ( )
    partials = accumulator.survey_partials( )
    assert partials[ 0 ].text == '{"lines": ["a'
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'make_file', )
    assert 'max_tokens' in str( caught.value )


def test_360_accumulate_second_message( ):
    ''' A new id at a reused index (next message) is a new call. '''
    emitted = _ingest( [
        _start( 0, 'toolu_a', 'f' ), _delta( 0, '{}' ), _stop( 0 ),
        _start( 0, 'toolu_b', 'f' ), _delta( 0, '{"n": 2}' ), _stop( 0 ) ] )
    assert [ ( i.identifier, i.arguments ) for i in emitted ] == [
        ( 'toolu_a', { } ), ( 'toolu_b', { 'n': 2 } ) ]


def test_370_accumulate_stopped_then_truncated( ):
    ''' A stopped block with broken JSON cut by max_tokens is never run. '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    for event in (
        _start( 0, 'toolu_a', 'good' ), _delta( 0, '{}' ),
        _start( 1, 'toolu_b', 'make_file' ), _delta( 1, '{"lines": ["a' ),
    ): assert accumulator.ingest( event ) == ( )
    assert len( accumulator.ingest( _stop( 0 ) ) ) == 1
    assert accumulator.ingest( _stop( 1 ) ) == ( )
    assert accumulator.ingest( {
        'type': 'message_delta', 'delta': { 'stop_reason': 'max_tokens' },
        'usage': { 'output_tokens': 1 } } ) == ( )
    assert accumulator.ingest( { 'type': 'message_stop' } ) == ( )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'make_file', )
    assert accumulator.conclude( ) == ( )


def test_380_accumulate_stopped_broken_json( ):
    ''' Broken JSON in a finished message is emitted as invalid. '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    for event in (
        _start( 0, 'toolu_a', 'f' ), _delta( 0, '{"a": 1' ), _stop( 0 ),
    ): assert accumulator.ingest( event ) == ( )
    emitted = accumulator.ingest( {
        'type': 'message_delta', 'delta': { 'stop_reason': 'tool_use' },
        'usage': { 'output_tokens': 1 } } )
    assert emitted[ 0 ].identifier == 'toolu_a'
    assert 'not valid JSON' in emitted[ 0 ].invalidity
    accumulator.ingest( _start( 0, 'toolu_b', 'f' ) )
    accumulator.ingest( _delta( 0, '[' ) )
    accumulator.ingest( _stop( 0 ) )
    emitted = accumulator.ingest( { 'type': 'message_stop' } )
    assert [ i.identifier for i in emitted ] == [ 'toolu_b' ]


def test_385_accumulate_foreign_events( ):
    ''' Events without a type raise; unknown types and deltas are ignored.
    '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    for event in (
        { 'type': 'brand_new_event', 'index': 0 },
        { 'type': 'content_block_start', 'index': 0,
          'content_block': { 'type': 'brand_new_block' } },
        { 'type': 'content_block_delta', 'index': 0,
          'delta': { 'type': 'brand_new_delta', 'x': 1 } },
        { 'type': 'text', 'text': 'helper event of the SDK stream' },
    ): assert accumulator.ingest( event ) == ( )
    for event in (
        { }, { 'choices': [ ] }, { 'candidates': [ ] },
        { 'type': 'content_block_start', 'index': 1 },
        { 'type': 'content_block_stop' },
        _delta( None, '{}' ),
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( event )


def test_390_accumulate_refuses_reuse( ):
    ''' A concluded accumulator refuses the events of another stream. '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    accumulator.ingest( _start( 0, 'toolu_a', 'f' ) )
    accumulator.ingest( { 'type': 'message_delta',
                          'delta': { 'stop_reason': 'max_tokens' } } )
    with pytest.raises( exceptions.InvocationInterruption ):
        accumulator.conclude( )
    with pytest.raises( exceptions.AccumulatorReuseInvalidity ):
        accumulator.ingest( _start( 0, 'toolu_b', 'f' ) )


def test_395_produce_message( ):
    ''' The accumulator gives the assistant message: every block, joined,
        with the calls as emitted, valid for the SDK.
    '''
    events = _stream(
        { 'type': 'message_start', 'message': _message( stop = None ) },
        { 'type': 'content_block_start', 'index': 0, 'content_block': {
            'type': 'thinking', 'thinking': '', 'signature': '' } },
        { 'type': 'content_block_delta', 'index': 0, 'delta': {
            'type': 'thinking_delta', 'thinking': 'Weather ' } },
        { 'type': 'content_block_delta', 'index': 0, 'delta': {
            'type': 'thinking_delta', 'thinking': 'needed.' } },
        { 'type': 'content_block_delta', 'index': 0, 'delta': {
            'type': 'signature_delta', 'signature': 'c2ln' } },
        _stop( 0 ),
        { 'type': 'content_block_start', 'index': 1,
          'content_block': { 'type': 'text', 'text': '' } },
        { 'type': 'content_block_delta', 'index': 1,
          'delta': { 'type': 'text_delta', 'text': 'Checking' } },
        { 'type': 'content_block_delta', 'index': 1,
          'delta': { 'type': 'text_delta', 'text': '.' } },
        _stop( 1 ),
        _start( 2, 'toolu_a', 'get_weather' ),
        _delta( 2, '{"location": ' ), _delta( 2, '"Oslo"}' ), _stop( 2 ),
        { 'type': 'message_delta', 'delta': { 'stop_reason': 'tool_use' },
          'usage': { 'output_tokens': 5 } },
        { 'type': 'message_stop' } )
    for typed in ( False, True ):
        accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
        for event in events:
            accumulator.ingest(
                event if typed else event.model_dump( mode = 'json' ) )
        accumulator.conclude( )
        message = accumulator.produce_message( )
        assert message[ 'role' ] == 'assistant'
        blocks = message[ 'content' ]
        assert [ block[ 'type' ] for block in blocks ] == [
            'thinking', 'text', 'tool_use' ]
        assert blocks[ 0 ][ 'thinking' ] == 'Weather needed.'
        assert blocks[ 0 ][ 'signature' ] == 'c2ln'
        assert blocks[ 1 ][ 'text' ] == 'Checking.'
        assert ( blocks[ 2 ][ 'id' ], blocks[ 2 ][ 'input' ] ) == (
            'toolu_a', { 'location': 'Oslo' } )
        _messages_adapter.validate_python( [ message ] )
    assert events[ 1 ].content_block.thinking == ''


def test_396_produce_message_leaves_out_cut_calls( ):
    ''' Calls cut off are not in the message; server tools are kept. '''
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    for event in (
        { 'type': 'content_block_start', 'index': 0, 'content_block': {
            'type': 'server_tool_use', 'id': 'srvtoolu_1',
            'name': 'web_search', 'input': { } } },
        _delta( 0, '{"query": ' ), _delta( 0, '"weather"}' ), _stop( 0 ),
        _start( 1, 'toolu_b', 'make_file' ), _delta( 1, '{"lines": [' ),
        { 'type': 'message_delta', 'delta': { 'stop_reason': 'max_tokens' } },
    ): assert accumulator.ingest( event ) == ( )
    with pytest.raises( exceptions.InvocationInterruption ):
        accumulator.conclude( )
    assert accumulator.produce_message( ) == {
        'role': 'assistant', 'content': [ {
            'type': 'server_tool_use', 'id': 'srvtoolu_1',
            'name': 'web_search', 'input': { 'query': 'weather' } } ] }


def test_400_nativize_results( ):
    ''' Results become one user message of tool_result blocks. '''
    genera = invocables.FaultGenera
    results = [
        invocables.ResultCanister(
            invocation_id = 'toolu_1',
            content = ( invocables.TextContent( text = 'Sunny.' ), ) ),
        invocables.ResultCanister(
            invocation_id = 'toolu_2',
            content = (
                invocables.ImageContent( data = _PNG, media_type = 'image/png' ),
                invocables.ImageContent(
                    data = b'BM', media_type = 'image/bmp' ),
                invocables.StructureContent( data = { 'a': 1 } ),
                invocables.TextContent( text = '' ) ) ),
        invocables.ResultCanister(
            invocation_id = 'toolu_3',
            error = invocables.Fault(
                genus = genera.Absence, message = "Unknown tool 'x'." ) ),
        invocables.ResultCanister( invocation_id = 'toolu_4' ),
        invocables.ResultCanister(
            invocation_id = 'toolu_5',
            content = (
                invocables.ResourceContent(
                    uri = 'file:///a.pdf', media_type = 'application/pdf',
                    data = b'%PDF-1.4' ),
                invocables.ResourceContent( uri = 'file:///b.txt', text = 'B' ),
                invocables.AudioContent(
                    data = b'RIFF', media_type = 'audio/wav' ) ) ),
    ]
    messages = produce_processor( 'anthropic' ).nativize_results( results )
    _messages_adapter.validate_python( messages )
    assert len( messages ) == 1
    assert messages[ 0 ][ 'role' ] == 'user'
    blocks = messages[ 0 ][ 'content' ]
    assert [ block[ 'tool_use_id' ] for block in blocks ] == [
        'toolu_1', 'toolu_2', 'toolu_3', 'toolu_4', 'toolu_5' ]
    assert blocks[ 0 ][ 'content' ] == [ { 'type': 'text', 'text': 'Sunny.' } ]
    image, standin, structure = blocks[ 1 ][ 'content' ]
    assert image[ 'source' ][ 'data' ] == base64.b64encode( _PNG ).decode( )
    assert 'image/bmp' in standin[ 'text' ]
    assert structure[ 'text' ] == '{"a": 1}'
    assert blocks[ 2 ][ 'is_error' ] is True
    assert "Unknown tool 'x'." in blocks[ 2 ][ 'content' ][ 0 ][ 'text' ]
    assert 'content' not in blocks[ 3 ]
    assert 'is_error' not in blocks[ 3 ]
    kinds = [ block[ 'type' ] for block in blocks[ 4 ][ 'content' ] ]
    assert kinds == [ 'document', 'text', 'text' ]


def test_410_nativize_nothing( ):
    ''' No results give no message. '''
    assert produce_processor( 'anthropic' ).nativize_results( [ ] ) == [ ]


@pytest.mark.asyncio
async def test_500_round_trip( ):
    ''' Prepare, normalize, execute and nativize, with ids matched. '''
    processor = produce_processor( 'anthropic' )
    ensembles = _produce_ensembles( )
    tools = processor.prepare_tools( ensembles )
    body = _message(
        _use( 'toolu_w', tools[ 0 ][ 'name' ], { 'location': 'Lima' } ),
        _use( 'toolu_s', tools[ 1 ][ 'name' ], { } ),
        _use( 'toolu_x', 'nonesuch', { } ),
        _use( 'toolu_v', tools[ 0 ][ 'name' ], { 'units': 'k' } ) )
    invocations = processor.normalize_invocations(
        anthropic.types.Message.model_validate( body ) )
    async with ensembles[ 0 ]:
        results = await processor.execute_invocations(
            invocations, ensembles )
    messages = processor.nativize_results( results )
    _messages_adapter.validate_python( messages )
    blocks = messages[ 0 ][ 'content' ]
    assert [ block[ 'tool_use_id' ] for block in blocks ] == [
        'toolu_w', 'toolu_s', 'toolu_x', 'toolu_v' ]
    assert blocks[ 0 ][ 'content' ][ 0 ][ 'text' ] == 'Sunny in Lima (c).'
    assert blocks[ 1 ][ 'content' ][ 0 ][ 'type' ] == 'image'
    assert blocks[ 2 ][ 'is_error' ] and blocks[ 3 ][ 'is_error' ]
    assert 'location' in blocks[ 3 ][ 'content' ][ 0 ][ 'text' ]


@pytest.mark.asyncio
async def test_510_round_trip_streamed( ):
    ''' Calls from a stream run and come back matched by id. '''
    processor = produce_processor( 'anthropic' )
    ensembles = _produce_ensembles( )
    emitted = _ingest( _stream(
        _start( 0, 'toolu_a', 'get_weather' ),
        _delta( 0, '{"location":' ), _delta( 0, ' "Quito"}' ), _stop( 0 ) ),
        processor )
    results = await processor.execute_invocations( emitted, ensembles )
    messages = processor.nativize_results( results )
    assert messages[ 0 ][ 'content' ][ 0 ][ 'tool_use_id' ] == 'toolu_a'


@settings(
    max_examples = 300, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( replay.produce_json_strategy( ) )
def test_900_normalize_arbitrary( body ):
    ''' Arbitrary JSON bodies give canisters or package errors. '''
    replay.check_normalize_robust( produce_processor( 'anthropic' ), body )


@settings(
    max_examples = 300, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( replay.produce_events_strategy( _captures ) )
def test_910_ingest_arbitrary( events ):
    ''' Arbitrary and mangled event sequences never crash otherwise. '''
    replay.check_events_robust( produce_processor( 'anthropic' ), events )
