# SPDX-License-Identifier: Apache-2.0

''' Fuzzing of secrets which hold what reads as escapes, in every form.

    A secret may itself hold escape-like text (``%f8``, ``%41``, a
    backslash beside a quote or a letter, ``&amp;``, ``&#65;``,
    ``\\u0041``, ``+``, a space) and characters beyond ASCII. Written in
    any supported form (percent-encoded, as a form, for JSON, JavaScript
    or HTML, each in any mixture of escaped and plain characters, or as
    Python's and the standard encoders write it), within one form more,
    it is redacted exactly: the text around it stays. Split over several
    texts, it is redacted in each.

    The mixtures are as their encoders make them: a percent-encoder always
    escapes ``%``, ``+``, ``&`` and the backslash, JSON and JavaScript
    the backslash and (JSON) the quote, HTML ``&``. Derandomized, so that
    the suite sees the same cases every time; a few hundred per property
    in the suite (seconds); set ``INVOCABLES_FUZZ_EXAMPLES`` for more.

    Before, a secret whose own escapes met escapes of two levels in
    another order than its encoders wrote them (a JSON escape within
    HTML or percent-encoding beside a backslash of the secret), or whose
    bytes of UTF-8 two levels of escapes gave apart, leaked.
'''


import html
import json
import os
import random
import urllib.parse

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invocables.mcp import redaction

from . import escapes_support


EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '0' ) ) or 400

_ALPHABET = 'abcdefghXYZ0123456789-_'
_CHUNKS = (
    '%f8', '%41', '%', '\\', '\\"', '"', "'", '&amp;', '&', '&#65;', '&lt;',
    '\\u0041', '\\x41', '\\n', '+', ' ', 'é', '€', '\U0001f600', '/', '<',
    ';', '#', 'u', '{', '}',
)
_NAMED = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }
_settings = settings(
    max_examples = EXAMPLES, deadline = None, database = None,
    derandomize = True, suppress_health_check = list( HealthCheck ) )
