# SPDX-License-Identifier: Apache-2.0

''' Loops of local models over a history which the application kept.

    An application which keeps only the last exchanges of a conversation
    (dropping the oldest, so that the history fits) sends a transcript
    shorter than the one its ids were made in: the ids which the loop
    makes for text calls (``call_<turn>_<position>_<digest>``) must still
    be new to the history, else the server refuses it (a call id twice).
'''


import openai
import pytest

import invocables

from invocables.conversations import base, produce_conversation, records
from invocables.processors import produce_processor, textcalls

from .replay import LocalModelServer, Round


# Ollama's messages carry no ids of calls: nothing in them can repeat.
PROVIDERS = ( 'openai', 'openai-responses' )
_CALL = '{"name": "add", "arguments": {"a": 1, "b": 2}}'


def add( a: int, b: int ) -> int:
    ''' Returns the sum of two integers. '''
    return a + b


def _produce_client( server ):
    return openai.AsyncOpenAI(
        base_url = f"{server.url}/v1", api_key = 'local', max_retries = 0 )


async def _converse( server, provider, messages, streaming ):
    ''' Returns transcript and ids of the calls run, of one loop of a call
        and a final text.
    '''
    server.load( [
        Round( text = _CALL, stop = 'stop' ),
        Round( text = 'Done.', stop = 'stop' ) ] )
    ensembles = [ invocables.produce_ensemble( 'local', [ add ] ) ]
    client = _produce_client( server )
    events = [ ]
    conversation = produce_conversation(
        provider, client, ensembles, model = 'qwen2.5-coder',
        processor = produce_processor( provider, text_calls = 'auto' ),
        observer = events.append )
    try:
        if streaming:
            async for _ in conversation.converse_continuous( messages ):
                pass
        else: await conversation.converse( messages )
    finally: await client.close( )
    assert server.refusals == [ ]
    ran = [
        event.invocation.identifier for event in events
        if isinstance( event, base.ResultEvent ) ]
    transcript, = [
        event.transcript for event in events
        if isinstance( event, base.ConclusionEvent ) ]
    return list( transcript.messages ), ran


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', PROVIDERS )
@pytest.mark.parametrize( 'streaming', [ False, True ] )
async def test_100_kept_history_new_ids( provider, streaming ):
    ''' A loop over the last exchange of a conversation, the oldest one
        dropped, gives its repeated call an id new to the history: the
        server checking histories takes every request.
    '''
    with LocalModelServer( ) as server:
        first, _ = await _converse(
            server, provider, 'Add 1 and 2.', streaming )
        second, ran = await _converse(
            server, provider,
            [ *first, { 'role': 'user', 'content': 'Again.' } ], streaming )
        kept = second[ len( first ) : ]
        kept_ids = set( ran )
        third, ran = await _converse(
            server, provider,
            [ *kept, { 'role': 'user', 'content': 'Once more.' } ], streaming )
    ( identifier, ) = ran
    assert identifier not in kept_ids
    assert len( third ) == len( kept ) + 4


def test_110_suffixes_until_new( ):
    ''' The id made for a text call takes the first suffix which makes it
        new to the transcript, alike in the call and in its message.
    '''
    reading = textcalls.read_text_calls( _CALL, ( 'add', ) )
    ( invocation, ) = reading.invocations
    message = { 'role': 'assistant', 'content': '', 'tool_calls': [ {
        'id': invocation.identifier, 'type': 'function',
        'function': { 'name': 'add', 'arguments': _CALL } } ] }
    reply = records.Reply(
        response = None, messages = ( message, ),
        invocations = reading.invocations, text = '' )
    fresh = records.relabel_reply( reply, 5 )
    made = fresh.invocations[ 0 ].identifier
    assert made.startswith( 'call_5_0_' )
    relabeled = records.relabel_reply( reply, 5, { made, f"{made}_2" } )
    ( renamed, ) = relabeled.invocations
    assert renamed.identifier == f"{made}_3"
    ( call, ) = relabeled.messages[ 0 ][ 'tool_calls' ]
    assert call[ 'id' ] == f"{made}_3"


def test_120_item_suffixes_until_new( ):
    ''' An item id of a reply (OpenAI Responses) which the transcript
        holds is renamed to an id new to it, though a trimmed history
        holds the first renaming already.
    '''
    item = {
        'type': 'function_call', 'id': 'fc_1', 'call_id': 'call00000',
        'name': 'add', 'arguments': '{}' }
    reply = records.Reply(
        response = None, messages = ( item, ), invocations = ( ),
        text = '' )
    relabeled = records.relabel_reply(
        reply, 5, { 'fc_1', 'fc_1_5_0', 'fc_1_5_0_2' } )
    assert relabeled.messages[ 0 ][ 'id' ] == 'fc_1_5_0_3'
