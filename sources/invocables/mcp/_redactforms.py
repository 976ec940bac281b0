# SPDX-License-Identifier: Apache-2.0

''' Forms of secrets: those learned per secret, and those found through
    the escapes of a text.

    A secret is learned as it is, stripped, in upper and lower case, in
    base64 (whole, and by the cores which longer base64 text holds), and
    escaped as the encoders of Python write it (see
    :py:class:`invocables.mcp.redaction.Redactor`). Other encoders escape
    other characters, or in the other case of hex: any mixture of a
    secret's characters percent-encoded, escaped for JSON or JavaScript,
    or written as HTML's character references, or left plain, is found in
    the decoded view of the text, which decodes each escape once (in one
    scan of the text, linear in its length) and maps what it finds back
    to the text. A ``+`` stands for any space of a secret (a form).
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
WIDTH_MAXIMUM = 64
''' Characters of text which a character of a secret takes at most,
    escaped twice (HTML's references of the characters of a reference take
    some 30; padded with zeros, more). '''

_BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
_BASE64_URLSAFE = str.maketrans( '+/', '-_' )
# 48 bits: a core shorter would match other base64 by chance too often.
_CORE_LENGTH_MINIMUM = 8
# A run of percent escapes or of JSON's \\u, or one other escape: each
# alternative starts with its own character (which lets the engine skip
# to the next '%', backslash or ampersand) and repeats nothing which may
# end otherwise, so that no start of a match is tried twice.
_ESCAPES_PERCENT = r'%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*'
_ESCAPES_BACKSLASH = (
    r'\\(?:u[0-9A-Fa-f]{4}(?:\\u[0-9A-Fa-f]{4})*'
    r'|u\{0*[0-9A-Fa-f]{1,6}\}|x[0-9A-Fa-f]{2}|["\'\\/bfnrtv])' )
_ESCAPES_REFERENCE = (
    r'&(?:#(?:[xX]0*[0-9A-Fa-f]{1,6}|0*[0-9]{1,7})'
    r'|amp|AMP|lt|LT|gt|GT|quot|QUOT|apos);' )
_KINDS = ( '%', '\\', '&', '%\\', '%&', '\\&', '%\\&' ) # of escapes
# Per kinds of escape a text may hold: the engine skips faster to one
# character than to any of two, to any of two than of three.
_escapes = {
    kinds: __.re.compile( "({patterns})".format( patterns = '|'.join(
        pattern for kind, pattern in (
            ( '%', _ESCAPES_PERCENT ), ( '\\', _ESCAPES_BACKSLASH ),
            ( '&', _ESCAPES_REFERENCE ) )
        if kind in kinds ) ) )
    for kinds in _KINDS }
_ESCAPES_SHORT = __.immut.Dictionary( {
    '\\"': '"', "\\'": "'", '\\\\': '\\', '\\/': '/', '\\b': '\b',
    '\\f': '\f', '\\n': '\n', '\\r': '\r', '\\t': '\t', '\\v': '\v',
    '&amp;': '&', '&AMP;': '&', '&lt;': '<', '&LT;': '<', '&gt;': '>',
    '&GT;': '>', '&quot;': '"', '&QUOT;': '"', '&apos;': "'",
} )
_POINT_MAXIMUM = 0x10FFFF
_REPLACEMENT = '\ufffd' # of a code point beyond Unicode


class Views( __.immut.DataclassObject ):
    ''' Forms to search the decoded view of a text for, with the
        characters of each (and of all) which an escape may give. '''

    forms: tuple[ Form, ... ]
    characters: tuple[ frozenset[ str ], ... ] # of each form, margins too
    union: frozenset[ str ]
    spaced: bool # whether a form holds a space


def locate_escaped(
    text: str, views: Views, depth: int = DEPTH_MAXIMUM
) -> Spans:
    ''' Returns the spans of text where a form appears once its escapes
        are decoded (percent-encoded bytes, the escapes of JSON and
        JavaScript, HTML's character references), each escape of a form's
        characters whole, and with ``+`` for any of its spaces; none if
        text has neither. Escapes which decoding reveals are decoded too,
        depth times in all (JSON in a URL: ``%5Cu0026`` is ``&``).
    '''
    parts = _split_escapes( text ) # plain text, escapes, plain text ...
    if len( parts ) > 1: return _locate_view( parts, views, depth )
    if views.spaced and '+' in text:
        return _locate_spaced( text, views.forms )
    return [ ]


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


def locate_straddles(
    left: str, right: str, views: Views, width: int
) -> tuple[ Spans, Spans ]:
    ''' Returns the spans of left and of right where a form appears across
        their joint once their escapes are decoded (see
        :py:func:`locate_escaped`), as they meet or with whitespace at the
        joint aside (which stays); only the last width characters of left
        and the first of right are searched.
    '''
    tail, head = left[ -width : ], right[ : width ]
    base = len( left ) - len( tail )
    pairs = [ ( tail, head ) ]
    stripped = ( tail.rstrip( ), head.lstrip( ) )
    if stripped != pairs[ 0 ]: pairs.append( stripped )
    lefts: Spans = [ ]
    rights: Spans = [ ]
    for before, after in pairs:
        cut, lead = len( before ), len( head ) - len( after )
        for start, end in locate_escaped( before + after, views ):
            if not start < cut < end: continue
            lefts.append( ( base + start, base + cut ) )
            rights.append( ( lead, lead + end - cut ) )
    return lefts, rights


def produce_views( margins: Margins ) -> Views:
    ''' Returns the forms of margins to search the decoded view of a text
        for. '''
    forms = tuple( ( form, *pair ) for form, pair in margins.items( ) )
    characters = tuple( frozenset( ''.join( form ) ) for form in forms )
    return Views(
        forms = forms, characters = characters,
        union = frozenset( ''.join( map( ''.join, forms ) ) ),
        spaced = any( ' ' in form for form in margins ) )


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
    ''' Returns characters of a run of escapes (or of another escape):
        UTF-8 of percent-encoded bytes, else each byte as the environment
        gives it; UTF-16 of ``\\u`` escapes, lone surrogates as they are;
        the code point of ``\\u{...}``, ``\\x`` and a numeric character
        reference (beyond Unicode, the replacement character).
    '''
    if escape in _ESCAPES_SHORT: return _ESCAPES_SHORT[ escape ]
    if escape[ 0 ] == '%':
        data = bytes.fromhex( escape.replace( '%', '' ) )
        return data.decode( errors = 'surrogateescape' )
    if escape.startswith( ( '&#x', '&#X' ) ):
        point = int( escape[ 3 : -1 ], 16 )
    elif escape[ 0 ] == '&': point = int( escape[ 2 : -1 ] )
    elif escape[ 1 ] == 'x': point = int( escape[ 2 : ], 16 )
    elif escape[ 2 ] == '{': point = int( escape[ 3 : -1 ], 16 )
    else:
        data = bytes.fromhex( escape.replace( '\\u', '' ) )
        return data.decode( 'utf-16-be', errors = 'surrogatepass' )
    return chr( point ) if point <= _POINT_MAXIMUM else _REPLACEMENT


def _encode( text: str ) -> bytes:
    ''' Returns the bytes the environment gave; else lone surrogates as
        they are. '''
    try: return text.encode( errors = 'surrogateescape' )
    except UnicodeEncodeError:
        return text.encode( errors = 'surrogatepass' )


def _locate_spaced( text: str, forms: __.cabc.Sequence[ Form ] ) -> Spans:
    ''' Returns the spans of text where each form which holds a space
        appears with ``+`` for any of its spaces (a form of HTML or a
        query), its other characters as they are; leftmost first for each
        form, not overlapping. '''
    spaced = [ form for form in forms if ' ' in form[ 0 ] ]
    if not spaced: return [ ]
    plussed = text.replace( '+', ' ' )
    spans: Spans = [ ]
    size = len( text )
    for form, before, after in spaced:
        # the characters of form which a plus gives only as a plus
        pluses = [ place for place, mark in enumerate( form ) if '+' == mark ]
        sought = form.replace( '+', ' ' )
        index = plussed.find( sought )
        while index >= 0:
            if any( text[ index + place ] != '+' for place in pluses ):
                index = plussed.find( sought, index + 1 )
                continue
            start, end = index, index + len( form )
            if start and text[ start - 1 ] in before: start -= 1
            if end < size and text[ end ] in after: end += 1
            spans.append( ( start, end ) )
            index = plussed.find( sought, index + len( form ) )
    return spans


def _locate_view( parts: list[ str ], views: Views, depth: int ) -> Spans:
    ''' Returns the spans of the text split into parts (plain text,
        escapes, plain text ...) where a form appears in the view of it
        with each escape decoded, or in views of that view (depth in all).
    '''
    escapes = parts[ 1 :: 2 ]
    table = {
        escape: _decode_escape( escape )
        for escape in dict.fromkeys( escapes ) }
    decodeds = parts.copy( )
    decodeds[ 1 :: 2 ] = map( table.__getitem__, escapes )
    view = ''.join( decodeds )
    spans: Spans = [ ]
    if depth > 1:
        inner = _split_escapes( view )
        if len( inner ) > 1: spans = _locate_view( inner, views, depth - 1 )
    # Where no escape gives a character of a form (nor a plus a space),
    # the text holds it plain: a form of the secret itself, found in the
    # text as it is, or a decoding of one, which plain text does not hide.
    decoded = set( ''.join( table.values( ) ) )
    plussed = views.spaced and '+' in view
    if plussed: decoded.add( ' ' )
    found = [ ] if decoded.isdisjoint( views.union ) else [
        form for form, characters in zip( views.forms, views.characters )
        if not decoded.isdisjoint( characters ) ]
    if plussed:
        spans.extend( _locate_spaced( view, found ) )
        found = [ form for form in found if ' ' not in form[ 0 ] ]
    spans.extend( locate_forms( view, found ) )
    if not spans: return [ ]
    return _map_spans( parts, decodeds, spans )


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
    if len( decoded ) == 1: widths = ( len( escape ), )
    elif escape[ 0 ] == '%':
        widths = (
            3 if '\udc80' <= character <= '\udcff' # a byte as it is
            else 3 * len( character.encode( errors = 'surrogatepass' ) )
            for character in decoded )
    else: # a run of \u
        widths = (
            12 if character > '\uffff' else 6 for character in decoded )
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


def _split_escapes( text: str ) -> list[ str ]:
    ''' Returns text split at its escapes: plain text, escape, plain text
        ... (its only part if it has none). '''
    kinds = ''.join( kind for kind in _KINDS[ -1 ] if kind in text )
    if kinds.endswith( '&' ) and ';' not in text: # no reference ends
        kinds = kinds[ : -1 ]
    return _escapes[ kinds ].split( text ) if kinds else [ text ]


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
        view of a text decodes it, each kind of escape or not: its
        percent escapes (a text which escapes its other characters for
        JSON, which leaves those plain), its backslash escapes (a text
        which percent-encodes its others, leaving its backslashes plain),
        its character references, any of these together. '''
    parts = _split_escapes( form )
    if len( parts ) == 1: return
    for kinds in _KINDS:
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
