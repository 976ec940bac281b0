# SPDX-License-Identifier: Apache-2.0

''' Helpers for tests against real MCP servers: where they are, processes.

    The npm servers are installed by ``bash .auxiliary/scripts/install-mcp-
    servers`` into the project's ignored caches; ``mcp-server-time`` comes
    with the ``test`` extra. A missing server fails the test with the
    command which installs it: these tests are never skipped.
'''


import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

from pathlib import Path

import pytest


PROJECT = Path( __file__ ).resolve( ).parents[ 2 ]
NPM_BINS = PROJECT / '.auxiliary' / 'caches' / 'npm' / 'node_modules' / '.bin'
SERVERS = Path( __file__ ).resolve( ).parent / 'servers'
VENV_BINS = Path( sys.executable ).parent
# The test servers are programs of their own, built on the mcp SDK 2.x (as
# is mcp-server-time): where the library runs on mcp 1.x, they run from an
# environment with mcp 2.x, whose bin folder this variable names.
SERVERS_BINS = Path(
    os.environ.get( 'INVOCABLES_TEST_SERVERS_BINS' ) or VENV_BINS )
SERVERS_PYTHON = (
    str( SERVERS_BINS / 'python' )
    if os.environ.get( 'INVOCABLES_TEST_SERVERS_BINS' ) else sys.executable )


class Reports( list ):
    ''' Progress reports, as a reporter of an ensemble receives them.

        Tests wait on the arrival of reports, never on time.
    '''

    def __init__( self ):
        super( ).__init__( )
        self.arrival = asyncio.Event( )

    def append( self, report ) -> None:
        super( ).append( report )
        self.arrival.set( )

    async def wait_count( self, count: int, timeout: float = 10 ) -> None:
        ''' Waits until count reports arrived; bounded: no hang. '''
        async def wait( ) -> None:
            while len( self ) < count:
                self.arrival.clear( )
                await self.arrival.wait( )
        await asyncio.wait_for( wait( ), timeout )


def locate_npm_server( name: str ) -> str:
    ''' Returns path of an installed npm server bin, or fails clearly. '''
    path = NPM_BINS / name
    if not path.exists( ):
        pytest.fail(
            f"MCP test server {name!r} is not installed at {path}. "
            "Install the npm test servers with "
            "'bash .auxiliary/scripts/install-mcp-servers' (needs node "
            "and npm)." )
    return str( path )


def locate_proxy( ) -> str:
    ''' Returns path of the HTTP proxy of the test extra (proxy.py). '''
    path = Path( sys.executable ).parent / 'proxy'
    if not path.exists( ):
        pytest.fail(
            f"HTTP proxy 'proxy' (proxy.py) is not installed at {path}. "
            "Install the test extra: 'pip install --editable .[test]'." )
    return str( path )


def access_time_server( ) -> Path:
    ''' Returns where mcp-server-time should be: beside the interpreter
        of the test servers.
    '''
    return SERVERS_BINS / 'mcp-server-time'


def locate_time_server( ) -> str:
    ''' Returns path of mcp-server-time, or fails clearly. '''
    path = access_time_server( )
    if not path.exists( ):
        pytest.fail(
            f"MCP test server 'mcp-server-time' is not installed at {path}. "
            "Install the test extra: "
            "'pip install --editable .[test]' (it pins mcp-server-time)." )
    return str( path )


def produce_server_command( name: str, *arguments: str ) -> list[ str ]:
    ''' Returns command which runs one of our test servers. '''
    return [ SERVERS_PYTHON, str( SERVERS / name ), *arguments ]


def probe_process( pid: int ) -> bool:
    ''' Returns whether process lives; zombies count as dead. '''
    try: stat = Path( f"/proc/{pid}/stat" ).read_text( encoding = 'utf-8' )
    except FileNotFoundError: return False
    return stat.rsplit( ')', maxsplit = 1 )[ -1 ].split( )[ 0 ] != 'Z'


def survey_descendants( pid: int ) -> set[ int ]:
    ''' Returns living descendants of process, via procfs. '''
    parents: dict[ int, int ] = { }
    for entry in Path( '/proc' ).iterdir( ):
        if not entry.name.isdigit( ): continue
        try: stat = ( entry / 'stat' ).read_text( encoding = 'utf-8' )
        except OSError: continue
        fields = stat.rsplit( ')', maxsplit = 1 )[ -1 ].split( )
        if fields[ 0 ] == 'Z': continue
        parents[ int( entry.name ) ] = int( fields[ 1 ] )
    found: set[ int ] = set( )
    frontier = { pid }
    while frontier:
        children = {
            child for child, parent in parents.items( )
            if parent in frontier and child not in found }
        found |= children
        frontier = children
    return found


