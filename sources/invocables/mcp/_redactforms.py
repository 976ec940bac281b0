# SPDX-License-Identifier: Apache-2.0

''' Forms of secrets: those learned per secret, and those sought in the
    decoded views of a text.

    A secret is learned as it is, stripped, in upper and lower case, in
    base64 (whole, and by the cores which longer base64 text holds), in
    hex, and escaped as the encoders of Python write it (see
    :py:class:`invocables.mcp.redaction.Redactor`). Other encoders escape
    other characters, or in the other case of hex: any mixture of a
    secret's characters percent-encoded, escaped for JSON, JavaScript or
    Python, or written as HTML's character references, or left plain, is
    found in the decoded views of the text (see
    :py:mod:`invocables.mcp._redactviews`). A ``+`` stands for any space
    of a secret (a form). The bytes of a secret in UTF-8, each read as a
    character (as Python's ``repr`` of bytes escapes them, as Latin-1
    reads them, or as Windows' code page 1252 does), are one more form of
    it; its bytes in hex with separators between them (``bytes.hex( ':' )``,
    a dump, a C array) are sought by a pattern (see :py:func:`produce_hexes`).

    Every form sought is four characters long at least: a secret shorter,
    or one which decodes to a shorter form (``&lt;&gt;``), is not found in
    that form, and is counted (see :py:func:`survey_margins`).
'''


from base64 import b64encode as _b64encode
from base64 import urlsafe_b64encode as _urlsafe_b64encode
from urllib.parse import quote as _quote
from urllib.parse import quote_plus as _quote_plus

import invocables.mcp.__ as __
import invocables.mcp._redactviews as _redactviews


Margins: __.typx.TypeAlias = dict[ str, tuple[ str, str ] ]
Surveys: __.typx.TypeAlias = tuple[ Margins, Margins, int, int ]


LENGTH_MINIMUM = 4

DEPTH_MAXIMUM = 3
''' Times a text is decoded of its escapes to find a secret: two finds
    JSON escapes within percent-encoding and the other way round, three
    JSON inside a JSON string inside a JSON string (and percent-encoding
    of that); once more for each level of what reads as escapes within a
    secret (``%2541``), up to two. '''
WIDTH_MAXIMUM = 64
''' Characters of text which a character of a secret takes at most,
    escaped twice (HTML's references of the characters of a reference take
    some 30; padded with zeros, more). '''

_BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
_BASE64_URLSAFE = str.maketrans( '+/', '-_' )
# 48 bits: a core shorter would match other base64 by chance too often.
_CORE_LENGTH_MINIMUM = 8
_DEPTH_SECRET_MAXIMUM = 2 # levels of escapes within a secret decoded
_HEX_DIGITS = __.immut.Dictionary( { # either case
    digit: f"[{digit}{digit.upper( )}]" if digit.isalpha( ) else digit
    for digit in '0123456789abcdef' } )
# Between the bytes of hex: nothing, one or two characters other than
# letters and digits (':', a space, a dump's two), or those before '0x'.
_HEX_SEPARATOR = r'(?:[^0-9A-Za-z]{1,2}0[xX]|[^0-9A-Za-z]{0,2})'
_CP1252_UNSET = frozenset( ( 0x81, 0x8D, 0x8F, 0x90, 0x9D ) )
_KINDS = ( '%', '\\', '&', '%\\', '%&', '\\&', '%\\&' ) # of escapes


def produce_views( margins: Margins, depth: int ) -> _redactviews.Views:
    ''' Returns the forms of margins to search the decoded views of a
        text for, depth times decoded. '''
    forms = tuple( ( form, *pair ) for form, pair in margins.items( ) )
    characters = tuple( frozenset( ''.join( form ) ) for form in forms )
    return _redactviews.Views(
        forms = forms, characters = characters,
        union = frozenset( ''.join( map( ''.join, forms ) ) ),
        spaced = any( ' ' in form for form in margins ), depth = depth )


