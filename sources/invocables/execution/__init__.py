# SPDX-License-Identifier: Apache-2.0

''' The execution engine which every processor uses.

    Resolves provider-facing names, deduplicates, validates, runs invocations
    concurrently with timeouts, and returns exactly one result per
    invocation, in the order given. Arguments are made plain JSON, and
    results serialized, here, once, within the limits of :py:class:`Limits`.
'''


import contextvars as _contextvars

import invocables.__ as __
import invocables.canisters as _canisters
from . import deadlines as _deadlines
from . import deduplicators as _deduplicators
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
from . import interception as _interception
import invocables.invokers as _invokers
import invocables.naming as _naming
from . import workers as _workers
from .options import (
    CONCURRENCY_DEFAULT as CONCURRENCY_DEFAULT,
    LIMITS_DEFAULT as LIMITS_DEFAULT,
    OPTIONS_DEFAULT as OPTIONS_DEFAULT,
    TIMEOUT_DEFAULT as TIMEOUT_DEFAULT,
    Alerter as Alerter,
    ExecutionOptions as ExecutionOptions,
    ExecutionShortcuts as ExecutionShortcuts,
    FailurePolicies as FailurePolicies,
    Limits as Limits,
)


RETRY_DELAY_INITIAL = 0.05
RETRY_DELAY_MAXIMUM = 2.0

_NOMENCLATURE_EMPTY = _naming.produce_nomenclature( ( ) )
_T = __.typx.TypeVar( '_T' )
_Outcome: __.typx.TypeAlias = (
    _canisters.ResultCanister
    | __.cabc.Awaitable[ _canisters.ResultCanister ] )
_scribe = __.produce_scribe( __name__ )
_slots: _contextvars.ContextVar[ __.asyncio.Semaphore | None ] = (
    _contextvars.ContextVar( 'slots', default = None ) )

Ensembles: __.typx.TypeAlias = (
    __.cabc.Sequence[ _ensembles.Ensemble ] | _naming.Nomenclature )


async def execute_invocations(
    invocations: __.typx.Annotated[
        __.cabc.Iterable[ _canisters.InvocationCanister ],
        __.ddoc.Doc( ''' Normalized tool calls, in the provider's order. ''' ),
    ],
    ensembles: __.typx.Annotated[
        Ensembles,
        __.ddoc.Doc( ''' Ensembles offered to the model (or their
            nomenclature), which resolve the provider-facing names. ''' ),
    ],
    options: __.typx.Annotated[
        ExecutionOptions, __.ddoc.Doc( ''' Options of the execution. ''' )
    ] = OPTIONS_DEFAULT,
    **shortcuts: __.typx.Unpack[ ExecutionShortcuts ],
) -> tuple[ _canisters.ResultCanister, ... ]:
    ''' Executes invocations; returns one result per invocation, in order.

        Keyword arguments are fields of :py:class:`ExecutionOptions` (such
        as ``timeout = 5`` or ``policy = policy``), replacing those of
        options.

        Unknown names, arguments which are not valid, and timeouts become error
        results which the model can act on. Every call ends within its timeout
        (which counts its waits: for a slot of the concurrency, for an
        identical call in flight) plus a grace
        (:py:func:`~invocables.execution.deadlines.access_grace`): a cancelled
        tool which has not ended by then is abandoned, and one which swallows
        its cancellation gets the timeout error all the same. A tool which
        raises fails fast by default: other invocations are cancelled, the
        alerter is called, and
        :py:class:`invocables.exceptions.InvocationExecutionFailure` is raised,
        chained to the cause. A result which cannot be serialized as JSON, or
        which exceeds the limits, is an error result. Cancelling the execution
        cancels every task it started and waits for them, each at most the
        grace; sync tools (in threads, which cannot be stopped) which had not
        started never start, and running ones are abandoned.
    '''
    invocations_ = tuple( invocations )
    if not invocations_: return ( )
    if shortcuts: options = __.dcls.replace( options, **shortcuts )
    elif type( options ) is not ExecutionOptions:
        raise _exceptions.ConfigurationInvalidity(
            'options', "must be 'invocables.ExecutionOptions( ... )'." )
    execution = _prepare_execution(
        options, _naming.access_nomenclature( ensembles ),
        len( invocations_ ) )
    alerter = options.alerter
    # One call runs in the current task: no task to start. Where a task
    # does not know it was asked to cancel (Python 3.10), it runs in a task
    # of its own, as several do, so that a cancellation which the tool
    # swallows still ends the execution.
    if len( invocations_ ) == 1 and _deadlines.CANCELLATION_KNOWN:
        invocation = invocations_[ 0 ]
        try:
            outcome = execution.begin( invocation )
            result = (
                outcome if isinstance( outcome, _canisters.ResultCanister )
                else await outcome )
        except __.asyncio.CancelledError:
            if _deadlines.is_cancel_requested( ): raise
            result = _produce_cancellation_result( invocation )
        except Exception as exception:
            _alert( alerter, invocation, exception )
            raise
        if invocation.identifier_synthesized:
            return _mark_synthesized( invocations_, ( result, ) )
        return ( result, )
    loop = __.asyncio.get_running_loop( )
    tasks = [
        loop.create_task( execution.execute( invocation ) )
        for invocation in invocations_ ]
    try:
        await __.asyncio.wait(
            tasks, return_when = __.asyncio.FIRST_EXCEPTION )
    except __.asyncio.CancelledError:
        await _deadlines.cancel_tasks( tasks )
        raise
    return _mark_synthesized(
        invocations_, await _collect_results( invocations_, tasks, alerter ) )


