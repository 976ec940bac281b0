# SPDX-License-Identifier: Apache-2.0

''' Helpers of the OAuth flows with MCP servers: ``env:`` references,
    secrets hidden from log records, failures explained without the
    values the server sent, and the bounds of each request of a flow.
'''


import errno as _errno
import os as _os
import stat as _stat

from urllib.parse import parse_qsl as _parse_qsl

import invocables.mcp.__ as __
import invocables.mcp.configuration as _configuration
import invocables.mcp.redaction as _redaction
import invocables.mcp._sdk as _sdk
import invocables.exceptions as _exceptions


ANSWER_SIZE_MAXIMUM = 1_048_576
''' Most bytes of an answer to a request of an OAuth flow (metadata,
    registration, token), which the SDK reads whole. '''
CREDENTIAL_SIZE_MAXIMUM = 65_536
''' Most bytes of a credential's file (a key, a workload's JWT). '''


_METADATA_PATHS = (
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
)

_OK = 200
_UNAUTHORIZED = 401
_FORBIDDEN = 403
_CHALLENGE_MAXIMUM = 4096
_CHALLENGE_VALUE_MAXIMUM = 200
_DESCRIPTION_MAXIMUM = 400
# Failures of the SDK's flows, by what their messages say, explained
# without the values the server sent (which may be megabytes).
_FLOW_FAILURES = (
    ( 'State parameter mismatch',
      "the redirect carried a wrong 'state' (not the one of this "
      "authorization request); authorize again from the start." ),
    ( 'issuer mismatch',
      "the authorization server's metadata name another issuer than "
      "the one expected ('issuer', or the server which the MCP server "
      "names); check 'issuer', or the servers' configuration." ),
)
# An access token as it can go in a header: visible ASCII (RFC 6750's
# b64token is narrower), of a length servers accept.
# A lifetime beyond this many seconds (some 290 billion years) is none.
_LIFETIME_MAXIMUM = 2 ** 63
# A credential's path, named in errors: absolute, from home or from here,
# printable, without spaces; other text may be the credential itself.
_PATH_SHOWN = __.re.compile( r'(?:/|~|\.{1,2}/)[\x21-\x7e]{0,1024}' )
# Within a path, what may be a credential taken for one (descriptors put
# their folder before it): a JOSE header (JWT, JWE), a DER key in base64,
# a long run of base64.
_CREDENTIAL_LIKE = __.re.compile(
    r'eyJ[A-Za-z0-9_-]{2,}\.|MII[A-Za-z0-9+/]{16,}|[A-Za-z0-9+=_-]{48,}' )

# A parameter of a challenge: name=token or name="quoted string".
# What a refused token request may say of itself: its status, and one of
# the error codes of RFC 6749 (section 5.2).
_TOKEN_ERRORS = frozenset( (
    'invalid_client', 'invalid_grant', 'invalid_request', 'invalid_scope',
    'unauthorized_client', 'unsupported_grant_type' ) )
_TOKEN_ERROR = __.re.compile( r'"error"\s*:\s*"([a-z_]{1,40})"' )
_TOKEN_STATUS = __.re.compile( r'\(([1-5][0-9]{2})\)' )
_CHALLENGE_PARAMETER = __.re.compile(
    r'([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))' )

# JWS algorithms of the elliptic curves of private keys.
_CURVES_ALGORITHMS = __.immut.Dictionary( {
    'secp256r1': 'ES256', 'secp384r1': 'ES384', 'secp521r1': 'ES512' } )


# Secrets hidden from log records, and the redactor which hides them.
_secrets: list[ str ] = [ ]
_redactor: list[ _redaction.Redactor ] = [ ]


