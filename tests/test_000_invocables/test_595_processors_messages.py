# SPDX-License-Identifier: Apache-2.0

''' Assistant messages of whole responses, for the next request.

    ``processor.prepare_message( response )`` turns every real capture of
    ``tests/data/providers`` (decoded JSON, and the SDKs' own typed
    responses replayed from the bytes) into the assistant message which
    continues the conversation: its calls carry the ids of their canisters,
    so that the results match, and the SDKs take it as it is (their clients
    send it unchanged; their request models validate it).
'''


import copy
import json

import anthropic
import cohere
import openai
import pytest

from google.genai import types as genai_types
from mistralai.client import models as mistral_models

import invocables

from invocables import exceptions
from invocables.processors import produce_processor

from . import replay


_FOLDERS = {
    'anthropic': 'anthropic', 'openai_chat': 'openai',
    'openai_responses': 'openai-responses', 'gemini': 'gemini',
    'cohere': 'cohere', 'ollama': 'ollama', 'bedrock': 'bedrock',
    'mistral': 'mistral',
}
_SDKS = ( 'anthropic', 'openai', 'openai-responses' )


def _survey_captures( ):
    location = replay.access_fixtures_location( )
    entries = json.loads(
        ( location / 'expected.json' ).read_text( encoding = 'utf-8' ) )
    return [
        replay.Capture(
            name = name, path = location / name,
            provider = _FOLDERS[ name.split( '/', 1 )[ 0 ] ],
            streaming = not name.endswith( '.json' ),
            status = entry[ 'http_status' ], expected = entry[ 'expected' ] )
        for name, entry in entries.items( ) ]


_captures = _survey_captures( )
_whole = [ c for c in _captures if not c.streaming and c.status < 400 ]
_failed = [ c for c in _captures if not c.streaming and c.status >= 400 ]
_replayed = [ c for c in _whole if c.provider in _SDKS ]
_responses_streams = [
    c for c in _captures
    if c.streaming and c.provider == 'openai-responses' ]


def _identify( capture ):
    return capture.name


def _decode( arguments ):
    if isinstance( arguments, str ):
        return json.loads( arguments or '{}' ) or { }
    return arguments or { }


def _survey_calls( provider, message ):
    ''' Returns ( id, name, arguments ) of each call of message. '''
    match provider:
        case 'anthropic':
            return [
                ( b[ 'id' ], b[ 'name' ], b[ 'input' ] )
                for b in message[ 'content' ] if b[ 'type' ] == 'tool_use' ]
        case 'openai-responses':
            return [
                ( i[ 'call_id' ], i[ 'name' ], _decode( i[ 'arguments' ] ) )
                for i in message if i[ 'type' ] == 'function_call' ]
        case 'gemini':
            calls = [
                part.get( 'function_call' ) or part.get( 'functionCall' )
                for part in message[ 'parts' ] ]
            return [
                ( c.get( 'id' ), c[ 'name' ], c.get( 'args' ) or { } )
                for c in calls if c ]
        case 'bedrock':
            return [
                ( b[ 'toolUse' ][ 'toolUseId' ], b[ 'toolUse' ][ 'name' ],
                  b[ 'toolUse' ][ 'input' ] )
                for b in message[ 'content' ]
                if 'toolUse' in b
                and b[ 'toolUse' ].get( 'type' ) != 'server_tool_use' ]
        case _:
            return [
                ( c.get( 'id' ), c[ 'function' ][ 'name' ],
                  _decode( c[ 'function' ][ 'arguments' ] ) )
                for c in message.get( 'tool_calls' ) or ( ) ]


def _check_calls( provider, message, invocations ):
    ''' Asserts calls of message are the invocations, under their ids. '''
    calls = _survey_calls( provider, message )
    assert [ ( name, arguments ) for _, name, arguments in calls ] == [
        ( i.name, dict( i.arguments ) ) for i in invocations ]
    for ( identifier, _, _ ), invocation in zip( calls, invocations ):
        if invocation.identifier_synthesized and provider in (
            'gemini', 'ollama'
        ): # Results of calls without id carry none either.
            assert identifier is None
        elif provider == 'mistral':
            assert len( identifier ) == 9
        else: assert identifier == invocation.identifier


def _produce_results( invocations ):
    return [
        invocables.ResultCanister(
            invocation_id = invocation.identifier,
            content = ( invocables.TextContent( text = 'Sunny.' ), ),
            name = invocation.name,
            invocation_id_synthesized = invocation.identifier_synthesized )
        for invocation in invocations ]


