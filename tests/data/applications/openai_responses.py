# SPDX-License-Identifier: Apache-2.0
''' Typical application over the OpenAI Responses API.

    Tools go into ``responses.create``; function calls are read from whole
    and streamed responses, executed, and their outputs sent as input items
    (``ResponseInputItemParam``) chained by ``previous_response_id``; then
    the conversation loop. Type-checked by the test suite (no casts); it
    calls no API when imported.
'''

import asyncio

import openai

from openai.types.responses import ResponseInputItemParam

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
    ''' Runs rounds of whole responses until the model stops calling. '''
    processor = produce_processor( 'openai-responses' )
    tools = processor.prepare_tools( ensembles )
    items: list[ ResponseInputItemParam ] = [
        { 'role': 'user', 'content': prompt } ]
    response = await client.responses.create(
        model = MODEL, input = items, tools = tools )
    for _ in range( 8 ):
        invocations = processor.normalize_invocations( response )
        if not invocations: break
        results = await processor.execute_invocations(
            invocations, ensembles )
        response = await client.responses.create(
            model = MODEL, previous_response_id = response.id,
            input = processor.nativize_results( results ), tools = tools )
    return response.output_text


async def converse_streamed(
    client: openai.AsyncOpenAI,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> list[ ResponseInputItemParam ]:
    ''' Runs one streamed round; starts each tool as soon as it is whole.

        Returns the function outputs, to send with the next request.
    '''
    processor = produce_processor( 'openai-responses', strict = True )
    accumulator = processor.produce_accumulator( )
    invocations: list[ invocables.InvocationCanister ] = [ ]
    stream = await client.responses.create(
        model = MODEL, input = prompt, stream = True,
        tools = processor.prepare_tools( ensembles ) )
    async for event in stream:
        if event.type == 'response.output_text.delta':
            print( event.delta, end = '' )
        invocations.extend( accumulator.ingest( event ) )
    invocations.extend( accumulator.conclude( ) )
    results = await processor.execute_invocations( invocations, ensembles )
    return processor.nativize_results( results )


async def converse_looped(
    client: openai.AsyncOpenAI,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Lets the conversation loop run the rounds. '''
    conversation = produce_conversation(
        'openai-responses', client, ensembles, model = MODEL )
    transcript = await conversation.converse( prompt )
    return transcript.text


async def main( ) -> None:
    ''' Offers one local tool to the model. '''
    client = openai.AsyncOpenAI( )
    forecasts = invocables.produce_ensemble(
        'forecasts', [ survey_forecast ] )
    async with forecasts:
        print( await converse( client, [ forecasts ], 'Weather in Oslo?' ) )
        print( await converse_streamed( client, [ forecasts ], 'Rome?' ) )
        print( await converse_looped( client, [ forecasts ], 'Lisbon?' ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
