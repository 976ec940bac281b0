# SPDX-License-Identifier: Apache-2.0

''' Gemini processor: fixtures, typed objects, partial arguments, results. '''


import json
import threading
import warnings

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import invocables

from invocables import exceptions
from invocables.processors import produce_processor


_FIXTURES = Path( __file__ ).parents[ 1 ] / 'data' / 'providers'
_EXPECTATIONS = json.loads(
    ( _FIXTURES / 'expected.json' ).read_text( encoding = 'utf-8' ) )
_NAMES = sorted(
    name for name in _EXPECTATIONS if name.startswith( 'gemini/' ) )


def _split_sse( body: bytes ):
    ''' Yields data of each server-sent event (LF or CRLF framing).

        A body without any ``data:`` line (an error sent as plain JSON under
        an event-stream type) is yielded whole, as one event.
    '''
    text = body.decode( 'utf-8' )
    lines = text.replace( '\r\n', '\n' ).replace( '\r', '\n' ).split( '\n' )
    if not any( line.startswith( 'data:' ) for line in lines ):
        if text.strip( ): yield text
        return
    data: list[ str ] = [ ]
    for line in [ *lines, '' ]:
        if not line:
            if data: yield '\n'.join( data )
            data = [ ]
        elif line.startswith( 'data:' ):
            data.append( line[ 5 : ].removeprefix( ' ' ) )


def _replay( processor, body: bytes, typed = False ):
    from google.genai import types
    accumulator = processor.produce_accumulator( )
    invocations = [ ]
    for data in _split_sse( body ):
        event = json.loads( data )
        if typed and 'error' not in event:
            event = types.GenerateContentResponse.model_validate( event )
        invocations.extend( accumulator.ingest( event ) )
    invocations.extend( accumulator.conclude( ) )
    return invocations


def _extract( processor, name: str, typed = False ):
    body = ( _FIXTURES / name ).read_bytes( )
    if _EXPECTATIONS[ name ][ 'streaming' ] and name.endswith( '.sse' ):
        return _replay( processor, body, typed )
    if _EXPECTATIONS[ name ][ 'streaming' ]:
        return _replay( processor, body, typed )
    message = json.loads( body )
    if typed and 'error' not in message:
        from google.genai import types
        message = types.GenerateContentResponse.model_validate( message )
    return list( processor.normalize_invocations( message ) )


def _check( invocations, expected ):
    assert [ ( item.name, dict( item.arguments ) ) for item in invocations ] == [
        ( call[ 'name' ], call[ 'arguments' ] ) for call in expected ]
    for invocation, call in zip( invocations, expected ):
        if call[ 'id' ] is not None:
            assert invocation.identifier == call[ 'id' ]
        assert invocation.identifier
        assert invocation.invalidity is invocables.__.absent
    identifiers = [ item.identifier for item in invocations ]
    assert len( set( identifiers ) ) == len( identifiers )


@pytest.mark.parametrize( 'name', _NAMES )
def test_100_fixtures_plain( name ):
    ''' Every Gemini fixture gives the expected calls (or provider error). '''
    processor = produce_processor( 'gemini' )
    expectation = _EXPECTATIONS[ name ]
    if expectation[ 'http_status' ] >= 400:
        with pytest.raises( exceptions.ProviderFailure ) as caught:
            _extract( processor, name )
        assert caught.value.status == expectation[ 'http_status' ]
        assert caught.value.genus == 'NOT_FOUND'
        assert 'is not found' in caught.value.message
        return
    invocations = _extract( processor, name )
    _check( invocations, expectation[ 'expected' ] )
    again = _extract( processor, name )
    assert [ item.identifier for item in again ] == [
        item.identifier for item in invocations ]


@pytest.mark.parametrize(
    'name', [ name for name in _NAMES
              if _EXPECTATIONS[ name ][ 'http_status' ] < 400 ] )
