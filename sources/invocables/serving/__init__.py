# SPDX-License-Identifier: Apache-2.0

''' Ensembles served as one MCP server, over stdio or streamable HTTP.

    Any ensembles (Python functions, TOML descriptors, other MCP servers:
    aggregation) become the tools of one server built on the ``mcp`` SDK's
    low-level server. Names are those a provider would see (scoped by
    ensemble when two ensembles offer the same name); descriptions, input
    and output schemas and annotations are passed through, and so are
    structured, image, audio and resource contents of results. Every call
    goes through the execution engine: arguments are validated before
    anything runs, the permission policy applies, and a failing tool
    becomes an error result. A client's cancellation cancels the call,
    which cancels the call to an upstream server in turn. Importing this
    module imports the ``mcp`` SDK (the ``mcp`` extra).
'''


import base64 as _base64
import hmac as _hmac
import ipaddress as _ipaddress
import os as _os
import uuid as _uuid
import warnings as _warnings
import weakref as _weakref

import h11 as _h11

from mcp.server.lowlevel import NotificationOptions as _NotificationOptions
from mcp.server.streamable_http import EventMessage as _EventMessage
from mcp.server.streamable_http import EventStore as _EventStore
from uvicorn.protocols.http.h11_impl import H11Protocol as _H11Protocol

from .. import __
from .. import canisters as _canisters
from .. import ensembles as _ensembles
from .. import exceptions as _exceptions
from .. import execution as _execution
from .. import invokers as _invokers
from .. import naming as _naming
from ..toolsets import policies as _policies
from ..mcp import _sdk as _sdk
from ..mcp._sdk import types as _mcp_types


CONNECTIONS_MAXIMUM_DEFAULT = 1000
EVENTS_MAXIMUM_DEFAULT = 10_000
HEADER_TIMEOUT_DEFAULT = 10.0
IDLE_TIMEOUT_DEFAULT = 5
NAME_DEFAULT = 'invocables'
OPTIONS_VARIABLE = 'INVOCABLES_SERVE_OPTIONS'
PATH_DEFAULT = '/mcp'
PORT_DEFAULT = 8000
SAMPLING_TOKENS_DEFAULT = 1000
WATCH_INTERVAL_DEFAULT = 0.5

_HINTS_WIRE = __.types.MappingProxyType( {
    'read_only': 'readOnlyHint', 'destructive': 'destructiveHint',
    'idempotent': 'idempotentHint', 'open_world': 'openWorldHint',
    'title': 'title',
} )
_LEVELS = (
    'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert',
    'emergency' )
_LOOPBACK_NAMES = ( '127.0.0.1', 'localhost', '::1' )
_RESOURCE_ABSENT = -32002 # MCP's code of a resource not found
_Signature: __.typx.TypeAlias = tuple[ int, ... ]
_WILDCARDS = ( '', '0.0.0.0', '::' ) # noqa: S104
_scribe = __.produce_scribe( __name__ )


class _AnnouncingServer( _sdk.ServerBase ):
    ''' Low-level server which announces that its tools may change. '''

    def create_initialization_options(
        self,
        notification_options: _NotificationOptions | None = None,
        *arguments: __.typx.Any, # SDK 2.x: also extensions
        **keywords: __.typx.Any,
    ) -> __.typx.Any:
        if notification_options is None:
            notification_options = _NotificationOptions(
                tools_changed = True )
        return super( ).create_initialization_options(
            notification_options, *arguments, **keywords )


