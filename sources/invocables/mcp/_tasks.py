# SPDX-License-Identifier: Apache-2.0

''' Calls of tools which run as tasks on their server.

    A call starts a task, polls it (``tasks/get``) at the interval its
    server asks, reports each new status message as progress, and takes its
    result. A call which is cancelled, whose time is up, or which ends
    otherwise before its task did (a state or input requests out of shape,
    an input which could not be given), cancels its task
    (``tasks/cancel``). What the server says of its task (identifier,
    status, interval, error) is bounded where used. When the session is
    lost, the ensemble reconnects and the call follows the same task on the
    new session, if the server still knows it.

    The two protocols differ in how a task starts and ends, told apart here
    and in :py:mod:`invocables.mcp._sdk` alone. MCP 2025-11-25: the client
    asks (``tools/call`` with ``task``) for the tools which the options
    name; the result is fetched with ``tasks/result``, which also carries
    what the server asks the user meanwhile. MCP 2026-07-28 (the extension
    ``io.modelcontextprotocol/tasks``, SDK 2.x): the session declares the
    extension and the server decides which calls become tasks (a result
    ``resultType: task``); ``tasks/get`` inlines the result or the error.
'''


from typing import Literal as _Literal

import anyio as _anyio

from pydantic import Field as _Field

import invocables.mcp.__ as __
import invocables.mcp._inputs as _inputs
import invocables.mcp._relays as _relays
import invocables.mcp.results as _results
import invocables.mcp._sdk as _sdk
from ._sdk import Error as _MCPError
from ._sdk import types as _mcp_types
import invocables.exceptions as _exceptions


Reconnector: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any, str ], __.cabc.Awaitable[ __.typx.Any ] ]
''' Returns a usable connection, from the lost one and why it was lost. '''

POLL_INTERVAL_DEFAULT = 1.0
POLL_INTERVAL_MAXIMUM = 5.0
POLL_INTERVAL_MINIMUM = 0.05

_CONNECTION_CLOSED = -32000
_ENDS = ( 'completed', 'failed' )
_LOSSES = ( _anyio.ClosedResourceError, _anyio.BrokenResourceError )

_TEXT_LENGTH_MAXIMUM = 200 # characters of a server's text in a message

_scribe = __.produce_scribe( __name__ )


class TaskCommon( _mcp_types.Result ):
    ''' Task of the tasks extension (MCP 2026-07-28): the call's result
        (completed) or error (failed) inlined. Its fields bear the names
        of the task of 2025-11-25.
    '''

    task_id: str = _Field( alias = 'taskId' )
    status: str
    status_message: str | None = _Field(
        default = None, alias = 'statusMessage' )
    poll_interval: int | None = _Field(
        default = None, alias = 'pollIntervalMs' )
    result: dict[ str, __.typx.Any ] | None = None
    error: dict[ str, __.typx.Any ] | None = None


class TaskState( TaskCommon ):
    ''' Task as ``tasks/get`` answers it: with its input requests, by key,
        while it needs input. '''

    input_requests: dict[ str, __.typx.Any ] | None = _Field(
        default = None, alias = 'inputRequests' )


class TaskCreation( TaskCommon ):
    ''' Result of a tool call which the server runs as a task (the SDK
        lets a claimed result have no ``inputRequests``: a task created
        needing input says its requests on the next poll).
    '''

    result_type: _Literal[ 'task' ] = _Field( alias = 'resultType' )


class TaskUpdateParameters( _mcp_types.RequestParams ):
    ''' Parameters of ``tasks/update`` (the tasks extension). '''

    task_id: str = _Field( alias = 'taskId' )
    input_responses: dict[ str, __.typx.Any ] = _Field(
        alias = 'inputResponses' )


class TaskUpdate( _mcp_types.Request[
    TaskUpdateParameters, _Literal[ 'tasks/update' ]
] ):
    ''' Request ``tasks/update`` of the tasks extension (MCP 2026-07-28):
        the answers to the input requests of a task, by key.
    '''

    method: _Literal[ 'tasks/update' ] = 'tasks/update'
    params: TaskUpdateParameters


