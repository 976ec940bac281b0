# SPDX-License-Identifier: Apache-2.0
''' Serving: local tools as an MCP server, called by the mcp client. '''

import asyncio

from mcp import Client

import invocables

from invocables import serving


def add( a: int, b: int ) -> int:
    ''' Adds two integers. '''
    return a + b


def multiply( a: int, b: int ) -> int:
    ''' Multiplies two integers. '''
    return a * b


async def main( ) -> None:
    ''' Serves two ensembles in process; lists and calls their tools. '''
    ensembles = [
        invocables.produce_ensemble( 'math', [ add, multiply ] ),
        invocables.produce_ensemble( 'more', [ add ] ),
    ]
    server = serving.ToolServer( ensembles, name = 'calculator' )
    async with (
        invocables.connect_ensembles( ensembles ),
        Client( server.produce_server( ) ) as client,
    ):
        listing = await client.list_tools( )
        print( sorted( tool.name for tool in listing.tools ) )
        result = await client.call_tool( 'math__add', { 'a': 2, 'b': 3 } )
        print( result.content[ 0 ] )
        result = await client.call_tool( 'multiply', { 'a': 'x', 'b': 3 } )
        print( result.is_error )


if __name__ == '__main__': asyncio.run( main( ) )
