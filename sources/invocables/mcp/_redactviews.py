# SPDX-License-Identifier: Apache-2.0

''' Decoded views of a text, where the forms of secrets are sought.

    A view decodes each escape of a text once (percent-encoded bytes, the
    escapes of JSON, JavaScript and Python, HTML's character references),
    in one scan of the text, linear in its length, and maps what it finds
    back to the text; a view of a view decodes what the first revealed.
    Halves of a character which two levels of escapes gave apart (bytes
    of UTF-8, halves of UTF-16) are joined in a view of their own. Where
    other kinds of escape may give what pairs with a backslash (JSON's
    escapes within percent-encoding or HTML), another view decodes them
    alone first. Neighbouring texts are searched as one, in
    chains as far as a secret may reach across their joints: as they meet,
    without the whitespace at their joints, and with it as one space (a
    secret cut at one of its spaces, with more whitespace at the joint).
'''


from bisect import bisect_right as _bisect_right
from itertools import accumulate as _accumulate

import invocables.mcp.__ as __


Chains: __.typx.TypeAlias = dict[ int, list[ tuple[ int, int ] ] ]
Form: __.typx.TypeAlias = tuple[ str, str, str ] # characters before, after
Segments: __.typx.TypeAlias = list[ tuple[ int, int, int ] ]
Spans: __.typx.TypeAlias = list[ tuple[ int, int ] ]


# A run of percent escapes or of JSON's \\u, or one other escape: each
# alternative starts with its own character (which lets the engine skip
# to the next '%', backslash or ampersand) and repeats nothing which may
# end otherwise, so that no start of a match is tried twice.
_ESCAPES_PERCENT = r'%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*'
_ESCAPES_BACKSLASH = (
    r'\\(?:u[0-9A-Fa-f]{4}(?:\\u[0-9A-Fa-f]{4})*'
    r'|u\{0*[0-9A-Fa-f]{1,6}\}|x[0-9A-Fa-f]{2}|U[0-9A-Fa-f]{8}'
    r'|["\'\\/bfnrtv])' )
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
_surrogates = __.re.compile( '([\ud800-\udfff]{2,})' )


class Views( __.immut.DataclassObject ):
    ''' Forms to search the decoded view of a text for, with the
        characters of each (and of all) which an escape may give. '''

    forms: tuple[ Form, ... ]
    characters: tuple[ frozenset[ str ], ... ] # of each form, margins too
    union: frozenset[ str ]
    spaced: bool # whether a form holds a space
    depth: int # times a text is decoded


def decode_escape( escape: str ) -> str:
    ''' Returns characters of a run of escapes (or of another escape):
        UTF-8 of percent-encoded bytes, else each byte as the environment
        gives it; UTF-16 of ``\\u`` escapes, lone surrogates as they are;
        the code point of ``\\u{...}``, ``\\x``, ``\\U`` and a numeric
        character reference (beyond Unicode, the replacement character);
        halves of characters joined, of a run of them.
    '''
    if escape in _ESCAPES_SHORT: return _ESCAPES_SHORT[ escape ]
    if escape[ 0 ] == '%':
        data = bytes.fromhex( escape.replace( '%', '' ) )
        return data.decode( errors = 'surrogateescape' )
    if escape.startswith( ( '&#x', '&#X' ) ):
        point = int( escape[ 3 : -1 ], 16 )
    elif escape[ 0 ] == '&': point = int( escape[ 2 : -1 ] )
    elif escape[ 0 ] != '\\':
        return ''.join( pair[ 0 ] for pair in _join_halves( escape ) )
    elif escape[ 1 ] in 'xU': point = int( escape[ 2 : ], 16 )
    elif escape[ 2 ] == '{': point = int( escape[ 3 : -1 ], 16 )
    else:
        data = bytes.fromhex( escape.replace( '\\u', '' ) )
        return data.decode( 'utf-16-be', errors = 'surrogatepass' )
    return chr( point ) if point <= _POINT_MAXIMUM else _REPLACEMENT


def decode_view( text: str ) -> str:
    ''' Returns text with each escape decoded once, as a view decodes
        it, and halves of characters joined. '''
    parts = split_escapes( text )
    parts[ 1 :: 2 ] = map( decode_escape, parts[ 1 :: 2 ] )
    pieces = _surrogates.split( ''.join( parts ) )
    pieces[ 1 :: 2 ] = map( decode_escape, pieces[ 1 :: 2 ] )
    return ''.join( pieces )


