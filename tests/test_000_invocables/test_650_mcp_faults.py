# SPDX-License-Identifier: Apache-2.0

''' MCP faults: deadlines, dead servers, reconnection, no process left. '''


import asyncio
import os
import signal
import time

import pytest

import invocables
import invocables.mcp

from invocables import exceptions

from . import mcp_support


def _produce_echo( name = 'echo', *arguments, **options ):
    return invocables.mcp.produce_ensemble(
        name, command = mcp_support.produce_server_command(
            'echo_server.py', *arguments ), **options )


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


async def _call( ensemble, name, arguments = None ):
    invoker = ensemble.access_invoker( name )
    return await invoker( _context( ), arguments or { } )


async def _access_pid( ensemble ) -> int:
    content = await _call( ensemble, 'pid' )
    return int( content[ 0 ].text )


async def _wait_disconnected( ensemble ) -> None:
    ''' Waits until the ensemble noticed that its server died; bounded. '''
    for _ in range( 1000 ):
        if not ensemble.is_connected( ): return
        await asyncio.sleep( 0.01 )
    pytest.fail( "The death of the server went unnoticed." )


@pytest.mark.asyncio
async def test_100_call_timeout_cancels_on_server( ):
    ''' A call which outlives its timeout fails as refusal, session lives.

        The per-tool timeout overrides the ensemble's; the server cancels the
        handler; the next call on the same session succeeds.
    '''
    ensemble = _produce_echo( timeouts = { 'sleep': 0.5 } )
    async with ensemble:
        began = time.monotonic( )
        with pytest.raises( exceptions.InvocationRefusal ) as caught:
            await _call( ensemble, 'sleep', { 'seconds': 3600 } )
        elapsed = time.monotonic( ) - began
        assert 'did not answer within 0.5 seconds' in str( caught.value )
        assert elapsed < 30 # does not hang
        content = await _call( ensemble, 'echo', { 'message': 'alive' } )
        assert content[ 0 ].text == 'alive'


@pytest.mark.asyncio
async def test_110_execution_timeout_gives_timeout_result( ):
    ''' Through the engine, a timeout becomes a timeout result. '''
    ensemble = _produce_echo( timeout = 0.5 )
    async with ensemble:
        call = invocables.InvocationCanister(
            identifier = 'c1', name = 'sleep',
            arguments = { 'seconds': 3600 } )
        began = time.monotonic( )
        results = await invocables.execute_invocations( [ call ], [ ensemble ] )
        assert time.monotonic( ) - began < 30 # does not hang
        assert results[ 0 ].error.genus is invocables.FaultGenera.Timeout
        content = await _call( ensemble, 'echo', { 'message': 'alive' } )
        assert content[ 0 ].text == 'alive'


@pytest.mark.asyncio
async def test_200_server_exits_at_once( ):
    ''' A server which exits at start fails connect, with its stderr. '''
    ensemble = invocables.mcp.produce_ensemble(
        'broken', command = mcp_support.produce_server_command(
            'exit_server.py' ) )
    began = time.monotonic( )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    assert time.monotonic( ) - began < 5
    message = str( caught.value )
    assert "'broken'" in message
    assert 'exited with status 3' in message
    assert 'cannot start, no configuration' in message
    assert not ensemble.is_connected( )


@pytest.mark.asyncio
async def test_210_missing_command( ):
    ''' A command which does not exist fails connect, naming it. '''
    ensemble = invocables.mcp.produce_ensemble(
        'absent', command = '/nonexistent/mcp-server-nothing' )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    assert 'mcp-server-nothing' in str( caught.value )
    assert 'not found' in str( caught.value )


