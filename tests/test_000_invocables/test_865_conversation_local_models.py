# SPDX-License-Identifier: Apache-2.0

''' Loops of local models which write their calls as text, end to end.

    The 60 real loops of Qwen2.5-Coder-1.5B (176 replies, served by
    llama.cpp: ``tests/data/local-models/qwen2.5-coder-loops.json``) are
    replayed by a local server which checks each history as the hosted
    APIs do (results paired with calls by id, ids unique), through the
    real SDK clients, to the OpenAI Chat, Responses and Ollama loops,
    whole and streamed. Each way shows the same text, stores the same
    history and runs the same calls.
'''


import io
import json
import os
import subprocess
import sys

import httpx
import openai
import pytest

import invocables

from invocables import descriptors, exceptions
from invocables.cli import converse as converse_command
from invocables.conversations import base, produce_conversation
from invocables.processors import produce_processor, textcalls

from .replay import (
    LocalModelServer, Round, check_history, survey_local_runs )


PROVIDERS = ( 'openai', 'openai-responses', 'ollama' )
_KEYS = (
    'ANTHROPIC_API_KEY', 'CO_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY',
    'OPENAI_API_KEY', 'INVOCABLES_CONFIGURATION',
)
RUNS = survey_local_runs( )


def get_weather( city: str ) -> str:
    ''' Returns the weather of a city. '''
    return f"{city}: Rainy, 12 C"


def add( a: int, b: int ) -> int:
    ''' Returns the sum of two integers. '''
    return a + b


def multiply( a: int, b: int ) -> int:
    ''' Returns the product of two integers. '''
    return a * b


def slow_lookup( key: str ) -> str:
    ''' Returns the value stored under a key. '''
    return f"value of {key}"


def get_log( ) -> str:
    ''' Returns the server log. '''
    return '\n'.join(
        f"{'ERROR' if number % 7 == 0 else 'INFO'} line {number}"
        for number in range( 40 ) )


@pytest.fixture( scope = 'module' )
def folder( tmp_path_factory ):
    ''' Folder of the io tools, with the files the model asked for. '''
    root = tmp_path_factory.mktemp( 'project' )
    ( root / 'notes.txt' ).write_text(
        'Meeting on Monday.\nShip the release.\n' )
    ( root / 'project_sync.txt' ).write_text( 'Sync at 10:00.\n' )
    return root


async def _prepare( folder ):
    local = invocables.produce_ensemble( 'local', [
        get_weather, add, multiply, slow_lookup, get_log ] )
    io = await descriptors.prepare_ensembles( {
        'ensembles': [ { 'builtin': 'io' } ],
        'roots': [ { 'path': str( folder ), 'writable': False } ],
    }, connect = True )
    return [ local, *io ]


def _produce_rounds( run, names ):
    ''' Returns replies of run; cut by the token limit where the text
        ends in a call cut off (the recording kept no stop reason).
    '''
    rounds = [ ]
    for entry in run[ 'rounds' ]:
        stop = entry[ 'finish_reason' ]
        if stop != 'stop':
            reading = textcalls.read_text_calls( entry[ 'text' ], names )
            stop = 'length' if reading.truncations else 'stop'
        rounds.append( Round( text = entry[ 'text' ], stop = stop ) )
    return rounds


def _produce_client( provider, server ):
    if provider == 'ollama':
        return httpx.AsyncClient( base_url = server.url )
    return openai.AsyncOpenAI(
        base_url = f"{server.url}/v1", api_key = 'local', max_retries = 0 )


async def _converse( server, ensembles, provider, run, streaming ):
    ''' Returns what a user saw and what the loop did, one way. '''
    names = invocables.naming.access_nomenclature( ensembles ).names
    rounds = _produce_rounds( run, names )
    server.load( rounds )
    client = _produce_client( provider, server )
    events = [ ]
    conversation = produce_conversation(
        provider, client, ensembles, model = 'qwen2.5-coder',
        processor = produce_processor( provider, text_calls = 'auto' ),
        rounds_maximum = len( rounds ) + 1, observer = events.append,
        failure_policy = invocables.FailurePolicies.Report )
    failure = None
    try:
        if streaming:
            async for _ in conversation.converse_continuous(
                run[ 'prompt' ]
            ): pass
        else: await conversation.converse( run[ 'prompt' ] )
    except exceptions.InvocationInterruption as exception:
        failure = tuple( exception.names )
    finally:
        if provider == 'ollama': await client.aclose( )
        else: await client.close( )
    return _summarize( events, failure, server )


