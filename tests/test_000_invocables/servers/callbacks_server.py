# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: asks the client, reports what it got.

    ``ask( message )`` sends ``elicitation/create`` with a schema of a
    required string ``name`` and an optional integer ``age``; ``sample(
    prompt )`` sends ``sampling/createMessage``. Each returns the client's
    answer as JSON, or the MCP error the client sent as
    ``error <code>: <message>``, exactly, so that tests see what the
    server saw.
'''


import json

from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import SamplingMessage, TextContent


server = MCPServer( 'callbacks' )

_SCHEMA = {
    'type': 'object',
    'properties': {
        'name': { 'type': 'string' },
        'age': { 'type': 'integer' },
    },
    'required': [ 'name' ],
}


@server.tool( structured_output = False )
async def ask( message: str, context: Context ) -> str:
    ''' Asks the client for a name; returns its answer or its error. '''
    try:
        result = await context.session.elicit_form(
            message, _SCHEMA, related_request_id = context.request_id )
    except MCPError as error:
        return f"error {error.error.code}: {error.error.message}"
    return json.dumps( result.model_dump(
        by_alias = True, mode = 'json', exclude_none = True ) )


@server.tool( structured_output = False )
async def sample( prompt: str, context: Context ) -> str:
    ''' Asks the client's model; returns its answer or its error. '''
    try:
        result = await context.session.create_message(
            [ SamplingMessage(
                role = 'user',
                content = TextContent( type = 'text', text = prompt ) ) ],
            max_tokens = 100, related_request_id = context.request_id )
    except MCPError as error:
        return f"error {error.error.code}: {error.error.message}"
    return json.dumps( result.model_dump(
        by_alias = True, mode = 'json', exclude_none = True ) )


if __name__ == '__main__': server.run( )
