# SPDX-License-Identifier: Apache-2.0

''' The event store of streamable HTTP: bounded in bytes, per session,
    emptied of sessions which end; resumption within the bound.
'''


import asyncio
import json

import httpx
import pytest

import invocables

from invocables import serving

from . import mcp_support


async def big( size: int ) -> str:
    ''' Returns a text of size characters. '''
    return 'x' * size


def _produce_server( ):
    return serving.ToolServer(
        [ invocables.produce_ensemble( 'local', [ big ] ) ] )


def _parse_events( text ):
    ''' Returns ( identifier, message or None ) of each event of a stream.
    '''
    events = [ ]
    for block in text.replace( '\r\n', '\n' ).split( '\n\n' ):
        identifier, data = None, None
        for line in block.split( '\n' ):
            if line.startswith( 'id:' ): identifier = line[ 3 : ].strip( )
            if line.startswith( 'data:' ): data = line[ 5 : ].strip( )
        if identifier is None and not data: continue
        events.append( ( identifier, json.loads( data ) if data else None ) )
    return events


async def _call( http, url, headers, size, identifier = 1 ):
    ''' Calls big; returns the events of the call's stream. '''
    response = await http.post( url, headers = headers, json = {
        'jsonrpc': '2.0', 'id': identifier, 'method': 'tools/call',
        'params': { 'name': 'big', 'arguments': { 'size': size } } } )
    assert response.status_code == 200
    return _parse_events( response.text )


async def _resume( http, url, headers, last ):
    ''' Resumes a stream after an event; returns the events replayed (the
        session is deleted once a response came, so that the stream ends;
        bounded wait: a stream which never ends fails).
    '''
    chunks = [ ]

    async def read( ):
        async with http.stream(
            'GET', url, headers = { **headers, 'Last-Event-ID': last }
        ) as response:
            assert response.status_code == 200
            async for chunk in response.aiter_text( ):
                chunks.append( chunk )
                text = ''.join( chunks )
                if not text.endswith( ( '\n\n', '\r\n\r\n' ) ) or (
                    '"result"' not in text and '"error"' not in text
                ): continue
                # Another connection: this one is busy with the stream.
                async with httpx.AsyncClient( timeout = 30 ) as other:
                    await other.delete( url, headers = headers )

    await asyncio.wait_for( read( ), 20 )
    return _parse_events( ''.join( chunks ) )


async def _wait_empty( store ):
    ''' Waits (bounded: no hang) until store holds no event. '''
    for _ in range( 100 ):
        if not store.count: return
        await asyncio.sleep( 0.05 )


def test_000_defaults( ):
    ''' The default store is bounded in events and in 64 MiB. '''
    store = serving.produce_event_store( )
    assert store.maximum == serving.EVENTS_MAXIMUM_DEFAULT
    assert store.size_maximum == 64 * 1024 * 1024
    assert store.size_maximum == serving.EVENTS_SIZE_MAXIMUM_DEFAULT
    assert store.size == 0 and not store.count


@pytest.mark.asyncio
async def test_100_bound_in_bytes( ):
    ''' Sessions which each get a large result leave at most the bound in
        bytes in the store, the oldest events evicted first.
    '''
    store = serving.produce_event_store( size_maximum = 2_500_000 )
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = store ) as url,
        httpx.AsyncClient( timeout = 30 ) as http,
    ):
        for _ in range( 6 ):
            headers = await mcp_support.open_legacy_session( http, url )
            await _call( http, url, headers, 1_000_000 )
            assert store.size <= store.size_maximum
        # Each session stored three events: initialize's response, the
        # call's priming event and its response.
        assert store.size > 2_000_000 and store.count < 3 * 6


@pytest.mark.asyncio
async def test_110_closed_sessions_dropped( ):
    ''' The events of sessions which their clients delete are dropped. '''
    store = serving.produce_event_store( )
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = store ) as url,
        httpx.AsyncClient( timeout = 30 ) as http,
    ):
        for _ in range( 5 ):
            headers = await mcp_support.open_legacy_session( http, url )
            await _call( http, url, headers, 500_000 )
            assert store.size > 500_000
            await http.delete( url, headers = headers )
            await _wait_empty( store )
            assert store.size == 0 and not store.count


