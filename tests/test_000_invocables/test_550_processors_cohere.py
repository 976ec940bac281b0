# SPDX-License-Identifier: Apache-2.0

''' Cohere v2 processor: fixtures, typed objects, SDK replay, results. '''


import asyncio
import json
import threading

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
    name for name in _EXPECTATIONS if name.startswith( 'cohere/' ) )


def _split_sse( body: bytes ):
    ''' Yields ( event name or None, data ) of each server-sent event. '''
    text = body.decode( 'utf-8' ).replace( '\r\n', '\n' )
    for block in text.split( '\n\n' ):
        label = None
        data: list[ str ] = [ ]
        for line in block.split( '\n' ):
            if line.startswith( 'event:' ): label = line[ 6 : ].strip( )
            elif line.startswith( 'data:' ):
                data.append( line[ 5 : ].removeprefix( ' ' ) )
        if data: yield label, '\n'.join( data )


def _typed_event( event ):
    from cohere.core.unchecked_base_model import construct_type
    from cohere.v2 import V2ChatStreamResponse
    return construct_type( type_ = V2ChatStreamResponse, object_ = event )


def _typed_response( body ):
    from cohere.core.unchecked_base_model import construct_type
    from cohere.v2 import V2ChatResponse
    return construct_type( type_ = V2ChatResponse, object_ = body )


def _replay( processor, body: bytes, mode = 'plain' ):
    accumulator = processor.produce_accumulator( )
    invocations = [ ]
    for label, data in _split_sse( body ):
        if mode == 'text': event = data
        elif data.strip( ) == '[DONE]': continue
        elif mode == 'typed': event = _typed_event( json.loads( data ) )
        else: event = json.loads( data )
        if mode == 'label' and isinstance( event, dict ):
            event.pop( 'type', None )
        invocations.extend( accumulator.ingest(
            event, label if label else invocables.__.absent ) )
    invocations.extend( accumulator.conclude( ) )
    return invocations


def _extract( processor, name: str, mode = 'plain' ):
    body = ( _FIXTURES / name ).read_bytes( )
    if name.endswith( '.sse' ): return _replay( processor, body, mode )
    message = json.loads( body )
    if mode == 'typed': message = _typed_response( message )
    return list( processor.normalize_invocations( message ) )


def _summarize( invocations ):
    return [
        { 'id': item.identifier, 'name': item.name,
          'arguments': dict( item.arguments ) }
        for item in invocations ]


@pytest.mark.parametrize( 'mode', [ 'plain', 'typed', 'text', 'label' ] )
@pytest.mark.parametrize( 'name', _NAMES )
def test_100_fixtures( name, mode ):
    ''' Every Cohere fixture gives the expected calls, in every form. '''
    processor = produce_processor( 'cohere' )
    invocations = _extract( processor, name, mode )
    assert _summarize( invocations ) == _EXPECTATIONS[ name ][ 'expected' ]


def test_110_error_body( ):
    ''' Cohere error bodies raise provider failure with the message. '''
    processor = produce_processor( 'cohere' )
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        processor.normalize_invocations( {
            'id': 'abc', 'message': 'invalid request: model not found' } )
    assert 'model not found' in caught.value.message
    accumulator = processor.produce_accumulator( )
    with pytest.raises( exceptions.ProviderFailure ):
        accumulator.ingest( {
            'type': 'message-end',
            'delta': { 'error': 'stream broke', 'finish_reason': 'ERROR' } } )


def _event( genus, index = None, **delta ):
    event = { 'type': genus }
    if index is not None: event[ 'index' ] = index
    if delta: event[ 'delta' ] = delta
    return event


def _start( index, identifier, name, arguments = '' ):
    return _event(
        'tool-call-start', index, message = { 'tool_calls': {
            'id': identifier, 'type': 'function',
            'function': { 'name': name, 'arguments': arguments } } } )


def _delta( index, fragment ):
    return _event(
        'tool-call-delta', index, message = { 'tool_calls': {
            'function': { 'arguments': fragment } } } )


