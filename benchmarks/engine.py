# SPDX-License-Identifier: Apache-2.0

''' Benchmarks of the execution engine, as ratios measured in one process.

    Run with ``python benchmarks/engine.py``. Prints:

    * the engine's per-invocation overhead for a trivial local tool, against
      a bare ``await`` of the same function and against the compiled
      jsonschema validation alone (goal: overhead at most 2x validation),
      for a flat schema (which the engine's own fast path validates) and
      for a schema which jsonschema validates;
    * the wall time of 100 concurrent tools which sleep 50 ms each (goal:
      under 1.3x 50 ms);
    * the time of ``import invocables`` against importing frigid, absence
      and jsonschema alone, in fresh processes (goal: at most 1.3x).
'''


import asyncio
import statistics
import subprocess
import sys
import time

import invocables


_ROUNDS = 5
_SCHEMA = {
    'type': 'object',
    'properties': { 'text': { 'type': 'string' } },
    'required': [ 'text' ],
}
# Not flat (a keyword the fast path leaves to jsonschema).
_SCHEMA_GENERAL = {
    'type': 'object',
    'properties': { 'text': { 'type': 'string', 'minLength': 1 } },
    'required': [ 'text' ],
}


async def _echo( context, arguments ):
    return arguments[ 'text' ]


def _best( samples ):
    return min( samples )


async def _time_loop( function, count ):
    started = time.perf_counter( )
    for _ in range( count ): await function( )
    return ( time.perf_counter( ) - started ) / count


async def measure_overhead( schema, count = 5000 ):
    ''' Returns seconds per call: bare, validation, engine (1 and 100). '''
    import jsonschema
    invoker = invocables.produce_invoker(
        _echo, name = 'echo', arguments_schema = schema )
    ensemble = invocables.produce_ensemble( 'bench', [ invoker ] )
    arguments = { 'text': 'hello' }
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = 'echo', arguments = arguments )
    batch = [
        invocables.InvocationCanister(
            identifier = f"c{index}", name = 'echo', arguments = arguments )
        for index in range( 100 ) ]
    reference = jsonschema.Draft202012Validator( schema )

    async def bare( ):
        return await _echo( None, arguments )

    async def validate( ):
        return reference.validate( arguments )

    async def engine( ):
        return await invocables.execute_invocations(
            [ invocation ], [ ensemble ] )

    async def engine_batch( ):
        return await invocables.execute_invocations(
            batch, [ ensemble ], concurrency = 100 )

    figures = { 'bare': [ ], 'validation': [ ], 'engine': [ ], 'batch': [ ] }
    for _ in range( _ROUNDS ):
        figures[ 'bare' ].append( await _time_loop( bare, count ) )
        figures[ 'validation' ].append( await _time_loop( validate, count ) )
        figures[ 'engine' ].append( await _time_loop( engine, count ) )
        figures[ 'batch' ].append(
            await _time_loop( engine_batch, count // 100 ) / 100 )
    return { key: _best( values ) for key, values in figures.items( ) }


async def measure_concurrency( ):
    ''' Returns wall time of 100 concurrent 50 ms sleeps through engine. '''

    async def nap( ) -> None:
        await asyncio.sleep( 0.05 )

    ensemble = invocables.produce_ensemble( 'bench', [ nap ] )
    invocations = [
        invocables.InvocationCanister(
            identifier = f"c{index}", name = 'nap', arguments = { } )
        for index in range( 100 ) ]
    samples = [ ]
    for _ in range( _ROUNDS ):
        started = time.perf_counter( )
        await invocables.execute_invocations(
            invocations, [ ensemble ], concurrency = 100 )
        samples.append( time.perf_counter( ) - started )
    return statistics.median( samples )


def measure_import( runs = 15 ):
    ''' Returns median import times: invocables, and its bare dependencies. '''
    def time_import( statement ):
        script = (
            'import time; started = time.perf_counter( ); '
            f'{statement}; print( time.perf_counter( ) - started )' )
        return float( subprocess.run(
            [ sys.executable, '-c', script ],
            capture_output = True, text = True, check = True ).stdout )
    ours = [ ]
    theirs = [ ]
    for _ in range( runs ):
        ours.append( time_import( 'import invocables' ) )
        theirs.append( time_import( 'import frigid, absence, jsonschema' ) )
    return statistics.median( ours ), statistics.median( theirs )


def report_overhead( schema, title ):
    ''' Prints per-invocation figures for one schema. '''
    figures = asyncio.run( measure_overhead( schema ) )
    overhead = figures[ 'engine' ] - figures[ 'bare' ]
    overhead_batch = figures[ 'batch' ] - figures[ 'bare' ]
    print( 'Per-invocation cost, {title} (best of {rounds} rounds):'.format(
        title = title, rounds = _ROUNDS ) )
    for key, label in (
        ( 'bare', 'bare await of the tool' ),
        ( 'validation', 'compiled jsonschema validation alone' ),
        ( 'engine', 'execute_invocations, 1 invocation per call' ),
        ( 'batch', 'execute_invocations, 100 invocations per call' ),
    ): print( f"  {label:48} {figures[ key ] * 1e6:8.1f} us" )
    print( '  engine overhead / validation, 1 per call:   {:6.2f}x'.format(
        overhead / figures[ 'validation' ] ) )
    print( '  engine overhead / validation, 100 per call: {:6.2f}x'.format(
        overhead_batch / figures[ 'validation' ] ) )
    print( '  engine / bare await, 1 per call:            {:6.2f}x'.format(
        figures[ 'engine' ] / figures[ 'bare' ] ) )


def main( ):
    ''' Runs every benchmark and prints figures and ratios. '''
    report_overhead( _SCHEMA, 'flat schema' )
    report_overhead( _SCHEMA_GENERAL, 'schema left to jsonschema' )
    wall = asyncio.run( measure_concurrency( ) )
    print( '100 concurrent 50 ms tools: {:.1f} ms wall, {:.2f}x 50 ms'.format(
        wall * 1e3, wall / 0.05 ) )
    ours, theirs = measure_import( )
    print( 'import invocables: {:.1f} ms; frigid + absence + jsonschema: '
           '{:.1f} ms; ratio {:.2f}x'.format(
               ours * 1e3, theirs * 1e3, ours / theirs ) )


if __name__ == '__main__':
    main( )
