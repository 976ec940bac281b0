# SPDX-License-Identifier: Apache-2.0

''' Authorization with HTTP MCP servers: OAuth 2.1 and bearer tokens.

    ``produce_ensemble( ..., authorization = ... )`` takes one of:

    * :py:class:`BearerAuthorization`: a static token (``env:NAME``);
    * :py:class:`ClientCredentialsAuthorization`: machine to machine;
    * :py:class:`CodeAuthorization`: authorization code with PKCE, server
      metadata discovery and dynamic client registration, through an
      application's redirect handler (shows or opens the authorization URL)
      and callback handler (returns the URL the browser was sent back to).
      :py:func:`produce_loopback_authorization` gives both, listening on
      127.0.0.1 for the redirect.

    The flows are the ``mcp`` SDK's (``OAuthClientProvider``). Tokens and
    client registrations are kept by a :py:class:`TokenStorage`; by default
    a file per server under the user's state directory, mode 0600. An
    expired token is refreshed; a token the server rejects (401) is
    refreshed once, then authorization starts again. Tokens and secrets
    never appear in reprs, errors or log records.
'''


import os as _os
import sys as _sys

from hmac import compare_digest as _compare_digest
from urllib.parse import parse_qs as _parse_qs
from urllib.parse import urlsplit as _urlsplit

from . import __
from . import _tokens
from . import configuration as _configuration
from . import redaction as _redaction
from . import sdk as _sdk
from .. import exceptions as _exceptions


LOOPBACK_PORT_DEFAULT = 33418
STATE_DIRECTORY_VARIABLE = 'INVOCABLES_STATE_DIRECTORY'

# A public client (PKCE, no secret), as the MCP specification advises.
_AUTH_METHOD_PUBLIC = 'none'
_METADATA_PATHS = (
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
)
_OK = 200
_QUERY_FIELDS_MAXIMUM = 64
_UNAUTHORIZED = 401
_FORBIDDEN = 403
_CHALLENGE_MAXIMUM = 4096
_CHALLENGE_VALUE_MAXIMUM = 200
# A parameter of a challenge: name=token or name="quoted string".
_CHALLENGE_PARAMETER = __.re.compile(
    r'([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))' )
_scribe = __.produce_scribe( __name__ )


class TokenStorage( __.typx.Protocol ):
    ''' Keeps tokens and client registration of one server.

        The ``mcp`` SDK's protocol: values are its ``OAuthToken`` and
        ``OAuthClientInformationFull`` models.
    '''

    async def get_tokens( self ) -> __.typx.Any: ...

    async def set_tokens( self, tokens: __.typx.Any ) -> None: ...

    async def get_client_info( self ) -> __.typx.Any: ...

    async def set_client_info( self, client_info: __.typx.Any ) -> None: ...


RedirectHandler: __.typx.TypeAlias = __.cabc.Callable[
    [ str ], __.cabc.Awaitable[ None ] ]
CallbackHandler: __.typx.TypeAlias = __.cabc.Callable[
    [ ], __.cabc.Awaitable[ str ] ]
Storage: __.typx.TypeAlias = TokenStorage | str | _os.PathLike[ str ]
Suspension: __.typx.TypeAlias = __.cabc.Callable[
    [ ], __.ctxl.AbstractContextManager[ None ] ]


class BearerAuthorization( __.immut.DataclassObject ):
    ''' Static bearer token, sent in the ``Authorization`` header.

        ``token`` is best written ``env:NAME``: it is read from the
        environment at connect time.
    '''

    token: str

    def __repr__( self ) -> str:
        return f"{type( self ).__name__}( token = {_show( self.token )} )"


class ClientCredentialsAuthorization( __.immut.DataclassObject ):
    ''' OAuth client credentials grant (machine to machine).

        The client authenticates with ``client_secret`` (best written
        ``env:NAME``), or with ``private_key`` (``private_key_jwt``: a JWT
        signed by the key, RFC 7523): a PEM key written ``env:NAME``, a path
        to a PEM file, or the PEM text itself. ``signing_algorithm`` follows
        the key (RS256, ES256, ES384, ES512, EdDSA) unless given.
    '''

    client_id: str
    client_secret: __.Absential[ str ] = __.absent
    scope: __.Absential[ str ] = __.absent
    issuer: __.Absential[ str ] = __.absent
    storage: __.Absential[ Storage ] = __.absent
    private_key: __.Absential[ str ] = __.absent
    signing_algorithm: __.Absential[ str ] = __.absent

    def __repr__( self ) -> str:
        credentials = ''.join(
            f", {label} = {_show( value )}" for label, value in (
                ( 'client_secret', self.client_secret ),
                ( 'private_key', self.private_key ) )
            if not __.is_absent( value ) )
        return (
            f"{type( self ).__name__}( client_id = {self.client_id!r}"
            f"{credentials} )" )


