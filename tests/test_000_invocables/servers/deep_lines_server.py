# SPDX-License-Identifier: Apache-2.0

''' Hand-written MCP server over stdio (the standard library alone) which
    writes lines of JSON nested deeper than a parser can read.

    Tools: ``pid( )``, its process id (to tell one session from another);
    ``notice( depth, order )``, which first writes a log notification whose
    data nests ``depth`` arrays, then a server request (``ping``) nested so,
    then answers ``ok``; ``deep( depth, order )``, whose answer nests
    ``depth`` arrays in its structured content; ``bad_id( size )``, which
    first writes an answer of ``size`` bytes whose id is a text with an
    escape JSON does not allow, then answers ``ok``. With ``order`` ``last``
    the ``id`` and ``method`` come after the deep part (as the TypeScript
    SDK writes them); else first.
'''


import json
import os
import sys


_out = sys.stdout.buffer
_TOOLS = [
    { 'name': name, 'inputSchema': { 'type': 'object' } }
    for name in ( 'pid', 'notice', 'deep', 'bad_id' ) ]


def main( ) -> None:
    for line in sys.stdin.buffer:
        if not line.strip( ): continue
        message = json.loads( line )
        if 'id' not in message or 'method' not in message: continue
        _answer( message[ 'id' ], message[ 'method' ],
                 message.get( 'params' ) or { } )


def _answer( identifier, method, params ) -> None:
    if method == 'initialize':
        _respond( identifier, {
            'protocolVersion': params.get(
                'protocolVersion', '2025-11-25' ),
            'capabilities': { 'tools': { }, 'logging': { } },
            'serverInfo': { 'name': 'deep', 'version': '1.0' } } )
    elif method == 'tools/list': _respond( identifier, { 'tools': _TOOLS } )
    elif method == 'tools/call': _call( identifier, params )
    elif method in ( 'ping', 'logging/setLevel' ): _respond( identifier, { } )
    else:
        _write( json.dumps( {
            'jsonrpc': '2.0', 'id': identifier,
            'error': { 'code': -32601, 'message': f"No method {method}." } } ) )


def _call( identifier, params ) -> None:
    name = params.get( 'name' )
    arguments = params.get( 'arguments' ) or { }
    depth = int( arguments.get( 'depth', 1100 ) )
    last = arguments.get( 'order' ) == 'last'
    nested = '[' * depth + ']' * depth
    if name == 'notice':
        _write( _frame(
            '"method":"notifications/message"',
            f'"params":{{"level":"error","data":{nested}}}', last ) )
        _write( _frame(
            '"id":900,"method":"ping"', f'"params":{{"x":{nested}}}', last ) )
        _respond( identifier, { 'content': [
            { 'type': 'text', 'text': 'ok' } ] } )
    elif name == 'deep':
        _write( _frame(
            f'"id":{json.dumps( identifier )}',
            f'"result":{{"content":[],"structuredContent":{{"a":{nested}}}}}',
            last ) )
    elif name == 'bad_id':
        size = int( arguments.get( 'size', 0 ) )
        _write( '{"jsonrpc":"2.0","id":"\\q","result":{"content":[{'
                '"type":"text","text":"' + 'x' * size + '"}]}}' )
        _respond( identifier, { 'content': [
            { 'type': 'text', 'text': 'ok' } ] } )
    else:
        _respond( identifier, { 'content': [
            { 'type': 'text', 'text': str( os.getpid( ) ) } ] } )


def _frame( head, body, last ) -> str:
    ''' Returns JSON-RPC message of head and deep body, head first or last.
    '''
    if last: return f'{{{body},"jsonrpc":"2.0",{head}}}'
    return f'{{"jsonrpc":"2.0",{head},{body}}}'


def _respond( identifier, result ) -> None:
    _write( json.dumps(
        { 'jsonrpc': '2.0', 'id': identifier, 'result': result } ) )


def _write( text ) -> None:
    _out.write( text.encode( ) + b'\n' )
    _out.flush( )


if __name__ == '__main__':
    try: main( )
    except ( BrokenPipeError, KeyboardInterrupt ): pass
