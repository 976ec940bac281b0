# SPDX-License-Identifier: Apache-2.0

''' A hostile authorization server and hostile credentials: token answers
    whose access token cannot go in a header (line breaks, NUL,
    non-ASCII, megabytes) or whose lifetime is no number, DPoP-bound ones
    too; servers which ask for a new DPoP nonce on every request, or send
    nonces out of syntax or of a giant size; a stored token of a damaged
    store; static bearer tokens, private keys and workloads' JWTs which
    are not what they seem. Each fails with the library's error, names no
    secret, keeps no token and ends; the flows run against a scripted
    server on 127.0.0.1 (resource, metadata and token endpoint in one),
    through the SDK's own client.
'''


import asyncio
import json
import logging

import pytest

import invocables.mcp

from invocables import descriptors, exceptions
from invocables.mcp import _grants, _oauth, _sdk, authorization


_BOUND = 60.0 # seconds: proves "does not hang"
_SECRET = 'client-secret-of-653'
_TOKEN_MARK = 'HOSTILE653'
_JWT = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJl'


class _Authority:
    ''' Resource, metadata and token endpoint on 127.0.0.1: the resource
        refuses every message (401, pointing at the metadata, or asking
        for a DPoP nonce), the token endpoint answers as scripted.
    '''

    def __init__(
        self, *, answer = None, headers = ( ), dpop = False,
        token_nonce = False, resource_nonce = False, endless = None,
        issuer = '', redirect = False, endpoint = None,
    ):
        self.answer, self.headers, self.dpop = answer, headers, dpop
        # Tail of the issuer the metadata name; token endpoint which
        # redirects to itself.
        self.issuer, self.redirect = issuer, redirect
        self.endpoint = endpoint # of tokens, instead of this one's
        self.token_nonce, self.resource_nonce = token_nonce, resource_nonce
        # Path whose answer never ends, and the pause between its pieces.
        self.endless = endless
        self.sent = 0
        self.requests = [ ]
        self.server = self.base = None

    async def __aenter__( self ):
        self.server = await asyncio.start_server(
            self._serve, '127.0.0.1', 0 )
        port = self.server.sockets[ 0 ].getsockname( )[ 1 ]
        self.base = f"http://127.0.0.1:{port}"
        return f"{self.base}/mcp"

    async def __aexit__( self, *exception ):
        self.server.close( )
        await self.server.wait_closed( )

    def count( self, path ):
        return sum( 1 for _, seen in self.requests if seen == path )

    async def _serve( self, reader, writer ):
        try:
            head = await reader.readuntil( b'\r\n\r\n' )
            lines = head.split( b'\r\n' )
            method, path, _ = lines[ 0 ].decode( ).split( ' ' )
            length = next( (
                int( line.split( b':' )[ 1 ] ) for line in lines[ 1 : ]
                if line.lower( ).startswith( b'content-length' ) ), 0 )
            await reader.readexactly( length )
        except ( OSError, ValueError, asyncio.IncompleteReadError ):
            writer.close( )
            return
        self.requests.append( ( method, path.split( '?' )[ 0 ] ) )
        if self.endless and path.startswith( self.endless[ 0 ] ):
            await self._drip( writer, *self.endless[ 1 : ] )
            return
        status, headers, body = self._answer( path, b'dpop:' in head.lower( ) )
        text = ''.join(
            f"{name}: {value}\r\n" for name, value in headers )
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"{text}Content-Length: {len( body )}\r\nConnection: close"
            "\r\n\r\n".encode( 'latin-1' ) + body )
        try: await writer.drain( )
        except OSError: pass
        writer.close( )

    async def _drip( self, writer, pause, status = 200 ):
        ''' Answers with a body of a gigabyte of JSON spaces, in pieces,
            until the client goes (with a redirect to itself: 307). '''
        writer.write(
            f"HTTP/1.1 {status} X\r\nLocation: {self.endless[ 0 ]}\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 1000000000\r\n\r\n{".encode( ) )
        piece = b' ' * ( 1 if pause else 65_536 )
        try:
            while self.sent < 1_000_000_000:
                writer.write( piece )
                await writer.drain( )
                self.sent += len( piece )
                if pause: await asyncio.sleep( pause )
        except OSError: pass
        finally: writer.close( )

    def _answer( self, path, proven ):
        base = self.base
        if path.startswith( '/.well-known/oauth-protected-resource' ):
            return 200, ( ), json.dumps( {
                'resource': f"{base}/mcp",
                'authorization_servers': [ base ] } ).encode( )
        if path.startswith( '/.well-known/oauth-authorization-server' ):
            metadata = {
                'issuer': f"{base}{self.issuer}",
                'token_endpoint': self.endpoint or f"{base}/token",
                'authorization_endpoint': f"{base}/authorize",
                'response_types_supported': [ 'code' ] }
            if self.dpop:
                metadata[ 'dpop_signing_alg_values_supported' ] = [ 'ES256' ]
            return 200, ( ), json.dumps( metadata ).encode( )
        if path == '/token':
            if self.redirect:
                return 307, ( ( 'Location', '/token' ), ), b'{}'
            if self.token_nonce:
                fresh = f"n-{len( self.requests )}"
                return 400, ( ( 'DPoP-Nonce', fresh ), ), (
                    b'{"error":"use_dpop_nonce"}' )
            body = self.answer
            if not isinstance( body, bytes ): body = json.dumps( body ).encode( )
            return 200, self.headers, body
        if path.startswith( '/.well-known' ): return 404, ( ), b'{}'
        if self.resource_nonce and proven:
            return 401, (
                ( 'WWW-Authenticate', 'DPoP error="use_dpop_nonce"' ),
                ( 'DPoP-Nonce', f"r-{len( self.requests )}" ) ), b'{}'
        return 401, ( ( 'WWW-Authenticate', (
            f'Bearer resource_metadata="{base}/.well-known/'
            'oauth-protected-resource"' ) ), ), b'{}'


