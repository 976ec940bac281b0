# SPDX-License-Identifier: Apache-2.0

''' Deduplication strategies of the design documents; result caching. '''


import json

import pytest

import invocables

from invocables import exceptions


class _Clock:
    ''' Clock which moves only when told. '''

    def __init__( self ): self.now = 1000.0

    def __call__( self ): return self.now


def _call( identifier, arguments, name = 'lookup' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


def _produce_ensemble( counts, deduplicator ):
    async def lookup( context, arguments ):
        key = arguments[ 'key' ]
        counts[ key ] = counts.get( key, 0 ) + 1
        return f"value of {key} #{counts[ key ]}"

    invoker = invocables.FunctionInvoker(
        name = 'lookup', invocable = lookup,
        arguments_schema = {
            'type': 'object', 'properties': { 'key': { 'type': 'string' } } },
        deduplicator = deduplicator )
    return invocables.produce_ensemble( 'store', [ invoker ] )


async def _run( ensemble, arguments, namespace, identifier = '1' ):
    results = await invocables.execute_invocations(
        [ _call( identifier, arguments ) ], [ ensemble ],
        namespace = namespace )
    return results[ 0 ].as_text( )


def test_100_exact_protocol_methods( ):
    ''' 001 Deduplicator: ExactDeduplicator answers is_duplicate after
        record, for the same name and equal arguments only.
    '''
    deduplicator = invocables.ExactDeduplicator( )
    assert not deduplicator.is_duplicate( 'read_file', { 'path': '/a' } )
    deduplicator.record( 'read_file', { 'path': '/a' } )
    assert deduplicator.is_duplicate( 'read_file', { 'path': '/a' } )
    assert not deduplicator.is_duplicate( 'read_file', { 'path': '/b' } )
    assert not deduplicator.is_duplicate( 'write_file', { 'path': '/a' } )


def test_110_time_window_protocol_methods( ):
    ''' 001 Deduplicator, time window: a record counts within the window
        only.
    '''
    clock = _Clock( )
    deduplicator = invocables.TimeWindowDeduplicator(
        seconds = 30, clock = clock )
    deduplicator.record( 'read_file', { 'path': '/a' } )
    clock.now += 29
    assert deduplicator.is_duplicate( 'read_file', { 'path': '/a' } )
    clock.now += 2
    assert not deduplicator.is_duplicate( 'read_file', { 'path': '/a' } )


def test_120_invalid_strategies( ):
    ''' Strategies refuse missing or invalid bounds and keys. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.TimeWindowDeduplicator( )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.TimeWindowDeduplicator( seconds = 0 )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.ResultCache( maximum = 1.5 )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.SemanticDeduplicator( )


@pytest.mark.asyncio
async def test_200_users_deduplicator( ):
    ''' 001 Deduplicator: a deduplicator the user writes from the protocol
        (is_duplicate, record), attached to an invoker, is consulted by the
        engine; a duplicate reuses the earlier result.
    '''
    class ExactDeduplicator:
        ''' As 001 writes it. '''

        def __init__( self ): self._history = set( )

        def is_duplicate( self, name, arguments ):
            key = ( name, json.dumps( arguments, sort_keys = True ) )
            return key in self._history

        def record( self, name, arguments ):
            key = ( name, json.dumps( arguments, sort_keys = True ) )
            self._history.add( key )

    counts = { }
    deduplicator = ExactDeduplicator( )
    ensemble = _produce_ensemble( counts, deduplicator )
    namespace = { }
    first = await _run( ensemble, { 'key': 'k' }, namespace )
    second = await _run( ensemble, { 'key': 'k' }, namespace, '2' )
    assert counts == { 'k': 1 }
    assert first == second == 'value of k #1'
    assert deduplicator.is_duplicate( 'lookup', { 'key': 'k' } )
    # Its history says duplicate; a new conversation has no result to
    # reuse, and is told so instead of running again.
    third = await _run( ensemble, { 'key': 'k' }, { }, '3' )
    assert counts == { 'k': 1 }
    assert 'already called' in third


@pytest.mark.asyncio
async def test_210_time_window_runs_again_outside( ):
    ''' 001 Deduplicator, time window: a repeat within the window reuses
        the result; a repeat outside it runs again.
    '''
    clock = _Clock( )
    counts = { }
    ensemble = _produce_ensemble(
        counts,
        invocables.TimeWindowDeduplicator( seconds = 10, clock = clock ) )
    namespace = { }
    assert await _run( ensemble, { 'key': 'k' }, namespace ) == (
        'value of k #1' )
    clock.now += 9
    assert await _run( ensemble, { 'key': 'k' }, namespace ) == (
        'value of k #1' )
    clock.now += 11
    assert await _run( ensemble, { 'key': 'k' }, namespace ) == (
        'value of k #2' )
    assert counts == { 'k': 2 }


@pytest.mark.asyncio
async def test_220_result_cache_time_to_live_and_bound( ):
    ''' 000 Phase 2, result caching: results live for their time to live,
        and at most ``maximum`` of them, least recently used first out.
    '''
    clock = _Clock( )
    counts = { }
    ensemble = _produce_ensemble(
        counts,
        invocables.ResultCache( seconds = 60, maximum = 2, clock = clock ) )
    namespace = { }
    for key in ( 'a', 'b', 'a', 'c' ): # 'b' is least recently used
        await _run( ensemble, { 'key': key }, namespace )
    assert counts == { 'a': 1, 'b': 1, 'c': 1 }
    await _run( ensemble, { 'key': 'b' }, namespace )
    assert counts[ 'b' ] == 2
    await _run( ensemble, { 'key': 'c' }, namespace )
    assert counts[ 'c' ] == 1
    clock.now += 61
    await _run( ensemble, { 'key': 'c' }, namespace )
    assert counts[ 'c' ] == 2


@pytest.mark.asyncio
async def test_230_result_cache_namespaces_and_sharing( ):
    ''' 000 Phase 2, result caching: per conversation namespace by
        default; shared by all namespaces when asked.
    '''
    counts = { }
    own = _produce_ensemble( counts, invocables.ResultCache( ) )
    await _run( own, { 'key': 'k' }, { } )
    await _run( own, { 'key': 'k' }, { } )
    assert counts == { 'k': 2 }
    counts.clear( )
    shared = _produce_ensemble(
        counts, invocables.ResultCache( shared = True ) )
    await _run( shared, { 'key': 'k' }, { } )
    assert await _run( shared, { 'key': 'k' }, { } ) == 'value of k #1'
    assert counts == { 'k': 1 }


@pytest.mark.asyncio
async def test_240_semantic_key_function( ):
    ''' 001 Deduplicator, semantic match: similar arguments, by a key
        function of the user, are duplicates.
    '''
    counts = { }
    deduplicator = invocables.SemanticDeduplicator(
        key = lambda name, arguments: (
            name, arguments[ 'key' ].strip( ).casefold( ) ) )
    ensemble = _produce_ensemble( counts, deduplicator )
    namespace = { }
    await _run( ensemble, { 'key': 'Paris' }, namespace )
    assert await _run( ensemble, { 'key': ' paris ' }, namespace ) == (
        'value of Paris #1' )
    assert counts == { 'Paris': 1 }
    assert not deduplicator.is_duplicate( 'lookup', { 'key': 'PARIS' } )
    deduplicator.record( 'lookup', { 'key': 'paris' } )
    assert deduplicator.is_duplicate( 'lookup', { 'key': 'PARIS' } )


@pytest.mark.asyncio
async def test_250_errors_not_cached( ):
    ''' An error result is never reused: the call runs again. '''
    runs = [ ]

    async def flaky( context, arguments ):
        runs.append( 1 )
        if len( runs ) == 1:
            raise exceptions.InvocationRefusal( 'Try again.' )
        return 'fine'

    invoker = invocables.FunctionInvoker(
        name = 'lookup', invocable = flaky,
        arguments_schema = { 'type': 'object' },
        deduplicator = invocables.ResultCache( ) )
    ensemble = invocables.produce_ensemble( 'store', [ invoker ] )
    namespace = { }
    assert 'Try again.' in await _run( ensemble, { }, namespace )
    assert await _run( ensemble, { }, namespace ) == 'fine'
    assert await _run( ensemble, { }, namespace ) == 'fine'
    assert len( runs ) == 2
