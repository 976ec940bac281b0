# SPDX-License-Identifier: Apache-2.0

''' A call which waits, for a slot of its execution or for an identical
    call in flight, waits within its own timeout.

    What a call waits for here is held by a tool which waits on an event
    which the test sets only once it has seen the waiting call end, so that
    a call which waited for it would not end within the generous bound of
    ``_BOUND``.
'''


import asyncio

import pytest

import invocables

from invocables import FaultGenera


_BOUND = 10 # seconds: "does not hang", never a timing assertion
_TIMEOUT = 0.2


def _call( name, identifier = 'c1', arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


class _Watch:
    ''' Policy which lets every call run and tells when each one ended. '''

    def __init__( self ):
        self.results = { }
        self.endings = { }

    def access_ending( self, identifier ):
        ''' Returns event set once call of identifier has ended. '''
        return self.endings.setdefault( identifier, asyncio.Event( ) )

    def produce_interceptor( self, namespace ):
        ''' Returns interceptor which records each call's result. '''
        async def intercept( invocation, designation, arguments, proceed ):
            result = await proceed( invocation, designation, arguments )
            self.results[ invocation.identifier ] = result
            self.access_ending( invocation.identifier ).set( )
            return result

        return intercept


def _produce_holding_ensemble( started, released, runs ):
    ''' Returns ensemble of a tool which holds its slot until released (no
        timeout of its own) and of a tool which answers at once. '''
    async def hold( ) -> str:
        ''' Holds its slot until released. '''
        started.set( )
        await released.wait( )
        return 'held'

    async def answer( context ) -> str:
        ''' Answers at once; records its deadline. '''
        runs.append( context.deadline )
        return 'answered'

    return invocables.produce_ensemble( 'e', [
        invocables.produce_invoker( hold, timeout = None ), answer ] )


@pytest.mark.asyncio
async def test_100_queued_call_ends_at_its_timeout( ):
    ''' An async call queued behind the execution's concurrency ends at its
        timeout, never started, while the call holding the slot goes on:
        "did not start within", as a sync call waiting for a thread. '''
    started, released, runs = asyncio.Event( ), asyncio.Event( ), [ ]
    ensemble = _produce_holding_ensemble( started, released, runs )
    watch = _Watch( )
    execution = asyncio.ensure_future( invocables.execute_invocations(
        [ _call( 'hold', 'a' ), _call( 'answer', 'b' ),
          _call( 'answer', 'c' ) ], [ ensemble ],
        timeout = _TIMEOUT, concurrency = 1, policy = watch ) )
    try:
        await asyncio.wait_for( started.wait( ), _BOUND )
        for identifier in ( 'b', 'c' ):
            await asyncio.wait_for(
                watch.access_ending( identifier ).wait( ), _BOUND )
            error = watch.results[ identifier ].error
            assert error.genus is FaultGenera.Timeout
            assert error.message.startswith(
                "Tool 'answer' did not start within 0.2 seconds: all 1 "
                "slots of its execution's concurrency were busy." )
        assert runs == [ ]
        assert not execution.done( )
    finally: released.set( )
    results = await asyncio.wait_for( execution, _BOUND )
    assert results[ 0 ].content == (
        invocables.TextContent( text = 'held' ), )
    assert [ result.invocation_id for result in results ] == [
        'a', 'b', 'c' ]


@pytest.mark.asyncio
async def test_110_wait_for_slot_counts_against_deadline( ):
    ''' A call which waited for a slot, then ran, has the deadline of its
        timeout from when it was given, not from when it started. '''
    started, released, runs = asyncio.Event( ), asyncio.Event( ), [ ]
    ensemble = _produce_holding_ensemble( started, released, runs )
    timeout = 30
    execution = asyncio.ensure_future( invocables.execute_invocations(
        [ _call( 'hold', 'a' ), _call( 'answer', 'b' ) ], [ ensemble ],
        timeout = timeout, concurrency = 1 ) )
    try:
        await asyncio.wait_for( started.wait( ), _BOUND )
        assert runs == [ ]
        released_at = asyncio.get_running_loop( ).time( )
    finally: released.set( )
    results = await asyncio.wait_for( execution, _BOUND )
    assert results[ 1 ].content == (
        invocables.TextContent( text = 'answered' ), )
    assert len( runs ) == 1
    assert runs[ 0 ] <= released_at + timeout
