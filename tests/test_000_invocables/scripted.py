# SPDX-License-Identifier: Apache-2.0

''' Scripted provider server: a sequence of real-shaped answers, in order.

    Answers are built from the captures in ``tests/data/providers``
    (their shapes and fields kept; only ids, names, arguments and texts
    changed), so that the real SDK clients parse them as they parse the
    providers' own responses.
'''


import copy
import json
import threading

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .replay import access_fixtures_location


Call = tuple[ str | None, str, dict[ str, Any ] ] # id, name, arguments


@dataclass( frozen = True )
class Answer:
    ''' One HTTP answer: status, content type and body. '''

    status: int
    content_type: str
    body: bytes


@dataclass( frozen = True )
class Request:
    ''' One request received: method, path and decoded JSON body. '''

    method: str
    path: str
    body: Any


class ScriptedServer:
    ''' HTTP server on 127.0.0.1 which serves its script, one answer per
        request. A request beyond the script gets a 500 error body.

        Use as a context manager.
    '''

    def __init__( self, answers: Iterable[ Answer ] = ( ) ) -> None:
        self.answers = list( answers )
        self.requests: list[ Request ] = [ ]
        self._lock = threading.Lock( )
        self._server = ThreadingHTTPServer(
            ( '127.0.0.1', 0 ), _produce_handler( self ) )
        self._thread = threading.Thread(
            target = self._server.serve_forever,
            kwargs = { 'poll_interval': 0.05 }, daemon = True )

    def __enter__( self ) -> 'ScriptedServer':
        self._thread.start( )
        return self

    def __exit__( self, *exception_info: object ) -> None:
        self._server.shutdown( )
        self._server.server_close( )
        self._thread.join( timeout = 5 )

    @property
    def url( self ) -> str:
        ''' Base URL of the server. '''
        host, port = self._server.server_address[ : 2 ]
        return f"http://{host!s}:{port}"

    def script( self, *answers: Answer ) -> None:
        ''' Appends answers to the script. '''
        with self._lock: self.answers.extend( answers )

    def take_answer( self, request: Request ) -> Answer:
        ''' Records request; returns next answer of the script. '''
        with self._lock:
            self.requests.append( request )
            if self.answers: return self.answers.pop( 0 )
        body = json.dumps( { 'error': {
            'type': 'api_error', 'code': 'script_exhausted',
            'message': 'The script has no more answers.' } } )
        return Answer( 500, 'application/json', body.encode( ) )


def _produce_handler(
    server: ScriptedServer
) -> type[ BaseHTTPRequestHandler ]:

    class Handler( BaseHTTPRequestHandler ):

        protocol_version = 'HTTP/1.1'

        def do_POST( self ) -> None:
            length = int( self.headers.get( 'Content-Length', '0' ) )
            payload = self.rfile.read( length )
            try: body = json.loads( payload )
            except ValueError: body = payload.decode( errors = 'replace' )
            answer = server.take_answer(
                Request( method = 'POST', path = self.path, body = body ) )
            self.send_response( answer.status )
            self.send_header( 'Content-Type', answer.content_type )
            self.send_header( 'Content-Length', str( len( answer.body ) ) )
            self.send_header( 'Connection', 'close' )
            self.end_headers( )
            # Small writes, so that events straddle reads of the client.
            for start in range( 0, len( answer.body ), 97 ):
                self.wfile.write( answer.body[ start : start + 97 ] )
                self.wfile.flush( )
            self.close_connection = True

        def log_message( self, *arguments: Any ) -> None:
            pass

    return Handler


def read_fixture( name: str ) -> bytes:
    ''' Returns bytes of capture, as recorded. '''
    return ( access_fixtures_location( ) / name ).read_bytes( )


def answer_fixture( name: str, status: int = 200 ) -> Answer:
    ''' Returns answer which replays capture as recorded. '''
    content_type = (
        'text/event-stream' if name.endswith( '.sse' )
        else 'application/json' )
    return Answer( status, content_type, read_fixture( name ) )


def _answer_json( value: Any, status: int = 200 ) -> Answer:
    return Answer( status, 'application/json', json.dumps( value ).encode( ) )


def _answer_events( events: Sequence[ dict[ str, Any ] ] ) -> Answer:
    ''' Returns SSE body with ``event:`` names from the events' types. '''
    lines: list[ str ] = [ ]
    for event in events:
        lines.append( f"event: {event[ 'type' ]}" )
        lines.append( f"data: {json.dumps( event )}" )
        lines.append( '' )
    return Answer(
        200, 'text/event-stream', ( '\n'.join( lines ) + '\n' ).encode( ) )


