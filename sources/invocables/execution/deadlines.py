# SPDX-License-Identifier: Apache-2.0

''' The one way to await within a timeout, and a bounded grace after it.

    The execution engine, direct invocations (``ensemble.invoke``) and MCP
    calls all await here: in the current task (no extra task, unlike
    ``asyncio.wait_for`` on Python 3.10 and 3.11), with one timer which
    cancels that task when the timeout passes.

    A cancelled tool may take its time to clean up, or ignore the
    cancellation. Once the timeout has passed (or the caller asked to
    cancel), the tool has :py:func:`access_grace` seconds more (default
    :py:data:`GRACE_DEFAULT`); then it is abandoned: it goes on in a task of
    its own, whose end (a late result, or an exception) is discarded and
    logged once, and the call ends with the timeout (or the cancellation).
    A tool which ignores the cancellation and returns a value has still
    timed out. Python 3.10 has neither ``asyncio.timeout`` nor
    ``Task.uncancel``: its one difference lives here, in
    :py:func:`is_cancel_requested`.

    Tools which run where they cannot be cancelled (sync tools in threads,
    long loops of computation) stop cooperatively: they ask
    :py:func:`is_expired` (or :py:func:`access_remainder`) with their
    context now and then.
'''


import invocables.__ as __
import invocables.exceptions as _exceptions
import invocables.execution.workers as _workers


GRACE_DEFAULT = 1.0
''' Seconds which a cancelled tool has to end before it is abandoned. '''
GRACE_MARGIN = 0.5
''' Seconds after the grace within which a cancelled task is awaited
    still (Python 3.10); then it is left to end by itself. '''
TIMEOUT_DEFAULT = 60.0

_INFINITY = float( 'inf' )
_T = __.typx.TypeVar( '_T' )
_abandonments: set[ __.asyncio.Task[ None ] ] = set( )
# Tasks left to end by themselves after their execution was cancelled.
_stragglers: set[ __.asyncio.Task[ __.typx.Any ] ] = set( )
_grace = GRACE_DEFAULT
_scribe = __.produce_scribe( __name__ )


class _Expiry:
    ''' State of one bounded await: whether the timer fired, and when the
        grace of a cancelled tool ends. '''

    __slots__ = ( 'ending', 'expired', 'name', 'task' )

    def __init__( self, task: __.asyncio.Task[ __.typx.Any ], name: str ):
        self.ending: float | None = None # loop time; None: not cancelled
        self.expired = False
        self.name = name
        self.task = task

    def expire( self ) -> None:
        ''' Cancels the task: its timeout has passed. '''
        self.expired = True
        self.task.cancel( )

    def is_ending( self ) -> bool:
        ''' Returns whether the tool must end: timed out or cancelled. '''
        if self.expired: return True
        cancelling = getattr( self.task, 'cancelling', None )
        # Python 3.10 cannot tell a cancellation of the task from one which
        # the tool made and withdrew (anyio's scopes, as in HTTP clients'
        # timeouts): only the timer's counts there.
        return cancelling is not None and cancelling( ) > 0


def access_deadline( timeout: float | None ) -> float | None:
    ''' Returns loop time at which timeout from now passes (``None``: never).

        Requires a running event loop.
    '''
    if timeout is None: return None
    return __.asyncio.get_running_loop( ).time( ) + timeout


def access_grace( ) -> float:
    ''' Returns seconds which a cancelled tool has to end. '''
    return _grace


def access_remainder(
    context: __.typx.Annotated[
        object,
        __.ddoc.Doc( ''' Context of the invocation (anything with a
            ``deadline``), or a deadline itself. ''' ),
    ],
) -> float | None:
    ''' Returns seconds left before the invocation's deadline.

        ``None`` when the invocation has no deadline; 0 once it has passed,
        or once its caller stopped waiting for a sync tool (see
        :py:func:`is_expired`). Usable in the event loop and in the thread
        of a sync tool alike.
    '''
    if _workers.is_abandoned( ): return 0.0
    deadline = _access_deadline_of( context )
    if deadline is None: return None
    return max( 0.0, deadline - _access_time( ) )