class CodeAuthorization( __.immut.DataclassObject ):
    ''' OAuth authorization code grant with PKCE, for a user.

        ``redirect_handler`` receives the authorization URL to show or open;
        ``callback_handler`` returns the URL (with ``code`` and ``state``)
        the browser was redirected to, at ``redirect_uri``.

        The client is registered dynamically, unless given: ``client_id``
        (and ``client_secret``, best written ``env:NAME``, for a
        confidential client) of a client registered beforehand, or
        ``client_metadata_url``, the HTTPS URL of a client ID metadata
        document, used as client ID by servers which accept such documents
        (others register the client dynamically).
    '''

    redirect_handler: RedirectHandler
    callback_handler: CallbackHandler
    redirect_uri: str
    scope: __.Absential[ str ] = __.absent
    client_name: str = __.package_name
    storage: __.Absential[ Storage ] = __.absent
    client_id: __.Absential[ str ] = __.absent
    client_secret: __.Absential[ str ] = __.absent
    client_metadata_url: __.Absential[ str ] = __.absent

    def __repr__( self ) -> str:
        client = (
            '' if __.is_absent( self.client_id )
            else f", client_id = {self.client_id!r}" )
        return (
            f"{type( self ).__name__}( redirect_uri = "
            f"{self.redirect_uri!r}{client} )" )


class EnterpriseAuthorization( __.immut.DataclassObject ):
    ''' Enterprise-managed authorization (cross-app access, SEP-990).

        The user's ``identity_token`` (an OpenID Connect ID token from the
        enterprise identity provider, best written ``env:NAME``) is
        exchanged at ``identity_provider_token_endpoint`` (RFC 8693) for an
        identity assertion grant (ID-JAG) addressed to the MCP server's
        authorization server, ``issuer``; the grant then buys an access
        token there (RFC 7523 JWT bearer grant), with the confidential
        client ``client_id`` and ``client_secret`` registered beforehand.
        ``identity_provider_client_id`` (and ``_secret``) authenticate the
        client at the identity provider, where it needs it. The issuer is
        configuration: the MCP server is never asked where to send the
        grant. Needs the ``mcp`` SDK 2.x.
    '''

    identity_token: str
    identity_provider_token_endpoint: str
    issuer: str
    client_id: str
    client_secret: str
    identity_provider_client_id: __.Absential[ str ] = __.absent
    identity_provider_client_secret: __.Absential[ str ] = __.absent
    scope: __.Absential[ str ] = __.absent
    storage: __.Absential[ Storage ] = __.absent

    def __repr__( self ) -> str:
        return (
            f"{type( self ).__name__}( issuer = {self.issuer!r}, "
            f"client_id = {self.client_id!r}, "
            f"identity_token = {_show( self.identity_token )} )" )


Authorization: __.typx.TypeAlias = (
    BearerAuthorization | ClientCredentialsAuthorization | CodeAuthorization
    | EnterpriseAuthorization )


class FileTokenStorage:
    ''' Keeps tokens of one server in a JSON file, mode 0600.

        The file lives in ``directory`` (default: ``$INVOCABLES_STATE_
        DIRECTORY``, else ``$XDG_STATE_HOME/invocables/mcp-tokens``, else
        ``~/.local/state/invocables/mcp-tokens``), named by a digest of the
        server's URL. The time a token expires is kept, so that a token
        loaded later is refreshed when due.

        The file is replaced atomically, through a unique temporary file
        beside it, by one process at a time (an advisory lock, where
        ``fcntl`` exists); a symbolic link at its path is never followed.
        A file which is not JSON, or holds invalid records, means no tokens
        (with a warning naming it): authorization starts again. A file which
        cannot be written is warned of; the process goes on without it.
    '''

    def __init__(
        self,
        url: str,
        directory: __.Absential[ str | _os.PathLike[ str ] ] = __.absent,
    ):
        location = (
            access_state_directory( ) if __.is_absent( directory )
            else __.Path( directory ) )
        digest = __.hashlib.sha256(
            _configuration.strip_url( url ).encode( ) ).hexdigest( )
        self.path = location / f"{digest[ : 24 ]}.json"

    def __repr__( self ) -> str:
        return f"{type( self ).__name__}( path = {str( self.path )!r} )"

    async def get_tokens( self ) -> __.typx.Any:
        from mcp.shared.auth import OAuthToken
        record = ( await self._read( ) ).get( 'tokens' )
        if not isinstance( record, dict ): return None
        record = dict( __.typx.cast( dict[ str, __.typx.Any ], record ) )
        expiry = record.pop( 'expires_at', None )
        if isinstance( expiry, ( int, float ) ):
            record[ 'expires_in' ] = max( 0, int( expiry - __.time.time( ) ) )
        return self._validate( OAuthToken, record, 'tokens' )

    async def set_tokens( self, tokens: __.typx.Any ) -> None:
        record = tokens.model_dump( mode = 'json', exclude_none = True )
        if tokens.expires_in is not None:
            record[ 'expires_at' ] = __.time.time( ) + int( tokens.expires_in )
            record.pop( 'expires_in' )
        await self._write( 'tokens', record )

    async def get_client_info( self ) -> __.typx.Any:
        from mcp.shared.auth import OAuthClientInformationFull
        record = ( await self._read( ) ).get( 'client' )
        if not isinstance( record, dict ): return None
        return self._validate(
            OAuthClientInformationFull, record, 'client registration' )

    async def set_client_info( self, client_info: __.typx.Any ) -> None:
        await self._write( 'client', client_info.model_dump(
            mode = 'json', exclude_none = True ) )

    async def _read( self ) -> dict[ str, __.typx.Any ]:
        return await __.asyncio.to_thread(
            _tokens.retrieve_records, self.path )

    def _validate(
        self, model: __.typx.Any, record: __.typx.Any, label: str
    ) -> __.typx.Any:
        from pydantic import ValidationError
        try: return model.model_validate( record )
        except ValidationError:
            _scribe.warning(
                "Token file %s holds an invalid %s; it is ignored.",
                self.path, label )
            return None

    async def _write( self, key: str, value: __.typx.Any ) -> None:
        # In a thread: the lock may be held by another process a moment.
        try:
            await __.asyncio.to_thread(
                _tokens.update_records, self.path, key, value )
        except OSError as exception:
            # The tokens still serve this process: it goes on without.
            _scribe.warning(
                "Token file %s cannot be written (%s); its %s are kept in "
                "memory only.", self.path, type( exception ).__name__, key )


