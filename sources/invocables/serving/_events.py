# SPDX-License-Identifier: Apache-2.0

''' Events of streams kept for resumption: bounded, and per session.

    :py:class:`MemoryEventStore` keeps the events which the ``mcp`` SDK
    sends on streams, bounded in number and in bytes (the size of each
    message in JSON, measured once when stored). The SDK names streams by
    request (``'1'``, ``'2'``, ...), alike in every session, and tells an
    event store nothing of sessions: :py:class:`SessionsTracker`, around
    the application, tells the store the session of each request, so that
    a client replays the events of its own session only, and the events of
    a session are dropped when it ends (deleted, expired, or the server
    stopped).
'''


import contextvars as _contextvars
import uuid as _uuid
import weakref as _weakref

import mcp.types as _types

from mcp.server.streamable_http import EventMessage as _EventMessage
from mcp.server.streamable_http import EventStore as _EventStore

import invocables.serving.__ as __


EVENTS_MAXIMUM_DEFAULT = 10_000
EVENTS_SIZE_MAXIMUM_DEFAULT = 64 * 1024 * 1024

# Not an error of the JSON-RPC ranges which MCP names: the call succeeded,
# its result could not be kept for a client which resumes.
_UNKEPT_CODE = -32603
_REDIRECTION = 300 # statuses of success are below
_SESSION_HEADER = b'mcp-session-id'


class _Session:
    ''' Session of streamable HTTP, as the event store knows it. '''

    __slots__ = ( '__weakref__', 'identifier', 'watched' )

    def __init__( self, identifier: str | None = None ):
        self.identifier = identifier
        self.watched = False


_Event: __.typx.TypeAlias = tuple[
    _Session | None, str, bytes | None, type[ __.typx.Any ] | None ]
_Streams: __.typx.TypeAlias = dict[ str, dict[ str, None ] ]
_session: _contextvars.ContextVar[ _Session | None ] = (
    _contextvars.ContextVar( 'invocables_events_session', default = None ) )


class MemoryEventStore( _EventStore ):
    ''' Events of streams, in memory, for clients to resume streams.

        Keeps the latest events of all streams, at most ``maximum`` of
        them and at most ``size_maximum`` bytes (the size of each message
        in JSON), evicting the oldest first; an event larger than
        ``size_maximum`` is not kept (a response is replaced by an error
        saying so). A client which resumes after an event forgotten gets
        nothing replayed. With :py:class:`SessionsTracker` around the
        application, a client replays the events of its own session only,
        and the events of a session are dropped when it ends. Any event
        store of the ``mcp`` SDK (``EventStore``) can replace it.
    '''

    def __init__(
        self,
        maximum: int = EVENTS_MAXIMUM_DEFAULT,
        size_maximum: int = EVENTS_SIZE_MAXIMUM_DEFAULT,
    ):
        self.maximum = maximum
        self.size_maximum = size_maximum
        self.size = 0
        self._events: __.collections.OrderedDict[ str, _Event ] = (
            __.collections.OrderedDict( ) )
        self._streams: dict[ _Session | None, _Streams ] = { }
        self._sessions: _weakref.WeakValueDictionary[ str, _Session ] = (
            _weakref.WeakValueDictionary( ) )

    @property
    def count( self ) -> int:
        ''' Number of events kept. '''
        # Not __len__: the SDK tests its event store for truth.
        return len( self._events )

    async def store_event(
        self, stream_id: str, message: __.typx.Any
    ) -> str:
        ''' Stores message of stream; returns its event identifier. '''
        identifier = _uuid.uuid4( ).hex
        session = _session.get( )
        # Messages (not priming events) come from the session's router,
        # whose task lives as long as the session.
        if message is not None and session is not None:
            self._watch_session( session )
        data = None if message is None else message.model_dump_json(
            by_alias = True, exclude_unset = True ).encode( 'utf-8' )
        model: type[ __.typx.Any ] | None = (
            None if message is None else message.__class__ )
        if data is not None and len( data ) > self.size_maximum:
            data, model = _produce_unkept( message, len( data ), self )
            if data is None: return identifier
        self._add( identifier, ( session, stream_id, data, model ) )
        return identifier

    async def replay_events_after(
        self,
        last_event_id: str,
        send_callback: __.cabc.Callable[
            [ _EventMessage ], __.cabc.Awaitable[ None ] ],
    ) -> str | None:
        ''' Sends the events of the stream after an event; returns the
            stream, or ``None`` if the event is unknown (forgotten, or of
            another session).
        '''
        event = self._events.get( last_event_id )
        if event is None or event[ 0 ] is not _session.get( ): return None
        session, stream = event[ 0 ], event[ 1 ]
        identifiers = tuple(
            self._streams.get( session, { } ).get( stream, { } ) )
        after = identifiers[ identifiers.index( last_event_id ) + 1 : ]
        for identifier in after:
            event = self._events.get( identifier )
            if event is None or event[ 2 ] is None or event[ 3 ] is None:
                continue
            message = event[ 3 ].model_validate_json( event[ 2 ] )
            await send_callback( _EventMessage( message, identifier ) )
        return stream

    def forget_session( self, session: _Session ) -> None:
        ''' Drops the events of a session. '''
        identifier = session.identifier
        if identifier is not None and self._sessions.get(
            identifier ) is session: del self._sessions[ identifier ]
        for identifiers in self._streams.pop( session, { } ).values( ):
            for identifier in identifiers:
                event = self._events.pop( identifier )
                self.size -= _measure( event )

    def access_session( self, identifier: str ) -> _Session:
        ''' Returns session known by identifier (a new one if unknown). '''
        session = self._sessions.get( identifier )
        return _Session( identifier ) if session is None else session

    def _add( self, identifier: str, event: _Event ) -> None:
        session, stream = event[ 0 ], event[ 1 ]
        self._events[ identifier ] = event
        self._streams.setdefault( session, { } ).setdefault(
            stream, { } )[ identifier ] = None
        self.size += _measure( event )
        while self._events and (
            len( self._events ) > self.maximum
            or self.size > self.size_maximum
        ): self._evict( )

    def _evict( self ) -> None:
        identifier, event = self._events.popitem( last = False )
        self.size -= _measure( event )
        session, stream = event[ 0 ], event[ 1 ]
        streams = self._streams[ session ]
        identifiers = streams[ stream ]
        del identifiers[ identifier ]
        if identifiers: return
        del streams[ stream ]
        if not streams: del self._streams[ session ]

    def register_session( self, session: _Session ) -> None:
        ''' Registers session under its identifier, while it lives. '''
        if session.identifier is None: return
        self._sessions[ session.identifier ] = session

    def _watch_session( self, session: _Session ) -> None:
        if session.watched: return
        try: task = __.asyncio.current_task( )
        except RuntimeError: return # not asyncio (trio): bounds only
        if task is None: return
        session.watched = True
        task.add_done_callback( lambda _: self.forget_session( session ) )


