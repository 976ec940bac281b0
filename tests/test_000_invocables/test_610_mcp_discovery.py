# SPDX-License-Identifier: Apache-2.0

''' MCP discovery: invokers from tools/list, pages, filters, changes. '''


import asyncio

import pytest
import pytest_asyncio

from absence import is_absent

import invocables
import invocables.mcp

from . import mcp_support


pytestmark = pytest.mark.asyncio( loop_scope = 'module' )


@pytest_asyncio.fixture( scope = 'module', loop_scope = 'module' )
async def echo( ):
    ''' Echo server, shared by tests which do not change it. '''
    ensemble = invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ), timeouts = { 'sleep': 5 } )
    async with ensemble: yield ensemble


@pytest_asyncio.fixture( scope = 'module', loop_scope = 'module' )
async def mutable( ):
    ''' Echo server with a broken schema, whose tools tests change. '''
    ensemble = invocables.mcp.produce_ensemble(
        'mutable', command = mcp_support.produce_server_command(
            'echo_server.py', '--invalid-schema' ), exclude = [ 'sleep' ] )
    async with ensemble: yield ensemble


async def _wait_listings( ensemble ):
    ''' Waits until the ensemble's listings are done; bounded: no hang. '''
    return await asyncio.wait_for( ensemble.wait_listings( ), 10 )


async def test_100_invokers_from_tools( echo ):
    ''' Each tool becomes a function invoker bound to the ensemble. '''
    invokers = echo.survey_invokers( )
    names = [ invoker.name for invoker in invokers ]
    assert 'echo' in names
    assert 'echo_structured' in names
    for invoker in invokers:
        assert isinstance( invoker, invocables.FunctionInvoker )
        assert invoker.ensemble.name == 'echo'
    invoker = echo.access_invoker( 'echo' )
    assert invoker.description.strip( ) == 'Returns the message unchanged.'
    assert invoker.arguments_schema[ 'required' ] == [ 'message' ]
    properties = invoker.arguments_schema[ 'properties' ]
    assert properties[ 'message' ][ 'type' ] == 'string'
    assert is_absent( invoker.outschema )
    assert echo.access_invoker( 'sleep' ).timeout == 5
    assert is_absent( invoker.timeout )
    # Not given: the caller's timeout (of execute_invocations) applies.
    assert is_absent( echo.configuration.timeout )


async def test_110_schemas_and_annotations_kept( echo ):
    ''' Output schemas and annotations are kept, also in descriptions. '''
    structured = echo.access_invoker( 'echo_structured' )
    assert structured.outschema[ 'properties' ][ 'result' ][ 'type' ] == 'string'
    annotations = echo.access_invoker( 'echo' ).annotations
    assert annotations[ 'readOnlyHint' ] is True
    assert annotations[ 'idempotentHint' ] is True
    assert echo.access_invoker( 'boom' ).annotations[ 'destructiveHint' ]
    descriptions = { tool.name: tool for tool in echo.survey_tools( ) }
    assert descriptions[ 'echo' ].annotations == annotations
    assert descriptions[ 'echo' ].argschema == echo.access_invoker(
        'echo' ).arguments_schema
    assert len( descriptions ) == len( echo.survey_invokers( ) )


async def test_120_same_tuple_until_change( echo ):
    ''' The invokers tuple is the same object while tools are unchanged. '''
    assert echo.survey_invokers( ) is echo.survey_invokers( )


async def test_130_unknown_invoker( echo ):
    ''' An unknown name raises absence, naming the ensemble. '''
    with pytest.raises( invocables.exceptions.InvokerAbsence ) as caught:
        echo.access_invoker( 'nothing' )
    assert "'echo'" in str( caught.value )


async def test_200_every_page_followed( ):
    ''' All pages of a paginated listing are read; late tools work. '''
    ensemble = invocables.mcp.produce_ensemble(
        'paged', command = mcp_support.produce_server_command(
            'paged_server.py' ) )
    async with ensemble:
        names = [ invoker.name for invoker in ensemble.survey_invokers( ) ]
        assert names == [ f"tool_{index}" for index in range( 7 ) ]
        context = invocables.InvocationContext(
            auxdata = None, invoker = None, namespace = { } )
        content = await ensemble.access_invoker( 'tool_6' )( context, { } )
        # Validated against its output schema; the structure which only
        # wraps the text is not repeated.
        assert content == ( invocables.TextContent( text = 'tool 6' ), )


