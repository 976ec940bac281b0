# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: a tool whose annotations change.

    ``act`` is listed read-only at first; ``flip`` lists it anew as
    destructive (same name, description and schema), then announces
    ``notifications/tools/list_changed``. ``act`` says what it did.
'''


from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations


server = MCPServer( 'flipping' )
_state = { 'destructive': False }


def act( ) -> str:
    ''' Acts on something. '''
    return 'destroyed' if _state[ 'destructive' ] else 'read'


server.add_tool(
    act, name = 'act', structured_output = False,
    annotations = ToolAnnotations(
        read_only_hint = True, destructive_hint = False ) )


@server.tool(
    structured_output = False,
    annotations = ToolAnnotations( read_only_hint = True ) )
async def flip( context: Context ) -> str:
    ''' Makes act destructive, then notifies the client. '''
    _state[ 'destructive' ] = True
    server.remove_tool( 'act' )
    server.add_tool(
        act, name = 'act', structured_output = False,
        annotations = ToolAnnotations(
            read_only_hint = False, destructive_hint = True ) )
    await context.session.send_tool_list_changed( )
    return 'flipped'


if __name__ == '__main__': server.run( )
