# SPDX-License-Identifier: Apache-2.0

''' MCP servers of descriptors: ``[mcp]`` tables, the common ``mcpServers``
    JSON (read in :py:mod:`invocables.descriptors.interchange`), and the
    mapping between a server descriptor and the parameters
    and options of an MCP ensemble, in both directions.

    The ``mcp`` subpackage (and the ``mcp`` SDK) is imported only when an
    ensemble of a server is produced or described.
'''


import os as _os

import invocables.descriptors.__ as __
import invocables.descriptors.interchange as _interchange
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
from .interchange import survey_servers as survey_servers
from .paths import (
    expand_path as _expand_path,
    resolve_folder as _resolve_folder,
)
from .records import (
    EnsembleDescriptor as _EnsembleDescriptor,
    ServerDescriptor as _ServerDescriptor,
)
from .tables import Table as _Table


# Values of mcp.TaskUses (not imported: the SDK is optional).
_TASK_USES = ( 'never', 'required', 'supported' )
_TASKS_DEFAULT = 'required'
# Values of mcp.Protocols.
_PROTOCOLS = ( 'auto', 'legacy', 'modern' )
_PROTOCOL_DEFAULT = 'auto'


_transports_descriptors = tuple( dict.fromkeys(
    transport for transport, _ in _interchange.TRANSPORTS.values( ) ) )
_scribe = __.produce_scribe( __name__ )


def access_server_descriptor(
    ensemble: _ensembles.Ensemble
) -> __.Absential[ _ServerDescriptor ]:
    ''' Returns descriptor of server of MCP ensemble; absent for others.

        The reverse of :py:func:`produce_server_ensemble`: the parameters
        and options of the ensemble become the ``[mcp]`` table.
    '''
    server = _access_server_ensemble( ensemble )
    if server is None: return __.absent
    from ..mcp import CONNECT_TIMEOUT_DEFAULT
    parameters, options = server.parameters, server.options
    command = (
        ( ) if __.is_absent( parameters.command )
        else ( parameters.command, * parameters.arguments ) )
    return _ServerDescriptor(
        transport = _access_transport( parameters.transport.value ),
        command = command, environment = parameters.environment,
        cwd = (
            __.absent if __.is_absent( parameters.cwd )
            else __.Path( parameters.cwd ) ),
        url = parameters.url, headers = parameters.headers,
        startup_timeout = (
            __.absent if options.connect_timeout == CONNECT_TIMEOUT_DEFAULT
            else options.connect_timeout ),
        enabled_tools = (
            __.absent if __.is_absent( options.include )
            else tuple( sorted( options.include ) ) ),
        disabled_tools = tuple( sorted( options.exclude ) ),
        authorization = produce_authorization_table( # expose
            server.features.authorization ),
        resources_as_tools = options.resources_as_tools, # expose
        tasks = (
            __.absent if options.tasks.value == _TASKS_DEFAULT
            else options.tasks.value ),
        protocol = (
            __.absent if options.protocol.value == _PROTOCOL_DEFAULT
            else options.protocol.value ),
        sandbox = (
            __.absent if __.is_absent( options.sandbox )
            else __.immut.Dictionary[ str, __.typx.Any ](
                options.sandbox.as_dictionary( ) ) ) )


def access_tool_timeouts(
    ensemble: _ensembles.Ensemble
) -> __.cabc.Mapping[ str, float | None ]:
    ''' Returns own timeouts of tools of MCP ensemble, by tool name.

        The reverse of the ``timeout`` of invoker descriptors pinned to a
        server; empty for other ensembles.
    '''
    server = _access_server_ensemble( ensemble )
    return { } if server is None else server.options.timeouts


