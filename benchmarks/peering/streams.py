# SPDX-License-Identifier: Apache-2.0

''' Streamed tool calls: accumulation of 1 MB of arguments; dicts or typed.

    One tool call whose arguments are about 1 MB of JSON arrives in
    fragments of 20 to 50 bytes, as each SDK's typed events (built from the
    wire dictionaries). Each accumulator takes the very same events and
    must give the parsed arguments:

    * invocables: ``produce_processor( provider ).produce_accumulator( )``,
      ``ingest`` per event, then ``conclude``;
    * openai SDK: ``ChatCompletionStreamState.handle_chunk``;
    * anthropic SDK: ``accumulate_event`` (what ``MessageStream`` calls);
    * pydantic-ai: its OpenAI and Anthropic models'
      ``_process_streamed_response``, iterated to the end as its agent does
      (Anthropic through the beta event types, which pydantic-ai uses).

    Dicts or typed: invocables on the wire dictionaries against invocables
    on the typed events; no peer accepts dictionaries.
'''


import asyncio
import contextlib
import json

from collections.abc import Callable, Sequence
from typing import Any

from streaming import produce_arguments, produce_fragments

from . import common as _common


def produce_openai_dicts( fragments: Sequence[ str ] ) -> list[ Any ]:
    ''' Returns Chat Completions chunks (wire dicts) of one tool call. '''
    def chunk( delta: dict[ str, Any ], stop: str | None = None ) -> Any:
        return {
            'id': 'chatcmpl-1', 'object': 'chat.completion.chunk',
            'created': 1, 'model': 'gpt-4o',
            'choices': [ {
                'index': 0, 'delta': delta, 'finish_reason': stop } ] }
    chunks = [ chunk( { 'role': 'assistant', 'tool_calls': [ {
        'index': 0, 'id': 'call_1', 'type': 'function',
        'function': { 'name': 'store_rows', 'arguments': '' } } ] } ) ]
    chunks.extend(
        chunk( { 'tool_calls': [
            { 'index': 0, 'function': { 'arguments': fragment } } ] } )
        for fragment in fragments )
    chunks.append( chunk( { }, 'tool_calls' ) )
    return chunks


def produce_anthropic_dicts( fragments: Sequence[ str ] ) -> list[ Any ]:
    ''' Returns Messages stream events (wire dicts) of one tool call. '''
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
    return events


def produce_typed( provider: str, events: Sequence[ Any ] ) -> list[ Any ]:
    ''' Returns the SDK's typed events for wire dicts. '''
    from pydantic import TypeAdapter
    if provider == 'openai':
        from openai.types.chat import ChatCompletionChunk
        genus: Any = ChatCompletionChunk
    elif provider == 'anthropic':
        from anthropic.types import RawMessageStreamEvent
        genus = RawMessageStreamEvent
    else:
        from anthropic.types.beta import BetaRawMessageStreamEvent
        genus = BetaRawMessageStreamEvent
    adapter: TypeAdapter[ Any ] = TypeAdapter( genus )
    return [ adapter.validate_python( event ) for event in events ]


def run_invocables( provider: str, events: Sequence[ Any ] ) -> Any:
    ''' Accumulates events with invocables; returns the arguments. '''
    import invocables
    processor = invocables.produce_processor( provider )
    accumulator = processor.produce_accumulator( )
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


def produce_pydantic_ai_runner(
    provider: str
) -> Callable[ [ Sequence[ Any ] ], Any ]:
    ''' Returns function: events to arguments through pydantic-ai. '''
    from pydantic_ai import _utils
    from pydantic_ai.models import ModelRequestParameters
    if provider == 'openai':
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
        model: Any = OpenAIChatModel(
            'gpt-4o', provider = OpenAIProvider( api_key = 'unused' ) )

        async def open_( events: Sequence[ Any ] ) -> Any:
            return await model._process_streamed_response(
                _iterate( events ), ModelRequestParameters( ) )
    else:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
        model = AnthropicModel(
            'claude-sonnet-4-6',
            provider = AnthropicProvider( api_key = 'unused' ) )

        async def open_( events: Sequence[ Any ] ) -> Any:
            return await model._process_streamed_response(
                _utils.PeekableAsyncStream( _iterate( events ) ),
                ModelRequestParameters( ), { } )

    async def accumulate( events: Sequence[ Any ] ) -> Any:
        response = await open_( events )
        async for _ in response: pass
        return response.get( ).parts[ 0 ].args_as_dict( )

    return lambda events: asyncio.run( accumulate( events ) )


async def _iterate( events: Sequence[ Any ] ) -> Any:
    for event in events: yield event


def _produce_case(
    function: Callable[ [ Sequence[ Any ] ], Any ],
    events: Sequence[ Any ],
    expected: Any,
) -> Callable[ [ ], float ]:
    def case( ) -> float:
        result: list[ Any ] = [ ]
        seconds = _common.time_once(
            lambda: result.append( function( events ) ) )
        if result[ 0 ] != expected:
            raise RuntimeError( "Accumulated arguments differ." )
        return seconds
    return case


