# SPDX-License-Identifier: Apache-2.0

''' Streams of JSON-RPC messages over stdin and stdout, one a line, bounded.

    What the ``mcp`` SDK's ``stdio_server`` gives (a stream of the client's
    messages, a stream of the server's), for a client which may be hostile:
    a line is read in chunks and may not exceed the bound of a request's
    body over HTTP (:py:data:`LINE_SIZE_MAXIMUM`), a longer one is skipped
    as it comes; a line which is not UTF-8, not JSON (or nested too deep
    for the parsers) or not a JSON-RPC message is answered with a JSON-RPC
    error, and blank lines are ignored. The server goes on with the next
    line. While serving, the descriptors of stdin and stdout point at the
    null device and at stderr, so that stray output of a tool misses the
    protocol (as the SDK 2.x does); the protocol keeps copies of them.
'''


import os as _os

from anyio import create_memory_object_stream as _create_memory_object_stream
from anyio import create_task_group as _create_task_group
from anyio.streams.memory import (
    MemoryObjectReceiveStream as _MemoryObjectReceiveStream,
    MemoryObjectSendStream as _MemoryObjectSendStream,
)
from anyio.to_thread import run_sync as _run_sync
from mcp.shared.message import SessionMessage as _SessionMessage

import invocables.serving.__ as __
from ..mcp._sdk import MAJOR as _MAJOR
from ..mcp._sdk import validate_message as _validate_message


Outgoing: __.typx.TypeAlias = _SessionMessage | bytes # bytes: a whole line
Streams: __.typx.TypeAlias = tuple[
    _MemoryObjectReceiveStream[ _SessionMessage ],
    _MemoryObjectSendStream[ Outgoing ],
]


LINE_SIZE_MAXIMUM = __.values.ARGUMENTS_SIZE_MAXIMUM
''' Bytes of a line at most (without its newline): 4 MiB, the bound of the
    SDK on the body of a request over HTTP. '''

_CHUNK_SIZE = 65_536
_DIVERTING = __.sys.platform != 'win32'
# The SDK 2.x leaves out unset fields of the messages it writes, 1.x None.
_CURRENT = _MAJOR >= 2 # noqa: PLR2004
_INTERNAL_ERROR = -32603
_INVALID_REQUEST = -32600
_PARSE_ERROR = -32700


@__.ctxl.asynccontextmanager
async def produce_streams(
    maximum: int = LINE_SIZE_MAXIMUM
) -> __.cabc.AsyncGenerator[ Streams, None ]:
    ''' Produces the stream of the client's messages (from stdin) and the
        stream of the server's (to stdout), for the server to run on.

        Each message goes out as one line of JSON, flushed. The streams
        end at the end of stdin; the descriptors are given back on exit.
    '''
    with _claim_descriptors( ) as ( source, target ):
        incoming, reading = (
            _create_memory_object_stream[ _SessionMessage ]( 0 ) )
        writing, outgoing = _create_memory_object_stream[ Outgoing ]( 0 )
        async with _create_task_group( ) as tasks:
            tasks.start_soon(
                _read_lines, source, maximum, incoming, writing.clone( ) )
            tasks.start_soon( _write_lines, target, outgoing )
            yield reading, writing


class _Lines:
    ''' Lines of a stream of bytes, at most so long; a longer one is
        dropped as it comes, never held whole.
    '''

    def __init__( self, maximum: int ):
        self.maximum = maximum
        self.line = bytearray( )
        self.skipping = False

    def feed( self, chunk: bytes ) -> list[ bytes | None ]:
        ''' Returns lines which chunk ends, and None for a line once it
            passes the maximum.
        '''
        lines: list[ bytes | None ] = [ ]
        view = memoryview( chunk )
        start = 0
        while True:
            end = chunk.find( b'\n', start )
            piece = view[ start : ] if end < 0 else view[ start : end ]
            if not self.skipping:
                if len( self.line ) + len( piece ) > self.maximum:
                    self.line.clear( )
                    self.skipping = True
                    lines.append( None )
                else: self.line += piece
            if end < 0: return lines
            if not self.skipping: lines.append( bytes( self.line ) )
            self.line.clear( )
            self.skipping = False
            start = end + 1

    def finish( self ) -> list[ bytes | None ]:
        ''' Returns the last line, if the stream ended without newline. '''
        if self.skipping or not self.line: return [ ]
        return [ bytes( self.line ) ]


