# SPDX-License-Identifier: Apache-2.0

''' The design documents' Examples 1 to 3 and conversation example, run.

    From ``000``'s "Examples and Usage Patterns" and "Complete Conversation
    Example", translated only where a name must change (see
    ``documentation/design-documents.rst``): ``InvokerClass`` is
    ``invocables.FunctionInvoker``, ``EnsembleClass`` is
    ``invocables.LocalEnsemble``, ``TextualContentClass`` is
    ``invocables.TextContent``; the application keeps its user and
    assistant messages itself (here, OpenAI Chat Completions messages).
'''


import asyncio
import datetime
import json
import logging

from collections.abc import Mapping
from typing import Any

import frigid

import invocables

from absence import absent, is_absent


logger = logging.getLogger( __name__ )


# Example 1: Simple Tool Invocation


async def get_weather(
    context: invocables.Context,
    arguments: Mapping[ str, Any ],
) -> frigid.Dictionary[ str, Any ]:
    ''' Fetches weather for specified location. '''
    location = arguments[ 'location' ]
    logger.info( 'Weather for %s.', location )
    return frigid.Dictionary( {
        'temperature': 62,
        'conditions': 'Partly cloudy',
    } )


async def read_file(
    context: invocables.Context, arguments: Mapping[ str, Any ]
) -> str:
    ''' Returns contents of a file (a stand-in). '''
    return f"contents of {arguments[ 'path' ]}"


async def write_file(
    context: invocables.Context, arguments: Mapping[ str, Any ]
) -> str:
    ''' Writes a file (a stand-in). '''
    return f"wrote {arguments[ 'path' ]}"


async def list_directory(
    context: invocables.Context, arguments: Mapping[ str, Any ]
) -> list[ str ]:
    ''' Lists a folder (a stand-in). '''
    return [ 'report.txt' ]


def produce_file_invoker(
    name: str, invocable: invocables.Invocable
) -> invocables.FunctionInvoker:
    ''' Produces invoker of a file tool taking a path. '''
    return invocables.FunctionInvoker(
        name = name,
        invocable = invocable,
        arguments_schema = frigid.Dictionary( {
            'type': 'object',
            'properties': { 'path': { 'type': 'string' } },
            'required': [ 'path' ],
        } ) )


read_file_invoker = produce_file_invoker( 'read_file', read_file )
write_file_invoker = produce_file_invoker( 'write_file', write_file )
list_directory_invoker = produce_file_invoker(
    'list_directory', list_directory )


# Example 2: Ensemble with Multiple Tools


io_ensemble = invocables.LocalEnsemble(
    name = "io",
    invokers = frigid.Dictionary( {
        'read_file': read_file_invoker,
        'write_file': write_file_invoker,
        'list_directory': list_directory_invoker,
    } ),
    configuration = frigid.Dictionary( { 'timeout': 30 } ),
    connection = absent,
)


# Example 1, continued: the invoker, in its ensemble.


invoker = invocables.FunctionInvoker(
    name = "get_weather",
    invocable = get_weather,
    arguments_schema = frigid.Dictionary( {
        'type': 'object',
        'properties': {
            'location': { 'type': 'string', 'description': 'City and state' },
        },
        'required': [ 'location' ],
    } ),
    ensemble = io_ensemble,
)


def handle_tool_error( error: invocables.Fault ) -> None:
    ''' Shows error which the model will receive. '''
    print( f"tool error ({error.genus.value}): {error.message}" )


def process_tool_result(
    content: invocables.canisters.ContentSequence
) -> None:
    ''' Shows result which the model will receive. '''
    print( 'tool result:', json.dumps(
        [ invocables.canisters.render_content_text( item )
          for item in content ] ) )


def rollback_conversation( ) -> None:
    ''' Application's own rollback of the conversation. '''
    print( 'conversation rolled back' )


async def example_2( ) -> None:
    ''' Connects ensemble and accesses invoker. '''
    await io_ensemble.connect( )
    invoker = io_ensemble.access_invoker( 'read_file' )
    print( invoker.name, 'in', invoker.ensemble.name
        if not is_absent( invoker.ensemble ) else '-',
        'timeout', io_ensemble.configuration[ 'timeout' ] )
    await io_ensemble.disconnect( )


async def example_3(
    arguments: Mapping[ str, Any ], context: invocables.Context
) -> None:
    ''' Executes with error handling. '''
    try:
        result = await invocables.execute_invoker(
            invoker, arguments, context )
        if not is_absent( result.error ):
            # Tool execution failed
            handle_tool_error( result.error )
        else:
            # Tool execution succeeded
            process_tool_result( result.content )
    except invocables.exceptions.ToolExecutionFailure as exception:
        # Fatal tool execution error
        logger.exception( "Tool failed: %s", exception.name )
        rollback_conversation( )


def produce_conversation( ) -> list[ object ]:
    ''' The complete conversation example of 000, as canisters. '''
    now = datetime.datetime.now( datetime.timezone.utc )
    return [
        # 1. User asks question requiring tool (the application's message)
        { 'role': 'user', 'content': "What's the weather in SF?" },
        # 2. LLM requests tool invocation
        invocables.InvocationCanister(
            identifier = "call_abc123",
            name = "get_weather",
            arguments = frigid.Dictionary(
                { 'location': 'San Francisco, CA' } ),
            timestamp = now,
        ),
        # 3. Application executes tool and provides result
        invocables.ResultCanister(
            invocation_id = "call_abc123",
            content = invocables.TextContent(
                text = '{"temperature": 62, "conditions": "Partly cloudy"}',
            ),
            error = absent,
            timestamp = now,
        ),
        # 4. LLM generates final response (the application's message)
        { 'role': 'assistant', 'content':
            "The weather in San Francisco is 62°F and partly cloudy." },
    ]


async def main( ) -> None:
    ''' Runs the examples. '''
    await example_2( )
    context = invocables.InvocationContext(
        auxdata = None, invoker = invoker, namespace = { } )
    await example_3(
        frigid.Dictionary( { 'location': 'San Francisco, CA' } ), context )
    await example_3( frigid.Dictionary( { 'place': 'SF' } ), context )
    conversation = produce_conversation( )
    processor = invocables.produce_processor( 'openai' )
    results = [
        item for item in conversation
        if isinstance( item, invocables.ResultCanister ) ]
    for message in processor.nativize_results( results ):
        print( json.dumps( message ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
