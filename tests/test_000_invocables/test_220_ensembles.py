# SPDX-License-Identifier: Apache-2.0

''' Local ensembles: grouping, lifecycle, lookup, configuration. '''


import pytest

import invocables

from invocables import exceptions


def add( a: int, b: int = 1 ) -> int:
    ''' Adds. '''
    return a + b


def negate( a: int ) -> int:
    ''' Negates. '''
    return -a


@pytest.mark.asyncio
async def test_100_async_context( ):
    ''' Ensemble connects on entry and disconnects on exit. '''
    ensemble = invocables.produce_ensemble( 'math', [ add, negate ] )
    assert not ensemble.is_connected( )
    async with ensemble as entered:
        assert entered is ensemble
        assert ensemble.is_connected( )
    assert not ensemble.is_connected( )


def test_110_functions_and_invokers( ):
    ''' Ensembles take typed functions and invokers, binding them. '''
    invoker = invocables.produce_invoker( negate )
    ensemble = invocables.produce_ensemble( 'math', [ add, invoker ] )
    names = [ item.name for item in ensemble.survey_invokers( ) ]
    assert names == [ 'add', 'negate' ]
    assert ensemble.access_invoker( 'negate' ).ensemble.name == 'math'
    assert invocables.__.is_absent( invoker.ensemble )
    assert ensemble.survey_invokers( ) is ensemble.survey_invokers( )


def test_120_unknown_invoker( ):
    ''' Unknown names raise the absence error, naming ensemble and tool. '''
    ensemble = invocables.produce_ensemble( 'math', [ add ] )
    with pytest.raises( exceptions.InvokerAbsence ) as caught:
        ensemble.access_invoker( 'divide' )
    assert isinstance( caught.value, LookupError )
    assert "'divide'" in str( caught.value )
    assert "'math'" in str( caught.value )


def test_130_duplicate_names( ):
    ''' Two invokers with one name in one ensemble are refused. '''
    with pytest.raises( exceptions.EnsemblesInvalidity ) as caught:
        invocables.produce_ensemble(
            'math', [ add, invocables.produce_invoker( negate, name = 'add' ) ] )
    assert "'add'" in str( caught.value )


def test_140_configuration( ):
    ''' Configuration comes from a mapping; unknown keys are refused. '''
    ensemble = invocables.produce_ensemble(
        'math', [ add ], configuration = { 'timeout': 5 } )
    assert ensemble.configuration.timeout == 5
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_ensemble(
            'math', [ add ], configuration = { 'timout': 5 } )
    assert 'timout' in str( caught.value )
    assert 'timeout' in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.produce_ensemble(
            'math', [ add ], configuration = { 'timeout': -1 } )
    configuration = invocables.EnsembleConfiguration( timeout = None )
    ensemble = invocables.produce_ensemble(
        'math', [ add ], configuration = configuration )
    assert ensemble.configuration.timeout is None


def test_150_repr( ):
    ''' Representation names the ensemble and counts its tools. '''
    ensemble = invocables.produce_ensemble( 'math', [ add, negate ] )
    assert repr( ensemble ) == "LocalEnsemble( name = 'math', invokers = 2 )"
