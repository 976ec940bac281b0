# SPDX-License-Identifier: Apache-2.0

''' MCP server which lists its seven tools three per page. '''


from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ListToolsResult


PAGE_SIZE = 3


class PagedServer( MCPServer ):
    ''' Server which paginates its tool listing. '''

    async def _handle_list_tools(
        self, ctx: Any, params: Any
    ) -> ListToolsResult:
        tools = await self.list_tools( )
        cursor = getattr( params, 'cursor', None ) if params else None
        start = int( cursor ) if cursor else 0
        end = start + PAGE_SIZE
        following = str( end ) if end < len( tools ) else None
        return ListToolsResult(
            tools = tools[ start : end ], next_cursor = following )


server = PagedServer( 'paged' )


def _add( index: int ) -> None:
    def tool( ) -> str:
        return f"tool {index}"
    server.add_tool(
        tool, name = f"tool_{index}", description = f"Tool {index}.",
        structured_output = index % 2 == 0 )


for _index in range( 7 ): _add( _index )


if __name__ == '__main__': server.run( )
