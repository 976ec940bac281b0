# SPDX-License-Identifier: Apache-2.0

''' MCP servers which misbehave, and ensembles which are misused.

    The hostile server (``servers/hostile_server.py``) speaks JSON-RPC by
    hand: it writes bytes which are not UTF-8, lines which are not JSON,
    answers of any size and tool lists which the SDK refuses. The fuzz
    tests at the end run a few hundred examples; set
    ``INVOCABLES_FUZZ_EXAMPLES=10000`` to run them at depth.
'''


import asyncio
import json
import os
import sys
import time

import pytest

from hypothesis import given, settings, strategies
from mcp.shared.message import SessionMessage

import invocables
import invocables.mcp

from invocables import descriptors, exceptions
from invocables.mcp import configuration, _processes as processes
from invocables.processors import produce_processor

from . import mcp_support


_MEBIBYTE = 1 << 20


def _produce_hostile( name = 'hostile', *flags, **options ):
    return invocables.mcp.produce_ensemble(
        name, command = mcp_support.produce_server_command(
            'hostile_server.py', *flags ), **options )


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


async def _call( ensemble, name, arguments = None ):
    invoker = ensemble.access_invoker( name )
    return await invoker( _context( ), arguments or { } )


def _invocation( name, arguments, identifier = 'c1' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


@pytest.mark.asyncio
async def test_100_non_utf8_line_skipped( ):
    ''' A line of bytes which are not UTF-8 is skipped like other noise.

        Before, one such byte on stdout ended the session ("Connection
        closed").
    '''
    ensemble = _produce_hostile( )
    async with ensemble:
        content = await _call( ensemble, 'noisy', { 'message': 'still here' } )
        assert content == ( invocables.TextContent( text = 'still here' ), )
        content = await _call( ensemble, 'echo', { 'message': 'alive' } )
        assert content[ 0 ].text == 'alive'


@pytest.mark.asyncio
async def test_110_non_utf8_byte_in_answer_replaced( ):
    ''' An answer holding a byte which is not UTF-8 arrives, replaced. '''
    ensemble = _produce_hostile( )
    async with ensemble:
        content = await _call( ensemble, 'mangled' )
        assert content[ 0 ].text == 'caf\ufffd au lait'


@pytest.mark.slow
@pytest.mark.asyncio
async def test_200_large_result_read_in_linear_time( ):
    ''' A result of 100 MB is read in linear time (seconds, not minutes).

        Before, reading joined the whole buffer at each chunk: 100 MB took
        about a minute. The bound only proves that it does not crawl.
    '''
    size = 100 * 1000 * 1000
    ensemble = _produce_hostile( result_limit = 2 * size )
    async with ensemble:
        began = time.monotonic( )
        content = await asyncio.wait_for(
            _call( ensemble, 'big', { 'size': size } ), 40 )
        elapsed = time.monotonic( ) - began
        assert len( content[ 0 ].text ) == size
        assert elapsed < 40


@pytest.mark.parametrize( 'flags', [ ( ), ( '--id-last', ) ] )
@pytest.mark.asyncio
async def test_210_result_over_limit_is_error_result( flags ):
    ''' A result over the limit becomes an error result naming the limit.

        Whether the server writes the id first (Python SDK) or last
        (TypeScript SDK), the call is answered at once; the session lives.
    '''
    ensemble = _produce_hostile( 'capped', *flags, result_limit = _MEBIBYTE )
    async with ensemble:
        results = await asyncio.wait_for( invocables.execute_invocations(
            [ _invocation( 'big', { 'size': 4 * _MEBIBYTE } ) ],
            [ ensemble ] ), 20 )
        error = results[ 0 ].error
        assert error.genus is invocables.FaultGenera.Refusal
        assert f"larger than {_MEBIBYTE} bytes" in error.message
        assert 'smaller result' in error.message
        content = await _call( ensemble, 'big', { 'size': 1000 } )
        assert len( content[ 0 ].text ) == 1000


@pytest.mark.slow
@pytest.mark.asyncio
async def test_220_huge_result_refused_with_default_limit( ):
    ''' A result of 256 MiB is refused under the documented default limit.
    '''
    assert invocables.mcp.RESULT_LIMIT_DEFAULT == 32 * _MEBIBYTE
    ensemble = _produce_hostile( 'default' )
    async with ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as caught:
            await asyncio.wait_for(
                _call( ensemble, 'big', { 'size': 256 * _MEBIBYTE } ), 60 )
        assert str( 32 * _MEBIBYTE ) in str( caught.value )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_230_http_result_over_sse_event_limit( ):
    ''' Over streamable HTTP, a result over 1 MiB works; the limit applies.

        Before, the SDK's own limit of one event (1 MiB) failed the call
        as a lost connection, and the session with it.
    '''
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ) )
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url, result_limit = 8 * _MEBIBYTE )
        async with ensemble:
            content = await _call( ensemble, 'big', { 'size': 2 * _MEBIBYTE } )
            assert len( content[ 0 ].text ) == 2 * _MEBIBYTE
            with pytest.raises( exceptions.InvocationRefusal ) as caught:
                await _call( ensemble, 'big', { 'size': 9 * _MEBIBYTE } )
            assert 'larger than' in str( caught.value )
            content = await _call( ensemble, 'echo', { 'message': 'alive' } )
            assert content[ 0 ].text == 'alive'


