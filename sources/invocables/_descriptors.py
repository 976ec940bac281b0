# SPDX-License-Identifier: Apache-2.0

''' Records of descriptors; reading and checking files, key by key.

    Every failure raises :py:class:`invocables.exceptions.DescriptorInvalidity`
    with the file, the key path (``invokers[2].source``) and the fix.
'''


import errno as _errno
import math as _math
import os as _os
import stat as _stat

from difflib import get_close_matches as _get_close_matches
from os import PathLike as _PathLike
from os import fspath as _fspath
from importlib import import_module as _import_module

from . import __
from . import deduplicators as _deduplicators
from . import exceptions as _exceptions
from . import schemata as _schemata
from ._documents import parse_json as _parse_json
from ._documents import validate_document as _validate_document


_D = __.typx.TypeVar( '_D' )

_BITS_SHOWN_MAXIMUM = 64 # bits of an integer repeated in a message
_REQUIRED: __.typx.Any = object( )
_absence = object( )
_TEXT_SHOWN_MAXIMUM = 60 # characters of a string repeated in a message
_labels = {
    bool: 'a boolean (true or false)',
    dict: 'a table',
    float: 'a number',
    int: 'an integer',
    list: 'an array',
    str: 'a string',
}


class Root( __.immut.DataclassObject ):
    ''' Folder which file tools may touch, and what they may do there.

        ``writable`` lets them write; ``hard_links`` lets them read regular
        files which have more than one hard link (such a file may be the
        same file as one outside of the roots).
    '''

    path: __.Path
    writable: bool = False
    hard_links: bool = False


class ServerDescriptor( __.immut.DataclassObject ):
    ''' Validated ``[mcp]`` table: how to reach one MCP server. '''

    transport: str
    command: tuple[ str, ... ] = ( )
    environment: __.cabc.Mapping[ str, str ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, str ] )
    cwd: __.Absential[ __.Path ] = __.absent
    url: __.Absential[ str ] = __.absent
    headers: __.cabc.Mapping[ str, str ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, str ] )
    startup_timeout: __.Absential[ float ] = __.absent
    tool_timeout: __.Absential[ float ] = __.absent
    enabled_tools: __.Absential[ tuple[ str, ... ] ] = __.absent
    disabled_tools: tuple[ str, ... ] = ( )


class InvokerDescriptor( __.immut.DataclassObject ):
    ''' Validated invoker descriptor. '''

    name: str
    location: str
    enabled: bool = True
    description: str = ''
    argschema: __.Schema = __.dcls.field(
        default_factory = _schemata.access_schema_empty )
    outschema: __.Absential[ __.Schema ] = __.absent
    implementation: __.Absential[ str ] = __.absent
    function: __.Absential[ __.cabc.Callable[ ..., __.typx.Any ] ] = (
        __.absent )
    timeout: __.Absential[ float | None ] = __.absent
    deduplicate: bool = False
    annotations: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )


class EnsembleDescriptor( __.immut.DataclassObject ):
    ''' Validated ensemble descriptor: local tools or an MCP server. '''

    name: str
    location: str
    enabled: bool = True
    description: str = ''
    timeout: __.Absential[ float | None ] = __.absent
    configuration: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )
    invokers: tuple[ InvokerDescriptor, ... ] = ( )
    server: __.Absential[ ServerDescriptor ] = __.absent
    keypath: str = 'ensemble.name' # where the name is, for errors