async def cancel_tasks(
    tasks: __.cabc.Sequence[ __.asyncio.Task[ __.typx.Any ] ]
) -> None:
    ''' Cancels tasks and waits until every one has finished.

        Each tool's own deadline abandons it if it has not ended within the
        grace; on Python 3.10, which cannot tell a cancellation from
        outside there, a task still running a little after the grace is
        left to end by itself, so that the execution never waits for a
        tool which ignores cancellation.
    '''
    for task in tasks: task.cancel( )
    pending = [ task for task in tasks if not task.done( ) ]
    stragglers: set[ __.asyncio.Task[ __.typx.Any ] ] = set( )
    if pending:
        _, stragglers = await __.asyncio.wait(
            pending, timeout = access_grace( ) + GRACE_MARGIN )
    for task in tasks:
        if task in stragglers:
            _stragglers.add( task )
            task.add_done_callback( _release_straggler )
        # Retrieved, as gather would: none is reported as never retrieved.
        elif not task.cancelled( ): task.exception( )


def configure_grace(
    grace: __.typx.Annotated[
        float,
        __.ddoc.Doc( ''' Seconds, at least 0 and finite, which a tool has to
            end once cancelled, before it is abandoned. ''' ),
    ],
) -> None:
    ''' Sets seconds which a cancelled tool has to end, from now on.

        Applies to the whole process. Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` unless
        grace is a finite number of seconds, at least 0.
    '''
    global _grace # noqa: PLW0603
    if isinstance( grace, bool ) or not isinstance(
        grace, ( int, float )
    ) or not 0 <= grace < _INFINITY:
        raise _exceptions.ConfigurationInvalidity(
            'grace', f"{grace!r} is not a finite number of seconds, "
            "at least 0." )
    _grace = float( grace )


def is_expired(
    context: __.typx.Annotated[
        object,
        __.ddoc.Doc( ''' Context of the invocation (anything with a
            ``deadline``), or a deadline itself. ''' ),
    ],
) -> bool:
    ''' Returns whether the invocation should stop now.

        True once the deadline of the invocation has passed, and, in the
        thread of a sync tool, once its caller stopped waiting for it
        (timeout or cancellation): a thread cannot be stopped, so a long
        sync tool asks now and then, and returns or raises when told to.
        Usable in the event loop and in threads alike.
    '''
    if _workers.is_abandoned( ): return True
    deadline = _access_deadline_of( context )
    if deadline is None: return False
    return _access_time( ) >= deadline


def survey_abandonments( ) -> tuple[ __.asyncio.Task[ None ], ... ]:
    ''' Returns tasks in which abandoned tools go on to their end.

        An application which wants them finished before it exits may await
        them (``asyncio.wait``), or cancel them.
    '''
    return tuple( _abandonments )


async def await_within(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, _T ],
    timeout: float | None,
    name: str,
) -> _T:
    ''' Awaits coroutine in current task, cancelling it at timeout.

        ``None`` is no limit. Raises
        :py:class:`invocables.exceptions.InvocationExpiry` naming the tool
        when the timeout passes, once the coroutine has ended or has been
        abandoned after the grace (:py:func:`access_grace`); a value it
        returns, or an exception it raises, after the timeout is discarded.
        Re-raises a cancellation from outside, within the grace as well.
        The coroutine is stepped once first: one which finishes without
        suspending needs no timer at all.
    '''
    try: yielded = coroutine.send( None )
    except StopIteration as completion:
        return completion.value
    task = __.asyncio.current_task( )
    if task is None: # pragma: no cover
        raise RuntimeError( "No current task." )
    expiry = _Expiry( task, name )
    handle = (
        None if timeout is None
        else task.get_loop( ).call_later( timeout, expiry.expire ) )
    try: value = await _drive( coroutine, yielded, expiry )
    except __.asyncio.CancelledError:
        if not expiry.expired: raise
        raise _conclude_expiry( expiry, timeout ) from None
    except Exception as exception:
        if not expiry.expired: raise
        _scribe.warning(
            "Tool %r raised %s after its timeout; it was discarded.",
            name, type( exception ).__name__ )
        raise _conclude_expiry( expiry, timeout ) from exception
    finally:
        if handle is not None: handle.cancel( )
    _validate_return( expiry, timeout )
    return value


# Whether a task knows it was asked to cancel (Python 3.11 and later): only
# then can a cancellation which a tool swallowed be told apart.
CANCELLATION_KNOWN: bool = hasattr( __.asyncio.Task, 'cancelling' )


