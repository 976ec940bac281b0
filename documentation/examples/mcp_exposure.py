# SPDX-License-Identifier: Apache-2.0
''' Resources offered to a model as tools, the terminal elicitor, and
    authorization in the mcpServers JSON, against server-everything.

    Install the test servers first: ``bash .auxiliary/scripts/install-mcp-
    servers`` (or put ``mcp-server-everything`` on PATH). The elicitor
    reads its answers from a string here; give it no streams to ask on
    the terminal.
'''

import asyncio
import io
import json
import shutil

from pathlib import Path

import invocables
import invocables.mcp

from invocables import descriptors
from invocables.processors import produce_processor


_installed = (
    Path( __file__ ).resolve( ).parents[ 2 ] / '.auxiliary' / 'caches'
    / 'npm' / 'node_modules' / '.bin' / 'mcp-server-everything' )
PROGRAM = (
    str( _installed ) if _installed.exists( )
    else shutil.which( 'mcp-server-everything' ) or 'mcp-server-everything' )
# One answer per field of server-everything's request (empty: the default
# or nothing), then 'y' to send them.
ANSWERS = '\n'.join( [ 'Ada', 'y', *( [ '' ] * 11 ), 'y' ] ) + '\n'


async def read_through_model( ) -> None:
    ''' Shows the resource tools to a model (openai), runs its call. '''
    processor = produce_processor( 'openai' )
    everything = invocables.mcp.produce_ensemble(
        'everything', command = [ PROGRAM, 'stdio' ],
        resources_as_tools = True )
    async with everything:
        tools = processor.prepare_tools( [ everything ] )
        print( 'tools:', [ tool[ 'function' ][ 'name' ] for tool in tools
                           if 'resource' in tool[ 'function' ][ 'name' ] ] )
        # As the model would answer, asking for one resource.
        message = { 'role': 'assistant', 'tool_calls': [ {
            'id': 'call-1', 'type': 'function', 'function': {
                'name': 'read_resource',
                'arguments': json.dumps(
                    { 'uri': 'demo://resource/dynamic/text/1' } ) } } ] }
        results = await processor.execute_invocations(
            processor.normalize_invocations( message ), [ everything ] )
        print( processor.nativize_results( results )[ 0 ][ 'content' ] )


async def ask_on_terminal( ) -> None:
    ''' Answers server-everything's elicitation with the terminal elicitor
        (answers from a string, questions to the standard output).
    '''
    import sys
    elicitor = invocables.mcp.produce_terminal_elicitor(
        io.StringIO( ANSWERS ), sys.stdout )
    everything = invocables.mcp.produce_ensemble(
        'everything', command = [ PROGRAM, 'stdio' ], elicitor = elicitor )
    async with everything:
        contents = await everything.invoke(
            'trigger-elicitation-request', { } )
        print( invocables.canisters.render_content_text( contents[ 0 ] ) )


def import_authorization( ) -> None:
    ''' Reads authorization from the common mcpServers JSON. '''
    descriptor, = descriptors.produce_server_descriptors( { 'mcpServers': {
        'billing': {
            'url': 'https://billing.example.com/mcp',
            'resourcesAsTools': True,
            'authorization': {
                'kind': 'client-credentials', 'client_id': 'reports',
                'client_secret': '${BILLING_SECRET}' } } } } )
    server = descriptor.server
    if isinstance( server, descriptors.ServerDescriptor ):
        print( dict( server.authorization ) )


async def main( ) -> None:
    await read_through_model( )
    await ask_on_terminal( )
    import_authorization( )


if __name__ == '__main__': asyncio.run( main( ) )
