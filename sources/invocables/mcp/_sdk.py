# SPDX-License-Identifier: Apache-2.0

''' The client side of the ``mcp`` SDK, major 1 or 2, behind one interface.

    The major installed is detected at import (``MAJOR``). Both name the
    protocol's models ``mcp.types`` (``types`` here); they differ in the
    names of the models' fields (camelCase in 1.x, snake_case in 2.x: read
    them with :py:func:`access_field`, build models with
    :py:func:`produce_model`), in the name and constructor of the error
    class (``Error``, :py:func:`produce_error`), in the HTTP client library
    (``http``: ``httpx`` or ``httpx2``; its client and transport are in
    :py:mod:`invocables.mcp._http`), and in the wrapping of JSON-RPC
    messages (:py:func:`access_message`, :py:func:`produce_message`). Only
    2.x speaks MCP 2026-07-28 (:py:func:`negotiate`, :py:func:`is_modern`;
    the requests about tasks differ by protocol here). The server side is
    :py:mod:`invocables.serving._sdk`. Type checkers see the 2.x SDK.
'''


import importlib as _importlib

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from mcp import ClientSession as _ClientSessionBase
from mcp import types

from pydantic import BaseModel as _BaseModel

import invocables.mcp.__ as __


MAJOR = int( _version( 'mcp' ).split( '.' )[ 0 ] )
''' Major version of the installed ``mcp`` SDK: 1 or 2. '''

if TYPE_CHECKING:
    import httpx2 as http

    from mcp import MCPError as Error
elif MAJOR >= 2: # noqa: PLR2004 # run time: the installed major's names
    http = _importlib.import_module( 'httpx2' )
    from mcp import MCPError as Error
else:
    http = _importlib.import_module( 'httpx' )
    from mcp.shared.exceptions import McpError as Error


__all__ = (
    'HTTP_LOGGERS',
    'MAJOR',
    'RESULT_OVERSIZE',
    'TASKS_EXTENSION',
    'ClientSession',
    'Error',
    'MessageStream',
    'accepts_tasks',
    'access_field',
    'access_message',
    'call_tool',
    'cancel_task',
    'create_task',
    'fetch_task_result',
    'http',
    'is_modern',
    'is_oversize',
    'is_session_lost',
    'negotiate',
    'produce_code_result',
    'produce_error',
    'produce_message',
    'produce_message_parser',
    'produce_model',
    'produce_oversize_error',
    'release_requests',
    'send_task_request',
    'survey_task',
    'types',
    'validate_listing',
    'validate_message',
)

_ModelT = __.typx.TypeVar( '_ModelT', bound = _BaseModel )

HTTP_LOGGERS = (
    ( 'httpx2', 'httpcore2' ) if MAJOR >= 2 # noqa: PLR2004
    else ( 'httpx', 'httpcore' ) )
''' Loggers of the SDK's HTTP client library. '''

RESULT_OVERSIZE = 'invocables.result_oversize'
''' Key, in the data of the error answering a request whose answer was
    over the result limit, of the size seen (bytes). '''

TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'
''' Identifier of the tasks extension of MCP 2026-07-28. '''

_CURRENT = MAJOR >= 2 # noqa: PLR2004
_INVALID_REQUEST = -32600
_OVERSIZE_CODE = -32603 # internal error; told apart by its data
_SSE_OVERSIZE = 'Server-sent event exceeded'
_session_loss = __.re.compile(
    r'session (?:not found|terminated|expired)', __.re.IGNORECASE )


def access_field(
    model: object, name: str, default: __.typx.Any = __.absent
) -> __.typx.Any:
    ''' Returns field of SDK model by its snake_case (2.x) name.

        Without a default, a missing field raises ``AttributeError``.
    '''
    if not _CURRENT: name = _produce_wire_name( name )
    if __.is_absent( default ): return getattr( model, name )
    return getattr( model, name, default )


def access_message( message: object ) -> __.typx.Any:
    ''' Returns JSON-RPC message or notification out of its 1.x wrapper.

        The 1.x SDK wraps messages (``JSONRPCMessage``) and notifications
        (``ServerNotification``) in root models; 2.x does not.
    '''
    if _CURRENT: return message
    return getattr( message, 'root', message )


