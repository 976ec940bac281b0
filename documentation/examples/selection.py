# SPDX-License-Identifier: Apache-2.0
''' Many tools, few tokens: wrappers, per-round selection and tool search.

    Runs offline: the "model" here is two scripted calls, given to the
    engine as a provider's processor would read them.
'''

import asyncio

import invocables

from invocables import processors
from invocables.toolsets import search, selection, wrappers


def read_file( path: str ) -> str:
    ''' Reads a text file. '''
    return f"contents of {path}"


def write_file( path: str, text: str ) -> str:
    ''' Writes a text file. '''
    return f"wrote {len( text )} characters to {path}"


def get_weather( city: str ) -> str:
    ''' Returns the weather forecast of a city. '''
    return f"Sunny in {city}."


def convert_currency( amount: float, source: str, target: str ) -> str:
    ''' Converts an amount of money from one currency to another. '''
    return f"{amount} {source} is {amount * 1.1:.2f} {target}."


def show_wrappers( ) -> None:
    ''' Filters and prefixes the tools of an ensemble. '''
    files = invocables.produce_ensemble( 'files', [
        invocables.produce_invoker(
            read_file, annotations = { 'readOnlyHint': True } ),
        write_file ] )
    readonly = wrappers.FilteredEnsemble(
        files, annotations = { 'readOnlyHint': True } )
    prefixed = wrappers.RenamedEnsemble( readonly, prefix = 'fs_' )
    print( [ invoker.name for invoker in prefixed.survey_invokers( ) ] )


async def show_search( ) -> None:
    ''' The model searches, then calls what it found, in the next round. '''
    files = invocables.produce_ensemble( 'files', [ read_file, write_file ] )
    misc = invocables.produce_ensemble(
        'misc', [ get_weather, convert_currency ] )
    tool_search = search.ToolSearch( [ files, misc ], loaded = 'read_file' )
    processor = processors.produce_processor( 'anthropic' )
    namespace: dict[ str, object ] = { }
    for round_, call in enumerate( (
        ( 'search_tools', { 'query': 'weather forecast' } ),
        ( 'get_weather', { 'city': 'Paris' } ),
    ), start = 1 ):
        offered = await selection.survey_selection(
            tool_search.ensembles, tool_search, round = round_,
            messages = ( ), namespace = namespace )
        tools = processor.prepare_tools( offered )
        print( round_, [ tool[ 'name' ] for tool in tools ] )
        invocation = invocables.InvocationCanister(
            identifier = f"call_{round_}", name = call[ 0 ],
            arguments = call[ 1 ] )
        ( result, ) = await invocables.execute_invocations(
            [ invocation ], offered, namespace = namespace )
        for content in result.content:
            if isinstance( content, invocables.TextContent ):
                print( content.text.splitlines( )[ 0 ] )


if __name__ == '__main__':
    show_wrappers( )
    asyncio.run( show_search( ) )
