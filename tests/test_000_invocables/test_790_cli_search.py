# SPDX-License-Identifier: Apache-2.0

''' The search command: the tools of a configuration, ranked. '''


import json
import os
import subprocess
import sys


def _run( *arguments, cwd, home ):
    ''' Runs the command with a clean configuration environment. '''
    env = dict( os.environ )
    env.pop( 'INVOCABLES_CONFIGURATION', None )
    env[ 'XDG_CONFIG_HOME' ] = str( home )
    return subprocess.run(
        [ sys.executable, '-m', 'invocables', *arguments ], cwd = cwd,
        env = env, capture_output = True, text = True, timeout = 60,
        check = False )


def test_100_search_defaults( tmp_path ):
    ''' The shipped io tools are ranked; the best match comes first. '''
    process = _run(
        'search', 'read a text file', '--limit', '2', cwd = tmp_path,
        home = tmp_path )
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines( )
    assert len( lines ) == 2
    assert lines[ 0 ].startswith( 'read_file  (' )


def test_110_search_json_and_no_match( tmp_path ):
    ''' JSON lists names, scores and descriptions; no match says so. '''
    process = _run(
        'search', 'move', '--json', cwd = tmp_path, home = tmp_path )
    assert process.returncode == 0, process.stderr
    found = json.loads( process.stdout )
    assert found[ 0 ][ 'name' ] == 'move_file'
    assert found[ 0 ][ 'score' ] > 0
    assert found[ 0 ][ 'description' ]
    process = _run( 'search', 'zzzz qqqq', cwd = tmp_path, home = tmp_path )
    assert process.returncode == 0
    assert process.stdout.strip( ) == "No tool matches 'zzzz qqqq'."


def test_120_search_configuration_wrapped( tmp_path ):
    ''' Names are those of the configuration, prefixes included; a bad
        limit is a usage error.
    '''
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nbuiltin = 'io'\nprefix = 'fs_'\n", encoding = 'utf-8' )
    process = _run(
        '--configuration', str( tmp_path / 'invocables.toml' ), 'search',
        'move a file', cwd = tmp_path, home = tmp_path )
    assert process.returncode == 0, process.stderr
    assert process.stdout.startswith( 'fs_move_file  (' )
    process = _run(
        'search', 'move', '--limit', '0', cwd = tmp_path, home = tmp_path )
    assert process.returncode == 2
