# SPDX-License-Identifier: Apache-2.0

''' Stdio transport which owns its child process and process group.

    The SDK's ``stdio_client`` hides the process id and kills the process
    group only when the server fails to exit on its own, so helpers which a
    server spawned (grandchildren) outlive it. This transport starts the
    server directly (never through a shell) in a new session, watches it,
    and on every way out (disconnect, cancellation, the server dying)
    terminates the whole process group: stdin closed, a grace period,
    ``SIGTERM``, a grace period, then ``SIGKILL``. POSIX only.

    Stdout is read as bytes and split into lines in linear time. A line
    which is not UTF-8 or not JSON-RPC is skipped (and logged at debug
    level, redacted); the first such line is kept, so that a failed
    handshake can quote it. A line longer than the result limit is not
    kept: the request it answers fails with an error naming the limit, and
    memory stays bounded by the limit. A line nested too deep to read fails
    the request it answers, else it is skipped.
'''


import subprocess as _subprocess

import anyio as _anyio

from mcp.client.stdio import (
    get_default_environment as _get_default_environment,
)
from mcp.shared.message import SessionMessage as _SessionMessage

import invocables.mcp.__ as __
import invocables.mcp.configuration as _configuration
import invocables.mcp._groups as _groups
import invocables.mcp.sandbox as _sandbox
import invocables.mcp._sdk as _sdk
from ._groups import ProcessWatch as ProcessWatch


GRACE_DEFAULT = 1.0
RESULT_LIMIT_DEFAULT = 32 * 1024 * 1024

_CHUNK_SIZE = 1 << 20
_EXIT_NOTICE_TIMEOUT = _groups.EXIT_NOTICE_TIMEOUT
_NOISE_LENGTH_MAXIMUM = 200
_OVERSIZE_EDGE = 4096
_PARSE_ERROR = -32700 # JSON-RPC: the text cannot be read
_PARSE_STANDARD_MINIMUM = 1 << 16
_REASON_DEEP = "The answer nests arrays or objects too deep to be read."
_POLL_INTERVAL = _groups.POLL_INTERVAL
_POLL_INTERVAL_EXITING = 0.002
_STDERR_LINE_MAXIMUM = 2000
_identifier = r'(-?\d+|"(?:[^"\\]|\\.)*")'
_identifier_head = __.re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*'
    + _identifier.encode( ) )
_identifier_tail = __.re.compile(
    rb'"id"\s*:\s*' + _identifier.encode( )
    + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$' )
# A JSON escape of a UTF-16 half (a surrogate), lone or paired.
_escape_half = __.re.compile( rb'\\u[dD][89a-fA-F]' )
_request_head = __.re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?'
    rb'(?:"id"\s*:\s*[^,]+,\s*)?"method"\s*:' )
_scribe = __.produce_scribe( __name__ )


class Oversize:
    ''' Line over the limit: its size, its first and last bytes. '''

    __slots__ = ( 'head', 'size', 'tail' )

    def __init__( self, head: bytes, tail: bytes, size: int ):
        self.head = head
        self.tail = tail
        self.size = size


class Lines:
    ''' Splits chunks of bytes into lines, in linear time.

        A line within one chunk is a slice of it; a longer one grows in a
        buffer, in amortized linear time, and is handed over without a
        copy. A line over the limit is not kept: only its first and last
        bytes and its size, for an error.
    '''

    def __init__( self, limit: int | None ):
        self.limit = limit
        self.first: bytes | None = None
        self.buffer = bytearray( )
        self.size = 0
        self.head = b''
        self.tail = b''
        self.oversize = False

    def feed(
        self, chunk: bytes
    ) -> __.cabc.Iterator[ 'bytes | bytearray | Oversize' ]:
        ''' Yields lines completed by chunk. '''
        start = 0
        while True:
            end = chunk.find( b'\n', start )
            if end < 0:
                if start < len( chunk ): self._keep( chunk[ start : ] )
                return
            self._keep( chunk[ start : end ] )
            yield self._take( )
            start = end + 1

    def hold( self, piece: bytes ) -> None:
        ''' Keeps piece, with no end of line, as the start of a line. '''
        self._keep( piece )

    def is_idle( self ) -> bool:
        ''' Returns whether no part of a line is held. '''
        return self.size == 0 and self.first is None and not self.oversize

    def _keep( self, piece: bytes ) -> None:
        self.size += len( piece )
        if self.oversize:
            if len( self.head ) < _OVERSIZE_EDGE:
                self.head += piece[ : _OVERSIZE_EDGE - len( self.head ) ]
            self.tail = (
                piece if len( piece ) >= _OVERSIZE_EDGE
                else self.tail + piece )[ - _OVERSIZE_EDGE : ]
            return
        if self.first is None and not self.buffer: self.first = piece
        else:
            if self.first is not None:
                self.buffer += self.first
                self.first = None
            self.buffer += piece
        if self.limit is not None and self.size > self.limit:
            kept = self.buffer if self.first is None else self.first
            self.head = bytes( kept[ : _OVERSIZE_EDGE ] )
            self.tail = bytes( kept[ - _OVERSIZE_EDGE : ] )
            self.oversize = True
            self.first = None
            self.buffer = bytearray( )

    def _take( self ) -> 'bytes | bytearray | Oversize':
        line: bytes | bytearray | Oversize
        if self.oversize:
            line = Oversize( self.head, self.tail, self.size )
            self.oversize = False
            self.head = self.tail = b''
        elif self.first is not None: line = self.first
        else: line = self.buffer
        self.first = None
        self.buffer = bytearray( )
        self.size = 0
        return line


