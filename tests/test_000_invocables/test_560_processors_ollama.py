# SPDX-License-Identifier: Apache-2.0

''' Ollama processor: fixtures, NDJSON streams, plain HTTP, results. '''


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
    name for name in _EXPECTATIONS if name.startswith( 'ollama/' ) )


def _split_ndjson( body: bytes ):
    ''' Yields each non-blank line of newline-delimited JSON. '''
    for line in body.decode( 'utf-8' ).splitlines( ):
        if line.strip( ): yield line


def _check( invocations, expected ):
    assert [ ( item.name, dict( item.arguments ) ) for item in invocations ] == [
        ( call[ 'name' ], call[ 'arguments' ] ) for call in expected ]
    for invocation, call in zip( invocations, expected ):
        if call[ 'id' ] is not None:
            assert invocation.identifier == call[ 'id' ]
        assert invocation.identifier


@pytest.mark.parametrize( 'name', _NAMES )
def test_100_fixtures( name ):
    ''' Every Ollama fixture gives the expected calls (or provider error). '''
    processor = produce_processor( 'ollama' )
    expectation = _EXPECTATIONS[ name ]
    body = json.loads( ( _FIXTURES / name ).read_bytes( ) )
    if expectation[ 'http_status' ] >= 400:
        with pytest.raises( exceptions.ProviderFailure ) as caught:
            processor.normalize_invocations( body )
        assert 'does not support tools' in caught.value.message
        return
    invocations = processor.normalize_invocations( body )
    _check( invocations, expectation[ 'expected' ] )
    again = processor.normalize_invocations( body )
    assert [ item.identifier for item in again ] == [
        item.identifier for item in invocations ]


@pytest.mark.parametrize( 'name', _NAMES )
def test_110_fixtures_as_stream( name ):
    ''' Each fixture, fed as one NDJSON line, gives the same through the
        accumulator.
    '''
    processor = produce_processor( 'ollama' )
    expectation = _EXPECTATIONS[ name ]
    accumulator = processor.produce_accumulator( )
    lines = list( _split_ndjson( ( _FIXTURES / name ).read_bytes( ) ) )
    assert len( lines ) == 1
    if expectation[ 'http_status' ] >= 400:
        with pytest.raises( exceptions.ProviderFailure ):
            accumulator.ingest( lines[ 0 ] )
        return
    invocations = [ *accumulator.ingest( lines[ 0 ] ), *accumulator.conclude( ) ]
    _check( invocations, expectation[ 'expected' ] )


def _chunk( content = '', calls = None, done = False ):
    message = { 'role': 'assistant', 'content': content }
    if calls is not None: message[ 'tool_calls' ] = calls
    chunk = { 'model': 'qwen3', 'message': message, 'done': done }
    if done: chunk[ 'done_reason' ] = 'stop'
    return chunk


def _stream( ):
    return [
        _chunk( 'Let me ' ), _chunk( 'check.' ),
        _chunk( calls = [
            { 'function': { 'name': 'get_weather',
                            'arguments': { 'city': 'Oslo' } } },
            { 'function': { 'name': 'get_weather',
                            'arguments': { 'city': 'Oslo' } } } ] ),
        _chunk( calls = [ { 'id': 'call_x', 'function': {
            'index': 0, 'name': 'current_time', 'arguments': { } } } ] ),
        _chunk( done = True ),
    ]


def test_200_stream_whole_calls_per_chunk( ):
    ''' Calls are emitted in the chunk which carries them, ids distinct. '''
    accumulator = produce_processor( 'ollama' ).produce_accumulator( )
    emitted = [ accumulator.ingest( chunk ) for chunk in _stream( ) ]
    assert [ len( batch ) for batch in emitted ] == [ 0, 0, 2, 1, 0 ]
    invocations = [ item for batch in emitted for item in batch ]
    identifiers = [ item.identifier for item in invocations ]
    assert len( set( identifiers ) ) == 3
    assert identifiers[ 2 ] == 'call_x'
    assert accumulator.conclude( ) == ( )


def test_210_stream_as_bytes_lines( ):
    ''' NDJSON lines as bytes or text are accepted; blank lines ignored. '''
    accumulator = produce_processor( 'ollama' ).produce_accumulator( )
    invocations = [ ]
    for chunk in _stream( ):
        invocations.extend( accumulator.ingest(
            json.dumps( chunk ).encode( ) + b'\n' ) )
        assert accumulator.ingest( b'\n' ) == ( )
    assert len( invocations ) == 3
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.ingest( '{"message": ' )


