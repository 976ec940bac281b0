# SPDX-License-Identifier: Apache-2.0

''' Real provider captures, parsed directly and replayed through SDKs.

    Every capture of Anthropic, OpenAI Chat Completions and OpenAI Responses
    in ``tests/data/providers`` gives exactly its expected calls:
    through ``normalize_invocations`` (whole bodies) or the accumulator
    (streams), from decoded JSON and from the SDKs' own typed objects, which
    the SDK clients produce from a local HTTP server replaying the bytes.
'''


import json

import anthropic
import openai
import pytest

import invocables

from invocables import exceptions
from invocables.processors import produce_processor

from . import replay


_captures = replay.survey_captures( )
_whole = [ c for c in _captures if not c.streaming and c.status < 400 ]
_streamed = [ c for c in _captures if c.streaming and c.status < 400 ]
_failed = [ c for c in _captures if c.status >= 400 ]


def _identify( capture ):
    return capture.name


def _summarize( invocations ):
    return [
        { 'id': i.identifier, 'name': i.name, 'arguments': i.arguments }
        for i in invocations ]


def _check_expected( capture, invocations ):
    assert all(
        invocables.__.is_absent( i.invalidity ) for i in invocations )
    assert _summarize( invocations ) == capture.expected


def _ingest_all( processor, events, labelled = True ):
    accumulator = processor.produce_accumulator( )
    emitted = [ ]
    for event in events:
        if labelled and isinstance( event, replay.Event ):
            label = event.label or invocables.__.absent
            emitted.extend( accumulator.ingest( event.decode( ), label ) )
        elif isinstance( event, replay.Event ):
            emitted.extend( accumulator.ingest( event.decode( ) ) )
        else: emitted.extend( accumulator.ingest( event ) )
    return accumulator, emitted


def _produce_tools( provider ):
    def get_weather( location: str ) -> str:
        ''' Returns weather. '''
        return location
    ensemble = invocables.produce_ensemble( 'weather', [ get_weather ] )
    return produce_processor( provider ).prepare_tools( [ ensemble ] )


async def _create( provider, url, *, stream ):
    ''' Calls the SDK client of provider against the replay server. '''
    tools = _produce_tools( provider )
    match provider:
        case 'anthropic':
            client = anthropic.AsyncAnthropic(
                base_url = url, api_key = 'test', max_retries = 0 )
            return await client.messages.create(
                model = 'claude-replay', max_tokens = 1024,
                messages = [ { 'role': 'user', 'content': 'Weather?' } ],
                tools = tools, stream = stream )
        case 'openai':
            client = openai.AsyncOpenAI(
                base_url = url, api_key = 'test', max_retries = 0 )
            return await client.chat.completions.create(
                model = 'gpt-4o',
                messages = [ { 'role': 'user', 'content': 'Weather?' } ],
                tools = tools, stream = stream )
        case _:
            client = openai.AsyncOpenAI(
                base_url = url, api_key = 'test', max_retries = 0 )
            return await client.responses.create(
                model = 'gpt-4o', input = 'Weather?', tools = tools,
                stream = stream )


def test_100_sse_framing( ):
    ''' Events split at CRLF, LF and CR; comments and one space dropped. '''
    body = (
        b'\xef\xbb\xbf: comment\r\n'
        b'event: first\r\ndata: {"a":\r\ndata:  1}\r\n\r\n'
        b'data:two\rid: 7\rretry: 10\r\r'
        b'event:third\ndata\n\n'
        b': only a comment\n\n'
        b'data: {"tail": true}   ' )
    events = list( replay.parse_events( body ) )
    assert events == [
        replay.Event( 'first', '{"a":\n 1}' ),
        replay.Event( None, 'two' ),
        replay.Event( 'third', '' ),
    ]
    assert events[ 0 ].decode( ) == { 'a': 1 }
    assert events[ 1 ].decode( ) == 'two'
    flushed = list( replay.parse_events( body, flush = True ) )
    assert flushed[ -1 ] == replay.Event( None, '{"tail": true}   ' )
    assert flushed[ -1 ].decode( ) == { 'tail': True }


def test_110_sse_captures_framing( ):
    ''' Captures keep their padding, comments and last-line quirks. '''
    location = replay.access_fixtures_location( )
    padded = ( location / 'anthropic' /
        'max-tokens-truncated-tool-input-stream.sse' ).read_bytes( )
    events = list( replay.parse_events( padded ) )
    assert events[ 1 ].data.endswith( '""}         }' )
    assert events[ 1 ].decode( )[ 'type' ] == 'content_block_start'
    router = ( location / 'openai_chat' /
        'openrouter-index-starts-at-1-stream.sse' ).read_bytes( )
    events = list( replay.parse_events( router ) )
    assert events[ -1 ].data == '[DONE]'
    assert all( 'OPENROUTER' not in event.data for event in events )
    unterminated = ( location / 'anthropic' /
        'text-then-tool-use-stream.sse' ).read_bytes( )
    assert not unterminated.endswith( b'\n' )
    labels = [ e.label for e in replay.parse_events( unterminated ) ]
    assert 'message_stop' not in labels
    labels = [
        e.label for e in replay.parse_events( unterminated, flush = True ) ]
    assert labels[ -1 ] == 'message_stop'


