# SPDX-License-Identifier: Apache-2.0

''' Trimming of histories: characters sent per request, and its cost.

    Run with ``python benchmarks/history.py`` (``--quick`` for a smoke
    run). Simulates a long conversation of file tools (seeded, so every
    run is the same): each round the model calls one or two of
    ``read_file`` (of 30 files of 1 to 6 KB, most often the same few),
    ``write_file``, ``list_directory`` and ``search_files``, and the
    results come back in Anthropic's shapes (every provider's shapes are
    walked alike). Before each request, the whole history is trimmed
    afresh, as an application or the conversation loop does. Prints:

    * characters of the history sent at rounds 50, 100, 200 and the last,
      and in all over the conversation, without trimming and with each
      strategy (superseded exact; superseded keyed by path, so a write
      makes earlier reads stale; the last 10 results kept; a budget of
      60,000 characters cleared 20,000 at a time; superseded and budget
      together), with the share saved;
    * how often the budget strategy changed an earlier message (a new
      trim, which a prompt cache pays for), against the number of
      requests;
    * trimming cost per request for histories of 250 to 2,000 rounds
      (least of 3 runs), with the ratio of each size's cost to the
      smallest's against the ratio of sizes: linear growth keeps them
      about equal.
'''


import argparse
import json
import os
import random
import sys
import time

import invocables

from invocables import history


_FILES = 30
_STRATEGIES = {
    'superseded (exact)': { },
    'superseded (keyed by path)': { 'superseded': history.KeyedStaleness(
        reads = { 'read_file': ( 'path', ) },
        writes = { 'write_file': ( 'path', ) } ) },
    'keep 10': { 'superseded': False, 'keep': 10 },
    'budget 60,000 / 20,000': {
        'superseded': False, 'budget': 60_000, 'clear_at_least': 20_000 },
    'keyed + budget': {
        'superseded': history.KeyedStaleness(
            reads = { 'read_file': ( 'path', ) },
            writes = { 'write_file': ( 'path', ) } ),
        'budget': 60_000, 'clear_at_least': 20_000 },
}


def main( ) -> None:
    ''' Parses options; prints every measure. '''
    parser = argparse.ArgumentParser(
        description = __doc__.split( '\n' )[ 0 ] )
    parser.add_argument(
        '--quick', action = 'store_true',
        help = 'fewer rounds (a smoke run)' )
    parser.add_argument( '--rounds', type = int, default = 400 )
    options = parser.parse_args( )
    rounds = 60 if options.quick else options.rounds
    print( f"python {sys.version.split( )[ 0 ]}, invocables "
           f"{invocables.__version__}, {os.cpu_count( )} cores, load "
           "average (1, 5, 15 min): {0:.2f} {1:.2f} {2:.2f}".format(
               *os.getloadavg( ) ) )
    messages = produce_conversation( rounds )
    _print_sizes( messages, rounds )
    _print_costs( ( 25, 50, 100 ) if options.quick
                  else ( 250, 500, 1000, 2000 ) )


def produce_conversation( rounds: int, seed: int = 29 ) -> list[ dict ]:
    ''' Returns Anthropic messages of a simulated conversation. '''
    generator = random.Random( seed )
    sizes = [ generator.randint( 1000, 6000 ) for _ in range( _FILES ) ]
    messages: list[ dict ] = [ {
        'role': 'user', 'content': 'Refactor the project, file by file.' } ]
    for round_ in range( rounds ):
        calls = [ _choose_call( generator ) for _ in range(
            1 if generator.random( ) < 0.7 else 2 ) ]
        blocks: list[ dict ] = [ {
            'type': 'text', 'text': f"Step {round_}: looking further." } ]
        results: list[ dict ] = [ ]
        for index, ( name, arguments ) in enumerate( calls ):
            identifier = f"toolu_{round_:04d}_{index}"
            blocks.append( {
                'type': 'tool_use', 'id': identifier, 'name': name,
                'input': arguments } )
            results.append( {
                'type': 'tool_result', 'tool_use_id': identifier,
                'content': _produce_result( name, arguments, sizes ) } )
        messages.append( { 'role': 'assistant', 'content': blocks } )
        messages.append( { 'role': 'user', 'content': results } )
    return messages


