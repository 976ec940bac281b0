# SPDX-License-Identifier: Apache-2.0

''' serve over stdio against a hostile client, which writes raw bytes: an
    endless line, JSON nested too deep, bytes which are not UTF-8, blank
    lines, JSON which is no JSON-RPC message, batches. Each gets a
    JSON-RPC error (or is ignored, a blank line), the server holds no line
    whole, and it goes on serving the next lines; closing stdin ends it.
'''


import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading

from pathlib import Path
from typing import Any

import pytest

from invocables.serving import _stdio

from . import serving_support


_DATA = Path( __file__ ).parent.parent / 'data' / 'serving'
_CONFIGURATION = _DATA / 'local.toml'
_WAIT = 60 # seconds: bounds which prove "does not hang"
_LIMIT = 4 * 1024 * 1024 # the bound of a line, as of an HTTP body
_MEBIBYTE = 1024 * 1024
_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_INTERNAL_ERROR = -32603


class _Served:
    ''' serve as a child process, spoken to in raw lines. '''

    def __init__( self, process: subprocess.Popen[ bytes ] ):
        self.process = process
        self.lines: queue.Queue[ bytes ] = queue.Queue( )
        self.errors: list[ bytes ] = [ ]
        self.readers = (
            threading.Thread( target = self._read, daemon = True ),
            threading.Thread( target = self._read_errors, daemon = True ) )
        for reader in self.readers: reader.start( )

    def _read( self ) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout: self.lines.put( line )
        self.lines.put( b'' )

    def _read_errors( self ) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr: self.errors.append( line )

    def send( self, data: bytes ) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write( data )
        self.process.stdin.flush( )

    def send_message( self, message: dict[ str, Any ] ) -> None:
        self.send( json.dumps( message ).encode( ) + b'\n' )

    def receive( self ) -> dict[ str, Any ]:
        ''' Returns next message of the server: one line of JSON. '''
        line = self.lines.get( timeout = _WAIT )
        assert line.endswith( b'\n' ), line[ : 200 ]
        return json.loads( line )

    def ping( self, identifier: int ) -> None:
        ''' Asserts that the server answers a ping (after all before). '''
        self.send_message(
            { 'jsonrpc': '2.0', 'id': identifier, 'method': 'ping' } )
        assert self.receive( ) == {
            'jsonrpc': '2.0', 'id': identifier, 'result': { } }

    def measure_peak( self ) -> int:
        ''' Returns peak resident memory of the server (kB). '''
        status = Path( f"/proc/{self.process.pid}/status" ).read_text( )
        for line in status.splitlines( ):
            if line.startswith( 'VmHWM:' ): return int( line.split( )[ 1 ] )
        raise AssertionError( status )

    def close( self ) -> tuple[ int, str ]:
        ''' Closes stdin; returns status and stderr once the server ended.
        '''
        assert self.process.stdin is not None
        self.process.stdin.close( )
        status = self.process.wait( timeout = _WAIT )
        for reader in self.readers: reader.join( timeout = _WAIT )
        return status, b''.join( self.errors ).decode( )


def _produce_error(
    code: int, identifier: int | str | None = None
) -> dict[ str, Any ]:
    return { 'jsonrpc': '2.0', 'id': identifier, 'error': { 'code': code } }


def _produce_ping( identifier: Any, parameters: str = '' ) -> bytes:
    tail = f",\"params\":{parameters}" if parameters else ''
    return (
        f"{{\"jsonrpc\":\"2.0\",\"id\":{identifier},"
        f"\"method\":\"ping\"{tail}}}" ).encode( )


def _strip_message( answer: dict[ str, Any ] ) -> dict[ str, Any ]:
    ''' Returns answer without the message of its error, if any. '''
    if 'error' not in answer: return answer
    error = { 'code': answer[ 'error' ][ 'code' ] }
    return { **answer, 'error': error }


@contextlib.contextmanager
def _serve( ):
    ''' Starts serve over stdio, initialized; yields it. '''
    process = subprocess.Popen(
        [ sys.executable, '-m', 'invocables', 'serve',
          '--configuration', str( _CONFIGURATION ) ],
        env = serving_support.produce_environment( ), stdin = subprocess.PIPE,
        stdout = subprocess.PIPE, stderr = subprocess.PIPE,
        start_new_session = True )
    served = _Served( process )
    try:
        served.send_message( {
            'jsonrpc': '2.0', 'id': 0, 'method': 'initialize',
            'params': {
                'protocolVersion': '2025-06-18', 'capabilities': { },
                'clientInfo': { 'name': 'hostile', 'version': '1' } } } )
        assert 'result' in served.receive( )
        served.send_message(
            { 'jsonrpc': '2.0', 'method': 'notifications/initialized' } )
        yield served
    finally:
        with contextlib.suppress( ProcessLookupError ):
            os.killpg( process.pid, signal.SIGKILL )
        process.wait( timeout = _WAIT )
        for stream in ( process.stdin, process.stdout, process.stderr ):
            with contextlib.suppress( OSError ):
                if stream is not None: stream.close( )


