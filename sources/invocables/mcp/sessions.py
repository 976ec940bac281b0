# SPDX-License-Identifier: Apache-2.0

''' Runner task which holds one session with an MCP server.

    Opens the transport, performs the legacy handshake (``initialize``,
    protocol 2025-11-25: a server which ignores unknown methods costs no
    probe timeout), lists every page of tools, then serves list-changed
    refreshes until asked to stop or until the transport dies; on every way
    out it closes the session and the transport (which terminates a child
    process group).
'''


import anyio as _anyio
import mcp_types as _mcp_types

from mcp import ClientSession as _ClientSession
from mcp import MCPError as _MCPError

from . import __
from . import catalog as _catalog
from . import configuration as _configuration
from . import ensembles as _ensembles
from . import processes as _processes
from . import records as _records
from . import redaction as _redaction
from .. import exceptions as _exceptions
from .. import invokers as _invokers


_PAGES_MAXIMUM = 1000
_scribe = __.produce_scribe( __name__ )


def _access_client_information( ) -> _mcp_types.Implementation:
    from .. import __version__
    return _mcp_types.Implementation(
        name = __.package_name, version = __version__ )


class Runner:
    ''' Holds the session of one connection, in its own task. '''

    def __init__(
        self,
        ensemble: '_ensembles.ServerEnsemble',
        connection: '_ensembles._Connection',
        resolution: _configuration.Resolution,
    ):
        self.ensemble = ensemble
        self.connection = connection
        self.resolution = resolution
        self.catalog = _catalog.Catalog( ensemble.name )

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
                "Session with MCP server %r failed.", self.ensemble.name,
                exc_info = exception )
            if connection.failure is None:
                connection.failure = connection.redactor.redact(
                    self._describe( exception ) )
            # authorization: its failure reaches connect( ) as it is.
            primary = _select_primary( _flatten( exception ) )
            if isinstance( primary, (
                _exceptions.AuthorizationFailure,
                _exceptions.ConfigurationInvalidity,
            ) ) and (
                not connection.ready.done( )
            ): connection.ready.set_exception( primary )
            if not isinstance( exception, (
                Exception, __.asyncio.CancelledError )
            ): raise
        finally:
            connection.closed = True
            connection.session = None
            if not connection.ready.done( ):
                connection.ready.set_exception(
                    _exceptions.ConnectionFailure(
                        self.ensemble.name, connection.describe_failure( ) ) )
            _scribe.debug(
                "Session with MCP server %r ended.", self.ensemble.name )
            _redaction.deactivate_redactor( connection.redactor )

    async def _run( self ) -> None:
        connection = self.connection
        options = self.ensemble.options
        async with __.ctxl.AsyncExitStack( ) as stack:
            read, write = await stack.enter_async_context(
                self._open_transport( ) )
            read = _catalog.ReadStream( read, self.catalog )
            write = _catalog.WriteStream( write, self.catalog )
            features = self.ensemble.features # authorization
            session = await stack.enter_async_context( _ClientSession(
                read, write,
                message_handler = self._handle_message,
                client_info = _access_client_information( ),
                **features.produce_session_arguments(
                    connection.redactor ) ) )
            with _anyio.fail_after( options.connect_timeout ):
                await session.initialize( )
                await features.prepare_session( session ) # authorization
                await self._refresh( session )
            connection.session = session
            connection.ready.set_result( None )
            _scribe.debug(
                "Connected to MCP server %r.", self.ensemble.name )
            await self._serve( session )

    async def _serve( self, session: _ClientSession ) -> None:
        connection = self.connection
        options = self.ensemble.options
        while True:
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
                    self.ensemble.name,
                    connection.redactor.redact( str( exception ) ) )

    async def _handle_message( self, message: __.typx.Any ) -> None:
        if isinstance( message, _mcp_types.ToolListChangedNotification ):
            self.connection.request_refresh( )
        elif isinstance( message, Exception ):
            _scribe.debug(
                "MCP server %r: transport reported %s.",
                self.ensemble.name, type( message ).__name__ )

    def _open_transport(
        self
    ) -> __.typx.AsyncContextManager[ tuple[ __.typx.Any, __.typx.Any ] ]:
        parameters = self.ensemble.parameters
        options = self.ensemble.options
        resolution = self.resolution
        transports = _configuration.Transports
        url = __.typx.cast( str, resolution.url )
        match parameters.transport:
            case transports.Stdio:
                watch = _processes.ProcessWatch(
                    self.ensemble.name, self.connection.redactor,
                    self._report_exit )
                self.connection.watch = watch
                return _processes.open_stdio(
                    parameters, resolution.environment, watch,
                    options.grace, options.result_limit )
            case transports.StreamableHttp:
                return _open_streamable_http(
                    url, resolution.headers, options.result_limit,
                    self.ensemble.features.produce_auth( url ) )
            case transports.Sse:
                from mcp.client.sse import sse_client
                return sse_client(
                    url, headers = dict( resolution.headers ),
                    timeout = options.connect_timeout,
                    auth = self.ensemble.features.produce_auth( url ) )

    def _report_exit( self ) -> None:
        watch = __.typx.cast( _processes.ProcessWatch, self.connection.watch )
        noise = (
            '' if self.connection.ready.done( ) else watch.describe_noise( ) )
        self.connection.request_stop( f"{watch.describe_exit( )}{noise}" )

    async def _refresh( self, session: _ClientSession ) -> None:
        self.catalog.refusals.clear( )
        tools = await _list_tools( self.ensemble.name, session )
        self.connection.listings += 1
        _absorb_tools( self.ensemble, tools, self.catalog.refusals )

    def _describe( self, exception: BaseException ) -> str:
        ''' Returns why the session ended, for error messages. '''
        primary = _select_primary( _flatten( exception ) )
        target = self.ensemble.parameters.describe_target( )
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
                    timeout = self.ensemble.options.connect_timeout,
                    noise = noise ) )
        if watch is not None and watch.unexpected:
            return f"{watch.describe_exit( )}{noise}"
        return _describe_exception( primary, target )


