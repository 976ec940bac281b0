# SPDX-License-Identifier: Apache-2.0

''' The tools of ensembles as the handlers of an MCP server.

    :py:class:`ToolServer` holds the ensembles and the options of their
    calls (name, instructions, policy, timeout, auxdata, limits), and
    produces the low-level server of the ``mcp`` SDK. Every call goes
    through the execution engine; the results become MCP results.
'''


import sys as _sys
import uuid as _uuid
import warnings as _warnings
import weakref as _weakref

import invocables.serving.__ as __
import invocables.serving._sdk as _server_sdk
import invocables.serving._continuations as _continuations
import invocables.serving.gateway as _gateway
import invocables.serving._liaisons as _liaisons
import invocables.serving._shapes as _shapes
import invocables.serving._subscriptions as _subscriptions
import invocables.serving._taskinputs as _taskinputs
import invocables.serving.tasks as _tasks
import invocables.canisters as _canisters
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.execution as _execution
import invocables.invokers as _invokers
import invocables.naming as _naming
import invocables.descriptors.paths as _paths
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types
import invocables.toolsets.policies as _policies


NAME_DEFAULT = 'invocables'
SAMPLING_TOKENS_DEFAULT = _liaisons.SAMPLING_TOKENS_DEFAULT
WATCH_INTERVAL_DEFAULT = 0.5

produce_call_result = _shapes.produce_call_result
produce_tool = _shapes.produce_tool
_OPTIONS_DEFAULT = _execution.ExecutionOptions(
    failure_policy = _execution.FailurePolicies.Report )
_Signature: __.typx.TypeAlias = tuple[ int, ... ]


