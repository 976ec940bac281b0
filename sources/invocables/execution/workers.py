# SPDX-License-Identifier: Apache-2.0

''' Threads for sync tools: bounded, and never in the way of exit.

    Sync functions which are tools run here, not in the event loop's default
    executor: so that blocking tools cannot starve what else uses that
    executor (name resolution, ``asyncio.to_thread`` in async tools), and so
    that a tool which never returns cannot keep ``asyncio.run`` or the
    interpreter from exiting (the threads are daemons, which nothing
    joins).

    At most :py:func:`access_threads_maximum` threads run at once (default
    32; environment variable ``INVOCABLES_THREADS_MAXIMUM``, or
    :py:func:`configure_threads`); further calls wait in line. A thread
    cannot be stopped: when the caller stops awaiting (timeout or
    cancellation), a call still in line is withdrawn and never starts, and a
    call already running is abandoned, its thread going on until the
    function returns; until then it counts against the maximum.
'''


import contextvars as _contextvars
import os as _os
import queue as _queue
import threading as _threading

import invocables.__ as __
import invocables.exceptions as _exceptions


THREADS_MAXIMUM_DEFAULT = 32

_ENVIRONMENT_VARIABLE = 'INVOCABLES_THREADS_MAXIMUM'
_QUEUED = 0
_RUNNING = 1
_WITHDRAWN = 2
_FINISHED = 3
_T = __.typx.TypeVar( '_T' )


class Fates( __.enum.Enum ):
    ''' What became of a call which its caller stopped awaiting.

        Sync calls are abandoned or withdrawn here; an async tool which did
        not end within its grace once cancelled is stranded (see
        :py:mod:`invocables.execution.deadlines`).
    '''

    Abandoned = 'abandoned' # running: its thread goes on to its end
    Stranded = 'stranded'   # async, not ended within its grace: goes on
    Withdrawn = 'withdrawn' # waiting for a thread: it never starts


# The list which collects fates in the current context, if any: set by the
# execution engine for each invocation.
FATES_OBSERVED: _contextvars.ContextVar[ list[ Fates ] | None ] = (
    _contextvars.ContextVar(
        'invocables.execution.workers.fates', default = None ) )


class _Job:
    ''' One call, from submission to delivery of its outcome. '''

    __slots__ = ( 'abandoned', 'call', 'future', 'loop', 'state' )

    def __init__(
        self,
        call: __.cabc.Callable[ [ ], __.typx.Any ],
        future: __.asyncio.Future[ __.typx.Any ],
        loop: __.asyncio.AbstractEventLoop,
    ):
        self.call = call
        self.future = future
        self.loop = loop
        self.state = _QUEUED
        self.abandoned = False # read by the function, in its thread


class _Executor:
    ''' Daemon threads, spawned on demand up to a maximum, reused. '''

    def __init__( self, maximum: int ):
        self.maximum = maximum
        self.count = 0
        # Every queued job is promised to an idle thread, to a new thread,
        # or to the backlog, which threads take from as they finish.
        self._backlog = 0
        self._idle = 0
        self._jobs: _queue.SimpleQueue[ _Job ] = _queue.SimpleQueue( )
        self._lock = _threading.Lock( )

    def submit( self, job: _Job ) -> None:
        ''' Queues job; starts a thread if none is idle and room is left. '''
        with self._lock:
            self._jobs.put( job )
            if self._idle:
                self._idle -= 1
                return
            if self.count >= self.maximum:
                self._backlog += 1
                return
            self.count += 1
            name = f"invocables-worker-{self.count}"
        thread = _threading.Thread(
            target = self._work, name = name, daemon = True )
        try: thread.start( )
        except RuntimeError: # the caller withdraws the job
            with self._lock:
                self.count -= 1
                self._backlog += 1
            raise

    def resize( self, maximum: int ) -> None:
        ''' Sets most threads which may run at once, from now on. '''
        with self._lock: self.maximum = maximum

    def withdraw( self, job: _Job ) -> Fates | None:
        ''' Withdraws job if it did not start; tells what became of it. '''
        with self._lock:
            if job.state == _QUEUED:
                job.state = _WITHDRAWN
                return Fates.Withdrawn
            if job.state == _RUNNING:
                job.abandoned = True
                return Fates.Abandoned
            return None

    def _work( self ) -> None:
        while True:
            job = self._jobs.get( )
            with self._lock:
                runnable = job.state == _QUEUED
                if runnable: job.state = _RUNNING
            if runnable: self._run( job )
            del job # an idle thread holds no arguments nor results
            with self._lock:
                if self._backlog: self._backlog -= 1
                else: self._idle += 1

    def _run( self, job: _Job ) -> None:
        _local.job = job
        try: outcome = ( True, job.call( ) )
        except BaseException as exception: # delivered to the caller
            outcome = ( False, exception )
        finally: _local.job = None
        with self._lock: job.state = _FINISHED
        # A closed loop raises: nobody awaits the outcome any more.
        with __.ctxl.suppress( RuntimeError ):
            job.loop.call_soon_threadsafe( _deliver, job.future, *outcome )


