# SPDX-License-Identifier: Apache-2.0

''' Ensembles served as one MCP server, seen by the official mcp client. '''


import asyncio
import base64
import contextlib
import os
import signal

import pytest

import invocables

from invocables.toolsets import policies
from invocables import serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


MCPError = sdk.Error


class _View:
    ''' SDK 1.x model, read by the snake_case names of SDK 2.x. '''

    def __init__( self, model ):
        self._model = model

    def __getattr__( self, name ):
        return _view( sdk.access_field( self._model, name ) )


def _view( value ):
    if isinstance( value, list ): return [ _view( item ) for item in value ]
    if hasattr( type( value ), 'model_fields' ): return _View( value )
    return value


class _ClientLegacy:
    ''' The in-memory client of SDK 2.x, over the memory streams of 1.x. '''

    def __init__( self, session ):
        self.session = session

    async def call_tool( self, name, arguments, progress_callback = None ):
        # As the 2.x client, tells the server of a cancellation.
        return _view( await sdk.call_tool(
            self.session, name, arguments, None, progress_callback ) )

    async def list_tools( self ):
        return _view( await self.session.list_tools( ) )


@contextlib.asynccontextmanager
async def _connect_legacy( server, message_handler = None, mode = None ):
    from mcp.shared.memory import create_connected_server_and_client_session

    async def handle( message ):
        if message_handler is not None:
            await message_handler( sdk.access_message( message ) )

    async with create_connected_server_and_client_session(
        server, message_handler = handle
    ) as session: yield _ClientLegacy( session )


if sdk.MAJOR >= 2: from mcp import Client
else: Client = _connect_legacy


_PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


async def add( a: int, b: int ) -> int:
    ''' Adds two integers. '''
    return a + b


def _produce_local( ):
    ran: list[ str ] = [ ]
    cancelled = asyncio.Event( )
    started = asyncio.Event( )

    async def wait( seconds: float ) -> str:
        ''' Waits, then answers. '''
        started.set( )
        try: await asyncio.sleep( seconds )
        except asyncio.CancelledError:
            cancelled.set( )
            raise
        return 'waited'

    def remove( path: str ) -> str:
        ''' Removes a file (pretends to). '''
        ran.append( path )
        return f"removed {path}"

    first = invocables.produce_ensemble( 'first', [
        add, wait,
        invocables.produce_invoker(
            remove, annotations = { 'destructiveHint': True } ) ] )
    second = invocables.produce_ensemble( 'second', [
        invocables.produce_invoker(
            add, annotations = { 'read_only': True } ) ] )
    return [ first, second ], ran, started, cancelled


@pytest.mark.asyncio
async def test_100_names_schemas_annotations( ):
    ''' Colliding names are scoped; schemas and annotations pass through. '''
    ensembles, _, _, _ = _produce_local( )
    server = serving.ToolServer( ensembles )
    async with invocables.connect_ensembles( ensembles ):
        async with Client( server.produce_server( ) ) as client:
            tools = { tool.name: tool for tool in (
                await client.list_tools( ) ).tools }
            assert set( tools ) == {
                'first__add', 'second__add', 'wait', 'remove' }
            add_ = tools[ 'second__add' ]
            assert add_.description == 'Adds two integers.'
            assert add_.input_schema[ 'required' ] == [ 'a', 'b' ]
            assert add_.annotations.read_only_hint is True
            assert tools[ 'remove' ].annotations.destructive_hint is True
            result = await client.call_tool(
                'first__add', { 'a': 2, 'b': 3 } )
            assert not result.is_error
            assert result.content[ 0 ].text == '5'


@pytest.mark.asyncio
async def test_110_unknown_and_invalid( ):
    ''' Unknown tools are protocol errors; invalid arguments never run. '''
    ensembles, ran, _, _ = _produce_local( )
    server = serving.ToolServer( ensembles )
    async with invocables.connect_ensembles( ensembles ):
        async with Client( server.produce_server( ) ) as client:
            with pytest.raises( MCPError ) as caught:
                await client.call_tool( 'nothing', { } )
            assert caught.value.error.code == -32602
            assert 'nothing' in caught.value.error.message
            result = await client.call_tool( 'remove', { 'path': 3 } )
            assert result.is_error
            assert 'path' in result.content[ 0 ].text
            result = await client.call_tool( 'remove', { } )
            assert result.is_error
    assert ran == [ ]


@pytest.mark.asyncio
async def test_120_cancellation( ):
    ''' A client which gives up cancels the running tool. '''
    ensembles, _, started, cancelled = _produce_local( )
    server = serving.ToolServer( ensembles )
    async with invocables.connect_ensembles( ensembles ):
        async with Client( server.produce_server( ) ) as client:
            call = asyncio.ensure_future(
                client.call_tool( 'wait', { 'seconds': 60 } ) )
            await asyncio.wait_for( started.wait( ), 10 )
            call.cancel( )
            await asyncio.wait_for( cancelled.wait( ), 10 )
            with pytest.raises( asyncio.CancelledError ): await call
            result = await client.call_tool(
                'second__add', { 'a': 1, 'b': 1 } )
            assert result.content[ 0 ].text == '2'


