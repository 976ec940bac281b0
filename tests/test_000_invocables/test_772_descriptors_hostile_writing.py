# SPDX-License-Identifier: Apache-2.0

''' Hostile descriptors, written: tool names whose files would clash
    where case is not told apart, device names which Windows reserves,
    folders where files go, folder arguments which name no folder.
'''


from pathlib import Path
from typing import Any

import pytest

import invocables
from invocables import descriptors

from invocables import exceptions

from . import descriptors_support as support


def _produce_ensemble(
    names: list[ str ], name: str = 'local'
) -> invocables.LocalEnsemble:
    ''' Returns ensemble of echo tools of names. '''
    echo: Any = getattr( support, 'echo' )
    invokers = [
        descriptors.DescriptorInvoker( descriptors.InvokerDescriptor(
            name = tool, location = 'memory',
            implementation = f"{support.MODULE}:echo",
            function = echo ) )
        for tool in names ]
    return invocables.LocalEnsemble(
        name, invokers, invocables.EnsembleConfiguration( ) )


def _survey_files( folder: Path ) -> list[ str ]:
    return sorted(
        str( path.relative_to( folder ) ) for path in folder.rglob( '*' ) )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'names', [
    [ 'Echo', 'echo' ], [ '1x', '_1x' ], [ 'a', 'A', 'b' ],
] )
async def test_100_names_distinct_in_any_case( tmp_path: Path, names: Any ):
    ''' Tools whose safe names differ only by case (one file on Windows and
        macOS) or are equal (``1x`` becomes ``_1x``) get files distinct in
        any case, and load back with their names.
    '''
    ensemble = _produce_ensemble( names )
    documents = descriptors.produce_documents( ensemble )
    folded = [ path.casefold( ) for path in documents ]
    assert len( set( folded ) ) == len( names ) + 1
    written = descriptors.create_descriptors( ensemble, tmp_path )
    copy = descriptors.produce_ensemble(
        descriptors.produce_ensemble_descriptor( written ) )
    assert sorted( invoker.name for invoker in copy.survey_invokers( ) ) == (
        sorted( names ) )


@pytest.mark.parametrize( 'name', [ 'con', 'CON', 'aux', 'Nul', 'com1' ] )
def test_110_reserved_device_names_avoided( name: str ):
    ''' No file is named after a device which Windows reserves, neither an
        ensemble's nor a tool's.
    '''
    documents = descriptors.produce_documents(
        _produce_ensemble( [ name ], name ) )
    reserved = { 'con', 'aux', 'nul', 'com1' }
    for path in documents:
        for part in Path( path ).parts:
            assert part.split( '.' )[ 0 ].casefold( ) not in reserved, path
    assert descriptors.access_descriptor_path( name ) == next(
        iter( documents ) )


@pytest.mark.parametrize( 'place', [
    'local.toml', 'local/invokers/echo.toml' ] )
def test_200_folder_in_place_of_file_writes_nothing(
    tmp_path: Path, place: str
):
    ''' A folder where a descriptor goes is a descriptor error, raised
        before anything is written: not the ensemble's invokers without
        the ensemble file.
    '''
    ( tmp_path / place ).mkdir( parents = True )
    before = _survey_files( tmp_path )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.create_descriptors(
            _produce_ensemble( [ 'echo' ] ), tmp_path, replace = True )
    assert caught.value.location == str( tmp_path / place )
    assert _survey_files( tmp_path ) == before


def test_210_unwritable_places_refused( tmp_path: Path ):
    ''' A folder which is a file, and an ensemble's folder which is a file,
        are descriptor errors, not raw errors of the file system.
    '''
    ( tmp_path / 'file' ).write_text( 'kept' )
    with pytest.raises( exceptions.DescriptorInvalidity ):
        descriptors.create_descriptors(
            _produce_ensemble( [ 'echo' ] ), tmp_path / 'file' )
    assert ( tmp_path / 'file' ).read_text( ) == 'kept'
    ( tmp_path / 'out' ).mkdir( )
    ( tmp_path / 'out' / 'local' ).write_text( 'kept' )
    with pytest.raises( exceptions.DescriptorInvalidity ):
        descriptors.create_descriptors(
            _produce_ensemble( [ 'echo' ] ), tmp_path / 'out' )
    assert _survey_files( tmp_path / 'out' ) == [ 'local' ]


def test_220_folders_within_invokers_kept( tmp_path: Path ):
    ''' Replacing deletes stale descriptors, never a folder among them. '''
    kept = tmp_path / 'local' / 'invokers' / 'kept.toml'
    kept.mkdir( parents = True )
    descriptors.create_descriptors(
        _produce_ensemble( [ 'echo' ] ), tmp_path, replace = True )
    assert kept.is_dir( )
    assert ( tmp_path / 'local' / 'invokers' / 'echo.toml' ).is_file( )


@pytest.mark.parametrize( 'folder', [ None, 3, 'a\x00b' ] )
def test_230_folder_arguments_refused( folder: Any ):
    ''' A folder argument which is no path is a descriptor error. '''
    with pytest.raises( exceptions.DescriptorInvalidity ):
        descriptors.create_descriptors(
            _produce_ensemble( [ 'echo' ] ), folder )


@pytest.mark.parametrize( 'first, second', [
    ( '1x', '_1x' ), ( '-x', '_-x' ) ] )
def test_300_replacing_another_ensemble_refused(
    tmp_path: Path, first: str, second: str
):
    ''' Replacing refuses an ensemble file which describes another
        ensemble whose name gives the same file name: its descriptors are
        neither overwritten nor deleted as stale.
    '''
    written = descriptors.create_descriptors(
        _produce_ensemble( [ 'echo' ], first ), tmp_path )
    before = { path: path.read_text( ) for path in tmp_path.rglob( '*.toml' ) }
    assert descriptors.access_descriptor_path( second ) == written.name
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.create_descriptors(
            _produce_ensemble( [ 'other' ], second ), tmp_path,
            replace = True )
    assert caught.value.location == str( written )
    assert repr( first ) in caught.value.reason
    assert { path: path.read_text( )
             for path in tmp_path.rglob( '*.toml' ) } == before
    descriptors.create_descriptors(
        _produce_ensemble( [ 'other' ], first ), tmp_path, replace = True )
    copy = descriptors.produce_ensemble_descriptor( written )
    assert [ item.name for item in copy.invokers ] == [ 'other' ]


def test_400_secrets_never_share_a_variable( ):
    ''' Literal secrets whose keys differ only by case or unsafe
        characters are written as references to distinct variables:
        setting one never gives its value to another.
    '''
    entries = descriptors.produce_server_descriptors( { 'mcpServers': {
        'a.b': {
            'url': 'http://127.0.0.1/mcp?token=one&TOKEN=two',
            'headers': { 'X-Api-Key': 'three', 'X_Api_Key': 'four' },
        } } } )
    with pytest.warns( exceptions.SecretReferenceWarning ):
        documents = descriptors.produce_documents(
            _produce_ensemble( [ 'echo' ], 'a.b' ),
            server = entries[ 0 ].server )
    table = documents[ descriptors.access_descriptor_path( 'a.b' ) ][ 'mcp' ]
    references = [
        *table[ 'headers' ].values( ),
        *( item.split( '=' )[ 1 ]
           for item in table[ 'url' ].split( '?' )[ 1 ].split( '&' ) ) ]
    assert all( item.startswith( 'env:' ) for item in references )
    assert len( set( references ) ) == 4