class MemoryTokenStorage:
    ''' Keeps tokens in memory only: each process authorizes anew. '''

    def __init__( self ) -> None:
        self.tokens: __.typx.Any = None
        self.client: __.typx.Any = None

    def __repr__( self ) -> str:
        return f"{type( self ).__name__}( )"

    async def get_tokens( self ) -> __.typx.Any: return self.tokens

    async def set_tokens( self, tokens: __.typx.Any ) -> None:
        self.tokens = tokens

    async def get_client_info( self ) -> __.typx.Any: return self.client

    async def set_client_info( self, client_info: __.typx.Any ) -> None:
        self.client = client_info


class LoopbackRedirect:
    ''' Receives the OAuth redirect on 127.0.0.1, for the command line.

        The redirect handler notes the ``state`` of the authorization URL,
        listens, and prints the URL (to standard error, or through
        ``opener``); the callback handler waits for the browser's request
        to ``redirect_uri`` which carries that ``state``, and answers it
        with a short page. A request with another ``state`` (or none) is
        answered 400 and ignored: the listener waits on for the right one,
        until its ``timeout``.
    '''

    def __init__(
        self,
        port: int = LOOPBACK_PORT_DEFAULT,
        opener: __.Absential[ RedirectHandler ] = __.absent,
        timeout: float = 300.0,
    ):
        self.port = port
        self.opener = opener
        self.timeout = timeout
        self.redirect_uri = f"http://127.0.0.1:{port}/callback"
        self.refusals = 0 # expose: redirects refused for their state
        self._server: __.asyncio.Server | None = None
        self._received: __.asyncio.Future[ str ] | None = None
        self._state: str | None = None

    async def redirect( self, url: str ) -> None:
        ''' Listens for the redirect, then shows the authorization URL. '''
        self._state = _access_query_value( url, 'state' )
        self.refusals = 0
        await self._listen( )
        if __.is_absent( self.opener ):
            print(
                f"Open this URL to authorize access:\n{url}",
                file = _sys.stderr, flush = True )
        else: await self.opener( url )

    async def receive( self ) -> str:
        ''' Returns URL of the redirect, once the browser sent it. '''
        await self._listen( )
        received = __.typx.cast( __.asyncio.Future[ str ], self._received )
        try:
            return await __.asyncio.wait_for(
                __.asyncio.shield( received ), self.timeout )
        except __.asyncio.TimeoutError:
            refused = (
                f" ({self.refusals} with a wrong 'state' were refused)"
                if self.refusals else '' )
            raise TimeoutError(
                f"No redirect of this authorization request arrived within "
                f"{self.timeout} seconds{refused}." ) from None
        finally: await self._close( )

    async def _listen( self ) -> None:
        if self._server is not None: return
        loop = __.asyncio.get_running_loop( )
        self._received = loop.create_future( )
        self._server = await __.asyncio.start_server(
            self._serve, '127.0.0.1', self.port )

    async def _close( self ) -> None:
        server, self._server = self._server, None
        if server is None: return
        server.close( )
        await server.wait_closed( )

    def _judge( self, target: str ) -> tuple[ bytes, bytes ]:
        ''' Returns status and page for a request target; takes the
            redirect of this authorization request.
        '''
        parts = _urlsplit( target )
        if parts.path != '/callback':
            return b'404 Not Found', b'Not found.'
        states = _parse_query( parts.query ).get( 'state', [ ] )
        expected = self._state
        if expected is not None and not (
            len( states ) == 1
            and _compare_digest( states[ 0 ].encode( ), expected.encode( ) )
        ):
            self.refusals += 1
            return b'400 Bad Request', (
                b'This redirect does not belong to the pending authorization '
                b'request (wrong state); it is ignored.' )
        received = self._received
        if received is not None and not received.done( ):
            received.set_result( f"http://127.0.0.1:{self.port}{target}" )
        return b'200 OK', (
            b'Authorization received; you may close this window.' )

    async def _serve(
        self,
        reader: __.asyncio.StreamReader,
        writer: __.asyncio.StreamWriter,
    ) -> None:
        try:
            line = await __.asyncio.wait_for( reader.readline( ), 10 )
            parts = line.decode( 'latin-1' ).split( )
            target = parts[ 1 ] if len( parts ) > 1 else '/'
            status, body = self._judge( target )
            writer.write(
                b'HTTP/1.1 ' + status + b'\r\nContent-Type: text/plain\r\n'
                b'Content-Length: ' + str( len( body ) ).encode( )
                + b'\r\nConnection: close\r\n\r\n' + body )
            await writer.drain( )
        except ( OSError, ValueError, __.asyncio.TimeoutError ): pass
        finally: writer.close( )


def access_state_directory( ) -> __.Path:
    ''' Returns directory of stored tokens of the current user. '''
    explicit = _os.environ.get( STATE_DIRECTORY_VARIABLE )
    if explicit: return __.Path( explicit )
    base = _os.environ.get( 'XDG_STATE_HOME' ) or str(
        __.Path.home( ) / '.local' / 'state' )
    return __.Path( base ) / __.package_name / 'mcp-tokens'


