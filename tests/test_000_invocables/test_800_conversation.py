# SPDX-License-Identifier: Apache-2.0

''' Conversation loop: options, and the loop over the real Anthropic client.

    The client talks to a scripted server on 127.0.0.1 which serves
    real-shaped answers in order: a tool call, then, after the tool result,
    a final answer (and parallel calls, streams, the bound on rounds,
    refusals and tool errors).
'''


import anthropic
import pytest

import invocables

from invocables import conversations, exceptions
from invocables.conversations import (
    ConclusionEvent,
    InvocationEvent,
    ResponseEvent,
    ResultEvent,
    ResultsEvent,
    Terminations,
    TextEvent,
)

from . import scripted


_WEATHER_ID = 'toolu_01A9HHF5Ezy3oBrKmSgfASm9'
_STREAMED_ID = 'toolu_01NRLabsLyVHZPKxbKvkfSMn'


class _Calls:
    ''' Records calls of the tools. '''

    def __init__( self ):
        self.arguments = [ ]

    def produce_ensemble( self ):
        calls = self

        def get_weather( location: str, units: str = 'c' ) -> str:
            ''' Returns the current weather at a location. '''
            calls.arguments.append( ( 'get_weather', location ) )
            return f"Sunny in {location}, 21 {units}."

        def get_time( zone: str ) -> str:
            ''' Returns the current time in a time zone. '''
            calls.arguments.append( ( 'get_time', zone ) )
            return f"12:00 in {zone}."

        def fail( reason: str ) -> str:
            ''' Fails with a reason. '''
            raise ValueError( reason )

        def refuse( reason: str ) -> str:
            ''' Refuses with a reason. '''
            raise exceptions.InvocationRefusal( f"Refused: {reason}." )

        return invocables.produce_ensemble(
            'tools', [ get_weather, get_time, fail, refuse ] )


def _produce_client( server ):
    return anthropic.AsyncAnthropic(
        base_url = server.url, api_key = 'test', max_retries = 0 )


async def _converse(
    answers, prompt = 'Weather in San Francisco?', **options
):
    calls = _Calls( )
    ensemble = calls.produce_ensemble( )
    options.setdefault( 'model', 'claude-haiku-4-5' )
    with scripted.ScriptedServer( answers ) as server:
        async with ensemble:
            conversation = conversations.produce_conversation(
                'anthropic', _produce_client( server ), [ ensemble ],
                **options )
            transcript = await conversation.converse( prompt )
    return transcript, server.requests, calls


def test_100_unknown_provider( ):
    ''' Unknown provider is refused, naming the known ones. '''
    with pytest.raises( exceptions.ProviderNoSupport ) as caught:
        conversations.produce_conversation( 'nobody', None, [ ], model = 'm' )
    assert 'anthropic' in str( caught.value )
    assert 'openai-responses' in str( caught.value )


def test_110_unknown_option( ):
    ''' Unknown option is refused, naming the known ones. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation(
            'anthropic', None, [ ], model = 'm', temperature = 0 )
    assert 'temperature' in str( caught.value )
    assert 'parameters' in str( caught.value )


def test_120_missing_model( ):
    ''' Missing model is refused. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation( 'anthropic', None, [ ] )
    assert 'model' in str( caught.value )


