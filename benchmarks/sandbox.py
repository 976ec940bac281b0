# SPDX-License-Identifier: Apache-2.0

''' Cost of the sandbox: connect, call and disconnect, with and without.

    Run with ``.venv/bin/python benchmarks/sandbox.py`` (Linux with
    bubblewrap, or macOS). For each server (our Python echo server, and
    server-filesystem from npm when installed), measures in the same run,
    interleaved over rounds:

    * connect: start, handshake and tool listing, unconfined and in the
      default sandbox;
    * call: 200 sequential trivial calls (``echo``, or ``list_allowed_
      directories``) on the connected ensemble;
    * disconnect: until the process group is gone.

    Prints medians over rounds and the ratios sandboxed / unconfined.
'''


import asyncio
import statistics
import sys
import time

from pathlib import Path

import invocables
import invocables.mcp


_CALLS = 200
_ROUNDS = 5
_PROJECT = Path( __file__ ).resolve( ).parents[ 1 ]
_FILESYSTEM = (
    _PROJECT / '.auxiliary' / 'caches' / 'npm' / 'node_modules' / '.bin'
    / 'mcp-server-filesystem' )
_ECHO = _PROJECT / 'tests' / 'test_000_invocables' / 'servers' / 'echo_server.py'


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


async def _measure( name, command, tool, arguments, sandbox ):
    ensemble = invocables.mcp.produce_ensemble(
        name, command = command, sandbox = sandbox )
    start = time.perf_counter( )
    await ensemble.connect( )
    connected = time.perf_counter( )
    invoker = ensemble.access_invoker( tool )
    context = _context( )
    for _ in range( 5 ): await invoker( context, arguments )
    called = time.perf_counter( )
    for _ in range( _CALLS ): await invoker( context, arguments )
    finished = time.perf_counter( )
    await ensemble.disconnect( )
    ended = time.perf_counter( )
    return (
        connected - start, ( finished - called ) / _CALLS,
        ended - finished )


async def _compare( name, command, tool, arguments ):
    samples = { False: [ ], True: [ ] }
    for _ in range( _ROUNDS ):
        for sandboxed in ( False, True ):
            samples[ sandboxed ].append( await _measure(
                name, command, tool, arguments, sandboxed or False ) )
    print( f"{name}: medians over {_ROUNDS} rounds" )
    for index, label, unit, scale in (
        ( 0, 'connect', 'ms', 1e3 ), ( 1, 'call', 'µs', 1e6 ),
        ( 2, 'disconnect', 'ms', 1e3 ),
    ):
        plain = statistics.median( s[ index ] for s in samples[ False ] )
        confined = statistics.median( s[ index ] for s in samples[ True ] )
        print(
            f"  {label:<10} unconfined {plain * scale:9.1f} {unit}"
            f"  sandboxed {confined * scale:9.1f} {unit}"
            f"  ratio {confined / plain:5.2f}" )


async def main( ):
    await _compare(
        'echo', [ sys.executable, str( _ECHO ) ], 'echo',
        { 'message': 'hi' } )
    if _FILESYSTEM.exists( ):
        await _compare(
            'filesystem', [ str( _FILESYSTEM ), str( _PROJECT ) ],
            'list_allowed_directories', { } )


if __name__ == '__main__': asyncio.run( main( ) )