def _answer_chunks( chunks: Sequence[ dict[ str, Any ] ] ) -> Answer:
    lines = [ f"data: {json.dumps( chunk )}\n" for chunk in chunks ]
    lines.append( 'data: [DONE]\n' )
    return Answer( 200, 'text/event-stream', '\n'.join( lines ).encode( ) )


# Anthropic Messages: from anthropic/single-tool-use.json and
# anthropic/text-then-tool-use-stream.sse.


def anthropic_tool_uses( calls: Sequence[ Call ], text: str = '' ) -> Answer:
    ''' Returns whole message with text (if any) and ``tool_use`` blocks. '''
    message = json.loads( read_fixture( 'anthropic/single-tool-use.json' ) )
    template = message[ 'content' ][ 0 ]
    blocks: list[ dict[ str, Any ] ] = [ ]
    if text: blocks.append( { 'type': 'text', 'text': text } )
    for identifier, name, arguments in calls:
        block = copy.deepcopy( template )
        block.update( id = identifier, name = name, input = arguments )
        blocks.append( block )
    message[ 'content' ] = blocks
    return _answer_json( message )


def anthropic_text( text: str, stop: str = 'end_turn' ) -> Answer:
    ''' Returns whole message with one text block. '''
    message = json.loads( read_fixture( 'anthropic/single-tool-use.json' ) )
    message[ 'content' ] = [ { 'type': 'text', 'text': text } ]
    message[ 'stop_reason' ] = stop
    return _answer_json( message )


def anthropic_text_stream( pieces: Sequence[ str ] ) -> Answer:
    ''' Returns streamed message with one text block, in pieces. '''
    start = _read_anthropic_events( )[ 0 ]
    events: list[ dict[ str, Any ] ] = [
        start,
        { 'type': 'content_block_start', 'index': 0,
          'content_block': { 'type': 'text', 'text': '' } },
        { 'type': 'ping' } ]
    events.extend(
        { 'type': 'content_block_delta', 'index': 0,
          'delta': { 'type': 'text_delta', 'text': piece } }
        for piece in pieces )
    events.extend( [
        { 'type': 'content_block_stop', 'index': 0 },
        { 'type': 'message_delta',
          'delta': { 'stop_reason': 'end_turn', 'stop_sequence': None },
          'usage': { 'output_tokens': 12 } },
        { 'type': 'message_stop' } ] )
    return _answer_events( events )


def anthropic_error( status: int, genus: str, message: str ) -> Answer:
    ''' Returns error body, as anthropic/error-400-invalid-request.json. '''
    body = json.loads(
        read_fixture( 'anthropic/error-400-invalid-request.json' ) )
    body[ 'error' ].update( type = genus, message = message )
    return _answer_json( body, status )


def _read_anthropic_events( ) -> list[ dict[ str, Any ] ]:
    from .replay import parse_events
    body = read_fixture( 'anthropic/text-then-tool-use-stream.sse' )
    return [ event.decode( ) for event in parse_events( body ) ]


# OpenAI Chat Completions: from openai_chat/parallel-tool-calls.json and
# openai_chat/single-tool-call-stream.sse.


def openai_tool_calls( calls: Sequence[ Call ], text: str = '' ) -> Answer:
    ''' Returns completion whose message calls tools (ids may be none). '''
    completion = json.loads(
        read_fixture( 'openai_chat/parallel-tool-calls.json' ) )
    message = completion[ 'choices' ][ 0 ][ 'message' ]
    template = message[ 'tool_calls' ][ 0 ]
    tool_calls: list[ dict[ str, Any ] ] = [ ]
    for identifier, name, arguments in calls:
        call = copy.deepcopy( template )
        if identifier is None: del call[ 'id' ]
        else: call[ 'id' ] = identifier
        call[ 'function' ] = {
            'name': name, 'arguments': json.dumps( arguments ) }
        tool_calls.append( call )
    message[ 'tool_calls' ] = tool_calls
    message[ 'content' ] = text or None
    return _answer_json( completion )