def test_200_stream_deltas_joined( ):
    ''' Argument deltas are joined; each call completes at its end. '''
    accumulator = produce_processor( 'cohere' ).produce_accumulator( )
    assert accumulator.ingest( _start( 0, 'a_1', 'weather' ) ) == ( )
    for fragment in ( '{"ci', 'ty": "Pa', 'ris"}' ):
        assert accumulator.ingest( _delta( 0, fragment ) ) == ( )
    assert accumulator.ingest( _start( 1, 'b_2', 'time', '{}' ) ) == ( )
    invocation, = accumulator.ingest( _event( 'tool-call-end', 1 ) )
    assert ( invocation.identifier, invocation.name ) == ( 'b_2', 'time' )
    invocation, = accumulator.ingest( _event( 'tool-call-end', 0 ) )
    assert dict( invocation.arguments ) == { 'city': 'Paris' }
    assert accumulator.ingest( _event(
        'message-end', finish_reason = 'TOOL_CALL' ) ) == ( )
    assert accumulator.ingest( '[DONE]' ) == ( )
    assert accumulator.conclude( ) == ( )


def test_210_stream_cut_off( ):
    ''' A call without its end is reported by name, never emitted. '''
    accumulator = produce_processor( 'cohere' ).produce_accumulator( )
    accumulator.ingest( _start( 0, 'a_1', 'weather' ) )
    accumulator.ingest( _delta( 0, '{"city": "Pa' ) )
    accumulator.ingest( _event( 'message-end', finish_reason = 'MAX_TOKENS' ) )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'weather', )
    assert 'MAX_TOKENS' in caught.value.reason


def test_220_invalid_json_not_run( ):
    ''' Arguments which are not JSON mark the call invalid. '''
    accumulator = produce_processor( 'cohere' ).produce_accumulator( )
    accumulator.ingest( _start( 0, 'a_1', 'weather', '{"city": ' ) )
    invocation, = accumulator.ingest( _event( 'tool-call-end', 0 ) )
    assert invocation.invalidity is not invocables.__.absent


def test_230_malformed_events( ):
    ''' Malformed events raise response invalidity. '''
    for event in (
        _event( 'tool-call-start', None ),
        { 'type': 'tool-call-start', 'index': 0, 'delta': {
            'message': { 'tool_calls': {
                'id': 'x', 'function': { 'name': 7 } } } } },
        'not json',
    ):
        accumulator = produce_processor( 'cohere' ).produce_accumulator( )
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( event )


def test_240_truncated_whole_response( ):
    ''' A whole response cut off by MAX_TOKENS names only the calls whose
        arguments it cut; complete calls of such a response are returned.
    '''
    body = json.loads(
        ( _FIXTURES / 'cohere/single-tool-call.json' ).read_bytes( ) )
    body[ 'finish_reason' ] = 'MAX_TOKENS'
    processor = produce_processor( 'cohere' )
    invocation, = processor.normalize_invocations( body )
    assert dict( invocation.arguments ) == { 'city': 'Paris' }
    cut = json.loads( json.dumps( body[ 'message' ][ 'tool_calls' ][ 0 ] ) )
    cut[ 'function' ].update( name = 'forecast', arguments = '{"city": "Pa' )
    body[ 'message' ][ 'tool_calls' ].append( cut )
    with pytest.raises( exceptions.InvocationTruncation ) as caught:
        processor.normalize_invocations( body )
    assert caught.value.names == ( 'forecast', )
    assert 'end of stream' not in str( caught.value )


def test_250_message_alone( ):
    ''' An assistant message alone (no envelope) is accepted. '''
    body = json.loads(
        ( _FIXTURES / 'cohere/single-tool-call.json' ).read_bytes( ) )
    invocation, = produce_processor( 'cohere' ).normalize_invocations(
        body[ 'message' ] )
    assert invocation.name == 'get_weather'


