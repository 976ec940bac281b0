# SPDX-License-Identifier: Apache-2.0

''' ``invocables serve --http``: the log of worker processes bounded as
    serve's own, and the sessions bounded in number and idle time by
    options (``--sessions-maximum``, ``--session-idle-timeout``).

    The real command runs as a subprocess on 127.0.0.1; clients are httpx.
    Bounds on waits only prove "does not hang".
'''


import asyncio
import contextlib
import signal
import subprocess
import sys

from typing import Any

import httpx
import pytest

from invocables import exceptions
from invocables import serving

from . import mcp_support
from . import serving_support


_DATA = serving_support.DATA
_BOUND = 60 # seconds which prove "does not hang"
_ORIGIN = 'http://' + 'e' * 4000 + '.example'
_TOKEN = 'a-token-for-the-workers-tests'


def _produce_command( port: int, *arguments: str ) -> list[ str ]:
    return [
        sys.executable, '-m', 'invocables', 'serve', '--http',
        '--configuration', str( _DATA / 'local.toml' ),
        '--port', str( port ), '--token-variable', 'SERVE_TOKEN',
        *arguments ]


@contextlib.contextmanager
def _serve( *arguments: str ):
    ''' Runs serve until the block ends; yields its port and process. '''
    port = mcp_support.select_port( )
    with serving_support.run(
        _produce_command( port, *arguments ), port,
        serving_support.produce_environment( SERVE_TOKEN = _TOKEN ),
        bound = _BOUND,
    ) as process: yield port, process


async def _initialize(
    http: httpx.AsyncClient, port: int, *headers: tuple[ str, str ]
) -> httpx.Response:
    ''' Posts initialize (a new session) with headers; returns response.
    '''
    return await http.post(
        f"http://127.0.0.1:{port}/mcp", json = serving_support.INITIALIZE,
        headers = [
            ( 'Accept', serving_support.ACCEPT ),
            ( 'Authorization', f"Bearer {_TOKEN}" ), *headers ] )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_workers_log_bounded( ):
    ''' With several workers, requests refused for their Origin (which
        the log echoes) give lines of bounded length, at most a hundred
        per worker, in serve's form; before, each worker wrote every one
        as long as the header it echoed.
    '''
    with _serve( '--stateless', '--workers', '2' ) as ( port, process ):
        assert process.stderr is not None
        # Read as it comes: a full pipe would stop the workers.
        reading = asyncio.create_task(
            asyncio.to_thread( process.stderr.read ) )
        async with httpx.AsyncClient( timeout = _BOUND ) as http:
            for _ in range( 250 ):
                response = await _initialize(
                    http, port, ( 'Origin', _ORIGIN ) )
                assert response.status_code == 403 # noqa: PLR2004
        process.send_signal( signal.SIGTERM )
        stderr = await asyncio.wait_for( reading, _BOUND )
        await asyncio.to_thread( process.wait, _BOUND )
    lines = stderr.decode( 'utf-8' ).splitlines( )
    refusals = [ line for line in lines if 'Origin' in line ]
    assert 0 < len( refusals ) <= 200 # noqa: PLR2004
    assert all(
        line.startswith( 'invocables: warning: ' ) for line in refusals )
    assert all( len( line ) < 400 for line in lines ) # noqa: PLR2004


@pytest.mark.asyncio
@pytest.mark.slow
async def test_200_sessions_maximum( ):
    ''' With ``--sessions-maximum 2``, a third session is refused (503)
        while two are open, and served once one of them is deleted.
    '''
    with _serve( '--sessions-maximum', '2' ) as ( port, _ ):
        async with httpx.AsyncClient( timeout = _BOUND ) as http:
            opened = [ await _initialize( http, port ) for _ in range( 2 ) ]
            assert all( response.status_code == 200 for response in opened )
            refused = await _initialize( http, port )
            assert refused.status_code == 503 # noqa: PLR2004
            identifier = opened[ 0 ].headers[ 'mcp-session-id' ]
            deleted = await http.delete(
                f"http://127.0.0.1:{port}/mcp", headers = {
                    'Authorization': f"Bearer {_TOKEN}",
                    'Mcp-Session-Id': identifier,
                    'Mcp-Protocol-Version': '2025-06-18' } )
            assert deleted.status_code == 200 # noqa: PLR2004
            accepted = await _initialize( http, port )
            assert accepted.status_code == 200 # noqa: PLR2004


