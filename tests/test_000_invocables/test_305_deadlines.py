# SPDX-License-Identifier: Apache-2.0

''' Every call ends within its timeout plus a bounded grace.

    Tools here resist cancellation by waiting on events which the test sets
    only once the call has ended (or never), so that a call which waited for
    them would not end within the generous bound of ``_BOUND``.
'''


import asyncio
import gc
import logging
import threading

import pytest

import invocables

from invocables import FaultGenera, exceptions
from invocables.execution import deadlines


_BOUND = 10 # seconds: "does not hang", never a timing assertion
_GRACE = 0.2
_TIMEOUT = 0.2


def _call( name, identifier = 'c1', arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


@pytest.fixture
def grace( ):
    ''' Sets a short grace for the test; restores the default after. '''
    before = deadlines.access_grace( )
    deadlines.configure_grace( _GRACE )
    yield _GRACE
    deadlines.configure_grace( before )


class _Captures:
    ''' Exceptions which the event loop reported to its handler. '''

    def __init__( self ):
        self.contexts = [ ]

    def __call__( self, loop, context ):
        self.contexts.append( context )


async def _finish_abandonments( ):
    tasks = deadlines.survey_abandonments( )
    if tasks: await asyncio.wait_for( asyncio.wait( tasks ), _BOUND )


@pytest.mark.asyncio
async def test_100_slow_cleanup_bounded_by_grace( grace, caplog ):
    ''' A tool whose cleanup outlasts the grace is abandoned: the call gets
        the timeout error at once, the cleanup finishes in the background.
    '''
    released = asyncio.Event( )
    cleaned = asyncio.Event( )

    async def tidy( ) -> str:
        ''' Waits; cleans up until released. '''
        try: await asyncio.Event( ).wait( )
        finally:
            await released.wait( ) # "8 seconds" of cleanup
            cleaned.set( )
        return 'never'

    ensemble = invocables.produce_ensemble( 'e', [ tidy ] )
    with caplog.at_level( logging.INFO, logger = 'invocables' ):
        results = await asyncio.wait_for( invocables.execute_invocations(
            [ _call( 'tidy' ) ], [ ensemble ], timeout = _TIMEOUT ), _BOUND )
        error = results[ 0 ].error
        assert error.genus is FaultGenera.Timeout
        assert 'abandoned' in error.message
        assert not cleaned.is_set( )
        released.set( )
        await _finish_abandonments( )
    assert cleaned.is_set( )
    assert deadlines.survey_abandonments( ) == ( )
    messages = [ record.getMessage( ) for record in caplog.records ]
    assert len( [ text for text in messages if 'grace' in text ] ) == 1
    assert len( [ text for text in messages if 'ended late' in text ] ) == 1


@pytest.mark.asyncio
async def test_110_swallowed_cancellation_is_timeout( grace, caplog ):
    ''' A tool which swallows its cancellation and returns gets the
        timeout error, not success; the late result is logged once. '''
    async def stubborn( ) -> str:
        ''' Ignores its cancellation once, then answers. '''
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError: pass
        return 'late answer'

    ensemble = invocables.produce_ensemble( 'e', [ stubborn ] )
    with caplog.at_level( logging.INFO, logger = 'invocables' ):
        lone = await asyncio.wait_for( invocables.execute_invocations(
            [ _call( 'stubborn' ) ], [ ensemble ], timeout = _TIMEOUT ),
            _BOUND )
    assert lone[ 0 ].error.genus is FaultGenera.Timeout
    assert lone[ 0 ].content == ( )
    discards = [
        record for record in caplog.records
        if 'discarded' in record.getMessage( ) ]
    assert len( discards ) == 1
    batch = await asyncio.wait_for( invocables.execute_invocations(
        [ _call( 'stubborn', 'a' ), _call( 'stubborn', 'b' ) ], [ ensemble ],
        timeout = _TIMEOUT ), _BOUND )
    assert [ result.error.genus for result in batch ] == [
        FaultGenera.Timeout, FaultGenera.Timeout ]


@pytest.mark.asyncio
async def test_120_ever_swallowing_tool_does_not_hang_batch( grace ):
    ''' A tool which swallows every cancellation is abandoned after the
        grace; the batch returns every result, the others' too. '''
    async def deaf( ) -> str:
        ''' Ignores every cancellation. '''
        while True:
            try: await asyncio.Event( ).wait( )
            except asyncio.CancelledError: pass

    async def quick( ) -> str:
        ''' Answers. '''
        return 'quick'

    ensemble = invocables.produce_ensemble( 'e', [ deaf, quick ] )
    results = await asyncio.wait_for( invocables.execute_invocations(
        [ _call( 'deaf', 'a' ), _call( 'quick', 'b' ), _call( 'deaf', 'c' ) ],
        [ ensemble ], timeout = _TIMEOUT ), _BOUND )
    assert results[ 0 ].error.genus is FaultGenera.Timeout
    assert results[ 1 ].content == ( invocables.TextContent( text = 'quick' ), )
    assert results[ 2 ].error.genus is FaultGenera.Timeout
    assert len( deadlines.survey_abandonments( ) ) == 2
    for task in deadlines.survey_abandonments( ): task.cancel( )
    await _finish_abandonments( )
    assert deadlines.survey_abandonments( ) == ( )


@pytest.mark.asyncio
async def test_130_late_exception_never_unretrieved( grace, caplog ):
    ''' An abandoned tool which raises late is logged once, naming the
        exception; asyncio never reports an exception not retrieved. '''
    released = asyncio.Event( )

    async def spiteful( ) -> str:
        ''' Ignores its cancellation; raises when released. '''
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError: await released.wait( )
        raise LookupError( 'late' )

    loop = asyncio.get_running_loop( )
    captures = _Captures( )
    handler = loop.get_exception_handler( )
    loop.set_exception_handler( captures )
    try:
        ensemble = invocables.produce_ensemble( 'e', [ spiteful ] )
        with caplog.at_level( logging.INFO, logger = 'invocables' ):
            results = await asyncio.wait_for(
                invocables.execute_invocations(
                    [ _call( 'spiteful' ) ], [ ensemble ],
                    timeout = _TIMEOUT ), _BOUND )
            assert results[ 0 ].error.genus is FaultGenera.Timeout
            released.set( )
            await _finish_abandonments( )
        gc.collect( )
        await asyncio.sleep( 0 ) # let reports of collected tasks run
    finally: loop.set_exception_handler( handler )
    assert captures.contexts == [ ]
    lates = [
        record for record in caplog.records
        if 'LookupError' in record.getMessage( ) ]
    assert len( lates ) == 1


@pytest.mark.asyncio
async def test_140_thread_tool_ends_at_deadline( grace ):
    ''' A sync tool cannot be stopped: the call ends with the timeout
        error while its thread runs on, and the tool sees the expiry
        through its context. '''
    noticed = threading.Event( )
    entered = threading.Event( )
    released = threading.Event( )

    def patient( context ) -> str:
        ''' Works until told that the call ended, then until released. '''
        entered.set( )
        assert deadlines.access_remainder( context ) is not None
        while not deadlines.is_expired( context ):
            noticed.wait( 0.01 ) # a slice of work
        released.wait( _BOUND )
        noticed.set( )
        return 'late'

    ensemble = invocables.produce_ensemble( 'e', [ patient ] )
    results = await asyncio.wait_for( invocables.execute_invocations(
        [ _call( 'patient' ) ], [ ensemble ], timeout = _TIMEOUT ), _BOUND )
    assert entered.is_set( )
    assert results[ 0 ].error.genus is FaultGenera.Timeout
    assert 'thread' in results[ 0 ].error.message
    assert not noticed.is_set( )
    released.set( )
    assert await asyncio.to_thread( noticed.wait, _BOUND )


@pytest.mark.asyncio
async def test_150_thread_tool_sees_abandonment( grace ):
    ''' A sync tool with no deadline learns that its caller stopped
        waiting (the execution was cancelled) from is_expired. '''
    entered = threading.Event( )
    noticed = threading.Event( )

    def endless( context ) -> str:
        ''' Works until abandoned. '''
        entered.set( )
        assert deadlines.access_remainder( context ) is None
        while not deadlines.is_expired( context ): noticed.wait( 0.01 )
        assert deadlines.access_remainder( context ) == 0
        noticed.set( )
        return 'late'

    ensemble = invocables.produce_ensemble( 'e', [ endless ] )
    task = asyncio.create_task( invocables.execute_invocations(
        [ _call( 'endless' ) ], [ ensemble ], timeout = None ) )
    assert await asyncio.to_thread( entered.wait, _BOUND )
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await asyncio.wait_for( task, _BOUND )
    assert await asyncio.to_thread( noticed.wait, _BOUND )


@pytest.mark.asyncio
async def test_160_outer_cancellation_bounded_by_grace( grace ):
    ''' Cancelling an execution whose tool swallows every cancellation
        ends within the grace, alone or in a batch. '''
    started = asyncio.Event( )

    deafness = [ True ] # lifted at the end, so that nothing outlives

    async def deaf( ) -> str:
        ''' Ignores every cancellation (until the test has ended). '''
        started.set( )
        while deafness[ 0 ]:
            try: await asyncio.Event( ).wait( )
            except asyncio.CancelledError: pass
        return 'deaf no more'

    ensemble = invocables.produce_ensemble( 'e', [ deaf ] )
    for calls in ( [ _call( 'deaf' ) ], [ _call( 'deaf', 'a' ),
                                           _call( 'deaf', 'b' ) ] ):
        started.clear( )
        task = asyncio.create_task( invocables.execute_invocations(
            calls, [ ensemble ], timeout = None ) )
        await asyncio.wait_for( started.wait( ), _BOUND )
        task.cancel( )
        with pytest.raises( asyncio.CancelledError ):
            await asyncio.wait_for( task, _BOUND )
    deafness[ 0 ] = False
    for task in deadlines.survey_abandonments( ): task.cancel( )
    await _finish_abandonments( )


@pytest.mark.asyncio
async def test_170_fail_fast_does_not_wait_for_deaf_tools( grace ):
    ''' A failing tool cancels its batch; a sibling which ignores the
        cancellation does not hold up the execution failure. '''
    started = asyncio.Event( )

    deafness = [ True ] # lifted at the end, so that nothing outlives

    async def deaf( ) -> str:
        ''' Ignores every cancellation (until the test has ended). '''
        started.set( )
        while deafness[ 0 ]:
            try: await asyncio.Event( ).wait( )
            except asyncio.CancelledError: pass
        return 'deaf no more'

    async def broken( ) -> str:
        ''' Fails once the deaf tool runs. '''
        await started.wait( )
        raise RuntimeError( 'broken' )

    ensemble = invocables.produce_ensemble( 'e', [ deaf, broken ] )
    with pytest.raises( exceptions.InvocationExecutionFailure ):
        await asyncio.wait_for( invocables.execute_invocations(
            [ _call( 'deaf', 'a' ), _call( 'broken', 'b' ) ], [ ensemble ],
            timeout = None ), _BOUND )
    deafness[ 0 ] = False
    for task in deadlines.survey_abandonments( ): task.cancel( )
    await _finish_abandonments( )


@pytest.mark.asyncio
async def test_180_direct_invocation_bounded( grace ):
    ''' A direct invocation of a tool which swallows its cancellation
        raises the expiry, within the grace. '''
    async def stubborn( ) -> str:
        ''' Ignores its cancellation, then answers. '''
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError: pass
        return 'late answer'

    ensemble = invocables.produce_ensemble(
        'e', [ stubborn ], configuration = { 'timeout': _TIMEOUT } )
    with pytest.raises( exceptions.InvocationExpiry ):
        await asyncio.wait_for( ensemble.invoke( 'stubborn', { } ), _BOUND )


@pytest.mark.asyncio
async def test_190_tool_own_timeouts_untouched( grace ):
    ''' A tool which times out something of its own (a cancellation it
        withdraws) and works on past the grace is not abandoned. '''
    async def careful( ) -> str:
        ''' Gives up waiting, then works on. '''
        task = asyncio.current_task( )
        handle = asyncio.get_running_loop( ).call_later( 0.01, task.cancel )
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError: # withdrawn, as asyncio.timeout does
            uncancel = getattr( task, 'uncancel', None ) # Python 3.11+
            if uncancel is not None: uncancel( )
        finally: handle.cancel( )
        await asyncio.sleep( 2 * _GRACE ) # the tool's own work
        return 'done'

    ensemble = invocables.produce_ensemble( 'e', [ careful ] )
    results = await asyncio.wait_for( invocables.execute_invocations(
        [ _call( 'careful' ) ], [ ensemble ], timeout = _BOUND ), _BOUND )
    assert results[ 0 ].content == ( invocables.TextContent( text = 'done' ), )


@pytest.mark.asyncio
async def test_192_late_exception_is_timeout( grace, caplog ):
    ''' A tool which turns its cancellation into another exception after
        its timeout gets the timeout error, not a failure of the batch. '''
    async def converter( ) -> str:
        ''' Raises something else when cancelled. '''
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError as exception:
            raise LookupError( 'interrupted' ) from exception
        return 'never'

    ensemble = invocables.produce_ensemble( 'e', [ converter ] )
    with caplog.at_level( logging.INFO, logger = 'invocables' ):
        results = await asyncio.wait_for( invocables.execute_invocations(
            [ _call( 'converter' ) ], [ ensemble ], timeout = _TIMEOUT ),
            _BOUND )
    assert results[ 0 ].error.genus is FaultGenera.Timeout
    assert 'LookupError' in caplog.text


@pytest.mark.asyncio
async def test_194_spinning_tool_abandoned( grace ):
    ''' A tool which swallows its cancellation and spins without waiting
        on anything (bare yields) is abandoned after the grace too. '''
    spins = [ ]

    async def spinner( ) -> str:
        ''' Yields forever, ignoring cancellation. '''
        while True:
            try: await asyncio.sleep( 0 )
            except asyncio.CancelledError: pass
            spins.append( None )

    ensemble = invocables.produce_ensemble( 'e', [ spinner ] )
    results = await asyncio.wait_for( invocables.execute_invocations(
        [ _call( 'spinner' ) ], [ ensemble ], timeout = _TIMEOUT ), _BOUND )
    assert results[ 0 ].error.genus is FaultGenera.Timeout
    assert spins
    for task in deadlines.survey_abandonments( ): task.cancel( )
    await _finish_abandonments( )
    assert deadlines.survey_abandonments( ) == ( )


@pytest.mark.asyncio
async def test_196_swallowed_outer_cancellation_honoured( grace ):
    ''' A tool which swallows the cancellation of its execution and
        returns does not turn the cancellation into a success. '''
    started = asyncio.Event( )

    async def stubborn( ) -> str:
        ''' Ignores its cancellation once, then answers. '''
        started.set( )
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError: pass
        return 'late answer'

    ensemble = invocables.produce_ensemble( 'e', [ stubborn ] )
    task = asyncio.create_task( invocables.execute_invocations(
        [ _call( 'stubborn' ) ], [ ensemble ], timeout = None ) )
    await asyncio.wait_for( started.wait( ), _BOUND )
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await asyncio.wait_for( task, _BOUND )
    started.clear( )
    task = asyncio.create_task( invocables.execute_invocations(
        [ _call( 'stubborn', 'a' ), _call( 'stubborn', 'b' ) ], [ ensemble ],
        timeout = None ) )
    await asyncio.wait_for( started.wait( ), _BOUND )
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await asyncio.wait_for( task, _BOUND )


def test_200_grace_configuration( ):
    ''' The grace is a finite number of seconds, at least 0. '''
    before = deadlines.access_grace( )
    assert deadlines.GRACE_DEFAULT == 1.0
    try:
        deadlines.configure_grace( 0 )
        assert deadlines.access_grace( ) == 0
        for value in ( -1, float( 'inf' ), float( 'nan' ), True, '1' ):
            with pytest.raises( exceptions.ConfigurationInvalidity ):
                deadlines.configure_grace( value )
    finally: deadlines.configure_grace( before )


def test_300_deadline_queries( ):
    ''' Without a deadline nothing expires; past one, nothing remains. '''
    import time
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    assert not deadlines.is_expired( context )
    assert deadlines.access_remainder( context ) is None
    assert not deadlines.is_expired( None )
    past = time.monotonic( ) - 1
    assert deadlines.is_expired( past )
    assert deadlines.access_remainder( past ) == 0
    future = time.monotonic( ) + 3600
    assert not deadlines.is_expired( future )
    assert deadlines.access_remainder( future ) > 3000