class ToolServer( __.immut.Object, instances_mutables = ( '_listing', ) ):
    ''' Tools of ensembles, as handlers of an MCP server.

        Produce the SDK server with :py:meth:`produce_server`, or serve
        with :py:func:`serve_stdio` or :py:func:`produce_application`.
    '''

    def __init__(
        self,
        ensembles: __.cabc.Sequence[ _ensembles.Ensemble ],
        *,
        name: str = NAME_DEFAULT,
        instructions: __.Absential[ str ] = __.absent,
        policy: __.Absential[ _policies.Policy ] = __.absent,
        timeout: __.Absential[ float | None ] = __.absent,
        auxdata: __.typx.Any = None,
        limits: _execution.Limits = _execution.LIMITS_DEFAULT,
    ):
        self.ensembles = tuple( ensembles )
        self.name = name
        self.instructions = instructions
        self.policy = _adapt_policy( policy )
        self.timeout = timeout
        self.auxdata = auxdata
        self.limits = limits
        self._sessions: dict[ str, __.typx.Any ] = { }
        self._listeners: _weakref.WeakSet[ __.typx.Any ] = (
            _weakref.WeakSet( ) )
        self._levels: _weakref.WeakKeyDictionary[ __.typx.Any, str ] = (
            _weakref.WeakKeyDictionary( ) )
        self._listing: tuple[
            _naming.Nomenclature | None, _mcp_types.ListToolsResult | None
        ] = ( None, None )

    def produce_server( self ) -> _sdk.ServerBase:
        ''' Produces low-level server of the ``mcp`` SDK for the tools. '''
        from .. import __version__
        with _warnings.catch_warnings( ):
            # Logging is deprecated by MCP 2026-07-28, served for earlier.
            _warnings.simplefilter( 'ignore', UserWarning )
            return self._produce_server( __version__ )

    def _produce_server( self, version: str ) -> _sdk.ServerBase:
        return _sdk.produce_server(
            _AnnouncingServer, self.name, version = version,
            instructions = (
                None if __.is_absent( self.instructions )
                else self.instructions ),
            on_list_tools = self.survey_tools,
            on_call_tool = self.invoke_tool,
            on_set_logging_level = self.configure_logging,
            on_list_resources = self.survey_resources,
            on_list_resource_templates = self.survey_resource_templates,
            on_read_resource = self.retrieve_resource,
            on_list_prompts = self.survey_prompts,
            on_get_prompt = self.retrieve_prompt,
            on_completion = self.complete_argument,
            on_subscribe_resource = self.subscribe_resource,
            on_unsubscribe_resource = self.unsubscribe_resource )

    async def complete_argument(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.CompleteResult:
        ''' Handles ``completion/complete``: asks the upstream server of
            the prompt or resource template; no values if it has none.
        '''
        reference = parameters.ref
        target: __.typx.Any = None
        if reference.type == 'ref/prompt':
            found = self._access_prompt_names( await self._survey_prompts( ) )
            if reference.name in found:
                target, prompt = found[ reference.name ]
                reference = _mcp_types.PromptReference(
                    type = 'ref/prompt', name = prompt.name )
        else: target = await self._find_template( str( reference.uri ) )
        values: list[ str ] = [ ]
        if target is not None:
            arguments = None if parameters.context is None else (
                parameters.context.arguments )
            session, redactor = target.access_session_for_features( )
            try:
                result = await session.complete(
                    reference, {
                        'name': parameters.argument.name,
                        'value': parameters.argument.value },
                    arguments )
            except ( _exceptions.Omnierror, _sdk.Error ): result = None
            if result is not None:
                values = [
                    redactor.redact( value )
                    for value in result.completion.values ]
        return _mcp_types.CompleteResult(
            completion = _mcp_types.Completion( values = values ) )

    async def subscribe_resource(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.EmptyResult:
        ''' Handles ``resources/subscribe``: forwarded to the upstream
            servers which accept it.
        '''
        await self._forward_subscription( 'subscribe_resource', parameters )
        return _mcp_types.EmptyResult( )

    async def unsubscribe_resource(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.EmptyResult:
        ''' Handles ``resources/unsubscribe``: forwarded likewise. '''
        await self._forward_subscription(
            'unsubscribe_resource', parameters )
        return _mcp_types.EmptyResult( )

    async def _find_template( self, uri: str ) -> __.typx.Any:
        for ensemble in self._survey_featured( ):
            try: templates = await ensemble.survey_resource_templates( )
            except _exceptions.Omnierror: continue
            if any( template.uri_template == uri for template in templates ):
                return ensemble
        return None

    async def _forward_subscription(
        self, method: str, parameters: __.typx.Any
    ) -> None:
        async def forward( ensemble: __.typx.Any ) -> None:
            try:
                session, _ = ensemble.access_session_for_features( )
                await getattr( session, method )( str( parameters.uri ) )
            except ( _exceptions.Omnierror, _sdk.Error ): return
        for ensemble in self._survey_featured( ): await forward( ensemble )

    async def retrieve_prompt(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.GetPromptResult:
        ''' Handles ``prompts/get``: the prompt of its upstream server. '''
        name = str( parameters.name )
        found = self._access_prompt_names( await self._survey_prompts( ) )
        if name not in found:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"Unknown prompt {name!r}. List the prompts for the names "
                "which this server offers." )
        ensemble, prompt = found[ name ]
        try:
            messages = await ensemble.retrieve_prompt(
                prompt.name, parameters.arguments )
        except _exceptions.PromptAbsence as exception:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS, exception.reason ) from None
        return _sdk.produce_model(
            _mcp_types.GetPromptResult,
            description = prompt.description or None,
            messages = [
                _mcp_types.PromptMessage(
                    role = __.typx.cast( __.typx.Any, message.role ),
                    content = _produce_block( item ) )
                for message in messages for item in message.content ] )

    async def retrieve_resource(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ReadResourceResult:
        ''' Handles ``resources/read``: asks the upstream servers in
            order; the first which has the resource answers.
        '''
        uri = str( parameters.uri )
        for ensemble in self._survey_featured( ):
            try: contents = await ensemble.retrieve_resource( uri )
            except _exceptions.ResourceAbsence: continue
            except _exceptions.ConnectionFailure: continue
            return _mcp_types.ReadResourceResult( contents = [
                _produce_resource( item ) for item in contents
                if isinstance( item, _canisters.ResourceContent ) ] )
        raise _sdk.produce_error(
            _RESOURCE_ABSENT, f"Unknown resource {uri!r}.", { 'uri': uri } )

    async def survey_prompts(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListPromptsResult:
        ''' Handles ``prompts/list``: the upstream servers' prompts, named
            as tools are (scoped by ensemble when names clash).
        '''
        found = self._access_prompt_names( await self._survey_prompts( ) )
        return _mcp_types.ListPromptsResult( prompts = [
            _sdk.produce_model(
                _mcp_types.Prompt, name = name,
                title = _nullify( prompt.title ),
                description = prompt.description or None,
                arguments = [
                    _mcp_types.PromptArgument(
                        name = argument.name,
                        description = argument.description or None,
                        required = argument.required )
                    for argument in prompt.arguments ] )
            for name, ( _, prompt ) in found.items( ) ] )

    async def survey_resources(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListResourcesResult:
        ''' Handles ``resources/list``: every upstream server's. '''
        resources: list[ __.typx.Any ] = [ ]
        for ensemble in self._survey_featured( ):
            try: found = await ensemble.survey_resources( )
            except _exceptions.Omnierror: continue
            resources.extend(
                _sdk.produce_model(
                    _mcp_types.Resource, uri = resource.uri,
                    name = resource.name, title = _nullify( resource.title ),
                    description = resource.description or None,
                    mime_type = _nullify( resource.media_type ) )
                for resource in found )
        return _mcp_types.ListResourcesResult( resources = resources )

    async def survey_resource_templates(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListResourceTemplatesResult:
        ''' Handles ``resources/templates/list``: every upstream's. '''
        templates: list[ __.typx.Any ] = [ ]
        for ensemble in self._survey_featured( ):
            try: found = await ensemble.survey_resource_templates( )
            except _exceptions.Omnierror: continue
            templates.extend(
                _sdk.produce_model(
                    _mcp_types.ResourceTemplate,
                    uri_template = template.uri_template,
                    name = template.name, title = _nullify( template.title ),
                    description = template.description or None,
                    mime_type = _nullify( template.media_type ) )
                for template in found )
        return _sdk.produce_model(
            _mcp_types.ListResourceTemplatesResult,
            resource_templates = templates )

    def _access_prompt_names(
        self, found: __.cabc.Sequence[ tuple[ __.typx.Any, __.typx.Any ] ]
    ) -> dict[ str, tuple[ __.typx.Any, __.typx.Any ] ]:
        ''' Returns prompts by the names served: their own, or scoped by
            ensemble (``ensemble__name``) when two ensembles share one.
        '''
        counts = __.collections.Counter( prompt.name for _, prompt in found )
        return {
            ( prompt.name if counts[ prompt.name ] == 1
              else f"{ensemble.name}__{prompt.name}" ): ( ensemble, prompt )
            for ensemble, prompt in found }

    async def _survey_prompts(
        self
    ) -> list[ tuple[ __.typx.Any, __.typx.Any ] ]:
        found: list[ tuple[ __.typx.Any, __.typx.Any ] ] = [ ]
        for ensemble in self._survey_featured( ):
            try: prompts = await ensemble.survey_prompts( )
            except _exceptions.Omnierror: continue
            found.extend( ( ensemble, prompt ) for prompt in prompts )
        return found

    def _survey_featured( self ) -> tuple[ __.typx.Any, ... ]:
        ''' Returns ensembles with resources and prompts (MCP servers). '''
        from ..mcp.resources import FeaturesExtension
        return tuple(
            ensemble for ensemble in self.ensembles
            if isinstance( ensemble, FeaturesExtension ) )

    async def configure_logging(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``logging/setLevel``: the least level of the messages
            which tools log to this client.
        '''
        self._listen( context )
        session = context.session
        connection = getattr( session, '_connection', session )
        self._levels[ connection ] = str( parameters.level )
        return _mcp_types.EmptyResult( )

    async def invoke_tool(
        self,
        context: __.typx.Any,
        parameters: _mcp_types.CallToolRequestParams,
    ) -> _mcp_types.CallToolResult:
        ''' Handles ``tools/call``: runs the tool through the engine.

            An unknown tool is a protocol error (invalid parameters); every
            other failure is an error result for the client's model.
        '''
        self._listen( context )
        nomenclature = _naming.access_nomenclature( self.ensembles )
        try: designation = nomenclature.access_designation( parameters.name )
        except _exceptions.InvokerAbsence:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"Unknown tool {parameters.name!r}. List the tools for the "
                "names which this server offers." ) from None
        identifier = _uuid.uuid4( ).hex
        invocation = _canisters.InvocationCanister(
            identifier = identifier, name = parameters.name,
            arguments = parameters.arguments or { } )
        self._sessions[ identifier ] = context.session
        session = context.session
        level = self._levels.get(
            getattr( session, '_connection', session ), 'debug' )
        try:
            with _invokers.liaise( _SessionLiaison( context, level ) ):
                results = await _execution.execute_invocations(
                    ( invocation, ), nomenclature,
                    auxdata = self.auxdata, timeout = self.timeout,
                    failure_policy = _execution.FailurePolicies.Report,
                    policy = self.policy, limits = self.limits )
        finally: del self._sessions[ identifier ]
        return produce_call_result( results[ 0 ], designation.invoker )

    async def relay_progress( self, progress: __.typx.Any ) -> None:
        ''' Forwards progress of an upstream call to the calling client.

            Give it as ``reporter`` to upstream MCP ensembles
            (:py:func:`invocables.mcp.produce_ensemble`).
        '''
        identifier = getattr( progress, 'invocation_id', __.absent )
        if __.is_absent( identifier ): return
        session = self._sessions.get( identifier )
        if session is None: return
        await session.report_progress(
            progress.progress, progress.total, progress.message )

    async def survey_tools(
        self,
        context: __.typx.Any,
        parameters: _mcp_types.PaginatedRequestParams | None,
    ) -> _mcp_types.ListToolsResult:
        ''' Handles ``tools/list``: every tool of every ensemble. '''
        self._listen( context )
        nomenclature = _naming.access_nomenclature( self.ensembles )
        known, listing = self._listing
        if known is nomenclature and listing is not None: return listing
        listing = _mcp_types.ListToolsResult( tools = [
            produce_tool( designation )
            for designation in nomenclature.designations ] )
        self._listing = ( nomenclature, listing )
        return listing


    async def watch_tools(
        self, interval: float = WATCH_INTERVAL_DEFAULT
    ) -> None:
        ''' Sends ``tools/list_changed`` to clients when tools change.

            Runs until cancelled, looking every interval (seconds) whether
            an ensemble's tools changed (an upstream server's
            ``tools/list_changed``); clients which listed or called tools
            are told.
        '''
        known = self._access_signature( )
        while True:
            await __.asyncio.sleep( interval )
            signature = self._access_signature( )
            if signature is None or signature == known: continue
            known = signature
            for session in tuple( self._listeners ):
                await self._announce( session )

    async def _announce( self, session: __.typx.Any ) -> None:
        try: await session.send_tool_list_changed( )
        except Exception: # client gone: forget it
            self._listeners.discard( session )

    def _listen( self, context: __.typx.Any ) -> None:
        ''' Remembers the connection of the client, to notify it. '''
        session = context.session
        # The session is a view of one request; its connection (no public
        # accessor on the low-level context, mcp 2.3) lasts and notifies.
        self._listeners.add( getattr( session, '_connection', session ) )

    def _access_signature( self ) -> _Signature | None:
        try: return tuple(
            id( ensemble.survey_invokers( ) ) for ensemble in self.ensembles )
        except _exceptions.Omnierror: return None # not connected


class HeaderTimeoutProtocol( _H11Protocol ):
    ''' HTTP/1.1 of uvicorn which closes connections whose request does
        not complete its headers in time (uvicorn has no such limit).

        The timeout (seconds) counts from the connection, or from the first
        byte of a request on a kept connection, to the end of the request's
        headers. Its ``header_timeout`` is the class's (a subclass of
        :py:func:`produce_protocol`) or else the ``header_timeout`` of
        ``INVOCABLES_SERVE_OPTIONS``, 10 s by default. Give it to uvicorn
        as its HTTP implementation: ``--http
        invocables.serving:HeaderTimeoutProtocol``.
    '''

    header_timeout: __.typx.ClassVar[ float | None ] = None

    def __init__( self, *arguments: __.typx.Any, **keywords: __.typx.Any ):
        super( ).__init__( *arguments, **keywords )
        self._header_timer: __.asyncio.TimerHandle | None = None
        timeout = type( self ).header_timeout
        if timeout is None:
            timeout = _access_settings( ).get( 'header_timeout' )
        self._header_timeout = float(
            HEADER_TIMEOUT_DEFAULT if timeout is None else timeout )

    def connection_made( # pyright: ignore[reportIncompatibleMethodOverride]
        self, transport: __.asyncio.Transport
    ) -> None:
        super( ).connection_made( transport )
        self._arm_header_timer( )

    def connection_lost( self, exc: Exception | None ) -> None:
        self._disarm_header_timer( )
        super( ).connection_lost( exc )

    def data_received( self, data: bytes ) -> None:
        if self.conn.their_state is _h11.IDLE: self._arm_header_timer( )
        super( ).data_received( data )
        if self.conn.their_state is not _h11.IDLE:
            self._disarm_header_timer( )

    def _arm_header_timer( self ) -> None:
        if self._header_timer is not None: return
        self._header_timer = self.loop.call_later(
            self._header_timeout, self._expire_headers )

    def _disarm_header_timer( self ) -> None:
        if self._header_timer is None: return
        self._header_timer.cancel( )
        self._header_timer = None

    def _expire_headers( self ) -> None:
        self._header_timer = None
        if self.conn.their_state is not _h11.IDLE: return
        if not self.transport.is_closing( ): self.transport.close( )


class MemoryEventStore( _EventStore ):
    ''' Events of streams, in memory, for clients to resume streams.

        Keeps the latest ``maximum`` events of all streams; a client which
        resumes after an event forgotten gets nothing replayed. Any event
        store of the ``mcp`` SDK (``EventStore``) can replace it.
    '''

    def __init__( self, maximum: int = EVENTS_MAXIMUM_DEFAULT ):
        self.maximum = maximum
        self._events: __.collections.OrderedDict[
            str, tuple[ str, __.typx.Any ] ] = __.collections.OrderedDict( )

    async def store_event(
        self, stream_id: str, message: __.typx.Any
    ) -> str:
        ''' Stores message of stream; returns its event identifier. '''
        identifier = _uuid.uuid4( ).hex
        self._events[ identifier ] = ( stream_id, message )
        while len( self._events ) > self.maximum:
            self._events.popitem( last = False )
        return identifier

    async def replay_events_after(
        self,
        last_event_id: str,
        send_callback: __.cabc.Callable[
            [ _EventMessage ], __.cabc.Awaitable[ None ] ],
    ) -> str | None:
        ''' Sends the events of the stream after an event; returns the
            stream, or ``None`` if the event is unknown.
        '''
        if last_event_id not in self._events: return None
        stream = self._events[ last_event_id ][ 0 ]
        after = False
        for identifier, ( owner, message ) in tuple( self._events.items( ) ):
            if identifier == last_event_id:
                after = True
                continue
            if not after or owner != stream or message is None: continue
            await send_callback( _EventMessage( message, identifier ) )
        return stream


class _LoopbackGuard:
    ''' ASGI middleware which refuses clients beyond the loopback (403).
    '''

    def __init__( self, app: __.typx.Any ):
        self.app = app

    async def __call__(
        self, scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any
    ) -> None:
        client = scope.get( 'client' ) if scope[ 'type' ] == 'http' else None
        if client is None or is_loopback( str( client[ 0 ] ) ):
            await self.app( scope, receive, send )
            return
        from starlette.responses import PlainTextResponse
        response = PlainTextResponse(
            "Serving beyond the loopback needs a token.", status_code = 403 )
        await response( scope, receive, send )


class _SessionLiaison:
    ''' Answers a local tool's requests through the calling client's
        session: logging, progress, elicitation, sampling.
    '''

    def __init__( self, context: __.typx.Any, level: str ):
        self.context = context
        self.level = level

    async def log(
        self, level: str, data: object, logger: str | None
    ) -> None:
        ''' Sends ``notifications/message`` if level is enough. '''
        if level not in _LEVELS: level = 'info'
        minimum = self.level if self.level in _LEVELS else 'debug'
        if _LEVELS.index( level ) < _LEVELS.index( minimum ): return
        with _warnings.catch_warnings( ):
            _warnings.simplefilter( 'ignore', UserWarning ) # deprecated
            await self.context.session.send_log_message(
                level, data, logger,
                related_request_id = self.context.request_id )

    async def report_progress(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        ''' Sends progress, if the client asked for it. '''
        await self.context.session.report_progress( progress, total, message )

    async def elicit(
        self, message: str, schema: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> __.typx.Any:
        ''' Sends ``elicitation/create``; returns the client's answer. '''
        return await self.context.session.elicit_form(
            message, _thaw( schema ),
            related_request_id = self.context.request_id )

    async def sample(
        self, messages: __.cabc.Sequence[ __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Sends ``sampling/createMessage``; returns the answer. Messages
            are text (from the user) or MCP sampling messages (mappings).
        '''
        samples = [
            _mcp_types.SamplingMessage(
                role = 'user',
                content = _mcp_types.TextContent(
                    type = 'text', text = message ) )
            if isinstance( message, str )
            else _mcp_types.SamplingMessage.model_validate( message )
            for message in messages ]
        options.setdefault( 'max_tokens', SAMPLING_TOKENS_DEFAULT )
        with _warnings.catch_warnings( ):
            _warnings.simplefilter( 'ignore', UserWarning ) # deprecated
            return await self.context.session.create_message(
                samples, related_request_id = self.context.request_id,
                **options )


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
        ToolServer, __.ddoc.Doc( ''' Tools to serve. ''' )
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
            streams resumable; ``None`` for none. Default: in memory. ''' ),
    ] = __.absent,
    retry_interval: __.typx.Annotated[
        int | None,
        __.ddoc.Doc( ''' Milliseconds which clients are told to wait
            before they resume a stream (with an event store). ''' ),
    ] = None,
) -> __.typx.Any:
    ''' Produces ASGI application serving streamable HTTP at path.

        The application connects the ensembles when it starts and
        disconnects them when it stops (its lifespan). Requests whose
        ``Host`` or ``Origin`` is not allowed are refused (protection
        against DNS rebinding). Serving beyond the loopback (host, or an
        allowed host, not a loopback name) without a token or verifier
        raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
        unless ``allow_unauthenticated``.
    '''
    from mcp.server.auth.settings import AuthSettings
    if not __.is_absent( token ):
        token_verifier = _StaticTokenVerifier( token )
    hosts = _produce_allowed_hosts( host, allowed_hosts )
    guarded = token_verifier is None and not allow_unauthenticated
    _validate_exposure(
        ( host, *hosts ), token_verifier, allow_unauthenticated )
    # Resource server only: tokens are verified, never issued, here.
    auth = None if token_verifier is None else AuthSettings.model_validate( {
        'issuer_url': f"http://{_bracket( host or '127.0.0.1' )}",
        'resource_server_url': None } )
    if __.is_absent( event_store ) and not stateless:
        event_store = produce_event_store( )
    mcp_server = server.produce_server( )
    application = _sdk.produce_application(
        mcp_server, path = path, stateless = stateless,
        host = host, auth = auth, token_verifier = token_verifier,
        allowed_hosts = _produce_host_patterns( hosts ),
        allowed_origins = _produce_origin_patterns( hosts, allowed_origins ),
        event_store = None if __.is_absent( event_store ) else event_store,
        retry_interval = retry_interval )
    inner = application.router.lifespan_context

    @__.ctxl.asynccontextmanager
    async def lifespan(
        app: __.typx.Any
    ) -> __.cabc.AsyncGenerator[ None, None ]:
        async with (
            _ensembles.connect_ensembles( server.ensembles ), inner( app ),
            _watch_tools( server ),
        ): yield

    application.router.lifespan_context = lifespan
    # Without a token, clients beyond the loopback are refused whatever
    # the address listened on (an ASGI server may listen on any).
    if guarded: application.add_middleware( _LoopbackGuard )
    return application


def produce_application_from_environment( ) -> __.typx.Any:
    ''' Produces application from the options in ``INVOCABLES_SERVE_OPTIONS``.

        For ASGI servers which start workers by import (``uvicorn --factory
        invocables.serving:produce_application_from_environment``); the
        variable holds JSON: ``configuration``, ``policies``, ``stateless``,
        ``token_variable``, ``name``, ``host``, ``allowed_hosts``,
        ``allowed_origins``, ``allow_unauthenticated`` (and
        ``header_timeout``, which :py:class:`HeaderTimeoutProtocol` reads).
    '''
    settings = _access_settings( )
    # Called by ASGI servers within their event loop: prepared apart.
    server = _run_apart( prepare_server( settings ) )
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
            'allow_unauthenticated' ) is True )


def produce_event_store( ) -> MemoryEventStore:
    ''' Produces the default event store: in memory, bounded. '''
    return MemoryEventStore( )


def produce_call_result(
    result: _canisters.ResultCanister, invoker: __.typx.Any
) -> _mcp_types.CallToolResult:
    ''' Produces MCP result of a result canister. '''
    if not __.is_absent( result.error ):
        return _sdk.produce_model(
            _mcp_types.CallToolResult,
            content = [ _mcp_types.TextContent(
                type = 'text', text = result.error.message ) ],
            is_error = True )
    blocks: list[ __.typx.Any ] = [ ]
    structure: __.typx.Any = None
    for item in result.content:
        if isinstance( item, _canisters.StructureContent ):
            data: __.typx.Any = item.data
            if structure is None and isinstance( data, dict ):
                structure = __.typx.cast( dict[ str, __.typx.Any ], data )
            blocks.append( _mcp_types.TextContent(
                type = 'text',
                text = __.json.dumps( data, ensure_ascii = False ) ) )
            continue
        blocks.append( _produce_block( item ) )
    outschema = getattr( invoker, 'outschema', __.absent )
    if structure is None and not __.is_absent( outschema ):
        structure = _derive_structure( result.content, outschema )
    return _sdk.produce_model(
        _mcp_types.CallToolResult,
        content = blocks, structured_content = structure )


def produce_protocol(
    header_timeout: float = HEADER_TIMEOUT_DEFAULT
) -> type[ HeaderTimeoutProtocol ]:
    ''' Produces HTTP implementation for uvicorn with a header timeout. '''
    return type(
        'HeaderTimeoutProtocol', ( HeaderTimeoutProtocol, ),
        { 'header_timeout': header_timeout } )


async def prepare_server(
    settings: __.typx.Annotated[
        __.cabc.Mapping[ str, __.typx.Any ],
        __.ddoc.Doc( ''' ``configuration`` (path; default: as the
            ``invocables`` command finds it), ``policies`` (path of a
            policy file), ``name``. ''' ),
    ],
) -> ToolServer:
    ''' Prepares server of the ensembles of a configuration; unconnected.

        Upstream MCP servers without a progress reporter relay their
        progress to the calling clients. Raises the library's
        configuration errors (naming file and key) before anything runs.
    '''
    from .. import descriptors as _descriptors
    ensembles = await _descriptors.prepare_ensembles(
        _access_configuration( settings ) )
    return _produce_server_of( ensembles, settings )


def produce_tool( designation: _naming.Designation ) -> _mcp_types.Tool:
    ''' Produces MCP tool description of a designation. '''
    invoker = designation.invoker
    outschema = invoker.outschema
    return _sdk.produce_model(
        _mcp_types.Tool,
        name = designation.name,
        description = invoker.description or None,
        input_schema = _thaw( invoker.argschema ),
        output_schema = (
            None if __.is_absent( outschema ) else _thaw( outschema ) ),
        annotations = _produce_annotations( invoker.annotations ) )


def is_loopback( host: str ) -> bool:
    ''' Returns whether host is a loopback name or address. '''
    name = _split_port( host )[ 0 ].lower( )
    if name == 'localhost' or name.endswith( '.localhost' ): return True
    try: return _ipaddress.ip_address( name ).is_loopback
    except ValueError: return False


async def serve_stdio(
    server: __.typx.Annotated[
        ToolServer, __.ddoc.Doc( ''' Tools to serve. ''' )
    ],
    announce: __.typx.Annotated[
        __.cabc.Callable[ [ ], None ] | None,
        __.ddoc.Doc( ''' Called once the ensembles are connected, before
            the first message is read (such as to say so on the standard
            error stream; never the standard output). ''' ),
    ] = None,
) -> None:
    ''' Serves over stdin and stdout until the client closes them.

        Connects the ensembles first and disconnects them at the end.
    '''
    from mcp.server.stdio import stdio_server
    mcp_server = server.produce_server( )
    async with (
        _ensembles.connect_ensembles( server.ensembles ),
        _watch_tools( server ),
        stdio_server( ) as ( read, write ),
    ):
        if announce is not None: announce( )
        await mcp_server.run(
            read, write, mcp_server.create_initialization_options( ) )


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


def _access_settings( ) -> __.cabc.Mapping[ str, __.typx.Any ]:
    ''' Returns options of ``INVOCABLES_SERVE_OPTIONS`` (JSON object). '''
    text = _os.environ.get( OPTIONS_VARIABLE ) or '{}'
    try: settings: __.typx.Any = __.json.loads( text )
    except ValueError: settings = None
    if not isinstance( settings, dict ):
        raise _exceptions.ConfigurationInvalidity(
            OPTIONS_VARIABLE, "expected a JSON object." )
    return __.typx.cast( dict[ str, __.typx.Any ], settings )


def _adapt_policy(
    policy: __.Absential[ _policies.Policy ]
) -> __.Absential[ _policies.Policy ]:
    ''' Returns policy whose asking rules refuse, unless it has an approver.

        A server has nobody to ask, and a suspended call would never end.
    '''
    if __.is_absent( policy ) or not __.is_absent( policy.approver ):
        return policy

    async def refuse(
        request: _policies.ApprovalRequest
    ) -> _policies.Approvals:
        return _policies.Approvals.Deny

    return policy.with_approver( refuse )


def _bracket( name: str ) -> str:
    ''' Returns host name as in URLs (IPv6 addresses in brackets). '''
    if ':' in name and not name.startswith( '[' ): return f"[{name}]"
    return name


def _derive_structure(
    content: _canisters.ContentSequence, outschema: __.Schema
) -> __.typx.Any:
    ''' Returns structure which a declared output schema requires.

        Upstream results whose structure repeated their text come as text
        alone: the text is JSON of the structure, or its one field.
    '''
    texts = [
        item.text for item in content
        if isinstance( item, _canisters.TextContent ) ]
    if len( texts ) != 1: return None
    text = texts[ 0 ]
    try: data: __.typx.Any = __.json.loads( text )
    except ValueError: data = None
    if isinstance( data, dict ): return __.typx.cast( __.typx.Any, data )
    properties: __.typx.Any = outschema.get( 'properties' )
    if not isinstance( properties, __.cabc.Mapping ): return None
    names = tuple( __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ],
        properties ) )
    if len( names ) == 1: return { names[ 0 ]: text }
    return None


