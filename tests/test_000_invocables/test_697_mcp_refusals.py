# SPDX-License-Identifier: Apache-2.0

''' Requests an MCP server refuses with its token (401, 403 with
    ``insufficient_scope``), against a real HTTP server on 127.0.0.1: the
    library's authorization failure names the status and the scope of the
    server's ``WWW-Authenticate`` challenge.
'''


import asyncio
import contextlib
import json
import threading

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

import invocables.mcp

from invocables import exceptions
from invocables.mcp import authorization

from . import mcp_support


pytestmark = pytest.mark.asyncio
_BOUND = 30.0
_SECRET = 'scoped-secret-value-77'
_SCOPED = 'Bearer error="insufficient_scope", scope="files:write"'


class _Guard( BaseHTTPRequestHandler ):
    ''' Protected resource with its own authorization server: every MCP
        request with a token is refused with ``challenge``; one without a
        token gets 401 naming the resource metadata.
    '''

    challenge = _SCOPED
    status = 403

    def log_message( self, format, *arguments ): pass # noqa: A002

    def do_GET( self ):
        parts = urlsplit( self.path )
        base = self.server.base
        if parts.path.startswith( '/.well-known/oauth-protected-resource' ):
            return self._answer( 200, {
                'resource': f"{base}/mcp",
                'authorization_servers': [ base ] } )
        if parts.path.startswith( '/.well-known/oauth-authorization-server' ):
            return self._answer( 200, {
                'issuer': base,
                'authorization_endpoint': f"{base}/authorize",
                'token_endpoint': f"{base}/token",
                'registration_endpoint': f"{base}/register",
                'response_types_supported': [ 'code' ],
                'grant_types_supported': [
                    'authorization_code', 'client_credentials',
                    'refresh_token' ],
                'code_challenge_methods_supported': [ 'S256' ],
                'token_endpoint_auth_methods_supported': [
                    'client_secret_basic', 'client_secret_post', 'none' ],
            } )
        if parts.path == '/authorize':
            query = parse_qs( parts.query )
            location = query[ 'redirect_uri' ][ 0 ] + '?' + urlencode( {
                'code': 'code-1', 'state': query[ 'state' ][ 0 ] } )
            self.send_response( 302 )
            self.send_header( 'Location', location )
            self.send_header( 'Content-Length', '0' )
            self.end_headers( )
            return None
        return self._answer( 404, { 'error': 'not_found' } )

    def do_POST( self ):
        length = int( self.headers.get( 'Content-Length', 0 ) )
        body = self.rfile.read( length )
        path = urlsplit( self.path ).path
        if path == '/token':
            self.server.tokens += 1
            return self._answer( 200, {
                'access_token': f"at-{self.server.tokens}",
                'token_type': 'Bearer', 'expires_in': 3600,
                'scope': 'mcp' } )
        if path == '/register':
            data = json.loads( body )
            return self._answer( 201, {
                **data, 'client_id': 'registered-1' } )
        if path == '/mcp':
            if not self.headers.get( 'Authorization' ):
                base = self.server.base
                return self._answer( 401, { 'error': 'unauthorized' }, (
                    'Bearer resource_metadata="'
                    f'{base}/.well-known/oauth-protected-resource/mcp"' ) )
            self.server.refusals += 1
            return self._answer( self.status, { 'error': 'refused' },
                                 self.challenge )
        return self._answer( 404, { 'error': 'not_found' } )

    def do_DELETE( self ): self._answer( 405, { } )

    def _answer( self, status, data, challenge = None ):
        content = json.dumps( data ).encode( )
        self.send_response( status )
        self.send_header( 'Content-Type', 'application/json' )
        self.send_header( 'Content-Length', str( len( content ) ) )
        if challenge: self.send_header( 'WWW-Authenticate', challenge )
        self.end_headers( )
        self.wfile.write( content )


@contextlib.contextmanager
def _guard( status = 403, challenge = _SCOPED ):
    handler = type(
        'Handler', ( _Guard, ), {
            'status': status, 'challenge': challenge } )
    server = ThreadingHTTPServer( ( '127.0.0.1', 0 ), handler )
    server.daemon_threads = True
    host, port = server.server_address
    server.base = f"http://{host}:{port}"
    server.tokens = 0
    server.refusals = 0
    thread = threading.Thread( target = server.serve_forever, daemon = True )
    thread.start( )
    try: yield server
    finally:
        server.shutdown( )
        server.server_close( )
        thread.join( )


async def _connect_refused( ensemble ):
    with pytest.raises( exceptions.AuthorizationFailure ) as caught:
        await asyncio.wait_for( ensemble.connect( ), _BOUND )
    assert not ensemble.is_connected( )
    return str( caught.value )