def produce_auth(
    ensemble: str,
    authorization: Authorization,
    url: str,
    timeout: float | None = None,
    suspension: Suspension = __.ctxl.nullcontext,
) -> __.typx.Any:
    ''' Returns an ``httpx2.Auth`` (SDK 1.x: ``httpx.Auth``) for URL.

        Each request of an OAuth flow (discovery, registration, token) is
        allowed ``timeout`` seconds, if given. The user's time at the
        redirect and callback handlers of the code grant is spent within
        ``suspension`` (which stops the connect deadline). Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` if an
        ``env:`` reference names an unset variable.
    '''
    match authorization:
        case BearerAuthorization( ):
            token = _resolve( ensemble, 'token', authorization.token )
            return _produce_bearer_auth( ensemble, token )
        case ClientCredentialsAuthorization( ):
            provider = _produce_credentials_auth(
                ensemble, authorization, url )
        case CodeAuthorization( ):
            provider = _produce_code_auth(
                ensemble, authorization, url, suspension )
        case EnterpriseAuthorization( ):
            provider = _produce_enterprise_auth(
                ensemble, authorization, url )
    provider.timeout = timeout # expose
    return provider


def produce_authorization_from_table(
    table: __.cabc.Mapping[ str, __.typx.Any ]
) -> Authorization:
    ''' Produces authorization from a checked ``[mcp.authorization]``.

        ``kind`` is 'bearer' (``token``), 'client-credentials'
        (``client_id``, ``client_secret`` or ``private_key`` with
        ``signing_algorithm``, ``scope``, ``issuer``), 'oauth' (the loopback
        code grant: ``port``, ``scope``, ``client_id``, ``client_secret``,
        ``client_metadata_url``) or 'enterprise' (the keys of
        :py:class:`EnterpriseAuthorization`); ``storage`` names a directory
        of tokens.
    '''
    values: dict[ str, __.typx.Any ] = {
        key: value for key, value in table.items( ) if key != 'kind' }
    if 'storage' in values:
        values[ 'storage' ] = __.Path( values[ 'storage' ] ).expanduser( )
    match table[ 'kind' ]:
        case 'bearer': return BearerAuthorization( **values )
        case 'client-credentials':
            return ClientCredentialsAuthorization( **values )
        case 'enterprise': return EnterpriseAuthorization( **values )
        case _:
            return produce_loopback_authorization(
                values.pop( 'port', LOOPBACK_PORT_DEFAULT ), **values )


def produce_loopback_authorization(
    port: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Port on 127.0.0.1 for the redirect. ''' )
    ] = LOOPBACK_PORT_DEFAULT,
    *,
    opener: __.typx.Annotated[
        __.Absential[ RedirectHandler ],
        __.ddoc.Doc(
            ''' Shows or opens the authorization URL; default: prints it
                to standard error. ''' ),
    ] = __.absent,
    scope: __.Absential[ str ] = __.absent,
    storage: __.Absential[ Storage ] = __.absent,
    timeout: __.typx.Annotated[
        float,
        __.ddoc.Doc( ''' Seconds to wait for the user's approval. ''' ),
    ] = 300.0,
    client_id: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Client registered beforehand. ''' ),
    ] = __.absent,
    client_secret: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Its secret, best ``env:NAME``. ''' ),
    ] = __.absent,
    client_metadata_url: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' HTTPS URL of a client ID metadata document. ''' ),
    ] = __.absent,
) -> CodeAuthorization:
    ''' Produces authorization code grant which listens on 127.0.0.1. '''
    loopback = LoopbackRedirect( port, opener, timeout )
    return CodeAuthorization(
        redirect_handler = loopback.redirect,
        callback_handler = loopback.receive,
        redirect_uri = loopback.redirect_uri, scope = scope,
        storage = storage, client_id = client_id,
        client_secret = client_secret,
        client_metadata_url = client_metadata_url )


def _access_storage(
    storage: __.Absential[ Storage ], url: str
) -> __.typx.Any:
    if __.is_absent( storage ): return FileTokenStorage( url )
    if isinstance( storage, ( str, _os.PathLike ) ):
        return FileTokenStorage( url, storage )
    return storage


def _produce_bearer_auth( ensemble: str, token: str ) -> __.typx.Any:
    class _BearerAuth( _sdk.http.Auth ):
        ''' Sends a static bearer token. '''

        def __repr__( self ) -> str: return '_BearerAuth( *** )'

        def auth_flow(
            self, request: _sdk.http.Request
        ) -> __.cabc.Generator[
            _sdk.http.Request, _sdk.http.Response, None
        ]:
            request.headers[ 'Authorization' ] = f"Bearer {token}"
            response = yield request
            _verify_answer( ensemble, response )

    _register_secrets( token )
    return _BearerAuth( )


