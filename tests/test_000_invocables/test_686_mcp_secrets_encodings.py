# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers inside longer base64 text, and spread over
    more than two texts.

    A secret in the base64 of a longer document (``prefix:`` + secret, a
    JSON document holding it) is known by the characters which its bytes
    alone decide, at each of the three byte alignments; a secret spread
    over three texts or more (each shorter than it) is redacted in each.

    The real server is written by the tests (``spread`` splits its secret
    over text blocks, ``wrap`` encodes it in a longer document) and runs as
    a child process, as the servers of ``servers/`` do.
'''


import base64
import json
import random
import re

import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.mcp import redaction

from . import mcp_support


_SECRET = 'sk-spread-8d1f-Q7zXw3k' # 22 bytes: a partial character at ends
_VARIABLE = 'INVOCABLES_TEST_ENCODINGS'
_ENCODERS = ( base64.b64encode, base64.urlsafe_b64encode )
_SERVER = """
import base64
import json
import os

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent


_SECRET = os.environ[ 'SPREAD_SECRET' ]
server = MCPServer( 'spreading' )


@server.tool( structured_output = False )
def spread(
    count: int, gap: str = '', error: bool = False
) -> CallToolResult:
    ''' Returns the secret spread over count text blocks. '''
    size = -( -len( _SECRET ) // count )
    pieces = [
        _SECRET[ index : index + size ]
        for index in range( 0, len( _SECRET ), size ) ]
    pieces[ 0 ] = 'key ' + pieces[ 0 ]
    pieces[ -1 ] += ' ends'
    return CallToolResult(
        content = [
            TextContent( type = 'text', text = ( gap if index else '' ) + piece )
            for index, piece in enumerate( pieces ) ],
        is_error = error )


@server.tool( structured_output = False )
def wrap( prefix: str, suffix: str, urlsafe: bool = False ) -> str:
    ''' Returns base64 of prefix, the secret and suffix; of a JSON
        document holding the secret if prefix is 'json'. '''
    if prefix == 'json':
        data = json.dumps( { 'token': _SECRET, 'scope': suffix } ).encode( )
    else: data = ( prefix + _SECRET + suffix ).encode( )
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode( data ).decode( )


server.run( )
"""
_whitespace = re.compile( r'\s+' )


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _invoke( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return ensemble.access_invoker( name )( context, arguments or { } )


def _produce_ensemble( monkeypatch, tmp_path ):
    monkeypatch.setenv( _VARIABLE, _SECRET )
    path = tmp_path / 'spreading_server.py'
    path.write_text( _SERVER, encoding = 'utf-8' )
    return invocables.mcp.produce_ensemble(
        'spreading', command = [ mcp_support.SERVERS_PYTHON, str( path ) ],
        environment = { 'SPREAD_SECRET': f"env:{_VARIABLE}" } )


def _locate_dependents( encode, prefix, data, suffix ):
    ''' Returns first and last index of the characters of the base64 of
        prefix, data and suffix which depend on the bits of data. '''
    flipped = bytes( byte ^ 0xFF for byte in data )
    one = encode( prefix + data + suffix ).decode( )
    two = encode( prefix + flipped + suffix ).decode( )
    indices = [
        index for index, ( left, right ) in enumerate( zip( one, two ) )
        if left != right ]
    return one, indices[ 0 ], indices[ -1 ]


def _survey_strings( value ):
    if isinstance( value, str ): yield value
    elif isinstance( value, dict ):
        for item in value.values( ): yield from _survey_strings( item )
    elif isinstance( value, list ):
        for item in value: yield from _survey_strings( item )


def _verify_processors( results, hidden ):
    ''' Asserts that no processor's native results show hidden: not in any
        string, nor once whitespace is taken out of all strings joined. '''
    for name in invocables.processors.PROVIDERS:
        processor = invocables.produce_processor( name )
        text = json.dumps(
            processor.nativize_results( results ), default = str )
        strings = list( _survey_strings( json.loads( text ) ) )
        joined = _whitespace.sub( '', ''.join( strings ) )
        assert hidden not in joined, name
        for string in strings:
            assert hidden not in _whitespace.sub( '', string ), name


def _spread( texts ):
    ''' Returns redacted texts, as a processor's results hold them. '''
    redactor = redaction.Redactor( [ _SECRET ] )
    texts = [ redactor.redact( text ) for text in texts ]
    return redaction.redact_straddles( redactor, texts )


