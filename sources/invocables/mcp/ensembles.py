# SPDX-License-Identifier: Apache-2.0

''' MCP servers as ensembles.

    Each ensemble owns one background task which holds the server's session
    (transport, handshake, tool listing, list-changed refreshes) from
    connect to disconnect. Calls run in the caller's task and talk to that
    session. Since the session's resources live in the ensemble's own task,
    ``connect( )`` and ``disconnect( )`` may be called from any task, unlike
    with the SDK's context managers (anyio requires that a cancel scope be
    left by the task which entered it).
'''


import anyio as _anyio

import invocables.mcp.__ as __
import invocables.mcp.callbacks as _callbacks # authorization
import invocables.mcp.catalog as _catalog
import invocables.mcp.configuration as _configuration
import invocables.mcp.exposure as _exposure # expose
import invocables.mcp._inputs as _inputs
import invocables.mcp.resources as _resources # authorization
import invocables.mcp.records as _records
import invocables.mcp._relays as _relays
import invocables.mcp.results as _results
import invocables.mcp.sessions as _sessions
import invocables.mcp._sdk as _sdk
import invocables.mcp._tasks as _tasks
from ._sdk import Error as _MCPError
import invocables.canisters as _canisters
import invocables.execution.deadlines as _deadlines
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.telemetry as _telemetry


_CONNECTION_CLOSED = -32000
_SETTLE_TIMEOUT = 1.0
_scribe = __.produce_scribe( __name__ )


