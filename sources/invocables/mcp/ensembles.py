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


import os as _os

import anyio as _anyio

from . import __
from . import authorization as _authorization # authorization
from . import callbacks as _callbacks # authorization
from . import catalog as _catalog
from . import configuration as _configuration
from . import exposure as _exposure # expose
from . import _processes as _processes
from . import resources as _resources # authorization
from . import records as _records
from . import results as _results
from . import sandbox as _sandbox
from . import sessions as _sessions
from . import _sdk as _sdk
from ._sdk import Error as _MCPError
from .. import canisters as _canisters
from ..execution import deadlines as _deadlines
from .. import ensembles as _ensembles
from .. import exceptions as _exceptions
from .. import invokers as _invokers
from .. import telemetry as _telemetry


# Defaults, also importable from here (descriptors use them).
CONNECT_TIMEOUT_DEFAULT = _records.CONNECT_TIMEOUT_DEFAULT
DEBOUNCE_DEFAULT = _records.DEBOUNCE_DEFAULT
LIST_TIMEOUT_DEFAULT = _records.LIST_TIMEOUT_DEFAULT
RESULT_LIMIT_DEFAULT = _records.RESULT_LIMIT_DEFAULT
TIMEOUT_DEFAULT = _records.TIMEOUT_DEFAULT

_CONNECTION_CLOSED = -32000
_INVALID_REQUEST = -32600
_SSE_OVERSIZE = 'Server-sent event exceeded'
_SETTLE_TIMEOUT = 1.0
_session_loss = __.re.compile(
    r'session (?:not found|terminated|expired)', __.re.IGNORECASE )
_TIMEOUTS_EMPTY: __.cabc.Mapping[ str, float | None ] = (
    __.types.MappingProxyType( { } ) )
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
        reporting = not __.is_absent( self.options.reporter )
        retry = True
        while True:
            calling = _sdk.call_tool(
                connection.session, name, payload, None,
                self._produce_progress(
                    invocable, context, connection.redactor )
                if reporting else None )
            try:
                result = await ( # no wrapper when the caller keeps the time
                    calling if timeout is None
                    else _deadlines.await_within( calling, timeout, name ) )
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
                flaw = (
                    'breaks its own declaration'
                    if isinstance( exception, RuntimeError )
                    else 'is not a valid MCP result' )
                raise _exceptions.InvocationRefusal(
                    connection.redactor.redact(
                        f"Server {self.name!r} returned a result which "
                        f"{flaw}: {exception}" )
                ) from exception
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
        if _is_oversize( exception ):
            raise _exceptions.InvocationRefusal(
                f"The result of tool {name!r} was larger than "
                f"{self.options.result_limit} bytes, the limit set by the "
                "application; it was discarded. Ask for a smaller result "
                "(a part, a page, a summary)." ) from None
        if _is_session_lost( exception ):
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
        raise _exceptions.InvocationRefusal( connection.redactor.redact(
            f"Server {self.name!r} refused the call of tool {name!r}: "
            f"{exception.error.message} (code {code})." ) ) from exception

    def _produce_invocable(
        self, name: str, timeout: __.Absential[ float | None ]
    ) -> _invokers.Invocable:
        return _ToolInvocable( self, name, timeout )

    def _produce_progress(
        self,
        invocable: '_ToolInvocable',
        context: _invokers.Context,
        redactor: _configuration.Redactor,
    ) -> __.typx.Any:
        reporter = self.options.reporter
        if __.is_absent( reporter ): return None
        invocation = context.invocation
        identifier = (
            __.absent if __.is_absent( invocation )
            else invocation.identifier )

        async def report(
            progress: float, total: float | None, message: str | None
        ) -> None:
            report = _records.Progress(
                ensemble = self.name, tool = invocable.name,
                progress = progress, total = total,
                message = None if message is None else redactor.redact(
                    message ),
                invocation_id = identifier )
            try:
                outcome = reporter( report )
                if __.inspect.isawaitable( outcome ): await outcome
            except Exception:
                _scribe.exception( "Progress reporter raised." )

        return report

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


def _is_oversize( exception: _MCPError ) -> bool:
    ''' Returns whether answer was discarded for being over the limit. '''
    error = exception.error
    data = error.data
    if isinstance( data, __.cabc.Mapping ) and (
        _sdk.RESULT_OVERSIZE in data
    ): return True
    # Over HTTP, the SDK reports an event over its limit this way.
    return _SSE_OVERSIZE in error.message


def _is_session_lost( exception: _MCPError ) -> bool:
    ''' Returns whether an HTTP server rejected the session as unknown. '''
    error = exception.error
    # SDK 1.x gives this error a positive code.
    return (
        error.code in ( _INVALID_REQUEST, - _INVALID_REQUEST )
        and _session_loss.search( error.message ) is not None )


