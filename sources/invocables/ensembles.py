# SPDX-License-Identifier: Apache-2.0

''' Ensembles: named groups of invokers with shared configuration.

    One ensemble per source of tools: a set of local functions, a TOML
    descriptor, an MCP server. Ensembles are connected before use
    (``async with ensemble:``) and disconnected after.
'''


from . import __
from . import canisters as _canisters
from . import deadlines as _deadlines
from . import exceptions as _exceptions
from . import invokers as _invokers
from . import schemata as _schemata


_ARGUMENTS_EMPTY: __.Arguments = __.types.MappingProxyType( { } )
_E = __.typx.TypeVar( '_E', bound = 'Ensemble' )
_INVOKER_MEMBERS = (
    'name', 'argschema', 'validate_arguments', 'with_ensemble' )
_name_ensemble = __.re.compile( r'^[a-zA-Z0-9_-]{1,64}$' )
_scribe = __.produce_scribe( __name__ )


class EnsembleConfiguration( __.immut.DataclassObject ):
    ''' Configuration shared by invokers of an ensemble.

        Checked when made: a ``timeout`` which is not a positive number of
        seconds (or ``None``) raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity`.
    '''

    timeout: __.typx.Annotated[
        __.Absential[ float | None ],
        __.ddoc.Doc(
            ''' Seconds before an invocation is cancelled, for invokers
                without their own timeout; ``None`` for no limit. ''' ),
    ] = __.absent
    description: str = ''

    def __post_init__( self ) -> None:
        _invokers.validate_timeout(
            self.timeout, "ensemble configuration key 'timeout'" )
        if not isinstance( self.description, str ):
            raise _exceptions.ConfigurationInvalidity(
                "ensemble configuration key 'description'",
                "expected a string, got {kind}.".format(
                    kind = type( self.description ).__name__ ) )

    @classmethod
    def from_mapping(
        cls, name: str, mapping: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> __.typx.Self:
        ''' Produces configuration from mapping, refusing unknown keys.

            An unknown key raises
            :py:class:`invocables.exceptions.ConfigurationInvalidity`,
            with the closest known keys as suggestions.
        '''
        known = sorted(
            field.name for field in __.dcls.fields( cls )
            if not field.name.startswith( '_' ) )
        for key in mapping:
            if key in known: continue
            raise _exceptions.ConfigurationInvalidity(
                f"ensemble {name!r}",
                "unknown key {key!r}.{suggestion} The known keys are "
                "{known}.".format(
                    key = key, suggestion = _suggest( str( key ), known ),
                    known = ', '.join( known ) ) )
        _invokers.validate_timeout(
            mapping.get( 'timeout', __.absent ),
            f"ensemble {name!r} key 'timeout'" )
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

    async def invoke(
        self,
        name: str,
        arguments: __.Arguments = _ARGUMENTS_EMPTY,
        *,
        auxdata: __.typx.Any = None,
        namespace: __.Absential[ __.Namespace ] = __.absent,
    ) -> _canisters.ContentSequence:
        ''' Runs one tool of ensemble directly; returns its content. '''
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
    ''' Common behaviour of ensembles: async context management, direct
        invocation of tools.
    '''

    name: str
    configuration: EnsembleConfiguration

    def access_invoker( self, name: str ) -> _invokers.Invoker:
        ''' Returns invoker by name. Raises absence error if unknown. '''
        raise NotImplementedError  # pragma: no cover

    def survey_invokers( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns invokers of ensemble, in stable order. '''
        raise NotImplementedError  # pragma: no cover

    async def connect( self ) -> None:
        ''' Connects ensemble. '''
        raise NotImplementedError  # pragma: no cover

    async def disconnect( self ) -> None:
        ''' Disconnects ensemble. '''
        raise NotImplementedError  # pragma: no cover

    async def invoke(
        self,
        name: __.typx.Annotated[
            str,
            __.ddoc.Doc(
                ''' Name of tool within ensemble (not the name which a
                    provider sees). ''' ),
        ],
        arguments: __.typx.Annotated[
            __.Arguments,
            __.ddoc.Doc( ''' Arguments, as the model would send them. ''' ),
        ] = _ARGUMENTS_EMPTY,
        *,
        auxdata: __.typx.Annotated[
            __.typx.Any,
            __.ddoc.Doc( ''' Application data for the invocable. ''' ),
        ] = None,
        namespace: __.typx.Annotated[
            __.Absential[ __.Namespace ],
            __.ddoc.Doc( ''' State shared with other invocations. Default:
                a fresh one. ''' ),
        ] = __.absent,
    ) -> _canisters.ContentSequence:
        ''' Runs one tool of ensemble directly; returns its content.

            For scripts and tests: no invocation canisters, no provider
            names, no deduplication. Validates the arguments, then runs
            the tool within its timeout (the invoker's, else the
            ensemble's, else 60 seconds). Raises
            :py:class:`invocables.exceptions.InvokerAbsence` for an unknown
            tool (suggesting close names),
            :py:class:`invocables.exceptions.ArgumentsInvalidity` for
            invalid arguments (the tool is not run),
            :py:class:`invocables.exceptions.InvocationExpiry` when the
            timeout passes (the tool is cancelled), and whatever the tool
            itself raises, unchanged.
        '''
        try: invoker = self.access_invoker( name )
        except _exceptions.InvokerAbsence as exception:
            names = [ item.name for item in self.survey_invokers( ) ]
            suggestion = _suggest( name, names ).strip( )
            add_note = getattr( exception, 'add_note', None ) # Python 3.11+
            if suggestion and add_note is not None: add_note( suggestion )
            raise
        # Plain copy: the validator takes dicts as JSON objects, not other
        # mappings (such as frozen ones).
        arguments_ = invoker.validate_arguments(
            _schemata.thaw_json( arguments ) )
        timeout = self._access_timeout( invoker )
        context = _invokers.InvocationContext(
            auxdata = auxdata, invoker = invoker,
            namespace = { } if __.is_absent( namespace ) else namespace,
            deadline = _deadlines.access_deadline( timeout ) )
        return await _deadlines.await_within(
            invoker( context, arguments_ ), timeout, name )

    def _access_timeout( self, invoker: _invokers.Invoker ) -> float | None:
        for timeout in ( invoker.timeout, self.configuration.timeout ):
            if not __.is_absent( timeout ): return timeout
        return _deadlines.TIMEOUT_DEFAULT

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
    ''' Ensemble of local invokers (Python functions, descriptors).

        Takes any name, as the naming layer makes every name safe for
        providers; :py:func:`produce_ensemble` holds Python-side names
        to the rule of TOML descriptors.
    '''

    def __init__(
        self,
        name: str,
        invokers: __.cabc.Iterable[ _invokers.Invoker ],
        configuration: EnsembleConfiguration,
    ):
        if not isinstance( name, str ):
            raise _exceptions.ConfigurationInvalidity(
                f"ensemble name {name!r}", "expected a string." )
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


@__.ctxl.asynccontextmanager
async def connect_ensembles(
    ensembles: __.typx.Annotated[
        __.cabc.Iterable[ _E ],
        __.ddoc.Doc( ''' Ensembles to connect, in order. ''' ),
    ],
) -> __.cabc.AsyncGenerator[ tuple[ _E, ... ], None ]:
    ''' Connects ensembles for the body of ``async with``; disconnects all.

        ``async with invocables.connect_ensembles( ensembles ) as connected:``
        connects the ensembles one after the other, in the current task, and
        gives them as a tuple. On exit, also after an error or a
        cancellation, every ensemble is disconnected, in reverse order. If
        one fails to connect, those already connected, and the one which
        failed, are disconnected before the failure is raised: nothing is
        left connected. A failure to disconnect is logged, and raised only
        if the body succeeded.
    '''
    ensembles_ = tuple( ensembles )
    attempted: list[ _E ] = [ ]
    try:
        for ensemble in ensembles_:
            attempted.append( ensemble )
            await ensemble.connect( )
    except BaseException:
        await _disconnect_ensembles( attempted, strict = False )
        raise
    try: yield ensembles_
    except BaseException:
        await _disconnect_ensembles( ensembles_, strict = False )
        raise
    await _disconnect_ensembles( ensembles_, strict = True )


def produce_ensemble(
    name: __.typx.Annotated[
        str,
        __.ddoc.Doc(
            ''' Name of ensemble; scopes colliding names. 1 to 64 letters,
                digits, ``_`` or ``-``. ''' ),
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
        invokers share a name, and
        :py:class:`invocables.exceptions.ConfigurationInvalidity` for a
        name or configuration which is not valid.
    '''
    validate_ensemble_name( name )
    if __.is_absent( configuration ):
        configuration = EnsembleConfiguration( )
    elif not isinstance( configuration, EnsembleConfiguration ):
        configuration = EnsembleConfiguration.from_mapping(
            name, configuration )
    return LocalEnsemble(
        name, tuple( _produce_member( item ) for item in invokers ),
        configuration )


def validate_ensemble_name( name: object ) -> str:
    ''' Returns ensemble name if 1 to 64 letters, digits, ``_`` or ``-``.

        The rule of TOML descriptors. Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` otherwise.
    '''
    if isinstance( name, str ) and _name_ensemble.match( name ): return name
    raise _exceptions.ConfigurationInvalidity(
        f"ensemble name {name!r}",
        "an ensemble name has 1 to 64 ASCII letters, digits, '_' or '-' "
        "(pattern {pattern}).".format( pattern = _name_ensemble.pattern ) )


async def _disconnect_ensembles(
    ensembles: __.cabc.Sequence[ Ensemble ], *, strict: bool
) -> None:
    ''' Disconnects ensembles in reverse order, each even if one fails.

        Strict: the first failure is raised after all were tried.
    '''
    failures = [
        await _disconnect_ensemble( ensemble )
        for ensemble in reversed( ensembles ) ]
    failure = next(
        ( failure for failure in failures if failure is not None ), None )
    if strict and failure is not None: raise failure


async def _disconnect_ensemble( ensemble: Ensemble ) -> Exception | None:
    ''' Disconnects ensemble; logs and returns failure, if any. '''
    try: await ensemble.disconnect( )
    except Exception as exception:
        _scribe.exception( "Failed to disconnect ensemble %r.", ensemble.name )
        return exception
    return None


def _is_invoker( value: object ) -> bool:
    return all( hasattr( value, name ) for name in _INVOKER_MEMBERS )


def _produce_member( item: object ) -> _invokers.Invoker:
    ''' Returns item if an invoker, else invoker of item if callable. '''
    if _is_invoker( item ):
        # Members checked above; protocols have no complete runtime check.
        return __.typx.cast( _invokers.Invoker, item )
    if callable( item ): return _invokers.produce_invoker( item )
    raise _exceptions.InvokerInvalidity(
        repr( item ), "an ensemble takes invokers or callables only." )


def _suggest( name: str, candidates: __.cabc.Iterable[ str ] ) -> str:
    ''' Returns " Did you mean ...?" with close candidates, or ''. '''
    from difflib import get_close_matches
    matches = get_close_matches( name, list( candidates ), n = 3 )
    if not matches: return ''
    return " Did you mean {names}?".format(
        names = ' or '.join( repr( match ) for match in matches ) )
