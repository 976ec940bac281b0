# SPDX-License-Identifier: Apache-2.0

''' Interest of the gateway's clients in the resources of upstream
    servers.

    The gateway follows a resource upstream (``resources/subscribe``, or
    names it on the server's stream of ``subscriptions/listen`` under MCP
    2026-07-28) while some client follows it: a session of MCP 2025-11-25
    or earlier which subscribed to it and neither unsubscribed nor ended,
    or an open stream of ``subscriptions/listen`` which names it. Interest
    is counted by resource upstream (server and URI which it knows),
    across every session and stream: the server is asked to subscribe at
    the first interest, to unsubscribe at the last. Changes reach each
    upstream server one at a time, in the order asked.

    Bounded: a session follows at most :py:data:`HELD_MAXIMUM` resources,
    as a stream names at most as many; the gateway follows at most
    :py:data:`FOLLOWED_MAXIMUM` resources in all. A subscription beyond
    either is refused, as is a stream.
'''


import warnings as _warnings
import weakref as _weakref

import invocables.serving.__ as __
import invocables.serving._gatewayroutes as _gatewayroutes
import invocables.serving._gatewaystreams as _gatewaystreams
import invocables.serving._subscriptions as _subscriptions
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


Request: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any, __.typx.Any ],
    __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ] ]
Asker: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any, str, Request ], __.cabc.Awaitable[ __.typx.Any ] ]
''' Asks an upstream server (an ensemble) a request within its list
    timeout, as the gateway does; none if refused or not connected. '''
Router: __.typx.TypeAlias = __.cabc.Callable[
    [ __.cabc.Collection[ str ] ],
    __.cabc.Awaitable[ __.cabc.Mapping[ str, _gatewayroutes.Route ] ] ]
''' Returns the routes of URIs as served (those of no server left out). '''
_Key: __.typx.TypeAlias = tuple[ str, str ] # ensemble, URI it knows
_Entries: __.typx.TypeAlias = __.cabc.Mapping[
    _Key, _gatewayroutes.Route | None ]

HELD_MAXIMUM = _subscriptions.RESOURCES_MAXIMUM
''' Most resources which one session follows (as many as one stream of
    ``subscriptions/listen`` names). '''
FOLLOWED_MAXIMUM = 4096
''' Most resources which the gateway follows upstream, in all. '''

_scribe = __.produce_scribe( __name__ )


