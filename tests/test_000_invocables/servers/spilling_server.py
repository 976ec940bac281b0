# SPDX-License-Identifier: Apache-2.0

''' Raw MCP server for tests (stdio, JSON-RPC by hand, the standard
    library alone): it says its secret (``SPILL``, from the environment)
    and text which is not Unicode (lone surrogates, the JSON escape
    ``\\ud800``) on every surface a client passes on.

    Tools: ``log`` (a log message whose logger names the secret and whose
    data holds a lone surrogate; the call ends once the client answered a
    ping sent after it), ``visit`` (elicitation by URL whose
    ``elicitationId`` holds the secret; once answered, the server says the
    visit is complete, under the same identifier, then returns the
    answer), ``visit_plain`` (the same with the identifier ``visit-1``),
    ``visit_lone`` (an identifier with a lone surrogate), ``progress``
    (progress whose message holds both, with a total of Infinity; then a
    ping, as ``log``), ``elicit`` (a form whose message and schema hold
    both), ``sample`` (sampling whose messages, system prompt and
    metadata hold both),
    ``config`` (a result of an embedded resource whose blob is the base64
    of a JSON document which holds the secret). Prompts, resources and
    templates whose texts hold both; a prompt whose argument's name is
    not Unicode, a resource whose URI holds the secret, templates whose
    URI holds the secret or is not Unicode (which a client must leave
    out; the SDK 1.x refuses a listing of a URI which is not Unicode).
    Prompt messages, resource texts and completion values hold both, as
    does the error of the prompt for ``who`` ``fail``;
    ``file:///config.json`` is the blob.
'''


import base64
import itertools
import json
import os
import sys


SECRET = os.environ.get( 'SPILL', '' )
LONE = '\ud800'
BAD = f"a{LONE}b {SECRET}"
BLOB = base64.b64encode( json.dumps(
    { 'config': { 'api_key': SECRET } } ).encode( ) ).decode( )
_output = sys.stdout.buffer
_TOOLS = (
    'log', 'visit', 'visit_plain', 'visit_lone', 'progress', 'elicit',
    'sample', 'config' )
_PROMPTS = [
    { 'name': 'p', 'title': BAD, 'description': BAD,
      'arguments': [ { 'name': 'who', 'description': BAD } ] },
    { 'name': 'q', 'arguments': [ { 'name': f"w{LONE}" } ] },
]
_RESOURCES = [
    { 'uri': 'file:///r.txt', 'name': BAD, 'title': BAD,
      'description': BAD, 'mimeType': 'text/plain' },
    { 'uri': 'file:///config.json', 'name': 'config',
      'mimeType': 'application/json' },
    { 'uri': f"file:///keys/{SECRET}", 'name': 'key' },
]
_TEMPLATES = [
    { 'uriTemplate': 'file:///t/{x}', 'name': BAD, 'description': BAD },
    { 'uriTemplate': f"file:///s/{SECRET}/{{x}}", 'name': 's' },
    { 'uriTemplate': f"file:///u/{LONE}/{{x}}", 'name': 'u' },
]
_requests = itertools.count( 9000 )
_waiting: dict[ int, tuple[ object, str | None ] ] = { }


def _write( message ):
    _output.write( ( json.dumps( message ) + '\n' ).encode( ) )
    _output.flush( )


def _respond( identifier, result ):
    _write( { 'jsonrpc': '2.0', 'id': identifier, 'result': result } )


def _text( identifier, text ):
    _respond( identifier, { 'content': [ { 'type': 'text', 'text': text } ] } )


def _ask( identifier, method, parameters, visit = None ):
    request = next( _requests )
    _waiting[ request ] = ( identifier, visit )
    _write( {
        'jsonrpc': '2.0', 'id': request, 'method': method,
        'params': parameters } )


def _visit( identifier, visit ):
    _ask( identifier, 'elicitation/create', {
        'mode': 'url', 'message': 'Visit, please.',
        'url': 'https://elsewhere.example/start', 'elicitationId': visit },
        visit = visit )