def test_130_rounds_bound_positive( ):
    ''' Bound on rounds and token limit must be at least 1. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        conversations.produce_conversation(
            'anthropic', None, [ ], model = 'm', rounds_maximum = 0 )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        conversations.produce_conversation(
            'anthropic', None, [ ], model = 'm', tokens_maximum = 0 )


def test_140_conversation_is_immutable( ):
    ''' Conversation refuses assignment; copies are made with replace. '''
    conversation = conversations.produce_conversation(
        'anthropic', anthropic.AsyncAnthropic( api_key = 'test' ), [ ],
        model = 'm' )
    with pytest.raises( AttributeError ):
        conversation.model = 'other'
    assert conversation.provider == 'anthropic'
    assert conversation.processor.provider == 'anthropic'


def test_150_no_sdk_imported( ):
    ''' Loops of every provider import no provider SDK. '''
    import subprocess
    import sys
    modules = ', '.join(
        f"invocables.conversations.{name}" for name in (
            'anthropic', 'cohere', 'gemini', 'ollama', 'openai',
            'openai_responses' ) )
    code = (
        f"import sys, {modules}\n"
        "sdks = ( 'anthropic', 'openai', 'google.genai', 'cohere', "
        "'httpx', 'mcp', 'pydantic' )\n"
        "print( [ name for name in sdks if name in sys.modules ] )\n" )
    completed = subprocess.run(
        [ sys.executable, '-c', code ], capture_output = True, text = True,
        timeout = 60, check = True )
    assert completed.stdout.strip( ) == '[]'


def test_160_synchronous_client_refused( ):
    ''' A synchronous SDK client is refused, naming the asynchronous one.
    '''
    client = anthropic.Anthropic( api_key = 'test' )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation(
            'anthropic', client, [ ], model = 'm' )
    message = str( caught.value )
    assert 'synchronous client' in message
    assert 'anthropic.AsyncAnthropic( )' in message


def test_170_client_of_other_provider_refused( ):
    ''' A client of another provider (or none) is refused, saying which
        loop fits it.
    '''
    import openai
    client = openai.AsyncOpenAI( api_key = 'test' )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation(
            'anthropic', client, [ ], model = 'm' )
    message = str( caught.value )
    assert 'openai.AsyncOpenAI is not a client of provider' in message
    assert "'openai' or 'openai-responses'" in message
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation(
            'openai', anthropic.AsyncAnthropic( api_key = 'test' ), [ ],
            model = 'm' )
    assert 'anthropic.AsyncAnthropic( )' not in str( caught.value )
    assert 'openai.AsyncOpenAI( )' in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation( 'anthropic', None, [ ], model = 'm' )
    assert 'None is not a client' in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation(
            'anthropic', object( ), [ ], model = 'm' )
    assert 'has no client.messages.create' in str( caught.value )


def test_180_unknown_option_suggested( ):
    ''' Unknown option is answered with the closest known one, and no
        internal name.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        conversations.produce_conversation(
            'anthropic', None, [ ], model = 'm', tokens_maximun = 5 )
    message = str( caught.value )
    assert "Did you mean 'tokens_maximum' for 'tokens_maximun'?" in message
    assert '_frigid' not in message


@pytest.mark.asyncio
async def test_200_tool_call_then_answer( ):
    ''' Tool call, its result, then the final answer: transcript of four
        native messages; the second request carries the result by id.
    '''
    transcript, requests, calls = await _converse( [
        scripted.anthropic_tool_uses( [ (
            _WEATHER_ID, 'get_weather',
            { 'location': 'San Francisco, CA', 'units': 'f' } ) ] ),
        scripted.anthropic_text( 'It is sunny in San Francisco.' ),
    ], instructions = 'Be brief.', tokens_maximum = 512 )
    assert transcript.termination is Terminations.Completion
    assert transcript.rounds == 2
    assert transcript.text == 'It is sunny in San Francisco.'
    assert calls.arguments == [ ( 'get_weather', 'San Francisco, CA' ) ]
    messages = transcript.messages
    assert [ message[ 'role' ] for message in messages ] == [
        'user', 'assistant', 'user', 'assistant' ]
    assert messages[ 0 ] == {
        'role': 'user', 'content': 'Weather in San Francisco?' }
    assert messages[ 1 ][ 'content' ][ 0 ][ 'type' ] == 'tool_use'
    assert messages[ 2 ] == { 'role': 'user', 'content': [ {
        'type': 'tool_result', 'tool_use_id': _WEATHER_ID,
        'content': [ {
            'type': 'text', 'text': 'Sunny in San Francisco, CA, 21 f.' } ],
    } ] }
    assert messages[ 3 ] == { 'role': 'assistant', 'content': [ {
        'type': 'text', 'text': 'It is sunny in San Francisco.' } ] }
    assert len( requests ) == 2
    first, second = ( request.body for request in requests )
    assert requests[ 0 ].path == '/v1/messages'
    assert first[ 'system' ] == 'Be brief.'
    assert first[ 'max_tokens' ] == 512
    assert first[ 'model' ] == 'claude-haiku-4-5'
    assert [ tool[ 'name' ] for tool in first[ 'tools' ] ] == [
        'get_weather', 'get_time', 'fail', 'refuse' ]
    assert first[ 'tools' ][ 0 ][ 'input_schema' ][ 'required' ] == [
        'location' ]
    assert first[ 'messages' ] == messages[ : 1 ]
    assert second[ 'messages' ] == messages[ : 3 ]


