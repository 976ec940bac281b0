# SPDX-License-Identifier: Apache-2.0

''' Repeated ids of tool calls, whole and streamed, for every provider.

    An id of the provider names one call: of calls which share an id in
    one reply, only the first is run, and the assistant message which the
    loop records holds exactly the calls which are run, whole and streamed
    alike. An id which a server gives again in a later reply (such as
    ``call_0`` in every reply) is renamed in the call and its result, so
    that the history sent back has no call without its result and no id
    twice: the history-checking server of the local models takes it.
'''


import json

import httpx
import openai
import pytest

import invocables

from invocables.conversations import produce_conversation, records
from invocables.processors import mistral, produce_processor

from . import conversations_support
from .replay import ReplayServer, access_fixtures_location, check_history


PROVIDERS = tuple( sorted( invocables.providers.PROVIDERS ) )
# Mistral's message was always made of the calls run: its pairing and
# renaming are tested with the others (test_120, test_200).
PAIRED = tuple( provider for provider in PROVIDERS if provider != 'mistral' )
LOOPS = ( 'ollama', 'openai', 'openai-responses' )
# Nine letters and digits: an id which every provider keeps as it is.
_SAME = 'call00000'
_TWICE = ( ( _SAME, { 'a': 1, 'b': 1 } ), ( _SAME, { 'a': 2, 'b': 1 } ) )


def add( a: int, b: int ) -> int:
    ''' Returns the sum of two integers. '''
    return a + b


# Whole replies and their streams, from one list of ( id, arguments ).

def _anthropic( calls, streaming ):
    blocks = [
        { 'type': 'tool_use', 'id': identifier, 'name': 'add',
          'input': arguments }
        for identifier, arguments in calls ]
    if not streaming:
        return [ {
            'id': 'msg_1', 'type': 'message', 'role': 'assistant',
            'model': 'm', 'stop_reason': 'tool_use', 'content': blocks } ]
    events = [ ]
    for index, block in enumerate( blocks ):
        events.append( {
            'type': 'content_block_start', 'index': index,
            'content_block': dict( block, input = { } ) } )
        events.append( {
            'type': 'content_block_delta', 'index': index, 'delta': {
                'type': 'input_json_delta',
                'partial_json': json.dumps( block[ 'input' ] ) } } )
        events.append( { 'type': 'content_block_stop', 'index': index } )
    events.append( {
        'type': 'message_delta', 'delta': { 'stop_reason': 'tool_use' } } )
    events.append( { 'type': 'message_stop' } )
    return events


def _bedrock( calls, streaming ):
    if not streaming:
        return [ {
            'output': { 'message': { 'role': 'assistant', 'content': [
                { 'toolUse': {
                    'toolUseId': identifier, 'name': 'add',
                    'input': arguments } }
                for identifier, arguments in calls ] } },
            'stopReason': 'tool_use' } ]
    events = [ ]
    for index, ( identifier, arguments ) in enumerate( calls ):
        events.append( { 'contentBlockStart': {
            'contentBlockIndex': index, 'start': { 'toolUse': {
                'toolUseId': identifier, 'name': 'add' } } } } )
        events.append( { 'contentBlockDelta': {
            'contentBlockIndex': index, 'delta': { 'toolUse': {
                'input': json.dumps( arguments ) } } } } )
        events.append( {
            'contentBlockStop': { 'contentBlockIndex': index } } )
    events.append( { 'messageStop': { 'stopReason': 'tool_use' } } )
    return events


def _chat( calls, streaming ):
    ''' OpenAI Chat Completions, which Mistral shares. '''
    functions = [
        { 'id': identifier, 'type': 'function', 'function': {
            'name': 'add', 'arguments': json.dumps( arguments ) } }
        for identifier, arguments in calls ]
    if not streaming:
        return [ {
            'id': 'x', 'object': 'chat.completion', 'created': 0,
            'model': 'm', 'choices': [ {
                'index': 0, 'finish_reason': 'tool_calls',
                'message': {
                    'role': 'assistant', 'content': None,
                    'tool_calls': functions } } ] } ]
    chunks = [
        { 'id': 'x', 'object': 'chat.completion.chunk', 'model': 'm',
          'choices': [ { 'index': 0, 'finish_reason': None, 'delta': {
              'tool_calls': [ dict( function, index = index ) ] } } ] }
        for index, function in enumerate( functions ) ]
    chunks.append( {
        'id': 'x', 'object': 'chat.completion.chunk', 'model': 'm',
        'choices': [ {
            'index': 0, 'finish_reason': 'tool_calls', 'delta': { } } ] } )
    return chunks


