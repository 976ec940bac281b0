# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: samples with tools, and elicits by URL.

    ``choose( topic )`` asks its client's model for a completion with one
    tool (``lookup( term )``) which it must call (``toolChoice``
    ``required``), then returns the answer as JSON (an MCP error as
    ``error <code>: <message>``). ``repeat( count )`` asks for count
    completions without tools and returns the answers in a JSON list
    (``ok`` or the error). ``visit( )`` asks its client's user to visit a
    URL (elicitation of mode ``url``, identifier ``visit-1``), tells that
    the visit is complete if accepted, and returns the answer as JSON.
'''


import json

from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import SamplingMessage, TextContent, Tool, ToolChoice


server = MCPServer( 'sampling' )

_LOOKUP = Tool(
    name = 'lookup', description = 'Looks a term up.',
    input_schema = {
        'type': 'object',
        'properties': { 'term': { 'type': 'string' } },
        'required': [ 'term' ] } )


def _ask( topic: str ) -> list[ SamplingMessage ]:
    return [ SamplingMessage(
        role = 'user',
        content = TextContent( type = 'text', text = f"Look {topic} up." ) ) ]


@server.tool( structured_output = False )
async def choose( topic: str, context: Context ) -> str:
    ''' Samples with a tool which the model must call. '''
    try:
        sampled = await context.session.create_message(
            _ask( topic ), max_tokens = 50, tools = [ _LOOKUP ],
            tool_choice = ToolChoice( mode = 'required' ),
            related_request_id = context.request_id )
    except MCPError as error:
        return json.dumps( f"error {error.error.code}: {error.error.message}" )
    return json.dumps( sampled.model_dump(
        by_alias = True, mode = 'json', exclude_none = True ) )


@server.tool( structured_output = False )
async def repeat( count: int, context: Context ) -> str:
    ''' Samples count times without tools. '''
    answers: list[ str ] = [ ]
    for _ in range( count ):
        try:
            await context.session.create_message(
                _ask( 'tea' ), max_tokens = 10,
                related_request_id = context.request_id )
        except MCPError as error:
            answers.append(
                f"error {error.error.code}: {error.error.message}" )
        else: answers.append( 'ok' )
    return json.dumps( answers )


@server.tool( structured_output = False )
async def visit( context: Context ) -> str:
    ''' Asks the user to visit a URL; tells when it is done. '''
    try:
        elicited = await context.session.elicit_url(
            'Please authorize.', 'https://example.com/authorize?state=1',
            'visit-1', related_request_id = context.request_id )
    except MCPError as error:
        return json.dumps( f"error {error.error.code}: {error.error.message}" )
    if elicited.action == 'accept':
        await context.session.send_elicit_complete(
            'visit-1', related_request_id = context.request_id )
    return json.dumps( elicited.model_dump(
        by_alias = True, mode = 'json', exclude_none = True ) )


if __name__ == '__main__': server.run( )
