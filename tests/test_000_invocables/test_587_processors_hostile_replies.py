# SPDX-License-Identifier: Apache-2.0

''' Hostile or broken replies, whole and streamed: contradictions of the
    stream and texts which no encoder takes.

    A stream which says the model finished, then carries a call; two
    calls which interleave at one index; arguments before their block
    started: each raises response invalidity rather than running a call
    with arguments other than those sent. A reply whose ids, text or
    arguments hold lone surrogates (JSON's ``\\ud800``) still continues
    the conversation: what goes back is sendable, and each call keeps its
    one result.
'''


import json

import openai
import pytest

import invocables

from invocables import exceptions
from invocables.conversations import produce_conversation, records
from invocables.processors import produce_processor

from . import conversations_support
from .replay import ReplayServer, check_history


STREAMING = (
    'anthropic', 'bedrock', 'cohere', 'gemini', 'mistral', 'ollama',
    'openai', 'openai-responses' )
# Providers whose events key calls by index and id.
INDEXED = (
    'anthropic', 'bedrock', 'cohere', 'mistral', 'openai',
    'openai-responses' )
_LONE = '\ud800'


_notes = [ ]


def add( a: int, b: int, note: str = '' ) -> int:
    ''' Returns the sum of two integers. '''
    if note: _notes.append( note )
    return a + b


# Streams of every provider: each call is ( index, id, name, arguments
# text ); each provider's opening, arguments and closing events, apart, so
# that tests may reorder them.

def _anthropic( index, identifier, name, arguments ):
    return (
        [ { 'type': 'content_block_start', 'index': index,
            'content_block': {
                'type': 'tool_use', 'id': identifier, 'name': name,
                'input': { } } } ],
        [ { 'type': 'content_block_delta', 'index': index, 'delta': {
            'type': 'input_json_delta', 'partial_json': arguments } } ],
        [ { 'type': 'content_block_stop', 'index': index } ] )


def _anthropic_end( ):
    return [
        { 'type': 'message_delta', 'delta': { 'stop_reason': 'tool_use' } },
        { 'type': 'message_stop' } ]


def _bedrock( index, identifier, name, arguments ):
    return (
        [ { 'contentBlockStart': {
            'contentBlockIndex': index, 'start': { 'toolUse': {
                'toolUseId': identifier, 'name': name } } } } ],
        [ { 'contentBlockDelta': {
            'contentBlockIndex': index,
            'delta': { 'toolUse': { 'input': arguments } } } } ],
        [ { 'contentBlockStop': { 'contentBlockIndex': index } } ] )


def _bedrock_end( ):
    return [ { 'messageStop': { 'stopReason': 'tool_use' } } ]


def _cohere( index, identifier, name, arguments ):
    return (
        [ { 'type': 'tool-call-start', 'index': index, 'delta': {
            'message': { 'tool_calls': {
                'id': identifier, 'type': 'function',
                'function': { 'name': name, 'arguments': '' } } } } } ],
        [ { 'type': 'tool-call-delta', 'index': index, 'delta': {
            'message': { 'tool_calls': {
                'function': { 'arguments': arguments } } } } } ],
        [ { 'type': 'tool-call-end', 'index': index } ] )


def _cohere_end( ):
    return [ { 'type': 'message-end', 'delta': {
        'finish_reason': 'TOOL_CALL' } } ]


def _chat_chunk( call = None, finish = None ):
    delta = { } if call is None else { 'tool_calls': [ call ] }
    return { 'choices': [
        { 'index': 0, 'delta': delta, 'finish_reason': finish } ] }


def _chat( index, identifier, name, arguments ):
    return (
        [ _chat_chunk( { 'index': index, 'id': identifier, 'type': 'function',
                         'function': { 'name': name, 'arguments': '' } } ) ],
        [ _chat_chunk( { 'index': index,
                         'function': { 'arguments': arguments } } ) ],
        [ ] )


def _chat_end( ):
    return [ _chat_chunk( finish = 'tool_calls' ), '[DONE]' ]


def _gemini( index, identifier, name, arguments ):
    call = { 'id': identifier, 'name': name, 'args': json.loads( arguments ) }
    return (
        [ { 'candidates': [ { 'content': {
            'role': 'model', 'parts': [ { 'functionCall': call } ] } } ] } ],
        [ ], [ ] )


def _gemini_end( ):
    return [ { 'candidates': [ {
        'content': { 'role': 'model', 'parts': [ { 'text': '' } ] },
        'finishReason': 'STOP' } ] } ]