def is_cancel_requested( *, unknowable: bool = True ) -> bool:
    ''' Returns whether someone asked to cancel the current task.

        Tells a cancellation of the task (from outside) from a
        ``CancelledError`` which a tool raised by itself, or from one which
        a timer of :py:func:`await_within` caused. Python 3.10 cannot tell
        them apart: there the answer is ``unknowable``.
    '''
    task = __.asyncio.current_task( )
    cancelling = getattr( task, 'cancelling', None )
    if cancelling is None: return unknowable
    return cancelling( ) > 0


def _abandon(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ],
    yielded: __.typx.Any,
    expiry: _Expiry,
) -> None:
    ''' Leaves coroutine to go on in a task of its own; records its fate. '''
    task = expiry.task.get_loop( ).create_task(
        _finish_abandoned( coroutine, yielded, expiry.name ) )
    _abandonments.add( task )
    task.add_done_callback( _abandonments.discard )
    fates = _workers.FATES_OBSERVED.get( )
    if fates is not None: fates.append( _workers.Fates.Stranded )
    _scribe.warning(
        "Tool %r did not end within %s seconds of grace after it was "
        "cancelled; it was abandoned.", expiry.name, _grace )


def _access_deadline_of( context: object ) -> float | None:
    deadline = getattr( context, 'deadline', context )
    if deadline is None or __.is_absent( deadline ): return None
    return __.typx.cast( float, deadline )


def _access_time( ) -> float:
    ''' Returns loop time; in a thread, the monotonic clock (asyncio's). '''
    try: loop = __.asyncio.get_running_loop( )
    except RuntimeError: return __.time.monotonic( )
    return loop.time( )


def _conclude_expiry(
    expiry: _Expiry, timeout: float | None
) -> BaseException:
    ''' Returns what ends a call whose timeout passed: the expiry, or a
        cancellation requested from outside as well. '''
    uncancel = getattr( expiry.task, 'uncancel', None )
    if uncancel is not None: uncancel( )
    # Also cancelled from outside? Python 3.10 cannot tell: our timer
    # fired, so the cancellation is taken as ours there.
    if is_cancel_requested( unknowable = False ):
        return __.asyncio.CancelledError( )
    return _exceptions.InvocationExpiry(
        expiry.name, __.typx.cast( float, timeout ) )


@__.types.coroutine
def _drive(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, _T ],
    yielded: __.typx.Any,
    expiry: _Expiry,
) -> __.cabc.Generator[ __.typx.Any, __.typx.Any, _T ]:
    ''' Steps a coroutine already stepped once, as its task would.

        By hand, not by ``yield from``: once the task is cancelled, what
        the coroutine waits for is waited for only until the grace ends,
        then the coroutine is abandoned (and ``CancelledError`` raised).
    '''
    loop = expiry.task.get_loop( )
    while True:
        if expiry.ending is not None:
            finished, yielded = yield from _step_graced(
                coroutine, yielded, expiry, loop )
        else:
            thrown = yield from _relay( coroutine, yielded )
            if isinstance(
                thrown, __.asyncio.CancelledError
            ) and expiry.is_ending( ): expiry.ending = loop.time( ) + _grace
            finished, yielded = _resume( coroutine, thrown )
        if finished: return yielded


async def _finish_abandoned(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ],
    yielded: __.typx.Any,
    name: str,
) -> None:
    ''' Lets an abandoned coroutine go on; logs its end, discards it. '''
    try: await _finish( coroutine, yielded )
    except __.asyncio.CancelledError:
        _scribe.info(
            "Tool %r ended late, cancelled, after it was abandoned.", name )
    except Exception as exception:
        _scribe.warning(
            "Tool %r ended late, raising %s, after it was abandoned; the "
            "exception was discarded.", name, type( exception ).__name__ )
    else:
        _scribe.warning(
            "Tool %r ended late, returning, after it was abandoned; the "
            "result was discarded.", name )


@__.types.coroutine
def _finish(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, _T ],
    yielded: __.typx.Any,
) -> __.cabc.Generator[ __.typx.Any, __.typx.Any, _T ]:
    ''' Steps an abandoned coroutine to its end, as its task would.

        When its own task is cancelled (at the loop's shutdown), the
        coroutine is closed, not cancelled once more: one which ignores
        cancellations holds up no shutdown.
    '''
    while True:
        thrown = yield from _relay( coroutine, yielded )
        if isinstance(
            thrown, __.asyncio.CancelledError
        ) and is_cancel_requested( ):
            # Closing a coroutine which awaits in its cleanup raises.
            with __.ctxl.suppress( RuntimeError ): coroutine.close( )
            raise thrown
        finished, yielded = _resume( coroutine, thrown )
        if finished: return yielded


