# SPDX-License-Identifier: Apache-2.0

''' Tool calls run as tasks: their records and store.

    A client which asks (``task`` in ``tools/call``) gets a task at once;
    the call runs in the background, through the same engine as an
    ordinary call, and the client polls it (``tasks/get``), fetches its
    result (``tasks/result``), cancels it (``tasks/cancel``) or lists the
    tasks (``tasks/list``). Tasks belong to the server, not to a session:
    a client which reconnects finds its task. A task created by an
    authenticated request is bound to its principal: requests of another
    find no such task (:py:mod:`invocables.serving._taskbinding`); without
    authentication, tasks are bound to no one. A :py:class:`TaskStore`
    keeps their records; :py:class:`MemoryTaskStore` is the default. The
    handlers are :py:class:`TasksExtension`, a part of the tool server.

    In sessions of MCP 2026-07-28 (``mcp`` SDK 2.x), tasks are the
    extension ``io.modelcontextprotocol/tasks``: the server decides, for
    the tools which declare task support, when a client which declares
    the extension gets a task; ``tasks/get`` inlines the result or the
    error; ``tasks/result`` and ``tasks/list`` are gone.
'''


import datetime as _datetime
import secrets as _secrets
import weakref as _weakref

import invocables.serving.__ as __
import invocables.serving._expiries as _expiries
import invocables.serving._taskbinding as _taskbinding
import invocables.serving._taskinputs as _taskinputs
import invocables.serving._taskwire as _taskwire
import invocables.serving._continuations as _continuations
import invocables.exceptions as _exceptions
import invocables.naming as _naming
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


TaskCall: __.typx.TypeAlias = __.cabc.Callable[
    [ str ], __.cabc.Awaitable[ _mcp_types.CallToolResult ] ]
''' The call of a tool run as the task of an identifier. '''

PAGE_SIZE_DEFAULT = 100
POLL_INTERVAL_DEFAULT = 500
RUNNING_MAXIMUM_DEFAULT = 100
TASKS_MAXIMUM_DEFAULT = 1000
TTL_DEFAULT = 3_600_000
TTL_MAXIMUM = 86_400_000
TTL_MINIMUM = 1000

# The identifier of the tasks extension (MCP 2026-07-28); the annotation by
# which a local tool declares whether it runs as a task, and its values.
TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'
TASK_SUPPORT_ANNOTATION = 'task_support'
TASK_SUPPORTS = ( 'forbidden', 'optional', 'required' )
# The annotation of a tool run as a task (MCP 2026-07-28) which asks in
# rounds (input_required) before its call becomes a task; the annotations
# of serve, not MCP's.
INPUT_FIRST_ANNOTATION = 'task_input_first'
ANNOTATIONS = frozenset( ( TASK_SUPPORT_ANNOTATION, INPUT_FIRST_ANNOTATION ) )

_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities'
_MISSING_CAPABILITY = -32021 # MissingRequiredClientCapability
_scribe = __.produce_scribe( __name__ )
# The task support of the tools of each upstream ensemble, by name, with
# the descriptions it was read from: ``survey_tools`` gives the same tuple
# until the tools change, so that a listing reads each in constant time.
# The tuple is held, so that its identity is never that of another.
_upstream_supports: _weakref.WeakKeyDictionary[
    __.typx.Any, tuple[ __.typx.Any, dict[ str, __.typx.Any ] ]
] = _weakref.WeakKeyDictionary( )


class TaskStates( __.enum.Enum ):
    ''' States of a task, as the protocol names them. '''

    Working = 'working'
    InputRequired = 'input_required' # MCP 2025-11-25: the tool asks
    Completed = 'completed'
    Failed = 'failed'
    Cancelled = 'cancelled'


class TaskRecord( __.immut.DataclassObject ):
    ''' A task: the state of a tool call run in the background.

        Times are aware; durations are milliseconds, as on the wire. The
        result is the JSON of the call's result (``CallToolResult``), the
        error that of a JSON-RPC error (``code``, ``message``, ``data``):
        plain data, which a store may keep anywhere. The principal is that
        of the request which created the task (``None``: unauthenticated);
        only requests of the same principal reach the task.
    '''

    identifier: str
    created: _datetime.datetime
    updated: _datetime.datetime
    ttl: int
    poll_interval: int = POLL_INTERVAL_DEFAULT
    state: TaskStates = TaskStates.Working
    message: str | None = None
    result: __.cabc.Mapping[ str, __.typx.Any ] | None = None
    error: __.cabc.Mapping[ str, __.typx.Any ] | None = None
    principal: str | None = None

    def is_expired( self, now: _datetime.datetime ) -> bool:
        ''' Returns whether its time to live, from creation, is over. '''
        lifetime = _datetime.timedelta( milliseconds = self.ttl )
        return now >= self.created + lifetime

    def is_terminal( self ) -> bool:
        ''' Returns whether the call ended (completed, failed, cancelled).
        '''
        return self.state not in (
            TaskStates.Working, TaskStates.InputRequired )


