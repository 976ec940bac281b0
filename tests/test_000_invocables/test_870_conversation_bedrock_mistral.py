# SPDX-License-Identifier: Apache-2.0

''' Conversation loops over Bedrock (boto3's client) and Mistral
    (mistralai's client): a tool round trip, whole and streamed.

    The clients talk to a scripted server on 127.0.0.1 which serves real
    captures, then real-shaped final answers.
'''


import json

import boto3
import pytest

from mistralai.client import Mistral

import invocables

from invocables import conversations
from invocables.conversations import Terminations

from . import scripted


_BEDROCK_TEXT = {
    'metrics': { 'latencyMs': 100 },
    'output': { 'message': {
        'role': 'assistant', 'content': [ { 'text': 'It is 120.' } ] } },
    'stopReason': 'end_turn',
    'usage': { 'inputTokens': 10, 'outputTokens': 4, 'totalTokens': 14 },
}
_MISTRAL_TEXT = {
    'id': 'b1ee0303693e452d97446f47f1d5a685', 'created': 1787150061,
    'model': 'mistral-small-latest', 'object': 'chat.completion',
    'usage': {
        'prompt_tokens': 159, 'total_tokens': 187, 'completion_tokens': 28 },
    'choices': [ { 'index': 0, 'finish_reason': 'stop', 'message': {
        'role': 'assistant', 'content': 'Sunny in Berlin.' } } ],
}


def _produce_ensemble( calls ):

    def calculator( expression: str ) -> str:
        ''' Evaluates an arithmetic expression. '''
        calls.append( ( 'calculator', expression ) )
        return '120'

    def get_temperature( city: str ) -> str:
        ''' Returns the temperature in a city. '''
        calls.append( ( 'get_temperature', city ) )
        return '21 C'

    def weather( latitude: str, longitude: str ) -> str:
        ''' Returns the weather at a place. '''
        calls.append( ( 'weather', latitude, longitude ) )
        return 'Sunny.'

    return invocables.produce_ensemble(
        'tools', [ calculator, get_temperature, weather ] )


def _produce_bedrock_client( server ):
    return boto3.client(
        'bedrock-runtime', endpoint_url = server.url,
        region_name = 'us-east-1', aws_access_key_id = 'testing',
        aws_secret_access_key = 'testing' )


