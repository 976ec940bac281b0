# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway: the clients' interest in upstream resources. A
    resource is subscribed to upstream at the first interest (a session's
    ``resources/subscribe``, or a stream of ``subscriptions/listen`` which
    names it), unsubscribed from at the last (unsubscribed, session or
    stream ended); bounded per session. Each upstream server logs the
    requests it gets, which the tests count.

    The ``mcp`` SDK 1.x serves no ``subscriptions/listen``: the tests say
    so by asserting that serve refuses it.
'''


import asyncio
import contextlib

import pytest

from mcp import types

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk
from invocables.serving import _gatewayinterest as interest
from invocables.serving import _gatewaystreams as streams_

from . import mcp_support
from . import serving_support


_BOUND = 30 # seconds: proves that something comes, not how soon
_MODERN = sdk.MAJOR >= 2 # noqa: PLR2004
_SUBSCRIBE = 'resources/subscribe'
_UNSUBSCRIBE = 'resources/unsubscribe'


_Upstream = serving_support.RoutingUpstream


class _Changes:
    ''' Updated resources (their URIs) which a legacy client, or an
        ensemble's observer, heard. '''

    def __init__( self ):
        self.updated: list[ str ] = [ ]
        self.arrival = asyncio.Event( )

    async def on_message( self, message ) -> None:
        message = getattr( message, 'root', message )
        if not isinstance( message, types.ResourceUpdatedNotification ):
            return
        self.updated.append( str( message.params.uri ) )
        self.arrival.set( )

    async def observe( self, ensemble, method, uri ) -> None:
        if method != 'notifications/resources/updated': return
        self.updated.append( uri )
        self.arrival.set( )

    async def hear( self, uri: str, trigger ) -> None:
        ''' Triggers updates until one of a URI comes (a stream opened
            anew may miss the first); bounded: no hang. '''
        async def hear( ) -> None:
            while uri not in self.updated:
                self.arrival.clear( )
                await trigger( )
                with contextlib.suppress( asyncio.TimeoutError ):
                    await asyncio.wait_for( self.arrival.wait( ), 0.5 )
        await asyncio.wait_for( hear( ), _BOUND )


def _open_legacy( server, changes: _Changes | None = None ):
    ''' Opens client of MCP 2025-11-25 of the gateway, in memory. '''
    callbacks = { } if changes is None else {
        'message_handler': changes.on_message }
    return mcp_support.open_memory_client(
        server.produce_server( ), mode = 'legacy', **callbacks )


@contextlib.asynccontextmanager
async def _open_modern( server ):
    ''' Serves the gateway over stateless HTTP; yields a client of MCP
        2026-07-28 of it. Under the SDK 1.x, asserts that
        ``subscriptions/listen`` is refused, and yields none.
    '''
    async with mcp_support.serve_in_loop(
        server, stateless = True
    ) as url, serving_support.open_listening_client(
        url, { 'resourceSubscriptions': [ 'a://one' ] }
    ) as client: yield client


async def _receive( subscription ):
    ''' Returns the next event of a stream (none if it ended); bounded. '''
    async def receive( ):
        async for event in subscription: return event
        return None
    return await asyncio.wait_for( receive( ), _BOUND )


async def _read( client, uri: str ) -> None:
    await client.read_resource( uri )


