# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway: the upstream servers' resources, resource
    templates, prompts and completion, aggregated with the names tools get.
'''


from pathlib import Path

import pytest

from mcp import types

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


_UPSTREAM = (
    Path( __file__ ).parent.parent / 'data' / 'serving' / 'modules'
    / 'conformance_upstream.py' )


def _produce_upstream( name: str ):
    return invocables.mcp.produce_ensemble(
        name, command = [ mcp_support.SERVERS_PYTHON, str( _UPSTREAM ) ] )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_one_upstream_as_it_is( ):
    ''' One upstream's resources, templates and prompts keep their names;
        reading and getting reach it; an unknown URI or prompt is an error.
    '''
    server = serving.ToolServer( [ _produce_upstream( 'docs' ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            resources = ( await client.list_resources( ) ).resources
            assert { str( resource.uri ) for resource in resources } == {
                'test://static-text', 'test://static-binary',
                'test://watched-resource' }
            templates = (
                await client.list_resource_templates( ) )
            templates = sdk.access_field( templates, 'resource_templates' )
            assert [
                sdk.access_field( template, 'uri_template' )
                for template in templates ] == [
                'test://template/{id}/data' ]
            result = await client.read_resource( 'test://template/7/data' )
            assert '"id": "7"' in result.contents[ 0 ].text
            result = await client.read_resource( 'test://static-binary' )
            assert sdk.access_field(
                result.contents[ 0 ], 'mime_type' ) == 'image/png'
            prompts = ( await client.list_prompts( ) ).prompts
            assert 'test_prompt_with_arguments' in {
                prompt.name for prompt in prompts }
            result = await client.get_prompt(
                'test_prompt_with_arguments',
                { 'arg1': 'tea', 'arg2': 'milk' } )
            assert "arg1='tea'" in result.messages[ 0 ].content.text
            with pytest.raises( Exception, match = 'Unknown resource' ):
                await client.read_resource( 'test://nothing' )
            with pytest.raises( Exception, match = 'Unknown prompt' ):
                await client.get_prompt( 'nothing' )
            completion = await client.complete(
                types.PromptReference(
                    type = 'ref/prompt', name = 'test_prompt_with_arguments' ),
                { 'name': 'arg1', 'value': 'te' } )
            assert completion.completion.values == [ ]


@pytest.mark.asyncio
@pytest.mark.slow
async def test_110_clashing_prompts_scoped( ):
    ''' Two upstreams offering one prompt name: each is scoped by its
        ensemble, as tools are, and each name reaches its own server.
    '''
    server = serving.ToolServer( [
        _produce_upstream( 'alpha' ), _produce_upstream( 'beta' ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            names = {
                prompt.name
                for prompt in ( await client.list_prompts( ) ).prompts }
            assert 'alpha__test_simple_prompt' in names
            assert 'beta__test_simple_prompt' in names
            assert 'test_simple_prompt' not in names
            result = await client.get_prompt( 'beta__test_simple_prompt' )
            assert result.messages[ 0 ].content.text == (
                'This is a simple prompt for testing.' )
