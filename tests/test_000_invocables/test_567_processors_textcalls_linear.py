# SPDX-License-Identifier: Apache-2.0

''' Text-call reader: linear work on adversarial text, whole and streamed.

    The reader counts the characters it scans and copies (a private
    counter, ``_work``): doubling adversarial text must not much more than
    double it. Large adversarial texts are read whole and in pieces with the
    same result, and calls after the noise are still read.
'''


import random

import pytest

from invocables.processors import textcalls


_CALL = '{"name": "add", "arguments": {"a": 1}}'
_NAMES = ( 'add', 'f' )
# Adversarial texts of about n characters: runs of openers which never
# close, each of which a naive reader scans to the end again.
_KINDS = {
    'braces-in-prose': lambda n: 'a { b ' * ( n // 6 ),
    'braces-deep': lambda n: '{' * n,
    'brace-quote': lambda n: '{"' * ( n // 2 ),
    'braces-in-escaped-string': lambda n: '{"' + '{\\"' * ( n // 3 ),
    'braces-and-quoted-closers': lambda n: '{ "}' * ( n // 4 ),
    'objects': lambda n: '{"a": 1} ' * ( n // 9 ),
    'tags-unclosed': lambda n: '<tool_call>' * ( n // 11 ),
    'tags-with-text': lambda n: '<tool_call> x ' * ( n // 14 ),
    'fences': lambda n: '```' * ( n // 3 ),
    'fences-json': lambda n: '```json\n' * ( n // 8 ),
    'brackets': lambda n: '[' * n,
    'quotes': lambda n: '"' * n,
    'pythonic-open': lambda n: 'f(' * ( n // 2 ),
    'lists-open': lambda n: '[f(' * ( n // 3 ),
    'lists': lambda n: '[f(a=1)] ' * ( n // 9 ),
    'separators-after-call': lambda n: _CALL + '[ ' * ( n // 2 ),
    'fences-after-call': lambda n: _CALL + '``` ' * ( n // 4 ),
    'names-unclosed': lambda n: '{"name": "zz", ' * ( n // 15 ),
}
# Kinds whose noise closes what it opens, or opens nothing a call is in.
_CLOSING = frozenset( (
    'braces-in-prose', 'fences', 'fences-json', 'lists', 'objects',
    'quotes', 'separators-after-call', 'fences-after-call', 'tags-with-text',
    'tags-unclosed', 'brackets', 'pythonic-open',
) )


def _measure( text, pieces = 1 ):
    ''' Returns the reading of text (in that many pieces) and the work. '''
    reader = textcalls.TextCallsReader( _NAMES )
    size = -( -len( text ) // pieces )
    texts, invocations = [ ], [ ]
    for start in range( 0, len( text ), size ):
        release = reader.feed( text[ start : start + size ] )
        texts.append( release.text )
        invocations.extend( release.invocations )
    release = reader.conclude( )
    texts.append( release.text )
    invocations.extend( release.invocations )
    reading = (
        ''.join( texts ),
        [ ( item.name, item.arguments, item.invalidity )
          for item in invocations ],
        reader.truncations )
    return reading, reader._work


@pytest.mark.parametrize( 'kind', sorted( _KINDS ) )
def test_100_doubling_doubles_work( kind ):
    ''' Doubling adversarial text less than triples the reader's work,
        whole and streamed, and the work stays within a few passes.
    '''
    make = _KINDS[ kind ]
    for pieces in ( 1, 64 ):
        _, single = _measure( make( 1 << 16 ), pieces )
        _, double = _measure( make( 1 << 17 ), pieces )
        assert double < 3 * single, ( kind, pieces, single, double )
        assert double <= 4 * ( 1 << 17 ), ( kind, pieces, double )


@pytest.mark.slow
@pytest.mark.parametrize( 'kind', sorted( _KINDS ) )
def test_200_megabyte_same_whole_and_streamed( kind ):
    ''' Half a megabyte of adversarial text followed by a call gives the same
        text, calls and truncations whole and in pieces; a call after noise
        which closes everything it opens is read.
    '''
    text = _KINDS[ kind ]( 1 << 19 ) + '\n' + _CALL
    whole, _ = _measure( text )
    streamed, _ = _measure( text, 257 )
    assert streamed == whole
    if kind in _CLOSING:
        name, arguments, invalidity = whole[ 1 ][ -1 ]
        assert ( name, arguments ) == ( 'add', { 'a': 1 } )
        assert not isinstance( invalidity, str )


def test_300_call_after_braces_left_open( ):
    ''' Calls after braces which never close (in prose, in strings of
        objects left open) are read, in order, the same whole and streamed
        one character at a time.
    '''
    call = '{"name": "add", "arguments": {"a": 2}}'
    for prefix in (
        'Use { to open. ',
        '{"note": "a { b \\" c", ',
        '{"x": {"y": 1}, "z": "{", ',
        'a { b { c ',
    ):
        text = prefix + call + ' and ' + call
        reading = textcalls.read_text_calls( text, [ 'add' ] )
        assert [
            ( item.name, item.arguments ) for item in reading.invocations
        ] == [ ( 'add', { 'a': 2 } ) ] * 2, prefix
        whole, _ = _measure( text )
        assert _measure( text, len( text ) )[ 0 ] == whole


def test_310_region_maximum_exact( ):
    ''' A candidate longer than the maximum size ends at that size exactly,
        whatever the pieces: whole and streamed read the same.
    '''
    size = textcalls.REGION_SIZE_MAXIMUM
    for text in (
        '{' + 'x' * size + ' ' + _CALL,
        '{"a": "' + 'x' * ( size - 100 ) + '"} ' + _CALL,
        '[f(' + 'x' * size + ') ' + _CALL,
    ):
        whole, _ = _measure( text )
        for pieces in ( 3, 1000 ):
            assert _measure( text, pieces )[ 0 ] == whole
        assert whole[ 1 ][ -1 ][ : 2 ] == ( 'add', { 'a': 1 } )


def test_400_survey_matches_scans( ):
    ''' The one-pass survey of braces gives, for each brace, where a scan
        from it ends (closed, abandoned as too deep, or open at the end),
        exactly as scanning from that brace does.
    '''
    from invocables.processors import _textscans
    generator = random.Random( 567 )
    parts = (
        '{', '{', '}', '}', '"', '\\', '\\"', ' ', 'x', '{"a": "',
        '{' * 40, '}' * 20 )
    for _ in range( 100 ):
        text = ''.join(
            generator.choice( parts )
            for _ in range( generator.randint( 0, 40 ) ) )
        ends = _textscans.survey_braces( text )
        for position, character in enumerate( text ):
            if character != '{': continue
            scanner = _textscans.BraceScanner( )
            end = scanner.feed( text, position )
            if end is None: expected = ( None, None )
            elif scanner.abandoned: expected = ( None, end )
            else: expected = ( end, None )
            assert (
                ends.closed.get( position ), ends.abandoned.get( position )
            ) == expected, ( text, position )