class TaskCall:
    ''' Call of one tool as a task, followed to its end. '''

    def __init__(
        self,
        ensemble: str,
        tool: str,
        reconnector: Reconnector,
        progress: _relays.Progress | None,
        grace: float,
    ):
        self.ensemble = ensemble
        self.tool = tool
        self.reconnector = reconnector
        self.progress = progress
        self.grace = grace
        self.reported: str | None = None
        self.updates = 0
        self.answered: set[ str ] = set( )
        self.rounds = 0
        self.redactor: __.typx.Any = None
        self.ended = False # the server told the task's end

    async def __call__(
        self, connection: __.typx.Any, arguments: dict[ str, __.typx.Any ]
    ) -> __.typx.Any:
        ''' Starts task; returns its result once it ends.

            Errors of the start are the session's own, as for an ordinary
            call (the caller may send it again if undelivered).
        '''
        self.redactor = connection.redactor
        task = await self._create( connection, arguments )
        # MCP 2026-07-28: the server chose to answer at once.
        if isinstance( task, _mcp_types.CallToolResult ): return task
        identifier = _sdk.access_field( task, 'task_id' )
        _scribe.debug(
            "MCP server %r runs tool %r as task %r.",
            self.ensemble, self.tool, self._shorten( identifier ) )
        state: __.typx.Any = task
        try:
            while True:
                try:
                    return await self._follow(
                        connection, identifier, state )
                except _MCPError as exception:
                    if not _is_lost( exception ):
                        raise self._refuse(
                            identifier, exception.error.message ) from None
                    connection = await self.reconnector(
                        connection, exception.error.message )
                except _LOSSES:
                    connection = await self.reconnector(
                        connection, 'Connection closed' )
                # The state before the loss: ask again on the new session.
                state = await self._survey( connection, identifier )
        except ( Exception, __.asyncio.CancelledError ):
            # Cancelled, out of time, or ended here: the task runs still.
            if not self.ended: await self._cancel( connection, identifier )
            raise

    async def _create(
        self, connection: __.typx.Any, arguments: dict[ str, __.typx.Any ]
    ) -> __.typx.Any:
        ''' Returns task which the call of the tool starts, or its result;
            under MCP 2026-07-28, after the input it requires first.
        '''
        session = connection.session
        if not _sdk.is_modern( session ):
            return await _sdk.create_task(
                session, self.tool, arguments, self.progress )

        def send( responses: __.typx.Any, state: str | None ) -> (
            __.cabc.Awaitable[ __.typx.Any ]
        ):
            return _sdk.create_task(
                session, self.tool, arguments, self.progress,
                responses, state )

        return await _inputs.resolve(
            session, send, f"tool {self.tool!r}",
            connection.redactor.redact )

    async def _cancel(
        self, connection: __.typx.Any, identifier: str
    ) -> None:
        ''' Asks server to cancel task; waits a grace period at most. '''
        session = connection.session
        if session is None: # the session ended: nothing to ask it
            _scribe.debug(
                "MCP server %r: task %r not cancelled: session ended.",
                self.ensemble, self._shorten( identifier ) )
            return
        cancelling = __.asyncio.ensure_future(
            _sdk.cancel_task( session, identifier ) )
        try:
            await __.asyncio.wait_for(
                __.asyncio.shield( cancelling ), self.grace )
        except ( __.asyncio.CancelledError, __.asyncio.TimeoutError ):
            cancelling.cancel( )
        except ( _MCPError, *_LOSSES ) as exception:
            _scribe.debug(
                "MCP server %r did not cancel task %r: %s",
                self.ensemble, self._shorten( identifier ),
                self._shorten( str( exception ) ) )

    async def _follow(
        self, connection: __.typx.Any, identifier: str, state: __.typx.Any
    ) -> _mcp_types.CallToolResult:
        ''' Polls task until it ends or needs input; returns its result. '''
        while True:
            status = _sdk.access_field( state, 'status' )
            await self._report( state )
            if status == 'input_required' and _sdk.is_modern(
                _access_session( connection )
            ): await self._answer( connection, identifier, state )
            elif status in ( *_ENDS, 'input_required' ):
                # A task created ended is asked once for its end.
                self.ended = status in _ENDS and not isinstance(
                    state, TaskCreation )
                return await self._conclude( connection, identifier, state )
            elif status == 'cancelled':
                self.ended = True
                raise self._refuse( identifier, 'the server cancelled it' )
            await __.asyncio.sleep( _access_interval( state ) )
            state = await _survey_task(
                _access_session( connection ), identifier )

    async def _conclude(
        self, connection: __.typx.Any, identifier: str, state: __.typx.Any
    ) -> _mcp_types.CallToolResult:
        ''' Returns result of task which ended or needs input.

            MCP 2025-11-25: ``tasks/result`` waits for the end and carries
            the server's questions. MCP 2026-07-28: the result or error
            which the task's state inlines (a task created ended says
            none: it is asked for once).
        '''
        session = _access_session( connection )
        if not _sdk.is_modern( session ):
            return await _sdk.fetch_task_result( session, identifier )
        if isinstance( state, TaskCreation ):
            state = await _survey_task( session, identifier )
            if state.status not in _ENDS:
                raise self._refuse(
                    identifier, "the server said that it ended, then "
                    f"that it is {self._shorten( state.status )}" )
            self.ended = True
        if state.result is not None:
            return _mcp_types.CallToolResult.model_validate(
                state.result, by_name = False )
        error: dict[ str, __.typx.Any ] = state.error or { }
        # Refused here: its code is the call's, never a lost session's.
        message = error.get( 'message' )
        reason = message if isinstance( message, str ) else ''
        raise self._refuse( identifier, reason or 'it failed' )

    async def _answer(
        self, connection: __.typx.Any, identifier: str, state: __.typx.Any
    ) -> None:
        ''' Answers the requests of a task which needs input (MCP
            2026-07-28: ``tasks/update``), by the session's callbacks, as
            those of a call are; each key once, at most
            :py:data:`invocables.mcp._inputs.ROUNDS_MAXIMUM` times a round.
            A task created needing input says none: the next poll does.
        '''
        session = _access_session( connection )
        subject = f"task {self._quote( identifier )} of tool {self.tool!r}"
        redact = connection.redactor.redact
        requests = {
            key: request for key, request
            in _inputs.produce_requests(
                getattr( state, 'input_requests', None ) or { },
                subject, redact ).items( )
            if key not in self.answered }
        if not requests: return
        self.rounds += 1
        if self.rounds > _inputs.ROUNDS_MAXIMUM: # cancelled on the way out
            raise self._refuse(
                identifier, "it required input for more than "
                f"{_inputs.ROUNDS_MAXIMUM} rounds" )
        answers = await _inputs.answer_requests(
            session, requests, subject, redact )
        self.answered.update( answers )
        # Acknowledged with an empty result.
        await _sdk.send_task_request(
            session, TaskUpdate, identifier, _mcp_types.Result,
            inputResponses = {
                key: answer.model_dump(
                    by_alias = True, mode = 'json', exclude_none = True )
                for key, answer in answers.items( ) } )

    def _refuse(
        self, identifier: str, reason: str
    ) -> _exceptions.InvocationRefusal:
        ''' Returns refusal of the call, with the server's secrets
            redacted (its reason and the task's identifier are the
            server's), each abbreviated. '''
        return _exceptions.InvocationRefusal(
            f"Task {self._quote( identifier )} of tool {self.tool!r} on "
            f"MCP server {self.ensemble!r} did not complete: "
            f"{self._shorten( reason ).rstrip( '.' )}." )

    def _quote( self, identifier: str ) -> str:
        ''' Returns task's identifier redacted, then quoted (quoting
            escapes what a secret may hold) and abbreviated. '''
        return self._shorten( identifier, repr )

    def _shorten(
        self, text: str, quote: __.cabc.Callable[ [ str ], str ] = str
    ) -> str:
        ''' Returns server's text redacted, then abbreviated: no bound cuts
            a secret. '''
        redact = None if self.redactor is None else self.redactor.redact
        return _results.produce_excerpt(
            text, redact, quote, _TEXT_LENGTH_MAXIMUM )

    async def _report( self, state: __.typx.Any ) -> None:
        ''' Reports status message of task as progress, when it changes. '''
        if self.progress is None: return
        message = _sdk.access_field( state, 'status_message', None )
        status = _sdk.access_field( state, 'status' )
        text = message or status
        if text == self.reported: return
        self.reported = text
        self.updates += 1
        await self.progress( self.updates, None, text )

    async def _survey(
        self, connection: __.typx.Any, identifier: str
    ) -> __.typx.Any:
        try: return await _survey_task( connection.session, identifier )
        except _MCPError as exception:
            self.ended = True # nothing to cancel
            raise self._refuse(
                identifier,
                "the server no longer knows it after the session was lost "
                f"({exception.error.message})" ) from None