_timeout = pytest.mark.timeout( max( 300, EXAMPLES // 10 ) )


_escape_percent = escapes_support.produce_percent_escape


def _escape_units( chooser, character ):
    units = character.encode( 'utf-16-be', errors = 'surrogatepass' )
    pattern = '\\u{:04X}' if chooser.random( ) < 0.5 else '\\u{:04x}'
    return ''.join(
        pattern.format( int.from_bytes( units[ index : index + 2 ], 'big' ) )
        for index in range( 0, len( units ), 2 ) )


def _mix_escapes( chooser, text, always, survey ):
    ''' Writes any characters of text, always the character always, as
        one of the escapes which survey lists for it. '''
    pieces = [ ]
    for character in text:
        if character != always and chooser.random( ) < 0.5:
            pieces.append( character )
            continue
        pieces.append( chooser.choice( survey( chooser, character ) ) )
    return ''.join( pieces )


def _mix_form( chooser, text ):
    ''' Percent-encodes any characters of text (spaces as ``+``, ``%20``
        or plain), always ``%+&`` and the backslash. '''
    pieces = [ ]
    for character in text:
        if ' ' == character:
            pieces.append( chooser.choice( ( '+', '%20', ' ' ) ) )
        elif character in '%+&\\' or chooser.random( ) < 0.5:
            pieces.append( _escape_percent( chooser, character ) )
        else: pieces.append( character )
    return ''.join( pieces )


def _mix_html( chooser, text ):
    ''' Writes any characters of text as references, always ``&``. '''
    def survey( chooser, character ):
        point = ord( character )
        choices = [ f"&#{point};", f"&#x{point:x};", f"&#X{point:04X};" ]
        if character in _NAMED: choices.append( _NAMED[ character ] )
        return choices
    return _mix_escapes( chooser, text, '&', survey )


def _mix_json( chooser, text ):
    ''' Escapes any characters of text for JSON, always the backslash
        and the quote. '''
    pieces = [ ]
    for character in text:
        short = json.dumps( character )[ 1 : -1 ]
        if character in '\\"' or chooser.random( ) < 0.5:
            pieces.append( chooser.choice(
                ( short, _escape_units( chooser, character ) ) ) )
        elif '/' == character and chooser.random( ) < 0.5:
            pieces.append( '\\/' )
        else: pieces.append( short )
    return ''.join( pieces )


def _mix_script( chooser, text ):
    ''' Escapes any characters of text as JavaScript may, always the
        backslash. '''
    def survey( chooser, character ):
        point = ord( character )
        choices = [ f"\\u{{{point:x}}}", _escape_units( chooser, character ) ]
        if point < 256: choices.append( f"\\x{point:02x}" ) # noqa: PLR2004
        return choices
    return _mix_escapes( chooser, text, '\\', survey )


_ENCODERS = {
    'plain': lambda chooser, text: text,
    'form': _mix_form,
    'html': _mix_html,
    'json': _mix_json,
    'script': _mix_script,
    'quote': lambda chooser, text: urllib.parse.quote( text, safe = '' ),
    'quote_plus': lambda chooser, text: urllib.parse.quote_plus( text ),
    'dumps': lambda chooser, text: json.dumps( text )[ 1 : -1 ],
    'dumps_utf8': lambda chooser, text: json.dumps(
        text, ensure_ascii = False )[ 1 : -1 ],
    'escape': lambda chooser, text: html.escape( text ),
    'repr': lambda chooser, text: repr( text )[ 1 : -1 ],
}


@st.composite
def _secrets( draw ):
    ''' Draws a secret: letters and digits with what reads as escapes
        among them. '''
    pieces = draw( st.lists(
        st.sampled_from( _ALPHABET ), min_size = 6, max_size = 12 ) )
    for chunk in draw( st.lists(
        st.sampled_from( _CHUNKS ), min_size = 1, max_size = 3
    ) ):
        pieces.insert(
            draw( st.integers( 0, len( pieces ) ) ), chunk )
    return ''.join( pieces )


# Strategies of a secret in one form within another, by argument.
_nestings = {
    'secret': _secrets( ),
    'inner': st.sampled_from( tuple( _ENCODERS ) ),
    'outer': st.sampled_from( tuple( _ENCODERS ) ),
    'seed': st.integers( 0, 2 ** 32 ),
}


def _encode( secret, inner, outer, seed ):
    chooser = random.Random( seed )
    return _ENCODERS[ outer ]( chooser, _ENCODERS[ inner ]( chooser, secret ) )


@_timeout
@_settings
@given( **_nestings )
def test_100_nested_forms_redacted( secret, inner, outer, seed ):
    ''' A secret with escapes of its own, in any form within any other,
        is redacted exactly. '''
    encoded = _encode( secret, inner, outer, seed )
    redactor = redaction.Redactor( [ secret ] )
    assert redactor.redact( f"«{encoded}»" ) == '«***»', (
        inner, outer, encoded )


@_timeout
@_settings
@given( **_nestings, count = st.integers( 2, 6 ) )
def test_200_split_forms_redacted( secret, inner, outer, seed, count ):
    ''' A secret with escapes of its own, in any form within any other,
        split over two to six texts at any cuts which leave its spaces
        within a text, is redacted so that the texts joined hold none of
        it; the text around it stays. '''
    encoded = _encode( secret, inner, outer, seed )
    chooser = random.Random( seed )
    places = [
        place for place in range( 1, len( encoded ) )
        if encoded[ place - 1 : place + 1 ].strip( ) == (
            encoded[ place - 1 : place + 1 ] ) ]
    places = sorted(
        chooser.sample( places, min( count - 1, len( places ) ) ) )
    texts = [
        encoded[ start : end ] for start, end
        in zip( ( 0, *places ), ( *places, len( encoded ) ) ) ]
    texts[ 0 ] = '«' + texts[ 0 ]
    texts[ -1 ] += '»'
    redactor = redaction.Redactor( [ secret ] )
    redacted = redaction.redact_straddles(
        redactor, [ redactor.redact( text ) for text in texts ] )
    joined = ''.join( redacted )
    assert redactor.redact( joined ) == joined, (
        inner, outer, texts, redacted )
    assert joined.startswith( '«' ) and joined.endswith( '»' )
    assert '***' in joined