def _produce_code_auth(
    ensemble: str,
    authorization: CodeAuthorization,
    url: str,
    suspension: Suspension,
) -> __.typx.Any:
    from mcp.shared.auth import OAuthClientMetadata

    async def redirect( url: str ) -> None:
        with suspension( ): await authorization.redirect_handler( url )

    async def receive( ) -> __.typx.Any:
        try:
            with suspension( ):
                redirect = await authorization.callback_handler( )
        except TimeoutError as exception:
            raise _exceptions.AuthorizationFailure(
                ensemble, f"{exception} Authorize again." ) from None
        query = _parse_qs( _urlsplit( redirect ).query )
        if 'error' in query:
            raise _exceptions.AuthorizationFailure(
                ensemble,
                "the authorization server refused: {error}.".format(
                    error = query[ 'error' ][ 0 ] ) )
        code = query.get( 'code', [ '' ] )[ 0 ]
        state = query.get( 'state', [ None ] )[ 0 ]
        _register_secrets( code )
        return _sdk.produce_code_result( code, state )

    metadata = OAuthClientMetadata(
        redirect_uris = [
            __.typx.cast( __.typx.Any, authorization.redirect_uri ) ],
        client_name = authorization.client_name,
        grant_types = [ 'authorization_code', 'refresh_token' ],
        response_types = [ 'code' ],
        token_endpoint_auth_method = _AUTH_METHOD_PUBLIC,
        scope = _presentify( authorization.scope ) )
    extras: dict[ str, __.typx.Any ] = { }
    if not __.is_absent( authorization.client_metadata_url ):
        extras[ 'client_metadata_url' ] = authorization.client_metadata_url
    provider_class = _produce_provider_class( )
    try:
        provider = provider_class(
            ensemble,
            server_url = url, client_metadata = metadata,
            storage = _RedactingStorage(
                _access_storage( authorization.storage, url ) ),
            redirect_handler = redirect,
            callback_handler = receive, **extras )
    except ValueError as exception:
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {ensemble!r} authorization "
            "'client_metadata_url'",
            f"{exception} Give the HTTPS URL where the client ID metadata "
            "document is served." ) from None
    provider.client_fixed = _produce_client_information(
        ensemble, authorization )
    return provider


def _produce_client_information(
    ensemble: str, authorization: CodeAuthorization
) -> __.typx.Any:
    ''' Returns client information of a client registered beforehand, as
        the SDK keeps it; None for a client to register.

        A client with a secret authenticates with HTTP basic
        authentication (which authorization servers must accept).
    '''
    if __.is_absent( authorization.client_id ):
        if not __.is_absent( authorization.client_secret ):
            raise _exceptions.ConfigurationInvalidity(
                f"MCP ensemble {ensemble!r} authorization 'client_secret'",
                "a client secret without 'client_id'; give the client ID "
                "the secret belongs to." )
        return None
    from mcp.shared.auth import OAuthClientInformationFull
    secret = None
    if not __.is_absent( authorization.client_secret ):
        secret = _resolve(
            ensemble, 'client_secret', authorization.client_secret )
        _register_secrets( secret )
    return OAuthClientInformationFull(
        client_id = authorization.client_id, client_secret = secret,
        redirect_uris = [
            __.typx.cast( __.typx.Any, authorization.redirect_uri ) ],
        grant_types = [ 'authorization_code', 'refresh_token' ],
        response_types = [ 'code' ],
        token_endpoint_auth_method = (
            'client_secret_basic' if secret else _AUTH_METHOD_PUBLIC ) )


def _produce_credentials_auth(
    ensemble: str, authorization: ClientCredentialsAuthorization, url: str
) -> __.typx.Any:
    from mcp.client.auth.extensions import client_credentials
    import warnings
    secret, key = authorization.client_secret, authorization.private_key
    if __.is_absent( secret ) == __.is_absent( key ):
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {ensemble!r} authorization",
            "client credentials need 'client_secret' or 'private_key' "
            "(private_key_jwt), exactly one of them." )
    # SDK 1.x names the scope 'scopes'.
    scope = 'scope' if _sdk.MAJOR >= 2 else 'scopes' # noqa: PLR2004
    arguments: dict[ str, __.typx.Any ] = {
        'server_url': url, 'client_id': authorization.client_id,
        'storage': _RedactingStorage(
            _access_storage( authorization.storage, url ) ),
        'issuer': _presentify( authorization.issuer ),
        scope: _presentify( authorization.scope ) }
    if not __.is_absent( secret ):
        arguments[ 'client_secret' ] = _resolve(
            ensemble, 'client_secret', secret )
        _register_secrets( arguments[ 'client_secret' ] )
        base = client_credentials.ClientCredentialsOAuthProvider
    else:
        arguments[ 'assertion_provider' ] = _produce_assertion_provider(
            ensemble, authorization )
        base = client_credentials.PrivateKeyJWTOAuthProvider
    with warnings.catch_warnings( ):
        # Without an issuer, the SDK 2.x warns; the server's metadata then
        # names the authorization server, as in SDK 1.x.
        warnings.filterwarnings( 'ignore', message = r'Omitting `issuer`' )
        return _produce_provider_class( base )( ensemble, **arguments )


def _produce_assertion_provider(
    ensemble: str, authorization: ClientCredentialsAuthorization
) -> __.typx.Any:
    ''' Returns the SDK's signer of client assertions (private_key_jwt),
        with the key read and checked now.
    '''
    from mcp.client.auth.extensions.client_credentials import (
        SignedJWTParameters )
    key = _read_private_key(
        ensemble, __.typx.cast( str, authorization.private_key ) )
    algorithm = (
        _infer_signing_algorithm( ensemble, key )
        if __.is_absent( authorization.signing_algorithm )
        else authorization.signing_algorithm )
    parameters = SignedJWTParameters(
        issuer = authorization.client_id,
        subject = authorization.client_id,
        signing_key = key, signing_algorithm = algorithm )
    return parameters.create_assertion_provider( )


def _infer_signing_algorithm( ensemble: str, key: str ) -> str:
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
        if curve in _curves_algorithms: return _curves_algorithms[ curve ]
    raise _exceptions.ConfigurationInvalidity(
        f"MCP ensemble {ensemble!r} authorization 'private_key'",
        "a key of a kind without a known JWS algorithm; give "
        "'signing_algorithm'." )


