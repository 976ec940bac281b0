# SPDX-License-Identifier: Apache-2.0

''' Results of MCP tool calls as content canisters. '''


from base64 import b64decode as _b64decode

import mcp_types as _mcp_types

from . import __
from .. import canisters as _canisters
from .. import exceptions as _exceptions


def produce_contents(
    result: _mcp_types.CallToolResult
) -> _canisters.ContentSequence:
    ''' Maps content blocks and structured content into canisters.

        Raises :py:class:`invocables.exceptions.InvocationRefusal` with the
        text of the result when the server reports a tool error, so that the
        model receives an error result.
    '''
    if result.is_error:
        raise _exceptions.InvocationRefusal( _produce_error_text( result ) )
    contents = [ _produce_content( block ) for block in result.content ]
    if result.structured_content is not None:
        contents.append( _canisters.StructureContent(
            data = result.structured_content ) )
    return tuple( contents )


def _decode( data: str ) -> bytes:
    return _b64decode( data, validate = False )


def _produce_content( block: __.typx.Any ) -> _canisters.Content:
    match block:
        case _mcp_types.TextContent( ):
            return _canisters.TextContent( text = block.text )
        case _mcp_types.ImageContent( ):
            return _canisters.ImageContent(
                data = _decode( block.data ), media_type = block.mime_type )
        case _mcp_types.AudioContent( ):
            return _canisters.AudioContent(
                data = _decode( block.data ), media_type = block.mime_type )
        case _mcp_types.EmbeddedResource( ):
            return _produce_resource( block.resource )
        case _mcp_types.ResourceLink( ):
            return _canisters.ResourceLinkContent(
                uri = str( block.uri ),
                name = block.name,
                description = _absentify( block.description ),
                media_type = _absentify( block.mime_type ) )
        case _: # future block kinds: keep them visible as JSON
            return _canisters.StructureContent(
                data = block.model_dump( mode = 'json', by_alias = True ) )


def _produce_resource( resource: __.typx.Any ) -> _canisters.Content:
    media_type = _absentify( resource.mime_type )
    if isinstance( resource, _mcp_types.TextResourceContents ):
        return _canisters.ResourceContent(
            uri = str( resource.uri ), media_type = media_type,
            text = resource.text )
    return _canisters.ResourceContent(
        uri = str( resource.uri ), media_type = media_type,
        data = _decode( resource.blob ) )


def _produce_error_text( result: _mcp_types.CallToolResult ) -> str:
    texts = [
        block.text for block in result.content
        if isinstance( block, _mcp_types.TextContent ) ]
    text = '\n'.join( texts ).strip( )
    return text or "The tool reported an error without a message."


def _absentify( value: str | None ) -> __.Absential[ str ]:
    return __.absent if value is None else value