class TaskStore( __.typx.Protocol ):
    ''' Records of the tasks of a server. Any object with these coroutines
        serves; :py:class:`MemoryTaskStore` is the default.

        Expired records (:py:meth:`TaskRecord.is_expired`) are forgotten.
    '''

    async def store_task( self, task: TaskRecord ) -> None:
        ''' Stores record, new or replacing the one of its identifier. '''
        raise NotImplementedError # pragma: no cover

    async def retrieve_task( self, identifier: str ) -> TaskRecord | None:
        ''' Returns record of identifier; ``None`` if unknown or expired.
        '''
        raise NotImplementedError # pragma: no cover

    async def survey_tasks(
        self, cursor: str | None, principal: str | None = None
    ) -> tuple[ tuple[ TaskRecord, ... ], str | None ]:
        ''' Returns one page of the records of principal, oldest first,
            and the cursor of the next page (``None`` after the last).
            Raises :py:class:`invocables.exceptions.TaskAbsence` for a
            cursor it did not give for this principal.
        '''
        raise NotImplementedError # pragma: no cover

    async def wait_task( self, identifier: str ) -> None:
        ''' Returns once the task is terminal, or forgotten. '''
        raise NotImplementedError # pragma: no cover


class MemoryTaskStore:
    ''' Records of tasks, in memory, for the life of the process.

        Keeps at most ``maximum`` records: beyond, the terminal ones are
        forgotten, those which ended first first, each without a scan of
        the others (which may run long); expired ones are found without a
        scan of all.
        Lists ``page_size`` records a page, of one principal, at a cost
        about that of the page.
    '''

    def __init__(
        self,
        maximum: int = TASKS_MAXIMUM_DEFAULT,
        page_size: int = PAGE_SIZE_DEFAULT,
    ):
        self.maximum = maximum
        self.page_size = page_size
        self._tasks: dict[ str, TaskRecord ] = { }
        # The terminal records, in the order they ended: the first goes.
        self._ended: __.collections.OrderedDict[ str, None ] = (
            __.collections.OrderedDict( ) )
        self._endings: dict[ str, __.asyncio.Event ] = { }
        self._expiries = _expiries.Expiries( )
        self._listings = _taskbinding.Listings( )

    async def store_task( self, task: TaskRecord ) -> None:
        ''' Stores record, new or replacing the one of its identifier. '''
        identifier = task.identifier
        self._tasks[ identifier ] = task
        self._expiries.note( identifier, task.created, task.ttl )
        self._listings.note( identifier, task.principal )
        if task.is_terminal( ):
            self._ended.setdefault( identifier ) # when first it ended
            self._end( identifier )
        else: self._ended.pop( identifier, None )
        self._purge( )
        while len( self._tasks ) > self.maximum and self._ended:
            self._forget( self._ended.popitem( last = False )[ 0 ] )

    async def retrieve_task( self, identifier: str ) -> TaskRecord | None:
        ''' Returns record of identifier; ``None`` if unknown or expired.
        '''
        self._purge( )
        return self._tasks.get( identifier )

    async def survey_tasks(
        self, cursor: str | None, principal: str | None = None
    ) -> tuple[ tuple[ TaskRecord, ... ], str | None ]:
        ''' Returns one page of the records of principal, oldest first,
            and the cursor of the next page (a place in its listing).
        '''
        self._purge( )
        identifiers, after = self._listings.survey(
            principal, cursor, self.page_size )
        return tuple( self._tasks[ name ] for name in identifiers ), after

    async def wait_task( self, identifier: str ) -> None:
        ''' Returns once the task is terminal, or forgotten. '''
        task = await self.retrieve_task( identifier )
        if task is None or task.is_terminal( ): return
        ending = self._endings.setdefault( identifier, __.asyncio.Event( ) )
        await ending.wait( )

    def _end( self, identifier: str ) -> None:
        ending = self._endings.pop( identifier, None )
        if ending is not None: ending.set( )

    def _purge( self ) -> None:
        now = _produce_now( ).timestamp( )
        for identifier in self._expiries.survey_expired( now ):
            self._forget( identifier )
            self._end( identifier )

    def _forget( self, identifier: str ) -> None:
        self._tasks.pop( identifier, None )
        self._ended.pop( identifier, None )
        self._expiries.forget( identifier )
        self._listings.forget( identifier )


