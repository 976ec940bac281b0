# SPDX-License-Identifier: Apache-2.0
''' Typed application over Anthropic's Messages API, with no casts.

    The assistant message of a whole response
    (``processor.prepare_message( response )``) and of a stream
    (``accumulator.produce_message( )``), and the results of their calls,
    go into one ``list[ MessageParam ]``, which the SDK's client takes as it
    is; the conversation loop's transcript continues it. Pyright checks
    this file in its standard and strict modes. Run as a script, it answers
    a recorded response and a recorded stream, offline.
'''

import asyncio
import json

from collections.abc import AsyncIterable, AsyncIterator, Sequence

import anthropic

from anthropic.types import Message, MessageParam

import invocables

from invocables.conversations import produce_conversation
from invocables.processors import produce_processor


MODEL = 'claude-sonnet-4-5'


def survey_forecast( city: str ) -> str:
    ''' Gives the weather forecast of a city. '''
    return f"Sunny in {city}."


async def continue_whole(
    ensembles: Sequence[ invocables.Ensemble ],
    messages: list[ MessageParam ],
    response: Message,
) -> bool:
    ''' Appends response and the results of its calls; returns whether the
        model called tools.
    '''
    processor = produce_processor( 'anthropic' )
    messages.append( processor.prepare_message( response ) )
    invocations = processor.normalize_invocations( response )
    results = await processor.execute_invocations( invocations, ensembles )
    messages.extend( processor.nativize_results( results ) )
    return bool( invocations )


async def continue_streamed(
    ensembles: Sequence[ invocables.Ensemble ],
    messages: list[ MessageParam ],
    events: AsyncIterable[ object ],
) -> bool:
    ''' Reads stream, starting each tool as soon as its call is whole;
        appends the message of the stream and the results.
    '''
    processor = produce_processor( 'anthropic' )
    accumulator = processor.produce_accumulator( )
    running: list[ asyncio.Task[ tuple[ invocables.ResultCanister, ... ] ] ]
    running = [ ]
    async for event in events:
        for invocation in accumulator.ingest( event ):
            running.append( asyncio.create_task(
                processor.execute_invocations( [ invocation ], ensembles ) ) )
    invocations = accumulator.conclude( )
    messages.append( accumulator.produce_message( ) )
    results = [
        result for outcome in await asyncio.gather( *running )
        for result in outcome ]
    results.extend(
        await processor.execute_invocations( invocations, ensembles ) )
    messages.extend( processor.nativize_results( results ) )
    return bool( results )


async def converse(
    client: anthropic.AsyncAnthropic,
    ensembles: Sequence[ invocables.Ensemble ],
    prompt: str,
) -> list[ MessageParam ]:
    ''' Runs rounds of whole responses, then one streamed round. '''
    tools = produce_processor( 'anthropic' ).prepare_tools( ensembles )
    messages: list[ MessageParam ] = [ { 'role': 'user', 'content': prompt } ]
    for _ in range( 8 ):
        response = await client.messages.create(
            model = MODEL, max_tokens = 1024, messages = messages,
            tools = tools )
        if not await continue_whole( ensembles, messages, response ): break
    messages.append( { 'role': 'user', 'content': 'And tomorrow?' } )
    stream = await client.messages.create(
        model = MODEL, max_tokens = 1024, messages = messages,
        tools = tools, stream = True )
    await continue_streamed( ensembles, messages, stream )
    return messages


async def converse_looped(
    client: anthropic.AsyncAnthropic,
    ensembles: Sequence[ invocables.Ensemble ],
    messages: list[ MessageParam ],
) -> list[ MessageParam ]:
    ''' Lets the conversation loop continue the messages. '''
    conversation = produce_conversation(
        'anthropic', client, ensembles, model = MODEL )
    transcript = await conversation.converse( messages )
    return transcript.messages


RESPONSE: dict[ str, object ] = {
    'id': 'msg_1', 'type': 'message', 'role': 'assistant',
    'model': MODEL, 'stop_reason': 'tool_use', 'stop_sequence': None,
    'usage': { 'input_tokens': 10, 'output_tokens': 10 },
    'content': [
        { 'type': 'text', 'text': 'Let me look.' },
        { 'type': 'tool_use', 'id': 'toolu_1', 'name': 'survey_forecast',
          'input': { 'city': 'Oslo' } },
    ],
}
EVENTS: list[ dict[ str, object ] ] = [
    { 'type': 'content_block_start', 'index': 0, 'content_block': {
        'type': 'tool_use', 'id': 'toolu_2', 'name': 'survey_forecast',
        'input': { } } },
    { 'type': 'content_block_delta', 'index': 0, 'delta': {
        'type': 'input_json_delta', 'partial_json': '{"city": ' } },
    { 'type': 'content_block_delta', 'index': 0, 'delta': {
        'type': 'input_json_delta', 'partial_json': '"Rome"}' } },
    { 'type': 'content_block_stop', 'index': 0 },
    { 'type': 'message_delta', 'delta': { 'stop_reason': 'tool_use' } },
    { 'type': 'message_stop' },
]


async def replay( events: Sequence[ object ] ) -> AsyncIterator[ object ]:
    ''' Yields recorded events, as a stream would. '''
    for event in events: yield event


async def main( ) -> None:
    ''' Answers a recorded response and a recorded stream. '''
    forecasts = invocables.produce_ensemble(
        'forecasts', [ survey_forecast ] )
    messages: list[ MessageParam ] = [
        { 'role': 'user', 'content': 'Weather in Oslo?' } ]
    async with forecasts:
        await continue_whole(
            [ forecasts ], messages, Message.model_validate( RESPONSE ) )
        messages.append( { 'role': 'user', 'content': 'And Rome?' } )
        await continue_streamed( [ forecasts ], messages, replay( EVENTS ) )
    print( json.dumps( messages, indent = 1 ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