class Screen( __.typx.Protocol ):
    ''' Sees each request sent and may amend each message received. '''

    def note_request( self, message: __.typx.Any ) -> None:
        ''' Notes request before it is written. '''
        raise NotImplementedError # pragma: no cover

    def amend( self, message: __.typx.Any ) -> None:
        ''' Amends message, in place, before the session receives it. '''
        raise NotImplementedError # pragma: no cover


class Streams:
    ''' Carries messages between the session and the process pipes.

        No task relays messages: the session's receive loop reads stdout
        through :py:class:`MessageReceiver`, and the task which sends a
        request writes it through :py:class:`MessageSender`. The SDK's
        ``stdio_client`` relays each message through a task and a memory
        stream each way, two more task switches per call.
    '''

    def __init__(
        self,
        process: __.typx.Any,
        watch: ProcessWatch,
        limit: int | None,
        screen: Screen | None = None,
    ):
        self.process = process
        self.watch = watch
        self.limit = limit
        self.screen = screen
        self.receiver = MessageReceiver( self )
        self.sender = MessageSender( self )
        self.stderr_done = _anyio.Event( )
        self.stdout_done = _anyio.Event( )

    async def read_stderr( self ) -> None:
        ''' Keeps the last stderr lines and logs them at debug level. '''
        lines = Lines( _STDERR_LINE_MAXIMUM )
        try:
            async for chunk in _receive_chunks( self.process.stderr ):
                for line in lines.feed( chunk ):
                    text = _decode_leniently(
                        line.head + b'...' if isinstance( line, Oversize )
                        else line ).strip( )
                    if not text: continue
                    self.watch.stderr.append( text )
                    _scribe.debug(
                        "MCP server %r: %s", self.watch.name,
                        self.watch.redactor.redact( text ) )
        except ( _Closure, OSError ): return
        finally: self.stderr_done.set( )

    def parse(
        self, line: 'bytes | bytearray | Oversize'
    ) -> _SessionMessage | Exception | None:
        ''' Returns message from line; None for a line to skip.

            A line which is not UTF-8 is read again with replacement
            characters, so that one bad byte in a result loses no answer.
        '''
        if isinstance( line, Oversize ):
            return self._refuse( line.head, line.tail, line.size )
        if not line or line.isspace( ): return None
        message = _read_message( line )
        if not isinstance( message, Exception ):
            if self.screen is not None: self.screen.amend( message )
            return _SessionMessage( message )
        if isinstance( message, RecursionError ):
            answer = self._refuse( # a deep line is noise unless an answer
                bytes( line[ : _OVERSIZE_EDGE ] ),
                bytes( line[ - _OVERSIZE_EDGE : ] ) )
            if answer is not None: return answer
        text = _decode_leniently( line )[ : _NOISE_LENGTH_MAXIMUM ]
        if self.watch.noise is None: self.watch.noise = text
        _scribe.debug(
            "MCP server %r wrote a line which is not JSON-RPC: %s",
            self.watch.name, self.watch.redactor.redact( text ) )
        return message

    def _refuse(
        self, head: bytes, tail: bytes, size: int | None = None
    ) -> _SessionMessage | None:
        ''' Fails request of a line over the limit (of size), or else too
            deep to read; None if the line answers no request. '''
        identifier = _access_identifier( head, tail )
        name, limit = self.watch.name, self.limit
        if __.is_absent( identifier ):
            if size is None: return None # a deep line: noise
            _scribe.warning(
                "MCP server %r wrote a message of %d bytes, over the limit "
                "of %d bytes, which answers no request; it was skipped.",
                name, size, limit )
            return None
        if size is None:
            _scribe.warning(
                "MCP server %r answered with JSON nested deeper than can be "
                "read; the answer was discarded.", name )
            answer = _sdk.types.JSONRPCError(
                jsonrpc = '2.0', id = identifier, error = _sdk.types.ErrorData(
                    code = _PARSE_ERROR, message = _REASON_DEEP ) )
        else:
            _scribe.warning(
                "MCP server %r answered with %d bytes, over the limit of %d "
                "bytes; the answer was discarded.", name, size, limit )
            answer = _sdk.produce_oversize_error( identifier, limit, size )
        return _SessionMessage( _sdk.produce_message( answer ) )

    async def watch_exit( self ) -> None:
        ''' Notices exit of server, even when a grandchild holds stdout.

            Then ends the session's read stream, so that pending requests
            fail at once instead of waiting for an answer that cannot come.
        '''
        # Sleep on the process's descriptor (Linux) until it exits: an idle
        # connection then costs no CPU. Elsewhere, poll.
        exited = await _groups.wait_exit( self.process.pid )
        while self.process.returncode is None:
            # The end of stdout usually means that the server died: then
            # look often, else now and then. Once the process descriptor
            # says it exited, only the event loop's reaping is awaited.
            if exited or self.stdout_done.is_set( ):
                await _anyio.sleep( _POLL_INTERVAL_EXITING )
                continue
            with _anyio.move_on_after( _POLL_INTERVAL ):
                await self.stdout_done.wait( )
        self.watch.returncode = _groups.translate_status(
            self.process.returncode, self.watch.sandboxed )
        # Let the readers deliver what the server wrote before it died.
        with _anyio.move_on_after( _EXIT_NOTICE_TIMEOUT ):
            await self.stderr_done.wait( )
            await self.stdout_done.wait( )
        self.watch.exited.set( )
        if not self.watch.stopping:
            self.watch.unexpected = True
            # The callback warns if it matters: an exit before the session
            # is ready is the connection's failure, reported once.
            _scribe.debug(
                "MCP server %r: %s.",
                self.watch.name, self.watch.describe_exit( ) )
            self.watch.callback( )
        self.receiver.close( )

    async def shut_down( self, grace: float ) -> None:
        ''' Stops traffic, then the process group.

            Requests written already reach the server: closing its stdin
            flushes them first.
        '''
        self.receiver.close( )
        self.sender.close( )
        await _groups.terminate_group( self.process, grace )