def locate_chains(
    texts: __.cabc.Sequence[ str ], views: Views, width: int
) -> Chains:
    ''' Returns the spans of each text where a form appears across the
        joints of neighbouring texts once their escapes are decoded (see
        :py:func:`locate_escaped`), as they meet, with whitespace at the
        joints aside (which stays), or, for a form with spaces, with the
        whitespace of a joint as one space; texts longer than twice width
        are searched by their last and first width characters, and end
        one chain and begin the next.
    '''
    spans: Chains = { }
    for chain in _survey_chains( texts, width, stripped = False ):
        _locate_chain( texts, chain, views, spans )
    for chain in _survey_chains( texts, width, stripped = True ):
        _locate_chain( texts, chain, views, spans )
        # A space of the secret at a joint with more whitespace: the
        # joint's whitespace as one space.
        if not views.spaced: continue
        _locate_chain( texts, _collapse_chain( texts, chain ), views, spans )
    return spans


def locate_escaped( text: str, views: Views ) -> Spans:
    ''' Returns the spans of text where a form appears once its escapes
        are decoded (percent-encoded bytes, the escapes of JSON,
        JavaScript and Python, HTML's character references), each escape
        of a form's characters whole, and with ``+`` for any of its
        spaces; none if text has neither. Escapes which decoding reveals
        are decoded too, as many times as views say in all (JSON in a
        URL: ``%5Cu0026`` is ``&``).
    '''
    parts = split_escapes( text ) # plain text, escapes, plain text ...
    if len( parts ) > 1: return _locate_view( parts, views, views.depth )
    if views.spaced and '+' in text:
        return _locate_spaced( text, views.forms )
    return [ ]


def locate_forms( text: str, forms: __.cabc.Sequence[ Form ] ) -> Spans:
    ''' Returns the spans of text where each form appears, with the
        character before it and the one after it if among those which go
        with it; leftmost first for each form, not overlapping.
    '''
    spans: Spans = [ ]
    for form in forms:
        index = text.find( form[ 0 ] )
        while index >= 0:
            spans.append( _widen( text, index, form ) )
            index = text.find( form[ 0 ], index + len( form[ 0 ] ) )
    return spans


def split_escapes( text: str ) -> list[ str ]:
    ''' Returns text split at its escapes: plain text, escape, plain text
        ... (its only part if it has none). '''
    kinds = ''.join( kind for kind in _KINDS[ -1 ] if kind in text )
    if kinds.endswith( '&' ) and ';' not in text: # no reference ends
        kinds = kinds[ : -1 ]
    return _escapes[ kinds ].split( text ) if kinds else [ text ]


def _is_marked( text: str, start: int, end: int ) -> bool:
    ''' Returns whether text from start to end holds what may begin an
        escape, or a plus. '''
    return any( text.find( mark, start, end ) >= 0 for mark in '%\\&+' )


def _join_halves( run: str ) -> list[ tuple[ str, int ] ]:
    ''' Returns the characters of a run of surrogates, each with how many
        of the run it takes: a pair of UTF-16 halves, the bytes of UTF-8
        (as the environment gives bytes), else one as it is. '''
    pairs: list[ tuple[ str, int ] ] = [ ]
    index = 0
    while index < len( run ):
        head, tail = run[ index ], run[ index + 1 : index + 2 ]
        if head <= '\udbff' and '\udc00' <= tail:
            pairs.append( ( ( head + tail ).encode(
                'utf-16-be', errors = 'surrogatepass' ).decode(
                'utf-16-be' ), 2 ) )
            index += 2
            continue
        end = index
        while end < len( run ) and '\udc80' <= run[ end ] <= '\udcff':
            end += 1
        if end == index:
            pairs.append( ( head, 1 ) )
            index += 1
            continue
        for character in run[ index : end ].encode(
            errors = 'surrogateescape'
        ).decode( errors = 'surrogateescape' ):
            size = 1 if '\udc80' <= character <= '\udcff' else len(
                character.encode( ) )
            pairs.append( ( character, size ) )
        index = end
    return pairs


def _keep_backslashes(
    parts: list[ str ], decodeds: list[ str ], table: dict[ str, str ]
) -> list[ str ] | None:
    ''' Returns decodeds with each escape of a backslash kept whole, if
        the text holds other kinds of escape, and a backslash which they
        give or which stands plain (what may pair with its backslash once
        they are decoded: escapes of JSON within percent-encoding or
        HTML); none else. '''
    kinds = { escape[ 0 ] for escape in table }
    if '\\' not in kinds or len( kinds ) == 1: return None
    if not any(
        escape[ 0 ] != '\\' and '\\' in decoded
        for escape, decoded in table.items( )
    ) and '\\' not in ''.join( parts[ 0 :: 2 ] ): return None
    kept = decodeds.copy( )
    kept[ 1 :: 2 ] = (
        escape if escape[ 0 ] == '\\' else table[ escape ]
        for escape in parts[ 1 :: 2 ] )
    return kept


