# SPDX-License-Identifier: Apache-2.0

''' Changes of a server heard under MCP 2026-07-28, which sends them only
    on streams of ``subscriptions/listen``: an ensemble of that version
    (``protocol = 'modern'``) lists its tools again when the server's
    change, and tells its observer of new prompts, as under earlier
    versions. The server is ``serve`` (HTTP), whose upstream server adds a
    tool or a prompt on request. Under the mcp SDK 1.x, which speaks no
    2026-07-28, the session is of the earlier version and its notifications
    do the same, which the tests assert too.
'''


import asyncio
import contextlib
import logging

from pathlib import Path

import pytest

import invocables
import invocables.mcp

from invocables import serving
from invocables.mcp import _listening as listening
from invocables.mcp import _sdk
from invocables.serving import _subscriptions as subscriptions

from . import mcp_support


_MODERN = _sdk.MAJOR >= 2 # noqa: PLR2004
_WAIT = 60 # seconds: bounds which prove "does not hang"
_UPSTREAM = str(
    Path( __file__ ).parent.parent / 'data' / 'serving' / 'modules'
    / 'conformance_upstream.py' )


class _Announcements( logging.Handler ):
    ''' Tells when the ensemble ``remote`` listens to its server's changes
        (under 2026-07-28), and when a change was handled. '''

    def __init__( self ):
        super( ).__init__( logging.DEBUG )
        self.count = 0
        self.arrival = asyncio.Event( )
        self.listening = asyncio.Event( )
        self.loop = asyncio.get_running_loop( )

    def emit( self, record ):
        message = record.getMessage( )
        if message == "MCP server 'remote' announced new tools.":
            self.count += 1
            self.loop.call_soon_threadsafe( self.arrival.set )
        elif message == (
            "Listening to the changes of MCP server 'remote'."
        ): self.loop.call_soon_threadsafe( self.listening.set )


@contextlib.asynccontextmanager
async def _connect_remote( before = None, observer = None ):
    ''' Serves the upstream server through serve over HTTP; yields an
        ensemble of MCP 2026-07-28 (where the SDK speaks it) of it, which
        connects once before (a context of the URL), if given, is in; its
        observer, if given, hears what its server announces. '''
    server = serving.ToolServer( [ invocables.mcp.produce_ensemble(
        'upstream', command = [ mcp_support.SERVERS_PYTHON, _UPSTREAM ] ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.serve_in_loop( server ) as url:
            remote = invocables.mcp.produce_ensemble(
                'remote', url = url, protocol = 'modern' )
            if observer is not None:
                remote.configure_relay( observer = observer )
            async with contextlib.AsyncExitStack( ) as stack:
                if before is not None:
                    await stack.enter_async_context( before( url ) )
                await remote.connect( )
            try: yield remote
            finally: await remote.disconnect( )


def _is_modern( ensemble ):
    return _sdk.is_modern( ensemble.connection )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_tools_listed_again_on_change( ):
    ''' A tool which the upstream server adds reaches the ensemble: its
        server's change was heard (on a stream, under 2026-07-28), once. '''
    await _verify_tools_heard( )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_120_busy_server_listened_to_again( monkeypatch ):
    ''' A server which cannot open one more stream (it holds as many as
        it may) is asked again after a pause: once a stream is free, the
        ensemble hears its changes. '''
    monkeypatch.setattr( subscriptions, 'STREAMS_MAXIMUM', 1 )
    monkeypatch.setattr( listening, 'PAUSE_INITIAL', 0.1 )

    @contextlib.asynccontextmanager
    async def occupy( url ):
        ''' Holds the one stream while the ensemble connects. '''
        if not _MODERN:
            yield
            return
        import mcp
        async with mcp.Client( url, mode = 'auto' ) as client:
            async with client.listen( tools_list_changed = True ): yield

    await _verify_tools_heard( occupy )


async def _verify_tools_heard( before = None ):
    ''' Asserts that the ensemble lists a tool which the upstream server
        adds, having heard the change once (under 2026-07-28, once it
        listens). '''
    loggers = [ logging.getLogger( name ) for name in (
        'invocables.mcp.sessions', 'invocables.mcp._listening' ) ]
    announcements = _Announcements( )
    levels = [ logger.level for logger in loggers ]
    for logger in loggers:
        logger.addHandler( announcements )
        logger.setLevel( logging.DEBUG )
    try:
        async with _connect_remote( before ) as remote:
            assert _is_modern( remote ) is _MODERN
            if _MODERN: # a change before the stream opens is not heard
                await asyncio.wait_for(
                    announcements.listening.wait( ), _WAIT )
            known = { invoker.name for invoker in remote.survey_invokers( ) }
            await remote.invoke( 'test_trigger_tool_change', { } )
            await asyncio.wait_for( announcements.arrival.wait( ), _WAIT )
            await remote.wait_listings( )
            after = { invoker.name for invoker in remote.survey_invokers( ) }
    finally:
        for logger, level in zip( loggers, levels ):
            logger.removeHandler( announcements )
            logger.setLevel( level )
    assert announcements.count == 1
    added = after - known
    assert len( added ) == 1
    assert next( iter( added ) ).startswith( 'test_added_tool_' )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_110_prompt_change_reaches_observer( ):
    ''' A prompt which the upstream server adds is announced to the
        ensemble's observer (a gateway's, for instance). '''
    changes = [ ]
    arrival = asyncio.Event( )

    async def observe( ensemble, method, uri ):
        changes.append( ( ensemble, method, uri ) )
        arrival.set( )

    async with _connect_remote( observer = observe ) as remote:
        if not _MODERN: # 2025-11-25: told those which listed
            await remote.survey_prompts( )
        await remote.invoke( 'test_trigger_prompt_change', { } )
        await asyncio.wait_for( arrival.wait( ), _WAIT )
    assert changes == [
        ( 'remote', 'notifications/prompts/list_changed', None ) ]
