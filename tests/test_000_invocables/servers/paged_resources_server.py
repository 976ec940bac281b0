# SPDX-License-Identifier: Apache-2.0

''' MCP server which lists five resources, two templates and five prompts,
    two per page; its one tool is named ``list_resources``, as a tool
    which lists resources for the model would be. With ``--endless
    DELAY``, every listing gives a new cursor for ever, each page after
    DELAY seconds.
'''


import sys

from typing import Any

import anyio

from mcp.server.mcpserver import MCPServer
from mcp_types import (
    ListPromptsResult,
    ListResourceTemplatesResult,
    ListResourcesResult,
)


PAGE_SIZE = 2
ENDLESS = (
    float( sys.argv[ 2 ] ) if sys.argv[ 1 : 2 ] == [ '--endless' ] else None )


async def _page(
    items: list[ Any ], params: Any
) -> tuple[ list[ Any ], Any ]:
    cursor = getattr( params, 'cursor', None ) if params else None
    start = int( cursor ) if cursor else 0
    end = start + PAGE_SIZE
    if ENDLESS is not None:
        await anyio.sleep( ENDLESS )
        first = start % len( items )
        return items[ first : first + PAGE_SIZE ], str( end )
    return items[ start : end ], ( str( end ) if end < len( items ) else None )


class PagedServer( MCPServer ):
    ''' Server which paginates its listings. '''

    async def _handle_list_resources(
        self, ctx: Any, params: Any
    ) -> ListResourcesResult:
        items, following = await _page( await self.list_resources( ), params )
        return ListResourcesResult( resources = items, next_cursor = following )

    async def _handle_list_resource_templates(
        self, ctx: Any, params: Any
    ) -> ListResourceTemplatesResult:
        items, following = await _page(
            await self.list_resource_templates( ), params )
        return ListResourceTemplatesResult(
            resource_templates = items, next_cursor = following )

    async def _handle_list_prompts(
        self, ctx: Any, params: Any
    ) -> ListPromptsResult:
        items, following = await _page( await self.list_prompts( ), params )
        return ListPromptsResult( prompts = items, next_cursor = following )


server = PagedServer( 'paged-resources' )


def _add( index: int ) -> None:
    def read( ) -> str:
        return f"text {index}"
    server.resource(
        f"note://{index}", name = f"note-{index}",
        mime_type = 'text/plain' )( read )

    def prompt( topic: str ) -> str:
        return f"Prompt {index} on {topic}."
    server.prompt( name = f"prompt-{index}" )( prompt )


for _index in range( 5 ): _add( _index )


@server.resource( 'blob://{key}', name = 'blob', mime_type = 'image/png' )
def _blob( key: str ) -> bytes:
    return b'\x89PNG' + key.encode( )


@server.resource( 'item://{key}', name = 'item' )
def _item( key: str ) -> str:
    return f"item {key}"


@server.tool( name = 'list_resources', structured_output = False )
def _list_resources( ) -> str:
    ''' Returns a word: a tool of the server named as the resource tool. '''
    return 'own tool'


if __name__ == '__main__': server.run( )