@__.ctxl.contextmanager
def _claim_descriptors( ) -> __.cabc.Generator[
    tuple[ int, int ], None, None
]:
    ''' Lends copies of the descriptors of stdin and stdout; meanwhile,
        points stdin at the null device and stdout at stderr.
    '''
    _flush_stdout( )
    source, target = _os.dup( 0 ), _os.dup( 1 ) # not inherited
    # A copy onto a standard descriptor (one was closed) would be diverted.
    diverting = _DIVERTING and min( source, target ) > 2 # noqa: PLR2004
    try:
        if diverting:
            null = _os.open( _os.devnull, _os.O_RDONLY )
            try: _os.dup2( null, 0 )
            finally: _os.close( null )
            _os.dup2( 2, 1 )
        yield source, target
    finally:
        _flush_stdout( ) # stray output still buffered goes to stderr
        if diverting:
            _os.dup2( source, 0 )
            _os.dup2( target, 1 )
    # Closed after a normal end only: a reading left to its thread by a
    # cancellation would read whatever file reused the number.
    _os.close( source )
    _os.close( target )


def _classify( text: str ) -> bytes:
    ''' Returns the error line answering a line which is no message. '''
    try: value = __.json.loads( text )
    except RecursionError:
        return _produce_error(
            _PARSE_ERROR,
            "Parse error: the line's JSON is nested too deep (more than "
            "about 1000 levels)." )
    except ValueError as exception:
        return _produce_error(
            _PARSE_ERROR,
            f"Parse error: the line is not valid JSON ({exception})." )
    if isinstance( value, list ) and value:
        return _produce_error(
            _INVALID_REQUEST,
            "Invalid request: batches of JSON-RPC messages are not "
            "supported (MCP); send one message a line." )
    identifier: object = None
    if isinstance( value, dict ) and 'method' in value:
        identifier = __.typx.cast( dict[ str, object ], value ).get( 'id' )
        if isinstance( identifier, bool ) or not isinstance(
            identifier, ( int, str )
        ): identifier = None
    return _produce_error(
        _INVALID_REQUEST,
        "Invalid request: the line is JSON, but no JSON-RPC 2.0 message "
        "(request, notification or response) of MCP.", identifier )


def _encode( message: _SessionMessage ) -> bytes:
    ''' Returns line of message, as the SDK's transport writes it. '''
    try:
        text = message.message.model_dump_json(
            by_alias = True,
            exclude_unset = _CURRENT, exclude_none = not _CURRENT )
    except ValueError: # text which cannot be encoded (lone surrogates)
        return _produce_error(
            _INTERNAL_ERROR,
            "Internal error: a message of the server could not be written "
            "as JSON; it was discarded." )
    return text.encode( ) + b'\n'


def _flush_stdout( ) -> None:
    ''' Flushes what Python holds of stdout to its descriptor. '''
    stdout = __.sys.stdout
    if stdout is None: return
    try: stdout.flush( )
    except ( OSError, ValueError ): return # closed; nothing to keep


def _parse( line: bytes ) -> Outgoing | None:
    ''' Returns message of line, the error line answering it, or None for a
        blank line.
    '''
    try: text = line.decode( )
    except UnicodeDecodeError as exception:
        return _produce_error(
            _PARSE_ERROR,
            "Parse error: the line is not UTF-8 (invalid byte at offset "
            f"{exception.start})." )
    if not text.strip( ): return None
    try: message = _validate_message( text, parse = False )
    except ( RecursionError, ValueError ): return _classify( text )
    return _SessionMessage( message )


def _produce_error(
    code: int, message: str, identifier: int | str | None = None
) -> bytes:
    ''' Returns line of JSON-RPC error (ASCII: escapes any text). '''
    error = {
        'jsonrpc': '2.0', 'id': identifier,
        'error': { 'code': code, 'message': message } }
    return __.json.dumps( error, separators = ( ',', ':' ) ).encode( ) + (
        b'\n' )


async def _read_lines(
    source: int,
    maximum: int,
    incoming: _MemoryObjectSendStream[ _SessionMessage ],
    answers: _MemoryObjectSendStream[ Outgoing ],
) -> None:
    ''' Reads source to its end: sends messages on, answers the rest. '''
    lines = _Lines( maximum )
    async with incoming, answers:
        while True:
            chunk = await _run_sync(
                _os.read, source, _CHUNK_SIZE, abandon_on_cancel = True )
            for line in ( lines.feed( chunk ) if chunk else lines.finish( ) ):
                if line is None:
                    await answers.send( _produce_error(
                        _INVALID_REQUEST,
                        f"Invalid request: the line is longer than {maximum} "
                        "bytes, the limit of the server; it was discarded." ) )
                    continue
                item = _parse( line )
                if isinstance( item, bytes ): await answers.send( item )
                elif item is not None: await incoming.send( item )
            if not chunk: return


async def _write_lines(
    target: int, outgoing: _MemoryObjectReceiveStream[ Outgoing ]
) -> None:
    ''' Writes each message as a line to target, whole, until the stream
        ends.
    '''
    async with outgoing:
        async for item in outgoing:
            line = item if isinstance( item, bytes ) else _encode( item )
            await _run_sync( _write_all, target, line )


def _write_all( target: int, data: bytes ) -> None:
    ''' Writes all of data to descriptor, however many writes it takes. '''
    view = memoryview( data )
    while view: view = view[ _os.write( target, view ) : ]
