# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway: its bound of the resources it follows upstream in
    all (across sessions and streams), and an upstream server which
    refuses subscriptions (invalid request, method not found, invalid
    parameters). The upstream servers are real processes of
    ``routing_upstream.py``, which log the requests they get.
'''


import asyncio
import contextlib

from pathlib import Path
from typing import Any

import pytest

from mcp import types

import invocables

from invocables import serving
from invocables.serving import _gatewayinterest as interest

from . import mcp_support
from . import serving_support


_BOUND = 30 # seconds: proves that something comes, not how soon
_SUBSCRIBE = 'resources/subscribe'
_UNSUBSCRIBE = 'resources/unsubscribe'


def _access_interests( server: serving.ToolServer ) -> Any:
    ''' Returns the ledger of the gateway's interest in upstream
        resources (private: read by the tests only). '''
    return getattr( server, '_interests' )


def _open_legacy( server: Any, **callbacks: Any ) -> Any:
    ''' Opens client of MCP 2025-11-25 of the gateway, in memory. '''
    return mcp_support.open_memory_client(
        server.produce_server( ), mode = 'legacy', **callbacks )


async def _expect_refusal( subscription: Any ) -> str:
    ''' Returns message of the invalid parameters error which the
        subscription (awaitable) raises. '''
    with pytest.raises( Exception ) as caught: # noqa: PT011
        await subscription
    failure: Any = caught.value
    assert failure.error.code == types.INVALID_PARAMS
    return failure.error.message


@serving_support.mark_gateway_test
async def test_100_gateway_bounded( tmp_path: Path ):
    ''' Four sessions follow as many resources as the gateway may (each
        the most of a session): a resource which none follows is refused
        (invalid parameters) and not asked upstream, while one which
        another session follows is served; once one is unfollowed, a new
        one is followed upstream. A stream of ``subscriptions/listen``
        (SDK 2.x) which names a new one is refused likewise.
    '''
    held, followed = interest.HELD_MAXIMUM, interest.FOLLOWED_MAXIMUM
    assert followed % held == 0
    alpha = serving_support.RoutingUpstream(
        tmp_path, 'alpha', resources = [ ] )
    server = serving.ToolServer( [ alpha.ensemble ] )
    async with contextlib.AsyncExitStack( ) as stack:
        await stack.enter_async_context(
            invocables.connect_ensembles( server.ensembles ) )
        clients = [
            await stack.enter_async_context( _open_legacy( server ) )
            for _ in range( followed // held + 1 ) ]
        *full, last = clients
        for number, client in enumerate( full ):
            for index in range( held ):
                await client.subscribe_resource(
                    f"a://item/{number}/{index}" )
        assert alpha.count( _SUBSCRIBE ) == followed
        message = await _expect_refusal(
            last.subscribe_resource( 'a://more' ) )
        assert f"follows {followed} resources" in message
        await last.subscribe_resource( 'a://item/0/0' )
        count = _access_interests( server ).count_interest(
            'alpha', 'a://item/0/0' )
        assert count == 2 # noqa: PLR2004
        assert alpha.count( _SUBSCRIBE ) == followed
        await full[ 1 ].unsubscribe_resource( 'a://item/1/0' )
        assert alpha.count( _UNSUBSCRIBE ) == 1
        await last.subscribe_resource( 'a://more' )
        assert alpha.count( _SUBSCRIBE ) == followed + 1
        # Last: serving over HTTP disconnects the ensembles when it ends.
        await _expect_stream_refused( server, 'a://stream' )
        assert alpha.count( _SUBSCRIBE ) == followed + 1


async def _expect_stream_refused( server: Any, uri: str ) -> None:
    ''' Asserts that a stream of ``subscriptions/listen`` which names a
        resource is refused (under the SDK 1.x, every such stream is). '''
    async with mcp_support.serve_in_loop(
        server, stateless = True
    ) as url, serving_support.open_listening_client(
        url, { 'resourceSubscriptions': [ uri ] }
    ) as client:
        if client is None: return # SDK 1.x: refused
        with pytest.raises( Exception ) as caught: # noqa: PT011
            async with client.listen( resource_subscriptions = [ uri ] ):
                pass
        failure: Any = caught.value
        assert failure.error.code == types.INVALID_PARAMS
        assert 'follows' in failure.error.message


class _Updates:
    ''' URIs of the updated resources which a legacy client heard. '''

    def __init__( self ):
        self.uris: list[ str ] = [ ]
        self.arrival = asyncio.Event( )

    async def on_message( self, message: Any ) -> None:
        message = getattr( message, 'root', message )
        if not isinstance( message, types.ResourceUpdatedNotification ):
            return
        self.uris.append( str( message.params.uri ) )
        self.arrival.set( )


@serving_support.mark_gateway_test
@pytest.mark.parametrize( 'code', (
    types.INVALID_REQUEST, types.METHOD_NOT_FOUND, types.INVALID_PARAMS ) )
async def test_200_upstream_refusal( tmp_path: Path, code: int ):
    ''' An upstream server which refuses subscriptions (the error code
        given) refuses no client: the subscription succeeds, is asked
        upstream once for two sessions, and the updates which the server
        sends anyway reach the session which follows; the last
        unsubscription is asked upstream (refused too), and no interest is
        left.
    '''
    alpha = serving_support.RoutingUpstream(
        tmp_path, 'alpha', refusal = code, resources = [ 'a://one' ] )
    server = serving.ToolServer( [ alpha.ensemble ] )
    updates = _Updates( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_legacy( server ) as first, _open_legacy(
            server, message_handler = updates.on_message
        ) as second:
            await first.subscribe_resource( 'a://one' )
            await second.subscribe_resource( 'a://one' )
            assert alpha.count( _SUBSCRIBE ) == 1
            await first.read_resource( 'alpha://update' )
            await serving_support.wait_until(
                updates.arrival, lambda: 'a://one' in updates.uris, _BOUND )
            await first.unsubscribe_resource( 'a://one' )
            assert alpha.count( _UNSUBSCRIBE ) == 0
            await second.unsubscribe_resource( 'a://one' )
            assert alpha.count( _UNSUBSCRIBE ) == 1
            assert _access_interests( server ).count_interest(
                'alpha', 'a://one' ) == 0