@pytest.mark.asyncio
@pytest.mark.parametrize(
    'coding', [ None, 'gzip', 'deflate', 'raw-deflate' ] )
async def test_240_http_plain_json_result_held_to_limit( coding ):
    ''' Over streamable HTTP, a plain JSON answer is held to the limit too,
        compressed or not (against the client's wishes), by its decoded
        size.

        Before, the SDK read such an answer whole, whatever its size; and
        then, a 16 MiB answer compressed to some 16 KiB passed a 1 MiB limit
        and was decoded whole. Now the call is refused naming the limit,
        the rest of the answer is not read, and the session lives.
    '''
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ), '--json',
        *( ( ) if coding is None else ( '--compress', coding ) ) )
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'plain', url = url, result_limit = _MEBIBYTE )
        async with ensemble:
            content = await _call( ensemble, 'big', { 'size': 900_000 } )
            assert content[ 0 ].text == 'x' * 900_000
            with pytest.raises( exceptions.InvocationRefusal ) as caught:
                await _call( ensemble, 'big', { 'size': 16 * _MEBIBYTE } )
            assert f"larger than {_MEBIBYTE} bytes" in str( caught.value )
            content = await _call( ensemble, 'echo', { 'message': 'alive' } )
            assert content[ 0 ].text == 'alive'


@pytest.mark.asyncio
async def test_246_http_unknown_coding_refused( ):
    ''' An answer in a coding which the client neither asked for nor
        decodes fails its call, naming the coding; the session lives for
        the calls after it, whose answers are coded the same way.
    '''
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ), '--json', '--compress', 'br' )
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'brotli', url = url, connect_timeout = 5 )
        with pytest.raises( exceptions.Omnierror ) as caught:
            await ensemble.connect( )
        assert "'br'" in str( caught.value )
        assert not ensemble.is_connected( )


@pytest.mark.asyncio
async def test_247_http_through_proxy_of_environment( monkeypatch, tmp_path ):
    ''' An HTTP proxy named in the environment carries the session, as
        with the SDK's own client, and answers through it are held to the
        limit too.

        Before, the client which holds answers to the limit left the
        environment's proxies out, and went to the server directly.
    '''
    port = mcp_support.select_port( )
    proxy_port = mcp_support.select_port( )
    log = tmp_path / 'proxy.log'
    proxy = [
        mcp_support.locate_proxy( ), '--hostname', '127.0.0.1',
        '--port', str( proxy_port ), '--num-acceptors', '1',
        '--num-workers', '1', '--log-file', str( log ) ]
    for name in (
        'ALL_PROXY', 'HTTPS_PROXY', 'NO_PROXY',
        'all_proxy', 'http_proxy', 'https_proxy', 'no_proxy',
    ): monkeypatch.delenv( name, raising = False )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ), '--json' )
    with (
        mcp_support.serve_http( command, port ) as url,
        mcp_support.serve_http( proxy, proxy_port ),
    ):
        monkeypatch.setenv( 'HTTP_PROXY', f"http://127.0.0.1:{proxy_port}" )
        ensemble = invocables.mcp.produce_ensemble(
            'proxied', url = url, result_limit = _MEBIBYTE )
        async with ensemble:
            content = await _call( ensemble, 'echo', { 'message': 'hop' } )
            assert content[ 0 ].text == 'hop'
            with pytest.raises( exceptions.InvocationRefusal ) as caught:
                await _call( ensemble, 'big', { 'size': 4 * _MEBIBYTE } )
            assert f"larger than {_MEBIBYTE} bytes" in str( caught.value )
    assert f"POST 127.0.0.1:{port}/mcp" in log.read_text( encoding = 'utf-8' )


