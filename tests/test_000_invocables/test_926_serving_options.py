# SPDX-License-Identifier: Apache-2.0

''' The execution options under serve mean what they mean elsewhere: the
    concurrency bounds the calls running at once across the server's
    clients, and a policy's asking rules refuse (a server has nobody to
    ask), also within a chain of an approver and a policy.
'''


import asyncio

import pytest

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk
from invocables.toolsets import policies

from . import mcp_support


class _Arrivals:
    ''' Policy which counts the calls which reach it (before any slot of
        the concurrency), and tells when so many came. '''

    def __init__( self, expected ):
        self.count = 0
        self.expected = expected
        self.complete = asyncio.Event( )

    def produce_interceptor( self, namespace ):
        async def intercept( invocation, designation, arguments, proceed ):
            self.count += 1
            if self.count == self.expected: self.complete.set( )
            return await proceed( invocation, designation, arguments )
        return intercept


@pytest.mark.asyncio
async def test_100_concurrency_bounds_calls_across_clients( ):
    ''' With a concurrency of 1, three calls made at once (each its own
        execution) run one after the other: never two at once.
    '''
    running = [ 0 ]
    peak = [ 0 ]
    started = asyncio.Event( )
    gate = asyncio.Event( )

    async def use( n: int ) -> str:
        ''' Uses a service which every call uses. '''
        running[ 0 ] += 1
        peak[ 0 ] = max( peak[ 0 ], running[ 0 ] )
        started.set( )
        try: await gate.wait( )
        finally: running[ 0 ] -= 1
        return f"done {n}"

    ensemble = invocables.produce_ensemble(
        'svc', [ invocables.produce_invoker( use ) ] )
    arrivals = _Arrivals( 3 )
    server = serving.ToolServer(
        [ ensemble ], concurrency = 1, policy = arrivals )
    async with mcp_support.open_memory_client(
        server.produce_server( )
    ) as client:
        calls = [
            asyncio.create_task( client.call_tool( 'use', { 'n': n } ) )
            for n in range( 3 ) ]
        await arrivals.complete.wait( )
        await started.wait( )
        gate.set( )
        results = await asyncio.gather( *calls )
    assert sorted( result.content[ 0 ].text for result in results ) == [
        'done 0', 'done 1', 'done 2' ]
    assert peak[ 0 ] == 1


@pytest.mark.asyncio
async def test_110_slot_wait_counts_in_timeout( ):
    ''' A call which waits for a slot longer than its timeout ends with
        the timeout's error, naming the concurrency; the running call
        ends as it would.
    '''
    gate = asyncio.Event( )
    started = asyncio.Event( )

    async def hold( ) -> str:
        ''' Holds the one slot until released. '''
        started.set( )
        await gate.wait( )
        return 'held'

    async def hurry( ) -> str:
        ''' Returns at once, once it runs. '''
        return 'hurried'

    ensemble = invocables.produce_ensemble( 'svc', [
        invocables.produce_invoker( hold, timeout = 30 ),
        invocables.produce_invoker( hurry, timeout = 0.2 ) ] )
    server = serving.ToolServer( [ ensemble ], concurrency = 1 )
    async with mcp_support.open_memory_client(
        server.produce_server( )
    ) as client:
        holding = asyncio.create_task( client.call_tool( 'hold', { } ) )
        await started.wait( )
        waited = await client.call_tool( 'hurry', { } )
        gate.set( )
        held = await holding
    assert sdk.access_field( waited, 'is_error' )
    assert 'slot' in waited.content[ 0 ].text
    assert held.content[ 0 ].text == 'held'


@pytest.mark.asyncio
async def test_200_chained_policy_refuses_asking( ):
    ''' Served with an approver's policy chained to a policy without an
        approver (as the conversation loop chains them), a call which the
        inner policy asks about is refused, not left waiting; the tool
        does not run.
    '''
    ran = [ ]

    async def delete( path: str ) -> str:
        ''' Deletes a path. '''
        ran.append( path )
        return 'deleted'

    invoker = invocables.produce_invoker(
        delete, annotations = { 'destructive': True } )
    ensemble = invocables.produce_ensemble( 'fs', [ invoker ] )
    inner = policies.Policy( rules = ( policies.Rule(
        action = policies.Actions.Ask, destructive = True ), ) )
    policy = policies.produce_approval_policy( lambda request: True, inner )
    server = serving.ToolServer( [ ensemble ], policy = policy )
    async with mcp_support.open_memory_client(
        server.produce_server( )
    ) as client:
        result = await client.call_tool( 'delete', { 'path': '/x' } )
    assert sdk.access_field( result, 'is_error' )
    text = result.content[ 0 ].text
    assert 'did not approve' in text
    assert 'awaits' not in text
    assert ran == [ ]


def test_210_unattended_policy_adapts_chains_only_where_needed( ):
    ''' Only policies without an approver are adapted; one with an
        approver, and anything else which produces interceptors, stay.
    '''
    arrivals = _Arrivals( 1 )
    assert policies.produce_unattended_policy( arrivals ) is arrivals
    asking = policies.Policy(
        rules = ( policies.Rule( action = policies.Actions.Ask ), ),
        approver = lambda request: True )
    assert policies.produce_unattended_policy( asking ) is asking
    bare = policies.Policy(
        rules = ( policies.Rule( action = policies.Actions.Ask ), ) )
    adapted = policies.produce_unattended_policy( bare )
    assert adapted is not bare
    assert callable( adapted.approver )
