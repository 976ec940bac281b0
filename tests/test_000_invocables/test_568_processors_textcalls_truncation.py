# SPDX-License-Identifier: Apache-2.0

''' Text calls of truncated replies: one rule, whole and streamed.

    A reply which stopped on its token limit (``length``, an incomplete
    Responses response) with a call cut off runs none of its text calls,
    whole (truncation raised) or streamed (nothing emitted, interruption
    raised at the end); a reply with its calls complete gives the same
    calls both ways, streamed at the end of the reply. Tested with real
    Qwen2.5-Coder replies which llama.cpp stopped on ``length``, one of
    them repeating one call 22 times.
'''


import json

from pathlib import Path

import pytest

from invocables import exceptions
from invocables.processors import produce_processor


_DATA = Path( __file__ ).parents[ 1 ] / 'data' / 'local-models'
_QWEN = json.loads(
    ( _DATA / 'qwen2.5-coder-llamacpp.json' ).read_text( encoding = 'utf-8' ) )
_TRUNCATED = [
    index for index, reply in enumerate( _QWEN[ 'replies' ] )
    if reply[ 'finish_reason' ] == 'length' ]
_REPEATING = 1 # 22 calls of 'add' (21 alike), then one cut off


def _produce( provider, reply ):
    processor = produce_processor( provider, text_calls = 'auto' )
    processor.text_calls.record_names( reply[ 'offered_tools' ] )
    return processor


def _pieces( text, size = 5 ):
    return [ text[ start : start + size ]
             for start in range( 0, len( text ), size ) ]


def _summarize( invocations ):
    return [ ( item.name, item.arguments ) for item in invocations ]


def _whole( provider, reply, truncated ):
    processor = _produce( provider, reply )
    content = reply[ 'content' ]
    if provider == 'openai':
        body = { 'choices': [ {
            'index': 0, 'finish_reason': 'length' if truncated else 'stop',
            'message': { 'role': 'assistant', 'content': content } } ] }
    elif provider == 'ollama':
        body = {
            'message': { 'role': 'assistant', 'content': content },
            'done': True, 'done_reason': 'length' if truncated else 'stop' }
    else:
        body = {
            'status': 'incomplete' if truncated else 'completed',
            'output': [ { 'type': 'message', 'role': 'assistant',
                'content': [ { 'type': 'output_text', 'text': content } ] } ] }
    return processor.normalize_invocations( body )


def _events( provider, content, truncated ):
    ''' Yields the events of a stream of content, ending as truncated or
        not, in the provider's wire format.
    '''
    for piece in _pieces( content ):
        if provider == 'openai':
            yield { 'choices': [ {
                'index': 0, 'delta': { 'content': piece } } ] }
        elif provider == 'ollama':
            yield { 'message': { 'role': 'assistant', 'content': piece },
                    'done': False }
        else:
            yield { 'type': 'response.output_text.delta', 'delta': piece }
    if provider == 'openai':
        yield { 'choices': [ { 'index': 0, 'delta': { },
            'finish_reason': 'length' if truncated else 'stop' } ] }
        yield '[DONE]'
    elif provider == 'ollama':
        yield { 'message': { 'role': 'assistant', 'content': '' },
                'done': True,
                'done_reason': 'length' if truncated else 'stop' }
    elif truncated:
        yield { 'type': 'response.incomplete', 'response': {
            'incomplete_details': { 'reason': 'max_output_tokens' } } }
    else: yield { 'type': 'response.completed', 'response': { } }


def _stream( provider, reply, truncated ):
    ''' Returns calls emitted by each event, and by the conclusion (or the
        exception it raised).
    '''
    accumulator = _produce( provider, reply ).produce_accumulator( )
    emitted = [
        _summarize( accumulator.ingest( event ) )
        for event in _events( provider, reply[ 'content' ], truncated ) ]
    try: concluded = _summarize( accumulator.conclude( ) )
    except exceptions.InvocationInterruption as exception:
        return emitted, exception
    return emitted, concluded


_PROVIDERS = ( 'openai', 'ollama', 'openai-responses' )


def test_100_repeating_reply_is_cut( ):
    ''' The real reply which repeats one call holds 23 complete calls, 22
        of them of 'add', and one cut off by ``length``.
    '''
    reply = _QWEN[ 'replies' ][ _REPEATING ]
    assert reply[ 'finish_reason' ] == 'length'
    lines = reply[ 'content' ].split( '\n' )
    complete = [ json.loads( line ) for line in lines[ : -1 ] ]
    assert len( complete ) == 23
    assert [ call[ 'name' ] for call in complete ].count( 'add' ) == 22
    assert not lines[ -1 ].endswith( '}' )


