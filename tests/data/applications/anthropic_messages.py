# SPDX-License-Identifier: Apache-2.0
''' Typical application over the Anthropic Messages API.

    Uses every piece of a processor with the SDK's own typed client: tools
    into ``messages.create``, calls read from whole and streamed replies,
    executed, and results appended to a list of ``MessageParam``. Then the
    same with the conversation loop. Type-checked by the test suite (no
    casts); it calls no API when imported.
'''

import asyncio

import anthropic

from anthropic.types import MessageParam

import invocables

from invocables.conversations import produce_conversation
from invocables.processors import produce_processor


MODEL = 'claude-sonnet-5'


def survey_forecast( city: str, days: int = 1 ) -> dict[ str, object ]:
    ''' Gives the weather forecast of a city. '''
    return { 'city': city, 'days': days, 'sky': 'sunny' }


async def converse(
    client: anthropic.AsyncAnthropic,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Runs rounds of whole responses until the model stops calling. '''
    processor = produce_processor( 'anthropic' )
    tools = processor.prepare_tools( ensembles )
    messages: list[ MessageParam ] = [ { 'role': 'user', 'content': prompt } ]
    for _ in range( 8 ):
        message = await client.messages.create(
            model = MODEL, max_tokens = 1024, messages = messages,
            tools = tools )
        messages.append( processor.prepare_message( message ) )
        invocations = processor.normalize_invocations( message )
        if not invocations:
            return ''.join(
                block.text for block in message.content
                if block.type == 'text' )
        results = await processor.execute_invocations(
            invocations, ensembles, timeout = 30.0 )
        messages.extend( processor.nativize_results( results ) )
    return ''


async def converse_streamed(
    client: anthropic.AsyncAnthropic,
    ensembles: list[ invocables.Ensemble ],
    messages: list[ MessageParam ],
) -> None:
    ''' Runs one streamed round; starts each tool as soon as it is whole. '''
    processor = produce_processor( 'anthropic' )
    accumulator = processor.produce_accumulator( )
    invocations: list[ invocables.InvocationCanister ] = [ ]
    async with client.messages.stream(
        model = MODEL, max_tokens = 1024, messages = messages,
        tools = processor.prepare_tools( ensembles ),
    ) as stream:
        async for event in stream:
            if event.type == 'text': print( event.text, end = '' )
            invocations.extend( accumulator.ingest( event ) )
            for partial in accumulator.survey_partials( ):
                print( partial.name, len( partial.text ) )
        message = await stream.get_final_message( )
    invocations.extend( accumulator.conclude( ) )
    messages.append( accumulator.produce_message( ) )
    print( message.stop_reason )
    results = await processor.execute_invocations( invocations, ensembles )
    messages.extend( processor.nativize_results( results ) )


async def converse_looped(
    client: anthropic.AsyncAnthropic,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Lets the conversation loop run the rounds. '''
    conversation = produce_conversation(
        'anthropic', client, ensembles, model = MODEL,
        instructions = 'Be brief.', rounds_maximum = 4 )
    async for event in conversation.converse_continuous( prompt ):
        if isinstance( event, invocables.conversations.TextEvent ):
            print( event.text, end = '' )
    transcript = await conversation.converse( prompt )
    return transcript.text


async def main( ) -> None:
    ''' Offers one local tool to Claude. '''
    client = anthropic.AsyncAnthropic( )
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
