# SPDX-License-Identifier: Apache-2.0

''' Descriptors as the design documents write them; prepare_ensembles.

    Each test names the document it follows. The TOML files under
    ``tests/data/seeds/`` are the documents' own (see its INDEX.md).
'''


import shutil
import sys

from pathlib import Path

import pytest

import invocables

from invocables import descriptors
from invocables import exceptions

from . import mcp_support
from . import seeds_support


_SEEDS = Path( __file__ ).resolve( ).parents[ 1 ] / 'data' / 'seeds'


def _copy_seeds( tmp_path, document ):
    folder = tmp_path / document
    shutil.copytree( _SEEDS / document, folder )
    return folder


def _call( name, arguments, identifier = 'call_1' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


def test_100_read_file_descriptor_verbatim( ):
    ''' 000 Invoker descriptor example: read_file.toml, with no
        implementation key, loads as written.
    '''
    descriptor = descriptors.produce_invoker_descriptor(
        _SEEDS / '000' / 'io' / 'invokers' / 'read_file.toml' )
    assert descriptor.name == 'read_file'
    assert descriptor.enabled
    assert descriptor.description == 'Reads contents of a file'
    assert descriptor.argschema[ 'required' ] == [ 'path' ]
    assert descriptor.argschema[ 'properties' ][ 'encoding' ][
        'default' ] == 'utf-8'


@pytest.mark.asyncio
async def test_110_io_ensemble_verbatim_with_implementation_in_entry(
    tmp_path
):
    ''' 000 Ensemble descriptor example: io.toml as written loads when the
        configuration entry names the module implementing its tools;
        [defaults] timeout and max_retries become the ensemble's
        configuration; its tools run.
    '''
    folder = _copy_seeds( tmp_path, '000' )
    configuration = { 'ensembles': [ {
        'source': str( folder / 'io.toml' ),
        'implementation': seeds_support.MODULE } ] }
    async with descriptors.prepare_ensembles( configuration ) as ensembles:
        ensemble = ensembles[ 0 ]
        assert ensemble.name == 'io'
        assert ensemble.configuration[ 'timeout' ] == 30
        assert ensemble.configuration[ 'max_retries' ] == 3
        assert list( ensemble.invokers ) == [ 'read_file', 'write_file' ]
        invoker = ensemble.access_invoker( 'read_file' )
        assert invoker.arguments_schema[ 'required' ] == [ 'path' ]
        target = tmp_path / 'note.txt'
        target.write_text( 'hello' )
        results = await invocables.execute_invocations(
            [ _call( 'read_file', { 'path': str( target ) } ) ], ensembles )
        assert results[ 0 ].as_text( ) == 'hello'


def test_120_ensemble_level_implementation( tmp_path ):
    ''' 000 io.toml with an ensemble-level implementation = 'package.module'
        (functions named after the tools); a per-invoker implementation
        still overrides it.
    '''
    folder = _copy_seeds( tmp_path, '000' )
    path = folder / 'io.toml'
    path.write_text( path.read_text( ).replace(
        'enabled = true\n',
        f"enabled = true\nimplementation = '{seeds_support.MODULE}'\n", 1 ) )
    writer = folder / 'io' / 'invokers' / 'write_file.toml'
    writer.write_text( writer.read_text( ).replace(
        'enabled = true\n',
        "enabled = true\nimplementation = "
        f"'{seeds_support.MODULE}:read_file'\n", 1 ) )
    descriptor = descriptors.produce_ensemble_descriptor( path )
    assert descriptor.implementation == seeds_support.MODULE
    assert descriptor.max_retries == 3
    functions = {
        item.name: item.function for item in descriptor.invokers }
    assert functions[ 'read_file' ] is seeds_support.read_file
    assert functions[ 'write_file' ] is seeds_support.read_file


def test_130_inline_invokers_of_document_001( tmp_path ):
    ''' 001 Ensemble configuration example: inline [[invokers]] entries
        with name, enabled and description load (the module implementing
        them given by the configuration entry).
    '''
    folder = _copy_seeds( tmp_path, '001' )
    configuration = descriptors.produce_configuration( { 'ensembles': [ {
        'source': str( folder / 'io.toml' ),
        'implementation': seeds_support.MODULE } ] } )
    ensemble = configuration.ensembles[ 0 ]
    assert [ item.name for item in ensemble.invokers ] == [
        'read_file', 'write_file' ]
    assert ensemble.invokers[ 0 ].description == 'Read contents of a file'
    assert ensemble.invokers[ 1 ].function is seeds_support.write_file
    assert ensemble.invokers[ 0 ].argschema[ 'type' ] == 'object'


def test_140_missing_implementation_explained( tmp_path ):
    ''' 000 io.toml with no implementation anywhere is refused, saying
        both places where one may be given.
    '''
    folder = _copy_seeds( tmp_path, '000' )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_ensemble_descriptor( folder / 'io.toml' )
    reason = caught.value.reason
    assert "'package.module:function'" in reason
    assert '[ensemble]' in reason


def test_150_invalid_defaults_refused( tmp_path ):
    ''' 000 [defaults] max_retries must be a whole number from 0. '''
    folder = _copy_seeds( tmp_path, '000' )
    path = folder / 'io.toml'
    path.write_text( path.read_text( ).replace(
        'max_retries = 3', 'max_retries = -1' ) )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( { 'ensembles': [ {
            'source': str( path ),
            'implementation': seeds_support.MODULE } ] } )
    assert 'max_retries' in caught.value.keypath


def test_160_shipped_io_descriptor_in_documents_shape( ):
    ''' 000 data/ensembles/io.toml: the shipped descriptor has the
        documents' shape (an [ensemble] with enabled and an implementation
        module, [defaults] timeout and max_retries, [[invokers]] sources
        whose descriptors name no implementation).
    '''
    if sys.version_info >= ( 3, 11 ): import tomllib
    else: import tomli as tomllib
    folder = descriptors.access_data_location( ) / 'ensembles'
    document = tomllib.loads( ( folder / 'io.toml' ).read_text( ) )
    assert document[ 'ensemble' ][ 'enabled' ] is True
    assert document[ 'ensemble' ][ 'implementation' ] == (
        'invocables.builtins.io' )
    assert set( document[ 'defaults' ] ) == { 'timeout', 'max_retries' }
    for entry in document[ 'invokers' ]:
        invoker = tomllib.loads( ( folder / entry[ 'source' ] ).read_text( ) )
        assert 'implementation' not in invoker[ 'invoker' ]
    configuration = descriptors.produce_configuration(
        { 'ensembles': [ { 'builtin': 'io' } ] } )
    ensemble = configuration.ensembles[ 0 ]
    assert ensemble.timeout == 30
    assert len( ensemble.invokers ) == len( document[ 'invokers' ] )


@pytest.mark.asyncio
async def test_200_prepare_ensembles_connects( tmp_path ):
    ''' 000 Configuration Loading: prepare_ensembles( configuration ) gives
        connected ensembles; the context manager form disconnects them all.
    '''
    ensembles = await invocables.prepare_ensembles(
        { 'ensembles': [ { 'builtin': 'io' } ] } )
    assert all( ensemble.is_connected( ) for ensemble in ensembles )
    for ensemble in ensembles: await ensemble.disconnect( )
    async with invocables.prepare_ensembles(
        { 'ensembles': [ { 'builtin': 'io' } ] }
    ) as ensembles:
        assert ensembles[ 0 ].is_connected( )
    assert not ensembles[ 0 ].is_connected( )


@pytest.mark.asyncio
async def test_210_prepare_ensembles_mcp_offers_tools( tmp_path ):
    ''' 000 Ensemble Lifecycle Management: an MCP ensemble from
        prepare_ensembles offers its tools at once (no "Unknown tool"), and
        is disconnected by the context manager form.
    '''
    command = mcp_support.produce_server_command( 'echo_server.py' )
    path = tmp_path / 'echo.toml'
    path.write_text(
        "[ensemble]\nname = 'echo'\n\n[mcp]\ncommand = [ {items} ]\n".format(
            items = ', '.join( repr( item ) for item in command ) ) )
    configuration = { 'ensembles': [ { 'source': str( path ) } ] }
    async with invocables.prepare_ensembles( configuration ) as ensembles:
        results = await invocables.execute_invocations(
            [ _call( 'echo', { 'message': 'hi' } ) ], ensembles )
        assert results[ 0 ].as_text( ) == 'hi'
        assert 'echo' in ensembles[ 0 ].invokers
    assert not ensembles[ 0 ].is_connected( )
