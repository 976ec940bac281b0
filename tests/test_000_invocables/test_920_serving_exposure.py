# SPDX-License-Identifier: Apache-2.0

''' Serving over HTTP beyond the loopback: allowed hosts and origins, the
    token required unless refused explicitly, and the limits of
    connections (header timeout, idle timeout).
'''


import json
import logging
import socket
import subprocess
import sys
import time

from pathlib import Path

import pytest

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk

from . import mcp_support
from . import serving_support


_DATA = Path( __file__ ).parent.parent / 'data' / 'serving'
_CONFIGURATION = _DATA / 'local.toml'
_TOKEN = 'a-token-for-the-tests-only'


def _produce_environment( **extra: str ) -> dict[ str, str ]:
    return serving_support.produce_environment(
        servers = False, **{ 'SERVE_TOKEN': _TOKEN, **extra } )


def _run( command: list[ str ], port: int, **extra: str ):
    return serving_support.run(
        command, port, _produce_environment( **extra ),
        surveyed = False, name = 'server' )


def _serve_command( port: int, *arguments: str ) -> list[ str ]:
    return [
        sys.executable, '-m', 'invocables', 'serve',
        '--configuration', str( _CONFIGURATION ), '--http',
        '--port', str( port ), *arguments ]


def _uvicorn_command( port: int ) -> list[ str ]:
    return [
        sys.executable, '-m', 'uvicorn', '--factory',
        'invocables.serving:produce_application_from_environment',
        '--host', '127.0.0.1', '--port', str( port ),
        '--http', 'invocables.serving:HeaderTimeoutProtocol',
        '--log-level', 'warning' ]


async def _post( url: str, **headers: str ) -> int:
    async with sdk.http.AsyncClient( ) as http:
        answer = await http.post(
            url, json = serving_support.INITIALIZE,
            headers = { 'Accept': serving_support.ACCEPT, **headers } )
        return answer.status_code


def _await_close( port: int, data: bytes ) -> bytes:
    ''' Sends data on a new connection; returns what the server sends
        until it closes the connection (EOF). The socket's timeout only
        bounds a hang.
    '''
    received = b''
    with socket.create_connection( ( '127.0.0.1', port ), timeout = 30 ) as (
        connection
    ):
        if data: connection.sendall( data )
        while chunk := connection.recv( 4096 ): received += chunk
    return received


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_documented_factory_hosts( ):
    ''' The documented uvicorn deployment answers clients which give a
        configured public host name; a foreign host gets 421 and a
        foreign origin 403.
    '''
    port = mcp_support.select_port( )
    options = json.dumps( {
        'configuration': str( _CONFIGURATION ), 'stateless': True,
        'token_variable': 'SERVE_TOKEN',
        'allowed_hosts': [ 'mcp.example.com' ],
        'allowed_origins': [ 'https://app.example.com' ] } )
    url = f"http://127.0.0.1:{port}/mcp"
    bearer = f"Bearer {_TOKEN}"
    with _run(
        _uvicorn_command( port ), port, INVOCABLES_SERVE_OPTIONS = options
    ):
        assert await _post(
            url, Host = 'mcp.example.com', Authorization = bearer ) == 200
        assert await _post(
            url, Host = 'mcp.example.com:443', Authorization = bearer ) == 200
        assert await _post(
            url, Host = 'mcp.example.com', Authorization = bearer,
            Origin = 'https://mcp.example.com' ) == 200
        assert await _post(
            url, Host = 'mcp.example.com', Authorization = bearer,
            Origin = 'https://app.example.com' ) == 200
        assert await _post(
            url, Host = 'evil.example.net', Authorization = bearer ) == 421
        assert await _post(
            url, Host = 'mcp.example.com', Authorization = bearer,
            Origin = 'https://evil.example.net' ) == 403
        assert await _post( url, Host = 'mcp.example.com' ) == 401


def test_110_factory_refuses_public_host_without_token( ):
    ''' The factory refuses a public host without a token, naming the
        way to allow it; allowed explicitly, it warns.
    '''
    application = serving.ToolServer( [ ] )
    with pytest.raises( invocables.exceptions.ConfigurationInvalidity ) as (
        information
    ):
        serving.produce_application(
            application, allowed_hosts = [ 'mcp.example.com' ] )
    assert 'mcp.example.com' in str( information.value )
    with pytest.raises( invocables.exceptions.ConfigurationInvalidity ):
        serving.produce_application( application, host = '0.0.0.0' )


