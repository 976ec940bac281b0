# SPDX-License-Identifier: Apache-2.0
''' Typed application over OpenAI Chat Completions, with no casts.

    The assistant message of a whole completion
    (``processor.prepare_message( completion )``: no helper of the
    application's own turns a ``ChatCompletionMessage`` into a request
    message) and of a stream (``accumulator.produce_message( )``), and the
    results of their calls, go into one
    ``list[ ChatCompletionMessageParam ]``, which the SDK's client takes as
    it is; the conversation loop's transcript continues it. Pyright checks
    this file in its standard and strict modes. Run as a script, it answers
    a recorded response and a recorded stream, offline.
'''

import asyncio
import json

from collections.abc import AsyncIterable, AsyncIterator, Sequence

import openai

from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

import invocables

from invocables.conversations import produce_conversation
from invocables.processors import produce_processor


MODEL = 'gpt-5.5'


def survey_forecast( city: str ) -> str:
    ''' Gives the weather forecast of a city. '''
    return f"Sunny in {city}."


async def continue_whole(
    ensembles: Sequence[ invocables.Ensemble ],
    messages: list[ ChatCompletionMessageParam ],
    response: ChatCompletion,
) -> bool:
    ''' Appends response and the results of its calls; returns whether the
        model called tools.
    '''
    processor = produce_processor( 'openai' )
    messages.append( processor.prepare_message( response ) )
    invocations = processor.normalize_invocations( response )
    results = await processor.execute_invocations( invocations, ensembles )
    messages.extend( processor.nativize_results( results ) )
    return bool( invocations )


async def continue_streamed(
    ensembles: Sequence[ invocables.Ensemble ],
    messages: list[ ChatCompletionMessageParam ],
    events: AsyncIterable[ object ],
) -> bool:
    ''' Reads stream, starting each tool as soon as its call is whole;
        appends the message of the stream and the results.
    '''
    processor = produce_processor( 'openai' )
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
    client: openai.AsyncOpenAI,
    ensembles: Sequence[ invocables.Ensemble ],
    prompt: str,
) -> list[ ChatCompletionMessageParam ]:
    ''' Runs rounds of whole responses, then one streamed round. '''
    tools = produce_processor( 'openai' ).prepare_tools( ensembles )
    messages: list[ ChatCompletionMessageParam ] = [
        { 'role': 'user', 'content': prompt } ]
    for _ in range( 8 ):
        response = await client.chat.completions.create(
            model = MODEL, messages = messages, tools = tools )
        if not await continue_whole( ensembles, messages, response ): break
    messages.append( { 'role': 'user', 'content': 'And tomorrow?' } )
    stream = await client.chat.completions.create(
        model = MODEL, messages = messages, tools = tools, stream = True )
    await continue_streamed( ensembles, messages, stream )
    return messages


async def converse_looped(
    client: openai.AsyncOpenAI,
    ensembles: Sequence[ invocables.Ensemble ],
    messages: list[ ChatCompletionMessageParam ],
) -> list[ ChatCompletionMessageParam ]:
    ''' Lets the conversation loop continue the messages. '''
    conversation = produce_conversation(
        'openai', client, ensembles, model = MODEL )
    transcript = await conversation.converse( messages )
    return transcript.messages


RESPONSE: dict[ str, object ] = {
    'id': 'chatcmpl-1', 'object': 'chat.completion', 'created': 0,
    'model': MODEL,
    'choices': [ {
        'index': 0, 'finish_reason': 'tool_calls',
        'message': {
            'role': 'assistant', 'content': None,
            'tool_calls': [ {
                'id': 'call_1', 'type': 'function',
                'function': {
                    'name': 'survey_forecast',
                    'arguments': '{"city": "Oslo"}' } } ] } } ],
}
EVENTS: list[ object ] = [
    { 'choices': [ { 'index': 0, 'delta': { 'role': 'assistant',
        'tool_calls': [ { 'index': 0, 'id': 'call_2', 'type': 'function',
            'function': { 'name': 'survey_forecast', 'arguments': '' } } ]
    } } ] },
    { 'choices': [ { 'index': 0, 'delta': { 'tool_calls': [
        { 'index': 0, 'function': { 'arguments': '{"city": "Rome"}' } } ]
    } } ] },
    { 'choices': [ {
        'index': 0, 'delta': { }, 'finish_reason': 'tool_calls' } ] },
    '[DONE]',
]


async def replay( events: Sequence[ object ] ) -> AsyncIterator[ object ]:
    ''' Yields recorded events, as a stream would. '''
    for event in events: yield event


async def main( ) -> None:
    ''' Answers a recorded response and a recorded stream. '''
    forecasts = invocables.produce_ensemble(
        'forecasts', [ survey_forecast ] )
    messages: list[ ChatCompletionMessageParam ] = [
        { 'role': 'user', 'content': 'Weather in Oslo?' } ]
    async with forecasts:
        await continue_whole(
            [ forecasts ], messages,
            ChatCompletion.model_validate( RESPONSE ) )
        messages.append( { 'role': 'user', 'content': 'And Rome?' } )
        await continue_streamed( [ forecasts ], messages, replay( EVENTS ) )
    print( json.dumps( messages, indent = 1 ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
