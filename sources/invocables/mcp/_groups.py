# SPDX-License-Identifier: Apache-2.0

''' Processes of stdio servers and their groups: watched, signalled, reaped.

    A server is started in a session of its own; on every way out, its
    whole group (the server and whatever it spawned) is terminated: stdin
    closed, a grace period, ``SIGTERM``, a grace period, then ``SIGKILL``.
    POSIX only.
'''


import os as _os
import signal as _signal

import anyio as _anyio

import invocables.mcp.__ as __
import invocables.mcp.configuration as _configuration


EXIT_NOTICE_TIMEOUT = 0.25
POLL_INTERVAL = 0.02
REAP_TIMEOUT = 2.0

_SIGNALED = 128
_STDERR_LINES_MAXIMUM = 20
_scribe = __.produce_scribe( __name__ )


class ProcessWatch(
    __.immut.Object,
    instances_mutables = (
        'noise', 'pid', 'returncode', 'sandboxed', 'stopping',
        'unexpected' ),
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
        self.sandboxed = False
        self.returncode: int | None = None
        self.stopping = False
        self.unexpected = False
        self.noise: str | None = None
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
        # No pid: the same failure reads the same on every run.
        text = f"the server process {status}"
        if self.stderr:
            tail = self.redactor.redact( ' | '.join( self.stderr ) )
            text = f"{text}; its last stderr lines: {tail}"
        return text

    def describe_noise( self ) -> str:
        ''' Returns description of non-protocol output, if any, redacted.
        '''
        if self.noise is None: return ''
        return (
            "; it wrote non-protocol output to stdout: {noise!r} (an MCP "
            "server over stdio must write only JSON-RPC messages to "
            "stdout, and its logs to stderr)".format(
                noise = self.redactor.redact( self.noise ) ) )


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


def translate_status( code: int, sandboxed: bool ) -> int: # noqa: FBT001
    ''' Returns status of server: a sandbox exits with 128 + the number of
        the signal which killed the server; as a negative number, that
        signal, as for a server run unconfined.
    '''
    if not sandboxed or code <= _SIGNALED: return code
    try: _signal.Signals( code - _SIGNALED )
    except ValueError: return code
    return _SIGNALED - code


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


async def wait_exit( pid: int ) -> bool:
    ''' Waits for exit of process via its descriptor, if system has one.

        Returns whether it waited (``False``: no process descriptors here,
        or the process is gone already; the caller polls).
    '''
    opener = getattr( _os, 'pidfd_open', None )
    waiter = getattr( _anyio, 'wait_readable', None )
    if opener is None or waiter is None: return False # pragma: no cover
    try: descriptor = opener( pid )
    except OSError: return False
    try: await waiter( descriptor )
    finally: _os.close( descriptor )
    return True


async def _wait_until(
    predicate: __.cabc.Callable[ [ ], bool ], timeout: float
) -> bool:
    deadline = _anyio.current_time( ) + timeout
    while not predicate( ):
        if _anyio.current_time( ) >= deadline: return False
        await _anyio.sleep( POLL_INTERVAL )
    return True


async def terminate_group( process: __.typx.Any, grace: float ) -> None:
    ''' Closes stdin, waits, then terminates and kills the process group.

        The group (the server and whatever it spawned, unless that left the
        session) is signalled even when the server exited by itself, since
        its helpers may still run.
    '''
    pgid = process.pid
    if process.returncode is None:
        # Closing flushes what was written already, then ends the pipe.
        with __.ctxl.suppress( OSError ): process.stdin.close( )
        await _wait_until( lambda: process.returncode is not None, grace )
    if not survey_group( pgid ):
        await reap( process )
        return
    if _signal_group( pgid, _signal.SIGTERM ):
        await _wait_until( lambda: not survey_group( pgid ), grace )
    if survey_group( pgid ):
        _signal_group( pgid, _signal.SIGKILL )
        _scribe.debug( "Killed process group %d.", pgid )
    await reap( process )


def is_exited( process: __.typx.Any ) -> bool:
    ''' Returns whether process has exited, reaped or not (not reaping). '''
    if process.returncode is not None: return True
    waitid = getattr( _os, 'waitid', None )
    if waitid is None: return False # pragma: no cover
    try:
        state = waitid(
            _os.P_PID, process.pid,
            _os.WEXITED | _os.WNOHANG | _os.WNOWAIT )
    except ChildProcessError: return True # reaped meanwhile
    return state is not None


async def reap( process: __.typx.Any ) -> None:
    await _wait_until(
        lambda: process.returncode is not None, REAP_TIMEOUT )
    # Take how stdin ended (a broken pipe, say), which asyncio would log as
    # never retrieved (Python 3.10) once the process is collected.
    stdin = process.stdin
    with __.ctxl.suppress( OSError ): stdin.close( )
    with (
        _anyio.move_on_after( EXIT_NOTICE_TIMEOUT ),
        __.ctxl.suppress( OSError ),
    ): await stdin.wait_closed( )