@pytest.mark.asyncio
async def test_100_bedrock_round_trip( ):
    ''' A real Converse capture's tool call runs; its result goes back as
        a ``toolResult`` with its id; then the final answer.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'bedrock/text-then-tool-use.json' ),
        scripted.Answer(
            200, 'application/json',
            json.dumps( _BEDROCK_TEXT ).encode( ) ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'bedrock', _produce_bedrock_client( server ), [ ensemble ],
            model = 'us.amazon.nova-2-lite-v1:0',
            instructions = 'Be brief.', tokens_maximum = 64 )
        async with ensemble:
            transcript = await conversation.converse( 'What is 15 * 8?' )
    assert transcript.termination is Terminations.Completion
    assert transcript.text == 'It is 120.'
    assert calls == [ ( 'calculator', '15 * 8' ) ]
    messages = transcript.messages
    assert [ message[ 'role' ] for message in messages ] == [
        'user', 'assistant', 'user', 'assistant' ]
    result = messages[ 2 ][ 'content' ][ 0 ][ 'toolResult' ]
    assert result == {
        'toolUseId': 'tooluse_XaQHWn1gW8bA6RHCR5fue8',
        'content': [ { 'text': '120' } ] }
    first, second = ( request.body for request in server.requests )
    assert server.requests[ 0 ].path.endswith( '/converse' )
    assert first[ 'system' ] == [ { 'text': 'Be brief.' } ]
    assert first[ 'inferenceConfig' ] == { 'maxTokens': 64 }
    assert [ tool[ 'toolSpec' ][ 'name' ] for tool in first[
        'toolConfig' ][ 'tools' ] ] == [
        'calculator', 'get_temperature', 'weather' ]
    assert len( second[ 'messages' ] ) == 3


@pytest.mark.asyncio
async def test_110_bedrock_streamed( ):
    ''' Streamed over ``converse_stream`` (boto3 read in a thread): text
        deltas, the call, then its result in the transcript.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    with scripted.ScriptedServer( [ scripted.Answer(
        200, 'application/vnd.amazon.eventstream',
        scripted.read_fixture(
            'bedrock/text-then-tool-use-stream.eventstream' ) ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'bedrock', _produce_bedrock_client( server ), [ ensemble ],
            model = 'us.amazon.nova-2-lite-v1:0', rounds_maximum = 1 )
        async with ensemble:
            events = [
                event async for event in conversation.converse_continuous(
                    'Temperature in Paris?' ) ]
    assert calls == [ ( 'get_temperature', 'Paris' ) ]
    transcript = events[ -1 ].transcript
    assert transcript.termination is Terminations.Exhaustion
    assistant = transcript.messages[ 1 ]
    assert assistant[ 'content' ][ -1 ][ 'toolUse' ][ 'toolUseId' ] == (
        'tooluse_lAG_zP8QRHmSYOwZzzaCqA' )
    assert any(
        isinstance( event, conversations.TextEvent ) for event in events )
    assert transcript.messages[ 2 ][ 'content' ][ 0 ][ 'toolResult' ][
        'toolUseId' ] == 'tooluse_lAG_zP8QRHmSYOwZzzaCqA'


@pytest.mark.asyncio
@pytest.mark.parametrize( 'streaming', ( False, True ) )
async def test_200_mistral_round_trip( streaming ):
    ''' A real Mistral capture's tool call runs; the assistant message and
        the result agree on its id; then the final answer.
    '''
    calls = [ ]
    ensemble = _produce_ensemble( calls )
    first = (
        'mistral/single-tool-call-stream.sse' if streaming
        else 'mistral/single-tool-call.json' )
    final = scripted.Answer(
        200, 'application/json', json.dumps( _MISTRAL_TEXT ).encode( ) )
    if streaming:
        chunk = {
            **_MISTRAL_TEXT, 'object': 'chat.completion.chunk',
            'choices': [ { 'index': 0, 'finish_reason': 'stop', 'delta': {
                'role': 'assistant', 'content': 'Sunny in Berlin.' } } ] }
        final = scripted.Answer(
            200, 'text/event-stream',
            f"data: {json.dumps( chunk )}\n\ndata: [DONE]\n\n".encode( ) )
    with scripted.ScriptedServer( [
        scripted.answer_fixture( first ), final,
    ] ) as server:
        client = Mistral( api_key = 'testing', server_url = server.url )
        conversation = conversations.produce_conversation(
            'mistral', client, [ ensemble ], model = 'mistral-small-latest',
            instructions = 'Be brief.' )
        async with ensemble:
            if streaming:
                events = [
                    event async for event in
                    conversation.converse_continuous( 'Weather in Berlin?' ) ]
                transcript = events[ -1 ].transcript
            else:
                transcript = await conversation.converse(
                    'Weather in Berlin?' )
    assert transcript.termination is Terminations.Completion
    assert transcript.text == 'Sunny in Berlin.'
    assert calls == [ ( 'weather', '52.5200', '13.4050' ) ]
    messages = transcript.messages
    assert [ message[ 'role' ] for message in messages ] == [
        'user', 'assistant', 'tool', 'assistant' ]
    identifier = messages[ 1 ][ 'tool_calls' ][ 0 ][ 'id' ]
    assert identifier == messages[ 2 ][ 'tool_call_id' ]
    second = server.requests[ 1 ].body
    assert second[ 'messages' ][ 0 ] == {
        'role': 'system', 'content': 'Be brief.' }
    assert second[ 'messages' ][ 3 ][ 'tool_call_id' ] == identifier