def test_120_captures_present( ):
    ''' Every capture of these providers is exercised. '''
    assert len( _captures ) == 17
    assert { capture.provider for capture in _captures } == {
        'anthropic', 'openai', 'openai-responses' }


@pytest.mark.parametrize( 'capture', _whole, ids = _identify )
def test_200_whole_decoded( capture ):
    ''' Whole bodies give the expected calls. '''
    body = json.loads( capture.read_bytes( ) )
    processor = produce_processor( capture.provider )
    _check_expected( capture, processor.normalize_invocations( body ) )


@pytest.mark.parametrize( 'capture', _streamed, ids = _identify )
@pytest.mark.parametrize( 'labelled', [ True, False ] )
def test_210_streamed_decoded( capture, labelled ):
    ''' Streams give the expected calls, or an interruption if cut off. '''
    processor = produce_processor( capture.provider )
    events = replay.parse_events( capture.read_bytes( ) )
    accumulator, emitted = _ingest_all( processor, events, labelled )
    if capture.truncated:
        with pytest.raises( exceptions.InvocationInterruption ) as caught:
            accumulator.conclude( )
        assert caught.value.names
        assert emitted == [ ]
        return
    emitted.extend( accumulator.conclude( ) )
    _check_expected( capture, emitted )


def test_220_truncated_names_tool( ):
    ''' The cut-off Anthropic call is named, with its stop reason. '''
    capture = next( c for c in _streamed if c.truncated )
    processor = produce_processor( capture.provider )
    events = replay.parse_events( capture.read_bytes( ) )
    accumulator, _ = _ingest_all( processor, events )
    partials = accumulator.survey_partials( )
    assert partials[ 0 ].name == 'make_file'
    assert partials[ 0 ].text.startswith( '{"filename": "taxes.txt"' )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'make_file', )
    assert 'max_tokens' in caught.value.reason


@pytest.mark.parametrize( 'capture', _failed, ids = _identify )
def test_230_error_bodies_decoded( capture ):
    ''' Error bodies raise provider failure with type and message. '''
    body = json.loads( capture.read_bytes( ) )
    processor = produce_processor( capture.provider )
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        processor.normalize_invocations( body )
    failure = caught.value
    assert failure.genus == 'invalid_request_error'
    assert failure.message == body[ 'error' ][ 'message' ]
    assert capture.expected == [ ]


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _whole, ids = _identify )
async def test_300_whole_through_sdk( capture ):
    ''' SDK typed responses from replayed bytes give the expected calls. '''
    with replay.ReplayServer( ) as server:
        server.respond_capture( capture )
        response = await _create(
            capture.provider, server.url, stream = False )
    assert server.requests[ 0 ][ 'tools' ] == _produce_tools(
        capture.provider )
    processor = produce_processor( capture.provider )
    _check_expected( capture, processor.normalize_invocations( response ) )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _streamed, ids = _identify )
async def test_310_streamed_through_sdk( capture ):
    ''' SDK typed stream events from replayed bytes give the calls. '''
    processor = produce_processor( capture.provider )
    accumulator = processor.produce_accumulator( )
    emitted = [ ]
    with replay.ReplayServer( ) as server:
        server.respond_capture( capture )
        stream = await _create( capture.provider, server.url, stream = True )
        async for event in stream:
            assert not isinstance( event, dict )
            emitted.extend( accumulator.ingest( event ) )
    if capture.truncated:
        with pytest.raises( exceptions.InvocationInterruption ):
            accumulator.conclude( )
        assert emitted == [ ]
        return
    emitted.extend( accumulator.conclude( ) )
    _check_expected( capture, emitted )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _failed, ids = _identify )
@pytest.mark.parametrize( 'stream', [ False, True ] )
async def test_320_error_through_sdk( capture, stream ):
    ''' Error statuses make the SDK raise; its body gives our failure. '''
    errors = (
        anthropic.APIStatusError if capture.provider == 'anthropic'
        else openai.APIStatusError )
    with replay.ReplayServer( ) as server:
        server.respond_capture( capture )
        with pytest.raises( errors ) as caught:
            await _create( capture.provider, server.url, stream = stream )
    assert caught.value.status_code == capture.status
    body = caught.value.body
    # The OpenAI SDK unwraps the 'error' member of error bodies.
    if capture.provider != 'anthropic': body = { 'error': body }
    processor = produce_processor( capture.provider )
    with pytest.raises( exceptions.ProviderFailure ):
        processor.normalize_invocations( body )
    with pytest.raises( exceptions.ProviderFailure ):
        processor.normalize_invocations(
            json.loads( capture.read_bytes( ) ) )


