# SPDX-License-Identifier: Apache-2.0

''' MCP servers of descriptors: the common JSON, and their ensembles.

    The ``mcp`` subpackage (and the ``mcp`` SDK) is imported only when an
    ensemble of a server is produced.
'''


from . import __
from . import exceptions as _exceptions


_ENVIRONMENT_PREFIX = 'env:'
_name_server = __.re.compile( r'^[a-zA-Z0-9_-]{1,64}$' )
_reference = __.re.compile( r'^\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}$' )
_keys_ignored = frozenset( (
    'alwaysAllow', 'autoApprove', 'description', 'disabledTools',
    'timeout',
) )
_transports = __.immut.Dictionary( {
    'stdio': 'stdio',
    'http': 'http',
    'streamable-http': 'http',
    'streamableHttp': 'http',
    'sse': 'sse',
} )

_Entry: __.typx.TypeAlias = tuple[
    str, str, __.cabc.Mapping[ str, __.typx.Any ] ]


def produce_server_ensemble( descriptor: __.typx.Any ) -> __.typx.Any:
    ''' Produces unconnected ensemble of MCP server from its descriptor.

        The per-call timeout is ``tool_timeout`` of ``[mcp]``, else
        ``timeout`` of ``[defaults]``; pinned tools may have their own.
    '''
    name = descriptor.name
    try: from . import mcp as _mcp
    except ImportError as exception:
        raise _exceptions.ConfigurationInvalidity(
            f"ensemble {name!r}",
            f"MCP servers need the 'mcp' extra ({exception}); install "
            "'invocables[mcp]'." ) from exception
    server = descriptor.server
    options: dict[ str, __.typx.Any ] = { }
    if server.transport == 'stdio':
        options.update(
            transport = 'stdio', command = list( server.command ),
            environment = dict( server.environment ) )
        if not __.is_absent( server.cwd ): options[ 'cwd' ] = server.cwd
    else:
        options.update(
            transport = (
                'streamable-http' if server.transport == 'http'
                else server.transport ),
            url = server.url, headers = dict( server.headers ) )
    options.update( _produce_lifecycle_options( descriptor ) )
    return _mcp.produce_ensemble(
        name, description = descriptor.description, ** options )


def survey_servers(
    location: str, document: __.cabc.Mapping[ str, __.typx.Any ]
) -> tuple[ _Entry, ... ]:
    ''' Returns name, key path and ``[mcp]`` table of each server in JSON.

        The tables use the vocabulary of descriptors; ``disabled`` is
        kept as given.
    '''
    key = next(
        ( key for key in ( 'mcpServers', 'servers' ) if key in document ),
        None )
    if key is None or not isinstance( document[ key ], __.cabc.Mapping ):
        raise _exceptions.DescriptorInvalidity(
            location, 'mcpServers', "expected an object 'mcpServers' "
            "mapping server names to servers, as other MCP clients write." )
    servers = __.typx.cast(
        __.cabc.Mapping[ str, __.typx.Any ], document[ key ] )
    entries: list[ _Entry ] = [ ]
    for name, server in servers.items( ):
        keypath = f"{key}.{name}"
        if not _name_server.match( name ):
            raise _exceptions.DescriptorInvalidity(
                location, keypath, f"server name {name!r} is not allowed; "
                "use letters, digits, '_' and '-' only." )
        if not isinstance( server, __.cabc.Mapping ):
            raise _exceptions.DescriptorInvalidity(
                location, keypath, "expected an object with 'command' or "
                "'url'." )
        entries.append( ( name, keypath, _translate_server(
            location, keypath,
            __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], server ) ) ) )
    return tuple( entries )


def _produce_lifecycle_options(
    descriptor: __.typx.Any
) -> dict[ str, __.typx.Any ]:
    server = descriptor.server
    options: dict[ str, __.typx.Any ] = { }
    if not __.is_absent( server.startup_timeout ):
        options[ 'connect_timeout' ] = server.startup_timeout
    timeout = (
        descriptor.timeout if __.is_absent( server.tool_timeout )
        else server.tool_timeout )
    if not __.is_absent( timeout ): options[ 'timeout' ] = timeout
    timeouts = {
        invoker.name: invoker.timeout for invoker in descriptor.invokers
        if not __.is_absent( invoker.timeout ) }
    if timeouts: options[ 'timeouts' ] = timeouts
    if not __.is_absent( server.enabled_tools ):
        options[ 'include' ] = server.enabled_tools
    if server.disabled_tools: options[ 'exclude' ] = server.disabled_tools
    return options


def _translate_reference( value: object ) -> object:
    if not isinstance( value, str ): return value
    match = _reference.match( value )
    if match is None: return value
    return f"{_ENVIRONMENT_PREFIX}{match[ 1 ]}"


def _translate_server(
    location: str,
    keypath: str,
    server: __.cabc.Mapping[ str, __.typx.Any ],
) -> dict[ str, __.typx.Any ]:
    table: dict[ str, __.typx.Any ] = { }
    for key, value in server.items( ):
        match key:
            case 'command':
                table[ 'command' ] = [ value, * table.get( 'command', [ ] ) ]
            case 'args':
                if not isinstance( value, list ):
                    raise _exceptions.DescriptorInvalidity(
                        location, f"{keypath}.args",
                        "expected an array of strings." )
                table[ 'command' ] = [
                    * table.get( 'command', [ ] ),
                    * __.typx.cast( list[ object ], value ) ]
            case 'env' | 'headers':
                table[ 'environment' if key == 'env' else key ] = (
                    _translate_strings( value ) )
            case 'type' | 'transport':
                table[ 'transport' ] = _transports.get( value, value )
            case 'cwd' | 'url' | 'disabled':
                table[ key ] = value
            case _ if key in _keys_ignored: pass
            case _:
                raise _exceptions.DescriptorInvalidity(
                    location, f"{keypath}.{key}",
                    f"unknown key {key!r}; the keys understood are command, "
                    "args, env, cwd, url, headers, type and disabled. Remove "
                    "it." )
    if 'args' in server and 'command' not in server:
        raise _exceptions.DescriptorInvalidity(
            location, f"{keypath}.command",
            "'args' without 'command'; add the program as 'command'." )
    return table


def _translate_strings( value: object ) -> object:
    if not isinstance( value, __.cabc.Mapping ): return value
    mapping = __.typx.cast( __.cabc.Mapping[ str, object ], value )
    return {
        key: _translate_reference( item ) for key, item in mapping.items( ) }
