# SPDX-License-Identifier: Apache-2.0

''' Streamable HTTP: the ASGI application of a server, and its guards.

    :py:func:`produce_application` serves a tool server at a
    path; requests whose ``Host`` or ``Origin`` is not allowed are refused
    (DNS rebinding), and serving beyond the loopback needs a token unless
    allowed explicitly. :py:class:`HeaderTimeoutProtocol` (of
    ``protocols``) bounds the time a client may take to send its headers,
    and its body; :py:class:`MemoryEventStore` makes streams resumable.
'''


import hmac as _hmac
import ipaddress as _ipaddress
import os as _os
import uuid as _uuid

import anyio as _anyio

import invocables.serving.__ as __
import invocables.serving._events as _events
import invocables.serving.protocols as _protocols
import invocables.serving._sdk as _server_sdk
import invocables.serving.servers as _servers
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions


BODY_TIMEOUT_DEFAULT = _protocols.BODY_TIMEOUT_DEFAULT
CONNECTIONS_MAXIMUM_DEFAULT = 1000
EVENTS_MAXIMUM_DEFAULT = _events.EVENTS_MAXIMUM_DEFAULT
EVENTS_SIZE_MAXIMUM_DEFAULT = _events.EVENTS_SIZE_MAXIMUM_DEFAULT
HEADER_TIMEOUT_DEFAULT = _protocols.HEADER_TIMEOUT_DEFAULT
IDLE_TIMEOUT_DEFAULT = 5
OPTIONS_VARIABLE = _protocols.OPTIONS_VARIABLE
PATH_DEFAULT = '/mcp'
PORT_DEFAULT = 8000
# Those of the ``mcp`` SDK (1.x and 2.x), which it takes as options.
SESSION_IDLE_TIMEOUT_DEFAULT = 1800.0
SESSIONS_MAXIMUM_DEFAULT = 10_000

HeaderTimeoutProtocol = _protocols.HeaderTimeoutProtocol
MemoryEventStore = _events.MemoryEventStore
produce_protocol = _protocols.produce_protocol

_LOOPBACK_NAMES = ( '127.0.0.1', 'localhost', '::1' )
# Headers of a session's request which its ping does not repeat.
_PING_HEADERS_OMITTED = frozenset( (
    b'accept', b'content-length', b'content-type', b'last-event-id',
    b'mcp-method', b'mcp-name', b'transfer-encoding',
) )
_PING_TIMEOUT = 10.0
# Responses of sessions up to this size (bytes) may stay in memory while
# their sessions are idle; larger ones are released by a ping.
_RESPONSE_SIZE_KEPT_MAXIMUM = 64 * 1024
_WILDCARDS = ( '', '0.0.0.0', '::' ) # noqa: S104
_scribe = __.produce_scribe( __name__ )


class _Guard:
    ''' ASGI middleware which refuses the HTTP requests it finds wanting,
        with a status and a line of text; passes on the others.
    '''

    refusal: __.typx.ClassVar[ tuple[ int, str ] ]

    def __init__( self, app: __.typx.Any ):
        self.app = app

    async def __call__(
        self, scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any
    ) -> None:
        if scope[ 'type' ] != 'http' or not self.is_wanting( scope ):
            await self.app( scope, receive, send )
            return
        from starlette.responses import PlainTextResponse
        status, text = self.refusal
        response = PlainTextResponse( text, status_code = status )
        await response( scope, receive, send )

    def is_wanting( self, scope: __.typx.Any ) -> bool:
        ''' Returns whether the request (its scope) is refused. '''
        raise NotImplementedError # pragma: no cover


class _CredentialsGuard( _Guard ):
    ''' ASGI middleware which refuses requests with several
        ``Authorization`` headers (400): the SDK checks the first, where a
        proxy in front of the server may have checked another.
    '''

    refusal = ( 400, "Give one Authorization header." )

    def is_wanting( self, scope: __.typx.Any ) -> bool:
        return sum(
            1 for name, _ in scope.get( 'headers' ) or ( )
            if bytes( name ).lower( ) == b'authorization' ) > 1


