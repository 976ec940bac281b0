# SPDX-License-Identifier: Apache-2.0

''' Many tools: preparing provider tool lists, and memory held.

    * ``prepare_tools`` on 10,000 tools (explicit schemas, each distinct)
      in 100 ensembles, and on 1,000 in 10, for each provider. Every
      measurement runs in a child forked from a parent which built the
      ensembles and never prepared them, so "first" is cold and
      "repeated" is the second call in the same child. Peers, measured the
      same way: openai-agents' ``Converter.tool_to_openai`` (what its Chat
      Completions model calls) on ``FunctionTool`` objects; pydantic-ai's
      toolsets' ``get_tools``, then its OpenAI model's ``prepare_request``
      and ``_map_tool_definition`` (what its agent calls per request). The
      parent's objects are frozen for the collector before the children
      are forked (``gc.freeze``), so that a child's full collection walks
      only its own, not every library's tools.
    * Memory for 10,000 tools from typed functions in 100 groups (the
      library's own grouping: ensembles, toolsets, agents, FastMCP
      servers, lists for anthropic), each library in a fresh interpreter:
      resident memory after building, less before (the functions already
      made), after garbage collection; the whole process in the notes.
'''


import asyncio
import copy
import gc
import statistics
import time

from collections.abc import Callable
from typing import Any

from . import common as _common
from . import tools as _tools


PROVIDERS = (
    'openai', 'anthropic', 'openai-responses', 'gemini', 'cohere', 'ollama' )
_PREPARE_PEERS = ( 'openai-agents', 'pydantic-ai' )
_MEMORY_PEERS = tuple(
    name for name in _tools.BUILDERS if name != 'invocables' )


