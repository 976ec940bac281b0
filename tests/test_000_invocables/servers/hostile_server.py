# SPDX-License-Identifier: Apache-2.0

''' Hand-written MCP server over stdio which misbehaves on request.

    It speaks JSON-RPC by hand (no SDK), so that it can write what no SDK
    server would: bytes which are not UTF-8, lines which are not JSON,
    results of any size (streamed in chunks, never held whole), tool lists
    with tools which the SDK's models refuse. Flags:

    ``--banner TEXT``      writes TEXT to stdout at start, with no newline,
                           so that the answer to ``initialize`` is garbled;
    ``--banner-from NAME`` writes the variable NAME so;
    ``--bad-tools``        lists tools whose ``inputSchema`` the SDK refuses
                           beside the good ones;
    ``--id-last``          writes the ``id`` of responses after the result,
                           as the TypeScript SDK does;
    ``--describe-from NAME`` lists a tool ``described`` whose title,
                           description, parameter default and output schema
                           quote the variable NAME;
    ``--lone-surrogates``  lists a tool ``halves`` whose description and
                           schema hold lone surrogates (JSON escapes of
                           UTF-16 halves).

    Tools: ``echo( message )``; ``big( size )``, a text of ``size`` bytes;
    ``noisy( message )``, which first writes a non-JSON line, a line of
    bytes which are not UTF-8 and an empty line; ``mangled( )``, whose
    answer holds a byte which is not UTF-8; ``leak( name )``, which prints
    the variable ``name`` to stdout and stderr, then answers with an error
    result quoting it; ``reject( name )``, which answers with a protocol
    error quoting it; ``reveal( name )``, which answers with it;
    ``structured( )``, with the same JSON as text and as structure;
    ``deaf( )``, which closes its stdin, answers with its pid, and sleeps,
    so that the next request cannot be written.
'''


import argparse
import json
import os
import sys
import time


_CHUNK = 1 << 20
_out = sys.stdout.buffer


_GOOD_TOOLS = [
    { 'name': 'echo', 'description': 'Returns the message.',
      'inputSchema': {
          'type': 'object',
          'properties': { 'message': { 'type': 'string' } },
          'required': [ 'message' ] } },
    { 'name': 'big', 'description': 'Returns a text of size bytes.',
      'inputSchema': {
          'type': 'object',
          'properties': { 'size': { 'type': 'integer' } },
          'required': [ 'size' ] } },
    { 'name': 'noisy', 'description': 'Writes garbage, then answers.',
      'inputSchema': {
          'type': 'object',
          'properties': { 'message': { 'type': 'string' } } } },
    { 'name': 'leak', 'description': 'Fails, quoting a variable.',
      'inputSchema': {
          'type': 'object',
          'properties': { 'name': { 'type': 'string' } } } },
    { 'name': 'mangled', 'description': 'Answers with a bad byte.',
      'inputSchema': { 'type': 'object', 'properties': { } } },
    { 'name': 'reject', 'description': 'Fails with a protocol error.',
      'inputSchema': {
          'type': 'object',
          'properties': { 'name': { 'type': 'string' } } } },
    { 'name': 'reveal', 'description': 'Answers with a variable.',
      'inputSchema': {
          'type': 'object',
          'properties': { 'name': { 'type': 'string' } } } },
    { 'name': 'deaf', 'description': 'Answers, then reads no more.',
      'inputSchema': { 'type': 'object', 'properties': { } } },
    { 'name': 'structured', 'description': 'Same JSON, twice.',
      'inputSchema': { 'type': 'object', 'properties': { } },
      'outputSchema': {
          'type': 'object',
          'properties': { 'answer': { 'type': 'integer' } } } },
]
_BAD_TOOLS = [
    # As a real server lists them: a schema with nothing but '$schema'.
    { 'name': 'schemaless',
      'description': 'Input schema without type.',
      'inputSchema': {
          '$schema': 'http://json-schema.org/draft-07/schema#' } },
    { 'name': 'nameless-schema', 'inputSchema': 'not an object' },
    { 'description': 'A tool without a name.',
      'inputSchema': { 'type': 'object' } },
]


def main( ) -> None:
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--banner', default = '' )
    parser.add_argument( '--banner-from', default = '' )
    parser.add_argument( '--bad-tools', action = 'store_true' )
    parser.add_argument( '--id-last', action = 'store_true' )
    parser.add_argument( '--describe-from', default = '' )
    parser.add_argument( '--lone-surrogates', action = 'store_true' )
    options = parser.parse_args( )
    if options.banner_from:
        options.banner = os.environ.get( options.banner_from, '' )
    if options.banner:
        _out.write( options.banner.encode( ) )
        _out.flush( )
    tools = _GOOD_TOOLS + ( _BAD_TOOLS if options.bad_tools else [ ] )
    if options.describe_from:
        tools = [ *tools, _describe( os.environ.get( options.describe_from ) ) ]
    if options.lone_surrogates:
        tools = [ *tools, {
            'name': 'halves', 'description': 'Half \ud800 of a pair.',
            'inputSchema': {
                'type': 'object',
                'properties': { 'x\udfff': { 'type': 'string' } } } } ]
    for line in sys.stdin.buffer:
        if not line.strip( ): continue
        message = json.loads( line )
        if 'id' not in message: continue # notifications
        _answer( options, tools, message )


