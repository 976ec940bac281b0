# SPDX-License-Identifier: Apache-2.0

''' MCP servers of descriptors: the common JSON, and their ensembles.

    The ``mcp`` subpackage (and the ``mcp`` SDK) is imported only when an
    ensemble of a server is produced.
'''


from . import __
from . import ensembles as _ensembles
from . import exceptions as _exceptions
from . import invokers as _invokers
from ._descriptors import (
    EnsembleDescriptor,
    InvokerDescriptor,
    ServerDescriptor,
    Table,
    expand_path,
    probe_folder,
    produce_deduplicator,
    resolve_path,
    suggest_key,
)


TRANSPORTS = ( 'stdio', 'http', 'sse' )
TRANSPORT_ALIASES = __.immut.Dictionary( { 'streamable-http': 'http' } )

_ENVIRONMENT_PREFIX = 'env:'
# Matched whole (fullmatch): '$' would also accept a final newline.
name_tool = __.re.compile( r'[a-zA-Z0-9_./-]{1,128}' )
_name_server = __.re.compile( r'[a-zA-Z0-9_-]{1,64}' )
_reference = __.re.compile( r'^\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}$' )
_reference_embedded = __.re.compile(
    r'\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}' )
_keys_ignored = frozenset( (
    'alwaysAllow', 'autoApprove', 'description', 'disabledTools',
    'timeout',
) )
# Keys of a server in the common JSON: the kind of value and its label.
_keys_understood = __.immut.Dictionary( {
    'command': ( str, 'a string (the program)' ),
    'args': ( list, 'an array of strings' ),
    'env': ( __.cabc.Mapping, 'an object of strings' ),
    'cwd': ( str, 'a string (a folder)' ),
    'url': ( str, 'a string (a URL)' ),
    'headers': ( __.cabc.Mapping, 'an object of strings' ),
    'type': ( str, 'a string (stdio, http or sse)' ),
    'transport': ( str, 'a string (stdio, http or sse)' ),
    'disabled': ( bool, 'true or false' ),
} )
_json_labels: tuple[ tuple[ type | tuple[ type, ... ], str ], ... ] = (
    ( bool, 'a boolean' ),
    ( ( int, float ), 'a number' ),
    ( str, 'a string' ),
    ( ( list, tuple ), 'an array' ),
    ( __.cabc.Mapping, 'an object' ),
)
_transports = __.immut.Dictionary( {
    'stdio': 'stdio',
    'http': 'http',
    'streamable-http': 'http',
    'streamableHttp': 'http',
    'sse': 'sse',
} )

_Entry: __.typx.TypeAlias = tuple[
    str, str, __.cabc.Mapping[ str, __.typx.Any ] ]


