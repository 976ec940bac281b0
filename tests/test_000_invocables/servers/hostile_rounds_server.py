# SPDX-License-Identifier: Apache-2.0

''' Hand-written MCP server over stdio which abuses input in rounds and
    tasks (MCP 2026-07-28, SEP-2322 and the tasks extension).

    It speaks JSON-RPC by hand (no SDK, the standard library alone), so
    that it can write what no SDK server would. It refuses the legacy
    handshake (``initialize``) and answers ``server/discover``, declaring
    the tasks extension unless run with ``--no-tasks``. With ``--legacy``
    it accepts the handshake and speaks 2025-11-25 (with its tasks: the
    tool ``task`` requires them), sending the same payloads, which a
    client of that protocol never expects.

    Tools of rounds (``tools/call`` answered by ``input_required``):
    ``forever`` asks for a word, for ever; ``state_forever`` answers with
    a state alone, for ever; ``thousands( count )`` asks count inputs in
    one round; ``huge_state( size )`` gives a state of size characters and
    then tells whether it came back exactly; ``deep_state( depth )`` gives
    a nested array as state; ``deep_request( depth )`` asks with a schema
    nested depth levels; ``unknown_kind``, ``malformed( shape )`` (of
    ``many``: thousands of requests, each out of shape) and
    ``empty`` ask what no client can answer; ``duplicate_keys`` writes one
    key twice in the result and in its requests.

    Tool ``flawed( count )`` returns a result whose count content blocks
    are out of shape (each quoting ``HOSTILE_SECRET``, if set, to the
    SDK's account of its faults). Tool ``deep_elicit( depth )`` (with
    ``--legacy``) asks the client, during the call, for an elicitation
    (``elicitation/create``) whose schema is nested depth levels, then
    returns what the client answered (``error <message>`` or ``<action>``).
    With ``--features`` the server declares prompts and resources:
    ``prompts/get`` of ``flawed`` and ``resources/read`` of
    ``hostile://flawed`` answer out of shape (argument ``count``, or query
    ``?count=``, messages or contents each quoting ``HOSTILE_SECRET``);
    ``prompts/get`` of ``huge_error`` fails with a message of a megabyte
    (beginning with ``HOSTILE_SECRET``); any other name or URI is
    unknown. Tool ``refuse_huge`` answers with a JSON-RPC error whose
    message (beginning with ``HOSTILE_SECRET``) is a mebibyte long.
    With ``--bad-header`` the listing holds tool ``headed`` too,
    whose ``x-mcp-header`` designation is no RFC 9110 token (a text of 64
    KiB, beginning with ``HOSTILE_SECRET``), which MCP 2026-07-28 tells a
    client to drop. With ``--non-finite`` it holds tool ``unbounded``
    too, whose schema has ``NaN`` and ``Infinity`` (literals no JSON text
    carries, which Python's parser reads).

    Tool ``task( plan, interval )`` (the tasks extension; 2025-11-25 with
    ``--legacy``) makes a task, polled at ``pollIntervalMs`` interval (a
    JSON number written as given, any size), which behaves by plan:
    ``working`` works for ever; ``flip`` is created completed, then works;
    ``malformed_result`` and ``huge_result`` complete with such a result;
    ``huge_id`` has an identifier of a megabyte, and fails; ``id_changes``
    names another task on each poll, then completes; ``input_malformed``,
    ``input_thousands``, ``input_forever`` and ``input_malformed_many``
    (thousands out of shape) need input so;
    ``input_answerless`` asks for a word which no one can give;
    ``get_error`` answers polls with an error; ``failed_huge`` fails with a
    message of a megabyte; ``unknown_status`` says a status of no protocol;
    ``cancel_deaf`` works for ever and never answers ``tasks/cancel``;
    ``secret_id`` bears the variable ``HOSTILE_SECRET`` in its identifier
    (across its two hundredth character, before a megabyte) and in the
    message of its failure. Tool ``arrayed`` declares an array as its
    output schema, which MCP 2026-07-28 allows and 2025-11-25 does not.
    Tool ``seen( )`` returns, as JSON, the method,
    tool or task identifier (its length beyond 64), and parameters' key
    names of each message received before.
'''


import json
import os
import sys


_EXTENSION = 'io.modelcontextprotocol/tasks'
_MODERN = '2026-07-28'
_out = sys.stdout

