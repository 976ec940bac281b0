# SPDX-License-Identifier: Apache-2.0

''' Helpers for tests of serve: its environment as a child process, its
    port awaited, its stop checked, gateways to servers of MCP 2026-07-28,
    their clients, upstream servers of ``routing_upstream.py`` (which may
    refuse subscriptions), and bounded waits on conditions.
'''


import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import time

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


ACCEPT = 'application/json, text/event-stream'
DATA = Path( __file__ ).parent.parent / 'data' / 'serving'
INITIALIZE = {
    'jsonrpc': '2.0', 'id': 1, 'method': 'initialize',
    'params': {
        'protocolVersion': '2025-06-18', 'capabilities': { },
        'clientInfo': { 'name': 'test', 'version': '1' } } }
MODERN = sdk.MAJOR >= 2 # noqa: PLR2004
ROUTING_UPSTREAM = DATA / 'modules' / 'routing_upstream.py'
# Runs routing_upstream.py answering its subscriptions (and their ends)
# with the error of the code given first.
_REFUSING_UPSTREAM = '''
import sys

code = int( sys.argv.pop( 1 ) )
sys.path.insert( 0, sys.argv.pop( 1 ) )

import routing_upstream as upstream

answer = upstream._answer


def refuse( method, parameters ):
    if method in ( 'resources/subscribe', 'resources/unsubscribe' ):
        return { 'error': { 'code': code, 'message': 'Refused.' } }
    return answer( method, parameters )


upstream._answer = refuse
upstream._serve( )
'''


class RoutingUpstream:
    ''' An upstream server of ``routing_upstream.py``: its state (what it
        lists), which a test may change, and its log of requests. With a
        refusal (a code of JSON-RPC), it answers every subscription, and
        every end of one, with that error.
    '''

    def __init__(
        self,
        directory: Path,
        label: str,
        *arguments: str,
        refusal: int | None = None,
        **state: Any,
    ):
        self.label = label
        self.state = directory / f"{label}.json"
        self.log = directory / f"{label}.log"
        self.log.write_text( '' )
        self.change( **state )
        program = [ str( ROUTING_UPSTREAM ) ]
        if refusal is not None:
            wrapper = directory / f"{label}_refusing.py"
            wrapper.write_text( _REFUSING_UPSTREAM )
            program = [
                str( wrapper ), str( refusal ),
                str( ROUTING_UPSTREAM.parent ) ]
        self.ensemble = invocables.mcp.produce_ensemble(
            label, command = [
                mcp_support.SERVERS_PYTHON, *program, '--label', label,
                '--state', str( self.state ), '--log', str( self.log ),
                *arguments ] )

    def change( self, **state: Any ) -> None:
        ''' Changes what the server lists, from its next request on. '''
        self.state.write_text( json.dumps( state ) )

    def count( self, method: str = 'resources/list' ) -> int:
        ''' Returns how many requests of a method the server got. '''
        return sum(
            1 for line in self.log.read_text( ).splitlines( )
            if line.split( ' ' )[ 0 ] == method )


def mark_gateway_test( test: Any ) -> Any:
    ''' Returns an async test of a gateway marked slow and deaf to the
        warnings of deprecation and the user warnings of the SDKs.
    '''
    for mark in (
        pytest.mark.filterwarnings( 'ignore::UserWarning' ),
        pytest.mark.filterwarnings( 'ignore::DeprecationWarning' ),
        pytest.mark.slow,
        pytest.mark.asyncio,
    ): test = mark( test )
    return test


def produce_environment(
    modules: Path = DATA / 'modules',
    servers: bool = True,
    isolated: bool = True,
    **extra: str,
) -> dict[ str, str ]:
    ''' Returns the environment of serve as a child process: the programs
        of the tests (and their servers) on its path, modules importable,
        and, if isolated, no configuration folder of the user.
    '''
    paths = [ str( mcp_support.VENV_BINS ) ]
    if servers: paths.append( str( mcp_support.SERVERS_BINS ) )
    paths.append( os.environ.get( 'PATH', '' ) )
    environment = {
        'PATH': os.pathsep.join( paths ),
        'PYTHONPATH': str( modules ),
        'HOME': os.environ.get( 'HOME', '/tmp' ),
    }
    if isolated: environment[ 'XDG_CONFIG_HOME' ] = '/nonexistent'
    return { **environment, **extra }


