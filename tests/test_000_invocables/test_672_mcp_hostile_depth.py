# SPDX-License-Identifier: Apache-2.0

''' Lines of a stdio server nested deeper than a parser can read.

    The server (``servers/deep_lines_server.py``) speaks JSON-RPC by hand.
    A deep notification or request is skipped like other noise; a deep
    answer fails its own call with an error result; an oversized answer
    whose id cannot be read is skipped. The session lives on in every
    case: the same server answers the next call.
'''


import asyncio

import pytest

from absence import is_absent

import invocables
import invocables.mcp

from . import mcp_support


_TIMEOUT = 20 # seconds: only proves that nothing hangs


def _produce_deep( **options ):
    return invocables.mcp.produce_ensemble(
        'deep', command = mcp_support.produce_server_command(
            'deep_lines_server.py' ), **options )


async def _execute( ensemble, name, arguments = None ):
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = name, arguments = arguments or { } )
    results = await asyncio.wait_for(
        invocables.execute_invocations( [ invocation ], [ ensemble ] ),
        _TIMEOUT )
    return results[ 0 ]


async def _access_pid( ensemble ):
    result = await _execute( ensemble, 'pid' )
    assert is_absent( result.error )
    return result.content[ 0 ].text


@pytest.mark.parametrize( 'order', [ 'first', 'last' ] )
@pytest.mark.parametrize( 'depth', [ 1100, 100_000 ] )
@pytest.mark.asyncio
async def test_100_deep_notification_skipped( depth, order ):
    ''' A log notification and a server request nested too deep to read
        are skipped: the call they came with succeeds, in the same session.

        Before, either line ended the session (a RecursionError from the
        parser) and the call failed with a connection failure.
    '''
    async with _produce_deep( log_level = 'debug' ) as ensemble:
        pid = await _access_pid( ensemble )
        result = await _execute(
            ensemble, 'notice', { 'depth': depth, 'order': order } )
        assert is_absent( result.error )
        assert result.content == ( invocables.TextContent( text = 'ok' ), )
        assert await _access_pid( ensemble ) == pid


@pytest.mark.parametrize( 'order', [ 'first', 'last' ] )
@pytest.mark.parametrize( 'depth', [ 1100, 100_000 ] )
@pytest.mark.asyncio
async def test_110_deep_answer_fails_its_call( depth, order ):
    ''' An answer nested too deep to read fails its own call with an error
        result saying so, whether its id comes first or last; the session
        lives.
    '''
    async with _produce_deep( ) as ensemble:
        pid = await _access_pid( ensemble )
        result = await _execute(
            ensemble, 'deep', { 'depth': depth, 'order': order } )
        assert result.error.genus is invocables.FaultGenera.Refusal
        assert 'too deep to be read' in result.error.message
        assert await _access_pid( ensemble ) == pid


@pytest.mark.asyncio
async def test_120_oversize_answer_of_unreadable_id_skipped( ):
    ''' An answer over the result limit whose id holds an escape which
        JSON does not allow answers no request: it is skipped, and the
        call goes on.
    '''
    async with _produce_deep( result_limit = 1 << 16 ) as ensemble:
        pid = await _access_pid( ensemble )
        result = await _execute( ensemble, 'bad_id', { 'size': 1 << 18 } )
        assert is_absent( result.error )
        assert result.content == ( invocables.TextContent( text = 'ok' ), )
        assert await _access_pid( ensemble ) == pid
