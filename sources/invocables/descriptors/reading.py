# SPDX-License-Identifier: Apache-2.0

''' Documents of descriptors: files read safely, JSON and TOML parsed and
    checked.

    Files are read only if regular (a pipe or device is refused without
    waiting) and not larger than :py:data:`SIZE_MAXIMUM`; a UTF-8 byte
    order mark is allowed. Documents may nest at most
    :py:data:`DEPTH_MAXIMUM` levels deep: a deeper one is refused by key,
    also when it is too deep for the parsers (whose ``RecursionError`` is
    then located by a scan of the text). Every failure raises
    :py:class:`invocables.exceptions.DescriptorInvalidity`.
'''


import math as _math
import os as _os
import stat as _stat
import sys as _sys

import invocables.descriptors.__ as __
import invocables.exceptions as _exceptions


if _sys.version_info >= ( 3, 11 ): import tomllib as _tomllib
else: import tomli as _tomllib # pyright: ignore[reportMissingModuleSource]


DEPTH_MAXIMUM = 64 # levels of nested tables and arrays in a descriptor
SIZE_MAXIMUM = 8_388_608 # bytes of one descriptor file

_FILE_FLAGS = (
    _os.O_RDONLY | getattr( _os, 'O_NONBLOCK', 0 )
    | getattr( _os, 'O_NOCTTY', 0 ) | getattr( _os, 'O_CLOEXEC', 0 ) )
_OPENERS = '[{'
_CLOSERS = ']}'
_nonblank = __.re.compile( r'\S' )
_statement_stop = __.re.compile( r'''[\n#"'=\[]''' )
_surrogate = __.re.compile( '[\ud800-\udfff]' )
# Runs of TOML text which may hold dots: multi-line strings and comments
# (passed over), and key parts joined by dots (keys of statements, headers
# and inline tables; single-line strings as parts). Each alternative
# matches wherever it starts, to its end or to that of the line or text if
# unterminated: no start is tried again over the same text.
_KEY_PART = r'''(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"?|'[^'\n]*'?)'''
_toml_dotted = __.re.compile(
    r'"""(?:[^\\]|\\[\s\S])*?(?:"""|\Z)' r"|'''[\s\S]*?(?:'''|\Z)|#[^\n]*|"
    + _KEY_PART + r'(?:[ \t]*\.[ \t]*' + _KEY_PART + ')*' )
_toml_key_part = __.re.compile( _KEY_PART )


def locate_nesting_json( text: str ) -> tuple[ str, int ]:
    ''' Returns key path and line where JSON text first nests deeper
        than the limit (empty path and last line if it does not).
    '''
    kinds: list[ str ] = [ ]
    keys: list[ str ] = [ ]
    line, index, string = 1, 0, ''
    while index < len( text ):
        character = text[ index ]
        if character == '"':
            end = _skip_string_json( text, index )
            string = text[ index + 1 : end - 1 ]
            index = end
            continue
        if character == '\n': line += 1
        elif character == ':' and kinds: keys[ -1 ] = f".{string}"
        elif character == ',' and kinds and kinds[ -1 ] == '[':
            keys[ -1 ] = "[{index}]".format(
                index = int( keys[ -1 ][ 1 : -1 ] ) + 1 )
        elif character in _OPENERS:
            if len( kinds ) >= DEPTH_MAXIMUM:
                return ''.join( keys ).lstrip( '.' ), line
            kinds.append( character )
            keys.append( '[0]' if character == '[' else '' )
        elif character in _CLOSERS and kinds:
            kinds.pop( )
            keys.pop( )
        index += 1
    return '', line


def locate_nesting_toml( text: str ) -> tuple[ str, int ]:
    ''' Returns key path (table and key) and line where TOML text first
        nests deeper than the limit.
    '''
    scan = _TomlScan( text = text )
    while scan.index < len( text ):
        if _advance_toml( scan ):
            return _join_keypath( scan.table, scan.key ), scan.line
    return scan.table, scan.line