def _absorb_tools(
    ensemble: '_ensembles.ServerEnsemble',
    tools: __.cabc.Sequence[ _mcp_types.Tool ],
    refusals: __.cabc.Sequence[ _records.Omission ] = ( ),
) -> None:
    ''' Builds invokers from listed tools, unless the list is unchanged.

        Refusals are tools which the SDK refused, already left out.
    '''
    state = ensemble._state
    fingerprints = tuple(
        tool.model_dump_json( by_alias = True, exclude_none = True )
        for tool in tools ) + tuple(
            f"refused:{refusal.name}" for refusal in refusals )
    if fingerprints == state.fingerprints: return
    known: dict[
        str, tuple[ _invokers.Invoker, _records.ToolDescription ] ] = { }
    omissions: list[ _records.Omission ] = list( refusals )
    for tool, fingerprint in zip( tools, fingerprints ):
        reason = _access_omission_reason( ensemble, tool, known )
        if reason is not None:
            omissions.append( _records.Omission(
                name = tool.name, reason = reason ) )
            continue
        earlier = state.known.get( fingerprint )
        try: known[ fingerprint ] = earlier or _produce_tool( ensemble, tool )
        except _exceptions.SchemaInvalidity as exception:
            _scribe.warning(
                "MCP server %r: tool %r left out: %s",
                ensemble.name, tool.name, exception )
            omissions.append( _records.Omission(
                name = tool.name, reason = str( exception ) ) )
    _warn_missing( ensemble, tools )
    state.known = known
    state.fingerprints = fingerprints
    state.invokers = tuple( invoker for invoker, _ in known.values( ) )
    state.invokers_by_name = {
        invoker.name: invoker for invoker in state.invokers }
    state.descriptions = tuple(
        description for _, description in known.values( ) )
    state.omissions = tuple( omissions )


