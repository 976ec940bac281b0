# SPDX-License-Identifier: Apache-2.0

''' Streams of ``subscriptions/listen`` (MCP 2026-07-28, SEP-2575).

    From MCP 2026-07-28, a client hears of changes only on the streams it
    opens with ``subscriptions/listen``: the answer to that request is the
    stream, which carries the changes the client asked for (tools, prompts,
    resources listed; resources updated, by URI). With the ``mcp`` SDK 2.x,
    the server serves them with the SDK's listen handler, fed by a bus of
    the process; its capabilities then say that lists change and that
    resources may be subscribed to. The 1.x SDK knows no such request:
    nothing is served and publishing does nothing.

    Each worker process has its own bus: a stream hears the changes which
    its worker sees (each worker watches the same ensembles). A stream
    which names resources follows them while open (a gateway subscribes
    to them upstream): see :py:class:`Subscriptions`.
'''


import invocables.serving.__ as __
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


_listening: __.typx.Any
_events: __.typx.Any
try: # SDK 2.x
    from mcp.server import subscriptions as _listening
    from mcp.shared import subscriptions as _events
except ImportError: _listening = _events = None # SDK 1.x

Follower: __.typx.TypeAlias = __.cabc.Callable[
    [ __.cabc.Sequence[ str ] ], __.typx.AsyncContextManager[ None ] ]
''' Returns context in which a stream follows resources (by URI). '''

STREAMS_MAXIMUM = 1024
''' Most streams open at once; another ``subscriptions/listen`` is refused
    (an internal error) until one ends. '''
EVENTS_MAXIMUM = 1024
''' Most changes waiting on one stream whose client reads no more; the
    stream is then ended (its client listens again, and lists again). '''
RESOURCES_MAXIMUM = 1024
''' Most resources one stream may name (``resourceSubscriptions``); a
    request which names more is refused (invalid parameters), so that open
    streams hold bounded memory. '''


class Subscriptions:
    ''' Bus and handler of ``subscriptions/listen`` streams of a server.

        A stream which names resources is served within the context which
        follow, if given, returns for them (entered before the stream is
        acknowledged, exited when it ends).
    '''

    def __init__( self, follow: Follower | None = None ) -> None:
        self._follow = follow
        self._bus: __.typx.Any = None
        self._handler: __.typx.Any = None
        if _listening is None: return
        self._bus = _listening.InMemorySubscriptionBus( )
        self._handler = _listening.ListenHandler(
            self._bus, max_subscriptions = STREAMS_MAXIMUM,
            max_buffered_events = EVENTS_MAXIMUM )

    def close( self ) -> None:
        ''' Ends every open stream, each with its final result. '''
        if self._handler is not None: self._handler.close( )

    def produce_handlers(
        self
    ) -> dict[ str, __.cabc.Callable[ ..., __.typx.Any ] ]:
        ''' Returns handler of ``subscriptions/listen``, by keyword of the
            2.x server; none with the 1.x SDK.
        '''
        if self._handler is None: return { }
        return { 'on_subscriptions_listen': self._listen }

    async def _listen(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Serves a stream, unless it names too many resources. '''
        uris = parameters.notifications.resource_subscriptions or ( )
        if len( uris ) > RESOURCES_MAXIMUM:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"A stream may name {RESOURCES_MAXIMUM} resources at most; "
                f"this one names {len( uris )}. Listen on several." )
        if not uris or self._follow is None:
            return await self._handler( context, parameters )
        async with self._follow( tuple( uris ) ):
            return await self._handler( context, parameters )

    async def publish( self, method: str, uri: str | None = None ) -> None:
        ''' Tells the streams which asked for it of a change, by the method
            of its notification (``notifications/tools/list_changed``,
            ``notifications/resources/updated`` with the resource's URI).
            Other methods are not of these streams.
        '''
        if self._bus is None: return
        parameters = None if uri is None else { 'uri': uri }
        event = _events.event_from_wire( method, parameters )
        if event is not None: await self._bus.publish( event )