def wait_for_port(
    port: int,
    process: subprocess.Popen[ bytes ],
    bound: float = 60,
    name: str = 'serve',
) -> None:
    ''' Waits until a process opened a port on 127.0.0.1; fails the test
        if it exited first or did not in bound seconds.
    '''
    deadline = time.monotonic( ) + bound
    while time.monotonic( ) < deadline:
        if process.poll( ) is not None:
            stderr = process.stderr.read( ).decode( ) if process.stderr else ''
            pytest.fail( f"{name} exited with {process.returncode}: {stderr}" )
        with socket.socket( ) as probe:
            if probe.connect_ex( ( '127.0.0.1', port ) ) == 0: return
        time.sleep( 0.05 )
    pytest.fail( f"{name} did not open port {port} in {bound} s." )


def stop( process: subprocess.Popen[ bytes ], bound: float = 15 ) -> None:
    ''' Stops the process group of a process by SIGTERM; by SIGKILL if it
        lingers over bound seconds.
    '''
    with contextlib.suppress( ProcessLookupError ):
        os.killpg( process.pid, signal.SIGTERM )
    try: process.wait( timeout = bound )
    except subprocess.TimeoutExpired:
        os.killpg( process.pid, signal.SIGKILL )
        process.wait( timeout = 10 )


@contextlib.contextmanager
def run(
    command: list[ str ],
    port: int,
    environment: dict[ str, str ],
    bound: float = 15,
    surveyed: bool = True,
    name: str = 'serve',
):
    ''' Runs a server until the block ends, once it opened its port;
        yields its process. Stops it by SIGTERM (waiting bound seconds);
        if surveyed, checks that it left no process.
    '''
    process = subprocess.Popen(
        command, env = environment,
        stdout = subprocess.DEVNULL, stderr = subprocess.PIPE,
        start_new_session = True )
    try:
        wait_for_port( port, process, name = name )
        yield process
    finally:
        descendants = (
            mcp_support.survey_descendants( process.pid )
            if surveyed else set( ) )
        stop( process, bound )
        if surveyed:
            living = mcp_support.wait_until_dead( descendants, 15 )
            for pid in living: mcp_support.kill_quietly( pid )
            assert not living


@contextlib.asynccontextmanager
async def serve_gateway( upstream: Any, *others: Any ):
    ''' Serves upstream over HTTP; yields a gateway to it, as ensemble
        ``modern`` of MCP 2026-07-28, and to the other ensembles, all
        connected.
    '''
    async with invocables.connect_ensembles( upstream.ensembles ):
        async with mcp_support.serve_in_loop( upstream ) as url:
            modern = invocables.mcp.produce_ensemble(
                'modern', url = url, protocol = 'modern' )
            server = serving.ToolServer( [ modern, *others ] )
            async with invocables.connect_ensembles( server.ensembles ):
                yield server


@contextlib.asynccontextmanager
async def open_listening_client(
    url: str, notifications: dict[ str, Any ]
):
    ''' Yields a client of MCP 2026-07-28 of the server at url. Under the
        SDK 1.x, asserts that ``subscriptions/listen`` (of notifications)
        is refused, and yields none.
    '''
    if not MODERN:
        async with httpx.AsyncClient( timeout = 60 ) as http:
            status, message = await mcp_support.post_modern(
                http, url, 'subscriptions/listen',
                { 'notifications': notifications }, capabilities = { } )
        assert status >= 400 and 'error' in message # noqa: PLR2004
        yield None
        return
    import mcp
    async with mcp.Client( url, mode = 'auto' ) as client:
        assert client.protocol_version == mcp_support.VERSION_MODERN
        yield client


async def wait_until(
    event: asyncio.Event, condition: Callable[ [ ], bool ], bound: float
) -> None:
    ''' Waits until a condition holds, testing it whenever the event is
        set; bounded: no hang.
    '''
    async def wait( ) -> None:
        while not condition( ):
            event.clear( )
            await event.wait( )
    await asyncio.wait_for( wait( ), bound )