def test_110_fixtures_typed( name ):
    ''' google-genai typed responses give the same calls as dictionaries. '''
    processor = produce_processor( 'gemini' )
    typed = _extract( processor, name, typed = True )
    plain = _extract( processor, name )
    _check( typed, _EXPECTATIONS[ name ][ 'expected' ] )
    assert [ ( item.identifier, item.name, dict( item.arguments ) )
             for item in typed ] == [
        ( item.identifier, item.name, dict( item.arguments ) )
        for item in plain ]


def test_120_error_body_through_accumulator( ):
    ''' Plain JSON error under an event-stream type raises, not empties. '''
    body = ( _FIXTURES / 'gemini/stream-error-404-model-not-found.json' )
    events = list( _split_sse( body.read_bytes( ) ) )
    assert len( events ) == 1
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    with pytest.raises( exceptions.ProviderFailure ):
        accumulator.ingest( events[ 0 ] )


def test_130_crlf_framing_kept( ):
    ''' Fixtures read as bytes keep their CRLF framing, and split right. '''
    body = ( _FIXTURES / 'gemini/int-args-stream.sse' ).read_bytes( )
    assert b'\r\n\r\n' in body
    assert len( list( _split_sse( body ) ) ) == 2


def test_140_thought_signature_not_a_call( ):
    ''' Parts with only text or a thought signature give no calls. '''
    processor = produce_processor( 'gemini' )
    message = { 'candidates': [ { 'content': { 'role': 'model', 'parts': [
        { 'text': 'thinking', 'thought': True, 'thoughtSignature': 'abc' },
        { 'text': '' },
        { 'functionCall': { 'name': 'f', 'args': { 'x': 1 } },
          'thoughtSignature': 'xyz' } ] } } ] }
    invocations = processor.normalize_invocations( message )
    assert [ ( item.name, dict( item.arguments ) ) for item in invocations ] == [
        ( 'f', { 'x': 1 } ) ]


def test_150_parallel_calls_distinct_ids( ):
    ''' Identical parallel calls without ids get distinct, stable ids. '''
    processor = produce_processor( 'gemini' )
    part = { 'functionCall': { 'name': 'f', 'args': { 'x': 1 } } }
    message = { 'candidates': [ { 'content': { 'parts': [ part, part ] } } ] }
    first = processor.normalize_invocations( message )
    second = processor.normalize_invocations( message )
    assert len( { item.identifier for item in first } ) == 2
    assert [ item.identifier for item in first ] == [
        item.identifier for item in second ]


def test_160_ids_kept_and_echoed( ):
    ''' Ids sent by the provider are kept and sent back with results. '''
    processor = produce_processor( 'gemini' )
    message = { 'candidates': [ { 'content': { 'parts': [
        { 'functionCall': { 'id': 'fc-1', 'name': 'f', 'args': { } } } ] } } ] }
    invocation, = processor.normalize_invocations( message )
    assert invocation.identifier == 'fc-1'
    result = invocables.ResultCanister(
        invocation_id = 'fc-1', name = 'f',
        content = ( invocables.TextContent( text = 'ok' ), ) )
    content, = processor.nativize_results( [ result ] )
    assert content[ 'parts' ][ 0 ][ 'function_response' ] == {
        'name': 'f', 'id': 'fc-1', 'response': { 'result': 'ok' } }


def test_170_accepts_candidate_content_and_text( ):
    ''' A candidate or a content is accepted too. '''
    processor = produce_processor( 'gemini' )
    content = { 'parts': [ { 'functionCall': { 'name': 'f' } } ] }
    for message in ( content, { 'content': content } ):
        invocation, = processor.normalize_invocations( message )
        assert invocation.name == 'f'
        assert dict( invocation.arguments ) == { }
    assert processor.normalize_invocations( { 'candidates': [ ] } ) == ( )


