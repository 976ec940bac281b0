# SPDX-License-Identifier: Apache-2.0

''' Provider-native tool search: deferred tools and the provider's own
    search tool, through the real SDK clients.
'''


import json

import anthropic
import openai
import pytest

import invocables

from invocables import exceptions, processors
from invocables.toolsets import search

from . import scripted, toolsets_support


def _produce_weather( calls ):

    def get_weather( location: str ) -> str:
        ''' Returns the weather forecast at a location. '''
        calls.append( location )
        return f"Sunny in {location}."

    return invocables.produce_ensemble( 'weather', [ get_weather ] )


def test_100_other_providers_refused( ):
    ''' A provider without native search is refused, naming the way. '''
    processor = processors.produce_processor( 'openai' )
    with pytest.raises( exceptions.ProviderNoSupport ) as caught:
        search.prepare_native_tools( processor, [ ] )
    assert 'ToolSearch' in str( caught.value )


@pytest.mark.asyncio
async def test_200_anthropic_round_trip( ):
    ''' The Anthropic client sends deferred tools and the BM25 search tool;
        of a response with a server search and a call of a found tool,
        the call alone is read, and runs.
    '''
    calls = [ ]
    ensembles = [
        *toolsets_support.produce_mcp_ensembles( ), _produce_weather( calls ) ]
    processor = processors.produce_processor( 'anthropic' )
    tools = search.prepare_native_tools(
        processor, ensembles, loaded = 'get_current_time' )
    assert tools[ 0 ] == {
        'type': 'tool_search_tool_bm25_20251119',
        'name': 'tool_search_tool_bm25' }
    deferred = {
        tool[ 'name' ]: tool.get( 'defer_loading', False )
        for tool in tools[ 1 : ] }
    assert deferred[ 'get_current_time' ] is False
    assert deferred[ 'get_weather' ] is True
    assert len( deferred ) == 190
    message = json.loads(
        scripted.read_fixture( 'anthropic/single-tool-use.json' ) )
    message[ 'content' ] = [
        { 'type': 'server_tool_use', 'id': 'srvtoolu_01',
          'name': 'tool_search_tool_bm25',
          'input': { 'query': 'weather forecast' } },
        { 'type': 'tool_search_tool_result', 'tool_use_id': 'srvtoolu_01',
          'content': {
              'type': 'tool_search_tool_search_result',
              'tool_references': [
                  { 'type': 'tool_reference',
                    'tool_name': 'get_weather' } ] } },
        { 'type': 'tool_use', 'id': 'toolu_01', 'name': 'get_weather',
          'input': { 'location': 'Paris' } } ]
    with scripted.ScriptedServer(
        [ scripted.Answer(
            200, 'application/json', json.dumps( message ).encode( ) ) ]
    ) as server:
        client = anthropic.AsyncAnthropic(
            base_url = server.url, api_key = 'test', max_retries = 0 )
        response = await client.messages.create(
            model = 'claude-sonnet-4-6', max_tokens = 256, tools = tools,
            messages = [ { 'role': 'user', 'content': 'Paris weather?' } ] )
    sent = server.requests[ 0 ].body[ 'tools' ]
    assert sent[ 0 ][ 'type' ] == 'tool_search_tool_bm25_20251119'
    assert sum( 1 for tool in sent if tool.get( 'defer_loading' ) ) == 189
    invocations = processor.normalize_invocations( response )
    assert [ item.name for item in invocations ] == [ 'get_weather' ]
    results = await processor.execute_invocations( invocations, ensembles )
    assert calls == [ 'Paris' ]
    assert results[ 0 ].content[ 0 ].text == 'Sunny in Paris.'


@pytest.mark.asyncio
async def test_300_responses_request( ):
    ''' The OpenAI Responses client sends deferred functions and the
        hosted search tool.
    '''
    processor = processors.produce_processor( 'openai-responses' )
    tools = search.prepare_native_tools(
        processor, [ _produce_weather( [ ] ) ] )
    with scripted.ScriptedServer(
        [ scripted.responses_text( 'Sunny.' ) ]
    ) as server:
        client = openai.AsyncOpenAI(
            base_url = f"{server.url}/v1", api_key = 'test',
            max_retries = 0 )
        await client.responses.create(
            model = 'gpt-5', input = 'Paris weather?', tools = tools )
    sent = server.requests[ 0 ].body[ 'tools' ]
    assert sent[ 0 ] == { 'type': 'tool_search' }
    assert sent[ 1 ][ 'name' ] == 'get_weather'
    assert sent[ 1 ][ 'defer_loading' ] is True
