# SPDX-License-Identifier: Apache-2.0

''' Hostile MCP server for tests of sandboxes: each tool tries an escape.

    Every tool answers ``ok: <what it got>`` or ``refused: <error>``, so
    that a test sees, from inside the server process, whether the sandbox
    let the attempt through.
'''


import os
import signal
import socket
import subprocess

from mcp.server.mcpserver import MCPServer

import attempts_support as _attempts


server = MCPServer( 'escape' )


_attempt = _attempts.access_outcome


def _read( path: str ) -> str:
    with open( path, 'rb' ) as stream:
        return stream.read( 4096 ).decode( 'utf-8', errors = 'replace' )


def _write( path: str, text: str ) -> str:
    with open( path, 'w', encoding = 'utf-8' ) as stream:
        stream.write( text )
    return path


@server.tool( structured_output = False )
def read_file( path: str ) -> str:
    ''' Reads a file. '''
    return _attempt( lambda: _read( path ) )


@server.tool( structured_output = False )
def write_file( path: str, text: str ) -> str:
    ''' Writes a file. '''
    return _attempt( lambda: _write( path, text ) )


@server.tool( structured_output = False )
def list_folder( path: str ) -> str:
    ''' Lists the names in a folder, sorted. '''
    return _attempt( lambda: ' '.join( sorted( os.listdir( path ) ) ) )


@server.tool( structured_output = False )
def follow_link( target: str, link: str ) -> str:
    ''' Plants a symbolic link to target, then reads through it. '''
    def follow( ) -> str:
        os.symlink( target, link )
        return _read( link )
    return _attempt( follow )


@server.tool( structured_output = False )
def link_hard( target: str, link: str ) -> str:
    ''' Makes a hard link to target, then reads through it. '''
    def follow( ) -> str:
        os.link( target, link )
        return _read( link )
    return _attempt( follow )


@server.tool( structured_output = False )
def connect_tcp( host: str, port: int ) -> str:
    ''' Opens a TCP connection; reads what the listener sends. '''
    def connect( ) -> str:
        with socket.create_connection( ( host, port ), timeout = 5 ) as peer:
            return peer.recv( 100 ).decode( )
    return _attempt( connect )


@server.tool( structured_output = False )
def connect_unix( path: str ) -> str:
    ''' Connects to a unix socket (a leading '@': abstract); reads. '''
    def connect( ) -> str:
        address = '\0' + path[ 1 : ] if path.startswith( '@' ) else path
        with socket.socket( socket.AF_UNIX, socket.SOCK_STREAM ) as peer:
            peer.settimeout( 5 )
            peer.connect( address )
            return peer.recv( 100 ).decode( )
    return _attempt( connect )


@server.tool( structured_output = False )
def read_environment( ) -> str:
    ''' Returns the whole environment, as NAME=value lines. '''
    return '\n'.join(
        f"{name}={value}" for name, value in sorted( os.environ.items( ) ) )


@server.tool( structured_output = False )
def read_parent( ) -> str:
    ''' Reads the environment and lists the folder of the parent process.
    '''
    parent = os.getppid( )
    return '{parent}\n{environment}\n{folder}'.format(
        parent = parent,
        environment = _attempt(
            lambda: _read( f"/proc/{parent}/environ" ) ),
        folder = _attempt( lambda: ' '.join( sorted(
            os.listdir( f"/proc/{parent}/cwd" ) ) ) ) )


@server.tool( structured_output = False )
def signal_process( pid: int ) -> str:
    ''' Sends signal 0 to a process (whether it can reach it). '''
    return _attempt( lambda: os.kill( pid, 0 ) )


@server.tool( structured_output = False )
def spawn_detached( seconds: str ) -> str:
    ''' Spawns a sleeper in a session of its own (out of the server's
        process group), which ignores SIGTERM and SIGHUP.
    '''
    def spawn( ) -> str:
        child = subprocess.Popen(
            [ 'sleep', seconds ], start_new_session = True,
            preexec_fn = lambda: [
                signal.signal( number, signal.SIG_IGN )
                for number in ( signal.SIGTERM, signal.SIGHUP ) ] )
        return str( child.pid )
    return _attempt( spawn )


@server.tool( structured_output = False )
def survey_identity( ) -> str:
    ''' Returns process id, parent id, user id and working folder. '''
    return f"{os.getpid( )} {os.getppid( )} {os.getuid( )} {os.getcwd( )}"


if __name__ == '__main__': server.run( )