def openai_text( text: str ) -> Answer:
    ''' Returns completion whose message is text. '''
    completion = json.loads(
        read_fixture( 'openai_chat/parallel-tool-calls.json' ) )
    choice = completion[ 'choices' ][ 0 ]
    del choice[ 'message' ][ 'tool_calls' ]
    choice[ 'message' ][ 'content' ] = text
    choice[ 'finish_reason' ] = 'stop'
    return _answer_json( completion )


def openai_text_stream( pieces: Sequence[ str ] ) -> Answer:
    ''' Returns streamed completion of text, in pieces. '''
    from .replay import parse_events
    body = read_fixture( 'openai_chat/single-tool-call-stream.sse' )
    template = next( iter( parse_events( body ) ) ).decode( )
    chunks: list[ dict[ str, Any ] ] = [ ]
    for index, piece in enumerate( pieces ):
        chunk = copy.deepcopy( template )
        delta: dict[ str, Any ] = { 'content': piece }
        if index == 0: delta[ 'role' ] = 'assistant'
        chunk[ 'choices' ][ 0 ][ 'delta' ] = delta
        chunks.append( chunk )
    final = copy.deepcopy( template )
    final[ 'choices' ][ 0 ][ 'delta' ] = { }
    final[ 'choices' ][ 0 ][ 'finish_reason' ] = 'stop'
    chunks.append( final )
    return _answer_chunks( chunks )


def openai_tool_calls_stream( calls: Sequence[ Call ] ) -> Answer:
    ''' Returns streamed completion whose calls come in fragments. '''
    from .replay import parse_events
    body = read_fixture( 'openai_chat/single-tool-call-stream.sse' )
    events = [ event.decode( ) for event in parse_events( body ) ]
    template = events[ 0 ]
    chunks: list[ dict[ str, Any ] ] = [ ]
    for index, ( identifier, name, arguments ) in enumerate( calls ):
        text = json.dumps( arguments )
        opening = copy.deepcopy( template )
        call = opening[ 'choices' ][ 0 ][ 'delta' ][ 'tool_calls' ][ 0 ]
        call.update( index = index, id = identifier )
        call[ 'function' ].update( name = name, arguments = '' )
        chunks.append( opening )
        for start in range( 0, len( text ), 5 ):
            fragment = copy.deepcopy( events[ 1 ] )
            call = fragment[ 'choices' ][ 0 ][ 'delta' ][ 'tool_calls' ][ 0 ]
            call[ 'index' ] = index
            call[ 'function' ][ 'arguments' ] = text[ start : start + 5 ]
            chunks.append( fragment )
    final = copy.deepcopy( template )
    final[ 'choices' ][ 0 ][ 'delta' ] = { }
    final[ 'choices' ][ 0 ][ 'finish_reason' ] = 'tool_calls'
    chunks.append( final )
    return _answer_chunks( chunks )


# OpenAI Responses: from openai_responses/single-function-call.json and
# openai_responses/reasoning-text-then-function-call-stream.sse.


def responses_function_calls(
    calls: Sequence[ Call ], text: str = ''
) -> Answer:
    ''' Returns response whose output calls functions. '''
    response = json.loads(
        read_fixture( 'openai_responses/single-function-call.json' ) )
    template = response[ 'output' ][ 0 ]
    output: list[ dict[ str, Any ] ] = [ ]
    if text: output.append( _produce_responses_message( text ) )
    for number, ( identifier, name, arguments ) in enumerate( calls ):
        item = copy.deepcopy( template )
        item.update(
            id = f"fc_{number:04d}", call_id = identifier, name = name,
            arguments = json.dumps( arguments ) )
        output.append( item )
    response[ 'output' ] = output
    return _answer_json( response )


def responses_text( text: str ) -> Answer:
    ''' Returns response whose output is one message. '''
    response = json.loads(
        read_fixture( 'openai_responses/single-function-call.json' ) )
    response[ 'output' ] = [ _produce_responses_message( text ) ]
    return _answer_json( response )