def test_220_string_arguments_accepted( ):
    ''' Arguments sent as JSON text (some servers) are decoded too. '''
    processor = produce_processor( 'ollama' )
    invocation, = processor.normalize_invocations( _chunk( calls = [ {
        'function': { 'name': 'f', 'arguments': '{"a": 1}' } } ] ) )
    assert dict( invocation.arguments ) == { 'a': 1 }
    invocation, = processor.normalize_invocations( _chunk( calls = [ {
        'function': { 'name': 'f', 'arguments': '{"a": ' } } ] ) )
    assert invocation.invalidity is not invocables.__.absent


def test_230_malformed_input( ):
    ''' Malformed shapes raise response invalidity. '''
    processor = produce_processor( 'ollama' )
    for body in (
        { 'message': { 'tool_calls': 5 } },
        { 'message': { 'tool_calls': [ { 'function': { 'name': 3 } } ] } },
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )
    assert processor.normalize_invocations( _chunk( 'hello' ) ) == ( )


def test_240_error_in_stream( ):
    ''' An error chunk in a stream raises provider failure. '''
    accumulator = produce_processor( 'ollama' ).produce_accumulator( )
    with pytest.raises( exceptions.ProviderFailure ):
        accumulator.ingest( { 'error': 'model crashed' } )


def test_250_foreign_payloads( ):
    ''' Empty or foreign payloads raise instead of giving no calls. '''
    processor = produce_processor( 'ollama' )
    for body in (
        { }, { 'choices': [ ] }, { 'candidates': [ ] }, { 'output': [ ] },
        { 'type': 'message', 'role': 'assistant', 'content': [ ] },
    ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.normalize_invocations( body )
        with pytest.raises( exceptions.ResponseInvalidity ):
            processor.produce_accumulator( ).ingest( body )


def test_260_calls_after_final_chunk_refused( ):
    ''' Calls after the final chunk raise, rather than run again. '''
    accumulator = produce_processor( 'ollama' ).produce_accumulator( )
    chunks = _stream( )
    for chunk in chunks: accumulator.ingest( chunk )
    assert accumulator.ingest( _chunk( 'late text' ) ) == ( )
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.ingest( chunks[ 2 ] )


def test_270_produce_message( ):
    ''' The accumulator gives the assistant message: text and calls with
        their arguments, ids only where Ollama gave them.
    '''
    accumulator = produce_processor( 'ollama' ).produce_accumulator( )
    for chunk in _stream( ): accumulator.ingest( chunk )
    accumulator.conclude( )
    assert accumulator.produce_message( ) == {
        'role': 'assistant', 'content': 'Let me check.',
        'tool_calls': [
            { 'function': {
                'name': 'get_weather', 'arguments': { 'city': 'Oslo' } } },
            { 'function': {
                'name': 'get_weather', 'arguments': { 'city': 'Oslo' } } },
            { 'id': 'call_x', 'function': {
                'name': 'current_time', 'arguments': { } } } ] }


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
        arguments_schema = { 'type': 'object', 'properties': { 'x': True } } )
    return invocables.produce_ensemble(
        'tools', [ get_weather, current_time, bad ] )


def test_300_prepare_tools( ):
    ''' Tools in OpenAI-like shape; a schema Ollama cannot decode is left
        out alone.
    '''
    processor = produce_processor( 'ollama' )
    with pytest.warns( exceptions.ToolExclusionWarning, match = 'bad' ):
        tools = processor.prepare_tools( [ _tool_ensemble( ) ] )
    assert [ tool[ 'function' ][ 'name' ] for tool in tools ] == [
        'get_weather', 'current_time' ]
    weather = tools[ 0 ]
    assert weather[ 'type' ] == 'function'
    assert weather[ 'function' ][ 'parameters' ][ 'type' ] == 'object'
    assert weather[ 'function' ][ 'parameters' ][ 'properties' ][
        'city' ][ 'type' ] == 'string'
    json.dumps( tools )


def test_400_nativize_results( ):
    ''' Results become tool messages with tool_name; real ids echoed. '''
    processor = produce_processor( 'ollama' )
    results = [
        invocables.ResultCanister(
            invocation_id = 'call_x', name = 'a',
            content = ( invocables.StructureContent( data = { 'k': 1 } ), ) ),
        invocables.ResultCanister(
            invocation_id = 'call_1_0123456789abcdef', name = 'b',
            invocation_id_synthesized = True,
            error = invocables.Fault(
                genus = invocables.FaultGenera.Timeout,
                message = 'Too slow.' ) ),
    ]
    messages = processor.nativize_results( results )
    assert messages == [
        { 'role': 'tool', 'content': '{"k": 1}', 'tool_name': 'a',
          'tool_call_id': 'call_x' },
        { 'role': 'tool', 'content': 'Error: Too slow.', 'tool_name': 'b' } ]


