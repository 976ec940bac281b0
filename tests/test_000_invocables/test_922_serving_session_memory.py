# SPDX-License-Identifier: Apache-2.0

''' The memory of idle sessions of streamable HTTP: a session which got a
    large result and went idle does not keep it (the SDK's transport holds
    the last message of a session until the next one; the server pings the
    session after a large response, so that it holds the small answer).

    Memory is measured with tracemalloc, in process (the server runs in
    the test's loop on 127.0.0.1): what is still allocated, once collected,
    after sessions went idle, against a generous bound far below the size
    of their results.
'''


import contextlib
import gc
import tracemalloc

import httpx
import pytest

from mcp import ClientSession

import invocables

from invocables import serving
from invocables.mcp import _http as sdk_http

from . import mcp_support


_SESSIONS = 20
_SIZE = 1_000_000
_TOKEN = 'tok-922'
_open = mcp_support.open_legacy_session


async def big( size: int ) -> str:
    ''' Returns a text of size characters. '''
    return 'x' * size


def _produce_server( ):
    return serving.ToolServer(
        [ invocables.produce_ensemble( 'local', [ big ] ) ] )


@contextlib.contextmanager
def _trace_memory( ):
    ''' Traces allocations; yields a function which returns the bytes
        allocated since the start and still alive, once collected (only
        those allocated by lines of a file, if one is given).
    '''
    tracemalloc.start( )
    gc.collect( )
    start = tracemalloc.get_traced_memory( )[ 0 ]

    def measure( origin = None ):
        gc.collect( )
        if origin is None:
            return tracemalloc.get_traced_memory( )[ 0 ] - start
        snapshot = tracemalloc.take_snapshot( ).filter_traces(
            ( tracemalloc.Filter( True, origin ), ) )
        return sum(
            statistic.size for statistic in snapshot.statistics( 'filename' ) )

    try: yield measure
    finally: tracemalloc.stop( )


async def _call( http, url, headers, size, identifier = 1 ):
    ''' Calls big in a session; checks the size of its text. '''
    response = await http.post( url, headers = headers, json = {
        'jsonrpc': '2.0', 'id': identifier, 'method': 'tools/call',
        'params': { 'name': 'big', 'arguments': { 'size': size } } } )
    assert response.status_code == 200
    assert len( response.text ) > size
    assert '"isError":false' in response.text.replace( ' ', '' )


async def _open_client( stack, http, url ):
    ''' Opens a session of the SDK's client, closed with stack. '''
    streams = await stack.enter_async_context(
        sdk_http.open_streamable_http( url, http, 4 * _SIZE ) )
    session = await stack.enter_async_context( ClientSession( *streams ) )
    await session.initialize( )
    return session


async def _measure_sessions( url, count, headers = None ):
    ''' Opens sessions which each get a large result and stay open;
        returns the bytes still allocated once they are idle.
    '''
    async with httpx.AsyncClient( timeout = 60, headers = headers ) as http:
        # Pays the costs of the first session (caches, schemas) apart.
        await _call( http, url, await _open( http, url ), 10 )
        with _trace_memory( ) as measure:
            for _ in range( count ):
                await _call( http, url, await _open( http, url ), _SIZE )
            return measure( )


@pytest.mark.asyncio
async def test_100_idle_sessions_release_results( ):
    ''' Without an event store, idle sessions which each got 1 MB keep
        far less than 1 MB each.
    '''
    async with mcp_support.serve_in_loop(
        _produce_server( ), event_store = None
    ) as url: retained = await _measure_sessions( url, _SESSIONS )
    assert retained < _SESSIONS * _SIZE / 4


@pytest.mark.asyncio
async def test_110_idle_sessions_within_store_bound( ):
    ''' With the default event store, idle sessions which each got 1 MB
        keep little more than the bound of the store in bytes.
    '''
    store = serving.produce_event_store( size_maximum = 2 * _SIZE )
    async with mcp_support.serve_in_loop(
        _produce_server( ), event_store = store
    ) as url: retained = await _measure_sessions( url, _SESSIONS )
    assert store.size <= store.size_maximum
    assert retained < store.size_maximum + _SESSIONS * _SIZE / 4


@pytest.mark.asyncio
async def test_120_idle_sessions_with_token( ):
    ''' With a token, idle sessions which each got 1 MB keep far less
        than 1 MB each (the server's ping carries the client's token).
    '''
    async with mcp_support.serve_in_loop(
        _produce_server( ), event_store = None, token = _TOKEN
    ) as url:
        retained = await _measure_sessions(
            url, _SESSIONS, { 'Authorization': f"Bearer {_TOKEN}" } )
    assert retained < _SESSIONS * _SIZE / 4


@pytest.mark.asyncio
async def test_200_client_sessions_release_results( ):
    ''' Sessions of the SDK's client (its stream of notifications open)
        which each got 1 MB and stay open do not keep the results which
        the tool made; each session still serves large and small results.

        The client keeps a copy of the last message of each of its
        sessions (in its dispatcher, as the server's transport did): what
        is measured is what the tool allocated (here) and is still alive.
    '''
    count = _SESSIONS // 2
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = None ) as url,
        httpx.AsyncClient( timeout = 60 ) as http,
        contextlib.AsyncExitStack( ) as stack,
    ):
        # Pays the costs of the first session (imports, caches) apart.
        session = await _open_client( stack, http, url )
        await session.call_tool( 'big', { 'size': 10 } )
        await session.call_tool( 'big', { 'size': 10 } )
        with _trace_memory( ) as measure:
            for _ in range( count ):
                session = await _open_client( stack, http, url )
                # The client lists the tools after its first call: the
                # list would be the last message.
                await session.call_tool( 'big', { 'size': 10 } )
                result = await session.call_tool( 'big', { 'size': _SIZE } )
                assert len( result.content[ 0 ].text ) == _SIZE
                del result
            retained = measure( __file__ )
        for size in ( _SIZE, 10 ):
            result = await session.call_tool( 'big', { 'size': size } )
            assert result.content[ 0 ].text == 'x' * size
    assert retained < count * _SIZE / 4


@pytest.mark.asyncio
async def test_300_session_serves_on( ):
    ''' A session whose large response was released answers further
        calls, large and small, in full.
    '''
    async with (
        mcp_support.serve_in_loop( _produce_server( ) ) as url,
        httpx.AsyncClient( timeout = 60 ) as http,
    ):
        headers = await _open( http, url )
        for identifier, size in enumerate( ( _SIZE, _SIZE, 10 ), 1 ):
            await _call( http, url, headers, size, identifier )
