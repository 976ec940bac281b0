# SPDX-License-Identifier: Apache-2.0

''' Sync tools run on their own bounded daemon threads. '''


import asyncio
import contextvars
import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import invocables

from invocables import FaultGenera, exceptions


# More blockers than the default executor of asyncio has threads here
# (min( 32, cores + 4 )), fewer than the engine's default concurrency
# and the threads for sync tools.
_BLOCKERS = min( 15, min( 32, ( os.cpu_count( ) or 1 ) + 4 ) + 1 )
_SECONDS_MAXIMUM = 60


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _run_script( source, **environment ):
    ''' Runs Python source in a fresh interpreter; returns its output. '''
    completed = subprocess.run(
        [ sys.executable, '-c', textwrap.dedent( source ) ],
        capture_output = True, text = True, timeout = _SECONDS_MAXIMUM,
        env = { **os.environ, **environment }, check = False )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@pytest.mark.asyncio
async def test_100_blocking_sync_tools_starve_nothing( ):
    ''' Blocking sync tools do not keep fast sync tools from starting, nor
        async tools from using the default executor.
    '''
    release = threading.Event( )

    def block( ) -> str:
        ''' Blocks until released. '''
        release.wait( )
        return 'released'

    def quick( ) -> str:
        ''' Returns at once. '''
        return 'quick'

    async def offload( ) -> str:
        ''' Uses the default executor. '''
        return await asyncio.to_thread( lambda: 'offloaded' )

    ensemble = invocables.produce_ensemble(
        'tools', [ block, quick, offload ], configuration = { 'timeout': 2 } )
    invocations = [
        _call( f"b{index}", 'block' ) for index in range( _BLOCKERS ) ]
    invocations += [ _call( 'q', 'quick' ), _call( 'o', 'offload' ) ]
    try:
        results = await invocables.execute_invocations(
            invocations, [ ensemble ] )
    finally: release.set( )
    assert results[ -2 ].as_text( ) == 'quick', results[ -2 ].error
    assert results[ -1 ].as_text( ) == 'offloaded', results[ -1 ].error
    assert all(
        result.error.genus is FaultGenera.Timeout
        for result in results[ : _BLOCKERS ] )


@pytest.mark.asyncio
async def test_110_timed_out_sync_tool_reported_abandoned( ):
    ''' A timed-out sync tool is reported as abandoned (its thread cannot be
        stopped), and its thread goes on to its end.
    '''
    release = threading.Event( )
    finished = threading.Event( )

    def block( ) -> str:
        ''' Blocks until released. '''
        release.wait( )
        finished.set( )
        return 'released'

    ensemble = invocables.produce_ensemble(
        'tools', [ block ], configuration = { 'timeout': 0.1 } )
    try:
        results = await invocables.execute_invocations(
            [ _call( 'a', 'block' ) ], [ ensemble ] )
        assert not finished.is_set( )
    finally: release.set( )
    assert await asyncio.to_thread( finished.wait, _SECONDS_MAXIMUM )
    assert results[ 0 ].error.genus is FaultGenera.Timeout
    assert 'abandoned' in results[ 0 ].error.message
    assert 'was cancelled' not in results[ 0 ].error.message


def test_120_timed_out_sync_tool_does_not_block_exit( ):
    ''' asyncio.run and the interpreter exit although a timed-out sync tool
        never returns.
    '''
    output = _run_script( '''
        import asyncio, threading
        import invocables

        def block( ) -> str:
            threading.Event( ).wait( )
            return 'never'

        async def main( ):
            ensemble = invocables.produce_ensemble(
                'tools', [ block ], configuration = { 'timeout': 0.1 } )
            results = await invocables.execute_invocations( [
                invocables.InvocationCanister(
                    identifier = 'a', name = 'block', arguments = { } ) ],
                [ ensemble ] )
            return results[ 0 ].error.genus.value

        print( asyncio.run( main( ) ) )
        print( 'exited' )
    ''' )
    assert output.split( ) == [ 'timeout', 'exited' ]