class InterestLedger:
    ''' Interest of sessions and streams in upstream resources, which
        subscribes upstream at the first and unsubscribes at the last.
    '''

    def __init__(
        self,
        ask: Asker,
        route: Router,
        streams: _gatewaystreams.UpstreamStreams,
    ) -> None:
        self._ask = ask
        self._changed = __.asyncio.Event( )
        self._route = route
        self._streams = streams
        self._holders: dict[ _Key, set[ _Holder ] ] = { }
        self._locks: dict[ str, __.asyncio.Lock ] = { }
        self._sessions: _weakref.WeakKeyDictionary[ __.typx.Any, _Holder ] = (
            _weakref.WeakKeyDictionary( ) )
        self._subscribed: dict[ _Key, _gatewayroutes.Route ] = { }
        self._tasks: set[ __.asyncio.Task[ None ] ] = set( )

    def count_interest( self, ensemble: str, uri: str ) -> int:
        ''' Returns how many sessions and streams follow a resource of an
            upstream server (by the URI which it knows). '''
        return len( self._holders.get( ( ensemble, uri ), ( ) ) )

    async def follow_session(
        self, connection: __.typx.Any, uri: str, route: _gatewayroutes.Route
    ) -> None:
        ''' Counts the interest of a session (its connection) in a
            resource, by its URI as served and route, until it unfollows
            it or ends; subscribes upstream if it is the first. Raises the
            MCP error of a session which follows the most already, of a
            gateway which does, or of an upstream server which did not
            answer in time or follows the most (the interest is not
            counted then). A server's refusal is not an error: it may yet
            announce updates.
        '''
        holder = self._access_session( connection )
        try: await self._acquire( holder, { uri: route } )
        except _sdk.Error:
            self._release_later( holder, ( uri, ) )
            raise

    @__.ctxl.asynccontextmanager
    async def follow_stream(
        self, uris: __.cabc.Sequence[ str ]
    ) -> __.cabc.AsyncGenerator[ None, None ]:
        ''' Counts the interest of a stream in resources (as served; those
            of no server left out) for the body; subscribes upstream to
            those which it is the first to follow before the body. Raises
            the MCP error of a gateway which follows the most already (the
            stream is refused); an upstream server which fails is logged.
        '''
        holder = _Holder( None )
        routes = await self._route( uris )
        self._verify_room( holder, routes )
        try:
            try: await self._acquire( holder, routes )
            except _sdk.Error as exception:
                _scribe.warning(
                    "Resources of a stream not followed upstream: %s.",
                    exception )
            yield
        finally: self._release_later( holder, None )

    def survey_connections(
        self, ensemble: str, uri: str
    ) -> list[ tuple[ __.typx.Any, str ] ]:
        ''' Returns the connections of sessions which follow a resource of
            an upstream server (by the URI which it knows), each with the
            URI as served which it subscribed to. '''
        key = ( ensemble, uri )
        found: list[ tuple[ __.typx.Any, str ] ] = [ ]
        for holder in tuple( self._holders.get( key, ( ) ) ):
            connection = (
                None if holder.connection is None else holder.connection( ) )
            if connection is None: continue
            found.extend(
                ( connection, served )
                for served, known in holder.uris.items( ) if known == key )
        return found

    async def unfollow_session(
        self, connection: __.typx.Any, uri: str
    ) -> None:
        ''' Drops the interest of a session in a resource (as served), if
            any; unsubscribes upstream if it was the last. Raises the MCP
            error of an upstream server which did not answer in time.
        '''
        holder = self._sessions.get( connection )
        if holder is None: return
        await self._reconcile( dict.fromkeys( self._forget(
            holder, ( uri, ) ) ) )

    async def wait_interest(
        self, ensemble: str, uri: str, count: int
    ) -> None:
        ''' Returns once so many sessions and streams follow a resource of
            an upstream server (by the URI which it knows), and nothing is
            being unsubscribed from in the background (as when sessions
            and streams ended). '''
        while self.count_interest( ensemble, uri ) != count or self._tasks:
            await self._changed.wait( )

    def _access_session( self, connection: __.typx.Any ) -> '_Holder':
        ''' Returns the interest of a session, made at its first
            subscription, dropped when it ends (the teardown of its
            connection, 2.x; of its session, 1.x). '''
        holder = self._sessions.get( connection )
        if holder is not None: return holder
        holder = _Holder( _weakref.ref( connection ) )
        self._sessions[ connection ] = holder
        stack = getattr( connection, 'exit_stack', None ) or getattr(
            connection, '_exit_stack', None ) # 1.x: no public teardown
        if stack is not None:
            stack.callback( self._release_later, holder, None )
        return holder

    async def _acquire(
        self,
        holder: '_Holder',
        routes: __.cabc.Mapping[ str, _gatewayroutes.Route ],
    ) -> None:
        ''' Counts interest in resources (by URI as served, with their
            routes); subscribes upstream to those which nobody followed.
        '''
        self._verify_room( holder, routes )
        fresh: dict[ _Key, _gatewayroutes.Route | None ] = { }
        for served, route in routes.items( ):
            if served in holder.uris: continue
            key = ( route[ 0 ].name, route[ 1 ] )
            holder.uris[ served ] = key
            self._holders.setdefault( key, set( ) ).add( holder )
            fresh[ key ] = route
        self._signal( )
        await self._reconcile( fresh )

    def _finish_task( self, task: __.asyncio.Task[ None ] ) -> None:
        self._tasks.discard( task )
        self._signal( )

    def _forget(
        self, holder: '_Holder', uris: __.cabc.Iterable[ str ] | None
    ) -> set[ _Key ]:
        ''' Drops interest in resources (as served; all if none); returns
            the resources upstream which it no longer follows. '''
        served = tuple( holder.uris ) if uris is None else tuple(
            uri for uri in uris if uri in holder.uris )
        keys = { holder.uris.pop( uri ) for uri in served }
        keys -= set( holder.uris.values( ) )
        for key in keys:
            holders = self._holders[ key ]
            holders.discard( holder )
            if not holders: del self._holders[ key ]
        self._signal( )
        return keys

    async def _forward(
        self,
        routes: __.cabc.Mapping[ _Key, _gatewayroutes.Route ],
        *,
        subscribe: bool,
    ) -> None:
        ''' Asks the server of resources (one) to subscribe to them or no
            longer, each within its list timeout; its refusal is ignored.
            A server of MCP 2026-07-28, which knows no such request, gets
            the resources on a stream of ``subscriptions/listen`` instead
            (refused beyond the most resources).
        '''
        ensemble = next( iter( routes.values( ) ) )[ 0 ]
        uris = tuple( uri for _, uri in routes )
        label = 'resources/subscribe' if subscribe else (
            'resources/unsubscribe' )
        changes = { 'subscribed' if subscribe else 'unsubscribed': uris }

        def access_session( ) -> __.typx.Any:
            return ensemble.access_session_for_features( )[ 0 ]

        async def configure(
            session: __.typx.Any, redactor: __.typx.Any
        ) -> bool | None:
            if not _sdk.is_modern( session ): return None
            return await self._streams.configure_resources(
                ensemble.name, access_session, **changes )

        configured = await self._ask( ensemble, label, configure )
        if configured is False:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"The upstream server {ensemble.name!r} has "
                f"{_gatewaystreams.RESOURCES_MAXIMUM} resources subscribed "
                "to already; unsubscribe from one first." )
        if configured is True: return
        method = 'subscribe_resource' if subscribe else 'unsubscribe_resource'
        for uri in uris:
            await self._ask(
                ensemble, label, __.funct.partial( _request, method, uri ) )

    async def _reconcile( self, entries: _Entries ) -> None:
        ''' Subscribes upstream to resources followed (by the routes given)
            and not subscribed to, unsubscribes from those subscribed to
            and no longer followed: each server's, one change at a time.
            Raises the first MCP error once every server was asked.
        '''
        servers: dict[ str, dict[ _Key, _gatewayroutes.Route | None ] ] = { }
        for key, route in entries.items( ):
            servers.setdefault( key[ 0 ], { } )[ key ] = route
        failure: _sdk.Error | None = None
        for name, owned in servers.items( ):
            async with self._locks.setdefault( name, __.asyncio.Lock( ) ):
                try: await self._reconcile_server( owned )
                except _sdk.Error as exception: failure = failure or exception
        if failure is not None: raise failure

    async def _reconcile_server( self, entries: _Entries ) -> None:
        ''' Brings the subscriptions to resources of one server in line
            with interest, until it changed no more meanwhile. '''
        while True:
            subscribing = {
                key: route for key, route in entries.items( )
                if route is not None and key in self._holders
                and key not in self._subscribed }
            unsubscribing = {
                key: self._subscribed.pop( key ) for key in entries
                if key in self._subscribed and key not in self._holders }
            if not ( subscribing or unsubscribing ): return
            if unsubscribing:
                await self._forward( unsubscribing, subscribe = False )
            if subscribing:
                await self._forward( subscribing, subscribe = True )
                self._subscribed.update( subscribing )

    def _release_later(
        self, holder: '_Holder', uris: __.cabc.Iterable[ str ] | None
    ) -> None:
        ''' Drops interest in resources (as served; all if none) at once,
            and unsubscribes upstream from those no longer followed in the
            background (errors logged). '''
        keys = self._forget( holder, uris )
        if not keys: return

        async def reconcile( ) -> None:
            try: await self._reconcile( dict.fromkeys( keys ) )
            except _sdk.Error as exception:
                _scribe.warning(
                    "Resources not unsubscribed from upstream: %s.",
                    exception )

        task = __.asyncio.get_running_loop( ).create_task( reconcile( ) )
        self._tasks.add( task )
        task.add_done_callback( self._finish_task )

    def _signal( self ) -> None:
        ''' Wakes those who wait for a change of interest. '''
        self._changed.set( )
        self._changed = __.asyncio.Event( )

    def _verify_room(
        self,
        holder: '_Holder',
        routes: __.cabc.Mapping[ str, _gatewayroutes.Route ],
    ) -> None:
        ''' Raises the MCP error of interest beyond the most, of a session
            or stream, or of the gateway. '''
        fresh = [
            ( route[ 0 ].name, route[ 1 ] )
            for served, route in routes.items( )
            if served not in holder.uris ]
        if len( holder.uris ) + len( fresh ) > HELD_MAXIMUM:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"A session may subscribe to {HELD_MAXIMUM} resources at "
                "most; unsubscribe from one first." )
        novel = set( fresh ) - self._holders.keys( )
        if len( self._holders ) + len( novel ) > FOLLOWED_MAXIMUM:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"The gateway follows {FOLLOWED_MAXIMUM} resources "
                "already; try again later." )


class _Holder:
    ''' Interest of a session (its connection, weakly) or of a stream:
        URIs as served, each with its resource upstream. '''

    __slots__ = ( 'connection', 'uris' )

    def __init__(
        self, connection: _weakref.ReferenceType[ __.typx.Any ] | None
    ) -> None:
        self.connection = connection
        self.uris: dict[ str, _Key ] = { }


async def _request(
    method: str, uri: str, session: __.typx.Any, redactor: __.typx.Any
) -> None:
    ''' Asks the session of a server of MCP 2025-11-25 or earlier to
        subscribe to a resource or no longer. '''
    with _warnings.catch_warnings( ):
        # Deprecated by MCP 2026-07-28 (SDK 2.x), told when called: asked
        # of an earlier server, as it should be.
        _warnings.simplefilter( 'ignore', UserWarning )
        request = getattr( session, method )( uri )
    await request
