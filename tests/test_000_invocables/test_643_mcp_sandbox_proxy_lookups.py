# SPDX-License-Identifier: Apache-2.0

''' Lookups of the proxy of listed hosts against a name server which never
    answers.

    The proxy runs in a child process under bubblewrap, in a network and
    mount namespace of its own whose ``/etc/resolv.conf`` names a name
    server on its loopback which receives every query and answers none,
    and whose ``/etc/hosts`` resolves one name at once: real lookups by
    the host's resolver, never a stand-in for them. A flood of requests
    to a name which never resolves leaves the application's default
    executor free and another proxy's lookups answered, and each request
    of the flood gets its refusal once its lookup's deadline has passed.
'''


import asyncio
import json
import os
import shutil
import sys

from pathlib import Path

import pytest


_BOUND = 120.0 # proves "does not hang", never the pace of a machine
_FLOOD = 40 # more than the default executor's threads on 28 cores

# Runs as root of its own user namespace, so that it may listen on port 53
# of its own loopback; prints one JSON line of what it found.
_SCRIPT = '''
import asyncio, json, os, socket, sys, threading
from invocables.mcp import _proxy
BOUND, FLOOD = float( sys.argv[ 2 ] ), int( sys.argv[ 3 ] )
queries = set( )
def listen( ):
    name_server = socket.socket( socket.AF_INET, socket.SOCK_DGRAM )
    name_server.bind( ( '127.0.0.1', 53 ) )
    started.set( )
    while True:
        _, source = name_server.recvfrom( 4096 )
        queries.add( source )
started = threading.Event( )
threading.Thread( target = listen, daemon = True ).start( )
started.wait( )
async def answer( path, request ):
    reader, writer = await asyncio.open_unix_connection( path )
    writer.write( request.encode( ) )
    try: data = await asyncio.wait_for( reader.read( 200 ), BOUND )
    except asyncio.TimeoutError: data = b'no answer'
    writer.close( )
    return data.decode( )
async def main( ):
    found = { }
    upstream = await asyncio.start_server(
        lambda reader, writer: writer.close( ), '127.0.0.1', 0 )
    port = upstream.sockets[ 0 ].getsockname( )[ 1 ]
    rules = _proxy.produce_rules(
        [ 'slow.example.test', 'fast.example.test:%d' % port ] )
    flooded, other = _proxy.Proxy( 'flooded', rules ), _proxy.Proxy(
        'other', rules )
    paths = [ os.path.join( sys.argv[ 1 ], name ) for name in ( 'a', 'b' ) ]
    await flooded.activate( paths[ 0 ] )
    await other.activate( paths[ 1 ] )
    flood = [
        asyncio.create_task( answer(
            paths[ 0 ], 'CONNECT slow.example.test:443 HTTP/1.1\\r\\n\\r\\n' ) )
        for _ in range( FLOOD ) ]
    loop = asyncio.get_running_loop( )
    deadline = loop.time( ) + BOUND
    while len( queries ) < 4 and loop.time( ) < deadline:
        await asyncio.sleep( 0.01 )
    found[ 'queried' ] = len( queries )
    try:
        found[ 'executor' ] = await asyncio.wait_for(
            loop.run_in_executor( None, str, 'free' ), BOUND / 4 )
    except asyncio.TimeoutError: found[ 'executor' ] = 'starved'
    found[ 'other' ] = await answer(
        paths[ 1 ], 'CONNECT fast.example.test:%d HTTP/1.1\\r\\n\\r\\n' % port )
    found[ 'flood' ] = sorted( set( await asyncio.gather( *flood ) ) )
    print( json.dumps( found ), flush = True )
    os._exit( 0 ) # threads of lookups under way are not waited for
asyncio.run( main( ) )
'''


@pytest.mark.slow
@pytest.mark.asyncio
async def test_100_flood_of_unresolved_names( tmp_path: Path ):
    ''' Forty requests to a name which never resolves take neither the
        default executor nor another proxy's lookups; each is refused with
        ``502`` once the lookup's deadline has passed.
    '''
    ( tmp_path / 'resolv.conf' ).write_text(
        'nameserver 127.0.0.1\noptions timeout:30 attempts:5\n',
        encoding = 'utf-8' )
    ( tmp_path / 'hosts' ).write_text(
        '127.0.0.1 localhost fast.example.test\n', encoding = 'utf-8' )
    ( tmp_path / 'proxy.py' ).write_text( _SCRIPT, encoding = 'utf-8' )
    bwrap = shutil.which( 'bwrap' )
    assert bwrap is not None, "bubblewrap is needed (apt-get install it)"
    command = (
        bwrap, '--die-with-parent', '--unshare-user', '--unshare-net',
        '--unshare-pid', '--uid', '0',
        '--cap-add', 'CAP_NET_BIND_SERVICE', '--dev-bind', '/', '/',
        '--ro-bind', str( tmp_path / 'resolv.conf' ), '/etc/resolv.conf',
        '--ro-bind', str( tmp_path / 'hosts' ), '/etc/hosts',
        sys.executable, str( tmp_path / 'proxy.py' ), str( tmp_path ),
        str( _BOUND / 4 ), str( _FLOOD ) )
    environment = dict(
        os.environ, PYTHONPATH = os.pathsep.join( filter( None, sys.path ) ) )
    process = await asyncio.create_subprocess_exec(
        *command, env = environment, stdout = asyncio.subprocess.PIPE,
        stderr = asyncio.subprocess.PIPE )
    try:
        output, error = await asyncio.wait_for(
            process.communicate( ), _BOUND )
    finally:
        if process.returncode is None: process.kill( )
    assert process.returncode == 0, error.decode( errors = 'replace' )
    found = json.loads( output.decode( ).strip( ).splitlines( )[ -1 ] )
    assert found[ 'queried' ] >= 4 # the flood reached the name server
    assert found[ 'executor' ] == 'free'
    assert found[ 'other' ].startswith( 'HTTP/1.1 200 ' )
    refusal, = found[ 'flood' ]
    assert refusal.startswith( 'HTTP/1.1 502 ' )