class ServerEnsemble(
    _resources.FeaturesExtension, _ensembles.EnsembleBase
):
    ''' Ensemble of the tools of one MCP server.

        Also offers the server's resources and prompts, and its roots and
        log level (see
        :py:class:`invocables.mcp.resources.FeaturesExtension`).
    '''

    def __init__(
        self,
        name: str,
        parameters: _configuration.ServerParameters,
        configuration: _ensembles.EnsembleConfiguration,
        options: _records.ServerOptions,
        features: _callbacks.Features | None = None, # authorization
    ):
        self.name = name
        self.parameters = parameters
        self.configuration = configuration
        self.options = options
        self.features = features or _callbacks.Features( name )
        self._state = _State( _exposure.produce_catalog( # expose
            name, options, self._produce_invocable, self ) )

    # authorization: session access for resources, prompts, roots, logs.
    def access_session_for_features( self ) -> __.typx.Any:
        ''' Returns live session and its redactor.

            Raises :py:class:`invocables.exceptions.ConnectionAbsence` if
            the ensemble is not connected or its session was lost.
        '''
        self._validate_connection( )
        connection = self._state.connection
        if connection is None or not connection.is_usable( ):
            raise _exceptions.ConnectionAbsence( self.name )
        return connection.session, connection.redactor

    def access_list_timeout( self ) -> float:
        ''' Returns seconds allowed to one listing request. '''
        return self.options.list_timeout

    def access_relay_for_features( self ) -> '_relays.Relay | None':
        ''' Returns relay of the live session, if it relays. '''
        connection = self._state.connection
        return None if connection is None else connection.relay

    def __repr__( self ) -> str:
        return "{cls}( name = {name!r}, parameters = {parameters!r}, "\
            "tools = {count} )".format(
                cls = type( self ).__name__, name = self.name,
                parameters = self.parameters,
                count = len( self._state.catalog.invokers ) )

    @property
    def connection( self ) -> __.Absential[ __.typx.Any ]:
        ''' MCP client session while connected; absent otherwise. '''
        connection = self._state.connection
        session = None if connection is None else connection.session
        return __.absent if session is None else session

    def access_invoker( self, name: str ) -> _invokers.Invoker:
        ''' Returns invoker by name. Raises absence error if unknown.

            Raises :py:class:`invocables.exceptions.ConnectionAbsence` if
            the ensemble is not connected.
        '''
        self._validate_connection( )
        try: return self._state.catalog.invokers_by_name[ name ]
        except KeyError as exception:
            raise _exceptions.InvokerAbsence(
                name, self.name ) from exception

    def access_listings( self ) -> int:
        ''' Returns how many tool listings the current session has read.

            A hook for tests and diagnostics: list-changed notifications
            are debounced, so a burst of them costs one listing.
        '''
        connection = self._state.connection
        return 0 if connection is None else connection.listings

    def configure_relay(
        self, *, relay: bool = True, observer: '_relays.Observer | None' = None
    ) -> None:
        ''' Relays what the server asks and tells during a call (its
            elicitation, sampling, log messages, progress) to the call's
            caller, and its announced changes of resources and prompts to
            observer, from the next connection on (see ``serve``).
        '''
        self._state.relaying = relay
        self._state.observer = observer

    def is_connected( self ) -> bool:
        ''' Returns whether a live session to the server exists. '''
        connection = self._state.connection
        return connection is not None and connection.is_usable( )

    def survey_invokers( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns invokers, in the server's order.

            The same tuple is returned until the server's tools change.
            Raises :py:class:`invocables.exceptions.ConnectionAbsence` if
            the ensemble is not connected: it knows no tools then, and
            offering none would leave the model with unknown tools.
        '''
        state = self._state # asked at every execution: checked in place
        if not state.connected:
            raise _exceptions.ConnectionAbsence( self.name )
        return state.catalog.invokers

    def survey_omissions( self ) -> tuple[ _records.Omission, ... ]:
        ''' Returns tools of the server which were left out, with reasons.

            Raises :py:class:`invocables.exceptions.ConnectionAbsence` if
            the ensemble is not connected.
        '''
        self._validate_connection( )
        return self._state.catalog.omissions

    def survey_tools( self ) -> tuple[ _records.ToolDescription, ... ]:
        ''' Returns descriptions of offered tools: schemas, annotations.

            Raises :py:class:`invocables.exceptions.ConnectionAbsence` if
            the ensemble is not connected.
        '''
        self._validate_connection( )
        return self._state.catalog.descriptions

    async def connect( self ) -> None:
        ''' Starts or reaches server, initializes session, lists tools.

            Raises :py:class:`invocables.exceptions.ConnectionFailure` if
            that fails or takes longer than the connect timeout, and
            :py:class:`invocables.exceptions.ConfigurationInvalidity` if an
            ``env:`` reference names an unset variable. Does nothing if
            already connected.
        '''
        state = self._state
        async with state.lock:
            if state.connection is not None and state.connection.is_usable( ):
                return
            if state.connection is not None:
                await state.connection.settle( self.options.grace )
            state.connection = None
            state.connection = await self._start( )
            state.connected = True
            _telemetry.record_connection( self.name ) # serving: metrics

    async def disconnect( self ) -> None:
        ''' Ends session; terminates server process group, if any.

            Leaves nothing running, also when cancelled (cleanup finishes
            before the cancellation propagates).
        '''
        state = self._state
        state.connected = False
        connection, state.connection = state.connection, None
        if connection is None: return
        connection.request_stop( 'the ensemble was disconnected' )
        await connection.settle( self.options.grace )

    async def invoke_tool(
        self,
        invocable: '_ToolInvocable',
        context: _invokers.Context,
        arguments: __.Arguments,
    ) -> _canisters.Content | _canisters.ContentSequence | None:
        ''' Calls tool on server; reconnects once if session was lost.

            Returns its content: one canister, several, or none.
        '''
        # One frame between the invoker and the SDK's call: each resumption
        # of the call (several per call) passes through every frame.
        connection = self._state.connection
        if connection is None or not connection.is_usable( ):
            connection = await self._reconnect( )
        # A caller which enforces a deadline (the execution engine, a direct
        # invocation) leaves none to set here: a second would race with it.
        # On cancellation, the SDK sends 'notifications/cancelled'.
        timeout = (
            self._access_call_timeout( invocable )
            if __.is_absent( context.deadline ) else None )
        name = invocable.name
        payload: dict[ str, __.typx.Any ] = (
            arguments if isinstance( arguments, dict ) else dict( arguments ) )
        retry = True
        while True:
            progress = _relays.produce_progress(
                self.name, name, context, self.options.reporter, connection )
            calling = (
                _tasks.TaskCall(
                    self.name, name, self._recover, progress,
                    self.options.grace )( connection, payload )
                if _tasks.is_tasked(
                    self._state.catalog.tasked, connection.session, name )
                else _inputs.call_tool(
                    connection.session, name, payload, progress,
                    connection.redactor.redact ) )
            try:
                with _relays.track( connection.relay, context ):
                    result = await ( # none when the caller keeps the time
                        calling if timeout is None
                        else _deadlines.await_within(
                            calling, timeout, name ) )
            except _exceptions.InvocationExpiry:
                raise _exceptions.InvocationRefusal(
                    f"Tool {name!r} did not answer within {timeout} "
                    "seconds; the call was cancelled." ) from None
            except _MCPError as exception:
                with __.ctxl.suppress( _Undelivery ):
                    await self._handle_error(
                        connection, invocable, exception, retry = retry )
                # Undelivered: the server never saw it; send it once more.
                connection = await self._reconnect( )
                retry = False
                continue
            except (
                _anyio.ClosedResourceError, _anyio.BrokenResourceError
            ): # SDK 1.x: the request could not be written (the server
                # died): as the closed connection which 2.x reports.
                await self._handle_error(
                    connection, invocable,
                    _sdk.produce_error(
                        _CONNECTION_CLOSED, 'Connection closed' ),
                    retry = False )
            except ( RuntimeError, ValueError ) as exception:
                raise _results.produce_flaw_refusal( # noqa: B904 # its cause
                    self.name, connection.redactor, exception )
            if progress is not None: await progress.settle( )
            return self._produce_contents( connection, name, result )

    def _produce_contents(
        self,
        connection: _sessions.Connection,
        name: str,
        result: __.typx.Any,
    ) -> _canisters.Content | _canisters.ContentSequence | None:
        ''' Checks result against tool's output schema; returns content.

            Checked here, with bounded patterns: the SDK's own check
            (Python's ``re``, in the event loop) is turned off.
        '''
        invoker = self._state.catalog.invokers_by_name.get( name )
        if invoker is not None:
            _results.validate_result(
                result, self.name, name, invoker.outschema,
                connection.redactor )
        contents = _results.produce_contents( result, connection.redactor )
        # One canister alone, the usual result, goes as it is: the
        # invoker takes it without looking into a sequence.
        if len( contents ) == 1: return contents[ 0 ]
        return contents or None

    async def wait_listings( self ) -> int:
        ''' Waits until no tool listing is due or running; returns count.

            A hook for tests and diagnostics: once the server's list-changed
            notifications have arrived, the tools it lists afterwards are
            those of :py:meth:`survey_invokers` when this returns. Raises
            :py:class:`invocables.exceptions.ConnectionAbsence` if the
            ensemble is not connected.
        '''
        self._validate_connection( )
        connection = self._state.connection
        if connection is None: return 0
        await connection.quiet.wait( )
        return connection.listings

    def _access_call_timeout(
        self, invocable: '_ToolInvocable'
    ) -> float | None:
        timeout = invocable.timeout
        if __.is_absent( timeout ): timeout = self.configuration.timeout
        if __.is_absent( timeout ): return _deadlines.TIMEOUT_DEFAULT
        return timeout

    async def _handle_error(
        self,
        connection: _sessions.Connection,
        invocable: '_ToolInvocable',
        exception: _MCPError,
        *,
        retry: bool,
    ) -> __.typx.NoReturn:
        code = exception.error.code
        name = invocable.name
        if _sdk.is_oversize( exception ):
            raise _exceptions.InvocationRefusal(
                f"The result of tool {name!r} was larger than "
                f"{self.options.result_limit} bytes, the limit set by the "
                "application; it was discarded. Ask for a smaller result "
                "(a part, a page, a summary)." ) from None
        if _sdk.is_session_lost( exception ):
            # An HTTP server which restarted (or expired the session) has
            # rejected the request without running it: safe to send again.
            connection.request_stop(
                f"the server no longer knows the session "
                f"({exception.error.message})" )
            await connection.wait_end( _SETTLE_TIMEOUT )
            if retry: raise _Undelivery
            code = _CONNECTION_CLOSED
        if code == _CONNECTION_CLOSED:
            connection.request_stop( )
            # When a watched process died, why is known already: fail at
            # once; the runner still terminates the process group.
            if connection.watch is None or not connection.watch.unexpected:
                await connection.wait_end( _SETTLE_TIMEOUT )
            if retry and connection.undelivered: raise _Undelivery
            advice = (
                'The next call reconnects.' if self._state.connected
                else 'Connect the ensemble again to call its tools.' )
            raise _exceptions.ConnectionFailure(
                self.name,
                f"{connection.describe_failure( )} during a call to tool "
                f"{name!r}. {advice}" ) from None
        raise _results.produce_call_refusal( # its cause: a stand-in
            self.name, name, exception, connection.redactor )

    def _produce_invocable(
        self, name: str, timeout: __.Absential[ float | None ]
    ) -> _invokers.Invocable:
        return _ToolInvocable( self, name, timeout )

    async def _recover(
        self, lost: _sessions.Connection, reason: str
    ) -> _sessions.Connection:
        ''' Stops lost connection; returns a new one (a task goes on). '''
        lost.request_stop( f"the session was lost ({reason})" )
        await lost.wait_end( _SETTLE_TIMEOUT )
        return await self._reconnect( )

    async def _reconnect( self ) -> _sessions.Connection:
        state = self._state
        async with state.lock:
            connection = state.connection
            if connection is not None and connection.is_usable( ):
                return connection
            if not state.connected:
                raise _exceptions.ConnectionAbsence( self.name )
            if connection is not None:
                await connection.settle( self.options.grace )
            state.connection = None
            _scribe.info( "Reconnecting to MCP server %r.", self.name )
            try: state.connection = await self._start( )
            except _exceptions.ConnectionFailure as exception:
                raise _exceptions.ConnectionFailure(
                    self.name,
                    f"the session was lost and reconnecting failed: "
                    f"{exception.reason}" ) from exception
            _telemetry.record_connection( # serving: metrics
                self.name, reconnection = True )
            return state.connection

    async def _start( self ) -> _sessions.Connection:
        ''' Starts session task; returns once session is ready. '''
        resolution = self.parameters.resolve(
            self.name, self.features.authorization )
        connection = _sessions.Connection( self.name, resolution.redactor )
        if self._state.relaying:
            connection.relay = _relays.Relay(
                self.name, resolution.redactor, self._state.observer )
        runner = _sessions.Runner(
            connection, self.parameters, self.options, resolution,
            self._state.catalog.absorb,
            features = self.features ) # authorization
        connection.task = __.asyncio.get_running_loop( ).create_task(
            runner.run( ), name = f"invocables.mcp:{self.name}" )
        # A user logging in is bounded by the grant's handlers instead.
        bound = (
            None if self.features.is_interactive( )
            else self.options.connect_timeout + 2 * self.options.grace + 2 )
        try:
            await __.asyncio.wait_for(
                __.asyncio.shield( connection.ready ), bound )
        except __.asyncio.CancelledError:
            # Before the session is ready, the runner is cancelled at once;
            # its transport still terminates the server (shielded).
            connection.task.cancel( )
            await connection.settle( self.options.grace )
            connection.retrieve_readiness( )
            raise
        except __.asyncio.TimeoutError:
            connection.task.cancel( )
            await connection.settle( self.options.grace )
            connection.retrieve_readiness( )
            raise _exceptions.ConnectionFailure(
                self.name,
                f"no session after {bound} seconds." ) from None
        except _exceptions.ConnectionFailure:
            await connection.settle( self.options.grace )
            raise
        return connection

    def _validate_connection( self ) -> None:
        if not self._state.connected:
            raise _exceptions.ConnectionAbsence( self.name )


class _State:
    ''' Mutable state of a server ensemble. '''

    def __init__( self, catalog: _catalog.Catalog ) -> None:
        self.connected = False
        self.connection: _sessions.Connection | None = None
        self.lock = __.asyncio.Lock( )
        self.catalog = catalog
        self.relaying = False
        self.observer: _relays.Observer | None = None


class _ToolInvocable:
    ''' Invocable which calls one tool of a server ensemble. '''

    __slots__ = ( 'ensemble', 'name', 'timeout' )

    def __init__(
        self,
        ensemble: ServerEnsemble,
        name: str,
        timeout: __.Absential[ float | None ],
    ):
        self.ensemble = ensemble
        self.name = name
        self.timeout = timeout

    def __call__(
        self, context: _invokers.Context, arguments: __.Arguments
    ) -> __.cabc.Coroutine[
        __.typx.Any, __.typx.Any,
        _canisters.Content | _canisters.ContentSequence | None,
    ]:
        # The ensemble's coroutine itself: no frame of its own.
        return self.ensemble.invoke_tool( self, context, arguments )


class _Undelivery( Exception ):
    ''' Internal signal: the request never reached the server. '''


def produce_ensemble( # noqa: PLR0913
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of ensemble; scopes colliding names. ''' )
    ],
    parameters: __.typx.Annotated[
        __.Absential[ _configuration.ServerParameters ],
        __.ddoc.Doc( ''' Where and how to reach the server; or give its
            fields (``command``, ``url``, ...) as keywords. ''' ),
    ] = __.absent,
    options: __.typx.Annotated[
        __.Absential[ _records.ServerOptions ],
        __.ddoc.Doc( ''' Deadlines, filters, progress and sandbox; fields
            given as keywords replace its own. ''' ),
    ] = __.absent,
    *,
    timeout: __.typx.Annotated[
        __.Absential[ float | None ],
        __.ddoc.Doc(
            ''' Seconds allowed to each call, unless its tool has its own
                timeout; ``None`` for no limit. Default: the timeout given
                to ``execute_invocations``, else 60 seconds. ''' ),
    ] = __.absent,
    description: str = '',
    command: __.typx.Annotated[
        __.Absential[ str | __.cabc.Sequence[ str ] ],
        __.ddoc.Doc( ''' Program of a stdio server (started directly, never
            through a shell), or program and arguments. ''' ),
    ] = __.absent,
    url: __.typx.Annotated[
        __.Absential[ str ], __.ddoc.Doc( ''' URL of an HTTP server. ''' )
    ] = __.absent,
    headers: __.typx.Annotated[
        __.Absential[ __.cabc.Mapping[ str, str ] ],
        __.ddoc.Doc( ''' HTTP headers; a value ``env:NAME`` is read from the
            environment at connect time. ''' ),
    ] = __.absent,
    transport: __.typx.Annotated[
        __.Absential[ _configuration.Transports | str ],
        __.ddoc.Doc( ''' 'stdio', 'streamable-http' or 'sse' (default: by
            command or URL, sse if its path ends in /sse). ''' ),
    ] = __.absent,
    result_limit: __.typx.Annotated[
        __.Absential[ int | None ],
        __.ddoc.Doc( ''' Largest answer read, in bytes (32 MiB by default;
            ``None``: no limit); a larger one is an error result. ''' ),
    ] = __.absent,
    elicitor: __.typx.Annotated[
        __.Absential[ _callbacks.Elicitor ],
        __.ddoc.Doc( ''' Async callable which asks the user for the input a
            server requests (``elicitation/create``); else unsupported. ''' ),
    ] = __.absent,
    sampler: __.typx.Annotated[
        __.Absential[ _callbacks.Sampler ],
        __.ddoc.Doc( ''' Async callable which answers a server's request
            for a completion (``sampling/createMessage``). ''' ),
    ] = __.absent,
    roots: __.typx.Annotated[
        __.Absential[ __.cabc.Iterable[ _callbacks.Root ] ],
        __.ddoc.Doc( ''' Directories (paths or URIs) the server may work in;
            change them later with ``configure_roots``. ''' ),
    ] = __.absent,
    authorization: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' How to authorize with an HTTP server (see
            :py:mod:`invocables.mcp.authorization`). ''' ),
    ] = __.absent,
    log_level: __.typx.Annotated[
        __.Absential[ _callbacks.LoggingLevels ],
        __.ddoc.Doc( ''' Least severe level of the log messages the server
            should send (to logger ``invocables.mcp.servers.<name>``). ''' ),
    ] = __.absent,
    **shortcuts: __.typx.Unpack[ _records.ServerShortcuts ],
) -> ServerEnsemble:
    ''' Produces ensemble for an MCP server; not connected yet.

        Connect with ``async with ensemble:`` or ``await ensemble.connect( )``.
        Further keyword shortcuts are those of
        :py:class:`invocables.mcp.records.ServerShortcuts`. Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` if the
        options contradict each other.
    '''
    given: dict[ str, __.typx.Any ] = {
        key: value for key, value in (
            ( 'command', command ), ( 'url', url ), ( 'headers', headers ),
            ( 'transport', transport ), ( 'result_limit', result_limit ),
            ( 'elicitor', elicitor ), ( 'sampler', sampler ),
            ( 'roots', roots ), ( 'authorization', authorization ),
            ( 'log_level', log_level ), *shortcuts.items( ) )
        if not __.is_absent( value ) }
    parameters = _configuration.access_parameters(
        name, parameters, given )
    _records.validate_timeout(
        name, 'timeout', None if __.is_absent( timeout ) else timeout )
    options = _records.produce_options(
        name, options, given, parameters.url )
    # Only a timeout given here is the ensemble's: otherwise the caller's
    # timeout (of execute_invocations) applies.
    configuration = _ensembles.EnsembleConfiguration(
        timeout = timeout, description = description )
    features = _callbacks.Features(
        name, **{
            key: value for key, value in given.items( )
            if key not in _records.OPTIONS
            and key not in _configuration.PARAMETERS },
        # expose: one hung OAuth request fails within the connect timeout.
        authorization_timeout = options.connect_timeout / 2 )
    if 'authorization' in given and __.is_absent( parameters.url ):
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {name!r} 'authorization'",
            "applies to HTTP servers only (give 'url')." )
    return ServerEnsemble(
        name, parameters, configuration, options, features )
