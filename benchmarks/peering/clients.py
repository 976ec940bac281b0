# SPDX-License-Identifier: Apache-2.0

''' MCP clients against the same real server: calls, and idle cost.

    The server is the project's test echo server
    (``tests/test_000_invocables/servers/echo_server.py``, the ``mcp``
    SDK's ``MCPServer`` over stdio), one process per client. Clients:

    * invocables: ``invocables.mcp.produce_ensemble``, called through
      ``execute_invocations`` (validation against ``inputSchema`` included);
    * mcp: the raw SDK's ``ClientSession.call_tool``;
    * openai-agents: ``MCPServerStdio.call_tool``;
    * fastmcp: ``Client.call_tool``;
    * pydantic-ai: ``MCPToolset.direct_call_tool`` (on a FastMCP client).

    Calls: in each round, each client in turn connects, warms up, makes
    its sequential calls, and disconnects, so that no other client is
    connected while it is measured. Wall time and the client process's CPU
    time (``time.process_time``: the server's CPU does not count) per call.

    Idle: each client in a fresh interpreter connects, settles, then sleeps
    while connected; the figure is the client process's CPU time per
    second of idleness, per server. A process with nothing connected is
    measured the same way, as the floor.
'''


import asyncio
import contextlib
import functools
import sys
import time

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from . import common as _common


CLIENTS = ( 'invocables', 'mcp', 'openai-agents', 'fastmcp', 'pydantic-ai' )
_PEERS = CLIENTS[ 1 : ]
_WARM_UP = 20
_Call = Callable[ [ ], Awaitable[ Any ] ]


def _command( ) -> list[ str ]:
    return [ sys.executable, str( _common.ECHO_SERVER ) ]


@contextlib.asynccontextmanager
async def connect( client: str ) -> AsyncIterator[ _Call ]:
    ''' Connects a client to a fresh echo server; yields its echo call. '''
    command = _command( )
    arguments = { 'message': 'x' }
    async with contextlib.AsyncExitStack( ) as stack:
        match client:
            case 'invocables':
                call = await _connect_invocables( stack, command )
            case 'mcp':
                session = await _connect_raw( stack, command )
                call = functools.partial(
                    session.call_tool, 'echo', arguments )
            case 'openai-agents':
                from agents.mcp import MCPServerStdio
                server = await stack.enter_async_context( MCPServerStdio(
                    params = { 'command': command[ 0 ],
                               'args': command[ 1 : ] } ) )
                call = functools.partial(
                    server.call_tool, 'echo', arguments )
            case 'fastmcp':
                client_ = await stack.enter_async_context(
                    _produce_fastmcp_client( command ) )
                call = functools.partial(
                    client_.call_tool, 'echo', arguments )
            case 'pydantic-ai':
                from pydantic_ai.mcp import MCPToolset
                toolset = await stack.enter_async_context(
                    MCPToolset( _produce_fastmcp_client( command ) ) )
                call = functools.partial(
                    toolset.direct_call_tool, 'echo', arguments )
            case _: raise ValueError( client )
        result = await call( )
        if "'x'" not in repr( result ) and result != 'x':
            raise RuntimeError( f"Unexpected result: {result!r:.80}" )
        yield call


async def _connect_invocables(
    stack: contextlib.AsyncExitStack, command: list[ str ]
) -> _Call:
    import invocables
    import invocables.mcp
    ensemble = await stack.enter_async_context(
        invocables.mcp.produce_ensemble( 'bench', command = command ) )
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = 'echo', arguments = { 'message': 'x' } )

    async def call( ) -> Any:
        results = await invocables.execute_invocations(
            [ invocation ], [ ensemble ] )
        if results[ 0 ].error: raise RuntimeError( results[ 0 ].as_text( ) )
        return results[ 0 ].as_text( )
    return call


async def _connect_raw(
    stack: contextlib.AsyncExitStack, command: list[ str ]
) -> Any:
    import mcp
    errors = stack.enter_context(
        open( '/dev/null', 'w', encoding = 'utf-8' ) )  # noqa: SIM115
    parameters = mcp.StdioServerParameters(
        command = command[ 0 ], args = command[ 1 : ] )
    streams = await stack.enter_async_context(
        mcp.stdio_client( parameters, errlog = errors ) )
    session = await stack.enter_async_context( mcp.ClientSession( *streams ) )
    await session.initialize( )
    return session


def _produce_fastmcp_client( command: list[ str ] ) -> Any:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    return Client(
        StdioTransport( command = command[ 0 ], args = command[ 1 : ] ) )


