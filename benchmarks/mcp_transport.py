# SPDX-License-Identifier: Apache-2.0

''' Benchmark of the stdio transport of MCP ensembles: large results,
    memory under the result limit, and a killed server.

    Run with ``.venv/bin/python benchmarks/mcp_transport.py``. Measures, in
    the same run:

    * large results (1, 10, 100 MB of text from the hand-written hostile
      server): seconds through the ensemble, against reading the same
      number of bytes from the pipe of a running child with no parsing at
      all (the physical limit on this machine), as a ratio; seconds per MB show
      whether reading is linear. The SDK's own ``stdio_client`` reads the
      1 and 10 MB results too, for comparison (it is quadratic: 100 MB
      would take about a minute).
    * memory: in a fresh process, the growth of the peak resident set
      (``VmHWM`` of procfs: Linux only) while a server sends 1 GiB under
      the default result limit (32 MiB), as a ratio to the limit; and
      while it sends 64 MiB with no limit, as a ratio to the answer.
    * a killed server: milliseconds from ``SIGKILL`` to the
      ``ConnectionFailure`` which a pending call raises, against the SDK's
      own ``ClientSession`` (its ``MCPError`` "Connection closed"), as a
      ratio; medians over rounds.
'''


import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time

from pathlib import Path

import anyio
import mcp

import invocables
import invocables.mcp


_MEGABYTE = 1000 * 1000
_MEBIBYTE = 1 << 20
_ROUNDS_KILL = 7
_ROUNDS_SIZE = 3
_PROJECT = Path( __file__ ).resolve( ).parents[ 1 ]
_SERVERS = _PROJECT / 'tests' / 'test_000_invocables' / 'servers'
_ECHO = [ sys.executable, str( _SERVERS / 'echo_server.py' ) ]
_HOSTILE = [ sys.executable, str( _SERVERS / 'hostile_server.py' ) ]
_PIPE = (
    'import sys\n'
    'chunk = b"x" * ( 1 << 20 )\n'
    'for line in sys.stdin:\n'
    '    size = int( line )\n'
    '    while size > 0:\n'
    '        part = chunk[ : size ]\n'
    '        sys.stdout.buffer.write( part )\n'
    '        size -= len( part )\n'
    '    sys.stdout.buffer.write( b"\\n" )\n'
    '    sys.stdout.buffer.flush( )\n' )


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


async def _time_pipe( process, size ):
    ''' Returns seconds to read size bytes from a running child's pipe. '''
    began = time.perf_counter( )
    await process.stdin.send( f"{size}\n".encode( ) )
    received = 0
    while received <= size:
        received += len( await process.stdout.receive( _MEBIBYTE ) )
    return time.perf_counter( ) - began


async def _time_ensemble( ensemble, size ):
    invoker = ensemble.access_invoker( 'big' )
    began = time.perf_counter( )
    content = await invoker( _context( ), { 'size': size } )
    elapsed = time.perf_counter( ) - began
    assert len( content[ 0 ].text ) == size
    return elapsed


async def _time_sdk( size ):
    parameters = mcp.StdioServerParameters(
        command = _HOSTILE[ 0 ], args = _HOSTILE[ 1 : ] )
    with open( os.devnull, 'w', encoding = 'utf-8' ) as errlog:
        async with (
            mcp.stdio_client( parameters, errlog = errlog ) as streams,
            mcp.ClientSession( *streams ) as session,
        ):
            await session.initialize( )
            began = time.perf_counter( )
            await session.call_tool( 'big', { 'size': size } )
            return time.perf_counter( ) - began


async def _measure_sizes( ):
    print( "Large results over stdio (median of "
           f"{_ROUNDS_SIZE} rounds):" )
    ensemble = invocables.mcp.produce_ensemble(
        'bench', command = _HOSTILE, result_limit = 256 * _MEBIBYTE )
    process = await anyio.open_process( [ sys.executable, '-c', _PIPE ] )
    async with ensemble, process:
        for megabytes in ( 1, 10, 100 ):
            size = megabytes * _MEGABYTE
            ours, pipes = [ ], [ ]
            for _ in range( _ROUNDS_SIZE ):
                pipes.append( await _time_pipe( process, size ) )
                ours.append( await _time_ensemble( ensemble, size ) )
            our, pipe = statistics.median( ours ), statistics.median( pipes )
            line = (
                f"  {megabytes:4d} MB  ensemble {our:7.3f} s "
                f"({our / megabytes * 1e3:6.1f} ms/MB)  raw pipe "
                f"{pipe:6.3f} s  x{our / pipe:5.1f}" )
            if megabytes <= 10:
                sdk = await _time_sdk( size )
                line += f"  SDK stdio_client {sdk:6.3f} s x{sdk / pipe:5.1f}"
            print( line )
        await process.stdin.aclose( )


