# SPDX-License-Identifier: Apache-2.0

''' Rows, settings, sampling in interleaved rounds, isolation, printing. '''


import asyncio
import dataclasses
import importlib.metadata
import importlib.util
import json
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import time

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


PROJECT = Path( __file__ ).resolve( ).parents[ 2 ]
SCRIPT = PROJECT / 'benchmarks' / 'peers.py'
ECHO_SERVER = (
    PROJECT / 'tests' / 'test_000_invocables' / 'servers' / 'echo_server.py' )

# Peers: display name, module to import, distribution (for its version).
PEERS: tuple[ tuple[ str, str, str ], ... ] = (
    ( 'pydantic-ai', 'pydantic_ai', 'pydantic-ai-slim' ),
    ( 'openai-agents', 'agents', 'openai-agents' ),
    ( 'fastmcp', 'fastmcp', 'fastmcp' ),
    ( 'mcp', 'mcp', 'mcp' ),
    ( 'anthropic', 'anthropic', 'anthropic' ),
    ( 'openai', 'openai', 'openai' ),
)
PEER_NAMES = tuple( name for name, _, _ in PEERS )
NA = 'n/a'
ABSENT = 'not installed'

Cell = float | str
Samples = list[ float ] | str


@dataclasses.dataclass
class Settings:
    ''' What to run and how long: rounds, sizes, selected peers. '''

    quick: bool
    rounds: int
    budget: float
    peers: tuple[ str, ... ]

    def is_selected( self, peer: str ) -> bool:
        ''' Whether peer was selected (installed or not). '''
        return peer in self.peers

    def is_available( self, peer: str ) -> bool:
        ''' Whether peer was selected and can be imported. '''
        return peer in self.peers and is_installed( peer )


@dataclasses.dataclass
class Row:
    ''' One measure: invocables, each peer, and notes (lower is better). '''

    key: str
    title: str
    unit: str
    ours: Cell
    peers: dict[ str, Cell ]
    notes: list[ str ] = dataclasses.field( default_factory = list[ str ] )

    def access_best( self ) -> tuple[ str, float ] | None:
        ''' Returns best measured peer and its figure, if any. '''
        figures = [
            ( value, name ) for name, value in self.peers.items( )
            if isinstance( value, float ) ]
        if not figures: return None
        value, name = min( figures )
        return name, value


def is_installed( peer: str ) -> bool:
    ''' Whether the module of a peer can be found. '''
    module = { name: module for name, module, _ in PEERS }[ peer ]
    return importlib.util.find_spec( module ) is not None


def access_version( distribution: str ) -> str:
    ''' Returns installed version of a distribution, or 'absent'. '''
    try: return importlib.metadata.version( distribution )
    except importlib.metadata.PackageNotFoundError: return 'absent'


def produce_cells(
    settings: Settings,
    samples: Mapping[ str, Samples ],
    equivalents: Sequence[ str ],
) -> dict[ str, Cell ]:
    ''' Returns a cell per selected peer: median, error, n/a or absent. '''
    cells: dict[ str, Cell ] = { }
    for peer in settings.peers:
        if peer not in equivalents: cells[ peer ] = NA
        elif not is_installed( peer ): cells[ peer ] = ABSENT
        else: cells[ peer ] = summarize( samples.get( peer, 'not run' ) )
    return cells


def summarize( samples: Samples ) -> Cell:
    ''' Returns median of samples, or the error which stopped them. '''
    if isinstance( samples, str ): return samples
    return statistics.median( samples )


def describe_samples( name: str, samples: Samples, unit: str ) -> str:
    ''' Returns one line: median, spread and count of samples. '''
    if isinstance( samples, str ): return f"{name}: {samples}"
    template = (
        "{name}: median {median}, min {low}, max {high} ({count} rounds)" )
    median = statistics.median( samples )
    return template.format(
        name = name, median = format_value( median, unit ),
        low = format_value( min( samples ), unit ),
        high = format_value( max( samples ), unit ), count = len( samples ) )


def sample_interleaved(
    cases: Mapping[ str, Callable[ [ ], float ] ], settings: Settings
) -> dict[ str, Samples ]:
    ''' Runs every case once per round, alternating order; returns samples.

        A case which raises keeps its error instead of samples. A case
        stops taking samples once they add up to the budget (at least one);
        a single sample which runs past the budget is stopped, and the case
        keeps the samples it had, or a bound if it had none.
    '''
    samples: dict[ str, Samples ] = { name: [ ] for name in cases }
    spent = dict.fromkeys( cases, 0.0 )
    names = list( cases )
    for round_ in range( settings.rounds ):
        ordered = names if round_ % 2 == 0 else names[ : : -1 ]
        for name in ordered:
            current = samples[ name ]
            if isinstance( current, str ): continue
            if current and spent[ name ] >= settings.budget: continue
            started = time.perf_counter( )
            try: value = _call_within( cases[ name ], settings.budget )
            except Overrun as exception:
                if not current: samples[ name ] = str( exception )
                spent[ name ] = settings.budget
                continue
            except Exception as exception:
                samples[ name ] = describe_error( exception )
                continue
            spent[ name ] += time.perf_counter( ) - started
            current.append( value )
    return samples