def _cohere( calls, streaming ):
    functions = [
        { 'id': identifier, 'type': 'function', 'function': {
            'name': 'add', 'arguments': json.dumps( arguments ) } }
        for identifier, arguments in calls ]
    if not streaming:
        return [ {
            'id': 'x', 'finish_reason': 'TOOL_CALL', 'message': {
                'role': 'assistant', 'tool_plan': 'Adding.',
                'tool_calls': functions } } ]
    events = [ ]
    for index, function in enumerate( functions ):
        start = dict( function, function = { 'name': 'add' } )
        events.append( {
            'type': 'tool-call-start', 'index': index,
            'delta': { 'message': { 'tool_calls': start } } } )
        arguments = function[ 'function' ][ 'arguments' ]
        events.append( {
            'type': 'tool-call-delta', 'index': index, 'delta': {
                'message': { 'tool_calls': { 'function': {
                    'arguments': arguments } } } } } )
        events.append( { 'type': 'tool-call-end', 'index': index } )
    events.append( { 'type': 'message-end', 'delta': {
        'finish_reason': 'TOOL_CALL' } } )
    return events


def _gemini( calls, streaming ):
    parts = [
        { 'functionCall': {
            'id': identifier, 'name': 'add', 'args': arguments } }
        for identifier, arguments in calls ]
    if not streaming:
        return [ { 'candidates': [ {
            'content': { 'role': 'model', 'parts': parts },
            'finishReason': 'STOP' } ] } ]
    events = [
        { 'candidates': [ {
            'content': { 'role': 'model', 'parts': [ part ] } } ] }
        for part in parts ]
    events.append( { 'candidates': [ {
        'content': { 'role': 'model', 'parts': [ { 'text': '' } ] },
        'finishReason': 'STOP' } ] } )
    return events


def _ollama( calls, streaming ):
    functions = [
        { 'id': identifier,
          'function': { 'name': 'add', 'arguments': arguments } }
        for identifier, arguments in calls ]
    if not streaming:
        return [ { 'model': 'm', 'done': True, 'done_reason': 'stop',
                   'message': { 'role': 'assistant', 'content': '',
                                'tool_calls': functions } } ]
    events = [
        { 'model': 'm', 'done': False, 'message': {
            'role': 'assistant', 'content': '', 'tool_calls': [ function ] } }
        for function in functions ]
    events.append( { 'model': 'm', 'done': True, 'done_reason': 'stop',
                     'message': { 'role': 'assistant', 'content': '' } } )
    return events


def _responses( calls, streaming ):
    ''' OpenAI Responses: a response (whole) or its events (streamed). '''
    response = json.loads( ( access_fixtures_location( )
        / 'openai_responses' / 'single-function-call.json' ).read_text( ) )
    items = [
        { 'id': f"fc_{index}", 'type': 'function_call',
          'status': 'completed', 'call_id': identifier, 'name': 'add',
          'arguments': json.dumps( arguments ) }
        for index, ( identifier, arguments ) in enumerate( calls ) ]
    response.update( output = items, tools = [ ] )
    if not streaming: return [ response ]
    events = [ { 'type': 'response.created', 'response': dict(
        response, status = 'in_progress', output = [ ] ) } ]
    for index, item in enumerate( items ):
        events.append( {
            'type': 'response.output_item.added', 'output_index': index,
            'item': dict( item, status = 'in_progress', arguments = '' ) } )
        events.append( {
            'type': 'response.function_call_arguments.delta',
            'item_id': item[ 'id' ], 'output_index': index,
            'delta': item[ 'arguments' ] } )
        events.append( {
            'type': 'response.function_call_arguments.done',
            'item_id': item[ 'id' ], 'output_index': index,
            'name': 'add', 'arguments': item[ 'arguments' ] } )
        events.append( {
            'type': 'response.output_item.done', 'output_index': index,
            'item': item } )
    events.append( { 'type': 'response.completed', 'response': response } )
    for number, event in enumerate( events ):
        event[ 'sequence_number' ] = number
    return events


_REPLIES = {
    'anthropic': _anthropic, 'bedrock': _bedrock, 'cohere': _cohere,
    'gemini': _gemini, 'mistral': _chat, 'ollama': _ollama,
    'openai': _chat, 'openai-responses': _responses,
}


