# SPDX-License-Identifier: Apache-2.0
''' Typical application over Google Gemini (google-genai).

    Tools go into the request's configuration (a
    ``GenerateContentConfigDict``); calls are read from whole and streamed
    responses, executed, and results appended to the contents; then the
    conversation loop. Type-checked by the test suite (no casts); it calls
    no API when imported.
'''

import asyncio

from google import genai
from google.genai import types

import invocables

from invocables.conversations import produce_conversation
from invocables.processors import produce_processor


MODEL = 'gemini-3.8-flash'


def survey_forecast( city: str, days: int = 1 ) -> dict[ str, object ]:
    ''' Gives the weather forecast of a city. '''
    return { 'city': city, 'days': days, 'sky': 'sunny' }


async def converse(
    client: genai.Client,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Runs rounds of whole responses until the model stops calling. '''
    processor = produce_processor( 'gemini' )
    config: types.GenerateContentConfigDict = {
        'tools': processor.prepare_tools( ensembles ),
        'automatic_function_calling': { 'disable': True } }
    contents: list[ types.ContentUnionDict ] = [
        { 'role': 'user', 'parts': [ { 'text': prompt } ] } ]
    for _ in range( 8 ):
        response = await client.aio.models.generate_content(
            model = MODEL, contents = contents, config = config )
        if response.candidates and response.candidates[ 0 ].content:
            contents.append( response.candidates[ 0 ].content )
        invocations = processor.normalize_invocations( response )
        if not invocations: return response.text or ''
        results = await processor.execute_invocations(
            invocations, ensembles )
        contents.extend( processor.nativize_results( results ) )
    return ''


async def converse_streamed(
    client: genai.Client,
    ensembles: list[ invocables.Ensemble ],
    contents: list[ types.ContentUnionDict ],
) -> None:
    ''' Runs one streamed round; starts each tool as soon as it is whole. '''
    processor = produce_processor( 'gemini', json_schema = True )
    accumulator = processor.produce_accumulator( )
    invocations: list[ invocables.InvocationCanister ] = [ ]
    parts: list[ types.Part ] = [ ]
    stream = await client.aio.models.generate_content_stream(
        model = MODEL, contents = contents,
        config = {
            'tools': processor.prepare_tools( ensembles ),
            'automatic_function_calling': { 'disable': True } } )
    async for chunk in stream:
        if chunk.candidates and chunk.candidates[ 0 ].content:
            parts.extend( chunk.candidates[ 0 ].content.parts or [ ] )
        invocations.extend( accumulator.ingest( chunk ) )
    invocations.extend( accumulator.conclude( ) )
    contents.append( types.Content( role = 'model', parts = parts ) )
    results = await processor.execute_invocations( invocations, ensembles )
    contents.extend( processor.nativize_results( results ) )


async def converse_looped(
    client: genai.Client,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Lets the conversation loop run the rounds. '''
    conversation = produce_conversation(
        'gemini', client, ensembles, model = MODEL,
        parameters = { 'temperature': 0 } )
    transcript = await conversation.converse( prompt )
    return transcript.text


async def main( ) -> None:
    ''' Offers one local tool to the model. '''
    client = genai.Client( )
    forecasts = invocables.produce_ensemble(
        'forecasts', [ survey_forecast ] )
    async with forecasts:
        print( await converse( client, [ forecasts ], 'Weather in Oslo?' ) )
        await converse_streamed(
            client, [ forecasts ],
            [ { 'role': 'user', 'parts': [ { 'text': 'And in Rome?' } ] } ] )
        print( await converse_looped( client, [ forecasts ], 'Lisbon?' ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
