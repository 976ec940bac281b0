# SPDX-License-Identifier: Apache-2.0

''' The server side of the ``mcp`` SDK, major 1 or 2, behind one interface.

    The low-level server with handlers named as the 2.x server's keywords
    (:py:func:`produce_server`), and the ASGI application serving it over
    streamable HTTP (:py:func:`produce_application`). With 1.x, handlers
    see the request context and session as 2.x gives them. The client side
    is :py:mod:`invocables.mcp._sdk`. Type checkers see the 2.x SDK.
'''


from typing import TYPE_CHECKING

from mcp.server.lowlevel import NotificationOptions as _NotificationOptions

import invocables.serving.__ as __
import invocables.serving._legacybodies as _legacybodies
import invocables.exceptions as _exceptions
from ..mcp._sdk import MAJOR as _MAJOR
from ..mcp._sdk import produce_error as _produce_error
from ..mcp._sdk import types as _types


if TYPE_CHECKING:
    from mcp.server.lowlevel import Server as _Server

    ServerBase: __.typx.TypeAlias = _Server[ __.typx.Any ]
else:
    from mcp.server.lowlevel import Server as ServerBase


_ServerT = __.typx.TypeVar( '_ServerT', bound = ServerBase )

_CURRENT = _MAJOR >= 2 # noqa: PLR2004
_REQUESTS_LEGACY = __.types.MappingProxyType( {
    'on_list_tools': 'ListToolsRequest',
    'on_call_tool': 'CallToolRequest',
    'on_set_logging_level': 'SetLevelRequest',
    'on_list_resources': 'ListResourcesRequest',
    'on_list_resource_templates': 'ListResourceTemplatesRequest',
    'on_read_resource': 'ReadResourceRequest',
    'on_list_prompts': 'ListPromptsRequest',
    'on_get_prompt': 'GetPromptRequest',
    'on_completion': 'CompleteRequest',
    'on_subscribe_resource': 'SubscribeRequest',
    'on_unsubscribe_resource': 'UnsubscribeRequest',
} )
# Handlers of the tasks of MCP 2025-11-25: method, parameters (2.x),
# request (1.x). The 2.x server has no keywords for them.
_REQUESTS_TASKS = __.types.MappingProxyType( {
    'on_get_task': ( 'tasks/get', 'GetTaskRequestParams', 'GetTaskRequest' ),
    'on_get_task_result': (
        'tasks/result', 'GetTaskPayloadRequestParams',
        'GetTaskPayloadRequest' ),
    'on_cancel_task': (
        'tasks/cancel', 'CancelTaskRequestParams', 'CancelTaskRequest' ),
    'on_list_tasks': (
        'tasks/list', 'PaginatedRequestParams', 'ListTasksRequest' ),
    # The extension of MCP 2026-07-28 (2.x only): its parameters are those
    # of tasks/get, and its responses (kept as extra fields).
    'on_update_task': ( 'tasks/update', 'GetTaskRequestParams', None ),
} )
_TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'
# Requests of the server to its client, by method: the SDK's models.
_REQUESTS_SERVER = __.types.MappingProxyType( {
    'elicitation/create': 'ElicitRequest',
    'sampling/createMessage': 'CreateMessageRequest',
} )
_HEADER_MISMATCH = -32020 # HeaderMismatch


