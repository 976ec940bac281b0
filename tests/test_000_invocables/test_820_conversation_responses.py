# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over the real OpenAI client (Responses API).

    The client talks to a scripted server on 127.0.0.1 which serves
    real-shaped responses in order. The loop is stateless: each request
    carries the whole transcript as input items.
'''


import openai
import pytest

import invocables

from invocables import conversations
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

    def get_current_weather( location: str, unit: str = 'celsius' ) -> str:
        ''' Returns the current weather at a location. '''
        calls.append( ( 'get_current_weather', location ) )
        return f"Fog in {location}."

    def get_capital( country: str ) -> str:
        ''' Returns the capital of a country. '''
        calls.append( ( 'get_capital', country ) )
        if country == 'PotatoLand':
            raise invocables.exceptions.InvocationRefusal(
                "No such country." )
        return 'Paris'

    return invocables.produce_ensemble(
        'tools', [ get_current_weather, get_capital ] )


def _produce_client( server ):
    return openai.AsyncOpenAI(
        base_url = f"{server.url}/v1", api_key = 'test', max_retries = 0 )


@pytest.mark.asyncio
async def test_100_function_call_then_answer( ):
    ''' Function call of a real capture runs; its output goes back by
        call id with the output items; then the final answer.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture(
            'openai_responses/single-function-call.json' ),
        scripted.responses_text( 'Foggy in San Francisco.' ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'openai-responses', _produce_client( server ), [ ensemble ],
            model = 'gpt-4o', instructions = 'Be brief.',
            tokens_maximum = 200 )
        transcript = await conversation.converse( 'Weather in SF?' )
    assert transcript.termination is Terminations.Completion
    assert transcript.rounds == 2
    assert transcript.text == 'Foggy in San Francisco.'
    assert calls == [ ( 'get_current_weather', 'San Francisco, CA' ) ]
    items = transcript.messages
    assert items[ 0 ] == { 'role': 'user', 'content': 'Weather in SF?' }
    assert items[ 1 ][ 'type' ] == 'function_call'
    assert items[ 1 ][ 'call_id' ] == 'call_guWIDINadhibniyiyQnbRyK7'
    assert items[ 2 ] == {
        'type': 'function_call_output',
        'call_id': 'call_guWIDINadhibniyiyQnbRyK7',
        'output': 'Fog in San Francisco, CA.' }
    assert items[ 3 ][ 'type' ] == 'message'
    first, second = ( request.body for request in server.requests )
    assert server.requests[ 0 ].path == '/v1/responses'
    assert first[ 'instructions' ] == 'Be brief.'
    assert first[ 'max_output_tokens' ] == 200
    assert first[ 'input' ] == items[ : 1 ]
    assert [ tool[ 'name' ] for tool in first[ 'tools' ] ] == [
        'get_current_weather', 'get_capital' ]
    assert second[ 'input' ] == items[ : 3 ]


@pytest.mark.asyncio
async def test_110_parallel_calls_and_bound( ):
    ''' Parallel function calls each get an output, in order; the bound
        on rounds stops the loop with every call answered.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.responses_function_calls( [
            ( 'call_a', 'get_capital', { 'country': 'France' } ),
            ( 'call_b', 'get_current_weather', { 'location': 'Lyon' } ),
        ], text = 'Looking up.' ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'openai-responses', _produce_client( server ), [ ensemble ],
            model = 'gpt-4o', rounds_maximum = 1 )
        transcript = await conversation.converse( 'Capital and weather?' )
    assert transcript.termination is Terminations.Exhaustion
    assert transcript.text == 'Looking up.'
    outputs = [
        item for item in transcript.messages
        if item.get( 'type' ) == 'function_call_output' ]
    assert [ item[ 'call_id' ] for item in outputs ] == [ 'call_a', 'call_b' ]
    assert [ item[ 'output' ] for item in outputs ] == [
        'Paris', 'Fog in Lyon.' ]
    assert len( server.requests ) == 1


@pytest.mark.asyncio
async def test_200_streamed_loop( ):
    ''' Streamed loop over a real capture (reasoning, narration, call):
        text deltas and the call come as they happen; the tool's refusal
        reaches the model; output items are carried back as input.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture(
            'openai_responses/reasoning-text-then-function-call-stream.sse' ),
        scripted.responses_text_stream( [ 'There is ', 'no such place.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'openai-responses', _produce_client( server ), [ ensemble ],
            model = 'gpt-5.5' )
        events = [
            event async for event in conversation.converse_continuous(
                'Capital of PotatoLand?' ) ]
    genera = [ type( event ) for event in events ]
    assert genera.count( TextEvent ) == 13 + 2
    assert genera[ -8 : ] == [
        InvocationEvent, ResponseEvent, ResultEvent, ResultsEvent,
        TextEvent, TextEvent, ResponseEvent, ConclusionEvent ]
    assert calls == [ ( 'get_capital', 'PotatoLand' ) ]
    transcript = events[ -1 ].transcript
    assert transcript.text == 'There is no such place.'
    assert [ item.get( 'type' ) for item in transcript.messages ] == [
        None, 'reasoning', 'message', 'function_call',
        'function_call_output', 'message' ]
    assert transcript.messages[ 4 ] == {
        'type': 'function_call_output',
        'call_id': 'call_LabG58Uhrq9kZvR52BYKjToD',
        'output': 'Error: No such country.' }
    second = server.requests[ 1 ].body
    assert second[ 'stream' ] is True
    assert second[ 'input' ] == transcript.messages[ : 5 ]
    assert second[ 'input' ][ 1 ][ 'encrypted_content' ].startswith( 'gAAAA' )


@pytest.mark.asyncio
async def test_300_provider_error_propagates( ):
    ''' An error body of a real capture propagates as the SDK's error. '''
    ensemble = _produce_ensemble( [ ] )
    with scripted.ScriptedServer( [ scripted.answer_fixture(
        'openai_responses/error-400-model-not-found.json', 400 ) ] ) as server:
        conversation = conversations.produce_conversation(
            'openai-responses', _produce_client( server ), [ ensemble ],
            model = 'nope' )
        with pytest.raises( openai.BadRequestError ):
            await conversation.converse( 'Hi' )