class _LoopbackGuard( _Guard ):
    ''' ASGI middleware which refuses clients beyond the loopback (403).
    '''

    refusal = ( 403, "Serving beyond the loopback needs a token." )

    def is_wanting( self, scope: __.typx.Any ) -> bool:
        client = scope.get( 'client' )
        return client is not None and not is_loopback( str( client[ 0 ] ) )


class _ResponsesReleaser:
    ''' ASGI middleware which pings the session of each large response,
        once sent, so that the transport of the ``mcp`` SDK lets it go.

        The transport (1.x and 2.x) routes the messages of a session in one
        task, which holds the last message routed until the next one: an
        idle session kept its last response, however large, as long as it
        lived. The answer of a ping (a request of MCP, which changes
        nothing) takes its place; it goes through the application, as the
        client's request did (same session, credentials, ``Host``).
    '''

    def __init__( self, app: __.typx.Any ):
        self.app = app

    async def __call__(
        self, scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any
    ) -> None:
        if scope[ 'type' ] != 'http' or scope.get( 'method' ) != 'POST' or (
            not any(
                name == b'mcp-session-id'
                for name, _ in scope.get( 'headers' ) or ( ) )
        ):
            await self.app( scope, receive, send )
            return
        # Copied before the inner parts add theirs (route, credentials).
        origin = dict( scope )
        size = 0

        async def send_measured( message: __.typx.Any ) -> None:
            nonlocal size
            if message[ 'type' ] == 'http.response.body':
                size += len( message.get( 'body' ) or b'' )
            await send( message )

        await self.app( scope, receive, send_measured )
        if size > _RESPONSE_SIZE_KEPT_MAXIMUM: await self._ping( origin )

    async def _ping( self, scope: __.typx.Any ) -> None:
        ''' Pings session of request (scope); ignores the answer. '''
        body = __.json.dumps( {
            'jsonrpc': '2.0', 'id': f"invocables-release-{_uuid.uuid4( )}",
            'method': 'ping' } ).encode( 'utf-8' )
        headers = [
            ( name, value ) for name, value in scope[ 'headers' ]
            if name not in _PING_HEADERS_OMITTED ]
        headers.extend( (
            ( b'accept', b'application/json, text/event-stream' ),
            ( b'content-type', b'application/json' ),
            ( b'content-length', str( len( body ) ).encode( 'ascii' ) ) ) )
        answered = _anyio.Event( )
        messages = [ { 'type': 'http.request', 'body': body } ]

        async def receive( ) -> dict[ str, __.typx.Any ]:
            if messages: return messages.pop( )
            await answered.wait( )
            return { 'type': 'http.disconnect' }

        async def send( message: __.typx.Any ) -> None:
            if message[ 'type' ] == 'http.response.body' and not message.get(
                'more_body', False
            ): answered.set( )

        request = { **scope, 'headers': headers }
        with _anyio.move_on_after( _PING_TIMEOUT ):
            try: await self.app( request, receive, send )
            except Exception:
                # The response was sent; only its release failed.
                _scribe.exception( "Could not release a session's response." )


class _StaticTokenVerifier:
    ''' Accepts one bearer token (compared in constant time). '''

    def __init__( self, token: str ):
        self.token = token

    async def verify_token( self, token: str ) -> __.typx.Any:
        ''' Returns access token if token is the expected one. '''
        from mcp.server.auth.provider import AccessToken
        if not _hmac.compare_digest(
            token.encode( 'utf-8' ), self.token.encode( 'utf-8' )
        ): return None
        return AccessToken(
            token = token, client_id = 'bearer', scopes = [ ] )


