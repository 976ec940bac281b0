# SPDX-License-Identifier: Apache-2.0

''' Replay of provider captures: fixture lookup, SSE parsing, HTTP server.

    The captures live in ``tests/data/providers`` (their origins are in
    ``INDEX.md`` there).
'''


import json
import threading

from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


FIXTURES_LOCATION = Path( __file__ ).resolve( ).parents[ 1 ] / 'data' / 'providers'
PROVIDERS_BY_FOLDER = {
    'anthropic': 'anthropic',
    'openai_chat': 'openai',
    'openai_responses': 'openai-responses',
}


@dataclass( frozen = True )
class Capture:
    ''' One recorded provider response with its expected tool calls. '''

    name: str
    path: Path
    provider: str
    streaming: bool
    status: int
    expected: list[ dict[ str, Any ] ]

    @property
    def content_type( self ) -> str:
        ''' Content type of the recorded body. '''
        if self.path.suffix == '.sse': return 'text/event-stream'
        return 'application/json'

    @property
    def truncated( self ) -> bool:
        ''' Whether the capture ends with a tool call cut off. '''
        return 'truncated' in self.name

    def read_bytes( self ) -> bytes:
        ''' Returns the body exactly as recorded. '''
        return self.path.read_bytes( )


@dataclass( frozen = True )
class Event:
    ''' One server-sent event: its name (``event:``) and data text. '''

    label: str | None
    data: str

    def decode( self ) -> Any:
        ''' Returns decoded JSON of data, or the data text if not JSON. '''
        try: return json.loads( self.data )
        except ValueError: return self.data


def access_fixtures_location( ) -> Path:
    ''' Returns folder of provider captures. '''
    return FIXTURES_LOCATION


def survey_captures( ) -> list[ Capture ]:
    ''' Returns captures of the processors under test, in index order. '''
    location = access_fixtures_location( )
    expectations = json.loads(
        ( location / 'expected.json' ).read_text( encoding = 'utf-8' ) )
    captures: list[ Capture ] = [ ]
    for name, entry in expectations.items( ):
        folder = name.split( '/', 1 )[ 0 ]
        if folder not in PROVIDERS_BY_FOLDER: continue
        captures.append( Capture(
            name = name, path = location / name,
            provider = PROVIDERS_BY_FOLDER[ folder ],
            streaming = name.endswith( '.sse' ),
            status = entry[ 'http_status' ],
            expected = entry[ 'expected' ] ) )
    return captures


def parse_events( body: bytes, flush: bool = False ) -> Iterator[ Event ]:
    ''' Parses text/event-stream body as the WHATWG specification says.

        Lines end with CRLF, LF or CR; lines starting with a colon are
        comments; one space after the colon of a field is removed; data
        lines join with line feeds; an event is dispatched at a blank line.
        An event not ended by a blank line at end of body is discarded,
        unless ``flush`` is set.
    '''
    text = body.decode( 'utf-8' )
    if text.startswith( '\ufeff' ): text = text[ 1 : ]
    label: str | None = None
    data: list[ str ] = [ ]
    has_data = False
    for line in _split_lines( text ):
        if not line:
            if has_data: yield Event( label, '\n'.join( data ) )
            label, data, has_data = None, [ ], False
            continue
        if line.startswith( ':' ): continue
        field, _, value = line.partition( ':' )
        if value.startswith( ' ' ): value = value[ 1 : ]
        if field == 'event': label = value
        elif field == 'data':
            data.append( value )
            has_data = True
    if flush and has_data: yield Event( label, '\n'.join( data ) )


def _split_lines( text: str ) -> Iterator[ str ]:
    ''' Splits at CRLF, LF or CR (not at other Unicode line breaks). '''
    start = 0
    length = len( text )
    index = 0
    while index < length:
        character = text[ index ]
        if character == '\r':
            yield text[ start : index ]
            if index + 1 < length and text[ index + 1 ] == '\n': index += 1
            start = index + 1
        elif character == '\n':
            yield text[ start : index ]
            start = index + 1
        index += 1
    if start < length: yield text[ start : ]


