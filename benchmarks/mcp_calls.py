# SPDX-License-Identifier: Apache-2.0

''' Benchmark of MCP calls through an ensemble, against the raw SDK.

    Run with ``.venv/bin/python benchmarks/mcp_calls.py``. For each server
    (server-everything's ``echo`` over stdio, then our Python echo server),
    starts two processes of the same server: one for a raw
    ``ClientSession.call_tool`` loop, one for an ensemble. Measures, in the
    same run and interleaved over rounds:

    * 500 sequential trivial calls: raw, through the ensemble's own
      session (``ClientSession.call_tool`` over the ensemble's transport:
      what the transport costs), through the invoker directly (client-side
      validation on), through ``execute_invocations`` (one invocation per
      execution);
    * 500 concurrent calls: raw with ``asyncio.gather``, invokers with
      ``asyncio.gather``, one ``execute_invocations`` of 500 invocations.

    Prints, per case, wall time per call (median over rounds) with its ratio
    to raw (goal: at most 1.05), the ratio of the best rounds, and the
    client process's CPU time per call with its ratio (steadier than wall
    time on a busy machine: other processes do not count).

    The objects made before sampling (every library's modules and types,
    some 100,000) are frozen for the collector (``gc.freeze``). Otherwise
    500 concurrent calls, whose tasks outlive the young generations, start
    a full collection about once a sample, which walks all of them (60 to
    80 ms, over 100 µs per call) and lands on whichever case crosses the
    threshold: the concurrent ratios then measure the collector's timing,
    not the clients.
'''


import asyncio
import gc
import statistics
import sys
import time

from pathlib import Path

import mcp

import invocables
import invocables.mcp


_CALLS = 500
_ROUNDS = 7
_WARMUP = 30
_PROJECT = Path( __file__ ).resolve( ).parents[ 1 ]
_EVERYTHING = (
    _PROJECT / '.auxiliary' / 'caches' / 'npm' / 'node_modules' / '.bin'
    / 'mcp-server-everything' )
_ECHO = _PROJECT / 'tests' / 'test_000_invocables' / 'servers' / 'echo_server.py'


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


async def _time( function ):
    ''' Returns wall and client CPU seconds per call. '''
    started, consumed = time.perf_counter( ), time.process_time( )
    await function( )
    return (
        ( time.perf_counter( ) - started ) / _CALLS,
        ( time.process_time( ) - consumed ) / _CALLS )


def _produce_cases( session, ensemble ):
    invoker = ensemble.access_invoker( 'echo' )
    arguments = { 'message': 'x' }
    context = _context( )
    invocations = [
        invocables.InvocationCanister(
            identifier = f"c{index}", name = 'echo', arguments = arguments )
        for index in range( _CALLS ) ]
    nomenclature = invocables.produce_nomenclature( [ ensemble ] )

    async def raw_sequential( ):
        for _ in range( _CALLS ): await session.call_tool( 'echo', arguments )

    own = ensemble.connection

    async def session_sequential( ):
        for _ in range( _CALLS ): await own.call_tool( 'echo', arguments )

    async def invoker_sequential( ):
        for _ in range( _CALLS ): await invoker( context, arguments )

    async def engine_sequential( ):
        for invocation in invocations:
            await invocables.execute_invocations(
                ( invocation, ), nomenclature )

    async def raw_concurrent( ):
        await asyncio.gather( *(
            session.call_tool( 'echo', arguments ) for _ in range( _CALLS ) ) )

    async def invoker_concurrent( ):
        await asyncio.gather( *(
            invoker( context, arguments ) for _ in range( _CALLS ) ) )

    async def engine_concurrent( ):
        await invocables.execute_invocations(
            invocations, nomenclature, concurrency = _CALLS )

    return {
        'sequential': (
            ( 'raw', raw_sequential ),
            ( 'session', session_sequential ),
            ( 'invoker', invoker_sequential ),
            ( 'execute_invocations', engine_sequential ) ),
        'concurrent': (
            ( 'raw', raw_concurrent ),
            ( 'invoker', invoker_concurrent ),
            ( 'execute_invocations', engine_concurrent ) ),
    }


async def _measure( label, command ):
    parameters = mcp.StdioServerParameters(
        command = command[ 0 ], args = command[ 1 : ] )
    ensemble = invocables.mcp.produce_ensemble( 'bench', command = command )
    with open( '/dev/null', 'w', encoding = 'utf-8' ) as errlog:
        async with (
            mcp.stdio_client( parameters, errlog = errlog ) as streams,
            mcp.ClientSession( *streams ) as session,
            ensemble,
        ):
            await session.initialize( )
            await session.list_tools( )
            cases = _produce_cases( session, ensemble )
            await _warm_up( cases )
            gc.collect( )
            gc.freeze( )
            try: samples = await _sample( cases )
            finally: gc.unfreeze( )
    _report( label, samples )


async def _warm_up( cases ):
    for group in cases.values( ):
        for _, function in group:
            for _ in range( _WARMUP // 10 ): await function( )


async def _sample( cases ):
    samples = {
        ( mode, name ): [ ] for mode, group in cases.items( )
        for name, _ in group }
    for round_ in range( _ROUNDS ):
        for mode, group in cases.items( ):
            ordered = group if round_ % 2 == 0 else tuple( reversed( group ) )
            for name, function in ordered:
                samples[ ( mode, name ) ].append( await _time( function ) )
    return samples


def _report( label, samples ):
    print(
        f"\n{label}: {_CALLS} calls per sample, {_ROUNDS} rounds; "
        "wall: median and best; client CPU: median" )
    for mode in ( 'sequential', 'concurrent' ):
        raws = samples[ ( mode, 'raw' ) ]
        raw_wall = statistics.median( wall for wall, _ in raws )
        raw_best = min( wall for wall, _ in raws )
        raw_cpu = statistics.median( cpu for _, cpu in raws )
        for name in ( 'raw', 'session', 'invoker', 'execute_invocations' ):
            if ( mode, name ) not in samples: continue
            values = samples[ ( mode, name ) ]
            wall = statistics.median( value for value, _ in values )
            best = min( value for value, _ in values )
            cpu = statistics.median( value for _, value in values )
            print(
                f"  {mode:<10} {name:<19} "
                f"wall {wall * 1e3:6.3f} ms/call ({1 / wall:6.0f}/s) "
                f"x{wall / raw_wall:5.3f}  best x{best / raw_best:5.3f}  "
                f"cpu {cpu * 1e6:6.1f} us x{cpu / raw_cpu:5.3f}" )


async def main( ):
    ''' Measures against server-everything, then our Python server. '''
    if not _EVERYTHING.exists( ):
        sys.exit(
            "Install the npm servers first: "
            "bash .auxiliary/scripts/install-mcp-servers" )
    await _measure(
        'server-everything echo (node, stdio)',
        [ str( _EVERYTHING ), 'stdio' ] )
    await _measure(
        'echo_server.py echo (Python MCPServer, stdio)',
        [ sys.executable, str( _ECHO ) ] )


if __name__ == '__main__': asyncio.run( main( ) )
