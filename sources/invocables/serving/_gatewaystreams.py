# SPDX-License-Identifier: Apache-2.0

''' Updated resources of upstream servers of MCP 2026-07-28, for the
    gateway.

    A server of MCP 2026-07-28 knows no ``resources/subscribe``: its client
    names the resources it follows on a stream of ``subscriptions/listen``
    (SEP-2575). For such an upstream server, the gateway keeps one stream
    open which names the resources its clients follow (at most
    :py:data:`RESOURCES_MAXIMUM`), opened anew, naming those of the
    moment, whenever they change; the updates which the server sends on it
    reach the session's handler as the notifications of earlier versions,
    hence the gateway's clients. A stream which ends (lost, or ended by the
    server) is opened again after a pause, on the ensemble's session of
    the moment: :py:data:`PAUSE_INITIAL`, doubled after each stream which
    ended early, whatever it carried (as the client's streams of changes,
    ``invocables.mcp._listening``), up to :py:data:`PAUSE_MAXIMUM`. A
    server which refuses the stream (invalid request or parameters, no
    such method) is not asked again until the resources change.
'''


import invocables.serving.__ as __
from ..mcp._sdk import Error as _MCPError


SessionAccessor: __.typx.TypeAlias = __.cabc.Callable[ [ ], __.typx.Any ]
''' Returns the live session of an upstream server (raises if none). '''
Sleeper: __.typx.TypeAlias = __.cabc.Callable[
    [ float ], __.cabc.Awaitable[ None ] ]

PAUSE_INITIAL = 1.0
''' Seconds before a stream which ended is opened again; doubled after
    each stream which carried nothing, up to :py:data:`PAUSE_MAXIMUM`. '''
PAUSE_MAXIMUM = 60.0
STEADY_MINIMUM = 60.0
''' Seconds a stream stays open not to have ended early: the pause after
    it is :py:data:`PAUSE_INITIAL` again. '''
RESOURCES_MAXIMUM = 1024
''' Most resources subscribed to on one upstream server of MCP
    2026-07-28 (as many as ``serve`` lets one stream name). '''

# Errors which say that the server will never serve the stream.
_REFUSALS = frozenset( ( -32600, -32601, -32602 ) )

_scribe = __.produce_scribe( __name__ )


class UpstreamStreams:
    ''' Streams of ``subscriptions/listen`` open on upstream servers of
        MCP 2026-07-28, by name of ensemble, with the resources they name.
        The pauses before a stream is opened again, how long a stream
        stays open not to have ended early, and the waiting
        (``asyncio.sleep``), may be given.
    '''

    def __init__(
        self,
        pause_initial: float = PAUSE_INITIAL,
        pause_maximum: float = PAUSE_MAXIMUM,
        steady_minimum: float = STEADY_MINIMUM,
        sleep: Sleeper = __.asyncio.sleep,
    ) -> None:
        self.pause_initial = pause_initial
        self.pause_maximum = pause_maximum
        self.steady_minimum = steady_minimum
        self._sleep = sleep
        self._resources: dict[ str, dict[ str, None ] ] = { }
        self._streams: dict[ str, __.asyncio.Task[ None ] ] = { }

    async def configure_resources(
        self,
        name: str,
        access_session: SessionAccessor,
        subscribed: __.cabc.Iterable[ str ] = ( ),
        unsubscribed: __.cabc.Iterable[ str ] = ( ),
    ) -> bool:
        ''' Names resources on the stream of an ensemble, or no longer;
            returns once the server acknowledged the stream which names
            the resources of the moment (or refused it, or it ended), and
            the stream it replaces ended (an update told on both meanwhile
            may come twice); at once if the resources named are those of
            a stream kept open. Returns false, and changes nothing, if the
            resources would be more than the most.
        '''
        known = self._resources.get( name, { } )
        dropped = frozenset( unsubscribed )
        resources = dict.fromkeys(
            uri for uri in known if uri not in dropped )
        resources.update( dict.fromkeys( subscribed ) )
        if len( resources ) > RESOURCES_MAXIMUM: return False
        if resources.keys( ) == known.keys( ) and name in self._streams:
            return True
        previous = self._streams.pop( name, None )
        try:
            if not resources:
                self._resources.pop( name, None )
                return True
            self._resources[ name ] = resources
            opened = __.asyncio.Event( )
            stream = __.asyncio.get_running_loop( ).create_task( self._listen(
                name, access_session, tuple( resources ), opened ) )
            self._streams[ name ] = stream
            stream.add_done_callback( __.funct.partial(
                self._forget_stream, name ) )
            await opened.wait( )
        finally:
            if previous is not None: previous.cancel( )
        if previous is not None: await __.asyncio.wait( ( previous, ) )
        return True

    def is_listening( self, name: str ) -> bool:
        ''' Returns whether a stream is kept open on an ensemble's server
            (perhaps waiting to be opened again); not once refused. '''
        stream = self._streams.get( name )
        return stream is not None and not stream.done( )

    def release( self ) -> None:
        ''' Ends every stream (when serving stops): the next change of
            resources opens them again. '''
        self._resources.clear( )
        for stream in self._streams.values( ): stream.cancel( )
        self._streams.clear( )

    def _forget_stream(
        self, name: str, stream: __.asyncio.Task[ None ]
    ) -> None:
        ''' Forgets a stream which ended, unless replaced already. '''
        if self._streams.get( name ) is stream: del self._streams[ name ]

    async def _listen(
        self,
        name: str,
        access_session: SessionAccessor,
        resources: tuple[ str, ... ],
        opened: __.asyncio.Event,
    ) -> None:
        ''' Keeps a stream which names resources open until cancelled or
            refused, opening it again after a pause when it ends; sets
            opened once the server first acknowledged it, refused it, or
            it ended. Each update goes to the session's handler.
        '''
        pause = self.pause_initial
        while True:
            began = __.time.monotonic( )
            served = True
            try:
                served = await _listen_once(
                    access_session, resources, opened )
            except _MCPError as exception:
                if exception.error.code in _REFUSALS: served = False
                else: _scribe.debug( # busy, perhaps (too many streams)
                    "MCP server %r did not open a stream of resources: %s.",
                    name, exception )
            except Exception as exception: # lost, or not connected: again
                _scribe.debug(
                    "Stream of the resources of MCP server %r ended: %s.",
                    name, type( exception ).__name__ )
            finally: opened.set( )
            if not served:
                _scribe.info(
                    "MCP server %r refused a stream of its resources; it is "
                    "not asked again until they change.", name )
                return
            if __.time.monotonic( ) - began >= self.steady_minimum:
                pause = self.pause_initial
            await self._sleep( pause )
            pause = min( pause * 2, self.pause_maximum )


async def _listen_once(
    access_session: SessionAccessor,
    resources: tuple[ str, ... ],
    opened: __.asyncio.Event,
) -> bool:
    ''' Keeps a stream which names resources open until it ends; sets
        opened once the server acknowledged it. Returns false if the
        session knows no such stream (of a version before MCP 2026-07-28,
        connected again so; or of the SDK 1.x).
    '''
    try: from mcp.client.subscriptions import ListenNotSupportedError, listen
    except ImportError: return False # SDK 1.x: no such stream
    try:
        async with listen(
            access_session( ), resource_subscriptions = resources
        ) as subscription:
            opened.set( )
            async for _ in subscription: pass
    except ListenNotSupportedError: return False
    return True
