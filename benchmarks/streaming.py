# SPDX-License-Identifier: Apache-2.0

''' Benchmark of streamed tool-call accumulation, against the SDKs' own.

    Run with ``.venv/bin/python benchmarks/streaming.py`` (``--help`` for
    options). Builds one streamed tool call whose arguments are about 1 MB
    of JSON, delivered in fragments of 20 to 50 bytes, as the SDKs' typed
    events, and times, on the very same events:

    * the invocables accumulators (OpenAI Chat Completions and Anthropic);
    * ``openai.lib.streaming.chat.ChatCompletionStreamState`` fed with
      ``ChatCompletionChunk`` objects;
    * ``anthropic.lib.streaming._messages.accumulate_event`` fed with
      ``RawMessageStreamEvent`` objects;

    at 0.01x, 0.1x, 1x and 10x the size, and prints times and ratios (time
    at 10 times the size over time at the size: about 10 is linear, about
    100 quadratic; SDK over invocables: how many times faster invocables
    is). Each SDK run happens in a forked process stopped at the budget
    (``--budget``, default 120 s); a stopped run gives bounds instead.
'''


import argparse
import itertools
import json
import math
import random
import time

from collections.abc import Callable, Sequence
from typing import Any


_FRAGMENT_MINIMUM = 20
_FRAGMENT_MAXIMUM = 50
_ROUNDS = 5
_SCALES = ( 0.01, 0.1, 1, 10 )


def produce_arguments( size: int ) -> str:
    ''' Returns JSON text of an object of about size bytes. '''
    generator = random.Random( 1 )
    rows: list[ dict[ str, Any ] ] = [ ]
    length = 2
    while length < size:
        row = {
            'id': len( rows ),
            'name': ''.join(
                generator.choice( 'abcdefghij "\\é' ) for _ in range( 24 ) ),
            'value': generator.random( ),
            'tags': [ 'x', 'y' ],
        }
        length += len( json.dumps( row ) ) + 2
        rows.append( row )
    return json.dumps( { 'rows': rows } )


def produce_fragments( text: str ) -> list[ str ]:
    ''' Splits text into fragments of 20 to 50 characters. '''
    generator = random.Random( 2 )
    fragments: list[ str ] = [ ]
    start = 0
    while start < len( text ):
        size = generator.randint( _FRAGMENT_MINIMUM, _FRAGMENT_MAXIMUM )
        fragments.append( text[ start : start + size ] )
        start += size
    return fragments


def produce_openai_chunks( fragments: Sequence[ str ] ) -> list[ Any ]:
    ''' Returns typed Chat Completions chunks carrying one tool call. '''
    from openai.types.chat import ChatCompletionChunk

    def chunk( delta: dict[ str, Any ], stop: str | None = None ) -> Any:
        return ChatCompletionChunk.model_validate( {
            'id': 'chatcmpl-1', 'object': 'chat.completion.chunk',
            'created': 1, 'model': 'gpt-4o',
            'choices': [ {
                'index': 0, 'delta': delta, 'finish_reason': stop } ] } )

    chunks = [ chunk( { 'role': 'assistant', 'tool_calls': [ {
        'index': 0, 'id': 'call_1', 'type': 'function',
        'function': { 'name': 'store_rows', 'arguments': '' } } ] } ) ]
    chunks.extend(
        chunk( { 'tool_calls': [
            { 'index': 0, 'function': { 'arguments': fragment } } ] } )
        for fragment in fragments )
    chunks.append( chunk( { }, 'tool_calls' ) )
    return chunks