def _summarize( events, failure, server ):
    texts = { }
    for event in events:
        if isinstance( event, base.TextEvent ):
            texts[ event.round ] = texts.get( event.round, '' ) + event.text
    announced = [
        ( event.invocation.identifier, event.invocation.name,
          event.invocation.arguments )
        for event in events if isinstance( event, base.InvocationEvent ) ]
    ran = [
        ( event.invocation.identifier, event.invocation.name,
          event.invocation.arguments )
        for event in events if isinstance( event, base.ResultEvent ) ]
    results = [
        ( event.result.invocation_id, event.result.as_text( ) )
        for event in events if isinstance( event, base.ResultEvent ) ]
    transcripts = [
        event.transcript for event in events
        if isinstance( event, base.ConclusionEvent ) ]
    messages = (
        json.loads( json.dumps( transcripts[ 0 ].messages ) )
        if transcripts else None )
    return {
        'texts': texts, 'announced': announced, 'ran': ran,
        'results': results, 'messages': messages, 'failure': failure,
        'refusals': list( server.refusals ),
        'text': transcripts[ 0 ].text if transcripts else None,
    }


def _strip_ids( calls ):
    return [ ( name, arguments ) for _, name, arguments in calls ]


@pytest.mark.slow
@pytest.mark.asyncio
@pytest.mark.parametrize(
    'number', range( len( RUNS ) ),
    ids = [ f"run{number:02d}" for number in range( len( RUNS ) ) ] )
async def test_100_same_whole_and_streamed( number, folder ):
    ''' Each real loop shows the same text, stores the same history and
        runs the same calls whole and streamed, for each of the OpenAI
        Chat, Responses and Ollama loops; the checking server accepts
        every history (results paired with calls, ids unique); calls are
        announced only when they run; shown text holds no call.
    '''
    run = RUNS[ number ]
    ensembles = await _prepare( folder )
    names = invocables.naming.access_nomenclature( ensembles ).names
    outcomes = { }
    with LocalModelServer( ) as server:
        for provider in PROVIDERS:
            whole = await _converse( server, ensembles, provider, run, False )
            streamed = await _converse(
                server, ensembles, provider, run, True )
            for outcome in ( whole, streamed ):
                assert outcome[ 'refusals' ] == [ ]
                assert outcome[ 'announced' ] == outcome[ 'ran' ]
                for text in outcome[ 'texts' ].values( ):
                    reading = textcalls.read_text_calls(
                        text, names, unknown = True )
                    assert reading.invocations == ( )
            assert whole == streamed, provider
            outcomes[ provider ] = whole
    chat = outcomes[ 'openai' ]
    for provider in PROVIDERS[ 1 : ]:
        other = outcomes[ provider ]
        assert other[ 'texts' ] == chat[ 'texts' ]
        assert _strip_ids( other[ 'ran' ] ) == _strip_ids( chat[ 'ran' ] )
        assert other[ 'failure' ] == chat[ 'failure' ]


