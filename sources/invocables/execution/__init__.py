# SPDX-License-Identifier: Apache-2.0

''' The execution engine which every processor uses.

    Resolves provider-facing names, deduplicates, validates, runs invocations
    concurrently with timeouts, and returns exactly one result per
    invocation, in the order given. Arguments are made plain JSON, and
    results serialized, here, once, within the limits of :py:class:`Limits`.
'''


from .. import __
from .. import canisters as _canisters
from . import deadlines as _deadlines
from . import deduplicators as _deduplicators
from .. import ensembles as _ensembles
from .. import exceptions as _exceptions
from . import interception as _interception
from .. import invokers as _invokers
from .. import naming as _naming
from .. import schemata as _schemata
from . import workers as _workers


# High enough not to slow a batch of I/O-bound async tools (models ask for
# tens of calls at once, not thousands); sync tools are bounded separately by
# the thread pool in ``workers``.
CONCURRENCY_DEFAULT = 1024
RETRY_DELAY_INITIAL = 0.05
RETRY_DELAY_MAXIMUM = 2.0
TIMEOUT_DEFAULT = _deadlines.TIMEOUT_DEFAULT

_GRACE_MARGIN = 0.5 # seconds after the grace for a cancelled task to end
_INFINITY = float( 'inf' )
_NAMESPACE_GENERA = frozenset( ( dict, type( __.absent ) ) )
_TIMEOUT_GENERA = frozenset( ( int, float, type( None ) ) )
_T = __.typx.TypeVar( '_T' )
_Outcome: __.typx.TypeAlias = (
    _canisters.ResultCanister
    | __.cabc.Awaitable[ _canisters.ResultCanister ] )
_scribe = __.produce_scribe( __name__ )
# Tasks left to end by themselves after their execution was cancelled.
_stragglers: set[ __.asyncio.Task[ __.typx.Any ] ] = set( )

Alerter: __.typx.TypeAlias = __.cabc.Callable[
    [ _canisters.InvocationCanister, BaseException ], None ]
Ensembles: __.typx.TypeAlias = (
    __.cabc.Sequence[ _ensembles.Ensemble ] | _naming.Nomenclature )


class Limits( __.immut.DataclassObject ):
    ''' Bounds on the arguments and the result of every invocation.

        Depth counts nested arrays and objects (the arguments object is
        level 1). Size counts the characters of every text and key, plus
        one for every value (close to the length of the JSON text), and
        bytes of binary content. Arguments beyond the limits become an
        error result for the model, and the tool is not run; a result beyond
        them becomes an error result instead of the result.
    '''

    arguments_depth_maximum: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Deepest nesting of arguments. ''' )
    ] = _schemata.ARGUMENTS_DEPTH_MAXIMUM_DEFAULT
    arguments_size_maximum: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Largest size of arguments. ''' )
    ] = _schemata.ARGUMENTS_SIZE_MAXIMUM_DEFAULT
    results_depth_maximum: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Deepest nesting of structured results. ''' )
    ] = _canisters.RESULTS_DEPTH_MAXIMUM_DEFAULT
    results_size_maximum: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Largest size of a result, all content. ''' )
    ] = _canisters.RESULTS_SIZE_MAXIMUM_DEFAULT

    def __post_init__( self ) -> None:
        for field in __.dcls.fields( self ):
            if field.name.startswith( '_' ): continue
            __.values.validate_count(
                getattr( self, field.name ), f"limits {field.name!r}" )


LIMITS_DEFAULT = Limits( )


class FailurePolicies( __.enum.Enum ):
    ''' What to do when a tool raises an exception. '''

    Raise = 'raise'     # alert the application, raise execution failure
    Report = 'report'   # send an error result to the model


