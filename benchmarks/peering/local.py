# SPDX-License-Identifier: Apache-2.0

''' Local tools: one validated call, building tools, 100 concurrent tools.

    * One call: from the JSON text of the arguments to the result of an
      async typed function, validated: invocables' ``execute_invocations``
      (decoding, canister, validation, run); openai-agents'
      ``FunctionTool.on_invoke_tool``; pydantic-ai's
      ``ToolManager.handle_call`` (what its agent graph calls); the
      anthropic SDK's tool runner's step for one ``tool_use`` block (the
      tool found by name, ``_run_tool``: the call and its ``tool_result``
      block). The bare tool calls (an invoker called with a context and
      arguments; ``beta_async_tool( ).call``) are measured beside them, in
      the details.
    * Building tools from typed functions, their JSON Schema computed.
    * 100 concurrent tools which sleep 50 ms, default settings: one
      ``execute_invocations``; pydantic-ai's ``Agent.run`` and
      openai-agents' ``Runner.run`` with a scripted model which asks for
      the 100 calls at once. The figure is the time the sleeps add: wall
      time with 50 ms sleeps less wall time with no sleep, both measured
      in each round (ideal: 50 ms), so that the agents' own per-run
      overhead does not count.
'''


import asyncio
import json
import time

from collections.abc import Awaitable, Callable
from typing import Any

from . import common as _common
from . import tools as _tools


_LOCAL_PEERS = ( 'openai-agents', 'pydantic-ai', 'anthropic' )
_AGENT_PEERS = ( 'pydantic-ai', 'openai-agents' )
_ARGUMENTS = '{"text": "hello", "count": 2}'
# Bare tool calls, beside the row: no name, no result block.
_BARE = {
    'invocables-bare':
        'bare call, invocables (invoker( context, arguments ))',
    'anthropic-bare': 'bare call, anthropic (beta_async_tool( ).call)',
}


async def echo( text: str, count: int = 1 ) -> str:
    ''' Returns the text.

        Args:
            text: Text to return.
            count: How many times (unused).
    '''
    return text


