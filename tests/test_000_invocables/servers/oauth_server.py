# SPDX-License-Identifier: Apache-2.0

''' Protected MCP server with its own OAuth authorization server, built from
    the mcp SDK's server-side auth components, on 127.0.0.1.

    Authorization requests are approved at once (no login page): the
    authorization endpoint redirects to the client's redirect URI with a
    code. Options: ``--port N``; ``--lifetime S`` (seconds an access token
    lives); ``--audience URL`` (resource for which tokens are issued; a
    wrong one makes the server refuse them); ``--client ID:SECRET`` (a
    preregistered confidential client which may use the client credentials
    grant); ``--token-delay S`` (the token endpoint answers after S
    seconds); ``--invalid-metadata`` (the authorization server's metadata
    is not valid, and its endpoints are not at the default paths). Tools: ``whoami`` (client of the token),
    ``count_refreshes``, ``forget_tokens`` (the server forgets every
    access token: the next request gets 401), ``revoke_tokens`` (the
    server forgets every access and refresh token: refreshing fails).
'''


import argparse
import base64
import json
import secrets
import time

from typing import Any
from urllib.parse import parse_qs

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import (
    AuthSettings,
    ClientRegistrationOptions,
    RevocationOptions,
)
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class Provider:
    ''' In-memory authorization server which approves every request. '''

    def __init__(
        self, lifetime: int, audience: str | None, announced: int | None
    ):
        self.lifetime = lifetime
        self.announced = lifetime if announced is None else announced
        self.refreshes = 0
        self.audience = audience
        self.clients: dict[ str, OAuthClientInformationFull ] = { }
        self.codes: dict[ str, AuthorizationCode ] = { }
        self.access: dict[ str, AccessToken ] = { }
        self.refresh: dict[ str, RefreshToken ] = { }

    async def get_client( self, client_id: str ) -> Any:
        return self.clients.get( client_id )

    async def register_client( self, client_info: Any ) -> None:
        self.clients[ client_info.client_id ] = client_info

    async def authorize( self, client: Any, params: Any ) -> str:
        code = secrets.token_urlsafe( 24 )
        self.codes[ code ] = AuthorizationCode(
            code = code, scopes = params.scopes or [ 'mcp' ],
            expires_at = time.time( ) + 300, client_id = client.client_id,
            code_challenge = params.code_challenge,
            redirect_uri = params.redirect_uri,
            redirect_uri_provided_explicitly =
                params.redirect_uri_provided_explicitly,
            resource = params.resource )
        return construct_redirect_uri(
            str( params.redirect_uri ), code = code, state = params.state )

    async def load_authorization_code( self, client: Any, code: str ) -> Any:
        return self.codes.get( code )

    async def exchange_authorization_code(
        self, client: Any, code: Any
    ) -> OAuthToken:
        del self.codes[ code.code ]
        return self.issue( client.client_id, code.scopes, code.resource )

    async def load_refresh_token( self, client: Any, token: str ) -> Any:
        return self.refresh.get( token )

    async def exchange_refresh_token(
        self, client: Any, refresh_token: Any, scopes: list[ str ]
    ) -> OAuthToken:
        del self.refresh[ refresh_token.token ]
        self.refreshes += 1
        return self.issue(
            client.client_id, scopes or refresh_token.scopes,
            refresh_token.resource )

    async def load_access_token( self, token: str ) -> Any:
        access = self.access.get( token )
        if access is None: return None
        if access.expires_at is not None and access.expires_at < time.time( ):
            return None
        return access

    async def revoke_token( self, token: Any ) -> None:
        self.access.pop( token.token, None )
        self.refresh.pop( token.token, None )

    async def verify_token( self, token: str ) -> Any:
        return await self.load_access_token( token )

    def issue(
        self, client_id: str, scopes: list[ str ], resource: str | None
    ) -> OAuthToken:
        access = 'at-' + secrets.token_urlsafe( 24 )
        refresh = 'rt-' + secrets.token_urlsafe( 24 )
        resource = self.audience or resource
        self.access[ access ] = AccessToken(
            token = access, client_id = client_id, scopes = scopes,
            expires_at = int( time.time( ) ) + self.lifetime,
            resource = resource )
        self.refresh[ refresh ] = RefreshToken(
            token = refresh, client_id = client_id, scopes = scopes,
            resource = resource )
        return OAuthToken(
            access_token = access, token_type = 'Bearer',
            expires_in = self.announced, refresh_token = refresh,
            scope = ' '.join( scopes ) )


