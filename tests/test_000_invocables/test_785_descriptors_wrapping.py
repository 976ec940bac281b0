# SPDX-License-Identifier: Apache-2.0

''' ``include``, ``exclude``, ``prefix`` and ``rename`` of ensemble
    entries in configurations.
'''


import json

import pytest

import invocables

from invocables import descriptors, exceptions

from . import mcp_support


def _names( ensemble ):
    return [ invoker.name for invoker in ensemble.survey_invokers( ) ]


@pytest.mark.asyncio
async def test_100_builtin_filtered_and_renamed( tmp_path ):
    ''' The io tools, filtered by globs, prefixed and renamed, run. '''
    ( tmp_path / 'note.txt' ).write_text( 'hello\n', encoding = 'utf-8' )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\n"
        "builtin = 'io'\n"
        "include = [ 'read_*', 'list_*', 'write_file' ]\n"
        "exclude = 'write_*'\n"
        "prefix = 'fs_'\n"
        "rename = { read_file = 'cat' }\n"
        "[[roots]]\npath = '.'\n", encoding = 'utf-8' )
    ensembles = await descriptors.prepare_ensembles(
        tmp_path / 'invocables.toml' )
    ( io, ) = ensembles
    assert io.name == 'io'
    assert _names( io ) == [ 'fs_list_roots', 'fs_list_directory', 'fs_cat' ]
    async with io:
        content = await io.invoke(
            'fs_cat', { 'path': str( tmp_path / 'note.txt' ) } )
    assert 'hello' in content[ 0 ].text


def test_110_mapping_with_single_pattern( ):
    ''' A configuration mapping takes a single glob as a string. '''
    configuration = descriptors.produce_configuration( {
        'ensembles': [ { 'builtin': 'io', 'include': 'read_file' } ] } )
    assert configuration.ensembles[ 0 ].wrapping[ 'include' ] == (
        'read_file', )


@pytest.mark.parametrize( ( 'entry', 'keypath' ), [
    ( { 'include': [ 1 ] }, 'include[0]' ),
    ( { 'exclude': 3 }, 'exclude' ),
    ( { 'prefix': 3 }, 'prefix' ),
    ( { 'rename': { 'read_file': 'has\ttab' } }, 'rename.read_file' ),
    ( { 'rename': { 'read_file': 2 } }, 'rename.read_file' ),
] )
def test_200_invalid_entries( entry, keypath ):
    ''' Wrong values are refused with the key path of the entry. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( {
            'ensembles': [ { 'builtin': 'io', **entry } ] } )
    assert keypath in str( caught.value )


@pytest.mark.asyncio
async def test_300_mcp_servers_entry_wrapped( tmp_path ):
    ''' Every server of an mcpServers file is filtered and prefixed. '''
    command = mcp_support.produce_server_command( 'echo_server.py' )
    ( tmp_path / 'mcp.json' ).write_text( json.dumps( { 'mcpServers': {
        'echo': { 'command': command[ 0 ], 'args': command[ 1 : ] } } } ),
        encoding = 'utf-8' )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'mcp.json'\n"
        "include = [ 'echo*' ]\nprefix = 'e_'\n", encoding = 'utf-8' )
    ( echo, ) = await descriptors.prepare_ensembles(
        tmp_path / 'invocables.toml' )
    async with echo:
        assert _names( echo ) == [ 'e_echo', 'e_echo_structured' ]
        invocation = invocables.InvocationCanister(
            identifier = 'c1', name = 'e_echo',
            arguments = { 'message': 'hi' } )
        results = await invocables.execute_invocations(
            [ invocation ], [ echo ] )
    assert results[ 0 ].content[ 0 ].text == 'hi'