def test_110_secret_in_longer_base64_redacted( ):
    ''' A secret inside the base64 of a longer text is redacted after a
        prefix of any length (each of the three byte alignments), in the
        standard and URL-safe alphabets, padded or not: exactly the
        characters which depend on its bits, the two characters which it
        shares with its neighbours included.

        Before, only the base64 of the secret alone was known, which
        matches inside a longer text at no alignment (the secret's length
        leaves a partial character at its end).
    '''
    redactor = redaction.Redactor( [ _SECRET ] )
    data = _SECRET.encode( )
    for prefix in ( b'', b'p', b'pr', b'prefix:', b'prefix:x', b'{"a":1}' ):
        for encode in _ENCODERS:
            text, first, last = _locate_dependents(
                encode, prefix, data, b':suffix' )
            expected = text[ : first ] + '***' + text[ last + 1 : ]
            assert redactor.redact( text ) == expected
            unpadded = text.rstrip( '=' )
            assert redactor.redact( f"blob {unpadded}." ) == (
                f"blob {expected.rstrip( '=' )}." )


def test_120_secret_of_json_document_in_base64_redacted( ):
    ''' A secret inside the base64 of a JSON document is redacted, also
        when JSON escapes some of its characters (quotes, backslashes,
        non-ASCII characters, as ASCII escapes or not). '''
    secret = 'pa"ss\\wörd-ûnique-42'
    redactor = redaction.Redactor( [ secret ] )
    for ascii_only in ( True, False ):
        document = json.dumps(
            { 'user': 'u', 'password': secret, 'n': 1 },
            ensure_ascii = ascii_only ).encode( )
        escaped = json.dumps( secret, ensure_ascii = ascii_only )[ 1 : -1 ]
        start = document.index( escaped.encode( ) )
        for encode in _ENCODERS:
            for shift in range( 3 ):
                prefix = b'#' * shift + document[ : start ]
                text, first, last = _locate_dependents(
                    encode, prefix, escaped.encode( ),
                    document[ start + len( escaped.encode( ) ) : ] )
                assert redactor.redact( text ) == (
                    text[ : first ] + '***' + text[ last + 1 : ] )


def test_130_core_minimum_length( ):
    ''' A secret of seven bytes is found inside longer base64 at every
        alignment; one of five bytes (cores under eight characters) only
        as the base64 of itself, as before; a megabyte of base64 of random
        bytes shows no chance match of either. '''
    long, short = 'k7#Qz!p', 'x9#Qz'
    redactor = redaction.Redactor( [ long, short ] )
    for secret, found in ( ( long, True ), ( short, False ) ):
        for prefix in ( b'', b'a', b'ab' ):
            text = base64.b64encode(
                prefix + secret.encode( ) + b'tail' ).decode( )
            assert ( '***' in redactor.redact( text ) ) is found
    assert redactor.redact( base64.b64encode(
        short.encode( ) ).decode( ) ) == '***'
    data = random.Random( 686 ).randbytes( 750_000 )
    for encode in _ENCODERS:
        text = encode( data ).decode( )
        assert redactor.redact( text ) == text


