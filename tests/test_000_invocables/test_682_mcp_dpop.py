# SPDX-License-Identifier: Apache-2.0

''' Proofs of possession (DPoP, RFC 9449; MCP SEP-1932) of the OAuth
    flows: the proofs' header and claims, verified with PyJWT against the
    public key they carry, fresh on each request, bound to the access token
    (``ath``) and to the server's nonce; the URL they name; and the steps
    of a flow (metadata which advertise DPoP, token requests, token answers
    of type DPoP handed to the SDK as bearer ones, nonce challenges of the
    authorization and the resource servers), on real requests and answers
    of the SDK's HTTP client.
'''


import base64
import hashlib
import json
import time
import types

from typing import Any

import jwt
import pytest

from mcp.shared.auth import OAuthToken

from invocables.mcp import _dpop, _oauth, _sdk


_AS = 'http://127.0.0.1:9/token'
_RS = 'http://127.0.0.1:8/mcp'
_METADATA = 'http://127.0.0.1:9/.well-known/oauth-authorization-server'
_TOKEN = 'at-dpop-0123456789-abcdefghij'


def _decode( proof: str ) -> tuple[ dict[ str, Any ], dict[ str, Any ] ]:
    ''' Returns header and claims of a proof, verified with its key. '''
    header = jwt.get_unverified_header( proof )
    key = jwt.PyJWK( header[ 'jwk' ], algorithm = 'ES256' ).key
    claims = jwt.decode(
        proof, key, algorithms = [ 'ES256' ],
        options = { 'verify_aud': False } )
    return header, claims


def _produce_provider(
    prover: _dpop.Prover | None = None
) -> types.SimpleNamespace:
    ''' Returns what the DPoP steps use of an SDK provider. '''
    return types.SimpleNamespace( prover = prover )


def _produce_resource_request(
    token: str, scheme: str = 'Bearer'
) -> _sdk.http.Request:
    return _sdk.http.Request(
        'POST', _RS, json = { 'jsonrpc': '2.0', 'id': 1, 'method': 'x' },
        headers = { 'Authorization': f"{scheme} {token}" } )


def _produce_token_request( ) -> _sdk.http.Request:
    return _sdk.http.Request(
        'POST', _AS, data = { 'grant_type': 'authorization_code',
                             'code': 'c0de' },
        headers = { 'Content-Type': 'application/x-www-form-urlencoded' } )


def _produce_answer(
    request: _sdk.http.Request,
    status: int,
    body: object,
    headers: dict[ str, str ] | None = None,
) -> _sdk.http.Response:
    return _sdk.http.Response(
        status, json = body, headers = headers or { }, request = request )


def test_100_proof_verified( ):
    ''' A proof is a JWT of type dpop+jwt signed with ES256, which carries
        its public key (no private part) and verifies with it; its claims
        name a random identifier, the method, the URL and the time.
    '''
    prover = _dpop.Prover( )
    before = int( time.time( ) )
    proof = prover.produce_proof( 'post', 'https://as.example/token' )
    header, claims = _decode( proof )
    assert header[ 'typ' ] == 'dpop+jwt'
    assert header[ 'alg' ] == 'ES256'
    assert header[ 'jwk' ][ 'kty' ] == 'EC'
    assert header[ 'jwk' ][ 'crv' ] == 'P-256'
    assert 'd' not in header[ 'jwk' ]
    assert claims[ 'htm' ] == 'POST'
    assert claims[ 'htu' ] == 'https://as.example/token'
    assert before <= claims[ 'iat' ] <= int( time.time( ) )
    assert len( claims[ 'jti' ] ) >= 16 # noqa: PLR2004
    assert 'ath' not in claims
    assert 'nonce' not in claims


def test_110_proof_refused_with_other_key( ):
    ''' A proof does not verify with another prover's key: each provider
        has its own key, the same for all its proofs.
    '''
    first, second = _dpop.Prover( ), _dpop.Prover( )
    proof = first.produce_proof( 'POST', _AS )
    assert jwt.get_unverified_header( proof )[ 'jwk' ] == dict( first.jwk )
    assert jwt.get_unverified_header(
        first.produce_proof( 'GET', _RS ) )[ 'jwk' ] == dict( first.jwk )
    assert dict( first.jwk ) != dict( second.jwk )
    other = jwt.PyJWK( dict( second.jwk ), algorithm = 'ES256' ).key
    with pytest.raises( jwt.InvalidSignatureError ):
        jwt.decode( proof, other, algorithms = [ 'ES256' ] )


