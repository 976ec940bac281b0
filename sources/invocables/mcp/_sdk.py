# SPDX-License-Identifier: Apache-2.0

''' The ``mcp`` SDK, major 1 or 2, behind one interface.

    The major installed is detected at import (``MAJOR``). Both name the
    protocol's models ``mcp.types`` (``types`` here); they differ in the
    names of the models' fields (camelCase in 1.x, snake_case in 2.x: read
    them with :py:func:`access_field`, build models with
    :py:func:`produce_model`), in the name and constructor of the error
    class (``Error``, :py:func:`produce_error`), in the HTTP client library
    (``http``: ``httpx`` or ``httpx2``), in the wrapping of JSON-RPC
    messages (:py:func:`access_message`, :py:func:`produce_message`), and
    in the server side (:py:func:`produce_server`,
    :py:func:`produce_application`). Type checkers see the 2.x SDK.
'''


import importlib as _importlib
import weakref as _weakref
import zlib as _zlib

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from mcp import ClientSession as _ClientSessionBase
from mcp import types

from pydantic import BaseModel as _BaseModel

from . import __


MAJOR = int( _version( 'mcp' ).split( '.' )[ 0 ] )
''' Major version of the installed ``mcp`` SDK: 1 or 2. '''

if TYPE_CHECKING:
    import httpx2 as http

    from mcp import MCPError as Error
    from mcp.server.lowlevel import Server as _Server

    ServerBase: __.typx.TypeAlias = _Server[ __.typx.Any ]
else:
    # Run time: the installed major's names.
    if MAJOR >= 2: # noqa: PLR2004
        http = _importlib.import_module( 'httpx2' )
        from mcp import MCPError as Error
    else:
        http = _importlib.import_module( 'httpx' )
        from mcp.shared.exceptions import McpError as Error
    from mcp.server.lowlevel import Server as ServerBase


__all__ = (
    'HTTP_LOGGERS',
    'MAJOR',
    'ClientSession',
    'Error',
    'MessageStream',
    'ServerBase',
    'access_field',
    'access_message',
    'call_tool',
    'http',
    'open_streamable_http',
    'produce_application',
    'produce_code_result',
    'produce_error',
    'produce_http_client',
    'produce_message',
    'produce_message_parser',
    'produce_model',
    'produce_oversize_error',
    'produce_server',
    'release_requests',
    'types',
    'validate_listing',
    'validate_message',
)

_ModelT = __.typx.TypeVar( '_ModelT', bound = _BaseModel )
_ServerT = __.typx.TypeVar( '_ServerT', bound = ServerBase )

HTTP_LOGGERS = (
    ( 'httpx2', 'httpcore2' ) if MAJOR >= 2 # noqa: PLR2004
    else ( 'httpx', 'httpcore' ) )
''' Loggers of the SDK's HTTP client library. '''

_CURRENT = MAJOR >= 2 # noqa: PLR2004
_transports: _weakref.WeakKeyDictionary[ __.typx.Any, __.typx.Any ] = (
    _weakref.WeakKeyDictionary( ) )
_REQUESTS_LEGACY = __.types.MappingProxyType( {
    'on_set_logging_level': 'SetLevelRequest',
    'on_list_resources': 'ListResourcesRequest',
    'on_list_resource_templates': 'ListResourceTemplatesRequest',
    'on_read_resource': 'ReadResourceRequest',
    'on_list_prompts': 'ListPromptsRequest',
    'on_get_prompt': 'GetPromptRequest',
    'on_completion': 'CompleteRequest',
    'on_subscribe_resource': 'SubscribeRequest',
    'on_unsubscribe_resource': 'UnsubscribeRequest',
} )
_OVERSIZE_CODE = -32603 # internal error; told apart by its data
# Compressed answers are decoded here, a piece at most this large from one
# step: a small body which expands a thousandfold never expands at once.
_PIECE_SIZE_MAXIMUM = 65_536
_WBITS_DEFLATE = _zlib.MAX_WBITS
_WBITS = {
    'deflate': _WBITS_DEFLATE,
    'gzip': _WBITS_DEFLATE | 16,
    'x-gzip': _WBITS_DEFLATE | 16,
}


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