@pytest.mark.asyncio
async def test_210_parallel_calls( ):
    ''' Parallel calls run; their results go back in one message, in
        order, each matched to its call by id.
    '''
    transcript, requests, calls = await _converse( [
        scripted.anthropic_tool_uses( [
            ( 'toolu_a', 'get_weather', { 'location': 'Paris' } ),
            ( 'toolu_b', 'get_time', { 'zone': 'Europe/Paris' } ),
        ], text = 'Checking both.' ),
        scripted.anthropic_text( 'Sunny, noon.' ),
    ] )
    assert sorted( calls.arguments ) == [
        ( 'get_time', 'Europe/Paris' ), ( 'get_weather', 'Paris' ) ]
    results = transcript.messages[ 2 ][ 'content' ]
    assert [ block[ 'tool_use_id' ] for block in results ] == [
        'toolu_a', 'toolu_b' ]
    assert results[ 1 ][ 'content' ][ 0 ][ 'text' ] == '12:00 in Europe/Paris.'
    assert requests[ 1 ].body[ 'messages' ][ 2 ][ 'content' ] == results
    assert transcript.messages[ 1 ][ 'content' ][ 0 ] == {
        'type': 'text', 'text': 'Checking both.' }


@pytest.mark.asyncio
async def test_220_rounds_bound( ):
    ''' At the bound, the loop stops with termination Exhaustion; the calls
        of the last round are answered, so the transcript can continue.
    '''
    answers = [
        scripted.anthropic_tool_uses( [
            ( f"toolu_{number}", 'get_time', { 'zone': 'UTC' } ) ] )
        for number in range( 3 ) ]
    transcript, requests, calls = await _converse(
        answers, rounds_maximum = 2 )
    assert transcript.termination is Terminations.Exhaustion
    assert transcript.rounds == 2
    assert len( requests ) == 2
    assert len( calls.arguments ) == 2
    last = transcript.messages[ -1 ]
    assert last[ 'role' ] == 'user'
    assert last[ 'content' ][ 0 ][ 'tool_use_id' ] == 'toolu_1'


@pytest.mark.asyncio
async def test_230_approver_refuses( ):
    ''' Approver sees every call; a refused call is not run and gets an
        error result; an approved one runs.
    '''
    seen = [ ]

    def approve( invocation ):
        seen.append( ( invocation.identifier, invocation.name ) )
        return invocation.name != 'get_weather'

    transcript, _, calls = await _converse( [
        scripted.anthropic_tool_uses( [
            ( 'toolu_a', 'get_weather', { 'location': 'Paris' } ),
            ( 'toolu_b', 'get_time', { 'zone': 'UTC' } ),
        ] ),
        scripted.anthropic_text( 'Done.' ),
    ], approver = approve )
    assert seen == [ ( 'toolu_a', 'get_weather' ), ( 'toolu_b', 'get_time' ) ]
    assert calls.arguments == [ ( 'get_time', 'UTC' ) ]
    refused, approved = transcript.messages[ 2 ][ 'content' ]
    assert refused[ 'tool_use_id' ] == 'toolu_a'
    assert refused[ 'is_error' ] is True
    assert 'did not approve' in refused[ 'content' ][ 0 ][ 'text' ]
    assert approved[ 'tool_use_id' ] == 'toolu_b'
    assert 'is_error' not in approved


@pytest.mark.asyncio
async def test_231_approver_coroutine_with_message( ):
    ''' Approver may be a coroutine function and refuse with a message for
        the model, by raising invocation refusal.
    '''
    async def approve( invocation ):
        raise exceptions.InvocationRefusal( "Not on Sundays." )

    transcript, _, calls = await _converse( [
        scripted.anthropic_tool_uses( [
            ( 'toolu_a', 'get_time', { 'zone': 'UTC' } ) ] ),
        scripted.anthropic_text( 'Understood.' ),
    ], approver = approve )
    assert calls.arguments == [ ]
    result = transcript.messages[ 2 ][ 'content' ][ 0 ]
    assert result[ 'content' ] == [
        { 'type': 'text', 'text': 'Error: Not on Sundays.' } ]
    assert result[ 'is_error' ] is True


