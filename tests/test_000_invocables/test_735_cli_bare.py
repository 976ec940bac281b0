# SPDX-License-Identifier: Apache-2.0

''' The invocables command on a bare install, and what it imports.

    A bare install (``pip install --editable .``, no extras) is imitated
    by a wrapper which refuses to import the SDKs of the extras: the
    command must work with the shipped configuration, and name the extra
    to install, in one line, for work which needs one.
'''


import json
import os
import subprocess
import sys

from pathlib import Path

import pytest


# Top-level modules which only extras install (mcp, providers, serving).
_EXTRAS_MODULES = (
    'anthropic', 'boto3', 'cohere', 'google', 'httpx', 'httpx_sse', 'mcp',
    'mistralai', 'openai', 'pydantic_settings', 'sse_starlette',
    'starlette', 'uvicorn',
)
# What --help and --version must not load (pydantic too, though installed).
_HEAVY_MODULES = ( *_EXTRAS_MODULES, 'pydantic' )
_BARE = '''
import sys
refused = frozenset( {modules!r} )
class Refuser:
    @staticmethod
    def find_spec( name, path = None, target = None ):
        if name.split( '.', 1 )[ 0 ] in refused:
            raise ModuleNotFoundError(
                f"No module named {{name!r}}", name = name )
        return None
sys.meta_path.insert( 0, Refuser )
from invocables.cli import main
main( sys.argv[ 1: ] )
'''.format( modules = _EXTRAS_MODULES )
_WATCHED = '''
import atexit, sys
def report( ):
    loaded = sorted( {{ name.split( '.', 1 )[ 0 ] for name in sys.modules }}
        & set( {modules!r} ) )
    sys.stderr.write( 'LOADED ' + ' '.join( loaded ) + '\\n' )
atexit.register( report )
from invocables.cli import main
main( sys.argv[ 1: ] )
'''.format( modules = _HEAVY_MODULES )
_HINT = "pip install --editable '.[mcp]'"


def _run( code, *arguments, cwd, home, stdin = None ):
    env = dict( os.environ )
    env.pop( 'INVOCABLES_CONFIGURATION', None )
    env[ 'XDG_CONFIG_HOME' ] = str( home )
    return subprocess.run(
        [ sys.executable, '-c', code, *arguments ], cwd = cwd, env = env,
        capture_output = True, text = True, timeout = 120, check = False,
        input = stdin )


def _write_server( folder: Path ) -> Path:
    ''' Writes configuration with the io ensemble and one MCP server. '''
    ( folder / 'servers.json' ).write_text( json.dumps( { 'mcpServers': {
        'fs': { 'command': sys.executable, 'args': [ '-c', 'pass' ] } } } ) )
    path = folder / 'invocables.toml'
    path.write_text(
        "[[ensembles]]\nbuiltin = 'io'\n\n"
        "[[ensembles]]\nmcp_servers = 'servers.json'\n" )
    return path


@pytest.fixture
def home( tmp_path ):
    ''' Empty user configuration folder. '''
    path = tmp_path / 'xdg'
    path.mkdir( )
    return path


@pytest.mark.parametrize( 'arguments', [ ( '--help', ), ( '--version', ) ] )
def test_100_help_imports_no_sdk( tmp_path, home, arguments ):
    ''' Help and version import no SDK, nor pydantic, nor a web server. '''
    process = _run( _WATCHED, *arguments, cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    assert process.stderr.splitlines( )[ -1 ] == 'LOADED '


def test_110_version( tmp_path, home ):
    ''' Version prints the program and the package's version. '''
    import invocables
    process = _run( _WATCHED, '--version', cwd = tmp_path, home = home )
    assert process.stdout == f"invocables {invocables.__version__}\n"


def test_120_help_documents_statuses( tmp_path, home ):
    ''' Help of the command and of each subcommand lists exit statuses. '''
    for arguments in ( ( '--help', ), ( 'survey', '--help' ) ):
        process = _run( _WATCHED, *arguments, cwd = tmp_path, home = home )
        assert process.returncode == 0, process.stderr
        for status in ( '0 ', '1 ', '2 ', '130 ' ):
            assert f"\n  {status}" in process.stdout, process.stdout


def test_200_bare_quick_start( tmp_path, home ):
    ''' Without extras, survey and invoke work with the shipped tools. '''
    ( tmp_path / 'a.txt' ).write_text( 'alpha' )
    process = _run( _BARE, 'survey', cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    assert 'Ensemble io (local, 10 tools)' in process.stdout
    process = _run(
        _BARE, 'invoke', 'list_directory', '--arguments', '{"path": "."}',
        cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    assert 'a.txt (5 bytes)' in process.stdout
    assert process.stderr == ''


def test_210_bare_search_and_schemas( tmp_path, home ):
    ''' Without extras, search and schemas (every provider) work. '''
    process = _run( _BARE, 'search', 'read file', cwd = tmp_path, home = home )
    assert process.returncode == 0, process.stderr
    for provider in ( 'anthropic', 'openai', 'gemini', 'cohere' ):
        process = _run(
            _BARE, 'schemas', '--provider', provider, cwd = tmp_path,
            home = home )
        assert process.returncode == 0, process.stderr
        assert 'list_directory' in process.stdout


@pytest.mark.parametrize( 'command', [
    ( 'survey', ), ( 'survey', '--json' ), ( 'search', 'time' ),
    ( 'invoke', 'list_roots' ), ( 'schemas', '--provider', 'openai' ),
] )
def test_220_bare_server_names_extra( tmp_path, home, command ):
    ''' Without the mcp extra, a configured MCP server fails in one line
        which names the server and the extra to install; status 1.
    '''
    path = _write_server( tmp_path )
    process = _run(
        _BARE, '--configuration', str( path ), *command, cwd = tmp_path,
        home = home )
    assert process.returncode == 1
    lines = process.stderr.splitlines( )
    assert len( lines ) == 1, process.stderr
    assert lines[ 0 ].startswith(
        "invocables: error: the MCP server 'fs' needs the mcp extra: "
        "pip install 'invocables[mcp]'" )
    assert _HINT in lines[ 0 ]
    if '--json' in command:
        error = json.loads( process.stdout )[ 'error' ]
        assert error[ 'genus' ] == 'ExtraAbsence'
        assert not error[ 'message' ].startswith( 'invocables:' )
    else: assert process.stdout == ''


def test_230_bare_serve_names_extra( tmp_path, home ):
    ''' Without the mcp extra, serve says which extra it needs. '''
    for arguments in ( ( ), ( '--http', '--port', '0' ) ):
        process = _run(
            _BARE, 'serve', *arguments, cwd = tmp_path, home = home )
        assert process.returncode == 1
        assert process.stdout == ''
        lines = process.stderr.splitlines( )
        assert len( lines ) == 1, process.stderr
        assert "'invocables serve' needs the mcp extra" in lines[ 0 ]
        assert _HINT in lines[ 0 ]


def test_240_bare_converse_names_extra( tmp_path, home ):
    ''' Without a provider's SDK, converse names the provider's extra. '''
    env_code = _BARE.replace(
        'import sys\n', "import os, sys\nos.environ[ 'ANTHROPIC_API_KEY' ]"
        " = 'a-test-key'\n", 1 )
    process = _run(
        env_code, 'converse', 'Hello?', cwd = tmp_path, home = home )
    assert process.returncode == 1
    lines = process.stderr.splitlines( )
    assert len( lines ) == 1, process.stderr
    assert "the provider 'anthropic' needs the anthropic extra" in lines[ 0 ]
    assert "pip install --editable '.[anthropic]'" in lines[ 0 ]
