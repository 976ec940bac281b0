# SPDX-License-Identifier: Apache-2.0

''' Trimmed histories of every provider, sent through the real SDKs.

    For each provider, a multi-round history is recorded by the
    conversation loop against a local server which serves a real capture
    of ``tests/data/providers`` (the first round) and then rounds of file
    tools in the capture's shapes. The history is trimmed by each strategy
    and continued through the provider's own SDK client: the client takes
    it, and the request it sends differs from the untrimmed history's only
    in the trimmed results (and arguments), with every id, name, role and
    order kept.
'''


import json

import anthropic
import boto3
import cohere
import httpx
import openai
import pytest

from google import genai
from mistralai.client import Mistral

import invocables

from invocables import conversations, history

from . import scripted


_CAPTURES = {
    'anthropic': 'anthropic/single-tool-use.json',
    'openai': 'openai_chat/parallel-tool-calls.json',
    'openai-responses': 'openai_responses/single-function-call.json',
    'gemini': 'gemini/single-function-call.json',
    'cohere': 'cohere/single-tool-call.json',
    'ollama': 'ollama/think-content-then-tool-call-no-id.json',
    'bedrock': 'bedrock/parallel-tool-use.json',
    'mistral': 'mistral/parallel-tool-calls.json',
}
_NAMES = [
    'get_weather', 'GetWeatherArgs', 'get_stock_price',
    'get_current_weather', 'passphrase_test_tool', 'getTime',
    'parallel_local_search_one', 'parallel_local_search_two',
    'parallel_local_search_three', 'weather', 'best_language_to_learn',
    'read_file', 'write_file',
]
# Rounds after the capture's: reads, a write, then reads again.
_ROUNDS = [
    [ ( 'read_file', { 'path': '/a' } ) ],
    [ ( 'read_file', { 'path': '/b' } ) ],
    [ ( 'write_file', { 'path': '/a', 'text': 'new' } ) ],
    [ ( 'read_file', { 'path': '/a' } ), ( 'read_file', { 'path': '/b' } ) ],
]
_STRATEGIES = {
    'superseded': { },
    'keyed': { 'superseded': history.KeyedStaleness(
        reads = { 'read_file': ( 'path', ) },
        writes = { 'write_file': ( 'path', ) } ) },
    'recency': { 'superseded': False, 'keep': 2 },
    'budget': {
        'superseded': False, 'budget': 2000, 'clear_at_least': 600 },
    'excluded': {
        'keep': 1, 'exclude': [ 'read_*' ], 'clear_arguments': True },
}
_IDS = frozenset( (
    'id', 'tool_use_id', 'tool_call_id', 'call_id', 'toolUseId' ) )
_BEDROCK_TEXT = {
    'metrics': { 'latencyMs': 100 },
    'output': { 'message': {
        'role': 'assistant', 'content': [ { 'text': 'Done.' } ] } },
    'stopReason': 'end_turn',
    'usage': { 'inputTokens': 10, 'outputTokens': 4, 'totalTokens': 14 },
}


def _produce_ensemble( ):
    def produce( name ):
        async def invoke( context, arguments ):
            return f"{name} {json.dumps( arguments )}: " + 'content ' * 60
        return invocables.FunctionInvoker(
            name = name, invocable = invoke,
            arguments_schema = { 'type': 'object' },
            description = f"Tool {name}." )
    return invocables.produce_ensemble(
        'tools', [ produce( name ) for name in _NAMES ] )


def _identify( provider, round_, index ):
    if provider in ( 'gemini', 'ollama' ): return None
    if provider == 'mistral': return f"rd{round_:03d}{index:04d}"
    return f"call_{round_}_{index}"


def _answer_calls( provider, round_, calls ):
    calls_ = [
        ( _identify( provider, round_, index ), name, arguments )
        for index, ( name, arguments ) in enumerate( calls ) ]
    match provider:
        case 'anthropic': return scripted.anthropic_tool_uses( calls_ )
        case 'openai': return scripted.openai_tool_calls( calls_ )
        case 'openai-responses':
            return scripted.responses_function_calls( calls_ )
        case 'gemini': return scripted.gemini_function_calls( calls_ )
        case 'cohere': return scripted.cohere_tool_calls( calls_ )
        case 'ollama': return scripted.ollama_tool_calls( calls_ )
        case 'bedrock':
            body = json.loads(
                scripted.read_fixture( _CAPTURES[ 'bedrock' ] ) )
            body[ 'output' ][ 'message' ][ 'content' ] = [
                { 'toolUse': {
                    'toolUseId': i, 'name': n, 'input': a } }
                for i, n, a in calls_ ]
            return _answer( body )
        case _:
            body = json.loads(
                scripted.read_fixture( _CAPTURES[ 'mistral' ] ) )
            body[ 'choices' ][ 0 ][ 'message' ][ 'tool_calls' ] = [
                { 'id': i, 'index': index, 'type': 'function',
                  'function': { 'name': n, 'arguments': json.dumps( a ) } }
                for index, ( i, n, a ) in enumerate( calls_ ) ]
            return _answer( body )


