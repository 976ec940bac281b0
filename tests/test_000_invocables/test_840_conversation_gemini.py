# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over the real google-genai client (Gemini).

    The client talks to a scripted server on 127.0.0.1 which serves
    real-shaped responses in order.
'''


import json

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

    def passphrase_test_tool( passphrase: str ) -> str:
        ''' Checks a passphrase. '''
        calls.append( ( 'passphrase_test_tool', passphrase ) )
        return 'The passphrase is correct.'

    def customAdditionImplementation( a: int, b: int ) -> dict: # noqa: N802
        ''' Adds two integers. '''
        calls.append( ( 'customAdditionImplementation', a, b ) )
        return { 'sum': a + b }

    return invocables.produce_ensemble(
        'tools', [ passphrase_test_tool, customAdditionImplementation ] )


def _produce_client( server ):
    from google import genai
    return genai.Client(
        api_key = 'test', http_options = { 'base_url': server.url } )


@pytest.mark.asyncio
async def test_100_function_call_then_answer( ):
    ''' Function call of a real capture (no id, thought signature) runs;
        its response goes back by name; then the final answer.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'gemini/single-function-call.json' ),
        scripted.gemini_text( 'The passphrase was accepted.' ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'gemini', _produce_client( server ), [ ensemble ],
            model = 'gemini-2.5-flash', instructions = 'Be brief.',
            tokens_maximum = 256, parameters = { 'temperature': 0 } )
        transcript = await conversation.converse( 'Try "portal".' )
    assert transcript.termination is Terminations.Completion
    assert transcript.text == 'The passphrase was accepted.'
    assert calls == [ ( 'passphrase_test_tool', 'portal' ) ]
    contents = transcript.messages
    assert [ content[ 'role' ] for content in contents ] == [
        'user', 'model', 'user', 'model' ]
    call = contents[ 1 ][ 'parts' ][ 0 ]
    assert call[ 'function_call' ] == {
        'name': 'passphrase_test_tool', 'args': { 'passphrase': 'portal' } }
    assert call[ 'thought_signature' ].startswith( 'CvABAXLI2ny6' )
    assert contents[ 2 ] == { 'role': 'user', 'parts': [ {
        'function_response': {
            'name': 'passphrase_test_tool',
            'response': { 'result': 'The passphrase is correct.' } } } ] }
    json.dumps( contents )
    first, second = ( request.body for request in server.requests )
    assert server.requests[ 0 ].path.endswith(
        '/models/gemini-2.5-flash:generateContent' )
    assert first[ 'systemInstruction' ][ 'parts' ][ 0 ][ 'text' ] == (
        'Be brief.' )
    assert first[ 'generationConfig' ][ 'maxOutputTokens' ] == 256
    assert first[ 'generationConfig' ][ 'temperature' ] == 0
    assert [
        declaration[ 'name' ]
        for declaration in first[ 'tools' ][ 0 ][ 'functionDeclarations' ]
    ] == [ 'passphrase_test_tool', 'customAdditionImplementation' ]
    assert second[ 'contents' ][ 1 ][ 'parts' ][ 0 ][ 'thoughtSignature' ] == (
        call[ 'thought_signature' ] )
    assert second[ 'contents' ][ 2 ] == { 'role': 'user', 'parts': [ {
        'functionResponse': contents[ 2 ][ 'parts' ][ 0 ][
            'function_response' ] } ] }


@pytest.mark.asyncio
async def test_110_parallel_calls_with_ids( ):
    ''' Parallel calls each get a response, in order; ids which Gemini
        gives are echoed.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.gemini_function_calls( [
            ( 'id-1', 'customAdditionImplementation', { 'a': 1, 'b': 2 } ),
            ( 'id-2', 'customAdditionImplementation', { 'a': 3, 'b': 4 } ),
        ] ),
        scripted.gemini_text( '3 and 7.' ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'gemini', _produce_client( server ), [ ensemble ], model = 'g' )
        transcript = await conversation.converse( 'Add.' )
    responses = [
        part[ 'function_response' ]
        for part in transcript.messages[ 2 ][ 'parts' ] ]
    assert [ response[ 'id' ] for response in responses ] == [
        'id-1', 'id-2' ]
    assert [ response[ 'response' ] for response in responses ] == [
        { 'sum': 3 }, { 'sum': 7 } ]
    assert sorted( calls ) == [
        ( 'customAdditionImplementation', 1, 2 ),
        ( 'customAdditionImplementation', 3, 4 ) ]


@pytest.mark.asyncio
async def test_200_streamed_loop( ):
    ''' Streamed loop over a real capture (CRLF framing, integer
        arguments): the call, then the answer's text deltas; streamed text
        parts are joined in the transcript.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'gemini/int-args-stream.sse' ),
        scripted.gemini_text_stream( [ 'The sum ', 'is 5.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'gemini', _produce_client( server ), [ ensemble ],
            model = 'gemini-3-pro-preview' )
        events = [
            event async for event in conversation.converse_continuous(
                'Add 2 and 3.' ) ]
    assert [ type( event ) for event in events ] == [
        InvocationEvent, ResponseEvent, ResultEvent, ResultsEvent,
        TextEvent, TextEvent, ResponseEvent, ConclusionEvent ]
    assert calls == [ ( 'customAdditionImplementation', 2, 3 ) ]
    transcript = events[ -1 ].transcript
    assert transcript.text == 'The sum is 5.'
    assert transcript.messages[ -1 ] == {
        'role': 'model', 'parts': [ { 'text': 'The sum is 5.' } ] }
    assert len( transcript.messages[ 1 ][ 'parts' ] ) == 1
    assert server.requests[ 0 ].path.endswith(
        ':streamGenerateContent?alt=sse' )
    assert server.requests[ 1 ].body[ 'contents' ][ 2 ][ 'parts' ][ 0 ][
        'functionResponse' ][ 'response' ] == { 'sum': 5 }
