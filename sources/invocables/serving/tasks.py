# SPDX-License-Identifier: Apache-2.0

''' Tool calls run as tasks (MCP 2025-11-25): their records and store.

    A client which asks (``task`` in ``tools/call``) gets a task at once;
    the call runs in the background, through the same engine as an
    ordinary call, and the client polls it (``tasks/get``), fetches its
    result (``tasks/result``), cancels it (``tasks/cancel``) or lists the
    tasks (``tasks/list``). Tasks belong to the server, not to a session:
    a client which reconnects finds its task. A :py:class:`TaskStore`
    keeps their records; :py:class:`MemoryTaskStore` is the default. The
    handlers are :py:class:`TasksExtension`, a part of the tool server.
'''


import datetime as _datetime
import secrets as _secrets

import invocables.serving.__ as __
import invocables.exceptions as _exceptions
import invocables.naming as _naming
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


PAGE_SIZE_DEFAULT = 100
POLL_INTERVAL_DEFAULT = 500
RUNNING_MAXIMUM_DEFAULT = 100
TASKS_MAXIMUM_DEFAULT = 1000
TTL_DEFAULT = 3_600_000
TTL_MAXIMUM = 86_400_000
TTL_MINIMUM = 1000

_RELATED_TASK = 'io.modelcontextprotocol/related-task'
_scribe = __.produce_scribe( __name__ )


class TaskStates( __.enum.Enum ):
    ''' States of a task, as the protocol names them. '''

    Working = 'working'
    Completed = 'completed'
    Failed = 'failed'
    Cancelled = 'cancelled'