def measure_preparation( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures prepare_tools at scale, first and repeated, and growth. '''
    large, small = ( ( 10, 20 ), ( 1, 20 ) ) if settings.quick else (
        ( 100, 100 ), ( 10, 100 ) )
    cases: dict[ str, Callable[ [ ], Any ] ] = { }
    for label, size in ( ( 'large', large ), ( 'small', small ) ):
        for name, case in _produce_preparers( settings, *size ).items( ):
            cases[ f"{name} {label}" ] = case
    firsts, repeats = _sample_forked( cases, settings )
    return _produce_preparation_rows(
        settings, firsts, repeats, large, small )


def _produce_preparers(
    settings: _common.Settings, ensembles: int, tools: int
) -> dict[ str, Callable[ [ ], Any ] ]:
    preparers: dict[ str, Callable[ [ ], Any ] ] = { }
    groups = _produce_invocables_ensembles( ensembles, tools )
    for provider in PROVIDERS:
        preparers[ provider ] = _produce_invocables_preparer(
            provider, groups )
    if settings.is_available( 'openai-agents' ):
        preparers[ 'openai-agents' ] = _produce_agents_preparer(
            ensembles, tools )
    if settings.is_available( 'pydantic-ai' ):
        preparers[ 'pydantic-ai' ] = _produce_pydantic_ai_preparer(
            ensembles, tools )
    return preparers


def _produce_schema( ensemble: int, index: int ) -> dict[ str, Any ]:
    schema = copy.deepcopy( _tools.SCHEMA )
    schema[ 'properties' ][ 'city' ][ 'description' ] = (
        f"Name of the city ({ensemble}, {index})." )
    return schema


def _produce_invocables_ensembles( ensembles: int, tools: int ) -> list[ Any ]:
    import invocables

    async def forecast( context: Any, arguments: Any ) -> str:
        return 'sunny'
    return [
        invocables.produce_ensemble( f"group{group}", [
            invocables.produce_invoker(
                forecast, name = f"forecast_{group}_{index}",
                description = 'Returns the weather forecast.',
                arguments_schema = _produce_schema( group, index ) )
            for index in range( tools ) ] )
        for group in range( ensembles ) ]


def _produce_invocables_preparer(
    provider: str, groups: list[ Any ]
) -> Callable[ [ ], Any ]:
    import invocables
    # Imports the processor's modules, on tools of their own.
    invocables.produce_processor( provider ).prepare_tools(
        _produce_invocables_ensembles( 1, 2 ) )

    def prepare( ) -> Any:
        processor = invocables.produce_processor( provider )
        return processor.prepare_tools( groups )
    return prepare


def _produce_agents_preparer(
    ensembles: int, tools: int
) -> Callable[ [ ], Any ]:
    from agents import FunctionTool
    from agents.models.chatcmpl_converter import Converter

    async def invoke( context: Any, text: str ) -> str:
        return 'sunny'
    groups = [
        [ FunctionTool(
            name = f"forecast_{group}_{index}",
            description = 'Returns the weather forecast.',
            params_json_schema = _produce_schema( group, index ),
            on_invoke_tool = invoke, strict_json_schema = False )
          for index in range( tools ) ]
        for group in range( ensembles ) ]

    def prepare( ) -> Any:
        return [
            Converter.tool_to_openai( tool )
            for group in groups for tool in group ]
    return prepare


def _produce_pydantic_ai_preparer(
    ensembles: int, tools: int
) -> Callable[ [ ], Any ]:
    from pydantic_ai import FunctionToolset, RunContext, Tool
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.toolsets import CombinedToolset
    from pydantic_ai.usage import RunUsage

    async def forecast( **arguments: Any ) -> str:
        return 'sunny'
    toolsets = [
        FunctionToolset( [
            Tool.from_schema(
                forecast, name = f"forecast_{group}_{index}",
                description = 'Returns the weather forecast.',
                json_schema = _produce_schema( group, index ) )
            for index in range( tools ) ] )
        for group in range( ensembles ) ]
    model = OpenAIChatModel(
        'gpt-4o', provider = OpenAIProvider( api_key = 'unused' ) )

    async def prepare_async( ) -> Any:
        context = RunContext( deps = None, model = model, usage = RunUsage( ) )
        found = await CombinedToolset( toolsets ).get_tools( context )
        definitions = [ tool.tool_def for tool in found.values( ) ]
        options, parameters = model.prepare_request(
            None, ModelRequestParameters( function_tools = definitions ) )
        return [
            model._map_tool_definition( definition, options or { } )
            for definition in parameters.function_tools ]

    def prepare( ) -> Any:
        return asyncio.run( prepare_async( ) )
    return prepare


def _measure_twice( prepare: Callable[ [ ], Any ] ) -> list[ float ]:
    started = time.perf_counter( )
    first = prepare( )
    middle = time.perf_counter( )
    second = prepare( )
    ended = time.perf_counter( )
    if not first or len( first ) != len( second ):
        raise RuntimeError( "Prepared tool lists differ or are empty." )
    return [ middle - started, ended - middle ]


def _sample_forked(
    cases: dict[ str, Callable[ [ ], Any ] ], settings: _common.Settings
) -> tuple[ dict[ str, _common.Samples ], dict[ str, _common.Samples ] ]:
    firsts: dict[ str, _common.Samples ] = { name: [ ] for name in cases }
    repeats: dict[ str, _common.Samples ] = { name: [ ] for name in cases }
    names = list( cases )
    # The parent holds every library's tools. Frozen for the collector (as
    # pre-fork servers do), they are not walked by a child's full
    # collection, so that no library pays for the others' objects.
    gc.collect( )
    gc.freeze( )
    try: _sample_rounds( cases, settings, names, firsts, repeats )
    finally: gc.unfreeze( )
    return firsts, repeats


def _sample_rounds(
    cases: dict[ str, Callable[ [ ], Any ] ],
    settings: _common.Settings,
    names: list[ str ],
    firsts: dict[ str, _common.Samples ],
    repeats: dict[ str, _common.Samples ],
) -> None:
    for round_ in range( settings.rounds ):
        for name in ( names if round_ % 2 == 0 else names[ : : -1 ] ):
            first = firsts[ name ]
            repeat = repeats[ name ]
            if isinstance( first, str ) or isinstance( repeat, str ): continue
            prepare = cases[ name ]
            try:
                values = _common.call_forked(
                    lambda prepare = prepare: _measure_twice( prepare ) )
            except RuntimeError as exception:
                firsts[ name ] = repeats[ name ] = str( exception )
                continue
            first.append( values[ 0 ] )
            repeat.append( values[ 1 ] )


def _produce_preparation_rows(
    settings: _common.Settings,
    firsts: dict[ str, _common.Samples ],
    repeats: dict[ str, _common.Samples ],
    large: tuple[ int, int ],
    small: tuple[ int, int ],
) -> list[ _common.Row ]:
    size = f"{large[ 0 ] * large[ 1 ]:,} tools in {large[ 0 ]} ensembles"
    growth = { name: _divide( firsts[ f"{name} large" ],
                              firsts[ f"{name} small" ] )
               for name in ( *PROVIDERS, *_PREPARE_PEERS )
               if f"{name} large" in firsts }
    rows: list[ _common.Row ] = [ ]
    for key, title, unit, figures in (
        ( 'prepare-first', f"`prepare_tools`, {size}, first call", 's',
          { name[ : -6 ]: values for name, values in firsts.items( )
            if name.endswith( ' large' ) } ),
        ( 'prepare-repeated', f"`prepare_tools`, {size}, repeated call",
          's', { name[ : -6 ]: values for name, values in repeats.items( )
                 if name.endswith( ' large' ) } ),
        ( 'prepare-growth', "`prepare_tools` growth, {small:,} to {large:,} "
          "tools (first call)".format(
              small = small[ 0 ] * small[ 1 ],
              large = large[ 0 ] * large[ 1 ] ), 'x', growth ),
    ):
        peers = { name: value for name, value in figures.items( )
                  if name in _PREPARE_PEERS }
        row = _common.Row(
            key = key, title = title, unit = unit,
            ours = _common.summarize( figures[ 'openai' ] ),
            peers = _common.produce_cells( settings, peers, _PREPARE_PEERS ) )
        row.notes.append( "invocables figure: OpenAI Chat Completions; peers "
                          "produce that format too" )
        row.notes.extend(
            _describe_figures( f"invocables {name}", figures[ name ], unit )
            for name in PROVIDERS )
        row.notes.append( _describe_range( figures, unit ) )
        rows.append( row )
    return rows


def _describe_figures(
    name: str, samples: _common.Samples, unit: str
) -> str:
    if unit == 'x' and not isinstance( samples, str ):
        # Growth is one ratio of two medians.
        value = _common.format_value( samples[ 0 ], unit )
        return f"{name}: {value} (median at 10x the size / median)"
    return _common.describe_samples( name, samples, unit )


def _divide(
    large: _common.Samples, small: _common.Samples
) -> _common.Samples:
    if isinstance( large, str ): return large
    if isinstance( small, str ): return small
    return [ statistics.median( large ) / statistics.median( small ) ]


def _describe_range( figures: dict[ str, _common.Samples ], unit: str ) -> str:
    values = [
        _common.summarize( figures[ name ] ) for name in PROVIDERS ]
    numbers = [ value for value in values if isinstance( value, float ) ]
    if not numbers: return "invocables over providers: no figure"
    return "invocables over the {count} providers: {low} to {high}".format(
        count = len( numbers ),
        low = _common.format_value( min( numbers ), unit ),
        high = _common.format_value( max( numbers ), unit ) )


def measure_memory( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures memory held by many tools, in fresh interpreters. '''
    groups, size = ( 10, 10 ) if settings.quick else ( 100, 100 )
    figures: dict[ str, dict[ str, float ] | str ] = { }
    for library in _tools.BUILDERS:
        if library != 'invocables' and not settings.is_available( library ):
            continue
        try:
            figures[ library ] = _common.run_worker( [
                'memory', '--library', library,
                '--groups', str( groups ), '--size', str( size ) ] )
        except RuntimeError as exception:
            figures[ library ] = f"error: {exception}"
    retained = {
        name: value if isinstance( value, str ) else [ value[ 'retained' ] ]
        for name, value in figures.items( ) }
    ours = retained.pop( 'invocables' )
    row = _common.Row(
        key = 'memory',
        title = f"memory for {groups * size:,} tools in {groups} ensembles",
        unit = 'MiB', ours = _common.summarize( ours ),
        peers = _common.produce_cells( settings, retained, _MEMORY_PEERS ) )
    row.notes.append(
        "tools from typed functions, each library in a fresh interpreter: "
        "resident memory after building less before (imports excluded); "
        "one sample" )
    row.notes.extend(
        "{name}: whole process {total:.1f} MiB (imports included); built "
        "in {seconds:.1f} s".format(
            name = name, total = value[ 'total' ],
            seconds = value[ 'seconds' ] )
        for name, value in figures.items( ) if not isinstance( value, str ) )
    return [ row ]


def work_memory( library: str, groups: int, size: int ) -> dict[ str, float ]:
    ''' Builds grouped tools in this interpreter; returns MiB and seconds. '''
    build = _tools.produce_builder( library )
    group = _tools.produce_grouper( library )
    functions = _tools.produce_functions( groups * size )
    # Imports whatever building needs (some libraries import lazily).
    group( 'warm', [ build( function ) for function in
                     _tools.produce_functions( 2 ) ] )
    gc.collect( )
    before = _common.access_resident_memory( )
    started = time.perf_counter( )
    held = [
        group( f"group{index}", [
            build( function ) for function in
            functions[ index * size : ( index + 1 ) * size ] ] )
        for index in range( groups ) ]
    seconds = time.perf_counter( ) - started
    gc.collect( )
    after = _common.access_resident_memory( )
    assert len( held ) == groups
    mebibyte = 1024 * 1024
    return {
        'retained': ( after - before ) / mebibyte,
        'total': after / mebibyte,
        'seconds': seconds,
    }
