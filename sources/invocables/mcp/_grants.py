# SPDX-License-Identifier: Apache-2.0

''' Providers of the OAuth grants with MCP servers, made of the ``mcp``
    SDK's: the code grant (registered, metadata document or dynamic
    client), client credentials (secret or ``private_key_jwt``),
    enterprise-managed authorization (identity token exchange, then the
    SDK 2.x's identity assertion grant), the workload's JWT bearer grant
    and static bearer tokens.
'''


from urllib.parse import parse_qs as _parse_qs
from urllib.parse import parse_qsl as _parse_qsl
from urllib.parse import urlsplit as _urlsplit

import invocables.mcp.__ as __
import invocables.mcp._dpop as _dpop
import invocables.mcp._logbounds as _logbounds
import invocables.mcp._oauth as _oauth
import invocables.mcp.configuration as _configuration
import invocables.mcp._sdk as _sdk
import invocables.exceptions as _exceptions
from .credentials import (
    ClientCredentialsAuthorization as _ClientCredentialsAuthorization,
    CodeAuthorization as _CodeAuthorization,
    EnterpriseAuthorization as _EnterpriseAuthorization,
    Suspension as _Suspension,
    WorkloadAuthorization as _WorkloadAuthorization,
)


# A public client (PKCE, no secret), as the MCP specification advises.
_AUTH_METHOD_PUBLIC = 'none'
_OK = 200
_UNAUTHORIZED = 401
_JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
# Token exchange (RFC 8693) of an ID token for an identity assertion grant.
_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange'
_EXCHANGE_REQUESTED = 'urn:ietf:params:oauth:token-type:id-jag'
_EXCHANGE_SUBJECT = 'urn:ietf:params:oauth:token-type:id_token'


def produce_bearer_auth( ensemble: str, token: str ) -> __.typx.Any:
    ''' Returns auth which sends a static bearer token. '''
    _oauth.validate_token( ensemble, token )

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
            _oauth.verify_answer( ensemble, response )

    _oauth.register_secrets( token )
    return _BearerAuth( )


def produce_code_auth(
    ensemble: str,
    authorization: _CodeAuthorization,
    url: str,
    storage: __.typx.Any,
    suspension: _Suspension,
) -> __.typx.Any:
    ''' Returns the SDK's provider of the code grant, through the
        application's handlers, within suspension.
    '''
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
        issuer = query.get( 'iss', [ None ] )[ 0 ] # RFC 9207
        _oauth.register_secrets( code )
        return _sdk.produce_code_result( code, state, issuer )

    metadata = OAuthClientMetadata(
        redirect_uris = [
            __.typx.cast( __.typx.Any, authorization.redirect_uri ) ],
        client_name = authorization.client_name,
        grant_types = [ 'authorization_code', 'refresh_token' ],
        response_types = [ 'code' ],
        token_endpoint_auth_method = _AUTH_METHOD_PUBLIC,
        scope = _oauth.presentify( authorization.scope ) )
    extras: dict[ str, __.typx.Any ] = { }
    if not __.is_absent( authorization.client_metadata_url ):
        extras[ 'client_metadata_url' ] = authorization.client_metadata_url
    provider_class = _produce_provider_class( )
    try:
        provider = provider_class(
            ensemble,
            server_url = url, client_metadata = metadata,
            storage = storage,
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


def produce_credentials_auth(
    ensemble: str,
    authorization: _ClientCredentialsAuthorization,
    url: str,
    storage: __.typx.Any,
) -> __.typx.Any:
    ''' Returns the SDK's provider of client credentials, with a secret
        or a private key (``private_key_jwt``).
    '''
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
        'storage': storage,
        'issuer': _oauth.presentify( authorization.issuer ),
        scope: _oauth.presentify( authorization.scope ) }
    if not __.is_absent( secret ):
        arguments[ 'client_secret' ] = _oauth.resolve(
            ensemble, 'client_secret', secret )
        _oauth.register_secrets( arguments[ 'client_secret' ] )
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