class TasksExtension:
    ''' Handlers of the ``tasks/*`` requests, and the start of tasks.

        The tool server provides the store and the call of a tool with a
        liaison (the session which asked, for progress).
    '''

    task_store: TaskStore | None
    tasks_running_maximum: int
    # Its duration bounds the waits of the tasks for their clients' input.
    continuations: _continuations.ContinuationsManager
    _running: dict[ str, __.asyncio.Task[ None ] ]
    _shares: _taskbinding.Shares # of the principals, of the running tasks
    # Requests for input of the running tasks (MCP 2026-07-28), by task.
    _inputs: dict[ str, _continuations.Continuation ]
    # Requests for input of the running tasks (MCP 2025-11-25).
    _asks: _taskinputs.TaskInputs

    def _prepare_tasks(
        self, maximum: int, share: __.Absential[ int ] = __.absent
    ) -> None:
        ''' Prepares the bookkeeping of the running tasks, in the server's
            initialiser: at most maximum, and share of one principal.
        '''
        self.tasks_running_maximum = maximum
        self._running = { }
        self._shares = _taskbinding.Shares( share, maximum )
        self._inputs = { }
        self._asks = _taskinputs.TaskInputs( self._note_progress )

    @property
    def tasks_running_per_principal_maximum( self ) -> int:
        ''' Most tasks running at once of one authenticated principal. '''
        return self._shares.maximum

    async def cancel_task(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``tasks/cancel``: cancels the call; the task is then
            cancelled. A terminal task cannot be cancelled (error); under
            MCP 2026-07-28 the answer is an empty acknowledgement, also for
            a terminal task.
        '''
        modern = _verify_extension( context )
        task = await self._access_task( context, parameters )
        if modern and task.is_terminal( ): return { }
        if not task.is_terminal( ):
            running = self._running.get( task.identifier )
            if running is not None:
                running.cancel( )
                await __.asyncio.gather( running, return_exceptions = True )
            else: # run by another process: only its record is ours
                await self._store_end( task, TaskStates.Cancelled )
            task = await self._access_task( context, parameters )
            if modern: return { } # acknowledged, whatever came first
            if task.state is TaskStates.Cancelled: # unless it ended first
                return _taskwire.produce_task_model(
                    task, _mcp_types.CancelTaskResult )
        raise _sdk.produce_error(
            _mcp_types.INVALID_PARAMS,
            "Task {identifier!r} is already {state}: it cannot be "
            "cancelled.".format(
                identifier = task.identifier, state = task.state.value ) )

    async def release_tasks( self ) -> None:
        ''' Cancels the calls of the running tasks; waits for their end.
        '''
        running = tuple( self._running.values( ) )
        for task in running: task.cancel( )
        await __.asyncio.gather( *running, return_exceptions = True )

    async def retrieve_task(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``tasks/get``: the state of a task. Under MCP
            2026-07-28, with its result (completed) or error (failed).
        '''
        modern = _verify_extension( context )
        task = await self._access_task( context, parameters )
        if modern:
            return _taskwire.produce_task_detailed(
                task, self._inputs.get( task.identifier ) )
        return _taskwire.produce_task_model( task, _mcp_types.GetTaskResult )

    async def retrieve_task_result(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``tasks/result``: waits until the task is terminal,
            sending meanwhile, on its stream, the requests of the tool to
            the client; returns the call's result, or raises its error.
        '''
        _verify_legacy( context, 'tasks/result' )
        task = await self._access_task( context, parameters )
        ending = self._access_store( ).wait_task( task.identifier )
        await self._asks.deliver( task.identifier, context, ending )
        task = await self._access_task( context, parameters )
        result = _taskwire.produce_task_payload( task )
        if result is None: raise _taskwire.produce_task_failure( task )
        return result

    async def survey_tasks(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListTasksResult:
        ''' Handles ``tasks/list``: the tasks of the request's principal,
            a page at a time.
        '''
        _verify_legacy( context, 'tasks/list' )
        store = self._access_store( )
        cursor = None if parameters is None else parameters.cursor
        principal = _taskbinding.access_principal( context )
        try: tasks, after = await store.survey_tasks( cursor, principal )
        except _exceptions.TaskAbsence:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"Unknown cursor {cursor!r}." ) from None
        return _sdk.produce_model(
            _mcp_types.ListTasksResult,
            tasks = [ _taskwire.produce_task_model( task ) for task in tasks ],
            next_cursor = after )

    async def update_task(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``tasks/update`` (MCP 2026-07-28): the responses to
            the requests of a task waiting for input resume its call;
            acknowledged. Responses to no pending request are ignored.
        '''
        if not _verify_extension( context ):
            raise _sdk.produce_error(
                _mcp_types.METHOD_NOT_FOUND,
                "Method not found: tasks/update is of MCP 2026-07-28." )
        task = await self._access_task( context, parameters )
        _continuations.answer_wire(
            self._inputs.get( task.identifier ), context.params )
        return { }

    async def _create_task(
        self, context: __.typx.Any, ttl: int | None, call: TaskCall
    ) -> _mcp_types.CreateTaskResult:
        ''' Stores a working task, bound to the principal of the request
            of context, and starts its call (given the task's identifier);
            returns the task. It fails once its requests for input wait
            the duration of a continuation for the client's answers.
        '''
        task = await self._start_task( context, ttl, __.funct.partial(
            self._asks.await_answered, call, self.continuations.duration ) )
        return _sdk.produce_model(
            _mcp_types.CreateTaskResult,
            task = _taskwire.produce_task_model( task ) )

    async def _create_task_flat(
        self, context: __.typx.Any, call: TaskCall
    ) -> dict[ str, __.typx.Any ]:
        ''' Stores a working task and starts its call; returns the task as
            the flat ``CreateTaskResult`` of MCP 2026-07-28.
        '''
        task = await self._start_task( context, None, call )
        return { 'resultType': 'task', **_taskwire.produce_task_wire( task ) }

    async def _start_task(
        self, context: __.typx.Any, ttl: int | None, call: TaskCall
    ) -> TaskRecord:
        ''' Stores a working task and starts its call, cut off when its
            record expires (none could read its result); returns its record.
        '''
        store = self._access_store( )
        if len( self._running ) >= self.tasks_running_maximum:
            raise _sdk.produce_error(
                _mcp_types.INVALID_REQUEST,
                "This server runs {count} tasks already, its most; wait "
                "for one to end, or call without a task.".format(
                    count = len( self._running ) ) )
        now = _produce_now( )
        task = TaskRecord(
            identifier = _secrets.token_urlsafe( 24 ),
            created = now, updated = now,
            ttl = max( TTL_MINIMUM, min(
                TTL_DEFAULT if ttl is None else ttl, TTL_MAXIMUM ) ),
            principal = _taskbinding.access_principal( context ) )
        self._shares.acquire( task.principal )
        try: await store.store_task( task )
        except BaseException:
            self._shares.release( task.principal )
            raise
        running = __.asyncio.get_running_loop( ).create_task(
            self._run_task( task, call ) )
        self._running[ task.identifier ] = running
        return task

    async def _note_progress(
        self, identifier: str, message: str | None, state: str | None = None
    ) -> None:
        ''' Makes message the status message of a running task, and state
            (if any) its state: ``input_required`` while its tool asks.
        '''
        store = self._access_store( )
        task = await store.retrieve_task( identifier )
        if task is None or task.is_terminal( ): return
        await store.store_task( __.dcls.replace(
            task, message = message, updated = _produce_now( ),
            state = task.state if state is None else TaskStates( state ) ) )

    async def _run_task( self, task: TaskRecord, call: TaskCall ) -> None:
        try:
            try: result = await __.asyncio.wait_for( # not past its record
                call( task.identifier ), task.ttl / 1000 )
            except __.asyncio.CancelledError:
                await self._store_end( task, TaskStates.Cancelled )
                raise
            except _sdk.Error as exception:
                await self._store_end( task, TaskStates.Failed, error = {
                    'code': exception.error.code,
                    'message': exception.error.message,
                    'data': exception.error.data } )
                return
            except Exception: # logged here, where secrets may be read
                _scribe.exception( "Task %r failed.", task.identifier )
                await self._store_end( task, TaskStates.Failed, error = {
                    'code': _mcp_types.INTERNAL_ERROR,
                    'message': "The call failed on the server; its log "
                    "says why." } )
                return
            await self._store_end(
                task, TaskStates.Completed, result = result.model_dump(
                    by_alias = True, mode = 'json', exclude_none = True ) )
        finally:
            self._running.pop( task.identifier, None )
            self._shares.release( task.principal )
            self._asks.forget( task.identifier )

    async def _store_end(
        self, task: TaskRecord, state: TaskStates, **fields: __.typx.Any
    ) -> None:
        store = self._access_store( )
        latest = await store.retrieve_task( task.identifier ) or task
        if latest.is_terminal( ): return # cancelled elsewhere first
        error = fields.get( 'error' )
        if error is not None: fields[ 'message' ] = error[ 'message' ] # why
        await store.store_task( __.dcls.replace(
            latest, state = state, updated = _produce_now( ), **fields ) )

    async def _access_task(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> TaskRecord:
        ''' Returns the task of a request; the task of another principal
            is as unknown as one which never was.
        '''
        identifier = _sdk.access_field( parameters, 'task_id' )
        task = await self._access_store( ).retrieve_task( identifier )
        principal = _taskbinding.access_principal( context )
        if task is None or task.principal != principal:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"Unknown task {identifier!r}: it never was, or it expired." )
        return task

    def _access_store( self ) -> TaskStore:
        store = self.task_store
        if store is None:
            raise _sdk.produce_error(
                _mcp_types.METHOD_NOT_FOUND,
                "This server runs no tasks." )
        return store


def access_task_support(
    designation: _naming.Designation, default: str = 'optional'
) -> str | None:
    ''' Returns whether tool runs as a task: local tools as their
        annotation ``task_support`` declares (else default); those of an
        upstream server as it said (``None``: it said nothing).
    '''
    from ..mcp.ensembles import ServerEnsemble
    ensemble = designation.invoker.ensemble
    if not isinstance( ensemble, ServerEnsemble ):
        support = designation.invoker.annotations.get(
            TASK_SUPPORT_ANNOTATION, default )
        if support not in TASK_SUPPORTS:
            raise _exceptions.InvokerInvalidity(
                designation.name,
                "the annotation {key!r} must be one of {known}, got "
                "{value!r}.".format(
                    key = TASK_SUPPORT_ANNOTATION, value = support,
                    known = ', '.join( TASK_SUPPORTS ) ) )
        return str( support )
    descriptions = ensemble.survey_tools( )
    known, supports = _upstream_supports.get( ensemble, ( None, { } ) )
    if known is not descriptions: # its tools changed, or first asked
        supports = {
            description.name: getattr( description, 'task_support', None )
            for description in descriptions }
        _upstream_supports[ ensemble ] = ( descriptions, supports )
    support = supports.get( designation.invoker.name )
    return None if support is None else str( support )


def is_extension_declared(
    context: __.typx.Any, parameters: __.typx.Any = None
) -> bool:
    ''' Returns whether the client of a request declares the tasks
        extension (MCP 2026-07-28): in its capabilities, or in those of the
        request's ``_meta``.
    '''
    capabilities: __.typx.Any = getattr(
        context.session, 'client_capabilities', None )
    extensions: __.typx.Any = getattr( capabilities, 'extensions', None )
    if extensions and TASKS_EXTENSION in extensions: return True
    meta: __.typx.Any = (
        __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], parameters ).get(
            '_meta' )
        if isinstance( parameters, __.cabc.Mapping )
        else getattr( parameters, 'meta', None ) )
    if not isinstance( meta, __.cabc.Mapping ): return False
    entries = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], meta )
    declared: __.typx.Any = entries.get( _CLIENT_CAPABILITIES )
    if not isinstance( declared, __.cabc.Mapping ): return False
    extensions = __.typx.cast(
        __.cabc.Mapping[ str, __.typx.Any ], declared ).get( 'extensions' )
    return isinstance( extensions, __.cabc.Mapping ) and (
        TASKS_EXTENSION in extensions )


