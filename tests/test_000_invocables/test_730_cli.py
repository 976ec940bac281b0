# SPDX-License-Identifier: Apache-2.0

''' The invocables command, run as a subprocess: output and exit codes. '''


import json
import os
import shutil
import subprocess
import sys

from pathlib import Path

import pytest

try: import tomllib
except ModuleNotFoundError: import tomli as tomllib # Python 3.10

from . import descriptors_support as support
from . import mcp_support


_PROJECT = Path( __file__ ).resolve( ).parents[ 2 ]
_SCRIPT = Path( sys.executable ).parent / 'invocables'
_TIME_SERVER = mcp_support.access_time_server( )


def _run( *arguments, cwd, home, environment = None, script = False ):
    ''' Runs the command with a clean configuration environment. '''
    env = dict( os.environ )
    env.pop( 'INVOCABLES_CONFIGURATION', None )
    env[ 'XDG_CONFIG_HOME' ] = str( home )
    env[ 'PYTHONPATH' ] = str( support.TESTS )
    env.update( environment or { } )
    command = (
        [ str( _SCRIPT ) ] if script
        else [ sys.executable, '-m', 'invocables' ] )
    return subprocess.run(
        [ *command, *arguments ], cwd = cwd, env = env,
        capture_output = True, text = True, timeout = 60, check = False )


def _assert_one_line_error( process, fragment, status = 1 ):
    assert process.returncode == status, process
    lines = process.stderr.strip( ).splitlines( )
    assert len( lines ) == 1, process.stderr
    assert lines[ 0 ].startswith( 'invocables: error: ' )
    assert fragment in lines[ 0 ], lines[ 0 ]
    assert 'Traceback' not in process.stderr


def _write_time( folder: Path, name = 'time' ) -> Path:
    assert _TIME_SERVER.exists( ), "install the test extra (mcp-server-time)"
    path = folder / f"{name}.toml"
    path.write_text(
        f"[ensemble]\nname = '{name}'\n\n[mcp]\n"
        f"command = [ {json.dumps( str( _TIME_SERVER ) )}, "
        "'--local-timezone', 'UTC' ]\nstartup_timeout = 20\n" )
    return path


@pytest.fixture
def home( tmp_path ):
    ''' Empty user configuration folder. '''
    path = tmp_path / 'xdg'
    path.mkdir( )
    return path


def test_100_quick_start( home ):
    ''' README's first command works from the repository root. '''
    process = _run( 'survey', cwd = _PROJECT, home = home, script = True )
    assert process.returncode == 0, process.stderr
    assert 'Ensemble io (local, 10 tools)' in process.stdout
    assert f"Root: {_PROJECT} (current directory) (read-only)" in (
        process.stdout )
    process = _run(
        'invoke', 'list_directory', '--arguments', '{"path": "."}',
        cwd = _PROJECT, home = home, script = True )
    assert process.returncode == 0, process.stderr
    assert 'pyproject.toml (' in process.stdout
    assert 'sources/' in process.stdout.splitlines( )