_legacy = '--legacy' in sys.argv
_features = '--features' in sys.argv
_headers = '--bad-header' in sys.argv
_tasks = '--no-tasks' not in sys.argv
_non_finite = '--non-finite' in sys.argv
_seen: list[ dict[ str, object ] ] = [ ]
_plans: dict[ str, dict[ str, object ] ] = { }


def _elicitation( message: str, schema: object = None ) -> dict:
    return {
        'method': 'elicitation/create',
        'params': {
            'mode': 'form', 'message': message,
            'requestedSchema': schema or {
                'type': 'object',
                'properties': { 'word': { 'type': 'string' } } } } }


def _complete( text: str ) -> dict:
    return {
        'resultType': 'complete',
        'content': [ { 'type': 'text', 'text': text } ] }


def _required( requests: object = None, state: object = None ) -> dict:
    result: dict[ str, object ] = { 'resultType': 'input_required' }
    if requests is not None: result[ 'inputRequests' ] = requests
    if state is not None: result[ 'requestState' ] = state
    return result


def _nest( depth: int ) -> str:
    ''' Returns JSON text of arrays nested depth levels. '''
    return '[' * depth + ']' * depth


def _nest_schema( depth: int ) -> str:
    ''' Returns JSON text of a schema nested depth levels. '''
    return (
        '{"type": "object", "properties": {"a": ' * depth
        + '{"type": "string"}' + '}}' * depth )


def _answer_raw( identifier: object, result: dict, key: str, text: str ):
    ''' Answers with result, whose key holds JSON text as given. '''
    body = json.dumps( result )
    _write(
        '{"jsonrpc": "2.0", "id": ' + json.dumps( identifier )
        + ', "result": ' + body[ : -1 ] + f", \"{key}\": {text}}}}}" )


def _write( text: str ) -> None:
    _out.write( text + '\n' )
    _out.flush( )


def _answer( identifier: object, result: object ) -> None:
    _write( json.dumps( { 'jsonrpc': '2.0', 'id': identifier,
                          'result': result } ) )


def _fail( identifier: object, code: int, message: str, data = None ):
    error: dict[ str, object ] = { 'code': code, 'message': message }
    if data is not None: error[ 'data' ] = data
    _write( json.dumps( { 'jsonrpc': '2.0', 'id': identifier,
                          'error': error } ) )


def _call_rounds( identifier, name, arguments, params ):
    ''' Answers a tool of rounds; returns False if unknown. '''
    responses = params.get( 'inputResponses' )
    state = params.get( 'requestState' )
    if name == 'forever':
        _answer( identifier, _required(
            { 'elicit': _elicitation( 'Say a word.' ) }, 'again' ) )
    elif name == 'state_forever':
        _answer( identifier, _required( state = 'busy' ) )
    elif name == 'thousands':
        if responses:
            _answer( identifier, _complete( f"answered {len( responses )}" ) )
            return True
        _answer( identifier, _required( {
            f"e{index}": _elicitation( f"Word {index}." )
            for index in range( int( arguments.get( 'count', 5000 ) ) ) } ) )
    elif name == 'huge_state':
        size = int( arguments.get( 'size', 1 << 20 ) )
        expected = 'é' * size
        if state is None:
            _answer( identifier, _required(
                { 'elicit': _elicitation( 'Say a word.' ) }, expected ) )
            return True
        _answer( identifier, _complete(
            f"exact {state == expected} {len( state )}" ) )
    elif name == 'deep_state':
        _answer_raw(
            identifier, _required( { 'elicit': _elicitation( 'Word.' ) } ),
            'requestState', _nest( int( arguments.get( 'depth', 100 ) ) ) )
    elif name == 'deep_request':
        if responses:
            _answer( identifier, _complete( 'answered' ) )
            return True
        schema = _nest_schema( int( arguments.get( 'depth', 100 ) ) )
        request = json.dumps( _elicitation( 'Deep.' ) )
        request = request.replace(
            json.dumps( _elicitation( 'Deep.' )[ 'params' ][
                'requestedSchema' ] ), schema )
        _answer_raw(
            identifier, _required( ), 'inputRequests',
            '{"elicit": ' + request + '}' )
    elif name == 'unknown_kind':
        _answer( identifier, _required( {
            'x': { 'method': 'tools/call', 'params': { 'name': 'rm' } },
            'y': { 'method': 'frobnicate/now', 'params': { } } } ) )
    elif name == 'malformed':
        shape = arguments.get( 'shape', 'number' )
        requests = {
            'number': { 'x': 42 },
            'bare': { 'x': { 'method': 'elicitation/create' } },
            'list': [ _elicitation( 'Listed.' ) ],
            'string': 'requests',
            'many': { f"x{index}": 42 for index in range( 5000 ) },
        }[ shape ]
        _answer( identifier, _required( requests ) )
    elif name == 'flawed':
        count = int( arguments.get( 'count', 5000 ) )
        result = _complete( '' )
        result[ 'content' ] = [
            { 'type': 'text', 'text': { 'secret': _secret( ) } } ] * count
        if _legacy: result.pop( 'resultType' )
        _answer( identifier, result )
    elif name == 'deep_elicit': _elicit_deep( identifier, arguments )
    elif name == 'refuse_huge':
        _fail( identifier, -32603, f"{_secret( )} refused. " + 'x' * 2 ** 20 )
    elif name == 'empty':
        _answer( identifier, { 'resultType': 'input_required',
                               'inputRequests': { } } )
    elif name == 'duplicate_keys':
        if responses:
            _answer( identifier, _complete(
                'keys ' + ','.join( sorted( responses ) ) ) )
            return True
        first = json.dumps( _elicitation( 'First.' ) )
        second = json.dumps( _elicitation( 'Second.' ) )
        _write(
            '{"jsonrpc":"2.0","id":' + json.dumps( identifier )
            + ',"result":{"resultType":"complete","content":[],'
            + '"inputRequests":{"k":' + first + ',"k":' + second + '},'
            + '"resultType":"input_required"}}' )
    else: return False
    return True


