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

    Then the cost of a list of hosts: mcp-server-fetch (from this virtual
    environment) fetches a local page 50 times, sandboxed with
    ``network = true`` (directly) and with ``network = [ 'localhost:...' ]``
    (through the library's filtering proxy and the bridge inside the
    sandbox); prints medians and the ratio proxied / direct. The transport
    alone: a Python program in the same two sandboxes fetches the page 50
    times with ``urllib`` (which honours the proxy variables) and reports
    its median request time.
'''


import asyncio
import statistics
import subprocess
import sys
import threading
import time

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import absence

import invocables
import invocables.mcp

from invocables.mcp import sandbox as _sandbox


_CALLS = 200
_CALLS_FETCH = 50
_ROUNDS = 5
_PROJECT = Path( __file__ ).resolve( ).parents[ 1 ]
_FILESYSTEM = (
    _PROJECT / '.auxiliary' / 'caches' / 'npm' / 'node_modules' / '.bin'
    / 'mcp-server-filesystem' )
_ECHO = _PROJECT / 'tests' / 'test_000_invocables' / 'servers' / 'echo_server.py'
_FETCH = Path( sys.executable ).parent / 'mcp-server-fetch'
_CLIENT = '''
import sys, time, urllib.request
times = [ ]
for _ in range( 50 ):
    start = time.perf_counter( )
    urllib.request.urlopen( sys.argv[ 1 ] ).read( )
    times.append( time.perf_counter( ) - start )
print( sorted( times )[ len( times ) // 2 ] )
'''


class _PageHandler( BaseHTTPRequestHandler ):

    def do_GET( self ):
        body = b'<html><body><p>page</p></body></html>'
        self.send_response( 200 )
        self.send_header( 'Content-Type', 'text/html' )
        self.send_header( 'Content-Length', str( len( body ) ) )
        self.end_headers( )
        self.wfile.write( body )

    def log_message( self, *arguments ): pass


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


async def _measure(
    name, command, tool, arguments, sandbox, calls = _CALLS
):
    ensemble = invocables.mcp.produce_ensemble(
        name, command = command, sandbox = sandbox )
    start = time.perf_counter( )
    await ensemble.connect( )
    connected = time.perf_counter( )
    invoker = ensemble.access_invoker( tool )
    context = _context( )
    for _ in range( 5 ): await invoker( context, arguments )
    called = time.perf_counter( )
    for _ in range( calls ): await invoker( context, arguments )
    finished = time.perf_counter( )
    await ensemble.disconnect( )
    ended = time.perf_counter( )
    return (
        connected - start, ( finished - called ) / calls,
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


async def _measure_transport( url, network ):
    confinement = await _sandbox.prepare_confinement(
        'transport', invocables.mcp.Sandbox( network = network ),
        sys.executable, [ '-c', _CLIENT, url ], { }, absence.absent )
    try:
        process = await asyncio.create_subprocess_exec(
            *confinement.command, env = dict( confinement.environment ),
            stdout = subprocess.PIPE )
        output, _ = await process.communicate( )
    finally: confinement.release( )
    return float( output )


async def _compare_hosts( ):
    server = ThreadingHTTPServer( ( '127.0.0.1', 0 ), _PageHandler )
    threading.Thread( target = server.serve_forever, daemon = True ).start( )
    port = server.server_address[ 1 ]
    command = [ str( _FETCH ), '--ignore-robots-txt', '--allow-private-ips' ]
    arguments = { 'url': f"http://localhost:{port}/page", 'raw': True }
    networks = { 'direct': True, 'proxied': [ f"localhost:{port}" ] }
    samples = { label: [ ] for label in networks }
    transports = { label: [ ] for label in networks }
    try:
        for _ in range( _ROUNDS ):
            for label, network in networks.items( ):
                samples[ label ].append( await _measure(
                    f"fetch_{label}", command, 'fetch', arguments,
                    invocables.mcp.Sandbox( network = network ),
                    calls = _CALLS_FETCH ) )
                transports[ label ].append( await _measure_transport(
                    arguments[ 'url' ], network ) )
    finally:
        server.shutdown( )
        server.server_close( )
    print( f"fetch, network = true vs a list of hosts: medians over "
           f"{_ROUNDS} rounds" )
    for index, label, unit, scale in (
        ( 0, 'connect', 'ms', 1e3 ), ( 1, 'call', 'ms', 1e3 ),
        ( 2, 'disconnect', 'ms', 1e3 ),
    ):
        direct = statistics.median( s[ index ] for s in samples[ 'direct' ] )
        proxied = statistics.median(
            s[ index ] for s in samples[ 'proxied' ] )
        print(
            f"  {label:<10} direct {direct * scale:9.2f} {unit}"
            f"  proxied {proxied * scale:9.2f} {unit}"
            f"  ratio {proxied / direct:5.2f}" )
    direct = statistics.median( transports[ 'direct' ] )
    proxied = statistics.median( transports[ 'proxied' ] )
    print(
        f"  {'urllib':<10} direct {direct * 1e3:9.2f} ms"
        f"  proxied {proxied * 1e3:9.2f} ms"
        f"  ratio {proxied / direct:5.2f}" )


async def main( ):
    await _compare(
        'echo', [ sys.executable, str( _ECHO ) ], 'echo',
        { 'message': 'hi' } )
    if _FILESYSTEM.exists( ):
        await _compare(
            'filesystem', [ str( _FILESYSTEM ), str( _PROJECT ) ],
            'list_allowed_directories', { } )
    if sys.platform.startswith( 'linux' ) and _FETCH.exists( ):
        await _compare_hosts( )


if __name__ == '__main__': asyncio.run( main( ) )