def test_130_queued_sync_tool_withdrawn( ):
    ''' With every thread busy, a sync tool which times out before it
        starts is reported so, and never starts later.
    '''
    output = _run_script( '''
        import asyncio, json, threading
        import invocables

        release = threading.Event( )
        started = [ ]

        def block( ) -> str:
            release.wait( )
            return 'released'

        def late( ) -> str:
            started.append( 'late' )
            return 'late'

        def last( ) -> str:
            return 'last'

        async def main( ):
            ensemble = invocables.produce_ensemble(
                'tools', [ block, late, last ],
                configuration = { 'timeout': 0.5 } )
            calls = [
                invocables.InvocationCanister(
                    identifier = name, name = name, arguments = { } )
                for name in ( 'block', 'late' ) ]
            results = await invocables.execute_invocations(
                calls, [ ensemble ] )
            release.set( )
            final = await invocables.execute_invocations( [
                invocables.InvocationCanister(
                    identifier = 'last', name = 'last', arguments = { } ) ],
                [ ensemble ] )
            return [
                results[ 1 ].error.message, started, final[ 0 ].as_text( ),
                invocables.execution.workers.access_threads_maximum( ) ]

        print( json.dumps( asyncio.run( main( ) ) ) )
    ''', INVOCABLES_THREADS_MAXIMUM = '1' )
    message, started, final, maximum = json.loads( output )
    assert 'did not start within 0.5 seconds' in message
    assert 'all 1 threads for sync tools were busy' in message
    assert started == [ ]
    assert final == 'last'
    assert maximum == 1


@pytest.mark.asyncio
async def test_140_cancellation_of_execution_abandons_sync_tool( ):
    ''' Cancelling an execution returns at once although a sync tool runs. '''
    release = threading.Event( )
    entered = threading.Event( )

    def block( ) -> str:
        ''' Blocks until released. '''
        entered.set( )
        release.wait( )
        return 'released'

    ensemble = invocables.produce_ensemble( 'tools', [ block ] )
    task = asyncio.create_task( invocables.execute_invocations(
        [ _call( 'a', 'block' ), _call( 'b', 'block' ) ], [ ensemble ] ) )
    try:
        assert await asyncio.to_thread( entered.wait, _SECONDS_MAXIMUM )
        task.cancel( )
        with pytest.raises( asyncio.CancelledError ): await task
    finally: release.set( )


@pytest.mark.asyncio
async def test_150_context_variables_reach_sync_tools( ):
    ''' Context variables are copied into the thread, as to_thread does. '''
    variable = contextvars.ContextVar( 'variable' )
    variable.set( 'seen' )
    assert await invocables.execution.workers.execute_in_thread( variable.get ) == 'seen'

    def fail( ) -> None:
        raise KeyError( 'lost' )

    with pytest.raises( KeyError ): await invocables.execution.workers.execute_in_thread( fail )


def test_160_threads_maximum_configurable( ):
    ''' The most threads for sync tools is configurable, and checked. '''
    maximum = invocables.execution.workers.access_threads_maximum( )
    try:
        invocables.execution.workers.configure_threads( maximum + 1 )
        assert invocables.execution.workers.access_threads_maximum( ) == maximum + 1
    finally: invocables.execution.workers.configure_threads( maximum )
    for value in ( 0, -1, 1.5, True ):
        with pytest.raises( exceptions.ConfigurationInvalidity ):
            invocables.execution.workers.configure_threads( value )
    output = _run_script( '''
        import invocables
        try: invocables.execution.workers.access_threads_maximum( )
        except invocables.exceptions.ConfigurationInvalidity as exception:
            print( type( exception ).__name__ )
    ''', INVOCABLES_THREADS_MAXIMUM = 'many' )
    assert output.strip( ) == 'ConfigurationInvalidity'