class RedactingStorage:
    ''' Storage which hides every token it passes from log records. '''

    def __init__( self, storage: __.typx.Any ):
        self.storage = storage

    async def get_tokens( self ) -> __.typx.Any:
        ''' Returns stored tokens; none if the access token cannot be sent
            in a header (a damaged or forged store): a grant anew then.
        '''
        tokens = _register_holder( await self.storage.get_tokens( ) )
        token = getattr( tokens, 'access_token', None )
        if isinstance( token, str ) and not __.is_sendable_token( token ):
            return None
        return tokens

    async def set_tokens( self, tokens: __.typx.Any ) -> None:
        await self.storage.set_tokens( _register_holder( tokens ) )

    async def get_client_info( self ) -> __.typx.Any:
        return _register_holder( await self.storage.get_client_info( ) )

    async def set_client_info( self, client_info: __.typx.Any ) -> None:
        await self.storage.set_client_info( _register_holder( client_info ) )


async def bound_answer(
    ensemble: str,
    outgoing: __.typx.Any,
    request: __.typx.Any,
    response: __.typx.Any,
) -> __.typx.Any:
    ''' Returns an answer to a request of an OAuth flow, read as the SDK
        reads it, but no further than :py:data:`ANSWER_SIZE_MAXIMUM`
        bytes; raises authorization failure for a larger one. The answer to
        the request authorized (request) is the transport's, as it comes.
    '''
    if outgoing is request or hasattr( response, '_content' ):
        return response
    body = bytearray( )
    async with __.ctxl.aclosing( response.aiter_bytes( ) ) as pieces:
        async for piece in pieces:
            body.extend( piece )
            if len( body ) <= ANSWER_SIZE_MAXIMUM: continue
            await response.aclose( )
            raise _exceptions.AuthorizationFailure(
                ensemble, f"{_locate( response.request )} sent an answer "
                f"over {ANSWER_SIZE_MAXIMUM} bytes; check the server's "
                "OAuth configuration." )
    response._content = bytes( body ) # expose: as 'aread' leaves it
    return response


async def bound_flow(
    ensemble: str,
    flow: __.cabc.AsyncGenerator[ __.typx.Any, __.typx.Any ],
    request: __.typx.Any,
) -> __.cabc.AsyncGenerator[ __.typx.Any, __.typx.Any ]:
    ''' Drives an OAuth flow for a request (the SDK's, its redirects too):
        each answer to a request of the flow is read within bounds before
        the flow or the HTTP client reads it.
    '''
    try:
        outgoing = await flow.__anext__( )
        while True:
            response = yield outgoing
            outgoing = await flow.asend(
                await bound_answer( ensemble, outgoing, request, response ) )
    except StopAsyncIteration: return
    finally: await flow.aclose( )


def bound_request( request: __.typx.Any, timeout: float | None ) -> None:
    ''' Bounds one request of an OAuth flow by timeout (expose). '''
    if timeout is None: return
    request.extensions = {
        **request.extensions,
        'timeout': _sdk.http.Timeout( timeout ).as_dict( ) }


def describe_failure( exception: BaseException ) -> str:
    ''' Returns why a flow failed, without values the server sent. '''
    from mcp.client.auth.exceptions import (
        OAuthRegistrationError,
        OAuthTokenError,
    )
    from pydantic import ValidationError
    name = type( exception ).__name__
    text = str( exception )
    for marker, reason in _FLOW_FAILURES:
        if marker in text: return reason
    if isinstance( exception, ValidationError ):
        return (
            "the authorization server sent invalid metadata or an invalid "
            "answer; check the server's OAuth configuration." )
    if isinstance( exception, OAuthRegistrationError ):
        return f"client registration was refused ({name})."
    if isinstance( exception, OAuthTokenError ):
        return "the token request was refused ({reason}).".format(
            reason = _describe_token_refusal( text ) or name )
    if isinstance( exception, KeyError ):
        return "the authorization server's answer lacks a field."
    return describe_http_failure( exception ) or _bound_text(
        redact_secrets( f"{name}: {text}" ) )


