# SPDX-License-Identifier: Apache-2.0
''' Typical application over Ollama's native chat API, with ``httpx``.

    Tools go into the body of ``/api/chat``; calls are read from whole and
    streamed (newline-delimited) replies, executed, and results appended to
    the messages; then the conversation loop. Type-checked by the test
    suite (no casts); it calls no server when imported.
'''

import asyncio

from collections.abc import Mapping

import httpx

import invocables

from invocables.conversations import produce_conversation
from invocables.processors import produce_processor


MODEL = 'qwen3:8b'


def survey_forecast( city: str, days: int = 1 ) -> dict[ str, object ]:
    ''' Gives the weather forecast of a city. '''
    return { 'city': city, 'days': days, 'sky': 'sunny' }


async def converse(
    client: httpx.AsyncClient,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Runs rounds of whole replies until the model stops calling. '''
    processor = produce_processor( 'ollama' )
    tools = processor.prepare_tools( ensembles )
    messages: list[ Mapping[ str, object ] ] = [
        { 'role': 'user', 'content': prompt } ]
    for _ in range( 8 ):
        response = await client.post( '/api/chat', json = {
            'model': MODEL, 'messages': messages, 'tools': tools,
            'stream': False } )
        reply = response.json( )
        messages.append( reply[ 'message' ] )
        invocations = processor.normalize_invocations( reply )
        if not invocations: return reply[ 'message' ][ 'content' ]
        results = await processor.execute_invocations(
            invocations, ensembles )
        messages.extend( processor.nativize_results( results ) )
    return ''


async def converse_streamed(
    client: httpx.AsyncClient,
    ensembles: list[ invocables.Ensemble ],
    messages: list[ Mapping[ str, object ] ],
) -> None:
    ''' Runs one streamed round; starts each tool as soon as it is whole. '''
    processor = produce_processor( 'ollama' )
    accumulator = processor.produce_accumulator( )
    invocations: list[ invocables.InvocationCanister ] = [ ]
    async with client.stream( 'POST', '/api/chat', json = {
        'model': MODEL, 'messages': messages,
        'tools': processor.prepare_tools( ensembles ),
    } ) as response:
        async for line in response.aiter_lines( ):
            invocations.extend( accumulator.ingest( line ) )
    invocations.extend( accumulator.conclude( ) )
    results = await processor.execute_invocations( invocations, ensembles )
    messages.extend( processor.nativize_results( results ) )


async def converse_looped(
    client: httpx.AsyncClient,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Lets the conversation loop run the rounds. '''
    conversation = produce_conversation(
        'ollama', client, ensembles, model = MODEL, rounds_maximum = 4 )
    transcript = await conversation.converse( prompt )
    return transcript.text


async def main( ) -> None:
    ''' Offers one local tool to a local model. '''
    forecasts = invocables.produce_ensemble(
        'forecasts', [ survey_forecast ] )
    async with (
        httpx.AsyncClient(
            base_url = 'http://127.0.0.1:11434', timeout = 300 ) as client,
        forecasts,
    ):
        print( await converse( client, [ forecasts ], 'Weather in Oslo?' ) )
        await converse_streamed(
            client, [ forecasts ],
            [ { 'role': 'user', 'content': 'And in Rome?' } ] )
        print( await converse_looped( client, [ forecasts ], 'Lisbon?' ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
