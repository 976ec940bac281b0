# SPDX-License-Identifier: Apache-2.0

''' Descriptors written back: load, write, load gives the same ensemble. '''


import dataclasses
import json
import tempfile

from pathlib import Path

import pytest

from hypothesis import example, given, settings, strategies

import invocables
from invocables import descriptors

from invocables import exceptions

from . import descriptors_support as support
from . import mcp_support


def _describe( ensemble ):
    ''' Returns what must survive a round trip, as plain values. '''
    invokers = [ {
        'name': invoker.name,
        'description': invoker.description,
        'arguments_schema': json.loads(
            json.dumps( dict( invoker.arguments_schema ) ) ),
        'outschema': (
            None if invoker.outschema is invocables.__.absent
            else json.loads( json.dumps( dict( invoker.outschema ) ) ) ),
        'timeout': invoker.timeout,
        'deduplicate': invoker.deduplicator is not invocables.__.absent,
        'annotations': dict( invoker.annotations ),
        'implementation': getattr( invoker, 'implementation', None ),
        'configuration': dict( getattr( invoker, 'configuration', { } ) ),
    } for invoker in ensemble.survey_invokers( ) ]
    return {
        'name': ensemble.name,
        'description': ensemble.configuration.description,
        'timeout': ensemble.configuration.timeout,
        'invokers': invokers,
    }


async def _reload( path ):
    ensembles = await descriptors.prepare_ensembles(
        { 'ensembles': [ { 'source': path } ] } )
    return ensembles[ 0 ]


@pytest.mark.asyncio
async def test_100_local_round_trip( tmp_path ):
    ''' Local ensemble survives load, write, load. '''
    path = support.write_sample( tmp_path / 'original' )
    original = ( await descriptors.prepare_ensembles( path ) )[ 0 ]
    written = descriptors.create_descriptors( original, tmp_path / 'copy' )
    assert written == tmp_path / 'copy' / 'sample.toml'
    copy = await _reload( written )
    assert _describe( copy ) == _describe( original )
    again = descriptors.create_descriptors(
        copy, tmp_path / 'again', replace = True )
    assert again.read_text( ) == written.read_text( )


@pytest.mark.asyncio
async def test_110_builtin_round_trip( tmp_path ):
    ''' Built-in io ensemble survives load, write, load. '''
    original = ( await descriptors.prepare_ensembles(
        { 'ensembles': [ { 'builtin': 'io' } ] } ) )[ 0 ]
    written = descriptors.create_descriptors( original, tmp_path )
    copy = await _reload( written )
    assert _describe( copy ) == _describe( original )
    invocation = invocables.InvocationCanister(
        identifier = 'a', name = 'list_roots', arguments = { } )
    results = await invocables.execute_invocations( [ invocation ], [ copy ] )
    assert '(read-only)' in results[ 0 ].as_text( )


@pytest.mark.asyncio
async def test_120_nulls_and_unbounded_timeout( tmp_path ):
    ''' Schemas with nulls and unbounded timeouts survive, as JSON text. '''
    schema = {
        'type': 'object',
        'properties': { 'text': { 'type': [ 'string', 'null' ],
                                  'default': None } } }
    text = json.dumps( json.dumps( schema ) )
    sample = support.SAMPLE.replace( 'timeout = 12.5', 'timeout = inf' )
    path = support.write_sample( tmp_path / 'original', **{
        'sample.toml': sample,
        'sample/echo.toml': f'''
            arguments = {text}

            [invoker]
            name = 'echo'
            implementation = '{support.MODULE}:echo'
            timeout = inf
            ''' } )
    original = ( await descriptors.prepare_ensembles( path ) )[ 0 ]
    written = descriptors.create_descriptors( original, tmp_path / 'copy' )
    copy = await _reload( written )
    assert _describe( copy ) == _describe( original )
    assert copy.configuration.timeout is None
    assert copy.access_invoker( 'echo' ).arguments_schema == schema


def test_130_documents( tmp_path ):
    ''' Documents map relative paths to TOML tables, ensemble first. '''
    path = support.write_sample( tmp_path )
    configuration = descriptors.produce_configuration( path )
    ensemble = descriptors.produce_ensemble( configuration.ensembles[ 0 ] )
    documents = descriptors.produce_documents( ensemble )
    paths = list( documents )
    assert paths[ 0 ] == 'sample.toml'
    assert paths[ 1 : ] == [
        'sample/invokers/echo.toml', 'sample/invokers/shout.toml',
        'sample/invokers/show_configuration.toml' ]
    main = documents[ 'sample.toml' ]
    assert main[ 'ensemble' ] == {
        'name': 'sample', 'description': 'Sample tools.' }
    assert main[ 'defaults' ] == { 'timeout': 12.5 }
    assert main[ 'configuration' ] == { 'greeting': 'hello', 'limit': 3 }
    shout = documents[ 'sample/invokers/shout.toml' ]
    assert shout[ 'invoker' ][ 'deduplicate' ] is True
    assert shout[ 'results' ] == { 'type': 'object', 'properties': { } }


