# SPDX-License-Identifier: Apache-2.0

''' Requests for input of tool calls run as tasks (MCP 2025-11-25).

    A tool run as a task asks its client (elicitation, sampling): its task
    waits (``input_required``) until the client calls ``tasks/result``,
    on whose stream the request goes; the answer resumes the tool, and the
    task works again. A request made while no ``tasks/result`` is open
    waits for the next one: none is lost.

    A task of MCP 2026-07-28 holds its requests until ``tasks/update``
    answers them (:py:func:`await_answered`). Either way, a task whose
    requests wait longer than the duration of a continuation for an
    answer fails (:py:meth:`TaskInputs.await_answered`): only waits count,
    not the call's own work.
'''


import invocables.serving.__ as __
from ..mcp._sdk import produce_error as _produce_error


Sender: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any ], __.cabc.Awaitable[ __.typx.Any ] ]
''' Sends a request on the stream of a request context; returns answer. '''
Result = __.typx.TypeVar( 'Result' )
Noter: __.typx.TypeAlias = __.cabc.Callable[
    [ str, str | None, str ], __.cabc.Awaitable[ None ] ]
''' Notes the status message and state of a task (``input_required``, or
    ``working`` again).
'''


_OVERDUE = -32001 # the mcp SDK's REQUEST_TIMEOUT: an answer is overdue


class _Asking:
    ''' Requests of one task not yet sent, and those which wait for an
        answer (sent or not).
    '''

    def __init__( self ):
        self.pending: __.collections.deque[
            tuple[ Sender, __.asyncio.Future[ __.typx.Any ] ] ] = (
                __.collections.deque( ) )
        self.arrival = __.asyncio.Event( ) # for a tasks/result
        self.asked = __.asyncio.Event( ) # for the bound of the waits
        self.waiting: set[ __.asyncio.Future[ __.typx.Any ] ] = set( )


class TaskInputs:
    ''' Requests for input of the running tasks, by task. '''

    def __init__( self, note: Noter ):
        self.note = note
        self._askings: dict[ str, _Asking ] = { }

    async def ask(
        self, identifier: str, message: str, send: Sender
    ) -> __.typx.Any:
        ''' Queues request of task; returns the client's answer, once a
            ``tasks/result`` carried it. The task waits for input
            meanwhile, with message as its status message.
        '''
        asking = self._askings.setdefault( identifier, _Asking( ) )
        future: __.asyncio.Future[ __.typx.Any ] = (
            __.asyncio.get_running_loop( ).create_future( ) )
        asking.pending.append( ( send, future ) )
        asking.arrival.set( )
        asking.waiting.add( future )
        asking.asked.set( )
        await self.note( identifier, message, 'input_required' )
        try: return await future
        finally:
            asking.waiting.discard( future )
            if not asking.waiting:
                with __.ctxl.suppress( Exception ):
                    await self.note( identifier, None, 'working' )

    async def await_answered(
        self,
        call: __.cabc.Callable[ [ str ], __.cabc.Awaitable[ Result ] ],
        duration: float,
        identifier: str,
    ) -> Result:
        ''' Returns the result of the call of the task of identifier (MCP
            2025-11-25). Once its requests waited duration seconds without
            an answer (not yet sent, or sent on a ``tasks/result`` and
            unanswered), cancels the call and raises an error which says
            so (the task fails, and its call runs no more).
        '''
        asking = self._askings.setdefault( identifier, _Asking( ) )
        return await _await_bounded(
            call( identifier ), lambda: asking.waiting, asking.asked,
            duration, 'tasks/result' )

    async def deliver(
        self,
        identifier: str,
        context: __.typx.Any,
        ending: __.cabc.Awaitable[ None ],
    ) -> None:
        ''' Sends requests of task on the stream of the request context (a
            ``tasks/result``), and gives their answers, until ending is
            over (the task is terminal).
        '''
        asking = self._askings.setdefault( identifier, _Asking( ) )
        ended = __.asyncio.ensure_future( ending )
        try:
            while True:
                while asking.pending:
                    await _send( asking, context )
                if ended.done( ): return
                await await_signal( ended, asking.arrival )
        finally:
            over = ended.done( ) and not ended.cancelled( )
            ended.cancel( )
            await __.asyncio.gather( ended, return_exceptions = True )
            if over: self.forget( identifier ) # nothing more to ask

    def forget( self, identifier: str ) -> None:
        ''' Forgets requests of a task which ended. '''
        asking = self._askings.pop( identifier, None )
        if asking is None: return
        for _, future in asking.pending: future.cancel( )