class ReplayServer:
    ''' HTTP server on 127.0.0.1 which answers every request with a body.

        Use as a context manager; ``respond`` sets the next answer.
    '''

    def __init__( self ) -> None:
        self.status = 200
        self.content_type = 'application/json'
        self.body = b'{}'
        self.requests: list[ dict[ str, Any ] ] = [ ]
        self._server = ThreadingHTTPServer(
            ( '127.0.0.1', 0 ), _produce_handler( self ) )
        self._thread = threading.Thread(
            target = self._server.serve_forever, daemon = True )

    def __enter__( self ) -> 'ReplayServer':
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

    def respond( self, status: int, content_type: str, body: bytes ) -> None:
        ''' Sets status, content type and body of the next answers. '''
        self.status = status
        self.content_type = content_type
        self.body = body

    def respond_capture( self, capture: Capture ) -> None:
        ''' Sets the next answers to a capture. '''
        self.respond(
            capture.status, capture.content_type, capture.read_bytes( ) )

    def answer( self, path: str, payload: Any ) -> tuple[ int, str, bytes ]:
        ''' Returns status, content type and body of answer to request. '''
        return self.status, self.content_type, self.body


def _produce_handler(
    replay: ReplayServer
) -> type[ BaseHTTPRequestHandler ]:

    class Handler( BaseHTTPRequestHandler ):

        protocol_version = 'HTTP/1.1'

        def do_POST( self ) -> None:
            length = int( self.headers.get( 'Content-Length', '0' ) )
            payload = self.rfile.read( length )
            try: request = json.loads( payload )
            except ValueError: request = { }
            replay.requests.append( request )
            status, content_type, body = replay.answer( self.path, request )
            self.send_response( status )
            self.send_header( 'Content-Type', content_type )
            self.send_header( 'Content-Length', str( len( body ) ) )
            self.send_header( 'Connection', 'close' )
            self.end_headers( )
            # Small writes, so that events straddle reads of the client.
            for start in range( 0, len( body ), 61 ):
                self.wfile.write( body[ start : start + 61 ] )
                self.wfile.flush( )
            self.close_connection = True

        def log_message( self, *arguments: Any ) -> None:
            pass

    return Handler


# Local models: recorded replies served in each API's format, to histories
# which the server checks as the hosted APIs do.


LOCAL_MODELS_LOCATION = FIXTURES_LOCATION.parent / 'local-models'


@dataclass( frozen = True )
class Round:
    ''' One recorded reply of a local model: its text and stop. '''

    text: str
    stop: str # 'stop', or 'length' when the token limit cut it


class LocalModelServer( ReplayServer ):
    ''' Serves recorded replies of a local model, one per request, as
        llama.cpp's server would (OpenAI Chat at ``/v1/chat/completions``,
        Responses at ``/v1/responses``, Ollama at ``/api/chat``; whole, or
        streamed when the request asks), raw text only.

        Checks each history as the hosted APIs do, and refuses with a 400
        error body those whose results pair with no call (by id), whose
        calls have no result, or whose call ids repeat. Replies beyond the
        script are ``Done.``; ``refusals`` keeps what it refused.
    '''

    def __init__( self ) -> None:
        super( ).__init__( )
        self.script: list[ Round ] = [ ]
        self.refusals: list[ str ] = [ ]

    def load( self, rounds: list[ Round ] ) -> None:
        ''' Sets replies of the next requests; forgets the past ones. '''
        self.script = list( rounds )
        self.requests.clear( )
        self.refusals.clear( )

    def answer( self, path: str, payload: Any ) -> tuple[ int, str, bytes ]:
        ''' Checks history of request; answers with next reply. '''
        genus = _access_genus( path )
        refusal = check_history( genus, payload )
        if refusal is not None:
            self.refusals.append( refusal )
            body = { 'error': {
                'message': refusal, 'type': 'invalid_request_error',
                'param': 'messages', 'code': None } }
            return 400, 'application/json', json.dumps( body ).encode( )
        round_ = self.script.pop( 0 ) if self.script else Round(
            text = 'Done.', stop = 'stop' )
        streaming = bool( payload.get( 'stream' ) )
        return _produce_reply( genus, round_, streaming )


