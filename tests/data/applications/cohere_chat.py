# SPDX-License-Identifier: Apache-2.0
''' Typical application over Cohere Chat v2.

    Cohere's SDK types its parameters as pydantic models, so tools and
    results (typed dictionaries) go through ``model_validate``; calls are
    read from whole and streamed responses and executed; then the
    conversation loop. Type-checked by the test suite (no casts); it calls
    no API when imported.
'''

import asyncio

import cohere

import invocables

from invocables.conversations import produce_conversation
from invocables.processors import produce_processor


MODEL = 'command-a-plus-05-2026'


def survey_forecast( city: str, days: int = 1 ) -> dict[ str, object ]:
    ''' Gives the weather forecast of a city. '''
    return { 'city': city, 'days': days, 'sky': 'sunny' }


async def converse(
    client: cohere.AsyncClientV2,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Runs rounds of whole responses until the model stops calling. '''
    processor = produce_processor( 'cohere' )
    tools = [
        cohere.ToolV2.model_validate( tool )
        for tool in processor.prepare_tools( ensembles ) ]
    messages: list[ cohere.ChatMessageV2 ] = [
        cohere.UserChatMessageV2( content = prompt ) ]
    for _ in range( 8 ):
        response = await client.chat(
            model = MODEL, messages = messages, tools = tools )
        messages.append( cohere.AssistantChatMessageV2(
            tool_calls = response.message.tool_calls,
            tool_plan = response.message.tool_plan ) )
        invocations = processor.normalize_invocations( response )
        if not invocations:
            return ''.join(
                item.text for item in response.message.content or [ ]
                if item.type == 'text' )
        results = await processor.execute_invocations(
            invocations, ensembles )
        messages.extend(
            cohere.ToolChatMessageV2.model_validate( message )
            for message in processor.nativize_results( results ) )
    return ''


async def converse_streamed(
    client: cohere.AsyncClientV2,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> list[ invocables.ResultCanister ]:
    ''' Runs one streamed round; starts each tool as soon as it is whole.
    '''
    processor = produce_processor( 'cohere' )
    accumulator = processor.produce_accumulator( )
    invocations: list[ invocables.InvocationCanister ] = [ ]
    async for event in client.chat_stream(
        model = MODEL,
        messages = [ cohere.UserChatMessageV2( content = prompt ) ],
        tools = [
            cohere.ToolV2.model_validate( tool )
            for tool in processor.prepare_tools( ensembles ) ],
    ): invocations.extend( accumulator.ingest( event ) )
    invocations.extend( accumulator.conclude( ) )
    return list(
        await processor.execute_invocations( invocations, ensembles ) )


async def converse_looped(
    client: cohere.AsyncClientV2,
    ensembles: list[ invocables.Ensemble ],
    prompt: str,
) -> str:
    ''' Lets the conversation loop run the rounds. '''
    conversation = produce_conversation(
        'cohere', client, ensembles, model = MODEL,
        approver = lambda invocation: invocation.name != 'delete_file' )
    transcript = await conversation.converse( prompt )
    return transcript.text


async def main( ) -> None:
    ''' Offers one local tool to the model. '''
    client = cohere.AsyncClientV2( )
    forecasts = invocables.produce_ensemble(
        'forecasts', [ survey_forecast ] )
    async with forecasts:
        print( await converse( client, [ forecasts ], 'Weather in Oslo?' ) )
        print( await converse_streamed( client, [ forecasts ], 'Rome?' ) )
        print( await converse_looped( client, [ forecasts ], 'Lisbon?' ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
