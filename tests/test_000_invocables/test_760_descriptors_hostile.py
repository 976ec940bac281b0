# SPDX-License-Identifier: Apache-2.0

''' Descriptors and configurations which cannot live in the corpus: pipes,
    huge files, modules written for one test, mappings of Python objects.
'''


import os
import subprocess
import sys
import textwrap

from pathlib import Path

import pytest

from absence import is_absent

import invocables
from invocables import descriptors

from invocables import exceptions

from . import descriptors_support as support


def _write_module( folder: Path, name: str, text: str ) -> None:
    ( folder / f"{name}.py" ).write_text( textwrap.dedent( text ) )


def _load_in_process( path: Path ) -> subprocess.CompletedProcess[ str ]:
    ''' Loads configuration in a child process, which a hang cannot stop
        the tests with.
    '''
    code = (
        "import sys\n"
        "from invocables import descriptors, exceptions\n"
        "try: descriptors.produce_configuration( sys.argv[ 1 ] )\n"
        "except exceptions.DescriptorInvalidity as error:\n"
        "    print( error.keypath, '|', error.reason )\n" )
    return subprocess.run(
        [ sys.executable, '-c', code, str( path ) ],
        capture_output = True, text = True, timeout = 60, check = False,
        env = { **os.environ, 'PYTHONPATH': str( support.TESTS ) } )


def test_100_pipe_configuration_refused( tmp_path ):
    ''' A pipe given as configuration, or named as source, is refused at
        once; loading never waits for a writer.
    '''
    os.mkfifo( tmp_path / 'invocables.toml' )
    process = _load_in_process( tmp_path / 'invocables.toml' )
    assert process.returncode == 0, process.stderr
    assert process.stdout.startswith( ' | not a regular file' )
    ( tmp_path / 'invocables.toml' ).unlink( )
    path = support.write_sample( tmp_path )
    ( tmp_path / 'sample.toml' ).unlink( )
    os.mkfifo( tmp_path / 'sample.toml' )
    process = _load_in_process( path )
    assert process.returncode == 0, process.stderr
    assert process.stdout.startswith( 'ensembles[0].source | ' )
    assert 'not a regular file' in process.stdout


def test_110_huge_file_refused( tmp_path ):
    ''' A descriptor larger than the limit is refused without being read
        whole.
    '''
    path = tmp_path / 'invocables.toml'
    with path.open( 'wb' ) as stream:
        stream.truncate( descriptors.SIZE_MAXIMUM + 1 )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( path )
    assert caught.value.location == str( path )
    assert 'larger than' in caught.value.reason


def test_120_byte_order_mark_accepted( tmp_path ):
    ''' Files which start with a UTF-8 byte order mark load. '''
    path = support.write_sample( tmp_path )
    for name in ( 'invocables.toml', 'sample.toml', 'sample/echo.toml' ):
        text = ( tmp_path / name ).read_text( )
        ( tmp_path / name ).write_text( '\ufeff' + text, encoding = 'utf-8' )
    configuration = descriptors.produce_configuration( path )
    assert configuration.ensembles[ 0 ].name == 'sample'
    ( tmp_path / 'mcp.json' ).write_text(
        '\ufeff{ "mcpServers": { "time": { "command": "x" } } }' )
    servers = descriptors.produce_server_descriptors( tmp_path / 'mcp.json' )
    assert servers[ 0 ].name == 'time'


def test_130_folder_configuration_refused( tmp_path ):
    ''' A folder given as configuration or as mcpServers file is refused. '''
    for load in (
        descriptors.produce_configuration,
        descriptors.produce_server_descriptors,
    ):
        with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
            load( tmp_path )
        assert 'not a regular file' in caught.value.reason


@pytest.mark.asyncio
async def test_200_disabled_modules_not_imported( tmp_path, monkeypatch ):
    ''' Modules named by disabled ensembles or invokers are not imported;
        enabling the ensemble later imports them then.
    '''
    import dataclasses
    monkeypatch.syspath_prepend( str( tmp_path ) )
    for name in ( 'invocables_test_disabled', 'invocables_test_off' ):
        _write_module( tmp_path, name, '''
            import sys
            sys.exit( 'imported' )
            ''' )
    tool = support.ECHO.replace(
        f"{support.MODULE}:echo", 'invocables_test_disabled:run' )
    off = support.ECHO.replace(
        f"{support.MODULE}:echo", 'invocables_test_off:run' ).replace(
            "name = 'echo'", "name = 'off'\n    enabled = false" )
    path = support.write_sample( tmp_path, configuration = '''
        [[ensembles]]
        source = 'sample.toml'
        enabled = false

        [[ensembles]]
        source = 'other.toml'
        ''', **{
            'sample/echo.toml': tool,
            'other.toml': '''
                [ensemble]
                name = 'other'

                [[invokers]]
                source = 'other/off.toml'

                [[invokers]]
                source = 'other/shout.toml'
                ''',
            'other/off.toml': off,
            'other/shout.toml': support.SHOUT,
        } )
    configuration = descriptors.produce_configuration( path )
    ensembles = await descriptors.prepare_ensembles( configuration )
    assert [ ensemble.name for ensemble in ensembles ] == [ 'other' ]
    assert [ invoker.name for invoker in ensembles[ 0 ].survey_invokers( ) ] == [
        'shout' ]
    assert 'invocables_test_disabled' not in sys.modules
    assert 'invocables_test_off' not in sys.modules
    descriptor = configuration.access_ensemble( 'sample' )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_ensemble(
            dataclasses.replace( descriptor, enabled = True ) )
    assert caught.value.keypath == 'invoker.implementation'
    assert 'SystemExit' in caught.value.reason