@pytest.mark.asyncio
async def test_240_tool_errors_reach_model( ):
    ''' Tool refusal, invalid arguments and unknown tools become error
        results for the model; the loop goes on.
    '''
    transcript, _, _ = await _converse( [
        scripted.anthropic_tool_uses( [
            ( 'toolu_a', 'refuse', { 'reason': 'busy' } ),
            ( 'toolu_b', 'get_time', { 'zone': 7 } ),
            ( 'toolu_c', 'launch', { } ),
        ] ),
        scripted.anthropic_text( 'Sorry.' ),
    ] )
    results = transcript.messages[ 2 ][ 'content' ]
    assert all( result[ 'is_error' ] for result in results )
    texts = [ result[ 'content' ][ 0 ][ 'text' ] for result in results ]
    assert texts[ 0 ] == 'Error: Refused: busy.'
    assert 'Invalid arguments' in texts[ 1 ]
    assert "Unknown tool 'launch'" in texts[ 2 ]
    assert transcript.termination is Terminations.Completion


@pytest.mark.asyncio
async def test_241_tool_failure_policy( ):
    ''' A tool which raises fails the loop by default (chained cause) and
        is reported to the model under the report policy.
    '''
    answers = [
        scripted.anthropic_tool_uses( [
            ( 'toolu_a', 'fail', { 'reason': 'disk full' } ) ] ),
        scripted.anthropic_text( 'It failed.' ) ]
    alerts = [ ]
    with pytest.raises( exceptions.InvocationExecutionFailure ) as caught:
        await _converse(
            answers, alerter = lambda i, e: alerts.append( ( i.name, e ) ) )
    assert isinstance( caught.value.__cause__, ValueError )
    assert alerts[ 0 ][ 0 ] == 'fail'
    transcript, _, _ = await _converse(
        answers,
        failure_policy = invocables.FailurePolicies.Report )
    result = transcript.messages[ 2 ][ 'content' ][ 0 ]
    assert result[ 'is_error' ] is True
    assert 'disk full' in result[ 'content' ][ 0 ][ 'text' ]


@pytest.mark.asyncio
async def test_250_observer_sees_every_step( ):
    ''' Observer sees text, calls, response, results and conclusion, in
        order; an asynchronous observer is awaited.
    '''
    events = [ ]

    async def observe( event ):
        events.append( event )

    transcript, _, _ = await _converse( [
        scripted.anthropic_tool_uses(
            [ ( 'toolu_a', 'get_time', { 'zone': 'UTC' } ) ],
            text = 'Looking.' ),
        scripted.anthropic_text( 'Noon.' ),
    ], observer = observe )
    assert [ type( event ) for event in events ] == [
        TextEvent, InvocationEvent, ResponseEvent, ResultEvent,
        ResultsEvent, TextEvent, ResponseEvent, ConclusionEvent ]
    assert [ getattr( event, 'round', None ) for event in events ] == [
        1, 1, 1, 1, 1, 2, 2, None ]
    assert events[ 0 ].text == 'Looking.'
    assert events[ 1 ].invocation.arguments == { 'zone': 'UTC' }
    assert isinstance( events[ 2 ].response, anthropic.types.Message )
    assert events[ 3 ].result.invocation_id == 'toolu_a'
    assert events[ 4 ].messages == ( transcript.messages[ 2 ], )
    assert events[ -1 ].transcript is transcript