def _hold(
    loop: __.asyncio.AbstractEventLoop,
    future: __.asyncio.Future[ __.typx.Any ],
    ending: float,
) -> __.cabc.Generator[ __.typx.Any, __.typx.Any, bool ]:
    ''' Waits until future is done or grace ends; returns whether done.

        Waits on a future of its own, so that the end of the grace wakes
        the task without cancelling what the coroutine waits for.
    '''
    if future.done( ): return True
    remainder = ending - loop.time( )
    if remainder <= 0: return False
    proxy = loop.create_future( )

    def release( _: object = None ) -> None:
        if not proxy.done( ): proxy.set_result( None )

    handle = loop.call_later( remainder, release )
    future.add_done_callback( release )
    try: yield from proxy
    finally:
        handle.cancel( )
        future.remove_done_callback( release )
    return future.done( )


def _relay(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ],
    yielded: __.typx.Any,
) -> __.cabc.Generator[ __.typx.Any, __.typx.Any, BaseException | None ]:
    ''' Yields what coroutine yielded to the task, as the task would;
        returns what was thrown in instead of a value, if anything, to be
        forwarded to the coroutine. Closes the coroutine when closed.
    '''
    try: yield yielded
    except GeneratorExit:
        coroutine.close( )
        raise
    except BaseException as exception: return exception
    return None


def _release_straggler( task: __.asyncio.Task[ __.typx.Any ] ) -> None:
    _stragglers.discard( task )
    if task.cancelled( ): return
    exception = task.exception( )
    if exception is not None:
        _scribe.warning(
            "An invocation left running after its execution was cancelled "
            "ended with %s; it was discarded.", type( exception ).__name__ )


def _resume(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ],
    exception: BaseException | None = None,
) -> tuple[ bool, __.typx.Any ]:
    ''' Steps coroutine (with exception thrown in, if any); returns
        whether it finished, and its value, or what it yielded. '''
    try:
        if exception is None: return False, coroutine.send( None )
        return False, coroutine.throw( exception )
    except StopIteration as completion: return True, completion.value


def _step_graced(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ],
    yielded: __.typx.Any,
    expiry: _Expiry,
    loop: __.asyncio.AbstractEventLoop,
) -> __.cabc.Generator[ __.typx.Any, __.typx.Any, tuple[ bool, __.typx.Any ] ]:
    ''' Takes one step of a cancelled coroutine within its grace.

        Returns whether it finished, and its value or what it yielded
        next. Abandons it, raising ``CancelledError``, once the grace has
        ended and the task is still to end.
    '''
    ending = __.typx.cast( float, expiry.ending )
    if yielded is not None and hasattr( yielded, 'add_done_callback' ):
        try: settled = yield from _hold( loop, yielded, ending )
        except GeneratorExit:
            coroutine.close( )
            raise
        except __.asyncio.CancelledError as exception: # cancelled again
            yielded.cancel( )
            return _resume( coroutine, exception )
        if settled: return _resume( coroutine )
    elif loop.time( ) < ending:
        thrown = yield from _relay( coroutine, yielded )
        return _resume( coroutine, thrown )
    if expiry.is_ending( ):
        _abandon( coroutine, yielded, expiry )
        raise __.asyncio.CancelledError
    expiry.ending = None # the cancellation was withdrawn
    return False, yielded


def _validate_return( expiry: _Expiry, timeout: float | None ) -> None:
    ''' Raises unless a value returned by the tool may be its result.

        Not after its timeout (the expiry), nor after a cancellation from
        outside which it swallowed (the cancellation is honoured).
    '''
    if expiry.expired:
        _scribe.warning(
            "Tool %r returned after its timeout; its result was discarded.",
            expiry.name )
        raise _conclude_expiry( expiry, timeout )
    if expiry.ending is not None and expiry.is_ending( ):
        _scribe.warning(
            "Tool %r returned after it was cancelled; its result was "
            "discarded.", expiry.name )
        raise __.asyncio.CancelledError