async def test_300_exclude_and_omissions( mutable ):
    ''' Excluded tools are left out and listed as omissions with reasons.
    '''
    names = { invoker.name for invoker in mutable.survey_invokers( ) }
    assert 'sleep' not in names
    omissions = {
        omission.name: omission.reason
        for omission in mutable.survey_omissions( ) }
    assert omissions[ 'sleep' ] == 'in exclude list'


async def test_310_include( ):
    ''' Only included tools are offered; unknown ones are warned about. '''
    ensemble = invocables.mcp.produce_ensemble(
        'chosen', command = mcp_support.produce_server_command(
            'paged_server.py' ), include = [ 'tool_1', 'tool_9' ],
        exclude = [ 'tool_2' ] )
    async with ensemble:
        assert [ invoker.name for invoker in ensemble.survey_invokers( ) ] \
            == [ 'tool_1' ]
        assert len( ensemble.survey_omissions( ) ) == 6


async def test_315_include_exclude_globs( caplog ):
    ''' Include and exclude take globs, matched as filters and policies
        match names; an include pattern matching no tool is warned about.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'chosen', command = mcp_support.produce_server_command(
            'paged_server.py' ),
        include = [ 'tool_[0-3]', 'tool_6', 'other_*' ],
        exclude = [ '*_2' ] )
    with caplog.at_level( 'WARNING', logger = 'invocables' ):
        async with ensemble:
            names = [
                invoker.name for invoker in ensemble.survey_invokers( ) ]
            omissions = {
                omission.name: omission.reason
                for omission in ensemble.survey_omissions( ) }
    assert names == [ 'tool_0', 'tool_1', 'tool_3', 'tool_6' ]
    assert omissions == {
        'tool_2': 'in exclude list',
        'tool_4': 'not in include list', 'tool_5': 'not in include list' }
    warned = [
        record.getMessage( ) for record in caplog.records
        if 'include list' in record.getMessage( ) ]
    assert warned == [
        "MCP server 'chosen' offers no tool matching 'other_*' from the "
        "include list." ]


async def test_320_invalid_schema_left_out( mutable ):
    ''' A tool with an invalid input schema is left out, the rest work. '''
    names = { invoker.name for invoker in mutable.survey_invokers( ) }
    assert 'broken' not in names
    assert 'echo' in names
    omissions = {
        omission.name: omission.reason
        for omission in mutable.survey_omissions( ) }
    assert 'broken' in omissions[ 'broken' ]
    assert 'Invalid JSON Schema' in omissions[ 'broken' ]


async def test_400_list_changed_refreshes_debounced( mutable ):
    ''' A burst of list-changed notes refreshes the tools once. '''
    before = mutable.survey_invokers( )
    listings = mutable.access_listings( )
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    await mutable.access_invoker( 'add_tool' )( context, { 'name': 'fresh' } )
    # The notifications arrive before the answer: wait until listed.
    assert await _wait_listings( mutable ) == mutable.access_listings( )
    after = mutable.survey_invokers( )
    assert after is not before
    assert 'fresh' in { invoker.name for invoker in after }
    # Five notifications, coalesced: one listing (two on a very busy host).
    assert listings < mutable.access_listings( ) <= listings + 2
    content = await mutable.access_invoker( 'fresh' )( context, { } )
    assert content[ 0 ].text == 'fresh'
    assert mutable.access_invoker( 'echo' ) is before[
        [ invoker.name for invoker in before ].index( 'echo' ) ]


async def test_410_unchanged_list_keeps_tuple( mutable ):
    ''' A notification without change keeps the same tuple object. '''
    before = mutable.survey_invokers( )
    listings = mutable.access_listings( )
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    await mutable.access_invoker( 'notify_unchanged' )( context, { } )
    assert await _wait_listings( mutable ) == listings + 1
    assert mutable.survey_invokers( ) is before


async def test_420_removed_tool_disappears( mutable ):
    ''' A removed tool leaves the ensemble after the notification. '''
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    await mutable.access_invoker( 'add_tool' )( context, { 'name': 'brief' } )
    await _wait_listings( mutable )
    assert 'brief' in { i.name for i in mutable.survey_invokers( ) }
    await mutable.access_invoker( 'remove_tool' )( context, { 'name': 'brief' } )
    await _wait_listings( mutable )
    assert 'brief' not in { i.name for i in mutable.survey_invokers( ) }
    with pytest.raises( invocables.exceptions.InvokerAbsence ):
        mutable.access_invoker( 'brief' )