def test_260_foreign_payloads( ):
    ''' Empty or foreign payloads raise instead of giving no calls. '''
    processor = produce_processor( 'cohere' )
    for body in (
        { }, { 'choices': [ ] }, { 'candidates': [ ] }, { 'output': [ ] },
        { 'type': 'message', 'role': 'assistant', 'content': [ ] },
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )
    accumulator = processor.produce_accumulator( )
    assert accumulator.ingest( _event( 'brand-new-event', 0 ) ) == ( )
    for event in ( { }, { 'choices': [ ] }, _event( 'tool-call-end' ) ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            accumulator.ingest( event )


def test_270_stream_object_arguments_merged( ):
    ''' Object-valued argument deltas are merged, not refused or lost. '''
    accumulator = produce_processor( 'cohere' ).produce_accumulator( )
    accumulator.ingest( _start( 0, 'a_1', 'weather', { 'city': 'Lima' } ) )
    accumulator.ingest( _delta( 0, { 'days': 2 } ) )
    invocation, = accumulator.ingest( _event( 'tool-call-end', 0 ) )
    assert dict( invocation.arguments ) == { 'city': 'Lima', 'days': 2 }


def test_280_produce_message( ):
    ''' The accumulator gives the assistant message: tool plan and calls
        with their arguments as sent, valid for the SDK.
    '''
    import cohere
    body = ( _FIXTURES / 'cohere/empty-args-stream.sse' ).read_bytes( )
    accumulator = produce_processor( 'cohere' ).produce_accumulator( )
    for _, data in _split_sse( body ): accumulator.ingest( data )
    accumulator.conclude( )
    message = accumulator.produce_message( )
    assert message[ 'role' ] == 'assistant'
    assert message[ 'tool_plan' ]
    assert message[ 'tool_calls' ] == [ {
        'id': 'currentTime_y46ar19t5gvw', 'type': 'function',
        'function': { 'name': 'currentTime', 'arguments': '{}' } } ]
    assert 'content' not in message
    cohere.AssistantChatMessageV2.model_validate( message )


def _tool_ensemble( ):

    def get_weather( city: str ) -> dict:
        ''' Gives weather of city.

            city: Name of city.
        '''
        return { 'city': city, 'sky': 'clear' }

    def current_time( ) -> str:
        ''' Gives current time. '''
        return '12:00'

    bad = invocables.produce_invoker(
        lambda context, arguments: 'never', name = 'bad',
        arguments_schema = { 'type': 'object', 'properties': {
            'x': { 'type': 'string' } },
            'anyOf': [ { 'type': 'string' } ] } )
    return invocables.produce_ensemble(
        'tools', [ get_weather, current_time, bad ] )


def test_300_prepare_tools_valid_for_sdk( ):
    ''' Tools validate as cohere ToolV2; a bad schema is left out alone. '''
    from cohere import ToolV2
    from pydantic import TypeAdapter
    processor = produce_processor( 'cohere' )
    with pytest.warns( exceptions.ToolExclusionWarning, match = 'bad' ):
        tools = processor.prepare_tools( [ _tool_ensemble( ) ] )
    assert [ tool[ 'function' ][ 'name' ] for tool in tools ] == [
        'get_weather', 'current_time' ]
    adapter = TypeAdapter( list[ ToolV2 ] )
    typed = adapter.validate_python( tools )
    assert typed[ 0 ].function.parameters[ 'required' ] == [ 'city' ]


def test_400_nativize_results_shapes( ):
    ''' Results become tool messages with document and text blocks. '''
    from cohere import ToolMessageV2
    from pydantic import TypeAdapter
    processor = produce_processor( 'cohere' )
    results = [
        invocables.ResultCanister(
            invocation_id = 'a', name = 'x',
            content = ( invocables.StructureContent( data = { 'k': 1 } ), ) ),
        invocables.ResultCanister(
            invocation_id = 'b', name = 'x',
            content = ( invocables.StructureContent( data = [ 1 ] ),
                        invocables.TextContent( text = 'note' ) ) ),
        invocables.ResultCanister(
            invocation_id = 'c', name = 'x',
            error = invocables.Fault(
                genus = invocables.FaultGenera.Absence,
                message = 'Unknown tool.' ) ),
        invocables.ResultCanister( invocation_id = 'd', name = 'x' ),
    ]
    messages = processor.nativize_results( results )
    assert [ message[ 'tool_call_id' ] for message in messages ] == [
        'a', 'b', 'c', 'd' ]
    assert messages[ 0 ][ 'content' ] == [
        { 'type': 'document', 'document': { 'data': { 'k': 1 } } } ]
    assert messages[ 1 ][ 'content' ] == [
        { 'type': 'document', 'document': { 'data': { 'result': [ 1 ] } } },
        { 'type': 'text', 'text': 'note' } ]
    assert messages[ 2 ][ 'content' ] == [
        { 'type': 'text', 'text': 'Error: Unknown tool.' } ]
    assert messages[ 3 ][ 'content' ][ 0 ][ 'text' ]
    adapter = TypeAdapter( ToolMessageV2 )
    for message in messages:
        adapter.validate_python(
            { key: value for key, value in message.items( ) if key != 'role' } )
    json.dumps( messages )


@pytest.mark.asyncio
async def test_500_round_trip( ):
    ''' Prepare, normalize, execute and nativize match ids. '''
    processor = produce_processor( 'cohere' )
    ensemble = _tool_ensemble( )
    body = json.loads(
        ( _FIXTURES / 'cohere/single-tool-call.json' ).read_bytes( ) )
    async with ensemble:
        invocations = processor.normalize_invocations( _typed_response( body ) )
        results = await processor.execute_invocations(
            invocations, [ ensemble ] )
    message, = processor.nativize_results( results )
    assert message[ 'tool_call_id' ] == 'get_weather_9gpb31r7h7mj'
    assert message[ 'content' ] == [ { 'type': 'document', 'document': {
        'data': { 'city': 'Paris', 'sky': 'clear' } } } ]


class _Replayer( BaseHTTPRequestHandler ):
    ''' Answers every POST with the body and type the server holds. '''

    def do_POST( self ):
        length = int( self.headers.get( 'Content-Length', '0' ) )
        request = json.loads( self.rfile.read( length ) )
        self.server.requests.append( request )
        body, media = self.server.replies[ bool( request.get( 'stream' ) ) ]
        self.send_response( 200 )
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
    server.replies = {
        False: (
            ( _FIXTURES / 'cohere/null-arguments.json' ).read_bytes( ),
            'application/json' ),
        True: (
            ( _FIXTURES / 'cohere/empty-args-stream.sse' ).read_bytes( ),
            'text/event-stream' ),
    }
    thread = threading.Thread( target = server.serve_forever, daemon = True )
    thread.start( )
    yield server
    server.shutdown( )
    server.server_close( )
    thread.join( )


@pytest.mark.asyncio
async def test_600_sdk_client_replay( replayer ):
    ''' Objects from the real cohere client, whole and streamed, work. '''
    import cohere
    processor = produce_processor( 'cohere' )
    ensemble = _tool_ensemble( )
    with pytest.warns( exceptions.ToolExclusionWarning ):
        tools = processor.prepare_tools( [ ensemble ] )
    host, port = replayer.server_address
    client = cohere.AsyncClientV2(
        api_key = 'dummy', base_url = f"http://{host}:{port}",
        max_retries = 0, timeout = 10 )
    messages = [ { 'role': 'user', 'content': 'What time is it?' } ]
    response = await client.chat(
        model = 'command-a', messages = messages, tools = tools )
    whole = processor.normalize_invocations( response )
    assert _summarize( whole ) == _EXPECTATIONS[
        'cohere/null-arguments.json' ][ 'expected' ]
    accumulator = processor.produce_accumulator( )
    streamed = [ ]
    async for event in client.chat_stream(
        model = 'command-a', messages = messages, tools = tools
    ): streamed.extend( accumulator.ingest( event ) )
    streamed.extend( accumulator.conclude( ) )
    assert _summarize( streamed ) == _EXPECTATIONS[
        'cohere/empty-args-stream.sse' ][ 'expected' ]
    async with ensemble:
        results = await processor.execute_invocations( streamed, [ ensemble ] )
    assert results[ 0 ].is_error( ) # currentTime is not offered
    replies = processor.nativize_results( results )
    await client.chat(
        model = 'command-a',
        messages = [
            *messages,
            { 'role': 'assistant', 'tool_calls': [ {
                'id': streamed[ 0 ].identifier, 'type': 'function',
                'function': { 'name': 'currentTime', 'arguments': '{}' } } ] },
            *replies ],
        tools = tools )
    assert replayer.requests[ -1 ][ 'messages' ][ -1 ][ 'tool_call_id' ] == (
        'currentTime_y46ar19t5gvw' )
    assert replayer.requests[ 0 ][ 'tools' ] == tools
    await asyncio.sleep( 0 )


def test_700_produce_processor_dispatch( ):
    ''' The dispatcher maps 'cohere' to the Cohere processor. '''
    from invocables.processors import cohere
    processor = produce_processor( 'cohere' )
    assert isinstance( processor, cohere.CohereProcessor )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        produce_processor( 'cohere', strict = True )