def produce_enterprise_auth(
    ensemble: str,
    authorization: _EnterpriseAuthorization,
    url: str,
    storage: __.typx.Any,
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
    secret = _oauth.resolve(
        ensemble, 'client_secret', authorization.client_secret )
    _oauth.register_secrets( secret )
    base = _produce_flow_class( IdentityAssertionOAuthProvider )
    provider = base(
        ensemble,
        server_url = url,
        storage = storage,
        client_id = authorization.client_id, client_secret = secret,
        issuer = authorization.issuer,
        # The exchange is bounded as every request of the flow.
        assertion_provider = _produce_exchanger(
            ensemble, authorization, lambda: provider.timeout ),
        scope = _oauth.presentify( authorization.scope ),
        token_endpoint_auth_method = 'client_secret_basic' ) # noqa: S106
    return provider


def produce_workload_auth(
    ensemble: str,
    authorization: _WorkloadAuthorization,
    url: str,
    storage: __.typx.Any,
) -> __.typx.Any:
    ''' Returns the SDK's provider of client credentials, which asks for
        its token with the workload's JWT instead (RFC 7523 JWT bearer
        grant, SEP-1933), as a public client.
    '''
    from mcp.client.auth.extensions import client_credentials
    import warnings
    # SDK 1.x names the scope 'scopes'.
    scope = 'scope' if _sdk.MAJOR >= 2 else 'scopes' # noqa: PLR2004
    client_id = authorization.client_id
    parent: type[ client_credentials.ClientCredentialsOAuthProvider ] = (
        _produce_provider_class(
            client_credentials.ClientCredentialsOAuthProvider ) )

    class Provider( parent ):
        ''' Asks for a token with the workload's JWT. '''

        async def _exchange_token_client_credentials(
            self
        ) -> __.typx.Any:
            # The SDK's request: the issuer checked, resource and scope.
            request = await super( )._exchange_token_client_credentials( )
            form = dict( _parse_qsl( request.content.decode( ) ) )
            for key in ( 'client_id', 'client_secret' ): form.pop( key, None )
            form.update(
                grant_type = _JWT_BEARER_GRANT,
                assertion = _read_assertion( ensemble, authorization ) )
            if not __.is_absent( client_id ): form[ 'client_id' ] = client_id
            return _sdk.http.Request(
                'POST', request.url, data = form, headers = {
                    'Content-Type': 'application/x-www-form-urlencoded' } )

    with warnings.catch_warnings( ):
        warnings.filterwarnings( 'ignore', message = r'Omitting `issuer`' )
        return __.typx.cast( __.typx.Any, Provider )(
            ensemble, server_url = url, storage = storage,
            client_id = ( # the SDK 2.x needs one; none goes in the form
                __.package_name if __.is_absent( client_id ) else client_id
            ), client_secret = None,
            token_endpoint_auth_method = _AUTH_METHOD_PUBLIC,
            issuer = _oauth.presentify( authorization.issuer ),
            **{ scope: _oauth.presentify( authorization.scope ) } )


def _read_assertion(
    ensemble: str, authorization: _WorkloadAuthorization
) -> str:
    ''' Returns the workload's JWT: itself, from the environment
        (``env:NAME``) or from its file, read anew (platforms renew it).
    '''
    value = authorization.assertion
    if __.is_jwt( value ): assertion = value.strip( )
    elif value.startswith( _configuration.ENVIRONMENT_PREFIX ):
        assertion = _oauth.resolve( ensemble, 'assertion', value ).strip( )
    else:
        try: assertion = _oauth.read_credential_file( value ).strip( )
        except ( OSError, UnicodeDecodeError ) as exception:
            raise _exceptions.AuthorizationFailure(
                ensemble, "the workload's JWT: {reason}; give a readable "
                "file, 'env:NAME' or the JWT.".format(
                    reason = _oauth.describe_read_failure(
                        value, exception ) ) ) from None
    _oauth.register_secrets( assertion )
    if not __.is_jwt( assertion ):
        raise _exceptions.AuthorizationFailure(
            ensemble, "the workload's assertion is not a JWT (three parts "
            "joined by dots); check the file or variable it comes from." )
    return assertion


@__.funct.cache
def _adapt_client( provider: __.typx.Any ) -> None:
    ''' Authenticates a client registered beforehand as its authorization
        server accepts: with HTTP basic authentication, unless the server's
        metadata list the secret in the form (``client_secret_post``) and
        not basic authentication.
    '''
    client = provider.client_fixed
    metadata = provider.context.oauth_metadata
    if client is None or not client.client_secret or metadata is None:
        return
    supported = metadata.token_endpoint_auth_methods_supported or ( )
    method = (
        'client_secret_post' if 'client_secret_post' in supported
        and 'client_secret_basic' not in supported
        else 'client_secret_basic' )
    if client.token_endpoint_auth_method == method: return
    provider.client_fixed = client.model_copy(
        update = { 'token_endpoint_auth_method': method } )
    provider.context.client_info = provider.client_fixed


def _produce_assertion_provider(
    ensemble: str, authorization: _ClientCredentialsAuthorization
) -> __.typx.Any:
    ''' Returns the SDK's signer of client assertions (private_key_jwt),
        with the key read and checked now.
    '''
    from mcp.client.auth.extensions.client_credentials import (
        SignedJWTParameters )
    key = _oauth.read_private_key(
        ensemble, __.typx.cast( str, authorization.private_key ) )
    algorithm = (
        _oauth.infer_signing_algorithm( ensemble, key )
        if __.is_absent( authorization.signing_algorithm )
        else authorization.signing_algorithm )
    parameters = SignedJWTParameters(
        issuer = authorization.client_id,
        subject = authorization.client_id,
        signing_key = key, signing_algorithm = algorithm )
    return parameters.create_assertion_provider( )


def _produce_client_information(
    ensemble: str, authorization: _CodeAuthorization
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
        secret = _oauth.resolve(
            ensemble, 'client_secret', authorization.client_secret )
        _oauth.register_secrets( secret )
    return OAuthClientInformationFull(
        client_id = authorization.client_id, client_secret = secret,
        redirect_uris = [
            __.typx.cast( __.typx.Any, authorization.redirect_uri ) ],
        grant_types = [ 'authorization_code', 'refresh_token' ],
        response_types = [ 'code' ],
        token_endpoint_auth_method = (
            'client_secret_basic' if secret else _AUTH_METHOD_PUBLIC ) )


def _produce_exchange_form(
    ensemble: str, authorization: _EnterpriseAuthorization
) -> dict[ str, str ]:
    token = _oauth.resolve(
        ensemble, 'identity_token', authorization.identity_token )
    _oauth.register_secrets( token )
    form = {
        'grant_type': _EXCHANGE_GRANT,
        'requested_token_type': _EXCHANGE_REQUESTED,
        'subject_token': token,
        'subject_token_type': _EXCHANGE_SUBJECT }
    if not __.is_absent( authorization.identity_provider_client_id ):
        form[ 'client_id' ] = authorization.identity_provider_client_id
    if not __.is_absent( authorization.identity_provider_client_secret ):
        form[ 'client_secret' ] = _oauth.resolve(
            ensemble, 'identity_provider_client_secret',
            authorization.identity_provider_client_secret )
        _oauth.register_secrets( form[ 'client_secret' ] )
    return form


def _produce_exchanger(
    ensemble: str,
    authorization: _EnterpriseAuthorization,
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
        status, answer = await _oauth.post_form(
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
        _oauth.register_secrets( grant )
        return grant

    return exchange


async def _inspect_answer(
    provider: __.typx.Any,
    outgoing: __.typx.Any,
    request: __.typx.Any,
    response: __.typx.Any,
    *,
    renewing: bool,
) -> __.typx.Any:
    ''' Returns answer as the SDK takes it (DPoP); notes invalid metadata
        (renewing); refuses a token which could not be used.
    '''
    response = await _dpop.adapt_answer(
        provider, outgoing, request, response )
    await _oauth.verify_token_answer(
        provider.ensemble, outgoing, request, response )
    provider.flaws.extend( (
        await _oauth.observe_metadata( outgoing, response )
    ) if renewing else ( ) )
    return response


@__.funct.cache
def _produce_flow_class(
    base: __.typx.Any, *, renewing: bool = False
) -> __.typx.Any:
    ''' Returns subclass of an SDK provider (the identity assertion one,
        or an OAuth client provider: renewing) which bounds the flow's
        requests and raises the library's errors, without secrets.

        Renewing, it also notes invalid metadata, and refreshes a token the
        server rejects (401) once before authorizing anew.
    '''
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.auth.exceptions import OAuthFlowError
    from pydantic import ValidationError
    parent: type[ OAuthClientProvider ] = base
    failures = (
        OAuthFlowError, ValidationError, _sdk.http.HTTPError,
        _sdk.http.InvalidURL, KeyError )

    class Provider( parent ):
        ''' OAuth provider of one ensemble. '''

        def __init__(
            self, ensemble: str, **arguments: __.typx.Any
        ) -> None:
            super( ).__init__( **arguments )
            _logbounds.attach_bounds( ) # the SDK's records quote servers
            self.ensemble = ensemble
            self.timeout: float | None = None
            self.flaws: list[ str ] = [ ] # expose: what went wrong early
            # expose: OAuth request unanswered when the flow was closed.
            self.stalled: __.typx.Any = None
            # Client registered beforehand, which stands for the stored one.
            self.client_fixed: __.typx.Any = None
            self.prover: _dpop.Prover | None = None # DPoP, if advertised

        def __repr__( self ) -> str:
            return f"OAuthProvider( ensemble = {self.ensemble!r} )"

        def async_auth_flow( self, request: __.typx.Any ) -> __.typx.Any:
            # Outermost: the SDK's redirects are read within bounds too.
            return _oauth.bound_flow(
                self.ensemble, super( ).async_auth_flow( request ), request )

        async def _auth_flow(
            self, request: _sdk.http.Request
        ) -> __.cabc.AsyncGenerator[
            _sdk.http.Request, _sdk.http.Response
        ]:
            refreshed = not renewing
            answer: __.typx.Any = None
            self.stalled = None
            flow = super( )._auth_flow( request )
            try:
                outgoing = await flow.__anext__( )
                while True:
                    _oauth.bound_request(
                        outgoing,
                        None if outgoing is request else self.timeout )
                    with _oauth.note_stall( self, outgoing, request ):
                        response = yield _dpop.prepare_request(
                            self, outgoing, request )
                        if await _dpop.register_nonce(
                            self, outgoing, request, response
                        ): # The server wants its DPoP nonce: once more.
                            response = yield _dpop.prepare_request(
                                self, outgoing, request )
                    response = await _inspect_answer(
                        self, outgoing, request, response,
                        renewing = renewing )
                    answer = response if outgoing is request else answer
                    if (
                        outgoing is request
                        and response.status_code == _UNAUTHORIZED
                        and not refreshed
                        and self.context.can_refresh_token( )
                    ):
                        # A token rejected early: refresh, then authorize.
                        refreshed = True
                        flow, outgoing = await self._restart_flow(
                            flow, request )
                        continue
                    outgoing = await flow.asend( response )
            except StopAsyncIteration:
                # The SDK hands a refused request back as it is (after
                # authorizing anew, or a step-up of scope).
                _oauth.verify_answer( self.ensemble, answer )
            except _exceptions.AuthorizationFailure: raise
            except failures as exception:
                raise _exceptions.AuthorizationFailure(
                    self.ensemble, ' '.join( (
                        _oauth.describe_failure( exception ), *self.flaws ) )
                ) from None
            finally:
                # expose: closed here, in this task; left to the finalizer,
                # the SDK's flow releases its lock in another task and fails.
                await flow.aclose( )

        async def _restart_flow(
            self, flow: __.typx.Any, request: _sdk.http.Request
        ) -> tuple[ __.typx.Any, _sdk.http.Request ]:
            ''' Closes flow; returns another, which refreshes the token
                first, and its first request.
            '''
            await flow.aclose( )
            self.context.token_expiry_time = 1.0
            flow = super( )._auth_flow( request )
            return flow, await flow.__anext__( )

    return Provider


@__.funct.cache
def _produce_provider_class( base: __.typx.Any = None ) -> __.typx.Any:
    ''' Returns subclass of SDK OAuth client provider which refreshes on
        401, adapts a client registered beforehand and raises the
        library's errors, without secrets.
    '''
    from mcp.client.auth import OAuthClientProvider
    parent: type[ OAuthClientProvider ] = _produce_flow_class(
        base or OAuthClientProvider, renewing = True )

    class Provider( parent ):
        ''' OAuth provider of one ensemble. '''

        async def _initialize( self ) -> None:
            await super( )._initialize( )
            _restore_state( self )

        async def _exchange_token_authorization_code(
            self, *arguments: __.typx.Any, **options: __.typx.Any
        ) -> __.typx.Any:
            _adapt_client( self )
            return await super( )._exchange_token_authorization_code(
                *arguments, **options )

        async def _refresh_token( self ) -> __.typx.Any:
            _adapt_client( self )
            return await super( )._refresh_token( )

    return Provider


def _restore_state( provider: __.typx.Any ) -> None:
    ''' Puts a client registered beforehand in place of the stored one;
        gives stored tokens their remaining lifetime, so that due ones are
        refreshed before use.
    '''
    if provider.client_fixed is not None:
        provider.context.client_info = provider.client_fixed
    tokens = provider.context.current_tokens
    if tokens is not None: provider.context.update_token_expiry( tokens )
