# SPDX-License-Identifier: Apache-2.0

''' A hostile server of MCP 2026-07-28 on the streams of
    ``subscriptions/listen`` which the client opens: one which ends each
    stream at once after one change (the pause before the next grows as
    for a stream which carried nothing), one which floods a stream with
    thousands of changes (the tools are listed again a bounded number of
    times), one which never acknowledges a stream (the session serves and
    ends all the same), one which sends changes of odd shapes and sizes.
    The server is the SDK 2.x's low-level server over stdio, written here;
    under the mcp SDK 1.x, which speaks no 2026-07-28, the session is of
    an earlier version, which the tests assert, and serves as well.
'''


import asyncio
import logging

import pytest

import invocables.mcp

from invocables.mcp import _listening, _sdk

from . import mcp_support


_MODERN = _sdk.MAJOR >= 2 # noqa: PLR2004
_WAIT = 60.0 # seconds: bounds which prove "does not hang"
_FLOOD = 3000
_SERVER = '''
import sys
import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY

MODE = sys.argv[ 1 ]
state = { 'lists': 0, 'streams': 0 }


async def list_tools( context, parameters ):
    state[ 'lists' ] += 1
    return types.ListToolsResult( tools = [ types.Tool(
        name = 'count', input_schema = { 'type': 'object' } ) ] )


async def call_tool( context, parameters ):
    text = f"{state[ 'lists' ]} {state[ 'streams' ]}"
    return types.CallToolResult(
        content = [ types.TextContent( type = 'text', text = text ) ] )


async def listen( context, parameters ):
    state[ 'streams' ] += 1
    meta = { SUBSCRIPTION_ID_META_KEY: context.request_id }
    related = context.request_id
    if MODE == 'silent': await anyio.sleep_forever( )
    await context.session.send_notification(
        types.SubscriptionsAcknowledgedNotification(
            params = types.SubscriptionsAcknowledgedNotificationParams(
                notifications = parameters.notifications, _meta = meta ) ),
        related_request_id = related )
    changed = types.ToolListChangedNotification(
        params = types.NotificationParams( _meta = meta ) )
    if MODE == 'odd': # other streams, giant meta, an update not asked for
        for notification in (
            types.ToolListChangedNotification(
                params = types.NotificationParams( _meta = {
                    SUBSCRIPTION_ID_META_KEY: related,
                    'x': 'y' * 2_000_000 } ) ),
            types.ToolListChangedNotification(
                params = types.NotificationParams( _meta = {
                    SUBSCRIPTION_ID_META_KEY: 'listen-999999' } ) ),
            types.ResourceUpdatedNotification(
                params = types.ResourceUpdatedNotificationParams(
                    uri = 'file:///' + 'z' * 1_000_000, _meta = meta ) ),
            types.PromptListChangedNotification(
                params = types.NotificationParams( _meta = meta ) ),
        ): await context.session.send_notification(
            notification, related_request_id = related )
    for _ in range( FLOOD if MODE == 'flood' else 1 ):
        await context.session.send_notification(
            changed, related_request_id = related )
    if MODE in ( 'flood', 'odd' ): await anyio.sleep_forever( )
    return types.SubscriptionsListenResult( _meta = meta )


server = Server(
    'listening', on_list_tools = list_tools, on_call_tool = call_tool,
    on_subscriptions_listen = listen )


async def main( ):
    options = server.create_initialization_options(
        notification_options = NotificationOptions( tools_changed = True ) )
    async with stdio_server( ) as ( read, write ):
        await server.run( read, write, options )


anyio.run( main )
'''.replace( 'FLOOD', str( _FLOOD ) )


class _Records( logging.Handler ):
    ''' Counts records of the loggers of sessions and listening which
        match, and tells when a count is reached. '''

    def __init__( self, text, count ):
        super( ).__init__( logging.DEBUG )
        self.text, self.count = text, count
        self.messages = [ ]
        self.reached = asyncio.Event( )
        self.loop = asyncio.get_running_loop( )

    def emit( self, record ):
        message = record.getMessage( )
        if self.text not in message: return
        self.messages.append( message )
        if len( self.messages ) >= self.count:
            self.loop.call_soon_threadsafe( self.reached.set )


class _Observation:
    ''' Context in which records of the library's MCP loggers reach a
        handler. '''

    _NAMES = ( 'invocables.mcp.sessions', 'invocables.mcp._listening' )

    def __init__( self, handler ):
        self.handler = handler
        self.loggers = [ logging.getLogger( name ) for name in self._NAMES ]
        self.levels = [ ]

    def __enter__( self ):
        self.levels = [ logger.level for logger in self.loggers ]
        for logger in self.loggers:
            logger.addHandler( self.handler )
            logger.setLevel( logging.DEBUG )
        return self.handler

    def __exit__( self, *exception ):
        for logger, level in zip( self.loggers, self.levels ):
            logger.removeHandler( self.handler )
            logger.setLevel( level )