def survey_local_runs( ) -> list[ dict[ str, Any ] ]:
    ''' Returns the recorded loops of qwen2.5-coder-loops.json. '''
    path = LOCAL_MODELS_LOCATION / 'qwen2.5-coder-loops.json'
    return json.loads( path.read_text( encoding = 'utf-8' ) )[ 'runs' ]


def check_history( genus: str, payload: Any ) -> str | None:
    ''' Returns why the API would refuse the history of request, if so. '''
    if genus == 'responses':
        return _check_items( payload.get( 'input' ) or [ ] )
    return _check_messages( payload.get( 'messages' ) or [ ], genus )


def _check_items( items: Any ) -> str | None:
    if isinstance( items, str ): return None
    calls: set[ str ] = set( )
    answered: set[ str ] = set( )
    items_seen: set[ str ] = set( )
    for item in items:
        genus = item.get( 'type' )
        item_id = item.get( 'id' )
        if isinstance( item_id, str ):
            if item_id in items_seen:
                return (
                    f"Duplicate item found with id {item_id}. Remove "
                    "duplicate items from your input and try again." )
            items_seen.add( item_id )
        if genus == 'function_call':
            identifier = item.get( 'call_id' )
            if identifier in calls:
                return f"Duplicate function call with call_id {identifier}."
            calls.add( identifier )
        elif genus == 'function_call_output':
            identifier = item.get( 'call_id' )
            if identifier not in calls:
                return (
                    "No tool call found for function call output with "
                    f"call_id {identifier}." )
            answered.add( identifier )
    missing = calls - answered
    if missing:
        return f"No tool output found for function call {sorted( missing )}."
    return None


def _check_messages( messages: Any, genus: str ) -> str | None:
    seen: set[ str ] = set( )
    pending: list[ str | None ] = [ ]
    for message in messages:
        role = message.get( 'role' )
        if role == 'tool':
            if not pending:
                return (
                    "Messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'." )
            identifier = message.get( 'tool_call_id' )
            if genus == 'chat' or identifier is not None:
                if identifier not in pending:
                    return f"Invalid tool_call_id: {identifier}."
                pending.remove( identifier )
            else: pending.pop( 0 )
            continue
        if pending:
            return (
                "An assistant message with 'tool_calls' must be followed "
                "by tool messages responding to each 'tool_call_id': "
                f"{pending}." )
        for call in message.get( 'tool_calls' ) or [ ]:
            identifier = call.get( 'id' )
            if genus == 'chat' and not identifier:
                return "Missing 'id' of a tool call."
            if identifier is not None:
                if identifier in seen:
                    return f"Duplicate tool call id {identifier}."
                seen.add( identifier )
            pending.append( identifier )
    if pending: return f"No tool message responds to the calls {pending}."
    return None


def _access_genus( path: str ) -> str:
    if path.endswith( '/responses' ): return 'responses'
    if path.endswith( '/api/chat' ): return 'ollama'
    return 'chat'


def _cut_pieces( text: str ) -> list[ str ]:
    ''' Returns text cut in pieces of 1 to 9 characters, in turn. '''
    pieces: list[ str ] = [ ]
    start = 0
    size = 1
    while start < len( text ):
        pieces.append( text[ start : start + size ] )
        start += size
        size = size % 9 + 1
    return pieces


def _produce_reply(
    genus: str, round_: Round, streaming: bool
) -> tuple[ int, str, bytes ]:
    if genus == 'ollama': return _produce_ollama( round_, streaming )
    if genus == 'responses': return _produce_responses( round_, streaming )
    return _produce_chat( round_, streaming )