async def await_answered(
    inputs: dict[ str, __.typx.Any ],
    identifier: str,
    continuation: __.typx.Any,
    call: __.cabc.Awaitable[ Result ],
    duration: float,
) -> Result:
    ''' Returns the result of the call of a task of MCP 2026-07-28 whose
        requests for input continuation holds, under identifier in inputs
        meanwhile, for ``tasks/update`` to answer. Once its requests
        waited duration seconds without an answer, cancels the call and
        raises an error which says so (the task fails, and its call runs
        no more).
    '''
    inputs[ identifier ] = continuation
    try:
        return await _await_bounded(
            call,
            lambda: [
                future for _, future in continuation.requests.values( ) ],
            continuation.asked, duration, 'tasks/update' )
    finally: inputs.pop( identifier, None )


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


async def await_signal(
    future: __.asyncio.Future[ __.typx.Any ], signal: __.asyncio.Event
) -> None:
    ''' Waits until future is done or signal is set (from now on: it is
        cleared first).
    '''
    signal.clear( )
    waiter = __.asyncio.ensure_future( signal.wait( ) )
    try:
        await __.asyncio.wait(
            ( future, waiter ), return_when = __.asyncio.FIRST_COMPLETED )
    finally: waiter.cancel( )


async def _await_bounded(
    call: __.cabc.Awaitable[ Result ],
    survey_waits: __.cabc.Callable[
        [ ], __.cabc.Iterable[ __.asyncio.Future[ __.typx.Any ] ] ],
    asked: __.asyncio.Event,
    duration: float,
    method: str,
) -> Result:
    ''' Returns the result of a call, unless its requests for input (the
        futures of their answers, which survey_waits gives; asked is set
        at each new one) wait duration seconds without an answer: then
        cancels the call and raises the error of answers overdue, which
        method would have carried. Each answer gives the requests still
        waiting the whole duration again; the call's own work counts not.
    '''
    running = __.asyncio.ensure_future( call )
    try:
        while not running.done( ):
            waiting = [
                future for future in survey_waits( ) if not future.done( ) ]
            if not waiting: # until the call asks, or ends
                await await_signal( running, asked )
                continue
            done, _ = await __.asyncio.wait(
                ( running, *waiting ), timeout = duration,
                return_when = __.asyncio.FIRST_COMPLETED )
            if not done: raise _produce_overdue( duration, method )
        return running.result( )
    finally:
        running.cancel( )
        await __.asyncio.gather( running, return_exceptions = True )


def _produce_overdue( duration: float, method: str ) -> BaseException:
    ''' Produces the error of a task whose client's answers are overdue,
        which method would have carried.
    '''
    return _produce_error(
        _OVERDUE,
        "The task waited {duration:g} seconds for its client's answers to "
        "its input requests ({method}), its most: its call is abandoned. "
        "Call the tool again to retry.".format(
            duration = duration, method = method ),
        { 'reason': 'input_overdue', 'duration': duration } )


async def _send( asking: _Asking, context: __.typx.Any ) -> None:
    ''' Sends the first request pending; gives its answer or error. A
        request whose sending is cancelled (``tasks/result`` gone) waits
        for the next ``tasks/result``.
    '''
    send, future = asking.pending.popleft( )
    if future.done( ): return # its tool was cancelled
    sending = __.asyncio.ensure_future( send( context ) )
    try:
        await __.asyncio.wait(
            ( sending, future ), return_when = __.asyncio.FIRST_COMPLETED )
    except __.asyncio.CancelledError:
        sending.cancel( )
        if not future.done( ):
            asking.pending.appendleft( ( send, future ) )
            asking.arrival.set( ) # for another open tasks/result
        raise
    if future.done( ): # its tool was cancelled: no answer awaited
        sending.cancel( )
        await __.asyncio.gather( sending, return_exceptions = True )
        return
    try: answer = sending.result( )
    except Exception as exception:
        future.set_exception( exception )
        return
    future.set_result( answer )