def _ollama( index, identifier, name, arguments ):
    call = { 'id': identifier, 'function': {
        'name': name, 'arguments': json.loads( arguments ) } }
    return (
        [ { 'message': {
            'role': 'assistant', 'content': '', 'tool_calls': [ call ] },
            'done': False } ],
        [ ], [ ] )


def _ollama_end( ):
    return [ { 'message': { 'role': 'assistant', 'content': '' },
               'done': True, 'done_reason': 'stop' } ]


def _responses( index, identifier, name, arguments ):
    item = {
        'type': 'function_call', 'id': f"fc_{identifier}",
        'call_id': identifier, 'name': name, 'arguments': '' }
    return (
        [ { 'type': 'response.output_item.added', 'output_index': index,
            'item': item } ],
        [ { 'type': 'response.function_call_arguments.delta',
            'output_index': index, 'item_id': item[ 'id' ],
            'delta': arguments } ],
        [ { 'type': 'response.output_item.done', 'output_index': index,
            'item': dict( item, arguments = arguments ) } ] )


def _responses_end( ):
    return [ { 'type': 'response.completed', 'response': {
        'id': 'resp_1', 'status': 'completed', 'output': [ ] } } ]


_PARTS = {
    'anthropic': ( _anthropic, _anthropic_end ),
    'bedrock': ( _bedrock, _bedrock_end ),
    'cohere': ( _cohere, _cohere_end ),
    'gemini': ( _gemini, _gemini_end ),
    'mistral': ( _chat, _chat_end ),
    'ollama': ( _ollama, _ollama_end ),
    'openai': ( _chat, _chat_end ),
    'openai-responses': ( _responses, _responses_end ),
}


def _stream( provider, calls ):
    ''' Returns events of a stream of whole calls, then its end. '''
    produce, end = _PARTS[ provider ]
    events = [ ]
    for call in calls:
        for part in produce( *call ): events.extend( part )
    return events + end( )


def _ingest( provider, events ):
    ''' Returns calls emitted by the events and the end of the stream. '''
    accumulator = produce_processor( provider ).produce_accumulator( )
    emitted = [ ]
    for event in events: emitted.extend( accumulator.ingest( event ) )
    emitted.extend( accumulator.conclude( ) )
    return emitted


@pytest.mark.parametrize( 'provider', STREAMING )
def test_100_call_after_final_event_refused( provider ):
    ''' A call which a stream carries after its final event (the model had
        finished) raises response invalidity: it is never run, as a
        compromised proxy would append it.
    '''
    first = _stream( provider, [ ( 0, 'call1', 'add', '{"a": 1, "b": 2}' ) ] )
    assert [ i.arguments for i in _ingest( provider, first ) ] == [
        { 'a': 1, 'b': 2 } ]
    produce, _ = _PARTS[ provider ]
    later = [
        event for part in produce( 1, 'call2', 'add', '{"a": 5, "b": 5}' )
        for event in part ]
    with pytest.raises( exceptions.ResponseInvalidity ):
        _ingest( provider, first + later )


@pytest.mark.parametrize( 'provider', INDEXED )
def test_110_interleaved_calls_at_one_index_refused( provider ):
    ''' A call which starts at the index of an open call whose arguments
        came in part raises response invalidity: neither call runs with
        arguments other than those sent (such as ``{}``). (An open call
        whose arguments have not begun is read as a call without them, as
        servers which reuse one index for each call send it.)
    '''
    produce, end = _PARTS[ provider ]
    opening1, head1, _ = produce( 0, 'call1', 'add', '{"a": 1, ' )
    _, tail1, closing1 = produce( 0, 'call1', 'add', '"b": 2}' )
    opening2, arguments2, closing2 = produce(
        0, 'call2', 'add', '{"a": 3, "b": 4}' )
    events = [
        *opening1, *head1, *opening2, *tail1, *arguments2,
        *closing1, *closing2, *end( ) ]
    with pytest.raises( exceptions.ResponseInvalidity ):
        _ingest( provider, events )


@pytest.mark.parametrize( 'provider', ( 'mistral', 'openai' ) )
def test_115_index_reused_after_whole_call( provider ):
    ''' A server which reuses one index for each call (as some local
        servers do) still gives each call with its arguments, once the
        arguments of the open one are whole.
    '''
    produce, end = _PARTS[ provider ]
    events = [ ]
    for identifier, arguments in (
        ( 'call1', '{"a": 1, "b": 2}' ), ( 'call2', '{"a": 3, "b": 4}' )
    ):
        opening, pieces, _ = produce( 0, identifier, 'add', arguments )
        events.extend( ( *opening, *pieces ) )
    events.extend( end( ) )
    assert [ ( i.identifier, i.arguments ) for i in _ingest(
        provider, events ) ] == [
            ( 'call1', { 'a': 1, 'b': 2 } ), ( 'call2', { 'a': 3, 'b': 4 } ) ]