def test_140_python_tools_refused( tmp_path ):
    ''' Tools made from Python functions have no import path to write. '''
    ensemble = invocables.produce_ensemble( 'math', [ support.echo ] )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.create_descriptors( ensemble, tmp_path )
    assert 'import path is unknown' in caught.value.reason
    assert not ( tmp_path / 'math.toml' ).exists( )


@pytest.mark.asyncio
async def test_150_replace( tmp_path ):
    ''' Existing descriptors are kept unless replacing; stale ones go. '''
    path = support.write_sample( tmp_path / 'original' )
    original = ( await descriptors.prepare_ensembles( path ) )[ 0 ]
    folder = tmp_path / 'copy'
    descriptors.create_descriptors( original, folder )
    stale = folder / 'sample' / 'invokers' / 'old.toml'
    stale.write_text( '' )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.create_descriptors( original, folder )
    assert 'exists already' in caught.value.reason
    assert stale.exists( )
    descriptors.create_descriptors( original, folder, replace = True )
    assert not stale.exists( )
    leftovers = [
        item for item in folder.rglob( '*' ) if item.name.endswith( '.tmp' ) ]
    assert leftovers == [ ]


def _produce_local_ensemble( name = 'local', **fields ):
    ''' Returns ensemble of one descriptor invoker with given fields. '''
    descriptor = descriptors.InvokerDescriptor(
        name = 'echo', location = 'memory',
        implementation = f"{support.MODULE}:echo", function = support.echo,
        ** fields )
    # The lenient constructor: produce_ensemble refuses unsafe names itself.
    return invocables.LocalEnsemble(
        name, [ descriptors.DescriptorInvoker( descriptor ) ],
        invocables.EnsembleConfiguration( ) )


def _survey_files( folder ):
    return sorted(
        str( path.relative_to( folder ) ) for path in folder.rglob( '*' ) )


def test_160_unloadable_descriptors_write_nothing( tmp_path ):
    ''' Descriptors which would not load (a schema nested deeper than the
        limit, text which is not Unicode) are refused before anything is
        written.
    '''
    schema = { 'type': 'object' }
    for _ in range( 40 ):
        schema = { 'type': 'object', 'properties': { 'a': schema } }
    folder = tmp_path / 'out'
    folder.mkdir( )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.create_descriptors(
            _produce_local_ensemble( argschema = schema ), folder )
    assert 'deeper than 64 levels' in caught.value.reason
    assert caught.value.location == str(
        folder / 'local' / 'invokers' / 'echo.toml' )
    assert _survey_files( folder ) == [ ]
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.create_descriptors(
            _produce_local_ensemble( description = 'bad \ud800' ), folder )
    assert 'not Unicode' in caught.value.reason
    assert _survey_files( folder ) == [ ]


@pytest.mark.asyncio
@pytest.mark.parametrize( 'name', [
    '../escape', 'io.github.owner/server', 'My Server', 'math.tools',
] )
async def test_170_ensemble_names_kept_files_safe( tmp_path, name ):
    ''' An ensemble named as real tool sets name them (a registry name, a
        path) is written under a safe file name inside the folder, never
        outside it, and loads back with its real name.
    '''
    folder = tmp_path / 'out'
    folder.mkdir( )
    written = descriptors.create_descriptors(
        _produce_local_ensemble( name = name ), folder )
    assert written.parent == folder
    assert written.name == descriptors.access_descriptor_path( name )
    assert all(
        path.startswith( 'out' ) for path in _survey_files( tmp_path ) )
    copy = await _reload( written )
    assert copy.name == name


@pytest.mark.asyncio
async def test_180_invokers_folder_link_out_refused( tmp_path ):
    ''' Replacing never deletes files through a folder linked out. '''
    path = support.write_sample( tmp_path / 'original' )
    original = ( await descriptors.prepare_ensembles( path ) )[ 0 ]
    outside = tmp_path / 'outside'
    outside.mkdir( )
    ( outside / 'precious.toml' ).write_text( 'kept = true\n' )
    folder = tmp_path / 'copy'
    ( folder / 'sample' ).mkdir( parents = True )
    ( folder / 'sample' / 'invokers' ).symlink_to( outside )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.create_descriptors( original, folder, replace = True )
    assert 'symbolic link' in caught.value.reason
    assert ( outside / 'precious.toml' ).read_text( ) == 'kept = true\n'