def is_oversize( exception: Error ) -> bool:
    ''' Returns whether answer was discarded for being over the limit. '''
    error = exception.error
    data = error.data
    if isinstance( data, __.cabc.Mapping ) and (
        RESULT_OVERSIZE in data
    ): return True
    # Over HTTP, the SDK reports an event over its limit this way.
    return _SSE_OVERSIZE in error.message


def is_session_lost( exception: Error ) -> bool:
    ''' Returns whether an HTTP server rejected the session as unknown. '''
    error = exception.error
    # SDK 1.x gives this error a positive code.
    return (
        error.code in ( _INVALID_REQUEST, - _INVALID_REQUEST )
        and _session_loss.search( error.message ) is not None )


def produce_code_result(
    code: str, state: str | None, issuer: str | None = None
) -> __.typx.Any:
    ''' Produces what an OAuth callback handler returns: code, state and
        the issuer of the response (RFC 9207, which the SDK 2.x checks).
    '''
    if not _CURRENT: return ( code, state )
    from mcp.shared.auth import AuthorizationCodeResult
    return AuthorizationCodeResult( code = code, state = state, iss = issuer )


def produce_error(
    code: int, message: str, data: __.typx.Any = None
) -> Error:
    ''' Produces the SDK's error for a JSON-RPC error. '''
    if _CURRENT: return Error( code, message, data )
    factory: __.typx.Any = Error
    return factory( types.ErrorData(
        code = code, message = message, data = data ) )


def produce_message( message: __.typx.Any ) -> __.typx.Any:
    ''' Returns JSON-RPC message as the SDK's session messages hold it. '''
    if _CURRENT: return message
    wrapper: __.typx.Any = types.JSONRPCMessage
    return wrapper( message )


def produce_oversize_error(
    identifier: __.typx.Any, limit: int | None, size: int
) -> __.typx.Any:
    ''' Returns JSON-RPC error answering request whose answer was too big.

        The same on every transport: an internal error, told apart by its
        data (:py:data:`RESULT_OVERSIZE`: the bytes seen).
    '''
    return types.JSONRPCError(
        jsonrpc = '2.0', id = identifier,
        error = types.ErrorData(
            code = _OVERSIZE_CODE,
            message = (
                f"The answer of the server was larger than {limit} bytes, "
                "the limit set by the application ('result_limit'); it was "
                "discarded." ),
            data = { RESULT_OVERSIZE: size } ) )


def produce_model(
    model: type[ _ModelT ], /, **fields: __.typx.Any
) -> _ModelT:
    ''' Produces SDK model from fields named in snake_case (2.x). '''
    if _CURRENT: return model( **fields )
    return model( **{
        _produce_wire_name( name ): value
        for name, value in fields.items( ) } )


def call_tool(
    session: __.typx.Any,
    name: str,
    arguments: dict[ str, __.typx.Any ],
    timeout: __.typx.Any,
    progress: __.typx.Any,
) -> __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ]:
    ''' Returns call of tool through session, which tells the server if
        the call is cancelled.

        The 2.x session sends ``notifications/cancelled`` itself, and
        records the request as an OpenTelemetry span: its own call is
        returned, without a further frame. With 1.x, both are done here.
    '''
    if _CURRENT:
        return session.call_tool( name, arguments, timeout, progress )
    return _call_tool_legacy( session, name, arguments, timeout, progress )


