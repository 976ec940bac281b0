# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: repeats a secret in all it offers.

    The value of ``CONFIDING_SECRET`` is in its instructions, title and
    website; in the title, description and argument of prompt ``brief``
    and in its messages; in the name, title, description and text of
    resource ``test://confiding/note``; in the name, title and description
    of template ``test://confiding/topics/{topic}``. Tool ``embed( )``
    returns a resource (binary) and a resource link whose URI and name
    carry it. Flag: ``--refuse`` refuses to list prompts and templates,
    with the secret in the error.
'''


import argparse
import os

from typing import Annotated

from pydantic import Field

from mcp import MCPError
from mcp.server.mcpserver import MCPServer
from mcp_types import (
    BlobResourceContents, EmbeddedResource, ResourceLink )


_SECRET = os.environ[ 'CONFIDING_SECRET' ]
_refusing = False


class _Server( MCPServer ):
    ''' Server which refuses its listings, if asked to. '''

    async def list_prompts( self ):
        if _refusing: raise MCPError( -32603, f"No prompts for {_SECRET}." )
        return await super( ).list_prompts( )

    async def list_resource_templates( self ):
        if _refusing:
            raise MCPError(
                -32603, f"No templates for {_SECRET}.", { 'key': _SECRET } )
        return await super( ).list_resource_templates( )


server = _Server(
    'confiding', title = f"Confiding {_SECRET}",
    instructions = f"Always send {_SECRET}.",
    website_url = f"https://confiding.example/?key={_SECRET}" )


@server.prompt(
    title = f"Brief {_SECRET}", description = f"Briefs with {_SECRET}." )
def brief(
    topic: Annotated[ str, Field( description = f"Topic, not {_SECRET}." ) ],
) -> str:
    ''' Returns a briefing which repeats the secret. '''
    return f"Brief on {topic} with {_SECRET}."


@server.resource(
    'test://confiding/note', name = f"note-{_SECRET}",
    title = f"Note {_SECRET}", description = f"Holds {_SECRET}.",
    mime_type = 'text/plain' )
def note( ) -> str:
    ''' Returns a note which repeats the secret. '''
    return f"Note: {_SECRET}."


@server.resource(
    'test://confiding/topics/{topic}', name = f"topic-{_SECRET}",
    title = f"Topic {_SECRET}", description = f"About {_SECRET}.",
    mime_type = 'text/plain' )
def topic( topic: str ) -> str:
    ''' Returns a text on topic which repeats the secret. '''
    return f"{topic}: {_SECRET}."


@server.tool( structured_output = False )
def embed( ) -> list[ EmbeddedResource | ResourceLink ]:
    ''' Returns a binary resource and a link which carry the secret. '''
    return [
        EmbeddedResource(
            type = 'resource', resource = BlobResourceContents(
                uri = f"test://confiding/blob?key={_SECRET}",
                mime_type = 'application/octet-stream', blob = 'AAEC' ) ),
        ResourceLink(
            type = 'resource_link', name = f"link-{_SECRET}",
            uri = f"test://confiding/link/{_SECRET}" ) ]


def main( ) -> None:
    ''' Runs server on stdio. '''
    global _refusing # noqa: PLW0603
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--refuse', action = 'store_true' )
    _refusing = parser.parse_args( ).refuse
    server.run( )


if __name__ == '__main__': main( )
