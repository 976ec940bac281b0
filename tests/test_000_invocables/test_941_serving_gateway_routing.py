# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway: the memo of routes. A URI which a listing showed
    reaches its server without listing again; the memo is forgotten when
    a server announces new resources or a session is replaced, holds a
    bounded number of URIs per server, and a remembered server which
    finds no such resource sends the URI to be routed afresh, once. Each
    upstream server logs the requests it gets, which the tests count.
'''


import asyncio

import pytest

from mcp import types

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk
from invocables.serving import _gatewayroutes as routes

from . import mcp_support
from . import serving_support


_BOUND = 30 # seconds: proves that a notification comes, not how soon
_MODERN = sdk.MAJOR >= 2 # noqa: PLR2004
_READ = 'resources/read'


_Upstream = serving_support.RoutingUpstream


class _Changes:
    ''' Notifications of new resources and of updated resources (their
        URIs) which the gateway's client got. '''

    def __init__( self ):
        self.count = 0
        self.updated: list[ str ] = [ ]
        self.arrival = asyncio.Event( )

    async def on_message( self, message ) -> None:
        message = getattr( message, 'root', message )
        if isinstance( message, types.ResourceListChangedNotification ):
            self.count += 1
        elif isinstance( message, types.ResourceUpdatedNotification ):
            self.updated.append( str( message.params.uri ) )
        else: return
        self.arrival.set( )

    async def wait( self, count: int ) -> None:
        ''' Waits until count notifications of new resources came;
            bounded: no hang. '''
        await self._wait( lambda: self.count >= count )

    async def wait_updated( self, uris: list[ str ], start: int ) -> None:
        ''' Waits until updates of the URIs came, after the first start
            heard (a stream opened anew may tell one twice); bounded. '''
        await self._wait(
            lambda: set( uris ) <= set( self.updated[ start : ] ) )

    async def _wait( self, condition ) -> None:
        async def wait( ) -> None:
            while not condition( ):
                self.arrival.clear( )
                await self.arrival.wait( )
        await asyncio.wait_for( wait( ), _BOUND )


def _open_client( server, changes: _Changes | None = None ):
    ''' Opens client of the gateway; of MCP 2025-11-25, which is told of
        new resources as notifications. '''
    callbacks = { } if changes is None else {
        'message_handler': changes.on_message }
    return mcp_support.open_memory_client(
        server.produce_server( ), mode = 'legacy', **callbacks )


async def _read( client, uri: str ) -> str:
    result = await client.read_resource( uri )
    return result.contents[ 0 ].text


