# SPDX-License-Identifier: Apache-2.0

''' Conversation loop with tool search, over every provider's client.

    The model (a scripted server answering the real SDK clients) searches
    first, finds a tool among 190 deferred ones (the tools of 18 real MCP
    servers and a local weather tool), calls it in the next round, and
    answers. Each request carries only the tools offered in its round.
'''


import contextlib
import json

import anthropic
import boto3
import cohere
import httpx
import openai
import pytest

import invocables

from invocables import conversations
from invocables.toolsets import search
from invocables.conversations import Terminations

from . import scripted, toolsets_support


_SEARCH = { 'query': 'weather forecast of a city' }
_WEATHER = { 'location': 'Paris' }


def _produce_weather( calls ):

    def get_weather( location: str ) -> str:
        ''' Returns the weather forecast at a location. '''
        calls.append( location )
        return f"Sunny in {location}."

    return invocables.produce_ensemble( 'weather', [ get_weather ] )


@contextlib.asynccontextmanager
async def _produce_client( provider, server ):
    if provider == 'anthropic':
        yield anthropic.AsyncAnthropic(
            base_url = server.url, api_key = 'test', max_retries = 0 )
    elif provider in ( 'openai', 'openai-responses' ):
        yield openai.AsyncOpenAI(
            base_url = f"{server.url}/v1", api_key = 'test',
            max_retries = 0 )
    elif provider == 'gemini':
        from google import genai
        yield genai.Client(
            api_key = 'test', http_options = { 'base_url': server.url } )
    elif provider == 'bedrock':
        yield boto3.client(
            'bedrock-runtime', endpoint_url = server.url,
            region_name = 'us-east-1', aws_access_key_id = 'testing',
            aws_secret_access_key = 'testing' )
    elif provider == 'mistral':
        from mistralai.client import Mistral
        yield Mistral( api_key = 'testing', server_url = server.url )
    elif provider == 'cohere':
        yield cohere.AsyncClientV2(
            api_key = 'test', base_url = server.url, max_retries = 0,
            timeout = 10 )
    else:
        async with httpx.AsyncClient( base_url = server.url ) as client:
            yield client


def _answer_bedrock( content, stop ):
    body = {
        'metrics': { 'latencyMs': 100 },
        'output': { 'message': { 'role': 'assistant', 'content': content } },
        'stopReason': stop,
        'usage': { 'inputTokens': 10, 'outputTokens': 4, 'totalTokens': 14 },
    }
    return scripted.Answer(
        200, 'application/json', json.dumps( body ).encode( ) )


def _bedrock_tool_uses( calls ):
    ''' Returns a Converse reply whose message uses tools. '''
    return _answer_bedrock( [
        { 'toolUse': {
            'toolUseId': f"tooluse_{identifier}", 'name': name,
            'input': arguments } }
        for identifier, name, arguments in calls ], 'tool_use' )


def _bedrock_text( text ):
    ''' Returns a Converse reply of text only. '''
    return _answer_bedrock( [ { 'text': text } ], 'end_turn' )


def _script( provider ):
    ''' Returns answers: search, call of the found tool, final text. '''
    calls = {
        'bedrock': _bedrock_tool_uses,
        'mistral': scripted.openai_tool_calls,
        'anthropic': scripted.anthropic_tool_uses,
        'openai': scripted.openai_tool_calls,
        'openai-responses': scripted.responses_function_calls,
        'gemini': scripted.gemini_function_calls,
        'cohere': scripted.cohere_tool_calls,
        'ollama': scripted.ollama_tool_calls,
    }[ provider ]
    text = {
        'bedrock': _bedrock_text,
        'mistral': scripted.openai_text,
        'anthropic': scripted.anthropic_text,
        'openai': scripted.openai_text,
        'openai-responses': scripted.responses_text,
        'gemini': scripted.gemini_text,
        'cohere': scripted.cohere_text,
        'ollama': scripted.ollama_text,
    }[ provider ]
    identified = provider != 'gemini'
    return [
        calls( [ ( 'call_1' if identified else None, 'search_tools',
                   _SEARCH ) ] ),
        calls( [ ( 'call_2' if identified else None, 'get_weather',
                   _WEATHER ) ] ),
        text( 'Sunny in Paris.' ),
    ]


