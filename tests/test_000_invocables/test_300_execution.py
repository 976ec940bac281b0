# SPDX-License-Identifier: Apache-2.0

''' The execution engine: one result per invocation, in order, always. '''


import asyncio
import time

import pytest

import invocables

from invocables import FailurePolicies, FaultGenera, exceptions


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


async def nap( seconds: float ) -> str:
    ''' Sleeps. '''
    await asyncio.sleep( seconds )
    return f"slept {seconds}"


def fail( message: str ) -> str:
    ''' Raises. '''
    raise RuntimeError( message )


def echo( text: str ) -> str:
    ''' Echoes. '''
    return text


def _ensemble( name = 'tools', ** configuration ):
    return invocables.produce_ensemble(
        name, [ nap, fail, echo ], configuration = configuration )


@pytest.mark.asyncio
async def test_100_hundred_mixed_invocations( ):
    ''' 100 mixed invocations give one result each, in order. '''
    invocations = [ ]
    expected = [ ]
    for index in range( 100 ):
        match index % 5:
            case 0:
                invocations.append( _call( f"c{index}", 'nap', { 'seconds': 5 } ) )
                expected.append( FaultGenera.Timeout )
            case 1:
                invocations.append( _call( f"c{index}", 'fail', { 'message': str( index ) } ) )
                expected.append( FaultGenera.Failure )
            case 2:
                invocations.append( _call( f"c{index}", 'echo', { 'text': 3 } ) )
                expected.append( FaultGenera.Invalidity )
            case 3:
                invocations.append( _call( f"c{index}", 'unknown' ) )
                expected.append( FaultGenera.Absence )
            case _:
                invocations.append( _call( f"c{index}", 'echo', { 'text': str( index ) } ) )
                expected.append( None )
    started = time.monotonic( )
    results = await invocables.execute_invocations(
        # The timeout leaves the sync tools time to reach a thread under
        # load; only the naps (5 seconds) exceed it.
        invocations, [ _ensemble( ) ], timeout = 1.0, concurrency = 50,
        failure_policy = FailurePolicies.Report )
    assert time.monotonic( ) - started < 5
    assert len( results ) == 100
    for index, ( result, genus ) in enumerate( zip( results, expected ) ):
        assert result.invocation_id == f"c{index}"
        assert result.name == invocations[ index ].name
        if genus is None:
            assert not result.is_error( )
            assert result.as_text( ) == str( index )
        else: assert result.error.genus is genus, index
    assert "'unknown'" in results[ 3 ].error.message
    assert 'RuntimeError: 1' in results[ 1 ].error.message
    assert "'integer'" not in results[ 2 ].error.message
    assert "3 is not of type 'string'" in results[ 2 ].error.message


@pytest.mark.asyncio
async def test_110_empty( ):
    ''' No invocations give no results. '''
    assert await invocables.execute_invocations( [ ], [ _ensemble( ) ] ) == ( )


@pytest.mark.asyncio
async def test_120_undecodable_arguments( ):
    ''' Invocations marked invalid are not run; the model gets an error. '''
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = 'echo', arguments = { },
        invalidity = 'Expecting value at 0' )
    results = await invocables.execute_invocations(
        [ invocation ], [ _ensemble( ) ] )
    assert results[ 0 ].error.genus is FaultGenera.Invalidity
    assert 'not valid JSON' in results[ 0 ].error.message


