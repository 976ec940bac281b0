# SPDX-License-Identifier: Apache-2.0

''' Ensembles: named groups of invokers with shared configuration.

    One ensemble per source of tools: a set of local functions, a TOML
    descriptor, an MCP server. Ensembles are connected before use
    (``async with ensemble:``) and disconnected after.
'''


from abc import ABCMeta as _ABCMeta

import invocables.__ as __
import invocables.canisters as _canisters
import invocables.execution.deadlines as _deadlines
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.schemata as _schemata
import invocables._members as _members


_ARGUMENTS_EMPTY: __.Arguments = __.types.MappingProxyType( { } )
_E = __.typx.TypeVar( '_E', bound = 'Ensemble' )
_T = __.typx.TypeVar( '_T' )
_scribe = __.produce_scribe( __name__ )


class EnsembleConfiguration( __.immut.DataclassObject ):
    ''' Configuration shared by invokers of an ensemble.

        Read as attributes (``configuration.timeout``) or as a read-only
        mapping of the keys which are set (``configuration[ 'timeout' ]``),
        as the design documents do. Checked when made: a ``timeout`` which
        is not a positive number of seconds (or ``None``), or a
        ``max_retries`` which is not a whole number from 0, raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity`.
    '''

    timeout: __.typx.Annotated[
        __.Absential[ float | None ],
        __.ddoc.Doc(
            ''' Seconds before an invocation is cancelled, for invokers
                without their own timeout; ``None`` for no limit. ''' ),
    ] = __.absent
    max_retries: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc(
            ''' Retries of a call which failed for a transient reason
                (timeout, lost connection, a tool's transience), for
                invokers without their own. ''' ),
    ] = __.absent
    description: str = ''

    def __post_init__( self ) -> None:
        _invokers.validate_timeout(
            self.timeout, "ensemble configuration key 'timeout'" )
        _invokers.validate_retries(
            self.max_retries, "ensemble configuration key 'max_retries'" )
        if not isinstance( self.description, str ):
            raise _exceptions.ConfigurationInvalidity(
                "ensemble configuration key 'description'",
                "expected a string, got {kind}.".format(
                    kind = type( self.description ).__name__ ) )

    def __contains__( self, key: object ) -> bool: return key in self.keys( )

    def __getitem__( self, key: str ) -> __.typx.Any:
        if key not in self.keys( ): raise KeyError( key )
        return getattr( self, key )

    def __iter__( self ) -> __.cabc.Iterator[ str ]:
        return iter( self.keys( ) )

    def __len__( self ) -> int: return len( self.keys( ) )

    def get( self, key: str, default: __.typx.Any = None ) -> __.typx.Any:
        ''' Returns value of key if set, else default. '''
        return self[ key ] if key in self.keys( ) else default

    def items( self ) -> tuple[ tuple[ str, __.typx.Any ], ... ]:
        ''' Returns keys which are set, with their values. '''
        return tuple( ( key, getattr( self, key ) ) for key in self.keys( ) )

    def keys( self ) -> tuple[ str, ... ]:
        ''' Returns keys which are set, in declaration order. '''
        return tuple(
            field.name for field in __.dcls.fields( self )
            if not field.name.startswith( '_' )
            and not __.is_absent( getattr( self, field.name ) ) )

    def values( self ) -> tuple[ __.typx.Any, ... ]:
        ''' Returns values of keys which are set. '''
        return tuple( getattr( self, key ) for key in self.keys( ) )

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
        # A dict: frigid mappings take 'get( key, absent )' as no default.
        entries = dict( mapping )
        for key, validate in (
            ( 'timeout', _invokers.validate_timeout ),
            ( 'max_retries', _invokers.validate_retries ),
        ): validate(
            entries.get( key, __.absent ), f"ensemble {name!r} key {key!r}" )
        return cls( ** mapping )


# Registered, not derived: frigid's metaclass and ABCMeta conflict.
__.typx.cast( _ABCMeta, __.cabc.Mapping ).register( EnsembleConfiguration )


