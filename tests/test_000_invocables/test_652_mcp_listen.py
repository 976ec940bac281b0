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
from invocables.mcp import _sdk

from . import mcp_support


_MODERN = _sdk.MAJOR >= 2 # noqa: PLR2004
_WAIT = 60 # seconds: bounds which prove "does not hang"
_UPSTREAM = str(
    Path( __file__ ).parent.parent / 'data' / 'serving' / 'modules'
    / 'conformance_upstream.py' )


class _Announcements( logging.Handler ):
    ''' Tells when a server's announcement of a change was handled. '''

    def __init__( self ):
        super( ).__init__( logging.DEBUG )
        self.count = 0
        self.arrival = asyncio.Event( )
        self.loop = asyncio.get_running_loop( )

    def emit( self, record ):
        if record.getMessage( ) != (
            "MCP server 'remote' announced new tools." ): return
        self.count += 1
        self.loop.call_soon_threadsafe( self.arrival.set )


@contextlib.asynccontextmanager
async def _connect_remote( **settings ):
    ''' Serves the upstream server through serve over HTTP; yields an
        ensemble of MCP 2026-07-28 (where the SDK speaks it) of it. '''
    server = serving.ToolServer( [ invocables.mcp.produce_ensemble(
        'upstream', command = [ mcp_support.SERVERS_PYTHON, _UPSTREAM ] ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.serve_in_loop( server ) as url:
            remote = invocables.mcp.produce_ensemble(
                'remote', url = url, protocol = 'modern', **settings )
            async with remote: yield remote


def _is_modern( ensemble ):
    return _sdk.is_modern( ensemble.connection )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_tools_listed_again_on_change( ):
    ''' A tool which the upstream server adds reaches the ensemble: its
        server's change was heard (on a stream, under 2026-07-28), once. '''
    logger = logging.getLogger( 'invocables.mcp.sessions' )
    announcements = _Announcements( )
    logger.addHandler( announcements )
    level = logger.level
    logger.setLevel( logging.DEBUG )
    try:
        async with _connect_remote( ) as remote:
            assert _is_modern( remote ) is _MODERN
            before = { invoker.name for invoker in remote.survey_invokers( ) }
            await remote.invoke( 'test_trigger_tool_change', { } )
            await asyncio.wait_for( announcements.arrival.wait( ), _WAIT )
            await remote.wait_listings( )
            after = { invoker.name for invoker in remote.survey_invokers( ) }
    finally:
        logger.removeHandler( announcements )
        logger.setLevel( level )
    assert announcements.count == 1
    added = after - before
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

    server = serving.ToolServer( [ invocables.mcp.produce_ensemble(
        'upstream', command = [ mcp_support.SERVERS_PYTHON, _UPSTREAM ] ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.serve_in_loop( server ) as url:
            remote = invocables.mcp.produce_ensemble(
                'remote', url = url, protocol = 'modern' )
            remote.configure_relay( observer = observe )
            async with remote:
                if not _MODERN: # 2025-11-25: told those which listed
                    await remote.survey_prompts( )
                await remote.invoke( 'test_trigger_prompt_change', { } )
                await asyncio.wait_for( arrival.wait( ), _WAIT )
    assert changes == [
        ( 'remote', 'notifications/prompts/list_changed', None ) ]
