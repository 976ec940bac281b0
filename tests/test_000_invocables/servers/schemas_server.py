# SPDX-License-Identifier: Apache-2.0

''' Hand-written MCP server over stdio whose schemas hold catastrophic
    patterns.

    It speaks JSON-RPC by hand (no SDK, which would check its own results),
    so that it can answer with structured content which breaks its own
    output schema. Tools:

    ``backtrack( )``   output schema with the pattern ``^(a+)+$``, which
                       Python's ``re`` takes hours to refuse for
                       ``'a' * 40 + 'b'``, the structured content it
                       returns;
    ``lookahead( )``   the same behind a lookahead, which RE2 cannot run;
    ``conforming( )``  the same schema, and content which matches it;
    ``bare( )``        the same schema, and no structured content at all;
    ``unbounded( )``   an output schema whose reference resolves nowhere;
    ``shout( word )``  an input schema with the pattern ``^(a+)+$``;
    ``elicit( )``      asks the client for a word whose requested schema
                       holds the pattern ``^(a+)+$``, and answers with the
                       client's answer: ``error CODE: MESSAGE``, or the
                       JSON of the result.
'''


import json
import sys


_HOSTILE = 'a' * 40 + 'b'
_PATTERN = '^(a+)+$'
_lines = iter( sys.stdin.buffer )
_out = sys.stdout.buffer


def _output_schema( pattern ):
    return {
        'type': 'object',
        'properties': { 'word': { 'type': 'string', 'pattern': pattern } },
        'required': [ 'word' ] }


_EMPTY = { 'type': 'object', 'properties': { } }
_TOOLS = [
    { 'name': 'backtrack', 'description': 'Breaks its output schema.',
      'inputSchema': _EMPTY, 'outputSchema': _output_schema( _PATTERN ) },
    { 'name': 'lookahead', 'description': 'Breaks its output schema.',
      'inputSchema': _EMPTY,
      'outputSchema': _output_schema( '^(?=a)(a+)+$' ) },
    { 'name': 'conforming', 'description': 'Keeps its output schema.',
      'inputSchema': _EMPTY, 'outputSchema': _output_schema( _PATTERN ) },
    { 'name': 'bare', 'description': 'Returns no structure.',
      'inputSchema': _EMPTY, 'outputSchema': _output_schema( _PATTERN ) },
    { 'name': 'unbounded', 'description': 'References nothing.',
      'inputSchema': _EMPTY,
      'outputSchema': {
          'type': 'object',
          'properties': { 'word': { '$ref': '#/$defs/missing' } } } },
    { 'name': 'elicit', 'description': 'Asks the user for a word.',
      'inputSchema': _EMPTY },
    { 'name': 'shout', 'description': 'Shouts a word of a letters.',
      'inputSchema': {
          'type': 'object',
          'properties': { 'word': { 'type': 'string', 'pattern': _PATTERN } },
          'required': [ 'word' ] } },
]
_WORDS = {
    'backtrack': _HOSTILE, 'lookahead': _HOSTILE, 'conforming': 'aaaa',
    'unbounded': 'anything' }


def main( ) -> None:
    for line in _lines:
        if not line.strip( ): continue
        message = json.loads( line )
        if 'id' not in message: continue # notifications
        _answer( message )


def _answer( message ) -> None:
    identifier = message[ 'id' ]
    method = message.get( 'method' )
    params = message.get( 'params' ) or { }
    if method == 'initialize':
        _respond( identifier, {
            'protocolVersion': params.get(
                'protocolVersion', '2025-11-25' ),
            'capabilities': { 'tools': { } },
            'serverInfo': { 'name': 'schemas', 'version': '1.0' } } )
    elif method == 'tools/list': _respond( identifier, { 'tools': _TOOLS } )
    elif method == 'tools/call': _call( identifier, params )
    elif method == 'ping': _respond( identifier, { } )
    else:
        _write( {
            'jsonrpc': '2.0', 'id': identifier,
            'error': { 'code': -32601, 'message': f"No method {method}." } } )


def _call( identifier, params ) -> None:
    name = params.get( 'name' )
    arguments = params.get( 'arguments' ) or { }
    if name == 'shout':
        word = str( arguments.get( 'word' ) ).upper( )
        _respond( identifier, {
            'content': [ { 'type': 'text', 'text': word } ] } )
    elif name == 'elicit': _elicit( identifier )
    elif name == 'bare':
        _respond( identifier, {
            'content': [ { 'type': 'text', 'text': 'no structure' } ] } )
    elif name in _WORDS:
        data = { 'word': _WORDS[ name ] }
        _respond( identifier, {
            'content': [ { 'type': 'text', 'text': json.dumps( data ) } ],
            'structuredContent': data } )
    else:
        _respond( identifier, {
            'content': [ { 'type': 'text', 'text': f"No tool {name}." } ],
            'isError': True } )


def _elicit( identifier ) -> None:
    _write( {
        'jsonrpc': '2.0', 'id': 'elicit-1', 'method': 'elicitation/create',
        'params': {
            'mode': 'form', 'message': 'Which word?',
            'requestedSchema': _output_schema( _PATTERN ) } } )
    answer = { }
    for line in _lines:
        if not line.strip( ): continue
        answer = json.loads( line )
        if answer.get( 'id' ) == 'elicit-1' and 'method' not in answer: break
    if 'error' in answer:
        error = answer[ 'error' ]
        text = f"error {error.get( 'code' )}: {error.get( 'message' )}"
    else: text = json.dumps( answer.get( 'result' ) )
    _respond( identifier, { 'content': [ { 'type': 'text', 'text': text } ] } )


def _respond( identifier, result ) -> None:
    _write( { 'jsonrpc': '2.0', 'id': identifier, 'result': result } )


def _write( message ) -> None:
    _out.write( ( json.dumps( message ) + '\n' ).encode( ) )
    _out.flush( )


if __name__ == '__main__':
    try: main( )
    except ( BrokenPipeError, KeyboardInterrupt ): pass