def produce_capability_absence( ) -> BaseException:
    ''' Produces the error of a request which needs the tasks extension
        from a client which did not declare it (MCP 2026-07-28).
    '''
    return _sdk.produce_error(
        _MISSING_CAPABILITY,
        f"The client must declare the extension {TASKS_EXTENSION!r}.",
        { 'requiredCapabilities': {
            'extensions': { TASKS_EXTENSION: { } } } } )


def _produce_now( ) -> _datetime.datetime:
    return _datetime.datetime.now( _datetime.timezone.utc )


def _verify_extension( context: __.typx.Any ) -> bool:
    ''' Returns whether request is of MCP 2026-07-28; raises if its client
        did not declare the tasks extension then.
    '''
    import invocables.serving._sdk as _server_sdk
    if not _server_sdk.is_modern_session( context ): return False
    parameters = getattr( context, 'params', None )
    if not is_extension_declared( context, parameters ):
        raise produce_capability_absence( )
    _server_sdk.verify_routing_header( context )
    return True


def _verify_legacy( context: __.typx.Any, method: str ) -> None:
    ''' Raises if request is of MCP 2026-07-28, which removed method. '''
    import invocables.serving._sdk as _server_sdk
    if not _server_sdk.is_modern_session( context ): return
    raise _sdk.produce_error(
        _mcp_types.METHOD_NOT_FOUND,
        f"Method not found: {method} is not of MCP 2026-07-28." )