def _survey_calls( message ):
    ''' Returns ( id, name ) of each tool call in an assistant message (or
        in output items), whatever the provider.
    '''
    calls = [ ]
    pending = [ message ]
    while pending:
        value = pending.pop( 0 )
        if isinstance( value, list ):
            pending[ : 0 ] = value
            continue
        if not isinstance( value, dict ): continue
        if value.get( 'type' ) == 'function_call':
            calls.append( ( value.get( 'call_id' ), value[ 'name' ] ) )
        elif value.get( 'type' ) == 'tool_use':
            calls.append( ( value.get( 'id' ), value[ 'name' ] ) )
        elif 'toolUse' in value:
            use = value[ 'toolUse' ]
            calls.append( ( use.get( 'toolUseId' ), use[ 'name' ] ) )
        elif 'functionCall' in value or 'function_call' in value:
            call = value.get( 'functionCall' ) or value[ 'function_call' ]
            calls.append( ( call.get( 'id' ), call[ 'name' ] ) )
        elif 'function' in value:
            name = value[ 'function' ][ 'name' ]
            calls.append( ( value.get( 'id' ), name ) )
        else: pending.extend( value.values( ) )
    return calls


def _read_whole( provider, calls ):
    processor = produce_processor( provider )
    reply, = _REPLIES[ provider ]( calls, False )
    invocations = processor.normalize_invocations( reply )
    return invocations, processor.prepare_message( reply )


def _read_stream( provider, calls ):
    accumulator = produce_processor( provider ).produce_accumulator( )
    invocations = [ ]
    for event in _REPLIES[ provider ]( calls, True ):
        invocations.extend( accumulator.ingest( event ) )
    invocations.extend( accumulator.conclude( ) )
    return invocations, accumulator.produce_message( )


@pytest.mark.parametrize( 'provider', PAIRED )
def test_100_whole_message_holds_calls_run( provider ):
    ''' The assistant message of a whole reply whose calls share an id
        holds exactly the calls which are run: the first under the id.
    '''
    invocations, message = _read_whole( provider, _TWICE )
    assert [ ( i.identifier, i.name ) for i in invocations ] == [
        ( _SAME, 'add' ) ]
    assert invocations[ 0 ].arguments == { 'a': 1, 'b': 1 }
    assert _survey_calls( message ) == [ ( _SAME, 'add' ) ]


@pytest.mark.parametrize( 'provider', PAIRED )
def test_110_whole_and_streamed_agree( provider ):
    ''' A reply whose calls share an id gives the same calls run and the
        same calls in its assistant message, whole and streamed.
    '''
    whole, message = _read_whole( provider, _TWICE )
    streamed, streamed_message = _read_stream( provider, _TWICE )
    def summarize( invocations ):
        return [ ( i.identifier, i.name, dict( i.arguments ) )
                 for i in invocations ]
    assert summarize( whole ) == summarize( streamed )
    assert _survey_calls( message ) == _survey_calls( streamed_message )


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_120_repetitions_paired( provider, caplog ):
    ''' Processors give one entry per call of a whole reply, ``None`` for
        a call which repeats an id, and warn once when normalizing.
    '''
    processor = produce_processor( provider )
    reply, = _REPLIES[ provider ]( ( *_TWICE, ( 'other0000', { } ) ), False )
    pairings = processor.access_invocations( reply )
    assert [ i and i.identifier for i in pairings ] == [
        _SAME, None, 'other0000' ]
    assert 'more than one call' not in caplog.text
    processor.normalize_invocations( reply )
    assert caplog.text.count( 'more than one call' ) == 1


# Replies of the model within the loop.


def _produce_reply( provider, calls, turn, nativize = str ):
    processor = produce_processor( provider )
    response, = _REPLIES[ provider ]( calls, False )
    reply = records.produce_reply(
        response, processor.prepare_message( response ),
        processor.normalize_invocations( response ) )
    used = records.survey_identifiers( [ { 'id': nativize( _SAME ) } ] )
    return records.relabel_reply( reply, turn, used, nativize ), processor


@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_200_repeated_native_id_renamed( provider ):
    ''' A provider's id which an earlier call of the transcript had is
        renamed, alike in the assistant message and in the result.
    '''
    nativize = (
        mistral.nativize_identifier if provider == 'mistral' else str )
    reply, processor = _produce_reply(
        provider, _TWICE[ : 1 ], 4, nativize )
    invocation, = reply.invocations
    assert invocation.identifier.startswith( 'call_4_0_' )
    assert not invocation.identifier_synthesized
    calls = _survey_calls( list( reply.messages ) )
    assert calls == [ ( nativize( invocation.identifier ), 'add' ) ]
    result = invocables.ResultCanister(
        invocation_id = invocation.identifier,
        content = invocables.canisters.produce_content( 3 ), name = 'add' )
    results = json.dumps( processor.nativize_results( [ result ] ) )
    assert json.dumps( nativize( invocation.identifier ) ) in results
    assert json.dumps( _SAME ) not in results


