# SPDX-License-Identifier: Apache-2.0
''' Serving: tools which declare task support, called as tasks by a client
    of MCP 2026-07-28 with the tasks extension (mcp SDK 2.x).
'''

import asyncio
import json
import socket

from typing import Any

import httpx
import uvicorn

import invocables

from invocables import serving


async def count( context: invocables.InvocationContext, up_to: int ) -> str:
    ''' Counts, slowly. '''
    for _ in range( up_to ): await asyncio.sleep( 0.01 )
    return f"counted to {up_to}"


def greet( name: str ) -> str:
    ''' Greets, at once. '''
    return f"Hello, {name}!"


ensemble = invocables.produce_ensemble( 'tasking', [
    invocables.produce_invoker(
        count, annotations = { 'task_support': 'optional' } ),
    invocables.produce_invoker(
        greet, annotations = { 'task_support': 'forbidden' } ),
] )


async def request(
    client: httpx.AsyncClient, url: str, method: str, **params: Any
) -> Any:
    ''' Sends a request of MCP 2026-07-28, declaring the tasks extension;
        returns its result (or its error).
    '''
    params[ '_meta' ] = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {
            'extensions': { serving.TASKS_EXTENSION: { } } } }
    headers = {
        'Accept': 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method }
    if 'name' in params: headers[ 'Mcp-Name' ] = params[ 'name' ]
    response = await client.post( url, headers = headers, json = {
        'jsonrpc': '2.0', 'id': 1, 'method': method, 'params': params } )
    message: dict[ str, Any ] = json.loads( response.text )
    return message.get( 'result' ) or message[ 'error' ]


async def converse( url: str ) -> None:
    ''' Calls both tools; polls the task until it ends. '''
    async with httpx.AsyncClient( ) as client:
        greeting = await request(
            client, url, 'tools/call', name = 'greet',
            arguments = { 'name': 'World' } )
        print( greeting[ 'resultType' ], greeting[ 'content' ][ 0 ][ 'text' ] )
        task = await request(
            client, url, 'tools/call', name = 'count',
            arguments = { 'up_to': 3 } )
        print( task[ 'resultType' ], task[ 'status' ] )
        while task[ 'status' ] == 'working':
            await asyncio.sleep( task[ 'pollIntervalMs' ] / 1000 )
            task = await request(
                client, url, 'tasks/get', taskId = task[ 'taskId' ] )
        print( task[ 'status' ], task[ 'result' ][ 'content' ][ 0 ][ 'text' ] )


async def main( ) -> None:
    ''' Serves the tools over HTTP; converses with them. '''
    server = serving.ToolServer( [ ensemble ] )
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


if __name__ == '__main__': asyncio.run( main( ) )