def _describe_token_refusal( text: str ) -> str | None:
    ''' Returns status and error code (RFC 6749, section 5.2) of a refused
        token request, from the SDK's message; nothing else the server
        sent.
    '''
    status = _TOKEN_STATUS.search( text )
    code = _TOKEN_ERROR.search( text )
    words = [ status.group( 1 ) ] if status else [ ]
    if code and code.group( 1 ) in _TOKEN_ERRORS:
        words.append( code.group( 1 ) )
    return ' '.join( words ) or None


def describe_http_failure(
    exception: BaseException, request: __.typx.Any = None
) -> str | None:
    ''' Returns why an OAuth request failed on the wire (expose). '''
    if not isinstance( exception, _sdk.http.RequestError ): return None
    if request is None:
        try: request = exception.request
        except RuntimeError: request = None
    where = (
        'the authorization server' if request is None
        else _locate( request ) )
    if isinstance( exception, _sdk.http.TimeoutException ):
        return (
            f"{where} did not answer in time ({type( exception ).__name__}); "
            "check that the authorization server is up, or raise "
            "connect_timeout." )
    return (
        f"{where} could not be reached ({type( exception ).__name__}); "
        "check the server's URL and the network." )


def is_token_request( request: __.typx.Any ) -> bool:
    ''' Whether a request of a flow asks for a token (a form with a
        grant type, refresh included).
    '''
    if request.method != 'POST': return False
    kind: str = request.headers.get( 'content-type', '' )
    if not kind.startswith( 'application/x-www-form-urlencoded' ):
        return False
    try: form = dict( _parse_qsl( bytes( request.content ).decode( ) ) )
    except ( UnicodeDecodeError, RuntimeError ): return False
    return 'grant_type' in form


@__.ctxl.contextmanager
def note_stall(
    provider: __.typx.Any, outgoing: __.typx.Any, request: __.typx.Any
) -> __.cabc.Generator[ None, None, None ]:
    ''' Notes an OAuth request left unanswered when the flow is closed
        (its error is raised out of the flow, to the transport).
    '''
    try: yield
    except GeneratorExit:
        if outgoing is not request: provider.stalled = outgoing
        raise


async def observe_metadata(
    request: __.typx.Any, response: __.typx.Any
) -> tuple[ str, ... ]:
    ''' Returns why metadata are invalid, which the SDK skips silently
        (expose); nothing for valid ones and other requests.
    '''
    path: str = request.url.path
    if response.status_code != _OK or not path.startswith(
        _METADATA_PATHS
    ): return ( )
    from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
    from pydantic import ValidationError
    model: __.typx.Any = (
        ProtectedResourceMetadata
        if path.startswith( _METADATA_PATHS[ 0 ] ) else OAuthMetadata )
    try: model.model_validate_json( await response.aread( ) )
    except ValidationError:
        return ( (
            f"The metadata at {_locate( request )} are not valid "
            f"{model.__name__}; the client fell back to the default "
            "endpoints." ), )
    return ( )


def read_credential_file( value: str ) -> str:
    ''' Returns the text of a credential's file (``~`` expanded).

        Only a regular file (a link to one too) of at most
        :py:data:`CREDENTIAL_SIZE_MAXIMUM` bytes of UTF-8 is read: a pipe
        or a device would block the flow, or never end. Raises
        :py:class:`OSError` (``strerror`` says why) or
        :py:class:`UnicodeDecodeError` otherwise.
    '''
    try: path = __.Path( value ).expanduser( )
    except RuntimeError as exception: # '~name' of no user
        raise OSError( _errno.ENOENT, "no such home directory" ) from (
            exception )
    flags = _os.O_RDONLY | getattr( _os, 'O_NONBLOCK', 0 )
    try:
        descriptor = _os.open(
            path, flags | getattr( _os, 'O_CLOEXEC', 0 ) )
    except ValueError as exception: # a NUL in the value
        raise OSError( _errno.EINVAL, "not a file name" ) from exception
    try:
        status = _os.fstat( descriptor )
        if not _stat.S_ISREG( status.st_mode ):
            raise OSError( _errno.EINVAL, "not a regular file" )
        if status.st_size > CREDENTIAL_SIZE_MAXIMUM:
            raise OSError(
                _errno.EFBIG, "larger than a credential's "
                f"{CREDENTIAL_SIZE_MAXIMUM} bytes" )
        data = _os.read( descriptor, CREDENTIAL_SIZE_MAXIMUM + 1 )
    finally: _os.close( descriptor )
    return data[ : CREDENTIAL_SIZE_MAXIMUM ].decode( )