@pytest.mark.asyncio
async def test_300_refused_tools_left_out( caplog ):
    ''' Tools which the SDK's models refuse are left out, one by one.

        Each is named in a warning and in the omissions; the other tools
        work. Before, the whole server failed to connect.
    '''
    caplog.set_level( 'WARNING', logger = 'invocables' )
    ensemble = _produce_hostile( 'picky', '--bad-tools' )
    async with ensemble:
        names = [ invoker.name for invoker in ensemble.survey_invokers( ) ]
        assert 'echo' in names
        assert 'schemaless' not in names
        omissions = {
            omission.name: omission.reason
            for omission in ensemble.survey_omissions( ) }
        assert 'inputSchema.type' in omissions[ 'schemaless' ]
        assert 'nameless-schema' in omissions
        assert any( name.endswith( '(no name)' ) for name in omissions )
        assert "'schemaless' left out" in caplog.text
        content = await _call( ensemble, 'echo', { 'message': 'fine' } )
        assert content[ 0 ].text == 'fine'


@pytest.mark.asyncio
async def test_400_noise_before_handshake_quoted( ):
    ''' A server writing other output before the handshake is told so. '''
    ensemble = _produce_hostile(
        'chatty', '--banner', 'Starting hostile server v1 ...',
        connect_timeout = 1, grace = 0.2 )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    message = str( caught.value )
    assert 'within 1 seconds' in message
    assert 'non-protocol output' in message
    assert 'Starting hostile server v1' in message


@pytest.mark.asyncio
async def test_410_noise_then_exit_quoted( ):
    ''' A program which prints and exits is told to be no MCP server. '''
    ensemble = invocables.mcp.produce_ensemble(
        'program', command = [
            sys.executable, '-c', "print( 'usage: tool [options]' )" ] )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    message = str( caught.value )
    assert 'exited with status 0' in message
    assert "non-protocol output to stdout: 'usage: tool [options]'" in message


