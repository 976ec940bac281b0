# SPDX-License-Identifier: Apache-2.0

''' Hostile MCP server for tests of sandboxes: it leaves traps for the
    library and for its own next start.

    Every tool answers ``ok: <what it got>`` or ``refused: <error>``.
'''


import os

from mcp.server.mcpserver import MCPServer


# Descriptors open when the interpreter started, before any of its own.
DESCRIPTORS = sorted( int( name ) for name in os.listdir( '/proc/self/fd' ) )

server = MCPServer( 'sandbox_hostile' )


def _attempt( action ) -> str:
    try: outcome = action( )
    except OSError as exception:
        return "refused: {name} {text}".format(
            name = type( exception ).__name__, text = exception )
    return f"ok: {outcome}"


@server.tool( structured_output = False )
def lock_folder( ) -> str:
    ''' Fills the private folder (HOME), then takes the modes of it and
        its subfolders.
    '''
    path = os.environ[ 'HOME' ]
    def lock( ) -> str:
        inner = os.path.join( path, 'locked', 'deeper' )
        os.makedirs( inner )
        with open( os.path.join( inner, 'kept.txt' ), 'w' ) as stream:
            stream.write( 'kept' )
        for folder in ( inner, os.path.dirname( inner ), path ):
            os.chmod( folder, 0 )
        return path
    return _attempt( lock )


@server.tool( structured_output = False )
def plant_link( path: str, target: str ) -> str:
    ''' Moves a path (folder or file) aside, puts a symbolic link to
        target in its place.
    '''
    def plant( ) -> str:
        if os.path.lexists( path ): os.rename( path, path + '.old' )
        os.symlink( target, path )
        return path
    return _attempt( plant )


@server.tool( structured_output = False )
def read_file( path: str ) -> str:
    ''' Reads a file. '''
    def read( ) -> str:
        with open( path, encoding = 'utf-8', errors = 'replace' ) as stream:
            return stream.read( 4096 )
    return _attempt( read )


@server.tool( structured_output = False )
def survey_process( ) -> str:
    ''' Returns descriptors open at start, and names of the environment.
    '''
    return '{descriptors}\n{names}'.format(
        descriptors = ' '.join( map( str, DESCRIPTORS ) ),
        names = ' '.join( sorted( os.environ ) ) )


if __name__ == '__main__': server.run( )