def describe_read_failure( value: str, exception: Exception ) -> str:
    ''' Returns why a credential's file cannot be read; names the file
        only if the value reads as a path (it may be a credential which
        was not recognized as one, a key or a JWT).
    '''
    reason = (
        exception.strerror if isinstance( exception, OSError )
        and exception.strerror else type( exception ).__name__ )
    if not is_path_shown( value ): return f"the file cannot be read ({reason})"
    try: path = str( __.Path( value ).expanduser( ) )
    except RuntimeError: path = value # '~name' of no user
    return f"the file {path!r} cannot be read ({reason})"


def infer_signing_algorithm( ensemble: str, key: str ) -> str:
    ''' Returns JWS algorithm of a PEM private key; raises configuration
        invalidity for text which is no private key.
    '''
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import (
        load_pem_private_key )
    try: loaded = load_pem_private_key( key.encode( ), password = None )
    except ( ValueError, TypeError ):
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {ensemble!r} authorization 'private_key'",
            "not an unencrypted PEM private key; give a PEM file or an "
            "environment variable holding one." ) from None
    if isinstance( loaded, rsa.RSAPrivateKey ): return 'RS256'
    if isinstance( loaded, ed25519.Ed25519PrivateKey ): return 'EdDSA'
    if isinstance( loaded, ec.EllipticCurvePrivateKey ):
        curve = loaded.curve.name
        if curve in _CURVES_ALGORITHMS: return _CURVES_ALGORITHMS[ curve ]
    raise _exceptions.ConfigurationInvalidity(
        f"MCP ensemble {ensemble!r} authorization 'private_key'",
        "a key of a kind without a known JWS algorithm; give "
        "'signing_algorithm'." )


def is_path_shown( value: str ) -> bool:
    ''' Whether a credential's value reads as a path, which may be shown:
        absolute, from home or from the current directory, printable, and
        nothing in it like a credential (a JWT, a key).
    '''
    return _PATH_SHOWN.fullmatch( value ) is not None and (
        _CREDENTIAL_LIKE.search( value ) is None )


async def post_form(
    ensemble: str,
    endpoint: str,
    form: dict[ str, str ],
    timeout: float | None,
) -> tuple[ int, object ]:
    ''' Posts form to an endpoint, within timeout in all (a default of 30
        seconds), its answer read within bounds; returns status and JSON
        answer (None for an answer which is not JSON).
    '''
    http: __.typx.Any = _sdk.http
    total = 30.0 if timeout is None else timeout
    async with http.AsyncClient( timeout = total ) as client:
        try:
            status, body = await __.asyncio.wait_for(
                _post_form( ensemble, client, endpoint, form ), total )
        except ( http.HTTPError, __.asyncio.TimeoutError ) as exception:
            raise _exceptions.AuthorizationFailure(
                ensemble, describe_http_failure( exception ) or (
                    "the identity provider did not answer in time; check "
                    "that it is up, or raise connect_timeout." )
            ) from None
    try: answer: object = __.json.loads( body )
    except ValueError: answer = None
    return status, answer


def presentify( value: __.Absential[ str ] ) -> str | None:
    return None if __.is_absent( value ) else value


