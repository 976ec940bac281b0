# SPDX-License-Identifier: Apache-2.0

''' Connecting groups of ensembles together: nothing left connected. '''


import asyncio

import pytest

import invocables


_BOUND = 10 # seconds: proves "does not hang", far above the expected time


class _Failure( Exception ):
    ''' Failure of a test ensemble. '''


class _Ensemble( invocables.ensembles.EnsembleBase ):
    ''' Ensemble which records its lifecycle; may fail or wait to connect.

        A real implementation of the ensemble protocol, as an application
        would write one, not a mock of library code.
    '''

    def __init__(
        self, name, journal, *, refuse = False, stall = None, stuck = False
    ):
        self.name = name
        self.configuration = invocables.EnsembleConfiguration( )
        self.journal = journal
        self.refuse = refuse
        self.stall = stall
        self.stuck = stuck

    def access_invoker( self, name ):
        raise invocables.exceptions.InvokerAbsence( name, self.name )

    def survey_invokers( self ):
        return ( )

    def is_connected( self ):
        connected = 0
        for event, name in self.journal:
            if name != self.name: continue
            connected += 1 if event == 'connect' else -1
        return connected > 0

    async def connect( self ):
        if self.stall is not None:
            self.journal.append( ( 'stalling', self.name ) )
            reached, release = self.stall
            reached.set( )
            await release.wait( )
        if self.refuse: raise _Failure( f"{self.name} refused" )
        self.journal.append( ( 'connect', self.name ) )

    async def disconnect( self ):
        if self.is_connected( ):
            self.journal.append( ( 'disconnect', self.name ) )
        if self.stuck: raise _Failure( f"{self.name} stuck" )


def _produce( journal, *specifications ):
    return [
        _Ensemble( name, journal, **options )
        for name, options in specifications ]


@pytest.mark.asyncio
async def test_100_connects_and_disconnects( ):
    ''' All connect in order, are given as a tuple, disconnect in reverse. '''
    journal = [ ]
    ensembles = _produce( journal, ( 'a', { } ), ( 'b', { } ), ( 'c', { } ) )
    async with invocables.connect_ensembles( ensembles ) as connected:
        assert connected == tuple( ensembles )
        assert all( ensemble.is_connected( ) for ensemble in connected )
    assert journal == [
        ( 'connect', 'a' ), ( 'connect', 'b' ), ( 'connect', 'c' ),
        ( 'disconnect', 'c' ), ( 'disconnect', 'b' ), ( 'disconnect', 'a' ) ]


@pytest.mark.asyncio
async def test_110_failure_to_connect( ):
    ''' When one fails, those connected are disconnected; later ones never
        connect; the failure is raised unchanged.
    '''
    journal = [ ]
    ensembles = _produce(
        journal, ( 'a', { } ), ( 'b', { } ), ( 'c', { 'refuse': True } ),
        ( 'd', { } ) )
    with pytest.raises( _Failure, match = 'c refused' ):
        async with invocables.connect_ensembles( ensembles ):
            pytest.fail( 'The body ran.' )
    assert journal == [
        ( 'connect', 'a' ), ( 'connect', 'b' ),
        ( 'disconnect', 'b' ), ( 'disconnect', 'a' ) ]
    assert not any( ensemble.is_connected( ) for ensemble in ensembles )


@pytest.mark.asyncio
async def test_120_failure_in_body( ):
    ''' An error in the body disconnects all and propagates. '''
    journal = [ ]
    ensembles = _produce( journal, ( 'a', { } ), ( 'b', { } ) )
    with pytest.raises( KeyError ):
        async with invocables.connect_ensembles( ensembles ):
            raise KeyError( 'body' )
    assert not any( ensemble.is_connected( ) for ensemble in ensembles )


@pytest.mark.asyncio
async def test_130_failure_to_disconnect( ):
    ''' One failing to disconnect does not keep the others connected. '''
    journal = [ ]
    ensembles = _produce(
        journal, ( 'a', { } ), ( 'b', { 'stuck': True } ), ( 'c', { } ) )
    with pytest.raises( _Failure, match = 'b stuck' ):
        async with invocables.connect_ensembles( ensembles ): pass
    assert ( 'disconnect', 'a' ) in journal
    assert ( 'disconnect', 'c' ) in journal
    journal.clear( )
    with pytest.raises( KeyError ):
        async with invocables.connect_ensembles( ensembles ):
            raise KeyError( 'body wins' )
    assert ( 'disconnect', 'a' ) in journal


@pytest.mark.asyncio
async def test_140_cancelled_while_connecting( ):
    ''' Cancellation while connecting disconnects what was connected. '''
    journal = [ ]
    reached = asyncio.Event( )
    stall = ( reached, asyncio.Event( ) )
    ensembles = _produce(
        journal, ( 'a', { } ), ( 'b', { 'stall': stall } ), ( 'c', { } ) )

    async def use( ):
        async with invocables.connect_ensembles( ensembles ):
            pytest.fail( 'The body ran.' )

    task = asyncio.create_task( use( ) )
    await asyncio.wait_for( reached.wait( ), _BOUND )
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await task
    assert journal == [
        ( 'connect', 'a' ), ( 'stalling', 'b' ), ( 'disconnect', 'a' ) ]


@pytest.mark.asyncio
async def test_150_local_ensembles( ):
    ''' Local ensembles connect together and run tools meanwhile. '''

    def add( a: int, b: int = 1 ) -> int:
        ''' Adds. '''
        return a + b

    math = invocables.produce_ensemble( 'math', [ add ] )
    other = invocables.produce_ensemble( 'other', [ ] )
    async with invocables.connect_ensembles( ( math, other ) ) as ( m, o ):
        assert m.is_connected( ) and o.is_connected( )
        assert await m.invoke( 'add', { 'a': 1 } ) == (
            invocables.StructureContent( data = 2 ), )
    assert not math.is_connected( ) and not other.is_connected( )
