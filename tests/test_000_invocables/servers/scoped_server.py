# SPDX-License-Identifier: Apache-2.0

''' MCP server over streamable HTTP on 127.0.0.1 whose tool ``write``
    needs a scope which no token has: a call of it is refused 403 with
    ``WWW-Authenticate: Bearer error="insufficient_scope",
    scope="files:write"``; every other request (any bearer token) is
    served. Tools: ``read``, ``write``. Option: ``--port N``.
'''


import argparse
import json

from typing import Any

from mcp.server.mcpserver import MCPServer


_CHALLENGE = b'Bearer error="insufficient_scope", scope="files:write"'


class ScopeGuard:
    ''' ASGI middleware which refuses calls of the tool ``write``. '''

    def __init__( self, app: Any ):
        self.app = app

    async def __call__( self, scope: Any, receive: Any, send: Any ) -> None:
        if scope[ 'type' ] != 'http' or scope[ 'method' ] != 'POST':
            await self.app( scope, receive, send )
            return
        body = b''
        while True:
            message = await receive( )
            body += message.get( 'body', b'' )
            if not message.get( 'more_body' ): break
        if _is_write( body ):
            await send( {
                'type': 'http.response.start', 'status': 403,
                'headers': [
                    ( b'www-authenticate', _CHALLENGE ),
                    ( b'content-type', b'application/json' ) ] } )
            await send( {
                'type': 'http.response.body',
                'body': b'{"error": "insufficient_scope"}' } )
            return
        await self.app( scope, _replay( body, receive ), send )


def _is_write( body: bytes ) -> bool:
    try: data = json.loads( body )
    except ValueError: return False
    return (
        isinstance( data, dict ) and data.get( 'method' ) == 'tools/call'
        and data.get( 'params', { } ).get( 'name' ) == 'write' )


def _replay( body: bytes, receive: Any ) -> Any:
    sent = False

    async def replay( ) -> Any:
        nonlocal sent
        if sent: return await receive( )
        sent = True
        return { 'type': 'http.request', 'body': body, 'more_body': False }

    return replay


def main( ) -> None:
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--port', type = int, required = True )
    options = parser.parse_args( )
    server = MCPServer( 'scoped' )

    @server.tool( structured_output = False )
    def read( ) -> str:
        ''' Returns what was read. '''
        return 'read'

    @server.tool( structured_output = False )
    def write( ) -> str:
        ''' Returns what was written (never reached). '''
        return 'written'

    import uvicorn
    uvicorn.run(
        ScopeGuard( server.streamable_http_app( ) ), host = '127.0.0.1',
        port = options.port, log_level = 'warning' )


if __name__ == '__main__': main( )