@pytest.mark.asyncio
@pytest.mark.slow
async def test_210_session_idle_timeout( ):
    ''' With ``--session-idle-timeout 1``, a session without requests is
        closed: the one session which ``--sessions-maximum 1`` allows
        makes room for another, and its identifier is unknown (404).
    '''
    with _serve(
        '--sessions-maximum', '1', '--session-idle-timeout', '1'
    ) as ( port, _ ):
        async with httpx.AsyncClient( timeout = _BOUND ) as http:
            first = await _initialize( http, port )
            assert first.status_code == 200 # noqa: PLR2004
            loop = asyncio.get_running_loop( )
            deadline = loop.time( ) + _BOUND
            while True: # refused while the first is open
                response = await _initialize( http, port )
                if response.status_code == 200: break # noqa: PLR2004
                assert response.status_code == 503 # noqa: PLR2004
                assert loop.time( ) < deadline, "the session stayed open."
                await asyncio.sleep( 0.2 )
            ping = await http.post(
                f"http://127.0.0.1:{port}/mcp",
                json = { 'jsonrpc': '2.0', 'id': 2, 'method': 'ping' },
                headers = {
                    'Accept': serving_support.ACCEPT,
                    'Authorization': f"Bearer {_TOKEN}",
                    'Mcp-Session-Id': first.headers[ 'mcp-session-id' ],
                    'Mcp-Protocol-Version': '2025-06-18' } )
            assert ping.status_code == 404 # noqa: PLR2004


@pytest.mark.slow
@pytest.mark.parametrize(
    'option', ( '--sessions-maximum', '--session-idle-timeout' ) )
def test_220_session_options_refused_stateless( option: str ):
    ''' The options of sessions with ``--stateless`` are a usage error
        (status 2), in one line naming the option.
    '''
    completion = subprocess.run(
        _produce_command( 0, '--stateless', option, '3' ),
        env = serving_support.produce_environment( SERVE_TOKEN = _TOKEN ),
        capture_output = True, text = True, timeout = _BOUND, check = False )
    assert completion.returncode == 2 # noqa: PLR2004
    assert option in completion.stderr
    assert len( completion.stderr.strip( ).splitlines( ) ) == 1


@pytest.mark.slow
@pytest.mark.parametrize( ( 'option', 'value' ), (
    ( '--sessions-maximum', '0' ),
    ( '--sessions-maximum', 'many' ),
    ( '--session-idle-timeout', '-1' ),
    ( '--session-idle-timeout', 'inf' ),
) )
def test_230_session_options_invalid( option: str, value: str ):
    ''' A bound of sessions which is not a positive number is a usage
        error of the command line, naming the option.
    '''
    completion = subprocess.run(
        _produce_command( 0, option, value ),
        env = serving_support.produce_environment( SERVE_TOKEN = _TOKEN ),
        capture_output = True, text = True, timeout = _BOUND, check = False )
    assert completion.returncode == 2 # noqa: PLR2004
    assert option in completion.stderr


@pytest.mark.parametrize( 'keywords', (
    { 'sessions_maximum': 0 },
    { 'sessions_maximum': True },
    { 'sessions_maximum': 2.5 },
    { 'session_idle_timeout': 0 },
    { 'session_idle_timeout': float( 'inf' ) },
    { 'session_idle_timeout': '30' },
) )
def test_240_application_refuses_bad_bounds( keywords: dict[ str, Any ] ):
    ''' produce_application refuses bounds of sessions which are not
        positive numbers with a configuration error naming them.
    '''
    server = serving.ToolServer( [ ] )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        serving.produce_application( server, **keywords )
    assert next( iter( keywords ) ) in str( caught.value )
