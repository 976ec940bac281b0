# SPDX-License-Identifier: Apache-2.0

''' Resources of MCP servers offered to models as tools
    (``resources_as_tools``), on server-everything and on a server which
    paginates them and has a tool of the same name.
'''


import json

import pytest

from absence import is_absent

import invocables
import invocables.mcp

from invocables import canisters
from invocables.processors import produce_processor

from . import mcp_support


pytestmark = pytest.mark.asyncio


def _produce_everything( **options ):
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    return invocables.mcp.produce_ensemble(
        'everything', command = [ program, 'stdio' ], **options )


def _produce_paged( ):
    return invocables.mcp.produce_ensemble(
        'paged', resources_as_tools = True,
        command = mcp_support.produce_server_command(
            'paged_resources_server.py' ) )


def _invocation( name, arguments, identifier = 'c1' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


async def test_100_tools_offered( ):
    ''' With the option, the ensemble offers a listing and a reading tool
        beside the server's own, read-only, with schemas; without it,
        neither.
    '''
    async with _produce_everything( ) as plain:
        plain_names = { item.name for item in plain.survey_invokers( ) }
    async with _produce_everything( resources_as_tools = True ) as ensemble:
        names = [ item.name for item in ensemble.survey_invokers( ) ]
        descriptions = {
            item.name: item for item in ensemble.survey_tools( ) }
        assert ensemble.survey_invokers( ) is ensemble.survey_invokers( )
    assert 'list_resources' not in plain_names
    assert names[ -2 : ] == [ 'list_resources', 'read_resource' ]
    assert set( names[ : -2 ] ) == plain_names
    reading = descriptions[ 'read_resource' ]
    assert reading.argschema[ 'required' ] == [ 'uri' ]
    assert reading.annotations[ 'readOnlyHint' ] is True
    assert "'everything'" in reading.description
    assert "'list_resources'" in reading.description


async def test_110_listing_and_reading( ):
    ''' The listing names resources and templates; reading returns text,
        and a blob of text as text.
    '''
    async with _produce_everything( resources_as_tools = True ) as ensemble:
        results = await invocables.execute_invocations( [
            _invocation( 'list_resources', { }, 'c1' ),
            _invocation(
                'read_resource',
                { 'uri': 'demo://resource/dynamic/text/2' }, 'c2' ),
            _invocation(
                'read_resource',
                { 'uri': 'demo://resource/dynamic/blob/3' }, 'c3' ),
        ], [ ensemble ] )
    listing, text, blob = results
    assert all( _is_success( result ) for result in results )
    listed = listing.content[ 0 ].text
    assert "Resources of MCP server 'everything'" in listed
    assert 'demo://resource/static/document/' in listed
    assert 'demo://resource/dynamic/text/{resourceId}' in listed
    assert text.content[ 0 ].text.startswith( 'Resource 2' )
    assert blob.content[ 0 ].text.startswith( 'Resource 3' )


async def test_120_unknown_uri( ):
    ''' An unknown URI is an error result naming the server and the URI,
        telling the model what to do; the session stays up.
    '''
    async with _produce_everything( resources_as_tools = True ) as ensemble:
        result, = await invocables.execute_invocations(
            [ _invocation( 'read_resource', { 'uri': 'demo://nowhere' } ) ],
            [ ensemble ] )
        missing, = await invocables.execute_invocations(
            [ _invocation( 'read_resource', { } ) ], [ ensemble ] )
        assert ensemble.is_connected( )
    assert not _is_success( result )
    message = result.error.message
    assert "'everything'" in message and 'demo://nowhere' in message
    assert 'List the resources' in message
    assert not _is_success( missing )
    assert 'uri' in missing.error.message


async def test_200_collision_pagination_images( ):
    ''' A server tool of the same name keeps its name (the resource tool
        is renamed); every page is listed; an image blob becomes an image
        and other binary data a summary.
    '''
    async with _produce_paged( ) as ensemble:
        names = [ item.name for item in ensemble.survey_invokers( ) ]
        results = await invocables.execute_invocations( [
            _invocation( 'list_resources', { }, 'c1' ),
            _invocation( 'mcp_list_resources', { }, 'c2' ),
            _invocation( 'read_resource', { 'uri': 'blob://key' }, 'c3' ),
            _invocation( 'read_resource', { 'uri': 'note://4' }, 'c4' ),
        ], [ ensemble ] )
    assert names == [ 'list_resources', 'mcp_list_resources', 'read_resource' ]
    own, listing, image, note = results
    assert own.content[ 0 ].text == 'own tool'
    listed = listing.content[ 0 ].text
    assert all( f"note://{index}" in listed for index in range( 5 ) )
    assert 'blob://{key}' in listed and 'item://{key}' in listed
    assert isinstance( image.content[ 0 ], canisters.ImageContent )
    assert image.content[ 0 ].data == b'\x89PNGkey'
    assert note.content[ 0 ].text == 'text 4'


async def test_210_binary_summarized( ):
    ''' Binary data which is neither image nor text becomes a summary
        naming its URI, media type and size, never the bytes.
    '''
    from invocables.mcp import exposure
    content = canisters.ResourceContent(
        uri = 'blob://x', media_type = 'application/zip',
        data = b'PK\x03\x04secret-bytes' )
    summary, = exposure.summarize_contents( [ content ] )
    assert isinstance( summary, canisters.TextContent )
    assert 'blob://x' in summary.text and 'application/zip' in summary.text
    assert '16 bytes' in summary.text and 'secret' not in summary.text
    assert exposure.select_name( 'a', { 'a', 'mcp_a', 'mcp_a_2' } ) == (
        'mcp_a_3' )


async def test_300_processor_round_trip( ):
    ''' Through the openai processor: prepared tools show the resource
        tools; a model's call of the reading tool returns the resource
        text in the native tool message.
    '''
    processor = produce_processor( 'openai' )
    async with _produce_everything( resources_as_tools = True ) as ensemble:
        tools = processor.prepare_tools( [ ensemble ] )
        names = { tool[ 'function' ][ 'name' ] for tool in tools }
        message = {
            'role': 'assistant', 'content': None,
            'tool_calls': [ {
                'id': 'call_1', 'type': 'function',
                'function': {
                    'name': 'read_resource',
                    'arguments': json.dumps(
                        { 'uri': 'demo://resource/dynamic/text/7' } ) } } ] }
        invocations = processor.normalize_invocations( message )
        results = await processor.execute_invocations(
            invocations, [ ensemble ] )
    assert { 'list_resources', 'read_resource' } <= names
    native, = processor.nativize_results( results )
    assert native[ 'role' ] == 'tool'
    assert native[ 'tool_call_id' ] == 'call_1'
    assert 'Resource 7' in json.dumps( native )


def _is_success( result ):
    return is_absent( result.error )


async def test_220_server_without_resources( ):
    ''' A server which offers no resources gets the tools too; listing
        says it has none, as a result, not an error.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'clock', command = [ mcp_support.locate_time_server( ) ],
        resources_as_tools = True )
    async with ensemble:
        result, = await invocables.execute_invocations(
            [ _invocation( 'list_resources', { } ) ], [ ensemble ] )
    assert _is_success( result )
    assert result.content[ 0 ].text == "Resources of MCP server 'clock': 0."