class AnnouncingServer( ServerBase ):
    ''' Low-level server which announces that its tools, resources and
        prompts may change.
    '''

    def create_initialization_options(
        self,
        notification_options: _NotificationOptions | None = None,
        *arguments: __.typx.Any, # SDK 2.x: also extensions
        **keywords: __.typx.Any,
    ) -> __.typx.Any:
        if notification_options is None:
            notification_options = _NotificationOptions(
                prompts_changed = True, resources_changed = True,
                tools_changed = True )
        return super( ).create_initialization_options(
            notification_options, *arguments, **keywords )

    def get_capabilities(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> __.typx.Any:
        ''' Returns capabilities of the handlers; with handlers of tasks,
            the tasks of tool calls, their list and cancellation; under MCP
            2026-07-28, the tasks extension instead.
        '''
        capabilities = super( ).get_capabilities( *arguments, **keywords )
        if not _is_serving_tasks( self ): return capabilities
        if _is_modern_version( keywords.get( 'protocol_version' ) ):
            return capabilities
        update: dict[ str, __.typx.Any ] = { }
        if _CURRENT: # the extension is of MCP 2026-07-28 only
            extensions = dict( capabilities.extensions or { } )
            extensions.pop( _TASKS_EXTENSION, None )
            update[ 'extensions' ] = extensions or None
        return capabilities.model_copy( update = {
            **update,
            'tasks': _types.ServerTasksCapability(
                list = _types.TasksListCapability( ),
                cancel = _types.TasksCancelCapability( ),
                requests = _types.ServerTasksRequestsCapability(
                    tools = _types.TasksToolsCapability(
                        call = _types.TasksCallCapability( ) ) ) ) } )


def is_modern_session( context: __.typx.Any ) -> bool:
    ''' Returns whether request came in a session of MCP 2026-07-28 or
        later, which knows no tasks of 2025-11-25 (a ``task`` of a tool
        call is ignored) but the tasks extension.
    '''
    return _is_modern_version( getattr( context, 'protocol_version', None ) )


def verify_routing_header( context: __.typx.Any ) -> None:
    ''' Raises if the HTTP header ``Mcp-Name`` of a request about a task
        names another task than its parameters (MCP 2026-07-28).
    '''
    headers: __.typx.Any = getattr(
        getattr( context, 'request', None ), 'headers', None )
    if headers is None: return
    value: __.typx.Any = headers.get( 'mcp-name' )
    if value is None: return
    from mcp.shared.inbound import decode_header_value
    parameters: __.typx.Any = getattr( context, 'params', None ) or { }
    identifier = parameters.get( 'taskId' )
    if decode_header_value( value ) == identifier: return
    raise _produce_error(
        _HEADER_MISMATCH,
        "The header Mcp-Name does not match the request's taskId." )


def _is_modern_version( version: object ) -> bool:
    ''' Returns whether protocol version is MCP 2026-07-28 or later. '''
    if not _CURRENT: return False
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS
    return version in MODERN_PROTOCOL_VERSIONS


def produce_application( # noqa: PLR0913
    server: __.typx.Any,
    *,
    path: str,
    stateless: bool,
    host: str,
    auth: __.typx.Any,
    token_verifier: __.typx.Any,
    allowed_hosts: __.cabc.Sequence[ str ] = (
        '127.0.0.1:*', 'localhost:*', '[::1]:*' ),
    allowed_origins: __.cabc.Sequence[ str ] = (
        'http://127.0.0.1:*', 'http://localhost:*', 'http://[::1]:*' ),
    event_store: __.typx.Any = None,
    retry_interval: int | None = None,
    sessions: tuple[ int | None, float | None ] = ( 10_000, 1800.0 ),
) -> __.typx.Any:
    ''' Produces ASGI application serving low-level server at path.

        Streamable HTTP; with a token verifier, every request must carry a
        token it accepts. Requests whose ``Host`` or ``Origin`` header is
        not allowed (patterns of the SDK: ``name``, ``name:*``) are refused
        (421, 403). Sessions are bounded: most open at once, and seconds
        idle (the SDK's options). The 2.x low-level server builds it; for
        1.x, the same parts are assembled here.
    '''
    security = _produce_security( allowed_hosts, allowed_origins )
    if _CURRENT:
        return server.streamable_http_app(
            streamable_http_path = path, stateless_http = stateless,
            host = host, auth = auth, token_verifier = token_verifier,
            transport_security = security, event_store = event_store,
            retry_interval = retry_interval, max_sessions = sessions[ 0 ],
            session_idle_timeout = sessions[ 1 ] )
    return _produce_application_legacy(
        server, path, stateless, security, auth, token_verifier,
        ( event_store, retry_interval ), sessions )


def produce_server(
    model: type[ _ServerT ],
    name: str,
    *,
    version: str,
    instructions: str | None,
    state_duration: float | None = None,
    **handlers: __.cabc.Callable[ ..., __.typx.Any ],
) -> _ServerT:
    ''' Produces low-level server (class ``model``) with handlers.

        Each handler takes the request context and the request parameters;
        handlers are named as the 2.x server's keywords (``on_list_tools``,
        ``on_call_tool``, ``on_set_logging_level``), and those of tasks
        ``on_get_task``, ``on_get_task_result``, ``on_cancel_task``,
        ``on_list_tasks`` and (2.x, MCP 2026-07-28) ``on_update_task``.
        With them, the tool call handler may return a task
        (``CreateTaskResult``) when asked for one; with the last, the 2.x
        server advertises the tasks extension. With a state duration
        (2.x), the ``requestState`` of MCP 2026-07-28 results is sealed
        (AES-GCM under a key of the process, the SDK's
        ``RequestStateBoundary``), good for that many seconds.
    '''
    tasked = {
        keyword: handlers.pop( keyword )
        for keyword in _REQUESTS_TASKS if keyword in handlers }
    requests: __.typx.Any = _types
    if _CURRENT:
        produce: __.typx.Any = model
        server = produce(
            name, version = version, instructions = instructions,
            **handlers )
        for keyword, handler in tasked.items( ):
            method, parameters, _ = _REQUESTS_TASKS[ keyword ]
            server.add_request_handler(
                method, getattr( requests, parameters ), handler )
        if 'on_update_task' in tasked:
            server.extensions[ _TASKS_EXTENSION ] = { }
        if tasked and 'on_call_tool' in handlers:
            server.middleware.append(
                _TaskCallMiddleware( handlers[ 'on_call_tool' ] ) )
        if state_duration is not None:
            server.middleware.append( _produce_state_boundary(
                name, state_duration ) )
        return server
    legacy: __.typx.Any = model(
        name, version = version, instructions = instructions )
    for keyword, handler in handlers.items( ):
        request = _REQUESTS_LEGACY[ keyword ]
        legacy.request_handlers[ getattr( requests, request ) ] = (
            _adapt_legacy( legacy, handler ) )
    for keyword, handler in tasked.items( ):
        request = _REQUESTS_TASKS[ keyword ][ 2 ]
        if request is None: continue # of MCP 2026-07-28
        legacy.request_handlers[ getattr( requests, request ) ] = (
            _adapt_legacy( legacy, handler ) )
    return legacy


def _produce_state_boundary( name: str, duration: float ) -> __.typx.Any:
    ''' Returns middleware of the 2.x server which seals and checks the
        ``requestState`` of multi round trip requests.
    '''
    from mcp.server.request_state import (
        RequestStateBoundary, RequestStateSecurity )
    return RequestStateBoundary(
        RequestStateSecurity.ephemeral( ttl = duration ),
        default_audience = name )


class _TaskCallMiddleware:
    ''' Middleware of the 2.x server which answers a tool call asking for
        a task (MCP 2025-11-25) with the handler's task itself.

        The 2.x server checks the result of ``tools/call`` against the
        ``CallToolResult`` of the protocol and keeps only its fields: a
        task (``CreateTaskResult``) would become an internal error.
    '''

    def __init__( self, handler: __.cabc.Callable[ ..., __.typx.Any ] ):
        self.handler = handler

    async def __call__(
        self, context: __.typx.Any, call_next: __.typx.Any
    ) -> __.typx.Any:
        parameters: __.typx.Any = context.params
        if context.method != 'tools/call' or is_modern_session(
            context
        ) or not _is_task_asked( parameters ):
            return await call_next( context )
        request = _types.CallToolRequestParams.model_validate(
            parameters, by_name = False )
        return await self.handler( context, request )


class _ContextLegacy:
    ''' Request context of the 1.x server, as the 2.x handlers see it. '''

    def __init__( self, context: __.typx.Any ):
        self.context = context
        self.request_id = context.request_id
        self.meta = context.meta
        self.request = getattr( context, 'request', None ) # HTTP's, if any
        self.session = _SessionLegacy( context )


class _SessionLegacy:
    ''' Session of one 1.x request, as a 2.x request's session. '''

    def __init__( self, context: __.typx.Any ):
        # The connection lasts beyond the request, and notifies.
        self._connection = context.session
        self.context = context

    @property
    def connection( self ) -> __.typx.Any:
        ''' The session of the connection, which lasts. '''
        return self._connection

    @property
    def client_capabilities( self ) -> __.typx.Any:
        ''' Capabilities the client declared, or None. '''
        parameters = self._connection.client_params
        return None if parameters is None else parameters.capabilities

    async def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        ''' Sends progress of the request, if its client asked for it. '''
        meta = self.context.meta
        token = None if meta is None else meta.progressToken
        if token is None: return
        await self._connection.send_progress_notification(
            token, progress, total, message,
            related_request_id = self.context.request_id )

    async def send_notification( self, notification: __.typx.Any ) -> None:
        ''' Sends notification on the session's own stream. '''
        legacy: __.typx.Any = _types
        await self._connection.send_notification(
            legacy.ServerNotification( notification ) )

    async def send_tool_list_changed( self ) -> None:
        ''' Tells client that the tools changed. '''
        await self._connection.send_tool_list_changed( )

    async def send_log_message(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> None:
        ''' Sends log message to the client. '''
        await self._connection.send_log_message( *arguments, **keywords )

    async def elicit_form(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> __.typx.Any:
        ''' Asks the client's user (``elicitation/create``). '''
        self._verify_channel( 'elicitation' )
        return await self._connection.elicit( *arguments, **keywords )

    async def elicit_url(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> __.typx.Any:
        ''' Asks the client's user to visit a URL (``elicitation/create``
            of mode ``url``).
        '''
        self._verify_channel( 'elicitation' )
        return await self._connection.elicit_url( *arguments, **keywords )

    async def create_message(
        self, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> __.typx.Any:
        ''' Asks the client's model (``sampling/createMessage``). '''
        self._verify_channel( 'sampling' )
        return await self._connection.create_message(
            *arguments, **keywords )

    async def list_roots( self ) -> __.typx.Any:
        ''' Asks the client for its roots (``roots/list``). '''
        self._verify_channel( 'roots' )
        return await self._connection.list_roots( )

    def _verify_channel( self, request: str ) -> None:
        ''' Raises if the client cannot be asked: a stateless session.

            A 1.x session of the stateless mode serves one request, never
            initialized: its client's answer would reach another session
            (the request would wait for ever), where 2.x raises its
            ``NoBackChannelError``.
        '''
        if self._connection.client_params is None:
            raise _exceptions.LiaisonAbsence( request )


class _EndpointLegacy:
    ''' ASGI endpoint of the 1.x session manager. '''

    def __init__( self, manager: __.typx.Any ):
        self.manager = manager

    async def __call__(
        self, scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any
    ) -> None:
        if scope.get( 'method' ) == 'POST':
            # Bodies which the 1.x transport fails on as 2.x does not.
            receive = await _legacybodies.verify_body( scope, receive, send )
            if receive is None: return
        await self.manager.handle_request( scope, receive, send )


def _adapt_legacy(
    server: __.typx.Any, handler: __.cabc.Callable[ ..., __.typx.Any ]
) -> __.cabc.Callable[ ..., __.typx.Any ]:
    ''' Returns 1.x request handler calling a 2.x style handler. '''
    async def handle( request: __.typx.Any ) -> __.typx.Any:
        context = _ContextLegacy( server.request_context )
        result = await handler( context, request.params )
        legacy: __.typx.Any = _types
        return legacy.ServerResult( result )
    return handle


async def notify_elicitation_complete(
    connection: __.typx.Any, identifier: str
) -> None:
    ''' Sends ``notifications/elicitation/complete`` on a client's
        connection (2.x), or its session (1.x).
    '''
    if _CURRENT:
        await connection.notify(
            'notifications/elicitation/complete',
            { 'elicitationId': identifier } )
        return
    await connection.send_elicit_complete( identifier )


async def send_request(
    context: __.typx.Any,
    method: str,
    parameters: __.cabc.Mapping[ str, __.typx.Any ],
    result: type[ __.typx.Any ],
) -> __.typx.Any:
    ''' Sends request (method, wire parameters) to the client on the
        stream of the request of context; returns the answer (a model of
        class ``result``).
    '''
    from mcp.shared.message import ServerMessageMetadata
    model: __.typx.Any = getattr( _types, _REQUESTS_SERVER[ method ] )
    request = model.model_validate(
        { 'method': method, 'params': dict( parameters ) } )
    metadata = ServerMessageMetadata( related_request_id = context.request_id )
    session: __.typx.Any = context.session
    if _CURRENT:
        return await session.send_request(
            request, result, metadata = metadata )
    session._verify_channel( method.partition( '/' )[ 0 ] ) # stateless
    legacy: __.typx.Any = _types
    return await session.connection.send_request(
        legacy.ServerRequest( request ), result, metadata = metadata )


def _is_task_asked( parameters: object ) -> bool:
    ''' Returns whether parameters of a tool call ask for a task. '''
    if not isinstance( parameters, __.cabc.Mapping ): return False
    entries = __.typx.cast( __.cabc.Mapping[ str, object ], parameters )
    return entries.get( 'task' ) is not None


def _is_serving_tasks( server: __.typx.Any ) -> bool:
    ''' Returns whether low-level server has the handlers of tasks. '''
    if _CURRENT: return server.get_request_handler( 'tasks/get' ) is not None
    requests: __.typx.Any = _types
    return requests.GetTaskRequest in server.request_handlers


def _produce_application_legacy(
    server: __.typx.Any,
    path: str,
    stateless: bool, # noqa: FBT001
    security: __.typx.Any,
    auth: __.typx.Any,
    token_verifier: __.typx.Any,
    resumption: tuple[ __.typx.Any, int | None ],
    sessions: tuple[ int | None, float | None ],
) -> __.typx.Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Route
    from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
    from mcp.server.auth.middleware.bearer_auth import (
        BearerAuthBackend,
        RequireAuthMiddleware,
    )
    from mcp.server.streamable_http_manager import (
        StreamableHTTPSessionManager )
    manager: __.typx.Any = StreamableHTTPSessionManager(
        app = server, stateless = stateless, event_store = resumption[ 0 ],
        security_settings = security, max_sessions = sessions[ 0 ],
        session_idle_timeout = sessions[ 1 ] )
    endpoint: __.typx.Any = _EndpointLegacy( manager )
    middleware: list[ Middleware ] = [ ]
    if token_verifier is not None:
        middleware = [
            Middleware(
                AuthenticationMiddleware,
                backend = BearerAuthBackend( token_verifier ) ),
            Middleware( AuthContextMiddleware ) ]
        scopes: list[ str ] = (
            None if auth is None else auth.required_scopes ) or [ ]
        endpoint = RequireAuthMiddleware( endpoint, scopes, None )
    return Starlette(
        routes = [ Route( path, endpoint = endpoint ) ],
        middleware = middleware,
        lifespan = lambda application: manager.run( ) )


def _produce_security(
    hosts: __.cabc.Sequence[ str ], origins: __.cabc.Sequence[ str ]
) -> __.typx.Any:
    ''' Returns protection against DNS rebinding: allowed hosts, origins.
    '''
    from mcp.server.transport_security import TransportSecuritySettings
    return TransportSecuritySettings(
        enable_dns_rebinding_protection = True,
        allowed_hosts = list( hosts ), allowed_origins = list( origins ) )
