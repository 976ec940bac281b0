# SPDX-License-Identifier: Apache-2.0

''' Side-by-side benchmark of invocables and its peers (issue 16).

    Run with ``.venv/bin/python benchmarks/peers.py`` after installing the
    peers: ``.venv/bin/pip install --editable '.[benchmarks]'``. Measures,
    in one run, the same work in invocables and in each peer which has an
    equivalent (pydantic-ai, openai-agents, FastMCP, the raw ``mcp`` SDK,
    the anthropic and openai SDKs' own helpers), and prints a table: the
    invocables figure, the best peer's, their ratio (above 1: invocables
    takes more), every peer's figure ("n/a" where a peer has no
    equivalent), then the details of each row, with the load average and
    versions so that anyone can repeat the comparison.

    Every figure is the median of ``--rounds`` rounds (default 5), the
    libraries alternating within each round; import time and memory are
    measured in fresh interpreters, ``prepare_tools`` in forked children.
    ``--quick`` shrinks every size for a smoke run; ``--rows`` and
    ``--peers`` choose what runs (``--peers none``: invocables alone).
    See ``benchmarks/README.md`` and ``documentation/benchmarks.rst``.
'''


import argparse
import json
import sys
import time

from collections.abc import Callable, Sequence

from peering import clients as _clients
from peering import common as _common
from peering import imports as _imports
from peering import local as _local
from peering import scale as _scale
from peering import streams as _streams


GROUPS: dict[
    str, Callable[ [ _common.Settings ], list[ _common.Row ] ]
] = {
    'local-call': _local.measure_local_call,
    'streaming': _streams.measure_streaming,
    'import': _imports.measure_imports,
    'mcp-calls': _clients.measure_calls,
    'build': _local.measure_building,
    'prepare': _scale.measure_preparation,
    'concurrency': _local.measure_concurrency,
    'mcp-idle': _clients.measure_idle,
    'memory': _scale.measure_memory,
    'dicts': _streams.measure_dicts,
}
# Row keys in the order of the table of issue 16, with their groups.
ROWS: dict[ str, str ] = {
    'local-call': 'local-call',
    'stream-openai': 'streaming',
    'stream-anthropic': 'streaming',
    'import': 'import',
    'mcp-wall': 'mcp-calls',
    'build': 'build',
    'prepare-first': 'prepare',
    'prepare-repeated': 'prepare',
    'prepare-growth': 'prepare',
    'concurrency': 'concurrency',
    'mcp-cpu': 'mcp-calls',
    'mcp-idle': 'mcp-idle',
    'memory': 'memory',
    'dicts-openai': 'dicts',
    'dicts-anthropic': 'dicts',
}


def main( arguments: Sequence[ str ] | None = None ) -> None:
    ''' Runs the chosen rows and prints the table. '''
    options = _parse( arguments )
    if options.worker:
        print( json.dumps( _work( options ) ) )
        return
    settings = _common.Settings(
        quick = options.quick,
        rounds = options.rounds or ( 1 if options.quick else 5 ),
        budget = options.budget,
        peers = _select_peers( options.peers ) )
    groups = _select_groups( options.rows )
    print( '# invocables and its peers, side by side' )
    for line in _common.describe_machine( settings ): print( line )
    rows: list[ _common.Row ] = [ ]
    for group in groups:
        started = time.perf_counter( )
        print( f"measuring {group} ...", file = sys.stderr, flush = True )
        rows.extend( GROUPS[ group ]( settings ) )
        print(
            "measured {group} in {seconds:.0f} s; {load}".format(
                group = group, seconds = time.perf_counter( ) - started,
                load = _common.describe_load( ) ),
            file = sys.stderr, flush = True )
    order = list( ROWS )
    rows.sort( key = lambda row: order.index( row.key ) )
    _common.print_table( rows )
    print( f"\nat the end, {_common.describe_load( )}" )


def _parse( arguments: Sequence[ str ] | None ) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description = __doc__.split( '\n' )[ 0 ] if __doc__ else None )
    parser.add_argument(
        '--quick', action = 'store_true',
        help = "Small sizes and one round: a smoke run." )
    parser.add_argument(
        '--rows', default = 'all',
        help = "Comma-separated groups or row keys, or 'all'. Groups: "
        + ', '.join( GROUPS ) + '.' )
    parser.add_argument(
        '--peers', default = 'all',
        help = "Comma-separated peers, 'all' or 'none'. Peers: "
        + ', '.join( _common.PEER_NAMES ) + '.' )
    parser.add_argument(
        '--rounds', type = int, default = 0,
        help = "Rounds per figure (median); default 5, 1 with --quick." )
    parser.add_argument(
        '--budget', type = float, default = 120.0,
        help = "Seconds of samples after which a slow case stops taking "
        "more rounds (at least one is taken); default 120." )
    parser.add_argument( '--worker', help = argparse.SUPPRESS )
    parser.add_argument( '--library', help = argparse.SUPPRESS )
    parser.add_argument( '--groups', type = int, help = argparse.SUPPRESS )
    parser.add_argument( '--size', type = int, help = argparse.SUPPRESS )
    parser.add_argument( '--seconds', type = float, help = argparse.SUPPRESS )
    parser.add_argument( '--settle', type = float, help = argparse.SUPPRESS )
    options = parser.parse_args( arguments )
    if options.rounds < 0: parser.error( "--rounds must be positive." )
    return options


def _select_peers( text: str ) -> tuple[ str, ... ]:
    if text == 'all': return _common.PEER_NAMES
    if text == 'none': return ( )
    names = tuple( name.strip( ) for name in text.split( ',' ) )
    unknown = [ name for name in names if name not in _common.PEER_NAMES ]
    if unknown:
        sys.exit( "Unknown peers: {names}; known: {known}.".format(
            names = ', '.join( unknown ),
            known = ', '.join( _common.PEER_NAMES ) ) )
    return names


def _select_groups( text: str ) -> list[ str ]:
    if text == 'all': return list( GROUPS )
    chosen: list[ str ] = [ ]
    for name in ( name.strip( ) for name in text.split( ',' ) ):
        group = name if name in GROUPS else ROWS.get( name )
        if group is None:
            sys.exit( "Unknown row {name!r}; groups: {groups}.".format(
                name = name, groups = ', '.join( GROUPS ) ) )
        if group not in chosen: chosen.append( group )
    return [ group for group in GROUPS if group in chosen ]


def _work( options: argparse.Namespace ) -> object:
    ''' Runs one measurement asked of a fresh interpreter. '''
    if options.worker == 'memory':
        return _scale.work_memory(
            options.library, options.groups, options.size )
    if options.worker == 'idle':
        return _clients.work_idle(
            options.library, options.seconds, options.settle,
            options.rounds )
    raise SystemExit( f"Unknown worker {options.worker!r}." )


if __name__ == '__main__': main( )