async def _subscribe_absent( streams ):
    ''' Subscribes streams to a resource of a server never connected;
        returns the access to its session.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'absent', url = 'http://127.0.0.1:9/mcp' )

    def access( ):
        return ensemble.access_session_for_features( )[ 0 ]

    assert await streams.configure_resources(
        'absent', access, subscribed = [ 'x://1' ] )
    return access


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_100_listen_subscribes_upstream( tmp_path ):
    ''' A stream of ``subscriptions/listen`` which names a resource has
        the gateway subscribe to it upstream before it is acknowledged
        (no session subscribed to it), hears its updates, and has it
        unsubscribed from once it ends.
    '''
    alpha = _Upstream( tmp_path, 'alpha', resources = [ 'a://one' ] )
    server = serving.ToolServer( [ alpha.ensemble ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_modern( server ) as client:
            if client is None: # SDK 1.x: refused
                assert alpha.count( _SUBSCRIBE ) == 0
                return
            async with client.listen(
                resource_subscriptions = [ 'a://one' ]
            ) as updates:
                assert alpha.count( _SUBSCRIBE ) == 1
                await _read( client, 'alpha://update' )
                event = await _receive( updates )
                assert event.uri == 'a://one'
            await server._interests.wait_interest( 'alpha', 'a://one', 0 )
            assert alpha.count( _UNSUBSCRIBE ) == 1
            assert alpha.count( _SUBSCRIBE ) == 1


@serving_support.mark_gateway_test
async def test_110_interest_across_sessions( tmp_path ):
    ''' Two sessions subscribe to a resource: one subscription upstream;
        one unsubscribes: the other still hears its updates, and the
        server is not told to unsubscribe until the other does. A
        session which ends without unsubscribing drops its interest.
    '''
    alpha = _Upstream( tmp_path, 'alpha', resources = [ 'a://one' ] )
    server = serving.ToolServer( [ alpha.ensemble ] )
    changes = _Changes( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_legacy( server ) as first, \
                _open_legacy( server, changes ) as second:
            await first.subscribe_resource( 'a://one' )
            await second.subscribe_resource( 'a://one' )
            await second.subscribe_resource( 'a://one' )
            assert alpha.count( _SUBSCRIBE ) == 1
            await first.unsubscribe_resource( 'a://one' )
            await first.unsubscribe_resource( 'a://one' )
            assert alpha.count( _UNSUBSCRIBE ) == 0
            await changes.hear(
                'a://one', lambda: _read( first, 'alpha://update' ) )
            await second.unsubscribe_resource( 'a://one' )
            assert alpha.count( _UNSUBSCRIBE ) == 1
            async with _open_legacy( server ) as third:
                await third.subscribe_resource( 'a://one' )
                assert alpha.count( _SUBSCRIBE ) == 2 # noqa: PLR2004
            await server._interests.wait_interest( 'alpha', 'a://one', 0 )
            assert alpha.count( _UNSUBSCRIBE ) == 2 # noqa: PLR2004


@serving_support.mark_gateway_test
async def test_120_streams_and_sessions_share( tmp_path ):
    ''' A stream and a session follow one resource: subscribed upstream
        once; the stream's end leaves it subscribed for the session, whose
        unsubscription ends it. Two streams likewise.
    '''
    alpha = _Upstream( tmp_path, 'alpha', resources = [ 'a://one' ] )
    server = serving.ToolServer( [ alpha.ensemble ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_modern( server ) as client, \
                _open_legacy( server ) as legacy:
            if client is None: return # SDK 1.x: refused
            async with client.listen( resource_subscriptions = [ 'a://one' ] ):
                await legacy.subscribe_resource( 'a://one' )
                async with client.listen(
                    resource_subscriptions = [ 'a://one', 'a://two' ]
                ): assert alpha.count( _SUBSCRIBE ) == 2 # noqa: PLR2004
                await server._interests.wait_interest(
                    'alpha', 'a://two', 0 )
                assert alpha.count( _UNSUBSCRIBE ) == 1
            await server._interests.wait_interest( 'alpha', 'a://one', 1 )
            assert alpha.count( _UNSUBSCRIBE ) == 1
            await legacy.unsubscribe_resource( 'a://one' )
            assert alpha.count( _UNSUBSCRIBE ) == 2 # noqa: PLR2004
            assert alpha.count( _SUBSCRIBE ) == 2 # noqa: PLR2004


@serving_support.mark_gateway_test
async def test_130_session_bounded( tmp_path ):
    ''' A session may subscribe to so many resources at most; one more is
        refused (invalid parameters), saying so, and not asked upstream;
        once it unsubscribed from one, it may subscribe to another.
    '''
    bound = interest.HELD_MAXIMUM
    alpha = _Upstream( tmp_path, 'alpha', resources = [ ] )
    server = serving.ToolServer( [ alpha.ensemble ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_legacy( server ) as client:
            for index in range( bound ):
                await client.subscribe_resource( f"a://item/{index}" )
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.subscribe_resource( 'a://more' )
            assert caught.value.error.code == types.INVALID_PARAMS
            assert 'resources at most' in caught.value.error.message
            assert alpha.count( _SUBSCRIBE ) == bound
            await client.unsubscribe_resource( 'a://item/0' )
            await client.subscribe_resource( 'a://more' )
            assert alpha.count( _SUBSCRIBE ) == bound + 1


@serving_support.mark_gateway_test
async def test_140_upstream_stream_reopened( tmp_path ):
    ''' The stream which names the resources subscribed to on an upstream
        server of MCP 2026-07-28 is opened again after the server ended
        it: its updates are heard again, no subscription changed; it ends
        when serving stops. (Under the SDK 1.x, the subscription is
        forwarded, and heard likewise.)
    '''
    inner = _Upstream( tmp_path, 'inner', resources = [ 'i://1' ] )
    upstream = serving.ToolServer( [ inner.ensemble ] )
    changes = _Changes( )
    async with serving_support.serve_gateway( upstream ) as server:
        async with _open_legacy( server, changes ) as client:
            await client.subscribe_resource( 'i://1' )
            await changes.hear(
                'i://1', lambda: _read( client, 'inner://update' ) )
            upstream.subscriptions.close( )
            changes.updated.clear( )
            await changes.hear(
                'i://1', lambda: _read( client, 'inner://update' ) )
            assert server._streams.is_listening( 'modern' ) == (
                _MODERN )
            server.release_streams( ) # as when serving stops
            assert not server._streams.is_listening( 'modern' )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_150_stream_of_several_servers( tmp_path ):
    ''' A stream which names resources of two servers, and one of none:
        each server is asked to subscribe to its own, after one listing of
        resources (and of templates, for the URI of none), and to
        unsubscribe from them once the stream ends.
    '''
    alpha = _Upstream(
        tmp_path, 'alpha', resources = [ 'a://one', 'a://two' ] )
    beta = _Upstream( tmp_path, 'beta', resources = [ 'b://one' ] )
    server = serving.ToolServer( [ alpha.ensemble, beta.ensemble ] )
    uris = [ 'a://one', 'a://two', 'b://one', 'n://none' ]
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_modern( server ) as client:
            if client is None: return # SDK 1.x: refused
            async with client.listen( resource_subscriptions = uris ):
                assert ( alpha.count( _SUBSCRIBE ),
                         beta.count( _SUBSCRIBE ) ) == ( 2, 1 )
                for upstream in ( alpha, beta ):
                    assert upstream.count( 'resources/list' ) == 1
                    assert upstream.count( 'resources/templates/list' ) == 1
            await server._interests.wait_interest( 'alpha', 'a://one', 0 )
            assert ( alpha.count( _UNSUBSCRIBE ),
                     beta.count( _UNSUBSCRIBE ) ) == ( 2, 1 )


class _Pauses:
    ''' Pauses a stream takes (its waiting, given): recorded, each over
        at once until so many, then held. '''

    def __init__( self, count: int ):
        self.count = count
        self.pauses: list[ float ] = [ ]
        self.held = asyncio.Event( )

        self.arrival = asyncio.Event( )

    async def sleep( self, pause: float ) -> None:
        self.pauses.append( pause )
        self.arrival.set( )
        if len( self.pauses ) < self.count: return
        self.held.set( )
        await asyncio.Event( ).wait( ) # until cancelled

    async def wait_count( self, count: int ) -> None:
        ''' Waits until so many pauses were taken. '''
        while len( self.pauses ) < count:
            self.arrival.clear( )
            await self.arrival.wait( )


@pytest.mark.asyncio
async def test_200_pauses_double( ):
    ''' A stream which cannot be opened (its server not connected) is
        tried again after a pause of 1 s, doubled after each, up to 60 s;
        it ends once its resources are unsubscribed from. Under the SDK
        1.x, which knows no such stream, it is not opened at all.
    '''
    pauses = _Pauses( 9 )
    streams = streams_.UpstreamStreams( sleep = pauses.sleep )
    access = await _subscribe_absent( streams )
    if not _MODERN:
        assert not streams.is_listening( 'absent' )
        assert pauses.pauses == [ ]
        return
    await asyncio.wait_for( pauses.held.wait( ), _BOUND )
    assert pauses.pauses == [ 1, 2, 4, 8, 16, 32, 60, 60, 60 ]
    assert streams.is_listening( 'absent' )
    assert await streams.configure_resources(
        'absent', access, unsubscribed = [ 'x://1' ] )
    assert not streams.is_listening( 'absent' )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_210_refusal_not_retried( tmp_path ):
    ''' A session which knows no stream of ``subscriptions/listen`` (of
        MCP 2025-11-25: the server connected again so) refuses it: it is
        not tried again, nor paused for.
    '''
    alpha = _Upstream( tmp_path, 'alpha', resources = [ 'a://one' ] )
    pauses = _Pauses( 1 )
    streams = streams_.UpstreamStreams( sleep = pauses.sleep )

    def access( ):
        return alpha.ensemble.access_session_for_features( )[ 0 ]

    async with invocables.connect_ensembles( [ alpha.ensemble ] ):
        assert await streams.configure_resources(
            'alpha', access, subscribed = [ 'a://one' ] )
        assert not streams.is_listening( 'alpha' )
        assert pauses.pauses == [ ]


@pytest.mark.asyncio
async def test_220_pause_after_steady_stream( ):
    ''' A stream which stayed open long enough (here: any) is opened again
        after the first pause, not a doubled one.
    '''
    pauses = _Pauses( 3 )
    streams = streams_.UpstreamStreams(
        steady_minimum = 0, sleep = pauses.sleep )
    await _subscribe_absent( streams )
    if not _MODERN: return # SDK 1.x: no such stream (see test_200)
    await asyncio.wait_for( pauses.held.wait( ), _BOUND )
    assert pauses.pauses == [ 1, 1, 1 ]
    streams.release( )
    assert not streams.is_listening( 'absent' )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_230_early_ends_double_pause( tmp_path ):
    ''' A server which ends each stream early, though it carried an
        update, is not heard more often: the pauses double still, and each
        stream opened again hears the updates.
    '''
    inner = _Upstream( tmp_path, 'inner', resources = [ 'i://1' ] )
    upstream = serving.ToolServer( [ inner.ensemble ] )
    heard = _Changes( )
    pauses = _Pauses( 100 )
    streams = streams_.UpstreamStreams( sleep = pauses.sleep )
    async with invocables.connect_ensembles( upstream.ensembles ):
        async with mcp_support.serve_in_loop( upstream ) as url:
            modern = invocables.mcp.produce_ensemble(
                'modern', url = url, protocol = 'modern' )
            modern.configure_relay( observer = heard.observe )

            def access( ):
                return modern.access_session_for_features( )[ 0 ]

            async def trigger( ):
                await modern.retrieve_resource( 'inner://update' )

            async with invocables.connect_ensembles( [ modern ] ):
                assert await streams.configure_resources(
                    'modern', access, subscribed = [ 'i://1' ] )
                if not _MODERN: # SDK 1.x: no such stream
                    assert not streams.is_listening( 'modern' )
                    return
                for count in range( 1, 4 ):
                    heard.updated.clear( )
                    await heard.hear( 'i://1', trigger )
                    upstream.subscriptions.close( )
                    await asyncio.wait_for(
                        pauses.wait_count( count ), _BOUND )
                assert pauses.pauses == [ 1, 2, 4 ]
                streams.release( )