def _collapse_chain(
    texts: __.cabc.Sequence[ str ], chain: Segments
) -> Segments:
    ''' Returns chain (stripped at its joints) with one space (a segment
        of no text: owner -1) wherever whitespace was stripped at a joint,
        once for a run of joints with nothing but whitespace between. '''
    collapsed: Segments = [ ]
    pending = False # whether whitespace was stripped since the last piece
    for index, ( owner, start, end ) in enumerate( chain ):
        if index and chain[ index - 1 ][ 0 ] != owner:
            before, after = chain[ index - 1 ], texts[ owner ]
            pending = pending or (
                before[ 2 ] < len( texts[ before[ 0 ] ] ) or start > 0 )
            if pending and end > start and after[ start : end ].strip( ):
                collapsed.append( ( -1, 0, 1 ) )
                pending = False
        collapsed.append( ( owner, start, end ) )
    return collapsed


def _locate_chain(
    texts: __.cabc.Sequence[ str ],
    chain: Segments,
    views: Views,
    spans: Chains,
) -> None:
    ''' Adds the spans of each text of chain (owner, start and end of
        each segment; owner -1, a space of no text) where a form crosses
        a joint. '''
    pieces = [
        texts[ owner ][ start : end ] if owner >= 0 else ' '
        for owner, start, end in chain ]
    starts = list( _accumulate( map( len, pieces ), initial = 0 ) )
    for first, last in locate_escaped( ''.join( pieces ), views ):
        head = _bisect_right( starts, first ) - 1
        tail = _bisect_right( starts, last - 1 ) - 1
        if chain[ head ][ 0 ] == chain[ tail ][ 0 ]: continue
        for place in range( head, tail + 1 ):
            owner, start, _ = chain[ place ]
            if owner < 0: continue
            begin = max( first, starts[ place ] ) - starts[ place ]
            end = min( last, starts[ place + 1 ] ) - starts[ place ]
            if begin < end:
                spans.setdefault( owner, [ ] ).append(
                    ( start + begin, start + end ) )


def _locate_decoded(
    parts: list[ str ],
    decodeds: list[ str ],
    characters: set[ str ],
    views: Views,
    depth: int,
) -> Spans:
    ''' Returns the spans of the text split into parts where a form
        appears in its view decoded as decodeds say (characters: those
        which the escapes give), in the view of its halves joined, or in
        views of that view (depth in all). '''
    view = ''.join( decodeds )
    spans = _locate_joined( view, characters, views, depth )
    if spans is None:
        spans = [ ]
        if depth > 1:
            inner = split_escapes( view )
            if len( inner ) > 1:
                spans = _locate_view( inner, views, depth - 1 )
    # Where no escape gives a character of a form (nor a plus a space),
    # the text holds it plain: a form of the secret itself, found in the
    # text as it is, or a decoding of one, which plain text does not hide.
    plussed = views.spaced and '+' in view
    if plussed: characters = characters | { ' ' }
    found = [ ] if characters.isdisjoint( views.union ) else [
        form for form, known in zip( views.forms, views.characters )
        if not characters.isdisjoint( known ) ]
    if plussed:
        spans.extend( _locate_spaced( view, found ) )
        found = [ form for form in found if ' ' not in form[ 0 ] ]
    spans.extend( locate_forms( view, found ) )
    if not spans: return [ ]
    return _map_spans( parts, decodeds, spans )


def _locate_joined(
    view: str, characters: set[ str ], views: Views, depth: int
) -> Spans | None:
    ''' Returns the spans of view where a form appears once the halves of
        characters which escapes gave apart are joined (see
        :py:func:`_locate_decoded`); none if no halves join. '''
    if all( character < '\ud800' or character > '\udfff'
            for character in characters ): return None
    parts = _surrogates.split( view )
    table = {
        run: decode_escape( run ) for run in dict.fromkeys( parts[ 1 :: 2 ] ) }
    if all( run == joined for run, joined in table.items( ) ): return None
    decodeds = parts.copy( )
    decodeds[ 1 :: 2 ] = map( table.__getitem__, parts[ 1 :: 2 ] )
    joineds = set( ''.join( table.values( ) ) )
    return _locate_decoded( parts, decodeds, joineds, views, depth )