def is_tasked(
    tasked: __.cabc.Mapping[ str, str ], session: __.typx.Any, name: str
) -> bool:
    ''' Tells whether tool is called as a task: it requires tasks, or it
        supports them, the options ask for them (``tasked`` holds it then)
        and the server runs calls as tasks.
    '''
    if _sdk.is_modern( session ): return _sdk.accepts_tasks( session )
    support = tasked.get( name )
    if support is None: return False
    return support == 'required' or _sdk.accepts_tasks( session )


def produce_task_arguments( *, tasks: bool ) -> dict[ str, __.typx.Any ]:
    ''' Returns arguments of a 2.x session which declares the tasks
        extension (MCP 2026-07-28), with the claim of its results (the
        calls follow tasks themselves); none without tasks, or with 1.x.
    '''
    if not ( tasks and _sdk.MAJOR >= 2 ): return { } # noqa: PLR2004
    from mcp.client.extension import ResultClaim

    async def resolve( result: TaskCreation, context: __.typx.Any ) -> (
        _mcp_types.CallToolResult
    ): raise NotImplementedError # pragma: no cover

    claim = ResultClaim(
        result_type = 'task', model = TaskCreation, resolve = resolve )
    return {
        'extensions': { _sdk.TASKS_EXTENSION: { } },
        'result_claims': { _sdk.TASKS_EXTENSION: [ claim ] } }