@pytest.mark.asyncio
async def test_500_unconnected_ensemble_refused( ):
    ''' An ensemble never connected (or disconnected) offers no tools
        silently: preparing tools and executing raise a clear error.

        Before, it offered zero tools and answered "Unknown tool".
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'clock', command = [ mcp_support.locate_time_server( ) ] )
    processor = produce_processor( 'openai' )
    with pytest.raises( exceptions.ConnectionAbsence ) as caught:
        processor.prepare_tools( [ ensemble ] )
    assert "'clock' is not connected" in str( caught.value )
    assert 'async with' in str( caught.value )
    call = _invocation( 'get_current_time', { 'timezone': 'UTC' } )
    with pytest.raises( exceptions.ConnectionFailure ):
        await invocables.execute_invocations( [ call ], [ ensemble ] )
    async with ensemble:
        assert processor.prepare_tools( [ ensemble ] )
    with pytest.raises( exceptions.ConnectionAbsence ):
        processor.prepare_tools( [ ensemble ] )


@pytest.mark.asyncio
async def test_250_large_requests_through_full_pipe( ):
    ''' Concurrent requests larger than the pipe each get their own answer.

        Each request is written by the task which sends it; while the pipe
        is full, the senders wait for it to drain one at a time.
    '''
    size = 300_000 # over the 64 KiB of a pipe
    ensemble = _produce_hostile( 'wide' )
    async with ensemble:
        messages = [ str( index ) * size for index in range( 8 ) ]
        contents = await asyncio.wait_for( asyncio.gather( *(
            _call( ensemble, 'echo', { 'message': message } )
            for message in messages ) ), 30 )
        assert [ content[ 0 ].text for content in contents ] == messages


@pytest.mark.asyncio
async def test_260_request_to_deaf_server_fails_at_once( ):
    ''' A server which closed its stdin fails the next call at once.

        The request cannot be written: the call fails with the library's
        connection failure, not after a timeout; the server, still alive,
        is ended with the connection, and the next call reconnects.
    '''
    ensemble = _produce_hostile( 'deaf', timeout = 3600 )
    async with ensemble:
        pid = int( ( await _call( ensemble, 'deaf' ) )[ 0 ].text )
        with pytest.raises( exceptions.ConnectionFailure ) as caught:
            await asyncio.wait_for(
                _call( ensemble, 'echo', { 'message': 'x' } ), 20 )
        assert 'The next call reconnects.' in str( caught.value )
        # With either SDK, the failed write ended the session: the next
        # call reconnects, to a new process.
        content = await asyncio.wait_for(
            _call( ensemble, 'echo', { 'message': 'again' } ), 20 )
        assert content[ 0 ].text == 'again'
    assert not await asyncio.to_thread(
        mcp_support.wait_until_dead, { pid } )


@pytest.mark.asyncio
async def test_270_notifications_among_concurrent_calls( ):
    ''' Progress notifications of many concurrent calls, interleaved with
        their answers and with other calls, are each delivered once.

        The session's receive loop reads and parses stdout itself: several
        messages in one chunk are handed out in order, none lost.
    '''
    reports = mcp_support.Reports( )
    ensemble = invocables.mcp.produce_ensemble(
        'chatty', command = mcp_support.produce_server_command(
            'echo_server.py' ), reporter = reports.append )
    calls, steps = 20, 25
    async with ensemble:
        invocations = [
            _invocation( 'progress', { 'steps': steps }, f"p{index}" )
            for index in range( calls ) ] + [
            _invocation( 'echo', { 'message': str( index ) }, f"e{index}" )
            for index in range( calls ) ]
        results = await asyncio.wait_for( invocables.execute_invocations(
            invocations, [ ensemble ] ), 30 )
        await reports.wait_count( calls * steps )
    assert [ result.as_text( ) for result in results ] == (
        [ 'done' ] * calls + [ str( index ) for index in range( calls ) ] )
    assert len( reports ) == calls * steps
    for index in range( calls ):
        mine = [
            report.progress for report in reports
            if report.invocation_id == f"p{index}" ]
        assert mine == list( range( 1, steps + 1 ) )


@pytest.mark.asyncio
async def test_600_caller_timeout_bounds_mcp_tools( ):
    ''' The caller's timeout applies to MCP tools with none of their own.

        Before, every MCP ensemble claimed a timeout of 60 seconds, so
        ``execute_invocations( ..., timeout = 1 )`` did not bound them.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'slow', command = mcp_support.produce_server_command(
            'echo_server.py' ) )
    async with ensemble:
        call = _invocation( 'sleep', { 'seconds': 3600 } )
        results = await asyncio.wait_for( invocables.execute_invocations(
            [ call ], [ ensemble ], timeout = 1 ), 10 )
        assert results[ 0 ].error.genus is invocables.FaultGenera.Timeout
        assert 'within 1 seconds' in results[ 0 ].error.message


@pytest.mark.asyncio
async def test_610_ensemble_timeout_wins_over_caller( ):
    ''' A timeout given to the ensemble wins over the caller's. '''
    ensemble = invocables.mcp.produce_ensemble(
        'slow', command = mcp_support.produce_server_command(
            'echo_server.py' ), timeout = 0.5 )
    async with ensemble:
        call = _invocation( 'sleep', { 'seconds': 3600 } )
        results = await asyncio.wait_for( invocables.execute_invocations(
            [ call ], [ ensemble ], timeout = 3600 ), 10 )
        assert 'within 0.5 seconds' in results[ 0 ].error.message