class Ensemble( __.typx.Protocol ):
    ''' Named group of invokers with shared configuration and lifecycle. '''

    @property
    def name( self ) -> str:
        ''' Name of ensemble; scopes tool names when they collide. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def invokers( self ) -> __.cabc.Mapping[ str, _invokers.Invoker ]:
        ''' Name-to-invoker mapping, read-only, in stable order. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def configuration( self ) -> EnsembleConfiguration:
        ''' Configuration shared by invokers of ensemble (a mapping). '''
        raise NotImplementedError  # pragma: no cover

    @property
    def connection( self ) -> __.Absential[ __.typx.Any ]:
        ''' Connection, such as the MCP client session; absent if none. '''
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

    @property
    def connection( self ) -> __.Absential[ __.typx.Any ]:
        ''' Connection of ensemble; absent for local ensembles. '''
        return __.absent

    @property
    def invokers( self ) -> __.cabc.Mapping[ str, _invokers.Invoker ]:
        ''' Name-to-invoker mapping, read-only, in stable order. '''
        return __.types.MappingProxyType( {
            invoker.name: invoker for invoker in self.survey_invokers( ) } )

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
        timeout = next( (
            timeout for timeout in (
                invoker.timeout, self.configuration.timeout )
            if not __.is_absent( timeout ) ), _deadlines.TIMEOUT_DEFAULT )
        context = _invokers.InvocationContext(
            auxdata = auxdata, invoker = invoker,
            namespace = { } if __.is_absent( namespace ) else namespace,
            deadline = _deadlines.access_deadline( timeout ) )
        return await _deadlines.await_within(
            invoker( context, arguments_ ), timeout, name )

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
        providers; :py:func:`produce_ensemble` holds Python-side names to
        the rule of :py:func:`invocables.ensembles.validate_ensemble_name`.
        Invokers come as a sequence (typed functions too) or, as the design
        documents write it, as a mapping of names to invokers;
        configuration as :py:class:`EnsembleConfiguration` or as a mapping
        of its keys. A connection, if given, is kept and, if it
        has them, its ``connect`` and ``disconnect`` coroutine methods are
        awaited with those of the ensemble.
    '''

    def __init__(
        self,
        name: str,
        invokers: __.typx.Annotated[
            __.cabc.Iterable[ _invokers.Invoker ]
            | __.cabc.Mapping[ str, _invokers.Invoker ],
            __.ddoc.Doc( ''' Invokers, or mapping of names to them. ''' ),
        ],
        configuration: __.typx.Annotated[
            __.Absential[
                EnsembleConfiguration | __.cabc.Mapping[ str, __.typx.Any ] ],
            __.ddoc.Doc( ''' Shared configuration, such as timeout. ''' ),
        ] = __.absent,
        connection: __.typx.Annotated[
            __.Absential[ __.typx.Any ],
            __.ddoc.Doc( ''' Resource of ensemble, if any. ''' ),
        ] = __.absent,
    ):
        if not isinstance( name, str ):
            raise _exceptions.ConfigurationInvalidity(
                f"ensemble name {name!r}", "expected a string." )
        self.name = name
        self.configuration = _produce_configuration( name, configuration )
        self._connection = connection
        invokers_by_name: dict[ str, _invokers.Invoker ] = { }
        for invoker in _members.survey_members( name, invokers ):
            if invoker.name in invokers_by_name:
                raise _exceptions.EnsemblesInvalidity(
                    f"ensemble {name!r} has two tools named "
                    f"{invoker.name!r}; rename one of them." )
            invokers_by_name[ invoker.name ] = invoker.with_ensemble( self )
        self._invokers = tuple( invokers_by_name.values( ) )
        self._invokers_by_name = __.types.MappingProxyType( invokers_by_name )
        self._connected = False

    def __repr__( self ) -> str:
        return "{cls}( name = {name!r}, invokers = {count} )".format(
            cls = type( self ).__name__, name = self.name,
            count = len( self._invokers ) )

    @property
    def connection( self ) -> __.Absential[ __.typx.Any ]:
        ''' Connection given to ensemble; absent if none. '''
        return self._connection

    @property
    def invokers( self ) -> __.cabc.Mapping[ str, _invokers.Invoker ]:
        ''' Name-to-invoker mapping, read-only, in order given. '''
        return self._invokers_by_name

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
        ''' Connects ensemble, and its connection if it has one. '''
        await _call_connection( self._connection, 'connect' )
        self._connected = True

    async def disconnect( self ) -> None:
        ''' Disconnects ensemble, and its connection if it has one. '''
        self._connected = False
        await _call_connection( self._connection, 'disconnect' )


class EnsemblesPreparation( __.immut.Object ):
    ''' Ensembles being prepared: awaitable, or an async context manager.

        ``ensembles = await preparation`` gives the ensembles, connected
        unless asked otherwise; the caller disconnects them.
        ``async with preparation as ensembles:`` connects them for the body
        and disconnects them all after it, also after an error or a
        cancellation (as :py:func:`connect_ensembles` does).
    '''

    def __init__(
        self,
        producer: __.cabc.Callable[
            [ ], __.cabc.Awaitable[ tuple[ Ensemble, ... ] ] ],
        *,
        connect: bool = True,
    ):
        self.producer = producer
        self.connect = connect
        self._manager: list[ __.typx.Any ] = [ ] # context manager, entered

    def __await__(
        self
    ) -> __.cabc.Generator[ __.typx.Any, None, tuple[ Ensemble, ... ] ]:
        return self._prepare( ).__await__( )

    async def __aenter__( self ) -> tuple[ Ensemble, ... ]:
        ensembles = await self.producer( )
        manager = connect_ensembles( ensembles )
        connected = await manager.__aenter__( )
        self._manager.append( manager )
        return connected

    async def __aexit__(
        self,
        kind: type[ BaseException ] | None,
        exception: BaseException | None,
        traceback: __.types.TracebackType | None,
    ) -> bool | None:
        manager = self._manager.pop( )
        return await manager.__aexit__( kind, exception, traceback )

    async def _prepare( self ) -> tuple[ Ensemble, ... ]:
        ensembles = await self.producer( )
        if self.connect: await _connect_ensembles( ensembles )
        return ensembles


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
    await _connect_ensembles( ensembles_ )
    try: yield ensembles_
    except BaseException:
        await _disconnect_ensembles( ensembles_, strict = False )
        raise
    await _disconnect_ensembles( ensembles_, strict = True )


def produce_ensemble(
    name: __.typx.Annotated[
        str,
        __.ddoc.Doc(
            ''' Name of ensemble; scopes colliding names. 1 to 256
                printable characters, not only spaces
                (``io.github.owner/server`` is fine). ''' ),
    ],
    invokers: __.typx.Annotated[
        __.cabc.Iterable[
            _invokers.Invoker | __.cabc.Callable[ ..., __.typx.Any ] ]
        | __.cabc.Mapping[ str, _invokers.Invoker ],
        __.ddoc.Doc(
            ''' Invokers, or typed functions to make invokers of; or a
                mapping of tool names to invokers. ''' ),
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
    return LocalEnsemble(
        name, __.typx.cast( __.cabc.Iterable[ _invokers.Invoker ], invokers ),
        configuration )


def validate_ensemble_name( name: object ) -> str:
    ''' Returns ensemble name if 1 to 256 printable characters, not only
        spaces.

        Names as MCP clients give servers: a registry name
        (``io.github.owner/server``), dots and spaces of ``mcpServers``
        files (the rule of tool names, see
        :py:func:`invocables.invokers.access_name_flaw`). Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity`
        otherwise.
    '''
    flaw = _invokers.access_name_flaw( name )
    if flaw is None: return __.typx.cast( str, name )
    label = _invokers.produce_name_label( name )
    raise _exceptions.ConfigurationInvalidity(
        f"ensemble name {label!r}", f"the name is not allowed: {flaw}." )


async def _connect_ensembles(
    ensembles: __.cabc.Sequence[ Ensemble ]
) -> None:
    ''' Connects ensembles in order; if one fails, disconnects those
        attempted (it too) before the failure is raised. '''
    attempted: list[ Ensemble ] = [ ]
    try:
        for ensemble in ensembles:
            attempted.append( ensemble )
            await ensemble.connect( )
    except BaseException:
        await _disconnect_ensembles( attempted, strict = False )
        raise


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


async def _call_connection(
    connection: __.Absential[ __.typx.Any ], name: str
) -> None:
    ''' Awaits coroutine method of connection by name, if it has one. '''
    if __.is_absent( connection ) or connection is None: return
    method = getattr( connection, name, None )
    if method is None or not callable( method ): return
    result = method( )
    if __.inspect.isawaitable( result ): await result


def _produce_configuration(
    name: str,
    configuration: __.Absential[
        EnsembleConfiguration | __.cabc.Mapping[ str, __.typx.Any ] ],
) -> EnsembleConfiguration:
    ''' Returns configuration, made from mapping if needed. '''
    if __.is_absent( configuration ): return EnsembleConfiguration( )
    if isinstance( configuration, EnsembleConfiguration ): return configuration
    if not isinstance( configuration, __.cabc.Mapping ):
        raise _exceptions.ConfigurationInvalidity(
            f"ensemble {name!r} configuration",
            "expected a mapping, got {kind}.".format(
                kind = type( configuration ).__name__ ) )
    return EnsembleConfiguration.from_mapping( name, configuration )


def _suggest( name: str, candidates: __.cabc.Iterable[ str ] ) -> str:
    ''' Returns " Did you mean ...?" with close candidates, or ''. '''
    from difflib import get_close_matches
    matches = get_close_matches( name, list( candidates ), n = 3 )
    if not matches: return ''
    return " Did you mean {names}?".format(
        names = ' or '.join( repr( match ) for match in matches ) )
