# SPDX-License-Identifier: Apache-2.0

''' Runner task which holds one session with an MCP server.

    Opens the transport, performs the legacy handshake (``initialize``,
    protocol 2025-11-25: a server which ignores unknown methods costs no
    probe timeout; a server which speaks MCP 2026-07-28 only is discovered
    instead, see :py:func:`invocables.mcp._sdk.negotiate`), lists every
    page of tools, then serves list-changed
    refreshes (under MCP 2026-07-28, heard on streams of
    ``subscriptions/listen``, :py:mod:`invocables.mcp._listening`) until
    asked to stop or until the transport dies; on every way
    out it closes the session and the transport (which terminates a child
    process group). Each listing goes to the ensemble through a callback,
    the listener; the session knows nothing of ensembles.
'''


import sys as _sys

import anyio as _anyio

import invocables.mcp.__ as __
import invocables.mcp.callbacks as _callbacks # authorization
import invocables.mcp.configuration as _configuration
import invocables.mcp.listings as _listings
import invocables.mcp._http as _http
import invocables.mcp._listening as _listening
import invocables.mcp._processes as _processes
import invocables.mcp.records as _records
import invocables.mcp.redaction as _redaction
import invocables.mcp._relays as _relays
import invocables.mcp._sdk as _sdk
import invocables.mcp._tasks as _tasks
from ._sdk import ClientSession as _ClientSession
from ._sdk import Error as _MCPError
from ._sdk import types as _mcp_types
import invocables.exceptions as _exceptions


Listener: __.typx.TypeAlias = __.cabc.Callable[
    [
        __.cabc.Sequence[ _mcp_types.Tool ],
        __.cabc.Sequence[ _records.Omission ],
    ],
    None,
]
''' Takes each listing of tools, with the tools the screen refused. '''

_scribe = __.produce_scribe( __name__ )


def _access_client_information( ) -> _mcp_types.Implementation:
    # The package is imported before any of its modules: read, not imported.
    version = vars( _sys.modules[ __.package_name ] )[ '__version__' ]
    return _mcp_types.Implementation(
        name = __.package_name, version = version )


class Connection:
    ''' One session with a server, held by its runner task. '''

    def __init__( self, name: str, redactor: _configuration.Redactor ):
        self.name = name
        self.redactor = redactor
        self.task: __.asyncio.Task[ None ] | None = None
        self.ready: __.asyncio.Future[ None ] = (
            __.asyncio.get_running_loop( ).create_future( ) )
        self.session: _ClientSession | None = None
        self.wake = __.asyncio.Event( )
        self.quiet = __.asyncio.Event( )
        self.stopping = False
        self.refreshing = False
        self.closed = False
        self.undelivered = False
        self.listings = 0
        self.failure: str | None = None
        self.watch: _processes.ProcessWatch | None = None
        # Relays the server's requests to the callers of calls, if set.
        self.relay: _relays.Relay | None = None

    def describe_failure( self ) -> str:
        ''' Returns why the session ended, as far as known. '''
        if self.failure is not None: return self.failure
        if self.watch is not None: return self.watch.describe_exit( )
        return 'the connection closed'

    def is_usable( self ) -> bool:
        ''' Returns whether calls may use the session. '''
        return (
            self.session is not None
            and not self.stopping and not self.closed )

    def request_refresh( self ) -> None:
        ''' Asks the runner to list tools again (debounced). '''
        self.refreshing = True
        self.quiet.clear( )
        self.wake.set( )

    def request_stop( self, failure: str | None = None ) -> None:
        ''' Asks the runner to end the session. '''
        if failure is not None and self.failure is None:
            self.failure = self.redactor.redact( failure )
        self.stopping = True
        self.wake.set( )

    def retrieve_readiness( self ) -> None:
        ''' Marks outcome of readiness as seen, so asyncio does not log it.
        '''
        ready = self.ready
        if ready.done( ) and not ready.cancelled( ): ready.exception( )

    async def wait_end( self, timeout: float ) -> None:
        ''' Waits, within timeout and without cancelling it, for runner. '''
        task = self.task
        if task is None or task.done( ): return
        await __.asyncio.wait( { task }, timeout = timeout )

    async def settle( self, grace: float ) -> None:
        ''' Waits until runner has ended, even if cancelled meanwhile.

            The runner terminates the server within about two grace periods;
            should it not, it is cancelled. A cancellation of the caller is
            re-raised once the runner has ended.
        '''
        task = self.task
        if task is None: return
        cancelled = False
        loop = __.asyncio.get_running_loop( )
        deadline = loop.time( ) + 2 * grace + 2
        escalated = False
        while not task.done( ):
            remainder = deadline - loop.time( )
            if remainder <= 0:
                if escalated: # pragma: no cover
                    _scribe.warning( "MCP session task would not end." )
                    break
                escalated = True
                task.cancel( )
                deadline = loop.time( ) + 2 * grace + 2
                continue
            try: await __.asyncio.wait( { task }, timeout = remainder )
            except __.asyncio.CancelledError: cancelled = True
        if cancelled: raise __.asyncio.CancelledError