def measure_calls( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures sequential MCP calls: wall and client CPU per call. '''
    count = 10 if settings.quick else 300
    clients = [
        client for client in CLIENTS
        if client == 'invocables' or settings.is_available( client ) ]
    walls, processors = asyncio.run(
        _sample_calls( clients, count, settings ) )
    rows: list[ _common.Row ] = [ ]
    for key, title, samples in (
        ( 'mcp-wall', 'MCP call, sequential wall', walls ),
        ( 'mcp-cpu', 'MCP call, client CPU per call', processors ),
    ):
        ours = samples.pop( 'invocables' )
        row = _common.Row(
            key = key, title = title, unit = 's',
            ours = _common.summarize( ours ),
            peers = _common.produce_cells( settings, samples, _PEERS ) )
        row.notes.append(
            f"{count} sequential echo calls per round, one echo_server.py "
            "process per client, one client connected at a time" )
        row.notes.extend(
            _common.describe_samples( name, values, 's' )
            for name, values in ( ( 'invocables', ours ), *samples.items( ) ) )
        rows.append( row )
    return rows


async def _sample_calls(
    clients: list[ str ], count: int, settings: _common.Settings
) -> tuple[ dict[ str, _common.Samples ], dict[ str, _common.Samples ] ]:
    walls: dict[ str, _common.Samples ] = { name: [ ] for name in clients }
    processors: dict[ str, _common.Samples ] = {
        name: [ ] for name in clients }
    for round_ in range( settings.rounds ):
        for client in ( clients if round_ % 2 == 0 else clients[ : : -1 ] ):
            wall = walls[ client ]
            processor = processors[ client ]
            if isinstance( wall, str ) or isinstance( processor, str ):
                continue
            try: figures = await _time_calls( client, count )
            except Exception as exception:
                walls[ client ] = processors[ client ] = (
                    _common.describe_error( exception ) )
                continue
            wall.append( figures[ 0 ] )
            processor.append( figures[ 1 ] )
    return walls, processors


async def _time_calls( client: str, count: int ) -> tuple[ float, float ]:
    async with connect( client ) as call:
        for _ in range( _WARM_UP ): await call( )
        started, consumed = time.perf_counter( ), time.process_time( )
        for _ in range( count ): await call( )
        return (
            ( time.perf_counter( ) - started ) / count,
            ( time.process_time( ) - consumed ) / count )


def measure_idle( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures client CPU while connected and idle, fresh interpreters. '''
    seconds, settle = ( 0.5, 0.2 ) if settings.quick else ( 2.0, 1.0 )
    samples: dict[ str, _common.Samples ] = { }
    for client in ( 'none', *CLIENTS ):
        if client not in ( 'none', 'invocables' ) and (
            not settings.is_available( client )
        ): continue
        try:
            samples[ client ] = _common.run_worker( [
                'idle', '--library', client,
                '--seconds', str( seconds ), '--settle', str( settle ),
                '--rounds', str( settings.rounds ) ] )
        except RuntimeError as exception:
            samples[ client ] = f"error: {exception}"
    floor = samples.pop( 'none' )
    ours = samples.pop( 'invocables' )
    row = _common.Row(
        key = 'mcp-idle',
        title = 'MCP server connected and idle, client CPU',
        unit = 'ms/s', ours = _common.summarize( ours ),
        peers = _common.produce_cells( settings, samples, _PEERS ) )
    row.notes.append(
        f"CPU ms per second idle, one server; {seconds} s per round after "
        f"{settle} s to settle; fresh interpreter per client" )
    row.notes.extend(
        _common.describe_samples( name, values, 'ms/s' )
        for name, values in (
            ( 'nothing connected (floor)', floor ), ( 'invocables', ours ),
            *samples.items( ) ) )
    return [ row ]


def work_idle(
    client: str, seconds: float, settle: float, rounds: int
) -> list[ float ]:
    ''' Connects client (or none), then samples CPU ms per idle second. '''
    async def work( ) -> list[ float ]:
        async with contextlib.AsyncExitStack( ) as stack:
            if client != 'none':
                await stack.enter_async_context( connect( client ) )
            await asyncio.sleep( settle )
            figures: list[ float ] = [ ]
            for _ in range( rounds ):
                started = time.perf_counter( )
                consumed = time.process_time( )
                await asyncio.sleep( seconds )
                elapsed = time.perf_counter( ) - started
                figures.append(
                    ( time.process_time( ) - consumed ) * 1e3 / elapsed )
            return figures
    return asyncio.run( work( ) )

