# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: echo, sleeps, faults, changing tools.

    Flags: ``--http PORT`` serves streamable HTTP on 127.0.0.1 instead of
    stdio (``--json``: answers as plain JSON, not server-sent events;
    ``--compress CODING``: JSON answers compressed whatever the client
    accepts, as ``gzip``, ``deflate``, ``raw-deflate`` (sent as
    ``deflate``) or ``br`` (gzip, mislabelled)); ``--stubborn`` ignores
    SIGTERM and stdin EOF (only SIGKILL ends it); ``--invalid-schema``
    adds a tool whose input schema is not valid JSON Schema.
'''


import argparse
import asyncio
import gzip
import os
import signal
import subprocess
import sys
import threading
import time
import zlib

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations


server = MCPServer( 'echo' )


@server.tool(
    structured_output = False,
    annotations = ToolAnnotations(
        read_only_hint = True, idempotent_hint = True ) )
def echo( message: str ) -> str:
    ''' Returns the message unchanged. '''
    return message


@server.tool( )
def echo_structured( message: str ) -> str:
    ''' Returns the message, also as structured content. '''
    return message


@server.tool( structured_output = False )
async def sleep( seconds: float, context: Context ) -> str:
    ''' Sleeps, then answers. '''
    # Progress 0, if asked for: tests wait on it to know the call runs.
    await context.report_progress( 0 )
    try: await asyncio.sleep( seconds )
    except asyncio.CancelledError:
        print( f"sleep({seconds}) cancelled", file = sys.stderr, flush = True )
        raise
    return f"slept {seconds}"


@server.tool( structured_output = False )
def pid( ) -> str:
    ''' Returns the process id of the server. '''
    return str( os.getpid( ) )


@server.tool( structured_output = False )
def spawn_child( ) -> str:
    ''' Spawns a grandchild which sleeps for an hour; returns its pid. '''
    child = subprocess.Popen( [ 'sleep', '3600' ] )
    return str( child.pid )


@server.tool( structured_output = False )
def read_environment( name: str ) -> str:
    ''' Returns value of an environment variable, or '(unset)'. '''
    return os.environ.get( name, '(unset)' )


@server.tool( structured_output = False )
def big( size: int ) -> str:
    ''' Returns a text of size bytes. '''
    return 'x' * size


@server.tool( structured_output = False )
def request_query( context: Context ) -> str:
    ''' Returns query and authorization of the HTTP request, if any. '''
    request = context.request_context.request
    if request is None: return '(no request)'
    return '{query}|{authorization}'.format(
        query = request.url.query,
        authorization = request.headers.get( 'authorization', '' ) )


@server.tool( structured_output = False )
def working_directory( ) -> str:
    ''' Returns the working directory of the server. '''
    return os.getcwd( )


@server.tool(
    structured_output = False,
    annotations = ToolAnnotations( destructive_hint = True ) )
def boom( ) -> str:
    ''' Always fails. '''
    raise RuntimeError( 'boom' )


@server.tool( structured_output = False )
async def progress( steps: int, context: Context ) -> str:
    ''' Reports progress in steps, then answers. '''
    for step in range( 1, steps + 1 ):
        await context.report_progress( step, steps, f"step {step}" )
        await asyncio.sleep( 0.01 )
    return 'done'


@server.tool( structured_output = False )
async def add_tool( name: str, context: Context ) -> str:
    ''' Adds a tool, then sends a burst of five list-changed notes. '''
    def added( ) -> str:
        return name
    server.add_tool( added, name = name, description = f"Added {name}." )
    for _ in range( 5 ):
        await context.session.send_tool_list_changed( )
    return 'added'


@server.tool( structured_output = False )
async def remove_tool( name: str, context: Context ) -> str:
    ''' Removes a tool, then notifies the client. '''
    server.remove_tool( name )
    await context.session.send_tool_list_changed( )
    return 'removed'


@server.tool( structured_output = False )
async def notify_unchanged( context: Context ) -> str:
    ''' Sends a list-changed notification with no change. '''
    await context.session.send_tool_list_changed( )
    return 'notified'


def _add_invalid_schema_tool( ) -> None:
    def broken( value: int ) -> str:
        return str( value )
    server.add_tool( broken, name = 'broken' )
    tool = server._tool_manager.get_tool( 'broken' )
    tool.parameters = {
        'type': 'object', 'properties': { 'value': { 'type': 'nonsense' } } }


def _compress_raw( data: bytes ) -> bytes:
    compressor = zlib.compressobj( wbits = -zlib.MAX_WBITS )
    return compressor.compress( data ) + compressor.flush( )


_COMPRESSORS = {
    'gzip': ( b'gzip', gzip.compress ),
    'deflate': ( b'deflate', zlib.compress ),
    'raw-deflate': ( b'deflate', _compress_raw ),
    'br': ( b'br', gzip.compress ),
}


_HEADERS_LENGTH = ( b'content-length', b'content-encoding' )


class _Compressing:
    ''' Compresses every JSON answer, whatever the client accepts. '''

    def __init__( self, application, coding: str ):
        self.application = application
        self.label, self.compress = _COMPRESSORS[ coding ]

    async def __call__( self, scope, receive, send ):
        if scope[ 'type' ] != 'http':
            return await self.application( scope, receive, send )
        start = None
        body: list[ bytes ] = [ ]

        async def relay( message ):
            nonlocal start
            if message[ 'type' ] == 'http.response.start':
                headers = dict( message[ 'headers' ] )
                genus = headers.get( b'content-type', b'' )
                if genus.startswith( b'application/json' ):
                    start = message
                    return None
                return await send( message )
            if start is None: return await send( message )
            body.append( message.get( 'body', b'' ) )
            if message.get( 'more_body' ): return None
            data = self.compress( b''.join( body ) )
            headers = [
                ( key, value ) for key, value in start[ 'headers' ]
                if key.lower( ) not in _HEADERS_LENGTH ]
            headers.append( ( b'content-encoding', self.label ) )
            headers.append(
                ( b'content-length', str( len( data ) ).encode( ) ) )
            await send( { **start, 'headers': headers } )
            await send( { 'type': 'http.response.body', 'body': data } )
            return None
        return await self.application( scope, receive, relay )


def _serve_compressed( port: int, json_response: bool, coding: str ) -> None:
    import uvicorn
    application = server.streamable_http_app( json_response = json_response )
    uvicorn.run(
        _Compressing( application, coding ), host = '127.0.0.1', port = port,
        log_level = 'warning' )


def _make_stubborn( ) -> None:
    signal.signal( signal.SIGTERM, signal.SIG_IGN )
    def wedge( ) -> None:
        while True: time.sleep( 3600 )
    threading.Thread( target = wedge, daemon = False ).start( )


def main( ) -> None:
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--http', type = int, default = 0 )
    parser.add_argument( '--json', action = 'store_true' )
    parser.add_argument( '--compress', choices = tuple( _COMPRESSORS ) )
    parser.add_argument( '--stubborn', action = 'store_true' )
    parser.add_argument( '--invalid-schema', action = 'store_true' )
    arguments = parser.parse_args( )
    if os.environ.get( 'ECHO_SERVER_FAIL' ) == '1':
        token = os.environ.get( 'SECRET_TOKEN', '' )
        print(
            f"echo_server: told to fail (token {token})", file = sys.stderr )
        sys.exit( 3 )
    if arguments.invalid_schema: _add_invalid_schema_tool( )
    if arguments.stubborn: _make_stubborn( )
    if arguments.http and arguments.compress:
        _serve_compressed( arguments.http, arguments.json, arguments.compress )
    elif arguments.http:
        server.settings.log_level = 'WARNING'
        server.run(
            'streamable-http', host = '127.0.0.1', port = arguments.http,
            json_response = arguments.json )
    else: server.run( )


if __name__ == '__main__': main( )