def test_200_server_checks_histories( ):
    ''' The checking server refuses what the hosted APIs refuse: results
        of no call (the Responses history of a message holding a call's
        JSON and its output), calls with no result, repeated ids.
    '''
    call = '{"name": "add", "arguments": {"a": 1, "b": 2}}'
    items = [
        { 'role': 'user', 'content': 'Add.' },
        { 'type': 'message', 'role': 'assistant', 'content': [
            { 'type': 'output_text', 'text': call } ] },
        { 'type': 'function_call_output', 'call_id': 'call_0_x',
          'output': '3' } ]
    assert 'No tool call found' in check_history(
        'responses', { 'input': items } )
    paired = [
        items[ 0 ],
        { 'type': 'function_call', 'call_id': 'call_0_x', 'name': 'add',
          'arguments': '{}' },
        items[ 2 ] ]
    assert check_history( 'responses', { 'input': paired } ) is None
    assert 'Duplicate' in check_history(
        'responses', { 'input': paired + paired[ 1 : ] } )
    assert 'No tool output' in check_history(
        'responses', { 'input': paired[ : 2 ] } )
    assistant = { 'role': 'assistant', 'content': None, 'tool_calls': [
        { 'id': 'call_0_x', 'type': 'function',
          'function': { 'name': 'add', 'arguments': '{}' } } ] }
    result = { 'role': 'tool', 'tool_call_id': 'call_0_x', 'content': '3' }
    chat = [ { 'role': 'user', 'content': 'Add.' }, assistant, result ]
    assert check_history( 'chat', { 'messages': chat } ) is None
    assert 'Duplicate' in check_history(
        'chat', { 'messages': chat + [ assistant, result ] } )
    assert 'Invalid tool_call_id' in check_history( 'chat', { 'messages': [
        assistant, dict( result, tool_call_id = 'other' ) ] } )
    assert 'No tool message' in check_history(
        'chat', { 'messages': chat[ : 2 ] } )


@pytest.mark.asyncio
async def test_210_repeated_calls_new_ids( folder ):
    ''' A text call repeated round after round gets a new id each round
        (the length of the transcript is in it), whole and streamed alike;
        the server accepts each history.
    '''
    ensembles = await _prepare( folder )
    call = '{"name": "add", "arguments": {"a": 1, "b": 2}}'
    run = { 'prompt': 'Add.', 'rounds': [
        { 'text': call, 'finish_reason': 'stop' } ] * 3 }
    with LocalModelServer( ) as server:
        for provider in PROVIDERS:
            whole = await _converse( server, ensembles, provider, run, False )
            streamed = await _converse(
                server, ensembles, provider, run, True )
            assert whole == streamed
            identifiers = [ identifier for identifier, _, _ in whole[ 'ran' ] ]
            assert len( set( identifiers ) ) == 3
            turns = [ name.split( '_' )[ 1 ] for name in identifiers ]
            assert turns == [ '1', '3', '5' ]


@pytest.mark.asyncio
async def test_220_unknown_tool_answered( folder ):
    ''' A complete text call of a tool not offered gets the error result a
        native call of an unknown tool gets, and the loop goes on.
    '''
    ensembles = await _prepare( folder )
    run = { 'prompt': 'Mail Bob.', 'rounds': [
        { 'text': '{"name": "send_email", "arguments": {"to": "bob"}}',
          'finish_reason': 'stop' },
        { 'text': 'I cannot send mail.', 'finish_reason': 'stop' } ] }
    with LocalModelServer( ) as server:
        for provider in PROVIDERS:
            outcome = await _converse(
                server, ensembles, provider, run, True )
            assert [ name for _, name, _ in outcome[ 'ran' ] ] == [
                'send_email' ]
            error = outcome[ 'results' ][ 0 ][ 1 ]
            assert "Unknown tool 'send_email'" in error
            assert outcome[ 'text' ] == 'I cannot send mail.'
            assert outcome[ 'texts' ] == { 2: 'I cannot send mail.' }


@pytest.mark.asyncio
async def test_230_cut_stream_announces_nothing( folder ):
    ''' A reply cut by the token limit within a call runs none of its
        calls and announces none, whole and streamed.
    '''
    ensembles = await _prepare( folder )
    text = (
        '{"name": "add", "arguments": {"a": 1, "b": 2}}\n'
        '{"name": "add", "arguments": {"a": 3, ' )
    run = { 'prompt': 'Add.', 'rounds': [
        { 'text': text, 'finish_reason': 'length' } ] }
    with LocalModelServer( ) as server:
        for provider in PROVIDERS:
            for streaming in ( False, True ):
                outcome = await _converse(
                    server, ensembles, provider, run, streaming )
                assert outcome[ 'failure' ] == ( 'add', )
                assert outcome[ 'announced' ] == [ ]
                assert outcome[ 'ran' ] == [ ]


