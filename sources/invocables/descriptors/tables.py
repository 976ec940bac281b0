# SPDX-License-Identifier: Apache-2.0

''' Tables of descriptors, read and checked key by key.

    Every failure raises :py:class:`invocables.exceptions.DescriptorInvalidity`
    with the file, the key path (``invokers[2].source``) and the fix.
'''


from difflib import get_close_matches as _get_close_matches

import invocables.descriptors.__ as __
import invocables.descriptors.reading as _reading
import invocables.exceptions as _exceptions
import invocables.schemata as _schemata


_D = __.typx.TypeVar( '_D' )

_BITS_SHOWN_MAXIMUM = 64 # bits of an integer repeated in a message
_REQUIRED: __.typx.Any = object( )
_TEXT_SHOWN_MAXIMUM = 60 # characters of a string repeated in a message
_labels = {
    bool: 'a boolean (true or false)',
    dict: 'a table',
    float: 'a number',
    int: 'an integer',
    list: 'an array',
    str: 'a string',
}


class Table:
    ''' Keys of one table, read and checked; unknown keys are refused. '''

    def __init__(
        self,
        location: str,
        keypath: str,
        table: __.cabc.Mapping[ str, __.typx.Any ],
    ):
        self.location = location
        self.keypath = keypath
        self.table = table
        self._keys: set[ str ] = set( )

    def access(
        self, key: str, genus: type, default: object = _REQUIRED
    ) -> __.typx.Any:
        ''' Returns value of key if of genus; default if key is missing. '''
        self._keys.add( key )
        if key not in self.table:
            if default is _REQUIRED:
                self.fail(
                    key, "missing required key {key!r}: add {label}.".format(
                        key = key, label = _labels.get( genus, 'it' ) ) )
            return default
        value = self.table[ key ]
        if not _is_of_genus( value, genus ):
            self.fail(
                key, "expected {label}, got {value}; correct the "
                "value.".format(
                    label = _labels.get( genus, genus.__name__ ),
                    value = _describe( value ) ) )
        return value

    def access_schema(
        self, key: str, name: str, *, required: bool = True
    ) -> __.typx.Any:
        ''' Returns JSON Schema from table or from JSON text. '''
        default = _schemata.access_schema_empty( ) if required else __.absent
        value = self.access( key, object, default = default )
        if value is default: return value
        if isinstance( value, str ):
            value = _reading.parse_json(
                self.location, self.produce_keypath( key ), value,
                remedy = "give the schema as a table or as JSON text." )
        if not isinstance( value, __.cabc.Mapping ):
            self.fail(
                key, "expected a table holding a JSON Schema, got {value}; "
                "write [{key}] with type = 'object'.".format(
                    value = _describe( value ), key = key ) )
        value_ = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value )
        _reading.validate_document(
            self.location, self.produce_keypath( key ), value_,
            finite = True )
        try: schema = _schemata.validate_schema( name, value_ )
        except _exceptions.SchemaInvalidity as exception:
            self.fail(
                key, f"not a valid JSON Schema: {exception.reason} Correct "
                "the schema (JSON Schema Draft 2020-12, an object).",
                cause = exception )
        except RecursionError as exception:
            self.fail(
                key, "the schema nests too deeply to be checked; flatten "
                "it.", cause = exception )
        return __.types.MappingProxyType(
            dict( __.typx.cast( __.Schema, schema ) ) )

    def access_strings(
        self, key: str, default: _D = _REQUIRED
    ) -> tuple[ str, ... ] | _D:
        ''' Returns array of strings. '''
        value = self.access( key, list, default = default )
        if value is default: return default
        items = __.typx.cast( list[ object ], value )
        for index, item in enumerate( items ):
            if not isinstance( item, str ):
                self.fail(
                    f"{key}[{index}]", "expected a string, got {item}; "
                    "quote the value.".format( item = _describe( item ) ) )
        return tuple( __.typx.cast( list[ str ], items ) )

    def access_strings_mapping(
        self, key: str
    ) -> __.immut.Dictionary[ str, str ]:
        ''' Returns table of strings (empty if missing). '''
        value = self.access( key, dict, default = { } )
        items = __.typx.cast( dict[ str, object ], value )
        for name, item in items.items( ):
            if not isinstance( item, str ):
                self.fail(
                    f"{key}.{name}", "expected a string, got {item}; quote "
                    "the value (write 'env:NAME' to read an environment "
                    "variable).".format( item = _describe( item ) ) )
        return __.immut.Dictionary( __.typx.cast( dict[ str, str ], items ) )

    def access_table(
        self, key: str, default: _D = _REQUIRED
    ) -> 'Table | _D':
        ''' Returns subtable as table reader. '''
        value = self.access( key, dict, default = default )
        if value is default: return default
        return Table(
            self.location, self.produce_keypath( key ),
            __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value ) )

    def access_tables(
        self, key: str, default: _D = _REQUIRED
    ) -> tuple[ 'Table', ... ] | _D:
        ''' Returns array of tables as table readers. '''
        value = self.access( key, list, default = default )
        if value is default: return default
        tables: list[ Table ] = [ ]
        path = self.produce_keypath( key )
        for index, item in enumerate( __.typx.cast( list[ object ], value ) ):
            keypath = f"{path}[{index}]"
            if not isinstance( item, __.cabc.Mapping ):
                self.fail(
                    f"{key}[{index}]", "expected a table, got {item}; write "
                    "[[{key}]] entries.".format(
                        item = _describe( item ), key = key ) )
            tables.append( Table(
                self.location, keypath,
                __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], item ) ) )
        return tuple( tables )

    def access_bounded_timeout( self, key: str ) -> __.Absential[ float ]:
        ''' Returns positive, finite number of seconds. '''
        return __.typx.cast(
            __.Absential[ float ], self.access_timeout( key ) )

    def access_timeout(
        self, key: str, *, unbounded: bool = False
    ) -> __.Absential[ float | None ]:
        ''' Returns positive number of seconds; ``inf`` means no limit. '''
        value = self.access( key, float, default = __.absent )
        if __.is_absent( value ): return value
        if value == float( 'inf' ) and unbounded: return None
        if not __.values.is_timeout( value ):
            self.fail(
                key, "expected a positive number of seconds{extra}, got "
                "{value}.".format(
                    extra = " (or inf for no limit)" if unbounded else '',
                    value = _describe( value ) ) )
        return float( value )

    def fail(
        self,
        key: str,
        reason: str,
        cause: __.Absential[ BaseException ] = __.absent,
    ) -> __.typx.NoReturn:
        ''' Raises descriptor error at key of table. '''
        error = _exceptions.DescriptorInvalidity(
            self.location, self.produce_keypath( key ), reason )
        if __.is_absent( cause ): raise error
        raise error from cause

    def finish( self ) -> None:
        ''' Refuses keys which were not read, suggesting known ones. '''
        unknown: list[ object ] = [
            key for key in self.table if key not in self._keys ]
        if not unknown: return
        key = unknown[ 0 ]
        if not isinstance( key, str ):
            self.fail(
                '', f"key {key!r} is not a string; name keys with "
                "strings." )
        if len( key ) > _TEXT_SHOWN_MAXIMUM: # shown cut, with no guess
            self.fail(
                '', "unknown key {key}. The keys allowed here are {known}; "
                "remove it.".format(
                    key = _describe_scalar( key ),
                    known = ', '.join( sorted( self._keys ) ) or 'none' ) )
        self.fail(
            key, "unknown key {key!r}.{hint} The keys allowed here are "
            "{known}; remove it or correct its spelling.".format(
                key = key, hint = suggest_key( key, self._keys ),
                known = ', '.join( sorted( self._keys ) ) or 'none' ) )

    def produce_keypath( self, key: str ) -> str:
        ''' Returns key path of key within table. '''
        if not key: return self.keypath
        if not self.keypath: return key
        if key.startswith( '[' ): return f"{self.keypath}{key}"
        return f"{self.keypath}.{key}"