def _access_omission_reason(
    ensemble: '_ensembles.ServerEnsemble',
    tool: _mcp_types.Tool,
    known: __.cabc.Mapping[
        str, tuple[ _invokers.Invoker, __.typx.Any ] ],
) -> str | None:
    options = ensemble.options
    name = tool.name
    if not __.is_absent( options.include ) and name not in options.include:
        return 'not in include list'
    if name in options.exclude: return 'in exclude list'
    execution = tool.execution
    if execution is not None and execution.task_support == 'required':
        _scribe.info(
            "MCP server %r: tool %r left out: it requires task "
            "augmentation, which is not supported.", ensemble.name, name )
        return 'requires task augmentation, which is not supported'
    if any( invoker.name == name for invoker, _ in known.values( ) ):
        _scribe.warning(
            "MCP server %r lists tool %r twice; the first is kept.",
            ensemble.name, name )
        return 'listed twice by server'
    return None


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
    import httpx2
    return any(
        isinstance( item, httpx2.ConnectError )
        for item in _flatten( exception ) )


async def _list_tools(
    name: str, session: _ClientSession
) -> list[ _mcp_types.Tool ]:
    ''' Lists tools, following every page. '''
    tools: list[ _mcp_types.Tool ] = [ ]
    cursor: str | None = None
    seen: set[ str ] = set( )
    for _ in range( _PAGES_MAXIMUM ):
        params = (
            None if cursor is None
            else _mcp_types.PaginatedRequestParams( cursor = cursor ) )
        result = await session.list_tools( params = params )
        tools.extend( result.tools )
        cursor = result.next_cursor
        if cursor is None: return tools
        if cursor in seen: break
        seen.add( cursor )
    _scribe.warning(
        "MCP server %r repeats listing cursors; listing stopped.", name )
    return tools


async def _open_streamable_http_(
    url: str,
    headers: __.cabc.Mapping[ str, str ],
    limit: int | None,
    auth: __.typx.Any = None, # authorization: an httpx2.Auth
) -> __.cabc.AsyncGenerator[ tuple[ __.typx.Any, __.typx.Any ], None ]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    client = create_mcp_http_client( headers = dict( headers ), auth = auth )
    # The SDK's own limit of one event (1 MiB) would end the session on a
    # larger result; the result limit applies instead.
    async with client, streamable_http_client(
        url, http_client = client, max_sse_event_size = limit
    ) as streams: yield streams


_open_streamable_http = __.ctxl.asynccontextmanager( _open_streamable_http_ )


def _produce_tool(
    ensemble: '_ensembles.ServerEnsemble', tool: _mcp_types.Tool
) -> tuple[ _invokers.Invoker, '_records.ToolDescription' ]:
    ''' Produces invoker and description; checks schema of arguments. '''
    argschema = __.types.MappingProxyType( dict( tool.input_schema ) )
    outschema = (
        __.absent if tool.output_schema is None
        else __.types.MappingProxyType( dict( tool.output_schema ) ) )
    annotations = __.immut.Dictionary[ str, __.typx.Any ](
        { } if tool.annotations is None
        else tool.annotations.model_dump(
            by_alias = True, exclude_none = True ) )
    timeout = ensemble.options.timeouts.get( tool.name, __.absent )
    invoker = _invokers.FunctionInvoker(
        name = tool.name,
        invocable = _ensembles._ToolInvocable( ensemble, tool.name, timeout ),
        argschema = argschema,
        description = tool.description or '',
        ensemble = ensemble.name,
        timeout = timeout,
        annotations = annotations,
        outschema = outschema )
    description = _records.ToolDescription(
        name = tool.name,
        title = __.absent if tool.title is None else tool.title,
        description = tool.description or '',
        argschema = argschema,
        outschema = outschema,
        annotations = annotations )
    return invoker, description


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


def _warn_missing(
    ensemble: '_ensembles.ServerEnsemble',
    tools: __.cabc.Sequence[ _mcp_types.Tool ],
) -> None:
    names = { tool.name for tool in tools }
    include = ensemble.options.include
    wanted = set[ str ]( ) if __.is_absent( include ) else set( include )
    for name in sorted( wanted - names ):
        _scribe.warning(
            "MCP server %r offers no tool %r from the include list.",
            ensemble.name, name )
