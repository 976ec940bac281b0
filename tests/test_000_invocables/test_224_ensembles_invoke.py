# SPDX-License-Identifier: Apache-2.0

''' Direct invocation of one tool of an ensemble. '''


import asyncio
import sys

import pytest

import invocables

from invocables import exceptions


_BOUND = 10 # seconds: proves "does not hang", far above the expected time


def add( a: int, b: int = 1 ) -> int:
    ''' Adds. '''
    return a + b


async def shout( text: str ) -> str:
    ''' Shouts. '''
    return text.upper( )


def now( ) -> str:
    ''' Takes no arguments. '''
    return 'now'


@pytest.mark.asyncio
async def test_100_content( ):
    ''' Sync and async tools give content canisters. '''
    ensemble = invocables.produce_ensemble( 'tools', [ add, shout, now ] )
    assert await ensemble.invoke( 'add', { 'a': 2, 'b': 3 } ) == (
        invocables.StructureContent( data = 5 ), )
    assert await ensemble.invoke( 'shout', { 'text': 'hi' } ) == (
        invocables.TextContent( text = 'HI' ), )
    assert await ensemble.invoke( 'now' ) == (
        invocables.TextContent( text = 'now' ), )


@pytest.mark.asyncio
async def test_110_unknown_tool( ):
    ''' An unknown tool raises absence, naming tool and ensemble. '''
    ensemble = invocables.produce_ensemble( 'tools', [ add, shout ] )
    with pytest.raises( exceptions.InvokerAbsence ) as caught:
        await ensemble.invoke( 'ad', { 'a': 1 } )
    assert "'ad'" in str( caught.value )
    assert "'tools'" in str( caught.value )
    if sys.version_info >= ( 3, 11 ):
        assert caught.value.__notes__ == [ "Did you mean 'add'?" ]


@pytest.mark.asyncio
async def test_120_invalid_arguments( ):
    ''' Invalid arguments raise invalidity; the tool does not run. '''
    calls = [ ]

    def record( value: int ) -> int:
        calls.append( value )
        return value

    ensemble = invocables.produce_ensemble( 'tools', [ record ] )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        await ensemble.invoke( 'record', { 'value': 'x' } )
    assert "'x' is not of type 'integer'" in str( caught.value )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await ensemble.invoke( 'record', { 'value': 1, 'extra': 2 } )
    assert calls == [ ]


def _produce_stuck( ):
    ''' Returns tool which waits forever and events which trace it. '''
    started = asyncio.Event( )
    cancelled = asyncio.Event( )

    async def stuck( ) -> str:
        ''' Waits forever. '''
        started.set( )
        try: await asyncio.Event( ).wait( )
        except asyncio.CancelledError:
            cancelled.set( )
            raise
        return 'never'

    return stuck, started, cancelled


@pytest.mark.asyncio
async def test_130_invoker_timeout( ):
    ''' The invoker's timeout cancels the tool and raises expiry. '''
    stuck, started, cancelled = _produce_stuck( )
    ensemble = invocables.produce_ensemble( 'tools', [
        invocables.produce_invoker( stuck, timeout = 0.05 ) ],
        configuration = { 'timeout': 30 } )
    with pytest.raises( exceptions.InvocationExpiry ) as caught:
        await asyncio.wait_for( ensemble.invoke( 'stuck' ), _BOUND )
    assert isinstance( caught.value, TimeoutError )
    assert "'stuck'" in str( caught.value )
    assert caught.value.timeout == 0.05
    assert started.is_set( )
    assert cancelled.is_set( )


@pytest.mark.asyncio
async def test_140_ensemble_timeout( ):
    ''' Without its own timeout, a tool has its ensemble's. '''
    stuck, _, cancelled = _produce_stuck( )
    ensemble = invocables.produce_ensemble(
        'tools', [ stuck ], configuration = { 'timeout': 0.05 } )
    with pytest.raises( exceptions.InvocationExpiry ) as caught:
        await asyncio.wait_for( ensemble.invoke( 'stuck' ), _BOUND )
    assert caught.value.timeout == 0.05
    assert cancelled.is_set( )


@pytest.mark.asyncio
async def test_150_context( ):
    ''' Application data and namespace reach the tool's context. '''
    namespace = { 'count': 1 }

    def peek( context ) -> str:
        context.namespace[ 'count' ] += 1
        return f"{context.auxdata}:{context.invoker.name}"

    ensemble = invocables.produce_ensemble( 'tools', [ peek ] )
    content = await ensemble.invoke(
        'peek', auxdata = 'app', namespace = namespace )
    assert content == ( invocables.TextContent( text = 'app:peek' ), )
    assert namespace == { 'count': 2 }


@pytest.mark.asyncio
async def test_160_tool_exceptions( ):
    ''' What a tool raises reaches the caller unchanged. '''

    def fail( ) -> None:
        raise KeyError( 'missing' )

    def refuse( ) -> None:
        raise exceptions.InvocationRefusal( 'No such file.' )

    ensemble = invocables.produce_ensemble( 'tools', [ fail, refuse ] )
    with pytest.raises( KeyError ):
        await ensemble.invoke( 'fail' )
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        await ensemble.invoke( 'refuse' )
    assert caught.value.message == 'No such file.'


@pytest.mark.asyncio
async def test_170_cancellation( ):
    ''' Cancelling the caller cancels the tool and leaves no task. '''
    stuck, started, cancelled = _produce_stuck( )
    ensemble = invocables.produce_ensemble( 'tools', [ stuck ] )
    before = asyncio.all_tasks( )
    caller = asyncio.create_task( ensemble.invoke( 'stuck' ) )
    await asyncio.wait_for( started.wait( ), _BOUND )
    caller.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await caller
    assert cancelled.is_set( )
    assert asyncio.all_tasks( ) == before


@pytest.mark.asyncio
async def test_180_unbounded( ):
    ''' A timeout of None runs the tool in the caller's task. '''
    seen = [ ]

    async def where( ) -> bool:
        seen.append( asyncio.current_task( ) )
        return True

    ensemble = invocables.produce_ensemble(
        'tools', [ where ], configuration = { 'timeout': None } )
    assert await ensemble.invoke( 'where' ) == (
        invocables.StructureContent( data = True ), )
    assert seen == [ asyncio.current_task( ) ]