def responses_text_stream( pieces: Sequence[ str ] ) -> Answer:
    ''' Returns streamed response with one message, in pieces. '''
    from .replay import parse_events
    body = read_fixture(
        'openai_responses/reasoning-text-then-function-call-stream.sse' )
    originals = [ event.decode( ) for event in parse_events( body ) ]
    created = originals[ 0 ]
    completed = copy.deepcopy( next(
        event for event in originals
        if event[ 'type' ] == 'response.completed' ) )
    message = _produce_responses_message( ''.join( pieces ) )
    opened = dict( message, status = 'in_progress', content = [ ] )
    events: list[ dict[ str, Any ] ] = [
        created,
        { 'type': 'response.output_item.added', 'item': opened,
          'output_index': 0 },
        { 'type': 'response.content_part.added', 'item_id': message[ 'id' ],
          'output_index': 0, 'content_index': 0,
          'part': { 'type': 'output_text', 'annotations': [ ],
                    'logprobs': [ ], 'text': '' } } ]
    events.extend(
        { 'type': 'response.output_text.delta', 'item_id': message[ 'id' ],
          'output_index': 0, 'content_index': 0, 'delta': piece,
          'logprobs': [ ] }
        for piece in pieces )
    completed[ 'response' ][ 'output' ] = [ message ]
    events.extend( [
        { 'type': 'response.output_item.done', 'item': message,
          'output_index': 0 },
        completed ] )
    for number, event in enumerate( events ):
        event[ 'sequence_number' ] = number
    return _answer_events( events )


def _produce_responses_message( text: str ) -> dict[ str, Any ]:
    return {
        'id': 'msg_0001', 'type': 'message', 'status': 'completed',
        'role': 'assistant',
        'content': [ {
            'type': 'output_text', 'annotations': [ ], 'logprobs': [ ],
            'text': text } ] }


# Google Gemini: from gemini/single-function-call.json and
# gemini/int-args-stream.sse (CRLF framing kept).


def gemini_function_calls(
    calls: Sequence[ Call ], text: str = ''
) -> Answer:
    ''' Returns response whose content calls functions (no ids). '''
    response = json.loads(
        read_fixture( 'gemini/single-function-call.json' ) )
    template = response[ 'candidates' ][ 0 ][ 'content' ][ 'parts' ][ 0 ]
    parts: list[ dict[ str, Any ] ] = [ ]
    if text: parts.append( { 'text': text } )
    for index, ( identifier, name, arguments ) in enumerate( calls ):
        part = copy.deepcopy( template )
        part[ 'functionCall' ] = { 'name': name, 'args': arguments }
        if identifier is not None:
            part[ 'functionCall' ][ 'id' ] = identifier
        if index: del part[ 'thoughtSignature' ]
        parts.append( part )
    response[ 'candidates' ][ 0 ][ 'content' ][ 'parts' ] = parts
    return _answer_json( response )


def gemini_text( text: str ) -> Answer:
    ''' Returns response whose content is text. '''
    response = json.loads(
        read_fixture( 'gemini/single-function-call.json' ) )
    candidate = response[ 'candidates' ][ 0 ]
    candidate[ 'content' ][ 'parts' ] = [ { 'text': text } ]
    del candidate[ 'finishMessage' ]
    return _answer_json( response )


def gemini_text_stream( pieces: Sequence[ str ] ) -> Answer:
    ''' Returns stream of text chunks, framed with CRLF as Gemini does. '''
    from .replay import parse_events
    body = read_fixture( 'gemini/int-args-stream.sse' )
    template = [ event.decode( ) for event in parse_events( body ) ][ -1 ]
    chunks: list[ str ] = [ ]
    for index, piece in enumerate( pieces ):
        chunk = copy.deepcopy( template )
        candidate = chunk[ 'candidates' ][ 0 ]
        candidate[ 'content' ][ 'parts' ] = [ { 'text': piece } ]
        if index < len( pieces ) - 1: del candidate[ 'finishReason' ]
        chunks.append( f"data: {json.dumps( chunk )}\r\n\r\n" )
    return Answer(
        200, 'text/event-stream', ''.join( chunks ).encode( ) )


# Cohere Chat v2: from cohere/single-tool-call.json and
# cohere/empty-args-stream.sse.


def cohere_tool_calls( calls: Sequence[ Call ], plan: str = '' ) -> Answer:
    ''' Returns response whose message calls tools. '''
    response = json.loads( read_fixture( 'cohere/single-tool-call.json' ) )
    message = response[ 'message' ]
    template = message[ 'tool_calls' ][ 0 ]
    tool_calls: list[ dict[ str, Any ] ] = [ ]
    for identifier, name, arguments in calls:
        call = copy.deepcopy( template )
        call[ 'id' ] = identifier
        call[ 'function' ] = {
            'name': name, 'arguments': json.dumps( arguments ) }
        tool_calls.append( call )
    message[ 'tool_calls' ] = tool_calls
    message[ 'tool_plan' ] = plan or message[ 'tool_plan' ]
    return _answer_json( response )