class Overrun( Exception ):
    ''' A sample took longer than the budget and was stopped. '''


def _call_within( function: Callable[ [ ], float ], limit: float ) -> float:
    # An alarm stops a sample which runs past the budget (such as a
    # quadratic accumulation), so that one case cannot take the run hostage.
    def expire( number: int, frame: Any ) -> None:
        raise Overrun( "> {limit} (stopped at the budget)".format(
            limit = format_value( limit, 's' ) ) )
    previous = signal.signal( signal.SIGALRM, expire )
    signal.setitimer( signal.ITIMER_REAL, limit )
    try: return function( )
    finally:
        signal.setitimer( signal.ITIMER_REAL, 0 )
        signal.signal( signal.SIGALRM, previous )


async def sample_interleaved_async(
    cases: Mapping[ str, Callable[ [ ], Awaitable[ float ] ] ],
    settings: Settings,
) -> dict[ str, Samples ]:
    ''' Runs every async case once per round, alternating order. '''
    samples: dict[ str, Samples ] = { name: [ ] for name in cases }
    names = list( cases )
    for round_ in range( settings.rounds ):
        ordered = names if round_ % 2 == 0 else names[ : : -1 ]
        for name in ordered:
            current = samples[ name ]
            if isinstance( current, str ): continue
            try: value = await cases[ name ]( )
            except Exception as exception:
                samples[ name ] = describe_error( exception )
                continue
            current.append( value )
    return samples


def describe_error( exception: BaseException ) -> str:
    ''' Returns a short description of an error, for a cell. '''
    # Exception groups (anyio task groups): report the first leaf.
    inner = getattr( exception, 'exceptions', None )
    while inner:
        exception = inner[ 0 ]
        inner = getattr( exception, 'exceptions', None )
    text = str( exception ).splitlines( )[ 0 ] if str( exception ) else ''
    return "error: {genus}: {text}".format(
        genus = type( exception ).__name__, text = text[ : 100 ] )


def time_once( function: Callable[ [ ], Any ] ) -> float:
    ''' Returns seconds taken by one call of function. '''
    started = time.perf_counter( )
    function( )
    return time.perf_counter( ) - started


def time_async(
    function: Callable[ [ ], Awaitable[ Any ] ]
) -> Callable[ [ ], float ]:
    ''' Returns a case which runs async function in a fresh event loop. '''
    def case( ) -> float:
        async def timed( ) -> float:
            started = time.perf_counter( )
            await function( )
            return time.perf_counter( ) - started
        return asyncio.run( timed( ) )
    return case


def call_forked(
    function: Callable[ [ ], Any ], timeout: float = 900.0
) -> Any:
    ''' Calls function in a forked child; returns its JSON result.

        The child sees the parent's objects as they were (copy on write),
        so each call starts from the same cold state: no cache filled by
        an earlier call survives. Raises RuntimeError with the child's
        error, or on timeout.
    '''
    sys.stdout.flush( )
    sys.stderr.flush( )
    reader, writer = os.pipe( )
    child = os.fork( )
    if 0 == child: _serve_forked( function, reader, writer )
    os.close( writer )
    chunks: list[ bytes ] = [ ]
    deadline = time.monotonic( ) + timeout
    while True:
        remaining = deadline - time.monotonic( )
        ready, _, _ = select.select(
            [ reader ], [ ], [ ], max( remaining, 0 ) )
        if not ready:
            os.kill( child, signal.SIGKILL )
            break
        chunk = os.read( reader, 65536 )
        if not chunk: break
        chunks.append( chunk )
    os.close( reader )
    os.waitpid( child, 0 )
    if not chunks:
        raise RuntimeError(
            f"Forked measurement gave nothing in {timeout} s." )
    payload = json.loads( b''.join( chunks ) )
    if 'error' in payload: raise RuntimeError( payload[ 'error' ] )
    return payload[ 'value' ]


def _serve_forked(
    function: Callable[ [ ], Any ], reader: int, writer: int
) -> None:
    os.close( reader )
    try: payload = { 'value': function( ) }
    except BaseException as exception:
        payload = { 'error': describe_error( exception ) }
    with os.fdopen( writer, 'w' ) as stream: json.dump( payload, stream )
    os._exit( 0 )