def test_180_malformed_input_is_response_invalidity( ):
    ''' Malformed shapes raise the library's response invalidity. '''
    processor = produce_processor( 'gemini' )
    for message in (
        { 'candidates': 3 },
        { 'candidates': [ { 'content': { 'parts': 5 } } ] },
        { 'candidates': [ { 'content': { 'parts': [
            { 'functionCall': { 'name': 5 } } ] } } ] },
        'not json',
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( message )


def test_190_arguments_not_object_marked_invalid( ):
    ''' Arguments which are not an object give an invalid invocation. '''
    processor = produce_processor( 'gemini' )
    message = { 'candidates': [ { 'content': { 'parts': [
        { 'functionCall': { 'name': 'f', 'args': [ 1, 2 ] } } ] } } ] }
    invocation, = processor.normalize_invocations( message )
    assert invocation.invalidity is not invocables.__.absent


def _chunk( *calls, finish = None ):
    candidate = { 'content': { 'role': 'model', 'parts': [
        { 'functionCall': call } for call in calls ] } }
    if finish: candidate[ 'finishReason' ] = finish
    return { 'candidates': [ candidate ] }


def test_200_partial_arguments_nested_and_typed( ):
    ''' Partial arguments assemble nested paths, numbers, booleans. '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    assert accumulator.ingest( _chunk(
        { 'name': 'plan', 'willContinue': True } ) ) == ( )
    assert accumulator.ingest( _chunk( { 'partialArgs': [
        { 'jsonPath': '$.trip.city', 'stringValue': 'San ',
          'willContinue': True },
        { 'jsonPath': '$.days', 'numberValue': 3 } ],
        'willContinue': True } ) ) == ( )
    assert accumulator.ingest( _chunk( { 'partialArgs': [
        { 'jsonPath': '$.trip.city', 'stringValue': 'Jose' },
        { 'jsonPath': '$.stops[1]', 'stringValue': 'b' },
        { 'jsonPath': '$.stops[0]', 'stringValue': 'a' },
        { 'jsonPath': "$['odd key']", 'boolValue': False },
        { 'jsonPath': '$.nothing', 'nullValue': 'NULL_VALUE' } ],
        'willContinue': True } ) ) == ( )
    partial, = accumulator.survey_partials( )
    assert partial.name == 'plan'
    assert json.loads( partial.text )[ 'trip' ] == { 'city': 'San Jose' }
    invocation, = accumulator.ingest( _chunk( { } ) )
    assert dict( invocation.arguments ) == {
        'trip': { 'city': 'San Jose' }, 'days': 3, 'stops': [ 'a', 'b' ],
        'odd key': False, 'nothing': None }
    assert accumulator.conclude( ) == ( )


def test_210_partial_call_cut_off( ):
    ''' A partial call open at the end of stream is reported, not run. '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    accumulator.ingest( _chunk( { 'name': 'getWeather', 'willContinue': True } ) )
    accumulator.ingest( _chunk( { 'partialArgs': [
        { 'jsonPath': '$.location', 'stringValue': 'Bos',
          'willContinue': True } ], 'willContinue': True },
        finish = 'MAX_TOKENS' ) )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'getWeather', )
    assert 'MAX_TOKENS' in caught.value.reason