async def create_task(
    session: __.typx.Any,
    name: str,
    arguments: dict[ str, __.typx.Any ],
    progress: __.typx.Any = None,
    responses: __.typx.Any = None,
    state: str | None = None,
) -> __.typx.Any:
    ''' Calls tool as a task; returns task, or the call's result if the
        server ran it at once (under MCP 2026-07-28, or the input which it
        requires first, given responses and state of a former round).

        MCP 2025-11-25: ``tools/call`` with ``task`` (a ``Task``). The 2.x
        session checks each such result as a tool's result, which a task
        is not (it knows the tasks of 2025-11-25 no more): that request
        goes through its dispatcher, with the header the session would
        add. MCP 2026-07-28: an ordinary ``tools/call``, whose result is
        a task (``resultType: task``, the claim of the tasks extension) if
        the server chose to run it so, else the call's result.
    '''
    if is_modern( session ):
        return await session.call_tool(
            name, arguments, None, progress, allow_claimed = True,
            input_responses = responses, request_state = state,
            allow_input_required = True )
    parameters = types.CallToolRequestParams(
        name = name, arguments = arguments, task = types.TaskMetadata( ) )
    if not _CURRENT:
        created = await _send(
            session, types.CallToolRequest( params = parameters ),
            types.CreateTaskResult )
        return created.task
    from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
    raw = await session.dispatcher.send_raw_request(
        'tools/call',
        parameters.model_dump(
            by_alias = True, mode = 'json', exclude_none = True ),
        { 'headers': {
            MCP_PROTOCOL_VERSION_HEADER: session.protocol_version } } )
    return types.CreateTaskResult.model_validate(
        raw, by_name = False ).task


async def cancel_task( session: __.typx.Any, identifier: str ) -> None:
    ''' Asks server to cancel task (``tasks/cancel``); under MCP
        2026-07-28, it acknowledges with an empty result.
    '''
    await send_task_request(
        session, types.CancelTaskRequest, identifier,
        types.Result if is_modern( session ) else types.CancelTaskResult )


async def fetch_task_result(
    session: __.typx.Any, identifier: str
) -> types.CallToolResult:
    ''' Returns result of task (``tasks/result``, MCP 2025-11-25): waits
        for its end.
    '''
    return await send_task_request(
        session, types.GetTaskPayloadRequest, identifier,
        types.CallToolResult )


async def survey_task(
    session: __.typx.Any,
    identifier: str,
    model: type[ _ModelT ] = types.GetTaskResult,
) -> _ModelT:
    ''' Returns state of task (``tasks/get``) as model: under MCP
        2026-07-28, that of the tasks extension, given.
    '''
    return await send_task_request(
        session, types.GetTaskRequest, identifier, model )


def accepts_tasks( session: __.typx.Any ) -> bool:
    ''' Tells whether the server runs tool calls as tasks: capability of
        MCP 2025-11-25, or tasks extension of 2026-07-28.
    '''
    capabilities = (
        session.server_capabilities if _CURRENT
        else session.get_server_capabilities( ) )
    if is_modern( session ):
        extensions: __.typx.Any = getattr( capabilities, 'extensions', None )
        return TASKS_EXTENSION in ( extensions or ( ) )
    tasks = getattr( capabilities, 'tasks', None )
    requests = getattr( tasks, 'requests', None )
    tools = getattr( requests, 'tools', None )
    return getattr( tools, 'call', None ) is not None


def is_modern( session: __.typx.Any ) -> bool:
    ''' Tells whether session speaks MCP 2026-07-28 or later. '''
    if not _CURRENT: return False
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS
    return session.protocol_version in MODERN_PROTOCOL_VERSIONS


async def negotiate( session: __.typx.Any, protocol: str ) -> None:
    ''' Opens session by the handshake chosen (a value of ``Protocols``).
        ``auto``: ``initialize``, no probe timeout with a server which
        ignores unknown methods; a server which refuses it or answers a
        version of its own (MCP 2026-07-28 alone) is asked
        ``server/discover`` once. ``modern``: the other way round. If the
        second fails too, the first's error is raised. ``legacy``, and
        every choice under the SDK 1.x: ``initialize`` alone.
    '''
    if not _CURRENT or protocol == 'legacy':
        await session.initialize( )
        return
    first, second = session.initialize, session.discover
    if protocol == 'modern': first, second = second, first
    try: await first( )
    except ( Error, RuntimeError ) as exception: # SDK: version unknown
        refusal = exception
    else: return
    try: await second( )
    except ( Error, RuntimeError ):
        raise refusal from None


async def send_task_request(
    session: __.typx.Any,
    request: type[ _BaseModel ],
    identifier: str,
    model: type[ _ModelT ],
    **parameters: __.typx.Any,
) -> _ModelT:
    ''' Sends request about a task (its parameters: the task's
        identifier, and those given, by wire name); returns result as
        model. Under MCP 2026-07-28, the header ``Mcp-Name`` carries the
        task's identifier too.
    '''
    if is_modern( session ): request = _produce_named_request( request )
    return await _send(
        session,
        request.model_validate( {
            'method': request.model_fields[ 'method' ].default,
            'params': { 'taskId': identifier, **parameters } } ),
        model )


