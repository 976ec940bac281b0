# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers as Python prints and serializes them.

    A tool which prints a secret's bytes (``repr( secret.encode( ) )``,
    ``str`` of bytes, a list or dictionary holding them) writes each byte
    of UTF-8 beyond ASCII as ``\\xNN``; ``repr`` of a string escapes the
    characters which are not printable (``\\x1b``, ``\\t``, ``\\u200b``,
    ``\\U000e0001``), ``ascii`` every character beyond ASCII (``\\xe9``,
    ``\\u20ac``, ``\\U0001f600``); ``bytes.hex`` writes the bytes in hex,
    and a reader which takes UTF-8 for Latin-1 shows each byte as a
    character. Each of these, as it is and within another form (JSON,
    a URL's percent-encoding), is redacted with its escapes and nothing
    around it.

    Before, the bytes of a secret beyond ASCII (in ``\\xNN``, hex or read
    as Latin-1), its ``\\U`` escapes and the hex of any secret leaked.
'''


import json
import urllib.parse

import pytest

from invocables.mcp import redaction

from . import mcp_support


_SECRETS = (
    'café-token-7731',
    'euro€-key-4242',
    'smile\U0001f600-ok-99',
    'pass\x1bword-esc',
    'tab\there-x-12',
    'zwsp\u200bsecret',
    'pua\U000e0001tag-1',
)
_VARIABLE = 'INVOCABLES_TEST_REPRS'


def _printers( secret ):
    ''' Returns what Python prints of secret, its bytes and their forms,
        each as a pair of the text and what it becomes redacted. '''
    data = secret.encode( )
    quoted = repr( data )
    return (
        ( quoted, f"{quoted[ : 2 ]}***{quoted[ -1 ]}" ),
        ( str( data ), f"{quoted[ : 2 ]}***{quoted[ -1 ]}" ),
        ( repr( secret ), "'***'" ),
        ( ascii( secret ), "'***'" ),
        ( secret.encode( 'unicode_escape' ).decode( 'ascii' ), '***' ),
        ( data.hex( ), '***' ),
        ( data.hex( ).upper( ), '***' ),
    )


def test_100_prints_redacted( ):
    ''' Each secret printed by Python (its bytes' repr and str, its repr,
        ascii and unicode_escape, its bytes in hex of either case) is
        redacted exactly: the quotes and the text around it stay. '''
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS:
        for text, redacted in _printers( secret ):
            assert redactor.redact( f"got {text}!" ) == (
                f"got {redacted}!" ), ( secret, text )


def test_110_containers_redacted( ):
    ''' A list or a dictionary of bytes which holds a secret, printed, is
        redacted; so is the text of bytes read as Latin-1. '''
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS[ : 3 ]:
        data = secret.encode( )
        assert '***' in redactor.redact( repr( [ data, b'x' ] ) )
        printed = repr( { 'token': data } )
        assert redactor.redact( printed ) == (
            printed.replace( repr( data )[ 2 : -1 ], '***' ) )
        assert redactor.redact( f"[{data.decode( 'latin-1' )}]" ) == (
            '[***]' )


def test_120_prints_within_forms_redacted( ):
    ''' What Python prints of a secret, within JSON (escaped again) or a
        URL's percent-encoding, is redacted. '''
    redactor = redaction.Redactor( _SECRETS )
    for secret in _SECRETS:
        for text, _ in _printers( secret ):
            for encoded in (
                json.dumps( text )[ 1 : -1 ],
                urllib.parse.quote( text, safe = '' ),
            ):
                redacted = redactor.redact( f"<{encoded}>" )
                assert '***' in redacted, ( secret, encoded )
                assert encoded not in redacted


def test_130_escapes_of_python_decoded( ):
    ''' ``\\U`` escapes of eight hex digits give their character, beside
        the other escapes, in either case of hex; beyond Unicode, none of
        a secret's. '''
    redactor = redaction.Redactor( [ 'smile\U0001f600-ok-99' ] )
    for escape in ( '\\U0001f600', '\\U0001F600', '\\ud83d\\ude00' ):
        assert redactor.redact( f"x smile{escape}-ok-99 y" ) == 'x *** y'
    kept = 'x smile\\U0011f600-ok-99 \\U0001f60 y'
    assert redactor.redact( kept ) == kept


def test_140_look_alikes_kept( ):
    ''' Prints of other values stay: another secret's bytes, the hex of a
        prefix of a secret, its bytes with one byte other, and text which
        only reads as bytes. '''
    redactor = redaction.Redactor( _SECRETS )
    data = _SECRETS[ 0 ].encode( )
    kept = (
        repr( b'cafe-token-7731' ),
        data[ : -1 ].hex( ),
        repr( data.replace( b'\xa9', b'\xa8' ) ),
        data.hex( ).replace( 'c3', 'c4' ),
        "b'caf\\xc3\\xa9-tokens'"[ : -4 ] + "n'",
        'Ã© is what Latin-1 makes of é',
    )
    for text in kept: assert redactor.redact( text ) == text


@pytest.mark.asyncio
async def test_200_server_prints_redacted( monkeypatch ):
    ''' A server which prints its secret as Python does sends it to no
        model: the results' texts and every processor's native results
        hold only the redaction. '''
    secret = 'café€-\U0001f600-token'
    data = secret.encode( )
    encodeds = [
        repr( data )[ 2 : -1 ], ascii( secret )[ 1 : -1 ], data.hex( ),
        data.decode( 'latin-1' ), json.dumps( repr( data ) )[ 3 : -2 ],
    ]
    await mcp_support.assert_echoes_redacted(
        monkeypatch, _VARIABLE, secret, encodeds )
