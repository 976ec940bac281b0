# SPDX-License-Identifier: Apache-2.0

''' Loops of local models against the server which checks histories. '''


import httpx
import openai

from invocables.conversations import base, produce_conversation
from invocables.processors import produce_processor

from .replay import Round


def produce_client( provider, server ):
    ''' Returns client of the local model server for provider. '''
    if provider == 'ollama':
        return httpx.AsyncClient( base_url = server.url )
    return openai.AsyncOpenAI(
        base_url = f"{server.url}/v1", api_key = 'local', max_retries = 0 )


async def converse( server, provider, ensembles, messages, texts, streaming ):
    ''' Returns events of one loop whose replies are texts (each stopped),
        reading text calls; asserts that the server took every request.
    '''
    server.load( [ Round( text = text, stop = 'stop' ) for text in texts ] )
    client = produce_client( provider, server )
    events = [ ]
    conversation = produce_conversation(
        provider, client, ensembles, model = 'qwen3',
        processor = produce_processor( provider, text_calls = 'auto' ),
        observer = events.append )
    try:
        if streaming:
            async for _ in conversation.converse_continuous( messages ):
                pass
        else: await conversation.converse( messages )
    finally:
        if provider == 'ollama': await client.aclose( )
        else: await client.close( )
    assert server.refusals == [ ]
    return events


def survey_ran( events ):
    ''' Returns the calls which ran, in order. '''
    return [
        event.invocation for event in events
        if isinstance( event, base.ResultEvent ) ]