def parse_json(
    location: str, keypath: str, text: str, *, remedy: str
) -> object:
    ''' Returns value of JSON text; refuses what JSON does not allow.

        Refuses duplicate keys in an object, ``NaN`` and ``Infinity``, and
        nesting deeper than Python can parse, naming location and key.
    '''
    def refuse_constant( name: str ) -> object:
        raise _exceptions.DescriptorInvalidity(
            location, keypath, f"{name} is not a JSON number; give a "
            "finite number." )

    def refuse_duplicates(
        pairs: list[ tuple[ str, object ] ]
    ) -> dict[ str, object ]:
        document: dict[ str, object ] = { }
        for key, value in pairs:
            if key in document:
                raise _exceptions.DescriptorInvalidity(
                    location, keypath, f"key {key!r} appears twice in one "
                    "object; keep one of them." )
            document[ key ] = value
        return document

    try:
        return __.json.loads(
            text, object_pairs_hook = refuse_duplicates,
            parse_constant = refuse_constant )
    except _exceptions.DescriptorInvalidity: raise
    except RecursionError as exception:
        inner, line = locate_nesting_json( text )
        raise _exceptions.DescriptorInvalidity(
            location, _join_keypath( keypath, inner ),
            f"the JSON nests arrays or objects deeper than {DEPTH_MAXIMUM} "
            f"levels here (line {line}); flatten it." ) from exception
    except ValueError as exception:
        raise _exceptions.DescriptorInvalidity(
            location, keypath, f"not valid JSON: {exception}. Fix the syntax "
            f"at that place; {remedy}" ) from exception


def read_json( path: __.Path ) -> __.cabc.Mapping[ str, __.typx.Any ]:
    ''' Returns JSON object of file. '''
    document = parse_json(
        str( path ), '', _read_text( path ),
        remedy = "other MCP clients write the same JSON." )
    if not isinstance( document, dict ):
        raise _exceptions.DescriptorInvalidity(
            str( path ), '', "expected a JSON object with 'mcpServers'." )
    document_ = __.typx.cast( dict[ str, __.typx.Any ], document )
    validate_document( str( path ), '', document_ )
    return document_


def read_toml( path: __.Path ) -> __.cabc.Mapping[ str, __.typx.Any ]:
    ''' Returns TOML document of file. '''
    text = _read_text( path )
    _validate_dotted_keys( str( path ), text )
    try: document = _tomllib.loads( text )
    except RecursionError as exception:
        keypath, line = locate_nesting_toml( text )
        raise _exceptions.DescriptorInvalidity(
            str( path ), keypath, "the value nests arrays or tables deeper "
            f"than {DEPTH_MAXIMUM} levels (line {line}); flatten it."
        ) from exception
    except ValueError as exception: # TOMLDecodeError, or a huge integer
        raise _exceptions.DescriptorInvalidity(
            str( path ), '', f"not valid TOML: {exception}. Fix the syntax "
            "at that place." ) from exception
    validate_document( str( path ), '', document )
    return document


def validate_document(
    location: str,
    keypath: str,
    document: object,
    *,
    finite: bool = False,
) -> None:
    ''' Refuses values too deeply nested, keys which are not strings and
        text which is not Unicode (lone surrogates); with ``finite``, also
        numbers which are not finite.

        Walks the document without recursion, so that any document,
        even a cyclic mapping, gets a clear error.
    '''
    stack: list[ tuple[ object, _Place, int ] ] = [ ( document, keypath, 0 ) ]
    while stack:
        value, place, depth = stack.pop( )
        if isinstance( value, str ):
            _validate_text( location, place, value )
        elif isinstance( value, float ) and finite and not _math.isfinite(
            value
        ):
            raise _exceptions.DescriptorInvalidity(
                location, _render_place( place ), f"{value!r} is not a JSON "
                "number; give a finite number." )
        children = _survey_children( location, place, value )
        if children and depth >= DEPTH_MAXIMUM:
            raise _exceptions.DescriptorInvalidity(
                location, _render_place( place ), "tables or arrays nest "
                f"deeper than {DEPTH_MAXIMUM} levels here; flatten the "
                "structure." )
        stack.extend(
            ( child, place_, depth + 1 ) for child, place_ in children )