class ExecutionOptions( __.immut.DataclassObject ):
    ''' Options of an execution: the one place they are declared.

        Taken by :py:func:`execute_invocations` (whose keyword arguments
        are shortcuts into it), by processors' ``execute_invocations``, by
        the conversation loop, by :py:class:`invocables.serving.ToolServer`
        and by the ``invocables`` command. Checked once, when made.
    '''

    auxdata: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Application data passed to every invocable. ''' ),
    ] = None
    namespace: __.typx.Annotated[
        __.Absential[ __.Namespace ],
        __.ddoc.Doc( ''' Per-conversation state; deduplication happens
            within one namespace. Default: a fresh one per execution. ''' ),
    ] = __.absent
    timeout: __.typx.Annotated[
        float | None,
        __.ddoc.Doc( ''' Timeout for invocations whose invoker and ensemble
            set none; ``None`` for no limit. Default: 60 seconds. ''' ),
    ] = TIMEOUT_DEFAULT
    concurrency: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Most invocations running at once. Default:
            1024, so that I/O-bound async tools all run at once; sync tools
            are further bounded by the threads for sync tools
            (:py:func:`invocables.execution.workers.configure_threads`). ''' )
    ] = CONCURRENCY_DEFAULT
    max_retries: __.typx.Annotated[
        int,
        __.ddoc.Doc( ''' Retries of a call which failed for a transient
            reason (timeout, lost connection, the tool's
            :py:class:`invocables.exceptions.InvocationTransience`), for
            invocations whose invoker and ensemble set none. Invalid
            arguments are never retried. ''' ),
    ] = 0
    failure_policy: __.typx.Annotated[
        FailurePolicies,
        __.ddoc.Doc( ''' Whether a tool which raises fails the execution
            (default) or becomes an error result for the model. ''' ),
    ] = FailurePolicies.Raise
    alerter: __.typx.Annotated[
        __.Absential[ Alerter ],
        __.ddoc.Doc( ''' Called with the invocation and the exception
            before the execution failure is raised. ''' ),
    ] = __.absent
    limits: __.typx.Annotated[
        Limits,
        __.ddoc.Doc( ''' Bounds on depth and size of arguments and
            results. ''' ),
    ] = __.dcls.field( default_factory = lambda: LIMITS_DEFAULT )
    policy: __.typx.Annotated[
        __.Absential[ _interception.InterceptorProducer ],
        __.ddoc.Doc( ''' Permission policy
            (:py:class:`invocables.toolsets.policies.Policy`): which tools
            run, which are denied, which wait for approval. Default: every
            tool runs. ''' ),
    ] = __.absent

    def __post_init__( self ) -> None:
        if __.is_absent( self.timeout ): # forwarded as not given
            object.__setattr__( self, 'timeout', TIMEOUT_DEFAULT )
        timeout = self.timeout
        if not (
            type( self.concurrency ) is int and self.concurrency >= 1
            and type( timeout ) in _TIMEOUT_GENERA
            and ( timeout is None or 0 < timeout < _INFINITY )
            and type( self.namespace ) in _NAMESPACE_GENERA
            and type( self.limits ) is Limits
        ): _validate_options( self )
        retries = self.max_retries
        if not ( retries == 0 and type( retries ) is int ):
            _invokers.validate_retries( retries, 'max_retries' )


OPTIONS_DEFAULT = ExecutionOptions( )