@pytest.mark.slow
def test_100_endless_line_skipped( ):
    ''' A line far over the limit (64 MiB) is refused as soon as it
        passes the limit, before its end, with an error which says the
        limit; it is never held whole (the server's peak memory grows by
        far less than the line), and the next line is served.
    '''
    assert _stdio.LINE_SIZE_MAXIMUM == _LIMIT
    with _serve( ) as served:
        before = served.measure_peak( )
        served.send( b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"' )
        served.send( b'x' * ( _LIMIT + _MEBIBYTE ) )
        answer = served.receive( ) # before the line ends
        assert _strip_message( answer ) == _produce_error( _INVALID_REQUEST )
        assert str( _LIMIT ) in answer[ 'error' ][ 'message' ]
        for _ in range( 63 ): served.send( b'x' * _MEBIBYTE )
        served.send( b'"}\n' )
        served.ping( 2 )
        growth = served.measure_peak( ) - before
        assert growth < 32 * 1024, growth # kB: half the line
        status, stderr = served.close( )
    assert status == 0, stderr
    assert 'Traceback' not in stderr


@pytest.mark.slow
def test_110_limit_exact( ):
    ''' A line of just the limit is served; a byte more is refused. '''
    ping = _produce_ping( 1 )
    with _serve( ) as served:
        served.send( ping + b' ' * ( _LIMIT - len( ping ) ) + b'\n' )
        assert served.receive( ) == {
            'jsonrpc': '2.0', 'id': 1, 'result': { } }
        served.send( ping + b' ' * ( _LIMIT + 1 - len( ping ) ) + b'\n' )
        assert _strip_message( served.receive( ) ) == _produce_error(
            _INVALID_REQUEST )
        served.ping( 2 )


@pytest.mark.slow
def test_200_deep_json( ):
    ''' JSON nested deeper than the parsers go (100,000 levels) gets a
        parse error; JSON which the standard parser reads (500 levels, over
        the 200 of pydantic's) reaches the server, as the client side reads
        it, and is answered.
    '''
    depth = 100_000
    with _serve( ) as served:
        served.send( b'[' * depth + b']' * depth + b'\n' )
        answer = served.receive( )
        assert _strip_message( answer ) == _produce_error( _PARSE_ERROR )
        assert 'deep' in answer[ 'error' ][ 'message' ]
        deep = '{"a":' + '[' * 500 + ']' * 500 + '}'
        served.send( _produce_ping( 1, deep ) + b'\n' )
        answer = served.receive( ) # the SDK 1.x refuses such parameters
        assert answer[ 'id' ] == 1
        assert 'result' in answer or answer[ 'error' ][ 'code' ] not in (
            _PARSE_ERROR, _INVALID_REQUEST )
        served.ping( 2 )


@pytest.mark.slow
def test_210_unwritable_answer( ):
    ''' A request whose answer cannot be written as JSON (its identifier
        a lone surrogate, which the standard parser lets through, read
        after JSON too deep for pydantic's) gets an internal error, and
        the server goes on.
    '''
    # Deep before the surrogate: pydantic's parser stops at the depth.
    line = (
        b'{"jsonrpc":"2.0","method":"ping","params":{"a":'
        + b'[' * 300 + b']' * 300 + b'},"id":"\\ud800"}\n' )
    with _serve( ) as served:
        served.send( line )
        answer = served.receive( )
        assert _strip_message( answer ) == _produce_error( _INTERNAL_ERROR )
        assert 'JSON' in answer[ 'error' ][ 'message' ]
        served.ping( 2 )


@pytest.mark.slow
def test_300_lines_of_no_message( ):
    ''' Each line which is no JSON-RPC message gets its error, in order:
        not UTF-8 and not JSON are parse errors, JSON of another shape
        (a number, an array, a batch, an object of no message) invalid
        requests, echoing the identifier of what looks like a request;
        blank lines are ignored, and a line ending in CRLF is served.
    '''
    lines = (
        ( b'\xff\xfe{}', _produce_error( _PARSE_ERROR ) ),
        ( b'{"jsonrpc":"2.0","id":"caf\xe9","method":"ping"}',
          _produce_error( _PARSE_ERROR ) ),
        ( b'', None ),
        ( b' \t \r', None ),
        ( b'{"jsonrpc":"2.0","id":3,', _produce_error( _PARSE_ERROR ) ),
        ( b'42', _produce_error( _INVALID_REQUEST ) ),
        ( b'[]', _produce_error( _INVALID_REQUEST ) ),
        ( b'{}', _produce_error( _INVALID_REQUEST ) ),
        ( b'[' + _produce_ping( 4 ) + b',' + _produce_ping( 5 ) + b']',
          _produce_error( _INVALID_REQUEST ) ),
        ( b'{"jsonrpc":"2.0","id":6,"method":7}',
          _produce_error( _INVALID_REQUEST, 6 ) ),
        ( _produce_ping( 7 ) + b'\r',
          { 'jsonrpc': '2.0', 'id': 7, 'result': { } } ),
    )
    with _serve( ) as served:
        for line, _ in lines: served.send( line + b'\n' )
        for line, expected in lines:
            if expected is None: continue
            answer = served.receive( )
            assert _strip_message( answer ) == expected, line
            if 'error' in answer: assert answer[ 'error' ][ 'message' ]
        served.ping( 8 )


@pytest.mark.slow
def test_400_session_then_end( ):
    ''' A whole session goes as one line of JSON a message (tools listed
        and called); a line cut by the end of stdin is refused if over
        the limit, and the end ends the server well.
    '''
    with _serve( ) as served:
        served.send_message(
            { 'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list' } )
        tools = served.receive( )[ 'result' ][ 'tools' ]
        assert 'greet' in { tool[ 'name' ] for tool in tools }
        served.send_message( {
            'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call',
            'params': { 'name': 'greet', 'arguments': { 'name': 'Ada' } } } )
        result = served.receive( )[ 'result' ]
        assert result[ 'content' ][ 0 ][ 'text' ] == 'Hello, Ada!'
        served.send( b'{' + b' ' * ( _LIMIT + 1 ) )
        assert _strip_message( served.receive( ) ) == _produce_error(
            _INVALID_REQUEST )
        status, stderr = served.close( )
        assert served.lines.get( timeout = _WAIT ) == b''
    assert status == 0, stderr
    assert stderr.splitlines( )[ -1 ] == 'invocables: stopped.'
    assert 'Traceback' not in stderr