def _produce_cases(
    settings: _common.Settings,
    provider: str,
    dicts: Sequence[ Any ],
    expected: Any,
) -> dict[ str, Callable[ [ ], float ] ]:
    typed = produce_typed( provider, dicts )
    cases = { 'invocables': _produce_case(
        lambda events: run_invocables( provider, events ), typed, expected ) }
    cases.update( _produce_peer_cases(
        settings, provider, dicts, typed, expected ) )
    return cases


def _warm_up( settings: _common.Settings, provider: str ) -> None:
    ''' Runs every case once on a short stream: the imports and caches of
        a first use do not count in any sample. '''
    text = produce_arguments( 2_000 )
    fragments = produce_fragments( text )
    dicts = (
        produce_openai_dicts( fragments ) if provider == 'openai'
        else produce_anthropic_dicts( fragments ) )
    for case in _produce_cases(
        settings, provider, dicts, json.loads( text )
    ).values( ):
        # A case which fails here fails again when sampled, and says so.
        with contextlib.suppress( Exception ): case( )


def measure_streaming( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures accumulation of one large streamed tool call. '''
    size = 20_000 if settings.quick else 1_000_000
    text = produce_arguments( size )
    expected = json.loads( text )
    fragments = produce_fragments( text )
    streams = {
        'openai': produce_openai_dicts( fragments ),
        'anthropic': produce_anthropic_dicts( fragments ) }
    rows: list[ _common.Row ] = [ ]
    for provider, dicts in streams.items( ):
        _warm_up( settings, provider )
        cases = _produce_cases( settings, provider, dicts, expected )
        samples = _common.sample_interleaved( cases, settings )
        ours = samples.pop( 'invocables' )
        row = _common.Row(
            key = f"stream-{provider}",
            title = "streamed accumulation, {size} of arguments, {api}"
            .format( size = _describe_size( len( text ) ),
                     api = _API_NAMES[ provider ] ),
            unit = 's', ours = _common.summarize( ours ),
            peers = _common.produce_cells(
                settings, samples, ( 'pydantic-ai', provider ) ) )
        row.notes.append( "{count} fragments of 20 to 50 bytes".format(
            count = len( fragments ) ) )
        row.notes.extend(
            _common.describe_samples( name, values, 's' )
            for name, values in ( ( 'invocables', ours ), *samples.items( ) ) )
        rows.append( row )
    return rows


_API_NAMES = { 'openai': 'OpenAI Chat', 'anthropic': 'Anthropic Messages' }


def _describe_size( size: int ) -> str:
    if size >= 1_000_000: return f"{size / 1e6:.0f} MB"
    return f"{size / 1e3:.0f} KB"


def _produce_peer_cases(
    settings: _common.Settings,
    provider: str,
    dicts: Sequence[ Any ],
    typed: Sequence[ Any ],
    expected: Any,
) -> dict[ str, Callable[ [ ], float ] ]:
    cases: dict[ str, Callable[ [ ], float ] ] = { }
    if settings.is_available( provider ):
        sdk = run_openai_sdk if provider == 'openai' else run_anthropic_sdk
        cases[ provider ] = _produce_case( sdk, typed, expected )
    if settings.is_available( 'pydantic-ai' ):
        events = (
            typed if provider == 'openai'
            else produce_typed( 'anthropic-beta', dicts ) )
        cases[ 'pydantic-ai' ] = _produce_case(
            produce_pydantic_ai_runner( provider ), events, expected )
    return cases


def measure_dicts( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures invocables on wire dicts against typed SDK events. '''
    size = 20_000 if settings.quick else 200_000
    text = produce_arguments( size )
    expected = json.loads( text )
    fragments = produce_fragments( text )
    rows: list[ _common.Row ] = [ ]
    for provider, producer in (
        ( 'openai', produce_openai_dicts ),
        ( 'anthropic', produce_anthropic_dicts ),
    ):
        dicts = producer( fragments )
        typed = produce_typed( provider, dicts )
        run = lambda events, provider = provider: run_invocables(  # noqa: E731
            provider, events )
        samples = _common.sample_interleaved( {
            'dicts': _produce_case( run, dicts, expected ),
            'typed': _produce_case( run, typed, expected ),
        }, settings )
        ratio = _ratio( samples[ 'dicts' ], samples[ 'typed' ] )
        row = _common.Row(
            key = f"dicts-{provider}",
            title = "accumulating plain-dict events vs typed SDK events, "
            f"{_API_NAMES[ provider ]}",
            unit = 'x', ours = ratio,
            peers = _common.produce_cells( settings, { }, ( ) ) )
        row.notes.append(
            "figure: invocables' time on wire dicts / time on typed events "
            "({count} events, {size}); goal within 1.1x; no peer accepts "
            "dicts".format(
                count = len( dicts ), size = _describe_size( len( text ) ) ) )
        row.notes.extend(
            _common.describe_samples( name, values, 's' )
            for name, values in samples.items( ) )
        rows.append( row )
    return rows


def _ratio( one: _common.Samples, other: _common.Samples ) -> _common.Cell:
    first = _common.summarize( one )
    second = _common.summarize( other )
    if isinstance( first, str ): return first
    if isinstance( second, str ): return second
    return first / second