@pytest.mark.asyncio
async def test_210_disabled_then_enabled_imports( tmp_path ):
    ''' A disabled ensemble, enabled by the application, imports its
        implementations when produced.
    '''
    import dataclasses
    path = support.write_sample( tmp_path, configuration = '''
        [[ensembles]]
        source = 'sample.toml'
        enabled = false
        ''' )
    configuration = descriptors.produce_configuration( path )
    descriptor = configuration.access_ensemble( 'sample' )
    assert all(
        is_absent( invoker.function ) for invoker in descriptor.invokers )
    ensemble = descriptors.produce_ensemble(
        dataclasses.replace( descriptor, enabled = True ) )
    async with ensemble:
        results = await invocables.execute_invocations( [
            invocables.InvocationCanister(
                identifier = 'c', name = 'echo',
                arguments = { 'text': 'hi' } ) ], [ ensemble ] )
    assert results[ 0 ].as_text( ) == 'hi'


@pytest.mark.asyncio
async def test_220_awaitable_callable_implementation( tmp_path ):
    ''' An object whose call returns a coroutine is awaited. '''
    tool = support.ECHO.replace(
        f"{support.MODULE}:echo", f"{support.MODULE}:whisper" )
    path = support.write_sample( tmp_path, **{ 'sample/echo.toml': tool } )
    ensembles = await descriptors.prepare_ensembles( path, connect = True )
    results = await invocables.execute_invocations( [
        invocables.InvocationCanister(
            identifier = 'c', name = 'echo', arguments = { 'text': 'HI' } )
    ], ensembles )
    assert results[ 0 ].as_text( ) == 'hi'


@pytest.mark.parametrize( 'mapping, keypath, fragment', [
    ( { 1: 'x' }, '', 'is not a string' ),
    ( { 'ensembles': [ { 'builtin': 'io', 2: 3 } ] }, 'ensembles[0]',
      'is not a string' ),
    ( { 'roots': [ { 'path': 'a\x00b' } ] }, 'roots[0].path', 'not valid' ),
    ( { 'ensembles': [ { 'builtin': 'io', 'configuration': {
        'x': '\ud800' } } ] }, 'ensembles[0].configuration.x',
      'half of a UTF-16 pair' ),
    ( { 'ensembles': [ { 'builtin': 'i0' } ] }, 'ensembles[0].builtin',
      "no built-in ensemble 'i0'" ),
    ( { 'ensembles': [ { 'source': 3 } ] }, 'ensembles[0].source',
      'expected a string holding a path' ),
] )
def test_300_mappings_refused( mapping, keypath, fragment ):
    ''' Configurations given as mappings get the checks of files. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( mapping )
    assert caught.value.location == descriptors.LOCATION_MAPPING
    assert caught.value.keypath == keypath
    assert fragment in caught.value.reason


def test_310_deep_and_cyclic_mappings_refused( ):
    ''' Mappings nested too deeply, even cyclic ones, are refused. '''
    deep: dict[ str, object ] = { }
    inner = deep
    for _ in range( 5000 ):
        inner[ 'a' ] = { }
        inner = inner[ 'a' ]
    cyclic: dict[ str, object ] = { 'builtin': 'io' }
    cyclic[ 'configuration' ] = cyclic
    for mapping in (
        { 'ensembles': [ { 'builtin': 'io', 'configuration': deep } ] },
        { 'ensembles': [ cyclic ] },
    ):
        with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
            descriptors.produce_configuration( mapping )
        assert 'deeper than 64 levels' in caught.value.reason
    servers = { 'mcpServers': { 's': { 'command': 'x', 'env': deep } } }
    with pytest.raises( exceptions.DescriptorInvalidity ):
        descriptors.produce_server_descriptors( servers )


def test_320_sources_of_wrong_type_refused( ):
    ''' A configuration which is neither a path nor a mapping is refused. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( 42 ) # type: ignore[arg-type]
    assert 'expected the path of a descriptor file' in caught.value.reason


def test_330_unknown_home_refused( ):
    ''' A path with a home folder which cannot be found is refused. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( '~no-such-user-of-invocables/x' )
    assert 'cannot expand' in caught.value.reason


def test_340_server_mapping_names_refused( ):
    ''' Server names of a mapping which are not strings are refused. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_server_descriptors(
            { 'mcpServers': { 7: { 'command': 'x' } } } )
    assert 'is not a string' in caught.value.reason or (
        'is not allowed' in caught.value.reason )