def produce_ensemble( # noqa: PLR0913
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of ensemble; scopes colliding names. ''' )
    ],
    *,
    command: __.typx.Annotated[
        __.Absential[ str | __.cabc.Sequence[ str ] ],
        __.ddoc.Doc(
            ''' Program of a stdio server (started directly, never through
                a shell), or program and arguments. ''' ),
    ] = __.absent,
    arguments: __.typx.Annotated[
        __.cabc.Sequence[ str ],
        __.ddoc.Doc( ''' Further arguments of the program. ''' ),
    ] = ( ),
    environment: __.typx.Annotated[
        __.Absential[ __.cabc.Mapping[ str, str ] ],
        __.ddoc.Doc(
            ''' Variables for the child, over a minimal inherited set
                (HOME, LOGNAME, PATH, SHELL, TERM, USER). A value
                ``env:NAME`` is read from the environment at connect
                time. ''' ),
    ] = __.absent,
    cwd: __.typx.Annotated[
        __.Absential[ str | _os.PathLike[ str ] ],
        __.ddoc.Doc( ''' Working directory of the child. ''' ),
    ] = __.absent,
    url: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Endpoint of an HTTP server. ''' ),
    ] = __.absent,
    headers: __.typx.Annotated[
        __.Absential[ __.cabc.Mapping[ str, str ] ],
        __.ddoc.Doc(
            ''' HTTP headers; a value ``env:NAME`` is read from the
                environment at connect time. ''' ),
    ] = __.absent,
    transport: __.typx.Annotated[
        __.Absential[ _configuration.Transports | str ],
        __.ddoc.Doc(
            ''' 'stdio', 'streamable-http' or 'sse'. Default: stdio for a
                command; for a URL, sse if its path ends in /sse, else
                streamable-http. ''' ),
    ] = __.absent,
    timeout: __.typx.Annotated[
        __.Absential[ float | None ],
        __.ddoc.Doc(
            ''' Seconds allowed to each call, unless its tool has its own
                timeout; ``None`` for no limit. Default: the timeout given
                to ``execute_invocations``, else 60 seconds. ''' ),
    ] = __.absent,
    timeouts: __.typx.Annotated[
        __.cabc.Mapping[ str, float | None ],
        __.ddoc.Doc( ''' Seconds allowed to calls, by tool name. ''' ),
    ] = _TIMEOUTS_EMPTY,
    connect_timeout: __.typx.Annotated[
        float,
        __.ddoc.Doc(
            ''' Seconds allowed to start, handshake and list tools. ''' ),
    ] = _records.CONNECT_TIMEOUT_DEFAULT,
    list_timeout: __.typx.Annotated[
        float,
        __.ddoc.Doc( ''' Seconds allowed to a refresh of the tools. ''' ),
    ] = _records.LIST_TIMEOUT_DEFAULT,
    include: __.typx.Annotated[
        __.Absential[ __.cabc.Iterable[ str ] ],
        __.ddoc.Doc( ''' Names of the only tools to offer. ''' ),
    ] = __.absent,
    exclude: __.typx.Annotated[
        __.cabc.Iterable[ str ],
        __.ddoc.Doc( ''' Names of tools never to offer. ''' ),
    ] = ( ),
    reporter: __.typx.Annotated[
        __.Absential[ _records.Reporter ],
        __.ddoc.Doc(
            ''' Called (sync or async) with each progress notification;
                giving it makes every call ask for progress. ''' ),
    ] = __.absent,
    grace: __.typx.Annotated[
        float,
        __.ddoc.Doc(
            ''' Seconds a child may take to exit after its stdin closes,
                and again after SIGTERM, before SIGKILL. ''' ),
    ] = _processes.GRACE_DEFAULT,
    result_limit: __.typx.Annotated[
        int | None,
        __.ddoc.Doc(
            ''' Largest answer read from the server, in bytes (32 MiB by
                default); a larger result becomes an error result naming
                the limit. ``None`` for no limit. ''' ),
    ] = _records.RESULT_LIMIT_DEFAULT,
    description: str = '',
    # authorization: features offered to the server (callbacks.py).
    elicitor: __.typx.Annotated[
        __.Absential[ _callbacks.Elicitor ],
        __.ddoc.Doc(
            ''' Async callable which asks the user for the input a server
                requests (``elicitation/create``); without it, the server
                is told that elicitation is not supported. ''' ),
    ] = __.absent,
    sampler: __.typx.Annotated[
        __.Absential[ _callbacks.Sampler ],
        __.ddoc.Doc(
            ''' Async callable which answers a server's request for a
                completion (``sampling/createMessage``), for example one
                from ``produce_sampler``. ''' ),
    ] = __.absent,
    sampling_limits: __.typx.Annotated[
        __.Absential[ _callbacks.SamplingLimits ],
        __.ddoc.Doc(
            ''' Most sampling requests per session and most tokens per
                request (default: 100 and 4096); beyond them, requests are
                refused. ''' ),
    ] = __.absent,
    roots: __.typx.Annotated[
        __.Absential[ __.cabc.Iterable[ _callbacks.Root ] ],
        __.ddoc.Doc(
            ''' Directories (paths or URIs) the server may work in;
                change them later with ``configure_roots``. ''' ),
    ] = __.absent,
    authorization: __.typx.Annotated[
        __.Absential[ '_authorization.Authorization' ],
        __.ddoc.Doc(
            ''' How to authorize with an HTTP server: a bearer token, OAuth
                client credentials, or the OAuth authorization code grant
                (see :py:mod:`invocables.mcp.authorization`). ''' ),
    ] = __.absent,
    log_level: __.typx.Annotated[
        __.Absential[ _callbacks.LoggingLevels ],
        __.ddoc.Doc(
            ''' Least severe level of the log messages the server should
                send (to logger ``invocables.mcp.servers.<name>``). ''' ),
    ] = __.absent,
    resources_as_tools: __.typx.Annotated[
        bool,
        __.ddoc.Doc(
            ''' Also offer the model two tools which list the server's
                resources and read one by URI (``list_resources``,
                ``read_resource``; renamed if the server has such
                tools). ''' ),
    ] = False,
    sandbox: __.typx.Annotated[
        __.Absential[ _sandbox.Sandbox | bool ],
        __.ddoc.Doc(
            ''' Confinement of a stdio server: a ``Sandbox`` (paths read
                and written, network, variables passed), or ``True`` for
                the default profile (reads the system and the server's
                installation, writes a private temporary folder, no
                network). Connecting fails if no sandbox can be set up
                here. ''' ),
    ] = __.absent,
) -> ServerEnsemble:
    ''' Produces ensemble for an MCP server; not connected yet.

        Connect with ``async with ensemble:`` or ``await ensemble.connect( )``.
        Raises :py:class:`invocables.exceptions.ConfigurationInvalidity` if
        the options contradict each other.
    '''
    parameters = _configuration.produce_parameters(
        name, command = command, arguments = arguments,
        environment = environment, cwd = cwd, url = url, headers = headers,
        transport = transport )
    for label, value in (
        ( 'timeout', None if __.is_absent( timeout ) else timeout ),
        * timeouts.items( ),
    ): _validate_timeout( name, label, value )
    _validate_limit( name, result_limit )
    # Only a timeout given here is the ensemble's: otherwise the caller's
    # timeout (of execute_invocations) applies.
    configuration = _ensembles.EnsembleConfiguration(
        timeout = timeout, description = description )
    options = _records.ServerOptions(
        connect_timeout = connect_timeout, list_timeout = list_timeout,
        timeouts = __.types.MappingProxyType( dict( timeouts ) ),
        include = (
            __.absent if __.is_absent( include ) else frozenset( include ) ),
        exclude = frozenset( exclude ), reporter = reporter,
        grace = grace, result_limit = result_limit,
        resources_as_tools = resources_as_tools, # expose
        sandbox = _produce_sandbox( name, sandbox, url ) )
    features = _callbacks.Features(
        name, elicitor = elicitor, sampler = sampler,
        sampling_limits = sampling_limits, roots = roots,
        log_level = log_level, authorization = authorization,
        # expose: one hung OAuth request fails within the connect timeout.
        authorization_timeout = connect_timeout / 2 )
    if not __.is_absent( authorization ) and __.is_absent( url ):
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {name!r} 'authorization'",
            "applies to HTTP servers only (give 'url')." )
    return ServerEnsemble(
        name, parameters, configuration, options, features )


def _produce_sandbox(
    name: str, sandbox: object, url: __.Absential[ str ]
) -> __.Absential[ _sandbox.Sandbox ]:
    location = f"MCP ensemble {name!r} 'sandbox'"
    sandbox_ = _sandbox.validate_sandbox( sandbox, location )
    if not __.is_absent( sandbox_ ) and not __.is_absent( url ):
        raise _exceptions.ConfigurationInvalidity(
            location, "applies to stdio servers only (give 'command'); an "
            "HTTP server runs where it is hosted." )
    return sandbox_


def _validate_limit( name: str, value: object ) -> None:
    if value is None: return
    if isinstance( value, int ) and not isinstance( value, bool ) and (
        value > 0
    ): return
    raise _exceptions.ConfigurationInvalidity(
        f"MCP ensemble {name!r} 'result_limit'",
        "must be a positive number of bytes or None." )


def _validate_timeout( name: str, label: str, value: object ) -> None:
    __.values.validate_timeout(
        value, f"MCP ensemble {name!r} timeout {label!r}",
        reason = "must be a positive number of seconds or None." )