def cohere_text( text: str ) -> Answer:
    ''' Returns response whose message is text. '''
    response = json.loads( read_fixture( 'cohere/single-tool-call.json' ) )
    response[ 'message' ] = {
        'role': 'assistant', 'content': [ { 'type': 'text', 'text': text } ] }
    response[ 'finish_reason' ] = 'COMPLETE'
    return _answer_json( response )


def cohere_text_stream( pieces: Sequence[ str ] ) -> Answer:
    ''' Returns stream of a text message, in pieces. '''
    from .replay import parse_events
    body = read_fixture( 'cohere/empty-args-stream.sse' )
    originals = [ event.decode( ) for event in parse_events( body ) ]
    start, end = copy.deepcopy( originals[ 0 ] ), copy.deepcopy(
        originals[ -2 ] )
    events: list[ dict[ str, Any ] ] = [
        start,
        { 'type': 'content-start', 'index': 0, 'delta': { 'message': {
            'content': { 'type': 'text', 'text': '' } } } } ]
    events.extend(
        { 'type': 'content-delta', 'index': 0, 'delta': { 'message': {
            'content': { 'text': piece } } } }
        for piece in pieces )
    end[ 'delta' ][ 'finish_reason' ] = 'COMPLETE'
    events.extend( [ { 'type': 'content-end', 'index': 0 }, end ] )
    answer = _answer_events( events )
    return Answer(
        answer.status, answer.content_type,
        answer.body + b'data: [DONE]\n\n' )


# Ollama /api/chat: from ollama/cloud-tool-call-with-id.json and
# ollama/think-content-then-tool-call-no-id.json.


def ollama_tool_calls( calls: Sequence[ Call ] ) -> Answer:
    ''' Returns response whose message calls tools (ids may be none). '''
    response = json.loads(
        read_fixture( 'ollama/cloud-tool-call-with-id.json' ) )
    message = response[ 'message' ]
    template = message[ 'tool_calls' ][ 0 ]
    tool_calls: list[ dict[ str, Any ] ] = [ ]
    for index, ( identifier, name, arguments ) in enumerate( calls ):
        call = copy.deepcopy( template )
        if identifier is None: del call[ 'id' ]
        else: call[ 'id' ] = identifier
        call[ 'function' ] = {
            'index': index, 'name': name, 'arguments': arguments }
        tool_calls.append( call )
    message[ 'tool_calls' ] = tool_calls
    return _answer_json( response )


def ollama_text( text: str ) -> Answer:
    ''' Returns response whose message is text. '''
    response = json.loads(
        read_fixture( 'ollama/cloud-tool-call-with-id.json' ) )
    response[ 'message' ] = { 'role': 'assistant', 'content': text }
    return _answer_json( response )


def ollama_stream(
    pieces: Sequence[ str ], calls: Sequence[ Call ] = ( )
) -> Answer:
    ''' Returns NDJSON stream: text pieces, then whole calls, then done. '''
    template = json.loads(
        read_fixture( 'ollama/cloud-tool-call-with-id.json' ) )
    lines: list[ str ] = [ ]
    for piece in pieces:
        chunk = copy.deepcopy( template )
        chunk[ 'message' ] = { 'role': 'assistant', 'content': piece }
        chunk[ 'done' ] = False
        for key in ( 'done_reason', 'total_duration', 'eval_count',
                     'prompt_eval_count' ): chunk.pop( key, None )
        lines.append( json.dumps( chunk ) )
    if calls:
        whole = json.loads( ollama_tool_calls( calls ).body )
        whole[ 'message' ][ 'content' ] = ''
        whole[ 'done' ] = False
        lines.append( json.dumps( whole ) )
    final = copy.deepcopy( template )
    final[ 'message' ] = { 'role': 'assistant', 'content': '' }
    lines.append( json.dumps( final ) )
    return Answer(
        200, 'application/x-ndjson', ( '\n'.join( lines ) + '\n' ).encode( ) )


def ollama_error( message: str, status: int = 400 ) -> Answer:
    ''' Returns error body, as ollama/error-400-model-does-not-support-tools.
    '''
    body = json.loads( read_fixture(
        'ollama/error-400-model-does-not-support-tools.json' ) )
    body[ 'error' ] = message
    return _answer_json( body, status )
