# SPDX-License-Identifier: Apache-2.0
''' Typical application over OpenAI Chat Completions.

    Tools go into ``chat.completions.create``, calls are read from whole
    and streamed completions, executed, and results appended to a list of
    ``ChatCompletionMessageParam``; then the conversation loop. Type-checked
    by the test suite (no casts); it calls no API when imported.
'''

import asyncio

import openai

from openai.types.chat import ChatCompletionMessageParam

import invocables

from invocables.conversations import produce_conversation
from invocables.processors import produce_processor


MODEL = 'gpt-5.5'


def survey_forecast( city: str, days: int = 1 ) -> dict[ str, object ]:
    ''' Gives the weather forecast of a city. '''
    return { 'city': city, 'days': days, 'sky': 'sunny' }


async def converse(
    client: openai.AsyncOpenAI,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Runs rounds of whole completions until the model stops calling. '''
    processor = produce_processor( 'openai', strict = True )
    tools = processor.prepare_tools( ensembles )
    messages: list[ ChatCompletionMessageParam ] = [
        { 'role': 'user', 'content': prompt } ]
    for _ in range( 8 ):
        completion = await client.chat.completions.create(
            model = MODEL, messages = messages, tools = tools )
        messages.append( processor.prepare_message( completion ) )
        invocations = processor.normalize_invocations( completion )
        if not invocations:
            return completion.choices[ 0 ].message.content or ''
        results = await processor.execute_invocations(
            invocations, ensembles )
        messages.extend( processor.nativize_results( results ) )
    return ''


async def converse_streamed(
    client: openai.AsyncOpenAI,
    ensembles: list[ invocables.Ensemble ],
    messages: list[ ChatCompletionMessageParam ],
) -> None:
    ''' Runs one streamed round; starts each tool as soon as it is whole. '''
    processor = produce_processor( 'openai' )
    accumulator = processor.produce_accumulator( )
    invocations: list[ invocables.InvocationCanister ] = [ ]
    stream = await client.chat.completions.create(
        model = MODEL, messages = messages, stream = True,
        tools = processor.prepare_tools( ensembles ) )
    async for chunk in stream:
        if chunk.choices and chunk.choices[ 0 ].delta.content:
            print( chunk.choices[ 0 ].delta.content, end = '' )
        invocations.extend( accumulator.ingest( chunk ) )
    invocations.extend( accumulator.conclude( ) )
    messages.append( accumulator.produce_message( ) )
    results = await processor.execute_invocations( invocations, ensembles )
    messages.extend( processor.nativize_results( results ) )


async def converse_looped(
    client: openai.AsyncOpenAI,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Lets the conversation loop run the rounds. '''
    conversation = produce_conversation(
        'openai', client, ensembles, model = MODEL,
        processor = produce_processor( 'openai', strict = True ) )
    transcript = await conversation.converse( prompt )
    follow = await conversation.converse(
        [ *transcript.messages, { 'role': 'user', 'content': 'Thanks.' } ] )
    return follow.text


async def main( ) -> None:
    ''' Offers one local tool to the model. '''
    client = openai.AsyncOpenAI( )
    forecasts = invocables.produce_ensemble(
        'forecasts', [ survey_forecast ] )
    async with forecasts:
        print( await converse( client, [ forecasts ], 'Weather in Oslo?' ) )
        await converse_streamed(
            client, [ forecasts ],
            [ { 'role': 'user', 'content': 'And in Rome?' } ] )
        print( await converse_looped( client, [ forecasts ], 'Lisbon?' ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