def test_210_fresh_native_id_kept( ):
    ''' A provider's id which no call of the transcript had is kept. '''
    processor = produce_processor( 'openai' )
    response, = _chat( [ ( 'fresh0000', { 'a': 1, 'b': 1 } ) ], False )
    reply = records.produce_reply(
        response, processor.prepare_message( response ),
        processor.normalize_invocations( response ) )
    relabeled = records.relabel_reply( reply, 3, { _SAME } )
    assert relabeled is reply


def test_215_repeated_item_id_renamed( ):
    ''' An item id (Responses' ``fc_...``) which an earlier item had is
        renamed, a fresh call id being kept; a fresh item id is kept.
    '''
    processor = produce_processor( 'openai-responses' )
    response, = _responses( [ ( 'fresh0000', { 'a': 1, 'b': 1 } ) ], False )
    reply = records.produce_reply(
        response, processor.prepare_message( response ),
        processor.normalize_invocations( response ) )
    relabeled = records.relabel_reply( reply, 5, { 'fc_0', 'call_0' } )
    item, = relabeled.messages
    assert item[ 'id' ] == 'fc_0_5_0'
    assert item[ 'call_id' ] == 'fresh0000'
    assert relabeled.invocations == reply.invocations
    assert records.relabel_reply( reply, 5, { 'fc_1' } ) is reply


def test_220_identifiers_surveyed( ):
    ''' Ids of calls are found in messages of every shape. '''
    messages = [
        { 'role': 'assistant', 'tool_calls': [ { 'id': 'a' } ] },
        { 'type': 'function_call', 'call_id': 'b', 'id': 'fc_b' },
        { 'role': 'assistant', 'content': [
            { 'type': 'tool_use', 'id': 'c' },
            { 'toolUse': { 'toolUseId': 'd' } } ] },
        { 'role': 'tool', 'tool_call_id': 'a', 'content': '{"id": "no"}' } ]
    assert records.survey_identifiers( messages ) == {
        'a', 'b', 'fc_b', 'c', 'd' }


# Loops against a server which checks histories as the hosted APIs do.


class _Server( ReplayServer ):
    ''' Answers each request with the next scripted calls (none beyond
        the script: the text ``Done.``), in the API's shape of the path,
        whole or streamed; refuses histories as the hosted APIs do.
    '''

    def __init__( self, script ):
        super( ).__init__( )
        self.script = list( script )
        self.refusals = [ ]

    def answer( self, path, payload ):
        genus = (
            'responses' if path.endswith( '/responses' )
            else 'ollama' if path.endswith( '/api/chat' ) else 'chat' )
        refusal = check_history( genus, payload )
        if refusal is not None:
            self.refusals.append( refusal )
            body = { 'error': {
                'message': refusal, 'type': 'invalid_request_error' } }
            return 400, 'application/json', json.dumps( body ).encode( )
        calls = self.script.pop( 0 ) if self.script else ( )
        streaming = bool( payload.get( 'stream' ) )
        return _answer( genus, calls, streaming )


def _answer( genus, calls, streaming ):
    producer = {
        'chat': _chat, 'ollama': _ollama, 'responses': _responses }[ genus ]
    payloads = producer( calls, streaming )
    if not calls: _say_done( genus, payloads )
    if not streaming:
        return 200, 'application/json', json.dumps( payloads[ 0 ] ).encode( )
    if genus == 'ollama':
        lines = [ json.dumps( payload ) + '\n' for payload in payloads ]
        return 200, 'application/x-ndjson', ''.join( lines ).encode( )
    if genus == 'responses':
        lines = [
            f"event: {payload[ 'type' ]}\ndata: {json.dumps( payload )}\n\n"
            for payload in payloads ]
    else:
        lines = [
            f"data: {json.dumps( payload )}\n\n" for payload in payloads ]
        lines.append( 'data: [DONE]\n\n' )
    return 200, 'text/event-stream', ''.join( lines ).encode( )


def _say_done( genus, payloads ):
    ''' Turns a reply without calls into the text ``Done.``. '''
    if genus == 'responses':
        _say_done_responses( payloads )
        return
    text = { 'role': 'assistant', 'content': 'Done.' }
    for payload in payloads:
        if genus == 'ollama':
            payload[ 'message' ] = dict( text )
            payload[ 'done' ] = True
        else:
            for choice in payload[ 'choices' ]:
                choice[ 'finish_reason' ] = 'stop'
                key = 'message' if 'message' in choice else 'delta'
                choice[ key ] = dict( text )


