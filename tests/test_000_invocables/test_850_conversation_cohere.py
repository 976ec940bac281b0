# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over the real Cohere client (Chat v2).

    The client talks to a scripted server on 127.0.0.1 which serves
    real-shaped responses in order.
'''


import cohere
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

    def get_weather( city: str ) -> dict:
        ''' Returns the weather in a city. '''
        calls.append( ( 'get_weather', city ) )
        return { 'city': city, 'sky': 'clear' }

    def currentTime( ) -> str: # noqa: N802
        ''' Returns the current time. '''
        calls.append( ( 'currentTime', ) )
        return '12:00'

    return invocables.produce_ensemble(
        'tools', [ get_weather, currentTime ] )


def _produce_client( server ):
    return cohere.AsyncClientV2(
        api_key = 'test', base_url = server.url, max_retries = 0,
        timeout = 10 )


@pytest.mark.asyncio
async def test_100_tool_call_then_answer( ):
    ''' Tool call of a real capture runs; its result goes back by id as
        a document; then the final answer.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'cohere/single-tool-call.json' ),
        scripted.cohere_text( 'Clear skies in Paris.' ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'cohere', _produce_client( server ), [ ensemble ],
            model = 'command-a', instructions = 'Be brief.',
            tokens_maximum = 100 )
        transcript = await conversation.converse( 'Weather in Paris?' )
    assert transcript.termination is Terminations.Completion
    assert transcript.text == 'Clear skies in Paris.'
    assert calls == [ ( 'get_weather', 'Paris' ) ]
    messages = transcript.messages
    assert [ message[ 'role' ] for message in messages ] == [
        'user', 'assistant', 'tool', 'assistant' ]
    assert messages[ 1 ][ 'tool_calls' ][ 0 ][ 'id' ] == (
        'get_weather_9gpb31r7h7mj' )
    assert messages[ 1 ][ 'tool_plan' ].startswith( 'I will use' )
    assert messages[ 2 ] == {
        'role': 'tool', 'tool_call_id': 'get_weather_9gpb31r7h7mj',
        'content': [ { 'type': 'document', 'document': {
            'data': { 'city': 'Paris', 'sky': 'clear' } } } ] }
    first, second = ( request.body for request in server.requests )
    assert server.requests[ 0 ].path == '/v2/chat'
    assert first[ 'messages' ][ 0 ] == {
        'role': 'system', 'content': 'Be brief.' }
    assert first[ 'max_tokens' ] == 100
    assert [ tool[ 'function' ][ 'name' ] for tool in first[ 'tools' ] ] == [
        'get_weather', 'currentTime' ]
    assert second[ 'messages' ][ 1 : ] == messages[ : 3 ]


@pytest.mark.asyncio
async def test_200_streamed_loop( ):
    ''' Streamed loop over a real capture (tool plan, empty arguments):
        the call, then the answer's text deltas.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'cohere/empty-args-stream.sse' ),
        scripted.cohere_text_stream( [ 'It is ', 'noon.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'cohere', _produce_client( server ), [ ensemble ],
            model = 'command-a' )
        events = [
            event async for event in conversation.converse_continuous(
                'What time is it?' ) ]
    assert [ type( event ) for event in events ] == [
        InvocationEvent, ResponseEvent, ResultEvent, ResultsEvent,
        TextEvent, TextEvent, ResponseEvent, ConclusionEvent ]
    assert calls == [ ( 'currentTime', ) ]
    transcript = events[ -1 ].transcript
    assert transcript.text == 'It is noon.'
    assert transcript.messages[ 1 ] == {
        'role': 'assistant',
        'tool_plan': 'I will use the currentTime tool to find the current '
            'time.',
        'tool_calls': [ {
            'id': 'currentTime_y46ar19t5gvw', 'type': 'function',
            'function': { 'name': 'currentTime', 'arguments': '{}' } } ] }
    assert transcript.messages[ 2 ][ 'tool_call_id' ] == (
        'currentTime_y46ar19t5gvw' )
    assert transcript.messages[ 3 ] == {
        'role': 'assistant',
        'content': [ { 'type': 'text', 'text': 'It is noon.' } ] }
    second = server.requests[ 1 ].body
    assert second[ 'stream' ] is True
    assert second[ 'messages' ] == transcript.messages[ : 3 ]
