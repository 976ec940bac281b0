# SPDX-License-Identifier: Apache-2.0

''' Records of validated descriptors: configurations, ensembles, invokers,
    MCP servers and roots.
'''


from os import PathLike as _PathLike

import invocables.descriptors.__ as __
import invocables.exceptions as _exceptions
import invocables.schemata as _schemata


ConfigurationSource: __.typx.TypeAlias = (
    str | _PathLike[ str ] | __.cabc.Mapping[ str, __.typx.Any ] )

CONFIGURATION_NAME = 'invocables.toml'
LOCATION_MAPPING = '<mapping>'


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
    # authorization: the [mcp.authorization] table, checked.
    authorization: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )
    # expose: offer the server's resources to the model as tools.
    resources_as_tools: bool = False
    # sandbox: true (the default profile), or read, write (absolute paths),
    # network and environment (names); absent: unconfined.
    sandbox: __.Absential[ bool | __.cabc.Mapping[ str, __.typx.Any ] ] = (
        __.absent )
    # tasks: which tools are called as tasks (a value of mcp.TaskUses);
    # absent: those which require them.
    tasks: __.Absential[ str ] = __.absent
    # protocol: which handshake opens the session (a value of
    # mcp.Protocols); absent: auto.
    protocol: __.Absential[ str ] = __.absent

    def __repr__( self ) -> str:
        # Values may be secrets (a token in a header, an argument, a URL's
        # query, a client secret): only their names are shown.
        return (
            "{cls}( transport = {transport!r}, target = {target!r}, "
            "arguments = {arguments}, environment = {environment}, "
            "headers = {headers}, authorization = {authorization}, "
            "resources_as_tools = {resources} )".format(
                cls = type( self ).__name__, transport = self.transport,
                target = self._describe_target( ),
                arguments = max( len( self.command ) - 1, 0 ),
                environment = _describe_keys( self.environment ),
                headers = _describe_keys( self.headers ),
                authorization = _describe_keys( self.authorization ),
                resources = self.resources_as_tools ) )

    def _describe_target( self ) -> str:
        if self.command: return __.Path( self.command[ 0 ] ).name
        if __.is_absent( self.url ): return '?'
        from ..mcp.configuration import describe_url
        return describe_url( self.url )


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
    max_retries: __.Absential[ int ] = __.absent
    deduplicate: bool = False
    annotations: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )


class EnsembleDescriptor( __.immut.DataclassObject ):
    ''' Validated ensemble descriptor: local tools or an MCP server. '''

    name: str
    location: str
    enabled: bool = True
    description: str = ''
    implementation: __.Absential[ str ] = __.absent
    timeout: __.Absential[ float | None ] = __.absent
    max_retries: __.Absential[ int ] = __.absent
    configuration: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )
    invokers: tuple[ InvokerDescriptor, ... ] = ( )
    server: __.Absential[ ServerDescriptor ] = __.absent
    keypath: str = 'ensemble.name' # where the name is, for errors
    # 'include', 'exclude', 'prefix', 'rename' of a configuration entry:
    # options of invocables.toolsets.wrappers.produce_wrapped_ensemble.
    wrapping: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )


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


def _describe_keys( mapping: __.cabc.Mapping[ str, __.typx.Any ] ) -> str:
    if not mapping: return '[ ]'
    return '[ {keys} ]'.format(
        keys = ', '.join( repr( key ) for key in sorted( mapping ) ) )