def _call( identifier, parameters ):
    name = parameters.get( 'name' )
    token = ( parameters.get( '_meta' ) or { } ).get( 'progressToken' )
    if name == 'log':
        _write( { 'jsonrpc': '2.0', 'method': 'notifications/message',
                  'params': { 'level': 'error', 'logger': f"lg-{SECRET}",
                              'data': { 'said': BAD } } } )
        # Answered once the client has taken the message (and passed it
        # on): its answer to a ping comes after.
        return _ask( identifier, 'ping', { } )
    elif name == 'visit': return _visit( identifier, f"eid-{SECRET}" )
    elif name == 'visit_plain': return _visit( identifier, 'visit-1' )
    elif name == 'visit_lone': return _visit( identifier, f"v{LONE}" )
    elif name == 'progress' and token is not None:
        _output.write( ( json.dumps( {
            'jsonrpc': '2.0', 'method': 'notifications/progress',
            'params': { 'progressToken': token, 'progress': 1,
                        'total': float( 'inf' ), 'message': BAD } },
            allow_nan = True ) + '\n' ).encode( ) )
        _output.flush( )
        return _ask( identifier, 'ping', { } )
    elif name == 'elicit':
        return _ask( identifier, 'elicitation/create', {
            'mode': 'form', 'message': BAD, 'requestedSchema': {
                'type': 'object', 'properties': {
                    'a': { 'type': 'string', 'description': BAD } } } } )
    elif name == 'sample':
        return _ask( identifier, 'sampling/createMessage', {
            'messages': [ { 'role': 'user',
                            'content': { 'type': 'text', 'text': BAD } } ],
            'systemPrompt': BAD, 'maxTokens': 5,
            'metadata': { 'note': BAD } } )
    elif name == 'config':
        return _respond( identifier, { 'content': [ {
            'type': 'resource', 'resource': {
                'uri': 'file:///config.json',
                'mimeType': 'application/json', 'blob': BLOB } } ] } )
    return _text( identifier, 'done' )


def _read( identifier, uri ):
    if uri == 'file:///config.json':
        contents = { 'uri': uri, 'mimeType': 'application/json',
                     'blob': BLOB }
    else: contents = { 'uri': uri, 'mimeType': 'text/plain', 'text': BAD }
    _respond( identifier, { 'contents': [ contents ] } )


def _answer( message ):
    identifier, visit = _waiting.pop( message[ 'id' ], ( None, None ) )
    if identifier is None: return
    if visit is not None:
        _write( { 'jsonrpc': '2.0',
                  'method': 'notifications/elicitation/complete',
                  'params': { 'elicitationId': visit } } )
    _text( identifier, 'answer: ' + json.dumps(
        message.get( 'result' ) or message.get( 'error' ) ) )


def _handle( message ):
    identifier = message[ 'id' ]
    method = message.get( 'method' )
    parameters = message.get( 'params' ) or { }
    if method == 'initialize':
        _respond( identifier, {
            'protocolVersion': parameters.get(
                'protocolVersion', '2025-11-25' ),
            'capabilities': {
                'tools': { }, 'prompts': { }, 'resources': { },
                'completions': { }, 'logging': { } },
            'serverInfo': { 'name': 'spilling', 'version': '1' } } )
    elif method == 'tools/list':
        _respond( identifier, { 'tools': [
            { 'name': name, 'description': name,
              'inputSchema': { 'type': 'object', 'properties': { } } }
            for name in _TOOLS ] } )
    elif method == 'tools/call': _call( identifier, parameters )
    elif method == 'prompts/list':
        _respond( identifier, { 'prompts': _PROMPTS } )
    elif method == 'prompts/get' and (
        parameters.get( 'arguments' ) or { }
    ).get( 'who' ) == 'fail':
        _write( { 'jsonrpc': '2.0', 'id': identifier, 'error': {
            'code': -32602, 'message': BAD } } )
    elif method == 'prompts/get':
        _respond( identifier, { 'description': BAD, 'messages': [
            { 'role': 'user',
              'content': { 'type': 'text', 'text': BAD } } ] } )
    elif method == 'resources/list':
        _respond( identifier, { 'resources': _RESOURCES } )
    elif method == 'resources/templates/list':
        _respond( identifier, { 'resourceTemplates': _TEMPLATES } )
    elif method == 'resources/read':
        _read( identifier, parameters[ 'uri' ] )
    elif method == 'completion/complete':
        _respond( identifier, { 'completion': {
            'values': [ BAD, f"k-{SECRET}", 'ok' ] } } )
    elif method in ( 'ping', 'logging/setLevel' ): _respond( identifier, { } )
    else:
        _write( { 'jsonrpc': '2.0', 'id': identifier, 'error': {
            'code': -32601, 'message': 'Method not found.' } } )


def main( ):
    for line in sys.stdin.buffer:
        if not line.strip( ): continue
        message = json.loads( line )
        if 'method' not in message and 'id' in message: _answer( message )
        elif 'id' in message: _handle( message )


if __name__ == '__main__': main( )
