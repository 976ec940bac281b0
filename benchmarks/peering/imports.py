# SPDX-License-Identifier: Apache-2.0

''' Import time of each library, in fresh interpreters.

    Each sample is a new ``python -c`` process timing one import statement
    with ``time.perf_counter`` (interpreter start-up excluded); libraries
    alternate within each round; one unmeasured run of each first, so that
    bytecode is compiled. ``python -X importtime`` tells where the time goes.
'''


import subprocess
import sys

from collections.abc import Callable

from . import common as _common


STATEMENTS = {
    'invocables': 'import invocables',
    'pydantic-ai': 'import pydantic_ai',
    'openai-agents': 'import agents',
    'fastmcp': 'import fastmcp',
    'mcp': 'import mcp',
    'anthropic': 'import anthropic',
    'openai': 'import openai',
}


def measure_imports( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures import time of invocables and of each peer. '''
    cases: dict[ str, Callable[ [ ], float ] ] = { }
    for name, statement in STATEMENTS.items( ):
        if name != 'invocables' and not settings.is_available( name ):
            continue
        cases[ name ] = _produce_case( statement )
    for case in cases.values( ): case( )
    samples = _common.sample_interleaved( cases, settings )
    ours = samples.pop( 'invocables' )
    row = _common.Row(
        key = 'import', title = '`import invocables`', unit = 's',
        ours = _common.summarize( ours ),
        peers = _common.produce_cells(
            settings, samples, tuple( STATEMENTS )[ 1 : ] ) )
    row.notes.append(
        "fresh interpreter per sample; peers: import pydantic_ai, agents, "
        "fastmcp, mcp, anthropic, openai" )
    row.notes.extend(
        _common.describe_samples( name, values, 's' )
        for name, values in ( ( 'invocables', ours ), *samples.items( ) ) )
    return [ row ]


def _produce_case( statement: str ) -> Callable[ [ ], float ]:
    script = (
        'import time; started = time.perf_counter( ); '
        f'{statement}; print( time.perf_counter( ) - started )' )

    def case( ) -> float:
        completed = subprocess.run(
            [ sys.executable, '-c', script ], capture_output = True,
            text = True, check = False, timeout = 120 )
        if completed.returncode != 0:
            lines = completed.stderr.strip( ).splitlines( ) or [ 'failed' ]
            raise RuntimeError( lines[ -1 ] )
        return float( completed.stdout )
    return case