@pytest.mark.asyncio
async def test_260_transcript_continues( ):
    ''' A transcript, with a new user message, continues the conversation.
    '''
    calls = _Calls( )
    ensemble = calls.produce_ensemble( )
    with scripted.ScriptedServer( [
        scripted.anthropic_text( 'Hello.' ),
        scripted.anthropic_text( 'Goodbye.' ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'anthropic', _produce_client( server ), [ ensemble ],
            model = 'm' )
        first = await conversation.converse( 'Hi.' )
        second = await conversation.converse( [
            *first.messages, { 'role': 'user', 'content': 'Bye.' } ] )
    assert second.text == 'Goodbye.'
    assert len( second.messages ) == 4
    assert server.requests[ 1 ].body[ 'messages' ] == second.messages[ : 3 ]
    assert len( first.messages ) == 2


@pytest.mark.asyncio
async def test_270_paused_turn_resumes( ):
    ''' A response paused by the provider (pause_turn) is sent back as it
        is, in a new round, until the model finishes.
    '''
    transcript, requests, _ = await _converse( [
        scripted.anthropic_text( 'Searching the web.', stop = 'pause_turn' ),
        scripted.anthropic_text( 'Found it.' ),
    ] )
    assert transcript.termination is Terminations.Completion
    assert transcript.rounds == 2
    assert transcript.text == 'Found it.'
    assert [ message[ 'role' ] for message in transcript.messages ] == [
        'user', 'assistant', 'assistant' ]
    assert requests[ 1 ].body[ 'messages' ] == transcript.messages[ : 2 ]


@pytest.mark.asyncio
async def test_300_streamed_loop( ):
    ''' Streamed loop yields text deltas and the call as they come, then
        results and the final answer; transcript as with whole responses.
    '''
    calls = _Calls( )
    ensemble = calls.produce_ensemble( )
    observed = [ ]
    with scripted.ScriptedServer( [
        scripted.answer_fixture( 'anthropic/text-then-tool-use-stream.sse' ),
        scripted.anthropic_text_stream( [ 'It is ', 'sunny.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'anthropic', _produce_client( server ), [ ensemble ],
            model = 'm', observer = observed.append )
        events = [
            event async for event in conversation.converse_continuous(
                'Weather in Paris?' ) ]
    assert observed == events
    assert [ type( event ) for event in events ] == [
        TextEvent, TextEvent, InvocationEvent, ResponseEvent, ResultEvent,
        ResultsEvent, TextEvent, TextEvent, ResponseEvent, ConclusionEvent ]
    assert ''.join(
        event.text for event in events[ : 2 ] ) == (
            "I'll check the current weather in Paris for you." )
    assert events[ 2 ].invocation.identifier == _STREAMED_ID
    assert calls.arguments == [ ( 'get_weather', 'Paris' ) ]
    transcript = events[ -1 ].transcript
    assert transcript.text == 'It is sunny.'
    assert transcript.termination is Terminations.Completion
    assert transcript.messages[ 1 ][ 'content' ][ 1 ][ 'input' ] == {
        'location': 'Paris' }
    second = server.requests[ 1 ].body
    assert second[ 'stream' ] is True
    assert second[ 'messages' ][ 2 ][ 'content' ][ 0 ][ 'tool_use_id' ] == (
        _STREAMED_ID )


@pytest.mark.asyncio
async def test_310_streamed_truncated_call( ):
    ''' A streamed call cut off by the token limit is never run: the loop
        raises invocation interruption, naming the tool.
    '''
    calls = _Calls( )
    ensemble = calls.produce_ensemble( )
    with scripted.ScriptedServer( [ scripted.answer_fixture(
        'anthropic/max-tokens-truncated-tool-input-stream.sse' ) ] ) as server:
        conversation = conversations.produce_conversation(
            'anthropic', _produce_client( server ), [ ensemble ],
            model = 'm' )
        with pytest.raises( exceptions.InvocationInterruption ) as caught:
            async for _ in conversation.converse_continuous( 'Write.' ): pass
    assert caught.value.names == ( 'make_file', )
    assert calls.arguments == [ ]


@pytest.mark.asyncio
async def test_320_provider_error_propagates( ):
    ''' An error of the provider propagates as the SDK's own exception. '''
    with pytest.raises( anthropic.BadRequestError ):
        await _converse( [ scripted.anthropic_error(
            400, 'invalid_request_error', 'Bad tool_result.' ) ] )


@pytest.mark.asyncio
async def test_330_streamed_invalid_arguments( ):
    ''' Streamed tool input which is not JSON is never run: the model
        receives an error result, and the stream goes on.
    '''
    calls = _Calls( )
    ensemble = calls.produce_ensemble( )
    body = scripted.read_fixture( 'anthropic/text-then-tool-use-stream.sse' )
    body = body.replace( b'{\\"locati', b'{\\"locati\\"' )
    with scripted.ScriptedServer( [
        scripted.Answer( 200, 'text/event-stream', body ),
        scripted.anthropic_text_stream( [ 'Let me retry.' ] ),
    ] ) as server:
        conversation = conversations.produce_conversation(
            'anthropic', _produce_client( server ), [ ensemble ],
            model = 'm' )
        events = [
            event async for event in conversation.converse_continuous(
                'Weather in Paris?' ) ]
    assert calls.arguments == [ ]
    transcript = events[ -1 ].transcript
    assert transcript.messages[ 1 ][ 'content' ][ 1 ][ 'input' ] == { }
    result = transcript.messages[ 2 ][ 'content' ][ 0 ]
    assert result[ 'is_error' ] is True
    assert 'not valid JSON' in result[ 'content' ][ 0 ][ 'text' ]
    assert transcript.text == 'Let me retry.'


@pytest.mark.asyncio
async def test_340_streamed_server_tools_and_thinking( ):
    ''' A stream with thinking, text and a server-executed tool (real
        capture) calls no client tool; the message keeps every block, the
        signature and the server tool's parsed input.
    '''
    calls = _Calls( )
    ensemble = calls.produce_ensemble( )
    with scripted.ScriptedServer( [ scripted.answer_fixture(
        'anthropic/server-tool-code-execution-stream.sse' ) ] ) as server:
        conversation = conversations.produce_conversation(
            'anthropic', _produce_client( server ), [ ensemble ],
            model = 'm' )
        events = [
            event async for event in conversation.converse_continuous(
                'Compute.' ) ]
    transcript = events[ -1 ].transcript
    assert transcript.termination is Terminations.Completion
    assert transcript.rounds == 1
    assert not any( isinstance( event, InvocationEvent ) for event in events )
    blocks = transcript.messages[ 1 ][ 'content' ]
    assert [ block[ 'type' ] for block in blocks ] == [
        'thinking', 'text', 'server_tool_use',
        'bash_code_execution_tool_result', 'text' ]
    assert blocks[ 0 ][ 'thinking' ]
    assert blocks[ 0 ][ 'signature' ]
    assert isinstance( blocks[ 2 ][ 'input' ], dict )
    assert blocks[ 2 ][ 'input' ]
    texts = ''.join(
        event.text for event in events if isinstance( event, TextEvent ) )
    assert texts == blocks[ 1 ][ 'text' ] + blocks[ 4 ][ 'text' ]
    assert transcript.text == texts


class _EchoConversation( conversations.ConversationBase ):
    ''' Loop of a made-up provider: the client is a list of replies. '''

    provider = 'echo'

    def produce_message( self, prompt ):
        return { 'role': 'user', 'text': prompt }

    async def request( self, messages, tools ):
        return self.client.pop( 0 )

    async def request_continuous( self, messages, tools ):
        reply = self.client.pop( 0 )
        if reply is None: return
        for invocation in reply.invocations: yield invocation
        yield reply


@pytest.mark.asyncio
async def test_400_custom_provider( ):
    ''' A loop for another provider needs only its three hooks. '''
    from invocables.processors import produce_processor
    calls = _Calls( )
    ensemble = calls.produce_ensemble( )
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = 'get_time', arguments = { 'zone': 'UTC' } )
    replies = [
        conversations.Reply(
            response = None, messages = ( { 'role': 'model' }, ),
            invocations = ( invocation, ), text = '' ),
        conversations.Reply(
            response = None,
            messages = ( { 'role': 'model', 'text': 'Noon' }, ),
            invocations = ( ), text = 'Noon' ),
    ]
    conversation = _EchoConversation(
        client = replies, ensembles = [ ensemble ], model = 'm',
        processor = produce_processor( 'openai' ) )
    transcript = await conversation.converse( 'Time?' )
    assert transcript.text == 'Noon'
    assert transcript.messages[ 0 ] == { 'role': 'user', 'text': 'Time?' }
    assert transcript.messages[ 2 ] == {
        'role': 'tool', 'tool_call_id': 'c1', 'content': '12:00 in UTC.' }
    assert calls.arguments == [ ( 'get_time', 'UTC' ) ]


@pytest.mark.asyncio
async def test_410_request_without_reply( ):
    ''' A streamed request which gives no reply is a response invalidity.
    '''
    from invocables.processors import produce_processor
    conversation = _EchoConversation(
        client = [ None ], ensembles = [ ], model = 'm',
        processor = produce_processor( 'openai' ) )
    with pytest.raises( exceptions.ResponseInvalidity ) as caught:
        async for _ in conversation.converse_continuous( 'Hi' ): pass
    assert 'echo' in str( caught.value )
