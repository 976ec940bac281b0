# SPDX-License-Identifier: Apache-2.0

''' Retries of transient failures: per invoker, ensemble and call. '''


import asyncio

import pytest

import invocables

from invocables import exceptions


def _call( identifier = '1', arguments = None, name = 'flaky' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _produce_flaky( failures, exception, **options ):
    ''' Invoker which raises exception for its first failures calls. '''
    attempts = [ ]

    async def flaky( context, arguments ):
        attempts.append( 1 )
        if len( attempts ) <= failures: raise exception
        return f"ok after {len( attempts )}"

    invoker = invocables.FunctionInvoker(
        name = 'flaky', invocable = flaky,
        arguments_schema = {
            'type': 'object', 'properties': { 'n': { 'type': 'integer' } } },
        **options )
    return invoker, attempts


@pytest.mark.asyncio
async def test_100_transience_retried_per_invoker( ):
    ''' 000 [defaults] max_retries: a tool's transience is retried up to
        the invoker's max_retries, then succeeds.
    '''
    invoker, attempts = _produce_flaky(
        2, exceptions.InvocationTransience( 'Busy.' ), max_retries = 3 )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    results = await invocables.execute_invocations( [ _call( ) ], [ ensemble ] )
    assert results[ 0 ].as_text( ) == 'ok after 3'
    assert len( attempts ) == 3


@pytest.mark.asyncio
async def test_110_exhausted_retries_report_error( ):
    ''' When every try fails transiently, the model gets an error result
        with the tool's message.
    '''
    invoker, attempts = _produce_flaky(
        10, exceptions.InvocationTransience( 'Busy.' ) )
    ensemble = invocables.produce_ensemble(
        'tools', [ invoker ], configuration = { 'max_retries': 2 } )
    results = await invocables.execute_invocations( [ _call( ) ], [ ensemble ] )
    assert results[ 0 ].is_error( )
    assert results[ 0 ].error.message == 'Busy.'
    assert len( attempts ) == 3


@pytest.mark.asyncio
async def test_120_per_call_and_precedence( ):
    ''' Per call max_retries applies when invoker and ensemble set none;
        the ensemble's wins over the call's, the invoker's over both.
    '''
    invoker, attempts = _produce_flaky(
        1, ConnectionError( 'lost' ) )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    results = await invocables.execute_invocations(
        [ _call( ) ], [ ensemble ], max_retries = 1 )
    assert results[ 0 ].as_text( ) == 'ok after 2'
    invoker, attempts = _produce_flaky(
        1, exceptions.InvocationTransience( 'Busy.' ) )
    ensemble = invocables.produce_ensemble(
        'tools', [ invoker ], configuration = { 'max_retries': 0 } )
    results = await invocables.execute_invocations(
        [ _call( ) ], [ ensemble ], max_retries = 5 )
    assert results[ 0 ].is_error( )
    assert len( attempts ) == 1
    invoker, attempts = _produce_flaky(
        1, exceptions.InvocationTransience( 'Busy.' ), max_retries = 1 )
    ensemble = invocables.produce_ensemble(
        'tools', [ invoker ], configuration = { 'max_retries': 0 } )
    results = await invocables.execute_invocations(
        [ _call( ) ], [ ensemble ] )
    assert results[ 0 ].as_text( ) == 'ok after 2'


@pytest.mark.asyncio
async def test_130_timeout_retried( ):
    ''' A timeout is transient: the call is retried, and a quick second
        try succeeds.
    '''
    attempts = [ ]
    release = asyncio.Event( )

    async def slow_once( context, arguments ):
        attempts.append( 1 )
        if len( attempts ) == 1: await release.wait( ) # never set: expires
        return 'done'

    invoker = invocables.FunctionInvoker(
        name = 'slow', invocable = slow_once,
        arguments_schema = { 'type': 'object' },
        timeout = 0.05, max_retries = 1 )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    results = await asyncio.wait_for(
        invocables.execute_invocations(
            [ _call( name = 'slow' ) ], [ ensemble ] ), timeout = 10 )
    assert results[ 0 ].as_text( ) == 'done'
    assert len( attempts ) == 2


@pytest.mark.asyncio
async def test_140_invalid_arguments_never_retried( ):
    ''' Invalid arguments are never retried: the model must fix them. '''
    invoker, attempts = _produce_flaky(
        0, None, max_retries = 5 )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    results = await invocables.execute_invocations(
        [ _call( arguments = { 'n': 'two' } ) ], [ ensemble ] )
    assert results[ 0 ].error.genus is invocables.FaultGenera.Invalidity
    assert attempts == [ ]

    async def refuse( context, arguments ):
        attempts.append( 1 )
        raise exceptions.ArgumentsInvalidity( 'refuse', 'n is too big.' )

    refusing = invocables.FunctionInvoker(
        name = 'refuse', invocable = refuse,
        arguments_schema = { 'type': 'object' }, max_retries = 5 )
    ensemble = invocables.produce_ensemble( 'tools', [ refusing ] )
    results = await invocables.execute_invocations(
        [ _call( name = 'refuse' ) ], [ ensemble ] )
    assert results[ 0 ].error.genus is invocables.FaultGenera.Invalidity
    assert attempts == [ 1 ]


@pytest.mark.asyncio
async def test_150_other_failures_not_retried( ):
    ''' Other exceptions of a tool fail fast on the first try. '''
    invoker, attempts = _produce_flaky(
        5, ValueError( 'bug' ), max_retries = 3 )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    with pytest.raises( exceptions.InvocationExecutionFailure ):
        await invocables.execute_invocations( [ _call( ) ], [ ensemble ] )
    assert len( attempts ) == 1


def test_160_invalid_retries_refused( ):
    ''' max_retries must be a whole number from 0. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        _produce_flaky( 0, None, max_retries = -1 )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.EnsembleConfiguration( max_retries = 1.5 )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.produce_ensemble(
            'tools', [ ], configuration = { 'max_retries': True } )
