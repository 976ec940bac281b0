# SPDX-License-Identifier: Apache-2.0

''' Interceptors: hooks around each invocation in the execution engine.

    An interceptor receives an invocation which passed every check (known
    tool, arguments valid), and a continuation which runs it; it returns a
    result, either its own (a refusal) or the continuation's. Permission
    policies and telemetry are interceptors: the engine imports neither. A
    policy reaches a call as the ``policy`` of
    :py:class:`invocables.execution.ExecutionOptions` (anything which
    produces an interceptor for a namespace); telemetry registers the
    accessor of its interceptor here, with
    :py:func:`register_interceptor_accessor`.
'''


import invocables.__ as __
import invocables.canisters as _canisters
import invocables.naming as _naming


Continuation: __.typx.TypeAlias = __.cabc.Callable[
    [ _canisters.InvocationCanister, _naming.Designation, __.Arguments ],
    __.cabc.Awaitable[ _canisters.ResultCanister ] ]
Interceptor: __.typx.TypeAlias = __.cabc.Callable[
    [
        _canisters.InvocationCanister,
        _naming.Designation,
        __.Arguments,
        Continuation,
    ],
    __.cabc.Awaitable[ _canisters.ResultCanister ] ]
InterceptorAccessor: __.typx.TypeAlias = __.cabc.Callable[
    [ ], Interceptor | None ]

_accessor: InterceptorAccessor | None = None # telemetry's, once imported


class InterceptorProducer( __.typx.Protocol ):
    ''' Produces an interceptor for the namespace of one execution
        (a permission policy, for instance). '''

    def produce_interceptor(
        self, namespace: __.Namespace
    ) -> Interceptor: ...


def access_interceptor( ) -> Interceptor | None:
    ''' Returns the registered interceptor of every execution, if any. '''
    accessor = _accessor
    return None if accessor is None else accessor( )


def chain_interceptors(
    outer: Interceptor | None, inner: Interceptor | None
) -> Interceptor | None:
    ''' Returns interceptor which runs outer around inner. '''
    if outer is None: return inner
    if inner is None: return outer
    outer_, inner_ = outer, inner

    async def intercept(
        invocation: _canisters.InvocationCanister,
        designation: _naming.Designation,
        arguments: __.Arguments,
        continuation: Continuation,
    ) -> _canisters.ResultCanister:
        async def proceed(
            invocation: _canisters.InvocationCanister,
            designation: _naming.Designation,
            arguments: __.Arguments,
        ) -> _canisters.ResultCanister:
            return await inner_(
                invocation, designation, arguments, continuation )

        return await outer_( invocation, designation, arguments, proceed )

    return intercept


def register_interceptor_accessor( accessor: InterceptorAccessor ) -> None:
    ''' Registers what returns the interceptor of every execution.

        Telemetry registers its own when imported (``invocables`` imports
        it); the accessor may return ``None`` for no interception.
    '''
    global _accessor # noqa: PLW0603
    _accessor = accessor
