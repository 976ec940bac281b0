# SPDX-License-Identifier: Apache-2.0

''' Interceptors: hooks around each invocation in the execution engine.

    An interceptor receives an invocation which passed every check (known
    tool, arguments valid), and a continuation which runs it; it returns a
    result, either its own (a refusal) or the continuation's. Permission
    policies and telemetry are interceptors.
'''


from .. import __
from .. import canisters as _canisters
from .. import naming as _naming


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