def _assert_refused( outcome, text ):
    ''' Asserts that the outcome of a connection is a failure of
        authorization saying text, which, like the logs, names no token,
        and that no token is stored. '''
    failure, storage, logs = outcome
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert text in str( failure )
    assert _TOKEN_MARK not in str( failure ) + logs
    assert storage.tokens is None


async def _connect( authority, caplog, **options ):
    ''' Connects a client of client credentials to the authority (with
        the options of the ensemble given); returns the error raised, its
        storage and the text of every log record.
    '''
    storage = authorization.MemoryTokenStorage( )
    grant = authorization.ClientCredentialsAuthorization(
        client_id = 'svc', client_secret = _SECRET, storage = storage )
    caplog.set_level( logging.DEBUG )
    async with authority as url:
        ensemble = invocables.mcp.produce_ensemble(
            'hostile', url = url, authorization = grant, **options )
        try:
            with pytest.raises( exceptions.Omnierror ) as caught:
                await asyncio.wait_for( ensemble.connect( ), _BOUND )
        finally: await ensemble.disconnect( )
    logs = '\n'.join( caplog.text.splitlines( ) )
    return caught.value, storage, logs


def _token_answer( token, **fields ):
    return { 'access_token': token, 'token_type': 'Bearer', **fields }


_UNSENDABLE = (
    f"{_TOKEN_MARK}\r\nX-Injected: 1",
    f"{_TOKEN_MARK}\nsecond-line",
    f"{_TOKEN_MARK}\x00nul",
    f"{_TOKEN_MARK}\u00e9",
    f"{_TOKEN_MARK} with spaces",
    _TOKEN_MARK + 'A' * 70_000,
)