def _secret( ) -> str:
    return os.environ.get( 'HOSTILE_SECRET', 'no secret' )


def _elicit_deep( identifier: object, arguments: dict ) -> None:
    ''' Asks the client for an elicitation of a deep schema, waits for
        its answer (handling what else comes meanwhile), returns it. '''
    schema = _nest_schema( int( arguments.get( 'depth', 200 ) ) )
    _write(
        '{"jsonrpc": "2.0", "id": "deep", "method": "elicitation/create", '
        '"params": {"message": "Deep.", "requestedSchema": ' + schema
        + '}}' )
    for line in sys.stdin:
        if not line.strip( ): continue
        message = json.loads( line )
        if message.get( 'id' ) == 'deep' and 'method' not in message: break
        _handle( message )
    else: return
    error = message.get( 'error' )
    _answer( identifier, _complete(
        f"error {error[ 'message' ]}" if error
        else str( message[ 'result' ].get( 'action' ) ) ) )


def _get_feature( identifier: object, method: str, params: dict ):
    ''' Answers ``prompts/get`` or ``resources/read``, out of shape. '''
    if method == 'prompts/get' and params.get( 'name' ) == 'flawed':
        count = int( ( params.get( 'arguments' ) or { } ).get( 'count', 1 ) )
        result: dict[ str, object ] = { 'messages': [ {
            'role': _secret( ),
            'content': { 'type': 'text', 'text': 'x' } } ] * count }
    elif str( params.get( 'uri' ) ).startswith( 'hostile://flawed' ):
        _, _, count = str( params[ 'uri' ] ).partition( '?count=' )
        result = { 'contents': [ {
            'uri': 'hostile://flawed', 'text': { 'secret': _secret( ) } }
        ] * int( count or 1 ) }
    elif params.get( 'name' ) == 'huge_error':
        return _fail( identifier, -32602, _secret( ) + 'm' * ( 1 << 20 ) )
    else: return _fail( identifier, -32602, 'Unknown prompt or resource.' )
    if not _legacy: result[ 'resultType' ] = 'complete'
    return _answer( identifier, result )


def _task_fields( identifier: str, plan: dict, status: str ) -> dict:
    fields: dict[ str, object ] = {
        'taskId': identifier, 'status': status,
        'createdAt': '2026-01-01T00:00:00Z',
        'lastUpdatedAt': '2026-01-01T00:00:00Z',
        ( 'pollInterval' if _legacy else 'pollIntervalMs' ): 0,
        ( 'ttl' if _legacy else 'ttlMs' ): 60000 }
    return fields


def _write_task( identifier: object, fields: dict, plan: dict, shape ):
    ''' Writes task, its interval as given (a JSON number of any size):
        as is, wrapped (``task``, 2025-11-25) or claimed (``resultType``).
    '''
    key = 'pollInterval' if _legacy else 'pollIntervalMs'
    fields = dict( fields )
    fields.pop( key )
    text = json.dumps( fields )[ : -1 ]
    text += f", \"{key}\": {plan[ 'interval' ]}}}"
    if shape == 'wrapped': text = '{"task": ' + text + '}'
    elif shape == 'claimed': text = text[ : -1 ] + ', "resultType": "task"}'
    _write(
        '{"jsonrpc": "2.0", "id": ' + json.dumps( identifier )
        + ', "result": ' + text + '}' )