class SessionsTracker:
    ''' ASGI middleware which tells an event store the session of each
        request (from the ``Mcp-Session-Id`` headers), and when a client
        deletes its session.
    '''

    def __init__( self, app: __.typx.Any, store: MemoryEventStore ):
        self.app = app
        self.store = store

    async def __call__(
        self, scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any
    ) -> None:
        if scope[ 'type' ] != 'http':
            await self.app( scope, receive, send )
            return
        identifier = _access_header( scope, _SESSION_HEADER )
        session = (
            _Session( ) if identifier is None
            else self.store.access_session( identifier ) )
        deleting = scope.get( 'method' ) == 'DELETE'

        async def send_tracked( message: __.typx.Any ) -> None:
            if message[ 'type' ] == 'http.response.start':
                self._track( session, message, deleting = deleting )
            await send( message )

        token = _session.set( session )
        try: await self.app( scope, receive, send_tracked )
        finally: _session.reset( token )

    def _track(
        self, session: _Session, message: __.typx.Any, *, deleting: bool
    ) -> None:
        if session.identifier is None:
            session.identifier = _access_header( message, _SESSION_HEADER )
            self.store.register_session( session )
        # Not on 404, which a client of another credential may cause.
        elif deleting and int( message.get( 'status', 0 ) ) < _REDIRECTION:
            self.store.forget_session( session )


def _access_header(
    carrier: __.cabc.Mapping[ str, __.typx.Any ], name: bytes
) -> str | None:
    ''' Returns value of header in ASGI scope or response start. '''
    for key, value in carrier.get( 'headers' ) or ( ):
        if bytes( key ).lower( ) == name:
            return bytes( value ).decode( 'latin-1' )
    return None


def _measure( event: _Event ) -> int:
    ''' Returns size of event: its message in JSON. '''
    return 0 if event[ 2 ] is None else len( event[ 2 ] )


def _produce_unkept(
    message: __.typx.Any, size: int, store: MemoryEventStore
) -> tuple[ bytes | None, type[ __.typx.Any ] | None ]:
    ''' Returns error which replaces a response too large to keep (a client
        which resumes learns that its result is lost), or nothing for
        another message.
    '''
    inner = getattr( message, 'root', message )
    if not isinstance( inner, _types.JSONRPCResponse ): return None, None
    error = {
        'jsonrpc': '2.0', 'id': inner.id, 'error': {
            'code': _UNKEPT_CODE,
            'message': (
                "The result ({size} bytes) was larger than the events "
                "kept for resumption ({maximum} bytes): call again." ).format(
                    size = size, maximum = store.size_maximum ),
            'data': {
                'reason': 'unkept', 'size': size,
                'maximum': store.size_maximum } } }
    model: type[ __.typx.Any ] = (
        message.__class__ if hasattr( message, 'root' )
        else _types.JSONRPCError )
    return __.json.dumps( error ).encode( 'utf-8' ), model