def _describe( value ):
    return {
        'name': 'described', 'title': f"Uses {value}",
        'description': f"Calls the service with key {value}.",
        'inputSchema': {
            'type': 'object',
            'properties': { 'key': {
                'type': 'string', 'default': value,
                'description': f"The key, such as {value}." } } },
        'outputSchema': {
            'type': 'object',
            'properties': { 'echo': { 'type': 'string', 'const': value } } },
    }


def _answer( options, tools, message ) -> None:
    identifier = message[ 'id' ]
    method = message.get( 'method' )
    params = message.get( 'params' ) or { }
    if method == 'initialize':
        _respond( options, identifier, {
            'protocolVersion': params.get(
                'protocolVersion', '2025-11-25' ),
            'capabilities': { 'tools': { } },
            'serverInfo': { 'name': 'hostile', 'version': '1.0' } } )
    elif method == 'tools/list':
        _respond( options, identifier, { 'tools': tools } )
    elif method == 'tools/call':
        _call( options, identifier, params )
    elif method == 'ping': _respond( options, identifier, { } )
    else:
        _write( {
            'jsonrpc': '2.0', 'id': identifier,
            'error': { 'code': -32601, 'message': f"No method {method}." } } )


def _call( options, identifier, params ) -> None:
    name = params.get( 'name' )
    arguments = params.get( 'arguments' ) or { }
    match name:
        case 'echo':
            _respond_text( options, identifier, arguments[ 'message' ] )
        case 'big': _respond_big( options, identifier, arguments[ 'size' ] )
        case 'noisy':
            _out.write( b'this line is not JSON\n' )
            _out.write( b'\xff\xfe not UTF-8 \xc3\x28\n' )
            _out.write( b'\n' )
            _out.flush( )
            _respond_text( options, identifier, arguments.get( 'message' ) )
        case 'mangled':
            _out.write(
                b'{"jsonrpc":"2.0","id":' + json.dumps( identifier ).encode( )
                + b',"result":{"content":[{"type":"text",'
                + b'"text":"caf\xe9 au lait"}]}}\n' )
            _out.flush( )
        case 'reject':
            value = os.environ.get( arguments[ 'name' ], '' )
            _write( {
                'jsonrpc': '2.0', 'id': identifier,
                'error': { 'code': -32602,
                           'message': f"bad token {value}" } } )
        case 'leak':
            value = os.environ.get( arguments[ 'name' ], '' )
            _out.write( f"leaking {value} on stdout\n".encode( ) )
            _out.flush( )
            print( f"leaking {value} on stderr", file = sys.stderr,
                   flush = True )
            _respond( options, identifier, {
                'content': [ { 'type': 'text',
                               'text': f"failed with token {value}" } ],
                'isError': True } )
        case 'reveal':
            value = os.environ.get( arguments[ 'name' ], '' )
            _respond( options, identifier, {
                'content': [
                    { 'type': 'text', 'text': f"the value is {value}" },
                    { 'type': 'resource', 'resource': {
                        'uri': 'file:///value.txt', 'text': value } } ],
                'structuredContent': { 'value': value } } )
        case 'deaf':
            os.close( 0 ) # before answering: the next request meets no one
            _respond_text( options, identifier, str( os.getpid( ) ) )
            time.sleep( 3600 )
        case 'structured':
            data = { 'answer': 42 }
            _respond( options, identifier, {
                'content': [
                    { 'type': 'text', 'text': json.dumps( data, indent = 2 ) },
                ],
                'structuredContent': data } )
        case _:
            _respond( options, identifier, {
                'content': [ { 'type': 'text', 'text': f"No tool {name}." } ],
                'isError': True } )


def _respond( options, identifier, result ) -> None:
    if options.id_last:
        message = { 'result': result, 'jsonrpc': '2.0', 'id': identifier }
    else: message = { 'jsonrpc': '2.0', 'id': identifier, 'result': result }
    _write( message )


def _respond_big( options, identifier, size: int ) -> None:
    ''' Streams a text result of size bytes, in chunks. '''
    head = '{"jsonrpc":"2.0",' + (
        '' if options.id_last else f'"id":{json.dumps( identifier )},' )
    head += '"result":{"content":[{"type":"text","text":"'
    tail = '"}]}' + (
        f',"id":{json.dumps( identifier )}' if options.id_last else '' )
    _out.write( head.encode( ) )
    chunk = b'x' * _CHUNK
    remainder = size
    while remainder > 0:
        part = chunk if remainder >= _CHUNK else chunk[ : remainder ]
        try: _out.write( part )
        except BrokenPipeError: sys.exit( 0 )
        remainder -= len( part )
    _out.write( ( tail + '}\n' ).encode( ) )
    _out.flush( )


def _respond_text( options, identifier, text ) -> None:
    _respond( options, identifier, {
        'content': [ { 'type': 'text', 'text': text } ] } )


def _write( message ) -> None:
    _out.write( ( json.dumps( message ) + '\n' ).encode( ) )
    _out.flush( )


if __name__ == '__main__':
    try: main( )
    except ( BrokenPipeError, KeyboardInterrupt ): pass