@pytest.mark.asyncio
async def test_220_connect_timeout( ):
    ''' A server which never answers the handshake fails within deadline.

        ``sleep`` is no MCP server: it reads nothing and writes nothing.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'mute', command = [ 'sleep', '3600' ], connect_timeout = 0.5,
        grace = 0.2 )
    began = time.monotonic( )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    assert time.monotonic( ) - began < 5
    assert 'within 0.5 seconds' in str( caught.value )
    assert not ensemble.is_connected( )


@pytest.mark.asyncio
async def test_230_secrets_redacted_from_errors( monkeypatch, caplog ):
    ''' Secrets which a failing server prints are hidden in errors and logs.
    '''
    secret = 'sk-supersecret-4242'
    monkeypatch.setenv( 'INVOCABLES_TEST_TOKEN', secret )
    ensemble = _produce_echo(
        'leaky', environment = {
            'ECHO_SERVER_FAIL': '1',
            'SECRET_TOKEN': 'env:INVOCABLES_TEST_TOKEN' } )
    caplog.set_level( 'DEBUG', logger = 'invocables' )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    message = str( caught.value )
    assert 'told to fail (token ***)' in message
    assert secret not in message
    assert secret not in repr( ensemble )
    assert secret not in caplog.text
    assert 'told to fail' in caplog.text


@pytest.mark.asyncio
async def test_300_killed_mid_call( ):
    ''' SIGKILL mid-call fails that call fast; the next call reconnects.

        The failure is the library's connection failure, naming the server
        and the signal; the grandchild of the dead server is killed too.
    '''
    reports = mcp_support.Reports( )
    ensemble = _produce_echo( 'victim', reporter = reports.append )
    async with ensemble:
        pid = await _access_pid( ensemble )
        grandchild = int( ( await _call( ensemble, 'spawn_child' ) )[ 0 ].text )
        call = asyncio.create_task(
            _call( ensemble, 'sleep', { 'seconds': 3600 } ) )
        await reports.wait_count( 1 ) # the server runs the call
        began = time.monotonic( )
        os.kill( pid, signal.SIGKILL )
        with pytest.raises( exceptions.ConnectionFailure ) as caught:
            await call
        elapsed = time.monotonic( ) - began
        assert elapsed < 30 # does not hang
        message = str( caught.value )
        assert "'victim'" in message
        assert 'SIGKILL' in message
        # In a thread: the event loop must run for the runner to end the
        # process group of the dead server.
        assert not await asyncio.to_thread(
            mcp_support.wait_until_dead, { pid, grandchild } )
        content = await _call( ensemble, 'echo', { 'message': 'again' } )
        assert content[ 0 ].text == 'again'
        assert await _access_pid( ensemble ) != pid


@pytest.mark.asyncio
async def test_310_killed_while_idle( ):
    ''' After a kill while idle, the next call reconnects transparently. '''
    ensemble = _produce_echo( 'idle' )
    async with ensemble:
        pid = await _access_pid( ensemble )
        os.kill( pid, signal.SIGKILL )
        assert not mcp_support.wait_until_dead( { pid } )
        await _wait_disconnected( ensemble )
        content = await _call( ensemble, 'echo', { 'message': 'back' } )
        assert content[ 0 ].text == 'back'


@pytest.mark.asyncio
async def test_320_reconnect_fails_clearly( monkeypatch, tmp_path ):
    ''' When reconnecting fails, the call fails clearly, then recovers.

        The environment of the child is read at each connect, so the server
        may be told to fail at start. The child runs in the given folder.
    '''
    monkeypatch.setenv( 'INVOCABLES_TEST_FAIL', '0' )
    ensemble = _produce_echo(
        'flaky', environment = { 'ECHO_SERVER_FAIL': 'env:INVOCABLES_TEST_FAIL' },
        cwd = tmp_path )
    async with ensemble:
        folder = ( await _call( ensemble, 'working_directory' ) )[ 0 ].text
        assert folder == str( tmp_path )
        pid = await _access_pid( ensemble )
        monkeypatch.setenv( 'INVOCABLES_TEST_FAIL', '1' )
        os.kill( pid, signal.SIGKILL )
        assert not mcp_support.wait_until_dead( { pid } )
        await _wait_disconnected( ensemble )
        began = time.monotonic( )
        with pytest.raises( exceptions.ConnectionFailure ) as caught:
            await _call( ensemble, 'echo', { 'message': 'x' } )
        assert time.monotonic( ) - began < 30 # does not hang
        message = str( caught.value )
        assert 'reconnecting failed' in message
        assert 'told to fail' in message
        monkeypatch.setenv( 'INVOCABLES_TEST_FAIL', '0' )
        content = await _call( ensemble, 'echo', { 'message': 'y' } )
        assert content[ 0 ].text == 'y'


@pytest.mark.asyncio
async def test_330_killed_mid_call_through_engine( ):
    ''' Through the engine, a dead server raises or reports by policy. '''
    reports = mcp_support.Reports( )
    ensemble = _produce_echo( 'engine', reporter = reports.append )
    async with ensemble:
        pid = await _access_pid( ensemble )
        call = invocables.InvocationCanister(
            identifier = 'c1', name = 'sleep',
            arguments = { 'seconds': 3600 } )
        execution = asyncio.create_task( invocables.execute_invocations(
            [ call ], [ ensemble ],
            failure_policy = invocables.FailurePolicies.Report ) )
        await reports.wait_count( 1 ) # the server runs the call
        os.kill( pid, signal.SIGKILL )
        results = await asyncio.wait_for( execution, 5 )
        assert results[ 0 ].error.genus is invocables.FaultGenera.Connection
        assert "'engine'" in results[ 0 ].error.message


@pytest.mark.asyncio
async def test_400_disconnect_kills_grandchildren( ):
    ''' Disconnect leaves neither the server nor its grandchildren. '''
    ensemble = _produce_echo( 'parent' )
    async with ensemble:
        pid = await _access_pid( ensemble )
        grandchild = int( ( await _call( ensemble, 'spawn_child' ) )[ 0 ].text )
        assert mcp_support.probe_process( grandchild )
    assert not mcp_support.wait_until_dead( { pid, grandchild }, 1 )
    assert not ensemble.is_connected( )


@pytest.mark.asyncio
async def test_410_stubborn_server_is_killed( ):
    ''' A server ignoring stdin EOF and SIGTERM is killed after two graces.
    '''
    ensemble = _produce_echo( 'stubborn', '--stubborn', grace = 0.3 )
    await ensemble.connect( )
    pid = await _access_pid( ensemble )
    began = time.monotonic( )
    await ensemble.disconnect( )
    elapsed = time.monotonic( ) - began
    assert not mcp_support.wait_until_dead( { pid }, 1 )
    assert 0.5 < elapsed < 30 # two graces, then does not hang


@pytest.mark.asyncio
async def test_420_cancelled_call_and_block( ):
    ''' Cancelling a block mid-call leaves no process; the call is cancelled.
    '''
    reports = mcp_support.Reports( )
    ensemble = _produce_echo( 'cancelled', reporter = reports.append )
    pids: set[ int ] = set( )

    async def work( ):
        async with ensemble:
            pids.add( await _access_pid( ensemble ) )
            pids.add( int( ( await _call( ensemble, 'spawn_child' ) )[ 0 ].text ) )
            await _call( ensemble, 'sleep', { 'seconds': 3600 } )

    task = asyncio.create_task( work( ) )
    await reports.wait_count( 1 ) # the server runs the call
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await task
    assert len( pids ) == 2
    assert not mcp_support.wait_until_dead( pids, 1 )


@pytest.mark.asyncio
async def test_430_cancelled_connect( ):
    ''' Cancelling connect leaves no process behind. '''
    ensemble = invocables.mcp.produce_ensemble(
        'mute', command = [ 'sleep', '3600' ], grace = 0.2 )
    before = mcp_support.survey_descendants( os.getpid( ) )
    task = asyncio.create_task( ensemble.connect( ) )
    for _ in range( 1000 ): # until the child runs; bounded
        children = mcp_support.survey_descendants( os.getpid( ) ) - before
        if children: break
        await asyncio.sleep( 0.01 )
    assert children
    assert not ensemble.is_connected( )
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await task
    assert not mcp_support.wait_until_dead( children, 2 )


@pytest.mark.asyncio
async def test_440_disconnect_from_another_task( ):
    ''' Connect in one task and disconnect in another: both work. '''
    ensemble = _produce_echo( 'roaming' )
    await asyncio.create_task( ensemble.connect( ) )
    pid = await _access_pid( ensemble )
    await asyncio.create_task( ensemble.disconnect( ) )
    assert not mcp_support.wait_until_dead( { pid }, 1 )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await _call( ensemble, 'echo', { 'message': 'x' } )
    assert 'not connected' in str( caught.value )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_500_http_server_dies_and_returns( ):
    ''' Over HTTP, a dead server fails calls clearly; it is reached again.
    '''
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ) )
    with mcp_support.serve_http( command, port ) as url:
        reports = mcp_support.Reports( )
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url, reporter = reports.append )
        await ensemble.connect( )
        content = await _call( ensemble, 'echo', { 'message': 'hi' } )
        assert content[ 0 ].text == 'hi'
        call = asyncio.create_task(
            _call( ensemble, 'sleep', { 'seconds': 3600 } ) )
        await reports.wait_count( 1 ) # the server runs the call
    began = time.monotonic( )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await call
    assert time.monotonic( ) - began < 5
    assert "'remote'" in str( caught.value )
    began = time.monotonic( )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await _call( ensemble, 'echo', { 'message': 'x' } )
    assert time.monotonic( ) - began < 5
    assert "'remote'" in str( caught.value )
    with mcp_support.serve_http( command, port ):
        content = await _call( ensemble, 'echo', { 'message': 'again' } )
        assert content[ 0 ].text == 'again'
        await ensemble.disconnect( )


@pytest.mark.asyncio
async def test_510_http_unreachable( ):
    ''' Connecting to a port where nothing listens fails fast and clearly.
    '''
    port = mcp_support.select_port( )
    ensemble = invocables.mcp.produce_ensemble(
        'nowhere', url = f"http://127.0.0.1:{port}/mcp" )
    began = time.monotonic( )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    assert time.monotonic( ) - began < 5
    assert "'nowhere'" in str( caught.value )
    assert 'ExceptionGroup' not in str( caught.value )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_520_http_server_restarted_while_idle( ):
    ''' After an HTTP server restarts, the next call reconnects and succeeds.

        The new server rejects the old session; the request never ran, so
        it is sent again on a fresh session, transparently.
    '''
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ) )
    ensemble = None
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble( 'restarted', url = url )
        await ensemble.connect( )
        first = await _access_pid( ensemble )
    with mcp_support.serve_http( command, port ):
        began = time.monotonic( )
        assert await _access_pid( ensemble ) != first
        assert time.monotonic( ) - began < 30 # does not hang
        await ensemble.disconnect( )
