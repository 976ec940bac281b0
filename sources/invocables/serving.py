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
import os as _os
import uuid as _uuid
import weakref as _weakref

from mcp.server.lowlevel import NotificationOptions as _NotificationOptions

from . import __
from . import canisters as _canisters
from . import ensembles as _ensembles
from . import exceptions as _exceptions
from . import execution as _execution
from . import naming as _naming
from . import policies as _policies
from .mcp import sdk as _sdk
from .mcp.sdk import types as _mcp_types


NAME_DEFAULT = 'invocables'
OPTIONS_VARIABLE = 'INVOCABLES_SERVE_OPTIONS'
PATH_DEFAULT = '/mcp'
PORT_DEFAULT = 8000
WATCH_INTERVAL_DEFAULT = 0.5

_HINTS_WIRE = __.types.MappingProxyType( {
    'read_only': 'readOnlyHint', 'destructive': 'destructiveHint',
    'idempotent': 'idempotentHint', 'open_world': 'openWorldHint',
    'title': 'title',
} )
_Signature: __.typx.TypeAlias = tuple[ int, ... ]
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
        self._listing: tuple[
            _naming.Nomenclature | None, _mcp_types.ListToolsResult | None
        ] = ( None, None )

    def produce_server( self ) -> _sdk.ServerBase:
        ''' Produces low-level server of the ``mcp`` SDK for the tools. '''
        from . import __version__
        return _sdk.produce_server(
            _AnnouncingServer, self.name, version = __version__,
            instructions = (
                None if __.is_absent( self.instructions )
                else self.instructions ),
            on_list_tools = self.survey_tools,
            on_call_tool = self.invoke_tool )

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
        try:
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


def produce_application(
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
    host: str = '127.0.0.1',
) -> __.typx.Any:
    ''' Produces ASGI application serving streamable HTTP at path.

        The application connects the ensembles when it starts and
        disconnects them when it stops (its lifespan).
    '''
    from mcp.server.auth.settings import AuthSettings
    if not __.is_absent( token ):
        token_verifier = _StaticTokenVerifier( token )
    # Resource server only: tokens are verified, never issued, here.
    auth = None if token_verifier is None else AuthSettings.model_validate( {
        'issuer_url': f"http://{host}", 'resource_server_url': None } )
    mcp_server = server.produce_server( )
    application = _sdk.produce_application(
        mcp_server, path = path, stateless = stateless,
        host = host, auth = auth, token_verifier = token_verifier )
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
    return application


def produce_application_from_environment( ) -> __.typx.Any:
    ''' Produces application from the options in ``INVOCABLES_SERVE_OPTIONS``.

        For ASGI servers which start workers by import (``uvicorn --factory
        invocables.serving:produce_application_from_environment``); the
        variable holds JSON: ``configuration``, ``policies``, ``stateless``,
        ``token_variable``, ``name``, ``host``.
    '''
    settings = __.json.loads( _os.environ.get( OPTIONS_VARIABLE, '{}' ) )
    # Called by ASGI servers within their event loop: prepared apart.
    server = _run_apart( prepare_server( settings ) )
    token_variable = settings.get( 'token_variable' )
    token = _os.environ.get( token_variable ) if token_variable else None
    return produce_application(
        server, stateless = bool( settings.get( 'stateless' ) ),
        token = token or __.absent,
        host = settings.get( 'host' ) or '127.0.0.1' )


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
    from . import descriptors as _descriptors
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
    from .mcp.ensembles import ServerEnsemble
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
    from .cli import locate_configuration
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


def _encode( data: bytes ) -> str:
    return _base64.b64encode( data ).decode( 'ascii' )


def _nullify( value: __.Absential[ str ] ) -> str | None:
    return None if __.is_absent( value ) else value


def _thaw( value: __.typx.Any ) -> __.typx.Any:
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value )
        return { key: _thaw( item ) for key, item in mapping.items( ) }
    if isinstance( value, ( list, tuple ) ):
        sequence = __.typx.cast( __.cabc.Sequence[ __.typx.Any ], value )
        return [ _thaw( item ) for item in sequence ]
    return value