def _produce_annotations(
    annotations: __.cabc.Mapping[ str, __.typx.Any ]
) -> _mcp_types.ToolAnnotations | None:
    if not annotations: return None
    data = {
        _HINTS_WIRE.get( key, key ): value
        for key, value in annotations.items( ) }
    try: return _mcp_types.ToolAnnotations.model_validate( data )
    except ValueError: return None


def _produce_block( item: _canisters.Content ) -> __.typx.Any:
    match item:
        case _canisters.TextContent( ):
            return _mcp_types.TextContent( type = 'text', text = item.text )
        case _canisters.ImageContent( ):
            return _sdk.produce_model(
                _mcp_types.ImageContent, type = 'image',
                data = _encode( item.data ), mime_type = item.media_type )
        case _canisters.AudioContent( ):
            return _sdk.produce_model(
                _mcp_types.AudioContent, type = 'audio',
                data = _encode( item.data ), mime_type = item.media_type )
        case _canisters.ResourceContent( ):
            return _mcp_types.EmbeddedResource(
                type = 'resource', resource = _produce_resource( item ) )
        case _canisters.ResourceLinkContent( ):
            return _sdk.produce_model(
                _mcp_types.ResourceLink,
                type = 'resource_link', uri = item.uri,
                name = item.uri if __.is_absent( item.name ) else item.name,
                description = _nullify( item.description ),
                mime_type = _nullify( item.media_type ) )
        case _: # pragma: no cover
            return _mcp_types.TextContent(
                type = 'text', text = _canisters.render_content_text( item ) )


