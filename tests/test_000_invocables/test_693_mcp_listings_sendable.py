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


@pytest.mark.asyncio
async def test_110_non_finite_numbers_left_out( monkeypatch ):
    ''' A tool whose schema holds NaN or Infinity (which a lenient parser
        reads from a server's listing, and no JSON text carries) is left out
        where the listing enters, with its reason; the server's other tools
        stay. Before, providers left it out each on its own, and ``serve``
        listed it with ``null`` in place of the numbers.
    '''
    monkeypatch.setenv( 'INVOCABLES_TEST_HOSTILE_SECRET', 'Zq9-non-finite' )
    server = str( mcp_support.SERVERS / 'hostile_rounds_server.py' )
    ensemble = invocables.mcp.produce_ensemble(
        'hostile', command = [
            mcp_support.SERVERS_PYTHON, server, '--non-finite', '--no-tasks',
            '--legacy' ],
        environment = {
            'HOSTILE_SECRET': 'env:INVOCABLES_TEST_HOSTILE_SECRET' } )
    async with ensemble:
        names = { invoker.name for invoker in ensemble.survey_invokers( ) }
        assert 'unbounded' not in names
        assert 'forever' in names
        reasons = {
            omission.name: omission.reason
            for omission in ensemble.survey_omissions( ) }
        assert 'NaN or Infinity' in reasons[ 'unbounded' ]
        for name in invocables.processors.PROVIDERS:
            tools = invocables.produce_processor( name ).prepare_tools(
                [ ensemble ] )
            text = json.dumps( tools, allow_nan = False )
            assert 'unbounded' not in text
