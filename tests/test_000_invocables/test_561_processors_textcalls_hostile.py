# SPDX-License-Identifier: Apache-2.0

''' Hostile text calls: what a model thinks, numbers JSON lacks, keys
    repeated in pythonic calls.

    A call inside a thinking block (``<think>`` ... ``</think>``) is a
    thought, not an action: it stays text, however the stream is split
    (before a closer whose opener the chat template wrote, it never runs);
    arguments with ``NaN`` or ``Infinity`` (which JSON lacks, and which
    Python's decoder takes) are refused, as the pythonic format refuses
    them; a pythonic call which repeats an argument or a dict key is
    refused, as JSON which repeats a key is; arguments of the wrong kind
    are refused with the library's configuration error.
'''


import pytest

from invocables import exceptions
from invocables.processors import textcalls


_NAMES = ( 'add', 'get_weather' )
_CALL = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'


def _read_pieces( pieces, format_ = 'auto' ):
    ''' Returns text and calls of pieces, as an accumulator's stream of
        text calls reads them.
    '''
    option = textcalls.TextCallsOption( format_ )
    option.record_names( _NAMES )
    stream = option.produce_stream( )
    texts = [ ]
    for piece in pieces: assert stream.feed( piece, texts ) == ( )
    invocations = stream.conclude( texts )
    return ''.join( texts ), [
        ( call.name, call.arguments ) for call in invocations ]


def _assert_refused( reading, reason ):
    ''' Asserts that the text was one invalid call of 'add' only. '''
    ( call, ) = reading.invocations
    assert call.name == 'add'
    assert call.arguments == { }
    assert reason in call.invalidity
    assert reading.text == ''


def _read_everyhow( text, format_ = 'auto' ):
    ''' Returns text and calls read whole; asserts that streamed, split at
        every place in two and piece by piece, it is the same.
    '''
    reading = textcalls.read_text_calls(
        text, _NAMES, format_, unknown = True )
    calls = [ ( call.name, call.arguments ) for call in reading.invocations ]
    for cut in range( len( text ) + 1 ):
        assert _read_pieces(
            ( text[ : cut ], text[ cut : ] ), format_ ) == (
                reading.text, calls ), cut
    assert _read_pieces( list( text ), format_ ) == (
        reading.text, calls )
    return reading.text, calls


@pytest.mark.parametrize( 'format_', [ 'auto', 'strict', 'hermes' ] )
def test_100_thoughts_hold_no_calls( format_ ):
    ''' A call inside a thinking block stays text, split anywhere; a call
        after the block runs.
    '''
    thought = f"<think>I could write {_CALL} but let me check.</think>"
    text = f"{thought}\n{_CALL}"
    shown, calls = _read_everyhow( text, format_ )
    assert calls == [ ( 'add', { 'a': 1, 'b': 2 } ) ]
    assert shown == thought


def test_110_thoughts_cut_off_stay_text( ):
    ''' A thinking block which the end of the text cuts off is text, with
        any call in it; a tag split at the end is text too.
    '''
    for text in (
        f"<think>maybe {_CALL}", f"<think>maybe {_CALL}</thi",
        'Answer <thi', 'Answer <think',
    ):
        shown, calls = _read_everyhow( text )
        assert calls == [ ]
        assert shown == text


@pytest.mark.parametrize( 'value', [
    'NaN', 'Infinity', '-Infinity', '1e999', '-1e400', '[ 1, NaN ]',
    '{ "b": Infinity }',
] )
def test_200_nonfinite_numbers_refused( value ):
    ''' A call whose JSON arguments hold NaN or an infinity is read as an
        invalid call (the engine answers it with an error), never run with
        a value JSON has no form for: tagged, bare, in a string.
    '''
    quoted = value.replace( '"', '\\"' )
    for text in (
        f'<tool_call>{{"name": "add", "arguments": {{"a": {value}}}}}'
        '</tool_call>',
        f'{{"name": "add", "arguments": {{"a": {value}}}}}',
        f'{{"name": "add", "arguments": "{{\\"a\\": {quoted}}}"}}',
    ):
        _assert_refused( textcalls.read_text_calls(
            text, _NAMES, unknown = True ), 'JSON' )


def test_210_finite_numbers_read( ):
    ''' Finite numbers, large and small, are read as they are. '''
    text = (
        '{"name": "add", "arguments": {"a": 1e308, "b": -2.5e-300, '
        '"c": "NaN"}}' )
    reading = textcalls.read_text_calls( text, _NAMES )
    ( call, ) = reading.invocations
    assert call.arguments == { 'a': 1e308, 'b': -2.5e-300, 'c': 'NaN' }