_executor: _Executor | None = None
_executor_lock = _threading.Lock( )
_local = _threading.local( ) # the job which a worker thread runs


def access_threads_maximum( ) -> int:
    ''' Returns most threads which may run sync tools at once. '''
    return _access_executor( ).maximum


def configure_threads(
    maximum: __.typx.Annotated[
        int,
        __.ddoc.Doc( ''' Most threads which may run sync tools at once
            (abandoned ones included). At least 1. ''' ),
    ],
) -> None:
    ''' Sets most threads which may run sync tools at once.

        Applies to threads started from now on; threads already running
        are not stopped. Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` unless
        maximum is a positive integer.
    '''
    _validate_maximum( 'threads maximum', maximum )
    _access_executor( ).resize( maximum )


async def execute_in_thread(
    function: __.cabc.Callable[ ..., _T ],
    /,
    *positional: __.typx.Any,
    **nominative: __.typx.Any,
) -> _T:
    ''' Calls sync function in a thread for sync tools; returns its result.

        Context variables are copied, as ``asyncio.to_thread`` does. If the
        await is cancelled, a call still waiting for a thread is withdrawn
        and a running one abandoned (see :py:class:`Fates`).
    '''
    loop = __.asyncio.get_running_loop( )
    future: __.asyncio.Future[ _T ] = loop.create_future( )
    context = _contextvars.copy_context( )
    job = _Job(
        __.funct.partial(
            context.run, function, *positional, **nominative ),
        future, loop )
    executor = _access_executor( )
    try: executor.submit( job )
    except RuntimeError:
        executor.withdraw( job )
        raise
    try: return await future
    except __.asyncio.CancelledError:
        fate = executor.withdraw( job )
        fates = FATES_OBSERVED.get( )
        if fate is not None and fates is not None: fates.append( fate )
        raise


def is_abandoned( ) -> bool:
    ''' Returns whether the caller stopped awaiting the current sync call.

        In the thread of a sync tool: true once its timeout passed or its
        execution was cancelled, while the function still runs (a thread
        cannot be stopped); the function should then return soon. Outside
        the threads of sync tools, false. Tools usually ask
        :py:func:`~invocables.execution.deadlines.is_expired`, which asks
        this too.
    '''
    job: _Job | None = getattr( _local, 'job', None )
    return job is not None and job.abandoned


def _access_executor( ) -> _Executor:
    global _executor # noqa: PLW0603
    executor = _executor
    if executor is not None: return executor
    with _executor_lock:
        if _executor is None:
            _executor = _Executor( _access_maximum_default( ) )
        return _executor


def _access_maximum_default( ) -> int:
    text = _os.environ.get( _ENVIRONMENT_VARIABLE, '' ).strip( )
    if not text: return THREADS_MAXIMUM_DEFAULT
    try: maximum = int( text )
    except ValueError as exception:
        raise _exceptions.ConfigurationInvalidity(
            f"environment variable {_ENVIRONMENT_VARIABLE}",
            f"{text!r} is not an integer; give a positive integer." ) from (
                exception )
    _validate_maximum( f"environment variable {_ENVIRONMENT_VARIABLE}",
        maximum )
    return maximum


def _deliver(
    future: __.asyncio.Future[ __.typx.Any ],
    succeeded: bool, # noqa: FBT001
    outcome: __.typx.Any,
) -> None:
    if future.done( ): return # cancelled: the caller went on
    if succeeded: future.set_result( outcome )
    else: future.set_exception( outcome )


def _validate_maximum( location: str, maximum: object ) -> None:
    __.values.validate_count( maximum, location )