def test_220_whole_and_partial_interleaved( ):
    ''' Whole calls are emitted at once, even beside an open partial one. '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    accumulator.ingest( _chunk( { 'name': 'a', 'willContinue': True } ) )
    emitted = accumulator.ingest( _chunk( { 'name': 'b', 'args': { 'x': 1 } } ) )
    assert [ item.name for item in emitted ] == [ 'b' ]
    emitted = accumulator.ingest( _chunk( { 'name': 'c', 'willContinue': True } ) )
    assert [ item.name for item in emitted ] == [ 'a' ]
    emitted = accumulator.ingest( _chunk( { 'name': 'd', 'partialArgs': [
        { 'jsonPath': '$.k', 'stringValue': 'v' } ] } ) )
    assert [ ( item.name, dict( item.arguments ) ) for item in emitted ] == [
        ( 'c', { } ), ( 'd', { 'k': 'v' } ) ]
    identifiers = [ item.identifier for item in emitted ]
    assert len( set( identifiers ) ) == 2


def test_225_only_first_candidate( ):
    ''' Calls of other candidates are not dispatched, as for whole replies. '''
    processor = produce_processor( 'gemini' )
    event = { 'candidates': [
        { 'index': 1, 'content': { 'parts': [
            { 'functionCall': { 'name': 'other', 'args': { } } } ] } },
        { 'index': 0, 'content': { 'parts': [
            { 'functionCall': { 'name': 'first', 'args': { } } } ] } } ] }
    accumulator = processor.produce_accumulator( )
    assert [ item.name for item in accumulator.ingest( event ) ] == [
        'first' ]
    whole = { 'candidates': [ event[ 'candidates' ][ 1 ] ] }
    assert [ item.name for item in processor.normalize_invocations(
        whole ) ] == [ 'first' ]


def test_230_bad_json_path_is_response_invalidity( ):
    ''' Unreadable or conflicting JSON paths raise response invalidity. '''
    for paths in (
        [ 'location' ], [ '$.' ], [ '$[0]' ], [ '$.a', '$.a.b' ],
        [ '$.a[0]', '$.a.b' ],
    ):
        accumulator = produce_processor( 'gemini' ).produce_accumulator( )
        accumulator.ingest( _chunk( { 'name': 'f', 'willContinue': True } ) )
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( _chunk( { 'partialArgs': [
                { 'jsonPath': path, 'numberValue': 1 } for path in paths ],
                'willContinue': True } ) )
            accumulator.ingest( _chunk( { } ) )


def test_240_stray_closing_call_ignored( ):
    ''' An empty function call with nothing open gives nothing; an empty
        chunk is not a chunk of Gemini, and raises.
    '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    assert accumulator.ingest( _chunk( { } ) ) == ( )
    assert accumulator.ingest( '{"usageMetadata": {}}' ) == ( )
    for event in ( '{}', b'{oops', { 'choices': [ ] } ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( event )
    assert accumulator.conclude( ) == ( )


def test_250_partial_index_bounded( ):
    ''' A huge index in a JSON path raises at once, allocating nothing. '''
    for path in (
        '$.a[1000000000]', '$.a[999999999]', '$.a[5]', '$.a[0][3]',
        '$.a[' + '9' * 5000 + ']', '$' + '.a' * 100,
    ):
        accumulator = produce_processor( 'gemini' ).produce_accumulator( )
        accumulator.ingest( _chunk( { 'name': 'f', 'willContinue': True } ) )
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( _chunk( { 'partialArgs': [
                { 'jsonPath': path, 'numberValue': 1 } ],
                'willContinue': True } ) )


def test_255_partial_gaps_refused( ):
    ''' Arrays of partial arguments which miss items raise. '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    accumulator.ingest( _chunk( { 'name': 'f', 'willContinue': True } ) )
    accumulator.ingest( _chunk( { 'partialArgs': [
        { 'jsonPath': '$.b', 'numberValue': 1 },
        { 'jsonPath': '$.c', 'numberValue': 1 },
        { 'jsonPath': '$.a[2]', 'numberValue': 1 } ],
        'willContinue': True } ) )
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.ingest( _chunk( { } ) )


def test_260_sequential_streamed_calls( ):
    ''' Streamed calls one after another are each emitted once. '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    emitted = [ ]
    for city in ( 'Lima', 'Quito', 'Lima' ):
        for call in (
            { 'name': 'getWeather', 'willContinue': True },
            { 'partialArgs': [ { 'jsonPath': '$.city', 'stringValue': city } ],
              'willContinue': True },
            { },
        ): emitted.extend( accumulator.ingest( _chunk( call ) ) )
    assert [ dict( item.arguments ) for item in emitted ] == [
        { 'city': 'Lima' }, { 'city': 'Quito' }, { 'city': 'Lima' } ]
    assert len( { item.identifier for item in emitted } ) == 3


def test_265_calls_after_finish_refused( ):
    ''' A call after the candidate finished raises, not runs. '''
    accumulator = produce_processor( 'gemini' ).produce_accumulator( )
    emitted = accumulator.ingest(
        _chunk( { 'name': 'f', 'args': { } }, finish = 'STOP' ) )
    assert len( emitted ) == 1
    assert accumulator.ingest( { 'candidates': [ { 'content': {
        'parts': [ { 'text': '' } ] } } ] } ) == ( )
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.ingest( _chunk( { 'name': 'f', 'args': { } } ) )


def test_270_foreign_payloads( ):
    ''' Empty or foreign payloads raise instead of giving no calls. '''
    processor = produce_processor( 'gemini' )
    for body in (
        { },
        { 'choices': [ ] },
        { 'type': 'message', 'role': 'assistant', 'content': [ ] },
        { 'output': [ ] },
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.produce_accumulator( ).ingest( body )


def test_280_produce_message( ):
    ''' The accumulator gives the model content to append: text joined,
        calls with their arguments, thought signatures kept.
    '''
    body = ( _FIXTURES / 'gemini/vertex-partial-args-stream.sse' ).read_bytes( )
    for typed in ( False, True ):
        from google.genai import types
        accumulator = produce_processor( 'gemini' ).produce_accumulator( )
        accumulator.ingest( { 'candidates': [ { 'content': {
            'role': 'model', 'parts': [ { 'text': 'Let me ' } ] } } ] } )
        accumulator.ingest( { 'candidates': [ { 'content': {
            'role': 'model', 'parts': [ { 'text': 'look.' } ] } } ] } )
        for data in _split_sse( body ):
            event = json.loads( data )
            if typed:
                event = types.GenerateContentResponse.model_validate( event )
            accumulator.ingest( event )
        accumulator.conclude( )
        message = accumulator.produce_message( )
        assert message[ 'role' ] == 'model'
        text, first, second = message[ 'parts' ]
        assert text == { 'text': 'Let me look.' }
        assert first[ 'functionCall' ] == {
            'name': 'getWeather', 'args': { 'location': 'Boston' } }
        assert first[ 'thoughtSignature' ].startswith( 'CiMBjz1r' )
        assert second == { 'functionCall': {
            'name': 'getWeather', 'args': { 'location': 'San Francisco' } } }
        types.Content.model_validate( message )


def _tool_ensemble( ):

    def forecast( city: str, days: int = 1 ) -> dict:
        ''' Forecasts weather.

            city: Name of city.
            days: Number of days.
        '''
        return { 'city': city, 'days': days, 'sky': 'clear' }

    def shout( text: str ) -> str:
        ''' Shouts text. '''
        return text.upper( )

    def fail( ) -> str:
        ''' Refuses. '''
        raise exceptions.InvocationRefusal( "Not today." )

    free = invocables.produce_invoker(
        lambda context, arguments: 'never', name = 'free_form',
        arguments_schema = { 'type': 'object', 'properties': {
            'bag': { 'type': 'object', 'additionalProperties': True } } } )
    return invocables.produce_ensemble(
        'tools', [ forecast, shout, fail, free ] )


def test_300_prepare_tools_valid_for_sdk( ):
    ''' Tools validate as google-genai Tool; bad schema left out alone. '''
    from google.genai import types
    processor = produce_processor( 'gemini' )
    with pytest.warns( exceptions.ToolExclusionWarning ) as caught:
        tools = processor.prepare_tools( [ _tool_ensemble( ) ] )
    assert 'free_form' in str( caught[ 0 ].message )
    tool, = tools
    names = [ item[ 'name' ] for item in tool[ 'function_declarations' ] ]
    assert names == [ 'forecast', 'shout', 'fail' ]
    declarations = { item[ 'name' ]: item for item in
                     tool[ 'function_declarations' ] }
    assert 'parameters' not in declarations[ 'fail' ]
    assert declarations[ 'forecast' ][ 'parameters' ][ 'required' ] == [
        'city' ]
    typed = types.Tool.model_validate( tool )
    assert typed.function_declarations is not None
    assert len( typed.function_declarations ) == 3


def test_310_prepare_tools_json_schema_option( ):
    ''' With json_schema, schemas go in parameters_json_schema, kept whole. '''
    from google.genai import types
    processor = produce_processor( 'gemini', json_schema = True )
    with warnings.catch_warnings( ):
        warnings.simplefilter( 'error' )
        tool, = processor.prepare_tools( [ _tool_ensemble( ) ] )
    declarations = { item[ 'name' ]: item for item in
                     tool[ 'function_declarations' ] }
    assert len( declarations ) == 4
    schema = declarations[ 'free_form' ][ 'parameters_json_schema' ]
    assert schema[ 'properties' ][ 'bag' ][ 'additionalProperties' ] is True
    types.Tool.model_validate( tool )


def test_320_empty_ensembles_give_no_tool( ):
    ''' No functions give no tool at all (Gemini refuses empty lists). '''
    processor = produce_processor( 'gemini' )
    assert processor.prepare_tools( [ ] ) == [ ]


def test_330_unknown_option_refused( ):
    ''' Unknown options raise configuration invalidity. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        produce_processor( 'gemini', strict = True )


def test_400_nativize_results_shapes( ):
    ''' Results become function_response parts of one user content. '''
    from google.genai import types
    processor = produce_processor( 'gemini' )
    results = [
        invocables.ResultCanister(
            invocation_id = 'call_0_0123456789abcdef', name = 'a',
            invocation_id_synthesized = True,
            content = ( invocables.StructureContent(
                data = { 'x': 1 } ), ) ),
        invocables.ResultCanister(
            invocation_id = 'call_1_0123456789abcdef', name = 'b',
            invocation_id_synthesized = True,
            content = ( invocables.StructureContent( data = [ 1, 2 ] ), ) ),
        invocables.ResultCanister(
            invocation_id = 'call_2_0123456789abcdef', name = 'c',
            invocation_id_synthesized = True,
            error = invocables.Fault(
                genus = invocables.FaultGenera.Timeout,
                message = 'Too slow.' ) ),
        invocables.ResultCanister(
            invocation_id = 'call_3_0123456789abcdef', name = 'd',
            invocation_id_synthesized = True,
            content = ( invocables.TextContent( text = 'one' ),
                        invocables.ImageContent(
                            data = b'\x89PNG\r\n\x1a\n', media_type = 'image/png' ) ) ),
    ]
    content, = processor.nativize_results( results )
    assert content[ 'role' ] == 'user'
    responses = [ part[ 'function_response' ] for part in content[ 'parts' ] ]
    assert responses[ 0 ] == { 'name': 'a', 'response': { 'x': 1 } }
    assert responses[ 1 ] == { 'name': 'b', 'response': { 'result': [ 1, 2 ] } }
    assert responses[ 2 ] == { 'name': 'c', 'response': { 'error': 'Too slow.' } }
    assert responses[ 3 ][ 'response' ][ 'result' ].startswith( 'one\n[image' )
    types.Content.model_validate( content )
    json.dumps( content )
    assert processor.nativize_results( [ ] ) == [ ]


def test_410_nativize_media_option( ):
    ''' With media, images go in the response's inline data parts. '''
    from google.genai import types
    processor = produce_processor( 'gemini', media = True )
    result = invocables.ResultCanister(
        invocation_id = 'x1', name = 'snap',
        content = ( invocables.TextContent( text = 'a cat' ),
                    invocables.ImageContent(
                        data = b'\x89PNG\r\n\x1a\nxx', media_type = 'image/png' ) ) )
    content, = processor.nativize_results( [ result ] )
    response = content[ 'parts' ][ 0 ][ 'function_response' ]
    assert response[ 'response' ] == { 'result': 'a cat' }
    assert response[ 'parts' ][ 0 ][ 'inline_data' ][ 'mime_type' ] == 'image/png'
    typed = types.Content.model_validate( content )
    assert typed.parts is not None


@pytest.mark.asyncio
async def test_500_round_trip( ):
    ''' Prepare, normalize, execute and nativize match ids and names. '''
    from google.genai import types
    processor = produce_processor( 'gemini' )
    ensemble = _tool_ensemble( )
    async with ensemble:
        with warnings.catch_warnings( ):
            warnings.simplefilter( 'ignore' )
            processor.prepare_tools( [ ensemble ] )
        reply = types.GenerateContentResponse.model_validate( {
            'candidates': [ { 'content': { 'role': 'model', 'parts': [
                { 'functionCall': {
                    'name': 'forecast', 'args': { 'city': 'Oslo' } } },
                { 'functionCall': {
                    'name': 'shout', 'args': { 'text': 'hi' } } },
                { 'functionCall': { 'name': 'fail', 'args': { } } },
                { 'functionCall': { 'name': 'nope', 'args': { } } },
            ] } } ] } )
        invocations = processor.normalize_invocations( reply )
        results = await processor.execute_invocations(
            invocations, [ ensemble ] )
    assert [ result.invocation_id for result in results ] == [
        invocation.identifier for invocation in invocations ]
    content, = processor.nativize_results( results )
    responses = [ part[ 'function_response' ] for part in content[ 'parts' ] ]
    assert [ response[ 'name' ] for response in responses ] == [
        'forecast', 'shout', 'fail', 'nope' ]
    assert responses[ 0 ][ 'response' ] == {
        'city': 'Oslo', 'days': 1, 'sky': 'clear' }
    assert responses[ 1 ][ 'response' ] == { 'result': 'HI' }
    assert responses[ 2 ][ 'response' ] == { 'error': 'Not today.' }
    assert 'Unknown tool' in responses[ 3 ][ 'response' ][ 'error' ]
    assert all( 'id' not in response for response in responses )
    types.Content.model_validate( content )


@pytest.mark.asyncio
async def test_510_round_trip_streamed_partial( ):
    ''' Streamed partial arguments run through the engine like whole ones. '''
    processor = produce_processor( 'gemini' )
    ensemble = _tool_ensemble( )
    body = ( _FIXTURES / 'gemini/vertex-partial-args-stream.sse' ).read_bytes( )
    body = body.replace( b'getWeather', b'forecast' ).replace(
        b'$.location', b'$.city' )
    async with ensemble:
        invocations = _replay( processor, body )
        results = await processor.execute_invocations(
            invocations, [ ensemble ] )
    content, = processor.nativize_results( results )
    cities = [ part[ 'function_response' ][ 'response' ][ 'city' ]
               for part in content[ 'parts' ] ]
    assert cities == [ 'Boston', 'San Francisco' ]


def test_520_produce_processor_dispatch( ):
    ''' The dispatcher maps 'gemini' to the Gemini processor. '''
    from invocables.processors import gemini
    processor = produce_processor( 'gemini' )
    assert isinstance( processor, gemini.GeminiProcessor )
    assert processor.provider == 'gemini'


class _Replayer( BaseHTTPRequestHandler ):
    ''' Answers generateContent and streamGenerateContent with captures. '''

    def do_POST( self ):
        length = int( self.headers.get( 'Content-Length', '0' ) )
        request = json.loads( self.rfile.read( length ) )
        self.server.requests.append( ( self.path, request ) )
        if 'missing' in self.path:
            name, status = 'gemini/stream-error-404-model-not-found.json', 404
            media = 'application/json'
        elif 'streamGenerateContent' in self.path:
            name, status = self.server.stream, 200
            media = 'text/event-stream'
        else:
            name, status = 'gemini/single-function-call.json', 200
            media = 'application/json'
        body = ( _FIXTURES / name ).read_bytes( )
        self.send_response( status )
        self.send_header( 'Content-Type', media )
        self.send_header( 'Content-Length', str( len( body ) ) )
        self.end_headers( )
        self.wfile.write( body )

    def log_message( self, *arguments ):
        pass


@pytest.fixture
def replayer( ):
    server = ThreadingHTTPServer( ( '127.0.0.1', 0 ), _Replayer )
    server.requests = [ ]
    server.stream = 'gemini/vertex-partial-args-stream.sse'
    thread = threading.Thread( target = server.serve_forever, daemon = True )
    thread.start( )
    yield server
    server.shutdown( )
    server.server_close( )
    thread.join( )


async def _stream( client, processor, contents, config ):
    accumulator = processor.produce_accumulator( )
    invocations, parts = [ ], [ ]
    async for chunk in await client.aio.models.generate_content_stream(
        model = 'gemini-3-pro-preview', contents = contents, config = config
    ):
        if chunk.candidates and chunk.candidates[ 0 ].content:
            parts.extend( chunk.candidates[ 0 ].content.parts or [ ] )
        invocations.extend( accumulator.ingest( chunk ) )
    invocations.extend( accumulator.conclude( ) )
    return invocations, parts


@pytest.mark.asyncio
async def test_600_sdk_client_replay( replayer ):
    ''' Objects from the real google-genai client, whole and streamed, work;
        prepared tools and results are sent as the client takes them.
    '''
    from google import genai
    from google.genai import errors, types
    processor = produce_processor( 'gemini' )
    host, port = replayer.server_address
    client = genai.Client(
        api_key = 'dummy', http_options = types.HttpOptions(
            base_url = f"http://{host}:{port}" ) )
    ensemble = _tool_ensemble( )
    with pytest.warns( exceptions.ToolExclusionWarning ):
        tools = processor.prepare_tools( [ ensemble ] )
    config = types.GenerateContentConfig(
        tools = tools,
        automatic_function_calling = types.AutomaticFunctionCallingConfig(
            disable = True ) )
    contents = [ { 'role': 'user', 'parts': [ { 'text': 'Weather?' } ] } ]
    response = await client.aio.models.generate_content(
        model = 'gemini-2.5-flash', contents = contents, config = config )
    whole = processor.normalize_invocations( response )
    _check( whole, _EXPECTATIONS[ 'gemini/single-function-call.json' ][
        'expected' ] )
    streamed, _ = await _stream( client, processor, contents, config )
    _check( streamed, _EXPECTATIONS[ 'gemini/vertex-partial-args-stream.sse' ][
        'expected' ] )
    replayer.stream = 'gemini/int-args-stream.sse'
    streamed, parts = await _stream( client, processor, contents, config )
    assert [ item.name for item in streamed ] == [
        'customAdditionImplementation' ]
    async with ensemble:
        results = await processor.execute_invocations(
            streamed, [ ensemble ] )
    history = [
        *contents, types.Content( role = 'model', parts = parts ),
        *processor.nativize_results( results ) ]
    await client.aio.models.generate_content(
        model = 'gemini-2.5-flash', contents = history, config = config )
    path, request = replayer.requests[ -1 ]
    assert 'generateContent' in path
    sent = request[ 'contents' ][ -1 ][ 'parts' ]
    assert [ part[ 'functionResponse' ][ 'name' ] for part in sent ] == [
        'customAdditionImplementation' ]
    assert 'Unknown tool' in sent[ 0 ][ 'functionResponse' ][ 'response' ][
        'error' ]
    assert request[ 'contents' ][ 1 ][ 'parts' ][ 0 ][ 'thoughtSignature' ]
    declarations = request[ 'tools' ][ 0 ][ 'functionDeclarations' ]
    assert [ item[ 'name' ] for item in declarations ] == [
        'forecast', 'shout', 'fail' ]
    with pytest.raises( errors.ClientError ):
        await client.aio.models.generate_content(
            model = 'missing', contents = contents, config = config )
