# SPDX-License-Identifier: Apache-2.0

''' Proofs of possession (DPoP, RFC 9449; MCP SEP-1932) in the OAuth
    flows with MCP servers: when the authorization server's metadata
    advertise an algorithm of ours, each token request carries a proof,
    signed with a key made for the provider (never written anywhere), a
    token issued as DPoP-bound is presented with the ``DPoP`` scheme and a
    fresh proof on each request, and a server which asks for a nonce
    (``use_dpop_nonce``) is asked again once, with it.
'''


from base64 import urlsafe_b64encode as _urlsafe_b64encode
from secrets import token_urlsafe as _token_urlsafe
from urllib.parse import urlsplit as _urlsplit

import invocables.mcp.__ as __
import invocables.mcp._oauth as _oauth
import invocables.mcp._sdk as _sdk


ALGORITHM = 'ES256'
''' JWS algorithm of the proofs (ECDSA with P-256 and SHA-256). '''

_OK = 200
_BAD_REQUEST = 400
_UNAUTHORIZED = 401
_TOKEN_STATUSES = frozenset( ( 200, 201 ) )
_NONCE_ERROR = 'use_dpop_nonce'
_METADATA_NAMES = (
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
)
_NONCE_CHALLENGE = __.re.compile(
    r'''(?:^|[\s,])error\s*=\s*"?use_dpop_nonce"?(?:[\s,]|$)''' )
# A nonce as RFC 9449 writes it (NQCHAR), of a sane length.
_NONCE = __.re.compile( r'[\x21\x23-\x5b\x5d-\x7e]{1,1024}' )
_PORTS_DEFAULT = __.immut.Dictionary( { 'http': 80, 'https': 443 } )
# Headers of an answer which no longer fit once it is rewritten.
_HEADERS_STALE = frozenset( (
    'content-encoding', 'content-length', 'transfer-encoding' ) )
# Roles of servers, whose nonces are kept apart.
_AUTHORIZATION = 'authorization'
_RESOURCE = 'resource'
# Tokens remembered as bound (they rotate).
_BOUND_MAXIMUM = 16
# P-256 coordinates, in bytes.
_COORDINATE_SIZE = 32


class Prover( __.immut.Object ):
    ''' Key of one provider, the tokens bound to it and the latest nonce
        of each server; signs proofs (RFC 9449, section 4).
    '''

    def __init__( self ) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec
        self._key = ec.generate_private_key( ec.SECP256R1( ) )
        numbers = self._key.public_key( ).public_numbers( )
        self.jwk = __.immut.Dictionary( {
            'kty': 'EC', 'crv': 'P-256',
            'x': _encode( numbers.x.to_bytes( _COORDINATE_SIZE, 'big' ) ),
            'y': _encode( numbers.y.to_bytes( _COORDINATE_SIZE, 'big' ) ) } )
        # Digests (as 'ath') of the latest access tokens issued bound to
        # the key: the tokens themselves are not kept here.
        self.bound: __.collections.deque[ str ] = __.collections.deque(
            maxlen = _BOUND_MAXIMUM )
        # Latest nonce of each server, by role and origin.
        self.nonces: dict[ tuple[ str, str ], str ] = { }

    def __repr__( self ) -> str: return 'Prover( *** )'

    def is_bound( self, token: str ) -> bool:
        ''' Whether the access token was issued bound to the key. '''
        return produce_digest( token ) in self.bound

    def produce_proof(
        self,
        method: str,
        url: str,
        token: str | None = None,
        nonce: str | None = None,
    ) -> str:
        ''' Returns a fresh proof for a request: its method and URL
            (without query and fragment), the digest of the access token
            it presents, and the server's nonce.
        '''
        import jwt
        claims: dict[ str, __.typx.Any ] = {
            'jti': _token_urlsafe( 24 ),
            'htm': method.upper( ),
            'htu': normalize_url( url ),
            'iat': int( __.time.time( ) ) }
        if token is not None: claims[ 'ath' ] = produce_digest( token )
        if nonce is not None: claims[ 'nonce' ] = nonce
        return jwt.encode(
            claims, self._key, algorithm = ALGORITHM,
            headers = { 'typ': 'dpop+jwt', 'jwk': dict( self.jwk ) } )


async def adapt_answer(
    provider: __.typx.Any,
    outgoing: __.typx.Any,
    request: __.typx.Any,
    response: __.typx.Any,
) -> __.typx.Any:
    ''' Returns the answer to a request of a flow as the SDK accepts it,
        having made the provider's key if it is metadata which advertise
        DPoP, and registered the nonce it brings: a token issued as
        DPoP-bound (``token_type`` ``DPoP``), which the SDK's model
        refuses, is noted as bound and handed over as a bearer token;
        other answers, as they are.
    '''
    if await _is_advertisement( outgoing, response ) and (
        provider.prover is None
    ): provider.prover = Prover( )
    prover: Prover | None = provider.prover
    if prover is None or 'dpop' not in outgoing.headers: return response
    _record_nonce( prover, outgoing, request, response )
    if (
        outgoing is request or response.status_code not in _TOKEN_STATUSES
    ): return response
    answer = await _read_answer( response )
    if answer is None: return response
    token = answer.get( 'access_token' )
    kind = answer.get( 'token_type' )
    if not isinstance( token, str ) or not isinstance( kind, str ):
        return response
    if kind.lower( ) != 'dpop': return response
    _oauth.register_secrets( token, answer.get( 'refresh_token' ) )
    prover.bound.append( produce_digest( token ) )
    # A bearer token for the SDK: this provider presents it with its proof.
    answer[ 'token_type' ] = 'Bearer' # noqa: S105
    headers = [
        ( name, value ) for name, value in response.headers.items( )
        if name.lower( ) not in _HEADERS_STALE ]
    return _sdk.http.Response(
        response.status_code, headers = headers,
        content = __.json.dumps( answer ).encode( ), request = outgoing )


