# SPDX-License-Identifier: Apache-2.0

''' The one way to await within a timeout.

    The execution engine, direct invocations (``ensemble.invoke``) and MCP
    calls all await here: in the current task (no extra task, unlike
    ``asyncio.wait_for`` on Python 3.10 and 3.11), with one timer which
    cancels that task when the timeout passes. Python 3.10 has neither
    ``asyncio.timeout`` nor ``Task.uncancel``: its one difference lives
    here, in :py:func:`is_cancel_requested`.
'''


from . import __
from . import exceptions as _exceptions


TIMEOUT_DEFAULT = 60.0

_T = __.typx.TypeVar( '_T' )


def access_deadline( timeout: float | None ) -> float | None:
    ''' Returns loop time at which timeout from now passes (``None``: never).

        Requires a running event loop.
    '''
    if timeout is None: return None
    return __.asyncio.get_running_loop( ).time( ) + timeout


async def await_within(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, _T ],
    timeout: float | None,
    name: str,
) -> _T:
    ''' Awaits coroutine in current task, cancelling it at timeout.

        ``None`` is no limit. Raises
        :py:class:`invocables.exceptions.InvocationExpiry` naming the tool
        when the timeout passes (the coroutine has then been cancelled),
        and re-raises a cancellation from outside. The coroutine is
        stepped once first: one which finishes without suspending needs no
        timer at all.
    '''
    if timeout is None: return await coroutine
    try: yielded = coroutine.send( None )
    except StopIteration as completion:
        return completion.value
    task = __.asyncio.current_task( )
    if task is None: # pragma: no cover
        raise RuntimeError( "No current task." )
    expired = False

    def expire( ) -> None:
        nonlocal expired
        expired = True
        task.cancel( )

    handle = __.asyncio.get_running_loop( ).call_later( timeout, expire )
    try: return await _continue( coroutine, yielded )
    except __.asyncio.CancelledError:
        if not expired: raise
        uncancel = getattr( task, 'uncancel', None )
        if uncancel is not None: uncancel( )
        # Also cancelled from outside? Python 3.10 cannot tell: our timer
        # fired, so the cancellation is taken as ours there.
        if is_cancel_requested( unknowable = False ): raise
        raise _exceptions.InvocationExpiry( name, timeout ) from None
    finally: handle.cancel( )


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


@__.types.coroutine
def _continue(
    coroutine: __.cabc.Coroutine[ __.typx.Any, __.typx.Any, _T ],
    yielded: __.typx.Any,
) -> __.cabc.Generator[ __.typx.Any, __.typx.Any, _T ]:
    ''' Resumes a coroutine already stepped once, as ``yield from`` would.

        What the coroutine yielded first is handed on by hand; once the
        task resumes, as tasks do, with ``None``, ``yield from`` delegates
        the rest, with no step of Python on each resumption (an MCP call
        suspends several times).
    '''
    while True:
        try: sent = yield yielded
        except GeneratorExit:
            coroutine.close( )
            raise
        except BaseException as exception: # forwarded, as yield from does
            try: yielded = coroutine.throw( exception )
            except StopIteration as completion:
                return completion.value
            continue
        if sent is None: break
        try: yielded = coroutine.send( sent )
        except StopIteration as completion:
            return completion.value
    return ( yield from coroutine.__await__( ) )
