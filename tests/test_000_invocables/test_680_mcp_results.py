# SPDX-License-Identifier: Apache-2.0

''' Every kind of MCP content block maps onto a content canister. '''


import base64

import mcp_types
import pytest

import invocables

from invocables import exceptions
from invocables.mcp import configuration, results


_PNG = b'\x89PNG\r\n\x1a\n' + b'\x00' * 8
_WAVE = b'RIFF\x00\x00\x00\x00WAVE'


def _encode( data ):
    return base64.b64encode( data ).decode( 'ascii' )


def test_100_every_block_kind( ):
    ''' Text, image, audio, embedded text and blob, link, structure. '''
    result = mcp_types.CallToolResult(
        content = [
            mcp_types.TextContent( type = 'text', text = 'hello' ),
            mcp_types.ImageContent(
                type = 'image', data = _encode( _PNG ),
                mime_type = 'image/png' ),
            mcp_types.AudioContent(
                type = 'audio', data = _encode( _WAVE ),
                mime_type = 'audio/wav' ),
            mcp_types.EmbeddedResource(
                type = 'resource',
                resource = mcp_types.TextResourceContents(
                    uri = 'file:///a.txt', mime_type = 'text/plain',
                    text = 'inside' ) ),
            mcp_types.EmbeddedResource(
                type = 'resource',
                resource = mcp_types.BlobResourceContents(
                    uri = 'file:///b.bin', blob = _encode( b'\x01\x02' ) ) ),
            mcp_types.ResourceLink(
                type = 'resource_link', uri = 'file:///c.txt', name = 'c',
                description = 'The c file.', mime_type = 'text/plain' ),
        ],
        structured_content = { 'answer': 42 } )
    content = results.produce_contents( result )
    assert content == (
        invocables.TextContent( text = 'hello' ),
        invocables.ImageContent( data = _PNG, media_type = 'image/png' ),
        invocables.AudioContent( data = _WAVE, media_type = 'audio/wav' ),
        invocables.ResourceContent(
            uri = 'file:///a.txt', media_type = 'text/plain',
            text = 'inside' ),
        invocables.ResourceContent( uri = 'file:///b.bin', data = b'\x01\x02' ),
        invocables.ResourceLinkContent(
            uri = 'file:///c.txt', name = 'c', description = 'The c file.',
            media_type = 'text/plain' ),
        invocables.StructureContent( data = { 'answer': 42 } ),
    )


def test_110_error_result_is_refusal( ):
    ''' A result flagged isError raises refusal with its text. '''
    result = mcp_types.CallToolResult(
        content = [ mcp_types.TextContent( type = 'text', text = 'no way' ) ],
        is_error = True )
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        results.produce_contents( result )
    assert caught.value.message == 'no way'
    silent = mcp_types.CallToolResult( content = [ ], is_error = True )
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        results.produce_contents( silent )
    assert 'without a message' in caught.value.message


def test_120_empty_result( ):
    ''' A result with no content gives no canisters. '''
    assert results.produce_contents(
        mcp_types.CallToolResult( content = [ ] ) ) == ( )


def test_200_url_secrets_redacted( ):
    ''' Query and credentials of a URL are known secrets. '''
    parameters = configuration.ServerParameters(
        transport = configuration.Transports.StreamableHttp,
        url = 'https://user:hunter22@example.com/mcp?token=abcdef' )
    secrets = parameters.survey_url_secrets( )
    assert 'token=abcdef' in secrets
    assert 'hunter22' in secrets
    redactor = configuration.Redactor( secrets )
    assert 'abcdef' not in redactor.redact(
        "401 for url 'https://user:hunter22@example.com/mcp?token=abcdef'" )