@__.funct.cache
def _produce_named_request(
    request: type[ _BaseModel ]
) -> type[ _BaseModel ]:
    ''' Returns request about a task whose identifier goes in the header
        ``Mcp-Name`` too (2.x: the SDK mirrors ``name_param``).
    '''
    return type( request.__name__, ( request, ), { 'name_param': 'taskId' } )


async def _send(
    session: __.typx.Any, request: __.typx.Any, model: type[ _ModelT ]
) -> _ModelT:
    if not _CURRENT:
        legacy: __.typx.Any = types
        request = legacy.ClientRequest( request )
    return await session.send_request( request, model )


def release_requests( session: __.typx.Any ) -> None:
    ''' Fails the pending requests of an ending session: connection closed.

        A 1.x session which ends while requests wait leaves them waiting;
        a 2.x session fails them itself.
    '''
    if _CURRENT: return
    import anyio
    streams = __.typx.cast(
        dict[ __.typx.Any, __.typx.Any ],
        getattr( session, '_response_streams', { } ) )
    for identifier, stream in tuple( streams.items( ) ):
        error = types.JSONRPCError(
            jsonrpc = '2.0', id = identifier,
            error = types.ErrorData(
                code = types.CONNECTION_CLOSED,
                message = 'Connection closed' ) )
        # A full stream holds an answer already; a closed one has no reader.
        with __.ctxl.suppress(
            anyio.WouldBlock, anyio.ClosedResourceError,
            anyio.BrokenResourceError,
        ): stream.send_nowait( error )


def validate_listing(
    version: str, result: __.cabc.Mapping[ str, __.typx.Any ]
) -> None:
    ''' Validates ``tools/list`` result; raises ``ValueError`` if refused.

        2.x validates by protocol version; 1.x knows one model, which does
        not require an object schema of arguments as 2.x does: that is
        required here too.
    '''
    if _CURRENT:
        from mcp.types import methods
        methods.parse_server_result( 'tools/list', version, result )
        return
    types.ListToolsResult.model_validate( result )
    _ListingLegacy.model_validate( result )


def produce_message_parser( ) -> __.cabc.Callable[
    [ bytes | bytearray | str ], __.typx.Any
]:
    ''' Returns the SDK's own parser of a JSON-RPC message from JSON text.

        As :py:func:`validate_message` without ``parse``, in one call: for
        the many small messages of a session.
    '''
    if _CURRENT:
        return __.funct.partial(
            types.jsonrpc_message_adapter.validate_json, by_name = False )
    wrapper: __.typx.Any = types.JSONRPCMessage
    return wrapper.model_validate_json


def validate_message( data: bytes | bytearray | str, *, parse: bool ) -> (
    __.typx.Any
):
    ''' Returns JSON-RPC message of a line; raises ``ValueError`` if not.

        With ``parse``, or for JSON deeper than pydantic's parser goes (200
        levels), the standard parser (near 1000) reads the text first.
    '''
    wrapper: __.typx.Any = types.JSONRPCMessage
    if not parse:
        try:
            if not _CURRENT: return wrapper.model_validate_json( data )
            return types.jsonrpc_message_adapter.validate_json(
                data, by_name = False )
        except ValueError as exception: # lest the answer be lost
            if 'recursion limit' not in str( exception ): raise
    if not _CURRENT: return wrapper.model_validate( __.json.loads( data ) )
    return types.jsonrpc_message_adapter.validate_python(
        __.json.loads( data ), by_name = False )


class _SchemaLegacy( _BaseModel, extra = 'allow' ):
    ''' Schema of arguments, as SDK 2.x requires it. '''

    type: __.typx.Literal[ 'object' ]


class _ToolLegacy( _BaseModel, extra = 'allow' ):
    ''' Tool of a listing, as SDK 2.x requires it. '''

    inputSchema: _SchemaLegacy # the SDK's wire name


class _ListingLegacy( _BaseModel, extra = 'allow' ):
    ''' Tool listing, as SDK 2.x requires it. '''

    tools: list[ _ToolLegacy ]


