# SPDX-License-Identifier: Apache-2.0

''' The reference time (Python) and filesystem (node) servers. '''


import pytest
import pytest_asyncio

import invocables
import invocables.mcp

from invocables import exceptions

from . import mcp_support


pytestmark = pytest.mark.asyncio( loop_scope = 'module' )


@pytest_asyncio.fixture( scope = 'module', loop_scope = 'module' )
async def time_server( ):
    ''' mcp-server-time in UTC, shared by the module. '''
    ensemble = invocables.mcp.produce_ensemble(
        'time', command = [
            mcp_support.locate_time_server( ), '--local-timezone', 'UTC' ] )
    async with ensemble: yield ensemble


@pytest_asyncio.fixture( scope = 'module', loop_scope = 'module' )
async def files( tmp_path_factory ):
    ''' server-filesystem over a temporary folder, shared by the module. '''
    root = tmp_path_factory.mktemp( 'files' )
    ( root / 'note.txt' ).write_text( 'hello files\n', encoding = 'utf-8' )
    ensemble = invocables.mcp.produce_ensemble(
        'files', command = [
            mcp_support.locate_npm_server( 'mcp-server-filesystem' ),
            str( root ) ] )
    async with ensemble: yield ensemble, root


async def _call( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return await ensemble.access_invoker( name )( context, arguments or { } )


async def test_100_time_discovery( time_server ):
    ''' Time tools come with output schemas and read-only annotations. '''
    invoker = time_server.access_invoker( 'get_current_time' )
    assert 'timezone' in invoker.arguments_schema[ 'properties' ]
    assert 'datetime' in invoker.outschema[ 'properties' ]
    assert invoker.annotations[ 'readOnlyHint' ] is True


async def test_110_time_structured( time_server ):
    ''' Conversion answers with text and structured content. '''
    content = await _call( time_server, 'convert_time', {
        'source_timezone': 'UTC', 'time': '12:00',
        'target_timezone': 'Asia/Tokyo' } )
    structure = content[ -1 ]
    assert isinstance( structure, invocables.StructureContent )
    assert structure.data[ 'target' ][ 'datetime' ].endswith( '21:00:00+09:00' )


async def test_120_time_error( time_server ):
    ''' A bad time zone is the server's error, sent to the model. '''
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        await _call(
            time_server, 'get_current_time', { 'timezone': 'Mars/Olympus' } )
    assert 'Invalid timezone' in str( caught.value )


async def test_200_files_read( files ):
    ''' Files are read through the server, their text given once.

        The server repeats the text as ``{ "content": ... }``.
    '''
    ensemble, root = files
    content = await _call(
        ensemble, 'read_text_file', { 'path': str( root / 'note.txt' ) } )
    assert len( content ) == 1
    assert content[ 0 ].text.strip( ) == 'hello files'


async def test_210_files_write_and_list( files ):
    ''' Files are written and listed; destructive hints are kept. '''
    ensemble, root = files
    assert ensemble.access_invoker( 'write_file' ).annotations.get(
        'readOnlyHint' ) is False
    await _call( ensemble, 'write_file', {
        'path': str( root / 'new.txt' ), 'content': 'fresh' } )
    assert ( root / 'new.txt' ).read_text( encoding = 'utf-8' ) == 'fresh'
    content = await _call( ensemble, 'list_directory', { 'path': str( root ) } )
    assert 'new.txt' in content[ 0 ].text


async def test_220_files_outside_denied( files ):
    ''' A path outside the allowed folder is refused by the server. '''
    ensemble, _ = files
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        await _call( ensemble, 'read_text_file', { 'path': '/etc/hostname' } )
    assert 'Access denied' in str( caught.value )