async def _request( provider, url, response ):
    ''' Returns response of provider's SDK client from replay server. '''
    match provider:
        case 'anthropic':
            client = anthropic.AsyncAnthropic(
                base_url = url, api_key = 'test', max_retries = 0 )
            return await client.messages.create(
                model = 'claude-replay', max_tokens = 1024,
                messages = [ { 'role': 'user', 'content': 'Weather?' } ] )
        case 'openai':
            client = openai.AsyncOpenAI(
                base_url = url, api_key = 'test', max_retries = 0 )
            return await client.chat.completions.create(
                model = 'gpt-4o',
                messages = [ { 'role': 'user', 'content': 'Weather?' } ] )
        case _:
            client = openai.AsyncOpenAI(
                base_url = url, api_key = 'test', max_retries = 0 )
            return await client.responses.create(
                model = 'gpt-4o', input = 'Weather?' )


async def _send_back( provider, url, messages ):
    ''' Sends next request with messages through provider's SDK client;
        returns what the server received in place of the messages.
    '''
    server_answers = ( anthropic.APIError, openai.APIError, ValueError )
    try:
        match provider:
            case 'anthropic':
                client = anthropic.AsyncAnthropic(
                    base_url = url, api_key = 'test', max_retries = 0 )
                await client.messages.create(
                    model = 'claude-replay', max_tokens = 1024,
                    messages = messages )
            case 'openai':
                client = openai.AsyncOpenAI(
                    base_url = url, api_key = 'test', max_retries = 0 )
                await client.chat.completions.create(
                    model = 'gpt-4o', messages = messages )
            case _:
                client = openai.AsyncOpenAI(
                    base_url = url, api_key = 'test', max_retries = 0 )
                await client.responses.create(
                    model = 'gpt-4o', input = messages )
    except server_answers: pass # the server answers '{}': not a reply


def _compose( provider, message, processor, invocations ):
    ''' Returns messages of the next request: prompt, message, results. '''
    results = processor.nativize_results( _produce_results( invocations ) )
    prompt = { 'role': 'user', 'content': 'Weather?' }
    if provider == 'openai-responses':
        return [ prompt, *message, *results ]
    return [ prompt, message, *results ]


@pytest.mark.parametrize( 'capture', _whole, ids = _identify )
def test_100_whole_message_carries_calls( capture ):
    ''' Each whole capture gives an assistant message whose calls are the
        normalized calls, under their canisters' ids; the response given
        is left as it was.
    '''
    body = json.loads( capture.read_bytes( ) )
    original = copy.deepcopy( body )
    processor = produce_processor( capture.provider )
    message = processor.prepare_message( body )
    assert body == original
    invocations = processor.normalize_invocations( body )
    assert [ i.name for i in invocations ] == [
        call[ 'name' ] for call in capture.expected ]
    _check_calls( capture.provider, message, invocations )
    if capture.provider == 'openai-responses':
        assert all( isinstance( item, dict ) for item in message )
        return
    assert message[ 'role' ] == (
        'model' if capture.provider == 'gemini' else 'assistant' )
    assert json.loads( json.dumps( message ) ) == message


@pytest.mark.parametrize( 'capture', _failed, ids = _identify )
def test_110_error_bodies_raise( capture ):
    ''' Error bodies raise as ``normalize_invocations`` raises. '''
    body = json.loads( capture.read_bytes( ) )
    processor = produce_processor( capture.provider )
    with pytest.raises( exceptions.Omnierror ) as expected:
        processor.normalize_invocations( body )
    with pytest.raises( type( expected.value ) ):
        processor.prepare_message( body )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _replayed, ids = _identify )
async def test_200_typed_message_sent_back_through_sdk( capture ):
    ''' The message of the SDK's typed response equals that of the decoded
        bytes in its calls, and goes back through the SDK's client as it
        is, with the results of its calls.
    '''
    provider = capture.provider
    processor = produce_processor( provider )
    with replay.ReplayServer( ) as server:
        server.respond_capture( capture )
        response = await _request( provider, server.url, capture )
    assert not isinstance( response, dict )
    message = processor.prepare_message( response )
    invocations = processor.normalize_invocations( response )
    _check_calls( provider, message, invocations )
    assert _survey_calls( provider, message ) == _survey_calls(
        provider,
        processor.prepare_message( json.loads( capture.read_bytes( ) ) ) )
    messages = _compose( provider, message, processor, invocations )
    with replay.ReplayServer( ) as server:
        await _send_back( provider, server.url, messages )
    key = 'input' if provider == 'openai-responses' else 'messages'
    assert server.requests[ 0 ][ key ] == json.loads(
        json.dumps( messages ) )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _responses_streams, ids = _identify )
