# SPDX-License-Identifier: Apache-2.0

''' What an MCP server lists is made sendable where it enters: a tool list
    with lone surrogates (JSON escapes of UTF-16 halves) reaches every
    provider's tool list as text every UTF-8 encoder accepts. '''


import json

import pytest

import invocables
import invocables.mcp

from . import mcp_support


@pytest.mark.asyncio
async def test_100_lone_surrogates_escaped( ):
    ''' Descriptions and schemas with lone surrogates are escaped once;
        the tool keeps its name and still runs. '''
    ensemble = invocables.mcp.produce_ensemble(
        'hostile', command = mcp_support.produce_server_command(
            'hostile_server.py', '--lone-surrogates' ) )
    async with ensemble:
        invoker = ensemble.access_invoker( 'halves' )
        assert invoker.description == 'Half \\ud800 of a pair.'
        assert 'x\\udfff' in invoker.arguments_schema[ 'properties' ]
        for name in invocables.processors.PROVIDERS:
            processor = invocables.produce_processor( name )
            tools = processor.prepare_tools( [ ensemble ] )
            json.dumps( tools, ensure_ascii = False, default = str ).encode(
                'utf-8' )
        results = await invocables.execute_invocations(
            [ invocables.InvocationCanister(
                identifier = 'a', name = 'echo',
                arguments = { 'message': 'hi' } ) ], [ ensemble ] )
    assert results[ 0 ].as_text( ) == 'hi'
