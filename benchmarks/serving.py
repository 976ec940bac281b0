# SPDX-License-Identifier: Apache-2.0

''' Benchmarks of serving and telemetry, as ratios measured in one run.

    Run with ``python benchmarks/serving.py`` (``--quick`` for a smoke
    run). Prints:

    * one ``echo`` call (an async function, which both run inline) over
      stdio through ``invocables serve`` (a local
      tool served by :py:class:`invocables.serving.ToolServer`) against
      the same tool on a plain ``mcp`` SDK ``MCPServer``, both as child
      processes, sequential calls on one session, rounds alternating
      (goal: at most 1.1x);
    * throughput of ``invocables serve --http --stateless`` with 1 and 2
      workers, from 8 concurrent client sessions;
    * ``execute_invocations`` of one trivial local tool with
      ``opentelemetry-api`` installed and no SDK configured (telemetry
      on, every span a no-op), against telemetry disabled (goal: at most
      1.05x).
'''


import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from pathlib import Path


_ROOT = Path( __file__ ).resolve( ).parents[ 1 ]


async def echo( text: str ) -> str:
    ''' Returns the text. '''
    return text


def serve_plain( ) -> None:
    ''' Child: plain mcp SDK server with the echo tool, over stdio. '''
    from mcp.server.mcpserver import MCPServer
    server = MCPServer( 'plain' )
    server.tool( structured_output = False )( echo )
    server.run( )


def serve_invocables( ) -> None:
    ''' Child: the echo tool served by invocables, over stdio. '''
    import invocables
    from invocables import serving
    ensemble = invocables.produce_ensemble( 'bench', [ echo ] )
    asyncio.run( serving.serve_stdio( serving.ToolServer( [ ensemble ] ) ) )


async def _time_stdio( mode: str, count: int ) -> list[ float ]:
    from mcp import ClientSession, StdioServerParameters, stdio_client
    parameters = StdioServerParameters(
        command = sys.executable, args = [ __file__, mode ],
        env = { **os.environ, 'PYTHONPATH': str( _ROOT / 'sources' ) } )
    samples: list[ float ] = [ ]
    with open( os.devnull, 'w' ) as errlog:
        async with (
            stdio_client( parameters, errlog = errlog ) as streams,
            ClientSession( *streams ) as session,
        ):
            await session.initialize( )
            await session.list_tools( )
            for _ in range( 30 ): # warm-up
                await session.call_tool( 'echo', { 'text': 'hi' } )
            for _ in range( count ):
                started = time.perf_counter( )
                await session.call_tool( 'echo', { 'text': 'hi' } )
                samples.append( time.perf_counter( ) - started )
    return samples


async def measure_stdio( rounds: int, count: int ) -> tuple[ float, float ]:
    ''' Returns median seconds per call: plain server, invocables. '''
    plains: list[ float ] = [ ]
    serveds: list[ float ] = [ ]
    for _ in range( rounds ):
        plains.append( statistics.median(
            await _time_stdio( '--serve-plain', count ) ) )
        serveds.append( statistics.median(
            await _time_stdio( '--serve-invocables', count ) ) )
    return statistics.median( plains ), statistics.median( serveds )


def _select_port( ) -> int:
    with socket.socket( ) as probe:
        probe.bind( ( '127.0.0.1', 0 ) )
        return probe.getsockname( )[ 1 ]


def _write_configuration( folder: Path ) -> Path:
    ( folder / 'bench_tools.py' ).write_text(
        "async def echo( context, arguments ):\n"
        "    return arguments[ 'text' ]\n", encoding = 'utf-8' )
    ( folder / 'echo.toml' ).write_text(
        "[invoker]\nname = 'echo'\nimplementation = 'bench_tools:echo'\n"
        "[arguments]\ntype = 'object'\nrequired = [ 'text' ]\n"
        "[arguments.properties.text]\ntype = 'string'\n",
        encoding = 'utf-8' )
    ( folder / 'bench.toml' ).write_text(
        "[ensemble]\nname = 'bench'\n[[invokers]]\nsource = 'echo.toml'\n",
        encoding = 'utf-8' )
    configuration = folder / 'invocables.toml'
    configuration.write_text(
        "[[ensembles]]\nsource = 'bench.toml'\n", encoding = 'utf-8' )
    return configuration