@pytest.mark.asyncio
async def test_330_stream_error_event_through_sdk( ):
    ''' An error event mid-stream fails the SDK stream and our ingest. '''
    body = (
        b'event: message_start\n'
        b'data: {"type":"message_start","message":{"id":"m","type":'
        b'"message","role":"assistant","model":"c","content":[],'
        b'"stop_reason":null,"stop_sequence":null,"usage":'
        b'{"input_tokens":1,"output_tokens":1}}}\n\n'
        b'event: error\n'
        b'data: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n' )
    events = list( replay.parse_events( body ) )
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    accumulator.ingest( events[ 0 ].decode( ), events[ 0 ].label )
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        accumulator.ingest( events[ 1 ].decode( ), events[ 1 ].label )
    assert caught.value.status == 529
    with replay.ReplayServer( ) as server:
        server.respond( 200, 'text/event-stream', body )
        stream = await _create( 'anthropic', server.url, stream = True )
        with pytest.raises( anthropic.APIStatusError ):
            async for _ in stream: pass


_messaged = [
    capture for capture in _streamed
    if capture.provider in ( 'anthropic', 'openai' )
    and not capture.truncated ]


# The OpenAI SDK's stream helper fails on tool call indexes which do not
# start at 0 (IndexError); the accumulator reads them.
_assembled = [
    capture for capture in _messaged if 'index-starts-at-1' not in capture.name ]


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _assembled, ids = _identify )
async def test_400_message_as_sdk_assembles( capture ):
    ''' The accumulator's assistant message equals the one which the SDK's
        own stream helper assembles from the same bytes.
    '''
    processor = produce_processor( capture.provider )
    accumulator = processor.produce_accumulator( )
    with replay.ReplayServer( ) as server:
        server.respond_capture( capture )
        if capture.provider == 'anthropic':
            client = anthropic.AsyncAnthropic(
                base_url = server.url, api_key = 'test', max_retries = 0 )
            async with client.messages.stream(
                model = 'claude-replay', max_tokens = 1024,
                messages = [ { 'role': 'user', 'content': 'Weather?' } ],
                tools = _produce_tools( 'anthropic' ),
            ) as stream:
                async for event in stream: accumulator.ingest( event )
                final = await stream.get_final_message( )
            expected = {
                'role': 'assistant',
                'content': [
                    block.model_dump( mode = 'json', exclude_none = True )
                    for block in final.content ] }
        else:
            client = openai.AsyncOpenAI(
                base_url = server.url, api_key = 'test', max_retries = 0 )
            async with client.chat.completions.stream(
                model = 'gpt-4o',
                messages = [ { 'role': 'user', 'content': 'Weather?' } ],
                tools = _produce_tools( 'openai' ),
            ) as stream:
                async for event in stream:
                    if event.type == 'chunk':
                        accumulator.ingest( event.chunk )
                final = await stream.get_final_completion( )
            accumulator.ingest( '[DONE]' )
            message = final.choices[ 0 ].message
            expected = {
                'role': 'assistant', 'content': message.content,
                'tool_calls': [
                    { 'id': call.id, 'type': 'function', 'function': {
                        'name': call.function.name,
                        'arguments': call.function.arguments } }
                    for call in message.tool_calls or ( ) ] }
    emitted = accumulator.conclude( )
    assert emitted == ( )
    assert accumulator.produce_message( ) == expected


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _messaged, ids = _identify )
async def test_410_message_sent_back_through_sdk( capture ):
    ''' The assistant message goes back through the SDK as it is, with the
        results of its calls.
    '''
    processor = produce_processor( capture.provider )
    accumulator = processor.produce_accumulator( )
    for event in replay.parse_events( capture.read_bytes( ) ):
        accumulator.ingest(
            event.decode( ), event.label or invocables.__.absent )
    accumulator.conclude( )
    message = accumulator.produce_message( )
    results = [
        invocables.ResultCanister(
            invocation_id = emission.invocation.identifier,
            content = ( invocables.TextContent( text = 'Sunny.' ), ) )
        for emission in accumulator.survey_invocations( ) ]
    messages = [
        { 'role': 'user', 'content': 'Weather?' }, message,
        *processor.nativize_results( results ) ]
    with replay.ReplayServer( ) as server:
        server.respond( 200, 'application/json', b'{}' )
        try:
            if capture.provider == 'anthropic':
                client = anthropic.AsyncAnthropic(
                    base_url = server.url, api_key = 'test',
                    max_retries = 0 )
                await client.messages.create(
                    model = 'claude-replay', max_tokens = 1024,
                    messages = messages )
            else:
                client = openai.AsyncOpenAI(
                    base_url = server.url, api_key = 'test',
                    max_retries = 0 )
                await client.chat.completions.create(
                    model = 'gpt-4o', messages = messages )
        except ( anthropic.APIError, openai.APIError, ValueError ): pass
    assert server.requests[ 0 ][ 'messages' ] == json.loads(
        json.dumps( messages ) )