class PinnedEnsemble(
    _ensembles.EnsembleBase, instances_mutables = ( '_connected', )
):
    ''' MCP server ensemble whose tools are pinned by descriptors.

        It offers exactly the described tools, with their described names,
        descriptions and schemas, even before it is connected; calls go to
        the server's tools of the same names.
    '''

    def __init__(
        self,
        name: str,
        inner: _ensembles.Ensemble,
        invokers: __.cabc.Sequence[ InvokerDescriptor ],
        configuration: _ensembles.EnsembleConfiguration,
        server: ServerDescriptor,
        location: str,
    ):
        self.name = name
        # Under the engine, the timeouts of pinned tools are the engine's
        # to apply: the tool's own, else the server's, else the caller's.
        if not __.is_absent( server.tool_timeout ):
            configuration = __.dcls.replace(
                configuration, timeout = server.tool_timeout )
        self.configuration = configuration
        self.inner = inner
        self.server = server
        self.location = location
        self.descriptors = tuple( invokers )
        self._invokers = tuple(
            _produce_pinned_invoker( self, descriptor ).with_ensemble( self )
            for descriptor in invokers )
        self._invokers_by_name = __.types.MappingProxyType(
            { invoker.name: invoker for invoker in self._invokers } )
        self._connected = False

    def __repr__( self ) -> str:
        return "{cls}( name = {name!r}, invokers = {count} )".format(
            cls = type( self ).__name__, name = self.name,
            count = len( self._invokers ) )

    def access_invoker( self, name: str ) -> _invokers.Invoker:
        ''' Returns invoker by name. Raises absence error if unknown. '''
        try: return self._invokers_by_name[ name ]
        except KeyError as exception:
            raise _exceptions.InvokerAbsence(
                name, self.name ) from exception

    def is_connected( self ) -> bool:
        ''' Returns whether ensemble is connected. '''
        return self._connected and self.inner.is_connected( )

    def survey_invokers( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns pinned invokers, in order of descriptors. '''
        return self._invokers

    async def connect( self ) -> None:
        ''' Connects server; checks that it offers every pinned tool. '''
        await self.inner.connect( )
        offered = { invoker.name for invoker in self.inner.survey_invokers( ) }
        missing = [
            invoker.name for invoker in self._invokers
            if invoker.name not in offered ]
        if missing:
            await self.inner.disconnect( )
            raise _exceptions.DescriptorInvalidity(
                self.location, 'invokers',
                "MCP server {server!r} no longer offers pinned tool(s) "
                "{names}; delete their descriptors or take a new "
                "snapshot.".format(
                    server = self.name,
                    names = ', '.join( map( repr, missing ) ) ) )
        self._connected = True

    async def disconnect( self ) -> None:
        ''' Disconnects server. '''
        self._connected = False
        await self.inner.disconnect( )


def produce_server_ensemble(
    descriptor: EnsembleDescriptor
) -> _ensembles.Ensemble:
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
    server = __.typx.cast( ServerDescriptor, descriptor.server )
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


def produce_server_descriptor(
    table: Table, folder: __.Path
) -> ServerDescriptor:
    command = table.access_strings( 'command', default = ( ) )
    url = table.access( 'url', str, default = __.absent )
    transport = table.access(
        'transport', str,
        default = 'stdio' if command or __.is_absent( url ) else 'http' )
    transport = TRANSPORT_ALIASES.get( transport, transport )
    if transport not in TRANSPORTS:
        table.fail(
            'transport', "unknown transport {transport!r}; use one of "
            "{known}.".format(
                transport = transport, known = ', '.join( TRANSPORTS ) ) )
    environment = table.access_strings_mapping( 'environment' )
    cwd = table.access( 'cwd', str, default = __.absent )
    headers = table.access_strings_mapping( 'headers' )
    descriptor = ServerDescriptor(
        transport = transport, command = command,
        environment = environment,
        cwd = __.absent if __.is_absent( cwd ) else _resolve_cwd(
            table, cwd, folder ),
        url = url, headers = headers,
        startup_timeout = table.access_bounded_timeout( 'startup_timeout' ),
        tool_timeout = table.access_bounded_timeout( 'tool_timeout' ),
        enabled_tools = table.access_strings(
            'enabled_tools', default = __.absent ),
        disabled_tools = table.access_strings(
            'disabled_tools', default = ( ) ) )
    table.finish( )
    _validate_transport( table, descriptor )
    return descriptor


def produce_server_ensemble_descriptor(
    name: str, location: str, table: Table, folder: __.Path
) -> EnsembleDescriptor:
    enabled = not table.access( 'disabled', bool, default = False )
    descriptor = produce_server_descriptor( table, folder )
    return EnsembleDescriptor(
        name = name, location = location, enabled = enabled,
        server = descriptor, keypath = table.keypath )


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
        if not isinstance( name, str ) or not _name_server.fullmatch( name ):
            raise _exceptions.DescriptorInvalidity(
                location, keypath, f"server name {name!r} is not allowed; "
                "use letters, digits, '_' and '-' only (at most 64)." )
        if not isinstance( server, __.cabc.Mapping ):
            raise _exceptions.DescriptorInvalidity(
                location, keypath, "expected an object with 'command' or "
                "'url'." )
        entries.append( ( name, keypath, _translate_server(
            location, keypath,
            __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], server ) ) ) )
    return tuple( entries )


def _produce_lifecycle_options(
    descriptor: EnsembleDescriptor
) -> dict[ str, __.typx.Any ]:
    server = __.typx.cast( ServerDescriptor, descriptor.server )
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
    return _ENVIRONMENT_PREFIX + match[ 1 ]


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
                    _translate_strings( value ) )
            case 'type' | 'transport':
                if value not in _transports:
                    raise _exceptions.DescriptorInvalidity(
                        location, f"{keypath}.{key}",
                        "unknown transport {value!r}; use one of "
                        "{known}.".format(
                            value = value,
                            known = ', '.join( _transports ) ) )
                table[ 'transport' ] = _transports[ value ]
            case 'url':
                table[ key ] = _translate_url( value )
            case 'cwd' | 'disabled':
                table[ key ] = value
            case _ if key in _keys_ignored: pass
            case _:
                raise _exceptions.DescriptorInvalidity(
                    location, f"{keypath}.{key}",
                    "unknown key {key!r}.{hint} The keys understood are "
                    "command, args, env, cwd, url, headers, type and "
                    "disabled; remove it or correct its spelling.".format(
                        key = key,
                        hint = suggest_key( key, _keys_understood ) ) )
    if 'args' in server and 'command' not in server:
        raise _exceptions.DescriptorInvalidity(
            location, f"{keypath}.command",
            "'args' without 'command'; add the program as 'command'." )
    return table


def _translate_url( value: object ) -> object:
    ''' Translates ``${NAME}`` in URL (as a password or a query value). '''
    if not isinstance( value, str ): return value
    return _reference_embedded.sub(
        lambda match: _ENVIRONMENT_PREFIX + match[ 1 ], value )


def _translate_strings( value: object ) -> object:
    if not isinstance( value, __.cabc.Mapping ): return value
    mapping = __.typx.cast( __.cabc.Mapping[ str, object ], value )
    return {
        key: _translate_reference( item ) for key, item in mapping.items( ) }


def _produce_pinned_invoker(
    ensemble: PinnedEnsemble, descriptor: InvokerDescriptor
) -> _invokers.FunctionInvoker:
    name = descriptor.name

    async def invoke(
        context: _invokers.Context, arguments: __.Arguments
    ) -> object:
        invoker = ensemble.inner.access_invoker( name )
        return list( await invoker( context, arguments ) ) or None

    return _invokers.FunctionInvoker(
        name = name, invocable = invoke, argschema = descriptor.argschema,
        description = descriptor.description, timeout = descriptor.timeout,
        deduplicator = produce_deduplicator( descriptor ),
        annotations = descriptor.annotations,
        outschema = descriptor.outschema )


def _resolve_cwd( table: Table, cwd: str, folder: __.Path ) -> __.Path:
    path = resolve_path(
        table, 'cwd', folder / expand_path( table, 'cwd', cwd ) )
    if not probe_folder( path ):
        table.fail(
            'cwd', f"folder '{path}' does not exist; create it or "
            "correct the path (relative paths start at the folder of the "
            "descriptor)." )
    return path


def _validate_server_value(
    location: str, keypath: str, key: str, value: object
) -> None:
    ''' Refuses value of the wrong kind for a key of the common JSON. '''
    if key not in _keys_understood: return
    genus, label = _keys_understood[ key ]
    if not isinstance( value, genus ) or (
        genus is not bool and isinstance( value, bool )
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
    if isinstance( value, __.cabc.Mapping ):
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


def _validate_transport( table: Table, server: ServerDescriptor ) -> None:
    if server.transport == 'stdio':
        if not server.command:
            table.fail(
                'command', "the stdio transport needs a command: a list "
                "such as [ 'mcp-server-time', '--local-timezone', 'UTC' ]." )
        if not __.is_absent( server.url ) or server.headers:
            table.fail(
                'url' if not __.is_absent( server.url ) else 'headers',
                "the stdio transport takes no 'url' or 'headers'; remove "
                "them or set transport = 'http'." )
        return
    if __.is_absent( server.url ):
        table.fail(
            'url', f"the {server.transport} transport needs a url such as "
            "'http://127.0.0.1:8000/mcp'." )
    if not server.url.startswith( ( 'http://', 'https://' ) ):
        table.fail(
            'url', f"{server.url!r} is not an http or https URL; write the "
            "full URL of the server." )
    if server.command or server.environment or not __.is_absent(
        server.cwd
    ):
        table.fail(
            'command', f"the {server.transport} transport starts no "
            "process; remove 'command', 'environment' and 'cwd', or set "
            "transport = 'stdio'." )