def _produce_chat(
    round_: Round, streaming: bool
) -> tuple[ int, str, bytes ]:
    base = {
        'id': 'chatcmpl-local', 'created': 0, 'model': 'qwen2.5-coder',
        'system_fingerprint': 'b1-local' }
    if not streaming:
        body = dict(
            base, object = 'chat.completion',
            choices = [ {
                'index': 0, 'finish_reason': round_.stop,
                'message': { 'role': 'assistant', 'content': round_.text },
            } ],
            usage = {
                'prompt_tokens': 1, 'completion_tokens': 1,
                'total_tokens': 2 } )
        return 200, 'application/json', json.dumps( body ).encode( )
    chunks = [
        dict( base, object = 'chat.completion.chunk', choices = [ {
            'index': 0, 'finish_reason': None,
            'delta': { 'role': 'assistant', 'content': piece } } ] )
        for piece in _cut_pieces( round_.text ) ]
    chunks.append( dict( base, object = 'chat.completion.chunk', choices = [
        { 'index': 0, 'finish_reason': round_.stop, 'delta': { } } ] ) )
    lines = [ f"data: {json.dumps( chunk )}\n\n" for chunk in chunks ]
    lines.append( 'data: [DONE]\n\n' )
    return 200, 'text/event-stream', ''.join( lines ).encode( )


def _produce_responses(
    round_: Round, streaming: bool
) -> tuple[ int, str, bytes ]:
    response = json.loads( ( FIXTURES_LOCATION
        / 'openai_responses' / 'single-function-call.json' ).read_text( ) )
    message = {
        'id': 'msg_local', 'type': 'message', 'status': 'completed',
        'role': 'assistant', 'content': [ {
            'type': 'output_text', 'annotations': [ ], 'logprobs': [ ],
            'text': round_.text } ] }
    response.update( output = [ message ], tools = [ ] )
    cut = round_.stop == 'length'
    if cut:
        response.update(
            status = 'incomplete',
            incomplete_details = { 'reason': 'max_output_tokens' } )
        message[ 'status' ] = 'incomplete'
    if not streaming:
        return 200, 'application/json', json.dumps( response ).encode( )
    opened = dict( message, status = 'in_progress', content = [ ] )
    created = dict(
        response, status = 'in_progress', output = [ ],
        incomplete_details = None )
    events: list[ dict[ str, Any ] ] = [
        { 'type': 'response.created', 'response': created },
        { 'type': 'response.output_item.added', 'item': opened,
          'output_index': 0 } ]
    events.extend(
        { 'type': 'response.output_text.delta', 'item_id': 'msg_local',
          'output_index': 0, 'content_index': 0, 'delta': piece,
          'logprobs': [ ] }
        for piece in _cut_pieces( round_.text ) )
    events.append( { 'type': 'response.output_item.done', 'item': message,
                     'output_index': 0 } )
    events.append( {
        'type': 'response.incomplete' if cut else 'response.completed',
        'response': response } )
    lines: list[ str ] = [ ]
    for number, event in enumerate( events ):
        event[ 'sequence_number' ] = number
        lines.append(
            f"event: {event[ 'type' ]}\ndata: {json.dumps( event )}\n\n" )
    return 200, 'text/event-stream', ''.join( lines ).encode( )


def _produce_ollama(
    round_: Round, streaming: bool
) -> tuple[ int, str, bytes ]:
    base = { 'model': 'qwen2.5-coder', 'created_at': '2026-01-01T00:00:00Z' }
    final = dict(
        base, done = True, done_reason = round_.stop,
        total_duration = 1, eval_count = 1 )
    if not streaming:
        body = dict( final, message = {
            'role': 'assistant', 'content': round_.text } )
        return 200, 'application/json', json.dumps( body ).encode( )
    lines = [
        json.dumps( dict( base, done = False, message = {
            'role': 'assistant', 'content': piece } ) ) + '\n'
        for piece in _cut_pieces( round_.text ) ]
    lines.append( json.dumps( dict( final, message = {
        'role': 'assistant', 'content': '' } ) ) + '\n' )
    return 200, 'application/x-ndjson', ''.join( lines ).encode( )