@pytest.mark.asyncio
async def test_200_timeout_precedence( ):
    ''' Invoker timeout beats ensemble timeout, which beats call timeout. '''
    quick = invocables.produce_invoker( nap, name = 'quick', timeout = 0.05 )
    patient = invocables.produce_invoker( nap, name = 'patient', timeout = 5 )
    unbounded = invocables.produce_invoker( nap, name = 'free', timeout = None )
    ensemble = invocables.produce_ensemble(
        'e', [ quick, patient, unbounded, nap ],
        configuration = { 'timeout': 0.1 } )
    bare = invocables.produce_ensemble( 'f', [ echo, fail ] )
    results = await invocables.execute_invocations(
        [ _call( '1', 'quick', { 'seconds': 0.3 } ),
          _call( '2', 'patient', { 'seconds': 0.3 } ),
          _call( '3', 'free', { 'seconds': 0.3 } ),
          _call( '4', 'nap', { 'seconds': 0.3 } ) ],
        [ ensemble, bare ], timeout = 0.01 )
    assert results[ 0 ].error.genus is FaultGenera.Timeout
    assert '0.05 seconds' in results[ 0 ].error.message
    assert not results[ 1 ].is_error( )
    assert not results[ 2 ].is_error( )
    assert results[ 3 ].error.genus is FaultGenera.Timeout
    assert '0.1 seconds' in results[ 3 ].error.message
    lone = invocables.produce_ensemble( 'g', [ nap ] )
    results = await invocables.execute_invocations(
        [ _call( '5', 'nap', { 'seconds': 0.3 } ) ], [ lone ], timeout = 0.05 )
    assert results[ 0 ].error.genus is FaultGenera.Timeout


@pytest.mark.asyncio
async def test_210_timeout_cancels_tool( ):
    ''' A timed-out tool is cancelled, not left running. '''
    observed = [ ]

    async def stubborn( ) -> str:
        try: await asyncio.sleep( 10 )
        except asyncio.CancelledError:
            observed.append( 'cancelled' )
            raise
        return 'done'

    ensemble = invocables.produce_ensemble(
        'e', [ invocables.produce_invoker( stubborn, timeout = 0.05 ) ] )
    results = await invocables.execute_invocations(
        [ _call( '1', 'stubborn' ) ], [ ensemble ] )
    assert results[ 0 ].error.genus is FaultGenera.Timeout
    assert observed == [ 'cancelled' ]


@pytest.mark.asyncio
async def test_220_suspending_tools_under_timeout( ):
    ''' Tools which suspend many times complete, fail or refuse normally. '''

    async def steps( count: int ) -> int:
        for _ in range( count ): await asyncio.sleep( 0 )
        await asyncio.sleep( 0.01 )
        return count

    async def late_failure( ) -> None:
        await asyncio.sleep( 0.01 )
        raise exceptions.InvocationRefusal( 'Late no.' )

    ensemble = invocables.produce_ensemble(
        'e', [ steps, late_failure ], configuration = { 'timeout': 5 } )
    results = await invocables.execute_invocations(
        [ _call( '1', 'steps', { 'count': 50 } ), _call( '2', 'late_failure' ) ],
        [ ensemble ] )
    assert results[ 0 ].as_text( ) == '50'
    assert results[ 1 ].error.message == 'Late no.'
    alone = await invocables.execute_invocations(
        [ _call( '3', 'steps', { 'count': 3 } ) ], [ ensemble ] )
    assert alone[ 0 ].as_text( ) == '3'


@pytest.mark.asyncio
async def test_230_timeout_after_many_suspensions( ):
    ''' A tool past its first suspensions is still cancelled at timeout,
        alone or in a batch, and sees the cancellation where it waits. '''
    observed = [ ]

    async def wanderer( index: int ) -> str:
        for _ in range( 5 ): await asyncio.sleep( 0 )
        try: await asyncio.sleep( 10 )
        except asyncio.CancelledError:
            observed.append( index )
            raise
        return 'late'

    ensemble = invocables.produce_ensemble(
        'e', [ invocables.produce_invoker( wanderer, timeout = 0.05 ) ] )
    alone = await invocables.execute_invocations(
        [ _call( '1', 'wanderer', { 'index': 1 } ) ], [ ensemble ] )
    batch = await invocables.execute_invocations(
        [ _call( str( index ), 'wanderer', { 'index': index } )
          for index in ( 2, 3 ) ], [ ensemble ] )
    assert [ result.error.genus for result in ( *alone, *batch ) ] == (
        [ FaultGenera.Timeout ] * 3 )
    assert sorted( observed ) == [ 1, 2, 3 ]


@pytest.mark.asyncio
async def test_300_concurrency_bounded( ):
    ''' No more invocations run at once than the bound. '''
    running = 0
    peak = 0

    async def busy( ) -> None:
        nonlocal running, peak
        running += 1
        peak = max( peak, running )
        await asyncio.sleep( 0.01 )
        running -= 1

    ensemble = invocables.produce_ensemble( 'e', [ busy ] )
    await invocables.execute_invocations(
        [ _call( str( index ), 'busy' ) for index in range( 30 ) ],
        [ ensemble ], concurrency = 4 )
    assert peak == 4
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        await invocables.execute_invocations(
            [ _call( '1', 'busy' ) ], [ ensemble ], concurrency = 0 )