def _answer( body ):
    return scripted.Answer(
        200, 'application/json', json.dumps( body ).encode( ) )


def _answer_text( provider ):
    match provider:
        case 'anthropic': return scripted.anthropic_text( 'Done.' )
        case 'openai': return scripted.openai_text( 'Done.' )
        case 'openai-responses': return scripted.responses_text( 'Done.' )
        case 'gemini': return scripted.gemini_text( 'Done.' )
        case 'cohere': return scripted.cohere_text( 'Done.' )
        case 'ollama': return scripted.ollama_text( 'Done.' )
        case 'bedrock': return _answer( _BEDROCK_TEXT )
        case _:
            body = json.loads(
                scripted.read_fixture( _CAPTURES[ 'mistral' ] ) )
            body[ 'choices' ][ 0 ][ 'message' ] = {
                'role': 'assistant', 'content': 'Done.' }
            body[ 'choices' ][ 0 ][ 'finish_reason' ] = 'stop'
            return _answer( body )


def _produce_client( provider, server ):
    match provider:
        case 'anthropic':
            return anthropic.AsyncAnthropic(
                base_url = server.url, api_key = 'test', max_retries = 0 )
        case 'openai' | 'openai-responses':
            return openai.AsyncOpenAI(
                base_url = server.url, api_key = 'test', max_retries = 0 )
        case 'gemini':
            return genai.Client(
                api_key = 'test', http_options = { 'base_url': server.url } )
        case 'cohere':
            return cohere.AsyncClientV2(
                api_key = 'test', base_url = server.url, max_retries = 0 )
        case 'ollama': return httpx.AsyncClient( base_url = server.url )
        case 'bedrock':
            return boto3.client(
                'bedrock-runtime', endpoint_url = server.url,
                region_name = 'us-east-1', aws_access_key_id = 'testing',
                aws_secret_access_key = 'testing' )
        case _: return Mistral( api_key = 'testing', server_url = server.url )


async def _converse( provider, answers, prompt ):
    ''' Runs the loop against the answers; returns transcript and the
        bodies of the requests received.
    '''
    ensemble = _produce_ensemble( )
    with scripted.ScriptedServer( answers ) as server:
        conversation = conversations.produce_conversation(
            provider, _produce_client( provider, server ), [ ensemble ],
            model = 'model-replay', tokens_maximum = 256 )
        async with ensemble:
            transcript = await conversation.converse( prompt )
    return transcript, [ request.body for request in server.requests ]


_recorded = { }


async def _record( provider ):
    ''' Returns the recorded multi-round history of provider. '''
    if provider not in _recorded:
        answers = [
            scripted.answer_fixture( _CAPTURES[ provider ] ),
            *( _answer_calls( provider, index + 1, calls )
               for index, calls in enumerate( _ROUNDS ) ),
            _answer_text( provider ) ]
        transcript, _ = await _converse( provider, answers, 'Work.' )
        assert transcript.termination is conversations.Terminations.Completion
        _recorded[ provider ] = list( transcript.messages )
    return _recorded[ provider ]


def _access_history( body ):
    for key in ( 'messages', 'contents', 'input' ):
        if key in body: return body[ key ]
    raise AssertionError( sorted( body ) )


def _survey_fields( value, keys ):
    ''' Yields values under keys, depth first, in order. '''
    if isinstance( value, dict ):
        for key, item in value.items( ):
            if key in keys and isinstance( item, str ): yield key, item
            else: yield from _survey_fields( item, keys )
    elif isinstance( value, list ):
        for item in value: yield from _survey_fields( item, keys )


def _survey_shape( messages ):
    ''' Returns roles or types, ids and names of a sent history, in order.
    '''
    return (
        [ message.get( 'role', message.get( 'type' ) )
          for message in messages ],
        list( _survey_fields( messages, _IDS ) ),
        list( _survey_fields( messages, { 'name' } ) ) )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'strategy', sorted( _STRATEGIES ) )
@pytest.mark.parametrize( 'provider', sorted( _CAPTURES ) )
async def test_100_trimmed_history_sent_through_sdk( provider, strategy ):
    ''' The trimmed history goes through the SDK client; what it sends
        keeps every id, name, role and order of the untrimmed one; only
        the trimmed results changed, to placeholders.
    '''
    recorded = await _record( provider )
    trimmed = history.trim_history(
        recorded, provider, **_STRATEGIES[ strategy ] )
    assert trimmed.trimmed
    assert trimmed.saved > 0
    prompt = trimmed.messages
    _, sent = await _converse(
        provider, [ _answer_text( provider ) ], prompt )
    _, sent_untrimmed = await _converse(
        provider, [ _answer_text( provider ) ], recorded )
    messages = _access_history( sent[ 0 ] )
    untrimmed = _access_history( sent_untrimmed[ 0 ] )
    assert _survey_shape( messages ) == _survey_shape( untrimmed )
    changed = [
        index for index, ( after, before ) in enumerate(
            zip( messages, untrimmed, strict = True ) ) if after != before ]
    placeheld = [
        index for index, message in enumerate( messages )
        if history.PLACEHOLDER_PREFIX in json.dumps( message ) ]
    arguments = _STRATEGIES[ strategy ].get( 'clear_arguments', False )
    assert set( placeheld ) <= set( changed )
    assert placeheld
    if not arguments: assert placeheld == changed
    assert len( json.dumps( messages ) ) < len( json.dumps( untrimmed ) )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', sorted( _CAPTURES ) )
