# SPDX-License-Identifier: Apache-2.0

''' A long local tool run as a task end to end: served by serve, called by
    the library's own MCP client (an ensemble whose option ``tasks`` is
    ``'supported'``): progress seen, cancelled midway, followed across a
    reconnection of the client's session.
'''


import asyncio
import contextlib

import pytest

import invocables
import invocables.mcp

from invocables import serving

from . import mcp_support


pytestmark = pytest.mark.asyncio
_WAIT = 30 # seconds: bounds which prove "does not hang"
_serve = mcp_support.serve_in_loop


class _Gate:
    ''' What the slow tool does, controlled and seen by the test. '''

    def __init__( self ):
        self.calls = 0
        self.started = asyncio.Event( )
        self.release = asyncio.Event( )
        self.cancelled = asyncio.Event( )


def _produce_server( gate ):
    async def slow( context, label: str ) -> str:
        ''' Waits until released; reports progress first. '''
        gate.calls += 1
        await context.report_progress( 1, 2, f"started {label}" )
        gate.started.set( )
        try: await gate.release.wait( )
        except asyncio.CancelledError:
            gate.cancelled.set( )
            raise
        return f"done {label}"

    ensemble = invocables.produce_ensemble(
        'local', [ invocables.produce_invoker( slow ) ] )
    return serving.ToolServer( [ ensemble ] )




def _invoke( ensemble, arguments ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return ensemble.access_invoker( 'slow' )( context, arguments )


async def _wait_message( reports, text ):
    ''' Waits until a progress report carries a message; bounded. '''
    async def wait( ) -> None:
        while not any( report.message == text for report in reports ):
            reports.arrival.clear( )
            await reports.arrival.wait( )
    await asyncio.wait_for( wait( ), _WAIT )


@contextlib.asynccontextmanager
async def _start( label ):
    ''' Serves the slow tool; yields its gate, the client and the call of
        the tool, once the task reported that it started.
    '''
    gate = _Gate( )
    reports = mcp_support.Reports( )
    async with _serve( _produce_server( gate ) ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, tasks = 'supported',
            reporter = reports.append )
        async with client:
            call = asyncio.ensure_future(
                _invoke( client, { 'label': label } ) )
            await _wait_message( reports, f"started {label}" )
            yield gate, client, call


async def test_100_progress_and_result( ):
    ''' The call runs as a task: its progress reaches the client's reporter
        as status messages (waited for), and its result is the call's.
    '''
    async with _start( 'a' ) as ( gate, _, call ):
        gate.release.set( )
        content = await asyncio.wait_for( call, _WAIT )
    assert content[ 0 ].text == 'done a'
    assert gate.calls == 1


async def test_110_cancelled_midway( ):
    ''' Cancelling the call midway cancels the task: the tool's coroutine
        on the server is cancelled.
    '''
    async with _start( 'b' ) as ( gate, _, call ):
        call.cancel( )
        with pytest.raises( asyncio.CancelledError ): await call
        await asyncio.wait_for( gate.cancelled.wait( ), _WAIT )


async def test_120_followed_across_reconnection( ):
    ''' When the client's session is lost while the task runs, the client
        reconnects and follows the same task: the tool runs once, and its
        result reaches the call.
    '''
    async with _start( 'c' ) as ( gate, client, call ):
        lost = client.connection
        # The session ends as a network failure would end it.
        client._state.connection.request_stop( 'the test cut it' )
        gate.release.set( )
        content = await asyncio.wait_for( call, _WAIT )
        assert client.connection is not lost # a new session
    assert content[ 0 ].text == 'done c'
    assert gate.calls == 1


async def test_200_upstream_task_through_gateway( ):
    ''' serve relays an upstream tool which requires tasks (the reference
        server-everything's): it lists it so, the client calls it through
        serve as a task, and serve calls it upstream as a task.
    '''
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    upstream = invocables.mcp.produce_ensemble(
        'everything', command = [ program, 'stdio' ],
        include = [ 'simulate-research-query' ] )
    reports = mcp_support.Reports( )
    async with upstream, _serve( serving.ToolServer( [ upstream ] ) ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, reporter = reports.append )
        async with client:
            tool, = client.survey_tools( )
            assert tool.task_support == 'required'
            context = invocables.InvocationContext(
                auxdata = None, invoker = None, namespace = { } )
            content = await asyncio.wait_for(
                client.access_invoker( tool.name )(
                    context, { 'topic': 'bees' } ), _WAIT )
    assert 'Research Report: bees' in content[ 0 ].text
    assert reports