@pytest.mark.asyncio
async def test_310_runs_concurrently( ):
    ''' Invocations overlap in time rather than running one by one. '''
    ensemble = _ensemble( )
    started = time.monotonic( )
    await invocables.execute_invocations(
        [ _call( str( index ), 'nap', { 'seconds': 0.2 } )
          for index in range( 10 ) ], [ ensemble ] )
    assert time.monotonic( ) - started < 1.5


@pytest.mark.asyncio
async def test_320_default_concurrency_runs_hundred_at_once( ):
    ''' Under default settings, 100 async tools all run at once. '''
    started = 0
    everyone = asyncio.Event( )

    async def gather( ) -> None:
        nonlocal started
        started += 1
        if started == 100: everyone.set( )
        await everyone.wait( )

    ensemble = invocables.produce_ensemble( 'e', [ gather ] )
    results = await asyncio.wait_for(
        invocables.execute_invocations(
            [ _call( str( index ), 'gather' ) for index in range( 100 ) ],
            [ ensemble ], timeout = 10 ),
        timeout = 10 )
    assert not any( result.is_error( ) for result in results )


@pytest.mark.asyncio
async def test_400_fail_fast( ):
    ''' A tool that raises fails the execution, alerting first, chained. '''
    alerts = [ ]
    cancelled = [ ]

    async def sleeper( ) -> str:
        try: await asyncio.sleep( 10 )
        except asyncio.CancelledError:
            cancelled.append( True )
            raise
        return 'late'

    ensemble = invocables.produce_ensemble( 'e', [ fail, sleeper ] )
    with pytest.raises( exceptions.InvocationExecutionFailure ) as caught:
        await invocables.execute_invocations(
            [ _call( '1', 'sleeper' ),
              _call( '2', 'fail', { 'message': 'boom' } ) ],
            [ ensemble ],
            alerter = lambda invocation, error: alerts.append(
                ( invocation.identifier, error ) ) )
    assert isinstance( caught.value, RuntimeError )
    assert isinstance( caught.value.__cause__, RuntimeError )
    assert str( caught.value.__cause__ ) == 'boom'
    assert "'fail'" in str( caught.value )
    assert len( alerts ) == 1
    assert alerts[ 0 ][ 0 ] == '2'
    assert str( alerts[ 0 ][ 1 ] ) == 'boom'
    assert cancelled == [ True ]
    assert asyncio.all_tasks( ) == { asyncio.current_task( ) }


@pytest.mark.asyncio
async def test_410_alerter_failure_does_not_hide_error( ):
    ''' An alerter that raises does not replace the tool's failure. '''

    def alerter( invocation, error ):
        raise KeyError( 'alerter broke' )

    with pytest.raises( exceptions.InvocationExecutionFailure ):
        await invocables.execute_invocations(
            [ _call( '1', 'fail', { 'message': 'x' } ) ], [ _ensemble( ) ],
            alerter = alerter )


@pytest.mark.asyncio
async def test_420_refusal_reported( ):
    ''' A tool refusal always becomes an error result, never a failure. '''

    def picky( value: int ) -> int:
        if value < 0:
            raise exceptions.InvocationRefusal( 'Value must be positive.' )
        return value

    ensemble = invocables.produce_ensemble( 'e', [ picky ] )
    results = await invocables.execute_invocations(
        [ _call( '1', 'picky', { 'value': -1 } ),
          _call( '2', 'picky', { 'value': 2 } ) ], [ ensemble ] )
    assert results[ 0 ].error.genus is FaultGenera.Refusal
    assert results[ 0 ].error.message == 'Value must be positive.'
    assert results[ 1 ].as_text( ) == '2'