def produce_application( # noqa: PLR0913
    server: __.typx.Annotated[
        _servers.ToolServer, __.ddoc.Doc( ''' Tools to serve. ''' )
    ],
    *,
    stateless: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' No sessions: every request stands alone, so that
            several workers can serve one configuration. ''' ),
    ] = False,
    token: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Bearer token which every request must carry. ''' ),
    ] = __.absent,
    token_verifier: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Token verifier of the ``mcp`` SDK (resource-server
            verification, such as token introspection); instead of
            ``token``. ''' ),
    ] = None,
    path: str = PATH_DEFAULT,
    host: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Address listened on (``0.0.0.0`` or ``::``:
            every address). ''' ),
    ] = '127.0.0.1',
    allowed_hosts: __.typx.Annotated[
        __.cabc.Sequence[ str ],
        __.ddoc.Doc( ''' Names (``mcp.example.com``, any port) or names
            with ports (``mcp.example.com:8443``) which the ``Host`` header
            may give; others get 421. The loopback names are allowed too
            when host is the loopback or every address; so is host itself
            when it is one address. ''' ),
    ] = ( ),
    allowed_origins: __.typx.Annotated[
        __.cabc.Sequence[ str ],
        __.ddoc.Doc( ''' Origins (``https://app.example.com``) which the
            ``Origin`` header may give, besides those of the allowed hosts;
            others get 403. A request without ``Origin`` is allowed. ''' ),
    ] = ( ),
    allow_unauthenticated: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Serve beyond the loopback without a token (a
            warning is logged); refused otherwise. ''' ),
    ] = False,
    event_store: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Event store of the ``mcp`` SDK, which makes
            streams resumable; ``None`` for none. Default: in memory,
            bounded in events and bytes, per session
            (:py:func:`produce_event_store`). ''' ),
    ] = __.absent,
    retry_interval: __.typx.Annotated[
        int | None,
        __.ddoc.Doc( ''' Milliseconds which clients are told to wait
            before they resume a stream (with an event store). ''' ),
    ] = None,
    sessions_maximum: __.typx.Annotated[
        int | None,
        __.ddoc.Doc( ''' Sessions open at once; a request which would
            open one more gets 503. ``None``: no limit. ''' ),
    ] = SESSIONS_MAXIMUM_DEFAULT,
    session_idle_timeout: __.typx.Annotated[
        float | None,
        __.ddoc.Doc( ''' Seconds a session without requests in flight
            stays open; then it is closed. ``None``: for ever. ''' ),
    ] = SESSION_IDLE_TIMEOUT_DEFAULT,
) -> __.typx.Any:
    ''' Produces ASGI application serving streamable HTTP at path.

        The application connects the ensembles when it starts and
        disconnects them when it stops (its lifespan). Requests whose
        ``Host`` or ``Origin`` is not allowed are refused (protection
        against DNS rebinding). Serving beyond the loopback (host, or an
        allowed host, not a loopback name) without a token or verifier
        raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
        unless ``allow_unauthenticated``. A session which got a response
        over 64 KiB is pinged, so that it does not keep that response in
        memory while it is idle. Sessions are bounded in number and idle
        time (without ``stateless``); a bound which is not a positive
        number raises ``ConfigurationInvalidity``.
    '''
    from mcp.server.auth.settings import AuthSettings
    if not __.is_absent( token ):
        validate_token( token )
        token_verifier = _StaticTokenVerifier( token )
    hosts = _produce_allowed_hosts( host, allowed_hosts )
    guarded = token_verifier is None and not allow_unauthenticated
    if sessions_maximum is not None:
        __.values.validate_count( sessions_maximum, 'sessions_maximum' )
    __.values.validate_timeout( session_idle_timeout, 'session_idle_timeout' )
    _validate_exposure(
        ( host, *hosts ), token_verifier, allow_unauthenticated )
    # Resource server only: tokens are verified, never issued, here.
    auth = None if token_verifier is None else AuthSettings.model_validate( {
        'issuer_url': f"http://{_bracket( host or '127.0.0.1' )}",
        'resource_server_url': None } )
    if __.is_absent( event_store ) and not stateless:
        event_store = produce_event_store( )
    mcp_server = server.produce_server( )
    application = _server_sdk.produce_application(
        mcp_server, path = path, stateless = stateless,
        host = host, auth = auth, token_verifier = token_verifier,
        allowed_hosts = _produce_host_patterns( hosts ),
        allowed_origins = _produce_origin_patterns( hosts, allowed_origins ),
        event_store = None if __.is_absent( event_store ) else event_store,
        retry_interval = retry_interval,
        sessions = ( sessions_maximum, session_idle_timeout ) )
    inner = application.router.lifespan_context

    @__.ctxl.asynccontextmanager
    async def lifespan(
        app: __.typx.Any
    ) -> __.cabc.AsyncGenerator[ None, None ]:
        async with (
            _ensembles.connect_ensembles( server.ensembles ), inner( app ),
            _servers.produce_watcher( server ),
        ): yield

    application.router.lifespan_context = lifespan
    # Innermost: its pings need none of the middleware added below.
    if not stateless: application.add_middleware( _ResponsesReleaser )
    if isinstance( event_store, MemoryEventStore ):
        application.add_middleware(
            _events.SessionsTracker, store = event_store )
    # Without a token, clients beyond the loopback are refused whatever
    # the address listened on (an ASGI server may listen on any).
    if guarded: application.add_middleware( _LoopbackGuard )
    if token_verifier is not None:
        application.add_middleware( _CredentialsGuard )
    return application