class _Step:
    ''' Place of a value: the place of its table or array, and its key or
        index there.

        Key paths are rendered only for an error: rendered for every value,
        they would cost the length of the path for each of them (a long key
        of a table of many entries: the square of the text).
    '''

    __slots__ = ( 'parent', 'step' )

    def __init__( self, parent: '_Place', step: str | int ):
        self.parent = parent
        self.step = step


_Place: __.typx.TypeAlias = str | _Step # key path, or a step below one


@__.dcls.dataclass( kw_only = True )
class _TomlScan:
    ''' Place of a scan of TOML text: table, key of the statement, depth.

        The statement (text before its ``=``) is kept as the index where it
        starts, and whether it holds more than blanks: a copy of it per
        character would cost the square of a long line.
    '''

    text: str
    table: str = ''
    key: str = ''
    start: int = 0
    begun: bool = False
    line: int = 1
    index: int = 0
    depth: int = 0


def _advance_toml( scan: _TomlScan ) -> bool:
    ''' Advances scan by one token; returns whether it nests too deep. '''
    text, index = scan.text, scan.index
    character = text[ index ]
    if character in '"\'':
        end = _skip_string_toml( text, index )
        scan.line += text.count( '\n', index, end )
        if not scan.key: scan.begun = True
        scan.index = end
        return False
    if character == '#' or ( character == '\n' and not scan.depth ):
        _skip_line( scan )
        return False
    scan.index += 1
    if character == '\n': scan.line += 1
    elif not scan.depth and not scan.key:
        _advance_statement( scan, character )
    elif character in _OPENERS:
        scan.depth += 1
        return scan.depth > DEPTH_MAXIMUM
    elif character in _CLOSERS: scan.depth -= 1
    return False


def _advance_statement( scan: _TomlScan, character: str ) -> None:
    ''' Reads key of statement, or header of table, before any value. '''
    if character == '=':
        key = scan.text[ scan.start : scan.index - 1 ].strip( )
        scan.key = key or '?'
    elif character == '[' and not scan.begun:
        end = scan.text.find( '\n', scan.index )
        end = len( scan.text ) if end < 0 else end
        header = scan.text[ scan.index - 1 : end ]
        scan.table = header.split( '#', 1 )[ 0 ].strip( '[] \t' )
        scan.index = end
    else: # the run of plain characters of a key, at once
        found = _statement_stop.search( scan.text, scan.index )
        end = len( scan.text ) if found is None else found.start( )
        if not scan.begun and _nonblank.search(
            scan.text, scan.index - 1, end
        ): scan.begun = True
        scan.index = end


def _skip_line( scan: _TomlScan ) -> None:
    ''' Skips to next line; a line at top level ends the statement. '''
    end = scan.text.find( '\n', scan.index )
    if end < 0: end = len( scan.text )
    else: scan.line += 1
    scan.index = end + 1
    if not scan.depth:
        scan.key, scan.start, scan.begun = '', scan.index, False


def _join_keypath( keypath: str, inner: str ) -> str:
    if not inner: return keypath
    if not keypath or inner.startswith( '[' ): return f"{keypath}{inner}"
    return f"{keypath}.{inner}"


def _skip_string_json( text: str, index: int ) -> int:
    ''' Returns index after JSON string which starts at index. '''
    position = index + 1
    while position < len( text ):
        character = text[ position ]
        if character == '\\': position += 2
        elif character == '"': return position + 1
        else: position += 1
    return len( text )


def _skip_string_toml( text: str, index: int ) -> int:
    ''' Returns index after TOML string (of any of four kinds) which
        starts at index.
    '''
    quote = text[ index ]
    if text.startswith( quote * 3, index ):
        end = text.find( quote * 3, index + 3 )
        while quote == '"' and end > 0 and _is_escaped( text, end ):
            end = text.find( quote * 3, end + 1 )
        return len( text ) if end < 0 else end + 3
    position = index + 1
    while position < len( text ) and text[ position ] != '\n':
        character = text[ position ]
        if character == '\\' and quote == '"': position += 2
        elif character == quote: return position + 1
        else: position += 1
    return position


def _is_escaped( text: str, index: int ) -> bool:
    ''' Returns whether character at index follows an odd number of
        backslashes.
    '''
    count = 0
    while index - count - 1 >= 0 and text[ index - count - 1 ] == '\\':
        count += 1
    return count % 2 == 1