def produce_anthropic_events( fragments: Sequence[ str ] ) -> list[ Any ]:
    ''' Returns typed Messages stream events carrying one tool call. '''
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter
    adapter: TypeAdapter[ Any ] = TypeAdapter( RawMessageStreamEvent )
    events: list[ dict[ str, Any ] ] = [
        { 'type': 'message_start', 'message': {
            'id': 'msg_1', 'type': 'message', 'role': 'assistant',
            'model': 'claude', 'content': [ ], 'stop_reason': None,
            'stop_sequence': None,
            'usage': { 'input_tokens': 1, 'output_tokens': 1 } } },
        { 'type': 'content_block_start', 'index': 0, 'content_block': {
            'type': 'tool_use', 'id': 'toolu_1', 'name': 'store_rows',
            'input': { } } },
    ]
    events.extend(
        { 'type': 'content_block_delta', 'index': 0, 'delta': {
            'type': 'input_json_delta', 'partial_json': fragment } }
        for fragment in fragments )
    events.extend( [
        { 'type': 'content_block_stop', 'index': 0 },
        { 'type': 'message_delta',
          'delta': { 'stop_reason': 'tool_use', 'stop_sequence': None },
          'usage': { 'output_tokens': 1 } },
        { 'type': 'message_stop' },
    ] )
    return [ adapter.validate_python( event ) for event in events ]


def run_invocables( provider: str, events: Sequence[ Any ] ) -> Any:
    ''' Accumulates events with invocables; returns the arguments. '''
    from invocables.processors import produce_processor
    accumulator = produce_processor( provider ).produce_accumulator( )
    emitted: list[ Any ] = [ ]
    for event in events: emitted.extend( accumulator.ingest( event ) )
    emitted.extend( accumulator.conclude( ) )
    return emitted[ 0 ].arguments


def run_openai_sdk( events: Sequence[ Any ] ) -> Any:
    ''' Accumulates chunks with the OpenAI SDK; returns the arguments. '''
    from openai.lib.streaming.chat import ChatCompletionStreamState
    state: Any = ChatCompletionStreamState( )
    for event in events: state.handle_chunk( event )
    completion = state.get_final_completion( )
    text = completion.choices[ 0 ].message.tool_calls[ 0 ].function.arguments
    return json.loads( text )


def run_anthropic_sdk( events: Sequence[ Any ] ) -> Any:
    ''' Accumulates events with the Anthropic SDK; returns the input. '''
    from anthropic.lib.streaming._messages import accumulate_event
    snapshot: Any = None
    buffers: dict[ int, bytes ] = { }
    for event in events:
        snapshot = accumulate_event(
            event = event, current_snapshot = snapshot, json_bufs = buffers )
    return snapshot.content[ 0 ].input


def measure(
    function: Callable[ [ Sequence[ Any ] ], Any ],
    events: Sequence[ Any ],
    expected: Any,
    rounds: int,
) -> float:
    ''' Returns best time of rounds; checks the result once. '''
    samples: list[ float ] = [ ]
    for _ in range( rounds ):
        start = time.perf_counter( )
        result = function( events )
        samples.append( time.perf_counter( ) - start )
        assert result == expected, "Accumulated arguments differ."
    return min( samples )


def main( ) -> None:
    ''' Runs benchmark and prints figures. '''
    parser = argparse.ArgumentParser( description = __doc__.split( '\n' )[ 0 ] )
    parser.add_argument(
        '--size', type = int, default = 1_000_000,
        help = "Size of the arguments in bytes at 1x (default 1 MB)." )
    parser.add_argument(
        '--budget', type = float, default = 120.0,
        help = "Seconds allowed for one SDK run (default 120)." )
    options = parser.parse_args( )
    figures: dict[ tuple[ str, float ], float ] = { }
    _warm_up( )
    for scale in _SCALES:
        _measure_scale( figures, options.size, scale, options.budget )
    _report( figures, options.budget )