_curves_algorithms = __.immut.Dictionary( {
    'secp256r1': 'ES256', 'secp384r1': 'ES384', 'secp521r1': 'ES512' } )


def _read_private_key( ensemble: str, value: str ) -> str:
    ''' Returns PEM text of a key: itself, from the environment
        (``env:NAME``) or from a file.
    '''
    if value.lstrip( ).startswith( '-----BEGIN' ): key = value
    elif value.startswith( _configuration.ENVIRONMENT_PREFIX ):
        key = _resolve( ensemble, 'private_key', value )
    else:
        path = __.Path( value ).expanduser( )
        try: key = path.read_text( )
        except ( OSError, UnicodeDecodeError ) as exception:
            raise _exceptions.ConfigurationInvalidity(
                f"MCP ensemble {ensemble!r} authorization 'private_key'",
                f"the key file {str( path )!r} cannot be read "
                f"({type( exception ).__name__}); give a readable PEM "
                "file or 'env:NAME'." ) from None
    _register_secrets( key )
    return key


def _produce_enterprise_auth(
    ensemble: str, authorization: EnterpriseAuthorization, url: str
) -> __.typx.Any:
    ''' Returns the SDK's identity assertion provider, which gets its
        grant by token exchange at the identity provider.
    '''
    try:
        from mcp.client.auth.extensions.identity_assertion import (
            IdentityAssertionOAuthProvider )
    except ImportError:
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {ensemble!r} authorization",
            "enterprise-managed authorization needs the mcp SDK 2.x (1.x "
            "has no identity assertion grant); install 'mcp>=2'." ) from None
    secret = _resolve(
        ensemble, 'client_secret', authorization.client_secret )
    _register_secrets( secret )
    base = _produce_assertion_class( IdentityAssertionOAuthProvider )
    provider = base(
        ensemble,
        server_url = url,
        storage = _RedactingStorage(
            _access_storage( authorization.storage, url ) ),
        client_id = authorization.client_id, client_secret = secret,
        issuer = authorization.issuer,
        # The exchange is bounded as every request of the flow.
        assertion_provider = _produce_exchanger(
            ensemble, authorization, lambda: provider.timeout ),
        scope = _presentify( authorization.scope ),
        token_endpoint_auth_method = 'client_secret_basic' ) # noqa: S106
    return provider


# Token exchange (RFC 8693) of an ID token for an identity assertion grant.
_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'
_EXCHANGE_REQUESTED = 'urn:ietf:params:oauth:token-type:id-jag'
_EXCHANGE_SUBJECT = 'urn:ietf:params:oauth:token-type:id_token'


def _produce_exchanger(
    ensemble: str,
    authorization: EnterpriseAuthorization,
    timeout: __.cabc.Callable[ [ ], float | None ],
) -> __.cabc.Callable[ [ str, str ], __.cabc.Awaitable[ str ] ]:
    ''' Returns callback which exchanges the identity token for an
        identity assertion grant at the identity provider (RFC 8693).
    '''
    endpoint = authorization.identity_provider_token_endpoint

    async def exchange( audience: str, resource: str ) -> str:
        form = _produce_exchange_form( ensemble, authorization )
        form.update( audience = audience, resource = resource )
        if not __.is_absent( authorization.scope ):
            form[ 'scope' ] = authorization.scope
        status, answer = await _post_form(
            ensemble, endpoint, form, timeout( ) )
        grant: object = (
            __.typx.cast( dict[ str, object ], answer ).get( 'access_token' )
            if isinstance( answer, dict ) else None )
        if status != _OK or not isinstance( grant, str ):
            raise _exceptions.AuthorizationFailure(
                ensemble, "the identity provider refused the token "
                f"exchange ({status}); check the identity token (it may "
                "have expired) and the client's access to the MCP "
                "server." )
        _register_secrets( grant )
        return grant

    return exchange


async def _post_form(
    ensemble: str,
    endpoint: str,
    form: dict[ str, str ],
    timeout: float | None,
) -> tuple[ int, object ]:
    ''' Posts form to an endpoint; returns status and JSON answer (None
        for an answer which is not JSON).
    '''
    http: __.typx.Any = _sdk.http
    async with http.AsyncClient(
        timeout = 30.0 if timeout is None else timeout
    ) as client:
        try: response = await client.post( endpoint, data = form )
        except http.HTTPError as exception:
            raise _exceptions.AuthorizationFailure(
                ensemble, _describe_http_failure( exception ) or (
                    "the identity provider could not be reached." )
            ) from None
    try: answer: object = response.json( )
    except ValueError: answer = None
    return int( response.status_code ), answer


def _produce_exchange_form(
    ensemble: str, authorization: EnterpriseAuthorization
) -> dict[ str, str ]:
    token = _resolve(
        ensemble, 'identity_token', authorization.identity_token )
    _register_secrets( token )
    form = {
        'grant_type': _EXCHANGE_GRANT,
        'requested_token_type': _EXCHANGE_REQUESTED,
        'subject_token': token,
        'subject_token_type': _EXCHANGE_SUBJECT }
    if not __.is_absent( authorization.identity_provider_client_id ):
        form[ 'client_id' ] = authorization.identity_provider_client_id
    if not __.is_absent( authorization.identity_provider_client_secret ):
        form[ 'client_secret' ] = _resolve(
            ensemble, 'identity_provider_client_secret',
            authorization.identity_provider_client_secret )
        _register_secrets( form[ 'client_secret' ] )
    return form