async def execute_invoker(
    invoker: __.typx.Annotated[
        _invokers.Invoker,
        __.ddoc.Doc( ''' Invoker to run, grouped in an ensemble or not. ''' ),
    ],
    arguments: __.typx.Annotated[
        __.Arguments,
        __.ddoc.Doc( ''' Arguments, any mapping (a frigid one too). ''' ),
    ],
    context: __.typx.Annotated[
        __.Absential[ _invokers.Context ],
        __.ddoc.Doc( ''' Context whose auxdata and namespace the call
            receives. Default: those of options. ''' ),
    ] = __.absent,
    *,
    options: __.typx.Annotated[
        ExecutionOptions, __.ddoc.Doc( ''' Options of the execution. ''' )
    ] = OPTIONS_DEFAULT,
    designation: __.typx.Annotated[
        __.Absential[ _naming.Designation ],
        __.ddoc.Doc( ''' Name and ensemble under which the invoker was
            offered. Default: its own name, in its ensemble. ''' ),
    ] = __.absent,
    identifier: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Id of the invocation which result answers. ''' )
    ] = 'call',
) -> _canisters.ResultCanister:
    ''' Executes invoker with the engine's error handling; returns result.

        The design documents' ``execute_invoker`` (000, Example 3): invalid
        arguments and timeouts become error results (``result.error``); a
        tool which raises anything else raises
        :py:class:`invocables.exceptions.InvocationExecutionFailure`
        (``ToolExecutionFailure``), chained to the cause. Timeouts and
        retries are those of the invoker and its ensemble. The one way to
        run a tool under the engine without resolving names: resuming an
        approved call goes through here.
    '''
    if not __.is_absent( context ):
        options = __.dcls.replace(
            options, auxdata = context.auxdata, namespace = context.namespace )
    if __.is_absent( designation ):
        parent = invoker.ensemble
        designation = _naming.Designation(
            invoker.name, ( # alone: a parent may not hold it (Example 1)
                _ensembles.LocalEnsemble( invoker.name, [ invoker ] )
                if __.is_absent( parent ) else parent ), invoker )
    invocation = _canisters.InvocationCanister(
        identifier = identifier, name = designation.name,
        arguments = arguments )
    execution = _prepare_execution( options, _NOMENCLATURE_EMPTY )
    try:
        outcome = execution.begin_designated( invocation, designation )
        if isinstance( outcome, _canisters.ResultCanister ): return outcome
        return await outcome
    except __.asyncio.CancelledError:
        if _deadlines.is_cancel_requested( ): raise
        return _produce_cancellation_result( invocation )
    except Exception as exception:
        _alert( options.alerter, invocation, exception )
        raise


@__.ctxl.contextmanager
def share_slots(
    slots: __.typx.Annotated[
        __.asyncio.Semaphore,
        __.ddoc.Doc( ''' Slots of the concurrency, in common. ''' ),
    ],
) -> __.cabc.Generator[ None, None, None ]:
    ''' Makes the executions started within take their slots from one
        semaphore, so that the bound of the concurrency holds across them
        (a server's calls, each an execution of its own). A wait for a
        slot counts in the call's timeout, as in one execution.
    '''
    token = _slots.set( slots )
    try: yield
    finally: _slots.reset( token )


def _mark_synthesized(
    invocations: __.cabc.Sequence[ _canisters.InvocationCanister ],
    results: __.cabc.Sequence[ _canisters.ResultCanister ],
) -> tuple[ _canisters.ResultCanister, ... ]:
    ''' Returns results, each marked if its invocation's id was synthesized.

        Processors which send results back by name only (Gemini, Ollama)
        leave synthesized ids out.
    '''
    return tuple(
        __.dcls.replace( result, invocation_id_synthesized = True )
        if invocation.identifier_synthesized
        and not result.invocation_id_synthesized else result
        for invocation, result in zip( invocations, results, strict = True ) )


async def _collect_results(
    invocations: tuple[ _canisters.InvocationCanister, ... ],
    tasks: __.cabc.Sequence[ __.asyncio.Task[ _canisters.ResultCanister ] ],
    alerter: __.Absential[ Alerter ],
) -> tuple[ _canisters.ResultCanister, ... ]:
    failure = next( (
        ( invocation, task ) for invocation, task in zip( invocations, tasks )
        if task.done( ) and not task.cancelled( )
        and task.exception( ) is not None ), None )
    if failure is not None:
        await _deadlines.cancel_tasks( tasks )
        invocation, task = failure
        exception = __.typx.cast( BaseException, task.exception( ) )
        _alert( alerter, invocation, exception )
        raise exception
    return tuple(
        _produce_cancellation_result( invocation ) if task.cancelled( )
        else task.result( )
        for invocation, task in zip( invocations, tasks ) )


def _alert(
    alerter: __.Absential[ Alerter ],
    invocation: _canisters.InvocationCanister,
    exception: BaseException,
) -> None:
    if __.is_absent( alerter ): return
    cause = exception.__cause__ or exception
    try: alerter( invocation, cause )
    except Exception: # the original failure matters more
        _scribe.exception( "Alerter raised while reporting a failure." )


@__.dcls.dataclass( slots = True )
class _Execution:
    ''' Shared state of one execution. '''

    nomenclature: _naming.Nomenclature
    auxdata: __.typx.Any
    namespace: __.Namespace
    timeout: float | None
    semaphore: __.asyncio.Semaphore | None # None: no bound needed
    failure_policy: FailurePolicies
    limits: Limits
    max_retries: int = 0
    interceptor: _interception.Interceptor | None = None
    concurrency: int = CONCURRENCY_DEFAULT # the semaphore's bound

    async def execute(
        self, invocation: _canisters.InvocationCanister
    ) -> _canisters.ResultCanister:
        ''' Executes one invocation; returns its result. '''
        outcome = self.begin( invocation )
        if isinstance( outcome, _canisters.ResultCanister ): return outcome
        return await outcome

    def begin(
        self, invocation: _canisters.InvocationCanister
    ) -> _Outcome:
        ''' Returns result of invocation which cannot run, else what runs it.

            The lone invocation awaits what runs it in the caller's own
            coroutine, one frame fewer on every step of the tool.
        '''
        if invocation.invalidity is not __.absent:
            return _produce_error_result(
                invocation, _canisters.FaultGenera.Invalidity,
                f"The arguments of tool {invocation.name!r} are not valid "
                f"JSON ({invocation.invalidity}). Send the arguments as one "
                "JSON object." )
        designation = self.nomenclature.query_designation( invocation.name )
        if designation is None:
            return _produce_error_result(
                invocation, _canisters.FaultGenera.Absence,
                f"Unknown tool {invocation.name!r}. "
                "Use one of the tools that were offered." )
        return self.begin_designated( invocation, designation )

    def begin_designated(
        self,
        invocation: _canisters.InvocationCanister,
        designation: _naming.Designation,
    ) -> _Outcome:
        ''' Returns result of invocation of designated tool which cannot
            run, else what runs it. '''
        limits = self.limits
        try:
            arguments = _canisters.produce_arguments(
                invocation.name, invocation.arguments,
                limits.arguments_depth_maximum,
                limits.arguments_size_maximum )
        except _exceptions.ArgumentsInvalidity as exception:
            return _produce_error_result(
                invocation, _canisters.FaultGenera.Invalidity,
                str( exception ) )
        if self.interceptor is not None: # policies, telemetry
            return self.interceptor(
                invocation, designation, arguments, self._proceed )
        if designation.invoker.deduplicator is __.absent:
            return self._run( invocation, designation, arguments )
        return self._proceed( invocation, designation, arguments )

    async def _proceed(
        self,
        invocation: _canisters.InvocationCanister,
        designation: _naming.Designation,
        arguments: __.Arguments,
    ) -> _canisters.ResultCanister:
        ''' Runs invocation, deduplicated if its invoker says so; a
            duplicate waits for an identical call within its deadline. '''
        deduplicator = designation.invoker.deduplicator
        if __.is_absent( deduplicator ):
            return await self._run( invocation, designation, arguments )
        timeout = self._access_bounds( designation )[ 0 ]
        deadline = _deadlines.access_deadline( timeout )
        try:
            return await _deduplicators.execute_deduplicated(
                deduplicator, self.namespace, invocation, designation.name,
                arguments, lambda: self._run(
                    invocation, designation, arguments, deadline ),
                self._handle_exception, deadline )
        except _exceptions.InvocationExpiry: # the call it waited for goes on
            return _produce_expiry_result( invocation, timeout )

    def _access_bounds(
        self, designation: _naming.Designation
    ) -> tuple[ float | None, int ]:
        ''' Returns timeout and retries: the invoker's, else the
            ensemble's, else the call's. '''
        invoker = designation.invoker
        configuration = designation.ensemble.configuration
        timeout = invoker.timeout
        if __.is_absent( timeout ):
            timeout = configuration.timeout
            if __.is_absent( timeout ): timeout = self.timeout
        # Validated integers where present; not every invoker has them.
        retries: __.typx.Any = getattr( invoker, 'max_retries', __.absent )
        if retries is __.absent:
            retries = getattr( configuration, 'max_retries', __.absent )
            if retries is __.absent: return timeout, self.max_retries
        return timeout, retries

    async def _run(
        self,
        invocation: _canisters.InvocationCanister,
        designation: _naming.Designation,
        arguments: __.Arguments,
        deadline: __.Absential[ float | None ] = __.absent,
    ) -> _canisters.ResultCanister:
        ''' Runs invocation; its timeout (passing at deadline, if given)
            counts its wait for a slot too. '''
        invoker = designation.invoker
        timeout, retries = self._access_bounds( designation )
        limit = timeout # seconds which the tool has
        if __.is_absent( deadline ):
            deadline = _deadlines.access_deadline( timeout )
        else: limit = _deadlines.access_remainder( deadline )
        semaphore = self.semaphore
        if semaphore is not None:
            try:
                await _deadlines.await_within(
                    semaphore.acquire( ), limit, invoker.name )
            except _exceptions.InvocationExpiry: # it never starts
                return _produce_expiry_result(
                    invocation, timeout, concurrency = self.concurrency )
            limit = _deadlines.access_remainder( deadline )
        context = _invokers.produce_context(
            self.auxdata, invoker, self.namespace, invocation, deadline )
        fates: list[ _workers.Fates ] = [ ] # of sync calls, if any
        token = _workers.FATES_OBSERVED.set( fates )
        try:
            content = await (
                _deadlines.await_within(
                    invoker( context, arguments ), limit, invoker.name )
                if retries == 0 else _attempt_retrying(
                    lambda context: _deadlines.await_within(
                        invoker( context, arguments ),
                        _deadlines.access_remainder( context ),
                        invoker.name ),
                    context, timeout, retries ) )
        except _exceptions.InvocationExpiry:
            return _produce_expiry_result( invocation, timeout, fates )
        except Exception as exception:
            return self._handle_exception( invocation, exception )
        finally:
            _workers.FATES_OBSERVED.reset( token )
            if semaphore is not None: semaphore.release( )
        return self._produce_result( invocation, content )

    def _handle_exception(
        self,
        invocation: _canisters.InvocationCanister,
        exception: Exception,
    ) -> _canisters.ResultCanister:
        genera = _canisters.FaultGenera
        # Outside text (a server's, a tool's) within the size of a result.
        maximum = self.limits.results_size_maximum
        match exception:
            case _exceptions.InvocationRefusal( ):
                return _produce_error_result(
                    invocation, genera.Refusal, exception.message, maximum )
            case _exceptions.ArgumentsInvalidity( ):
                return _produce_error_result(
                    invocation, genera.Invalidity, str( exception ), maximum )
            case _exceptions.ResultInvalidity( ):
                return _produce_unsendable_result(
                    invocation, exception.reason )
            case _ if self.failure_policy is FailurePolicies.Report:
                genus = (
                    genera.Connection
                    if isinstance( exception, _exceptions.ConnectionFailure )
                    else genera.Failure )
                return _produce_error_result(
                    invocation, genus,
                    f"Tool {invocation.name!r} failed: "
                    f"{type( exception ).__name__}: {exception}", maximum )
            case _exceptions.ConnectionFailure( ):
                raise exception
            case _:
                raise _exceptions.InvocationExecutionFailure(
                    invocation.name, invocation.identifier ) from exception

    def _produce_result(
        self, invocation: _canisters.InvocationCanister, content: object
    ) -> _canisters.ResultCanister:
        limits = self.limits
        try:
            content_ = _canisters.validate_content(
                content, limits.results_depth_maximum,
                limits.results_size_maximum )
        except _exceptions.ResultInvalidity as exception:
            return _produce_unsendable_result( invocation, exception.reason )
        return _canisters.produce_result(
            invocation.identifier, content_, invocation.name )


async def _attempt_retrying(
    attempt: __.cabc.Callable[
        [ _invokers.InvocationContext ], __.cabc.Awaitable[ _T ] ],
    context: _invokers.InvocationContext,
    timeout: float | None,
    retries: int,
) -> _T:
    ''' Awaits attempt; retries transient failures with backoff and jitter.

        Transient: a timeout, a lost connection, a tool's transience. The
        delays double from the initial one, bounded by the maximum, each a
        random part of that (full jitter). The first try has what is left
        of the call's timeout (after its wait for a slot of the execution);
        each further try its whole timeout, and a context with its own
        deadline.
    '''
    for index in range( retries ):
        try: return await attempt( context )
        except (
            _exceptions.ConnectionFailure, _exceptions.InvocationExpiry,
            _exceptions.InvocationTransience, ConnectionError, TimeoutError,
            __.asyncio.TimeoutError,
        ): pass
        from random import uniform
        ceiling = min(
            RETRY_DELAY_MAXIMUM, RETRY_DELAY_INITIAL * 2 ** index )
        await __.asyncio.sleep( uniform( 0, ceiling ) ) # noqa: S311
        context = __.dcls.replace(
            context, deadline = _deadlines.access_deadline( timeout ) )
    return await attempt( context )


def _produce_expiry_result(
    invocation: _canisters.InvocationCanister,
    timeout: float | None,
    fates: __.cabc.Collection[ _workers.Fates ] = ( ),
    concurrency: int | None = None,
) -> _canisters.ResultCanister:
    ''' Returns result of a call whose timeout passed (with concurrency:
        while it waited for a slot of its execution, never started). '''
    name = invocation.name
    if _workers.Fates.Abandoned in fates: message = (
        f"Tool {name!r} did not finish within {timeout} seconds. It runs in "
        "a thread, which cannot be stopped: the thread was abandoned and "
        "may still be running. Try a smaller request or another approach." )
    elif _workers.Fates.Stranded in fates: message = (
        f"Tool {name!r} did not finish within {timeout} seconds, nor end "
        "once cancelled: it was abandoned. Try a smaller request or another "
        "approach." )
    elif concurrency is not None or _workers.Fates.Withdrawn in fates:
        busy = (
            f"all {concurrency} slots of its execution's concurrency"
            if concurrency is not None else
            "all {maximum} threads for sync tools".format(
                maximum = _workers.access_threads_maximum( ) ) )
        message = (
            f"Tool {name!r} did not start within {timeout} seconds: {busy} "
            "were busy. Try again later." )
    else: message = (
        f"Tool {name!r} did not finish within {timeout} seconds and was "
        "cancelled. Try a smaller request or another approach." )
    return _produce_error_result(
        invocation, _canisters.FaultGenera.Timeout, message )


def _prepare_execution(
    options: ExecutionOptions,
    nomenclature: _naming.Nomenclature,
    count: int = 1,
) -> '_Execution':
    namespace = options.namespace
    namespace_: __.Namespace = (
        { } if __.is_absent( namespace ) else namespace )
    interceptor = _interception.access_interceptor( ) # telemetry
    policy = options.policy
    if not __.is_absent( policy ):
        interceptor = _interception.chain_interceptors(
            interceptor, policy.produce_interceptor( namespace_ ) )
    concurrency = options.concurrency
    slots = _slots.get( ) # in common, else only where the bound may bite
    # In the order of the fields: positional costs half of keywords.
    return _Execution(
        nomenclature, options.auxdata,
        namespace_, options.timeout, (
            slots if slots is not None
            else __.asyncio.Semaphore( concurrency )
            if count > concurrency else None ),
        options.failure_policy, options.limits, options.max_retries,
        interceptor, concurrency )


def _produce_cancellation_result(
    invocation: _canisters.InvocationCanister
) -> _canisters.ResultCanister:
    return _produce_error_result(
        invocation, _canisters.FaultGenera.Cancellation,
        f"Tool {invocation.name!r} was cancelled before it finished." )


def _produce_error_result(
    invocation: _canisters.InvocationCanister,
    genus: _canisters.FaultGenera,
    message: str,
    maximum: int | None = None,
) -> _canisters.ResultCanister:
    if maximum is not None: message = __.values.abbreviate( message, maximum )
    return _canisters.ResultCanister(
        invocation_id = invocation.identifier,
        error = _canisters.Fault( genus = genus, message = message ),
        name = invocation.name )


def _produce_unsendable_result(
    invocation: _canisters.InvocationCanister, reason: str
) -> _canisters.ResultCanister:
    return _produce_error_result(
        invocation, _canisters.FaultGenera.Failure,
        f"Tool {invocation.name!r} ran, but its result cannot be sent: "
        f"{reason}. Ask for less, or for another form of the result." )