@pytest.mark.asyncio
async def test_120_sessions_dropped_at_stop( ):
    ''' The events of sessions open when the server stops are dropped. '''
    store = serving.produce_event_store( )
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = store ) as url,
        httpx.AsyncClient( timeout = 30 ) as http,
    ):
        for _ in range( 3 ):
            headers = await mcp_support.open_legacy_session( http, url )
            await _call( http, url, headers, 100_000 )
        assert store.size > 300_000
    await _wait_empty( store )
    assert store.size == 0 and not store.count


@pytest.mark.asyncio
async def test_200_resumption( ):
    ''' A client which resumes after an event gets the events it missed,
        within the bound.
    '''
    store = serving.produce_event_store( size_maximum = 1_000_000 )
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = store ) as url,
        httpx.AsyncClient( timeout = 30 ) as http,
    ):
        headers = await mcp_support.open_legacy_session( http, url )
        events = await _call( http, url, headers, 200_000 )
        priming, response = events[ 0 ], events[ -1 ]
        assert priming[ 1 ] is None
        replayed = await _resume( http, url, headers, priming[ 0 ] )
    messages = [ message for _, message in replayed if message ]
    assert messages[ 0 ] == response[ 1 ]
    assert response[ 0 ] in [ identifier for identifier, _ in replayed ]
    text = messages[ 0 ][ 'result' ][ 'content' ][ 0 ][ 'text' ]
    assert len( text ) == 200_000


@pytest.mark.asyncio
async def test_210_other_sessions_not_replayed( ):
    ''' A client which resumes gets the events of its own session, not
        those of another session's stream of the same request id.
    '''
    store = serving.produce_event_store( )
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = store ) as url,
        httpx.AsyncClient( timeout = 30 ) as http,
    ):
        mine = await mcp_support.open_legacy_session( http, url )
        events = await _call( http, url, mine, 10 )
        other = await mcp_support.open_legacy_session( http, url )
        await _call( http, url, other, 20 )
        replayed = await _resume( http, url, mine, events[ 0 ][ 0 ] )
    texts = [
        message[ 'result' ][ 'content' ][ 0 ][ 'text' ]
        for _, message in replayed if message and 'result' in message ]
    assert texts == [ 'x' * 10 ]


@pytest.mark.asyncio
async def test_300_evicted_replay( ):
    ''' A client which resumes after an evicted event gets an empty stream,
        and the server serves on.
    '''
    store = serving.produce_event_store( size_maximum = 1_500_000 )
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = store ) as url,
        httpx.AsyncClient( timeout = 30 ) as http,
    ):
        headers = await mcp_support.open_legacy_session( http, url )
        first = await _call( http, url, headers, 1_000_000 )
        await _call( http, url, headers, 1_000_000, identifier = 2 )
        missed = await _resume( http, url, headers, first[ 0 ][ 0 ] )
        assert not missed
        events = await _call( http, url, headers, 10, identifier = 3 )
        assert events[ -1 ][ 1 ][ 'result' ][ 'content' ][ 0 ][ 'text' ] == (
            'x' * 10 )


@pytest.mark.asyncio
async def test_310_oversized_result( ):
    ''' A result larger than the whole bound is not kept: a client which
        resumes gets an error saying so, not the result.
    '''
    store = serving.produce_event_store( size_maximum = 100_000 )
    async with (
        mcp_support.serve_in_loop(
            _produce_server( ), event_store = store ) as url,
        httpx.AsyncClient( timeout = 30 ) as http,
    ):
        headers = await mcp_support.open_legacy_session( http, url )
        events = await _call( http, url, headers, 200_000 )
        assert len( events[ -1 ][ 1 ][ 'result' ][ 'content' ][ 0 ][
            'text' ] ) == 200_000
        assert store.size < 1000
        replayed = await _resume( http, url, headers, events[ 0 ][ 0 ] )
    errors = [ message for _, message in replayed if message ]
    assert errors[ 0 ][ 'id' ] == 1
    assert errors[ 0 ][ 'error' ][ 'data' ] == {
        'reason': 'unkept', 'size': errors[ 0 ][ 'error' ][ 'data' ][
            'size' ], 'maximum': 100_000 }
    assert errors[ 0 ][ 'error' ][ 'data' ][ 'size' ] > 200_000