def _access_session( connection: __.typx.Any ) -> __.typx.Any:
    ''' Returns session of connection; raises if it is lost (stopped). '''
    if not connection.is_usable( ):
        raise _sdk.produce_error( _CONNECTION_CLOSED, 'Connection closed' )
    return connection.session


async def _survey_task(
    session: __.typx.Any, identifier: str
) -> __.typx.Any:
    ''' Returns state of task, as the session's protocol gives it. '''
    model: type[ __.typx.Any ] = (
        TaskState if _sdk.is_modern( session ) else _mcp_types.GetTaskResult )
    return await _sdk.survey_task( session, identifier, model )


def _access_interval( state: __.typx.Any ) -> float:
    ''' Returns seconds to wait before the next poll, within bounds. '''
    interval = _sdk.access_field( state, 'poll_interval', None )
    if isinstance( interval, bool ) or not isinstance(
        interval, int | float
    ): return POLL_INTERVAL_DEFAULT
    # Compared before divided: an integer of any size (JSON allows it)
    # overflows a float; NaN is never below.
    if not interval < POLL_INTERVAL_MAXIMUM * 1000:
        return POLL_INTERVAL_MAXIMUM
    return max( interval / 1000, POLL_INTERVAL_MINIMUM )


def _is_lost( exception: _MCPError ) -> bool:
    ''' Tells whether the session (not the task) was lost. '''
    return exception.error.code == _CONNECTION_CLOSED or (
        _sdk.is_session_lost( exception ) )
