# SPDX-License-Identifier: Apache-2.0

''' The same tools for every library: typed functions, explicit schemas.

    Typed functions are generated from one template (a string, a number, a
    literal choice and a flag, documented in a Google-style docstring), each
    a distinct function object, so that no library can reuse work done for
    another function. Builders turn a function into each library's tool and
    read its JSON Schema, which is where each library does the work.
'''


import typing

from collections.abc import Callable, Sequence
from typing import Any


SCHEMA = {
    'type': 'object',
    'properties': {
        'city': { 'type': 'string', 'description': 'Name of the city.' },
        'days': {
            'type': 'integer', 'minimum': 1, 'default': 3,
            'description': 'Number of days to forecast.' },
        'units': {
            'type': 'string', 'enum': [ 'metric', 'imperial' ],
            'description': 'System of units.' },
    },
    'required': [ 'city' ],
}
_TEMPLATE = '''
async def {name}(
    city: str,
    days: int = 3,
    units: Literal[ 'metric', 'imperial' ] = 'metric',
    hourly: bool = False,
) -> str:
    """ Returns the weather forecast for a city ({index}).

    Args:
        city: Name of the city.
        days: Number of days to forecast.
        units: System of units.
        hourly: Whether to give hourly figures.
    """
    return city
'''
# Libraries which build tools from typed functions.
BUILDERS = ( 'invocables', 'pydantic-ai', 'openai-agents', 'anthropic',
             'fastmcp' )
_serial = 0


def produce_functions( count: int ) -> list[ Callable[ ..., Any ] ]:
    ''' Returns count distinct typed async functions, named uniquely. '''
    global _serial
    _serial += 1
    names = [ f"forecast_{_serial}_{index}" for index in range( count ) ]
    namespace: dict[ str, Any ] = { 'Literal': typing.Literal }
    # Compiled 100 at a time: a single huge source would make a peak of
    # memory larger than the tools themselves.
    for start in range( 0, count, 100 ):
        source = ''.join(
            _TEMPLATE.format( name = name, index = start + index )
            for index, name in enumerate( names[ start : start + 100 ] ) )
        exec( compile( source, '<tools>', 'exec' ), namespace )
    return [ namespace[ name ] for name in names ]


def produce_builder( library: str ) -> Callable[ [ Any ], Any ]:
    ''' Returns function: typed function to tool, schema computed. '''
    match library:
        case 'invocables':
            import invocables

            def build( function: Any ) -> Any:
                tool = invocables.produce_invoker( function )
                access_schema( tool )
                return tool
        case 'pydantic-ai':
            import pydantic_ai

            def build( function: Any ) -> Any:
                tool = pydantic_ai.Tool( function )
                _ = tool.tool_def.parameters_json_schema
                return tool
        case 'openai-agents':
            import agents

            def build( function: Any ) -> Any:
                tool = agents.function_tool( function )
                _ = tool.params_json_schema
                return tool
        case 'anthropic':
            import anthropic

            def build( function: Any ) -> Any:
                tool = anthropic.beta_async_tool( function )
                tool.to_dict( )
                return tool
        case 'fastmcp':
            from fastmcp.tools import Tool

            def build( function: Any ) -> Any:
                tool = Tool.from_function( function )
                _ = tool.parameters
                return tool
        case _: raise ValueError( library )
    return build


def produce_grouper(
    library: str
) -> Callable[ [ str, Sequence[ Any ] ], Any ]:
    ''' Returns function: name and tools to the library's own group. '''
    match library:
        case 'invocables':
            import invocables
            return invocables.produce_ensemble
        case 'pydantic-ai':
            from pydantic_ai import FunctionToolset
            return lambda _, tools: FunctionToolset( list( tools ) )
        case 'openai-agents':
            import agents
            return lambda name, tools: agents.Agent(
                name = name, tools = list( tools ) )
        case 'fastmcp':
            from fastmcp import FastMCP

            def group( name: str, tools: Sequence[ Any ] ) -> Any:
                server = FastMCP( name )
                for tool in tools: server.add_tool( tool )
                return server
            return group
        case _: return lambda _, tools: list( tools )


def access_schema( invoker: Any ) -> Any:
    ''' Returns JSON Schema of invocables' invoker. '''
    return invoker.arguments_schema