class MessageReceiver( _sdk.MessageStream ):
    ''' Messages of the server's stdout, read when the session asks.

        Each chunk read is split into lines and parsed at once; its
        messages are handed out in order. Closing ends the stream after
        the messages parsed already, and wakes a pending read.
    '''

    def __init__( self, streams: Streams ):
        self.streams = streams
        self.lines = Lines( streams.limit )
        self.messages: __.collections.deque[
            _SessionMessage | Exception ] = __.collections.deque( )
        self.closed = False
        # Small chunks (the usual answers, one or several at once) are
        # split with one call and each line parsed with one call.
        self.small = _PARSE_STANDARD_MINIMUM if streams.limit is None else (
            min( streams.limit, _PARSE_STANDARD_MINIMUM ) )

    def close( self ) -> None:
        ''' Ends stream once messages parsed already are received. '''
        if self.closed: return
        self.closed = True
        process = self.streams.process
        if process is not None: process.stdout.set_exception( _Closure( ) )

    async def receive( self ) -> _SessionMessage | Exception:
        ''' Returns next message; raises ``EndOfStream`` at the end. '''
        messages = self.messages
        while not messages:
            if self.closed: raise _anyio.EndOfStream
            await self._read( )
        return messages.popleft( )

    async def aclose( self ) -> None:
        ''' Closes stream. '''
        self.close( )

    def __aiter__( self ) -> __.typx.Self:
        return self

    async def __anext__( self ) -> _SessionMessage | Exception:
        try: return await self.receive( )
        except _anyio.EndOfStream: raise StopAsyncIteration from None

    async def _read( self ) -> None:
        streams = self.streams
        try: chunk = await streams.process.stdout.read( _CHUNK_SIZE )
        except ( _Closure, OSError ): chunk = b''
        if not chunk:
            self.closed = True
            streams.stdout_done.set( )
            # End of output: let the watcher learn how the server ended
            # before the session sees the connection close.
            with _anyio.move_on_after( _EXIT_NOTICE_TIMEOUT ):
                await streams.watch.exited.wait( )
            return
        self._take( chunk )

    def _take( self, chunk: bytes ) -> None:
        streams = self.streams
        messages = self.messages
        lines = self.lines
        if len( chunk ) <= self.small and lines.is_idle( ):
            screen = streams.screen
            *whole, rest = chunk.split( b'\n' )
            for line in whole:
                try: answer = _parse_message( line )
                except ValueError: message = streams.parse( line )
                else:
                    if screen is not None: screen.amend( answer )
                    message = _SessionMessage( answer )
                if message is not None: messages.append( message )
            if rest: lines.hold( rest ) # a line yet to end
            return
        for line in lines.feed( chunk ):
            message = streams.parse( line )
            del line # a large one need not outlive its parse
            if message is not None: messages.append( message )


