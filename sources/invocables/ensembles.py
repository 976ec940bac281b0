# SPDX-License-Identifier: Apache-2.0

''' Ensembles: named groups of invokers with shared configuration.

    One ensemble per source of tools: a set of local functions, a TOML
    descriptor, an MCP server. Ensembles are connected before use
    (``async with ensemble:``) and disconnected after.
'''


from . import __
from . import exceptions as _exceptions
from . import invokers as _invokers


class EnsembleConfiguration( __.immut.DataclassObject ):
    ''' Configuration shared by invokers of an ensemble. '''

    timeout: __.typx.Annotated[
        __.Absential[ float | None ],
        __.ddoc.Doc(
            ''' Seconds before an invocation is cancelled, for invokers
                without their own timeout; ``None`` for no limit. ''' ),
    ] = __.absent
    description: str = ''

    @classmethod
    def from_mapping(
        cls, name: str, mapping: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> __.typx.Self:
        ''' Produces configuration from mapping, refusing unknown keys. '''
        known = { field.name for field in __.dcls.fields( cls ) }
        unknown = sorted( set( mapping ) - known )
        if unknown:
            raise _exceptions.ConfigurationInvalidity(
                f"ensemble {name!r}",
                "unknown keys {keys}; known keys are {known}.".format(
                    keys = ', '.join( unknown ),
                    known = ', '.join( sorted( known ) ) ) )
        timeout = mapping.get( 'timeout', __.absent )
        if not __.is_absent( timeout ) and timeout is not None and not (
            isinstance( timeout, ( int, float ) ) and timeout > 0
        ):
            raise _exceptions.ConfigurationInvalidity(
                f"ensemble {name!r} key 'timeout'",
                "timeout must be a positive number of seconds or None." )
        return cls( ** mapping )


class Ensemble( __.typx.Protocol ):
    ''' Named group of invokers with shared configuration and lifecycle. '''

    @property
    def name( self ) -> str:
        ''' Name of ensemble; scopes tool names when they collide. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def configuration( self ) -> EnsembleConfiguration:
        ''' Configuration shared by invokers of ensemble. '''
        raise NotImplementedError  # pragma: no cover

    def access_invoker( self, name: str ) -> _invokers.Invoker:
        ''' Returns invoker by name. Raises absence error if unknown. '''
        raise NotImplementedError  # pragma: no cover

    def is_connected( self ) -> bool:
        ''' Returns whether ensemble is connected. '''
        raise NotImplementedError  # pragma: no cover

    def survey_invokers( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns invokers of ensemble, in stable order.

            The same tuple object is returned until the set of invokers
            changes, so that callers may cache what they derive from it.
        '''
        raise NotImplementedError  # pragma: no cover

    async def connect( self ) -> None:
        ''' Connects ensemble (starts or reaches its server, if any). '''
        raise NotImplementedError  # pragma: no cover

    async def disconnect( self ) -> None:
        ''' Disconnects ensemble, leaving nothing running. '''
        raise NotImplementedError  # pragma: no cover

    async def __aenter__( self ) -> __.typx.Self:
        raise NotImplementedError  # pragma: no cover

    async def __aexit__(
        self,
        kind: type[ BaseException ] | None,
        exception: BaseException | None,
        traceback: __.types.TracebackType | None,
    ) -> None:
        raise NotImplementedError  # pragma: no cover


class EnsembleBase( __.immut.Object ):
    ''' Common lifecycle for ensembles: async context management. '''

    name: str
    configuration: EnsembleConfiguration

    async def connect( self ) -> None:
        ''' Connects ensemble. '''
        raise NotImplementedError  # pragma: no cover

    async def disconnect( self ) -> None:
        ''' Disconnects ensemble. '''
        raise NotImplementedError  # pragma: no cover

    async def __aenter__( self ) -> __.typx.Self:
        await self.connect( )
        return self

    async def __aexit__(
        self,
        kind: type[ BaseException ] | None,
        exception: BaseException | None,
        traceback: __.types.TracebackType | None,
    ) -> None:
        await self.disconnect( )


class LocalEnsemble(
    EnsembleBase, instances_mutables = ( '_connected', )
):
    ''' Ensemble of local invokers (Python functions, descriptors). '''

    def __init__(
        self,
        name: str,
        invokers: __.cabc.Iterable[ _invokers.Invoker ],
        configuration: EnsembleConfiguration,
    ):
        self.name = name
        self.configuration = configuration
        bound = tuple( invoker.with_ensemble( name ) for invoker in invokers )
        invokers_by_name: dict[ str, _invokers.Invoker ] = { }
        for invoker in bound:
            if invoker.name in invokers_by_name:
                raise _exceptions.EnsemblesInvalidity(
                    f"ensemble {name!r} has two tools named "
                    f"{invoker.name!r}; rename one of them." )
            invokers_by_name[ invoker.name ] = invoker
        self._invokers = bound
        self._invokers_by_name = __.types.MappingProxyType( invokers_by_name )
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
        return self._connected

    def survey_invokers( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns invokers of ensemble, in order given. '''
        return self._invokers

    async def connect( self ) -> None:
        ''' Connects ensemble. Local ensembles need no resources. '''
        self._connected = True

    async def disconnect( self ) -> None:
        ''' Disconnects ensemble. '''
        self._connected = False


def produce_ensemble(
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of ensemble; scopes colliding names. ''' )
    ],
    invokers: __.typx.Annotated[
        __.cabc.Iterable[
            _invokers.Invoker | __.cabc.Callable[ ..., __.typx.Any ] ],
        __.ddoc.Doc(
            ''' Invokers, or typed functions to make invokers of. ''' ),
    ],
    configuration: __.typx.Annotated[
        __.Absential[
            EnsembleConfiguration | __.cabc.Mapping[ str, __.typx.Any ] ],
        __.ddoc.Doc( ''' Shared configuration, such as ``timeout``. ''' ),
    ] = __.absent,
) -> LocalEnsemble:
    ''' Produces local ensemble from invokers or typed functions.

        Raises :py:class:`invocables.exceptions.EnsemblesInvalidity` if two
        invokers share a name.
    '''
    if __.is_absent( configuration ):
        configuration = EnsembleConfiguration( )
    elif not isinstance( configuration, EnsembleConfiguration ):
        configuration = EnsembleConfiguration.from_mapping(
            name, configuration )
    invokers_ = tuple(
        invoker if isinstance( invoker, _invokers.FunctionInvoker )
        or not _is_plain_function( invoker )
        else _invokers.produce_invoker( invoker )
        for invoker in invokers )
    return LocalEnsemble(
        name, __.typx.cast( tuple[ _invokers.Invoker, ... ], invokers_ ),
        configuration )


def _is_plain_function( value: object ) -> bool:
    return __.inspect.isfunction( value ) or __.inspect.ismethod( value )