def run_worker( arguments: Sequence[ str ], timeout: float = 1800.0 ) -> Any:
    ''' Runs ``peers.py --worker ...`` in a fresh interpreter; returns JSON.

        Raises RuntimeError with the last line of its errors on failure.
    '''
    completed = subprocess.run(
        [ sys.executable, str( SCRIPT ), '--worker', *arguments ],
        capture_output = True, text = True, timeout = timeout,
        check = False, cwd = PROJECT )
    if completed.returncode != 0 or not completed.stdout.strip( ):
        lines = completed.stderr.strip( ).splitlines( ) or [ 'no output' ]
        raise RuntimeError( lines[ -1 ][ : 200 ] )
    return json.loads( completed.stdout.strip( ).splitlines( )[ -1 ] )


def access_resident_memory( ) -> int:
    ''' Returns resident memory of this process in bytes (Linux). '''
    with open( '/proc/self/statm', encoding = 'ascii' ) as stream:
        pages = int( stream.read( ).split( )[ 1 ] )
    return pages * os.sysconf( 'SC_PAGE_SIZE' )


def describe_machine( settings: Settings ) -> list[ str ]:
    ''' Returns lines about machine, load, versions and settings. '''
    cores = os.cpu_count( )
    usable = len( os.sched_getaffinity( 0 ) )
    entries = [
        'invocables',
        * ( distribution for name, _, distribution in PEERS
            if settings.is_selected( name ) ),
        'pydantic' ]
    versions = ', '.join(
        f"{name} {access_version( name )}" for name in entries )
    return [
        "Python {version} on {system} {machine}; {cores} cores ({usable} "
        "usable)".format(
            version = platform.python_version( ), system = platform.system( ),
            machine = platform.machine( ), cores = cores, usable = usable ),
        describe_load( ),
        f"versions: {versions}",
        "mode: {mode}; {rounds} rounds per figure (median), interleaved; "
        "budget {budget:.0f} s per case".format(
            mode = 'quick' if settings.quick else 'full',
            rounds = settings.rounds, budget = settings.budget ),
    ]


def describe_load( ) -> str:
    ''' Returns the load average line. '''
    load = ' '.join( f"{value:.2f}" for value in os.getloadavg( ) )
    return f"load average (1, 5, 15 min): {load}"


def format_value( value: Cell, unit: str ) -> str:
    ''' Returns value with a fitting unit. '''
    if isinstance( value, str ): return value
    if unit == 's':
        if value < 1e-3: return f"{value * 1e6:.1f} us"
        if value < 1: return f"{value * 1e3:.1f} ms"
        return f"{value:.2f} s"
    if unit == 'x': return f"{value:.2f}x"
    return f"{value:.1f} {unit}"


def format_ratio( row: Row ) -> str:
    ''' Returns invocables over best peer, or why there is none. '''
    best = row.access_best( )
    if best is None or not isinstance( row.ours, float ): return NA
    _, value = best
    if value <= 0: return NA
    return f"{row.ours / value:.2f}"


def print_table( rows: Sequence[ Row ] ) -> None:
    ''' Prints rows as a Markdown table, then each row in detail. '''
    print(
        '\n| measure | invocables | best peer | invocables / best peer '
        '| every peer |' )
    print( '| --- | --- | --- | --- | --- |' )
    for row in rows:
        best = row.access_best( )
        best_text = NA if best is None else "{name} {value}".format(
            name = best[ 0 ], value = format_value( best[ 1 ], row.unit ) )
        every = _describe_peers( row )
        print( "| {title} | {ours} | {best} | {ratio} | {every} |".format(
            title = row.title, ours = format_value( row.ours, row.unit ),
            best = best_text, ratio = format_ratio( row ), every = every ) )
    print( '\nDetails (ratio: invocables / best peer; above 1, invocables '
           'takes more):' )
    for row in rows:
        print( f"\n[{row.key}] {row.title}" )
        print( "  invocables: {value}".format(
            value = format_value( row.ours, row.unit ) ) )
        for name, value in row.peers.items( ):
            print( "  {name}: {value}".format(
                name = name, value = format_value( value, row.unit ) ) )
        for note in row.notes: print( f"  - {note}" )


def _describe_peers( row: Row ) -> str:
    measured = [
        "{name} {value}".format(
            name = name, value = format_value( value, row.unit ) )
        for name, value in row.peers.items( ) if value != NA ]
    missing = [ name for name, value in row.peers.items( ) if value == NA ]
    if missing: measured.append( "n/a: {names}".format(
        names = ', '.join( missing ) ) )
    return '; '.join( measured ) or 'no peer selected'
