# SPDX-License-Identifier: Apache-2.0

''' Upstream MCP server (stdio, the mcp SDK's MCPServer) whose prompt and
    resource ask their client while they are made, for the tests of the
    gateway's relays (``test_937_serving_gateway_relays.py``).

    The prompt ``advise( topic )`` logs, elicits (a required string
    ``view``) and samples, then tells what the client answered as JSON (an
    MCP error as ``error <code>: <message>``). The resources
    ``test://relay/secret/{door}`` elicit a required string ``word``
    (``The word?``), and tell the answer likewise. Flag: ``--http PORT``
    serves streamable HTTP on 127.0.0.1 instead of stdio.
'''


import argparse
import json

from typing import Any

from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import SamplingMessage, TextContent


server = MCPServer( 'relay-upstream' )

_VIEW_SCHEMA = {
    'type': 'object',
    'properties': { 'view': { 'type': 'string' } },
    'required': [ 'view' ],
}
_WORD_SCHEMA = {
    'type': 'object',
    'properties': { 'word': { 'type': 'string' } },
    'required': [ 'word' ],
}


@server.prompt( 'advise', description = 'Advice after asking the user.' )
async def advise( topic: str, context: Context ) -> str:
    # Deprecated by MCP 2026-07-28; this server speaks 2025-11-25.
    legacy: Any = context
    await legacy.log( 'info', { 'advising': topic }, logger_name = 'relay' )
    answers: dict[ str, object ] = { }
    try:
        elicited = await context.session.elicit_form(
            f"Your view on {topic}?", _VIEW_SCHEMA,
            related_request_id = context.request_id )
        answers[ 'elicited' ] = elicited.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    except MCPError as error:
        answers[ 'elicited' ] = (
            f"error {error.error.code}: {error.error.message}" )
    try:
        sampled = await legacy.session.create_message(
            [ SamplingMessage(
                role = 'user',
                content = TextContent(
                    type = 'text', text = f"Summarize {topic}." ) ) ],
            max_tokens = 50, related_request_id = context.request_id )
        answers[ 'sampled' ] = sampled.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    except MCPError as error:
        answers[ 'sampled' ] = (
            f"error {error.error.code}: {error.error.message}" )
    return json.dumps( answers )


@server.resource(
    'test://relay/secret/{door}', name = 'secret',
    description = 'A resource which asks a word first.',
    mime_type = 'application/json' )
async def secret( door: str, context: Context ) -> str:
    try:
        elicited = await context.session.elicit_form(
            'The word?', _WORD_SCHEMA,
            related_request_id = context.request_id )
        answer: object = elicited.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    except MCPError as error:
        answer = f"error {error.error.code}: {error.error.message}"
    return json.dumps( { 'door': door, 'elicited': answer } )


def main( ) -> None:
    ''' Serves on stdio, or streamable HTTP with ``--http PORT``. '''
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--http', type = int )
    arguments = parser.parse_args( )
    if arguments.http:
        server.settings.log_level = 'WARNING'
        server.run(
            'streamable-http', host = '127.0.0.1', port = arguments.http )
    else: server.run( )


if __name__ == '__main__': main( )
