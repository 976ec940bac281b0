# SPDX-License-Identifier: Apache-2.0

''' The common ``mcpServers`` JSON which other MCP clients write, read as
    ``[mcp]`` tables of descriptors; and the one table of transports.
'''


import invocables.descriptors.__ as __
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
from .tables import suggest_key as _suggest_key


_Entry: __.typx.TypeAlias = tuple[
    str, str, __.cabc.Mapping[ str, __.typx.Any ] ]
# The one table of transports: by each name which descriptors and the common
# JSON give one, the transport of descriptors and that of the mcp subpackage.
TRANSPORTS = __.immut.Dictionary( {
    'stdio': ( 'stdio', 'stdio' ),
    'http': ( 'http', 'streamable-http' ),
    'streamable-http': ( 'http', 'streamable-http' ),
    'streamableHttp': ( 'http', 'streamable-http' ),
    'sse': ( 'sse', 'sse' ),
} )
_reference = __.re.compile( r'^\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}$' )
# A whole part of a URL (user, password, path segment, query value) only:
# '${A}x' is not 'env:Ax', a variable of another name.
_reference_embedded = __.re.compile(
    r'(?<![^/:@=])\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}(?![^/?#&@:])' )
_keys_aliased = __.immut.Dictionary( {
    'resourcesAsTools': 'resources_as_tools' } )
_keys_ignored = frozenset( (
    'alwaysAllow', 'autoApprove', 'description', 'disabledTools',
    'timeout',
) )
# Keys of a server in the common JSON: the kind of value and its label.
_keys_understood: __.immut.Dictionary[
    str, tuple[ type | tuple[ type, ... ], str ]
] = __.immut.Dictionary( {
    'command': ( str, 'a string (the program)' ),
    'args': ( list, 'an array of strings' ),
    'env': ( __.cabc.Mapping, 'an object of strings' ),
    'cwd': ( str, 'a string (a folder)' ),
    'url': ( str, 'a string (a URL)' ),
    'headers': ( __.cabc.Mapping, 'an object of strings' ),
    'type': ( str, 'a string (stdio, http or sse)' ),
    'transport': ( str, 'a string (stdio, http or sse)' ),
    'disabled': ( bool, 'true or false' ),
    'authorization': ( __.cabc.Mapping, 'an object with \'kind\'' ),
    'resourcesAsTools': ( bool, 'true or false' ),
    'resources_as_tools': ( bool, 'true or false' ),
    'sandbox': ( ( bool, __.cabc.Mapping ), 'true, false or an object' ),
} )
_json_labels: tuple[ tuple[ type | tuple[ type, ... ], str ], ... ] = (
    ( bool, 'a boolean' ),
    ( ( int, float ), 'a number' ),
    ( str, 'a string' ),
    ( ( list, tuple ), 'an array' ),
    ( __.cabc.Mapping, 'an object' ),
)


def survey_servers(
    location: str, document: __.cabc.Mapping[ str, __.typx.Any ]
) -> tuple[ _Entry, ... ]:
    ''' Returns name, key path and ``[mcp]`` table of each server in JSON.

        The tables use the vocabulary of descriptors; ``disabled`` is
        kept as given.
    '''
    keys = [ key for key in ( 'mcpServers', 'servers' ) if key in document ]
    if len( keys ) > 1:
        raise _exceptions.DescriptorInvalidity(
            location, 'servers', "both 'mcpServers' and 'servers' are "
            "given, and only one is read; move the servers into one." )
    key = keys[ 0 ] if keys else None
    if key is None or not isinstance( document[ key ], __.cabc.Mapping ):
        raise _exceptions.DescriptorInvalidity(
            location, 'mcpServers', "expected an object 'mcpServers' "
            "mapping server names to servers, as other MCP clients write." )
    servers = __.typx.cast(
        __.cabc.Mapping[ str, __.typx.Any ], document[ key ] )
    entries: list[ _Entry ] = [ ]
    for name, server in servers.items( ):
        keypath = f"{key}.{name}"
        flaw = _invokers.access_name_flaw( name )
        if flaw is not None:
            raise _exceptions.DescriptorInvalidity(
                location, keypath, "server name {label!r} is not allowed: "
                "{flaw}.".format(
                    label = _invokers.produce_name_label( name ),
                    flaw = flaw ) )
        if not isinstance( server, __.cabc.Mapping ):
            raise _exceptions.DescriptorInvalidity(
                location, keypath, "expected an object with 'command' or "
                "'url'." )
        entries.append( ( name, keypath, _translate_server(
            location, keypath,
            __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], server ) ) ) )
    return tuple( entries )