class ExecutionShortcuts( __.typx.TypedDict, total = False ):
    ''' Fields of :py:class:`ExecutionOptions` as keyword arguments, for
        type checkers (a test keeps the two alike). '''

    auxdata: __.typx.Any
    namespace: __.Namespace
    timeout: float | None
    concurrency: int
    max_retries: int
    failure_policy: FailurePolicies
    alerter: Alerter
    limits: Limits
    policy: _interception.InterceptorProducer


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

        Unknown names, arguments which are not valid, and timeouts become
        error results which the model can act on. Every call ends within
        its timeout plus a grace
        (:py:func:`~invocables.execution.deadlines.access_grace`): a cancelled
        tool
        which has not ended by then is abandoned, and one which swallows
        its cancellation gets the timeout error all the same. A tool which
        raises fails fast by default: other invocations are cancelled, the
        alerter is called, and
        :py:class:`invocables.exceptions.InvocationExecutionFailure` is
        raised, chained to the cause. A result which cannot be serialized
        as JSON, or which exceeds the limits, is an error result. Cancelling
        the execution cancels every task it started and waits for them,
        each at most the grace; sync tools (in threads, which cannot be
        stopped) which had not started never start, and running ones are
        abandoned.
    '''
    invocations_ = tuple( invocations )
    if not invocations_: return ( )
    if shortcuts: options = __.dcls.replace( options, **shortcuts )
    elif type( options ) is not ExecutionOptions:
        raise _exceptions.ConfigurationInvalidity(
            'options', "must be 'invocables.ExecutionOptions( ... )'." )
    execution = _prepare_execution( options, ensembles, len( invocations_ ) )
    alerter = options.alerter
    if len( invocations_ ) == 1: # in the current task: no task to start
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
        await _cancel_tasks( tasks )
        raise
    return _mark_synthesized(
        invocations_, await _collect_results( invocations_, tasks, alerter ) )


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


async def _cancel_tasks(
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
            pending, timeout = _deadlines.access_grace( ) + _GRACE_MARGIN )
    for task in tasks:
        if task in stragglers:
            _stragglers.add( task )
            task.add_done_callback( _release_straggler )
        # Retrieved, as gather would: none is reported as never retrieved.
        elif not task.cancelled( ): task.exception( )


def _release_straggler( task: __.asyncio.Task[ __.typx.Any ] ) -> None:
    _stragglers.discard( task )
    if task.cancelled( ): return
    exception = task.exception( )
    if exception is not None:
        _scribe.warning(
            "An invocation left running after its execution was cancelled "
            "ended with %s; it was discarded.", type( exception ).__name__ )


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
        await _cancel_tasks( tasks )
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
        ''' Runs invocation, deduplicated if its invoker says so. '''
        deduplicator = designation.invoker.deduplicator
        if __.is_absent( deduplicator ):
            return await self._run( invocation, designation, arguments )
        return await _deduplicators.execute_deduplicated(
            deduplicator, self.namespace, invocation, designation.name,
            arguments, lambda: self._run( invocation, designation, arguments ),
            self._handle_exception )

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
    ) -> _canisters.ResultCanister:
        invoker = designation.invoker
        timeout, retries = self._access_bounds( designation )
        semaphore = self.semaphore
        if semaphore is not None: await semaphore.acquire( )
        context = _invokers.produce_context(
            self.auxdata, invoker, self.namespace, invocation,
            _deadlines.access_deadline( timeout ) )
        fates: list[ _workers.Fates ] = [ ] # of sync calls, if any
        token = _workers.FATES_OBSERVED.set( fates )
        try:
            content = await (
                _deadlines.await_within(
                    invoker( context, arguments ), timeout, invoker.name )
                if retries == 0 else _attempt_retrying(
                    lambda context: _deadlines.await_within(
                        invoker( context, arguments ), timeout,
                        invoker.name ),
                    context, timeout, retries ) )
        except _exceptions.InvocationExpiry:
            return _produce_error_result(
                invocation, _canisters.FaultGenera.Timeout,
                _describe_expiry( invocation.name, timeout, fates ) )
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
        match exception:
            case _exceptions.InvocationRefusal( ):
                return _produce_error_result(
                    invocation, genera.Refusal, exception.message )
            case _exceptions.ArgumentsInvalidity( ):
                return _produce_error_result(
                    invocation, genera.Invalidity, str( exception ) )
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
                    f"{type( exception ).__name__}: {exception}" )
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
        random part of that (full jitter). Each try has its whole timeout,
        and a context with its own deadline.
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

def _describe_expiry(
    name: str, timeout: float | None, fates: list[ _workers.Fates ]
) -> str:
    if _workers.Fates.Abandoned in fates:
        return (
            f"Tool {name!r} did not finish within {timeout} seconds. It runs "
            "in a thread, which cannot be stopped: the thread was abandoned "
            "and may still be running. Try a smaller request or another "
            "approach." )
    if _workers.Fates.Stranded in fates:
        return (
            f"Tool {name!r} did not finish within {timeout} seconds, nor "
            "end once cancelled: it was abandoned. Try a smaller request or "
            "another approach." )
    if _workers.Fates.Withdrawn in fates:
        return (
            f"Tool {name!r} did not start within {timeout} seconds: all "
            "{maximum} threads for sync tools were busy. Try again "
            "later.".format( maximum = _workers.access_threads_maximum( ) ) )
    return (
        f"Tool {name!r} did not finish within {timeout} seconds and was "
        "cancelled. Try a smaller request or another approach." )


def _prepare_execution(
    options: ExecutionOptions, ensembles: Ensembles, count: int
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
    # In the order of the fields: positional costs half of keywords.
    return _Execution(
        _naming.access_nomenclature( ensembles ), options.auxdata,
        namespace_, options.timeout, (
            __.asyncio.Semaphore( concurrency )
            if count > concurrency else None ),
        options.failure_policy, options.limits, options.max_retries,
        interceptor )


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
) -> _canisters.ResultCanister:
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


def _validate_options( options: ExecutionOptions ) -> None:
    concurrency, timeout = options.concurrency, options.timeout
    namespace, limits = options.namespace, options.limits
    __.values.validate_count(
        concurrency, 'concurrency',
        reason = "must be an integer of at least 1." )
    __.values.validate_timeout(
        timeout, 'timeout',
        reason = "must be a positive number of seconds, or None." )
    if not __.is_absent( namespace ) and not isinstance(
        namespace, __.cabc.MutableMapping
    ):
        raise _exceptions.ConfigurationInvalidity(
            'namespace', "must be a mutable mapping, such as a dict." )
    if not isinstance( limits, Limits ):
        raise _exceptions.ConfigurationInvalidity(
            'limits', "must be 'invocables.execution.Limits( ... )'." )