class Configuration( __.immut.DataclassObject ):
    ''' Validated configuration: ensemble descriptors and roots. '''

    location: str
    ensembles: tuple[ EnsembleDescriptor, ... ] = ( )
    roots: tuple[ Root, ... ] = ( )

    def access_ensemble( self, name: str ) -> EnsembleDescriptor:
        ''' Returns ensemble descriptor by name, enabled or not. '''
        for ensemble in self.ensembles:
            if ensemble.name == name: return ensemble
        raise _exceptions.EnsembleAbsence( name )


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

    def access_name( self, key: str, pattern: __.re.Pattern[ str ] ) -> str:
        ''' Returns name which matches pattern. '''
        name = self.access( key, str )
        if not pattern.fullmatch( name ):
            self.fail(
                key, "name {name!r} is not allowed; use letters, digits, "
                "'_' and '-' only (pattern {pattern}).".format(
                    name = name, pattern = pattern.pattern ) )
        return name

    def access_schema(
        self, key: str, name: str, *, required: bool = True
    ) -> __.typx.Any:
        ''' Returns JSON Schema from table or from JSON text. '''
        default = _schemata.access_schema_empty( ) if required else __.absent
        value = self.access( key, object, default = default )
        if value is default: return value
        if isinstance( value, str ):
            value = _parse_json(
                self.location, self.produce_keypath( key ), value,
                remedy = "give the schema as a table or as JSON text." )
        if not isinstance( value, __.cabc.Mapping ):
            self.fail(
                key, "expected a table holding a JSON Schema, got {value}; "
                "write [{key}] with type = 'object'.".format(
                    value = _describe( value ), key = key ) )
        value_ = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value )
        _validate_document(
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
        for index, item in enumerate( __.typx.cast( list[ object ], value ) ):
            keypath = "{path}[{index}]".format(
                path = self.produce_keypath( key ), index = index )
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
        try: seconds = float( value )
        except OverflowError: seconds = _math.nan # integer beyond floats
        if not 0 < seconds < _math.inf:
            self.fail(
                key, "expected a positive number of seconds{extra}, got "
                "{value}.".format(
                    extra = " (or inf for no limit)" if unbounded else '',
                    value = _describe( value ) ) )
        return seconds

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


def access_data_location( ) -> __.Path:
    ''' Returns folder of data shipped with the package.

        Installed packages hold it as ``invocables/data``; editable
        installs use the ``data`` folder of the repository.
    '''
    package = __.Path( __file__ ).resolve( ).parent
    installed = package / 'data'
    if installed.is_dir( ): return installed
    return package.parent.parent / 'data'


def produce_deduplicator(
    descriptor: InvokerDescriptor
) -> __.Absential[ _deduplicators.Deduplicator ]:
    ''' Returns exact deduplicator if descriptor asks for deduplication. '''
    if descriptor.deduplicate: return _deduplicators.ExactDeduplicator( )
    return __.absent


def import_function(
    header: Table, implementation: str
) -> __.cabc.Callable[ ..., __.typx.Any ]:
    ''' Imports implementation; checks that it takes two arguments. '''
    module_name, attributes = implementation.split( ':', 1 )
    # A module may exit the program (SystemExit) when imported.
    try: value: object = _import_module( module_name )
    except ( Exception, SystemExit ) as exception:
        header.fail(
            'implementation', f"cannot import module {module_name!r} "
            f"({exception!r}); check the module name, that its package is "
            "installed and that importing it succeeds.", cause = exception )
    for attribute in attributes.split( '.' ):
        try: value = getattr( value, attribute, _absence )
        except Exception as exception:
            header.fail(
                'implementation', f"reading {attribute!r} of "
                f"{module_name!r} raised {exception!r}; name another "
                "function.", cause = exception )
        if value is _absence:
            header.fail(
                'implementation', f"module {module_name!r} has no "
                f"{attributes!r}; check the name after the colon." )
    if not callable( value ):
        header.fail(
            'implementation', f"{implementation!r} is not callable; name "
            "a function taking ( context, arguments )." )
    _validate_signature( header, implementation, value )
    return value


def complete_function( descriptor: InvokerDescriptor ) -> InvokerDescriptor:
    ''' Returns descriptor with implementation imported, if not yet.

        Descriptors of disabled ensembles and tools are loaded without
        importing their implementations.
    '''
    if not __.is_absent( descriptor.function ): return descriptor
    if __.is_absent( descriptor.implementation ): return descriptor
    header = Table( descriptor.location, 'invoker', { } )
    function = import_function( header, descriptor.implementation )
    return __.dcls.replace( descriptor, function = function )


def produce_mapping_frozen(
    mapping: __.cabc.Mapping[ str, __.typx.Any ]
) -> __.immut.Dictionary[ str, __.typx.Any ]:
    ''' Returns read-only copy of mapping (shallow). '''
    return __.immut.Dictionary( mapping )


def resolve_source(
    table: Table, key: str, folder: __.Path, *, confined: bool = True
) -> __.Path:
    ''' Returns path of existing file named relative to folder.

        Refuses absolute paths and paths which leave the folder, also
        through symbolic links, unless not confined (a mapping made by an
        application may name any file, also as a path object).
    '''
    if not confined:
        value = table.access( key, object )
        if isinstance( value, _PathLike ):
            value = _fspath( __.typx.cast( _PathLike[ str ], value ) )
        if not isinstance( value, str ):
            table.fail( key, "expected a string holding a path." )
        source = expand_path( table, key, value )
        path = resolve_path( table, key, folder / source )
        return _validate_file( table, key, path )
    source = table.access( key, str )
    if __.Path( source ).is_absolute( ) or source.startswith( '~' ):
        table.fail(
            key, f"{source!r} is absolute; give a path relative to the "
            f"folder '{folder}'." )
    base = resolve_path( table, key, folder )
    path = resolve_path( table, key, base / source )
    if path != base and base not in path.parents:
        table.fail(
            key, f"{source!r} leaves the folder '{base}'; keep "
            "descriptors inside the folder of the file which names them." )
    return _validate_file( table, key, path )


def expand_path( table: Table, key: str, value: str ) -> __.Path:
    ''' Returns path with home folder (``~``) expanded. '''
    try: return __.Path( value ).expanduser( )
    except RuntimeError as exception: # no such user, no home
        table.fail(
            key, f"cannot expand {value!r} ({exception}); give a full "
            "path.", cause = exception )


def resolve_path( table: Table, key: str, path: __.Path ) -> __.Path:
    ''' Returns path with symbolic links and ``..`` resolved.

        Refuses paths which hold NUL characters or loops of links.
    '''
    try: resolved = __.Path( _os.path.realpath( path ) )
    except ( OSError, ValueError ) as exception:
        table.fail(
            key, f"path '{path}' is not valid ({exception}); correct it.",
            cause = exception )
    try: _os.stat( resolved )
    except OSError as exception:
        if exception.errno == _errno.ELOOP:
            table.fail(
                key, f"path '{path}' is a loop of symbolic links; correct "
                "the links or the path.", cause = exception )
        if exception.errno == _errno.ENAMETOOLONG:
            table.fail(
                key, "a name in the path is longer than the file system "
                "allows; correct the path.", cause = exception )
    return resolved


def probe_folder( path: __.Path ) -> bool:
    ''' Returns whether path is a folder; false if it cannot be told. '''
    try: return _stat.S_ISDIR( _os.stat( path ).st_mode )
    except ( OSError, ValueError ): return False


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


def _validate_file( table: Table, key: str, path: __.Path ) -> __.Path:
    try: status = _os.stat( path )
    except OSError:
        table.fail(
            key, f"file '{path}' does not exist; create it or "
            "correct the path (relative to the folder of this file)." )
    if not _stat.S_ISREG( status.st_mode ):
        table.fail(
            key, f"'{path}' is not a regular file (a folder, pipe or "
            "device); name a descriptor file." )
    return path


def _validate_signature(
    header: Table, implementation: str, function: object
) -> None:
    ''' Refuses callables which cannot take ( context, arguments ). '''
    if __.inspect.isgeneratorfunction( function ) or (
        __.inspect.isasyncgenfunction( function )
    ):
        header.fail(
            'implementation', f"{implementation!r} is a generator; an "
            "implementation returns its result (with return, not "
            "yield)." )
    try: signature = __.inspect.signature(
        __.typx.cast( __.cabc.Callable[ ..., __.typx.Any ], function ) )
    except ( TypeError, ValueError ): return # no signature to check
    try: signature.bind( None, None )
    except TypeError:
        header.fail(
            'implementation', f"{implementation!r} has the signature "
            f"{signature}, which cannot take ( context, arguments ); "
            "name a function with these two positional parameters." )
