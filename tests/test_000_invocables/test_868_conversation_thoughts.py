# SPDX-License-Identifier: Apache-2.0

''' Loops of local models which think aloud (``<think>`` ... ``</think>``).

    A call which a model only considers in its thinking block never runs,
    whole or streamed, for every provider which reads text calls; the user
    sees the same text both ways, and the server checking histories takes
    every request.
'''


import pytest

import invocables

from invocables.conversations import base

from . import local_models_support
from .replay import LocalModelServer


PROVIDERS = ( 'openai', 'openai-responses', 'ollama' )
_THOUGHT = (
    'I could run <tool_call>{"name": "delete_all", "arguments": {}}'
    '</tool_call> but that is wrong; add instead.' )
_CALL = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
_REPLIES = {
    'opened': f"<think>{_THOUGHT}</think>\n{_CALL}",
    # The chat template opened the block: the reply only closes it.
    'closed': f"{_THOUGHT}</think>\n{_CALL}",
}


def add( a: int, b: int ) -> int:
    ''' Returns the sum of two integers. '''
    return a + b


def delete_all( ) -> str:
    ''' Deletes everything. '''
    raise AssertionError( 'a thought ran' )


async def _converse( server, provider, reply, streaming ):
    ''' Returns the names of the calls run and the text shown. '''
    ensembles = [
        invocables.produce_ensemble( 'local', [ add, delete_all ] ) ]
    events = await local_models_support.converse(
        server, provider, ensembles, 'Add.', ( reply, 'The sum is 3.' ),
        streaming )
    shown = ''.join(
        event.text for event in events
        if isinstance( event, base.TextEvent ) and event.round == 1 )
    return [
        invocation.name
        for invocation in local_models_support.survey_ran( events ) ], shown


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', PROVIDERS )
@pytest.mark.parametrize( 'shape', sorted( _REPLIES ) )
async def test_100_thoughts_run_nothing( provider, shape ):
    ''' Only the call after the thinking block runs, whole and streamed;
        the text shown is the same both ways and holds no call after the
        block.
    '''
    reply = _REPLIES[ shape ]
    with LocalModelServer( ) as server:
        whole = await _converse( server, provider, reply, False )
        streamed = await _converse( server, provider, reply, True )
    assert whole == streamed
    ran, shown = whole
    assert ran == [ 'add' ]
    assert shown.rstrip( ).endswith( '</think>' )
