# SPDX-License-Identifier: Apache-2.0

''' Seconds of the server options (connect and list timeouts, grace,
    debounce) checked when given: nothing which could wait without end,
    nor overflow, reaches a connection.
'''


import sys

import pytest

import invocables.mcp

from invocables import exceptions

from . import mcp_support


_TIMEOUTS = ( 'connect_timeout', 'list_timeout' )
_PAUSES = ( 'grace', 'debounce' )
_BAD = (
    float( 'inf' ), float( 'nan' ), -1.0, -1e-9, 10 ** 400, True, '5',
    None )


def _produce_echo( **options ):
    return invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ), **options )


@pytest.mark.parametrize( 'value', _BAD )
@pytest.mark.parametrize( 'field', ( *_TIMEOUTS, 'grace' ) )
def test_100_keywords_refused( field, value ):
    ''' A bad value given as keyword is refused when the ensemble is
        made, naming the ensemble and the option.

        Before, infinity, NaN and negatives were taken, and connecting or
        disconnecting never ended.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        _produce_echo( **{ field: value } )
    assert caught.value.location == f"MCP ensemble 'echo' {field!r}"
    assert 'finite number of seconds' in caught.value.reason


@pytest.mark.parametrize( 'value', _BAD )
@pytest.mark.parametrize( 'field', ( *_TIMEOUTS, *_PAUSES ) )
def test_110_record_refused( field, value ):
    ''' The options record refuses a bad value when made, so that no
        ensemble (made by any means) holds one.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.mcp.ServerOptions( **{ field: value } )
    assert caught.value.location == f"MCP server options {field!r}"


def test_120_zero_timeouts_refused_zero_pauses_taken( ):
    ''' A timeout of zero is refused; a grace or debounce of zero (no
        pause) is taken.
    '''
    for field in _TIMEOUTS:
        with pytest.raises( exceptions.ConfigurationInvalidity ):
            _produce_echo( **{ field: 0 } )
    options = invocables.mcp.ServerOptions( grace = 0, debounce = 0.0 )
    assert ( options.grace, options.debounce ) == ( 0, 0 )
    ensemble = _produce_echo( grace = 0 )
    assert ensemble.options.grace == 0


@pytest.mark.parametrize( 'value', [ 0.5, 3, 1e300, sys.float_info.max ] )
def test_130_finite_values_taken( value ):
    ''' Every positive, finite number of seconds is taken. '''
    options = invocables.mcp.ServerOptions(
        connect_timeout = value, list_timeout = value, grace = value,
        debounce = value )
    assert options.connect_timeout == value
    ensemble = _produce_echo( options = options, connect_timeout = 2 )
    assert ensemble.options.connect_timeout == 2
    assert ensemble.options.grace == value


def test_140_timeouts_and_limit_of_record_refused( ):
    ''' Timeouts of tools and the result limit are checked in the record
        too, not only when given as keywords.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.mcp.ServerOptions( timeouts = { 'slow': float( 'inf' ) } )
    assert caught.value.location == "MCP server options 'timeouts'['slow']"
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.mcp.ServerOptions( result_limit = 0 )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        _produce_echo( timeouts = { 'slow': -1 } )
    assert caught.value.location == "MCP ensemble 'echo' 'timeouts'['slow']"
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        _produce_echo( result_limit = 1.5 )
    assert caught.value.location == "MCP ensemble 'echo' 'result_limit'"


@pytest.mark.asyncio
async def test_150_valid_options_connect( ):
    ''' Options checked so still connect, call and disconnect. '''
    ensemble = _produce_echo(
        connect_timeout = 20, list_timeout = 20, grace = 0.5 )
    async with ensemble:
        assert 'echo' in ensemble.invokers
