# SPDX-License-Identifier: Apache-2.0

''' Calls of tools which run as tasks on their server (MCP 2025-11-25).

    A call starts a task (``tools/call`` with ``task``), polls it
    (``tasks/get``) at the interval its server asks, reports each new status
    message as progress, and fetches its result (``tasks/result``, which
    also carries what the server asks the user meanwhile). A call which is
    cancelled, or whose time is up, cancels its task (``tasks/cancel``).
    When the session is lost, the ensemble reconnects and the call follows
    the same task on the new session, if the server still knows it.
'''


import anyio as _anyio

import invocables.mcp.__ as __
import invocables.mcp._relays as _relays
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
_LOSSES = ( _anyio.ClosedResourceError, _anyio.BrokenResourceError )

_scribe = __.produce_scribe( __name__ )


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

    async def __call__(
        self, connection: __.typx.Any, arguments: dict[ str, __.typx.Any ]
    ) -> __.typx.Any:
        ''' Starts task; returns its result once it ends.

            Errors of the start are the session's own, as for an ordinary
            call (the caller may send it again if undelivered).
        '''
        task = await _sdk.create_task(
            connection.session, self.tool, arguments )
        identifier = _sdk.access_field( task, 'task_id' )
        _scribe.debug(
            "MCP server %r runs tool %r as task %r.",
            self.ensemble, self.tool, identifier )
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
        except __.asyncio.CancelledError:
            await self._cancel( connection, identifier )
            raise

    async def _cancel(
        self, connection: __.typx.Any, identifier: str
    ) -> None:
        ''' Asks server to cancel task; waits a grace period at most. '''
        cancelling = __.asyncio.ensure_future(
            _sdk.cancel_task( connection.session, identifier ) )
        try:
            await __.asyncio.wait_for(
                __.asyncio.shield( cancelling ), self.grace )
        except ( __.asyncio.CancelledError, __.asyncio.TimeoutError ):
            cancelling.cancel( )
        except ( _MCPError, *_LOSSES ) as exception:
            _scribe.debug(
                "MCP server %r did not cancel task %r: %s",
                self.ensemble, identifier, exception )

    async def _follow(
        self, connection: __.typx.Any, identifier: str, state: __.typx.Any
    ) -> _mcp_types.CallToolResult:
        ''' Polls task until it ends or needs input; returns its result. '''
        while True:
            status = _sdk.access_field( state, 'status' )
            await self._report( state )
            if status in ( 'completed', 'failed', 'input_required' ):
                # Waits for the end; carries the server's questions.
                return await _sdk.fetch_task_result(
                    _access_session( connection ), identifier )
            if status == 'cancelled':
                raise self._refuse( identifier, 'the server cancelled it' )
            await __.asyncio.sleep( _access_interval( state ) )
            state = await _sdk.survey_task(
                _access_session( connection ), identifier )

    def _refuse(
        self, identifier: str, reason: str
    ) -> _exceptions.InvocationRefusal:
        return _exceptions.InvocationRefusal(
            f"Task {identifier!r} of tool {self.tool!r} on MCP server "
            f"{self.ensemble!r} did not complete: {reason}." )

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
        try: return await _sdk.survey_task( connection.session, identifier )
        except _MCPError as exception:
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
    support = tasked.get( name )
    if support is None: return False
    return support == 'required' or _sdk.accepts_tasks( session )


def _access_session( connection: __.typx.Any ) -> __.typx.Any:
    ''' Returns session of connection; raises if it is lost (stopped). '''
    if not connection.is_usable( ):
        raise _sdk.produce_error( _CONNECTION_CLOSED, 'Connection closed' )
    return connection.session


def _access_interval( state: __.typx.Any ) -> float:
    ''' Returns seconds to wait before the next poll, within bounds. '''
    interval = _sdk.access_field( state, 'poll_interval', None )
    if isinstance( interval, bool ) or not isinstance(
        interval, int | float
    ): return POLL_INTERVAL_DEFAULT
    return min(
        max( interval / 1000, POLL_INTERVAL_MINIMUM ), POLL_INTERVAL_MAXIMUM )


def _is_lost( exception: _MCPError ) -> bool:
    ''' Tells whether the session (not the task) was lost. '''
    return exception.error.code == _CONNECTION_CLOSED or (
        _sdk.is_session_lost( exception ) )