def _survey_tool_names( body ):
    ''' Returns names of the tools a request offered, in any provider's
        shape.
    '''
    names = [ ]
    if 'toolConfig' in body: # Bedrock Converse
        return [
            tool[ 'toolSpec' ][ 'name' ]
            for tool in body[ 'toolConfig' ][ 'tools' ] ]
    for tool in body.get( 'tools' ) or [ ]:
        declarations = (
            tool.get( 'functionDeclarations' )
            or tool.get( 'function_declarations' ) )
        if declarations:
            names.extend( item[ 'name' ] for item in declarations )
        elif 'function' in tool: names.append( tool[ 'function' ][ 'name' ] )
        else: names.append( tool[ 'name' ] )
    return names


_MODELS = {
    'anthropic': 'claude-haiku-4-5', 'openai': 'gpt-4o',
    'openai-responses': 'gpt-4o', 'gemini': 'gemini-2.5-flash',
    'cohere': 'command-a-03-2025', 'ollama': 'qwen3:8b',
    'bedrock': 'us.amazon.nova-2-lite-v1:0',
    'mistral': 'mistral-small-latest',
}


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', sorted( conversations.PROVIDERS ) )
async def test_100_search_then_call_next_round( provider ):
    ''' The model searches, the found tool is offered in the next round
        and its call runs; the first request offered two tools only.
    '''
    calls = [ ]
    tool_search = search.ToolSearch(
        [ *toolsets_support.produce_mcp_ensembles( ),
          _produce_weather( calls ) ],
        loaded = 'get_current_time', limit = 3 )
    with scripted.ScriptedServer( _script( provider ) ) as server:
        async with _produce_client( provider, server ) as client:
            conversation = conversations.produce_conversation(
                provider, client, tool_search.ensembles,
                model = _MODELS[ provider ], selector = tool_search )
            transcript = await conversation.converse( 'Weather in Paris?' )
    assert transcript.termination is Terminations.Completion
    assert transcript.rounds == 3
    assert calls == [ 'Paris' ]
    offered = [
        _survey_tool_names( request.body ) for request in server.requests ]
    assert offered[ 0 ] == [ 'get_current_time', 'search_tools' ]
    # In the order of the full nomenclature, whatever the order found.
    assert { 'get_current_time', 'search_tools', 'get_weather' } <= set(
        offered[ 1 ] )
    assert len( offered[ 1 ] ) <= 2 + 3
    assert offered[ 2 ] == offered[ 1 ]
    assert 'get_weather' in tool_search.survey_found( conversation.namespace )


@pytest.mark.asyncio
async def test_200_deferred_call_before_search_refused( ):
    ''' A call of a deferred tool not yet found is answered as a call of
        an unknown tool, and the tool does not run.
    '''
    calls = [ ]
    tool_search = search.ToolSearch( [ _produce_weather( calls ) ] )
    answers = [
        scripted.anthropic_tool_uses( [ ( 'c1', 'get_weather', _WEATHER ) ] ),
        scripted.anthropic_text( 'I could not.' ) ]
    with scripted.ScriptedServer( answers ) as server:
        async with _produce_client( 'anthropic', server ) as client:
            conversation = conversations.produce_conversation(
                'anthropic', client, tool_search.ensembles,
                model = 'claude-haiku-4-5', selector = tool_search )
            transcript = await conversation.converse( 'Weather in Paris?' )
    assert calls == [ ]
    result = transcript.messages[ 2 ][ 'content' ][ 0 ]
    assert result[ 'is_error' ] is True
    assert 'get_weather' in repr( result[ 'content' ] )
