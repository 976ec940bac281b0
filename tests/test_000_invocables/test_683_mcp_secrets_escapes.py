# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers escaped as the encoders of other languages
    escape them.

    Python's encoders escape a fixed set of characters in lowercase hex
    (JSON) or uppercase hex (percent); the mainstream encoders of other
    languages escape other sets, in either case: JavaScript's
    ``encodeURIComponent`` leaves ``!*'()`` plain, Go's ``url.PathEscape``
    leaves ``@+&=`` plain, .NET's ``HttpUtility.UrlEncode`` writes
    lowercase hex, Go's ``json.Marshal`` escapes ``<>&``, .NET's
    ``System.Text.Json`` escapes in uppercase hex, PHP's ``json_encode``
    escapes ``/``. A secret with any of its characters escaped (percent or
    JSON escapes, either case of hex), the others left plain, is redacted,
    escapes and all, in linear time; look-alike text is left alone.

    Before, the redactor learned only the forms which Python's ``quote``,
    ``quote_plus`` and ``json.dumps`` write, and each of those encoders
    leaked the secret.
'''


import json
import random
import re
import urllib.parse

import pytest


from invocables.mcp import redaction

from . import mcp_support


_SECRETS = (
    'Sup3r!Secret*Pass@2024',
    'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    'tok_live&A9x<7Kq>Zr2',
    # spaces, non-ASCII, beyond the first plane, quote, backslash, and
    # what reads as escapes of either kind
    'Pä$ wörd/"q"\\n%41\U0001f511-9',
)
_VARIABLE = 'INVOCABLES_TEST_ESCAPES'
# A frozen event loop cannot end a test: the thread method can.
_unfrozen = pytest.mark.timeout( 120, method = 'thread' )


def _escape_units( character, upper = True ):
    ''' Returns character as JSON's ``\\u`` escapes (a pair beyond the
        first plane). '''
    units = character.encode( 'utf-16-be', errors = 'surrogatepass' )
    pattern = '\\u{:04X}' if upper else '\\u{:04x}'
    return ''.join(
        pattern.format( int.from_bytes( units[ index : index + 2 ], 'big' ) )
        for index in range( 0, len( units ), 2 ) )


def _encode_go_json( secret ):
    ''' Go's json.Marshal: non-ASCII plain, <>& escaped (lowercase). '''
    text = json.dumps( secret, ensure_ascii = False )[ 1 : -1 ]
    return ( text.replace( '<', '\\u003c' ).replace( '>', '\\u003e' )
        .replace( '&', '\\u0026' ) )


def _encode_dotnet_json( secret ):
    ''' .NET's System.Text.Json: non-ASCII and +&<>'`" as uppercase \\u.
    '''
    return ''.join(
        _escape_units( character )
        if character in '+&<>\'`"' or ord( character ) > 126 # noqa: PLR2004
        else json.dumps( character )[ 1 : -1 ]
        for character in secret )


def _encode_dotnet_url( secret ):
    ''' .NET's HttpUtility.UrlEncode: lowercase hex, + for spaces. '''
    text = urllib.parse.quote_plus( secret, safe = '!()*-._' )
    return re.sub( '%[0-9A-F]{2}', lambda match: match[ 0 ].lower( ), text )


_ENCODERS = {
    'js_encodeURIComponent':
        lambda secret: urllib.parse.quote( secret, safe = "!'()*~-_." ),
    'go_url_PathEscape':
        lambda secret: urllib.parse.quote( secret, safe = '$&+,:;=@-_.~' ),
    'dotnet_HttpUtility_UrlEncode': _encode_dotnet_url,
    'go_json_Marshal': _encode_go_json,
    'dotnet_System_Text_Json': _encode_dotnet_json,
    'php_json_encode':
        lambda secret: json.dumps( secret )[ 1 : -1 ].replace( '/', '\\/' ),
    'all_u_escapes_upper_hex':
        lambda secret: ''.join( map( _escape_units, secret ) ),
}


def _mix_json( chooser, secret ):
    ''' Returns secret with a random choice of its characters escaped as
        JSON may escape them, the others plain (but the backslash). '''
    pieces = [ ]
    for character in secret:
        shorts = json.dumps( character )[ 1 : -1 ]
        choices = [ _escape_units( character, chooser.random( ) < 0.5 ) ]
        if character != '\\': choices.append( character )
        if shorts.startswith( '\\' ) and not shorts.startswith( '\\u' ):
            choices.append( shorts )
        if character == '/': choices.append( '\\/' )
        pieces.append( chooser.choice( choices ) )
    return ''.join( pieces )