def _translate_reference( value: object ) -> object:
    if not isinstance( value, str ): return value
    match = _reference.match( value )
    if match is None: return value
    return __.ENVIRONMENT_PREFIX + match[ 1 ]


def _translate_references( value: object ) -> object:
    ''' Translates ``${NAME}`` references of an object (checked). '''
    mapping = __.typx.cast( __.cabc.Mapping[ str, object ], value )
    return {
        key: _translate_reference( item ) for key, item in mapping.items( ) }


def _translate_server(
    location: str,
    keypath: str,
    server: __.cabc.Mapping[ str, __.typx.Any ],
) -> dict[ str, __.typx.Any ]:
    table: dict[ str, __.typx.Any ] = { }
    for key, value in server.items( ):
        _validate_server_value( location, keypath, key, value )
        match key:
            case 'command':
                table[ 'command' ] = [ value, * table.get( 'command', [ ] ) ]
            case 'args':
                table[ 'command' ] = [
                    * table.get( 'command', [ ] ),
                    * __.typx.cast( list[ object ], value ) ]
            case 'env' | 'headers':
                table[ 'environment' if key == 'env' else key ] = (
                    _translate_references( value ) )
            case 'type' | 'transport':
                if value not in TRANSPORTS:
                    raise _exceptions.DescriptorInvalidity(
                        location, f"{keypath}.{key}",
                        "unknown transport {value!r}; use one of "
                        "{known}.".format(
                            value = value,
                            known = ', '.join( TRANSPORTS ) ) )
                table[ 'transport' ] = TRANSPORTS[ value ][ 0 ]
            case 'url':
                table[ key ] = _translate_url( value )
            case 'cwd' | 'disabled' | 'resourcesAsTools' | (
                'resources_as_tools'
            ) | 'sandbox': table[ _keys_aliased.get( key, key ) ] = value
            case 'authorization': # expose
                table[ key ] = _translate_references( value )
            case _ if key in _keys_ignored: pass
            case _:
                raise _exceptions.DescriptorInvalidity(
                    location, f"{keypath}.{key}",
                    "unknown key {key!r}.{hint} The keys understood are "
                    "command, args, env, cwd, url, headers, type, "
                    "authorization, resourcesAsTools, sandbox and "
                    "disabled; remove it or correct its spelling.".format(
                        key = key,
                        hint = _suggest_key( key, _keys_understood ) ) )
    if 'args' in server and 'command' not in server:
        raise _exceptions.DescriptorInvalidity(
            location, f"{keypath}.command",
            "'args' without 'command'; add the program as 'command'." )
    return table


def _translate_url( value: object ) -> object:
    ''' Translates ``${NAME}`` standing for a whole user, password, path
        segment or query value of URL; leaves others, which connecting
        refuses.
    '''
    if not isinstance( value, str ): return value
    return _reference_embedded.sub(
        lambda match: __.ENVIRONMENT_PREFIX + match[ 1 ], value )


def _validate_server_value(
    location: str, keypath: str, key: str, value: object
) -> None:
    ''' Refuses value of the wrong kind for a key of the common JSON. '''
    if key not in _keys_understood: return
    genus, label = _keys_understood[ key ]
    if not isinstance( value, genus ) or (
        bool is not genus and isinstance( value, bool )
        and not ( isinstance( genus, tuple ) and bool in genus )
    ):
        raise _exceptions.DescriptorInvalidity(
            location, f"{keypath}.{key}",
            f"expected {label}, got {_describe_json( value )}; correct the "
            "value." )
    if isinstance( value, list ):
        items = __.typx.cast( list[ object ], value )
        for index, item in enumerate( items ):
            if not isinstance( item, str ):
                raise _exceptions.DescriptorInvalidity(
                    location, f"{keypath}.{key}[{index}]",
                    f"expected a string, got {_describe_json( item )}; "
                    "quote the value." )
    if isinstance( value, __.cabc.Mapping ) and key not in (
        'authorization', 'sandbox'
    ):
        mapping = __.typx.cast( __.cabc.Mapping[ object, object ], value )
        for name, item in mapping.items( ):
            if not isinstance( item, str ):
                raise _exceptions.DescriptorInvalidity(
                    location, f"{keypath}.{key}.{name}",
                    f"expected a string, got {_describe_json( item )}; "
                    "quote the value." )


def _describe_json( value: object ) -> str:
    if value is None: return 'null'
    return next(
        ( label for genus, label in _json_labels
          if isinstance( value, genus ) ),
        type( value ).__name__ )