@pytest.mark.parametrize( 'text', [
    '[add(a=1, a=2)]',
    '[add(a=1, b=2, a=1)]',
    '[add(a={"x": 1, "x": 2})]',
    '[add(a=[{"x": 1}, {"y": {"z": 1, "z": 2}}])]',
    '<|python_start|>[add(a={"x": 1, \'x\': 2})]<|python_end|>',
] )
def test_300_pythonic_repetitions_refused( text ):
    ''' A pythonic call which repeats an argument, or a key of a dict in
        its arguments, is read as an invalid call, as JSON which repeats a
        key is: which value is meant is unknown.
    '''
    _assert_refused( textcalls.read_text_calls( text, _NAMES ), 'repeats' )


def test_310_pythonic_distinct_keys_read( ):
    ''' Keys alike only in another dict, or differing in case, are read.
    '''
    text = '[add(a={"x": 1, "X": 2}, b=[{"x": 1}, {"x": 2}])]'
    ( call, ) = textcalls.read_text_calls( text, _NAMES ).invocations
    assert call.arguments == {
        'a': { 'x': 1, 'X': 2 }, 'b': [ { 'x': 1 }, { 'x': 2 } ] }


@pytest.mark.parametrize( 'format_', [ 'auto', 'strict', 'hermes' ] )
def test_120_thoughts_before_closer_hold_no_calls( format_ ):
    ''' A reply which closes a thinking block it never opened (the chat
        template opened it, as for Qwen3's thinking models) runs none of
        the calls before the closer, split anywhere; calls after it run.
    '''
    text = f"Let me call add. {_CALL} No, wait.</think>\n{_CALL}"
    shown, calls = _read_everyhow( text, format_ )
    assert calls == [ ( 'add', { 'a': 1, 'b': 2 } ) ]
    assert shown.endswith( '</think>' )
    reading = textcalls.read_text_calls( text, _NAMES, format_ )
    ( call, ) = reading.invocations
    assert call.arguments == { 'a': 1, 'b': 2 }


def test_130_thoughts_before_closer_streamed( ):
    ''' Streamed through the stream of text calls, calls before a closer
        of thoughts are held and dropped at the end; so are they when the
        closer comes in the last piece.
    '''
    text = f"{_CALL}{_CALL}</think>"
    stream = textcalls.TextCallsOption( 'auto' )
    stream.record_names( _NAMES )
    calls = stream.produce_stream( )
    texts = [ ]
    for piece in ( text[ : 40 ], text[ 40 : -3 ], text[ -3 : ] ):
        assert calls.feed( piece, texts ) == ( )
    assert calls.conclude( texts ) == ( )
    assert ''.join( texts ) == '</think>'
    assert stream.read( text, 0, truncated = False ) == ( )


@pytest.mark.parametrize( 'arguments', [
    ( b'{"name": "add", "arguments": {}}', _NAMES ),
    ( None, _NAMES ),
    ( '{"name": "add", "arguments": {}}', 'add' ),
    ( '{"name": "add", "arguments": {}}', None ),
    ( '{"name": "add", "arguments": {}}', [ 'add', None ] ),
    ( '{"name": "add", "arguments": {}}', _NAMES, [ 'auto' ] ),
    ( '{"name": "add", "arguments": {}}', _NAMES, 'auto', 'x' ),
    ( '{"name": "add", "arguments": {}}', _NAMES, 'auto', -1 ),
    ( '{"name": "add", "arguments": {}}', _NAMES, 'auto', True ),
    ( '{"name": "add", "arguments": {}}', _NAMES, 'auto', 10 ** 5000 ),
] )
def test_400_careless_arguments_refused( arguments ):
    ''' Text which is no text, names which are one text (its letters are
        no tools) or not texts, a format or a position of the wrong kind
        are refused with a configuration error, not read (or read as
        nothing).
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        textcalls.read_text_calls( *arguments )


def test_410_careless_pieces_refused( ):
    ''' A stream refuses a piece which is no text, and reads on. '''
    reader = textcalls.TextCallsReader( _NAMES )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        reader.feed( b'{' )
    release = reader.feed( '{"name": "add", "arguments": {}}' )
    assert [ call.name for call in release.invocations ] == [ 'add' ]


@pytest.mark.parametrize( 'text', [
    '{"name": "add", "arguments": {"a": 1}, "parameters": {"a": 2}}',
    '<tool_call>{"name": "add", "parameters": {"a": 2}, "arguments": {}}'
    '</tool_call>',
    '<|python_tag|>{"name": "add", "parameters": {}, "arguments": {}}',
] )
def test_320_arguments_and_parameters_refused( text ):
    ''' A JSON call which gives both ``arguments`` and ``parameters`` is
        read as an invalid call: which of them is meant is unknown.
    '''
    _assert_refused( textcalls.read_text_calls( text, _NAMES ), 'both' )