def _choose_call( generator: random.Random ) -> tuple[ str, dict ]:
    # Most reads go to a few files, as when editing them in turn.
    number = min( int( generator.expovariate( 0.25 ) ), _FILES - 1 )
    path = f"/project/module_{number:02d}.py"
    draw = generator.random( )
    if draw < 0.6: return 'read_file', { 'path': path }
    if draw < 0.8:
        return 'write_file', { 'path': path, 'content': 'x = 1\n' * 40 }
    if draw < 0.9: return 'list_directory', { 'path': '/project' }
    return 'search_files', { 'pattern': f"def f{number}" }


def _produce_result( name: str, arguments: dict, sizes: list[ int ] ) -> str:
    if name == 'read_file':
        number = int( arguments[ 'path' ][ -5 : -3 ] )
        line = f"# line of {arguments[ 'path' ]}\n"
        return ( line * ( sizes[ number ] // len( line ) + 1 ) )[
            : sizes[ number ] ]
    if name == 'write_file': return f"Wrote {arguments[ 'path' ]}."
    if name == 'list_directory':
        return '\n'.join( f"module_{i:02d}.py" for i in range( _FILES ) )
    return '\n'.join(
        f"/project/module_{i:02d}.py:{i}: def f" for i in range( 12 ) )


def _measure( messages: list[ dict ] ) -> int:
    return sum(
        len( json.dumps( message, ensure_ascii = False ) )
        for message in messages )


def _print_sizes( messages: list[ dict ], rounds: int ) -> None:
    marks = sorted(
        { mark for mark in ( 50, 100, 200 ) if mark < rounds } | { rounds } )
    rows = [ ]
    for label, options in ( ( 'no trimming', None ), *_STRATEGIES.items( ) ):
        sent_at: dict[ int, int ] = { }
        total = 0
        changes = 0
        previous: list[ dict ] = [ ]
        for round_ in range( 1, rounds + 1 ):
            # Before the request of round_: the prompt and round_ - 1
            # rounds, each an assistant message and its results.
            current = messages[ : 2 * round_ - 1 ]
            if options is not None:
                current = history.trim_history(
                    current, 'anthropic', **options ).messages
                changes += any(
                    before != after for before, after in zip(
                        previous, current ) )
                previous = current
            size = _measure( current )
            total += size
            if round_ in marks: sent_at[ round_ ] = size
        rows.append( ( label, sent_at, total, changes ) )
    print( f"\n## Characters sent per request ({rounds} rounds)\n" )
    print( "| strategy | " + " | ".join(
        f"round {m}" for m in marks ) + " | all requests | saved | "
        "requests changing earlier messages |" )
    print( "| --- " * ( len( marks ) + 4 ) + "|" )
    baseline = rows[ 0 ][ 2 ]
    for label, sent_at, total, changes in rows:
        print( "| {label} | {sizes} | {total:,} | {saved:.0%} | "
               "{changes} |".format(
                   label = label,
                   sizes = " | ".join(
                       f"{sent_at[ m ]:,}" for m in marks ),
                   total = total, saved = 1 - total / baseline,
                   changes = changes if label != 'no trimming' else '-' ) )


def _print_costs( sizes: tuple[ int, ... ] ) -> None:
    rows = [ ]
    for rounds in sizes:
        messages = produce_conversation( rounds )
        timings = [ ]
        for options in _STRATEGIES.values( ):
            samples = [ ]
            for _ in range( 3 ):
                start = time.perf_counter( )
                history.trim_history( messages, 'anthropic', **options )
                samples.append( time.perf_counter( ) - start )
            timings.append( min( samples ) )
        rows.append( ( rounds, len( messages ), _measure( messages ),
                       timings ) )
    print( "\n## Trimming cost per request (least of 3 runs)\n" )
    print( "| rounds | messages | characters | " + " | ".join(
        _STRATEGIES ) + " | cost / smallest's (keyed + budget) | "
        "size / smallest |" )
    print( "| --- " * ( len( _STRATEGIES ) + 5 ) + "|" )
    first = rows[ 0 ]
    for rounds, count, characters, timings in rows:
        print( "| {rounds:,} | {count:,} | {characters:,} | {times} | "
               "{ratio:.1f} | {size:.0f} |".format(
                   rounds = rounds, count = count, characters = characters,
                   times = " | ".join(
                       f"{timing * 1e3:.1f} ms" for timing in timings ),
                   ratio = timings[ -1 ] / first[ 3 ][ -1 ],
                   size = rounds / first[ 0 ] ) )


if __name__ == '__main__': main( )
