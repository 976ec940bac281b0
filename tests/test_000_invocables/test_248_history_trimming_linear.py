# SPDX-License-Identifier: Apache-2.0

''' Trimming of long rounds in linear work: arguments of many calls of one
    message cleared together, on every provider whose calls share a list.
'''


import json
import pathlib
import sys

import pytest

import invocables

from invocables import history


_PACKAGE = str( pathlib.Path( invocables.__file__ ).parent )

_CHAT_PROVIDERS = ( 'openai', 'mistral', 'ollama', 'cohere' )


def _chat( count, identified = True ):
    ''' History of one assistant message of many calls, then their
        results; calls without ids (Ollama) pair results by name.
    '''
    calls = [ ]
    for index in range( count ):
        call = { 'type': 'function', 'function': {
            'name': 'look', 'arguments': json.dumps( { 'i': index } ) } }
        if identified: call[ 'id' ] = f"call_{index}"
        calls.append( call )
    results = [
        { 'role': 'tool', 'tool_call_id': f"call_{index}",
          'content': 'x' * 200 } if identified
        else { 'role': 'tool', 'tool_name': 'look', 'content': 'x' * 200 }
        for index in range( count ) ]
    return [
        { 'role': 'user', 'content': 'Look.' },
        { 'role': 'assistant', 'content': None, 'tool_calls': calls },
        *results ]


def _count_elements( function ):
    ''' Returns value of function and the number of elements of the lists
        and tuples which the library's functions received, in all.

        A copy of a whole list per call of a round hands that list to a
        function once per call: the count grows with the square of the
        calls, where one copy per message keeps it linear.
    '''
    counted = [ 0 ]

    def profile( frame, event, argument ):
        if event != 'call': return
        if not frame.f_code.co_filename.startswith( _PACKAGE ): return
        for value in frame.f_locals.values( ):
            if isinstance( value, ( list, tuple ) ):
                counted[ 0 ] += len( value )

    sys.setprofile( profile )
    try: value = function( )
    finally: sys.setprofile( None )
    return value, counted[ 0 ]


@pytest.mark.parametrize( 'provider', _CHAT_PROVIDERS )
def test_100_clear_arguments_linear( provider ):
    ''' Clearing the arguments of every call of one long round copies
        the list of calls once, not once per call: the work of 8,000
        calls is within a constant of the calls, not of their square.
    '''
    counts = { }
    for count in ( 1000, 8000 ):
        messages = _chat( count, identified = provider != 'ollama' )
        trimmed, counts[ count ] = _count_elements(
            lambda messages = messages: history.trim_history(
                messages, provider, keep = 1, superseded = False,
                clear_arguments = True ) )
        assert len( trimmed.trimmed ) == count - 1
    # Linear: 8 times the calls, about 8 times the work (quadratic: 64).
    assert counts[ 8000 ] < 16 * counts[ 1000 ]
    assert counts[ 8000 ] < 100 * 8000


@pytest.mark.parametrize( 'provider', _CHAT_PROVIDERS )
def test_110_clear_arguments_all_calls( provider ):
    ''' Every trimmed call of the round loses its arguments, the kept one
        keeps them; ids, names and the original history are untouched.
    '''
    messages = _chat( 50, identified = provider != 'ollama' )
    original = json.dumps( messages )
    trimmed = history.trim_history(
        messages, provider, keep = 1, superseded = False,
        clear_arguments = True )
    assert json.dumps( messages ) == original
    calls = trimmed.messages[ 1 ][ 'tool_calls' ]
    assert len( calls ) == 50
    for index, call in enumerate( calls[ : -1 ] ):
        assert call[ 'function' ] == { 'name': 'look', 'arguments': '{}' }
        if provider != 'ollama': assert call[ 'id' ] == f"call_{index}"
    assert calls[ -1 ][ 'function' ][ 'arguments' ] == '{"i": 49}'
    results = [ message[ 'content' ] for message in trimmed.messages[ 2 : ] ]
    assert all(
        result.startswith( history.PLACEHOLDER_PREFIX )
        for result in results[ : -1 ] )
    assert results[ -1 ] == 'x' * 200


def test_120_clear_arguments_rounds_apart( ):
    ''' Calls of two assistant messages are cleared each in its own
        message; a message without trimmed calls is left as it was.
    '''
    first = _chat( 3 )
    second = _chat( 2 )
    for message in second[ 1 : ]:
        if 'tool_calls' in message:
            for call in message[ 'tool_calls' ]:
                call[ 'id' ] = 'late_' + call[ 'id' ]
        else: message[ 'tool_call_id' ] = 'late_' + message[ 'tool_call_id' ]
    messages = first + second[ 1 : ]
    trimmed = history.trim_history(
        messages, 'openai', keep = 2, superseded = False,
        clear_arguments = True )
    assert trimmed.trimmed == ( 'call_0', 'call_1', 'call_2' )
    cleared = trimmed.messages[ 1 ][ 'tool_calls' ]
    assert [ call[ 'function' ][ 'arguments' ] for call in cleared ] == [
        '{}', '{}', '{}' ]
    assert trimmed.messages[ 5 ] is messages[ 5 ]