@pytest.mark.asyncio
async def test_620_caller_timeout_bounds_pinned_tools( tmp_path ):
    ''' Pinned tools of a server descriptor obey the caller's timeout too.

        Before, they had no timeout at all under the engine.
    '''
    command = json.dumps(
        mcp_support.produce_server_command( 'echo_server.py' ) )
    ( tmp_path / 'echo' ).mkdir( )
    ( tmp_path / 'echo' / 'sleep.toml' ).write_text(
        "[invoker]\nname = 'sleep'\ndescription = 'Sleeps.'\n\n"
        "[arguments]\ntype = 'object'\n"
        "properties = { seconds = { type = 'number' } }\n" )
    ( tmp_path / 'echo.toml' ).write_text(
        "[ensemble]\nname = 'echo'\n\n[mcp]\n"
        f"command = {command}\n\n"
        "[[invokers]]\nsource = 'echo/sleep.toml'\n" )
    ensembles = await descriptors.prepare_ensembles(
        { 'ensembles': [ { 'source': str( tmp_path / 'echo.toml' ) } ] } )
    async with ensembles[ 0 ]:
        call = _invocation( 'sleep', { 'seconds': 3600 } )
        results = await asyncio.wait_for( invocables.execute_invocations(
            [ call ], ensembles, timeout = 1 ), 10 )
        assert results[ 0 ].error.genus is invocables.FaultGenera.Timeout


# Fuzzing of the stdio reader's splitting and parsing, on arbitrary bytes.
# INVOCABLES_FUZZ_EXAMPLES=10000 runs it at depth; the suite runs a few
# hundred examples.
_EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '300' ) )
_line = strategies.binary( max_size = 300 ).map(
    lambda data: data.replace( b'\n', b'' ) )


@settings( max_examples = _EXAMPLES, deadline = None )
@given(
    strategies.lists( _line, max_size = 12 ),
    strategies.lists( strategies.integers( 0, 4000 ), max_size = 12 ),
    strategies.sampled_from( [ None, 1, 64, 200 ] ),
)
def test_900_lines_split_at_any_chunking( lines, cuts, limit ):
    ''' Lines come out whole, however the bytes are chunked; lines over
        the limit come out as their size, first and last bytes.
    '''
    data = b''.join( line + b'\n' for line in lines )
    bounds = sorted( { 0, len( data ), *(
        cut for cut in cuts if cut < len( data ) ) } )
    splitter = processes.Lines( limit )
    found = [
        line for start, end in zip( bounds, bounds[ 1 : ] )
        for line in splitter.feed( data[ start : end ] ) ]
    assert len( found ) == len( lines )
    for line, item in zip( lines, found ):
        if limit is not None and len( line ) > limit:
            assert isinstance( item, processes.Oversize )
            assert item.size == len( line )
            assert item.head == line[ : 4096 ]
            assert item.tail == line[ -4096 : ]
        else: assert bytes( item ) == line


@settings( max_examples = _EXAMPLES, deadline = None )
@given( strategies.one_of(
    strategies.binary( max_size = 400 ),
    strategies.builds(
        lambda prefix, identifier, text: (
            prefix + json.dumps( {
                'jsonrpc': '2.0', 'id': identifier,
                'result': { 'content': [
                    { 'type': 'text', 'text': text } ] } } ).encode( ) ),
        strategies.sampled_from( [ b'', b'\xff', b'noise ' ] ),
        strategies.one_of( strategies.integers( ), strategies.text( ) ),
        strategies.text( ) ),
) )
def test_910_any_line_parses_or_is_skipped( line ):
    ''' No line from a server makes the reader raise. '''
    watch = processes.ProcessWatch( 'fuzz', configuration.Redactor( ) )
    streams = processes.Streams( None, watch, 1 << 20 )
    for item in processes.Lines( 1 << 20 ).feed( line + b'\n' ):
        outcome = streams.parse( item )
        assert outcome is None or isinstance(
            outcome, ( SessionMessage, Exception ) )