async def test_100_bearer_insufficient_scope( monkeypatch ):
    ''' A static token refused 403 with ``insufficient_scope``: the
        authorization failure names the server, 403, the error and the
        scope, and not the token.

        Before, the connection failed with "Server returned an error
        response", naming neither the status nor the scope.
    '''
    monkeypatch.setenv( 'TEST_SCOPED_TOKEN', 'static-token-value-5' )
    with _guard( ) as server:
        ensemble = invocables.mcp.produce_ensemble(
            'files', url = f"{server.base}/mcp",
            authorization = authorization.BearerAuthorization(
                token = 'env:TEST_SCOPED_TOKEN' ) )
        message = await _connect_refused( ensemble )
    assert "'files'" in message
    assert '403' in message and 'insufficient_scope' in message
    assert 'files:write' in message
    assert 'static-token-value-5' not in message


@pytest.mark.parametrize( ( 'status', 'challenge', 'expected' ), (
    ( 401, 'Bearer error="invalid_token", error_description="expired"',
      ( '401', 'invalid_token', 'expired' ) ),
    ( 403, 'Bearer realm="x", error=insufficient_scope, '
           'scope="files:read files:write"',
      ( '403', 'insufficient_scope', 'files:read files:write' ) ),
    ( 403, 'Bearer error="insufficient_scope", '
           'error_description="Required scope: files:write"',
      ( '403', 'insufficient_scope', 'Required scope: files:write' ) ),
    ( 403, '', ( '403', 'Forbidden' ) ),
) )
async def test_110_bearer_challenges( monkeypatch, status, challenge, expected ):
    ''' Other refusals of a static token name their status and what the
        challenge says (a token parameter, a description, or nothing).
    '''
    monkeypatch.setenv( 'TEST_SCOPED_TOKEN', 'static-token-value-5' )
    with _guard( status, challenge ) as server:
        ensemble = invocables.mcp.produce_ensemble(
            'files', url = f"{server.base}/mcp",
            authorization = authorization.BearerAuthorization(
                token = 'env:TEST_SCOPED_TOKEN' ) )
        message = await _connect_refused( ensemble )
    for part in expected: assert part in message, message


async def test_200_client_credentials_insufficient_scope( ):
    ''' Client credentials whose tokens lack a scope: after the SDK's
        step-up (a new token, asked with the scope), the request is still
        refused, and the authorization failure names 403 and the scope,
        and not the secret; tokens were requested a bounded number of
        times.
    '''
    with _guard( ) as server:
        ensemble = invocables.mcp.produce_ensemble(
            'files', url = f"{server.base}/mcp",
            authorization = authorization.ClientCredentialsAuthorization(
                client_id = 'svc', client_secret = _SECRET,
                storage = authorization.MemoryTokenStorage( ) ) )
        message = await _connect_refused( ensemble )
        assert 1 <= server.tokens <= 3
    assert "'files'" in message
    assert '403' in message and 'files:write' in message
    assert _SECRET not in message


async def test_210_code_grant_insufficient_scope( tmp_path ):
    ''' The code grant (the loopback listener) whose tokens lack a scope:
        the request is still refused after the user authorized, and the
        authorization failure names 403 and the scope.
    '''
    visits = [ ]

    async def opener( url ):
        visits.append( url )
        async with httpx2.AsyncClient( ) as client:
            answer = await client.get( url )
            await client.get( answer.headers[ 'location' ] )

    grant = authorization.produce_loopback_authorization(
        mcp_support.select_port( ), opener = opener, storage = tmp_path,
        timeout = _BOUND )
    with _guard( ) as server:
        ensemble = invocables.mcp.produce_ensemble(
            'files', url = f"{server.base}/mcp", authorization = grant )
        message = await _connect_refused( ensemble )
    assert "'files'" in message
    assert '403' in message and 'files:write' in message
    assert 1 <= len( visits ) <= 2


async def test_300_refused_during_call( monkeypatch ):
    ''' A tool call refused 403 with ``insufficient_scope`` once connected
        fails with the library's connection failure naming 403 and the
        scope; the next call reconnects and succeeds.
    '''
    monkeypatch.setenv( 'TEST_SCOPED_TOKEN', 'static-token-value-5' )
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'scoped_server.py', '--port', str( port ) )
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    with mcp_support.serve_http( command, port ) as url:
        async with invocables.mcp.produce_ensemble(
            'files', url = url,
            authorization = authorization.BearerAuthorization(
                token = 'env:TEST_SCOPED_TOKEN' )
        ) as ensemble:
            with pytest.raises( exceptions.ConnectionFailure ) as caught:
                await asyncio.wait_for(
                    ensemble.access_invoker( 'write' )( context, { } ),
                    _BOUND )
            contents = await asyncio.wait_for(
                ensemble.access_invoker( 'read' )( context, { } ), _BOUND )
    message = str( caught.value )
    assert "'files'" in message
    assert '403' in message and 'files:write' in message
    assert 'static-token-value-5' not in message
    assert contents[ 0 ].text == 'read'
