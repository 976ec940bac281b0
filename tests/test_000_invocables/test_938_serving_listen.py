# SPDX-License-Identifier: Apache-2.0

''' serve's streams of ``subscriptions/listen`` (MCP 2026-07-28, SEP-2575):
    a client hears of the changes it asked for (tools and prompts listed
    anew, resources updated), and only of those; under the mcp SDK 1.x,
    which knows no such request, nothing is served.
'''


import asyncio
import contextlib

from pathlib import Path

import pytest

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk
from invocables.serving import _subscriptions as subscriptions

from . import mcp_support
from . import serving_support


_UPSTREAM = str(
    Path( __file__ ).parent.parent / 'data' / 'serving' / 'modules'
    / 'conformance_upstream.py' )
_RELAY = str( mcp_support.SERVERS / 'relay_server.py' )
_MODERN = sdk.MAJOR >= 2 # noqa: PLR2004


def _produce_server( ):
    return serving.ToolServer( [
        invocables.mcp.produce_ensemble(
            'upstream', command = [ mcp_support.SERVERS_PYTHON, _UPSTREAM ] ),
        invocables.mcp.produce_ensemble(
            'relay', command = [ mcp_support.SERVERS_PYTHON, _RELAY ] ),
    ] )


@contextlib.asynccontextmanager
async def _open_client( server ):
    ''' Serves server over stateless HTTP (which watches its tools); yields a
        client of MCP 2026-07-28 of it. Under the SDK 1.x, asserts that
        ``subscriptions/listen`` is refused, and yields none.
    '''
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.serve_in_loop(
            server, stateless = True
        ) as url, serving_support.open_listening_client(
            url, { 'toolsListChanged': True }
        ) as client: yield client


async def _survey_names( client ):
    return { tool.name for tool in ( await client.list_tools( ) ).tools }


async def _receive( subscription ):
    ''' Returns the next event of a stream (none if it ended). '''
    async for event in subscription: return event
    return None


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_tools_and_prompts_heard( ):
    ''' A stream of tools hears that the tools changed when an upstream
        server adds one, and the client then lists it; a stream of prompts
        hears no change of tools, but that of prompts.
    '''
    server = _produce_server( )
    async with _open_client( server ) as client:
        if client is None: return # SDK 1.x: refused
        capabilities = client.server_capabilities
        assert capabilities.tools.list_changed is True
        assert capabilities.prompts.list_changed is True
        assert capabilities.resources.subscribe is True
        async with client.listen( tools_list_changed = True ) as tools, \
                client.listen( prompts_list_changed = True ) as prompts:
            from mcp.shared import subscriptions as events
            before = await _survey_names( client )
            await client.call_tool( 'test_trigger_tool_change', { } )
            assert await _receive( tools ) == events.ToolsListChanged( )
            added = await _survey_names( client ) - before
            assert len( added ) == 1
            assert next( iter( added ) ).startswith( 'test_added_tool_' )
            await client.call_tool( 'test_trigger_prompt_change', { } )
            # Had the change of tools reached the stream of prompts, it
            # would come first.
            assert await _receive( prompts ) == events.PromptsListChanged( )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_110_resources_heard_by_uri( ):
    ''' A stream of one resource hears its updates, not those of other
        resources; a stream of the list of resources hears its changes.
    '''
    server = _produce_server( )
    async with _open_client( server ) as client:
        if client is None: return # SDK 1.x: refused
        async with client.listen(
            resource_subscriptions = [ 'test://relay/one' ]
        ) as updates, client.listen(
            resources_list_changed = True
        ) as lists:
            from mcp.shared import subscriptions as events
            await client.call_tool( 'touch', { 'uri': 'test://other' } )
            await client.call_tool( 'touch', { 'uri': 'test://relay/one' } )
            assert await _receive( updates ) == events.ResourceUpdated(
                uri = 'test://relay/one' )
            await client.call_tool( 'renew', { } )
            assert await _receive( lists ) == events.ResourcesListChanged( )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_120_streams_end_with_serving( ):
    ''' When the server stops watching (it stops serving), its open
        streams end gracefully: the client's loop ends, nothing is lost.
    '''
    server = _produce_server( )
    async with _open_client( server ) as client:
        if client is None: return # SDK 1.x: refused
        async with client.listen( tools_list_changed = True ) as tools:
            waiting = asyncio.create_task( _receive( tools ) )
            server.subscriptions.close( )
            assert await waiting is None


@pytest.mark.asyncio
@pytest.mark.slow
async def test_130_resources_named_bounded( ):
    ''' A stream which names more resources than the bound is refused
        (invalid parameters), saying so; one which names as many is
        served.
    '''
    server = _produce_server( )
    bound = subscriptions.RESOURCES_MAXIMUM
    async with _open_client( server ) as client:
        if client is None: return # SDK 1.x: refused
        from mcp.shared.exceptions import MCPError
        uris = [ f"test://item/{index}" for index in range( bound + 1 ) ]
        with pytest.raises( MCPError, match = 'resources at most' ) as caught:
            async with client.listen( resource_subscriptions = uris ): pass
        assert caught.value.error.code == -32602 # noqa: PLR2004
        async with client.listen(
            resource_subscriptions = uris[ : bound ]
        ) as stream:
            assert stream.honored.resource_subscriptions == uris[ : bound ]


@pytest.mark.asyncio
async def test_200_handler_by_sdk( ):
    ''' With the mcp SDK 2.x, the server has a handler of
        ``subscriptions/listen`` which the SDK's capabilities see; with
        1.x, none, and publishing a change does nothing.
    '''
    server = serving.ToolServer( [ ] )
    handlers = server.subscriptions.produce_handlers( )
    await server.subscriptions.publish( 'notifications/tools/list_changed' )
    await server.subscriptions.publish( 'notifications/message' )
    if not _MODERN:
        assert handlers == { }
        return
    assert set( handlers ) == { 'on_subscriptions_listen' }
    capabilities = server.produce_server( ).get_capabilities(
        protocol_version = mcp_support.VERSION_MODERN )
    assert capabilities.tools.list_changed is True
    assert subscriptions.STREAMS_MAXIMUM >= 1