def test_120_fresh_identifiers( ):
    ''' Each proof has its own identifier (jti), also for the same request
        at the same second.
    '''
    prover = _dpop.Prover( )
    identifiers = {
        _decode( prover.produce_proof( 'POST', _RS ) )[ 1 ][ 'jti' ]
        for _ in range( 50 ) }
    assert len( identifiers ) == 50 # noqa: PLR2004


def test_130_token_digest( ):
    ''' A proof for a request presenting an access token names the token's
        SHA-256 digest in base64url without padding (ath), not the token.
    '''
    prover = _dpop.Prover( )
    proof = prover.produce_proof( 'POST', _RS, token = _TOKEN )
    _, claims = _decode( proof )
    expected = base64.urlsafe_b64encode(
        hashlib.sha256( _TOKEN.encode( ) ).digest( ) ).rstrip( b'=' )
    assert claims[ 'ath' ] == expected.decode( )
    assert '=' not in claims[ 'ath' ]
    assert _TOKEN not in proof
    assert _TOKEN not in json.dumps( claims )


def test_140_nonce( ):
    ''' A proof carries the server's nonce when one is given. '''
    prover = _dpop.Prover( )
    _, claims = _decode( prover.produce_proof(
        'POST', _AS, nonce = 'n-0ce' ) )
    assert claims[ 'nonce' ] == 'n-0ce'


@pytest.mark.parametrize( ( 'url', 'expected' ), (
    ( 'https://as.example/token?x=1#frag', 'https://as.example/token' ),
    ( 'HTTPS://AS.Example/Token', 'https://as.example/Token' ),
    ( 'https://as.example:443/token', 'https://as.example/token' ),
    ( 'http://as.example:80/token', 'http://as.example/token' ),
    ( 'https://as.example:8443/token', 'https://as.example:8443/token' ),
    ( 'http://127.0.0.1:8000/mcp?session=1', 'http://127.0.0.1:8000/mcp' ),
    ( 'https://as.example', 'https://as.example/' ),
    ( 'https://user:word@as.example/t', 'https://as.example/t' ),
    ( 'http://[::1]:9/token', 'http://[::1]:9/token' ),
) )
def test_150_url_normalized( url: str, expected: str ):
    ''' The URL a proof names (htu) has no query, fragment or user
        information, its scheme and host in lower case, no default port,
        at least the root path; the path keeps its case.
    '''
    assert _dpop.normalize_url( url ) == expected
    _, claims = _decode( _dpop.Prover( ).produce_proof( 'GET', url ) )
    assert claims[ 'htu' ] == expected


def test_160_key_hidden( ):
    ''' The prover's representation shows neither key nor tokens. '''
    prover = _dpop.Prover( )
    prover.bound.append( _dpop.produce_digest( _TOKEN ) )
    assert repr( prover ) == 'Prover( *** )'
    assert str( prover ) == 'Prover( *** )'


@pytest.mark.asyncio
@pytest.mark.parametrize( ( 'algorithms', 'advertised' ), (
    ( [ 'ES256' ], True ),
    ( [ 'RS256', 'ES256' ], True ),
    ( [ 'RS256' ], False ),
    ( [ ], False ),
    ( None, False ),
) )
async def test_200_advertisement(
    algorithms: list[ str ] | None, advertised: bool
):
    ''' The provider's key is made when the authorization server's metadata
        advertise ES256 for DPoP, and not otherwise; token requests carry
        proofs only then.
    '''
    provider = _produce_provider( )
    request = _sdk.http.Request( 'GET', _METADATA )
    body: dict[ str, object ] = {
        'issuer': 'http://127.0.0.1:9', 'token_endpoint': _AS }
    if algorithms is not None:
        body[ 'dpop_signing_alg_values_supported' ] = algorithms
    answer = _produce_answer( request, 200, body )
    assert await _dpop.adapt_answer(
        provider, request, object( ), answer ) is answer
    assert ( provider.prover is not None ) == advertised
    token_request = _dpop.prepare_request(
        provider, _produce_token_request( ), object( ) )
    assert ( 'dpop' in token_request.headers ) == advertised