def produce_application_from_environment( ) -> __.typx.Any:
    ''' Produces application from the options in ``INVOCABLES_SERVE_OPTIONS``.

        For ASGI servers which start workers by import (``uvicorn --factory
        invocables.serving:produce_application_from_environment``); the
        variable holds JSON: ``configuration``, ``policies``, ``stateless``,
        ``token_variable``, ``name``, ``host``, ``allowed_hosts``,
        ``allowed_origins``, ``allow_unauthenticated``,
        ``sessions_maximum``, ``session_idle_timeout`` (and
        ``header_timeout`` and ``body_timeout``, which
        :py:class:`HeaderTimeoutProtocol` reads).
    '''
    settings = _protocols.access_settings( )
    # Called by ASGI servers within their event loop: prepared apart.
    server = _run_apart( _servers.prepare_server( settings ) )
    token_variable = settings.get( 'token_variable' )
    token = _os.environ.get( token_variable ) if token_variable else None
    if token_variable and not token:
        raise _exceptions.ConfigurationInvalidity(
            f"{OPTIONS_VARIABLE}: token_variable",
            f"environment variable {token_variable!r} is not set or "
            "empty; export the token in it." )
    return produce_application(
        server, stateless = bool( settings.get( 'stateless' ) ),
        token = token or __.absent,
        host = settings.get( 'host' ) or '127.0.0.1',
        allowed_hosts = _access_names( settings, 'allowed_hosts' ),
        allowed_origins = _access_names( settings, 'allowed_origins' ),
        allow_unauthenticated = settings.get(
            'allow_unauthenticated' ) is True,
        sessions_maximum = settings.get(
            'sessions_maximum', SESSIONS_MAXIMUM_DEFAULT ),
        session_idle_timeout = settings.get(
            'session_idle_timeout', SESSION_IDLE_TIMEOUT_DEFAULT ) )