def _call_task( identifier, arguments ):
    plan = {
        'plan': arguments.get( 'plan', 'working' ),
        'interval': str( arguments.get( 'interval', '10' ) ),
        'polls': 0 }
    number = len( _plans ) + 1
    task = f"t{number}"
    if plan[ 'plan' ] == 'huge_id': task = f"t{number}-" + 'i' * ( 1 << 20 )
    if plan[ 'plan' ] == 'secret_id':
        task = (
            f"t{number}-" + 'i' * 190 + os.environ[ 'HOSTILE_SECRET' ]
            + 'i' * ( 1 << 20 ) )
    _plans[ task ] = plan
    status = 'completed' if plan[ 'plan' ] == 'flip' else 'working'
    _write_task(
        identifier, _task_fields( task, plan, status ), plan,
        'wrapped' if _legacy else 'claimed' )


def _survey_task( identifier, task ):
    plan = _plans.get( task )
    if plan is None: return _fail( identifier, -32602, 'Unknown task.' )
    plan[ 'polls' ] += 1
    polls = plan[ 'polls' ]
    kind = plan[ 'plan' ]
    fields = _task_fields( task, plan, 'working' )
    if kind == 'get_error':
        return _fail( identifier, -32603, 'The task store broke.' )
    if kind == 'malformed_result':
        fields.update( status = 'completed',
                       result = { 'content': 'not a list' } )
    elif kind == 'huge_result':
        fields.update( status = 'completed',
                       result = _complete( 'h' * ( 3 << 20 ) ) )
    elif kind == 'huge_id':
        fields.update( status = 'failed',
                       error = { 'code': -1, 'message': 'Broken.' } )
    elif kind == 'secret_id':
        fields.update( status = 'failed', error = {
            'code': -1,
            'message': f"Broken by {os.environ[ 'HOSTILE_SECRET' ]}." } )
    elif kind == 'failed_huge':
        fields.update( status = 'failed', error = {
            'code': -1, 'message': 'm' * ( 1 << 20 ) } )
    elif kind == 'unknown_status': fields[ 'status' ] = 'exploded'
    elif kind == 'id_changes':
        fields[ 'taskId' ] = f"other{polls}"
        if polls >= 3:
            fields.update( status = 'completed', result = _complete( 'ok' ) )
    elif kind.startswith( 'input_' ):
        fields[ 'status' ] = 'input_required'
        fields[ 'inputRequests' ] = {
            'input_malformed': { 'x': { 'method': 'nope/nope' } },
            'input_malformed_many': {
                f"x{index}": 42 for index in range( 5000 ) },
            'input_thousands': {
                f"e{index}": _elicitation( f"Word {index}." )
                for index in range( 5000 ) },
            'input_forever': {
                f"e{polls}": _elicitation( f"Word {polls}." ) },
            'input_answerless': { 'e': _elicitation( 'Word.' ) },
        }[ kind ]
    _write_task( identifier, fields, plan, 'flat' )
    return None


def _conclude_task( identifier, task ):
    ''' Answers ``tasks/result`` (2025-11-25). '''
    plan = _plans.get( task ) or { }
    kind = plan.get( 'plan' )
    if kind == 'malformed_result':
        return _answer( identifier, { 'content': 'not a list' } )
    if kind == 'huge_result':
        return _answer( identifier, _complete( 'h' * ( 3 << 20 ) ) )
    if kind == 'id_changes': return _answer( identifier, _complete( 'ok' ) )
    return _fail( identifier, -32603, 'No result.' )


def _record( message: dict ) -> None:
    params = message.get( 'params' )
    params = params if isinstance( params, dict ) else { }
    entry: dict[ str, object ] = {
        'method': message.get( 'method' ), 'keys': sorted( params ) }
    if 'name' in params: entry[ 'name' ] = params[ 'name' ]
    task = params.get( 'taskId' )
    if isinstance( task, str ):
        entry[ 'task' ] = task if len( task ) <= 64 else len( task )
    state = params.get( 'requestState' )
    if isinstance( state, str ): entry[ 'state' ] = len( state )
    _seen.append( entry )