def test_210_token_requests( ):
    ''' A token request is a form with a grant type (a refresh too); a
        registration (JSON) or a metadata request is not, and gets no
        proof.
    '''
    assert _dpop.is_token_request( _produce_token_request( ) )
    refresh = _sdk.http.Request(
        'POST', _AS, data = { 'grant_type': 'refresh_token',
                             'refresh_token': 'rt' } )
    assert _dpop.is_token_request( refresh )
    registration = _sdk.http.Request(
        'POST', 'http://127.0.0.1:9/register',
        json = { 'grant_type': 'x' } )
    assert not _dpop.is_token_request( registration )
    assert not _dpop.is_token_request(
        _sdk.http.Request( 'GET', _METADATA ) )
    provider = _produce_provider( _dpop.Prover( ) )
    _dpop.prepare_request( provider, registration, object( ) )
    assert 'dpop' not in registration.headers
    _dpop.prepare_request( provider, refresh, object( ) )
    _, claims = _decode( refresh.headers[ 'dpop' ] )
    assert claims[ 'htu' ] == _AS
    assert 'ath' not in claims


@pytest.mark.asyncio
async def test_220_bound_token_answer( ):
    ''' A token answer of type DPoP is handed to the SDK as a bearer token
        its model accepts, the token noted as bound (by digest) and hidden
        from logs; the resource request presenting it goes with the DPoP
        scheme and a proof naming its digest, fresh at each sending.
    '''
    prover = _dpop.Prover( )
    provider = _produce_provider( prover )
    request = _dpop.prepare_request(
        provider, _produce_token_request( ), object( ) )
    answer = _produce_answer( request, 200, {
        'access_token': _TOKEN, 'token_type': 'DPoP', 'expires_in': 60,
        'refresh_token': 'rt-dpop-0123456789' } )
    adapted = await _dpop.adapt_answer(
        provider, request, object( ), answer )
    token = OAuthToken.model_validate_json( adapted.content )
    assert token.access_token == _TOKEN
    assert token.token_type == 'Bearer'
    assert token.refresh_token == 'rt-dpop-0123456789'
    assert prover.is_bound( _TOKEN )
    assert _TOKEN not in list( prover.bound )
    assert _TOKEN not in _oauth.redact_secrets( f"token {_TOKEN}" )
    resource = _produce_resource_request( _TOKEN )
    jtis = set( )
    for _ in range( 2 ):
        _dpop.prepare_request( provider, resource, resource )
        assert resource.headers[ 'authorization' ] == f"DPoP {_TOKEN}"
        _, claims = _decode( resource.headers[ 'dpop' ] )
        assert claims[ 'ath' ] == _dpop.produce_digest( _TOKEN )
        assert claims[ 'htm' ] == 'POST'
        assert claims[ 'htu' ] == _RS
        jtis.add( claims[ 'jti' ] )
    assert len( jtis ) == 2 # noqa: PLR2004


@pytest.mark.asyncio
async def test_230_bearer_token_answer( ):
    ''' A token answer of type Bearer (the server did not bind it) stays as
        it is, and its token goes with the Bearer scheme and no proof; so
        does any token without a prover.
    '''
    prover = _dpop.Prover( )
    provider = _produce_provider( prover )
    request = _dpop.prepare_request(
        provider, _produce_token_request( ), object( ) )
    answer = _produce_answer( request, 200, {
        'access_token': _TOKEN, 'token_type': 'Bearer' } )
    assert await _dpop.adapt_answer(
        provider, request, object( ), answer ) is answer
    assert not prover.is_bound( _TOKEN )
    for each in ( provider, _produce_provider( ) ):
        resource = _produce_resource_request( _TOKEN )
        _dpop.prepare_request( each, resource, resource )
        assert resource.headers[ 'authorization' ] == f"Bearer {_TOKEN}"
        assert 'dpop' not in resource.headers


@pytest.mark.asyncio
async def test_240_authorization_server_nonce( ):
    ''' A token request refused with use_dpop_nonce and a DPoP-Nonce is to
        be sent again; the next proof to that server carries the nonce,
        and one to the resource server does not.
    '''
    prover = _dpop.Prover( )
    provider = _produce_provider( prover )
    request = _dpop.prepare_request(
        provider, _produce_token_request( ), object( ) )
    assert 'nonce' not in _decode( request.headers[ 'dpop' ] )[ 1 ]
    answer = _produce_answer(
        request, 400, { 'error': 'use_dpop_nonce' },
        { 'DPoP-Nonce': 'as-nonce-1' } )
    assert await _dpop.register_nonce(
        provider, request, object( ), answer )
    _dpop.prepare_request( provider, request, object( ) )
    assert _decode( request.headers[ 'dpop' ] )[ 1 ][ 'nonce' ] == (
        'as-nonce-1' )
    prover.bound.append( _dpop.produce_digest( _TOKEN ) )
    resource = _produce_resource_request( _TOKEN )
    _dpop.prepare_request( provider, resource, resource )
    assert 'nonce' not in _decode( resource.headers[ 'dpop' ] )[ 1 ]
    refused = _produce_answer(
        request, 400, { 'error': 'invalid_grant' },
        { 'DPoP-Nonce': 'as-nonce-2' } )
    assert not await _dpop.register_nonce(
        provider, request, object( ), refused )