# Where a flow asks for a token is the OAuth flows' own knowledge.
is_token_request = _oauth.is_token_request


def normalize_url( url: str ) -> str:
    ''' Returns URL as a proof names it (``htu``): without query,
        fragment and user information; scheme and host in lower case;
        without the scheme's default port; at least the root path.
    '''
    parts = _urlsplit( url )
    scheme = parts.scheme.lower( )
    host = ( parts.hostname or '' ).lower( )
    if ':' in host: host = f"[{host}]"
    port = parts.port
    if port is not None and port != _PORTS_DEFAULT.get( scheme ):
        host = f"{host}:{port}"
    return f"{scheme}://{host}{parts.path or '/'}"


def prepare_request(
    provider: __.typx.Any, outgoing: __.typx.Any, request: __.typx.Any
) -> __.typx.Any:
    ''' Returns a request of a flow with a fresh proof: a token request,
        once the authorization server advertised DPoP, and the resource
        request which presents a DPoP-bound token, which then goes with
        the ``DPoP`` scheme.
    '''
    if outgoing is request:
        _prepare_resource( provider.prover, outgoing )
        return outgoing
    prover: Prover | None = provider.prover
    if prover is None or not is_token_request( outgoing ): return outgoing
    nonce = prover.nonces.get( _locate_server( _AUTHORIZATION, outgoing ) )
    outgoing.headers[ 'DPoP' ] = prover.produce_proof(
        outgoing.method, str( outgoing.url ), nonce = nonce )
    return outgoing


def produce_digest( token: str ) -> str:
    ''' Returns digest of an access token, as a proof names it (``ath``:
        SHA-256, base64url without padding).
    '''
    return _encode( __.hashlib.sha256( token.encode( ) ).digest( ) )


async def register_nonce(
    provider: __.typx.Any,
    outgoing: __.typx.Any,
    request: __.typx.Any,
    response: __.typx.Any,
) -> bool:
    ''' Registers the nonce a server sends (``DPoP-Nonce``) for the next
        proofs to it; returns whether the server refused the proof for
        want of it (``use_dpop_nonce``), so that the request is sent again.
    '''
    prover: Prover | None = provider.prover
    if prover is None or 'dpop' not in outgoing.headers: return False
    if not _record_nonce( prover, outgoing, request, response ): return False
    if outgoing is request:
        return response.status_code == _UNAUTHORIZED and bool(
            _NONCE_CHALLENGE.search(
                response.headers.get( 'www-authenticate', '' ) ) )
    if response.status_code != _BAD_REQUEST: return False
    answer = await _read_answer( response )
    return answer is not None and answer.get( 'error' ) == _NONCE_ERROR


def _encode( data: bytes ) -> str:
    return _urlsafe_b64encode( data ).rstrip( b'=' ).decode( 'ascii' )


async def _is_advertisement(
    request: __.typx.Any, response: __.typx.Any
) -> bool:
    ''' Whether an answer is an authorization server's metadata which
        advertise DPoP with the algorithm of the proofs (the SDK's model of
        the metadata has no such field).
    '''
    path: str = request.url.path
    if request.method != 'GET' or response.status_code != _OK or not any(
        name in path for name in _METADATA_NAMES
    ): return False
    metadata = await _read_answer( response )
    if metadata is None: return False
    algorithms = metadata.get( 'dpop_signing_alg_values_supported' )
    return isinstance( algorithms, list ) and ALGORITHM in algorithms


def _locate_server( role: str, request: __.typx.Any ) -> tuple[ str, str ]:
    ''' Returns role and origin of the server a request goes to. '''
    parts = _urlsplit( normalize_url( str( request.url ) ) )
    return role, f"{parts.scheme}://{parts.netloc}"


def _prepare_resource(
    prover: Prover | None, request: __.typx.Any
) -> None:
    ''' Presents a DPoP-bound token with its scheme and a fresh proof. '''
    if prover is None: return
    scheme, _, token = request.headers.get(
        'authorization', '' ).partition( ' ' )
    if scheme.lower( ) not in ( 'bearer', 'dpop' ): return
    token = token.strip( )
    if not token or not prover.is_bound( token ): return
    nonce = prover.nonces.get( _locate_server( _RESOURCE, request ) )
    request.headers[ 'Authorization' ] = f"DPoP {token}"
    request.headers[ 'DPoP' ] = prover.produce_proof(
        request.method, str( request.url ), token = token, nonce = nonce )


async def _read_answer(
    response: __.typx.Any
) -> dict[ str, __.typx.Any ] | None:
    ''' Returns JSON object of an answer; None for anything else. '''
    try: answer: object = __.json.loads( await response.aread( ) )
    except ValueError: return None
    if not isinstance( answer, dict ): return None
    return __.typx.cast( dict[ str, __.typx.Any ], answer )


def _record_nonce(
    prover: Prover,
    outgoing: __.typx.Any,
    request: __.typx.Any,
    response: __.typx.Any,
) -> bool:
    ''' Keeps the nonce of an answer (``DPoP-Nonce``), as the latest of
        its server; returns whether there was one (a value out of the
        syntax of nonces is none).
    '''
    nonce: str = response.headers.get( 'dpop-nonce', '' )
    if not _NONCE.fullmatch( nonce ): return False
    role = _RESOURCE if outgoing is request else _AUTHORIZATION
    prover.nonces[ _locate_server( role, outgoing ) ] = nonce
    return True
