# SPDX-License-Identifier: Apache-2.0

''' Updated resources of upstream servers of MCP 2026-07-28, for the
    gateway.

    A server of MCP 2026-07-28 knows no ``resources/subscribe``: its client
    names the resources it follows on a stream of ``subscriptions/listen``
    (SEP-2575). For such an upstream server, the gateway keeps one stream
    open which names the resources its clients subscribed to (at most
    :py:data:`RESOURCES_MAXIMUM`), opened anew, naming those of the
    moment, at each subscription or unsubscription; the updates which the
    server sends on it reach the session's handler as the notifications of
    earlier versions, hence the gateway's clients. A stream ends with its
    session: the resources are named again at the next subscription.
'''


import invocables.serving.__ as __


RESOURCES_MAXIMUM = 1024
''' Most resources subscribed to on one upstream server of MCP
    2026-07-28 (as many as ``serve`` lets one stream name). '''

_scribe = __.produce_scribe( __name__ )


class UpstreamStreams:
    ''' Streams of ``subscriptions/listen`` open on upstream servers of
        MCP 2026-07-28, by name of ensemble, with the resources they name.
    '''

    def __init__( self ) -> None:
        self._resources: dict[ str, dict[ str, None ] ] = { }
        self._streams: dict[ str, __.asyncio.Task[ None ] ] = { }

    async def configure_resource(
        self,
        name: str,
        session: __.typx.Any,
        uri: str,
        *,
        subscribed: bool,
    ) -> bool:
        ''' Names a resource on the stream of an ensemble's session, or no
            longer; returns once the server acknowledged the stream which
            names the resources of the moment (or refused it, or it ended),
            and the stream it replaces ended (an update told on both
            meanwhile may come twice); at once if the resources named are
            those of an open stream. Returns false, and changes nothing,
            if the resource would be one more than the most.
        '''
        resources = self._resources.setdefault( name, { } )
        known = uri in resources
        if subscribed and not known and len( resources ) >= RESOURCES_MAXIMUM:
            return False
        if subscribed: resources[ uri ] = None
        else: resources.pop( uri, None )
        if known == subscribed and name in self._streams: return True
        previous = self._streams.pop( name, None )
        try:
            if not resources:
                del self._resources[ name ]
                return True
            opened = __.asyncio.Event( )
            stream = __.asyncio.get_running_loop( ).create_task( _listen(
                name, session, tuple( resources ), opened ) )
            self._streams[ name ] = stream
            stream.add_done_callback( __.funct.partial(
                self._forget_stream, name ) )
            await opened.wait( )
        finally:
            if previous is not None: previous.cancel( )
        if previous is not None: await __.asyncio.wait( ( previous, ) )
        return True

    def _forget_stream(
        self, name: str, stream: __.asyncio.Task[ None ]
    ) -> None:
        ''' Forgets a stream which ended, unless replaced already. '''
        if self._streams.get( name ) is stream: del self._streams[ name ]


async def _listen(
    name: str,
    session: __.typx.Any,
    resources: tuple[ str, ... ],
    opened: __.asyncio.Event,
) -> None:
    ''' Keeps a stream which names resources open until cancelled or
        ended; sets opened once the server acknowledged it, refused it,
        or it ended. Each update goes to the session's handler.
    '''
    from mcp.client.subscriptions import listen
    try:
        async with listen(
            session, resource_subscriptions = resources
        ) as subscription:
            opened.set( )
            async for _ in subscription: pass
    except Exception as exception: # refused, or lost: told at debug level
        _scribe.debug(
            "Stream of the resources of MCP server %r ended: %s.",
            name, type( exception ).__name__ )
    finally: opened.set( )