def test_210_secret_spread_over_texts_redacted( ):
    ''' A secret spread over three texts or more, each shorter than it,
        is replaced in each of them, its neighbours kept: joined with or
        without newlines, the texts show no secret.

        Before, only a secret split over two texts was found.
    '''
    for count in ( 3, 4, 7, len( _SECRET ) ):
        size = -( -len( _SECRET ) // count )
        pieces = [
            _SECRET[ index : index + size ]
            for index in range( 0, len( _SECRET ), size ) ]
        texts = [ f"key {pieces[ 0 ]}", *pieces[ 1 : -1 ],
                  f"{pieces[ -1 ]} ends" ]
        assert len( texts ) >= 3 # noqa: PLR2004
        redacted = _spread( texts )
        assert redacted == [
            'key ***', *( [ '***' ] * ( len( texts ) - 2 ) ), '*** ends' ]
        for joiner in ( '', '\n', ' ' ):
            assert _SECRET not in joiner.join( redacted )


def test_220_whitespace_between_and_lookalikes( ):
    ''' Whitespace at the joints, and texts of whitespace alone between
        the parts, do not hide a spread secret: the texts of whitespace
        stay, the parts go. Texts which only look like a spread secret
        stay as they are: a character missing, another between the parts,
        a part in the middle of its text. '''
    texts = [ 'key sk-spr', '\n', 'ead-8d', ' \n', '  1f-Q7 ', '\tzXw3k.' ]
    assert _spread( texts ) == [
        'key ***', '\n', '***', ' \n', '  *** ', '\t***.' ]
    for texts in (
        [ 'sk-spr', 'ead-8d', '1f-Q7', 'zXw3' ],
        [ 'sk-spr', 'ead-8d', 'x', '1f-Q7zXw3k' ],
        [ 'sk-spr', 'ead-8d', '1f-Q7x', 'zXw3k' ],
        [ 'sk-spr', 'x ead-8d', '1f-Q7zXw3k' ],
        [ 'sk-spr', 'ead', '', ' ' ],
    ): assert _spread( texts ) == texts


def test_230_spread_among_long_and_many_texts( ):
    ''' A secret spread over three texts between two long ones, and one
        spread a character per text among thousands of texts, are found,
        the rest unchanged. '''
    long = 'q' * 200_000
    texts = [ long + 'sk-spr', 'ead-8d1f', '-Q7zXw3k' + long ]
    assert _spread( texts ) == [ long + '***', '***', '***' + long ]
    noise = [ f"n{index}" for index in range( 5000 ) ]
    texts = [ *noise, *_SECRET, *noise ]
    redacted = _spread( texts )
    assert redacted == [ *noise, *( [ '***' ] * len( _SECRET ) ), *noise ]


@pytest.mark.asyncio
@pytest.mark.parametrize( 'count', ( 3, 8 ) )
@pytest.mark.parametrize( 'gap', ( '', '\n' ) )
async def test_310_spread_from_server_redacted(
    monkeypatch, tmp_path, count, gap
):
    ''' A real server which spreads its secret over several text blocks
        gives the model none of it: the contents and every processor's
        native results show no secret, not even with all their strings
        joined and whitespace taken out. '''
    async with _produce_ensemble( monkeypatch, tmp_path ) as ensemble:
        contents = await _invoke(
            ensemble, 'spread', { 'count': count, 'gap': gap } )
        results = await invocables.execute_invocations(
            [ _call( 'a', 'spread', { 'count': count, 'gap': gap } ) ],
            [ ensemble ] )
    texts = [ content.text for content in contents ]
    assert len( texts ) == count
    assert texts[ 0 ] == 'key ***'
    assert texts[ -1 ] == f"{gap}*** ends"
    assert _SECRET not in _whitespace.sub( '', ''.join( texts ) )
    _verify_processors( results, _SECRET )


@pytest.mark.asyncio
async def test_320_spread_error_from_server_redacted( monkeypatch, tmp_path ):
    ''' A secret spread over the text blocks of an error result is
        redacted in the refusal (the texts joined by newlines) and in the
        error result the model gets. '''
    arguments = { 'count': 4, 'gap': '', 'error': True }
    async with _produce_ensemble( monkeypatch, tmp_path ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as raised:
            await _invoke( ensemble, 'spread', arguments )
        results = await invocables.execute_invocations(
            [ _call( 'a', 'spread', arguments ) ], [ ensemble ] )
    assert str( raised.value ) == 'key ***\n***\n***\n*** ends'
    assert results[ 0 ].error
    _verify_processors( results, _SECRET )


@pytest.mark.asyncio
async def test_330_base64_from_server_redacted( monkeypatch, tmp_path ):
    ''' A real server which returns its secret inside the base64 of a
        longer text (any prefix, either alphabet) or of a JSON document
        gives every processor none of the characters which depend on the
        secret. '''
    calls = [
        ( prefix, urlsafe, encode )
        for prefix in ( '', 'a:', 'ab:', 'json' )
        for urlsafe, encode in zip( ( False, True ), _ENCODERS ) ]
    async with _produce_ensemble( monkeypatch, tmp_path ) as ensemble:
        results = await invocables.execute_invocations(
            [ _call( f"c{index}", 'wrap', {
                'prefix': prefix, 'suffix': ':end', 'urlsafe': urlsafe } )
              for index, ( prefix, urlsafe, _ ) in enumerate( calls ) ],
            [ ensemble ] )
    for result, ( given, _, encode ) in zip( results, calls ):
        if given == 'json':
            document = json.dumps(
                { 'token': _SECRET, 'scope': ':end' } ).encode( )
            start = document.index( _SECRET.encode( ) )
            end = start + len( _SECRET )
            prefix, suffix = document[ : start ], document[ end : ]
        else: prefix, suffix = given.encode( ), b':end'
        text, first, last = _locate_dependents(
            encode, prefix, _SECRET.encode( ), suffix )
        assert result.as_text( ) == (
            text[ : first ] + '***' + text[ last + 1 : ] )
        _verify_processors( [ result ], text[ first : last + 1 ] )
