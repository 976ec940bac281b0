# SPDX-License-Identifier: Apache-2.0

''' TOML descriptors: configurations, local tools, MCP servers. '''


import json
import os

from pathlib import Path

import pytest

import invocables
from invocables import descriptors

from invocables import exceptions

from . import descriptors_support as support
from . import mcp_support


def _call( name, arguments, identifier = 'call-1' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


@pytest.mark.asyncio
async def test_100_prepare_from_path( tmp_path ):
    ''' Configuration file gives connected ensembles of its descriptors
        (unconnected on request).
    '''
    path = support.write_sample( tmp_path )
    ensembles = await descriptors.prepare_ensembles( path )
    assert ensembles[ 0 ].is_connected( )
    ensembles = await descriptors.prepare_ensembles( path, connect = False )
    assert [ ensemble.name for ensemble in ensembles ] == [ 'sample' ]
    ensemble = ensembles[ 0 ]
    assert not ensemble.is_connected( )
    assert ensemble.configuration.description == 'Sample tools.'
    assert ensemble.configuration.timeout == 12.5
    names = [ invoker.name for invoker in ensemble.survey_invokers( ) ]
    assert names == [ 'echo', 'shout', 'show_configuration' ]
    echo = ensemble.access_invoker( 'echo' )
    assert echo.description == 'Echoes text back.'
    assert echo.arguments_schema[ 'required' ] == [ 'text' ]
    assert echo.ensemble.name == 'sample'


@pytest.mark.asyncio
async def test_110_prepare_connected( tmp_path ):
    ''' Ensembles are connected when asked. '''
    path = support.write_sample( tmp_path )
    ensembles = await descriptors.prepare_ensembles( path, connect = True )
    assert all( ensemble.is_connected( ) for ensemble in ensembles )


@pytest.mark.asyncio
async def test_120_prepare_from_mapping( tmp_path ):
    ''' Mapping configuration may name descriptors by absolute path. '''
    support.write_sample( tmp_path )
    ensembles = await descriptors.prepare_ensembles(
        { 'ensembles': [ { 'source': tmp_path / 'sample.toml' } ] } )
    assert ensembles[ 0 ].name == 'sample'
    configuration = descriptors.produce_configuration(
        { 'ensembles': [ { 'source': str( tmp_path / 'sample.toml' ) } ] } )
    assert configuration.location == descriptors.LOCATION_MAPPING


@pytest.mark.asyncio
async def test_130_prepare_from_configuration( tmp_path ):
    ''' Configuration already produced may be prepared directly. '''
    path = support.write_sample( tmp_path )
    configuration = descriptors.produce_configuration( path )
    ensembles = await descriptors.prepare_ensembles( configuration )
    assert ensembles[ 0 ].name == 'sample'


@pytest.mark.asyncio
async def test_200_sync_and_async_implementations( tmp_path ):
    ''' Sync and async implementations run with validated arguments. '''
    path = support.write_sample( tmp_path )
    ensembles = await descriptors.prepare_ensembles( path, connect = True )
    results = await invocables.execute_invocations( [
        _call( 'echo', { 'text': 'hi' }, 'a' ),
        _call( 'shout', { 'text': 'hi' }, 'b' ),
        _call( 'echo', { 'text': 3 }, 'c' ),
        _call( 'echo', { 'text': 'x', 'extra': 1 }, 'd' ),
    ], ensembles )
    assert results[ 0 ].as_text( ) == 'hi'
    assert results[ 1 ].as_text( ) == 'HI'
    assert results[ 2 ].error.genus is invocables.FaultGenera.Invalidity
    assert results[ 3 ].error.genus is invocables.FaultGenera.Invalidity


@pytest.mark.asyncio
async def test_210_invoker_options( tmp_path ):
    ''' Timeout, deduplication, annotations and results schema are kept. '''
    path = support.write_sample( tmp_path )
    ensembles = await descriptors.prepare_ensembles( path )
    shout = ensembles[ 0 ].access_invoker( 'shout' )
    assert shout.timeout == 5
    assert isinstance( shout.deduplicator, invocables.ExactDeduplicator )
    assert shout.annotations[ 'readOnlyHint' ] is True
    assert shout.outschema == { 'type': 'object', 'properties': { } }
    echo = ensembles[ 0 ].access_invoker( 'echo' )
    assert echo.deduplicator is invocables.__.absent
    assert echo.timeout is invocables.__.absent


@pytest.mark.asyncio
async def test_220_configuration_reaches_invoker( tmp_path ):
    ''' Ensemble's configuration table, overlaid by entry's, reaches tool. '''
    path = support.write_sample( tmp_path, configuration = '''
        [[ensembles]]
        source = 'sample.toml'
        configuration = { limit = 7 }
        ''' )
    ensembles = await descriptors.prepare_ensembles( path, connect = True )
    results = await invocables.execute_invocations(
        [ _call( 'show_configuration', { } ) ], ensembles )
    data = results[ 0 ].content[ 0 ].data
    assert data == { 'greeting': 'hello', 'limit': 7 }


@pytest.mark.asyncio
async def test_230_failing_implementation( tmp_path ):
    ''' Implementation which raises fails execution, chained to cause. '''
    path = support.write_sample( tmp_path, **{
        'sample/show.toml': f'''
            [invoker]
            name = 'explode'
            implementation = '{support.MODULE}:explode'
            ''' } )
    ensembles = await descriptors.prepare_ensembles( path, connect = True )
    with pytest.raises( exceptions.InvocationExecutionFailure ) as caught:
        await invocables.execute_invocations(
            [ _call( 'explode', { } ) ], ensembles )
    assert isinstance( caught.value.__cause__, RuntimeError )


@pytest.mark.asyncio
async def test_300_disabled_ensemble( tmp_path ):
    ''' Disabled ensembles are described but not prepared. '''
    path = support.write_sample( tmp_path, configuration = '''
        [[ensembles]]
        source = 'sample.toml'
        enabled = false
        ''' )
    configuration = descriptors.produce_configuration( path )
    assert not configuration.ensembles[ 0 ].enabled
    assert await descriptors.prepare_ensembles( path ) == ( )


@pytest.mark.asyncio
async def test_310_disabled_ensemble_in_descriptor( tmp_path ):
    ''' Ensemble disabled in its descriptor may be enabled by its entry. '''
    sample = support.SAMPLE.replace(
        "name = 'sample'", "name = 'sample'\n    enabled = false" )
    path = support.write_sample( tmp_path, **{ 'sample.toml': sample } )
    assert await descriptors.prepare_ensembles( path ) == ( )
    path = support.write_sample( tmp_path, configuration = '''
        [[ensembles]]
        source = 'sample.toml'
        enabled = true
        ''', **{ 'sample.toml': sample } )
    ensembles = await descriptors.prepare_ensembles( path )
    assert ensembles[ 0 ].name == 'sample'


@pytest.mark.asyncio
async def test_320_disabled_invoker( tmp_path ):
    ''' Disabled invoker is left out of its ensemble. '''
    echo = support.ECHO.replace(
        "name = 'echo'", "name = 'echo'\n    enabled = false" )
    path = support.write_sample( tmp_path, **{ 'sample/echo.toml': echo } )
    ensembles = await descriptors.prepare_ensembles( path )
    names = [ invoker.name for invoker in ensembles[ 0 ].survey_invokers( ) ]
    assert names == [ 'shout', 'show_configuration' ]


@pytest.mark.asyncio
async def test_330_schema_as_json_text( tmp_path ):
    ''' Schema may be given as JSON text, which can hold nulls. '''
    schema = {
        'type': 'object',
        'properties': { 'text': { 'type': [ 'string', 'null' ],
                                  'default': None } } }
    text = json.dumps( json.dumps( schema ) )
    path = support.write_sample( tmp_path, **{ 'sample/echo.toml': f'''
        arguments = {text}

        [invoker]
        name = 'echo'
        implementation = '{support.MODULE}:echo'
        ''' } )
    ensembles = await descriptors.prepare_ensembles( path )
    echo = ensembles[ 0 ].access_invoker( 'echo' )
    assert echo.arguments_schema == schema


@pytest.mark.asyncio
async def test_340_unbounded_timeout( tmp_path ):
    ''' Timeout inf means no limit (None). '''
    sample = support.SAMPLE.replace( 'timeout = 12.5', 'timeout = inf' )
    path = support.write_sample( tmp_path, **{ 'sample.toml': sample } )
    ensembles = await descriptors.prepare_ensembles( path )
    assert ensembles[ 0 ].configuration.timeout is None


def test_400_roots( tmp_path ):
    ''' Roots are relative to configuration folder; read-only by default. '''
    ( tmp_path / 'notes' ).mkdir( )
    path = support.write_sample(
        tmp_path, configuration = support.CONFIGURATION + '''
        [[roots]]
        path = 'notes'
        writable = true

        [[roots]]
        path = '.'
        ''' )
    configuration = descriptors.produce_configuration( path )
    first, second = configuration.roots
    assert first.path == ( tmp_path / 'notes' ).resolve( )
    assert first.writable
    assert second.path == tmp_path.resolve( )
    assert not second.writable


@pytest.mark.asyncio
async def test_410_roots_reach_invokers( tmp_path ):
    ''' Roots of configuration reach descriptor invokers. '''
    path = support.write_sample(
        tmp_path, configuration = support.CONFIGURATION + '''
        [[roots]]
        path = '.'
        writable = true
        ''' )
    ensembles = await descriptors.prepare_ensembles( path )
    invoker = ensembles[ 0 ].access_invoker( 'echo' )
    assert isinstance( invoker, descriptors.DescriptorInvoker )
    assert invoker.roots[ 0 ].path == tmp_path.resolve( )
    assert invoker.implementation == f"{support.MODULE}:echo"


@pytest.mark.asyncio
async def test_420_default_root( tmp_path, monkeypatch ):
    ''' Without roots, the current directory is the one read-only root. '''
    path = support.write_sample( tmp_path )
    monkeypatch.chdir( tmp_path / 'sample' )
    ensembles = await descriptors.prepare_ensembles( path )
    invoker = ensembles[ 0 ].access_invoker( 'echo' )
    assert invoker.roots == (
        descriptors.Root( path = tmp_path / 'sample' ), )


@pytest.mark.asyncio
async def test_500_builtin_io( ):
    ''' Built-in io ensemble loads from shipped descriptors. '''
    ensembles = await descriptors.prepare_ensembles(
        { 'ensembles': [ { 'builtin': 'io' } ] } )
    names = { invoker.name for invoker in ensembles[ 0 ].survey_invokers( ) }
    assert { 'read_file', 'write_file', 'list_directory' } <= names
    location = descriptors.access_data_location( )
    assert ( location / 'ensembles' / 'io.toml' ).is_file( )
    assert (
        location / 'configuration' / descriptors.CONFIGURATION_NAME
    ).is_file( )


def test_510_symlinked_source_escapes( tmp_path ):
    ''' Source which leaves the folder through a symbolic link is refused. '''
    outside = tmp_path / 'outside'
    support.write_sample( outside )
    inside = tmp_path / 'inside'
    inside.mkdir( )
    ( inside / 'linked.toml' ).symlink_to( outside / 'sample.toml' )
    ( inside / 'invocables.toml' ).write_text(
        "[[ensembles]]\nsource = 'linked.toml'\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( inside / 'invocables.toml' )
    assert caught.value.keypath == 'ensembles[0].source'
    assert 'leaves the folder' in caught.value.reason


def test_520_missing_configuration( tmp_path ):
    ''' Missing configuration file is a descriptor error naming it. '''
    path = tmp_path / 'absent.toml'
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( path )
    assert caught.value.location == str( path )
    assert 'does not exist' in caught.value.reason


def test_600_server_descriptor( tmp_path ):
    ''' MCP descriptor is validated into server descriptor. '''
    ( tmp_path / 'work' ).mkdir( )
    support.write_tree( tmp_path, {
        'invocables.toml': "[[ensembles]]\nsource = 'time.toml'\n",
        'time.toml': '''
            [ensemble]
            name = 'time'

            [mcp]
            command = [ 'mcp-server-time', '--local-timezone', 'UTC' ]
            environment = { TZ = 'UTC', TOKEN = 'env:TIME_TOKEN' }
            cwd = 'work'
            startup_timeout = 15
            tool_timeout = 20
            enabled_tools = [ 'get_current_time' ]
            disabled_tools = [ 'convert_time' ]
            ''' } )
    configuration = descriptors.produce_configuration(
        tmp_path / 'invocables.toml' )
    server = configuration.ensembles[ 0 ].server
    assert server.transport == 'stdio'
    assert server.command == (
        'mcp-server-time', '--local-timezone', 'UTC' )
    assert server.environment == { 'TZ': 'UTC', 'TOKEN': 'env:TIME_TOKEN' }
    assert server.cwd == ( tmp_path / 'work' ).resolve( )
    assert server.startup_timeout == 15
    assert server.tool_timeout == 20
    assert server.enabled_tools == ( 'get_current_time', )
    assert server.disabled_tools == ( 'convert_time', )


@pytest.mark.parametrize( 'table, transport', [
    ( "url = 'http://127.0.0.1:1/mcp'", 'http' ),
    ( "url = 'http://127.0.0.1:1/mcp'\ntransport = 'streamable-http'",
      'http' ),
    ( "url = 'http://127.0.0.1:1/sse'\ntransport = 'sse'", 'sse' ),
    ( "command = [ 'server' ]", 'stdio' ),
] )
def test_610_server_transports( tmp_path, table, transport ):
    ''' Transport is given or inferred from command or URL. '''
    path = tmp_path / 'server.toml'
    path.write_text(
        f"[ensemble]\nname = 'server'\n\n[mcp]\n{table}\n"
        "headers = { }\n" )
    descriptor = descriptors.produce_ensemble_descriptor( path )
    assert descriptor.server.transport == transport


def test_620_server_headers( tmp_path ):
    ''' HTTP headers are kept verbatim, env references unresolved. '''
    path = tmp_path / 'server.toml'
    path.write_text(
        "[ensemble]\nname = 'server'\n\n[mcp]\n"
        "url = 'https://example.invalid/mcp'\n"
        "headers = { Authorization = 'env:SERVER_TOKEN' }\n" )
    descriptor = descriptors.produce_ensemble_descriptor( path )
    assert descriptor.server.headers == {
        'Authorization': 'env:SERVER_TOKEN' }


def test_630_servers_json( tmp_path ):
    ''' Common mcpServers JSON becomes server descriptors. '''
    document = { 'mcpServers': {
        'time': {
            'command': 'mcp-server-time',
            'args': [ '--local-timezone', 'UTC' ],
            'env': { 'TOKEN': '${TIME_TOKEN}', 'OTHER': '${env:OTHER}',
                     'PLAIN': 'value' },
            'alwaysAllow': [ 'get_current_time' ] },
        'remote': {
            'url': 'http://127.0.0.1:9/mcp',
            'headers': { 'Authorization': 'Bearer ${TOKEN}' },
            'type': 'streamable-http', 'disabled': True },
        'legacy': { 'url': 'http://127.0.0.1:9/sse', 'type': 'sse' },
    } }
    ( tmp_path / 'mcp.json' ).write_text( json.dumps( document ) )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'mcp.json'\n" )
    configuration = descriptors.produce_configuration(
        tmp_path / 'invocables.toml' )
    time, remote, legacy = configuration.ensembles
    assert time.name == 'time'
    assert time.enabled
    assert time.server.command == (
        'mcp-server-time', '--local-timezone', 'UTC' )
    assert time.server.environment == {
        'TOKEN': 'env:TIME_TOKEN', 'OTHER': 'env:OTHER', 'PLAIN': 'value' }
    assert remote.server.transport == 'http'
    assert not remote.enabled
    assert remote.server.headers == { 'Authorization': 'Bearer ${TOKEN}' }
    assert legacy.server.transport == 'sse'


def test_640_servers_json_mapping( ):
    ''' mcpServers JSON may be given as a mapping; VS Code's key too. '''
    ensembles = descriptors.produce_server_descriptors(
        { 'servers': { 'time': { 'command': 'mcp-server-time' } } } )
    assert ensembles[ 0 ].server.command == ( 'mcp-server-time', )


def test_650_server_ensemble_unconnected( tmp_path ):
    ''' MCP descriptor produces unconnected ensemble of the MCP module. '''
    path = tmp_path / 'time.toml'
    path.write_text(
        "[ensemble]\nname = 'time'\ndescription = 'Clock.'\n\n[mcp]\n"
        "command = [ 'mcp-server-time' ]\ntool_timeout = 7\n"
        "disabled_tools = [ 'convert_time' ]\n" )
    ensemble = descriptors.produce_ensemble(
        descriptors.produce_ensemble_descriptor( path ) )
    assert ensemble.name == 'time'
    assert not ensemble.is_connected( )
    assert ensemble.configuration.timeout == 7
    assert ensemble.configuration.description == 'Clock.'
    assert type( ensemble ).__module__.startswith( 'invocables.mcp' )


def _write_time_server( folder: Path, *, pinned: str = '' ) -> Path:
    server = mcp_support.access_time_server( )
    assert server.exists( ), "install the test extra (mcp-server-time)"
    folder.mkdir( parents = True, exist_ok = True )
    ( folder / 'time.toml' ).write_text(
        "[ensemble]\nname = 'time'\n\n[mcp]\n"
        f"command = [ {json.dumps( str( server ) )}, '--local-timezone', "
        "'UTC' ]\nstartup_timeout = 20\n" + pinned )
    ( folder / 'invocables.toml' ).write_text(
        "[[ensembles]]\nbuiltin = 'io'\n\n"
        "[[ensembles]]\nsource = 'time.toml'\n" )
    return folder / 'invocables.toml'


@pytest.mark.asyncio
async def test_700_connect_time_server( tmp_path ):
    ''' MCP descriptor of mcp-server-time connects; its tools run. '''
    path = _write_time_server( tmp_path )
    ensembles = await descriptors.prepare_ensembles( path, connect = True )
    try:
        assert all( ensemble.is_connected( ) for ensemble in ensembles )
        names = {
            invoker.name for invoker in ensembles[ 1 ].survey_invokers( ) }
        assert names == { 'get_current_time', 'convert_time' }
        results = await invocables.execute_invocations(
            [ _call( 'get_current_time', { 'timezone': 'UTC' } ) ],
            ensembles )
        assert not results[ 0 ].is_error( )
        assert 'UTC' in results[ 0 ].as_text( )
    finally:
        for ensemble in ensembles: await ensemble.disconnect( )


@pytest.mark.asyncio
async def test_710_connect_failure_rolls_back( tmp_path ):
    ''' Failure to connect one ensemble raises; none is left connected. '''
    ( tmp_path / 'broken.toml' ).write_text(
        "[ensemble]\nname = 'broken'\n\n[mcp]\n"
        "command = [ '/nonexistent/mcp-server' ]\nstartup_timeout = 5\n" )
    path = _write_time_server( tmp_path )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nsource = 'time.toml'\n\n"
        "[[ensembles]]\nsource = 'broken.toml'\n" )
    configuration = descriptors.produce_configuration( path )
    before = mcp_support.survey_descendants( os.getpid( ) )
    with pytest.raises( exceptions.Omnierror ) as caught:
        await descriptors.prepare_ensembles( configuration, connect = True )
    assert 'broken' in str( caught.value )
    started = mcp_support.survey_descendants( os.getpid( ) ) - before
    assert mcp_support.wait_until_dead( started ) == set( )


@pytest.mark.asyncio
async def test_720_pinned_tools( tmp_path ):
    ''' Pinned tools are offered before connecting, with their own text. '''
    support.write_tree( tmp_path, { 'time/get.toml': '''
        [invoker]
        name = 'get_current_time'
        description = 'Tells the time in a time zone.'

        [arguments]
        type = 'object'
        required = [ 'timezone' ]
        properties = { timezone = { type = 'string' } }
        ''' } )
    path = _write_time_server(
        tmp_path, pinned = "\n[[invokers]]\nsource = 'time/get.toml'\n" )
    ensembles = await descriptors.prepare_ensembles( path )
    pinned = ensembles[ 1 ]
    assert isinstance( pinned, descriptors.PinnedEnsemble )
    invoker = pinned.access_invoker( 'get_current_time' )
    assert invoker.description == 'Tells the time in a time zone.'
    async with pinned:
        results = await invocables.execute_invocations( [
            _call( 'get_current_time', { 'timezone': 'UTC' }, 'a' ),
            _call( 'get_current_time', { }, 'b' ),
            _call( 'convert_time', { }, 'c' ),
        ], [ pinned ] )
    assert 'UTC' in results[ 0 ].as_text( )
    assert results[ 1 ].error.genus is invocables.FaultGenera.Invalidity
    assert results[ 2 ].error.genus is invocables.FaultGenera.Absence
    assert not pinned.is_connected( )


@pytest.mark.asyncio
async def test_730_pinned_tool_gone( tmp_path ):
    ''' Pinned tool which the server no longer offers fails the connect. '''
    support.write_tree( tmp_path, { 'time/gone.toml': '''
        [invoker]
        name = 'tell_time'
        ''' } )
    path = _write_time_server(
        tmp_path, pinned = "\n[[invokers]]\nsource = 'time/gone.toml'\n" )
    ensembles = await descriptors.prepare_ensembles( path, connect = False )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        await ensembles[ 1 ].connect( )
    assert "'tell_time'" in caught.value.reason
    assert not ensembles[ 1 ].is_connected( )
    assert not ensembles[ 1 ].inner.is_connected( )


def test_800_environment_untouched( tmp_path ):
    ''' Loading reads no environment variable: references stay as text. '''
    os.environ.pop( 'INVOCABLES_TEST_ABSENT', None )
    path = tmp_path / 'server.toml'
    path.write_text(
        "[ensemble]\nname = 'server'\n\n[mcp]\ncommand = [ 'server' ]\n"
        "environment = { KEY = 'env:INVOCABLES_TEST_ABSENT' }\n" )
    descriptor = descriptors.produce_ensemble_descriptor( path )
    assert descriptor.server.environment[ 'KEY' ] == (
        'env:INVOCABLES_TEST_ABSENT' )