def _measure_scale(
    figures: dict[ tuple[ str, float ], float ],
    size: int,
    scale: float,
    budget: float,
) -> None:
    text = produce_arguments( int( size * scale ) )
    expected = json.loads( text )
    fragments = produce_fragments( text )
    print( "{scale}x: {size} bytes in {count} fragments.".format(
        scale = scale, size = len( text ), count = len( fragments ) ) )
    chunks = produce_openai_chunks( fragments )
    events = produce_anthropic_events( fragments )
    runs: list[ tuple[ str, Any, Sequence[ Any ] ] ] = [
        ( 'invocables openai', lambda e: run_invocables( 'openai', e ),
          chunks ),
        ( 'openai SDK', run_openai_sdk, chunks ),
        ( 'invocables anthropic',
          lambda e: run_invocables( 'anthropic', e ), events ),
        ( 'anthropic SDK', run_anthropic_sdk, events ),
    ]
    index = _SCALES.index( scale )
    for name, function, stream in runs:
        smaller = figures.get( ( name, _SCALES[ index - 1 ] ) ) if index else 0
        if 'SDK' not in name:
            elapsed = measure( function, stream, expected, _ROUNDS )
        elif smaller is not None and math.isinf( smaller ):
            figures[ ( name, scale ) ] = math.inf
            print( f"  {name:22} skipped (smaller size exceeded the budget)" )
            continue
        else: elapsed = _measure_bounded( function, stream, expected, budget )
        figures[ ( name, scale ) ] = elapsed
        if math.isinf( elapsed ):
            print( f"  {name:22} > {budget:7.0f} s (stopped at the budget)" )
        else: print( f"  {name:22} {elapsed:9.3f} s" )


def _measure_bounded(
    function: Callable[ [ Sequence[ Any ] ], Any ],
    events: Sequence[ Any ],
    expected: Any,
    budget: float,
) -> float:
    ''' Measures in a forked child; infinity if it exceeds the budget. '''
    import multiprocessing
    context = multiprocessing.get_context( 'fork' )
    receiver, sender = context.Pipe( duplex = False )

    def work( ) -> None:
        sender.send( measure( function, events, expected, 1 ) )

    child = context.Process( target = work )
    child.start( )
    elapsed = receiver.recv( ) if receiver.poll( budget ) else math.inf
    child.terminate( )
    child.join( )
    return elapsed


def _warm_up( ) -> None:
    ''' Runs every accumulator once on a small stream (imports, caches). '''
    text = produce_arguments( 2000 )
    fragments = produce_fragments( text )
    chunks = produce_openai_chunks( fragments )
    events = produce_anthropic_events( fragments )
    run_invocables( 'openai', chunks )
    run_openai_sdk( chunks )
    run_invocables( 'anthropic', events )
    run_anthropic_sdk( events )


def _report(
    figures: dict[ tuple[ str, float ], float ], budget: float
) -> None:
    names = (
        'invocables openai', 'openai SDK',
        'invocables anthropic', 'anthropic SDK' )
    print( "\nScaling (time at 10 times the size / time at the size; 10 is "
           "linear, 100 quadratic):" )
    for name in names:
        ratios: list[ str ] = [ ]
        for small, large in itertools.pairwise( _SCALES ):
            before = figures[ ( name, small ) ]
            after = figures[ ( name, large ) ]
            if math.isinf( before ): continue
            ratio = (
                "> {:.0f}".format( budget / before ) if math.isinf( after )
                else "{:.1f}".format( after / before ) )
            ratios.append( f"{large}x/{small}x = {ratio}" )
        print( "  {name:22} {ratios}".format(
            name = name, ratios = ', '.join( ratios ) ) )
    print( "\nSpeed-up (SDK time / invocables time):" )
    for provider in ( 'openai', 'anthropic' ):
        for scale in _SCALES:
            ours = figures[ ( f"invocables {provider}", scale ) ]
            theirs = figures[ ( f"{provider} SDK", scale ) ]
            if math.isinf( theirs ):
                print( "  {provider:10} {scale:>5}x  > {ratio:.0f}x "
                       "faster".format(
                           provider = provider, scale = scale,
                           ratio = budget / ours ) )
                continue
            print( "  {provider:10} {scale:>5}x  {ratio:.1f}x faster".format(
                provider = provider, scale = scale, ratio = theirs / ours ) )


if __name__ == '__main__': main( )