def _list_tools( ) -> list:
    names = (
        'forever', 'state_forever', 'thousands', 'huge_state',
        'deep_state', 'deep_request', 'unknown_kind', 'malformed', 'empty',
        'duplicate_keys', 'task', 'seen', 'arrayed', 'flawed',
        'deep_elicit', 'refuse_huge' ) + (
            ( 'headed', ) if _headers else ( ) ) + (
            ( 'unbounded', ) if _non_finite else ( ) )
    tools = [ ]
    for name in names:
        tool: dict[ str, object ] = {
            'name': name, 'inputSchema': {
                'type': 'object', 'additionalProperties': True } }
        if name == 'task' and _legacy:
            tool[ 'execution' ] = { 'taskSupport': 'required' }
        if name == 'arrayed': # 2026-07-28 alone lets it be no object
            tool[ 'outputSchema' ] = {
                'type': 'array', 'items': { 'type': 'integer' } }
        if name == 'headed': tool[ 'inputSchema' ] = {
            'type': 'object', 'properties': { 'region': {
                'type': 'string',
                'x-mcp-header': f"{_secret( )} " + 'no token ' * 7282 } } }
        if name == 'unbounded': tool[ 'inputSchema' ] = { # NaN, Infinity
            'type': 'object', 'properties': { 'x': {
                'type': 'number', 'default': float( 'nan' ),
                'maximum': float( 'inf' ) } } }
        tools.append( tool )
    return tools


def _declare( ) -> dict[ str, object ]:
    ''' Returns capabilities of the server, but for tasks. '''
    capabilities: dict[ str, object ] = { 'tools': { } }
    if _features: capabilities.update( prompts = { }, resources = { } )
    return capabilities


def _handle( message: dict ) -> None:
    method = message.get( 'method' )
    identifier = message.get( 'id' )
    params = message.get( 'params' ) or { }
    _record( message )
    if identifier is None: return None # a notification
    if method == 'initialize':
        if not _legacy:
            return _fail(
                identifier, -32022, 'Unsupported protocol version.',
                { 'supported': [ _MODERN ],
                  'requested': params.get( 'protocolVersion' ) } )
        capabilities: dict[ str, object ] = _declare( )
        capabilities[ 'tasks' ] = {
            'requests': { 'tools': { 'call': { } } }, 'cancel': { } }
        return _answer( identifier, {
            'protocolVersion': params.get( 'protocolVersion' ),
            'capabilities': capabilities,
            'serverInfo': { 'name': 'hostile-rounds', 'version': '1' } } )
    if method == 'server/discover':
        capabilities = _declare( )
        if _tasks: capabilities[ 'extensions' ] = { _EXTENSION: { } }
        return _answer( identifier, {
            'supportedVersions': [ _MODERN ], 'capabilities': capabilities,
            'resultType': 'complete', 'cacheScope': 'private', 'ttlMs': 0,
            '_meta': { 'io.modelcontextprotocol/serverInfo': {
                'name': 'hostile-rounds', 'version': '1' } } } )
    if method == 'ping': return _answer( identifier, { } )
    if method == 'tools/list':
        return _answer( identifier, {
            'tools': _list_tools( ), 'resultType': 'complete',
            'cacheScope': 'private', 'ttlMs': 0 } )
    if method == 'tools/call':
        name = params.get( 'name' )
        arguments = params.get( 'arguments' ) or { }
        if name == 'seen':
            return _answer( identifier, _complete( json.dumps( _seen ) ) )
        if name == 'task': return _call_task( identifier, arguments )
        if _call_rounds( identifier, name, arguments, params ): return None
        return _fail( identifier, -32602, 'Unknown tool.' )
    if _features and method in ( 'prompts/get', 'resources/read' ):
        return _get_feature( identifier, method, params )
    task = params.get( 'taskId' )
    if method == 'tasks/get': return _survey_task( identifier, task )
    if method == 'tasks/result': return _conclude_task( identifier, task )
    if method == 'tasks/cancel':
        plan = _plans.get( task )
        if plan is None: return _fail( identifier, -32602, 'Unknown task.' )
        if plan[ 'plan' ] == 'cancel_deaf': return None # never answered
        fields = _task_fields( task, plan, 'cancelled' )
        if not _legacy: return _answer( identifier, { } )
        return _write_task( identifier, fields, plan, 'flat' )
    if method == 'tasks/update': return _answer( identifier, { } )
    return _fail( identifier, -32601, 'Method not found.' )


def main( ) -> None:
    for line in sys.stdin:
        if not line.strip( ): continue
        _handle( json.loads( line ) )


if __name__ == '__main__': main( )