def produce_hexes(
    secrets: __.cabc.Iterable[ str ]
) -> tuple[ __.re.Pattern[ str ], ... ]:
    ''' Returns patterns of the bytes of each secret long enough (and
        stripped) in hex, in either case, with separators between them or
        none: one or two characters other than letters and digits
        (``bytes.hex( ':' )``, ``binascii.hexlify( data, ' ', 2 )``, a
        dump), optionally before ``0x`` (a C array). Each pattern starts
        with the hex of the first byte, which the engine skips to. '''
    patterns: dict[ str, None ] = { }
    for secret in secrets:
        for core in { secret, secret.strip( ) }:
            if len( core ) < LENGTH_MINIMUM: continue
            pairs = ( ''.join( map( _HEX_DIGITS.__getitem__, f"{byte:02x}" ) )
                      for byte in _encode( core ) )
            patterns[ _HEX_SEPARATOR.join( pairs ) ] = None
    return tuple( map( __.re.compile, patterns ) )


def redact_hexes(
    pattern: __.re.Pattern[ str ], text: str, redaction: str
) -> str:
    ''' Returns text with matches of a secret's hex (a pattern of
        :py:func:`produce_hexes`) replaced; a match whose separator is
        ``%`` (percent-encoding) takes the ``%`` before its first byte too.
    '''
    pieces: list[ str ] = [ ]
    last = 0
    for match in pattern.finditer( text ):
        start = match.start( )
        if start > last and text[ start - 1 ] == '%' and (
            '%' in match.group( )
        ): start -= 1
        pieces.append( text[ last : start ] )
        pieces.append( redaction )
        last = match.end( )
    if not pieces: return text
    pieces.append( text[ last : ] )
    return ''.join( pieces )


def survey_margins( secrets: __.cabc.Iterable[ str ] ) -> Surveys:
    ''' Returns every form of secrets long enough, with the characters
        which go with it before and after (none, but for base64 cores);
        those to search the decoded views of a text for: the forms which
        hold no escape of Python's encoders, and these decoded where they
        hold what reads as an escape (a secret ``p%41ss`` is ``pAss`` in
        the view of a text which escapes its other characters for JSON);
        how many times to decode a text; and how many secrets are, or
        decode to, a form too short to seek (none of whitespace only).
    '''
    margins: Margins = { }
    views: Margins = { }
    depth = DEPTH_MAXIMUM
    shorts = 0
    for secret in secrets:
        cores = { secret, secret.strip( ) }
        short = 0 < len( secret.strip( ) ) < LENGTH_MINIMUM
        for core in cores:
            if len( core ) < LENGTH_MINIMUM: continue
            plains = tuple( _survey_plains( core ) )
            for form in ( *plains, *_survey_escapes( core ) ):
                margins.setdefault( form, ( '', '' ) )
            for form in plains:
                views.setdefault( form, ( '', '' ) )
                for level, decoded in _survey_decodings( form ):
                    short = short or len( decoded ) < LENGTH_MINIMUM
                    views.setdefault( decoded, ( '', '' ) )
                    depth = max( depth, DEPTH_MAXIMUM + level )
            for form, before, after in _survey_cores( core ):
                for known in ( margins, views ):
                    head, tail = known.get( form, ( '', '' ) )
                    known[ form ] = ( head + before, tail + after )
        shorts += short
    return _select_long( margins ), _select_long( views ), depth, shorts


def _encode( text: str ) -> bytes:
    ''' Returns the bytes the environment gave; else lone surrogates as
        they are. '''
    try: return text.encode( errors = 'surrogateescape' )
    except UnicodeEncodeError:
        return text.encode( errors = 'surrogatepass' )


def _produce_core( data: bytes, alignment: int ) -> tuple[ str, str, str ]:
    ''' Returns the characters of base64 which data alone decides, when
        alignment bytes precede it; and the characters which may stand
        before and after them: those whose bits from data agree. '''
    text = _b64encode( bytes( alignment ) + data ).decode( 'ascii' )
    bits = 8 * ( alignment + len( data ) )
    start = ( 8 * alignment + 5 ) // 6
    end = bits // 6
    before = after = ''
    shared = 6 * start - 8 * alignment # low bits of the character before
    if shared:
        value = _BASE64.index( text[ start - 1 ] ) % ( 1 << shared )
        before = _BASE64[ value :: 1 << shared ]
    shared = bits - 6 * end # high bits of the character after
    if shared:
        width = 1 << ( 6 - shared )
        value = _BASE64.index( text[ end ] ) // width * width
        after = _BASE64[ value : value + width ]
    return text[ start : end ], before, after