def _locate_spaced( text: str, forms: __.cabc.Sequence[ Form ] ) -> Spans:
    ''' Returns the spans of text where each form which holds a space
        appears with ``+`` for any of its spaces (a form of HTML or a
        query), its other characters as they are; leftmost first for each
        form, not overlapping. '''
    spaced = [ form for form in forms if ' ' in form[ 0 ] ]
    if not spaced: return [ ]
    plussed = text.replace( '+', ' ' )
    spans: Spans = [ ]
    for form_ in spaced:
        form = form_[ 0 ]
        # the characters of form which a plus gives only as a plus
        pluses = [ place for place, mark in enumerate( form ) if '+' == mark ]
        sought = form.replace( '+', ' ' )
        index = plussed.find( sought )
        while index >= 0:
            if any( text[ index + place ] != '+' for place in pluses ):
                index = plussed.find( sought, index + 1 )
                continue
            spans.append( _widen( text, index, form_ ) )
            index = plussed.find( sought, index + len( form ) )
    return spans


def _locate_view( parts: list[ str ], views: Views, depth: int ) -> Spans:
    ''' Returns the spans of the text split into parts (plain text,
        escapes, plain text ...) where a form appears in the view of it
        with each escape decoded, or in views of that view (depth in all);
        and, where other kinds of escape may give what pairs with a
        backslash, in the view which keeps the escapes of backslashes
        whole.
    '''
    escapes = parts[ 1 :: 2 ]
    table = {
        escape: decode_escape( escape )
        for escape in dict.fromkeys( escapes ) }
    decodeds = parts.copy( )
    decodeds[ 1 :: 2 ] = map( table.__getitem__, escapes )
    characters = set( ''.join( table.values( ) ) )
    spans = _locate_decoded( parts, decodeds, characters, views, depth )
    kept = _keep_backslashes( parts, decodeds, table )
    if kept:
        spans.extend(
            _locate_decoded( parts, kept, characters, views, depth ) )
    return spans


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
    elif escape == decoded: widths = ( 1, ) * len( escape ) # kept whole
    elif escape[ 0 ] == '%':
        widths = (
            3 if '\udc80' <= character <= '\udcff' # a byte as it is
            else 3 * len( character.encode( errors = 'surrogatepass' ) )
            for character in decoded )
    elif escape[ 0 ] != '\\': # a run of halves
        widths = ( size for _, size in _join_halves( escape ) )
    else: # a run of \u
        widths = (
            12 if character > '\uffff' else 6 for character in decoded )
    return list( _accumulate( widths, initial = 0 ) )


def _survey_chains(
    texts: __.cabc.Sequence[ str ], width: int, *, stripped: bool
) -> __.cabc.Iterator[ Segments ]:
    ''' Yields the chains of texts a secret may cross, each as segments
        (owner, start and end) of two texts at least; stripped, without
        whitespace at the joints (none if none is there). Only chains
        which hold what may be an escape are yielded. '''
    chain: Segments = [ ]
    changed = False
    marks = False # whether the chain holds '%', a backslash, '&' or '+'
    for owner, text in enumerate( texts ):
        size = len( text )
        start, end = 0, size
        if stripped:
            start = size - len( text.lstrip( ) ) if owner else 0
            end = max( start, len( text.rstrip( ) ) ) if (
                owner < len( texts ) - 1 ) else size
            changed = changed or ( start, end ) != ( 0, size )
        if end - start > 2 * width:
            chain.append( ( owner, start, start + width ) )
            marks = marks or _is_marked( text, start, start + width )
            if len( chain ) > 1 and marks and ( changed or not stripped ):
                yield chain
            chain = [ ( owner, end - width, end ) ]
            marks = _is_marked( text, end - width, end )
            changed = stripped and end < size
            continue
        chain.append( ( owner, start, end ) )
        marks = marks or _is_marked( text, start, end )
    if len( chain ) > 1 and marks and ( changed or not stripped ):
        yield chain


def _widen( text: str, index: int, form: Form ) -> tuple[ int, int ]:
    ''' Returns span of form at index of text, with the character before
        it and the one after it if among those which go with it. '''
    sought, before, after = form
    start, end = index, index + len( sought )
    if start and text[ start - 1 ] in before: start -= 1
    if end < len( text ) and text[ end ] in after: end += 1
    return start, end