async def test_210_streamed_items_sent_back_through_sdk( capture ):
    ''' The Responses accumulator gives the output items of the stream,
        in order (reasoning and messages too), which go back through the
        SDK's client as they are.
    '''
    processor = produce_processor( 'openai-responses' )
    accumulator = processor.produce_accumulator( )
    done = [ ]
    for event in replay.parse_events( capture.read_bytes( ) ):
        decoded = event.decode( )
        accumulator.ingest( decoded, event.label or invocables.__.absent )
        if isinstance( decoded, dict ) and decoded.get(
            'type'
        ) == 'response.output_item.done': done.append( decoded[ 'item' ] )
    invocations = accumulator.conclude( )
    items = accumulator.produce_message( )
    assert items == done
    emitted = [ e.invocation for e in accumulator.survey_invocations( ) ]
    _check_calls( 'openai-responses', items, emitted )
    messages = _compose( 'openai-responses', items, processor, emitted )
    assert invocations == ( ) or list( invocations ) == emitted
    with replay.ReplayServer( ) as server:
        await _send_back( 'openai-responses', server.url, messages )
    assert server.requests[ 0 ][ 'input' ] == messages


@pytest.mark.asyncio
@pytest.mark.parametrize( 'capture', _responses_streams, ids = _identify )
async def test_215_typed_stream_items_sent_back_through_sdk( capture ):
    ''' From the SDK's typed events, the Responses accumulator gives the
        same calls, as plain items which go back through the SDK's client.
    '''
    processor = produce_processor( 'openai-responses' )
    accumulator = processor.produce_accumulator( )
    with replay.ReplayServer( ) as server:
        server.respond_capture( capture )
        client = openai.AsyncOpenAI(
            base_url = server.url, api_key = 'test', max_retries = 0 )
        stream = await client.responses.create(
            model = 'gpt-4o', input = 'Weather?', stream = True )
        async for event in stream:
            assert not isinstance( event, dict )
            accumulator.ingest( event )
    accumulator.conclude( )
    items = accumulator.produce_message( )
    assert all( isinstance( item, dict ) for item in items )
    emitted = [ e.invocation for e in accumulator.survey_invocations( ) ]
    assert [ i.identifier for i in emitted ] == [
        c[ 'id' ] for c in capture.expected ]
    _check_calls( 'openai-responses', items, emitted )
    messages = _compose( 'openai-responses', items, processor, emitted )
    with replay.ReplayServer( ) as server:
        await _send_back( 'openai-responses', server.url, messages )
    assert server.requests[ 0 ][ 'input' ] == json.loads(
        json.dumps( messages ) )


@pytest.mark.parametrize(
    'capture',
    [ c for c in _whole if c.provider in ( 'cohere', 'gemini', 'mistral' ) ],
    ids = _identify )
def test_220_sdk_models_take_message( capture ):
    ''' The request models of the SDKs without typed dictionaries of
        their own for requests (Cohere) or with models beside them (Gemini,
        Mistral) take the message, with its calls.
    '''
    processor = produce_processor( capture.provider )
    message = processor.prepare_message(
        json.loads( capture.read_bytes( ) ) )
    match capture.provider:
        case 'cohere':
            model = cohere.AssistantChatMessageV2.model_validate( message )
            calls = model.tool_calls or [ ]
            assert [ c.id for c in calls ] == [
                c[ 'id' ] for c in capture.expected ]
        case 'gemini':
            model = genai_types.Content.model_validate( message )
            assert model.role == 'model'
            assert [
                part.function_call.name for part in model.parts or [ ]
                if part.function_call ] == [
                    c[ 'name' ] for c in capture.expected ]
        case _:
            model = mistral_models.AssistantMessage.model_validate( message )
            assert len( model.tool_calls or [ ] ) == len( capture.expected )


def test_300_synthesized_ids_written( ):
    ''' Calls which came without id carry their canisters' synthesized ids
        in the Chat Completions message, as their results do; a refusal and
        the id of audio are kept.
    '''
    processor = produce_processor( 'openai' )
    completion = { 'choices': [ { 'index': 0, 'message': {
        'role': 'assistant', 'content': None,
        'tool_calls': [
            { 'type': 'function', 'function': {
                'name': 'get_weather', 'arguments': '{"city": "Oslo"}' } },
            { 'type': 'function', 'function': {
                'name': 'get_weather', 'arguments': '{"city": "Rome"}' } },
        ] }, 'finish_reason': 'tool_calls' } ] }
    message = processor.prepare_message( completion )
    invocations = processor.normalize_invocations( completion )
    results = processor.nativize_results( _produce_results( invocations ) )
    identifiers = [ call[ 'id' ] for call in message[ 'tool_calls' ] ]
    assert identifiers == [ r[ 'tool_call_id' ] for r in results ]
    assert len( set( identifiers ) ) == 2
    assert message[ 'content' ] is None
    assert [ c[ 'function' ][ 'arguments' ] for c in message[ 'tool_calls' ]
    ] == [ '{"city": "Oslo"}', '{"city": "Rome"}' ]
    spoken = processor.prepare_message( {
        'role': 'assistant', 'content': None, 'refusal': 'No.',
        'audio': { 'id': 'audio_1', 'data': 'AAAA', 'transcript': 'No.' } } )
    assert spoken == {
        'role': 'assistant', 'content': '', 'refusal': 'No.',
        'audio': { 'id': 'audio_1' } }