@pytest.mark.asyncio
async def test_500_round_trip( ):
    ''' Prepare, normalize, execute and nativize match names and ids. '''
    processor = produce_processor( 'ollama' )
    ensemble = _tool_ensemble( )
    accumulator = processor.produce_accumulator( )
    invocations = [ ]
    for chunk in _stream( ):
        invocations.extend( accumulator.ingest( chunk ) )
    invocations.extend( accumulator.conclude( ) )
    async with ensemble:
        results = await processor.execute_invocations(
            invocations, [ ensemble ] )
    messages = processor.nativize_results( results )
    assert [ message[ 'tool_name' ] for message in messages ] == [
        'get_weather', 'get_weather', 'current_time' ]
    assert messages[ 0 ][ 'content' ] == '{"city": "Oslo", "sky": "clear"}'
    assert messages[ 2 ] == {
        'role': 'tool', 'content': '12:00', 'tool_name': 'current_time',
        'tool_call_id': 'call_x' }


class _Replayer( BaseHTTPRequestHandler ):
    ''' Answers /api/chat like Ollama: NDJSON stream or one JSON body. '''

    def do_POST( self ):
        length = int( self.headers.get( 'Content-Length', '0' ) )
        request = json.loads( self.rfile.read( length ) )
        self.server.requests.append( request )
        if request.get( 'model' ) == 'gemma3:1b':
            body = ( _FIXTURES
                     / 'ollama/error-400-model-does-not-support-tools.json'
                   ).read_bytes( )
            status, media = 400, 'application/json'
        elif request.get( 'stream', True ):
            body = b''.join(
                json.dumps( chunk ).encode( ) + b'\n' for chunk in _stream( ) )
            status, media = 200, 'application/x-ndjson'
        else:
            body = ( _FIXTURES / 'ollama/cloud-tool-call-with-id.json'
                   ).read_bytes( )
            status, media = 200, 'application/json'
        self.send_response( status )
        self.send_header( 'Content-Type', media )
        self.send_header( 'Content-Length', str( len( body ) ) )
        self.end_headers( )
        self.wfile.write( body )

    def log_message( self, *arguments ):
        pass


@pytest.fixture
def server( ):
    server = ThreadingHTTPServer( ( '127.0.0.1', 0 ), _Replayer )
    server.requests = [ ]
    thread = threading.Thread( target = server.serve_forever, daemon = True )
    thread.start( )
    yield server
    server.shutdown( )
    server.server_close( )
    thread.join( )


@pytest.mark.asyncio
async def test_600_plain_http( server ):
    ''' Over plain HTTP (httpx): streamed, whole and error replies. '''
    import httpx
    processor = produce_processor( 'ollama' )
    with pytest.warns( exceptions.ToolExclusionWarning ):
        tools = processor.prepare_tools( [ _tool_ensemble( ) ] )
    host, port = server.server_address
    url = f"http://{host}:{port}/api/chat"
    request = {
        'model': 'qwen3', 'tools': tools,
        'messages': [ { 'role': 'user', 'content': 'Weather in Oslo?' } ] }
    accumulator = processor.produce_accumulator( )
    invocations = [ ]
    async with httpx.AsyncClient( timeout = 10 ) as client:
        async with client.stream( 'POST', url, json = request ) as response:
            async for line in response.aiter_lines( ):
                invocations.extend( accumulator.ingest( line ) )
        invocations.extend( accumulator.conclude( ) )
        assert [ item.name for item in invocations ] == [
            'get_weather', 'get_weather', 'current_time' ]
        reply = await client.post( url, json = { **request, 'stream': False } )
        whole = processor.normalize_invocations( reply.json( ) )
        assert whole[ 0 ].identifier == 'call_mo1wm122'
        reply = await client.post(
            url, json = { **request, 'model': 'gemma3:1b', 'stream': False } )
        assert reply.status_code == 400
        with pytest.raises( exceptions.ProviderFailure ):
            processor.normalize_invocations( reply.json( ) )
    assert server.requests[ 0 ][ 'tools' ] == tools


def test_700_produce_processor_dispatch( ):
    ''' The dispatcher maps 'ollama' to the Ollama processor. '''
    from invocables.processors import ollama
    processor = produce_processor( 'ollama' )
    assert isinstance( processor, ollama.OllamaProcessor )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        produce_processor( 'ollama', strict = True )