async def _hammer( url: str, sessions: int, count: int ) -> float:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def run( ) -> None:
        async with (
            streamable_http_client( url ) as streams,
            ClientSession( *streams[ : 2 ] ) as session,
        ):
            await session.initialize( )
            for _ in range( count ):
                await session.call_tool( 'echo', { 'text': 'hi' } )

    started = time.perf_counter( )
    await asyncio.gather( *( run( ) for _ in range( sessions ) ) )
    return sessions * count / ( time.perf_counter( ) - started )


def measure_http( workers: int, sessions: int, count: int ) -> float:
    ''' Returns calls per second of stateless HTTP with workers. '''
    with tempfile.TemporaryDirectory( ) as folder:
        configuration = _write_configuration( Path( folder ) )
        port = _select_port( )
        environment = {
            **os.environ,
            'PYTHONPATH': os.pathsep.join( (
                folder, str( _ROOT / 'sources' ) ) ) }
        process = subprocess.Popen(
            [ sys.executable, '-m', 'invocables', 'serve',
              '--configuration', str( configuration ), '--http',
              '--stateless', '--workers', str( workers ),
              '--port', str( port ) ],
            env = environment, start_new_session = True,
            stdout = subprocess.DEVNULL, stderr = subprocess.DEVNULL )
        try:
            _wait_for_port( port )
            url = f"http://127.0.0.1:{port}/mcp"
            asyncio.run( _hammer( url, sessions, 10 ) ) # warm-up
            return asyncio.run( _hammer( url, sessions, count ) )
        finally:
            os.killpg( process.pid, signal.SIGTERM )
            process.wait( timeout = 30 )


def _wait_for_port( port: int ) -> None:
    deadline = time.monotonic( ) + 60
    while time.monotonic( ) < deadline:
        with socket.socket( ) as probe:
            if probe.connect_ex( ( '127.0.0.1', port ) ) == 0: return
        time.sleep( 0.05 )
    raise RuntimeError( f"Server did not open port {port}." )


async def measure_telemetry(
    rounds: int, count: int
) -> tuple[ float, float ]:
    ''' Returns seconds per execution: telemetry off, telemetry on. '''
    import invocables
    from invocables.telemetry import Settings, configure_telemetry
    ensemble = invocables.produce_ensemble( 'bench', [ echo ] )
    invocation = invocables.InvocationCanister(
        identifier = 'a', name = 'echo', arguments = { 'text': 'hi' } )

    async def run( ) -> float:
        for _ in range( 200 ): # warm-up
            await invocables.execute_invocations( [ invocation ], [ ensemble ] )
        started = time.perf_counter( )
        for _ in range( count ):
            await invocables.execute_invocations( [ invocation ], [ ensemble ] )
        return ( time.perf_counter( ) - started ) / count

    offs: list[ float ] = [ ]
    ons: list[ float ] = [ ]
    for _ in range( rounds ):
        configure_telemetry( Settings( enabled = False ) )
        offs.append( await run( ) )
        configure_telemetry( Settings( ) )
        ons.append( await run( ) )
    return statistics.median( offs ), statistics.median( ons )


def main( ) -> None:
    ''' Runs every measure; prints figures and ratios. '''
    quick = '--quick' in sys.argv
    rounds = 1 if quick else 5
    print( f"load average (1, 5, 15 min): {os.getloadavg( )}" )
    from invocables import telemetry
    print( f"opentelemetry-api installed: {telemetry.is_available( )}" )
    off, on = asyncio.run( measure_telemetry(
        rounds, 500 if quick else 5000 ) )
    print(
        f"execute_invocations, telemetry off: {off * 1e6:.1f} us; "
        f"on, no SDK: {on * 1e6:.1f} us; ratio {on / off:.3f}" )
    plain, served = asyncio.run( measure_stdio(
        rounds, 100 if quick else 500 ) )
    print(
        f"stdio call, plain MCPServer: {plain * 1e3:.3f} ms; "
        f"invocables serve: {served * 1e3:.3f} ms; "
        f"ratio {served / plain:.3f}" )
    count = 20 if quick else 100
    one = measure_http( 1, 8, count )
    two = measure_http( 2, 8, count )
    print(
        f"stateless HTTP, 8 sessions: 1 worker {one:.0f} calls/s; "
        f"2 workers {two:.0f} calls/s; ratio {two / one:.2f}" )
    print( f"load average (1, 5, 15 min): {os.getloadavg( )}" )


if __name__ == '__main__':
    if sys.argv[ 1 : ] == [ '--serve-plain' ]: serve_plain( )
    elif sys.argv[ 1 : ] == [ '--serve-invocables' ]: serve_invocables( )
    else: main( )