def _mix_percent( chooser, secret ):
    ''' Returns secret with a random choice of its characters
        percent-encoded (each hex digit in either case), the others plain
        (but the percent sign). '''
    pieces = [ ]
    for character in secret:
        if character != '%' and chooser.random( ) < 0.5:
            pieces.append( character )
            continue
        hexes = character.encode( ).hex( ).upper( )
        hexes = ''.join(
            digit.lower( ) if chooser.random( ) < 0.5 else digit
            for digit in hexes )
        pieces.extend(
            f"%{hexes[ index : index + 2 ]}"
            for index in range( 0, len( hexes ), 2 ) )
    return ''.join( pieces )


def test_100_encoders_of_other_languages_redacted( ):
    ''' Each secret as each mainstream encoder of another language writes
        it is redacted with all its escapes, and nothing around it. '''
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS:
        for name, encode in _ENCODERS.items( ):
            encoded = encode( secret )
            text = f"https://api.example.org/v1?pw={encoded}&n=1"
            assert redactor.redact( text ) == (
                'https://api.example.org/v1?pw=***&n=1' ), ( name, secret )
            document = f'{{"pw":"{encoded}","n":"\\n"}}'
            assert redactor.redact( document ) == (
                '{"pw":"***","n":"\\n"}' ), ( name, secret )


def test_110_attack_forms_redacted( ):
    ''' The forms in which the leaks were seen are redacted. '''
    redactor = redaction.Redactor( _SECRETS[ : 3 ] )
    for text in (
        '?pw=Sup3r!Secret*Pass%402024',
        '/u/wJalrXUtnFEMI%2FK7MDENG+bPxRfiCYEXAMPLEKEY',
        '?pw=wJalrXUtnFEMI%2fK7MDENG%2bbPxRfiCYEXAMPLEKEY',
        '?pw=tok_live%26A9x%3c7Kq%3eZr2',
        'tok_live\\u0026A9x\\u003c7Kq\\u003eZr2',
        'wJalrXUtnFEMI/K7MDENG\\u002BbPxRfiCYEXAMPLEKEY',
        'wJalrXUtnFEMI\\/K7MDENG+bPxRfiCYEXAMPLEKEY',
        ''.join( f"\\u{ord( character ):04X}" for character in _SECRETS[ 0 ] ),
    ):
        redacted = redactor.redact( f"a {text} b" )
        assert '***' in redacted, text
        assert redacted.count( '\\u' ) == 0, text
        for secret in _SECRETS[ : 3 ]:
            assert secret[ -6 : ] not in redacted


def test_200_any_mix_of_escapes_redacted( ):
    ''' A secret with any choice of its characters escaped (percent
        escapes, or JSON's ``\\u`` escapes in either case, short escapes
        and ``\\/``), the others plain, is redacted exactly. '''
    chooser = random.Random( 685 )
    redactor = redaction.Redactor( _SECRETS )
    for _ in range( 400 ):
        secret = chooser.choice( _SECRETS )
        percent = _mix_percent( chooser, secret )
        assert redactor.redact( f"x={percent}&y" ) == 'x=***&y', percent
        escaped = _mix_json( chooser, secret )
        assert redactor.redact( f'{{"x":"{escaped}"}}' ) == (
            '{"x":"***"}' ), escaped


def test_210_both_kinds_at_once_redacted( ):
    ''' A URL with a secret percent-encoded inside JSON which escapes its
        slashes (as PHP writes it) is redacted. '''
    redactor = redaction.Redactor( _SECRETS )
    secret = _SECRETS[ 1 ]
    url = 'https://api.example.org/u/' + urllib.parse.quote( secret )
    document = json.dumps( { 'url': url } ).replace( '/', '\\/' )
    assert redactor.redact( document ) == (
        '{"url": "https:\\/\\/api.example.org\\/u\\/***"}' )


