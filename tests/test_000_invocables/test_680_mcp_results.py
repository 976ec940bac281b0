# SPDX-License-Identifier: Apache-2.0

''' Every kind of MCP content block maps onto a content canister. '''


import base64
import functools
import json

import pytest

import invocables

from invocables import exceptions
from invocables.mcp import configuration, results, _sdk as sdk


class _Models:
    ''' SDK models, built from snake_case fields on both SDK majors. '''

    def __getattr__( self, name ):
        return functools.partial(
            sdk.produce_model, getattr( sdk.types, name ) )


mcp_types = _Models( )


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


def _text( text ):
    return mcp_types.TextContent( type = 'text', text = text )


def test_300_structure_repeated_as_text_given_once( ):
    ''' Structure whose JSON is also the text is given once, as structure.

        Before, ``as_text( )`` (what text-only providers receive) held the
        same JSON twice.
    '''
    data = { 'timezone': 'UTC', 'hour': 12 }
    result = mcp_types.CallToolResult(
        content = [ _text( json.dumps( data, indent = 2 ) ) ],
        structured_content = data )
    content = results.produce_contents( result )
    assert content == ( invocables.StructureContent( data = data ), )
    canister = invocables.ResultCanister(
        invocation_id = 'a', content = content )
    assert canister.as_text( ) == json.dumps( data )


def test_310_structure_wrapping_text_given_once( ):
    ''' Structure which wraps the text in one field is given once, as text.
    '''
    result = mcp_types.CallToolResult(
        content = [ _text( 'line one\nline two' ) ],
        structured_content = { 'content': 'line one\nline two' } )
    assert results.produce_contents( result ) == (
        invocables.TextContent( text = 'line one\nline two' ), )


def test_320_different_structure_kept( ):
    ''' Text and structure which differ are both kept. '''
    result = mcp_types.CallToolResult(
        content = [ _text( 'It is noon in UTC.' ), _text( 'Sunny.' ) ],
        structured_content = { 'hour': 12 } )
    content = results.produce_contents( result )
    assert len( content ) == 3
    other = mcp_types.CallToolResult(
        content = [ _text( '{"hour": 13}' ) ],
        structured_content = { 'hour': 12 } )
    assert len( results.produce_contents( other ) ) == 2


def test_400_secrets_redacted_from_results( ):
    ''' Every text of a result is redacted: blocks, resources, structure,
        error text.
    '''
    secret = 'sk-result-secret-99'
    redactor = configuration.Redactor( [ secret ] )
    result = mcp_types.CallToolResult(
        content = [
            _text( f"token {secret}" ),
            mcp_types.EmbeddedResource(
                type = 'resource',
                resource = mcp_types.TextResourceContents(
                    uri = 'file:///a.txt', text = secret ) ),
            mcp_types.ResourceLink(
                type = 'resource_link', uri = f"https://x.org/?k={secret}",
                name = 'link', description = f"about {secret}" ),
        ],
        structured_content = { 'nested': [ { secret: secret } ] } )
    content = results.produce_contents( result, redactor )
    assert secret not in repr( content )
    assert content[ 0 ].text == 'token ***'
    assert content[ -1 ].data == { 'nested': [ { '***': '***' } ] }
    failed = mcp_types.CallToolResult(
        content = [ _text( f"refused {secret}" ) ], is_error = True )
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        results.produce_contents( failed, redactor )
    assert caught.value.message == 'refused ***'