class MessageSender( _sdk.MessageStream ):
    ''' Writes each message onto the server's stdin, in the sending task.

        A write completes at once unless the pipe is full; then senders
        wait for it to drain, one at a time. A failed write ends the
        session: its read stream closes, as the server cannot be reached.
    '''

    def __init__( self, streams: Streams ):
        self.streams = streams
        # Closed: refuses messages; broken: the server's input failed.
        self.broken = False
        self.closed = False
        self.draining = __.asyncio.Lock( )

    def close( self ) -> None:
        ''' Refuses further messages. '''
        self.closed = True

    async def send( self, item: _SessionMessage, / ) -> None:
        ''' Writes message; raises ``ClosedResourceError`` once closed. '''
        if self.closed: raise _anyio.ClosedResourceError
        streams = self.streams
        screen = streams.screen
        if screen is not None: screen.note_request( item.message )
        data = item.message.model_dump_json(
            by_alias = True, exclude_unset = True )
        stdin = streams.process.stdin
        stdin.write( ( data + '\n' ).encode( ) )
        transport = stdin.transport
        if not (
            transport.is_closing( ) or transport.get_write_buffer_size( )
        ): return
        try:
            async with self.draining: await stdin.drain( )
        except OSError as exception:
            self.broken = self.closed = True
            streams.receiver.close( )
            raise _anyio.BrokenResourceError from exception

    async def aclose( self ) -> None:
        ''' Closes stream. '''
        self.close( )


class _Closure( Exception ):
    ''' Ends a pending read of a pipe which its stream no longer reads. '''


@__.ctxl.asynccontextmanager
async def open_stdio(
    parameters: _configuration.ServerParameters,
    environment: __.cabc.Mapping[ str, str ],
    watch: ProcessWatch,
    grace: float = GRACE_DEFAULT,
    limit: int | None = RESULT_LIMIT_DEFAULT,
    screen: Screen | None = None,
    sandbox: __.Absential[ _sandbox.Sandbox ] = __.absent,
) -> __.cabc.AsyncGenerator[ tuple[ __.typx.Any, __.typx.Any ], None ]:
    ''' Starts server process; yields read and write streams of messages.

        A message longer than ``limit`` bytes (``None``: no limit) is not
        read whole. A screen sees each request before it is written and
        each answer before it is yielded (without a stream wrapped around
        these, which every message would pass through). With a sandbox,
        the server runs confined (see :py:mod:`invocables.mcp.sandbox`),
        with only the environment the sandbox passes. On exit, whatever
        the cause, the process group is terminated.
    '''
    program = __.typx.cast( str, parameters.command )
    cwd = parameters.cwd
    if __.is_absent( sandbox ):
        command = ( program, *parameters.arguments )
        variables = _get_default_environment( ) | dict( environment )
        confinement = None
    else:
        confinement = await _sandbox.prepare_confinement(
            watch.name, sandbox, program, parameters.arguments,
            environment, cwd )
        command, cwd = confinement.command, confinement.cwd
        variables = dict( confinement.environment )
        watch.sandboxed = True
    try:
        process = await __.asyncio.create_subprocess_exec(
            *command,
            env = variables,
            cwd = None if __.is_absent( cwd ) else cwd,
            stdin = _subprocess.PIPE,
            stdout = _subprocess.PIPE,
            stderr = _subprocess.PIPE,
            start_new_session = True )
    except BaseException:
        if confinement is not None: await confinement.release( )
        raise
    try:
        async with _converse( process, watch, grace, limit, screen ) as (
            streams
        ): yield streams
    finally:
        if confinement is not None: await confinement.release( )