def _select_long( margins: Margins ) -> Margins:
    ''' Returns the forms long enough to redact (see
        :py:class:`invocables.mcp.redaction.Redactor`). '''
    return {
        form: pair for form, pair in margins.items( )
        if len( form ) >= LENGTH_MINIMUM }


def _survey_cores( core: str ) -> __.cabc.Iterator[ _redactviews.Form ]:
    ''' Yields the cores of secret (as it is and escaped for JSON) in
        longer base64 text, at every alignment and in both alphabets,
        with the characters which may stand before and after each; those
        long enough (see :py:class:`invocables.mcp.redaction.Redactor`).
    '''
    variants = {
        _encode( core ), _encode( __.json.dumps( core )[ 1 : -1 ] ),
        _encode( __.json.dumps( core, ensure_ascii = False )[ 1 : -1 ] ),
    }
    for data in variants:
        for alignment in range( 3 ):
            form, before, after = _produce_core( data, alignment )
            if len( form ) < _CORE_LENGTH_MINIMUM: continue
            yield form, before, after
            yield (
                form.translate( _BASE64_URLSAFE ),
                before.translate( _BASE64_URLSAFE ),
                after.translate( _BASE64_URLSAFE ) )


def _survey_decodings(
    form: str
) -> __.cabc.Iterator[ tuple[ int, str ] ]:
    ''' Yields form with what reads as an escape in it decoded as the
        views of a text decode it, with the times it was decoded: each
        kind of escape once or not (its percent escapes, for a text which
        escapes its other characters for JSON, which leaves those plain;
        its backslash escapes, for a text which percent-encodes its
        others, leaving its backslashes plain; its character references;
        any of these together), and all of them again as long as that
        reveals more (``%2541`` is ``%41``, then ``A``). '''
    parts = _redactviews.split_escapes( form )
    if len( parts ) == 1: return
    for kinds in _KINDS:
        pieces = parts.copy( )
        pieces[ 1 :: 2 ] = (
            _redactviews.decode_escape( part ) if part[ 0 ] in kinds
            else part
            for part in parts[ 1 :: 2 ] )
        yield 1, ''.join( pieces )
    decoded = _redactviews.decode_view( form )
    for level in range( 2, _DEPTH_SECRET_MAXIMUM + 1 ):
        again = _redactviews.decode_view( decoded )
        if again == decoded: return
        decoded = again
        yield level, decoded


def _survey_escapes( core: str ) -> __.cabc.Iterator[ str ]:
    ''' Yields the forms of secret escaped as Python's encoders write
        them: percent-encoded, for JSON, every character ``\\u``; and its
        bytes in hex, in either case. '''
    data = _encode( core )
    units = core.encode( 'utf-16-be', errors = 'surrogatepass' )
    yield from (
        _quote( data, safe = '' ), _quote( data ), _quote_plus( data ),
        __.json.dumps( core )[ 1 : -1 ],
        __.json.dumps( core, ensure_ascii = False )[ 1 : -1 ],
        ''.join(
            "\\u{unit:04x}".format( unit = int.from_bytes(
                units[ index : index + 2 ], 'big' ) )
            for index in range( 0, len( units ), 2 ) ),
        data.hex( ), data.hex( ).upper( ) )


def _survey_plains( core: str ) -> __.cabc.Iterator[ str ]:
    ''' Yields secret, in upper and lower case, with ``+`` for spaces (as
        in a form), its bytes in UTF-8 each read as a character (as
        Latin-1 reads them; Python's ``repr`` of bytes escapes them with
        ``\\x``; as Windows' code page 1252 reads them, its five unset
        bytes as Latin-1) if they differ from it, and in base64. '''
    yield from ( core, core.upper( ), core.lower( ) )
    if ' ' in core: yield core.replace( ' ', '+' )
    data = _encode( core )
    if not core.isascii( ):
        yield data.decode( 'latin-1' )
        yield ''.join(
            chr( byte ) if byte in _CP1252_UNSET
            else bytes( ( byte, ) ).decode( 'cp1252' )
            for byte in data )
    for encoded in ( _b64encode( data ), _urlsafe_b64encode( data ) ):
        text = encoded.decode( 'ascii' )
        yield from ( text, text.rstrip( '=' ) )
