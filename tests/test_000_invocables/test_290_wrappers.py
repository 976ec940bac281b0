# SPDX-License-Identifier: Apache-2.0

''' Wrappers: filtered, renamed, prefixed and pinned ensembles. '''


import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.toolsets import wrappers
from invocables.ensembles import EnsembleBase, EnsembleConfiguration

from . import mcp_support


def read_file( path: str ) -> str:
    ''' Reads a file. '''
    return f"read {path}"


def write_file( path: str, text: str ) -> str:
    ''' Writes a file. '''
    return f"wrote {len( text )} to {path}"


def list_folder( path: str ) -> str:
    ''' Lists a folder. '''
    return f"listed {path}"


def _produce_files( ):
    readonly = { 'readOnlyHint': True }
    return invocables.produce_ensemble( 'files', [
        invocables.produce_invoker( read_file, annotations = readonly ),
        invocables.produce_invoker( list_folder, annotations = readonly ),
        invocables.produce_invoker(
            write_file, annotations = { 'readOnlyHint': False } ) ] )


class _Changing(
    EnsembleBase, instances_mutables = ( '_invokers', '_connected' )
):
    ''' Ensemble whose tools change, as an MCP server's may. '''

    def __init__( self, name, invokers ):
        self.name = name
        self.configuration = EnsembleConfiguration( )
        self._invokers = tuple( invokers )
        self._connected = False
        self.connections = 0

    def access_invoker( self, name ):
        for invoker in self._invokers:
            if invoker.name == name: return invoker
        raise exceptions.InvokerAbsence( name, self.name )

    def is_connected( self ):
        return self._connected

    def survey_invokers( self ):
        return self._invokers

    def replace_invokers( self, invokers ):
        self._invokers = tuple(
            invoker.with_ensemble( self.name ) for invoker in invokers )

    async def connect( self ):
        self._connected = True

    async def disconnect( self ):
        self._connected = False


def _names( ensemble ):
    return [ invoker.name for invoker in ensemble.survey_invokers( ) ]


def test_100_filter_globs( ):
    ''' Include and exclude globs keep matching tools, in inner order. '''
    files = _produce_files( )
    kept = wrappers.FilteredEnsemble( files, include = [ '*_file' ] )
    assert _names( kept ) == [ 'read_file', 'write_file' ]
    kept = wrappers.FilteredEnsemble( files, exclude = 'write_*' )
    assert _names( kept ) == [ 'read_file', 'list_folder' ]
    kept = wrappers.FilteredEnsemble(
        files, include = '*_file', exclude = 'write_*' )
    assert _names( kept ) == [ 'read_file' ]
    assert kept.name == 'files'
    assert kept.survey_invokers( ) is kept.survey_invokers( )


def test_110_filter_annotations_and_predicate( ):
    ''' Annotations and predicates filter; a filtered-out tool is absent.
    '''
    files = _produce_files( )
    readonly = wrappers.FilteredEnsemble(
        files, annotations = { 'readOnlyHint': True } )
    assert _names( readonly ) == [ 'read_file', 'list_folder' ]
    with pytest.raises( exceptions.InvokerAbsence ):
        readonly.access_invoker( 'write_file' )
    short = wrappers.FilteredEnsemble(
        files, predicate = lambda invoker: len( invoker.name ) < 10 )
    assert _names( short ) == [ 'read_file' ]


def test_120_filter_options_checked( ):
    ''' Wrong kinds of options are refused, saying what is expected. '''
    files = _produce_files( )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.FilteredEnsemble( files, include = [ 3 ] )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.FilteredEnsemble( files, annotations = [ 'readOnlyHint' ] )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.FilteredEnsemble( files, predicate = 'yes' )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.FilteredEnsemble( 'files' )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.FilteredEnsemble( files, name = 'has\ttab' )


@pytest.mark.asyncio
async def test_200_rename_and_prefix( ):
    ''' Renamed and prefixed tools run the inner tools by their own names.
    '''
    files = _produce_files( )
    renamed = wrappers.RenamedEnsemble(
        files, prefix = 'fs_', rename = { 'read_file': 'cat' },
        descriptions = { 'list_folder': 'Lists entries.' } )
    assert _names( renamed ) == [ 'fs_cat', 'fs_list_folder', 'fs_write_file' ]
    cat = renamed.access_invoker( 'fs_cat' )
    reader = files.access_invoker( 'read_file' )
    assert cat.arguments_schema == reader.arguments_schema
    assert cat.annotations[ 'readOnlyHint' ] is True
    assert cat.ensemble is renamed
    assert renamed.access_invoker( 'fs_list_folder' ).description == (
        'Lists entries.' )
    async with renamed:
        content = await renamed.invoke( 'fs_cat', { 'path': 'a.txt' } )
        assert content[ 0 ].text == 'read a.txt'
        with pytest.raises( exceptions.ArgumentsInvalidity ):
            await renamed.invoke( 'fs_cat', { } )


def test_210_rename_collision( ):
    ''' Renaming two tools to one name is refused when surveyed. '''
    renamed = wrappers.RenamedEnsemble(
        _produce_files( ), rename = { 'read_file': 'write_file' } )
    with pytest.raises( exceptions.EnsemblesInvalidity ) as caught:
        renamed.survey_invokers( )
    assert 'write_file' in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.RenamedEnsemble( _produce_files( ), rename = { 'a': '' } )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.RenamedEnsemble( _produce_files( ), prefix = 3 )