def _measure_memory( ):
    print( "Peak memory of a fresh client process (growth of VmHWM):" )
    for label, size, limit, reference, name in (
        ( '1 GiB answer, default limit 32 MiB', 1 << 30, 'default',
          32 * _MEBIBYTE, 'limit' ),
        ( '64 MiB answer, no limit', 64 * _MEBIBYTE, 'none',
          64 * _MEBIBYTE, 'answer' ),
    ):
        output = subprocess.run(
            [ sys.executable, __file__, '--memory', str( size ), limit ],
            capture_output = True, text = True, check = True ).stdout
        growth, elapsed, outcome = output.split( '|' )
        print(
            f"  {label:<36} peak +{int( growth ) / _MEBIBYTE:6.1f} MiB "
            f"(x{int( growth ) / reference:4.2f} the {name}) "
            f"in {float( elapsed ):5.2f} s: {outcome.strip( )}" )


async def _read_for_memory( size, limit ):
    options = { } if limit == 'default' else { 'result_limit': None }
    ensemble = invocables.mcp.produce_ensemble(
        'memory', command = _HOSTILE, **options )
    async with ensemble:
        before = _access_peak( )
        began = time.perf_counter( )
        try:
            content = await ensemble.access_invoker( 'big' )(
                _context( ), { 'size': size } )
            outcome = f"read {len( content[ 0 ].text )} bytes"
        except invocables.exceptions.InvocationRefusal as exception:
            outcome = f"refused: {str( exception )[ : 60 ]}..."
        elapsed = time.perf_counter( ) - began
        after = _access_peak( )
    print( f"{after - before}|{elapsed}|{outcome}" )


def _access_peak( ):
    ''' Returns peak resident set of this process, in bytes.

        Unlike ``ru_maxrss``, ``VmHWM`` does not inherit the peak of the
        process which started this one.
    '''
    status = Path( '/proc/self/status' ).read_text( encoding = 'utf-8' )
    for line in status.splitlines( ):
        if line.startswith( 'VmHWM:' ): return int( line.split( )[ 1 ] ) * 1024
    raise RuntimeError( 'No VmHWM in /proc/self/status (Linux only).' )


async def _kill_ensemble( ):
    ensemble = invocables.mcp.produce_ensemble( 'victim', command = _ECHO )
    async with ensemble:
        pid = int( ( await ensemble.access_invoker( 'pid' )(
            _context( ), { } ) )[ 0 ].text )
        call = asyncio.create_task( ensemble.access_invoker( 'sleep' )(
            _context( ), { 'seconds': 3600 } ) )
        await asyncio.sleep( 0.2 )
        began = time.perf_counter( )
        os.kill( pid, signal.SIGKILL )
        with contextlib.suppress( invocables.exceptions.ConnectionFailure ):
            await call
        return time.perf_counter( ) - began


async def _kill_sdk( ):
    parameters = mcp.StdioServerParameters(
        command = _ECHO[ 0 ], args = _ECHO[ 1 : ] )
    with open( os.devnull, 'w', encoding = 'utf-8' ) as errlog:
        async with (
            mcp.stdio_client( parameters, errlog = errlog ) as streams,
            mcp.ClientSession( *streams ) as session,
        ):
            await session.initialize( )
            result = await session.call_tool( 'pid', { } )
            pid = int( result.content[ 0 ].text )
            call = asyncio.create_task(
                session.call_tool( 'sleep', { 'seconds': 3600 } ) )
            await asyncio.sleep( 0.2 )
            began = time.perf_counter( )
            os.kill( pid, signal.SIGKILL )
            with contextlib.suppress( mcp.MCPError ): await call
            return time.perf_counter( ) - began


async def _measure_kills( ):
    ours, sdks = [ ], [ ]
    for _ in range( _ROUNDS_KILL ):
        ours.append( await _kill_ensemble( ) )
        sdks.append( await _kill_sdk( ) )
    our, sdk = statistics.median( ours ), statistics.median( sdks )
    print(
        f"Killed server (SIGKILL mid-call, median of {_ROUNDS_KILL}): "
        f"ConnectionFailure after {our * 1e3:.1f} ms "
        f"(max {max( ours ) * 1e3:.1f}); raw SDK MCPError after "
        f"{sdk * 1e3:.1f} ms; x{our / sdk:.2f}" )


async def main( ):
    ''' Measures sizes, then kills; memory in fresh processes. '''
    await _measure_sizes( )
    _measure_memory( )
    await _measure_kills( )


if __name__ == '__main__':
    if sys.argv[ 1 : 2 ] == [ '--memory' ]:
        asyncio.run( _read_for_memory( int( sys.argv[ 2 ] ), sys.argv[ 3 ] ) )
    else: asyncio.run( main( ) )