class Runner:
    ''' Holds the session of one connection, in its own task. '''

    def __init__(
        self,
        connection: Connection,
        parameters: _configuration.ServerParameters,
        options: _records.ServerOptions,
        resolution: _configuration.Resolution,
        listener: Listener,
        features: '_callbacks.Features | None' = None, # authorization
    ):
        self.name = connection.name
        self.connection = connection
        self.parameters = parameters
        self.options = options
        self.resolution = resolution
        self.listener = listener
        self.features = features or _callbacks.Features( connection.name )
        self.screen = _listings.ListingScreen(
            connection.name, connection.redactor )

    async def run( self ) -> None:
        ''' Runs session until stopped; records why it ended.

            While it runs, the secrets of the connection are redacted from
            log records.
        '''
        connection = self.connection
        _redaction.activate_redactor( connection.redactor )
        try: await self._run( )
        except BaseException as exception:
            connection.undelivered = _is_undelivered( exception )
            _scribe.debug(
                "Session with MCP server %r failed.", self.name,
                exc_info = exception )
            if connection.failure is None:
                connection.failure = connection.redactor.redact(
                    self._describe( exception ) )
            # authorization: its failure reaches connect( ) as it is.
            primary = _select_primary( _flatten( exception ) )
            primary = self.features.explain_failure( # expose
                _flatten( exception ), primary )
            if isinstance( primary, (
                _exceptions.AuthorizationFailure,
                _exceptions.ConfigurationInvalidity,
                _exceptions.SandboxNoSupport,
            ) ) and (
                not connection.ready.done( )
            ): connection.ready.set_exception( primary )
            if not isinstance( exception, (
                Exception, __.asyncio.CancelledError )
            ): raise
        finally:
            connection.closed = True
            connection.session = None
            connection.quiet.set( )
            if not connection.ready.done( ):
                connection.ready.set_exception(
                    _exceptions.ConnectionFailure(
                        self.name, connection.describe_failure( ) ) )
            _scribe.debug(
                "Session with MCP server %r ended.", self.name )
            _redaction.deactivate_redactor( connection.redactor )

    async def _run( self ) -> None:
        connection = self.connection
        options = self.options
        async with __.ctxl.AsyncExitStack( ) as stack:
            read, write = await stack.enter_async_context(
                self._open_transport( ) )
            if self.parameters.transport is not (
                _configuration.Transports.Stdio
            ): # the stdio transport applies the screen itself
                read = _listings.ReadStream( read, self.screen )
                write = _listings.WriteStream( write, self.screen )
            features = self.features # authorization
            arguments = features.produce_session_arguments(
                connection.redactor )
            if connection.relay is not None:
                arguments = connection.relay.produce_session_arguments(
                    arguments )
            arguments = arguments | _tasks.produce_task_arguments(
                tasks = options.tasks is not _records.TaskUses.Never )
            session = await stack.enter_async_context( _ClientSession(
                read, write,
                message_handler = self._handle_message,
                client_info = _access_client_information( ), **arguments ) )
            with _anyio.fail_after( options.connect_timeout ) as deadline:
                features.deadline = deadline # stopped while a user logs in
                try: await self._open( session )
                finally: features.deadline = None
            connection.session = session
            connection.ready.set_result( None )
            _scribe.debug(
                "Connected to MCP server %r.", self.name )
            await self._hold( session )

    async def _hold( self, session: _ClientSession ) -> None:
        ''' Serves refreshes until asked to stop; under MCP 2026-07-28,
            hears the server's changes on streams meanwhile. '''
        try:
            async with _anyio.create_task_group( ) as group:
                if _sdk.is_modern( session ):
                    group.start_soon(
                        _listening.listen_changes, session, self.name )
                await self._serve( session )
                group.cancel_scope.cancel( )
        finally: _sdk.release_requests( session ) # SDK 1.x

    async def _open( self, session: _ClientSession ) -> None:
        ''' Opens session by the handshake chosen; lists its tools. '''
        await _sdk.negotiate( session, self.options.protocol.value )
        # Listings are checked by the protocol discovered too.
        self.screen.version = _sdk.access_field(
            session, 'protocol_version', self.screen.version )
        await self.features.prepare_session( session )
        await self._refresh( session )

    async def _serve( self, session: _ClientSession ) -> None:
        connection = self.connection
        options = self.options
        while True:
            if not connection.refreshing: connection.quiet.set( )
            await connection.wake.wait( )
            connection.wake.clear( )
            if connection.stopping: return
            # Debounce: notifications within the interval coalesce.
            await __.asyncio.sleep( options.debounce )
            if connection.stopping: return
            connection.wake.clear( )
            connection.refreshing = False
            try:
                with _anyio.fail_after( options.list_timeout ):
                    await self._refresh( session )
            except ( _MCPError, TimeoutError, ValueError ) as exception:
                _scribe.warning(
                    "Listing tools of MCP server %r failed: %s",
                    self.name,
                    connection.redactor.redact( str( exception ) ) )

    async def _handle_message( self, message: __.typx.Any ) -> None:
        if isinstance(
            _sdk.access_message( message ),
            _mcp_types.ToolListChangedNotification,
        ):
            self.connection.request_refresh( )
            _scribe.debug( "MCP server %r announced new tools.", self.name )
        elif isinstance( message, Exception ):
            _scribe.debug(
                "MCP server %r: transport reported %s.",
                self.name, type( message ).__name__ )
        elif self.connection.relay is not None:
            await self.connection.relay.observe(
                _sdk.access_message( message ) )

    def _open_transport(
        self
    ) -> __.typx.AsyncContextManager[ tuple[ __.typx.Any, __.typx.Any ] ]:
        parameters = self.parameters
        options = self.options
        resolution = self.resolution
        transports = _configuration.Transports
        url = __.typx.cast( str, resolution.url )
        match parameters.transport:
            case transports.Stdio:
                watch = _processes.ProcessWatch(
                    self.name, self.connection.redactor,
                    self._report_exit )
                self.connection.watch = watch
                return _processes.open_stdio(
                    parameters, resolution.environment, watch,
                    options.grace, options.result_limit, self.screen,
                    sandbox = options.sandbox )
            case transports.StreamableHttp:
                return _open_streamable_http(
                    url, resolution.headers, options.result_limit,
                    self.features.produce_auth( url ) )
            case transports.Sse:
                from mcp.client.sse import sse_client
                return sse_client(
                    url, headers = dict( resolution.headers ),
                    timeout = options.connect_timeout,
                    auth = self.features.produce_auth( url ) )

    def _report_exit( self ) -> None:
        watch = __.typx.cast( _processes.ProcessWatch, self.connection.watch )
        ready = self.connection.ready.done( )
        noise = '' if ready else watch.describe_noise( )
        if ready: # else the failure to connect says it
            _scribe.warning(
                "MCP server %r: %s.", self.name, watch.describe_exit( ) )
        self.connection.request_stop( f"{watch.describe_exit( )}{noise}" )

    async def _refresh( self, session: _ClientSession ) -> None:
        self.screen.refusals.clear( )
        tools = await _listings.survey_pages(
            self.name, session.list_tools, 'tools' )
        self.connection.listings += 1
        redactor = self.connection.redactor
        tools = [ _prepare_tool( redactor, tool ) for tool in tools ]
        self.listener( tools, tuple( self.screen.refusals ) )

    def _describe( self, exception: BaseException ) -> str:
        ''' Returns why the session ended, for error messages. '''
        primary = _select_primary( _flatten( exception ) )
        target = self.parameters.describe_target( )
        watch = self.connection.watch
        if isinstance( primary, FileNotFoundError ):
            return (
                f"command {target!r} was not found; check 'command' and "
                "PATH." )
        noise = '' if watch is None or self.connection.ready.done( ) else (
            watch.describe_noise( ) )
        if isinstance( primary, TimeoutError ):
            return (
                "the server did not complete the handshake and tool "
                "listing within {timeout} seconds{noise}.".format(
                    timeout = self.options.connect_timeout,
                    noise = noise ) )
        if watch is not None and watch.unexpected:
            return f"{watch.describe_exit( )}{noise}"
        return _describe_exception( primary, target )


