# SPDX-License-Identifier: Apache-2.0

''' Two MCP servers with the same tool names, side by side. '''


import pytest

import invocables
import invocables.mcp

from . import mcp_support


def echo( message: str ) -> str:
    ''' Returns message reversed. '''
    return message[ : : -1 ]


@pytest.mark.asyncio
async def test_100_same_names_scoped_and_routed( ):
    ''' Colliding names are scoped by ensemble; calls reach their server.

        Both servers and a local ensemble offer ``echo``; tools offered by
        one of them only keep their bare names.
    '''
    node = invocables.mcp.produce_ensemble(
        'node', command = [
            mcp_support.locate_npm_server( 'mcp-server-everything' ),
            'stdio' ] )
    python = invocables.mcp.produce_ensemble(
        'python', command = mcp_support.produce_server_command(
            'echo_server.py' ) )
    local = invocables.produce_ensemble( 'local', [ echo ] )
    async with node, python, local:
        ensembles = [ node, python, local ]
        nomenclature = invocables.produce_nomenclature( ensembles )
        assert nomenclature.access_name( 'node', 'echo' ) == 'node__echo'
        assert nomenclature.access_name( 'python', 'echo' ) == 'python__echo'
        assert nomenclature.access_name( 'local', 'echo' ) == 'local__echo'
        assert nomenclature.access_name( 'node', 'get-sum' ) == 'get-sum'
        assert nomenclature.access_name( 'python', 'boom' ) == 'boom'
        invocations = [
            invocables.InvocationCanister(
                identifier = name, name = name,
                arguments = { 'message': 'abc' } )
            for name in ( 'node__echo', 'python__echo', 'local__echo' ) ]
        invocations.append( invocables.InvocationCanister(
            identifier = 'sum', name = 'get-sum',
            arguments = { 'a': 1, 'b': 2 } ) )
        results = await invocables.execute_invocations(
            invocations, nomenclature )
        texts = [ result.content[ 0 ].text for result in results ]
        assert texts[ : 3 ] == [ 'Echo: abc', 'abc', 'cba' ]
        assert '3' in texts[ 3 ]
        unknown = await invocables.execute_invocations( [
            invocables.InvocationCanister(
                identifier = 'x', name = 'echo',
                arguments = { 'message': 'abc' } ) ], ensembles )
        assert unknown[ 0 ].error.genus is invocables.FaultGenera.Absence
