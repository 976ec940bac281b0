# SPDX-License-Identifier: Apache-2.0

''' Forms of secrets: those learned per secret, and those found through
    the escapes of a text.

    A secret is learned as it is, stripped, in upper and lower case, in
    base64 (whole, and by the cores which longer base64 text holds), and
    escaped as the encoders of Python write it (see
    :py:class:`invocables.mcp.redaction.Redactor`). Other encoders escape
    other characters, or in the other case of hex: any mixture of a
    secret's characters percent-encoded or left plain, or escaped for JSON
    or left plain, is found in the decoded view of the text, which decodes
    each escape once (in one scan of the text, linear in its length) and
    maps what it finds back to the text.
'''


from base64 import b64encode as _b64encode
from base64 import urlsafe_b64encode as _urlsafe_b64encode
from bisect import bisect_right as _bisect_right
from itertools import accumulate as _accumulate
from urllib.parse import quote as _quote
from urllib.parse import quote_plus as _quote_plus

import invocables.mcp.__ as __


Form: __.typx.TypeAlias = tuple[ str, str, str ] # characters before, after
Margins: __.typx.TypeAlias = dict[ str, tuple[ str, str ] ]
Spans: __.typx.TypeAlias = list[ tuple[ int, int ] ]


LENGTH_MINIMUM = 4

DEPTH_MAXIMUM = 2
''' Times a text is decoded of its escapes to find a secret: two finds
    JSON escapes within percent-encoding and the other way round. '''

_BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
_BASE64_URLSAFE = str.maketrans( '+/', '-_' )
# 48 bits: a core shorter would match other base64 by chance too often.
_CORE_LENGTH_MINIMUM = 8
# A run of escapes of one kind, or one short escape of JSON: each
# alternative starts with its own character (which lets the engine skip
# to the next '%' or backslash) and repeats nothing which may end
# otherwise, so that no start of a match is tried twice.
_escape = __.re.compile(
    r'(%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*'
    r'|\\(?:u[0-9A-Fa-f]{4}(?:\\u[0-9A-Fa-f]{4})*|["\\/bfnrt]))' )
_ESCAPES_SHORT = __.immut.Dictionary( {
    '\\"': '"', '\\\\': '\\', '\\/': '/', '\\b': '\b', '\\f': '\f',
    '\\n': '\n', '\\r': '\r', '\\t': '\t',
} )


def locate_escaped(
    text: str, forms: __.cabc.Sequence[ Form ], depth: int = DEPTH_MAXIMUM
) -> Spans:
    ''' Returns the spans of text where a form appears once its escapes
        are decoded (percent-encoded bytes, JSON's escapes), each escape
        of a form's characters whole; none if text has no escapes. Escapes
        which decoding reveals are decoded too, depth times in all (JSON
        in a URL: ``%5Cu0026`` is ``&``).
    '''
    parts = _escape.split( text ) # plain text, escapes, plain text ...
    if len( parts ) == 1: return [ ]
    escapes = parts[ 1 :: 2 ]
    table = {
        escape: _decode_escape( escape )
        for escape in dict.fromkeys( escapes ) }
    decodeds = parts.copy( )
    decodeds[ 1 :: 2 ] = map( table.__getitem__, escapes )
    view = ''.join( decodeds )
    spans = locate_escaped( view, forms, depth - 1 ) if depth > 1 else [ ]
    # Where no escape gives a character of a form, the text holds it
    # plain: a form of the secret itself, found in the text as it is, or a
    # decoding of one, which plain text does not hide.
    decoded = set( ''.join( table.values( ) ) )
    found = [
        form for form in forms if not decoded.isdisjoint( ''.join( form ) ) ]
    if found: spans.extend( locate_forms( view, found ) )
    if not spans: return [ ]
    return _map_spans( parts, decodeds, spans )


def locate_forms( text: str, forms: __.cabc.Sequence[ Form ] ) -> Spans:
    ''' Returns the spans of text where each form appears, with the
        character before it and the one after it if among those which go
        with it; leftmost first for each form, not overlapping.
    '''
    spans: Spans = [ ]
    size = len( text )
    for form, before, after in forms:
        index = text.find( form )
        while index >= 0:
            start, end = index, index + len( form )
            if start and text[ start - 1 ] in before: start -= 1
            if end < size and text[ end ] in after: end += 1
            spans.append( ( start, end ) )
            index = text.find( form, index + len( form ) )
    return spans


def survey_margins(
    secrets: __.cabc.Iterable[ str ]
) -> tuple[ Margins, Margins ]:
    ''' Returns every form of secrets long enough, with the characters
        which go with it before and after (none, but for base64 cores);
        and those to search the decoded view of a text for: the forms
        which hold no escape of Python's encoders, and these decoded where
        they hold what reads as an escape (a secret ``p%41ss`` is
        ``pAss`` in the view of a text which escapes its other characters
        for JSON).
    '''
    margins: Margins = { }
    views: Margins = { }
    for secret in secrets:
        for core in { secret, secret.strip( ) }:
            if len( core ) < LENGTH_MINIMUM: continue
            plains = tuple( _survey_plains( core ) )
            for form in ( *plains, *_survey_escapes( core ) ):
                margins.setdefault( form, ( '', '' ) )
            for form in plains:
                views.setdefault( form, ( '', '' ) )
                for decoded in _survey_decodings( form ):
                    views.setdefault( decoded, ( '', '' ) )
            for form, before, after in _survey_cores( core ):
                for known in ( margins, views ):
                    head, tail = known.get( form, ( '', '' ) )
                    known[ form ] = ( head + before, tail + after )
    return _select_long( margins ), _select_long( views )


