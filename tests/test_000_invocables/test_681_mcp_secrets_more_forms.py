# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers in the forms of HTML, JavaScript and forms.

    A form (``application/x-www-form-urlencoded``) writes a space as
    ``+`` (Python's ``urlencode``) or ``%20`` (others), a ``+`` as
    ``%2B``; an HTML escaper writes ``&amp; &lt; &gt; &quot;`` and
    ``&#39;`` or ``&#x27;``, and any character may be a numeric character
    reference (decimal, or hex in either case, with leading zeros or
    not); JavaScript writes ``\\xNN`` and ``\\u{...}`` beside JSON's
    ``\\uXXXX``. A secret with any of its characters so written, the
    others plain, is redacted with its escapes and nothing around it, and
    so through two of these at once (HTML within a URL, a URL within
    HTML, JavaScript within HTML); and so when a result splits it over two
    texts, which a processor joins.

    Before, each of these forms leaked the secret (but a form whose every
    space is ``+`` and which escapes nothing else).
'''


import html
import json
import random
import re
import urllib.parse

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st


from invocables.mcp import redaction

from . import escapes_support, mcp_support


_SECRETS = (
    'correct horse+battery staple',
    'tok_live&A9x<7Kq>Zr2"q\'s',
    'Pä$ wörd/\U0001f511-9 x',
    'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
)
_VARIABLE = 'INVOCABLES_TEST_MORE_FORMS'
_NAMED = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }
# What reads as an escape in a secret meets the escapes of a mixture
# within another form as the decoder meets them in one text: two kinds
# decoded at once (a backslash percent-encoded before a quote referred to
# is the escape of a quote, once both are decoded).
_escape_alike = re.compile( r'\\|%[0-9A-Fa-f]{2}|&(?:#|[A-Za-z]+;)' )
# A frozen event loop cannot end a test: the thread method can.
_unfrozen = pytest.mark.timeout( 120, method = 'thread' )


def _escape_form( chooser, character ):
    ''' Returns character as a form may write it: a space as ``+``,
        ``%20`` or itself; another percent-encoded (either case of hex)
        or itself (but ``%``, ``&``, ``+`` and the backslash). '''
    if ' ' == character: return chooser.choice( ( '+', '%20', ' ' ) )
    if character not in '%&+\\' and chooser.random( ) < 0.5:
        return character
    return escapes_support.produce_percent_escape( chooser, character )


def _escape_html( chooser, character ):
    ''' Returns character as HTML may write it: a named reference, a
        decimal or hex one (either case, leading zeros or none). '''
    point = ord( character )
    choices = [
        f"&#{point};", f"&#{point:07d};", f"&#x{point:x};",
        f"&#X{point:06X};", f"&#x{point:X};" ]
    if character in _NAMED: choices.append( _NAMED[ character ] )
    if "'" == character: choices.append( '&apos;' )
    return chooser.choice( choices )


def _escape_json( text ):
    ''' Returns text escaped as JSON escapes it, without quotes. '''
    return json.dumps( text )[ 1 : -1 ]


def _escape_script( chooser, character ):
    ''' Returns character as JavaScript may write it: ``\\xNN`` (below
        256), ``\\u{...}`` of one to six digits, ``\\uXXXX`` (a pair
        beyond the first plane). '''
    point = ord( character )
    choices = [ f"\\u{{{point:x}}}", f"\\u{{{point:06X}}}" ]
    if point < 256: choices.append( f"\\x{point:02x}" ) # noqa: PLR2004
    units = character.encode( 'utf-16-be', errors = 'surrogatepass' )
    choices.append( ''.join(
        "\\u{unit:04X}".format(
            unit = int.from_bytes( units[ index : index + 2 ], 'big' ) )
        for index in range( 0, len( units ), 2 ) ) )
    return chooser.choice( choices )


def _is_unambiguous( secret ):
    ''' Returns whether secret holds nothing which reads as an escape. '''
    return _escape_alike.search( secret ) is None


def _mix( chooser, secret, *escapers ):
    ''' Returns secret with a random choice of its characters escaped by
        any of escapers, the others plain (but ``%``, ``&``, backslash and
        a space, which an escaper always writes). '''
    pieces = [ ]
    for character in secret:
        if character not in '%&\\ ' and chooser.random( ) < 0.3:
            pieces.append( character )
        else: pieces.append( chooser.choice( escapers )( chooser, character ) )
    return ''.join( pieces )


def _reference_all( text ):
    ''' Returns text with every character a decimal reference. '''
    return ''.join( f"&#{ord( character )};" for character in text )


def test_100_form_encodings_redacted( ):
    ''' A secret with spaces in a form, its spaces written as ``+``,
        ``%20`` or plain in any mixture, its ``+`` as ``%2B``, its other
        characters percent-encoded or not, is redacted with nothing
        around it. '''
    redactor = redaction.Redactor( _SECRETS )
    secret = _SECRETS[ 0 ]
    for text in (
        urllib.parse.urlencode( { 'pw': secret, 'n': 'a b' } ),
        'pw=correct+horse%2Bbattery%20staple&n=a+b',
        'pw=correct%20horse%2Bbattery+staple&n=a+b',
        'pw=correct horse%2bbattery+staple&n=a+b',
        'pw=correct+horse+battery%20staple&n=a+b',
        'pw=correct+horse+battery staple&n=a+b',
    ):
        assert redactor.redact( text ) == 'pw=***&n=a+b', text
    chooser = random.Random( 681 )
    for _ in range( 200 ):
        secret = chooser.choice( _SECRETS )
        encoded = _mix( chooser, secret, _escape_form )
        assert redactor.redact( f"?a=1&pw={encoded}&b=c+d" ) == (
            '?a=1&pw=***&b=c+d' ), encoded


def test_110_plus_only_for_spaces( ):
    ''' A ``+`` stands only for a space of the secret: a text with a space
        where the secret has ``+`` is left alone, as are texts whose
        pluses stand for spaces of no secret. '''
    redactor = redaction.Redactor( _SECRETS )
    kept = (
        'correct horse battery staple',
        'correct%20horse%20battery%20staple',
        'correct+horse&#32;battery+staple',
        'correct horse+battery-staple',
        'wJalrXUtnFEMI/K7MDENG bPxRfiCYEXAMPLEKEY',
    )
    for text in kept: assert redactor.redact( text ) == text
    assert redactor.redact( 'a+correct+horse+battery staple+b' ) == (
        'a+***+b' )


def test_200_html_references_redacted( ):
    ''' A secret written by an HTML escaper, every character a numeric
        reference (decimal or hex in either case, leading zeros or not),
        or any of its characters referred to, the others plain, is
        redacted with nothing around it. '''
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS:
        for encoded in (
            html.escape( secret ), html.escape( secret, quote = False ),
            _reference_all( secret ),
            ''.join( f"&#x{ord( item ):X};" for item in secret ),
            ''.join( f"&#X{ord( item ):08x};" for item in secret ),
            ''.join( f"&#{ord( item ):09d};" for item in secret ),
        ):
            text = f'<a title="{encoded}">&amp;x</a>'
            assert redactor.redact( text ) == (
                '<a title="***">&amp;x</a>' ), encoded
    chooser = random.Random( 682 )
    for _ in range( 200 ):
        secret = chooser.choice( _SECRETS )
        encoded = _mix( chooser, secret, _escape_html )
        assert redactor.redact( f"&lt;{encoded}&gt;" ) == '&lt;***&gt;', (
            encoded )


def test_300_script_escapes_redacted( ):
    ''' A secret with any of its characters written as JavaScript writes
        them (``\\xNN``, ``\\u{...}`` of one to six digits, ``\\uXXXX``
        in either case, mixed), the others plain, is redacted with
        nothing around it. '''
    redactor = redaction.Redactor( _SECRETS )
    secret = _SECRETS[ 1 ]
    for encoded in (
        'tok_live\\x26A9x\\x3c7Kq\\x3eZr2\\x22q\\x27s',
        'tok_live\\u{26}A9x\\u{00003C}7Kq\\u003eZr2\\"q\\\'s',
        'tok_live\\u{0000000026}A9x\\x3c7Kq\\x3eZr2\\x22q\\x27s',
        ''.join( f"\\u{{{ord( item ):x}}}" for item in secret ),
        ''.join( f"\\x{ord( item ):02X}" for item in secret ),
    ):
        assert redactor.redact( f"s='{encoded}';\\x41" ) == "s='***';\\x41", (
            encoded )
    assert redactor.redact(
        'P\\xe4$\\u{20}w\\u00f6rd/\\u{1F511}-9 x' ) == '***'
    chooser = random.Random( 683 )
    for _ in range( 200 ):
        secret = chooser.choice( _SECRETS )
        encoded = _mix( chooser, secret, _escape_script )
        assert redactor.redact( f"['\\n{encoded}\\t']" ) == (
            "['\\n***\\t']" ), encoded


@pytest.mark.parametrize( 'encode', (
    lambda secret: urllib.parse.quote( html.escape( secret ) ),
    lambda secret: urllib.parse.quote( _reference_all( secret ), safe = '' ),
    lambda secret: html.escape( urllib.parse.quote( secret, safe = '&/' ) ),
    lambda secret: _reference_all( urllib.parse.quote_plus( secret ) ),
    lambda secret: html.escape( html.escape( secret ) ),
    lambda secret: html.escape( _escape_json( secret ) ),
    lambda secret: _reference_all( _escape_json( secret ) ),
    lambda secret: _escape_json( html.escape( secret ) ),
    lambda secret: urllib.parse.quote( ''.join(
        f"\\x{ord( item ):02x}" if ord( item ) < 256 # noqa: PLR2004
        else f"\\u{{{ord( item ):x}}}" for item in secret ) ),
    lambda secret: html.escape( urllib.parse.quote_plus(
        secret, safe = '&' ) ),
) )
def test_400_forms_within_forms_redacted( encode ):
    ''' A secret in one of these forms within another (HTML within a URL,
        a URL or a form within HTML, HTML twice, JSON within HTML, escapes
        of JavaScript percent-encoded) is redacted; the text around it is
        kept. '''
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS:
        encoded = encode( secret )
        text = f"https://cb.example/?state={encoded}&amp;next=1"
        assert redactor.redact( text ) == (
            'https://cb.example/?state=***&amp;next=1' ), ( secret, encoded )


def test_410_mixed_forms_at_once_redacted( ):
    ''' A secret whose characters are written in every form at once
        (percent, form, HTML, JavaScript), the others plain, is redacted
        with nothing around it. '''
    redactor = redaction.Redactor( _SECRETS )
    chooser = random.Random( 684 )
    escapers = ( _escape_form, _escape_html, _escape_script )
    for _ in range( 300 ):
        secret = chooser.choice( _SECRETS )
        encoded = _mix( chooser, secret, *escapers )
        assert redactor.redact( f"&quot;{encoded}&quot;" ) == (
            '&quot;***&quot;' ), encoded


_WORDS = st.text(
    st.characters(
        codec = 'utf-8', categories = ( 'L', 'N', 'P', 'S' ),
        exclude_characters = '«»' ),
    min_size = 2, max_size = 10 )
_OUTERS = (
    lambda text: text,
    lambda text: urllib.parse.quote( text, safe = '' ),
    html.escape,
    _reference_all,
)


@settings( max_examples = 300, deadline = None )
@given(
    secret = st.lists( _WORDS, min_size = 2, max_size = 4 )
        .map( ' '.join ).filter( _is_unambiguous ),
    seed = st.integers( 0, 2 ** 32 ),
    outer = st.sampled_from( _OUTERS ),
)
def test_500_any_mixture_redacted( secret, seed, outer ):
    ''' Any secret (spaces in it), its characters in any mixture of the
        forms, within any one form more, is redacted exactly: the
        neighbours stay. '''
    chooser = random.Random( seed )
    redactor = redaction.Redactor( [ secret ] )
    escapers = ( _escape_form, _escape_html, _escape_script )
    encoded = outer( _mix( chooser, secret, *escapers ) )
    assert redactor.redact( f"«{encoded}»" ) == '«***»', encoded


def test_600_look_alikes_kept( ):
    ''' What is not a reference or an escape, or not the secret once
        decoded, stays as it is: references without their semicolon or
        beyond Unicode, escapes too short or too long, another character,
        the secret's prefix alone. '''
    redactor = redaction.Redactor( _SECRETS )
    secret = _SECRETS[ 1 ]
    kept = (
        'tok_live&amp A9x&lt 7Kq&gt;Zr2&quot;q&#39;s',
        'tok_live&#x26A9x&#60;7Kq&#62;Zr2&#34;q&#39;s',
        'tok_live&#38;A9x&#x110000;7Kq&gt;Zr2&#34;q&#39;s',
        'tok_live\\x2A9x\\x3c7Kq\\x3eZr2\\x22q\\x27s',
        'tok_live\\u{26A9x\\x3c7Kq\\x3eZr2\\x22q\\x27s',
        'tok_live\\u{}A9x\\x3c7Kq\\x3eZr2\\x22q\\x27',
        _reference_all( secret[ : -1 ] ) + '&#116;',
        _reference_all( secret.swapcase( ) ),
        'Fish &amp; chips &lt; 5 &#8364; &#x1F600; a+b %20 \\x41',
    )
    for text in kept: assert redactor.redact( text ) == text


def test_610_secret_holding_references_redacted( ):
    ''' A secret which holds what reads as a reference is found as it is
        and with its other characters escaped, and its decoding only
        where escapes give some of it. '''
    redactor = redaction.Redactor( [ 'p&lt;ss&#119;ord' ] )
    assert redactor.redact( 'x p&lt;ss&#119;ord' ) == 'x ***'
    assert redactor.redact( 'x p%26lt%3Bss%26%23119%3Bord' ) == 'x ***'
    assert redactor.redact( 'x p&amp;lt;ss&amp;#119;ord' ) == 'x ***'
    assert redactor.redact( 'x \\x70&lt;ss&#119;ord' ) == 'x ***'
    assert redactor.redact( 'x p<ssword plain' ) == 'x p<ssword plain'


def test_620_data_prepared( ):
    ''' Strings and keys of data from a server lose the secret in these
        forms as they are prepared to go out. '''
    redactor = redaction.Redactor( _SECRETS )
    spaced, quoted = _SECRETS[ 0 ], _SECRETS[ 1 ]
    data = {
        html.escape( quoted ): [ urllib.parse.quote_plus( spaced ) ],
        'n': { 'v': _reference_all( spaced ), 'k': 'a+b &amp; c' },
    }
    assert redactor.prepare_data( data ) == {
        '***': [ '***' ], 'n': { 'v': '***', 'k': 'a+b &amp; c' } }
    assert redactor.prepare( f"<p>{html.escape( quoted )}</p>" ) == (
        '<p>***</p>' )


@_unfrozen
def test_700_long_text_linear( ):
    ''' Megabytes of references and escapes are redacted at once: one
        run of references holding the secret thousands of times, near
        misses, references alternating with plain characters, pluses of a
        form everywhere. '''
    secret = _SECRETS[ 1 ]
    redactor = redaction.Redactor( _SECRETS )
    run = _reference_all( secret )
    assert redactor.redact( f"<{run * 20_000}>" ) == '<***>'
    miss = _reference_all( secret[ : -1 ] ) + '&#33;'
    assert redactor.redact( miss * 20_000 ) == miss * 20_000
    text = 'x&#65;' * 300_000 + html.escape( secret )
    assert redactor.redact( text ).endswith( 'x&#65;***' )
    text = 'a+' * 1_000_000 + 'correct+horse%2Bbattery+staple'
    assert redactor.redact( text ) == 'a+' * 1_000_000 + '***'
    text = '\\u{41}\\x42' * 200_000 + 'correct\\x20horse+battery staple'
    assert redactor.redact( text ).endswith( '\\x42***' )


@pytest.mark.asyncio
async def test_800_server_quotes_redacted( monkeypatch ):
    ''' A server which quotes its secret in these forms sends it to no
        model: the results' texts and every processor's native results
        hold only the redaction. '''
    secret = _SECRETS[ 1 ] + ' ' + _SECRETS[ 0 ]
    encodeds = [
        urllib.parse.urlencode( { 'k': secret } )[ 2 : ],
        html.escape( secret ), _reference_all( secret ),
        urllib.parse.quote( html.escape( secret ) ),
        ''.join( f"\\u{{{ord( item ):x}}}" for item in secret ),
    ]
    await mcp_support.assert_echoes_redacted(
        monkeypatch, _VARIABLE, secret, encodeds )


@pytest.mark.parametrize( 'gap', ( '', '\n', ' \n\t' ) )
def test_900_escaped_secret_split_redacted( gap ):
    ''' A secret in these forms split over two texts at any cut (inside
        an escape too, the second text led by whitespace or not) is
        redacted in both, and nothing around it; texts which only look
        alike stay. '''
    redactor = redaction.Redactor( _SECRETS )
    chooser = random.Random( 685 )
    escapers = ( _escape_form, _escape_html, _escape_script )
    for secret in _SECRETS:
        for encoded in (
            html.escape( secret ), _reference_all( secret ),
            urllib.parse.quote( html.escape( secret ) ),
            _mix( chooser, secret, *escapers ),
        ):
            for cut in range( 1, len( encoded ) ):
                # whitespace of the secret at the cut is whitespace aside
                if gap and ' ' in encoded[ cut - 1 : cut + 1 ]: continue
                texts = [
                    redactor.redact( 'head ' + encoded[ : cut ] ),
                    redactor.redact( gap + encoded[ cut : ] + ' tail' ) ]
                assert redaction.redact_straddles( redactor, texts ) == [
                    'head ***', f"{gap}*** tail" ], ( encoded, cut )
    for texts in (
        [ 'x &#116;&#111;&#107;', '&#95;&#108;&#105;&#118;&#101;' ],
        [ 'correct+horse ', 'battery+staple&amp;' ],
        [ 'tok_live&amp;A9x&lt;7K', 'q&gt;Zr2&quot;q&#39;S' ],
    ): assert redaction.redact_straddles( redactor, texts ) == texts
