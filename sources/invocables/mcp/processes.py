# SPDX-License-Identifier: Apache-2.0

''' Stdio transport which owns its child process and process group.

    The SDK's ``stdio_client`` hides the process id and kills the process
    group only when the server fails to exit on its own, so helpers which a
    server spawned (grandchildren) outlive it. This transport starts the
    server directly (never through a shell) in a new session, watches it,
    and on every way out (disconnect, cancellation, the server dying)
    terminates the whole process group: stdin closed, a grace period,
    ``SIGTERM``, a grace period, then ``SIGKILL``. POSIX only.
'''


import os as _os
import signal as _signal
import subprocess as _subprocess

import anyio as _anyio
import mcp_types as _mcp_types

from anyio.streams.text import TextReceiveStream as _TextReceiveStream
from mcp.client.stdio import (
    get_default_environment as _get_default_environment,
)
from mcp.shared.message import SessionMessage as _SessionMessage

from . import __
from . import configuration as _configuration


GRACE_DEFAULT = 1.0

_EXIT_NOTICE_TIMEOUT = 0.25
_POLL_INTERVAL = 0.02
_STDERR_LINES_MAXIMUM = 20
_WRITER_FLUSH_TIMEOUT = 0.5
_scribe = __.produce_scribe( __name__ )


class ProcessWatch(
    __.immut.Object,
    instances_mutables = ( 'pid', 'returncode', 'stopping', 'unexpected' ),
):
    ''' What is known of a server process: pid, exit status, stderr tail. '''

    def __init__(
        self,
        name: str,
        redactor: _configuration.Redactor,
        callback: __.cabc.Callable[ [ ], None ] = lambda: None,
    ):
        self.name = name
        self.redactor = redactor
        self.callback = callback
        self.pid: int | None = None
        self.returncode: int | None = None
        self.stopping = False
        self.unexpected = False
        self.stderr: __.collections.deque[ str ] = __.collections.deque(
            maxlen = _STDERR_LINES_MAXIMUM )
        self.exited = __.asyncio.Event( )

    def describe_exit( self ) -> str:
        ''' Returns description of how process ended, with stderr tail. '''
        if self.returncode is None: return 'the connection closed'
        if self.returncode < 0:
            try: how = _signal.Signals( -self.returncode ).name
            except ValueError: how = f"signal {-self.returncode}"
            status = f"was killed by {how}"
        else: status = f"exited with status {self.returncode}"
        text = f"the server process (pid {self.pid}) {status}"
        if self.stderr:
            tail = self.redactor.redact( ' | '.join( self.stderr ) )
            text = f"{text}; its last stderr lines: {tail}"
        return text


@__.ctxl.asynccontextmanager
async def open_stdio(
    parameters: _configuration.ServerParameters,
    environment: __.cabc.Mapping[ str, str ],
    watch: ProcessWatch,
    grace: float = GRACE_DEFAULT,
) -> __.cabc.AsyncGenerator[ tuple[ __.typx.Any, __.typx.Any ], None ]:
    ''' Starts server process; yields read and write streams of messages.

        On exit, whatever the cause, the process group is terminated.
    '''
    command = [
        __.typx.cast( str, parameters.command ), *parameters.arguments ]
    process = await _anyio.open_process(
        command,
        env = _get_default_environment( ) | dict( environment ),
        cwd = None if __.is_absent( parameters.cwd ) else parameters.cwd,
        stderr = _subprocess.PIPE,
        start_new_session = True )
    watch.pid = process.pid
    _scribe.debug(
        "Started MCP server %r (pid %d).", watch.name, process.pid )
    streams = _Streams( process, watch )
    try:
        async with _anyio.create_task_group( ) as group:
            group.start_soon( streams.read_stdout )
            group.start_soon( streams.read_stderr )
            group.start_soon( streams.write_stdin )
            group.start_soon( streams.watch_exit )
            try: yield streams.read_receiver, streams.write_sender
            finally:
                watch.stopping = True
                with _anyio.CancelScope( shield = True ):
                    await streams.shut_down( grace )
                group.cancel_scope.cancel( )
    finally:
        # Also reached when the task group never started (cancellation).
        with _anyio.CancelScope( shield = True ):
            await _terminate_group( process, grace )


def survey_group( pgid: int ) -> tuple[ int, ... ]:
    ''' Returns living members of process group, via procfs if present. '''
    root = __.Path( '/proc' )
    if not root.is_dir( ): # pragma: no cover
        return ( pgid, ) if _probe_group( pgid ) else ( )
    members: list[ int ] = [ ]
    for entry in root.iterdir( ):
        if not entry.name.isdigit( ): continue
        try: stat = ( entry / 'stat' ).read_text( encoding = 'utf-8' )
        except OSError: continue
        fields = stat.rsplit( ')', maxsplit = 1 )[ -1 ].split( )
        if fields[ 0 ] != 'Z' and int( fields[ 3 ] ) == pgid:
            members.append( int( entry.name ) )
    return tuple( members )