def read_private_key( ensemble: str, value: str ) -> str:
    ''' Returns PEM text of a key: itself, from the environment
        (``env:NAME``) or from a file.
    '''
    # PEM text, perhaps after attributes (as OpenSSL writes them).
    if '-----BEGIN' in value: key = value
    elif value.startswith( _configuration.ENVIRONMENT_PREFIX ):
        key = resolve( ensemble, 'private_key', value )
    else:
        try: key = read_credential_file( value )
        except ( OSError, UnicodeDecodeError ) as exception:
            raise _exceptions.ConfigurationInvalidity(
                f"MCP ensemble {ensemble!r} authorization 'private_key'",
                "{reason}; give a readable PEM file or 'env:NAME'.".format(
                    reason = describe_read_failure(
                        value, exception ) ) ) from None
    register_secrets( key )
    return key


def redact_secrets( text: str ) -> str:
    for secret in sorted( _secrets, key = len, reverse = True ):
        text = text.replace( secret, _redaction.REDACTION )
    return text


def register_secrets( *values: str | None ) -> None:
    ''' Adds values to the secrets hidden from log records. '''
    fresh = [ value for value in values if value and value not in _secrets ]
    if not fresh: return
    _secrets.extend( fresh )
    # Keep only recent ones: tokens rotate.
    del _secrets[ : max( 0, len( _secrets ) - 64 ) ]
    redactor = _redaction.Redactor( _secrets )
    if _redactor: _redaction.deactivate_redactor( _redactor.pop( ) )
    _redaction.activate_redactor( redactor )
    _redactor.append( redactor )


def resolve( ensemble: str, label: str, value: str ) -> str:
    if not value.startswith( _configuration.ENVIRONMENT_PREFIX ): return value
    variable = value[ len( _configuration.ENVIRONMENT_PREFIX ) : ]
    found = _os.environ.get( variable )
    if found is None:
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {ensemble!r} authorization {label!r}",
            f"environment variable {variable!r} is not set; set it "
            "before connecting, or change the value." )
    return found


async def verify_token_answer(
    ensemble: str,
    outgoing: __.typx.Any,
    request: __.typx.Any,
    response: __.typx.Any,
) -> None:
    ''' Raises authorization failure for a token answer which is no JSON
        object (the SDK would log its text, tokens and all), or with an
        access token which cannot be sent in a header (control characters,
        line breaks, non-ASCII, too long) or a lifetime which is no number
        of seconds, before the SDK keeps it; hides its tokens from log
        records. Other answers (metadata, registration, refusals, the
        resource's) pass.
    '''
    if outgoing is request or response.status_code != _OK: return
    if not is_token_request( outgoing ): return
    try: answer: object = __.json.loads( await response.aread( ) )
    except ValueError: answer = None
    if not isinstance( answer, dict ):
        raise _exceptions.AuthorizationFailure(
            ensemble, "the authorization server's token answer is not a "
            "JSON object; check the server's token endpoint." )
    answer = __.typx.cast( dict[ str, object ], answer )
    token, lifetime = answer.get( 'access_token' ), answer.get( 'expires_in' )
    register_secrets( *(
        value for value in ( token, answer.get( 'refresh_token' ) )
        if isinstance( value, str ) ) )
    if isinstance( token, str ) and not __.is_sendable_token( token ):
        raise _exceptions.AuthorizationFailure(
            ensemble, "the authorization server issued an access token "
            "which cannot be sent in a header (control characters, "
            "non-ASCII or too long); check the server's token issuance." )
    if isinstance( lifetime, ( int, float ) ) and not (
        abs( lifetime ) < _LIFETIME_MAXIMUM
    ): # NaN too
        raise _exceptions.AuthorizationFailure(
            ensemble, "the authorization server issued a token with an "
            "unusable lifetime ('expires_in'); check the server's token "
            "issuance." )