def test_310_text_calls_moved_into_calls( ):
    ''' With option ``text_calls``, calls written as text leave the text
        and become tool calls of the message (Chat Completions, Ollama,
        Responses).
    '''
    def get_weather( city: str ) -> str:
        ''' Returns weather. '''
        return city
    ensemble = invocables.produce_ensemble( 'weather', [ get_weather ] )
    text = (
        'Let me look. <tool_call>{"name": "get_weather", "arguments": '
        '{"city": "Oslo"}}</tool_call>' )
    chat = produce_processor( 'openai', text_calls = 'hermes' )
    chat.prepare_tools( [ ensemble ] )
    message = chat.prepare_message(
        { 'role': 'assistant', 'content': text } )
    assert message[ 'content' ].strip( ) == 'Let me look.'
    call = message[ 'tool_calls' ][ 0 ]
    assert call[ 'function' ][ 'name' ] == 'get_weather'
    assert json.loads( call[ 'function' ][ 'arguments' ] ) == {
        'city': 'Oslo' }
    ollama = produce_processor( 'ollama', text_calls = 'hermes' )
    ollama.prepare_tools( [ ensemble ] )
    message = ollama.prepare_message(
        { 'message': { 'role': 'assistant', 'content': text },
          'done': True } )
    assert message[ 'content' ].strip( ) == 'Let me look.'
    assert message[ 'tool_calls' ][ 0 ][ 'function' ] == {
        'name': 'get_weather', 'arguments': { 'city': 'Oslo' } }
    assert 'id' not in message[ 'tool_calls' ][ 0 ]
    responses = produce_processor( 'openai-responses', text_calls = 'hermes' )
    responses.prepare_tools( [ ensemble ] )
    output = { 'type': 'message', 'role': 'assistant', 'content': [
        { 'type': 'output_text', 'text': text } ] }
    items = responses.prepare_message( { 'output': [ output ] } )
    invocations = responses.normalize_invocations( { 'output': [ output ] } )
    assert items[ 0 ][ 'type' ] == 'message'
    assert items[ 0 ][ 'content' ][ 0 ][ 'text' ].strip( ) == 'Let me look.'
    assert items[ 1 ] == {
        'type': 'function_call', 'call_id': invocations[ 0 ].identifier,
        'name': 'get_weather', 'arguments': '{"city": "Oslo"}' }


def test_320_repeated_ids_left_out( caplog ):
    ''' A block whose id repeats an earlier one's is left out of the
        message, as its call does not run: every call of the message has
        its result, whole or streamed.
    '''
    processor = produce_processor( 'anthropic' )
    block = {
        'type': 'tool_use', 'id': 'toolu_1', 'name': 'get_weather',
        'input': { 'city': 'Oslo' } }
    response = {
        'role': 'assistant', 'content': [ block, dict( block ) ],
        'stop_reason': 'tool_use' }
    invocations = processor.normalize_invocations( response )
    assert len( invocations ) == 1
    assert 'toolu_1' in caplog.text
    message = processor.prepare_message( response )
    assert message == { 'role': 'assistant', 'content': [ block ] }


def test_330_list_of_blocks_or_items( ):
    ''' Lists of content blocks (Anthropic) and of output items (Responses)
        are taken as the response itself.
    '''
    anthropic_ = produce_processor( 'anthropic' )
    blocks = [
        { 'type': 'text', 'text': 'Looking.' },
        { 'type': 'tool_use', 'id': 'toolu_2', 'name': 'f', 'input': { } } ]
    assert anthropic_.prepare_message( blocks ) == {
        'role': 'assistant', 'content': blocks }
    responses = produce_processor( 'openai-responses' )
    items = [ {
        'type': 'function_call', 'id': 'fc_1', 'call_id': 'call_1',
        'name': 'f', 'arguments': '{}' } ]
    assert responses.prepare_message( items ) == items
