# SPDX-License-Identifier: Apache-2.0

''' Authorization with HTTP MCP servers: OAuth 2.1 and bearer tokens.

    ``produce_ensemble( ..., authorization = ... )`` takes one of:

    * :py:class:`BearerAuthorization`: a static token (``env:NAME``);
    * :py:class:`ClientCredentialsAuthorization`: machine to machine, with
      a client secret or a private key (``private_key_jwt``);
    * :py:class:`CodeAuthorization`: authorization code with PKCE, server
      metadata discovery and a client registered beforehand, known by a
      client ID metadata document or registered dynamically, through an
      application's redirect handler (shows or opens the authorization URL)
      and callback handler (returns the URL the browser was sent back to).
      :py:func:`produce_loopback_authorization` gives both, listening on
      127.0.0.1 for the redirect;
    * :py:class:`EnterpriseAuthorization`: enterprise-managed authorization
      (cross-app access): an identity token exchanged for a grant at the
      identity provider, then for a token (mcp SDK 2.x);
    * :py:class:`WorkloadAuthorization`: workload identity federation: the
      workload's JWT, which its platform issues, exchanged for a token.

    The flows are the ``mcp`` SDK's (``OAuthClientProvider`` and its
    extensions; the private modules ``_grants`` and ``_oauth``). Tokens and
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

import invocables.mcp.__ as __
import invocables.mcp._grants as _grants
import invocables.mcp._oauth as _oauth
import invocables.mcp._tokens as _tokens
import invocables.mcp.configuration as _configuration
import invocables.mcp._sdk as _sdk
import invocables.exceptions as _exceptions
from .credentials import (
    Authorization as Authorization,
    BearerAuthorization as BearerAuthorization,
    CallbackHandler as CallbackHandler,
    ClientCredentialsAuthorization as ClientCredentialsAuthorization,
    CodeAuthorization as CodeAuthorization,
    EnterpriseAuthorization as EnterpriseAuthorization,
    RedirectHandler as RedirectHandler,
    Storage as Storage,
    Suspension as Suspension,
    TokenStorage as TokenStorage,
    WorkloadAuthorization as WorkloadAuthorization,
)


LOOPBACK_PORT_DEFAULT = 33418
STATE_DIRECTORY_VARIABLE = 'INVOCABLES_STATE_DIRECTORY'

_QUERY_FIELDS_MAXIMUM = 64
_scribe = __.produce_scribe( __name__ )


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
        self.port = __.values.validate_count(
            port, 'authorization port', maximum = 65535,
            reason = "expected a port from 1 to 65535, got {value!r}." )
        self.opener = opener
        self.timeout = __.values.validate_timeout(
            timeout, 'authorization timeout', nullable = False )
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
        reason = _oauth.describe_http_failure( exception, stalled ) or ''
        flaws: list[ str ] = list( auth.flaws )
        return _exceptions.AuthorizationFailure(
            ensemble, ' '.join( ( reason, *flaws ) ) )
    return None


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
    if isinstance( authorization, BearerAuthorization ):
        token = _oauth.resolve( ensemble, 'token', authorization.token )
        return _grants.produce_bearer_auth( ensemble, token )
    storage = _oauth.RedactingStorage(
        _access_storage( authorization.storage, url ) )
    match authorization:
        case ClientCredentialsAuthorization( ):
            provider = _grants.produce_credentials_auth(
                ensemble, authorization, url, storage )
        case CodeAuthorization( ):
            provider = _grants.produce_code_auth(
                ensemble, authorization, url, storage, suspension )
        case EnterpriseAuthorization( ):
            provider = _grants.produce_enterprise_auth(
                ensemble, authorization, url, storage )
        case WorkloadAuthorization( ):
            provider = _grants.produce_workload_auth(
                ensemble, authorization, url, storage )
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
        ``client_metadata_url``), 'enterprise' (the keys of
        :py:class:`EnterpriseAuthorization`) or 'workload' (those of
        :py:class:`WorkloadAuthorization`); ``storage`` names a directory
        of tokens.
    '''
    values: dict[ str, __.typx.Any ] = {
        key: value for key, value in table.items( ) if key != 'kind' }
    if 'storage' in values:
        try: storage = __.Path( values[ 'storage' ] ).expanduser( )
        except RuntimeError as exception: # no such user, no home
            raise _exceptions.ConfigurationInvalidity(
                'authorization storage', f"cannot expand "
                f"{values[ 'storage' ]!r} ({exception}); give a full "
                "path." ) from exception
        values[ 'storage' ] = storage
    match table[ 'kind' ]:
        case 'bearer': return BearerAuthorization( **values )
        case 'client-credentials':
            return ClientCredentialsAuthorization( **values )
        case 'enterprise': return EnterpriseAuthorization( **values )
        case 'workload': return WorkloadAuthorization( **values )
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


def _access_query_value( url: str, name: str ) -> str | None:
    ''' Returns the one value of a query parameter of URL, or None. '''
    values = _parse_query( _urlsplit( url ).query ).get( name, [ ] )
    return values[ 0 ] if len( values ) == 1 else None


def _access_storage(
    storage: __.Absential[ Storage ], url: str
) -> __.typx.Any:
    if __.is_absent( storage ): return FileTokenStorage( url )
    if isinstance( storage, ( str, _os.PathLike ) ):
        return FileTokenStorage( url, storage )
    return storage


def _parse_query( query: str ) -> dict[ str, list[ str ] ]:
    ''' Parses query of a URL, with a bound on its fields (else empty). '''
    try:
        return _parse_qs(
            query, keep_blank_values = True,
            max_num_fields = _QUERY_FIELDS_MAXIMUM )
    except ValueError: return { }