class TaskRecord( __.immut.DataclassObject ):
    ''' A task: the state of a tool call run in the background.

        Times are aware; durations are milliseconds, as on the wire. The
        result is the JSON of the call's result (``CallToolResult``), the
        error that of a JSON-RPC error (``code``, ``message``, ``data``):
        plain data, which a store may keep anywhere.
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

    def is_expired( self, now: _datetime.datetime ) -> bool:
        ''' Returns whether its time to live, from creation, is over. '''
        lifetime = _datetime.timedelta( milliseconds = self.ttl )
        return now >= self.created + lifetime

    def is_terminal( self ) -> bool:
        ''' Returns whether the call ended (completed, failed, cancelled).
        '''
        return self.state is not TaskStates.Working


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
        self, cursor: str | None
    ) -> tuple[ tuple[ TaskRecord, ... ], str | None ]:
        ''' Returns one page of records, oldest first, and the cursor of
            the next page (``None`` after the last). Raises
            :py:class:`invocables.exceptions.TaskAbsence` for a cursor it
            did not give.
        '''
        raise NotImplementedError # pragma: no cover

    async def wait_task( self, identifier: str ) -> None:
        ''' Returns once the task is terminal, or forgotten. '''
        raise NotImplementedError # pragma: no cover


class MemoryTaskStore:
    ''' Records of tasks, in memory, for the life of the process.

        Keeps at most ``maximum`` records: beyond, the oldest terminal
        ones are forgotten. Lists ``page_size`` records a page.
    '''

    def __init__(
        self,
        maximum: int = TASKS_MAXIMUM_DEFAULT,
        page_size: int = PAGE_SIZE_DEFAULT,
    ):
        self.maximum = maximum
        self.page_size = page_size
        self._tasks: __.collections.OrderedDict[ str, TaskRecord ] = (
            __.collections.OrderedDict( ) )
        self._endings: dict[ str, __.asyncio.Event ] = { }

    async def store_task( self, task: TaskRecord ) -> None:
        ''' Stores record, new or replacing the one of its identifier. '''
        self._tasks[ task.identifier ] = task
        if task.is_terminal( ): self._end( task.identifier )
        self._purge( )
        excess = len( self._tasks ) - self.maximum
        for record in tuple( self._tasks.values( ) ):
            if excess <= 0: break
            if not record.is_terminal( ): continue
            del self._tasks[ record.identifier ]
            excess -= 1

    async def retrieve_task( self, identifier: str ) -> TaskRecord | None:
        ''' Returns record of identifier; ``None`` if unknown or expired.
        '''
        self._purge( )
        return self._tasks.get( identifier )

    async def survey_tasks(
        self, cursor: str | None
    ) -> tuple[ tuple[ TaskRecord, ... ], str | None ]:
        ''' Returns one page of records, oldest first, and the cursor of
            the next page: the identifier of the last record given.
        '''
        self._purge( )
        identifiers = tuple( self._tasks )
        start = 0
        if cursor is not None:
            try: start = identifiers.index( cursor ) + 1
            except ValueError as exception:
                raise _exceptions.TaskAbsence( cursor ) from exception
        page = tuple(
            self._tasks[ identifier ]
            for identifier in identifiers[ start : start + self.page_size ] )
        after = start + self.page_size < len( identifiers )
        return page, ( page[ -1 ].identifier if after else None )

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
        now = _produce_now( )
        for record in tuple( self._tasks.values( ) ):
            if not record.is_expired( now ): continue
            del self._tasks[ record.identifier ]
            self._end( record.identifier )


class TasksExtension:
    ''' Handlers of the ``tasks/*`` requests, and the start of tasks.

        The tool server provides the store and the call of a tool with a
        liaison (the session which asked, for progress).
    '''

    task_store: TaskStore | None
    tasks_running_maximum: int
    _running: dict[ str, __.asyncio.Task[ None ] ]

    async def cancel_task(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.CancelTaskResult:
        ''' Handles ``tasks/cancel``: cancels the call; the task is then
            cancelled. A terminal task cannot be cancelled (error).
        '''
        task = await self._access_task( parameters )
        if not task.is_terminal( ):
            running = self._running.get( task.identifier )
            if running is not None:
                running.cancel( )
                await __.asyncio.gather( running, return_exceptions = True )
            else: # run by another process: only its record is ours
                await self._store_end( task, TaskStates.Cancelled )
            task = await self._access_task( parameters )
            if task.state is TaskStates.Cancelled: # unless it ended first
                return _sdk.produce_model(
                    _mcp_types.CancelTaskResult,
                    **_produce_task_fields( task ) )
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
    ) -> _mcp_types.GetTaskResult:
        ''' Handles ``tasks/get``: the state of a task. '''
        task = await self._access_task( parameters )
        return _sdk.produce_model(
            _mcp_types.GetTaskResult, **_produce_task_fields( task ) )

    async def retrieve_task_result(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``tasks/result``: waits until the task is terminal;
            returns the call's result, or raises its error.
        '''
        task = await self._access_task( parameters )
        store = self._access_store( )
        await store.wait_task( task.identifier )
        task = await self._access_task( parameters )
        meta = { _RELATED_TASK: { 'taskId': task.identifier } }
        if task.result is not None:
            return _mcp_types.CallToolResult.model_validate(
                { **task.result, '_meta': meta } )
        error = task.error or {
            'code': _mcp_types.INTERNAL_ERROR,
            'message': "The task was cancelled: it has no result." }
        raise _sdk.produce_error(
            int( error[ 'code' ] ), str( error[ 'message' ] ),
            error.get( 'data' ) )

    async def survey_tasks(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListTasksResult:
        ''' Handles ``tasks/list``: the tasks, a page at a time. '''
        store = self._access_store( )
        cursor = None if parameters is None else parameters.cursor
        try: tasks, after = await store.survey_tasks( cursor )
        except _exceptions.TaskAbsence:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"Unknown cursor {cursor!r}." ) from None
        return _sdk.produce_model(
            _mcp_types.ListTasksResult,
            tasks = [
                _sdk.produce_model(
                    _mcp_types.Task, **_produce_task_fields( task ) )
                for task in tasks ],
            next_cursor = after )

    async def _create_task(
        self,
        ttl: int | None,
        call: __.cabc.Callable[
            [ str ], __.cabc.Awaitable[ _mcp_types.CallToolResult ] ],
    ) -> _mcp_types.CreateTaskResult:
        ''' Stores a working task and starts its call (given the task's
            identifier); returns the task.
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
                TTL_DEFAULT if ttl is None else ttl, TTL_MAXIMUM ) ) )
        await store.store_task( task )
        running = __.asyncio.get_running_loop( ).create_task(
            self._run_task( task, call ) )
        self._running[ task.identifier ] = running
        return _sdk.produce_model(
            _mcp_types.CreateTaskResult,
            task = _sdk.produce_model(
                _mcp_types.Task, **_produce_task_fields( task ) ) )

    async def _note_progress( self, identifier: str, message: str ) -> None:
        ''' Makes the status message of a working task that of progress.
        '''
        store = self._access_store( )
        task = await store.retrieve_task( identifier )
        if task is None or task.is_terminal( ): return
        await store.store_task( __.dcls.replace(
            task, message = message, updated = _produce_now( ) ) )

    async def _run_task(
        self,
        task: TaskRecord,
        call: __.cabc.Callable[
            [ str ], __.cabc.Awaitable[ _mcp_types.CallToolResult ] ],
    ) -> None:
        try:
            try: result = await call( task.identifier )
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
        finally: self._running.pop( task.identifier, None )

    async def _store_end(
        self, task: TaskRecord, state: TaskStates, **fields: __.typx.Any
    ) -> None:
        store = self._access_store( )
        latest = await store.retrieve_task( task.identifier ) or task
        if latest.is_terminal( ): return # cancelled elsewhere first
        await store.store_task( __.dcls.replace(
            latest, state = state, updated = _produce_now( ), **fields ) )

    async def _access_task( self, parameters: __.typx.Any ) -> TaskRecord:
        identifier = _sdk.access_field( parameters, 'task_id' )
        task = await self._access_store( ).retrieve_task( identifier )
        if task is None:
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


def access_progress_token(
    parameters: __.typx.Any
) -> str | int | None:
    ''' Returns progress token of request, if its client asked for progress.
    '''
    meta: __.typx.Any = getattr( parameters, 'meta', None )
    if meta is None: return None
    if isinstance( meta, __.cabc.Mapping ): # SDK 2.x: a typed dictionary
        entries = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], meta )
        return entries.get( 'progress_token', entries.get( 'progressToken' ) )
    return getattr( meta, 'progressToken', None )


def access_task_support( designation: _naming.Designation ) -> str | None:
    ''' Returns whether tool runs as a task: local tools may; those of an
        upstream server as it said (``None``: it said nothing).
    '''
    from ..mcp.ensembles import ServerEnsemble
    ensemble = designation.invoker.ensemble
    if not isinstance( ensemble, ServerEnsemble ): return 'optional'
    name = designation.invoker.name
    for description in ensemble.survey_tools( ):
        if description.name != name: continue
        support = getattr( description, 'task_support', None )
        return None if support is None else str( support )
    return None


def _produce_now( ) -> _datetime.datetime:
    return _datetime.datetime.now( _datetime.timezone.utc )


def _produce_task_fields(
    task: TaskRecord
) -> dict[ str, __.typx.Any ]:
    ''' Returns fields of the protocol's task (snake_case names). '''
    return {
        'task_id': task.identifier,
        'status': task.state.value,
        'status_message': task.message,
        'created_at': task.created.isoformat( ),
        'last_updated_at': task.updated.isoformat( ),
        'ttl': task.ttl,
        'poll_interval': task.poll_interval,
    }