def _decode_escape( escape: str ) -> str:
    ''' Returns characters of a run of escapes (or of a short escape):
        UTF-8 of percent-encoded bytes, else each byte as the environment
        gives it; UTF-16 of ``\\u`` escapes, lone surrogates as they are.
    '''
    if escape in _ESCAPES_SHORT: return _ESCAPES_SHORT[ escape ]
    if escape.startswith( '%' ):
        data = bytes.fromhex( escape.replace( '%', '' ) )
        return data.decode( errors = 'surrogateescape' )
    data = bytes.fromhex( escape.replace( '\\u', '' ) )
    return data.decode( 'utf-16-be', errors = 'surrogatepass' )


def _encode( text: str ) -> bytes:
    ''' Returns the bytes the environment gave; else lone surrogates as
        they are. '''
    try: return text.encode( errors = 'surrogateescape' )
    except UnicodeEncodeError:
        return text.encode( errors = 'surrogatepass' )


def _map_spans(
    parts: list[ str ], decodeds: list[ str ], spans: Spans
) -> Spans:
    ''' Returns spans of the decoded view mapped back to the text: a
        character of an escape stands for all of its escape. '''
    originals = list( _accumulate( map( len, parts ), initial = 0 ) )
    starts = list( _accumulate( map( len, decodeds ), initial = 0 ) )
    widths: dict[ int, list[ int ] ] = { } # per run: prefix sums

    def map_index( index: int, after: int ) -> int:
        part = _bisect_right( starts, index ) - 1
        offset = index - starts[ part ] + after
        if not part % 2: return originals[ part ] + offset
        if part not in widths:
            widths[ part ] = _measure_escape( parts[ part ], decodeds[ part ] )
        return originals[ part ] + widths[ part ][ offset ]

    return [
        ( map_index( start, 0 ), map_index( end - 1, 1 ) )
        for start, end in spans ]


def _measure_escape( escape: str, decoded: str ) -> list[ int ]:
    ''' Returns how many characters of escape stand for the characters of
        decoded before each, and for all (prefix sums). '''
    widths: __.cabc.Iterable[ int ]
    if escape.startswith( '%' ):
        widths = (
            3 if '\udc80' <= character <= '\udcff' # a byte as it is
            else 3 * len( character.encode( errors = 'surrogatepass' ) )
            for character in decoded )
    elif escape.startswith( '\\u' ):
        widths = (
            12 if character > '\uffff' else 6 for character in decoded )
    else: widths = ( len( escape ), )
    return list( _accumulate( widths, initial = 0 ) )


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


def _survey_cores( core: str ) -> __.cabc.Iterator[ Form ]:
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


def _survey_decodings( form: str ) -> __.cabc.Iterator[ str ]:
    ''' Yields form with what reads as an escape in it decoded as the
        view of a text decodes it: its percent escapes (a text which
        escapes its other characters for JSON, which leaves those plain),
        its JSON escapes (a text which percent-encodes its others, leaving
        its backslashes plain), both. '''
    parts = _escape.split( form )
    if len( parts ) == 1: return
    for kinds in ( '%', '\\', '%\\' ):
        pieces = parts.copy( )
        pieces[ 1 :: 2 ] = (
            _decode_escape( part ) if part[ 0 ] in kinds else part
            for part in parts[ 1 :: 2 ] )
        yield ''.join( pieces )


def _survey_escapes( core: str ) -> __.cabc.Iterator[ str ]:
    ''' Yields the forms of secret escaped as Python's encoders write
        them: percent-encoded, for JSON, every character ``\\u``. '''
    data = _encode( core )
    units = core.encode( 'utf-16-be', errors = 'surrogatepass' )
    yield from (
        _quote( data, safe = '' ), _quote( data ), _quote_plus( data ),
        __.json.dumps( core )[ 1 : -1 ],
        __.json.dumps( core, ensure_ascii = False )[ 1 : -1 ],
        ''.join(
            "\\u{unit:04x}".format( unit = int.from_bytes(
                units[ index : index + 2 ], 'big' ) )
            for index in range( 0, len( units ), 2 ) ) )


def _survey_plains( core: str ) -> __.cabc.Iterator[ str ]:
    ''' Yields secret, in upper and lower case, with ``+`` for spaces (as
        in a form), and in base64. '''
    yield from ( core, core.upper( ), core.lower( ) )
    if ' ' in core: yield core.replace( ' ', '+' )
    data = _encode( core )
    for encoded in ( _b64encode( data ), _urlsafe_b64encode( data ) ):
        text = encoded.decode( 'ascii' )
        yield from ( text, text.rstrip( '=' ) )
