# SPDX-License-Identifier: Apache-2.0

''' The peers benchmark runs and prints every row (timings not asserted). '''


import re
import subprocess
import sys

from pathlib import Path

import pytest


# One worker runs the module: its tests share one run of the benchmark.
pytestmark = pytest.mark.xdist_group( 'benchmarks' )
_root = Path( __file__ ).parents[ 2 ]
_rows = (
    'local-call', 'stream-openai', 'stream-anthropic', 'import', 'mcp-wall',
    'build', 'prepare-first', 'prepare-repeated', 'prepare-growth',
    'concurrency', 'mcp-cpu', 'mcp-idle', 'memory', 'dicts-openai',
    'dicts-anthropic',
)


@pytest.fixture( scope = 'module' )
def quick_run( ) -> str:
    ''' Output of a quick run of invocables alone. '''
    completed = subprocess.run(
        [ sys.executable, str( _root / 'benchmarks' / 'peers.py' ),
          '--quick', '--peers', 'none' ],
        capture_output = True, text = True, timeout = 900, cwd = _root )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@pytest.mark.slow
def test_100_prints_every_row( quick_run ):
    ''' A quick run prints each row of the table and its details. '''
    table = [ line for line in quick_run.splitlines( )
              if line.startswith( '| ' ) ]
    assert table[ 0 ].startswith( '| measure | invocables | best peer' )
    assert len( table ) == 2 + len( _rows )
    for row in _rows: assert f"[{row}] " in quick_run


@pytest.mark.slow
def test_110_measures_invocables_in_every_row( quick_run ):
    ''' Every row has a figure for invocables, not an error. '''
    figures = re.findall(
        r'^\[([a-z-]+)\] .*\n  invocables: (.*)$', quick_run, re.MULTILINE )
    assert [ key for key, _ in figures ] == list( _rows )
    for key, figure in figures:
        assert re.match( r'^[0-9.]+ ?[a-zA-Z/]*$', figure ), ( key, figure )


@pytest.mark.slow
def test_120_reports_machine_and_load( quick_run ):
    ''' The run reports cores, load average at both ends, and versions. '''
    assert re.search( r'\d+ cores \(\d+ usable\)', quick_run )
    assert quick_run.count( 'load average (1, 5, 15 min):' ) == 2
    assert re.search( r'versions: invocables \S+', quick_run )
