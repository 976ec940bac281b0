# SPDX-License-Identifier: Apache-2.0

''' Schemas of MCP servers never run on Python's backtracking ``re``.

    The schemas server (``servers/schemas_server.py``) declares output and
    input schemas with the pattern ``^(a+)+$`` and sends ``'a' * 40 + 'b'``:
    matched by ``re`` in the event loop (as the SDK's own check of results
    did), the process froze for hours and no timeout fired.
'''


import asyncio

import pytest

import invocables
import invocables.mcp

from invocables import FaultGenera, exceptions
from invocables.mcp import _sdk as sdk

from . import mcp_support


_BOUND = 30 # seconds: "does not hang", never a timing assertion
# A frozen event loop cannot end a test: the thread method can.
_unfrozen = pytest.mark.timeout( 120, method = 'thread' )


def _produce( ):
    return invocables.mcp.produce_ensemble(
        'schemas', command = mcp_support.produce_server_command(
            'schemas_server.py' ) )


def _call( name, arguments = None, identifier = 'c1' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


async def _execute( ensemble, *calls ):
    return await asyncio.wait_for( invocables.execute_invocations(
        calls, [ ensemble ], timeout = 1 ), _BOUND )


@_unfrozen
@pytest.mark.asyncio
async def test_100_catastrophic_output_pattern_refused( ):
    ''' Structured content which breaks an output schema with a
        catastrophic pattern is an error result, within the timeout. '''
    async with _produce( ) as ensemble:
        results = await _execute( ensemble, _call( 'backtrack' ) )
    error = results[ 0 ].error
    assert error.genus is FaultGenera.Refusal
    assert 'breaks its own declaration' in error.message
    assert 'does not match' in error.message


@_unfrozen
@pytest.mark.asyncio
async def test_110_lookahead_output_pattern_bounded( ):
    ''' A catastrophic pattern which RE2 cannot run stops at the patterns'
        deadline: an error result, not a frozen loop. '''
    async with _produce( ) as ensemble:
        results = await _execute( ensemble, _call( 'lookahead' ) )
    error = results[ 0 ].error
    assert error.genus is FaultGenera.Refusal
    # The regex package refuses it at once, or stops at the deadline.
    assert 'took too long' in error.message or (
        'does not match' in error.message )


@pytest.mark.asyncio
async def test_120_conforming_and_missing_structure( ):
    ''' Content which matches the output schema passes; a tool which
        declares one and returns no structure, or whose schema cannot be
        resolved, is an error result. '''
    async with _produce( ) as ensemble:
        results = await _execute(
            ensemble, _call( 'conforming', identifier = 'a' ),
            _call( 'bare', identifier = 'b' ),
            _call( 'unbounded', identifier = 'c' ) )
    assert not results[ 0 ].error # absent: it succeeded
    assert invocables.StructureContent(
        data = { 'word': 'aaaa' } ) in results[ 0 ].content
    assert results[ 1 ].error.genus is FaultGenera.Refusal
    assert 'no structured content' in results[ 1 ].error.message
    assert results[ 2 ].error.genus is FaultGenera.Refusal
    assert 'cannot be checked' in results[ 2 ].error.message


@_unfrozen
@pytest.mark.asyncio
async def test_130_catastrophic_input_pattern_bounded( ):
    ''' Arguments matched against an input schema's catastrophic pattern
        are refused as invalid, within the timeout; good ones pass. '''
    async with _produce( ) as ensemble:
        results = await _execute(
            ensemble,
            _call( 'shout', { 'word': 'a' * 40 + 'b' }, identifier = 'a' ),
            _call( 'shout', { 'word': 'aaa' }, identifier = 'b' ) )
    assert results[ 0 ].error.genus is FaultGenera.Invalidity
    assert results[ 1 ].content == ( invocables.TextContent( text = 'AAA' ), )


@_unfrozen
@pytest.mark.asyncio
async def test_140_direct_call_refused( ):
    ''' Called directly, not through the engine, the invoker raises the
        refusal. '''
    async with _produce( ) as ensemble:
        invoker = ensemble.access_invoker( 'backtrack' )
        context = invocables.InvocationContext(
            auxdata = None, invoker = invoker, namespace = { } )
        with pytest.raises( exceptions.InvocationRefusal ):
            await asyncio.wait_for( invoker( context, { } ), _BOUND )


@_unfrozen
@pytest.mark.asyncio
async def test_150_session_leaves_results_unchecked( ):
    ''' The session which the library holds is its own subclass of the
        SDK's, whose check of results (with ``re``) does nothing. '''
    async with _produce( ) as ensemble:
        session = ensemble.connection
        assert isinstance( session, sdk.ClientSession )
        result = await asyncio.wait_for(
            session.call_tool( 'backtrack', { } ), _BOUND )
    structure = sdk.access_field( result, 'structured_content' )
    assert structure == { 'word': 'a' * 40 + 'b' }