def wait_until_dead( pids: set[ int ], timeout: float = 30.0 ) -> set[ int ]:
    ''' Waits for processes to end; returns those still living. '''
    deadline = time.monotonic( ) + timeout
    living = { pid for pid in pids if probe_process( pid ) }
    while living and time.monotonic( ) < deadline:
        time.sleep( 0.02 )
        living = { pid for pid in living if probe_process( pid ) }
    return living


def kill_quietly( pid: int ) -> None:
    ''' Kills process (test cleanup); ignores absence. '''
    with contextlib.suppress( ProcessLookupError, PermissionError ):
        os.kill( pid, signal.SIGKILL )


def select_port( ) -> int:
    ''' Returns a free TCP port on 127.0.0.1. '''
    with socket.socket( ) as probe:
        probe.bind( ( '127.0.0.1', 0 ) )
        return probe.getsockname( )[ 1 ]


@contextlib.contextmanager
def serve_http(
    command: list[ str ],
    port: int,
    environment: dict[ str, str ] | None = None,
    path: str = '/mcp',
):
    ''' Runs an HTTP MCP server until the block ends; yields its URL. '''
    process = subprocess.Popen(
        command,
        env = { **os.environ, 'PORT': str( port ), **( environment or { } ) },
        stdout = subprocess.DEVNULL, stderr = subprocess.DEVNULL,
        start_new_session = True )
    try:
        _wait_for_port( port, process )
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        with contextlib.suppress( ProcessLookupError ):
            os.killpg( process.pid, signal.SIGKILL )
        process.wait( timeout = 10 )


def _wait_for_port( port: int, process: subprocess.Popen[ bytes ] ) -> None:
    deadline = time.monotonic( ) + 15
    while time.monotonic( ) < deadline:
        if process.poll( ) is not None:
            pytest.fail( f"HTTP test server exited with {process.returncode}." )
        with socket.socket( ) as probe:
            if probe.connect_ex( ( '127.0.0.1', port ) ) == 0: return
        time.sleep( 0.05 )
    pytest.fail( f"HTTP test server did not open port {port} in 15 s." )


@contextlib.asynccontextmanager
async def open_memory_client( server, **callbacks ):
    ''' Yields a client of the installed mcp SDK connected in memory to a
        low-level server: 2.x's ``Client``, or 1.x's session in memory.

        Callbacks are the SDK's (``logging_callback``,
        ``elicitation_callback``, ``sampling_callback``); ``mode`` is
        taken by 2.x only. Both give ``call_tool``, ``list_resources``,
        ``read_resource``, ``get_prompt``, ``complete``,
        ``set_logging_level`` ...
    '''
    import mcp
    client_class = getattr( mcp, 'Client', None )
    if client_class is not None:
        async with client_class( server, **callbacks ) as client:
            yield client
        return
    from mcp.shared.memory import create_connected_server_and_client_session
    callbacks.pop( 'mode', None )
    async with create_connected_server_and_client_session(
        server, **callbacks
    ) as session: yield session


@contextlib.asynccontextmanager
async def serve_in_loop( server, stateless = False, **options ):
    ''' Serves a tool server over streamable HTTP, in the running loop, on
        a free port of 127.0.0.1 (options: those of
        ``serving.produce_application``, such as ``token_verifier``);
        yields the URL. Stops it on exit (bounded wait: no hang).
    '''
    from invocables import serving
    application = serving.produce_application(
        server, stateless = stateless, **options )
    async with serve_application( application ) as url: yield url


@contextlib.asynccontextmanager
async def serve_application( application ):
    ''' Serves an ASGI application (a server's, perhaps fronted) over
        HTTP, in the running loop, on a free port of 127.0.0.1; yields the
        URL of its ``/mcp``. Stops it on exit (bounded wait: no hang).
    '''
    import uvicorn
    listener = socket.socket( )
    listener.bind( ( '127.0.0.1', 0 ) )
    listener.listen( )
    port = listener.getsockname( )[ 1 ]
    runner = uvicorn.Server( uvicorn.Config(
        application, lifespan = 'on', log_level = 'warning' ) )
    serving_ = asyncio.get_running_loop( ).create_task(
        runner.serve( sockets = [ listener ] ) )
    try: yield f"http://127.0.0.1:{port}/mcp"
    finally:
        runner.should_exit = True
        await asyncio.wait_for( serving_, 30 )
        listener.close( )