@pytest.mark.parametrize( 'encode', (
    lambda secret: urllib.parse.quote( _encode_go_json( secret ) ),
    lambda secret: urllib.parse.quote( json.dumps( secret ) ),
    lambda secret: urllib.parse.quote( json.dumps( secret ), safe = '' ),
    lambda secret: json.dumps( json.dumps( secret ) ),
    lambda secret: urllib.parse.quote(
        urllib.parse.quote( secret, safe = '' ), safe = '' ),
    lambda secret: _encode_dotnet_json( urllib.parse.quote( secret ) ),
) )
def test_215_escapes_within_escapes_redacted( encode ):
    ''' A secret escaped for JSON and then percent-encoded (JSON in a
        URL's query), or escaped twice alike, is redacted; the text around
        it is kept. '''
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS:
        text = f"https://cb.example/?state={encode( secret )}&next=1"
        redacted = redactor.redact( text )
        assert redacted.startswith( 'https://cb.example/?state=' ), redacted
        assert redacted.endswith( '&next=1' ), redacted
        assert '***' in redacted, ( secret, text, redacted )
        assert encode( secret ) not in redacted


def test_220_link_keeps_query( ):
    ''' A URL to visit loses its secret in lowercase hex, keeps its
        query. '''
    redactor = redaction.Redactor( _SECRETS )
    url = 'https://example.org/go?state=ab&pw=' + _encode_dotnet_url(
        _SECRETS[ 1 ] )
    assert redactor.redact_link( url ) == (
        'https://example.org/go?state=ab&pw=***' )


def test_300_look_alikes_kept( ):
    ''' Escaped text which is not the secret stays as it is: another
        character, a prefix alone, another mixture of cases, invalid
        escapes; the escapes beside a secret stay too. '''
    secret = _SECRETS[ 0 ]
    redactor = redaction.Redactor( _SECRETS )
    kept = (
        'Sup3r%21Secret%2APass%402025',
        'Sup3r\\u0021Secret\\u002APass\\u0040202',
        urllib.parse.quote( secret.swapcase( ), safe = '' ),
        ''.join( map( _escape_units, secret.swapcase( ) ) ),
        'Sup3r%G1Secret%2APass%402024 \\u00zz \\x41 \\u12',
        json.dumps( { 'path': 'C:\\new\\tab', 'pct': '100%' } ),
        urllib.parse.quote( 'ordinary words & more / less', safe = '' ),
    )
    for text in kept: assert redactor.redact( text ) == text
    assert redactor.redact( '%20' + secret + '%20' ) == '%20***%20'
    assert redactor.redact(
        '\\n' + _encode_go_json( _SECRETS[ 2 ] ) + '\\u0041' ) == (
        '\\n***\\u0041' )


def test_310_escape_alike_secret_not_everywhere( ):
    ''' The decoding of a secret which holds what reads as an escape is
        redacted only where escapes give some of it, not as plain text. '''
    redactor = redaction.Redactor( [ 'p%4Fss<word>' ] )
    assert redactor.redact( 'pOss<word> plain' ) == 'pOss<word> plain'
    assert redactor.redact( 'x p%4Fss\\u003cword\\u003e' ) == 'x ***'
    assert redactor.redact( 'x p%254Fss%3Cword%3E' ) == 'x ***'


@_unfrozen
def test_400_long_escaped_text_linear( ):
    ''' Megabytes of escapes are redacted at once: one run of escapes
        holding the secret thousands of times, near misses in one run,
        escapes alternating with plain characters. '''
    secret = _SECRETS[ 1 ]
    redactor = redaction.Redactor( _SECRETS )
    run = ''.join( map( _escape_units, secret ) )
    text = run * 20_000 # 4.8 MB, one run of escapes
    assert redactor.redact( f"<{text}>" ) == '<***>'
    miss = ''.join( map( _escape_units, secret[ : -1 ] ) ) + '\\u0021'
    text = miss * 20_000
    assert redactor.redact( text ) == text
    text = 'x%41' * 500_000 + urllib.parse.quote( secret.lower( ) )
    assert redactor.redact( text ).endswith( 'x%41***' )
    text = ( 'k=' + _encode_dotnet_url( secret ) + '&' ) * 20_000
    assert redactor.redact( text ) == 'k=***&' * 20_000


@pytest.mark.asyncio
async def test_500_server_quotes_redacted( monkeypatch ):
    ''' A server which quotes its secret as each encoder writes it sends
        it to no model: the results' texts and every processor's native
        results hold only the redaction. '''
    secret = _SECRETS[ 3 ]
    encodeds = [ encode( secret ) for encode in _ENCODERS.values( ) ]
    await mcp_support.assert_echoes_redacted(
        monkeypatch, _VARIABLE, secret, encodeds )