def _read_text( path: __.Path ) -> str:
    ''' Returns text of regular file, bounded in size; strips a BOM.

        Never blocks on a pipe or device, which are refused.
    '''
    location = str( path )
    try: descriptor = _os.open( path, _FILE_FLAGS )
    except FileNotFoundError as exception:
        raise _exceptions.DescriptorInvalidity(
            location, '', "the file does not exist; create it or correct "
            "the path." ) from exception
    except ( OSError, ValueError ) as exception:
        raise _exceptions.DescriptorInvalidity(
            location, '', f"cannot read the file ({exception}); check that "
            "it is a readable file." ) from exception
    if not _stat.S_ISREG( _os.fstat( descriptor ).st_mode ):
        _os.close( descriptor )
        raise _exceptions.DescriptorInvalidity(
            location, '', "not a regular file (a folder, pipe or device); "
            "name a descriptor file." )
    with _os.fdopen( descriptor, 'rb' ) as stream:
        try: data = stream.read( SIZE_MAXIMUM + 1 )
        except OSError as exception:
            raise _exceptions.DescriptorInvalidity(
                location, '', f"cannot read the file ({exception}); check "
                "that it is a readable file." ) from exception
    if len( data ) > SIZE_MAXIMUM:
        raise _exceptions.DescriptorInvalidity(
            location, '', f"the file is larger than {SIZE_MAXIMUM} bytes, "
            "the limit for a descriptor; split it or shorten its values." )
    try: return data.decode( 'utf-8-sig' )
    except UnicodeDecodeError as exception:
        raise _exceptions.DescriptorInvalidity(
            location, '', f"the file is not UTF-8 text ({exception}); "
            "save it as UTF-8." ) from exception


def _validate_dotted_keys( location: str, text: str ) -> None:
    ''' Refuses a dotted key of more parts than the levels allowed, before
        parsing, whose memory grows with the square of the parts.
    '''
    if text.count( '.' ) < DEPTH_MAXIMUM: return
    for match in _toml_dotted.finditer( text ):
        run = match[ 0 ]
        if run.count( '.' ) < DEPTH_MAXIMUM: continue
        if run.startswith( ( '#', "'''", '"""' ) ): continue
        parts = len( _toml_key_part.findall( run ) )
        if parts <= DEPTH_MAXIMUM: continue
        line = text.count( '\n', 0, match.start( ) ) + 1
        raise _exceptions.DescriptorInvalidity(
            str( location ), __.values.abbreviate( run, 40 ),
            f"a dotted key of {parts} parts (line {line}) nests deeper "
            f"than {DEPTH_MAXIMUM} levels; flatten it." )


def _render_place( place: _Place ) -> str:
    ''' Returns key path of a place. '''
    steps: list[ str | int ] = [ ]
    while isinstance( place, _Step ):
        steps.append( place.step )
        place = place.parent
    parts = [ place ]
    for step in reversed( steps ):
        if isinstance( step, int ): parts.append( f"[{step}]" )
        elif any( parts ): parts.append( f".{step}" )
        else: parts.append( step )
    return ''.join( parts )


def _survey_children(
    location: str, place: _Place, value: object
) -> list[ tuple[ object, _Place ] ]:
    ''' Returns items of table or array, with their places. '''
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ object, object ], value )
        children: list[ tuple[ object, _Place ] ] = [ ]
        for key, item in mapping.items( ):
            if not isinstance( key, str ):
                raise _exceptions.DescriptorInvalidity(
                    location, _render_place( place ), f"key {key!r} is not "
                    "a string; name keys with strings." )
            _validate_text( location, place, key )
            children.append( ( item, _Step( place, key ) ) )
        return children
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return [
            ( item, _Step( place, index ) )
            for index, item in enumerate( items ) ]
    return [ ]


def _validate_text( location: str, place: _Place, text: str ) -> None:
    match = _surrogate.search( text )
    if match is None: return
    raise _exceptions.DescriptorInvalidity(
        location, _render_place( place ), "the text holds {character}, half "
        "of a UTF-16 pair, which is not Unicode text; remove it.".format(
            character = ascii( match[ 0 ] ) ) )
