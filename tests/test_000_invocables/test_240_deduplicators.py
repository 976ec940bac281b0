# SPDX-License-Identifier: Apache-2.0

''' Deduplication of repeated invocations, opt-in per invoker. '''


import asyncio

import pytest

import invocables

from invocables.execution import deduplicators


def _call( identifier, name, arguments ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


def _counting_ensemble( counts, deduplicate = True, delay = 0.0 ):
    async def lookup( key: str ) -> str:
        counts[ key ] = counts.get( key, 0 ) + 1
        await asyncio.sleep( delay )
        if key == 'bad': raise invocables.exceptions.InvocationRefusal( 'No.' )
        return f"value of {key}"

    deduplicator = (
        invocables.ExactDeduplicator( ) if deduplicate
        else invocables.__.absent )
    return invocables.produce_ensemble( 'store', [
        invocables.produce_invoker( lookup, deduplicator = deduplicator ) ] )


def test_100_canonical_json( ):
    ''' Canonical JSON sorts keys and drops whitespace. '''
    assert deduplicators.produce_canonical_json(
        { 'b': [ 1, { 'y': 2, 'x': 1 } ], 'a': 'é' } ) == (
        '{"a":"é","b":[1,{"x":1,"y":2}]}' )


def test_110_signatures( ):
    ''' Same name and equal arguments give equal signatures. '''
    deduplicator = invocables.ExactDeduplicator( )
    one = deduplicator.produce_signature( 't', { 'a': 1, 'b': 2 } )
    two = deduplicator.produce_signature( 't', { 'b': 2, 'a': 1 } )
    assert one == two
    assert one != deduplicator.produce_signature( 'u', { 'a': 1, 'b': 2 } )
    assert one != deduplicator.produce_signature( 't', { 'a': 1, 'b': 3 } )


@pytest.mark.asyncio
async def test_200_reuse_within_namespace( ):
    ''' A duplicate in the same namespace reuses the earlier result. '''
    counts = { }
    ensemble = _counting_ensemble( counts )
    namespace = { }
    first = await invocables.execute_invocations(
        [ _call( '1', 'lookup', { 'key': 'k' } ) ], [ ensemble ],
        namespace = namespace )
    second = await invocables.execute_invocations(
        [ _call( '2', 'lookup', { 'key': 'k' } ) ], [ ensemble ],
        namespace = namespace )
    assert counts == { 'k': 1 }
    assert second[ 0 ].content == first[ 0 ].content
    assert second[ 0 ].invocation_id == '2'
    await invocables.execute_invocations(
        [ _call( '3', 'lookup', { 'key': 'k' } ) ], [ ensemble ],
        namespace = { } )
    assert counts == { 'k': 2 }


@pytest.mark.asyncio
async def test_210_in_flight_run_once( ):
    ''' Identical invocations in flight at once run once. '''
    counts = { }
    ensemble = _counting_ensemble( counts, delay = 0.05 )
    results = await invocables.execute_invocations(
        [ _call( str( index ), 'lookup', { 'key': 'k' } )
          for index in range( 5 ) ], [ ensemble ] )
    assert counts == { 'k': 1 }
    assert [ result.invocation_id for result in results ] == [
        '0', '1', '2', '3', '4' ]
    assert len( { result.content for result in results } ) == 1


@pytest.mark.asyncio
async def test_220_errors_not_reused( ):
    ''' Error results are not reused by later invocations. '''
    counts = { }
    ensemble = _counting_ensemble( counts )
    namespace = { }
    for identifier in ( '1', '2' ):
        results = await invocables.execute_invocations(
            [ _call( identifier, 'lookup', { 'key': 'bad' } ) ],
            [ ensemble ], namespace = namespace )
        assert results[ 0 ].is_error( )
    assert counts == { 'bad': 2 }


@pytest.mark.asyncio
async def test_230_opt_in_only( ):
    ''' Invokers without a deduplicator run every time. '''
    counts = { }
    ensemble = _counting_ensemble( counts, deduplicate = False )
    namespace = { }
    await invocables.execute_invocations(
        [ _call( '1', 'lookup', { 'key': 'k' } ),
          _call( '2', 'lookup', { 'key': 'k' } ) ],
        [ ensemble ], namespace = namespace )
    assert counts == { 'k': 2 }


@pytest.mark.asyncio
async def test_240_in_flight_failure_shared( ):
    ''' A failure of the one running call fails its duplicates too. '''

    runs = [ ]

    async def explode( key: str ) -> str:
        runs.append( key )
        await asyncio.sleep( 0.02 )
        raise ValueError( key )

    ensemble = invocables.produce_ensemble( 'store', [
        invocables.produce_invoker(
            explode, deduplicator = invocables.ExactDeduplicator( ) ) ] )
    namespace = { }
    with pytest.raises( invocables.exceptions.InvocationExecutionFailure ):
        await invocables.execute_invocations(
            [ _call( '1', 'explode', { 'key': 'k' } ),
              _call( '2', 'explode', { 'key': 'k' } ) ],
            [ ensemble ], namespace = namespace )
    assert runs == [ 'k' ]
    with pytest.raises( invocables.exceptions.InvocationExecutionFailure ):
        await invocables.execute_invocations(
            [ _call( '3', 'explode', { 'key': 'k' } ) ],
            [ ensemble ], namespace = namespace )
    assert runs == [ 'k', 'k' ] # the failure was not kept


class _Unhashable:
    ''' Deduplicator whose signatures are lists, which cannot be hashed. '''

    def produce_signature( self, name, arguments ):
        return [ name ]


class _Exploding:
    ''' Deduplicator which raises. '''

    def produce_signature( self, name, arguments ):
        raise LookupError( 'broken deduplicator' )


@pytest.mark.asyncio
async def test_300_arguments_of_any_shape_deduplicated( ):
    ''' Mappings and tuples in arguments deduplicate like their JSON. '''
    import types

    import frigid
    counts = { }

    async def count( context, arguments ):
        key = arguments[ 'key' ][ 0 ]
        counts[ key ] = counts.get( key, 0 ) + 1
        return key

    ensemble = invocables.produce_ensemble( 'store', [
        invocables.produce_invoker(
            count, name = 'count', arguments_schema = { 'type': 'object' },
            deduplicator = invocables.ExactDeduplicator( ) ) ] )
    results = await invocables.execute_invocations( [
        _call( '1', 'count', frigid.Dictionary( key = ( 'k', ) ) ),
        _call( '2', 'count', types.MappingProxyType( { 'key': [ 'k' ] } ) ),
        _call( '3', 'count', { 'key': [ 'k' ], 'odd': { 1 } } ),
    ], [ ensemble ], namespace = { } )
    assert counts == { 'k': 1 }
    assert [ result.as_text( ) for result in results[ : 2 ] ] == [ 'k', 'k' ]
    assert results[ 2 ].error.genus is invocables.FaultGenera.Invalidity


@pytest.mark.asyncio
async def test_310_deduplicators_which_fail( ):
    ''' A deduplicator which raises, or gives unhashable signatures, fails
        its invocation as a tool would: the library's failure, or an error
        result under the report policy.
    '''
    async def run( context, arguments ): return 'ran'

    ensemble = invocables.produce_ensemble( 'store', [
        invocables.produce_invoker(
            run, name = 'unhashable', arguments_schema = { 'type': 'object' },
            deduplicator = _Unhashable( ) ),
        invocables.produce_invoker(
            run, name = 'exploding', arguments_schema = { 'type': 'object' },
            deduplicator = _Exploding( ) ) ] )
    for name in ( 'unhashable', 'exploding' ):
        with pytest.raises(
            invocables.exceptions.InvocationExecutionFailure
        ) as caught:
            await invocables.execute_invocations(
                [ _call( '1', name, { } ), _call( '2', name, { } ) ],
                [ ensemble ] )
        assert isinstance( caught.value.__cause__, ( TypeError, LookupError ) )
    results = await invocables.execute_invocations(
        [ _call( '1', 'unhashable', { } ), _call( '2', 'exploding', { } ) ],
        [ ensemble ],
        failure_policy = invocables.FailurePolicies.Report )
    assert all(
        result.error.genus is invocables.FaultGenera.Failure
        for result in results )