class _Streams:
    ''' Pumps between the process pipes and the session's streams. '''

    def __init__( self, process: __.typx.Any, watch: ProcessWatch ):
        self.process = process
        self.watch = watch
        self.read_sender, self.read_receiver = (
            _anyio.create_memory_object_stream[
                _SessionMessage | Exception ]( 0 ) )
        self.write_sender, self.write_receiver = (
            _anyio.create_memory_object_stream[ _SessionMessage ]( 0 ) )
        self.writer_done = _anyio.Event( )
        self.stderr_done = _anyio.Event( )

    async def read_stdout( self ) -> None:
        ''' Parses stdout into messages, one per line. '''
        stream = _TextReceiveStream( self.process.stdout )
        buffer = ''
        try:
            async with self.read_sender:
                async for chunk in stream:
                    lines = ( buffer + chunk ).split( '\n' )
                    buffer = lines.pop( )
                    for line in lines:
                        if not line.strip( ): continue
                        await self.read_sender.send( _parse_line( line ) )
                # End of output: let the watcher learn how the server ended
                # before the session sees the connection close.
                with _anyio.move_on_after( _EXIT_NOTICE_TIMEOUT ):
                    await self.watch.exited.wait( )
        except (
            _anyio.ClosedResourceError, _anyio.BrokenResourceError,
            _anyio.EndOfStream, OSError,
        ): return

    async def read_stderr( self ) -> None:
        ''' Keeps the last stderr lines and logs them at debug level. '''
        stream = _TextReceiveStream(
            self.process.stderr, errors = 'replace' )
        buffer = ''
        try:
            async for chunk in stream:
                lines = ( buffer + chunk ).split( '\n' )
                buffer = lines.pop( )
                for line in lines:
                    if not line.strip( ): continue
                    self.watch.stderr.append( line.strip( ) )
                    _scribe.debug(
                        "MCP server %r: %s", self.watch.name,
                        self.watch.redactor.redact( line ) )
        except (
            _anyio.ClosedResourceError, _anyio.BrokenResourceError,
            _anyio.EndOfStream, OSError,
        ): return
        finally: self.stderr_done.set( )

    async def write_stdin( self ) -> None:
        ''' Serializes messages onto stdin, one per line. '''
        try:
            async with self.write_receiver:
                async for message in self.write_receiver:
                    data = message.message.model_dump_json(
                        by_alias = True, exclude_unset = True )
                    await self.process.stdin.send(
                        ( data + '\n' ).encode( ) )
        except (
            _anyio.ClosedResourceError, _anyio.BrokenResourceError, OSError,
        ): await self.read_sender.aclose( )
        finally: self.writer_done.set( )

    async def watch_exit( self ) -> None:
        ''' Notices exit of server, even when a grandchild holds stdout.

            Then ends the session's read stream, so that pending requests
            fail at once instead of waiting for an answer that cannot come.
        '''
        while self.process.returncode is None:
            await _anyio.sleep( _POLL_INTERVAL )
        self.watch.returncode = self.process.returncode
        with _anyio.move_on_after( _EXIT_NOTICE_TIMEOUT ):
            await self.stderr_done.wait( )
        self.watch.exited.set( )
        if not self.watch.stopping:
            self.watch.unexpected = True
            _scribe.warning(
                "MCP server %r: %s.",
                self.watch.name, self.watch.describe_exit( ) )
            self.watch.callback( )
        # Let the reader deliver what the server wrote before it died.
        await _anyio.sleep( _POLL_INTERVAL )
        await self.read_sender.aclose( )

    async def shut_down( self, grace: float ) -> None:
        ''' Stops traffic, then the process group. '''
        self.read_receiver.close( )
        self.write_sender.close( )
        with _anyio.move_on_after( _WRITER_FLUSH_TIMEOUT ):
            await self.writer_done.wait( )
        await _terminate_group( self.process, grace )
        for stream in (
            self.read_sender, self.write_receiver,
            self.process.stdout, self.process.stderr,
        ):
            with __.ctxl.suppress(
                OSError, _anyio.BrokenResourceError,
                _anyio.ClosedResourceError,
            ): await stream.aclose( )


def _parse_line( line: str ) -> _SessionMessage | Exception:
    try:
        message = _mcp_types.jsonrpc_message_adapter.validate_json(
            line, by_name = False )
    except ValueError as exception:
        _scribe.debug( "Line from MCP server is not JSON-RPC: %.200s", line )
        return exception
    return _SessionMessage( message )


def _probe_group( pgid: int ) -> bool: # pragma: no cover
    try: _os.killpg( pgid, 0 )
    except ProcessLookupError: return False
    except PermissionError: return True
    return True


def _signal_group( pgid: int, signal: int ) -> bool:
    ''' Signals process group; returns whether any member received it. '''
    try: _os.killpg( pgid, signal )
    except ProcessLookupError: return False
    except PermissionError: # pragma: no cover
        _scribe.warning( "Not permitted to signal process group %d.", pgid )
        return False
    return True


async def _wait_until(
    predicate: __.cabc.Callable[ [ ], bool ], timeout: float
) -> bool:
    deadline = _anyio.current_time( ) + timeout
    while not predicate( ):
        if _anyio.current_time( ) >= deadline: return False
        await _anyio.sleep( _POLL_INTERVAL )
    return True


async def _terminate_group( process: __.typx.Any, grace: float ) -> None:
    ''' Closes stdin, waits, then terminates and kills the process group.

        The group (the server and whatever it spawned, unless that left the
        session) is signalled even when the server exited by itself, since
        its helpers may still run.
    '''
    pgid = process.pid
    if process.returncode is None:
        with __.ctxl.suppress(
            OSError, _anyio.BrokenResourceError, _anyio.ClosedResourceError,
        ): await process.stdin.aclose( )
        await _wait_until( lambda: process.returncode is not None, grace )
    if not survey_group( pgid ):
        await _reap( process )
        return
    if _signal_group( pgid, _signal.SIGTERM ):
        await _wait_until( lambda: not survey_group( pgid ), grace )
    if survey_group( pgid ):
        _signal_group( pgid, _signal.SIGKILL )
        _scribe.debug( "Killed process group %d.", pgid )
    await _reap( process )


async def _reap( process: __.typx.Any ) -> None:
    await _wait_until(
        lambda: process.returncode is not None, _WRITER_FLUSH_TIMEOUT * 4 )
