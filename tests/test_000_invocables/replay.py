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


def _produce_handler(
    replay: ReplayServer
) -> type[ BaseHTTPRequestHandler ]:

    class Handler( BaseHTTPRequestHandler ):

        protocol_version = 'HTTP/1.1'

        def do_POST( self ) -> None:
            length = int( self.headers.get( 'Content-Length', '0' ) )
            payload = self.rfile.read( length )
            try: replay.requests.append( json.loads( payload ) )
            except ValueError: replay.requests.append( { } )
            body = replay.body
            self.send_response( replay.status )
            self.send_header( 'Content-Type', replay.content_type )
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
