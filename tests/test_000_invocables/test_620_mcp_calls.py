# SPDX-License-Identifier: Apache-2.0

''' MCP calls: validation before sending, results, errors, progress. '''


import asyncio

import pytest
import pytest_asyncio

import invocables
import invocables.mcp

from invocables import exceptions

from . import mcp_support


pytestmark = pytest.mark.asyncio( loop_scope = 'module' )
_progresses = mcp_support.Reports( )


@pytest_asyncio.fixture( scope = 'module', loop_scope = 'module' )
async def echo( ):
    ''' Echo server with a progress reporter, shared by the module. '''
    ensemble = invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ), reporter = _progresses.append )
    async with ensemble: yield ensemble


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


def _invocation( identifier, name, arguments ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


async def test_100_text( echo ):
    ''' A text result becomes one text canister. '''
    content = await echo.access_invoker( 'echo' )(
        _context( ), { 'message': 'hello' } )
    assert content == ( invocables.TextContent( text = 'hello' ), )


async def test_110_structured( echo ):
    ''' Structure which only wraps the text in one field is given once.

        The Python SDK wraps a returned string in ``{ "result": ... }``:
        the model would read the text twice.
    '''
    content = await echo.access_invoker( 'echo_structured' )(
        _context( ), { 'message': 'hello' } )
    assert content == ( invocables.TextContent( text = 'hello' ), )


async def test_200_invalid_arguments_never_sent( echo ):
    ''' Arguments invalid against the input schema fail client-side.

        The error is the core validator's, with the path and the reason.
    '''
    invoker = echo.access_invoker( 'echo' )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        await invoker( _context( ), { 'message': 5 } )
    assert "Invalid arguments for tool 'echo'" in str( caught.value )
    assert 'message' in str( caught.value )
    results = await invocables.execute_invocations(
        [ _invocation( 'c1', 'echo', { } ) ], [ echo ] )
    assert results[ 0 ].error.genus is invocables.FaultGenera.Invalidity
    assert "'message' is a required property" in results[ 0 ].error.message


async def test_210_tool_error_is_refusal( echo ):
    ''' A result flagged isError raises refusal, an error for the model. '''
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        await echo.access_invoker( 'boom' )( _context( ), { } )
    assert 'boom' in str( caught.value )
    results = await invocables.execute_invocations(
        [ _invocation( 'c1', 'boom', { } ) ], [ echo ] )
    assert results[ 0 ].error.genus is invocables.FaultGenera.Refusal


async def test_300_progress_reaches_reporter( echo ):
    ''' Progress notifications reach the reporter, with the invocation id.
    '''
    _progresses.clear( )
    results = await invocables.execute_invocations(
        [ _invocation( 'p1', 'progress', { 'steps': 3 } ) ], [ echo ] )
    assert results[ 0 ].content[ 0 ].text == 'done'
    await _progresses.wait_count( 3 )
    assert [ item.progress for item in _progresses ] == [ 1, 2, 3 ]
    last = _progresses[ -1 ]
    assert last.total == 3
    assert last.message == 'step 3'
    assert last.tool == 'progress'
    assert last.ensemble == 'echo'
    assert last.invocation_id == 'p1'


async def test_400_concurrent_calls( echo ):
    ''' Many concurrent calls on one session each get their own answer. '''
    invoker = echo.access_invoker( 'echo' )
    contents = await asyncio.gather( *(
        invoker( _context( ), { 'message': str( index ) } )
        for index in range( 50 ) ) )
    assert [ content[ 0 ].text for content in contents ] == [
        str( index ) for index in range( 50 ) ]


async def test_410_mixed_with_local_tools( echo ):
    ''' MCP tools and local functions run side by side in one execution.
    '''
    def shout( text: str ) -> str:
        ''' Returns text in capitals. '''
        return text.upper( )

    local = invocables.produce_ensemble( 'local', [ shout ] )
    async with local:
        results = await invocables.execute_invocations( [
            _invocation( 'a', 'shout', { 'text': 'hi' } ),
            _invocation( 'b', 'echo', { 'message': 'there' } ),
        ], [ local, echo ] )
    assert [ result.content[ 0 ].text for result in results ] == [
        'HI', 'there' ]