def _produce_resource( item: _canisters.ResourceContent ) -> __.typx.Any:
    media_type = _nullify( item.media_type )
    if not __.is_absent( item.text ):
        return _sdk.produce_model(
            _mcp_types.TextResourceContents,
            uri = item.uri, mime_type = media_type, text = item.text )
    data = b'' if __.is_absent( item.data ) else item.data
    return _sdk.produce_model(
        _mcp_types.BlobResourceContents,
        uri = item.uri, mime_type = media_type, blob = _encode( data ) )


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


def _produce_server_of(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ],
    settings: __.cabc.Mapping[ str, __.typx.Any ],
) -> ToolServer:
    ''' Produces server of configured ensembles, relaying their progress. '''
    path = settings.get( 'policies' )
    policy = (
        __.absent if path is None else _policies.load_policy( path ) )
    servers: list[ ToolServer ] = [ ]

    async def relay( progress: __.typx.Any ) -> None:
        await servers[ 0 ].relay_progress( progress )

    server = ToolServer(
        tuple( _relay_progress( ensemble, relay ) for ensemble in ensembles ),
        name = settings.get( 'name' ) or NAME_DEFAULT, policy = policy )
    servers.append( server )
    return server


def _relay_progress(
    ensemble: _ensembles.Ensemble,
    relay: __.cabc.Callable[ [ __.typx.Any ], __.cabc.Awaitable[ None ] ],
) -> _ensembles.Ensemble:
    ''' Returns MCP ensemble which reports progress to relay, if it has no
        reporter of its own; any other ensemble as it is.
    '''
    from ..mcp.ensembles import ServerEnsemble
    if not isinstance( ensemble, ServerEnsemble ): return ensemble
    if not __.is_absent( ensemble.options.reporter ): return ensemble
    return ServerEnsemble(
        ensemble.name, ensemble.parameters, ensemble.configuration,
        __.dcls.replace( ensemble.options, reporter = relay ) )