def produce_authorization_table(
    authorization: __.typx.Any
) -> __.immut.Dictionary[ str, __.typx.Any ]:
    ''' Returns ``[mcp.authorization]`` table of an ensemble's authorization.

        The reverse of the table's reading. Values are as given (``env:``
        references, or literal secrets which writing replaces by
        references); a token storage object, or an authorization code grant
        whose redirect is not the loopback one, cannot be written: the
        storage is left out, and such a grant gives an empty table (with a
        warning in the log).
    '''
    import invocables.mcp.authorization as _authorization
    values: dict[ str, __.typx.Any ] = { }
    match authorization:
        case _authorization.BearerAuthorization( ):
            values.update( kind = 'bearer', token = authorization.token )
        case _authorization.ClientCredentialsAuthorization( ):
            values[ 'kind' ] = 'client-credentials'
        case _authorization.CodeAuthorization( ):
            values.update( _produce_code_table( authorization ) )
        case _authorization.EnterpriseAuthorization( ):
            values[ 'kind' ] = 'enterprise'
        case _authorization.WorkloadAuthorization( ):
            values[ 'kind' ] = 'workload'
        case _: return __.immut.Dictionary[ str, __.typx.Any ]( )
    if values: # expose
        required, optional = _authorization_keys[ values[ 'kind' ] ]
        for key in ( *required, *optional ):
            # None too: a frigid dictionary's get gives None for an
            # absent default.
            value = getattr( authorization, key, None )
            if isinstance( value, str ): values.setdefault( key, value )
    storage = getattr( authorization, 'storage', __.absent )
    if values and isinstance( storage, ( str, _os.PathLike ) ):
        values[ 'storage' ] = _os.fspath( storage )
    return __.immut.Dictionary[ str, __.typx.Any ]( values )


def produce_server_ensemble(
    descriptor: _EnsembleDescriptor,
    *,
    elicitor: __.Absential[ __.typx.Any ] = __.absent,
) -> _ensembles.Ensemble:
    ''' Produces unconnected ensemble of MCP server from its descriptor.

        The per-call timeout is ``tool_timeout`` of ``[mcp]``, else
        ``timeout`` of ``[defaults]``; pinned tools may have their own.
    '''
    name = descriptor.name
    try: import invocables.mcp as _mcp
    except ImportError as exception:
        raise _exceptions.ConfigurationInvalidity(
            f"ensemble {name!r}",
            f"MCP servers need the 'mcp' extra ({exception}); install "
            "'invocables[mcp]'." ) from exception
    server = __.typx.cast( _ServerDescriptor, descriptor.server )
    options: dict[ str, __.typx.Any ] = {
        'transport': _interchange.TRANSPORTS[ server.transport ][ 1 ] }
    if server.transport == 'stdio':
        options.update(
            command = list( server.command ),
            environment = dict( server.environment ) )
        if not __.is_absent( server.cwd ): options[ 'cwd' ] = server.cwd
    else:
        options.update( url = server.url, headers = dict( server.headers ) )
        if server.authorization: # authorization
            options[ 'authorization' ] = (
                _mcp.authorization.produce_authorization_from_table(
                    server.authorization ) )
    options.update( _produce_lifecycle_options( descriptor ) )
    if server.resources_as_tools: options[ 'resources_as_tools' ] = True
    if not __.is_absent( server.tasks ): options[ 'tasks' ] = server.tasks
    if not __.is_absent( server.protocol ):
        options[ 'protocol' ] = server.protocol
    if not __.is_absent( server.sandbox ):
        options[ 'sandbox' ] = (
            server.sandbox if isinstance( server.sandbox, bool )
            else _mcp.Sandbox( **server.sandbox ) )
    if not __.is_absent( elicitor ): options[ 'elicitor' ] = elicitor
    return _mcp.produce_ensemble(
        name, description = descriptor.description, ** options )


def produce_server_descriptor(
    table: _Table, folder: __.Path
) -> _ServerDescriptor:
    command = table.access_strings( 'command', default = ( ) )
    url = table.access( 'url', str, default = __.absent )
    transport = table.access(
        'transport', str,
        default = 'stdio' if command or __.is_absent( url ) else 'http' )
    if transport not in _interchange.TRANSPORTS:
        table.fail(
            'transport', "unknown transport {transport!r}; use one of "
            "{known}.".format(
                transport = transport,
                known = ', '.join( _transports_descriptors ) ) )
    transport = _interchange.TRANSPORTS[ transport ][ 0 ]
    environment = table.access_strings_mapping( 'environment' )
    cwd = table.access( 'cwd', str, default = __.absent )
    headers = table.access_strings_mapping( 'headers' )
    descriptor = _ServerDescriptor(
        transport = transport, command = command,
        environment = environment,
        cwd = __.absent if __.is_absent( cwd ) else _resolve_folder(
            table, 'cwd', cwd, folder, 'the descriptor' ),
        url = url, headers = headers,
        startup_timeout = table.access_bounded_timeout( 'startup_timeout' ),
        tool_timeout = table.access_bounded_timeout( 'tool_timeout' ),
        enabled_tools = table.access_strings(
            'enabled_tools', default = __.absent ),
        disabled_tools = table.access_strings(
            'disabled_tools', default = ( ) ),
        authorization = _read_authorization( table, folder ),
        resources_as_tools = table.access( # expose
            'resources_as_tools', bool, default = False ),
        tasks = _read_choice( table, 'tasks', _TASK_USES, 'use of tasks' ),
        protocol = _read_choice( table, 'protocol', _PROTOCOLS, 'protocol' ),
        sandbox = _read_sandbox( table, folder ) )
    table.finish( )
    _validate_transport( table, descriptor )
    return descriptor