def _describe_exception( exception: BaseException, target: str ) -> str:
    match exception:
        case PermissionError( ):
            return f"command {target!r} cannot be run: {exception}"
        case __.asyncio.CancelledError( ):
            return "the session was cancelled."
        case _MCPError( ):
            return exception.error.message
        case _:
            return (
                f"{type( exception ).__name__} with {target}: "
                f"{exception}" ).rstrip( ': ' )


def _flatten( exception: BaseException ) -> list[ BaseException ]:
    nested = getattr( exception, 'exceptions', None )
    if not isinstance( nested, __.cabc.Sequence ): return [ exception ]
    return [
        leaf
        for item in __.typx.cast( __.cabc.Sequence[ BaseException ], nested )
        for leaf in _flatten( item ) ]


def _is_undelivered( exception: BaseException ) -> bool:
    ''' Returns whether an HTTP transport could not reach the server. '''
    return any(
        isinstance( item, _sdk.http.ConnectError )
        for item in _flatten( exception ) )


def _prepare_tool(
    redactor: _configuration.Redactor, tool: _mcp_types.Tool
) -> _mcp_types.Tool:
    ''' Returns tool with secrets replaced and text made sendable, in all
        but its name (which calls send back as it is) unless that holds a
        secret: the catalog leaves such a tool out.

        What a server lists reaches every provider's tool list, the list
        which ``serve`` sends, descriptors written and spans: its secrets
        are replaced and its lone surrogates (JSON escapes of UTF-16
        halves) escaped once, here, where it enters.
    '''
    data = tool.model_dump( by_alias = True, exclude_none = True )
    prepared = __.typx.cast(
        dict[ str, __.typx.Any ],
        redactor.prepare_data( data ) )
    if prepared is data or prepared == data: return tool
    if redactor.redact( tool.name ) == tool.name:
        prepared[ 'name' ] = tool.name
    return type( tool ).model_validate( prepared )


async def _open_streamable_http_(
    url: str,
    headers: __.cabc.Mapping[ str, str ],
    limit: int | None,
    auth: __.typx.Any = None, # authorization: an httpx2.Auth
) -> __.cabc.AsyncGenerator[ tuple[ __.typx.Any, __.typx.Any ], None ]:
    client = _http.produce_http_client( headers, auth, limit )
    # The SDK's own limit of one event (1 MiB) would end the session on a
    # larger result; the result limit applies instead.
    async with client, _http.open_streamable_http(
        url, client, limit
    ) as streams: yield streams


_open_streamable_http = __.ctxl.asynccontextmanager( _open_streamable_http_ )


def _select_primary(
    exceptions: __.cabc.Sequence[ BaseException ]
) -> BaseException:
    ''' Picks the most telling of several exceptions. '''
    for kind in ( OSError, TimeoutError, _MCPError ):
        for exception in exceptions:
            if isinstance( exception, kind ): return exception
    for exception in exceptions:
        if not isinstance( exception, __.asyncio.CancelledError ):
            return exception
    return exceptions[ 0 ]
