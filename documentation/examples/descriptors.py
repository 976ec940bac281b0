# SPDX-License-Identifier: Apache-2.0
''' Descriptors: a configuration with the io tools and a writable root. '''

import asyncio
import tempfile

from pathlib import Path

import invocables

from invocables import descriptors


CONFIGURATION = '''
[[ensembles]]
builtin = 'io'

[[roots]]
path = 'notes'
writable = true
'''


async def main( folder: Path ) -> None:
    ''' Writes a note through the io tools, reads it, snapshots the tools. '''
    ( folder / 'notes' ).mkdir( )
    ( folder / 'invocables.toml' ).write_text( CONFIGURATION )
    ensembles = await descriptors.prepare_ensembles(
        folder / 'invocables.toml', connect = True )
    calls = [
        invocables.InvocationCanister(
            identifier = 'call-1', name = 'write_file',
            arguments = { 'path': 'hello.txt', 'content': 'Hello!\n' } ),
        invocables.InvocationCanister(
            identifier = 'call-2', name = 'read_file',
            arguments = { 'path': '../invocables.toml' } ),
    ]
    for call in calls:
        result, = await invocables.execute_invocations( [ call ], ensembles )
        print( call.identifier, result.as_text( ) )
    read = invocables.InvocationCanister(
        identifier = 'call-3', name = 'read_file',
        arguments = { 'path': 'hello.txt' } )
    result, = await invocables.execute_invocations( [ read ], ensembles )
    print( read.identifier, result.as_text( ).strip( ) )
    written = descriptors.create_descriptors( ensembles[ 0 ], folder / 'copy' )
    print( 'wrote', written.relative_to( folder ) )


if __name__ == '__main__':
    with tempfile.TemporaryDirectory( ) as name:
        asyncio.run( main( Path( name ) ) )