@pytest.mark.asyncio
async def test_240_limits_bound_results( folder ):
    ''' Option ``limits`` of the loop bounds results: a result beyond
        ``results_size_maximum`` is an error result the model reads.
    '''
    ensembles = await _prepare( folder )
    with LocalModelServer( ) as server:
        server.load( [
            Round( text = '{"name": "get_log", "arguments": {}}',
                   stop = 'stop' ) ] )
        client = _produce_client( 'openai', server )
        conversation = produce_conversation(
            'openai', client, ensembles, model = 'qwen2.5-coder',
            processor = produce_processor( 'openai', text_calls = 'auto' ),
            limits = invocables.execution.Limits(
                results_size_maximum = 100 ) )
        transcript = await conversation.converse( 'Log?' )
        await client.close( )
    result = transcript.messages[ 2 ]
    assert result[ 'role' ] == 'tool'
    assert result[ 'content' ].startswith( 'Error:' )
    assert 'ERROR line' not in result[ 'content' ]


def _run_command( arguments, folder ):
    environment = {
        name: value for name, value in os.environ.items( )
        if name not in _KEYS }
    environment[ 'XDG_CONFIG_HOME' ] = str( folder / 'configuration' )
    return subprocess.run(
        [ sys.executable, '-m', 'invocables', 'converse', *arguments ],
        capture_output = True, text = True, timeout = 120, cwd = folder,
        env = environment, check = False )


def _produce_file_rounds( ):
    ''' Returns the replies of a real loop which reads files (run 59:
        fenced calls, a bare one, then an empty answer).
    '''
    run = RUNS[ 59 ]
    assert run[ 'prompt' ].startswith( 'Read the file notes.txt' )
    return [
        Round( text = entry[ 'text' ], stop = 'stop' )
        for entry in run[ 'rounds' ] ]


@pytest.mark.slow
def test_300_command_local_model( tmp_path ):
    ''' ``converse --base-url`` reads text calls by itself: the io tools
        read the files, no call JSON is printed, ``--max-tokens`` and
        ``--instructions`` reach the server, an empty reply says
        "(no answer)"; status 0.
    '''
    ( tmp_path / 'notes.txt' ).write_text( 'See project_sync.txt.\n' )
    ( tmp_path / 'project_sync.txt' ).write_text( 'Meeting: Monday 10:00.\n' )
    with LocalModelServer( ) as server:
        server.load( _produce_file_rounds( ) )
        completed = _run_command(
            [ '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'qwen2.5-coder', '--max-tokens', '256',
              '--instructions', 'Use the tools.', '--result-size', '4000',
              'Read the file notes.txt and tell me when the meeting is.' ],
            tmp_path )
        requests = list( server.requests )
        refusals = list( server.refusals )
    assert completed.returncode == 0, completed.stderr
    assert refusals == [ ]
    assert '"name"' not in completed.stdout
    lines = completed.stderr.splitlines( )
    assert lines[ 0 ] == '[tool] read_file {"path": "notes.txt"}'
    assert lines[ 1 ] == '[result] read_file: See project_sync.txt.'
    assert lines[ -1 ] == '(no answer)'
    tools = [ line for line in lines if line.startswith( '[tool]' ) ]
    assert len( tools ) == 3
    assert requests[ 0 ][ 'max_completion_tokens' ] == 256
    assert requests[ 0 ][ 'messages' ][ 0 ] == {
        'role': 'system', 'content': 'Use the tools.' }