@pytest.mark.asyncio
@pytest.mark.parametrize( 'token', _UNSENDABLE )
async def test_100_unsendable_token_refused( token, caplog ):
    ''' An access token which cannot go in a header (line breaks, NUL,
        non-ASCII, spaces, too long) fails authorization, naming why and
        not the token; it is not stored, nor sent, nor logged. '''
    authority = _Authority( answer = _token_answer( token ) )
    failure, storage, logs = await _connect( authority, caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert 'cannot be sent in a header' in str( failure )
    assert _TOKEN_MARK not in str( failure )
    assert _TOKEN_MARK not in logs
    assert _SECRET not in str( failure )
    assert storage.tokens is None
    assert authority.count( '/token' ) == 1
    assert authority.count( '/mcp' ) == 1 # the first, unauthorized


@pytest.mark.asyncio
@pytest.mark.parametrize( 'lifetime', (
    b'9' * 400, b'NaN', b'Infinity', b'-Infinity', b'-' + b'9' * 30 ) )
async def test_110_unusable_lifetime_refused( lifetime, caplog ):
    ''' A lifetime (``expires_in``) beyond any clock, or no number, fails
        authorization with the library's error (the SDK overflowed), and
        the token is not stored. '''
    body = (
        b'{"access_token":"' + _TOKEN_MARK.encode( )
        + b'","token_type":"Bearer","expires_in":' + lifetime + b'}' )
    failure, storage, logs = await _connect(
        _Authority( answer = body ), caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert 'expires_in' in str( failure )
    assert _TOKEN_MARK not in str( failure )
    assert 'OverflowError' not in logs
    assert storage.tokens is None


@pytest.mark.asyncio
@pytest.mark.parametrize( 'body', (
    b'{"access_token":"' + _TOKEN_MARK.encode( )
    + b'-0123456789","token_type":"Bearer"}}',
    b'[{"access_token":"' + _TOKEN_MARK.encode( ) + b'-0123456789"}]',
    b'<html>' + _TOKEN_MARK.encode( ) + b'-0123456789</html>' ) )
async def test_115_token_answer_not_object( body, caplog ):
    ''' A token answer which is no JSON object (trailing text, a list,
        HTML) fails authorization saying so, and its text, token and all,
        reaches no log record (the SDK logged it). '''
    _assert_refused(
        await _connect( _Authority( answer = body ), caplog ),
        'not a JSON object' )


@pytest.mark.asyncio
async def test_120_bound_unsendable_token_refused( caplog ):
    ''' A DPoP-bound access token with a line break fails as a bearer one
        does: DPoP's own presentation of it is never tried. '''
    authority = _Authority(
        dpop = True, answer = {
            'access_token': f"{_TOKEN_MARK}\r\nq", 'token_type': 'DPoP' } )
    _assert_refused(
        await _connect( authority, caplog ), 'cannot be sent in a header' )


@pytest.mark.asyncio
async def test_130_nonce_on_every_token_request( caplog ):
    ''' An authorization server which asks for a new DPoP nonce on every
        token request is asked again once, then the flow fails with the
        status: a bounded number of token requests. '''
    authority = _Authority( dpop = True, token_nonce = True )
    failure, storage, _ = await _connect( authority, caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert '400' in str( failure )
    assert 2 <= authority.count( '/token' ) <= 4 # noqa: PLR2004
    assert storage.tokens is None


@pytest.mark.asyncio
async def test_140_nonce_on_every_resource_request( caplog ):
    ''' A resource server which asks for a new DPoP nonce on every request
        is asked again once per token: the flow ends, refused, after a
        bounded number of requests. '''
    authority = _Authority(
        dpop = True, resource_nonce = True,
        answer = { 'access_token': 'bound-653', 'token_type': 'DPoP' } )
    failure, _, _ = await _connect( authority, caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert 'use_dpop_nonce' in str( failure )
    assert len( authority.requests ) <= 12 # noqa: PLR2004


@pytest.mark.asyncio
@pytest.mark.parametrize( 'nonce', ( 'n' * 200_000, 'ab\x01cd', 'a"b' ) )
async def test_150_hostile_nonce_ignored( nonce, caplog ):
    ''' A nonce out of syntax is not used; one of a giant header fails
        the request as the HTTP client's, without hanging. '''
    authority = _Authority(
        dpop = True, headers = ( ( 'DPoP-Nonce', nonce ), ),
        answer = { 'access_token': 'bound-653', 'token_type': 'DPoP' } )
    failure, _, _ = await _connect( authority, caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert nonce[ : 40 ] not in str( failure )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'endless', (
    ( '/token', 0 ), ( '/.well-known/oauth-protected-resource', 0 ),
    ( '/.well-known/oauth-authorization-server', 0 ),
    ( '/token', 0, 307 ) ) )
async def test_160_endless_answer_bounded( endless, caplog ):
    ''' An answer of the flow (token, metadata) which never ends, or a
        redirect of the flow's (the SDK follows those within the origin)
        whose body never ends, is read no further than the bound (the SDK
        and the HTTP client would read a gigabyte): the flow fails naming
        the bound. '''
    authority = _Authority( endless = endless )
    failure, storage, _ = await _connect( authority, caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert str( _oauth.ANSWER_SIZE_MAXIMUM ) in str( failure )
    assert authority.sent < 100 * _oauth.ANSWER_SIZE_MAXIMUM
    assert storage.tokens is None


@pytest.mark.asyncio
async def test_170_dripping_answer_bounded( caplog ):
    ''' A token answer which drips a byte at a time, within each read's
        timeout, ends with the connection's deadline. '''
    authority = _Authority( endless = ( '/token', 0.05 ) )
    failure, storage, _ = await _connect(
        authority, caplog, connect_timeout = 2.0 )
    assert isinstance( failure, exceptions.ConnectionFailure ), failure
    assert "'hostile'" in str( failure )
    assert storage.tokens is None


@pytest.mark.asyncio
@pytest.mark.parametrize( 'pause', ( 0, 0.05 ) )
async def test_180_identity_provider_bounded( pause ):
    ''' The identity provider's answer to the token exchange is read no
        further than the bound, and within the flow's timeout in all,
        however it drips; with the SDK 1.x, enterprise authorization is
        refused when made. '''
    authority = _Authority( endless = ( '/token', pause ) )
    async with authority as url:
        grant = authorization.EnterpriseAuthorization(
            identity_token = 'id-token-653',
            identity_provider_token_endpoint = f"{authority.base}/token",
            issuer = authority.base, client_id = 'agent',
            client_secret = _SECRET,
            storage = authorization.MemoryTokenStorage( ) )
        if _sdk.MAJOR < 2: # noqa: PLR2004
            with pytest.raises( exceptions.ConfigurationInvalidity ):
                authorization.produce_auth( 'agent', grant, url )
            return
        provider = authorization.produce_auth(
            'agent', grant, url, timeout = 2.0 )
        with pytest.raises( exceptions.AuthorizationFailure ) as caught:
            await asyncio.wait_for(
                provider._assertion_provider( authority.base, url ),
                _BOUND )
    message = str( caught.value )
    if pause: assert 'in time' in message
    else: assert str( _oauth.ANSWER_SIZE_MAXIMUM ) in message
    assert 'id-token-653' not in message and _SECRET not in message
    assert authority.sent < 100 * _oauth.ANSWER_SIZE_MAXIMUM


@pytest.mark.asyncio
async def test_190_token_redirected_for_ever( caplog ):
    ''' A token endpoint which redirects to itself is followed a few
        times, then the flow fails: no loop. '''
    authority = _Authority( redirect = True )
    failure, storage, _ = await _connect( authority, caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert authority.count( '/token' ) <= 12 # noqa: PLR2004
    assert storage.tokens is None


@pytest.mark.asyncio
@pytest.mark.parametrize( ( 'named', 'size' ), (
    ( 'issuer', 500_000 ), ( 'endpoint', 60_000 ), ( 'endpoint', 500_000 ) ) )
async def test_195_giant_names_not_shown( named, size, caplog ):
    ''' Metadata which name another issuer, or a token endpoint which
        cannot be reached or is no URL (too long), of kilobytes of text,
        fail the flow with a message of a few words: the text is not in
        it, or in part. '''
    giant = '/' + 'Q' * size
    authority = _Authority( ** (
        { 'issuer': giant } if named == 'issuer'
        else { 'endpoint': f"http://127.0.0.1:9{giant}" } ) )
    failure, storage, _ = await _connect( authority, caplog )
    assert isinstance( failure, exceptions.AuthorizationFailure ), failure
    assert len( str( failure ) ) < 1000 # noqa: PLR2004
    assert storage.tokens is None


@pytest.mark.parametrize( 'token', _UNSENDABLE )
def test_200_static_token_refused( token, monkeypatch ):
    ''' A static bearer token which cannot go in a header, given or from
        the environment, is a configuration error when the auth is made,
        naming not the token; a sendable one makes the auth. '''
    grants = [ authorization.BearerAuthorization( token = token ) ]
    if '\x00' not in token: # the environment holds no NUL
        monkeypatch.setenv( 'STATIC_BEARER_653', token )
        grants.append( authorization.BearerAuthorization(
            token = 'env:STATIC_BEARER_653' ) )
    for grant in grants:
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            authorization.produce_auth(
                'static', grant, 'http://127.0.0.1:9/' )
        assert _TOKEN_MARK not in str( caught.value )
        assert _TOKEN_MARK not in repr( grant )
    grant = authorization.BearerAuthorization( token = 'good-token-653' )
    assert authorization.produce_auth(
        'static', grant, 'http://127.0.0.1:9/' ) is not None


@pytest.mark.asyncio
async def test_210_damaged_stored_token_ignored( ):
    ''' A stored access token which cannot go in a header (a damaged or
        forged store) is not handed to the flow, which then asks anew;
        a sound one is. '''
    from mcp.shared.auth import OAuthToken
    inner = authorization.MemoryTokenStorage( )
    storage = _oauth.RedactingStorage( inner )
    inner.tokens = OAuthToken(
        access_token = f"{_TOKEN_MARK}\r\nX: y", token_type = 'Bearer' )
    assert await storage.get_tokens( ) is None
    inner.tokens = OAuthToken(
        access_token = 'sound-token-653', token_type = 'Bearer' )
    assert ( await storage.get_tokens( ) ).access_token == 'sound-token-653'


_KEY_TEXTS = (
    'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC' + _TOKEN_MARK + 'derbase64==',
    f"{_TOKEN_MARK}\x00key",
    _TOKEN_MARK * 1000,
    f"~nobody-653-{_TOKEN_MARK}/key.pem",
)


@pytest.mark.parametrize( 'text', _KEY_TEXTS )
def test_300_private_key_text_hidden( text ):
    ''' Key text which is no PEM (DER in base64, a NUL, kilobytes) is
        taken for a file which cannot be read: a configuration error which
        shows no such text (a path is shown where it reads as one). '''
    grant = authorization.ClientCredentialsAuthorization(
        client_id = 'svc', private_key = text )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        authorization.produce_auth( 'keyed', grant, 'http://127.0.0.1:9/' )
    message = str( caught.value )
    if text.startswith( '~' ): assert text in message
    else: assert _TOKEN_MARK not in message
    assert 'cannot be read' in message
    assert _TOKEN_MARK not in repr( grant )


def test_310_pem_after_attributes( tmp_path ):
    ''' PEM text after attributes (as OpenSSL writes a key out of PKCS
        #12) is the key itself, never a path. '''
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    key = ec.generate_private_key( ec.SECP256R1( ) ).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption( ) ).decode( )
    text = f"Bag Attributes\n    localKeyID: 01 02\n{key}"
    grant = authorization.ClientCredentialsAuthorization(
        client_id = 'svc', private_key = text )
    assert authorization.produce_auth(
        'keyed', grant, 'http://127.0.0.1:9/' ) is not None


_ASSERTION_TEXTS = (
    f"eyJhbGciOi.eyJzdWIiOi.{_TOKEN_MARK}==",
    f"eyJhbGciOi.eyJzdWIiOi.{_TOKEN_MARK}.aXY.dGFn",
    f"{_TOKEN_MARK}\x00jwt",
    f"Bearer {_JWT}{_TOKEN_MARK}",
)


@pytest.mark.parametrize( 'text', _ASSERTION_TEXTS )
def test_400_workload_text_hidden( text ):
    ''' A workload's assertion which is no compact JWT (padded, encrypted,
        a NUL, a scheme before it) is shown in no repr and no error: it is
        taken for a file, which cannot be read. '''
    grant = authorization.WorkloadAuthorization( assertion = text )
    assert _TOKEN_MARK not in repr( grant )
    with pytest.raises( exceptions.AuthorizationFailure ) as caught:
        _grants._read_assertion( 'fleet', grant )
    assert _TOKEN_MARK not in str( caught.value )
    assert 'cannot be read' in str( caught.value )


def test_410_workload_paths_shown( tmp_path ):
    ''' Paths (absolute, from home, from here) and variables are shown in
        the repr, as before. '''
    for value in (
        str( tmp_path / 'workload.jwt' ), '~/workload.jwt', './w.jwt',
        'env:WORKLOAD_JWT',
    ):
        grant = authorization.WorkloadAuthorization( assertion = value )
        assert repr( value ) in repr( grant )


def test_420_workload_without_client( ):
    ''' A workload without a client ID (its authorization server asks for
        none) makes its auth under either SDK: no client ID goes in the
        form (the SDK 2.x refused to make the provider). '''
    for client in ( None, 'fleet' ):
        options = { } if client is None else { 'client_id': client }
        grant = authorization.WorkloadAuthorization(
            assertion = _JWT, **options )
        provider = authorization.produce_auth(
            'fleet', grant, 'http://127.0.0.1:9/mcp' )
        assert repr( provider ) == "OAuthProvider( ensemble = 'fleet' )"


@pytest.mark.parametrize( 'table', (
    f"kind = 'workload'\nassertion = 'eyJhbGciOi.eyJzdWIiOi.{_TOKEN_MARK}=='",
    f"kind = 'workload'\nassertion = 'eyJhbGciOi.eyJ.{_TOKEN_MARK}.aXY.dGFn'",
    "kind = 'client-credentials'\nclient_id = 'svc'\n"
    f"private_key = 'MIIEvQIBADANBgkqhkiG9w0B{_TOKEN_MARK}=='",
) )
def test_430_descriptor_credentials_hidden( table, tmp_path ):
    ''' A descriptor's credential which is not recognized as one (a padded
        or encrypted JWT, a key in DER) is taken for a file of the
        descriptor's folder: its path, which holds the credential, is
        shown in no repr and no error. '''
    path = tmp_path / 'server.toml'
    path.write_text(
        "[ensemble]\nname = 'secured'\n\n[mcp]\n"
        f"url = 'http://127.0.0.1:9/mcp'\n\n[mcp.authorization]\n{table}\n" )
    ensemble = descriptors.produce_ensemble(
        descriptors.produce_ensemble_descriptor( path ) )
    grant = ensemble.features.authorization
    assert _TOKEN_MARK not in repr( grant )
    with pytest.raises( exceptions.Omnierror ) as caught:
        if isinstance( grant, authorization.WorkloadAuthorization ):
            _grants._read_assertion( 'secured', grant )
        else: authorization.produce_auth( 'secured', grant, 'http://x/' )
    assert 'cannot be read' in str( caught.value )
    assert _TOKEN_MARK not in str( caught.value )
