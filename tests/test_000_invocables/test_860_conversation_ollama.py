# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over Ollama's native chat API, with an httpx client.

    The client talks to a scripted server on 127.0.0.1 which serves
    real-shaped responses in order.
'''


import httpx
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

    def getWeather( location: str ) -> str: # noqa: N802
        ''' Returns the weather at a location. '''
        calls.append( ( 'getWeather', location ) )
        return f"Mild in {location}."

    def getTime( ) -> str: # noqa: N802
        ''' Returns the current time. '''
        calls.append( ( 'getTime', ) )
        return '2025-06-23 11:09'

    return invocables.produce_ensemble( 'tools', [ getWeather, getTime ] )


async def _converse( server, ensemble, prompt, streaming = False, **options ):
    async with httpx.AsyncClient( base_url = server.url ) as client:
        conversation = conversations.produce_conversation(
            'ollama', client, [ ensemble ], model = 'qwen3:8b', **options )
        if not streaming: return await conversation.converse( prompt )
        return [
            event async for event in conversation.converse_continuous(
                prompt ) ]


@pytest.mark.asyncio
async def test_100_tool_call_then_answer( ):
    ''' Tool call of a real capture (no id) runs; its result goes back by
        tool name; then the final answer.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture(
            'ollama/think-content-then-tool-call-no-id.json' ),
        scripted.ollama_text( 'It is June 23rd.' ),
    ] ) as server:
        transcript = await _converse(
            server, ensemble, 'What is the date?',
            instructions = 'Be brief.', tokens_maximum = 64 )
    assert transcript.termination is Terminations.Completion
    assert transcript.text == 'It is June 23rd.'
    assert calls == [ ( 'getTime', ) ]
    messages = transcript.messages
    assert [ message[ 'role' ] for message in messages ] == [
        'user', 'assistant', 'tool', 'assistant' ]
    assert messages[ 1 ][ 'content' ].startswith( '<think>' )
    assert messages[ 1 ][ 'tool_calls' ] == [
        { 'function': { 'name': 'getTime', 'arguments': { } } } ]
    assert messages[ 2 ] == {
        'role': 'tool', 'content': '2025-06-23 11:09',
        'tool_name': 'getTime' }
    first, second = ( request.body for request in server.requests )
    assert server.requests[ 0 ].path == '/api/chat'
    assert first[ 'stream' ] is False
    assert first[ 'messages' ][ 0 ] == {
        'role': 'system', 'content': 'Be brief.' }
    assert first[ 'options' ] == { 'num_predict': 64 }
    assert [ tool[ 'function' ][ 'name' ] for tool in first[ 'tools' ] ] == [
        'getWeather', 'getTime' ]
    assert second[ 'messages' ][ 1 : ] == messages[ : 3 ]


@pytest.mark.asyncio
async def test_110_ids_echoed( ):
    ''' Calls with ids (recent servers) get results with their ids. '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'ollama/cloud-tool-call-with-id.json' ),
        scripted.ollama_text( 'Mild.' ),
    ] ) as server:
        transcript = await _converse( server, ensemble, 'Weather in SF?' )
    assert calls == [ ( 'getWeather', 'San Francisco, CA' ) ]
    assert transcript.messages[ 2 ] == {
        'role': 'tool', 'content': 'Mild in San Francisco, CA.',
        'tool_name': 'getWeather', 'tool_call_id': 'call_mo1wm122' }
    assert transcript.messages[ 1 ][ 'thinking' ].startswith( 'User asks' )


@pytest.mark.asyncio
async def test_200_streamed_loop( ):
    ''' Streamed loop over NDJSON chunks: text deltas, the calls, then the
        answer; the assistant message is assembled from the chunks.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.ollama_stream(
            [ 'Checking ', 'both.' ],
            [ ( None, 'getWeather', { 'location': 'Oslo' } ),
              ( None, 'getTime', { } ) ] ),
        scripted.ollama_stream( [ 'Mild, ', 'at 11:09.' ] ),
    ] ) as server:
        events = await _converse(
            server, ensemble, 'Weather and time?', streaming = True )
    assert [ type( event ) for event in events ] == [
        TextEvent, TextEvent, InvocationEvent, InvocationEvent,
        ResponseEvent, ResultEvent, ResultEvent, ResultsEvent,
        TextEvent, TextEvent, ResponseEvent, ConclusionEvent ]
    assert sorted( calls ) == [ ( 'getTime', ), ( 'getWeather', 'Oslo' ) ]
    transcript = events[ -1 ].transcript
    assert transcript.text == 'Mild, at 11:09.'
    assistant = transcript.messages[ 1 ]
    assert assistant[ 'content' ] == 'Checking both.'
    assert [ call[ 'function' ][ 'name' ] for call in assistant[
        'tool_calls' ] ] == [ 'getWeather', 'getTime' ]
    assert [ message[ 'tool_name' ] for message in transcript.messages[
        2 : 4 ] ] == [ 'getWeather', 'getTime' ]
    assert server.requests[ 0 ].body[ 'stream' ] is True


@pytest.mark.asyncio
async def test_300_error_body_raises( ):
    ''' An error body raises provider failure with the status, whole or
        streamed.
    '''
    ensemble = _produce_ensemble( [ ] )
    for streaming in ( False, True ):
        with scripted.ScriptedServer( [ scripted.answer_fixture(
            'ollama/error-400-model-does-not-support-tools.json', 400 )
        ] ) as server:
            with pytest.raises( exceptions.ProviderFailure ) as caught:
                await _converse(
                    server, ensemble, 'Hi', streaming = streaming )
        assert caught.value.status == 400
        assert 'does not support tools' in caught.value.message
