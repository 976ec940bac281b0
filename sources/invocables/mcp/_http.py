# SPDX-License-Identifier: Apache-2.0

''' The HTTP client of the SDK's streamable HTTP transport, bounded.

    Answers are held to the result limit, and compressed answers decoded
    in bounded pieces, so that limits count the decoded size. With the 1.x
    SDK, a request whose answer breaks off or grows over the limit fails at
    once, as with 2.x.
'''


import weakref as _weakref
import zlib as _zlib

import invocables.mcp.__ as __
from ._sdk import MAJOR as _MAJOR
from ._sdk import http as _http
from ._sdk import produce_oversize_error as _produce_oversize_error
from ._sdk import types as _types


_CURRENT = _MAJOR >= 2 # noqa: PLR2004
# Compressed answers are decoded here, a piece at most this large from one
# step: a small body which expands a thousandfold never expands at once.
_PIECE_SIZE_MAXIMUM = 65_536
_WBITS_DEFLATE = _zlib.MAX_WBITS
_WBITS = {
    'deflate': _WBITS_DEFLATE,
    'gzip': _WBITS_DEFLATE | 16,
    'x-gzip': _WBITS_DEFLATE | 16,
}
_transports: _weakref.WeakKeyDictionary[ __.typx.Any, __.typx.Any ] = (
    _weakref.WeakKeyDictionary( ) )


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
        return _http.AsyncClient(
            headers = { 'accept-encoding': 'identity' } | dict( headers ),
            auth = auth,
            event_hooks = { 'response': [ _Bounder( limit ) ] },
            timeout = _http.Timeout(
                _httpx_utils.MCP_DEFAULT_TIMEOUT,
                read = _httpx_utils.MCP_DEFAULT_SSE_READ_TIMEOUT ) )
    legacy: __.typx.Any = _http
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


class _TransportLegacy( _http.AsyncBaseTransport ):
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
        legacy: __.typx.Any = _types
        if size is not None:
            answer = _produce_oversize_error( identifier, self.limit, size )
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


class _StreamLegacy( _http.AsyncByteStream ):
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
                    raise _http.ReadError( "Answer over the result limit." )
                yield chunk
        except _http.StreamError as exception: # a coding not decoded
            self.transport.fail( self.identifier, reason = str( exception ) )
            raise exception from None
        except _http.TransportError as exception:
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


class _BodyBounded( _http.AsyncByteStream ):
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
            error = _produce_oversize_error( self.identifier, limit, size )
            yield error.model_dump_json(
                by_alias = True, exclude_none = True ).encode( )
            return
        yield b''.join( chunks )

    async def aclose( self ) -> None:
        ''' Closes body. '''
        await self.inner.aclose( )


class _BodyDecoded( _http.AsyncByteStream ):
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
            raise _http.StreamError(
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
                    if not retry: raise _http.StreamError(
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