@pytest.mark.parametrize( 'provider', ( 'mistral', 'openai' ) )
def test_116_index_reused_after_call_without_arguments( provider ):
    ''' A call without arguments (its text empty), then another at the
        same index: each is given, the first with ``{}`` (the fuzzing of
        every processor found this refused once interleaving was).
    '''
    produce, end = _PARTS[ provider ]
    opening1, _, _ = produce( 0, 'call1', 'add', '' )
    opening2, pieces2, _ = produce( 0, 'call2', 'add', '{"a": 3, "b": 4}' )
    events = [ *opening1, *opening2, *pieces2, *end( ) ]
    assert [ ( i.identifier, i.arguments ) for i in _ingest(
        provider, events ) ] == [
            ( 'call1', { } ), ( 'call2', { 'a': 3, 'b': 4 } ) ]


def test_120_anthropic_input_before_start_refused( ):
    ''' Input of a ``tool_use`` block which comes before the block starts
        raises response invalidity, rather than being dropped and the call
        run with the empty input of its start.
    '''
    opening, pieces, closing = _anthropic(
        0, 'toolu_1', 'add', '{"a": 1, "b": 2}' )
    with pytest.raises( exceptions.ResponseInvalidity ):
        _ingest(
            'anthropic',
            [ *pieces, *opening, *closing, *_anthropic_end( ) ] )


def test_130_responses_item_without_arguments_cut_off( ):
    ''' A function call item added with empty arguments, then cut off by
        an incomplete response, is interrupted: it is not run with
        ``{}``.
    '''
    opening, _, _ = _responses( 0, 'call1', 'add', '{"a": 1, "b": 2}' )
    incomplete = { 'type': 'response.incomplete', 'response': {
        'id': 'resp_1', 'status': 'incomplete',
        'incomplete_details': { 'reason': 'max_output_tokens' },
        'output': [ ] } }
    with pytest.raises( exceptions.InvocationInterruption ):
        _ingest( 'openai-responses', [ *opening, incomplete ] )


def test_140_lone_surrogates_made_sendable_by_relabeling( ):
    ''' A reply whose id, text and arguments hold lone surrogates becomes
        one whose messages every UTF-8 encoder takes: the call's id is
        renamed, in its canister as in the message; the text and the
        arguments are escaped.
    '''
    processor = produce_processor( 'anthropic' )
    response = {
        'id': 'msg_1', 'type': 'message', 'role': 'assistant',
        'stop_reason': 'tool_use', 'content': [
            { 'type': 'text', 'text': f"Sure{_LONE}." },
            { 'type': 'tool_use', 'id': f"toolu_{_LONE}", 'name': 'add',
              'input': { 'a': 1, 'b': 2, 'note': _LONE } } ] }
    reply = records.produce_reply(
        response, processor.prepare_message( response ),
        processor.normalize_invocations( response ) )
    reply = records.relabel_reply( reply, 1, set( ) )
    json.dumps( reply.messages, ensure_ascii = False ).encode( 'utf-8' )
    identifier = reply.invocations[ 0 ].identifier
    assert identifier.startswith( 'call_1_' )
    content = reply.messages[ 0 ][ 'content' ]
    assert content[ 1 ][ 'id' ] == identifier
    assert content[ 0 ][ 'text' ] == 'Sure\\ud800.'
    assert content[ 1 ][ 'input' ][ 'note' ] == '\\ud800'


# The loop against a server of Chat Completions whose replies hold lone
# surrogates, through the real SDK client.


