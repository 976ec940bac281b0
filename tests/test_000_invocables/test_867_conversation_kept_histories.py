# SPDX-License-Identifier: Apache-2.0

''' Loops of local models over a history which the application kept.

    An application which keeps only the last exchanges of a conversation
    (dropping the oldest, so that the history fits) sends a transcript
    shorter than the one its ids were made in: the ids which the loop
    makes for text calls (``call_<turn>_<position>_<digest>``) must still
    be new to the history, else the server refuses it (a call id twice).
'''


import pytest

import invocables

from invocables.conversations import base, records
from invocables.processors import textcalls

from . import local_models_support
from .replay import LocalModelServer


# Ollama's messages carry no ids of calls: nothing in them can repeat.
PROVIDERS = ( 'openai', 'openai-responses' )
_CALL = '{"name": "add", "arguments": {"a": 1, "b": 2}}'


def add( a: int, b: int ) -> int:
    ''' Returns the sum of two integers. '''
    return a + b


async def _converse( server, provider, messages, streaming ):
    ''' Returns transcript and ids of the calls run, of one loop of a call
        and a final text.
    '''
    ensembles = [ invocables.produce_ensemble( 'local', [ add ] ) ]
    events = await local_models_support.converse(
        server, provider, ensembles, messages, ( _CALL, 'Done.' ),
        streaming )
    transcript, = [
        event.transcript for event in events
        if isinstance( event, base.ConclusionEvent ) ]
    return list( transcript.messages ), [
        invocation.identifier
        for invocation in local_models_support.survey_ran( events ) ]


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
