# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers, escaped, split over three texts or more.

    A result may split a secret over any number of neighbouring texts,
    which a processor joins (with or without newlines); escaped (percent,
    JSON, HTML, JavaScript, escapes within escapes), each cut inside an
    escape or not, the texts between as short as one character or
    blank. Each text loses its share, and nothing else; texts which only
    look alike stay; thousands of small texts cost linear work.

    Before, an escaped secret was found across two texts only, and leaked
    over three or more.
'''


import html
import json
import random
import urllib.parse

import pytest

from invocables import exceptions
from invocables.mcp import redaction, results
from invocables.mcp import _sdk as sdk


_SECRETS = (
    'tok_live&A9x<7Kq>Zr2"q\'s',
    'Pä$ wörd/\U0001f511-9 x',
    'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
)
_ENCODERS = (
    lambda secret: urllib.parse.quote( secret, safe = '' ),
    lambda secret: json.dumps( secret )[ 1 : -1 ],
    lambda secret: ''.join( f"\\u{{{ord( item ):x}}}" for item in secret ),
    lambda secret: ''.join( f"&#{ord( item )};" for item in secret ),
    lambda secret: urllib.parse.quote( html.escape( secret ) ),
    lambda secret: html.escape( json.dumps( secret )[ 1 : -1 ] ),
)
# A frozen event loop cannot end a test: the thread method can.
_unfrozen = pytest.mark.timeout( 120, method = 'thread' )


def _cut( chooser, text, count ):
    ''' Returns text cut into count pieces at random places. '''
    places = sorted( chooser.sample( range( 1, len( text ) ), count - 1 ) )
    return [
        text[ start : end ]
        for start, end in zip( ( 0, *places ), ( *places, len( text ) ) ) ]


def _straddle( redactor, texts ):
    ''' Returns texts redacted each, then across their joints. '''
    return redaction.redact_straddles(
        redactor, [ redactor.redact( text ) for text in texts ] )


def test_100_escaped_secret_over_many_texts_redacted( ):
    ''' A secret in each form, cut into three to twelve pieces at random
        places (inside escapes too), is redacted in every text, and
        nothing around it. '''
    chooser = random.Random( 662 )
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS:
        for encode in _ENCODERS:
            encoded = encode( secret )
            for count in ( 3, 4, 7, 12 ):
                pieces = _cut( chooser, encoded, count )
                texts = [ 'head ' + pieces[ 0 ], *pieces[ 1 : -1 ],
                          pieces[ -1 ] + ' tail' ]
                assert _straddle( redactor, texts ) == [
                    'head ***', *( [ '***' ] * ( count - 2 ) ),
                    '*** tail' ], ( secret, pieces )


@pytest.mark.parametrize( 'gap', ( '\n', ' \n\t' ) )
def test_110_whitespace_at_joints_aside( gap ):
    ''' Whitespace at the joints and texts of whitespace alone between
        the pieces do not hide the secret; they stay. '''
    chooser = random.Random( 663 )
    redactor = redaction.Redactor( _SECRETS )
    secret = _SECRETS[ 0 ]
    for encode in _ENCODERS:
        pieces = _cut( chooser, encode( secret ), 5 )
        texts = [ 'head ' + pieces[ 0 ] ]
        for piece in pieces[ 1 : ]: texts.extend( ( gap, gap + piece ) )
        texts[ -1 ] += ' tail'
        redacted = _straddle( redactor, texts )
        assert redacted[ 0 ] == 'head ***', pieces
        assert redacted[ -1 ] == f"{gap}*** tail", pieces
        assert redacted[ 1 : -1 ] == [ gap, *( [ gap + '***', gap ] * 3 ) ]


def test_120_chains_end_at_long_texts( ):
    ''' A secret split over small texts between long ones is found, the
        long ones keeping all but their share; a long text between two
        pieces parts them (no secret is that long). '''
    redactor = redaction.Redactor( _SECRETS )
    long = 'q' * 200_000
    encoded = html.escape( _SECRETS[ 0 ] )
    texts = [ long + encoded[ : 5 ], encoded[ 5 : 9 ], encoded[ 9 : 20 ],
              encoded[ 20 : ] + long ]
    assert _straddle( redactor, texts ) == [
        long + '***', '***', '***', '***' + long ]
    texts = [ encoded[ : 9 ], long, encoded[ 9 : ] ]
    assert _straddle( redactor, texts ) == texts


def test_130_look_alikes_kept( ):
    ''' Texts which only look like a split secret stay: a piece missing,
        another character between pieces, a piece escaped otherwise. '''
    redactor = redaction.Redactor( _SECRETS )
    encoded = html.escape( _SECRETS[ 0 ] )
    for texts in (
        [ encoded[ : 6 ], encoded[ 6 : 12 ], encoded[ 13 : ] ],
        [ encoded[ : 6 ], encoded[ 6 : 12 ] + 'x', encoded[ 12 : ] ],
        [ encoded[ : 6 ], encoded[ 6 : 12 ].upper( ), encoded[ 12 : ] ],
        [ '%26', '%26', '&amp;', '\\u0026' ],
    ): assert _straddle( redactor, texts ) == texts


@_unfrozen
def test_140_many_small_texts_linear( ):
    ''' A secret escaped for JSON and spread an escape a text among ten
        thousand small texts with escapes is found at once, the others
        unchanged. '''
    redactor = redaction.Redactor( _SECRETS )
    secret = _SECRETS[ 2 ]
    noise = [ f"n%4{index % 10}\\u00{index % 90 + 10}"
              for index in range( 5000 ) ]
    units = [ f"\\u{ord( item ):04X}" for item in secret ]
    texts = [ *noise, *units, *noise ]
    redacted = _straddle( redactor, texts )
    assert redacted == [ *noise, *( [ '***' ] * len( units ) ), *noise ]


def test_200_result_texts_redacted( ):
    ''' The texts of a server's result which share an escaped secret
        lose it as they become contents, and as an error's text. '''
    redactor = redaction.Redactor( _SECRETS )
    pieces = _cut(
        random.Random( 664 ), html.escape( _SECRETS[ 0 ] ), 4 )
    blocks = [ { 'type': 'text', 'text': piece } for piece in pieces ]
    result = sdk.types.CallToolResult.model_validate( {
        'content': blocks } )
    contents = results.produce_contents( result, redactor )
    assert [ content.text for content in contents ] == [ '***' ] * 4
    result = sdk.types.CallToolResult.model_validate( {
        'content': blocks, 'isError': True } )
    with pytest.raises( exceptions.InvocationRefusal ) as raised:
        results.produce_contents( result, redactor )
    assert str( raised.value ) == '***\n***\n***\n***'