def _read_choice(
    table: _Table, key: str, choices: tuple[ str, ... ], label: str
) -> __.Absential[ str ]:
    ''' Reads a choice among names: ``tasks`` (which tools are called as
        tasks), ``protocol`` (which handshake opens the session).
    '''
    value = table.access( key, str, default = __.absent )
    if not __.is_absent( value ) and value not in choices:
        table.fail(
            key, "unknown {label} {value!r}; use one of {known}.".format(
                label = label, value = value,
                known = ', '.join( choices ) ) )
    return value


def _read_sandbox(
    table: _Table, folder: __.Path
) -> __.Absential[ bool | __.immut.Dictionary[ str, __.typx.Any ] ]:
    ''' Reads ``sandbox``: true, false, or a table of read, write (paths
        from the folder of the descriptor), network (true, false or a
        list of hosts), environment and disk_maximum (bytes; the sandbox
        checks its bound).
    '''
    value = table.access( 'sandbox', object, default = __.absent )
    if __.is_absent( value ) or value is False: return __.absent
    if value is True: return True
    if not isinstance( value, __.cabc.Mapping ):
        table.fail(
            'sandbox', "expected true, false or a table of read, write, "
            "network, environment and disk_maximum." )
    section = table.access_table( 'sandbox' )
    values: dict[ str, __.typx.Any ] = { }
    for key in ( 'read', 'write' ):
        paths = section.access_strings( key, default = ( ) )
        values[ key ] = tuple(
            str( folder / _expand_path( section, key, path ) )
            for path in paths )
    network = section.access( 'network', object, default = False )
    # A list of hosts (through a filtering proxy), checked by the sandbox.
    if not isinstance( network, bool ):
        network = section.access_strings( 'network' )
    values[ 'network' ] = network
    values[ 'environment' ] = section.access_strings(
        'environment', default = ( ) )
    disk = section.access( 'disk_maximum', int, default = __.absent )
    if not __.is_absent( disk ): values[ 'disk_maximum' ] = disk
    section.finish( )
    return __.immut.Dictionary[ str, __.typx.Any ]( values )


# authorization: keys of [mcp.authorization], by kind (required, optional).
_authorization_keys = __.immut.Dictionary( {
    'bearer': ( ( 'token', ), ( ) ),
    'client-credentials': (
        ( 'client_id', ),
        ( 'client_secret', 'private_key', 'signing_algorithm', 'scope',
          'issuer', 'storage' ) ),
    'enterprise': (
        ( 'identity_token', 'identity_provider_token_endpoint', 'issuer',
          'client_id', 'client_secret' ),
        ( 'identity_provider_client_id', 'identity_provider_client_secret',
          'scope', 'storage' ) ),
    'oauth': (
        ( ),
        ( 'scope', 'storage', 'port', 'client_id', 'client_secret',
          'client_metadata_url' ) ),
    'workload': (
        ( 'assertion', ), ( 'client_id', 'scope', 'issuer', 'storage' ) ),
} )


