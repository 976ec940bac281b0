# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: a tool which blocks until cancelled.

    ``block( folder )`` writes ``started`` in the folder, then waits; when
    its call is cancelled (``notifications/cancelled``), it writes
    ``cancelled`` there before it ends.
'''


import asyncio

from pathlib import Path

from mcp.server.mcpserver import MCPServer


server = MCPServer( 'cancel' )


@server.tool( structured_output = False )
async def block( folder: str ) -> str:
    ''' Blocks until cancelled. '''
    ( Path( folder ) / 'started' ).write_text( 'started' )
    try: await asyncio.sleep( 3600 )
    except asyncio.CancelledError:
        ( Path( folder ) / 'cancelled' ).write_text( 'cancelled' )
        raise
    return 'never'


if __name__ == '__main__': server.run( )