def suggest_key( key: str, known: __.cabc.Iterable[ str ] ) -> str:
    ''' Returns " Did you mean ...?" for close known key, or nothing. '''
    matches = _get_close_matches( key, sorted( known ), n = 1 )
    if not matches: return ''
    return f" Did you mean {matches[ 0 ]!r}?"


def _describe( value: object ) -> str:
    if isinstance( value, bool ): return 'boolean true' if value else (
        'boolean false' )
    if isinstance( value, ( int, float, str ) ):
        return _describe_scalar( value )
    if isinstance( value, ( list, tuple ) ): return 'an array'
    if isinstance( value, __.cabc.Mapping ): return 'a table'
    return type( value ).__name__


def _describe_scalar( value: float | str ) -> str:
    ''' Describes number or string, shortly even if it is huge. '''
    if isinstance( value, int ) and value.bit_length( ) > _BITS_SHOWN_MAXIMUM:
        return 'a very large integer'
    if isinstance( value, str ) and len( value ) > _TEXT_SHOWN_MAXIMUM:
        return "string {head!r}... ({size} characters)".format(
            head = value[ : _TEXT_SHOWN_MAXIMUM ], size = len( value ) )
    genus = type( value ).__name__
    return f"{genus} {value!r}"


def _is_of_genus( value: object, genus: type ) -> bool:
    if genus is object: return True
    if genus is dict: return isinstance( value, __.cabc.Mapping )
    if genus is list: return isinstance( value, ( list, tuple ) )
    if genus in ( int, float ) and isinstance( value, bool ): return False
    if genus is float: return isinstance( value, ( int, float ) )
    return isinstance( value, genus )