def _access_configuration(
    settings: __.cabc.Mapping[ str, __.typx.Any ]
) -> __.Path:
    configuration = settings.get( 'configuration' )
    if configuration is None: return _locate_configuration( )
    return __.Path( configuration )


def _locate_configuration( ) -> __.Path:
    from ..cli import locate_configuration
    return locate_configuration( )


def _run_apart(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ]
) -> __.typx.Any:
    ''' Runs coroutine to completion, in a loop of its own. '''
    try: __.asyncio.get_running_loop( )
    except RuntimeError: return __.asyncio.run( coroutine )
    import concurrent.futures as _futures
    with _futures.ThreadPoolExecutor( 1 ) as executor:
        return executor.submit( __.asyncio.run, coroutine ).result( )


@__.ctxl.asynccontextmanager
async def _watch_tools(
    server: ToolServer
) -> __.cabc.AsyncGenerator[ None, None ]:
    ''' Watches tools of server for the body; stops watching after it. '''
    task = __.asyncio.get_running_loop( ).create_task( server.watch_tools( ) )
    try: yield
    finally:
        task.cancel( )
        await __.asyncio.gather( task, return_exceptions = True )


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


def _encode( data: bytes ) -> str:
    return _base64.b64encode( data ).decode( 'ascii' )


def _nullify( value: __.Absential[ str ] ) -> str | None:
    return None if __.is_absent( value ) else value


def _split_port( host: str ) -> tuple[ str, str ]:
    ''' Returns name and port (empty if none) of a host. '''
    if host.startswith( '[' ):
        name, _, rest = host[ 1 : ].partition( ']' )
        return name, rest[ 1 : ] if rest.startswith( ':' ) else ''
    if host.count( ':' ) == 1:
        name, _, port = host.partition( ':' )
        return name, port
    return host, ''


def _thaw( value: __.typx.Any ) -> __.typx.Any:
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value )
        return { key: _thaw( item ) for key, item in mapping.items( ) }
    if isinstance( value, ( list, tuple ) ):
        sequence = __.typx.cast( __.cabc.Sequence[ __.typx.Any ], value )
        return [ _thaw( item ) for item in sequence ]
    return value