def _read_authorization(
    table: _Table, folder: __.Path
) -> __.immut.Dictionary[ str, __.typx.Any ]:
    ''' Reads ``[mcp.authorization]``: kind, then the keys of the kind.

        A ``private_key`` which is neither ``env:NAME`` nor PEM text, and an
        ``assertion`` which is neither ``env:NAME`` nor a JWT, are files,
        from the folder of the descriptor.
    '''
    section = table.access_table( 'authorization', default = None )
    if section is None: return __.immut.Dictionary[ str, __.typx.Any ]( )
    kind = section.access( 'kind', str )
    if kind not in _authorization_keys:
        section.fail(
            'kind', "unknown kind {kind!r}; use one of {known}.".format(
                kind = kind, known = ', '.join( _authorization_keys ) ) )
    required, optional = _authorization_keys[ kind ]
    values: dict[ str, __.typx.Any ] = { 'kind': kind }
    for key in required: values[ key ] = section.access( key, str )
    for key in optional:
        genus = int if key == 'port' else str
        value = section.access( key, genus, default = __.absent )
        if not __.is_absent( value ): values[ key ] = value
    _validate_credentials( section, values )
    if 'storage' in values:
        values[ 'storage' ] = str(
            _expand_path( section, 'storage', values[ 'storage' ] ) )
    for key in ( 'private_key', 'assertion' ):
        value = values.get( key, '' )
        if not value or value.startswith(
            ( __.ENVIRONMENT_PREFIX, '-----BEGIN' )
        ) or __.is_jwt( value ): continue
        values[ key ] = str( folder / _expand_path( section, key, value ) )
    section.finish( )
    return __.immut.Dictionary[ str, __.typx.Any ]( values )


def _validate_credentials(
    section: _Table, values: __.cabc.Mapping[ str, __.typx.Any ]
) -> None:
    ''' Refuses client credentials without exactly one of secret and key,
        and a secret without its client.
    '''
    kind = values[ 'kind' ]
    if kind == 'client-credentials' and (
        ( 'client_secret' in values ) == ( 'private_key' in values )
    ):
        section.fail(
            'client_secret', "client credentials need 'client_secret' or "
            "'private_key' (private_key_jwt), exactly one of them." )
    if kind == 'oauth' and 'client_secret' in values and (
        'client_id' not in values
    ):
        section.fail(
            'client_secret', "a client secret without 'client_id'; give "
            "the ID of the client registered beforehand." )


def produce_server_ensemble_descriptor(
    name: str, location: str, table: _Table, folder: __.Path
) -> _EnsembleDescriptor:
    enabled = not table.access( 'disabled', bool, default = False )
    descriptor = produce_server_descriptor( table, folder )
    return _EnsembleDescriptor(
        name = name, location = location, enabled = enabled,
        server = descriptor, keypath = table.keypath )


def _produce_code_table(
    authorization: __.typx.Any
) -> dict[ str, __.typx.Any ]:
    ''' Returns keys of the loopback code grant; empty for another. '''
    from urllib.parse import urlsplit
    parts = urlsplit( str( authorization.redirect_uri ) )
    if parts.hostname != '127.0.0.1' or parts.path != '/callback':
        _scribe.warning(
            "The authorization of an MCP server redirects to %s, not to "
            "the loopback listener: it cannot be written as a descriptor "
            "and is left out.", authorization.redirect_uri )
        return { }
    values: dict[ str, __.typx.Any ] = { 'kind': 'oauth' }
    if parts.port is not None: values[ 'port' ] = parts.port
    return values


def _produce_lifecycle_options(
    descriptor: _EnsembleDescriptor
) -> dict[ str, __.typx.Any ]:
    server = __.typx.cast( _ServerDescriptor, descriptor.server )
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


def _access_transport( transport: str ) -> str:
    ''' Returns transport of descriptors for transport of mcp subpackage. '''
    return next(
        name for name, mcp_name in _interchange.TRANSPORTS.values( )
        if mcp_name == transport )


def _validate_transport( table: _Table, server: _ServerDescriptor ) -> None:
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
        if server.authorization: # authorization
            table.fail(
                'authorization', "the stdio transport takes no "
                "authorization; remove it or set transport = 'http'." )
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


def _access_server_ensemble( ensemble: _ensembles.Ensemble ) -> __.typx.Any:
    ''' Returns ensemble if it is a server ensemble of the mcp subpackage,
        else None; tells without importing it (and the ``mcp`` SDK) for
        other ensembles.
    '''
    if not type( ensemble ).__module__.startswith(
        f"{__.package_name}.mcp"
    ): return None
    from ..mcp import ServerEnsemble
    return ensemble if isinstance( ensemble, ServerEnsemble ) else None