class ToolServer(
    _gateway.GatewayExtension,
    _tasks.TasksExtension,
    __.immut.Object,
    instances_mutables = ( '_listing', ),
):
    ''' Tools of ensembles, as handlers of an MCP server.

        Produce the SDK server with :py:meth:`produce_server`, or serve
        with :py:func:`invocables.serving.serve_stdio` or
        :py:func:`invocables.serving.produce_application`.
    '''

    def __init__( # noqa: PLR0913
        self,
        ensembles: __.cabc.Sequence[ _ensembles.Ensemble ],
        *,
        name: str = NAME_DEFAULT,
        instructions: __.Absential[ str ] = __.absent,
        options: _execution.ExecutionOptions = _OPTIONS_DEFAULT,
        task_store: __.typx.Annotated[
            __.Absential[ _tasks.TaskStore | None ],
            __.ddoc.Doc( ''' Store of the tasks which clients ask for
                (MCP 2025-11-25 tasks); ``None``: no tasks. Default: in
                memory. ''' ),
        ] = __.absent,
        tasks_running_maximum: __.typx.Annotated[
            int,
            __.ddoc.Doc( ''' Most tasks running at once; a client which
                asks for one more gets an error. ''' ),
        ] = _tasks.RUNNING_MAXIMUM_DEFAULT,
        tasks_running_per_principal_maximum: __.typx.Annotated[
            __.Absential[ int ],
            __.ddoc.Doc( ''' Most tasks running at once of one principal
                (authenticated); default: a quarter of the most. ''' ),
        ] = __.absent,
        continuations_maximum: __.typx.Annotated[
            int,
            __.ddoc.Doc( ''' Most calls waiting at once for their clients'
                input (MCP 2026-07-28, ``input_required``); one more
                which asks gets an error. ''' ),
        ] = _continuations.MAXIMUM_DEFAULT,
        continuation_duration: __.typx.Annotated[
            float,
            __.ddoc.Doc( ''' Seconds a call waits for its client's next
                round (MCP 2026-07-28); then it is cancelled, and its
                state expires. So long a task waits for its client's input
                (the answers of ``tasks/update`` under 2026-07-28, of the
                requests relayed by ``tasks/result`` under 2025-11-25);
                then it fails. ''' ),
        ] = _continuations.DURATION_DEFAULT,
        **shortcuts: __.typx.Unpack[ _execution.ExecutionShortcuts ],
    ):
        ''' Options of the calls (:py:class:`invocables.ExecutionOptions`)
            default to failures reported to the client; its fields are
            shortcuts into them (``policy``, ``timeout``, ``auxdata``,
            ``limits`` ...). ``concurrency`` bounds the calls running at
            once across the server's clients (a wait for a slot counts in
            a call's timeout). A policy's asking rules refuse unless it
            has an approver, also within a chain: a server has nobody to
            ask. '''
        self.ensembles = tuple( ensembles )
        self.name = name
        self.instructions = instructions
        self.task_store = (
            _tasks.MemoryTaskStore( ) if __.is_absent( task_store )
            else task_store )
        self._prepare_tasks(
            tasks_running_maximum, tasks_running_per_principal_maximum )
        self.continuations = _continuations.ContinuationsManager(
            continuations_maximum, continuation_duration )
        if shortcuts: options = __.dcls.replace( options, **shortcuts )
        self.options = __.dcls.replace(
            options,
            policy = _policies.produce_unattended_policy( options.policy ) )
        self._liaisons: dict[ str, _liaisons.SessionLiaison ] = { }
        self._listeners: _weakref.WeakSet[ __.typx.Any ] = (
            _weakref.WeakSet( ) )
        self._levels: _weakref.WeakKeyDictionary[ __.typx.Any, str ] = (
            _weakref.WeakKeyDictionary( ) )
        self._listing: tuple[
            _naming.Nomenclature | None, _mcp_types.ListToolsResult | None
        ] = ( None, None )
        self._visits: _weakref.WeakValueDictionary[ str, __.typx.Any ] = (
            _weakref.WeakValueDictionary( ) )
        self.subscriptions = _subscriptions.Subscriptions(
            self.follow_resources )
        # Every call an execution of its own: the concurrency across them.
        self._slots = __.asyncio.Semaphore( self.options.concurrency )
        self._relaying = frozenset(
            _relay_requests( self.ensembles, self.announce_change ) )

    def produce_server( self ) -> _server_sdk.ServerBase:
        ''' Produces low-level server of the ``mcp`` SDK for the tools. '''
        # The package is imported before any of its modules: read only.
        version = vars( _sys.modules[ __.package_name ] )[ '__version__' ]
        with _warnings.catch_warnings( ):
            # Logging is deprecated by MCP 2026-07-28, served for earlier.
            _warnings.simplefilter( 'ignore', UserWarning )
            return _server_sdk.produce_server(
                _server_sdk.AnnouncingServer, self.name,
                version = version,
                instructions = (
                    None if __.is_absent( self.instructions )
                    else self.instructions ),
                state_duration = self.continuations.duration,
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
                on_unsubscribe_resource = self.unsubscribe_resource,
                **self.subscriptions.produce_handlers( ),
                **self._produce_task_handlers( ) )

    async def configure_logging(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``logging/setLevel``: the least level of the messages
            which tools log to this client.
        '''
        self._levels[ self._listen( context ) ] = str( parameters.level )
        return _mcp_types.EmptyResult( )

    async def invoke_tool(
        self,
        context: __.typx.Any,
        parameters: _mcp_types.CallToolRequestParams,
    ) -> __.typx.Any:
        ''' Handles ``tools/call``: runs the tool through the engine.

            An unknown tool is a protocol error (invalid parameters); every
            other failure is an error result for the client's model. Asked
            for a task (``task``), starts the call in the background and
            returns the task at once; the progress of the call goes to the
            request's progress token still. Under MCP 2026-07-28, a tool
            which declares task support runs as a task for a client which
            declares the tasks extension.
        '''
        connection = self._listen( context )
        nomenclature = _naming.access_nomenclature( self.ensembles )
        try: designation = nomenclature.access_designation( parameters.name )
        except _exceptions.InvokerAbsence:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"Unknown tool {parameters.name!r}. List the tools for the "
                "names which this server offers." ) from None
        level = self._levels.get( connection, 'debug' )
        if _server_sdk.is_modern_session( context ):
            return await self._invoke_tool_modern(
                context, parameters, designation, level )
        task = getattr( parameters, 'task', None )
        if task is None or self.task_store is None:
            liaison = _liaisons.SessionLiaison(
                context, level, note_visit = __.funct.partial(
                    self.note_visit, connection ) )
            return await self._execute( parameters, designation, liaison )
        if _tasks.access_task_support( designation ) in ( None, 'forbidden' ):
            raise _sdk.produce_error(
                _mcp_types.METHOD_NOT_FOUND,
                f"Tool {parameters.name!r} does not run as a task." )
        call = self._produce_task_call(
            context, parameters, designation, level )
        return await self._create_task( context, task.ttl, call )

    async def _invoke_tool_modern(
        self,
        context: __.typx.Any,
        parameters: _mcp_types.CallToolRequestParams,
        designation: _naming.Designation,
        level: str,
    ) -> __.typx.Any:
        ''' Handles ``tools/call`` of MCP 2026-07-28: the server decides
            whether the call runs as a task (flat ``CreateTaskResult``).

            Only tools which declare task support (``optional``,
            ``required``) become tasks, for clients which declare the tasks
            extension; a tool which requires a task, called by another
            client, is refused (missing client capability).
        '''
        support = _tasks.access_task_support(
            designation, default = 'forbidden' )
        tasked = self.task_store is not None and support in (
            'optional', 'required' )
        if tasked and not _tasks.is_extension_declared( context, parameters ):
            if support == 'required':
                raise _tasks.produce_capability_absence( )
            tasked = False
        if not tasked:
            liaison = _continuations.InputLiaison(
                context, level, note_visit = __.funct.partial(
                    self.note_visit, self._listen( context ) ) )
            return await self.continuations.invoke(
                parameters, liaison, __.funct.partial(
                    self._execute, parameters, designation ) )
        if not designation.invoker.annotations.get(
            _tasks.INPUT_FIRST_ANNOTATION
        ) and getattr( parameters, 'request_state', None ) is None:
            return await self._create_task_flat(
                context, self._produce_task_call(
                    context, parameters, designation, level, modern = True ) )
        # Asks in rounds first (a state continues its call, never starts
        # another); a task once it asks no more.
        liaison = _continuations.InputLiaison( context, level )
        return await self.continuations.invoke(
            parameters, liaison,
            __.funct.partial( self._execute, parameters, designation ),
            escalate = self._escalate_task )

    async def _escalate_task(
        self, continuation: _continuations.Continuation
    ) -> dict[ str, __.typx.Any ]:
        ''' Makes the running call of a continuation a task; returns the
            task. The task holds the call's later requests for input.
        '''
        running = continuation.task
        assert running is not None

        async def call( identifier: str ) -> _mcp_types.CallToolResult:
            return await _taskinputs.await_answered(
                self._inputs, identifier, continuation, running,
                self.continuations.duration )

        liaison = continuation.liaison # of the round which escalates
        return await self._create_task_flat(
            None if liaison is None else liaison.context, call )

    def _produce_task_call(
        self,
        context: __.typx.Any,
        parameters: _mcp_types.CallToolRequestParams,
        designation: _naming.Designation,
        level: str,
        *,
        modern: bool = False,
    ) -> __.cabc.Callable[
        [ str ], __.cabc.Awaitable[ _mcp_types.CallToolResult ]
    ]:
        ''' Returns the call of a tool run as the task of an identifier,
            which tells its progress to the request's token and the task.
            Under MCP 2026-07-28, the task holds the tool's requests for
            input (``input_required``), which ``tasks/update`` answers.
        '''
        token = _taskinputs.access_progress_token( parameters )

        async def call( identifier: str ) -> _mcp_types.CallToolResult:
            if not modern:
                liaison = _liaisons.TaskLiaison(
                    context, level, identifier, token,
                    __.funct.partial( self._note_progress, identifier ),
                    __.funct.partial( self._asks.ask, identifier ) )
                return await self._execute( parameters, designation, liaison )
            liaison = _continuations.TaskInputLiaison(
                context, level, identifier, token,
                __.funct.partial( self._note_progress, identifier ) )
            liaison.continuation = _continuations.Continuation( )
            return await _taskinputs.await_answered(
                self._inputs, identifier, liaison.continuation,
                self._execute( parameters, designation, liaison ),
                self.continuations.duration )

        return call

    def release_continuations( self ) -> None:
        ''' Cancels the calls which wait for their clients' input. '''
        self.continuations.release( )

    async def relay_progress( self, progress: __.typx.Any ) -> None:
        ''' Forwards progress of an upstream call to the calling client.

            The server's own MCP ensembles relay their progress (and their
            elicitation, sampling and log messages) to the calling client
            themselves: their progress is not sent twice. Give it as
            ``reporter`` to MCP ensembles served otherwise.
        '''
        identifier = getattr( progress, 'invocation_id', __.absent )
        if __.is_absent( identifier ): return
        if getattr( progress, 'ensemble', None ) in self._relaying: return
        liaison = self._liaisons.get( identifier )
        if liaison is None: return
        await liaison.report_progress(
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
            produce_tool(
                designation, tasks = self.task_store is not None )
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
            await self.subscriptions.publish(
                'notifications/tools/list_changed' )
            for session in tuple( self._listeners ):
                await self._announce( session )

    async def _execute(
        self,
        parameters: _mcp_types.CallToolRequestParams,
        designation: _naming.Designation,
        liaison: _liaisons.SessionLiaison,
    ) -> _mcp_types.CallToolResult:
        ''' Runs tool through the engine, answered by liaison. '''
        identifier = _uuid.uuid4( ).hex
        invocation = _canisters.InvocationCanister(
            identifier = identifier, name = parameters.name,
            arguments = parameters.arguments or { } )
        nomenclature = _naming.access_nomenclature( self.ensembles )
        self._liaisons[ identifier ] = liaison
        try:
            with _invokers.liaise( liaison ), _execution.share_slots(
                self._slots
            ):
                results = await _execution.execute_invocations(
                    ( invocation, ), nomenclature, self.options )
        finally: del self._liaisons[ identifier ]
        return produce_call_result( results[ 0 ], designation.invoker )

    def _produce_task_handlers(
        self
    ) -> dict[ str, __.cabc.Callable[ ..., __.typx.Any ] ]:
        if self.task_store is None: return { }
        return {
            'on_get_task': self.retrieve_task,
            'on_get_task_result': self.retrieve_task_result,
            'on_cancel_task': self.cancel_task,
            'on_list_tasks': self.survey_tasks,
            'on_update_task': self.update_task,
        }

    async def _announce( self, session: __.typx.Any ) -> None:
        try: await session.send_tool_list_changed( )
        except Exception: # client gone: forget it
            self._listeners.discard( session )

    def _listen( self, context: __.typx.Any ) -> __.typx.Any:
        ''' Remembers the connection of the client, to notify it; returns
            it.
        '''
        session = context.session
        # The session is a view of one request; its connection (no public
        # accessor on the low-level context, mcp 2.3) lasts and notifies.
        connection = getattr( session, '_connection', session )
        # Later clients hear changes on streams of subscriptions/listen.
        if not _server_sdk.is_modern_session( context ):
            self._listeners.add( connection )
        return connection

    def _access_signature( self ) -> _Signature | None:
        try: return tuple(
            id( ensemble.survey_invokers( ) ) for ensemble in self.ensembles )
        except _exceptions.Omnierror: return None # not connected


async def prepare_server(
    settings: __.typx.Annotated[
        __.cabc.Mapping[ str, __.typx.Any ],
        __.ddoc.Doc( ''' ``configuration`` (path; default: as the
            ``invocables`` command finds it), ``policies`` (path of a
            policy file), ``name``, ``connect`` (true: connect the
            ensembles before returning, so that a server which cannot start
            fails here). ''' ),
    ],
) -> ToolServer:
    ''' Prepares server of the ensembles of a configuration; unconnected
        unless asked.

        Upstream MCP servers relay their requests (elicitation, sampling,
        log messages, progress) to the calling clients. Raises the library's
        configuration errors (naming file and key) before anything runs.
    '''
    import invocables.descriptors as _descriptors
    configuration = settings.get( 'configuration' )
    # Connected once served: the MCP ensembles relay from their connection.
    ensembles = await _descriptors.prepare_ensembles(
        _paths.locate_configuration( ) if configuration is None
        else __.Path( configuration ), connect = False )
    path = settings.get( 'policies' )
    options = _OPTIONS_DEFAULT if path is None else __.dcls.replace(
        _OPTIONS_DEFAULT, policy = _policies.load_policy( path ) )
    server = ToolServer(
        ensembles, name = settings.get( 'name' ) or NAME_DEFAULT,
        options = options )
    if settings.get( 'connect' ) is True:

        async def produce( ) -> tuple[ _ensembles.Ensemble, ... ]:
            return server.ensembles

        await _ensembles.EnsemblesPreparation( produce )
    return server


@__.ctxl.asynccontextmanager
async def produce_watcher(
    server: ToolServer
) -> __.cabc.AsyncGenerator[ None, None ]:
    ''' Watches tools of server for the body; stops watching after it. '''
    task = __.asyncio.get_running_loop( ).create_task( server.watch_tools( ) )
    try: yield
    finally:
        task.cancel( )
        await __.asyncio.gather( task, return_exceptions = True )
        server.subscriptions.close( )
        server.release_streams( )
        server.release_continuations( )
        await server.release_tasks( )


def _relay_requests(
    ensembles: __.cabc.Iterable[ _ensembles.Ensemble ],
    observer: __.cabc.Callable[
        [ str, str, str | None ], __.cabc.Awaitable[ None ] ],
) -> __.cabc.Iterator[ str ]:
    ''' Makes MCP ensembles relay their servers' requests during a call
        to the calling client; yields their names.
    '''
    from ..mcp.ensembles import ServerEnsemble
    for ensemble in ensembles:
        if not isinstance( ensemble, ServerEnsemble ): continue
        ensemble.configure_relay( observer = observer )
        yield ensemble.name