class ClientCredentialsGrant:
    ''' ASGI middleware which serves the client credentials grant, which
        the SDK's token endpoint lacks, for one preregistered client.
    '''

    def __init__( self, app: Any, provider: Provider, client: str ):
        self.app = app
        self.provider = provider
        self.client_id, _, self.secret = client.partition( ':' )

    async def __call__( self, scope: Any, receive: Any, send: Any ) -> None:
        if scope[ 'type' ] != 'http' or scope[ 'path' ] != '/token':
            await self.app( scope, receive, send )
            return
        body = b''
        while True:
            message = await receive( )
            body += message.get( 'body', b'' )
            if not message.get( 'more_body' ): break
        form = { k: v[ 0 ] for k, v in parse_qs( body.decode( ) ).items( ) }
        if form.get( 'grant_type' ) != 'client_credentials':
            await self.app( scope, _replay( body ), send )
            return
        headers = dict( scope[ 'headers' ] )
        basic = headers.get( b'authorization', b'' ).decode( )
        identity = form.get( 'client_id' ), form.get( 'client_secret' )
        if basic.startswith( 'Basic ' ):
            decoded = base64.b64decode( basic[ 6 : ] ).decode( )
            identity = tuple( decoded.split( ':', 1 ) )
        if identity != ( self.client_id, self.secret ):
            await _answer( send, 401, { 'error': 'invalid_client' } )
            return
        token = self.provider.issue(
            self.client_id, [ 'mcp' ], form.get( 'resource' ) )
        await _answer(
            send, 200, token.model_dump( exclude_none = True ) )


class Faults:
    ''' ASGI middleware which slows the token endpoint or serves invalid
        metadata of the authorization server.
    '''

    def __init__( self, app: Any, delay: float, invalid: bool ):
        self.app = app
        self.delay = delay
        self.invalid = invalid

    async def __call__( self, scope: Any, receive: Any, send: Any ) -> None:
        path = scope.get( 'path', '' )
        if scope[ 'type' ] == 'http' and path == '/token' and self.delay:
            import asyncio
            await asyncio.sleep( self.delay )
        if scope[ 'type' ] == 'http' and self.invalid and path.startswith(
            '/.well-known/oauth-authorization-server'
        ):
            await _answer( send, 200, {
                'issuer': 'not a url', 'response_types_supported': 42 } )
            return
        if self.invalid and path in ( '/register', '/token' ):
            # The endpoints are not where a client falls back to.
            await _answer( send, 404, { 'error': 'not_found' } )
            return
        await self.app( scope, receive, send )


def _replay( body: bytes ) -> Any:
    sent = False

    async def receive( ) -> Any:
        nonlocal sent
        if sent: return { 'type': 'http.disconnect' }
        sent = True
        return { 'type': 'http.request', 'body': body, 'more_body': False }

    return receive


async def _answer( send: Any, status: int, data: Any ) -> None:
    body = json.dumps( data ).encode( )
    await send( {
        'type': 'http.response.start', 'status': status,
        'headers': [
            ( b'content-type', b'application/json' ),
            ( b'cache-control', b'no-store' ) ] } )
    await send( { 'type': 'http.response.body', 'body': body } )


def main( ) -> None:
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--port', type = int, required = True )
    parser.add_argument( '--lifetime', type = int, default = 3600 )
    parser.add_argument( '--audience', default = None )
    parser.add_argument( '--client', default = None )
    parser.add_argument( '--announced', type = int, default = None )
    parser.add_argument( '--token-delay', type = float, default = 0.0 )
    parser.add_argument( '--invalid-metadata', action = 'store_true' )
    options = parser.parse_args( )
    base = f"http://127.0.0.1:{options.port}"
    provider = Provider(
        options.lifetime, options.audience, options.announced )
    server = MCPServer(
        'oauth', auth_server_provider = provider,
        auth = AuthSettings(
            issuer_url = base, resource_server_url = f"{base}/mcp",
            validate_token_resource = True,
            client_registration_options = ClientRegistrationOptions(
                enabled = True, valid_scopes = [ 'mcp' ],
                default_scopes = [ 'mcp' ] ),
            revocation_options = RevocationOptions( enabled = True ),
            required_scopes = [ 'mcp' ] ) )

    @server.tool( structured_output = False )
    def whoami( ) -> str:
        ''' Returns the client of the token. '''
        from mcp.server.auth.middleware.auth_context import (
            get_access_token )
        token = get_access_token( )
        return 'anonymous' if token is None else token.client_id

    @server.tool( structured_output = False )
    def count_refreshes( ) -> str:
        ''' Returns how many times tokens were refreshed. '''
        return str( provider.refreshes )

    @server.tool( structured_output = False )
    def forget_tokens( ) -> str:
        ''' Forgets every access token. '''
        provider.access.clear( )
        return 'forgotten'

    @server.tool( structured_output = False )
    def revoke_tokens( ) -> str:
        ''' Forgets every access and refresh token. '''
        provider.access.clear( )
        provider.refresh.clear( )
        return 'revoked'

    if options.client:
        client_id, _, secret = options.client.partition( ':' )
        provider.clients[ client_id ] = OAuthClientInformationFull(
            client_id = client_id, client_secret = secret,
            redirect_uris = None, grant_types = [ 'client_credentials' ],
            token_endpoint_auth_method = 'client_secret_basic',
            scope = 'mcp' )
    import uvicorn
    app: Any = server.streamable_http_app( )
    if options.client:
        app = ClientCredentialsGrant( app, provider, options.client )
    if options.token_delay or options.invalid_metadata:
        app = Faults( app, options.token_delay, options.invalid_metadata )
    uvicorn.run(
        app, host = '127.0.0.1', port = options.port, log_level = 'warning' )


if __name__ == '__main__': main( )
