# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers in hex with separators between their bytes, in
    Windows' mojibake, escaped three times, and split at a space with more
    whitespace between the texts.

    A secret's bytes in hex as ``bytes.hex( ':' )``, ``bytes.hex( ' ', 2 )``,
    ``binascii.hexlify`` with a separator, a dump or a C array write them,
    within longer hex or not; its UTF-8 bytes read as code page 1252 reads
    them; JSON inside a JSON string inside a JSON string, and the
    percent-encoding of JSON escaped twice: each is redacted, and hex of
    other bytes is kept. A secret with spaces, escaped (its spaces plain),
    split over texts at one of its spaces with more whitespace at the
    joint (a gap), is redacted in each text.
'''


import binascii
import html
import json
import urllib.parse

import pytest

from invocables.mcp import redaction


_SECRET = 'sk-Hex-9f3kQ2zW7' # ASCII
_ESCAPABLE = 'p@ss"w\\ord/\u00e9-8841' # which JSON escapes
_EURO = 'p\u00e4ssw\u00f6rd-\u20ac-\u201csafe\u201d' # bytes 0x80-0x9F


def _separate( data ):
    ''' Returns the separated hex forms of data. '''
    return (
        data.hex( ':' ), data.hex( ':' ).upper( ), data.hex( ' ' ),
        data.hex( ' ', 2 ), data.hex( '-', -2 ), data.hex( '.', 4 ),
        binascii.hexlify( data, ':' ).decode( ),
        binascii.hexlify( data, ' ', -2 ).decode( ),
        '  '.join( ( data[ : 8 ].hex( ' ' ), data[ 8 : ].hex( ' ' ) ) ),
        ', '.join( f"0x{byte:02x}" for byte in data ),
        ','.join( f"0X{byte:02X}" for byte in data ) )


@pytest.mark.parametrize(
    'form', _separate( _SECRET.encode( ) ) + _separate(
        _ESCAPABLE.encode( ) ) )
def test_100_separated_hex( form ):
    ''' A secret's bytes in hex with separators between them, alone or
        within longer hex of other bytes, are redacted whole. '''
    redactor = redaction.Redactor( ( _SECRET, _ESCAPABLE ) )
    for text in ( f"dump {form} end", f"ab:cd {form} 01:02" ):
        redacted = redactor.redact( text )
        assert form not in redacted
        assert redacted.count( '***' ) == 1
        assert redacted.startswith( text.split( form )[ 0 ] )
        assert redacted.endswith( text.split( form )[ 1 ] )


def test_105_percent_encoded_whole( ):
    ''' A secret percent-encoded whole, which its hex with ``%`` between
        bytes also matches, is replaced with its leading ``%`` (found by the
        hypothesis test of mixtures: ``'::␣::'`` left ``'%***'``); a ``%``
        before hex without separators stays.
    '''
    redactor = redaction.Redactor( [ ':: ::' ] )
    assert redactor.redact( '«%3A%3A%20%3A%3A»' ) == '«***»'
    assert redactor.redact( '«%3a%3a%20%3a%3a»' ) == '«***»'
    assert redactor.redact( '50%3a3a203a3a' ) == '50%***'


def test_110_separated_hex_kept( ):
    ''' Hex of other bytes, and of the secret's bytes but its last, stays
        as it is. '''
    redactor = redaction.Redactor( ( _SECRET, ) )
    texts = (
        b'sk-Hex-9f3kQ2zW8'.hex( ':' ),
        _SECRET.encode( )[ : -1 ].hex( ' ' ) + ' 00',
        'de:ad:be:ef:00:11:22:33 and 0x10, 0x20, 0x30',
        'mac 00:1a:2b:3c:4d:5e' )
    for text in texts: assert redactor.redact( text ) == text


@pytest.mark.parametrize( 'secret', ( _EURO, _ESCAPABLE ) )
def test_120_windows_mojibake( secret ):
    ''' The UTF-8 bytes of a secret read as Windows' code page 1252 reads
        them (its five unset bytes as Latin-1), as Latin-1 does too, are
        redacted. '''
    redactor = redaction.Redactor( ( secret, ) )
    data = secret.encode( )
    forms = {
        ''.join(
            bytes( ( byte, ) ).decode( 'cp1252', errors = 'ignore' )
            or chr( byte ) for byte in data ),
        data.decode( 'latin-1' ) }
    for form in forms:
        redacted = redactor.redact( f"shown: {form} (garbled)" )
        assert redacted == 'shown: *** (garbled)'


def _dump( value, times, ascii_only = True ):
    for _ in range( times ):
        value = json.dumps( value, ensure_ascii = ascii_only )
    return value


@pytest.mark.parametrize( 'secret', ( _ESCAPABLE, _EURO, 'tok\\en"Val9' ) )
@pytest.mark.parametrize( 'ascii_only', ( True, False ) )
def test_130_three_layers( secret, ascii_only ):
    ''' JSON inside a JSON string inside a JSON string, and the
        percent-encoding of JSON inside a JSON string (the secret's
        characters escaped at every level), lose the secret; the rest of
        the text stays. '''
    redactor = redaction.Redactor( ( secret, ) )
    document = { 'k': secret, 'other': 'kept' }
    texts = (
        _dump( document, 3, ascii_only ),
        urllib.parse.quote( _dump( document, 2, ascii_only ) ),
        urllib.parse.quote( urllib.parse.quote(
            _dump( document, 1, ascii_only ) ) ),
        _dump(
            { 'u': urllib.parse.quote( _dump( document, 1, ascii_only ) ) },
            1, ascii_only ) )
    for text in texts:
        redacted = redactor.redact( text )
        assert '***' in redacted, text
        assert 'kept' in redacted
        assert redactor.redact( redacted ) == redacted
        leftover = redacted.replace( '***', '' )
        for piece in ( 'ss', 'ord', 'Val9', 'rd-' ):
            if piece in secret: assert piece not in leftover, text


def test_140_depth_bounded( ):
    ''' Decoding is bounded: four layers of JSON around a secret with
        characters which JSON escapes are not decoded (the documented
        bound), while three are. '''
    redactor = redaction.Redactor( ( _ESCAPABLE, ) )
    assert '***' in redactor.redact( _dump( { 'k': _ESCAPABLE }, 3 ) )
    assert '***' not in redactor.redact( _dump( { 'k': _ESCAPABLE }, 4 ) )


_SPACED = 'pa"ss wo\\rd 42 \u00e9x'
_GAPS = ( ' ', '  ', '\n', ' \n ', '\t' )


@pytest.mark.parametrize(
    'encode',
    (
        html.escape,
        lambda text: urllib.parse.quote( text, safe = ' ' ),
        lambda text: json.dumps( text )[ 1 : -1 ],
    ) )
@pytest.mark.parametrize( 'gap', _GAPS )
def test_150_space_split_gap( encode, gap ):
    ''' An escaped secret cut at one of its spaces (before it or after
        it), with more whitespace at the joint (at the end of the first
        text, as a text of its own, at the start of the last), loses its
        pieces in each text; the whitespace stays. '''
    redactor = redaction.Redactor( ( _SPACED, ) )
    form = encode( _SPACED )
    cuts = [ index for index, mark in enumerate( form ) if mark == ' ' ]
    for cut in cuts + [ index + 1 for index in cuts ]:
        head, tail = form[ : cut ], form[ cut : ]
        for texts in (
            [ f"x {head}", gap, f"{tail} y" ],
            [ f"x {head}{gap}", f"{tail} y" ],
            [ f"x {head}", f"{gap}{tail} y" ],
        ):
            redacted = redaction.redact_straddles(
                redactor, [ redactor.redact( text ) for text in texts ] )
            joined = ''.join( redacted )
            assert head.strip( ) not in joined, texts
            assert tail.strip( ) not in joined, texts
            assert redacted[ 0 ].startswith( 'x ***' ), texts
            assert redacted[ -1 ].endswith( '*** y' ), texts
            assert len( redacted ) == len( texts )