def produce_event_store(
    maximum: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Events kept, at most. ''' )
    ] = EVENTS_MAXIMUM_DEFAULT,
    size_maximum: __.typx.Annotated[
        int,
        __.ddoc.Doc( ''' Bytes kept, at most: the sizes of the events'
            messages in JSON. ''' ),
    ] = EVENTS_SIZE_MAXIMUM_DEFAULT,
) -> MemoryEventStore:
    ''' Produces the default event store: in memory, bounded in events
        and bytes, per session.
    '''
    return MemoryEventStore( maximum = maximum, size_maximum = size_maximum )


def is_loopback( host: str ) -> bool:
    ''' Returns whether host is a loopback name or address. '''
    name = _split_port( host )[ 0 ].lower( )
    if name == 'localhost' or name.endswith( '.localhost' ): return True
    try: return _ipaddress.ip_address( name ).is_loopback
    except ValueError: return False


def validate_token( token: str, location: str = 'token' ) -> None:
    ''' Refuses a bearer token which a client cannot send as it is: empty,
        longer than 16 KiB, or of other characters than visible ASCII (HTTP
        strips the spaces around a header's value; headers are not UTF-8).
        Never shows it.
    '''
    if __.is_sendable_token( token ): return
    raise _exceptions.ConfigurationInvalidity(
        location, "a bearer token holds visible ASCII characters only "
        "(no spaces, controls or other characters), from one to 16,384." )


def _access_names(
    settings: __.cabc.Mapping[ str, __.typx.Any ], key: str
) -> tuple[ str, ... ]:
    ''' Returns list of names of settings; refuses anything else. '''
    value = settings.get( key ) or ( )
    if isinstance( value, str ): value = ( value, )
    if not isinstance( value, ( list, tuple ) ) or not all(
        isinstance( name, str ) and name
        for name in __.typx.cast( __.cabc.Sequence[ __.typx.Any ], value )
    ):
        raise _exceptions.ConfigurationInvalidity(
            f"{OPTIONS_VARIABLE}: {key}", "expected a list of names." )
    return tuple( __.typx.cast( __.cabc.Sequence[ str ], value ) )


def _bracket( name: str ) -> str:
    ''' Returns host name as in URLs (IPv6 addresses in brackets). '''
    if ':' in name and not name.startswith( '[' ): return f"[{name}]"
    return name


def _produce_allowed_hosts(
    host: str, names: __.cabc.Sequence[ str ]
) -> tuple[ str, ... ]:
    ''' Returns host names which requests may give: those configured,
        the loopback names when serving on the loopback or every address,
        the address listened on when it is one.
    '''
    hosts = [ name.strip( ).lower( ) for name in names ]
    if host in _WILDCARDS or is_loopback( host ):
        hosts.extend( _LOOPBACK_NAMES )
    else: hosts.append( host.lower( ) )
    return tuple( dict.fromkeys( hosts ) )


def _produce_host_patterns(
    hosts: __.cabc.Sequence[ str ]
) -> tuple[ str, ... ]:
    ''' Returns patterns of ``Host`` headers (the SDK's): name, name:*. '''
    patterns: list[ str ] = [ ]
    for host in hosts:
        name, port = _split_port( host )
        name = _bracket( name )
        if port: patterns.append( f"{name}:{port}" )
        else: patterns.extend( ( name, f"{name}:*" ) )
    return tuple( patterns )


def _produce_origin_patterns(
    hosts: __.cabc.Sequence[ str ], origins: __.cabc.Sequence[ str ]
) -> tuple[ str, ... ]:
    ''' Returns patterns of ``Origin`` headers: those configured, and
        http and https of the allowed hosts.
    '''
    patterns: list[ str ] = [ ]
    for given in origins:
        origin = given.strip( ).rstrip( '/' ).lower( )
        patterns.append( origin )
        if not _split_port( origin.split( '://', 1 )[ -1 ] )[ 1 ]:
            patterns.append( f"{origin}:*" )
    for pattern in _produce_host_patterns( hosts ):
        patterns.extend( ( f"http://{pattern}", f"https://{pattern}" ) )
    return tuple( patterns )


def _run_apart(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ]
) -> __.typx.Any:
    ''' Runs coroutine to completion, in a loop of its own. '''
    try: __.asyncio.get_running_loop( )
    except RuntimeError: return __.asyncio.run( coroutine )
    import concurrent.futures as _futures
    with _futures.ThreadPoolExecutor( 1 ) as executor:
        return executor.submit( __.asyncio.run, coroutine ).result( )


def _validate_exposure(
    hosts: __.cabc.Sequence[ str ],
    token_verifier: __.typx.Any,
    allow_unauthenticated: bool, # noqa: FBT001
) -> None:
    ''' Refuses to serve beyond the loopback without a token, unless
        allowed; then warns.
    '''
    if token_verifier is not None: return
    foreign = [
        name or '0.0.0.0' for name in dict.fromkeys( hosts ) # noqa: S104
        if not is_loopback( _split_port( name )[ 0 ] ) ]
    if not foreign: return
    if not allow_unauthenticated:
        raise _exceptions.ConfigurationInvalidity(
            'token', "serving beyond the loopback ({names}) needs a token; "
            "give one, or allow unauthenticated access explicitly.".format(
                names = ', '.join( foreign ) ) )
    _scribe.warning(
        "Serving beyond the loopback ({names}) without a token: whoever "
        "reaches the server can call every tool.".format(
            names = ', '.join( foreign ) ) )


def _split_port( host: str ) -> tuple[ str, str ]:
    ''' Returns name and port (empty if none) of a host. '''
    if host.startswith( '[' ):
        name, _, rest = host[ 1 : ].partition( ']' )
        return name, rest[ 1 : ] if rest.startswith( ':' ) else ''
    if host.count( ':' ) == 1:
        name, _, port = host.partition( ':' )
        return name, port
    return host, ''