@pytest.mark.slow
def test_310_command_text_calls_none( tmp_path ):
    ''' ``--text-calls none`` reads no text calls: the JSON is the answer;
        ``--text-calls`` for a provider which reads none is a usage error.
    '''
    with LocalModelServer( ) as server:
        server.load( _produce_file_rounds( )[ : 1 ] )
        completed = _run_command(
            [ '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'qwen2.5-coder', '--text-calls', 'none',
              'Read the file notes.txt.' ], tmp_path )
    assert completed.returncode == 0, completed.stderr
    assert '"name": "read_file"' in completed.stdout
    assert completed.stderr == ''
    refused = _run_command(
        [ '--provider', 'anthropic', '--text-calls', 'auto', 'Hello?' ],
        tmp_path )
    assert refused.returncode == 2
    assert '--text-calls' in refused.stderr


@pytest.mark.asyncio
async def test_320_command_escapes_controls( ):
    ''' What the model and tools send is written with its control
        characters escaped: no escape sequence reaches the terminal.
    '''
    def shout( text: str ) -> str:
        ''' Returns text with a sequence which clears the screen. '''
        return f"\x1b[2J{text}\x9b1m"
    ensembles = [ invocables.produce_ensemble( 'loud', [ shout ] ) ]
    output, errors = io.StringIO( ), io.StringIO( )
    with LocalModelServer( ) as server:
        server.load( [
            Round( text = '{"name": "shout", "arguments": {"text": "hi"}}',
                   stop = 'stop' ),
            Round( text = 'Done\x1b]0;owned\x07.\nBye\r', stop = 'stop' ) ] )
        client = _produce_client( 'openai', server )
        await converse_command.converse(
            client, ensembles, 'openai', 'qwen2.5-coder', 'Shout.', 5,
            ( output, errors ),
            processor = produce_processor( 'openai', text_calls = 'auto' ) )
        await client.close( )
    written = output.getvalue( ) + errors.getvalue( )
    assert '\x1b' not in written
    assert '\x9b' not in written
    assert '\x07' not in written
    assert '\r' not in written
    assert '[result] shout: \\x1b[2Jhi\\x9b1m' in errors.getvalue( )
    assert output.getvalue( ) == 'Done\\x1b]0;owned\\x07.\nBye\\x0d\n'


@pytest.mark.asyncio
async def test_250_exhaustion_text_holds_no_call( folder ):
    ''' At the bound on rounds, the transcript's text is the text beside
        the calls (here none), never the calls' JSON; whole and streamed.
    '''
    ensembles = await _prepare( folder )
    call = 'Adding. {"name": "add", "arguments": {"a": 1, "b": 2}}'
    with LocalModelServer( ) as server:
        for provider in PROVIDERS:
            for streaming in ( False, True ):
                server.load( [ Round( text = call, stop = 'stop' ) ] * 2 )
                client = _produce_client( provider, server )
                conversation = produce_conversation(
                    provider, client, ensembles, model = 'qwen2.5-coder',
                    processor = produce_processor(
                        provider, text_calls = 'auto' ),
                    rounds_maximum = 2 )
                if streaming:
                    async for event in conversation.converse_continuous(
                        'Add.'
                    ): transcript = getattr( event, 'transcript', None )
                else: transcript = await conversation.converse( 'Add.' )
                if provider == 'ollama': await client.aclose( )
                else: await client.close( )
                assert transcript.termination is base.Terminations.Exhaustion
                assert transcript.text == 'Adding.'
                assert server.refusals == [ ]


def test_260_command_text_calls_defaults( ):
    ''' The command reads text calls by itself against a server given by
        its URL and for Ollama, not against hosted APIs; ``none`` turns
        them off; a format for a provider which reads none is refused.
    '''
    access = converse_command.access_text_calls
    assert access( 'openai', None, 'http://127.0.0.1:8080/v1' ) == 'auto'
    assert access( 'openai-responses', None, 'http://h/v1' ) == 'auto'
    assert access( 'ollama', None, None ) == 'auto'
    assert access( 'openai', None, None ) is None
    assert access( 'anthropic', None, 'http://127.0.0.1:9' ) is None
    assert access( 'openai', 'none', 'http://h/v1' ) is None
    assert access( 'openai', 'strict', None ) == 'strict'
    with pytest.raises( exceptions.UsageInvalidity ):
        access( 'gemini', 'auto', None )