@__.funct.cache
def _produce_assertion_class( base: __.typx.Any ) -> __.typx.Any:
    ''' Returns subclass of the SDK's identity assertion provider which
        raises the library's errors, without secrets.
    '''
    from mcp.client.auth.exceptions import OAuthFlowError
    from mcp.client.auth.extensions.identity_assertion import (
        IdentityAssertionOAuthProvider )
    from pydantic import ValidationError
    parent: type[ IdentityAssertionOAuthProvider ] = base
    failures = (
        OAuthFlowError, ValidationError, _sdk.http.HTTPError, KeyError )

    class Provider( parent ):
        ''' Identity assertion provider of one ensemble. '''

        def __init__(
            self, ensemble: str, **arguments: __.typx.Any
        ) -> None:
            super( ).__init__( **arguments )
            self.ensemble = ensemble
            self.timeout: float | None = None
            self.flaws: list[ str ] = [ ] # expose: what went wrong early
            self.stalled: __.typx.Any = None

        def __repr__( self ) -> str:
            return f"OAuthProvider( ensemble = {self.ensemble!r} )"

        async def _auth_flow(
            self, request: _sdk.http.Request
        ) -> __.cabc.AsyncGenerator[
            _sdk.http.Request, _sdk.http.Response
        ]:
            answer: __.typx.Any = None
            self.stalled = None
            flow = super( )._auth_flow( request )
            try:
                outgoing = await flow.__anext__( )
                while True:
                    _bound_request(
                        outgoing,
                        None if outgoing is request else self.timeout )
                    with _note_stall( self, outgoing, request ):
                        response = yield outgoing
                    answer = response if outgoing is request else answer
                    outgoing = await flow.asend( response )
            except StopAsyncIteration: _verify_answer( self.ensemble, answer )
            except _exceptions.AuthorizationFailure: raise
            except failures as exception:
                raise _exceptions.AuthorizationFailure(
                    self.ensemble, _describe_failure( exception )
                ) from None
            finally: await flow.aclose( )

    return Provider


@__.funct.cache
def _produce_provider_class( base: __.typx.Any = None ) -> __.typx.Any:
    ''' Returns subclass of SDK provider which refreshes on 401 and raises
        the library's errors, without secrets.
    '''
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.auth.exceptions import OAuthFlowError
    from pydantic import ValidationError
    parent: type[ OAuthClientProvider ] = base or OAuthClientProvider
    failures = (
        OAuthFlowError, ValidationError, _sdk.http.HTTPError, KeyError )

    class Provider( parent ):
        ''' OAuth provider of one ensemble. '''

        def __init__(
            self, ensemble: str, **arguments: __.typx.Any
        ) -> None:
            super( ).__init__( **arguments )
            self.ensemble = ensemble
            self.timeout: float | None = None
            self.flaws: list[ str ] = [ ] # expose: what went wrong early
            # expose: OAuth request unanswered when the flow was closed.
            self.stalled: __.typx.Any = None
            # Client registered beforehand, which stands for the stored one.
            self.client_fixed: __.typx.Any = None

        def __repr__( self ) -> str:
            return f"OAuthProvider( ensemble = {self.ensemble!r} )"

        async def _initialize( self ) -> None:
            await super( )._initialize( )
            if self.client_fixed is not None:
                self.context.client_info = self.client_fixed
            tokens = self.context.current_tokens
            # Stored tokens carry their remaining lifetime: due ones are
            # refreshed before use.
            if tokens is not None: self.context.update_token_expiry( tokens )

        async def _auth_flow(
            self, request: _sdk.http.Request
        ) -> __.cabc.AsyncGenerator[
            _sdk.http.Request, _sdk.http.Response
        ]:
            refreshed = False
            answer: __.typx.Any = None
            self.stalled = None
            flow = super( )._auth_flow( request )
            try:
                outgoing = await flow.__anext__( )
                while True:
                    _bound_request(
                        outgoing,
                        None if outgoing is request else self.timeout )
                    with _note_stall( self, outgoing, request ):
                        response = yield outgoing
                    answer = response if outgoing is request else answer
                    self.flaws.extend(
                        await _observe_metadata( outgoing, response ) )
                    if (
                        outgoing is request
                        and response.status_code == _UNAUTHORIZED
                        and not refreshed
                        and self.context.can_refresh_token( )
                    ):
                        # A token rejected before its time: refresh once
                        # before authorizing anew.
                        refreshed = True
                        await flow.aclose( )
                        self.context.token_expiry_time = 1.0
                        flow = super( )._auth_flow( request )
                        outgoing = await flow.__anext__( )
                        continue
                    outgoing = await flow.asend( response )
            except StopAsyncIteration:
                # The SDK hands a refused request back as it is (after
                # authorizing anew, or a step-up of scope).
                _verify_answer( self.ensemble, answer )
            except _exceptions.AuthorizationFailure: raise
            except failures as exception:
                raise _exceptions.AuthorizationFailure(
                    self.ensemble, ' '.join( (
                        _describe_failure( exception ), *self.flaws ) )
                ) from None
            finally:
                # expose: closed here, in this task; left to the finalizer,
                # the SDK's flow releases its lock in another task and fails.
                await flow.aclose( )

    return Provider