def test_110_survey_defaults( tmp_path, home ):
    ''' Without configuration, the shipped defaults are surveyed. '''
    process = _run( 'survey', cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    first = process.stdout.splitlines( )[ 0 ]
    assert first.endswith(
        os.path.join( 'data', 'configuration', 'invocables.toml' ) )
    for name in ( 'read_file', 'write_file', 'list_directory' ):
        assert f"  {name} " in process.stdout


def test_120_invoke_refusal( tmp_path, home ):
    ''' Error result prints one line and exits with status 1. '''
    process = _run(
        'invoke', 'read_file', '--arguments', '{"path": "../x"}',
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'outside the allowed roots' )
    assert process.stdout == ''


def test_130_invoke_unknown_tool( tmp_path, home ):
    ''' Unknown tool exits with status 1. '''
    process = _run( 'invoke', 'no_such_tool', cwd = tmp_path, home = home )
    _assert_one_line_error( process, "Unknown tool 'no_such_tool'" )


def test_140_invoke_bad_json( tmp_path, home ):
    ''' Arguments which are not JSON are a usage error (status 2). '''
    process = _run(
        'invoke', 'read_file', '--arguments', '{path: 1}',
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, '--arguments is not valid JSON', 2 )


def test_150_invoke_invalid_arguments( tmp_path, home ):
    ''' Arguments against the schema give the validator's message. '''
    process = _run(
        'invoke', 'read_file', '--arguments', '{"path": 3}',
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, "Invalid arguments for tool" )
    process = _run(
        'invoke', 'read_file', '--arguments', '[]',
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'must be a JSON object', 2 )


def test_160_invoke_json( tmp_path, home ):
    ''' Result is printed as JSON when asked. '''
    ( tmp_path / 'a.txt' ).write_text( 'alpha' )
    process = _run(
        'invoke', 'read_file', '--arguments', '{"path": "a.txt"}', '--json',
        cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    assert json.loads( process.stdout ) == {
        'content': [ 'alpha' ], 'error': None }
    process = _run(
        'invoke', 'read_file', '--arguments', '{"path": "b.txt"}', '--json',
        cwd = tmp_path, home = home )
    assert process.returncode == 1
    report = json.loads( process.stdout )
    assert report[ 'error' ][ 'genus' ] == 'refusal'


def test_170_invoke_write( tmp_path, home ):
    ''' Configuration with a writable root lets write_file write. '''
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nbuiltin = 'io'\n\n[[roots]]\npath = 'out'\n"
        "writable = true\n" )
    ( tmp_path / 'out' ).mkdir( )
    process = _run(
        '--configuration', str( tmp_path / 'invocables.toml' ), 'invoke',
        'write_file', '--arguments', '{"path": "x.txt", "content": "hi"}',
        cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    assert ( tmp_path / 'out' / 'x.txt' ).read_text( ) == 'hi'


@pytest.mark.slow
def test_200_configuration_lookup( tmp_path, home ):
    ''' Option beats variable, which beats user folder, then defaults. '''
    for name in ( 'option', 'variable', 'user' ):
        folder = tmp_path / name
        support.write_sample( folder )
        sample = ( folder / 'sample.toml' ).read_text( )
        ( folder / 'sample.toml' ).write_text(
            sample.replace( "name = 'sample'", f"name = '{name}'" ) )
    user = home / 'invocables'
    ( tmp_path / 'user' ).rename( user )
    variable = { 'INVOCABLES_CONFIGURATION': str(
        tmp_path / 'variable' / 'invocables.toml' ) }
    option = str( tmp_path / 'option' / 'invocables.toml' )

    def survey( *arguments, environment = None ):
        process = _run(
            'survey', '--json', *arguments, cwd = tmp_path, home = home,
            environment = environment )
        assert process.returncode == 0, process.stderr
        return json.loads( process.stdout )[ 'ensembles' ][ 0 ][ 'name' ]

    assert survey( '--configuration', option, environment = variable ) == (
        'option' )
    assert survey( environment = variable ) == 'variable'
    assert survey( ) == 'user'
    ( user / 'invocables.toml' ).unlink( )
    assert survey( ) == 'io'


def test_210_configuration_before_command( tmp_path, home ):
    ''' Option --configuration is accepted before the subcommand too. '''
    path = support.write_sample( tmp_path )
    process = _run(
        '--configuration', str( path ), 'invoke', 'shout',
        '--arguments', '{"text": "hey"}', cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    assert process.stdout == 'HEY\n'


def test_220_broken_configuration( tmp_path, home ):
    ''' Broken descriptor prints one line naming file and key path. '''
    path = support.write_sample( tmp_path, **{
        'sample/echo.toml': support.ECHO.replace(
            "name = 'echo'", "name = 'echo'\n    colour = 'red'" ) } )
    process = _run(
        'survey', '--configuration', str( path ), cwd = tmp_path,
        home = home )
    _assert_one_line_error(
        process, f"{tmp_path / 'sample' / 'echo.toml'} at invoker.colour" )


def test_230_missing_configuration( tmp_path, home ):
    ''' Missing configuration file is one clear line. '''
    process = _run(
        'survey', '--configuration', str( tmp_path / 'absent.toml' ),
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'does not exist' )


def test_240_usage( tmp_path, home ):
    ''' Missing subcommand is a usage error. '''
    process = _run( cwd = tmp_path, home = home )
    assert process.returncode == 2
    assert 'usage: invocables' in process.stderr


def test_250_help( tmp_path, home ):
    ''' Help lists the subcommands. '''
    process = _run( '--help', cwd = tmp_path, home = home )
    assert process.returncode == 0
    for name in ( 'survey', 'invoke', 'schemas', 'snapshot' ):
        assert name in process.stdout


def test_260_module_entry( tmp_path, home ):
    ''' The command also runs as python -m invocables.cli. '''
    env = dict( os.environ )
    env.pop( 'INVOCABLES_CONFIGURATION', None )
    env[ 'XDG_CONFIG_HOME' ] = str( home )
    process = subprocess.run(
        [ sys.executable, '-m', 'invocables.cli', 'invoke', 'list_roots' ],
        cwd = tmp_path, env = env, capture_output = True, text = True,
        timeout = 60, check = False )
    assert process.returncode == 0, process.stderr
    assert process.stdout == f"{tmp_path.resolve( )} (read-only)\n"
    assert process.stderr == ''


def test_270_exit_on_import_is_one_line( tmp_path, home ):
    ''' A module which exits when imported is one line naming file and
        key, with a non-zero status; never a silent exit.
    '''
    ( tmp_path / 'exiter.py' ).write_text( "import sys\nsys.exit( 3 )\n" )
    path = support.write_sample( tmp_path, **{
        'sample/echo.toml': support.ECHO.replace(
            f"{support.MODULE}:echo", 'exiter:run' ) } )
    environment = {
        'PYTHONPATH': f"{support.TESTS}{os.pathsep}{tmp_path}" }
    for command in ( 'survey', 'invoke' ):
        process = _run(
            '--configuration', str( path ), command,
            * ( ( 'echo', ) if command == 'invoke' else ( ) ),
            cwd = tmp_path, home = home, environment = environment )
        _assert_one_line_error(
            process, f"{tmp_path / 'sample' / 'echo.toml'} at "
            "invoker.implementation" )
        assert 'SystemExit' in process.stderr


def test_271_exit_of_tool_is_one_line( tmp_path, home ):
    ''' A tool which exits the program is one line with a non-zero
        status.
    '''
    ( tmp_path / 'exiter.py' ).write_text(
        "import sys\ndef run( context, arguments ): sys.exit( 4 )\n" )
    path = support.write_sample( tmp_path, **{
        'sample/echo.toml': support.ECHO.replace(
            f"{support.MODULE}:echo", 'exiter:run' ) } )
    process = _run(
        '--configuration', str( path ), 'invoke', 'echo',
        '--arguments', '{"text": "x"}', cwd = tmp_path, home = home,
        environment = {
            'PYTHONPATH': f"{support.TESTS}{os.pathsep}{tmp_path}" } )
    _assert_one_line_error( process, 'sys.exit( 4 )', 4 )



def test_272_control_characters_escaped( tmp_path, home ):
    ''' What tools say reaches the terminal with its control characters
        escaped (an escape sequence which would clear the screen, a NUL):
        descriptions listed by survey and search, results of invoke,
        and C1 controls in the JSON of schemas as JSON escapes.
    '''
    path = support.write_sample( tmp_path, **{
        'sample/echo.toml': support.ECHO.replace(
            'Echoes text back.',
            'Echoes \\u001b[2J text \\u0000 back \\u009b31m.' ) } )
    environment = { 'PYTHONPATH': str( support.TESTS ) }
    outputs = [ ]
    for arguments in (
        ( 'survey', ), ( 'search', 'echoes' ),
        ( 'schemas', '--provider', 'anthropic' ),
        ( 'invoke', 'echo', '--arguments', '{"text": "a\\u001b[2Jb"}' ),
    ):
        process = _run(
            '--configuration', str( path ), *arguments, cwd = tmp_path,
            home = home, environment = environment )
        assert process.returncode == 0, process.stderr
        outputs.append( process.stdout )
        assert not any(
            character in process.stdout
            for character in ( '\x1b', '\x00', '\x9b' ) ), arguments
    assert 'Echoes \\x1b[2J text \\x00 back \\x9b31m.' in outputs[ 0 ]
    assert '\\x1b[2J' in outputs[ 1 ]
    schemas = json.loads( outputs[ 2 ] )
    descriptions = { tool[ 'name' ]: tool.get( 'description' )
                     for tool in schemas }
    assert descriptions[ 'echo' ] == 'Echoes \x1b[2J text \x00 back \x9b31m.'
    assert outputs[ 3 ] == 'a\\x1b[2Jb\n'


@pytest.mark.parametrize( 'case, fragment', [
    ( '62-mcp-type-array', 'mcp.json at mcpServers.s.type: expected a string' ),
    ( '63-toml-nested-5000-deep', 'invocables.toml at deep: the value' ),
    ( '64-arguments-json-3000-deep', 'tool.toml at arguments.a.a.a.a' ),
    ( '126-toml-deep-in-table', 'sample.toml at defaults.deep: the' ),
    ( '76-bom-then-unknown-key', "Did you mean 'ensembles'?" ),
    ( '83-source-symlink-loop', 'at ensembles[0].source' ),
] )
def test_280_broken_descriptors_are_one_line( home, case, fragment ):
    ''' Broken descriptors of the corpus print one line naming file and
        key, never a bare exception.
    '''
    folder = _PROJECT / 'tests' / 'data' / 'descriptors' / 'broken' / case
    process = _run(
        'survey', '--configuration', str( folder / 'invocables.toml' ),
        cwd = folder, home = home )
    _assert_one_line_error( process, fragment )
    assert 'RecursionError' not in process.stderr


def test_290_deep_arguments_are_usage_error( tmp_path, home ):
    ''' Arguments nested too deeply to parse are a usage error. '''
    process = _run(
        'invoke', 'list_roots', '--arguments', '[' * 5000 + ']' * 5000,
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'it nests too deeply', 2 )


def test_291_unknown_home_is_one_line( tmp_path, home ):
    ''' A configuration path with an unknown home folder is one line. '''
    process = _run(
        'survey', '--configuration', '~no-such-user-of-invocables/x.toml',
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'cannot expand the path' )


def test_300_survey_scoped_names( tmp_path, home ):
    ''' Survey shows provider-facing names, scoped where names collide. '''
    path = support.write_sample( tmp_path, configuration = '''
        [[ensembles]]
        source = 'sample.toml'

        [[ensembles]]
        builtin = 'io'
        ''' )
    ( tmp_path / 'sample' / 'list.toml' ).write_text(
        support.ECHO.replace( "name = 'echo'", "name = 'list_roots'" ) )
    sample = ( tmp_path / 'sample.toml' ).read_text( )
    ( tmp_path / 'sample.toml' ).write_text(
        sample + "\n[[invokers]]\nsource = 'sample/list.toml'\n" )
    process = _run(
        'survey', '--json', '--configuration', str( path ), cwd = tmp_path,
        home = home )
    assert process.returncode == 0, process.stderr
    report = json.loads( process.stdout )
    names = {
        tool[ 'name' ]: tool[ 'provider_name' ]
        for entry in report[ 'ensembles' ] for tool in entry[ 'tools' ]
        if tool[ 'name' ] in ( 'echo', 'list_roots' ) }
    assert names[ 'echo' ] == 'echo'
    providers = sorted(
        tool[ 'provider_name' ] for entry in report[ 'ensembles' ]
        for tool in entry[ 'tools' ] if tool[ 'name' ] == 'list_roots' )
    assert providers == [ 'io__list_roots', 'sample__list_roots' ]
    process = _run(
        'invoke', 'sample__list_roots', '--arguments', '{"text": "x"}',
        '--configuration', str( path ), cwd = tmp_path, home = home )
    assert process.stdout == 'x\n'


@pytest.mark.slow
def test_310_survey_mcp( tmp_path, home ):
    ''' Survey connects MCP servers and lists their tools. '''
    _write_time( tmp_path )
    ( tmp_path / 'broken.toml' ).write_text(
        "[ensemble]\nname = 'broken'\n\n[mcp]\n"
        "command = [ '/nonexistent/server' ]\nstartup_timeout = 5\n" )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nsource = 'time.toml'\n\n"
        "[[ensembles]]\nsource = 'broken.toml'\n" )
    process = _run(
        'survey', '--configuration', str( tmp_path / 'invocables.toml' ),
        cwd = tmp_path, home = home )
    assert process.returncode == 1
    assert 'Ensemble time (MCP stdio, 2 tools)' in process.stdout
    assert '  get_current_time  ' in process.stdout
    assert (
        "Ensemble broken (MCP stdio, 0 tools): error: Connection to "
        "ensemble 'broken' failed:" ) in process.stdout


@pytest.mark.parametrize( 'provider, key', [
    ( 'anthropic', 'input_schema' ),
    ( 'openai', 'function' ),
] )
def test_400_schemas( tmp_path, home, provider, key ):
    ''' Schemas are printed as the provider receives them. '''
    process = _run(
        'schemas', '--provider', provider, cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    tools = json.loads( process.stdout )
    assert len( tools ) == 10
    assert all( key in tool for tool in tools )


def test_410_schemas_unknown_provider( tmp_path, home ):
    ''' Unknown provider is one clear usage error naming the known ones. '''
    process = _run(
        'schemas', '--provider', 'nonesuch', cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'nonesuch', 2 )
    assert 'openai-responses' in process.stderr


@pytest.mark.slow
def test_500_snapshot( tmp_path, home ):
    ''' Snapshot writes descriptors which pin the server's tools. '''
    _write_time( tmp_path )
    configuration = tmp_path / 'invocables.toml'
    configuration.write_text( "[[ensembles]]\nsource = 'time.toml'\n" )
    process = _run(
        'snapshot', 'time', '--folder', 'pinned', '--configuration',
        str( configuration ), cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    written = tmp_path / 'pinned' / 'time.toml'
    assert f"Wrote {written} (2 tools)" in process.stdout
    assert ( tmp_path / 'pinned' / 'time' / 'invokers' /
             'get_current_time.toml' ).is_file( )
    process = _run(
        'snapshot', 'time', '--folder', 'pinned', '--configuration',
        str( configuration ), cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'exists already' )
    process = _run(
        'snapshot', 'time', '--folder', 'pinned', '--replace',
        '--configuration', str( configuration ), cwd = tmp_path,
        home = home )
    assert process.returncode == 0, process.stderr
    configuration.write_text( "[[ensembles]]\nsource = 'pinned/time.toml'\n" )
    process = _run(
        'survey', '--configuration', str( configuration ), cwd = tmp_path,
        home = home )
    assert process.returncode == 0, process.stderr
    assert 'Ensemble time (MCP stdio, pinned, 2 tools)' in process.stdout


def test_510_snapshot_refusals( tmp_path, home ):
    ''' Snapshot of unknown or local ensembles is a usage error. '''
    path = support.write_sample( tmp_path )
    process = _run(
        'snapshot', 'sample', '--configuration', str( path ),
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, 'is not an MCP server', 2 )
    process = _run(
        'snapshot', 'nothing', '--configuration', str( path ),
        cwd = tmp_path, home = home )
    _assert_one_line_error( process, "no ensemble named 'nothing'", 2 )


def test_600_installed_layout( tmp_path, home ):
    ''' Installed package finds its data inside itself, as built. '''
    project = tomllib.loads( ( _PROJECT / 'pyproject.toml' ).read_text( ) )
    wheel = project[ 'tool' ][ 'hatch' ][ 'build' ][ 'targets' ][ 'wheel' ]
    assert wheel[ 'force-include' ] == { 'data': 'invocables/data' }
    site = tmp_path / 'site'
    shutil.copytree(
        _PROJECT / 'sources' / 'invocables', site / 'invocables',
        ignore = shutil.ignore_patterns( '__pycache__' ) )
    shutil.copytree( _PROJECT / 'data', site / 'invocables' / 'data' )
    work = tmp_path / 'work'
    work.mkdir( )
    ( work / 'a.txt' ).write_text( 'alpha' )
    process = _run(
        'invoke', 'read_file', '--arguments', '{"path": "a.txt"}',
        cwd = work, home = home,
        environment = { 'PYTHONPATH': str( site ) } )
    assert process.returncode == 0, process.stderr
    assert process.stdout == 'alpha\n'
    process = _run(
        'survey', cwd = work, home = home,
        environment = { 'PYTHONPATH': str( site ) } )
    assert process.stdout.splitlines( )[ 0 ] == (
        "Configuration: {path}".format( path = site / 'invocables' / 'data'
            / 'configuration' / 'invocables.toml' ) )