def measure_local_call( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures one validated local call in each library. '''
    count = 100 if settings.quick else 2000
    samples = asyncio.run( _sample_local_call( settings, count ) )
    ours = samples.pop( 'invocables' )
    bare = { name: samples.pop( name ) for name in _BARE if name in samples }
    row = _common.Row(
        key = 'local-call',
        title = 'one local call, validated (`execute_invocations`)',
        unit = 's', ours = _common.summarize( ours ),
        peers = _common.produce_cells( settings, samples, _LOCAL_PEERS ) )
    row.notes.append(
        f"from JSON text to result; {count} sequential calls per round" )
    row.notes.extend(
        _common.describe_samples( name, values, 's' )
        for name, values in ( ( 'invocables', ours ), *samples.items( ) ) )
    row.notes.extend(
        _common.describe_samples( _BARE[ name ], values, 's' )
        for name, values in bare.items( ) )
    return [ row ]


async def _sample_local_call(
    settings: _common.Settings, count: int
) -> dict[ str, _common.Samples ]:
    producers: dict[ str, Callable[ [ ], Awaitable[ Any ] ] ] = {
        'invocables': _produce_invocables_call,
        'openai-agents': _produce_agents_call,
        'pydantic-ai': _produce_pydantic_ai_call,
        'anthropic': _produce_anthropic_call,
        'invocables-bare': _produce_invocables_bare_call,
        'anthropic-bare': _produce_anthropic_bare_call,
    }
    cases: dict[ str, Callable[ [ ], Awaitable[ float ] ] ] = { }
    failures: dict[ str, _common.Samples ] = { }
    for name, producer in producers.items( ):
        library = name.removesuffix( '-bare' )
        if library != 'invocables' and not settings.is_available( library ):
            continue
        try: call = await producer( )
        except Exception as exception:
            failures[ name ] = _common.describe_error( exception )
            continue
        cases[ name ] = _produce_loop( call, count )
    samples = await _common.sample_interleaved_async( cases, settings )
    return { **samples, **failures }


def _produce_loop(
    call: Callable[ [ ], Awaitable[ Any ] ], count: int
) -> Callable[ [ ], Awaitable[ float ] ]:
    async def loop( ) -> float:
        started = time.perf_counter( )
        for _ in range( count ): await call( )
        return ( time.perf_counter( ) - started ) / count
    return loop


async def _produce_invocables_call( ) -> Callable[ [ ], Awaitable[ Any ] ]:
    import invocables
    ensemble = invocables.produce_ensemble( 'bench', [ echo ] )

    async def call( ) -> Any:
        invocation = invocables.InvocationCanister(
            identifier = 'c1', name = 'echo',
            arguments = json.loads( _ARGUMENTS ) )
        results = await invocables.execute_invocations(
            [ invocation ], [ ensemble ] )
        if results[ 0 ].error: raise RuntimeError( results[ 0 ].as_text( ) )
        return results
    return await _warm_up( call )


async def _produce_agents_call( ) -> Callable[ [ ], Awaitable[ Any ] ]:
    from agents import function_tool
    from agents.tool_context import ToolContext
    tool = function_tool( echo )

    async def call( ) -> Any:
        context = ToolContext(
            context = None, tool_name = 'echo', tool_call_id = 'c1',
            tool_arguments = _ARGUMENTS )
        return await tool.on_invoke_tool( context, _ARGUMENTS )
    return await _warm_up( call )


async def _produce_pydantic_ai_call( ) -> Callable[ [ ], Awaitable[ Any ] ]:
    from pydantic_ai import FunctionToolset, RunContext
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.usage import RunUsage
    context = RunContext(
        deps = None, model = TestModel( ), usage = RunUsage( ) )
    manager = ToolManager( toolset = FunctionToolset( [ echo ] ) )
    manager = await manager.for_run_step( context )

    async def call( ) -> Any:
        return await manager.handle_call( ToolCallPart(
            tool_name = 'echo', args = _ARGUMENTS, tool_call_id = 'c1' ) )
    return await _warm_up( call )


async def _produce_invocables_bare_call(
) -> Callable[ [ ], Awaitable[ Any ] ]:
    import invocables
    from invocables.invokers import InvocationContext
    invoker = invocables.produce_invoker( echo )

    async def call( ) -> Any:
        context = InvocationContext(
            auxdata = None, invoker = invoker, namespace = { } )
        return await invoker( context, json.loads( _ARGUMENTS ) )
    return await _warm_up( call )


async def _produce_anthropic_call( ) -> Callable[ [ ], Awaitable[ Any ] ]:
    from anthropic import AsyncAnthropic, beta_async_tool
    from anthropic.types.beta import BetaToolUseBlock
    # No request is sent: the runner only runs the tool of a block.
    client = AsyncAnthropic(
        api_key = 'unused', base_url = 'http://127.0.0.1:9' )
    runner = client.beta.messages.tool_runner(
        model = 'claude-sonnet-4-6', max_tokens = 64,
        messages = [ { 'role': 'user', 'content': 'Echo hello.' } ],
        tools = [ beta_async_tool( echo ) ] )

    async def call( ) -> Any:
        block = BetaToolUseBlock(
            type = 'tool_use', id = 'c1', name = 'echo',
            input = json.loads( _ARGUMENTS ) )
        tool = runner._runnable_tools( )[ block.name ]
        return await runner._run_tool( tool, block )
    return await _warm_up( call )


async def _produce_anthropic_bare_call( ) -> Callable[ [ ], Awaitable[ Any ] ]:
    from anthropic import beta_async_tool
    tool = beta_async_tool( echo )

    async def call( ) -> Any:
        return await tool.call( json.loads( _ARGUMENTS ) )
    return await _warm_up( call )


async def _warm_up(
    call: Callable[ [ ], Awaitable[ Any ] ]
) -> Callable[ [ ], Awaitable[ Any ] ]:
    result = await call( )
    if 'hello' not in repr( result ):
        raise RuntimeError( f"Unexpected result: {result!r:.80}" )
    for _ in range( 50 ): await call( )
    return call


def measure_building( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures building tools from fresh typed functions. '''
    count = 20 if settings.quick else 1000
    libraries = [
        library for library in _tools.BUILDERS
        if library == 'invocables' or settings.is_available( library ) ]
    cases = {
        library: _produce_building_case( library, count )
        for library in libraries }
    samples = _common.sample_interleaved( cases, settings )
    ours = samples.pop( 'invocables' )
    row = _common.Row(
        key = 'build',
        title = f"building {count:,} tools from typed functions",
        unit = 's', ours = _common.summarize( ours ),
        peers = _common.produce_cells(
            settings, samples, _tools.BUILDERS ) )
    row.notes.append(
        "each tool from a fresh function object, its JSON Schema computed "
        "(openai-agents' function_tool, pydantic-ai's Tool, anthropic's "
        "beta_async_tool, FastMCP's Tool.from_function)" )
    row.notes.extend(
        _common.describe_samples( name, values, 's' )
        for name, values in ( ( 'invocables', ours ), *samples.items( ) ) )
    return [ row ]


def _produce_building_case(
    library: str, count: int
) -> Callable[ [ ], float ]:
    def case( ) -> float:
        build = _tools.produce_builder( library )
        functions = _tools.produce_functions( count )
        started = time.perf_counter( )
        for function in functions: build( function )
        return time.perf_counter( ) - started
    return case


def measure_concurrency( settings: _common.Settings ) -> list[ _common.Row ]:
    ''' Measures 100 concurrent 50 ms tools with default settings. '''
    producers: dict[ str, Callable[ [ float ], Any ] ] = {
        'invocables': _produce_invocables_naps,
        'pydantic-ai': _produce_pydantic_ai_naps,
        'openai-agents': _produce_agents_naps,
    }
    cases: dict[ str, Callable[ [ ], float ] ] = { }
    for name, producer in producers.items( ):
        if name != 'invocables' and not settings.is_available( name ):
            continue
        for nap in ( 0.05, 0.0 ):
            cases[ f"{name} {nap}" ] = _common.time_async( producer( nap ) )
    samples = _common.sample_interleaved( cases, settings )
    added = {
        name: _subtract( samples[ f"{name} 0.05" ], samples[ f"{name} 0.0" ] )
        for name in producers if f"{name} 0.0" in samples }
    ours = added.pop( 'invocables' )
    row = _common.Row(
        key = 'concurrency',
        title = '100 concurrent 50 ms tools, default settings',
        unit = 's', ours = _common.summarize( ours ),
        peers = _common.produce_cells( settings, added, _AGENT_PEERS ) )
    row.notes.append(
        "figure: wall time with 50 ms sleeps less wall time with no sleep "
        "(ideal 50 ms); peers through their agent loops with a scripted "
        "model asking for the 100 calls at once" )
    row.notes.extend(
        _common.describe_samples( f"wall, {name} s sleeps", values, 's' )
        for name, values in samples.items( ) )
    return [ row ]


def _subtract(
    slow: _common.Samples, fast: _common.Samples
) -> _common.Samples:
    if isinstance( slow, str ): return slow
    if isinstance( fast, str ): return fast
    return [ one - other for one, other in zip( slow, fast ) ]


async def _nap( seconds: float ) -> str:
    await asyncio.sleep( seconds )
    return 'rested'


def _produce_nap( seconds: float ) -> Callable[ [ ], Awaitable[ str ] ]:
    async def nap( ) -> str:
        ''' Rests a while. '''
        return await _nap( seconds )
    return nap


def _produce_invocables_naps(
    seconds: float
) -> Callable[ [ ], Awaitable[ Any ] ]:
    import invocables
    ensemble = invocables.produce_ensemble(
        'bench', [ _produce_nap( seconds ) ] )
    invocations = [
        invocables.InvocationCanister(
            identifier = f"c{index}", name = 'nap', arguments = { } )
        for index in range( 100 ) ]

    async def run( ) -> Any:
        return await invocables.execute_invocations(
            invocations, [ ensemble ] )
    return run


def _produce_pydantic_ai_naps(
    seconds: float
) -> Callable[ [ ], Awaitable[ Any ] ]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def respond( messages: list[ Any ], _: Any ) -> ModelResponse:
        if len( messages ) > 1:
            return ModelResponse( parts = [ TextPart( 'done' ) ] )
        return ModelResponse( parts = [
            ToolCallPart( 'nap', { }, tool_call_id = f"c{index}" )
            for index in range( 100 ) ] )
    agent = Agent(
        FunctionModel( respond ), tools = [ _produce_nap( seconds ) ] )

    async def run( ) -> Any:
        return await agent.run( 'go' )
    return run


def _produce_agents_naps(
    seconds: float
) -> Callable[ [ ], Awaitable[ Any ] ]:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message, function_call
    set_tracing_disabled( True )
    tool = function_tool( _produce_nap( seconds ) )

    async def run( ) -> Any:
        model = ScriptedModel( [
            [ function_call( 'nap', { }, call_id = f"c{index}" )
              for index in range( 100 ) ],
            [ assistant_message( 'done' ) ] ] )
        agent = Agent( name = 'bench', tools = [ tool ], model = model )
        return await Runner.run( agent, 'go' )
    return run