def _say_done_responses( payloads ):
    message = {
        'id': 'msg_1', 'type': 'message', 'status': 'completed',
        'role': 'assistant', 'content': [ {
            'type': 'output_text', 'annotations': [ ], 'logprobs': [ ],
            'text': 'Done.' } ] }
    payloads[ -1 ].get( 'response', payloads[ -1 ] )[ 'output' ] = [
        message ]
    if len( payloads ) == 1: return
    payloads[ 1 : 1 ] = [
        { 'type': 'response.output_item.added', 'output_index': 0,
          'item': dict( message, status = 'in_progress', content = [ ] ) },
        { 'type': 'response.output_text.delta', 'item_id': 'msg_1',
          'output_index': 0, 'content_index': 0, 'delta': 'Done.',
          'logprobs': [ ] },
        { 'type': 'response.output_item.done', 'output_index': 0,
          'item': message } ]
    for number, payload in enumerate( payloads ):
        payload[ 'sequence_number' ] = number


_SCRIPTS = {
    'twice-in-one-reply': [ list( _TWICE ) ],
    'same-id-every-reply': [
        [ ( 'call_0', { 'a': 1, 'b': 1 } ) ],
        [ ( 'call_0', { 'a': 2, 'b': 1 } ) ],
        [ ( 'call_0', { 'a': 3, 'b': 1 } ), ( 'call_1', { 'a': 4, 'b': 1 } ) ],
    ],
}


async def _converse( provider, script, streaming ):
    ''' Returns transcript of loop and refusals of the server. '''
    ensembles = [ invocables.produce_ensemble( 'local', [ add ] ) ]
    with _Server( script ) as server:
        client = (
            httpx.AsyncClient( base_url = server.url )
            if provider == 'ollama' else openai.AsyncOpenAI(
                base_url = f"{server.url}/v1", api_key = 'local',
                max_retries = 0 ) )
        conversation = produce_conversation(
            provider, client, ensembles, model = 'm',
            rounds_maximum = len( script ) + 2,
            failure_policy = invocables.FailurePolicies.Report )
        try:
            transcript = await conversations_support.access_transcript(
                conversation, streaming, 'go' )
        finally:
            if provider == 'ollama': await client.aclose( )
            else: await client.close( )
        return transcript, list( server.refusals )


def _check( provider, messages ):
    genus = {
        'ollama': 'ollama', 'openai': 'chat',
        'openai-responses': 'responses' }[ provider ]
    key = 'input' if genus == 'responses' else 'messages'
    return check_history( genus, { key: messages } )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'scenario', sorted( _SCRIPTS ) )
@pytest.mark.parametrize( 'provider', LOOPS )
async def test_300_loop_completes_whole_and_streamed( provider, scenario ):
    ''' The loop completes against the history-checking server, whole and
        streamed, with the same history: each call with its one result,
        no id twice.
    '''
    script = _SCRIPTS[ scenario ]
    whole, refusals = await _converse( provider, script, False )
    assert refusals == [ ]
    streamed, refusals = await _converse( provider, script, True )
    assert refusals == [ ]
    assert whole.termination is records.Terminations.Completion
    assert whole.text == 'Done.'
    assert whole.messages == streamed.messages
    assert _check( provider, whole.messages ) is None
    identifiers = [ i for i, _ in _survey_calls( whole.messages ) ]
    assert len( identifiers ) == len( set( identifiers ) )
    assert len( identifiers ) == sum( map( len, script ) ) - (
        1 if scenario == 'twice-in-one-reply' else 0 )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', LOOPS )
async def test_310_results_follow_renamed_calls( provider ):
    ''' Each result carries the id of its call, renamed where the server
        repeated an id across replies; the first reply keeps its own.
    '''
    script = _SCRIPTS[ 'same-id-every-reply' ]
    transcript, _ = await _converse( provider, script, False )
    identifiers = [ i for i, _ in _survey_calls( transcript.messages ) ]
    assert identifiers[ 0 ] == 'call_0'
    assert identifiers[ 3 ] == 'call_1'
    assert all(
        identifier.startswith( 'call_' ) and identifier.count( '_' ) == 3
        for identifier in identifiers[ 1 : 3 ] )
    text = json.dumps( transcript.messages )
    for identifier in identifiers:
        assert text.count( json.dumps( identifier ) ) == 2