@__.ctxl.asynccontextmanager
async def _converse(
    process: __.typx.Any,
    watch: ProcessWatch,
    grace: float,
    limit: int | None,
    screen: Screen | None,
) -> __.cabc.AsyncGenerator[ tuple[ __.typx.Any, __.typx.Any ], None ]:
    watch.pid = process.pid
    _scribe.debug(
        "Started MCP server %r (pid %d).", watch.name, process.pid )
    streams = Streams( process, watch, limit, screen )
    try:
        async with _anyio.create_task_group( ) as group:
            group.start_soon( streams.read_stderr )
            group.start_soon( streams.watch_exit )
            try: yield streams.receiver, streams.sender
            finally:
                with _anyio.CancelScope( shield = True ):
                    await _await_notice( streams )
                watch.stopping = True
                with _anyio.CancelScope( shield = True ):
                    await streams.shut_down( grace )
                group.cancel_scope.cancel( )
    finally:
        # Also reached when the task group never started (cancellation).
        with _anyio.CancelScope( shield = True ):
            await _groups.terminate_group( process, grace )


def _access_identifier( head: bytes, tail: bytes ) -> __.typx.Any:
    ''' Returns id of the answer whose first and last bytes are given;
        absent if they are not an answer's (a request, a notification).
    '''
    if _request_head.match( head ) is not None: return __.absent
    match = _identifier_head.match( head ) or _identifier_tail.search( tail )
    if match is None: return __.absent
    try: return __.json.loads( match[ 1 ] )
    except ValueError: return __.absent # an invalid escape in a text id


def _decode_leniently( data: bytes | bytearray ) -> str:
    return data.decode( 'utf-8', errors = 'replace' )


_parse_message = _sdk.produce_message_parser( )


def _read_message( line: bytes | bytearray ) -> __.typx.Any:
    ''' Returns JSON-RPC message of line; or, if none, why (a ValueError,
        or a RecursionError for JSON nested deeper than can be read).

        The SDK's parser refuses escapes of lone UTF-16 halves, which are
        valid JSON: the standard parser reads such a line (what goes out is
        made sendable where it leaves: results, listings). A line which is
        not UTF-8 is read again with replacement characters, so that one
        bad byte in a result loses no answer.
    '''
    try: return _validate( line )
    except ( ValueError, RecursionError ) as exception: failure = exception
    if isinstance( failure, RecursionError ): return failure
    if _escape_half.search( line ):
        try: return _sdk.validate_message( line, parse = True )
        except ( ValueError, RecursionError ): pass
    text = _decode_leniently( line )
    if '\ufffd' in text:
        try: return _validate( text )
        except ( ValueError, RecursionError ) as exception:
            failure = exception
    return failure


def _validate( data: bytes | bytearray | str ) -> __.typx.Any:
    # For a large message, the standard parser takes a quarter of the
    # memory which pydantic's takes (one copy of its text, not four), and
    # less time.
    return _sdk.validate_message(
        data, parse = len( data ) >= _PARSE_STANDARD_MINIMUM )


async def _await_notice( streams: Streams ) -> None:
    ''' Waits until the watcher has noticed exit of a dying server.

        When the server ended its output or its input, or has exited, the
        session may end before the exit is noticed: waiting for it
        reports how the server ended (status, stderr tail) every time,
        never a mere closed connection, whatever the load of the machine.
    '''
    watch = streams.watch
    if watch.exited.is_set( ): return
    if not (
        streams.stdout_done.is_set( ) or streams.sender.broken
        or _groups.is_exited( streams.process )
    ): return
    with _anyio.move_on_after( _groups.REAP_TIMEOUT ):
        await watch.exited.wait( )


async def _receive_chunks(
    stream: __.asyncio.StreamReader
) -> __.cabc.AsyncIterator[ bytes ]:
    ''' Yields chunks of bytes of stream until its end. '''
    while chunk := await stream.read( _CHUNK_SIZE ): yield chunk
