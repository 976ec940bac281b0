# SPDX-License-Identifier: Apache-2.0

''' Building tools from typed functions, and memory per tool, against
    pydantic-ai's ``Tool``, as ratios measured in one process.

    Run with ``python benchmarks/building.py`` (``--count N`` functions per
    shape, default 1000; ``--rounds N``, default 5). Needs pydantic-ai
    (the ``benchmarks`` extra; without it, invocables alone, its peer's
    columns "n/a"). For each shape of signature, prints the
    median time to build one tool (its JSON Schema read) and the memory
    each tool holds (``tracemalloc``, after a collection), for invocables
    and pydantic-ai, and their ratios (above 1: invocables takes more).

    Shapes: ``forecast`` (the template of ``peers.py``: a string, an
    integer, a literal choice and a flag, documented in a Google-style
    docstring); ``constrained`` (``Annotated`` fields with descriptions and
    bounds, optional lists); ``converted`` (a tuple and a set, which
    invocables converts with a pydantic model made at the first call);
    ``enumerated`` (an enum and a date); ``modelled`` (a pydantic model,
    whose schema pydantic derives, and whose model invocables keeps to
    convert arguments).
'''


import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc

from collections.abc import Callable
from pathlib import Path
from typing import Any


sys.path.insert( 0, str( Path( __file__ ).parent ) )

from peering import tools as _tools


_SHAPES = {
    'constrained': '''
async def {name}(
    query: Annotated[ str, Field( description = 'Text.', min_length = 1 ) ],
    limit: Annotated[ int, Field( ge = 1, le = 100 ) ] = 10,
    tags: Optional[ list[ str ] ] = None,
    ratio: float | None = None,
) -> str:
    """ Searches documents ({index}). """
    return query
''',
    'converted': '''
def {name}( pair: tuple[ int, str ], tags: set[ str ] = set( ) ) -> str:
    """ Pairs things ({index}).

    Args:
        pair: A pair.
        tags: Some tags.
    """
    return str( pair )
''',
    'modelled': '''
def {name}( place: Place, note: str = '' ) -> str:
    """ Places a note ({index}). """
    return place.city
''',
    'enumerated': '''
def {name}( color: Color, day: datetime.date, count: int = 1 ) -> str:
    """ Paints a day ({index}). """
    return color.value
''',
}
_serial = 0


def survey_libraries( ) -> tuple[ str, ... ]:
    ''' Returns the libraries measured: pydantic-ai when installed. '''
    import importlib.util
    if importlib.util.find_spec( 'pydantic_ai' ) is None:
        return ( 'invocables', )
    return ( 'invocables', 'pydantic-ai' )


def main( ) -> None:
    ''' Measures every shape; prints a table of ratios. '''
    parser = argparse.ArgumentParser( description = __doc__ )
    parser.add_argument( '--count', type = int, default = 1000 )
    parser.add_argument( '--rounds', type = int, default = 5 )
    options = parser.parse_args( )
    print( describe_load( ) )
    print( '| shape | build invocables | build pydantic-ai | ratio '
           '| bytes invocables | bytes pydantic-ai | ratio |' )
    print( '| --- | --- | --- | --- | --- | --- | --- |' )
    libraries = survey_libraries( )
    for shape in ( 'forecast', *_SHAPES ):
        times = measure_building(
            libraries, shape, options.count, options.rounds )
        sizes = {
            library: measure_memory( library, shape, options.count )
            for library in libraries }
        ours, size = times[ 'invocables' ], sizes[ 'invocables' ]
        theirs = times.get( 'pydantic-ai' )
        if theirs is None:
            print(
                f"| {shape} | {ours * 1e6:.0f} µs | n/a | n/a "
                f"| {size:.0f} | n/a | n/a |" )
            continue
        print(
            f"| {shape} | {ours * 1e6:.0f} µs | {theirs * 1e6:.0f} µs "
            f"| {ours / theirs:.2f} | {size:.0f} "
            f"| {sizes[ 'pydantic-ai' ]:.0f} "
            f"| {size / sizes[ 'pydantic-ai' ]:.2f} |" )
    print( describe_load( ) )


def describe_load( ) -> str:
    ''' Returns the load average line. '''
    load = ' '.join( f"{value:.2f}" for value in os.getloadavg( ) )
    return f"load average (1, 5, 15 min): {load}"


def measure_building(
    libraries: tuple[ str, ... ], shape: str, count: int, rounds: int
) -> dict[ str, float ]:
    ''' Returns median seconds per tool of each library, interleaved. '''
    builders = {
        library: _tools.produce_builder( library ) for library in libraries }
    for build in builders.values( ):
        for function in produce_functions( shape, 2 ): build( function )
    samples: dict[ str, list[ float ] ] = { name: [ ] for name in builders }
    for _ in range( rounds ):
        for library, build in builders.items( ):
            functions = produce_functions( shape, count )
            gc.collect( )
            started = time.perf_counter( )
            for function in functions: build( function )
            samples[ library ].append(
                ( time.perf_counter( ) - started ) / count )
    return {
        library: statistics.median( values )
        for library, values in samples.items( ) }


def measure_memory( library: str, shape: str, count: int ) -> float:
    ''' Returns bytes which each tool holds, after a collection. '''
    build = _tools.produce_builder( library )
    for function in produce_functions( shape, 2 ): build( function )
    functions = produce_functions( shape, count )
    gc.collect( )
    tracemalloc.start( )
    before = tracemalloc.get_traced_memory( )[ 0 ]
    held = [ build( function ) for function in functions ]
    gc.collect( )
    after = tracemalloc.get_traced_memory( )[ 0 ]
    tracemalloc.stop( )
    assert len( held ) == count
    return ( after - before ) / count


def produce_functions(
    shape: str, count: int
) -> list[ Callable[ ..., Any ] ]:
    ''' Returns count distinct functions of shape, named uniquely. '''
    if shape == 'forecast': return _tools.produce_functions( count )
    import datetime
    import enum
    import typing

    from pydantic import BaseModel, Field
    global _serial
    _serial += 1

    class Color( enum.Enum ):
        ''' Colours. '''

        Red = 'red'
        Blue = 'blue'

    class Place( BaseModel ):
        ''' A place. '''

        city: str
        country: str = 'FR'

    namespace: dict[ str, Any ] = {
        'Annotated': typing.Annotated, 'Optional': typing.Optional,
        'Field': Field, 'Color': Color, 'Place': Place,
        'datetime': datetime }
    names = [ f"{shape}_{_serial}_{index}" for index in range( count ) ]
    for start in range( 0, count, 100 ):
        source = ''.join(
            _SHAPES[ shape ].format( name = name, index = start + index )
            for index, name in enumerate( names[ start : start + 100 ] ) )
        exec( compile( source, '<tools>', 'exec' ), namespace )
    return [ namespace[ name ] for name in names ]


if __name__ == '__main__': main( )