async def _hear_changes( tmp_path, mode, count ):
    ''' Returns the counts of listings and streams and the names of the
        tools, once the server of mode has announced new tools count
        times and the tools are listed again; None (the session serving
        once listed, without streams) under a session of an earlier
        version. '''
    records = _Records( "server 'hostile' announced new tools", count )
    with _Observation( records ):
        async with _produce( tmp_path, mode ) as ensemble:
            assert _sdk.is_modern( ensemble.connection ) is _MODERN
            if not _MODERN:
                assert await _count( ensemble ) == ( 1, 0 )
                return None
            await asyncio.wait_for( records.reached.wait( ), _WAIT )
            await asyncio.wait_for( ensemble.wait_listings( ), _WAIT )
            lists, streams = await _count( ensemble )
            names = [
                invoker.name for invoker in ensemble.survey_invokers( ) ]
    return lists, streams, names


def _produce( tmp_path, mode ):
    ''' Returns an ensemble of MCP 2026-07-28 (where the SDK speaks it) of
        the hostile server in a mode. '''
    script = tmp_path / 'listening_server.py'
    script.write_text( _SERVER )
    return invocables.mcp.produce_ensemble(
        'hostile', protocol = 'modern',
        command = [ mcp_support.SERVERS_PYTHON, str( script ), mode ] )


async def _count( ensemble ):
    ''' Returns the server's listings of tools and streams opened. '''
    contents = await asyncio.wait_for(
        ensemble.invoke( 'count', { } ), _WAIT )
    lists, streams = contents[ 0 ].text.split( )
    return int( lists ), int( streams )


@pytest.mark.asyncio
async def test_100_stream_ended_at_once_paused_longer( tmp_path ):
    ''' A server which ends each stream at once after one change is
        listened to again after pauses which double up to the longest,
        as for a stream which carried nothing (they started over after
        each change: a stream and a listing a second, for ever). '''
    pauses = ( 0.01, 0.08 )
    records = _Records( "server 'probe' again in", 6 )
    async with _produce( tmp_path, 'drip' ) as ensemble:
        assert _sdk.is_modern( ensemble.connection ) is _MODERN
        if not _MODERN: # 2025-11-25 and earlier: nothing to listen to
            assert await _count( ensemble ) == ( 1, 0 )
            return
        with _Observation( records ):
            task = asyncio.create_task( _listening.listen_changes(
                ensemble.connection, 'probe', pauses ) )
            try:
                await asyncio.wait_for( records.reached.wait( ), _WAIT )
            finally:
                task.cancel( )
                await asyncio.gather( task, return_exceptions = True )
        assert ( await _count( ensemble ) )[ 1 ] >= 6 # noqa: PLR2004
    seconds = [
        float( message.split( ' in ' )[ 1 ].split( )[ 0 ] )
        for message in records.messages[ : 6 ] ]
    assert seconds == [ 0.01, 0.02, 0.04, 0.08, 0.08, 0.08 ]


@pytest.mark.asyncio
async def test_110_flood_of_changes_coalesced( tmp_path ):
    ''' Thousands of changes on one stream are heard, and the tools
        listed again a few times, not once a change. '''
    heard = await _hear_changes( tmp_path, 'flood', _FLOOD )
    if heard is None: return
    lists, streams, names = heard
    assert names == [ 'count' ]
    assert streams == 1
    assert 2 <= lists <= _FLOOD // 10 # noqa: PLR2004


@pytest.mark.asyncio
async def test_120_stream_never_acknowledged( tmp_path ):
    ''' A server which never acknowledges a stream serves its tools, and
        the session ends when asked, the stream waiting no longer. '''
    ensemble = _produce( tmp_path, 'silent' )
    await asyncio.wait_for( ensemble.connect( ), _WAIT )
    try:
        assert _sdk.is_modern( ensemble.connection ) is _MODERN
        lists, _ = await _count( ensemble )
        assert lists == 1
    finally: await asyncio.wait_for( ensemble.disconnect( ), _WAIT )


@pytest.mark.asyncio
async def test_130_odd_changes_heard_safely( tmp_path ):
    ''' Changes of megabytes of meta, of another stream, of a resource
        not asked for (a URI of a megabyte) and of prompts not listed are
        heard without harm: the stream stays open, the tools are listed
        again, the session serves. '''
    heard = await _hear_changes( tmp_path, 'odd', 2 )
    if heard is None: return
    lists, streams, _ = heard
    assert streams == 1
    assert lists >= 2 # noqa: PLR2004