# Property testing: arbitrary JSON bodies and event sequences.

_KEYS = (
    'arguments', 'call_id', 'choices', 'code', 'content', 'content_block',
    'delta', 'error', 'finish_reason', 'function', 'id', 'incomplete_details',
    'index', 'input', 'item', 'item_id', 'message', 'name', 'output',
    'output_index', 'partial_json', 'reason', 'response', 'status',
    'stop_reason', 'tool_calls', 'type',
)
_WORDS = (
    '', '[DONE]', 'content_block_delta', 'content_block_start',
    'content_block_stop', 'error', 'function', 'function_call',
    'incomplete', 'input_json_delta', 'length', 'max_tokens',
    'message_delta', 'response.failed', 'response.function_call_arguments.delta',
    'response.function_call_arguments.done', 'response.incomplete',
    'response.output_item.added', 'response.output_item.done',
    'server_tool_use', 'stop', 'tool_calls', 'tool_use', '{', '{"a": 1}',
    '}', 'null',
)


def produce_json_strategy( ):
    ''' Returns hypothesis strategy of JSON values shaped like responses. '''
    from hypothesis import strategies
    scalars = (
        strategies.none( ) | strategies.booleans( )
        | strategies.integers( -3, 3 )
        | strategies.floats( allow_nan = False, allow_infinity = False )
        | strategies.sampled_from( _WORDS ) | strategies.text( max_size = 8 ) )
    keys = strategies.sampled_from( _KEYS ) | strategies.text( max_size = 4 )
    return strategies.recursive(
        scalars,
        lambda children: (
            strategies.lists( children, max_size = 4 )
            | strategies.dictionaries( keys, children, max_size = 6 ) ),
        max_leaves = 30 )


def produce_events_strategy( captures: list[ Capture ] ):
    ''' Returns strategy of event sequences: arbitrary JSON and fragments
        of the given captures' streams, shuffled and truncated.
    '''
    from hypothesis import strategies
    pools = [
        [ event.decode( ) for event in parse_events( capture.read_bytes( ) ) ]
        for capture in captures if capture.streaming ]
    pool = [ event for events in pools for event in events ]
    known = strategies.sampled_from( pool ) if pool else strategies.nothing( )
    arbitrary = strategies.lists(
        known | produce_json_strategy( ), max_size = 30 )
    whole = strategies.sampled_from( pools ) if pools else strategies.nothing( )
    mangled = whole.flatmap( lambda events: strategies.one_of(
        strategies.permutations( events ),
        strategies.integers( 0, len( events ) ).map(
            lambda size: events[ : size ] ),
        strategies.lists( strategies.sampled_from( events ), max_size = 40 ),
    ) )
    return arbitrary | mangled


def check_normalize_robust( processor: Any, body: Any ) -> None:
    ''' Asserts that normalizing body gives canisters or a package error. '''
    from invocables import InvocationCanister, exceptions
    try: invocations = processor.normalize_invocations( body )
    except exceptions.Omnierror: return
    assert isinstance( invocations, tuple )
    for invocation in invocations:
        assert isinstance( invocation, InvocationCanister )
        assert isinstance( invocation.identifier, str )
        assert invocation.identifier
        assert isinstance( invocation.arguments, dict )


def check_events_robust( processor: Any, events: list[ Any ] ) -> None:
    ''' Asserts that ingesting events gives canisters or package errors. '''
    from invocables import InvocationCanister, exceptions
    accumulator = processor.produce_accumulator( )
    emitted: list[ Any ] = [ ]
    for event in events:
        try: emitted.extend( accumulator.ingest( event ) )
        except exceptions.Omnierror: pass
    try: emitted.extend( accumulator.conclude( ) )
    except exceptions.Omnierror: pass
    accumulator.survey_partials( )
    for invocation in emitted:
        assert isinstance( invocation, InvocationCanister )
        assert isinstance( invocation.arguments, dict )