def _assert_absent( caught ) -> None:
    assert caught.value.error.code == -32002
    assert 'Unknown resource' in caught.value.error.message


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_listed_uris_read_without_listing( tmp_path ):
    ''' A URI which the client's listing showed, or the gateway's own
        listing for a read, reaches its server without listing again:
        ten reads, no listing more; scoped URIs likewise.
    '''
    alpha = _Upstream(
        tmp_path, 'alpha', resources = [ 'a://one', 'same://doc' ] )
    beta = _Upstream(
        tmp_path, 'beta', resources = [ 'b://one', 'same://doc' ] )
    server = serving.ToolServer( [ alpha.ensemble, beta.ensemble ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_client( server ) as client:
            assert await _read( client, 'b://one' ) == 'beta: b://one'
            assert ( alpha.count( ), beta.count( ) ) == ( 1, 1 )
            for _ in range( 10 ):
                assert await _read( client, 'a://one' ) == 'alpha: a://one'
                assert await _read( client, 'b://one' ) == 'beta: b://one'
                assert await _read( client, 'beta+same://doc' ) == (
                    'beta: same://doc' )
            assert ( alpha.count( ), beta.count( ) ) == ( 1, 1 )
            await client.list_resources( )
            assert ( alpha.count( ), beta.count( ) ) == ( 2, 2 )
            for _ in range( 10 ):
                assert await _read( client, 'alpha+same://doc' ) == (
                    'alpha: same://doc' )
            assert ( alpha.count( ), beta.count( ) ) == ( 2, 2 )
            assert alpha.count( _READ ) == 20 # noqa: PLR2004


@pytest.mark.asyncio
@pytest.mark.slow
async def test_110_announcement_forgets( tmp_path ):
    ''' A server which announces new resources makes the gateway forget
        every route: a URI no longer listed is not found (no longer read
        from the server which listed it), one newly listed reaches its
        server, each after one listing more.
    '''
    alpha = _Upstream( tmp_path, 'alpha', resources = [ 'a://one' ] )
    beta = _Upstream( tmp_path, 'beta', resources = [ 'b://one' ] )
    server = serving.ToolServer( [ alpha.ensemble, beta.ensemble ] )
    changes = _Changes( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_client( server, changes ) as client:
            await client.list_resources( )
            for _ in range( 3 ):
                assert await _read( client, 'a://one' ) == 'alpha: a://one'
            assert alpha.count( ) == 1
            alpha.change( resources = [ 'a://two' ] )
            await _read( client, 'alpha://announce' )
            await changes.wait( 1 )
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.read_resource( 'a://one' )
            _assert_absent( caught )
            assert alpha.count( ) == 2 # noqa: PLR2004
            for _ in range( 3 ):
                assert await _read( client, 'a://two' ) == 'alpha: a://two'
            assert ( alpha.count( ), beta.count( ) ) == ( 2, 2 )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_120_absent_routed_afresh( tmp_path ):
    ''' A remembered server which finds no such resource (it no longer
        lists it, and announced nothing): the URI is routed afresh, once,
        to the server which lists it now, remembered thereafter; if none
        lists it, not found after one listing more.
    '''
    alpha = _Upstream(
        tmp_path, 'alpha', '--strict', resources = [ 'm://doc' ] )
    beta = _Upstream( tmp_path, 'beta', '--strict', resources = [ ] )
    server = serving.ToolServer( [ alpha.ensemble, beta.ensemble ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_client( server ) as client:
            assert await _read( client, 'm://doc' ) == 'alpha: m://doc'
            alpha.change( resources = [ ] )
            beta.change( resources = [ 'm://doc' ] )
            for _ in range( 3 ):
                assert await _read( client, 'm://doc' ) == 'beta: m://doc'
            assert ( alpha.count( ), beta.count( ) ) == ( 2, 2 )
            assert ( alpha.count( _READ ), beta.count( _READ ) ) == ( 2, 3 )
            beta.change( resources = [ ] )
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.read_resource( 'm://doc' )
            _assert_absent( caught )
            assert ( alpha.count( ), beta.count( ) ) == ( 3, 3 )
            assert beta.count( _READ ) == 4 # noqa: PLR2004


@pytest.mark.asyncio
@pytest.mark.slow
async def test_130_memo_bounded( tmp_path ):
    ''' A server which lists more URIs than the memo holds, in pages: the
        last it listed read without listing, an earlier one after one
        listing more (every page again); each reaches its server.
    '''
    maximum = routes.ROUTES_MAXIMUM
    alpha = _Upstream(
        tmp_path, 'alpha', '--page', '1000', generate = maximum + 200 )
    beta = _Upstream( tmp_path, 'beta', resources = [ 'b://one' ] )
    server = serving.ToolServer( [ alpha.ensemble, beta.ensemble ] )
    pages = ( maximum + 202 + 999 ) // 1000 # alpha://announce, ://update
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_client( server ) as client:
            listed = ( await client.list_resources( ) ).resources
            assert len( listed ) == maximum + 205 # noqa: PLR2004
            assert alpha.count( ) == pages
            last = f"alpha://item/{maximum + 199}"
            for _ in range( 3 ):
                assert await _read( client, last ) == f"alpha: {last}"
            assert ( alpha.count( ), beta.count( ) ) == ( pages, 1 )
            for index in ( 0, 1 ):
                uri = f"alpha://item/{index}"
                assert await _read( client, uri ) == f"alpha: {uri}"
            assert ( alpha.count( ), beta.count( ) ) == ( 3 * pages, 3 )
            assert await _read( client, 'b://one' ) == 'beta: b://one'
            assert ( alpha.count( ), beta.count( ) ) == ( 3 * pages, 3 )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_140_session_replaced_forgets( tmp_path ):
    ''' Routes learnt over a session are forgotten once the session to
        the server is replaced (connected again): a URI which it no
        longer lists is not found, not read from it.
    '''
    alpha = _Upstream( tmp_path, 'alpha', resources = [ 's://doc' ] )
    beta = _Upstream( tmp_path, 'beta', resources = [ 'b://one' ] )
    server = serving.ToolServer( [ alpha.ensemble, beta.ensemble ] )
    async with _open_client( server ) as client:
        async with invocables.connect_ensembles( server.ensembles ):
            assert await _read( client, 's://doc' ) == 'alpha: s://doc'
            assert await _read( client, 's://doc' ) == 'alpha: s://doc'
            assert alpha.count( ) == 1
        alpha.change( resources = [ ] )
        async with invocables.connect_ensembles( server.ensembles ):
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.read_resource( 's://doc' )
            _assert_absent( caught )
            assert alpha.count( ) == 2 # noqa: PLR2004
            assert await _read( client, 'b://one' ) == 'beta: b://one'
            assert await _read( client, 'b://one' ) == 'beta: b://one'
            assert alpha.count( ) == 2 # noqa: PLR2004


@serving_support.mark_gateway_test
async def test_150_subscriptions_remembered( tmp_path ):
    ''' Subscribing and unsubscribing to a URI listed reach its server
        without listing again; templates route as before (listing).
    '''
    alpha = _Upstream(
        tmp_path, 'alpha', resources = [ 'a://one' ],
        templates = [ 't://{id}' ] )
    beta = _Upstream( tmp_path, 'beta', resources = [ 'b://one' ] )
    server = serving.ToolServer( [ alpha.ensemble, beta.ensemble ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_client( server ) as client:
            await client.list_resources( )
            await client.subscribe_resource( 'a://one' )
            await client.unsubscribe_resource( 'a://one' )
            assert alpha.count( ) == 1
            assert alpha.count( 'resources/subscribe' ) == 1
            assert alpha.count( 'resources/unsubscribe' ) == 1
            assert await _read( client, 't://7' ) == 'alpha: t://7'
            assert alpha.count( 'resources/templates/list' ) == 1
            assert await _read( client, 'a://one' ) == 'alpha: a://one'
            assert ( alpha.count( ), beta.count( ) ) == ( 2, 2 )


@serving_support.mark_gateway_test
async def test_160_modern_upstream_updates( tmp_path ):
    ''' A client which subscribes to resources of an upstream server of
        MCP 2026-07-28 (``serve``, which knows no ``resources/subscribe``)
        hears of their updates: the gateway names them on a stream of
        ``subscriptions/listen`` (opened anew as they change) instead of
        forwarding the request. Under the SDK 1.x, which speaks no
        2026-07-28, the request is forwarded, and reaches the server
        behind. A client of 2026-07-28 cannot subscribe so: the method is
        not found (it listens on streams instead).
    '''
    inner = _Upstream( tmp_path, 'inner', resources = [ 'i://1', 'i://2' ] )
    other = _Upstream( tmp_path, 'other', resources = [ 'o://1' ] )
    upstream = serving.ToolServer( [ inner.ensemble ] )
    changes = _Changes( )
    async with serving_support.serve_gateway(
        upstream, other.ensemble
    ) as server:
        async with _open_client( server, changes ) as client:
            await client.subscribe_resource( 'i://1' )
            await _read( client, 'inner://update' )
            await changes.wait_updated( [ 'i://1' ], 0 )
            await client.subscribe_resource( 'i://2' )
            heard = len( changes.updated )
            await _read( client, 'inner://update' )
            await changes.wait_updated( [ 'i://1', 'i://2' ], heard )
            await client.unsubscribe_resource( 'i://1' )
            await client.unsubscribe_resource( 'i://2' )
            await client.subscribe_resource( 'i://2' )
            await client.subscribe_resource( 'i://2' )
            heard = len( changes.updated )
            await _read( client, 'inner://update' )
            await changes.wait_updated( [ 'i://2' ], heard )
            # The server behind is asked once per resource
            # followed anew (serve subscribes for the streams
            # which name them too): i://1, i://2, i://2 again.
            assert inner.count( 'resources/subscribe' ) == 3 # noqa: PLR2004
        if not _MODERN: return
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.subscribe_resource( 'i://1' )
            assert caught.value.error.code == (
                types.METHOD_NOT_FOUND )
