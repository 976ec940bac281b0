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
        self.entries = { }

    def access_ending( self, identifier ):
        ''' Returns event set once call of identifier has ended. '''
        return self.endings.setdefault( identifier, asyncio.Event( ) )

    def access_entry( self, identifier ):
        ''' Returns event set once call of identifier has begun: it then
            runs, or waits, before the test goes on. '''
        return self.entries.setdefault( identifier, asyncio.Event( ) )

    def produce_interceptor( self, namespace ):
        ''' Returns interceptor which records each call's result. '''
        async def intercept( invocation, designation, arguments, proceed ):
            self.access_entry( invocation.identifier ).set( )
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


def _produce_fetching_ensemble( deduplicator, started, released, runs ):
    ''' Returns ensemble of a deduplicated tool whose first call waits
        until released; later calls answer at once. '''
    async def fetch( context, key: str ) -> str:
        ''' Fetches key; the first time, once released. '''
        runs.append( context.deadline )
        if len( runs ) == 1:
            started.set( )
            await released.wait( )
            return f"first {key}"
        return f"again {key}"

    return invocables.produce_ensemble( 'e', [
        invocables.produce_invoker( fetch, deduplicator = deduplicator ) ] )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'scope', ( 'namespace', 'process' ) )
async def test_200_duplicate_waits_within_its_timeout( scope ):
    ''' A duplicate of a call in flight, of a shared namespace or of a
        shared cache, ends at its own timeout with the timeout error; the
        call it waited for goes on, and its result is kept for later
        calls. '''
    started, released, runs = asyncio.Event( ), asyncio.Event( ), [ ]
    process = scope == 'process' # one cache for every namespace
    deduplicator = (
        invocables.ResultCache( shared = True ) if process
        else invocables.ExactDeduplicator( ) )
    ensemble = _produce_fetching_ensemble(
        deduplicator, started, released, runs )
    namespace = { }

    def execute( identifier, timeout ):
        return invocables.execute_invocations(
            [ _call( 'fetch', identifier, { 'key': 'k' } ) ], [ ensemble ],
            namespace = { } if process else namespace, timeout = timeout )

    first = asyncio.ensure_future( execute( 'a', None ) )
    try:
        await asyncio.wait_for( started.wait( ), _BOUND )
        second = await asyncio.wait_for( execute( 'b', _TIMEOUT ), _BOUND )
        error = second[ 0 ].error
        assert error.genus is FaultGenera.Timeout
        assert error.message.startswith(
            "Tool 'fetch' did not finish within 0.2 seconds" )
        assert second[ 0 ].invocation_id == 'b'
        assert not first.done( )
    finally: released.set( )
    results = await asyncio.wait_for( first, _BOUND )
    assert results[ 0 ].content == (
        invocables.TextContent( text = 'first k' ), )
    later = await asyncio.wait_for( execute( 'c', _TIMEOUT ), _BOUND )
    assert later[ 0 ].content == results[ 0 ].content
    assert len( runs ) == 1


@pytest.mark.asyncio
async def test_210_duplicate_runs_when_first_is_cancelled( ):
    ''' A duplicate does not take the cancellation of the call it waited
        for as its own: it runs, with what is left of its timeout. '''
    started, released, runs = asyncio.Event( ), asyncio.Event( ), [ ]
    ensemble = _produce_fetching_ensemble(
        invocables.ExactDeduplicator( ), started, released, runs )
    namespace, watch, timeout = { }, _Watch( ), 30

    def execute( identifier ):
        return invocables.execute_invocations(
            [ _call( 'fetch', identifier, { 'key': 'k' } ) ], [ ensemble ],
            namespace = namespace, timeout = timeout, policy = watch )

    first = asyncio.ensure_future( execute( 'a' ) )
    second = asyncio.ensure_future( execute( 'b' ) )
    try:
        await asyncio.wait_for( started.wait( ), _BOUND )
        await asyncio.wait_for( watch.access_entry( 'b' ).wait( ), _BOUND )
        assert len( runs ) == 1 # the second waits for the first
        cancelled_at = asyncio.get_running_loop( ).time( )
        first.cancel( )
        results = await asyncio.wait_for( second, _BOUND )
    finally: released.set( )
    assert results[ 0 ].error is invocables.__.absent
    assert results[ 0 ].content == (
        invocables.TextContent( text = 'again k' ), )
    assert len( runs ) == 2
    assert runs[ 1 ] <= cancelled_at + timeout
    with pytest.raises( asyncio.CancelledError ): await first