def validate_token( ensemble: str, token: str ) -> str:
    ''' Returns a static bearer token; raises configuration invalidity
        for one which cannot be sent in a header.
    '''
    if __.is_sendable_token( token ): return token
    raise _exceptions.ConfigurationInvalidity(
        f"MCP ensemble {ensemble!r} authorization 'token'",
        "not a token which can be sent in a header (control characters, "
        "line breaks, non-ASCII or too long); check the value or the "
        "variable it comes from." )


def verify_answer( ensemble: str, response: __.typx.Any ) -> None:
    ''' Raises authorization failure for a message the server refused
        with its token (401, 403), naming the status and what the
        ``WWW-Authenticate`` challenge says (error, scope, description).

        Only messages (POST): the transport reports a refused GET stream
        or session end itself, and goes on without them.
    '''
    if response is None or response.request.method != 'POST': return
    status: int = response.status_code
    if status not in ( _UNAUTHORIZED, _FORBIDDEN ): return
    challenge = _parse_challenge(
        response.headers.get( 'www-authenticate', '' ) )
    error = challenge.get( 'error' )
    scope = challenge.get( 'scope' )
    description = challenge.get( 'error_description' )
    phrase = 'Unauthorized' if status == _UNAUTHORIZED else 'Forbidden'
    words = [ f"the server refused the request with {status} {phrase}" ]
    if error: words.append( f"({error})" )
    words[ -1 ] += ';'
    if scope: words.append( f"it requires scope {scope!r};" )
    if description: words.append( f"it says {description!r};" )
    words.append(
        "request that scope in the authorization's scope, or have it "
        "granted to this client." if error == 'insufficient_scope' or scope
        else "check the credentials and the server's access rules." )
    raise _exceptions.AuthorizationFailure( ensemble, ' '.join( words ) )


def _bound_text( text: str ) -> str:
    ''' Returns text of a server, printable and of a bounded length (a
        hostile one may send megabytes of control characters). '''
    text = ''.join(
        character for character in text if character.isprintable( ) )
    if len( text ) <= _DESCRIPTION_MAXIMUM: return text
    return f"{text[ : _DESCRIPTION_MAXIMUM ]}..."


def _locate( request: __.typx.Any ) -> str:
    ''' Returns URL of request without query or fragment, bounded (a
        hostile server names the URLs of its metadata). '''
    url = request.url
    return _bound_text(
        f"{url.scheme}://{url.netloc.decode( 'ascii' )}{url.path}" )


def _parse_challenge( header: str ) -> dict[ str, str ]:
    ''' Returns parameters of a ``WWW-Authenticate`` challenge (the first
        of each name), without control characters, each bounded.
    '''
    parameters: dict[ str, str ] = { }
    for found in _CHALLENGE_PARAMETER.finditer(
        header[ : _CHALLENGE_MAXIMUM ]
    ):
        name = found.group( 1 ).lower( )
        if name in parameters: continue
        quoted = found.group( 2 )
        value = (
            __.re.sub( r'\\(.)', r'\1', quoted ) if quoted is not None
            else found.group( 3 ) )
        value = ''.join(
            character for character in value if character.isprintable( ) )
        parameters[ name ] = redact_secrets(
            value[ : _CHALLENGE_VALUE_MAXIMUM ] )
    return parameters


def _register_holder( holder: __.typx.Any ) -> __.typx.Any:
    ''' Hides the secrets of tokens or of client information from log
        records; returns them.
    '''
    if holder is not None:
        register_secrets( *(
            getattr( holder, name, None ) for name in (
                'access_token', 'refresh_token', 'client_secret' ) ) )
    return holder


async def _post_form(
    ensemble: str,
    client: __.typx.Any,
    endpoint: str,
    form: dict[ str, str ],
) -> tuple[ int, bytes ]:
    ''' Returns status and body of the answer to a form, read within
        bounds. '''
    async with client.stream( 'POST', endpoint, data = form ) as response:
        await bound_answer( ensemble, response.request, None, response )
        return int( response.status_code ), response.content
