# SPDX-License-Identifier: Apache-2.0

''' The reference server-everything, over stdio and streamable HTTP. '''


import pytest
import pytest_asyncio

import invocables
import invocables.mcp

from invocables import exceptions

from . import mcp_support


pytestmark = pytest.mark.asyncio( loop_scope = 'module' )
_progresses = mcp_support.Reports( )
_PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


@pytest_asyncio.fixture(
    scope = 'module', loop_scope = 'module', params = [ 'stdio', 'http' ] )
async def everything( request ):
    ''' server-everything over one transport, shared by the module. '''
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    if request.param == 'stdio':
        ensemble = invocables.mcp.produce_ensemble(
            'everything', command = [ program, 'stdio' ],
            reporter = _progresses.append )
        async with ensemble: yield ensemble
        return
    port = mcp_support.select_port( )
    with mcp_support.serve_http( [ program, 'streamableHttp' ], port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'everything', url = url, reporter = _progresses.append )
        async with ensemble: yield ensemble


async def _call( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return await ensemble.access_invoker( name )( context, arguments or { } )


async def test_100_discovery( everything ):
    ''' Tools are discovered, the one which requires tasks too. '''
    names = { invoker.name for invoker in everything.survey_invokers( ) }
    assert { 'echo', 'get-sum', 'get-tiny-image' } <= names
    assert 'simulate-research-query' in names
    assert not everything.survey_omissions( )
    for tool in everything.survey_tools( ):
        assert tool.annotations, tool.name


async def test_110_text( everything ):
    ''' Echo answers with text. '''
    content = await _call( everything, 'echo', { 'message': 'hi' } )
    assert content == ( invocables.TextContent( text = 'Echo: hi' ), )


async def test_120_image( everything ):
    ''' An image arrives as decoded PNG bytes with its media type. '''
    content = await _call( everything, 'get-tiny-image' )
    images = [ item for item in content
               if isinstance( item, invocables.ImageContent ) ]
    assert len( images ) == 1
    assert images[ 0 ].media_type == 'image/png'
    assert images[ 0 ].data.startswith( _PNG_SIGNATURE )


async def test_130_structured( everything ):
    ''' Structured content is kept beside its text copy. '''
    content = await _call(
        everything, 'get-structured-content', { 'location': 'Chicago' } )
    structures = [ item for item in content
                   if isinstance( item, invocables.StructureContent ) ]
    assert set( structures[ 0 ].data ) == {
        'temperature', 'conditions', 'humidity' }


async def test_140_resource_links_and_embedded( everything ):
    ''' Resource links and embedded resources become resource canisters. '''
    content = await _call( everything, 'get-resource-links', { 'count': 2 } )
    links = [ item for item in content
              if isinstance( item, invocables.ResourceLinkContent ) ]
    assert len( links ) == 2
    assert links[ 0 ].uri.startswith( 'demo://resource/' )
    content = await _call(
        everything, 'get-resource-reference',
        { 'resourceType': 'Text', 'resourceId': 1 } )
    resources = [ item for item in content
                  if isinstance( item, invocables.ResourceContent ) ]
    assert resources[ 0 ].uri.startswith( 'demo://resource/' )
    assert resources[ 0 ].text
    content = await _call(
        everything, 'get-resource-reference',
        { 'resourceType': 'Blob', 'resourceId': 2 } )
    resources = [ item for item in content
                  if isinstance( item, invocables.ResourceContent ) ]
    assert resources[ 0 ].data


async def test_150_progress( everything ):
    ''' Progress of a long operation reaches the reporter. '''
    _progresses.clear( )
    content = await _call(
        everything, 'trigger-long-running-operation',
        { 'duration': 0.4, 'steps': 2 } )
    assert 'completed' in content[ 0 ].text
    await _progresses.wait_count( 2 )
    assert [ item.progress for item in _progresses ] == [ 1, 2 ]
    assert _progresses[ 0 ].total == 2


async def test_160_errors( everything ):
    ''' Bad arguments fail client-side; a server-side error is refusal. '''
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await _call( everything, 'get-sum', { 'a': 'one', 'b': 2 } )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await _call(
            everything, 'get-structured-content', { 'location': 'Paris' } )
    content = await _call( everything, 'get-sum', { 'a': 1, 'b': 2 } )
    assert '3' in content[ 0 ].text


async def test_170_annotated_message( everything ):
    ''' Annotated blocks keep their content. '''
    content = await _call(
        everything, 'get-annotated-message',
        { 'messageType': 'success', 'includeImage': True } )
    kinds = { type( item ) for item in content }
    assert invocables.TextContent in kinds
    assert invocables.ImageContent in kinds


async def test_200_legacy_sse( ):
    ''' The legacy HTTP+SSE transport is chosen by a path ending in /sse. '''
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    port = mcp_support.select_port( )
    with mcp_support.serve_http(
        [ program, 'sse' ], port, path = '/sse'
    ) as url:
        ensemble = invocables.mcp.produce_ensemble( 'legacy', url = url )
        assert ensemble.parameters.transport is invocables.mcp.Transports.Sse
        async with ensemble:
            content = await _call( ensemble, 'echo', { 'message': 'old' } )
            assert content[ 0 ].text == 'Echo: old'
        assert not ensemble.is_connected( )
