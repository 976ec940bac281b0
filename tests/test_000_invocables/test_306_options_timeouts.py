# SPDX-License-Identifier: Apache-2.0

''' Timeouts of the execution options at the edges of the floats: an
    integer no float holds is refused as invalid, like any bad timeout.
'''


import sys

import pytest

import invocables

from invocables import exceptions, execution
from invocables.processors import produce_processor


def echo( text: str ) -> str:
    ''' Echoes. '''
    return text


def _produce_call( ):
    return invocables.InvocationCanister(
        identifier = 'a', name = 'echo', arguments = { 'text': 'x' } )


_HUGE = 10 ** 400 # compares below infinity, yet no float holds it


def test_100_huge_integer_refused( ):
    ''' An integer timeout beyond the floats is a configuration invalidity
        when the options are made, not an overflow later.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.ExecutionOptions( timeout = _HUGE )
    assert caught.value.location == 'timeout'
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.ExecutionOptions( timeout = -_HUGE )


@pytest.mark.asyncio
async def test_110_huge_integer_refused_by_entry_points( ):
    ''' The engine's function and a processor's refuse it alike, before
        any tool runs.
    '''
    ensembles = [ invocables.produce_ensemble( 'tools', [ echo ] ) ]
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        await invocables.execute_invocations(
            [ _produce_call( ) ], ensembles, timeout = _HUGE )
    processor = produce_processor( 'openai' )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        await processor.execute_invocations(
            [ _produce_call( ) ], ensembles, timeout = _HUGE )


@pytest.mark.parametrize( 'timeout', [
    sys.float_info.max, 10 ** 308, 1e300, 60, 30.5 ] )
@pytest.mark.asyncio
async def test_120_finite_timeouts_run( timeout ):
    ''' Every timeout a float holds, up to the largest, runs the call.
        (Short timeouts are left out: a busy machine may trip them.)
    '''
    ensembles = [ invocables.produce_ensemble( 'tools', [ echo ] ) ]
    results = await invocables.execute_invocations(
        [ _produce_call( ) ], ensembles, timeout = timeout )
    assert results[ 0 ].content == ( invocables.TextContent( text = 'x' ), )


@pytest.mark.parametrize( 'timeout', [
    float( 'inf' ), float( 'nan' ), 0, -1e-9, True, '5' ] )
def test_130_other_timeouts_refused( timeout ):
    ''' Infinity, NaN, zero, negatives, booleans and text stay refused. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.ExecutionOptions( timeout = timeout )


@pytest.mark.parametrize( 'field', [
    'arguments_depth_maximum', 'results_size_maximum' ] )
def test_140_values_too_long_to_print_shown_bounded( field ):
    ''' An integer of more digits than Python prints (-10**5000), or a long
        text, given as a bound is refused with the library's error, which
        shows it within bounds: never the whole value, nor a raw
        ValueError.
    '''
    for value in ( -( 10 ** 5000 ), 'x' * 100_000 ):
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            execution.Limits( **{ field: value } )
        assert len( str( caught.value ) ) < 400
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        execution.Limits( **{ field: -( 10 ** 5000 ) } )
    assert 'integer of about 5000 digits' in str( caught.value )