def test_120_unauthenticated_allowed_warns( caplog ):
    ''' Serving beyond the loopback without a token, allowed explicitly,
        logs a warning naming the hosts.
    '''
    with caplog.at_level( logging.WARNING, logger = 'invocables' ):
        serving.produce_application(
            serving.ToolServer( [ ] ), host = '0.0.0.0',
            allowed_hosts = [ 'mcp.example.com' ],
            allow_unauthenticated = True )
    messages = [ record.getMessage( ) for record in caplog.records ]
    assert any(
        'without a token' in message and 'mcp.example.com' in message
        for message in messages ), messages


@pytest.mark.asyncio
async def test_130_foreign_clients_refused_without_token( ):
    ''' Without a token, a client beyond the loopback is refused (403)
        whatever the address listened on; a loopback one is not.
    '''
    application = serving.produce_application( serving.ToolServer( [ ] ) )
    transport = sdk.http.ASGITransport(
        app = application, client = ( '192.0.2.7', 4000 ) )
    async with sdk.http.AsyncClient(
        transport = transport, base_url = 'http://127.0.0.1'
    ) as http:
        answer = await http.post(
            '/mcp', json = serving_support.INITIALIZE,
            headers = { 'Accept': serving_support.ACCEPT } )
    assert answer.status_code == 403


def test_200_serve_beyond_loopback_needs_token( ):
    ''' serve --host 0.0.0.0 without a token is refused in one line with
        status 2, naming --no-token; so is a public --allowed-host.
    '''
    for arguments in (
        ( '--host', '0.0.0.0' ),
        ( '--allowed-host', 'mcp.example.com' ),
    ):
        completion = subprocess.run(
            _serve_command( 0, *arguments ), env = _produce_environment( ),
            capture_output = True, text = True, timeout = 120, check = False )
        assert completion.returncode == 2, completion.stderr
        lines = completion.stderr.splitlines( )
        assert len( lines ) == 1, completion.stderr
        assert '--no-token' in lines[ 0 ]
        assert 'Traceback' not in completion.stderr


@pytest.mark.asyncio
@pytest.mark.slow
async def test_210_serve_no_token_warns_and_checks_hosts( ):
    ''' serve --host 0.0.0.0 --no-token serves with a warning; foreign
        Host and Origin headers are refused, allowed ones answered.
    '''
    port = mcp_support.select_port( )
    url = f"http://127.0.0.1:{port}/mcp"
    with _run(
        _serve_command(
            port, '--host', '0.0.0.0', '--no-token',
            '--allowed-host', 'mcp.example.com' ),
        port,
    ) as process:
        assert await _post( url ) == 200
        assert await _post( url, Host = 'mcp.example.com' ) == 200
        assert await _post( url, Host = 'evil.example.net' ) == 421
        assert await _post(
            url, Origin = 'http://evil.example.net' ) == 403
    assert process.stderr is not None
    stderr = process.stderr.read( ).decode( )
    assert 'warning' in stderr and 'without a token' in stderr, stderr


@pytest.mark.slow
@pytest.mark.parametrize( 'data', [
    b'', b'GET /mcp HT', b'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n' ] )
def test_300_header_timeout_closes( data ):
    ''' A connection which does not complete its request's headers is
        closed after the header timeout, without an answer.
    '''
    port = mcp_support.select_port( )
    with _run(
        _serve_command( port, '--header-timeout', '0.5' ), port
    ):
        started = time.monotonic( )
        assert _await_close( port, data ) == b''
        assert time.monotonic( ) - started < 25 # noqa: PLR2004


@pytest.mark.slow
def test_310_factory_header_timeout_and_idle( ):
    ''' Under uvicorn, the protocol class reads the header timeout from
        the options; a kept-alive connection which idles is closed after
        the idle timeout, once answered.
    '''
    port = mcp_support.select_port( )
    options = json.dumps( {
        'configuration': str( _CONFIGURATION ), 'header_timeout': 0.5 } )
    command = [ *_uvicorn_command( port ), '--timeout-keep-alive', '1' ]
    with _run( command, port, INVOCABLES_SERVE_OPTIONS = options ):
        assert _await_close( port, b'GET /mcp HTTP/1.1\r\nHo' ) == b''
        answer = _await_close(
            port, b'GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' )
        assert answer.startswith( b'HTTP/1.1 404' )


def test_400_protocol_configured( ):
    ''' produce_protocol gives uvicorn's HTTP/1.1 with the timeout. '''
    protocol = serving.produce_protocol( 2.5 )
    assert issubclass( protocol, serving.HeaderTimeoutProtocol )
    assert protocol.header_timeout == 2.5 # noqa: PLR2004
    assert serving.is_loopback( '127.0.0.2' )
    assert serving.is_loopback( '[::1]:8000' )
    assert serving.is_loopback( 'localhost' )
    assert not serving.is_loopback( '0.0.0.0' )
    assert not serving.is_loopback( 'mcp.example.com' )
