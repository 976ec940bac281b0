# SPDX-License-Identifier: Apache-2.0

''' Resources and prompts of MCP ensembles, on server-everything and on a
    server which paginates them.
'''


import asyncio

import pytest

import invocables
import invocables.mcp

from invocables import canisters
from invocables import exceptions

from . import mcp_support


pytestmark = pytest.mark.asyncio


def _produce_everything( ):
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    return invocables.mcp.produce_ensemble(
        'everything', command = [ program, 'stdio' ] )


def _produce_paged( ):
    return invocables.mcp.produce_ensemble(
        'paged', command = mcp_support.produce_server_command(
            'paged_resources_server.py' ) )


async def test_100_everything_resources( ):
    ''' Resources and templates are surveyed; text and blob resources are
        retrieved as resource canisters.
    '''
    async with _produce_everything( ) as ensemble:
        resources = await ensemble.survey_resources( )
        templates = await ensemble.survey_resource_templates( )
        text, = await ensemble.retrieve_resource(
            'demo://resource/dynamic/text/2' )
        blob, = await ensemble.retrieve_resource(
            'demo://resource/dynamic/blob/3' )
    assert len( resources ) >= 1
    assert all( item.uri.startswith( 'demo://' ) for item in resources )
    assert {
        'demo://resource/dynamic/text/{resourceId}',
        'demo://resource/dynamic/blob/{resourceId}',
    } <= { template.uri_template for template in templates }
    assert isinstance( text, canisters.ResourceContent )
    assert text.text.startswith( 'Resource 2' )
    assert blob.data.startswith( b'Resource 3' )


async def test_110_everything_prompts( ):
    ''' Prompts are surveyed with their arguments and retrieved as
        messages of neutral canisters, embedded resources included.
    '''
    async with _produce_everything( ) as ensemble:
        prompts = {
            prompt.name: prompt for prompt in await ensemble.survey_prompts( ) }
        weather = await ensemble.retrieve_prompt(
            'args-prompt', { 'city': 'Paris' } )
        embedded = await ensemble.retrieve_prompt(
            'resource-prompt', { 'resourceType': 'Text', 'resourceId': '2' } )
    city = prompts[ 'args-prompt' ].arguments[ 0 ]
    assert ( city.name, city.required ) == ( 'city', True )
    message, = weather
    assert message.role == 'user'
    assert 'Paris' in message.content[ 0 ].text
    kinds = [ type( message.content[ 0 ] ) for message in embedded ]
    assert canisters.ResourceContent in kinds


async def test_120_everything_unknown( ):
    ''' An unknown URI or prompt, or missing arguments, raise library
        errors naming the server.
    '''
    async with _produce_everything( ) as ensemble:
        with pytest.raises( exceptions.ResourceAbsence ) as resource:
            await ensemble.retrieve_resource( 'demo://nowhere' )
        with pytest.raises( exceptions.PromptAbsence ) as prompt:
            await ensemble.retrieve_prompt( 'no-such-prompt' )
        with pytest.raises( exceptions.PromptAbsence ) as arguments:
            await ensemble.retrieve_prompt( 'args-prompt', { } )
        assert ensemble.is_connected( )
    assert "'everything'" in str( resource.value )
    assert 'demo://nowhere' in str( resource.value )
    assert isinstance( resource.value, LookupError )
    assert "'no-such-prompt'" in str( prompt.value )
    assert 'city' in str( arguments.value )


async def test_200_pagination( ):
    ''' Every page of resources, templates and prompts is followed. '''
    async with _produce_paged( ) as ensemble:
        resources = await ensemble.survey_resources( )
        templates = await ensemble.survey_resource_templates( )
        prompts = await ensemble.survey_prompts( )
        blob, = await ensemble.retrieve_resource( 'blob://key' )
        note, = await ensemble.retrieve_resource( 'note://4' )
    assert [ item.uri for item in resources ] == [
        f"note://{index}" for index in range( 5 ) ]
    assert [ item.name for item in templates ] == [ 'blob', 'item' ]
    assert [ item.name for item in prompts ] == [
        f"prompt-{index}" for index in range( 5 ) ]
    assert blob.data == b'\x89PNGkey'
    assert blob.media_type == 'image/png'
    assert note.text == 'text 4'


@pytest.mark.parametrize( 'method', [
    'survey_resources', 'survey_resource_templates', 'survey_prompts' ] )
async def test_205_endless_pages_cut_off( method ):
    ''' A server which gives new cursors for ever, each page within the
        list timeout, is cut off at the list timeout of the whole listing
        (before, after a thousand pages: 200 s here), with a connection
        failure which says so; the session still works.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'endless', command = mcp_support.produce_server_command(
            'paged_resources_server.py', '--endless', '0.2' ),
        list_timeout = 1 )
    async with ensemble:
        with pytest.raises( exceptions.ConnectionFailure ) as caught:
            # Bound which proves "does not hang", far above the timeout.
            await asyncio.wait_for( getattr( ensemble, method )( ), 60 )
        note, = await ensemble.retrieve_resource( 'note://4' )
    assert 'within 1 seconds' in str( caught.value )
    assert note.text == 'text 4'


async def test_210_unknown_on_python_server( ):
    ''' A Python server's unknown resource is a resource absence too. '''
    async with _produce_paged( ) as ensemble:
        with pytest.raises( exceptions.ResourceAbsence ) as caught:
            await ensemble.retrieve_resource( 'note://99' )
    assert "'paged'" in str( caught.value )
