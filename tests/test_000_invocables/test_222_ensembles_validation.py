# SPDX-License-Identifier: Apache-2.0

''' Checks made when ensembles are produced from Python, at construction. '''


import functools
import math

import pytest

import invocables

from invocables import exceptions


def add( a: int, b: int = 1 ) -> int:
    ''' Adds. '''
    return a + b


@pytest.mark.parametrize(
    'name', [ '', ' ', 'my\ttools', 'srv\n', 'x' * 257, '\ud800', 3 ] )
def test_100_name_rule( name ):
    ''' Names outside the rule are refused, naming the rule. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_ensemble( name, [ add ] )
    message = str( caught.value )
    assert repr( name )[ : 40 ] in message
    assert '1 to 256 printable characters' in message
    assert invocables.produce_ensemble( 'math-2_x', [ add ] ).name == (
        'math-2_x' )


def test_101_constructor_names( ):
    ''' The constructor takes any string, as server names may need. '''
    configuration = invocables.EnsembleConfiguration( )
    assert invocables.LocalEnsemble( 'srv.a', [ ], configuration ).name == (
        'srv.a' )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.LocalEnsemble( 3, [ ], configuration )


@pytest.mark.parametrize(
    'timeout', [ '5', True, 0, -2.5, math.inf, math.nan, { } ] )
def test_110_timeout_refused( timeout ):
    ''' Timeouts other than positive numbers or None are refused at once. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_ensemble(
            'math', [ add ], configuration = { 'timeout': timeout } )
    message = str( caught.value )
    assert "ensemble 'math' key 'timeout'" in message
    assert repr( timeout ) in message
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.EnsembleConfiguration( timeout = timeout )
    assert "'timeout'" in str( caught.value )


def test_111_timeout_accepted( ):
    ''' Positive numbers and None are accepted. '''
    for timeout in ( 5, 0.25, None ):
        configuration = invocables.EnsembleConfiguration( timeout = timeout )
        assert configuration.timeout == timeout


def test_120_unknown_keys( ):
    ''' Unknown keys are refused with suggestions, never internal names. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.EnsembleConfiguration.from_mapping(
            'math', { 'timout': 5 } )
    message = str( caught.value )
    assert "unknown key 'timout'" in message
    assert "Did you mean 'timeout'?" in message
    assert 'description, max_retries, timeout' in message
    assert '_frigid' not in message
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_ensemble(
            'math', [ add ], configuration = { 'colour': 'red' } )
    assert 'Did you mean' not in str( caught.value )
    assert "'colour'" in str( caught.value )


def test_130_description_type( ):
    ''' A description which is not a string is refused. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_ensemble(
            'math', [ add ], configuration = { 'description': 3 } )
    assert "'description'" in str( caught.value )


def test_140_members( ):
    ''' Ensembles take invokers and callables; other objects are refused. '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_ensemble( 'math', [ add, 42 ] )
    assert '42' in str( caught.value )
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_ensemble(
            'math', [ functools.partial( add, b = 2 ) ] )
    assert "pass 'name'" in str( caught.value )
    ensemble = invocables.produce_ensemble( 'math', [
        invocables.produce_invoker(
            functools.partial( add, b = 2 ), name = 'add_two' ) ] )
    assert ensemble.access_invoker( 'add_two' ).name == 'add_two'