class ClientSession( _ClientSessionBase ):
    ''' The SDK's client session, which leaves results unchecked.

        The SDK checks the structured content of each result against the
        tool's output schema with ``jsonschema``, whose patterns run on
        Python's backtracking ``re``, in the event loop: a server could
        freeze the process with a catastrophic pattern, beyond any timeout
        (and, for a tool it had not listed, it lists the tools again first).
        The library checks results itself, with the bounded patterns of
        :py:mod:`invocables.schemata` (see
        :py:func:`invocables.mcp.results.validate_result`). The SDK's hook
        is ``validate_tool_result`` in 2.x, ``_validate_tool_result`` in
        1.x (and early 2.x); both are overridden to check nothing.
    '''

    def __init__(
        self,
        read_stream: __.typx.Any,
        write_stream: __.typx.Any,
        **keywords: __.typx.Any,
    ):
        if not _CURRENT:
            super( ).__init__( read_stream, write_stream, **keywords )
            return
        # Kept to send what the 2.x session refuses to send (see
        # ``create_task``); the session builds the same one when given the
        # streams.
        from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
        self.dispatcher = JSONRPCDispatcher( read_stream, write_stream )
        super( ).__init__( dispatcher = self.dispatcher, **keywords )

    async def validate_tool_result(
        self, name: str, result: types.CallToolResult
    ) -> None:
        ''' Checks nothing: the library checks results (2.x hook). '''

    async def _validate_tool_result(
        self, name: str, result: types.CallToolResult
    ) -> None:
        ''' Checks nothing: the library checks results (1.x hook). '''


class MessageStream:
    ''' Base of the streams of messages which a session is given.

        An async context manager which closes the stream on exit, as the
        SDK's memory streams are.
    '''

    async def aclose( self ) -> None:
        ''' Closes stream. '''
        raise NotImplementedError # pragma: no cover

    async def __aenter__( self ) -> __.typx.Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[ BaseException ] | None,
        exc_val: BaseException | None,
        exc_tb: __.types.TracebackType | None,
    ) -> None:
        await self.aclose( )


def _produce_span(
    name: str, identifier: int
) -> __.typx.ContextManager[ object ]:
    ''' Returns span of a tools/call request, as the 2.x SDK names it. '''
    import invocables.telemetry as telemetry
    if not telemetry.is_available( ): return __.ctxl.nullcontext( )
    from opentelemetry import trace
    tracer = trace.get_tracer( __.package_name )
    return tracer.start_as_current_span(
        f"MCP send tools/call {name}", kind = trace.SpanKind.CLIENT,
        attributes = {
            'mcp.method.name': 'tools/call',
            'jsonrpc.request.id': str( identifier ) } )


async def _call_tool_legacy(
    session: __.typx.Any,
    name: str,
    arguments: dict[ str, __.typx.Any ],
    timeout: __.typx.Any,
    progress: __.typx.Any,
) -> __.typx.Any:
    # The identifier which the session gives its next request.
    identifier = __.typx.cast( int, vars( session )[ '_request_id' ] )
    with _produce_span( name, identifier ):
        try:
            return await session.call_tool(
                name, arguments, timeout, progress )
        except __.asyncio.CancelledError:
            await _notify_cancellation( session, identifier )
            raise


async def _notify_cancellation(
    session: __.typx.Any, identifier: int
) -> None:
    import anyio
    legacy: __.typx.Any = types # 1.x wraps notifications in a root model
    notification = legacy.ClientNotification( legacy.CancelledNotification(
        params = legacy.CancelledNotificationParams(
            requestId = identifier ) ) )
    # Also within a cancelled scope, never for long; a closed session has
    # nothing to cancel.
    with (
        anyio.CancelScope( shield = True ), anyio.move_on_after( 1.0 ),
        __.ctxl.suppress(
            anyio.ClosedResourceError, anyio.BrokenResourceError ),
    ): await session.send_notification( notification )


@__.funct.cache
def _produce_wire_name( name: str ) -> str:
    ''' Returns camelCase name of a snake_case field name. '''
    head, *tail = name.split( '_' )
    return head + ''.join( part.capitalize( ) for part in tail )