class _RedactingStorage:
    ''' Storage which hides every token it passes from log records. '''

    def __init__( self, storage: __.typx.Any ):
        self.storage = storage

    async def get_tokens( self ) -> __.typx.Any:
        tokens = await self.storage.get_tokens( )
        _register_token( tokens )
        return tokens

    async def set_tokens( self, tokens: __.typx.Any ) -> None:
        _register_token( tokens )
        await self.storage.set_tokens( tokens )

    async def get_client_info( self ) -> __.typx.Any:
        client = await self.storage.get_client_info( )
        _register_client( client )
        return client

    async def set_client_info( self, client_info: __.typx.Any ) -> None:
        _register_client( client_info )
        await self.storage.set_client_info( client_info )


_secrets: list[ str ] = [ ]
_redactor: list[ _redaction.Redactor ] = [ ]


def _describe_failure( exception: BaseException ) -> str:
    ''' Returns why a flow failed, without values the server sent. '''
    from mcp.client.auth.exceptions import (
        OAuthRegistrationError,
        OAuthTokenError,
    )
    from pydantic import ValidationError
    name = type( exception ).__name__
    text = str( exception )
    if 'State parameter mismatch' in text:
        return (
            "the redirect carried a wrong 'state' (not the one of this "
            "authorization request); authorize again from the start." )
    if isinstance( exception, ValidationError ):
        return (
            "the authorization server sent invalid metadata or an invalid "
            "answer; check the server's OAuth configuration." )
    if isinstance( exception, OAuthRegistrationError ):
        return f"client registration was refused ({name})."
    if isinstance( exception, OAuthTokenError ):
        return f"the token request was refused ({name})."
    if isinstance( exception, KeyError ):
        return "the authorization server's answer lacks a field."
    return _describe_http_failure( exception ) or _redact_secrets(
        f"{name}: {text}" )


def explain_failure(
    ensemble: str,
    auth: __.typx.Any,
    exceptions: __.cabc.Sequence[ BaseException ],
) -> _exceptions.AuthorizationFailure | None:
    ''' Returns authorization failure for a request error of the flow of
        auth, which was raised out of it (expose); None for others.
    '''
    stalled = auth.stalled
    for exception in exceptions:
        if not isinstance( exception, _sdk.http.RequestError ): continue
        reason = _describe_http_failure( exception, stalled ) or ''
        flaws: list[ str ] = list( auth.flaws )
        return _exceptions.AuthorizationFailure(
            ensemble, ' '.join( ( reason, *flaws ) ) )
    return None


def _bound_request( request: __.typx.Any, timeout: float | None ) -> None:
    ''' Bounds one request of an OAuth flow by timeout (expose). '''
    if timeout is None: return
    request.extensions = {
        **request.extensions,
        'timeout': _sdk.http.Timeout( timeout ).as_dict( ) }


async def _observe_metadata(
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


def _describe_http_failure(
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


@__.ctxl.contextmanager
def _note_stall(
    provider: __.typx.Any, outgoing: __.typx.Any, request: __.typx.Any
) -> __.cabc.Generator[ None, None, None ]:
    ''' Notes an OAuth request left unanswered when the flow is closed
        (its error is raised out of the flow, to the transport).
    '''
    try: yield
    except GeneratorExit:
        if outgoing is not request: provider.stalled = outgoing
        raise


def _access_query_value( url: str, name: str ) -> str | None:
    ''' Returns the one value of a query parameter of URL, or None. '''
    values = _parse_query( _urlsplit( url ).query ).get( name, [ ] )
    return values[ 0 ] if len( values ) == 1 else None


def _parse_query( query: str ) -> dict[ str, list[ str ] ]:
    ''' Parses query of a URL, with a bound on its fields (else empty). '''
    try:
        return _parse_qs(
            query, keep_blank_values = True,
            max_num_fields = _QUERY_FIELDS_MAXIMUM )
    except ValueError: return { }


def _locate( request: __.typx.Any ) -> str:
    ''' Returns URL of request without query or fragment. '''
    url = request.url
    return f"{url.scheme}://{url.netloc.decode( 'ascii' )}{url.path}"


def _presentify( value: __.Absential[ str ] ) -> str | None:
    return None if __.is_absent( value ) else value


def _redact_secrets( text: str ) -> str:
    for secret in sorted( _secrets, key = len, reverse = True ):
        text = text.replace( secret, _redaction.REDACTION )
    return text


def _register_client( client: __.typx.Any ) -> None:
    if client is None: return
    secret = getattr( client, 'client_secret', None )
    if secret: _register_secrets( secret )


def _register_secrets( *values: str | None ) -> None:
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


def _register_token( tokens: __.typx.Any ) -> None:
    if tokens is None: return
    _register_secrets( tokens.access_token, tokens.refresh_token )


def _resolve( ensemble: str, label: str, value: str ) -> str:
    if not value.startswith( _configuration.ENVIRONMENT_PREFIX ): return value
    variable = value[ len( _configuration.ENVIRONMENT_PREFIX ) : ]
    found = _os.environ.get( variable )
    if found is None:
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {ensemble!r} authorization {label!r}",
            f"environment variable {variable!r} is not set; set it "
            "before connecting, or change the value." )
    return found


def _show( value: str ) -> str:
    if value.startswith( _configuration.ENVIRONMENT_PREFIX ):
        return repr( value )
    return "'***'"


def _verify_answer( ensemble: str, response: __.typx.Any ) -> None:
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
        parameters[ name ] = _redact_secrets(
            value[ : _CHALLENGE_VALUE_MAXIMUM ] )
    return parameters