class _Server( ReplayServer ):
    ''' Answers with the scripted replies (then the text ``Done.``), whole
        or streamed; refuses histories as the hosted APIs do.
    '''

    def __init__( self, script ):
        super( ).__init__( )
        self.script = list( script )
        self.refusals = [ ]

    def answer( self, path, payload ):
        refusal = check_history( 'chat', payload )
        if refusal is not None:
            self.refusals.append( refusal )
            return 400, 'application/json', json.dumps(
                { 'error': { 'message': refusal } } ).encode( )
        message = self.script.pop( 0 ) if self.script else {
            'role': 'assistant', 'content': 'Done.' }
        finish = 'tool_calls' if message.get( 'tool_calls' ) else 'stop'
        if not payload.get( 'stream' ):
            body = { 'id': 'c', 'object': 'chat.completion', 'created': 0,
                     'model': 'm', 'choices': [ {
                         'index': 0, 'message': message,
                         'finish_reason': finish } ] }
            return 200, 'application/json', json.dumps( body ).encode( )
        calls = [
            dict( call, index = index )
            for index, call in enumerate( message.get( 'tool_calls', [ ] ) ) ]
        delta = { 'role': 'assistant', 'content': message[ 'content' ] }
        if calls: delta[ 'tool_calls' ] = calls
        chunks = [
            { 'choices': [ { 'index': 0, 'delta': delta,
                             'finish_reason': None } ] },
            { 'choices': [ { 'index': 0, 'delta': { },
                             'finish_reason': finish } ] } ]
        fields = {
            'id': 'c', 'model': 'm', 'created': 0,
            'object': 'chat.completion.chunk' }
        text = ''.join(
            f"data: {json.dumps( dict( chunk, **fields ) )}\n\n"
            for chunk in chunks ) + 'data: [DONE]\n\n'
        return 200, 'text/event-stream', text.encode( )


async def _converse( script, streaming ):
    ensembles = [ invocables.produce_ensemble( 'local', [ add ] ) ]
    with _Server( script ) as server:
        client = openai.AsyncOpenAI(
            base_url = f"{server.url}/v1", api_key = 'local',
            max_retries = 0 )
        conversation = produce_conversation(
            'openai', client, ensembles, model = 'm', rounds_maximum = 4,
            failure_policy = invocables.FailurePolicies.Report )
        try:
            transcript = await conversations_support.access_transcript(
                conversation, streaming, 'go' )
        finally: await client.close( )
        return transcript, server.refusals, len( server.requests )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'streaming', ( False, True ) )
async def test_200_loop_sends_lone_surrogates_escaped( streaming ):
    ''' A reply whose call id, text and arguments hold lone surrogates
        does not end the loop with an encoding error: the next request is
        sent, escaped, with each call and its one result, and the tool
        ran with the arguments sent.
    '''
    script = [ {
        'role': 'assistant', 'content': f"Adding{_LONE}.",
        'tool_calls': [ {
            'id': f"call_{_LONE}", 'type': 'function', 'function': {
                'name': 'add',
                'arguments': f'{{"a": 1, "b": 2, "note": "{_LONE}"}}' } } ] } ]
    _notes.clear( )
    transcript, refusals, requests = await _converse( script, streaming )
    assert refusals == [ ]
    assert requests == 2
    assert transcript.termination is records.Terminations.Completion
    assert transcript.text == 'Done.'
    call = transcript.messages[ 1 ][ 'tool_calls' ][ 0 ]
    result = transcript.messages[ 2 ]
    assert call[ 'id' ] == result[ 'tool_call_id' ]
    assert call[ 'id' ].isascii( ) and call[ 'id' ].startswith( 'call_' )
    assert transcript.messages[ 1 ][ 'content' ] == 'Adding\\ud800.'
    assert result[ 'content' ] == '3'
    assert _notes == [ _LONE ]
    json.dumps( transcript.messages, ensure_ascii = False ).encode( 'utf-8' )


@pytest.mark.asyncio
async def test_210_surrogate_ids_which_collide_renamed( ):
    ''' Two ids which would be the same once escaped (a lone surrogate,
        and its escape written out) do not give one id to two calls: the
        first is renamed, so that each result pairs with its call.
    '''
    script = [ {
        'role': 'assistant', 'content': None, 'tool_calls': [
            { 'id': f"call_{_LONE}", 'type': 'function', 'function': {
                'name': 'add', 'arguments': '{"a": 1, "b": 2}' } },
            { 'id': 'call_\\ud800', 'type': 'function', 'function': {
                'name': 'add', 'arguments': '{"a": 3, "b": 4}' } } ] } ]
    transcript, refusals, _ = await _converse( script, False )
    assert refusals == [ ]
    calls = transcript.messages[ 1 ][ 'tool_calls' ]
    identifiers = [ call[ 'id' ] for call in calls ]
    assert len( set( identifiers ) ) == 2
    results = {
        message[ 'tool_call_id' ]: message[ 'content' ]
        for message in transcript.messages[ 2 : 4 ] }
    assert results == { identifiers[ 0 ]: '3', identifiers[ 1 ]: '7' }