@pytest.mark.asyncio
async def test_250_resource_server_nonce( ):
    ''' A resource request refused with 401 and a DPoP challenge of error
        use_dpop_nonce is to be sent again, its proof with the nonce; a
        nonce in a successful answer is kept for the next proof without a
        retry; another 401 is no nonce challenge.
    '''
    prover = _dpop.Prover( )
    prover.bound.append( _dpop.produce_digest( _TOKEN ) )
    provider = _produce_provider( prover )
    resource = _produce_resource_request( _TOKEN )
    _dpop.prepare_request( provider, resource, resource )
    challenge = _produce_answer(
        resource, 401, { 'error': 'use_dpop_nonce' }, {
            'WWW-Authenticate': 'DPoP error="use_dpop_nonce", '
            'resource_metadata="http://127.0.0.1:8/.well-known/x"',
            'DPoP-Nonce': 'rs-nonce-1' } )
    assert await _dpop.register_nonce(
        provider, resource, resource, challenge )
    _dpop.prepare_request( provider, resource, resource )
    _, claims = _decode( resource.headers[ 'dpop' ] )
    assert claims[ 'nonce' ] == 'rs-nonce-1'
    assert claims[ 'ath' ] == _dpop.produce_digest( _TOKEN )
    token_request = _dpop.prepare_request(
        provider, _produce_token_request( ), object( ) )
    assert 'nonce' not in _decode( token_request.headers[ 'dpop' ] )[ 1 ]
    success = _produce_answer(
        resource, 200, { }, { 'DPoP-Nonce': 'rs-nonce-2' } )
    assert not await _dpop.register_nonce(
        provider, resource, resource, success )
    _dpop.prepare_request( provider, resource, resource )
    assert _decode( resource.headers[ 'dpop' ] )[ 1 ][ 'nonce' ] == (
        'rs-nonce-2' )
    other = _produce_answer(
        resource, 401, { }, {
            'WWW-Authenticate': 'DPoP error="invalid_token", '
            'error_description="not use_dpop_nonce"',
            'DPoP-Nonce': 'rs-nonce-3' } )
    assert not await _dpop.register_nonce(
        provider, resource, resource, other )


@pytest.mark.asyncio
async def test_260_no_proof_no_retry( ):
    ''' A request sent without a proof is not sent again for a nonce: the
        nonce challenge concerns proofs only.
    '''
    provider = _produce_provider( _dpop.Prover( ) )
    resource = _produce_resource_request( _TOKEN )
    challenge = _produce_answer(
        resource, 401, { }, {
            'WWW-Authenticate': 'DPoP error="use_dpop_nonce"',
            'DPoP-Nonce': 'rs-nonce-1' } )
    assert not await _dpop.register_nonce(
        provider, resource, resource, challenge )
    assert not await _dpop.register_nonce(
        _produce_provider( ), resource, resource, challenge )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'nonce', (
    'with space', 'quote"d', 'back\\slash', 'x' * 1025, 'caf\u00e9' ) )
async def test_270_nonce_out_of_syntax( nonce: str ):
    ''' A nonce out of the syntax of RFC 9449 (characters other than the
        visible ones less the quote and the backslash, or too long) is
        neither kept nor a reason to send the request again.
    '''
    prover = _dpop.Prover( )
    provider = _produce_provider( prover )
    request = _dpop.prepare_request(
        provider, _produce_token_request( ), object( ) )
    answer = _sdk.http.Response(
        400, json = { 'error': 'use_dpop_nonce' },
        headers = [ ( b'DPoP-Nonce', nonce.encode( ) ) ], request = request )
    assert not await _dpop.register_nonce(
        provider, request, object( ), answer )
    assert not prover.nonces
