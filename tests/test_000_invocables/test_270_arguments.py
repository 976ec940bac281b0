# SPDX-License-Identifier: Apache-2.0

''' Arguments of every shape: accepted as JSON objects, or refused clearly. '''


import types

import frigid
import pytest

import invocables

from invocables import FailurePolicies, FaultGenera, exceptions


_SCHEMA_TREE = {
    'type': 'object',
    'properties': { 'node': { '$ref': '#/$defs/node' } },
    '$defs': {
        'node': {
            'type': 'object',
            'properties': { 'child': { '$ref': '#/$defs/node' } },
        },
    },
}


def _call( identifier, name, arguments ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


async def _echo( context, arguments ):
    return dict( arguments )


def _produce_ensemble( ):
    echo = invocables.produce_invoker(
        _echo, name = 'echo', arguments_schema = { 'type': 'object' } )
    tree = invocables.produce_invoker(
        _echo, name = 'tree', arguments_schema = _SCHEMA_TREE )

    def greet( name: str, times: int = 1 ) -> str:
        ''' Greets. '''
        return ' '.join( [ f"Hello, {name}." ] * times )

    return invocables.produce_ensemble( 'tools', [ echo, tree, greet ] )


def _nest( depth ):
    node = { }
    for _ in range( depth - 1 ): node = { 'child': node }
    return { 'node': node }


@pytest.mark.asyncio
async def test_100_mappings_accepted( ):
    ''' Arguments given as any mapping (frigid Dictionary, mapping proxy),
        nested ones too, are JSON objects.
    '''
    results = await invocables.execute_invocations( [
        _call( 'a', 'greet', frigid.Dictionary( name = 'Ada' ) ),
        _call( 'b', 'greet', types.MappingProxyType(
            { 'name': 'Bo', 'times': 2 } ) ),
        _call( 'c', 'echo', frigid.Dictionary(
            inner = types.MappingProxyType( { 'list': ( 1, 2 ) } ) ) ),
    ], [ _produce_ensemble( ) ] )
    assert results[ 0 ].as_text( ) == 'Hello, Ada.'
    assert results[ 1 ].as_text( ) == 'Hello, Bo. Hello, Bo.'
    assert results[ 2 ].content[ 0 ].data == { 'inner': { 'list': [ 1, 2 ] } }


@pytest.mark.asyncio
async def test_110_invoker_accepts_mappings( ):
    ''' Invokers called directly accept any mapping too. '''
    ensemble = _produce_ensemble( )
    invoker = ensemble.access_invoker( 'greet' )
    assert invoker.validate_arguments(
        frigid.Dictionary( name = 'Cy' ) ) == { 'name': 'Cy' }
    assert ensemble.access_invoker( 'echo' ).validate_arguments(
        None ) == { }
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        invoker.validate_arguments( [ 'Cy' ] )


@pytest.mark.asyncio
async def test_120_shapes_which_are_not_objects_refused( ):
    ''' Arrays, text and numbers as arguments are error results which say
        what was sent; None is an empty object.
    '''
    results = await invocables.execute_invocations( [
        _call( 'a', 'echo', [ 1, 2 ] ),
        _call( 'b', 'echo', 'text' ),
        _call( 'c', 'echo', 3 ),
        _call( 'd', 'echo', None ),
    ], [ _produce_ensemble( ) ] )
    for result, genus in zip( results[ : 3 ], ( 'array', 'string', 'number' ) ):
        assert result.error.genus is FaultGenera.Invalidity
        assert f"must be a JSON object, not a JSON {genus}" in (
            result.error.message )
    assert results[ 3 ].content[ 0 ].data == { }


@pytest.mark.asyncio
async def test_130_keys_and_values_which_are_not_json( ):
    ''' Keys which are numbers become text, as in JSON; other keys and
        values which are not JSON are error results, naming where.
    '''
    results = await invocables.execute_invocations( [
        _call( 'a', 'echo', { 1: 'one', 'two': { 2: 'deep' } } ),
        _call( 'b', 'echo', { ( 1, 2 ): 'pair' } ),
        _call( 'c', 'echo', { 'outer': { 'set': { 1 } } } ),
        _call( 'd', 'echo', { 'outer': [ object( ) ] } ),
    ], [ _produce_ensemble( ) ] )
    assert results[ 0 ].content[ 0 ].data == {
        '1': 'one', 'two': { '2': 'deep' } }
    assert 'key of type tuple' in results[ 1 ].error.message
    assert "at 'outer.set'" in results[ 2 ].error.message
    assert "at 'outer[0]'" in results[ 3 ].error.message
    assert all(
        result.error.genus is FaultGenera.Invalidity
        for result in results[ 1 : ] )


@pytest.mark.asyncio
async def test_140_deep_arguments_are_invalid( ):
    ''' Arguments nested 300 deep under a recursive schema are an
        invalid-arguments result, not a RecursionError of the batch.
    '''
    results = await invocables.execute_invocations( [
        _call( 'a', 'tree', _nest( 300 ) ),
        _call( 'b', 'tree', _nest( 10 ) ),
    ], [ _produce_ensemble( ) ], failure_policy = FailurePolicies.Raise )
    assert results[ 0 ].error.genus is FaultGenera.Invalidity
    assert 'nested deeper than the limit of 64 levels' in (
        results[ 0 ].error.message )
    assert not results[ 1 ].is_error( )


@pytest.mark.asyncio
async def test_150_deep_arguments_for_invoker_called_directly( ):
    ''' A validator called directly refuses arguments nested too deeply for
        its schema, rather than raising RecursionError.
    '''
    ensemble = _produce_ensemble( )
    invoker = ensemble.access_invoker( 'tree' )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        invoker.validate_arguments( _nest( 2000 ) )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        invoker.validate_arguments( frigid.Dictionary( _nest( 300 ) ) )


@pytest.mark.asyncio
async def test_160_limits_configurable( ):
    ''' Depth and size of arguments are bounded as configured. '''
    limits = invocables.execution.Limits(
        arguments_depth_maximum = 3, arguments_size_maximum = 100 )
    results = await invocables.execute_invocations( [
        _call( 'a', 'echo', { 'text': 'x' * 200 } ),
        _call( 'b', 'echo', { 'a': { 'b': { 'c': { } } } } ),
        _call( 'c', 'echo', { 'a': { 'b': { } } } ),
    ], [ _produce_ensemble( ) ], limits = limits )
    assert 'larger than the limit of 100 characters' in (
        results[ 0 ].error.message )
    assert 'limit of 3 levels' in results[ 1 ].error.message
    assert not results[ 2 ].is_error( )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.execution.Limits( arguments_depth_maximum = 0 )