async def test_110_superseded_reads_of_recorded_history( provider ):
    ''' In each recorded history, the exact strategy trims the first read
        of /a and of /b (read again later), and the keyed one also the
        read of /a before the write; the latest reads stay.
    '''
    recorded = await _record( provider )
    exact = history.trim_history( recorded, provider )
    keyed = history.trim_history(
        recorded, provider, **_STRATEGIES[ 'keyed' ] )
    assert len( exact.trimmed ) == 2
    assert keyed.trimmed == exact.trimmed
    again = history.trim_history( exact.messages, provider )
    assert again.trimmed == ( )
    assert again.messages == exact.messages


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', [ 'anthropic', 'gemini', 'bedrock' ] )
async def test_200_loop_trims_before_each_request( provider ):
    ''' With option ``trimming``, the loop sends each request trimmed; its
        transcript keeps every result.
    '''
    answers = [
        scripted.answer_fixture( _CAPTURES[ provider ] ),
        *( _answer_calls( provider, index + 1, calls )
           for index, calls in enumerate( _ROUNDS ) ),
        _answer_text( provider ) ]
    ensemble = _produce_ensemble( )
    with scripted.ScriptedServer( answers ) as server:
        conversation = conversations.produce_conversation(
            provider, _produce_client( provider, server ), [ ensemble ],
            model = 'model-replay', tokens_maximum = 256,
            trimming = history.Trimming( superseded = False, keep = 1 ) )
        async with ensemble:
            transcript = await conversation.converse( 'Work.' )
    assert transcript.termination is conversations.Terminations.Completion
    assert history.PLACEHOLDER_PREFIX not in json.dumps(
        transcript.messages )
    bodies = [ request.body for request in server.requests ]
    placeheld = [
        json.dumps( body ).count( history.PLACEHOLDER_PREFIX )
        for body in bodies ]
    assert placeheld[ 0 ] == 0
    assert placeheld == sorted( placeheld )
    assert placeheld[ -1 ] > 0
    recorded = await _record( provider )
    _, sent = await _converse(
        provider, [ _answer_text( provider ) ], recorded[ : -1 ] )
    assert _survey_shape( _access_history( bodies[ -1 ] ) )[ 1 : ] == (
        _survey_shape( _access_history( sent[ 0 ] ) )[ 1 : ] )


@pytest.mark.slow
def test_300_command_keeps_recent_results( tmp_path ):
    ''' ``invocables converse --keep-results 1`` sends older results of the
        io ensemble as placeholders, their calls kept.
    '''
    import os
    import subprocess
    import sys
    ( tmp_path / 'note.txt' ).write_text( 'The code is 4217.\n' * 30 )
    environment = {
        name: value for name, value in os.environ.items( )
        if not name.endswith( '_API_KEY' )
        and name != 'INVOCABLES_CONFIGURATION' }
    environment[ 'XDG_CONFIG_HOME' ] = str( tmp_path / 'configuration' )
    with scripted.ScriptedServer( [
        scripted.openai_tool_calls_stream( [
            ( 'call_1', 'read_file', { 'path': 'note.txt' } ) ] ),
        scripted.openai_tool_calls_stream( [
            ( 'call_2', 'read_file', { 'path': 'note.txt' } ) ] ),
        scripted.openai_text_stream( [ 'It is 4217.' ] ),
    ] ) as server:
        completed = subprocess.run(
            [ sys.executable, '-m', 'invocables', 'converse',
              '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'llama3.2', '--keep-results', '1',
              'What is the code?' ],
            capture_output = True, text = True, timeout = 60,
            cwd = tmp_path, env = environment, check = False )
    assert completed.returncode == 0, completed.stderr
    third = server.requests[ 2 ].body[ 'messages' ]
    results = {
        message[ 'tool_call_id' ]: message[ 'content' ]
        for message in third if message[ 'role' ] == 'tool' }
    assert results[ 'call_1' ].startswith( history.PLACEHOLDER_PREFIX )
    assert results[ 'call_2' ] == 'The code is 4217.\n' * 30
    assert [ message[ 'role' ] for message in third ] == [
        'user', 'assistant', 'tool', 'assistant', 'tool' ]
