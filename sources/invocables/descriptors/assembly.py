# SPDX-License-Identifier: Apache-2.0

''' Ensembles of validated descriptors: local tools implemented by import
    path, MCP servers, and MCP servers whose tools descriptors pin.
'''


import invocables.descriptors.__ as __
import invocables.descriptors.loading as _loading
import invocables.descriptors.records as _records
import invocables.descriptors.servers as _servers
import invocables.execution.deduplicators as _deduplicators
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.schemata as _schemata
import invocables.signatures as _signatures
import invocables.toolsets.wrappers as _wrappers


_CONFIGURATION_EMPTY: __.cabc.Mapping[ str, __.typx.Any ] = (
    __.types.MappingProxyType( { } ) )
_scribe = __.produce_scribe( __name__ )


class DescriptorInvoker( _invokers.FunctionInvoker ):
    ''' Invoker produced from a local invoker descriptor.

        Its invocable receives it as ``context.invoker``, and so reaches
        the configuration of its ensemble (``configuration``) and the roots
        of the configuration (``roots``).
    '''

    def __init__(
        self,
        descriptor: _records.InvokerDescriptor, *,
        configuration: __.cabc.Mapping[ str, __.typx.Any ] = (
            _CONFIGURATION_EMPTY ),
        roots: tuple[ _records.Root, ... ] = ( ),
        ensemble: __.Absential[ _ensembles.Ensemble ] = __.absent,
        validator: __.Absential[ _schemata.Validator ] = __.absent,
    ):
        self.descriptor = descriptor
        self.implementation = __.typx.cast( str, descriptor.implementation )
        self.configuration = configuration
        self.roots = roots
        function = _invokers.validate_function(
            descriptor.name,
            __.typx.cast(
                __.cabc.Callable[ ..., __.typx.Any ], descriptor.function ) )
        super( ).__init__(
            invocable = _signatures.produce_explicit_invocable( function ),
            ensemble = ensemble, validator = validator,
            **_produce_invoker_arguments( descriptor ) )

    def with_ensemble( self, ensemble: _ensembles.Ensemble ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to ensemble. '''
        return type( self )(
            self.descriptor, configuration = self.configuration,
            roots = self.roots, ensemble = ensemble,
            validator = self.validator )


class PinnedEnsemble( _wrappers.PinnedEnsemble ):
    ''' MCP server ensemble whose tools are pinned by descriptors.

        The pinned ensemble of :py:mod:`~invocables.toolsets.wrappers`, made
        from
        TOML: it offers exactly the described tools, with their described
        names, descriptions and schemas, even before it is connected; calls
        go to the server's tools of the same names. A tool the server no
        longer offers makes connecting raise
        :py:class:`invocables.exceptions.DescriptorInvalidity`, naming the
        descriptor.
    '''

    def __init__(
        self,
        name: str,
        inner: _ensembles.Ensemble,
        invokers: __.cabc.Sequence[ _records.InvokerDescriptor ],
        configuration: _ensembles.EnsembleConfiguration,
        server: _records.ServerDescriptor,
        location: str,
    ):
        super( ).__init__(
            inner,
            tuple( _produce_snapshot_invoker( item ) for item in invokers ),
            name = name )
        # Under the engine, the timeouts of pinned tools are the engine's
        # to apply: the tool's own, else the server's, else the caller's.
        if not __.is_absent( server.tool_timeout ):
            configuration = __.dcls.replace(
                configuration, timeout = server.tool_timeout )
        self.configuration = configuration
        self.server = server
        self.location = location
        self.descriptors = tuple( invokers )

    def produce_absence_failure(
        self, missing: __.cabc.Sequence[ str ]
    ) -> _exceptions.Omnierror:
        ''' Returns descriptor error naming the tools no longer offered. '''
        return _exceptions.DescriptorInvalidity(
            self.location, 'invokers',
            "MCP server {server!r} no longer offers pinned tool(s) "
            "{names}; delete their descriptors or take a new "
            "snapshot.".format(
                server = self.name,
                names = ', '.join( map( repr, missing ) ) ) )


def prepare_ensembles(
    configuration: __.typx.Annotated[
        _records.ConfigurationSource | _records.Configuration,
        __.ddoc.Doc(
            ''' Path of a configuration file, a mapping with the same
                structure, or a configuration already produced. ''' ),
    ],
    *,
    connect: __.typx.Annotated[
        bool,
        __.ddoc.Doc(
            ''' Whether to connect the ensembles before returning them. If
                one fails, those already connected are disconnected and the
                failure is raised. ''' ),
    ] = True,
    elicitor: __.typx.Annotated[
        __.Absential[ __.typx.Any ],
        __.ddoc.Doc(
            ''' Elicitor given to every MCP server, which asks the user
                for the input a server requests (such as
                ``invocables.mcp.produce_terminal_elicitor( )``). ''' ),
    ] = __.absent,
) -> _ensembles.EnsemblesPreparation:
    ''' Loads every enabled ensemble of a configuration, and connects them.

        ``ensembles = await prepare_ensembles( configuration )`` gives them
        connected, as the design documents do (disconnect each when done);
        ``async with prepare_ensembles( configuration ) as ensembles:``
        disconnects them all after the body. Raises
        :py:class:`invocables.exceptions.DescriptorInvalidity` for any
        invalid file, before anything is produced or connected.
    '''
    async def produce( ) -> tuple[ _ensembles.Ensemble, ... ]:
        configuration_ = configuration
        if not isinstance( configuration_, _records.Configuration ):
            configuration_ = _loading.produce_configuration( configuration_ )
        return tuple(
            produce_ensemble(
                descriptor, configuration_.roots, elicitor = elicitor )
            for descriptor in configuration_.ensembles
            if descriptor.enabled )

    return _ensembles.EnsemblesPreparation( produce, connect = connect )


def produce_ensemble(
    descriptor: _records.EnsembleDescriptor,
    roots: __.cabc.Sequence[ _records.Root ] = ( ),
    *,
    elicitor: __.Absential[ __.typx.Any ] = __.absent,
) -> _ensembles.Ensemble:
    ''' Produces unconnected ensemble from validated descriptor.

        Without roots, file tools may read the current directory only. The
        ``include``, ``exclude``, ``prefix`` and ``rename`` of its
        configuration entry wrap it
        (:py:mod:`~invocables.toolsets.wrappers`). An
        elicitor goes to an MCP server (see ``prepare_ensembles``).
    '''
    ensemble = _produce_ensemble_bare( descriptor, roots, elicitor )
    if not descriptor.wrapping: return ensemble
    return _wrappers.produce_wrapped_ensemble(
        ensemble, ** descriptor.wrapping )


def _produce_ensemble_bare(
    descriptor: _records.EnsembleDescriptor,
    roots: __.cabc.Sequence[ _records.Root ],
    elicitor: __.Absential[ __.typx.Any ] = __.absent,
) -> _ensembles.Ensemble:
    configuration = _ensembles.EnsembleConfiguration(
        timeout = descriptor.timeout, max_retries = descriptor.max_retries,
        description = descriptor.description )
    if not __.is_absent( descriptor.server ):
        inner = _servers.produce_server_ensemble(
            descriptor, elicitor = elicitor )
        if not descriptor.invokers: return inner
        return PinnedEnsemble(
            descriptor.name, inner,
            tuple( item for item in descriptor.invokers if item.enabled ),
            configuration,
            descriptor.server, descriptor.location )
    roots_ = tuple( roots ) or ( _records.Root( path = __.Path.cwd( ) ), )
    invokers = tuple(
        DescriptorInvoker(
            _loading.complete_function( invoker ),
            configuration = descriptor.configuration, roots = roots_ )
        for invoker in descriptor.invokers if invoker.enabled )
    return _ensembles.LocalEnsemble(
        descriptor.name, invokers, configuration )


def _produce_snapshot_invoker(
    descriptor: _records.InvokerDescriptor
) -> _invokers.FunctionInvoker:
    ''' Returns invoker as described, for a snapshot: never called. '''

    async def invoke(
        context: _invokers.Context, arguments: __.Arguments
    ) -> object: # The pinned ensemble calls the server's tool instead.
        raise _exceptions.InvokerAbsence( descriptor.name, descriptor.name )

    return _invokers.FunctionInvoker(
        invocable = invoke, **_produce_invoker_arguments( descriptor ) )


def _produce_invoker_arguments(
    descriptor: _records.InvokerDescriptor
) -> dict[ str, __.typx.Any ]:
    ''' Returns arguments of an invoker which descriptor describes: an
        exact deduplicator if it asks for deduplication.
    '''
    return {
        'name': descriptor.name, 'arguments_schema': descriptor.argschema,
        'description': descriptor.description,
        'timeout': descriptor.timeout,
        'max_retries': descriptor.max_retries,
        'deduplicator': _deduplicators.ExactDeduplicator( )
        if descriptor.deduplicate else __.absent,
        'annotations': descriptor.annotations,
        'outschema': descriptor.outschema }