@pytest.mark.asyncio
async def test_130_policy( ):
    ''' Denied and asking rules refuse the call; the tool never runs. '''
    ensembles, ran, _, _ = _produce_local( )
    server = serving.ToolServer(
        ensembles, policy = policies.POLICY_CAUTIOUS )
    async with invocables.connect_ensembles( ensembles ):
        async with Client( server.produce_server( ) ) as client:
            result = await client.call_tool( 'remove', { 'path': 'x' } )
            assert result.is_error
            assert 'ask before destructive tools' in result.content[ 0 ].text

            async def approve( request ):
                return True

            approving = serving.ToolServer(
                ensembles,
                policy = policies.POLICY_CAUTIOUS.with_approver( approve ) )
            async with Client( approving.produce_server( ) ) as client_:
                result = await client_.call_tool( 'remove', { 'path': 'x' } )
                assert not result.is_error
    assert ran == [ 'x' ]


@pytest.mark.asyncio
@pytest.mark.slow
async def test_200_everything_aggregated( ):
    ''' An upstream's images, structure and progress reach the client. '''
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    ensembles, _, _, _ = _produce_local( )
    progresses: list[ float ] = [ ]
    holder: list[ serving.ToolServer ] = [ ]

    async def relay( progress ):
        await holder[ 0 ].relay_progress( progress )

    everything = invocables.mcp.produce_ensemble(
        'everything', command = [ program, 'stdio' ], reporter = relay )
    server = serving.ToolServer( [ *ensembles, everything ] )
    holder.append( server )

    async def note( progress, total, message ):
        progresses.append( progress )

    async with invocables.connect_ensembles( server.ensembles ):
        async with Client( server.produce_server( ) ) as client:
            tools = { tool.name: tool for tool in (
                await client.list_tools( ) ).tools }
            assert 'get-tiny-image' in tools
            assert tools[ 'echo' ].annotations is not None
            result = await client.call_tool( 'get-tiny-image', { } )
            images = [
                block for block in result.content if block.type == 'image' ]
            assert base64.b64decode( images[ 0 ].data ).startswith(
                _PNG_SIGNATURE )
            result = await client.call_tool(
                'get-structured-content', { 'location': 'Chicago' } )
            assert not result.is_error
            assert set( result.structured_content ) == {
                'temperature', 'conditions', 'humidity' }
            result = await client.call_tool(
                'trigger-long-running-operation',
                { 'duration': 0.4, 'steps': 2 },
                progress_callback = note )
            assert not result.is_error
    assert progresses == [ 1, 2 ]


@pytest.mark.asyncio
@pytest.mark.slow
async def test_210_upstream_dies( ):
    ''' An upstream which dies gives an error result; the next call
        reconnects, and nothing is left running at the end.
    '''
    echo = invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ) )
    server = serving.ToolServer( [ echo ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with Client( server.produce_server( ) ) as client:
            result = await client.call_tool( 'pid', { } )
            pid = int( result.content[ 0 ].text )
            os.kill( pid, signal.SIGKILL )
            assert not mcp_support.wait_until_dead( { pid } )
            result = await client.call_tool( 'echo', { 'message': 'a' } )
            assert result.is_error
            assert 'echo' in result.content[ 0 ].text
            result = await client.call_tool( 'pid', { } )
            assert not result.is_error
            pid = int( result.content[ 0 ].text )
    assert not mcp_support.wait_until_dead( { pid } )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_300_tools_list_changed( ):
    ''' A change of an upstream's tools reaches the client as
        tools/list_changed; the new tool is then listed.
    '''
    mcp_types = sdk.types
    echo = invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ) )
    server = serving.ToolServer( [ echo ] )
    changed = asyncio.Event( )

    async def handle( message ):
        if isinstance( message, mcp_types.ToolListChangedNotification ):
            changed.set( )

    async with invocables.connect_ensembles( server.ensembles ):
        watcher = asyncio.ensure_future( server.watch_tools( 0.05 ) )
        try:
            # Protocol 2026-07-28 delivers changes only to listeners
            # (subscriptions/listen), which are not served: the handshake
            # of 2025-11-25 gets the notification.
            async with Client(
                server.produce_server( ), message_handler = handle,
                mode = 'legacy',
            ) as client:
                names = { tool.name for tool in (
                    await client.list_tools( ) ).tools }
                assert 'fresh' not in names
                await client.call_tool( 'add_tool', { 'name': 'fresh' } )
                await asyncio.wait_for( changed.wait( ), 10 )
                names = { tool.name for tool in (
                    await client.list_tools( ) ).tools }
                assert 'fresh' in names
        finally:
            watcher.cancel( )
            await asyncio.gather( watcher, return_exceptions = True )


def _await_file( path, timeout = 20.0 ):
    ''' Waits until a file exists (written by another process). '''
    import time
    deadline = time.monotonic( ) + timeout
    while not path.exists( ):
        if time.monotonic( ) > deadline: return False
        time.sleep( 0.02 )
    return True


@pytest.mark.asyncio
@pytest.mark.slow
async def test_220_cancellation_forwarded( tmp_path ):
    ''' A client which cancels a call cancels the upstream server's call. '''
    upstream = invocables.mcp.produce_ensemble(
        'upstream', command = mcp_support.produce_server_command(
            'cancel_server.py' ) )
    server = serving.ToolServer( [ upstream ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with Client( server.produce_server( ) ) as client:
            call = asyncio.ensure_future(
                client.call_tool( 'block', { 'folder': str( tmp_path ) } ) )
            assert await asyncio.to_thread(
                _await_file, tmp_path / 'started' )
            call.cancel( )
            assert await asyncio.to_thread(
                _await_file, tmp_path / 'cancelled' )
            with pytest.raises( asyncio.CancelledError ): await call
