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

    Tool ``reject( )`` refuses the call with the secret in the message and
    data of its error; ``garble( count )`` answers count text blocks out
    of shape (their text an object quoting the secret); ``typed( )``
    returns an image, an audio clip, two resources (text, binary) and a
    resource link whose media types carry it; ``halves( gap, error )``
    returns it split over two text blocks (the second led by gap), as an
    error result if error. Flag: ``--modern`` speaks MCP 2026-07-28 alone
    (refuses the legacy handshake, ``initialize``). Flag: ``--named``
    adds a tool ``peek_<secret>``, a prompt ``brief_<secret>`` and a
    prompt ``ask`` whose argument is named after the secret.
'''


import argparse
import os

from typing import Annotated, Any

import anyio

from pydantic import Field

from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ErrorData,
    ImageContent,
    JSONRPCError,
    PromptArgument,
    ResourceLink,
    TextContent,
    TextResourceContents,
)


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


@server.tool( )
def reject( ) -> str:
    ''' Refuses the call, quoting the secret in message and data. '''
    raise MCPError( -32602, f"Bad token {_SECRET}.", { 'token': _SECRET } )


@server.tool( )
def garble( count: int = 1 ) -> str:
    ''' Answers text blocks out of shape (see _garble). '''
    return str( count )


async def _garble(
    ctx: ServerRequestContext[ Any, Any ], call_next: CallNext
) -> HandlerResult:
    ''' Replaces the answer of garble( count ): count text blocks whose
        text is an object quoting the secret (past the SDK's check). '''
    result = await call_next( ctx )
    parameters: Any = ctx.params or { }
    if ctx.method != 'tools/call' or parameters.get( 'name' ) != 'garble':
        return result
    arguments: dict[ str, Any ] = parameters.get( 'arguments' ) or { }
    count = int( arguments.get( 'count', 1 ) )
    block = { 'type': 'text', 'text': { 'token': _SECRET } }
    return { **dict( result or { } ), 'content': [ block ] * count }


server.middleware.append( _garble )


@server.tool( structured_output = False )
def typed( ) -> list[
    ImageContent | AudioContent | EmbeddedResource | ResourceLink
]:
    ''' Returns contents whose media types carry the secret. '''
    return [
        ImageContent(
            type = 'image', data = 'iVBORw0KGgo=',
            mime_type = f"image/png; x={_SECRET}" ),
        AudioContent(
            type = 'audio', data = 'AAAA', mime_type = f"audio/{_SECRET}" ),
        EmbeddedResource(
            type = 'resource', resource = TextResourceContents(
                uri = 'test://confiding/typed.txt', text = 'hi',
                mime_type = f"text/plain; charset={_SECRET}" ) ),
        EmbeddedResource(
            type = 'resource', resource = BlobResourceContents(
                uri = 'test://confiding/typed.bin', blob = 'AAEC',
                mime_type = f"application/{_SECRET}" ) ),
        ResourceLink(
            type = 'resource_link', name = 'typed', uri = 'test://c',
            mime_type = f"text/{_SECRET}" ) ]


@server.tool( structured_output = False )
def halves( gap: str = '', error: bool = False ) -> CallToolResult:
    ''' Returns the secret split over two text blocks. '''
    half = len( _SECRET ) // 2
    return CallToolResult(
        content = [
            TextContent( type = 'text', text = f"key {_SECRET[ : half ]}" ),
            TextContent(
                type = 'text', text = f"{gap}{_SECRET[ half : ]} ends" ) ],
        is_error = error )


async def _serve_modern( ) -> None:
    ''' Serves over stdio, refusing the legacy handshake. '''
    lowlevel: Any = getattr( server, '_lowlevel_server' )
    async with stdio_server( ) as ( reading, writing ):
        sending, receiving = anyio.create_memory_object_stream[
            SessionMessage | Exception ]( 0 )

        async def pump( ) -> None:
            async with sending:
                async for item in reading:
                    message: Any = getattr( item, 'message', None )
                    if getattr( message, 'method', None ) == 'initialize':
                        await writing.send( SessionMessage( JSONRPCError(
                            jsonrpc = '2.0', id = message.id,
                            error = ErrorData(
                                code = -32022,
                                message = 'Unsupported protocol version.',
                                data = {
                                    'supported': [ '2026-07-28' ],
                                    'requested': '2025-11-25' } ) ) ) )
                        continue
                    await sending.send( item )

        async with anyio.create_task_group( ) as group:
            group.start_soon( pump )
            await lowlevel.run(
                receiving, writing,
                lowlevel.create_initialization_options( ) )
            group.cancel_scope.cancel( )


def _add_named( ) -> None:
    ''' Adds tools and prompts whose names hold the secret. '''
    def peek( ) -> str:
        return 'peeked'

    def brief_named( ) -> str:
        return 'Brief.'

    def ask( **arguments: str ) -> str:
        return 'Asked.'

    server.add_tool( peek, name = f"peek_{_SECRET}" )
    server.add_prompt( Prompt.from_function(
        brief_named, name = f"brief_{_SECRET}" ) )
    prompt = Prompt.from_function( ask, name = 'ask' )
    prompt.arguments = [ PromptArgument( name = _SECRET, required = True ) ]
    server.add_prompt( prompt )


def main( ) -> None:
    ''' Runs server on stdio. '''
    global _refusing # noqa: PLW0603
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--refuse', action = 'store_true' )
    parser.add_argument( '--modern', action = 'store_true' )
    parser.add_argument( '--named', action = 'store_true' )
    options = parser.parse_args( )
    _refusing = options.refuse
    if options.named: _add_named( )
    if options.modern: anyio.run( _serve_modern )
    else: server.run( )


if __name__ == '__main__': main( )