@pytest.mark.asyncio
async def test_430_connection_failure( ):
    ''' Connection failures raise as they are, or are reported by policy. '''

    def remote( ) -> str:
        raise exceptions.ConnectionFailure( 'server', 'gone.' )

    ensemble = invocables.produce_ensemble( 'e', [ remote ] )
    with pytest.raises( exceptions.ConnectionFailure ):
        await invocables.execute_invocations(
            [ _call( '1', 'remote' ) ], [ ensemble ] )
    results = await invocables.execute_invocations(
        [ _call( '1', 'remote' ) ], [ ensemble ],
        failure_policy = FailurePolicies.Report )
    assert results[ 0 ].error.genus is FaultGenera.Connection


@pytest.mark.asyncio
async def test_500_cancellation_leaves_nothing_running( ):
    ''' Cancelling an execution cancels and awaits every task it started. '''
    cancelled = [ ]
    started = [ ]
    bound = asyncio.Event( )

    async def sleeper( index: int ) -> str:
        started.append( index )
        if len( started ) == 8: bound.set( )
        try: await asyncio.sleep( 10 )
        except asyncio.CancelledError:
            cancelled.append( index )
            raise
        return 'late'

    ensemble = invocables.produce_ensemble( 'e', [ sleeper ] )
    before = asyncio.all_tasks( )
    task = asyncio.create_task( invocables.execute_invocations(
        [ _call( str( index ), 'sleeper', { 'index': index } )
          for index in range( 20 ) ], [ ensemble ], concurrency = 8 ) )
    await asyncio.wait_for( bound.wait( ), 10 ) # all eight have started
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ): await task
    assert sorted( cancelled ) == list( range( 8 ) )
    assert asyncio.all_tasks( ) == before


@pytest.mark.asyncio
async def test_510_tool_cancelled_itself( ):
    ''' A tool whose own work is cancelled gives a cancellation result. '''

    async def fragile( ) -> str:
        raise asyncio.CancelledError

    ensemble = invocables.produce_ensemble( 'e', [ fragile, echo ] )
    results = await invocables.execute_invocations(
        [ _call( '1', 'fragile' ), _call( '2', 'echo', { 'text': 'ok' } ) ],
        [ ensemble ] )
    assert results[ 0 ].error.genus is FaultGenera.Cancellation
    assert results[ 1 ].as_text( ) == 'ok'


@pytest.mark.asyncio
async def test_520_outer_cancellation_of_lone_invocation( ):
    ''' Cancelling an execution of one invocation cancels the tool. '''
    cancelled = [ ]
    started = asyncio.Event( )

    async def sleeper( ) -> str:
        started.set( )
        try: await asyncio.sleep( 10 )
        except asyncio.CancelledError:
            cancelled.append( True )
            raise
        return 'late'

    ensemble = invocables.produce_ensemble(
        'e', [ sleeper ], configuration = { 'timeout': 0.5 } )
    task = asyncio.create_task( invocables.execute_invocations(
        [ _call( '1', 'sleeper' ) ], [ ensemble ] ) )
    await asyncio.wait_for( started.wait( ), 10 )
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ): await task
    assert cancelled == [ True ]


@pytest.mark.asyncio
async def test_600_context_and_namespace( ):
    ''' Invocables see application data, their invoker and the namespace. '''
    seen = [ ]

    def inspect( context ) -> str:
        seen.append( context )
        context.namespace[ 'visits' ] = context.namespace.get( 'visits', 0 ) + 1
        return context.invoker.name

    ensemble = invocables.produce_ensemble( 'e', [ inspect ] )
    namespace = { }
    results = await invocables.execute_invocations(
        [ _call( '1', 'inspect' ) ], [ ensemble ],
        auxdata = { 'user': 'u' }, namespace = namespace )
    assert results[ 0 ].as_text( ) == 'inspect'
    assert seen[ 0 ].auxdata == { 'user': 'u' }
    assert seen[ 0 ].invocation.identifier == '1'
    assert namespace[ 'visits' ] == 1


@pytest.mark.asyncio
async def test_610_nomenclature_accepted( ):
    ''' A nomenclature can stand in for the ensembles. '''
    nomenclature = invocables.produce_nomenclature( [
        _ensemble( 'a' ), _ensemble( 'b' ) ] )
    results = await invocables.execute_invocations(
        [ _call( '1', 'b__echo', { 'text': 'hi' } ) ], nomenclature )
    assert results[ 0 ].as_text( ) == 'hi'
