# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over the real OpenAI client (Chat Completions).

    The client talks to a scripted server on 127.0.0.1 which serves
    real-shaped completions in order.
'''


import json

import openai
import pytest

import invocables

from invocables import conversations, exceptions
from invocables.conversations import (
    ConclusionEvent,
    InvocationEvent,
    ResponseEvent,
    ResultEvent,
    ResultsEvent,
    Terminations,
    TextEvent,
)

from . import scripted


def _produce_ensemble( calls ):

    def GetWeatherArgs( # noqa: N802
        city: str, country: str, units: str = 'c'
    ) -> str:
        ''' Returns the current weather in a city. '''
        calls.append( ( 'GetWeatherArgs', city ) )
        return f"Rain in {city}, {country}."

    def get_stock_price( ticker: str, exchange: str ) -> dict:
        ''' Returns the price of a stock. '''
        calls.append( ( 'get_stock_price', ticker ) )
        return { 'ticker': ticker, 'price': 123.5 }

    def getCurrentWeather( # noqa: N802
        location: str, unit: str = 'celsius'
    ) -> str:
        ''' Returns the current weather at a location. '''
        calls.append( ( 'getCurrentWeather', location ) )
        return f"Snow in {location}."

    return invocables.produce_ensemble(
        'tools', [ GetWeatherArgs, get_stock_price, getCurrentWeather ] )


def _produce_client( server ):
    return openai.AsyncOpenAI(
        base_url = f"{server.url}/v1", api_key = 'test', max_retries = 0 )


async def _converse( answers, prompt = 'Weather?', **options ):
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    options.setdefault( 'model', 'gpt-4o' )
    with scripted.ScriptedServer( answers ) as server:
        conversation = conversations.produce_conversation(
            'openai', _produce_client( server ), [ ensemble ], **options )
        transcript = await conversation.converse( prompt )
    return transcript, server.requests, calls


@pytest.mark.asyncio
async def test_100_parallel_calls_then_answer( ):
    ''' Parallel calls of a real capture run; each result goes back as a
        tool message matched by id; then the final answer.
    '''
    transcript, requests, calls = await _converse( [
        scripted.answer_fixture( 'openai_chat/parallel-tool-calls.json' ),
        scripted.openai_text( 'Rain in Edinburgh; AAPL at 123.5.' ),
    ], instructions = 'Be brief.', tokens_maximum = 300 )
    assert transcript.termination is Terminations.Completion
    assert transcript.text == 'Rain in Edinburgh; AAPL at 123.5.'
    assert sorted( calls ) == [
        ( 'GetWeatherArgs', 'Edinburgh' ), ( 'get_stock_price', 'AAPL' ) ]
    messages = transcript.messages
    assert [ message[ 'role' ] for message in messages ] == [
        'user', 'assistant', 'tool', 'tool', 'assistant' ]
    assistant = messages[ 1 ]
    assert assistant[ 'content' ] is None
    assert [ call[ 'id' ] for call in assistant[ 'tool_calls' ] ] == [
        'call_fdNz3vOBKYgOIpMdWotB9MjY', 'call_h1DWI1POMJLb0KwIyQHWXD4p' ]
    assert assistant[ 'tool_calls' ][ 1 ][ 'function' ] == {
        'name': 'get_stock_price',
        'arguments': '{"ticker": "AAPL", "exchange": "NASDAQ"}' }
    assert messages[ 2 ] == {
        'role': 'tool', 'tool_call_id': 'call_fdNz3vOBKYgOIpMdWotB9MjY',
        'content': 'Rain in Edinburgh, GB.' }
    assert messages[ 3 ][ 'tool_call_id' ] == 'call_h1DWI1POMJLb0KwIyQHWXD4p'
    assert json.loads( messages[ 3 ][ 'content' ] ) == {
        'ticker': 'AAPL', 'price': 123.5 }
    assert messages[ 4 ] == {
        'role': 'assistant', 'content': 'Rain in Edinburgh; AAPL at 123.5.' }
    first, second = ( request.body for request in requests )
    assert requests[ 0 ].path == '/v1/chat/completions'
    assert first[ 'messages' ] == [
        { 'role': 'system', 'content': 'Be brief.' }, messages[ 0 ] ]
    assert first[ 'max_completion_tokens' ] == 300
    assert [ tool[ 'function' ][ 'name' ] for tool in first[ 'tools' ] ] == [
        'GetWeatherArgs', 'get_stock_price', 'getCurrentWeather' ]
    assert second[ 'messages' ][ 1 : ] == messages[ : 4 ]


@pytest.mark.asyncio
async def test_110_synthesized_ids_match( ):
    ''' Calls without ids (some compatible servers) get synthesized ids,
        written into the assistant message, so results match their calls.
    '''
    transcript, requests, _ = await _converse( [
        scripted.openai_tool_calls( [
            ( None, 'getCurrentWeather', { 'location': 'Oslo' } ),
            ( None, 'getCurrentWeather', { 'location': 'Bergen' } ) ] ),
        scripted.openai_text( 'Snow.' ),
    ] )
    calls = transcript.messages[ 1 ][ 'tool_calls' ]
    identifiers = [ call[ 'id' ] for call in calls ]
    assert len( set( identifiers ) ) == 2
    assert all(
        identifier.startswith( 'call_' ) for identifier in identifiers )
    assert [
        message[ 'tool_call_id' ] for message in transcript.messages[ 2 : 4 ]
    ] == identifiers
    assert requests[ 1 ].body[ 'messages' ][ 1 ][ 'tool_calls' ] == calls


@pytest.mark.asyncio
async def test_120_rounds_bound_and_refusal( ):
    ''' At the bound the loop stops (Exhaustion), every call answered; a
        refused call gets an error result and is not run.
    '''
    transcript, requests, calls = await _converse( [
        scripted.openai_tool_calls( [
            ( 'call_1', 'getCurrentWeather', { 'location': 'Oslo' } ),
            ( 'call_2', 'get_stock_price',
              { 'ticker': 'X', 'exchange': 'Y' } ) ] ),
        scripted.openai_text( 'Unused.' ),
    ], rounds_maximum = 1,
       approver = lambda invocation: invocation.name != 'get_stock_price' )
    assert transcript.termination is Terminations.Exhaustion
    assert len( requests ) == 1
    assert calls == [ ( 'getCurrentWeather', 'Oslo' ) ]
    assert transcript.messages[ -1 ][ 'tool_call_id' ] == 'call_2'
    assert transcript.messages[ -1 ][ 'content' ].startswith(
        "Error: The user did not approve" )


@pytest.mark.asyncio
async def test_200_streamed_loop( ):
    ''' Streamed loop over a real capture: the call is yielded when
        complete, the answer as text deltas; transcript carries raw
        arguments and the result by id.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'openai_chat/single-tool-call-stream.sse' ),
        scripted.openai_text_stream( [ 'Rain ', 'in ', 'Edinburgh.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'openai', _produce_client( server ), [ ensemble ],
            model = 'gpt-4o' )
        events = [
            event async for event in conversation.converse_continuous(
                'Weather in Edinburgh?' ) ]
    assert [ type( event ) for event in events ] == [
        InvocationEvent, ResponseEvent, ResultEvent, ResultsEvent,
        TextEvent, TextEvent, TextEvent, ResponseEvent, ConclusionEvent ]
    assert calls == [ ( 'GetWeatherArgs', 'Edinburgh' ) ]
    transcript = events[ -1 ].transcript
    assert transcript.text == 'Rain in Edinburgh.'
    assert transcript.messages[ 1 ] == {
        'role': 'assistant', 'content': None,
        'tool_calls': [ {
            'id': 'call_c91SqDXlYFuETYv8mUHzz6pp', 'type': 'function',
            'function': {
                'name': 'GetWeatherArgs',
                'arguments':
                    '{"city":"Edinburgh","country":"UK","units":"c"}' } } ] }
    assert transcript.messages[ 3 ] == {
        'role': 'assistant', 'content': 'Rain in Edinburgh.' }
    second = server.requests[ 1 ].body
    assert second[ 'stream' ] is True
    assert second[ 'messages' ][ 2 ] == {
        'role': 'tool', 'tool_call_id': 'call_c91SqDXlYFuETYv8mUHzz6pp',
        'content': 'Rain in Edinburgh, UK.' }


@pytest.mark.asyncio
async def test_210_streamed_compatible_server( ):
    ''' Stream of an OpenAI-compatible server (index starting at 1,
        comment lines, reasoning deltas) gives the call and its result.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture(
            'openai_chat/openrouter-index-starts-at-1-stream.sse' ),
        scripted.openai_text_stream( [ 'Snow.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'openai', _produce_client( server ), [ ensemble ],
            model = 'openai/o4-mini' )
        events = [
            event async for event in conversation.converse_continuous(
                'Weather in Boston?' ) ]
    assert calls == [ ( 'getCurrentWeather', 'Boston, MA' ) ]
    transcript = events[ -1 ].transcript
    call = transcript.messages[ 1 ][ 'tool_calls' ][ 0 ]
    assert call[ 'id' ] == 'call_LxBJm3xDQRdYTpm7kjk5sLNB'
    assert json.loads( call[ 'function' ][ 'arguments' ] ) == {
        'location': 'Boston, MA', 'unit': 'fahrenheit' }
    assert transcript.messages[ 2 ][ 'tool_call_id' ] == call[ 'id' ]
    assert transcript.text == 'Snow.'


@pytest.mark.asyncio
async def test_220_streamed_invalid_arguments( ):
    ''' Arguments which are not JSON reach the model as an error result;
        the transcript keeps them as sent.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    chunks = scripted.openai_text_stream( [ ] )
    broken = chunks.body.replace(
        b'"delta": {}', b'"delta": {"tool_calls": [{"index": 0, '
        b'"id": "call_x", "type": "function", "function": '
        b'{"name": "getCurrentWeather", "arguments": "{\\"loc"}}]}' )
    broken = broken.replace( b'"stop"', b'"tool_calls"' )
    with scripted.ScriptedServer( [
        scripted.Answer( 200, 'text/event-stream', broken ),
        scripted.openai_text_stream( [ 'Oops.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'openai', _produce_client( server ), [ ensemble ], model = 'm' )
        events = [
            event async for event in conversation.converse_continuous( 'Hi' )
        ]
    transcript = events[ -1 ].transcript
    assert calls == [ ]
    assert transcript.messages[ 1 ][ 'tool_calls' ][ 0 ][ 'function' ][
        'arguments' ] == '{"loc'
    assert transcript.messages[ 2 ][ 'content' ].startswith( 'Error: ' )
    assert 'not valid JSON' in transcript.messages[ 2 ][ 'content' ]


@pytest.mark.asyncio
async def test_230_streamed_loop_abandoned( ):
    ''' A streamed loop left early (and closed) stops cleanly: no tool runs
        and no further request is made.
    '''
    import contextlib
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.openai_text_stream( [ 'One ', 'two ', 'three.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'openai', _produce_client( server ), [ ensemble ], model = 'm' )
        seen = [ ]
        async with contextlib.aclosing(
            conversation.converse_continuous( 'Count.' )
        ) as events:
            async for event in events:
                seen.append( event )
                if isinstance( event, TextEvent ): break
    assert [ event.text for event in seen ] == [ 'One ' ]
    assert len( server.requests ) == 1
    assert calls == [ ]


@pytest.mark.asyncio
async def test_300_provider_error_propagates( ):
    ''' An error body of a real capture propagates as the SDK's error. '''
    with pytest.raises( openai.NotFoundError ):
        await _converse( [ scripted.answer_fixture(
            'openai_chat/error-404-model-not-found.json', 404 ) ] )


@pytest.mark.asyncio
async def test_310_parameters_pass_through( ):
    ''' Parameters go to the client as they are; the processor may be
        given (strict mode).
    '''
    from invocables.processors import produce_processor
    _, requests, _ = await _converse(
        [ scripted.openai_text( 'Hi.' ) ],
        parameters = { 'temperature': 0, 'max_tokens': 50 },
        processor = produce_processor( 'openai', strict = True ) )
    body = requests[ 0 ].body
    assert body[ 'temperature' ] == 0
    assert body[ 'max_tokens' ] == 50
    assert 'max_completion_tokens' not in body
    assert body[ 'tools' ][ 0 ][ 'function' ][ 'strict' ] is True


def test_400_unknown_option_names_known( ):
    ''' Unknown options are refused before any request. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        conversations.produce_conversation(
            'openai', None, [ ], model = 'm', max_tokens = 5 )