VERSION_LEGACY = '2025-11-25'
VERSION_MODERN = '2026-07-28'


async def open_legacy_session( http, url ):
    ''' Opens a session of MCP 2025-11-25 with http (an httpx client), by
        hand: initialize, then initialized. Returns the headers of its
        requests (session, version).
    '''
    accept = 'application/json, text/event-stream'
    response = await http.post( url, headers = { 'Accept': accept }, json = {
        'jsonrpc': '2.0', 'id': 0, 'method': 'initialize', 'params': {
            'protocolVersion': VERSION_LEGACY, 'capabilities': { },
            'clientInfo': { 'name': 'test', 'version': '1' } } } )
    assert response.status_code == 200 # noqa: PLR2004
    headers = {
        'Accept': accept,
        'Mcp-Session-Id': response.headers[ 'mcp-session-id' ],
        'Mcp-Protocol-Version': VERSION_LEGACY }
    await http.post( url, headers = headers, json = {
        'jsonrpc': '2.0', 'method': 'notifications/initialized' } )
    return headers


async def post_modern(
    http, url, method, parameters, *,
    capabilities, responses = None, state = None,
):
    ''' Posts a request of MCP 2026-07-28 with http (an httpx client): the
        client's capabilities in its ``_meta``, the answers and the state
        of a round of input if any, and the routing headers. Returns the
        HTTP status and the message (JSON, or the event stream's).
    '''
    import json
    parameters = dict( parameters )
    if responses is not None: parameters[ 'inputResponses' ] = responses
    if state is not None: parameters[ 'requestState' ] = state
    parameters[ '_meta' ] = {
        'io.modelcontextprotocol/protocolVersion': VERSION_MODERN,
        'io.modelcontextprotocol/clientCapabilities': capabilities }
    headers = {
        'Accept': 'application/json, text/event-stream',
        'MCP-Protocol-Version': VERSION_MODERN, 'Mcp-Method': method }
    name = next( (
        parameters[ key ] for key in ( 'name', 'uri', 'taskId' )
        if key in parameters ), None )
    if name is not None: headers[ 'Mcp-Name' ] = name
    response = await http.post( url, headers = headers, json = {
        'jsonrpc': '2.0', 'id': 1, 'method': method,
        'params': parameters } )
    text = response.text
    if 'text/event-stream' in response.headers.get( 'content-type', '' ):
        text = next(
            line[ len( 'data:' ) : ] for line in text.splitlines( )
            if line.startswith( 'data:' ) and 'jsonrpc' in line )
    return response.status_code, json.loads( text )


def produce_elicited( content ):
    ''' Returns a client's answer (wire shape) which accepts an
        elicitation with content. '''
    return { 'action': 'accept', 'content': content }


def produce_sampled( text ):
    ''' Returns a client's answer (wire shape) to a sampling request:
        a text of the assistant. '''
    return {
        'role': 'assistant', 'content': { 'type': 'text', 'text': text },
        'model': 'test', 'stopReason': 'endTurn' }


async def assert_echoes_redacted(
    monkeypatch, variable: str, secret: str, encodeds: list[ str ]
) -> None:
    ''' Has the echo server, whose environment holds secret, echo each
        encoded form of it; asserts that the results' texts, and every
        processor's native results, hold only the redaction. '''
    import json
    import invocables
    import invocables.mcp
    monkeypatch.setenv( variable, secret )
    ensemble = invocables.mcp.produce_ensemble(
        'echo', command = produce_server_command( 'echo_server.py' ),
        environment = { 'APP_KEY': f"env:{variable}" } )
    calls = [
        invocables.InvocationCanister(
            identifier = f"c{index}", name = 'echo',
            arguments = { 'message': f"pw={encoded};" } )
        for index, encoded in enumerate( encodeds ) ]
    async with ensemble:
        results = await invocables.execute_invocations( calls, [ ensemble ] )
    assert [ result.as_text( ) for result in results ] == (
        [ 'pw=***;' ] * len( encodeds ) )
    for name in invocables.processors.PROVIDERS:
        processor = invocables.produce_processor( name )
        native = json.dumps(
            processor.nativize_results( results ), default = str )
        assert native.count( '***' ) == len( encodeds ), name