@pytest.mark.parametrize( 'provider', _PROVIDERS )
@pytest.mark.parametrize( 'index', _TRUNCATED )
def test_110_truncated_runs_nothing( provider, index ):
    ''' A reply stopped on its token limit with a text call cut off runs no
        call, whole or streamed event by event: whole raises truncation,
        streamed emits nothing and raises interruption, naming the call.
    '''
    reply = _QWEN[ 'replies' ][ index ]
    with pytest.raises( exceptions.InvocationTruncation ) as caught:
        _whole( provider, reply, truncated = True )
    emitted, concluded = _stream( provider, reply, truncated = True )
    assert all( not calls for calls in emitted )
    assert isinstance( concluded, exceptions.InvocationInterruption )
    assert concluded.names == caught.value.names


@pytest.mark.parametrize( 'provider', _PROVIDERS )
@pytest.mark.parametrize( 'index', [
    index for index, reply in enumerate( _QWEN[ 'replies' ] )
    if reply[ 'finish_reason' ] == 'stop' and '{' in reply[ 'content' ] ] )
def test_120_complete_same_both_ways( provider, index ):
    ''' A reply which stopped of itself gives the same calls whole and
        streamed; streamed, they come at the end of the reply.
    '''
    reply = _QWEN[ 'replies' ][ index ]
    whole = _summarize( _whole( provider, reply, truncated = False ) )
    emitted, concluded = _stream( provider, reply, truncated = False )
    assert not isinstance( concluded, Exception )
    streamed = [ call for calls in emitted for call in calls ] + concluded
    assert streamed == whole
    assert all( not calls for calls in emitted[ : -2 ] )


@pytest.mark.parametrize( 'provider', _PROVIDERS )
def test_130_truncated_complete_calls_run( provider ):
    ''' A reply stopped on its token limit right after complete calls runs
        them, whole and streamed alike.
    '''
    reply = dict( _QWEN[ 'replies' ][ _REPEATING ] )
    content = reply[ 'content' ]
    reply[ 'content' ] = content[ : content.rindex( '\n' ) ]
    whole = _summarize( _whole( provider, reply, truncated = True ) )
    assert len( whole ) == 23
    emitted, concluded = _stream( provider, reply, truncated = True )
    assert not isinstance( concluded, Exception )
    assert [ call for calls in emitted for call in calls ] + concluded == (
        whole )


def test_140_stream_without_end( ):
    ''' A stream which ends without its stop, a call cut off, runs none of
        its text calls.
    '''
    reply = _QWEN[ 'replies' ][ _REPEATING ]
    accumulator = _produce( 'openai', reply ).produce_accumulator( )
    for piece in _pieces( reply[ 'content' ] ):
        assert accumulator.ingest( { 'choices': [ {
            'index': 0, 'delta': { 'content': piece } } ] } ) == ( )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'add', )


_LOOPS = json.loads(
    ( _DATA / 'qwen2.5-coder-loops.json' ).read_text( encoding = 'utf-8' ) )
_LOOP_REPLIES = sorted( {
    round_[ 'text' ] for run in _LOOPS[ 'runs' ]
    for round_ in run[ 'rounds' ] } )


def _outcome( function ):
    ''' Returns calls, or the names of the calls cut off when it raised. '''
    try: return function( )
    except exceptions.InvocationInterruption as exception:
        return ( 'cut off', exception.names )


@pytest.mark.parametrize( 'provider', _PROVIDERS )
def test_200_loop_replies_same_both_ways( provider ):
    ''' Every real reply of the tool loops, ended as stopped and as cut by
        the token limit, gives the same calls whole and streamed event by
        event, or none both ways (cut off, naming the same calls); no call
        is emitted before the end of the reply.
    '''
    names = list( _LOOPS[ 'offered_tools' ] )
    outcomes = set( )
    for content in _LOOP_REPLIES:
        reply = { 'content': content, 'offered_tools': names }
        for truncated in ( False, True ):
            whole = _outcome( lambda: _summarize(
                _whole( provider, reply, truncated ) ) )
            emitted, concluded = _stream( provider, reply, truncated )
            assert all( not calls for calls in emitted[ : -2 ] )
            if isinstance( concluded, Exception ):
                streamed = ( 'cut off', concluded.names )
                assert all( not calls for calls in emitted )
            else:
                streamed = [
                    call for calls in emitted for call in calls ] + concluded
            assert streamed == whole, ( content, truncated )
            outcomes.add( ( truncated, isinstance( whole, tuple ) ) )
    assert outcomes == {
        ( False, False ), ( True, False ), ( True, True ) }
