# SPDX-License-Identifier: Apache-2.0

''' Upstream MCP server (stdio, the mcp SDK's MCPServer) of the resources
    and prompts which the conformance suite's server scenarios read:
    served through ``invocables serve``, which aggregates them. The prompt
    ``test_input_required_result_prompt`` asks its client for a context
    (elicitation), which serve relays to its own client (under MCP
    2026-07-28, as a round of input). The tools ``test_trigger_tool_change``
    and ``test_trigger_prompt_change`` each add a tool or a prompt and
    announce it, for the suite's checks that serve tells its listening
    clients (``subscriptions/listen``).
'''


import base64
import json

from mcp.server.mcpserver import Context, Image, MCPServer, UserMessage
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.types import EmbeddedResource, TextResourceContents


_CONTEXT_SCHEMA = {
    'type': 'object',
    'properties': { 'context': { 'type': 'string' } },
    'required': [ 'context' ],
}
_PNG = base64.b64decode(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQI'
    'AX8jx0gAAAABJRU5ErkJggg==' )

server = MCPServer( 'conformance-upstream' )


@server.resource(
    'test://static-text', name = 'static-text',
    description = 'A static text resource.', mime_type = 'text/plain' )
def static_text( ) -> str:
    return 'This is the content of the static text resource.'


@server.resource(
    'test://static-binary', name = 'static-binary',
    description = 'A static binary resource.', mime_type = 'image/png' )
def static_binary( ) -> bytes:
    return _PNG


@server.resource(
    'test://watched-resource', name = 'watched-resource',
    description = 'A resource to subscribe to.', mime_type = 'text/plain' )
def watched( ) -> str:
    return 'Watched resource content.'


@server.resource(
    'test://template/{id}/data', name = 'template',
    description = 'A resource template.', mime_type = 'application/json' )
def template( id: str ) -> str: # noqa: A002
    return json.dumps( {
        'id': id, 'templateTest': True, 'data': f"Data for ID: {id}" } )


@server.prompt(
    'test_simple_prompt', description = 'A simple prompt for testing.' )
def simple( ) -> str:
    return 'This is a simple prompt for testing.'


@server.prompt(
    'test_prompt_with_arguments', description = 'A prompt with arguments.' )
def with_arguments( arg1: str, arg2: str ) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(
    'test_prompt_with_embedded_resource',
    description = 'A prompt with an embedded resource.' )
def with_resource( resourceUri: str ) -> list[ UserMessage ]: # noqa: N803
    return [
        UserMessage( content = EmbeddedResource(
            type = 'resource', resource = TextResourceContents(
                uri = resourceUri, mime_type = 'text/plain',
                text = 'Embedded resource content for testing.' ) ) ),
        UserMessage( 'Please process the embedded resource above.' ),
    ]


@server.prompt(
    'test_prompt_with_image', description = 'A prompt with an image.' )
def with_image( ) -> list[ UserMessage ]:
    return [
        UserMessage( content = Image(
            data = _PNG, format = 'png' ).to_image_content( ) ),
        UserMessage( 'Please analyze the image above.' ),
    ]


@server.prompt(
    'test_input_required_result_prompt',
    description = 'A prompt which asks the user for a context first.' )
async def with_input( context: Context ) -> str:
    elicited = await context.session.elicit_form(
        'What context should the prompt use?', _CONTEXT_SCHEMA,
        related_request_id = context.request_id )
    given = ( elicited.content or { } ).get( 'context', '' )
    return f"Prompt with the context {given!r} ({elicited.action})."


@server.tool( 'test_trigger_tool_change',
    description = 'Adds a tool to this server, and announces it.' )
async def trigger_tool_change( context: Context ) -> str:
    name = f"test_added_tool_{len( await server.list_tools( ) )}"
    server.add_tool( _echo, name = name, description = 'Echoes its text.' )
    await context.session.send_tool_list_changed( )
    return f"Added the tool {name}."


@server.tool( 'test_trigger_prompt_change',
    description = 'Adds a prompt to this server, and announces it.' )
async def trigger_prompt_change( context: Context ) -> str:
    name = f"test_added_prompt_{len( await server.list_prompts( ) )}"
    server.add_prompt( Prompt.from_function(
        _echo, name = name, description = 'Echoes its text.' ) )
    await context.session.send_prompt_list_changed( )
    return f"Added the prompt {name}."


def _echo( text: str ) -> str:
    return text


if __name__ == '__main__': server.run( )
