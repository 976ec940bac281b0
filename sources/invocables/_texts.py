# SPDX-License-Identifier: Apache-2.0

''' Texts which every provider's SDK can send: content made valid
    Unicode (:py:func:`normalize_text`), names shown on one line
    (:py:func:`render_name`). :py:mod:`invocables.canisters` offers them.
'''


import invocables.__ as __


_ESCAPES_SHORT = __.types.MappingProxyType( {
    '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' } )
_NORMALIZATION_DEPTH_MAXIMUM = __.values.RESULTS_DEPTH_MAXIMUM
# Lone surrogates: what 'surrogateescape' makes of bytes which are not
# UTF-8 (U+DC80 to U+DCFF), or halves of UTF-16 pairs (from JSON's escapes).
# No UTF-8 encoder accepts them; a pair is one character, joined.
_surrogates = __.re.compile(
    r'[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]' )
# What a name in a listing may not hold as it is: what is not Unicode, the
# escape character itself, and what breaks or reorders lines (C0 and C1
# controls, DEL, line and paragraph separators, bidirectional controls).
_name_escapables = __.re.compile(
    r'[\ud800-\udbff][\udc00-\udfff]'
    r'|[\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e'
    r'\u2066-\u2069\ud800-\udfff]' )


def normalize_data( value: object ) -> object:
    ''' Returns JSON-like data whose keys and texts every UTF-8 encoder
        accepts (see :py:func:`normalize_text`); the same object when they
        all are.
    '''
    return _normalize_data( value, 0 )


def normalize_text( text: str ) -> str:
    ''' Returns text which every UTF-8 encoder accepts: text as it is, when
        it is valid Unicode (the common case, checked quickly).

        Lone surrogates, which no UTF-8 encoder accepts (what the
        ``surrogateescape`` error handler makes of bytes which are not
        UTF-8, as in file names, or halves of UTF-16 pairs from JSON's
        escapes), are shown as escapes: a byte as ``\\xff``, another half
        as ``\\udc00``. A pair of halves is joined into its character.
        Line breaks and other characters are kept: this is content; names
        in listings go through :py:func:`render_name`.
    '''
    if text.isascii( ): return text
    try: text.encode( 'utf-8' )
    except UnicodeEncodeError:
        return _surrogates.sub( _escape_surrogate, text )
    return text


def render_name( name: str ) -> str:
    ''' Renders name (of a file, a folder, any entry of a listing) on one
        line, sendable, and unambiguous.

        A backslash is doubled; tabs, line feeds and carriage returns are
        ``\\t``, ``\\n``, ``\\r``; other control characters (C0, DEL,
        C1), line and paragraph separators and bidirectional controls,
        which could forge or reorder lines of a listing, are ``\\x1b`` or
        ``\\u2028``; bytes which are not UTF-8 (lone surrogates of
        ``surrogateescape``) are ``\\xff``. Other names are returned as
        they are.
    '''
    if name.isascii( ) and name.isprintable( ) and '\\' not in name:
        return name
    return _name_escapables.sub( _escape_character, name )


def _escape_character( match: __.re.Match[ str ] ) -> str:
    ''' Returns escape of a character which a name may not hold as it is.
    '''
    text = match.group( )
    short = _ESCAPES_SHORT.get( text )
    if short is not None: return short
    code = ord( text[ 0 ] )
    if len( text ) > 1 or 0xd800 <= code <= 0xdfff: # noqa: PLR2004
        return _escape_surrogate( match )
    if code < 0x80: return "\\x{code:02x}".format( code = code ) # noqa: PLR2004
    return "\\u{code:04x}".format( code = code )


def _escape_surrogate( match: __.re.Match[ str ] ) -> str:
    ''' Returns character of a pair of surrogates, else escape of one. '''
    text = match.group( )
    if len( text ) > 1:
        return text.encode( 'utf-16-le', 'surrogatepass' ).decode(
            'utf-16-le' )
    code = ord( text )
    if 0xdc80 <= code <= 0xdcff: # noqa: PLR2004 # a byte, escaped
        return "\\x{byte:02x}".format( byte = code - 0xdc00 )
    return "\\u{code:04x}".format( code = code )


def _normalize_data( value: object, depth: int ) -> object:
    ''' Returns data with its keys and texts sendable; the same, if they
        are. Data deeper than the limit of results is left as it is (the
        engine refuses such results).
    '''
    genus = type( value )
    if genus is str:
        text = __.typx.cast( str, value )
        return text if text.isascii( ) else normalize_text( text )
    if depth >= _NORMALIZATION_DEPTH_MAXIMUM: return value
    if genus is list or genus is tuple:
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        items_ = [ _normalize_data( item, depth + 1 ) for item in items ]
        if all( new is old for new, old in zip( items_, items ) ):
            return value
        return items_
    if genus is not dict: return value
    return _normalize_mapping(
        __.typx.cast( dict[ object, object ], value ), depth )


def _normalize_mapping(
    mapping: dict[ object, object ], depth: int
) -> dict[ object, object ]:
    copy = {
        normalize_text( key ) if type( key ) is str else key:
            _normalize_data( item, depth + 1 )
        for key, item in mapping.items( ) }
    if len( copy ) == len( mapping ) and all(
        key is key_ and copy[ key ] is item
        for ( key, item ), key_ in zip( mapping.items( ), copy )
    ): return mapping
    return copy
