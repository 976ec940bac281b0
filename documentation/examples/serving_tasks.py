# SPDX-License-Identifier: Apache-2.0
''' Serving: a tool call run as a task (MCP 2025-11-25), over HTTP. '''

import asyncio
import json
import socket

from typing import Any

import httpx
import uvicorn

import invocables

from invocables import serving


async def count( context: invocables.InvocationContext, up_to: int ) -> str:
    ''' Counts, telling its progress. '''
    for number in range( 1, up_to + 1 ):
        await context.report_progress( number, up_to, f"counted {number}" )
    return f"counted to {up_to}"


class Session:
    ''' A client's JSON-RPC requests over streamable HTTP. '''

    def __init__( self, client: httpx.AsyncClient, url: str ):
        self.client = client
        self.url = url
        self.headers = { 'Accept': 'application/json, text/event-stream' }
        self.number = 0

    async def request( self, method: str, **params: Any ) -> Any:
        ''' Sends request; returns its result (or its error). '''
        self.number += 1
        response = await self.client.post(
            self.url, headers = self.headers, json = {
                'jsonrpc': '2.0', 'id': self.number,
                'method': method, 'params': params } )
        if 'mcp-session-id' in response.headers:
            self.headers[ 'mcp-session-id' ] = (
                response.headers[ 'mcp-session-id' ] )
        for line in response.text.splitlines( ): # server-sent events
            data = line.removeprefix( 'data:' ).strip( )
            if data == line.strip( ) or not data: continue
            message: dict[ str, Any ] = json.loads( data )
            if message.get( 'id' ) == self.number:
                return message.get( 'result' ) or message[ 'error' ]
        raise RuntimeError( response.text )

    async def initialize( self ) -> Any:
        ''' Opens the session (protocol 2025-11-25). '''
        result = await self.request(
            'initialize', protocolVersion = '2025-11-25', capabilities = { },
            clientInfo = { 'name': 'example', 'version': '1' } )
        self.headers[ 'mcp-protocol-version' ] = '2025-11-25'
        await self.client.post( self.url, headers = self.headers, json = {
            'jsonrpc': '2.0', 'method': 'notifications/initialized' } )
        return result


async def main( ) -> None:
    ''' Serves a tool; calls it as a task, polls and fetches it. '''
    server = serving.ToolServer(
        [ invocables.produce_ensemble( 'counting', [ count ] ) ],
        task_store = serving.MemoryTaskStore( maximum = 100 ) )
    listener = socket.socket( )
    listener.bind( ( '127.0.0.1', 0 ) )
    listener.listen( )
    url = "http://127.0.0.1:{port}/mcp".format(
        port = listener.getsockname( )[ 1 ] )
    runner = uvicorn.Server( uvicorn.Config(
        serving.produce_application( server ), log_level = 'warning' ) )
    serve = asyncio.create_task( runner.serve( sockets = [ listener ] ) )
    try: await converse( url )
    finally:
        runner.should_exit = True
        await serve


async def converse( url: str ) -> None:
    ''' Calls the tool as a task; polls and fetches it. '''
    async with httpx.AsyncClient( ) as client:
        session = Session( client, url )
        initialized = await session.initialize( )
        print( initialized[ 'capabilities' ][ 'tasks' ] )
        listing = await session.request( 'tools/list' )
        print( listing[ 'tools' ][ 0 ][ 'execution' ] )
        created = await session.request(
            'tools/call', name = 'count', arguments = { 'up_to': 3 },
            task = { 'ttl': 60000 } )
        identifier = created[ 'task' ][ 'taskId' ]
        print( created[ 'task' ][ 'status' ] )
        result = await session.request( 'tasks/result', taskId = identifier )
        print( result[ 'content' ][ 0 ][ 'text' ] )
        task = await session.request( 'tasks/get', taskId = identifier )
        print( task[ 'status' ], task[ 'statusMessage' ] )
        error = await session.request( 'tasks/cancel', taskId = identifier )
        print( error[ 'code' ] )


if __name__ == '__main__': asyncio.run( main( ) )