@pytest.mark.asyncio
async def test_220_renamed_names_map_back_through_engine( ):
    ''' Provider names of renamed tools map back to the inner tools. '''
    renamed = wrappers.RenamedEnsemble( _produce_files( ), prefix = 'fs_' )
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = 'fs_read_file',
        arguments = { 'path': 'b' } )
    async with renamed:
        results = await invocables.execute_invocations(
            [ invocation ], [ renamed ] )
    assert results[ 0 ].content[ 0 ].text == 'read b'


@pytest.mark.asyncio
async def test_300_compose_and_lifecycle( ):
    ''' Wrappers compose; connecting the outer connects the inner. '''
    inner = _Changing( 'box', [ invocables.produce_invoker( read_file ) ] )
    outer = wrappers.RenamedEnsemble(
        wrappers.FilteredEnsemble( inner, include = 'read_*' ),
        prefix = 'box_', name = 'outer' )
    assert not outer.is_connected( )
    async with outer:
        assert inner.is_connected( )
        assert outer.is_connected( )
        assert _names( outer ) == [ 'box_read_file' ]
        assert outer.access_invoker( 'box_read_file' ).ensemble is outer
    assert not inner.is_connected( )
    await outer.connect( )
    assert inner.is_connected( )
    await outer.disconnect( )
    assert not inner.is_connected( )


def test_310_follows_tool_list_changes( ):
    ''' A change of the inner tools gives a new tuple and a new naming. '''
    inner = _Changing( 'box', [ invocables.produce_invoker( read_file ) ] )
    outer = wrappers.RenamedEnsemble(
        wrappers.FilteredEnsemble( inner, exclude = 'list_*' ),
        prefix = 'box_' )
    before = outer.survey_invokers( )
    nomenclature = invocables.naming.access_nomenclature( [ outer ] )
    inner.replace_invokers( [
        invocables.produce_invoker( read_file ),
        invocables.produce_invoker( write_file ),
        invocables.produce_invoker( list_folder ) ] )
    after = outer.survey_invokers( )
    assert after is not before
    assert _names( outer ) == [ 'box_read_file', 'box_write_file' ]
    assert outer.survey_invokers( ) is after
    renewed = invocables.naming.access_nomenclature( [ outer ] )
    assert renewed is not nomenclature
    assert renewed.access_designation( 'box_write_file' ).invoker.name == (
        'box_write_file' )


@pytest.mark.asyncio
async def test_400_pinned_snapshot( ):
    ''' A pinned ensemble offers its snapshot whatever the inner offers. '''
    inner = _Changing( 'box', [
        invocables.produce_invoker( read_file ),
        invocables.produce_invoker( write_file ) ] )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.produce_pinned_ensemble( inner )
    async with inner:
        pinned = wrappers.produce_pinned_ensemble( inner )
    inner.replace_invokers( [
        invocables.produce_invoker( read_file ),
        invocables.produce_invoker( list_folder ) ] )
    assert _names( pinned ) == [ 'read_file', 'write_file' ]
    assert pinned.survey_invokers( ) is pinned.survey_invokers( )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await pinned.connect( )
    assert "'write_file'" in str( caught.value )
    assert not inner.is_connected( )
    inner.replace_invokers( [
        invocables.produce_invoker( write_file ),
        invocables.produce_invoker( read_file ) ] )
    only_read = wrappers.FilteredEnsemble( pinned, include = 'read_*' )
    async with only_read:
        content = await only_read.invoke( 'read_file', { 'path': 'x' } )
    assert content[ 0 ].text == 'read x'


@pytest.mark.asyncio
async def test_500_produce_wrapped( ):
    ''' Options filter by inner names, then rename; none: the inner. '''
    files = _produce_files( )
    assert wrappers.produce_wrapped_ensemble( files ) is files
    wrapped = wrappers.produce_wrapped_ensemble(
        files, include = [ 'read_*', 'write_*' ], exclude = 'write_*',
        prefix = 'f_', rename = { 'read_file': 'read' } )
    assert _names( wrapped ) == [ 'f_read' ]


@pytest.mark.asyncio
async def test_600_mcp_server_wrapped( ):
    ''' A real MCP server, filtered to read-only tools and prefixed. '''
    server = invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ) )
    wrapped = wrappers.produce_wrapped_ensemble(
        server, annotations = { 'readOnlyHint': True }, prefix = 'e_' )
    async with wrapped:
        assert server.is_connected( )
        names = _names( wrapped )
        assert 'e_echo' in names
        assert 'e_boom' not in names
        invocation = invocables.InvocationCanister(
            identifier = 'c1', name = 'e_echo',
            arguments = { 'message': 'hi' } )
        results = await invocables.execute_invocations(
            [ invocation ], [ wrapped ] )
        assert results[ 0 ].content[ 0 ].text == 'hi'
        pinned = wrappers.produce_pinned_ensemble( wrapped )
        assert _names( pinned ) == names
    assert not server.is_connected( )