@pytest.mark.slow
@pytest.mark.asyncio
async def test_200_server_round_trip( tmp_path, monkeypatch ):
    ''' MCP server snapshot pins the discovered tools; they still run. '''
    server = mcp_support.access_time_server( )
    assert server.exists( ), "install the test extra (mcp-server-time)"
    ( tmp_path / 'time.toml' ).write_text(
        "[ensemble]\nname = 'time'\n\n[mcp]\n"
        f"command = [ {json.dumps( str( server ) )}, '--local-timezone', "
        "'UTC' ]\nenvironment = { TOKEN = 'env:INVOCABLES_TIME_TOKEN' }\n"
        "startup_timeout = 20\ntool_timeout = 30\n"
        "disabled_tools = [ 'convert_time' ]\n" )
    descriptor = descriptors.produce_ensemble_descriptor(
        tmp_path / 'time.toml' )
    discovered = descriptors.produce_ensemble( descriptor )
    monkeypatch.setenv( 'INVOCABLES_TIME_TOKEN', 'secret-value' )
    async with discovered:
        written = descriptors.create_descriptors(
            discovered, tmp_path / 'pinned' )
        expected = _describe( discovered )
    text = written.read_text( )
    assert 'secret-value' not in text
    assert "env:INVOCABLES_TIME_TOKEN" in text
    pinned = await _reload( written )
    assert isinstance( pinned, descriptors.PinnedEnsemble )
    # The per-call timeout comes back as the ensemble's default.
    assert pinned.server == dataclasses.replace(
        descriptor.server, tool_timeout = invocables.__.absent )
    assert pinned.configuration.timeout == 30
    described = _describe( pinned )
    for invoker in described[ 'invokers' ] + expected[ 'invokers' ]:
        del invoker[ 'timeout' ]
    assert described == expected
    assert [ item[ 'name' ] for item in described[ 'invokers' ] ] == [
        'get_current_time' ]
    async with pinned:
        invocation = invocables.InvocationCanister(
            identifier = 'a', name = 'get_current_time',
            arguments = { 'timezone': 'UTC' } )
        results = await invocables.execute_invocations(
            [ invocation ], [ pinned ] )
    assert 'UTC' in results[ 0 ].as_text( )
    again = descriptors.create_descriptors(
        pinned, tmp_path / 'again' )
    assert again.read_text( ) == text


_names = strategies.from_regex( r'[a-z][a-z0-9_]{0,20}', fullmatch = True )
_texts = strategies.text(
    strategies.characters( blacklist_categories = ( 'Cs', ) ), max_size = 60 )


@settings( max_examples = 40, deadline = None )
@given(
    description = _texts,
    properties = strategies.dictionaries( _names, _texts, max_size = 4 ),
    numbers = strategies.lists(
        strategies.integers( -10**6, 10**6 ) | strategies.floats(
            allow_nan = False, allow_infinity = False ),
        max_size = 3 ),
)
@example( description = '\r\n', properties = { 'a': 'x\ry' }, numbers = [ ] )
def test_300_any_text_round_trips( description, properties, numbers ):
    ''' Any descriptions and schema values survive writing and loading. '''
    schema = {
        'type': 'object',
        'properties': {
            name: { 'type': 'string', 'description': text }
            for name, text in properties.items( ) },
        '$comment': description,
    }
    if numbers: schema[ 'examples' ] = [ numbers ]
    with tempfile.TemporaryDirectory( ) as folder:
        tool = Path( folder ) / 'original' / 'tool.toml'
        tool.parent.mkdir( )
        import tomli_w
        tool.write_text( tomli_w.dumps( {
            'invoker': {
                'name': 'tool', 'description': description,
                'implementation': f"{support.MODULE}:echo" },
            'arguments': schema } ) )
        ( tool.parent / 'sample.toml' ).write_text(
            "[ensemble]\nname = 'sample'\n\n[[invokers]]\n"
            "source = 'tool.toml'\n" )
        configuration = descriptors.produce_configuration(
            { 'ensembles': [ { 'source': tool.parent / 'sample.toml' } ] } )
        original = descriptors.produce_ensemble(
            configuration.ensembles[ 0 ] )
        written = descriptors.create_descriptors(
            original, Path( folder ) / 'copy' )
        copy = descriptors.produce_ensemble(
            descriptors.produce_ensemble_descriptor( written ) )
        assert _describe( copy ) == _describe( original )
        assert copy.access_invoker( 'tool' ).description == description
