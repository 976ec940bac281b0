# SPDX-License-Identifier: Apache-2.0

''' Options of an execution: declared and documented here, once.

    :py:class:`ExecutionOptions` is what :py:func:`invocables.execution.
    execute_invocations`, processors' ``execute_invocations``, the
    conversation loop, :py:class:`invocables.serving.ToolServer` and the
    ``invocables`` command take; :py:class:`Limits` bounds arguments and
    results within it.
'''


import invocables.__ as __
import invocables.canisters as _canisters
from .deadlines import TIMEOUT_DEFAULT as _TIMEOUT_DEFAULT
import invocables.exceptions as _exceptions
from .interception import InterceptorProducer as _InterceptorProducer
import invocables.invokers as _invokers
import invocables.schemata as _schemata


# High enough not to slow a batch of I/O-bound async tools (models ask for
# tens of calls at once, not thousands); sync tools are bounded separately by
# the thread pool in ``workers``.
CONCURRENCY_DEFAULT = 1024
TIMEOUT_DEFAULT = _TIMEOUT_DEFAULT

# Largest float: a larger integer compares below infinity, yet no float
# holds it (the deadline's arithmetic would overflow).
_FLOAT_MAXIMUM = __.sys.float_info.max
_NAMESPACE_GENERA = frozenset( ( dict, type( __.absent ) ) )
_TIMEOUT_GENERA = frozenset( ( int, float, type( None ) ) )

Alerter: __.typx.TypeAlias = __.cabc.Callable[
    [ _canisters.InvocationCanister, BaseException ], None ]


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
        int,
        __.ddoc.Doc( ''' Largest size of a result, all content; a longer
            error message is abbreviated to it. ''' ),
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
            (:py:func:`invocables.execution.workers.configure_threads`).
            A call waits for its turn within its timeout. ''' )
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
        __.Absential[ _InterceptorProducer ],
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
            and ( timeout is None or 0 < timeout <= _FLOAT_MAXIMUM )
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
    policy: _InterceptorProducer


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