def produce_code_result( code: str, state: str | None ) -> __.typx.Any:
    ''' Produces what an OAuth callback handler returns: code and state.
    '''
    if not _CURRENT: return ( code, state )
    from mcp.shared.auth import AuthorizationCodeResult
    return AuthorizationCodeResult( code = code, state = state )


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
        data (:py:data:`invocables.mcp.RESULT_OVERSIZE`: the bytes seen).
    '''
    from . import _processes as processes
    return types.JSONRPCError(
        jsonrpc = '2.0', id = identifier,
        error = types.ErrorData(
            code = _OVERSIZE_CODE,
            message = (
                f"The answer of the server was larger than {limit} bytes, "
                "the limit set by the application ('result_limit'); it was "
                "discarded." ),
            data = { processes.RESULT_OVERSIZE: size } ) )


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


@__.ctxl.asynccontextmanager
async def open_streamable_http(
    url: str, client: __.typx.Any, limit: int | None
) -> __.cabc.AsyncGenerator[ tuple[ __.typx.Any, __.typx.Any ], None ]:
    ''' Opens streamable HTTP transport over client; yields its streams.

        With 2.x, one server-sent event may be as large as the limit (the
        SDK's own limit of 1 MiB would end the session on a larger result);
        1.x has no such limit.
    '''
    from mcp.client.streamable_http import streamable_http_client
    if _CURRENT:
        async with streamable_http_client(
            url, http_client = client, max_sse_event_size = limit
        ) as streams: yield streams[ 0 ], streams[ 1 ]
        return
    transport = _transports.get( client )
    async with streamable_http_client(
        url, http_client = client
    ) as streams:
        if transport is None:
            yield streams[ 0 ], streams[ 1 ]
            return
        async with _merge_streams(
            streams[ 0 ], transport.receiver
        ) as read: yield read, streams[ 1 ]


def produce_http_client(
    headers: __.cabc.Mapping[ str, str ],
    auth: __.typx.Any,
    limit: int | None,
) -> __.typx.Any:
    ''' Produces HTTP client of the SDK's streamable HTTP transport.

        With 1.x, a request whose answer breaks off (the server died) or
        grows over the limit fails at once, as with 2.x; its transport
        would leave it waiting.
    '''
    from mcp.shared import _httpx_utils
    if _CURRENT:
        if limit is None:
            return _httpx_utils.create_mcp_http_client(
                headers = dict( headers ), auth = auth )
        # As the SDK's own client (proxies from the environment too), with
        # JSON answers held to the limit.
        return http.AsyncClient(
            headers = { 'accept-encoding': 'identity' } | dict( headers ),
            auth = auth,
            event_hooks = { 'response': [ _Bounder( limit ) ] },
            timeout = http.Timeout(
                _httpx_utils.MCP_DEFAULT_TIMEOUT,
                read = _httpx_utils.MCP_DEFAULT_SSE_READ_TIMEOUT ) )
    legacy: __.typx.Any = http
    client = legacy.AsyncClient(
        headers = { 'accept-encoding': 'identity' } | dict( headers ),
        auth = auth,
        timeout = legacy.Timeout(
            _httpx_utils.MCP_DEFAULT_TIMEOUT,
            read = _httpx_utils.MCP_DEFAULT_SSE_READ_TIMEOUT ) )
    # The client's own transports (proxies from the environment too) are
    # wrapped; given a transport, httpx would leave out the proxies.
    transport = _TransportLegacy( client._transport, limit )
    client._transport = transport
    client._mounts = {
        pattern: None if mounted is None else transport.wrap( mounted )
        for pattern, mounted in client._mounts.items( ) }
    _transports[ client ] = transport
    return client


def produce_application( # noqa: PLR0913
    server: __.typx.Any,
    *,
    path: str,
    stateless: bool,
    host: str,
    auth: __.typx.Any,
    token_verifier: __.typx.Any,
    allowed_hosts: __.cabc.Sequence[ str ] = (
        '127.0.0.1:*', 'localhost:*', '[::1]:*' ),
    allowed_origins: __.cabc.Sequence[ str ] = (
        'http://127.0.0.1:*', 'http://localhost:*', 'http://[::1]:*' ),
    event_store: __.typx.Any = None,
    retry_interval: int | None = None,
) -> __.typx.Any:
    ''' Produces ASGI application serving low-level server at path.

        Streamable HTTP; with a token verifier, every request must carry a
        token it accepts. Requests whose ``Host`` or ``Origin`` header is
        not allowed (patterns of the SDK: ``name``, ``name:*``) are refused
        (421, 403). The 2.x low-level server builds it; for 1.x, the same
        parts are assembled here.
    '''
    security = _produce_security( allowed_hosts, allowed_origins )
    if _CURRENT:
        return server.streamable_http_app(
            streamable_http_path = path, stateless_http = stateless,
            host = host, auth = auth, token_verifier = token_verifier,
            transport_security = security, event_store = event_store,
            retry_interval = retry_interval )
    return _produce_application_legacy(
        server, path, stateless, security, auth, token_verifier,
        ( event_store, retry_interval ) )


def produce_server(
    model: type[ _ServerT ],
    name: str,
    *,
    version: str,
    instructions: str | None,
    on_list_tools: __.cabc.Callable[ ..., __.typx.Any ],
    on_call_tool: __.cabc.Callable[ ..., __.typx.Any ],
    **handlers: __.cabc.Callable[ ..., __.typx.Any ],
) -> _ServerT:
    ''' Produces low-level server (class ``model``) with tool handlers.

        Each handler takes the request context and the request parameters.
        Other handlers are named as the 2.x server's keywords
        (``on_set_logging_level``).
    '''
    if _CURRENT:
        produce: __.typx.Any = model
        return produce(
            name, version = version, instructions = instructions,
            on_list_tools = on_list_tools, on_call_tool = on_call_tool,
            **handlers )
    server: __.typx.Any = model(
        name, version = version, instructions = instructions )
    requests: __.typx.Any = types
    for keyword, handler in handlers.items( ):
        request = _REQUESTS_LEGACY[ keyword ]
        server.request_handlers[ getattr( requests, request ) ] = (
            _adapt_legacy( server, handler ) )

    def adapt(
        handler: __.cabc.Callable[ ..., __.typx.Any ]
    ) -> __.cabc.Callable[ ..., __.typx.Any ]:
        async def handle( request: __.typx.Any ) -> __.typx.Any:
            context = _ContextLegacy( server.request_context )
            result = await handler( context, request.params )
            return requests.ServerResult( result )
        return handle

    server.request_handlers[ requests.ListToolsRequest ] = (
        adapt( on_list_tools ) )
    server.request_handlers[ requests.CallToolRequest ] = (
        adapt( on_call_tool ) )
    return server


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

        With ``parse``, the standard JSON parser reads the text first.
    '''
    if _CURRENT:
        adapter = types.jsonrpc_message_adapter
        if parse:
            return adapter.validate_python(
                __.json.loads( data ), by_name = False )
        return adapter.validate_json( data, by_name = False )
    wrapper: __.typx.Any = types.JSONRPCMessage
    if parse: return wrapper.model_validate( __.json.loads( data ) )
    return wrapper.model_validate_json( data )


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


class _TransportLegacy( http.AsyncBaseTransport ):
    ''' HTTP transport of 1.x which fails broken and oversized answers.

        Wraps another, which it opens and closes. The failures (JSON-RPC
        errors for the requests) come out of ``receiver``, to be merged
        into the session's read stream.
    '''

    def __init__(
        self,
        inner: __.typx.Any,
        limit: int | None,
        sender: __.typx.Any = None,
    ):
        self.inner = inner
        self.limit = limit
        if sender is None:
            import anyio
            sender, self.receiver = (
                anyio.create_memory_object_stream[ __.typx.Any ]( 1000 ) )
        self.sender = sender

    def wrap( self, inner: __.typx.Any ) -> '_TransportLegacy':
        ''' Returns transport around another, whose failures come out of
            the receiver of this one. '''
        return _TransportLegacy( inner, self.limit, self.sender )

    async def aclose( self ) -> None:
        ''' Closes inner transport. '''
        await self.inner.aclose( )

    async def __aenter__( self ) -> __.typx.Self:
        await self.inner.__aenter__( )
        return self

    async def __aexit__( self, *exception: __.typx.Any ) -> None:
        await self.inner.__aexit__( *exception )

    async def handle_async_request( self, request: __.typx.Any ) -> (
        __.typx.Any
    ):
        ''' Sends request; watches the answer of a JSON-RPC request. '''
        identifier = _access_identifier( request )
        try: response = await self.inner.handle_async_request( request )
        except Exception:
            if identifier is not None: self.fail( identifier )
            raise
        stream = _decode_body( response )
        if identifier is not None:
            stream = _StreamLegacy( stream, self, identifier )
        response.stream = stream
        return response

    def fail(
        self,
        identifier: __.typx.Any,
        size: int | None = None,
        reason: str | None = None,
    ) -> None:
        ''' Fails request: connection closed, answer of size too big, or
            answer which cannot be read for reason. '''
        from mcp.shared.message import SessionMessage
        legacy: __.typx.Any = types
        if size is not None:
            answer = produce_oversize_error( identifier, self.limit, size )
        else:
            code, text = (
                ( legacy.CONNECTION_CLOSED, 'Connection closed' )
                if reason is None else ( legacy.PARSE_ERROR, reason ) )
            answer = legacy.JSONRPCError(
                jsonrpc = '2.0', id = identifier,
                error = legacy.ErrorData( code = code, message = text ) )
        message = legacy.JSONRPCMessage( answer )
        import anyio
        with __.ctxl.suppress(
            anyio.WouldBlock, anyio.ClosedResourceError,
            anyio.BrokenResourceError,
        ): self.sender.send_nowait( SessionMessage( message ) )


class _StreamLegacy( http.AsyncByteStream ):
    ''' Body of an answer, which fails its request if it breaks off or
        grows over the limit.
    '''

    def __init__(
        self,
        inner: __.typx.Any,
        transport: _TransportLegacy,
        identifier: __.typx.Any,
    ):
        self.inner = inner
        self.transport = transport
        self.identifier = identifier

    async def __aiter__( self ) -> __.cabc.AsyncIterator[ bytes ]:
        limit = self.transport.limit
        size = 0
        try:
            async for chunk in self.inner:
                size += len( chunk )
                if limit is not None and size > limit:
                    self.transport.fail( self.identifier, size )
                    raise http.ReadError( "Answer over the result limit." )
                yield chunk
        except http.StreamError as exception: # a coding not decoded
            self.transport.fail( self.identifier, reason = str( exception ) )
            raise exception from None
        except http.TransportError as exception:
            if limit is None or size <= limit:
                self.transport.fail( self.identifier )
            raise exception from None

    async def aclose( self ) -> None:
        ''' Closes body. '''
        await self.inner.aclose( )


class _Bounder:
    ''' Response hook of the 2.x HTTP client, which holds plain JSON
        answers to the limit.

        The SDK reads a JSON answer whole (only server-sent events have a
        limit there). An answer to a request which grows over the limit is
        read no further: the request gets instead the error which an
        answer over the limit gets on every transport. A hook, not a
        transport: every transport the client picks (proxies named in the
        environment) is bounded.
    '''

    def __init__( self, limit: int ):
        self.limit = limit

    async def __call__( self, response: __.typx.Any ) -> None:
        stream = _decode_body( response )
        genus = response.headers.get( 'content-type', '' ).lower( )
        if genus.startswith( 'application/json' ):
            identifier = _access_identifier( response.request )
            if identifier is not None:
                stream = _BodyBounded( stream, self.limit, identifier )
        response.stream = stream


class _BodyBounded( http.AsyncByteStream ):
    ''' JSON answer, kept up to the limit; over it, an error answer. '''

    def __init__(
        self, inner: __.typx.Any, limit: int, identifier: __.typx.Any
    ):
        self.inner = inner
        self.limit = limit
        self.identifier = identifier

    async def __aiter__( self ) -> __.cabc.AsyncIterator[ bytes ]:
        limit = self.limit
        chunks: list[ bytes ] = [ ]
        size = 0
        async for chunk in self.inner:
            size += len( chunk )
            if size <= limit:
                chunks.append( chunk )
                continue
            chunks.clear( )
            error = produce_oversize_error( self.identifier, limit, size )
            yield error.model_dump_json(
                by_alias = True, exclude_none = True ).encode( )
            return
        yield b''.join( chunks )

    async def aclose( self ) -> None:
        ''' Closes body. '''
        await self.inner.aclose( )


class _BodyDecoded( http.AsyncByteStream ):
    ''' Compressed body, decoded in pieces of bounded size.

        ``gzip`` and ``deflate`` (zlib or raw), as ``httpx`` decodes them;
        any other coding fails as a stream error, which the SDK reports
        as an error for its request.
    '''

    def __init__( self, inner: __.typx.Any, encoding: str ):
        self.inner = inner
        self.encoding = encoding

    async def __aiter__( self ) -> __.cabc.AsyncIterator[ bytes ]:
        wbits = _WBITS.get( self.encoding )
        if wbits is None:
            raise http.StreamError(
                f"The server compressed its answer as {self.encoding!r}, "
                "which this client did not ask for and does not decode." )
        decoder = _zlib.decompressobj( wbits )
        # As httpx: 'deflate' is zlib-wrapped, or else raw.
        retry = wbits == _WBITS_DEFLATE
        async for chunk in self.inner:
            data = chunk
            while data:
                try: piece = decoder.decompress( data, _PIECE_SIZE_MAXIMUM )
                except _zlib.error as exception:
                    if not retry: raise http.StreamError(
                        f"The server's {self.encoding!r} answer could not "
                        f"be decoded: {exception}." ) from None
                    retry = False
                    decoder = _zlib.decompressobj( -_WBITS_DEFLATE )
                    continue
                retry = False
                data = decoder.unconsumed_tail
                if piece: yield piece
        rest = decoder.flush( )
        if rest: yield rest

    async def aclose( self ) -> None:
        ''' Closes body. '''
        await self.inner.aclose( )


def _decode_body( response: __.typx.Any ) -> __.typx.Any:
    ''' Returns body of response, decoded here in bounded pieces if
        compressed (and marked as no longer so), so that limits count the
        decoded size.
    '''
    headers = response.headers
    encoding = headers.get( 'content-encoding', 'identity' ).strip( ).lower( )
    if encoding in ( '', 'identity' ): return response.stream
    del headers[ 'content-encoding' ]
    headers.pop( 'content-length', None )
    return _BodyDecoded( response.stream, encoding )


class _ContextLegacy:
    ''' Request context of the 1.x server, as the 2.x handlers see it. '''

    def __init__( self, context: __.typx.Any ):
        self.context = context
        self.request_id = context.request_id
        self.session = _SessionLegacy( context )


class _SessionLegacy:
    ''' Session of one 1.x request, as a 2.x request's session. '''

    def __init__( self, context: __.typx.Any ):
        # The connection lasts beyond the request, and notifies.
        self._connection = context.session
        self.context = context

    async def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        ''' Sends progress of the request, if its client asked for it. '''
        meta = self.context.meta
        token = None if meta is None else meta.progressToken
        if token is None: return
        await self._connection.send_progress_notification(
            token, progress, total, message,
            related_request_id = self.context.request_id )

    async def send_tool_list_changed( self ) -> None:
        ''' Tells client that the tools changed. '''
        await self._connection.send_tool_list_changed( )

    async def send_log_message(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> None:
        ''' Sends log message to the client. '''
        await self._connection.send_log_message( *arguments, **keywords )

    async def elicit_form(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> __.typx.Any:
        ''' Asks the client's user (``elicitation/create``). '''
        return await self._connection.elicit( *arguments, **keywords )

    async def create_message(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> __.typx.Any:
        ''' Asks the client's model (``sampling/createMessage``). '''
        return await self._connection.create_message(
            *arguments, **keywords )


class _EndpointLegacy:
    ''' ASGI endpoint of the 1.x session manager. '''

    def __init__( self, manager: __.typx.Any ):
        self.manager = manager

    async def __call__(
        self, scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any
    ) -> None:
        await self.manager.handle_request( scope, receive, send )


def _produce_application_legacy(
    server: __.typx.Any,
    path: str,
    stateless: bool, # noqa: FBT001
    security: __.typx.Any,
    auth: __.typx.Any,
    token_verifier: __.typx.Any,
    resumption: tuple[ __.typx.Any, int | None ],
) -> __.typx.Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Route
    from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
    from mcp.server.auth.middleware.bearer_auth import (
        BearerAuthBackend,
        RequireAuthMiddleware,
    )
    from mcp.server.streamable_http_manager import (
        StreamableHTTPSessionManager )
    manager: __.typx.Any = StreamableHTTPSessionManager(
        app = server, stateless = stateless, event_store = resumption[ 0 ],
        security_settings = security )
    endpoint: __.typx.Any = _EndpointLegacy( manager )
    middleware: list[ Middleware ] = [ ]
    if token_verifier is not None:
        middleware = [
            Middleware(
                AuthenticationMiddleware,
                backend = BearerAuthBackend( token_verifier ) ),
            Middleware( AuthContextMiddleware ) ]
        scopes: list[ str ] = (
            None if auth is None else auth.required_scopes ) or [ ]
        endpoint = RequireAuthMiddleware( endpoint, scopes, None )
    return Starlette(
        routes = [ Route( path, endpoint = endpoint ) ],
        middleware = middleware,
        lifespan = lambda application: manager.run( ) )


def _adapt_legacy(
    server: __.typx.Any, handler: __.cabc.Callable[ ..., __.typx.Any ]
) -> __.cabc.Callable[ ..., __.typx.Any ]:
    ''' Returns 1.x request handler calling a 2.x style handler. '''
    async def handle( request: __.typx.Any ) -> __.typx.Any:
        context = _ContextLegacy( server.request_context )
        result = await handler( context, request.params )
        legacy: __.typx.Any = types
        return legacy.ServerResult( result )
    return handle


def _produce_span(
    name: str, identifier: int
) -> __.typx.ContextManager[ object ]:
    ''' Returns span of a tools/call request, as the 2.x SDK names it. '''
    from .. import telemetry
    if not telemetry.is_available( ): return __.ctxl.nullcontext( )
    from opentelemetry import trace
    tracer = trace.get_tracer( __.package_name )
    return tracer.start_as_current_span(
        f"MCP send tools/call {name}", kind = trace.SpanKind.CLIENT,
        attributes = {
            'mcp.method.name': 'tools/call',
            'jsonrpc.request.id': str( identifier ) } )


def _produce_security(
    hosts: __.cabc.Sequence[ str ], origins: __.cabc.Sequence[ str ]
) -> __.typx.Any:
    ''' Returns protection against DNS rebinding: allowed hosts, origins.
    '''
    from mcp.server.transport_security import TransportSecuritySettings
    return TransportSecuritySettings(
        enable_dns_rebinding_protection = True,
        allowed_hosts = list( hosts ), allowed_origins = list( origins ) )


def _access_identifier( request: __.typx.Any ) -> __.typx.Any:
    ''' Returns identifier of the JSON-RPC request an HTTP request posts. '''
    if request.method != 'POST': return None
    try: data = __.json.loads( request.content )
    # Not JSON, or a streamed body (not read: a RuntimeError).
    except ( ValueError, RuntimeError ): return None
    if not isinstance( data, dict ): return None
    message = __.typx.cast( dict[ str, __.typx.Any ], data )
    if 'method' not in message: return None
    return message.get( 'id' )


@__.ctxl.asynccontextmanager
async def _merge_streams(
    primary: __.typx.Any, secondary: __.typx.Any
) -> __.cabc.AsyncGenerator[ __.typx.Any, None ]:
    ''' Yields stream of the items of both streams. '''
    import anyio
    sender, receiver = anyio.create_memory_object_stream[ __.typx.Any ]( )

    async def forward( stream: __.typx.Any ) -> None:
        with __.ctxl.suppress(
            anyio.ClosedResourceError, anyio.BrokenResourceError,
            anyio.EndOfStream,
        ):
            async for item in stream: await sender.send( item )

    async def forward_primary( ) -> None:
        # The end of the transport's stream ends the merged one.
        async with sender: await forward( primary )

    async with anyio.create_task_group( ) as group:
        group.start_soon( forward_primary )
        group.start_soon( forward, secondary )
        try:
            async with receiver: yield receiver
        finally: group.cancel_scope.cancel( )


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
