# SPDX-License-Identifier: Apache-2.0

''' The invocables command keeps the conventions of command-line tools:
    usage errors exit 2, JSON output is data only and agrees with the text,
    progress goes to a terminal only, arguments come from standard input.
'''


import json
import os
import pty
import signal
import subprocess
import sys

from pathlib import Path

import pytest


_DEAD = "import sys; sys.stderr.write( 'no database\\n' ); sys.exit( 3 )"


def _run( *arguments, cwd, home, stdin = None ):
    env = dict( os.environ )
    env.pop( 'INVOCABLES_CONFIGURATION', None )
    env[ 'XDG_CONFIG_HOME' ] = str( home )
    return subprocess.run(
        [ sys.executable, '-m', 'invocables', *arguments ], cwd = cwd,
        env = env, capture_output = True, text = True, timeout = 120,
        check = False, input = stdin )


def _write_dead( folder: Path ) -> Path:
    ''' Writes configuration: io, and two servers which die at start. '''
    ( folder / 'servers.json' ).write_text( json.dumps( { 'mcpServers': {
        name: { 'command': sys.executable, 'args': [ '-c', _DEAD ] }
        for name in ( 'alpha', 'beta' ) } } ) )
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


@pytest.mark.slow
def test_100_dead_servers_text_and_json( tmp_path, home ):
    ''' Survey of dead servers names each, with its exit status and last
        stderr line, the same on every run, in text and JSON alike; the
        JSON holds data only (no program prefix), and roots agree.
    '''
    path = _write_dead( tmp_path )
    texts = [ ]
    for _ in range( 2 ):
        process = _run(
            '--configuration', str( path ), 'survey', cwd = tmp_path,
            home = home )
        assert process.returncode == 1
        assert process.stderr == ''
        texts.append( process.stdout )
    assert texts[ 0 ] == texts[ 1 ]
    for name in ( 'alpha', 'beta' ):
        assert (
            f"Ensemble {name} (MCP stdio, 0 tools): error: Connection to "
            f"ensemble {name!r} failed: the server process exited with "
            "status 3; its last stderr lines: no database" ) in texts[ 0 ]
    assert f"Root: {tmp_path.resolve( )} (current directory) (read-only)" in (
        texts[ 0 ] )
    process = _run(
        '--configuration', str( path ), 'survey', '--json', cwd = tmp_path,
        home = home )
    assert process.returncode == 1
    report = json.loads( process.stdout )
    assert report[ 'roots' ] == [ {
        'path': str( tmp_path.resolve( ) ), 'writable': False,
        'default': True } ]
    errors = { entry[ 'name' ]: entry[ 'error' ]
               for entry in report[ 'ensembles' ] }
    assert errors[ 'io' ] is None
    for name in ( 'alpha', 'beta' ):
        assert errors[ name ][ 'genus' ] == 'ConnectionFailure'
        message = errors[ name ][ 'message' ]
        assert not message.startswith( 'invocables' )
        assert f"{message}\n" in texts[ 0 ]


@pytest.mark.slow
def test_110_invoke_dead_server_json( tmp_path, home ):
    ''' Invoke which cannot connect prints one line naming the server;
        with --json, the output is the error as data.
    '''
    path = _write_dead( tmp_path )
    process = _run(
        '--configuration', str( path ), 'invoke', 'list_roots', '--json',
        cwd = tmp_path, home = home )
    assert process.returncode == 1
    lines = process.stderr.splitlines( )
    assert len( lines ) == 1, process.stderr
    assert lines[ 0 ].startswith(
        "invocables: error: Connection to ensemble 'alpha' failed: the "
        "server process exited with status 3" )
    error = json.loads( process.stdout )[ 'error' ]
    assert error[ 'genus' ] == 'ConnectionFailure'
    assert lines[ 0 ] == f"invocables: error: {error[ 'message' ]}"


@pytest.mark.slow
def test_120_progress_on_terminal_only( tmp_path, home ):
    ''' Connecting to each server is reported when the error stream is a
        terminal, and never on a pipe.
    '''
    path = _write_dead( tmp_path )
    process = _run(
        '--configuration', str( path ), 'survey', cwd = tmp_path,
        home = home )
    assert 'connecting' not in process.stderr
    leader, follower = pty.openpty( )
    env = dict( os.environ )
    env[ 'XDG_CONFIG_HOME' ] = str( home )
    with subprocess.Popen(
        [ sys.executable, '-m', 'invocables', '--configuration', str( path ),
          'survey' ],
        cwd = tmp_path, env = env, stdout = subprocess.DEVNULL,
        stderr = follower,
    ) as child:
        os.close( follower )
        chunks = [ ]
        while True:
            try: chunk = os.read( leader, 4096 )
            except OSError: break # the terminal closed with the child
            if not chunk: break
            chunks.append( chunk )
        child.wait( timeout = 120 )
    os.close( leader )
    text = b''.join( chunks ).decode( )
    assert "invocables: connecting to 'alpha' (1 of 2)..." in text
    assert "invocables: connecting to 'beta' (2 of 2)..." in text


def _survey_marked( marker: str ) -> list[ int ]:
    ''' Returns pids of living processes whose command line has marker. '''
    found = [ ]
    for entry in Path( '/proc' ).iterdir( ):
        if not entry.name.isdigit( ): continue
        try: command = ( entry / 'cmdline' ).read_bytes( )
        except OSError: continue
        if marker.encode( ) in command: found.append( int( entry.name ) )
    return found


@pytest.mark.slow
def test_130_interrupted_while_connecting( tmp_path, home ):
    ''' Ctrl-C while servers connect stops survey with status 130 and
        leaves no server running.
    '''
    marker = f"invocables-test-sleeper-{os.getpid( )}"
    sleeper = f"import time; time.sleep( 120 ) # {marker}"
    ( tmp_path / 'servers.json' ).write_text( json.dumps( { 'mcpServers': {
        name: { 'command': sys.executable, 'args': [ '-c', sleeper ] }
        for name in ( 'alpha', 'beta' ) } } ) )
    path = tmp_path / 'invocables.toml'
    path.write_text( "[[ensembles]]\nmcp_servers = 'servers.json'\n" )
    leader, follower = pty.openpty( )
    env = dict( os.environ )
    env[ 'XDG_CONFIG_HOME' ] = str( home )
    with subprocess.Popen(
        [ sys.executable, '-m', 'invocables', '--configuration', str( path ),
          'survey' ],
        cwd = tmp_path, env = env, stdout = subprocess.DEVNULL,
        stderr = follower,
    ) as child:
        os.close( follower )
        text = b''
        while b"(2 of 2)..." not in text:
            text += os.read( leader, 4096 )
        while len( _survey_marked( marker ) ) < 2: # both servers started
            os.sched_yield( )
        child.send_signal( signal.SIGINT )
        while True:
            try: chunk = os.read( leader, 4096 )
            except OSError: break # the terminal closed with the child
            if not chunk: break
            text += chunk
        child.wait( timeout = 120 )
    os.close( leader )
    assert child.returncode == 130
    assert b'invocables: interrupted.' in text
    assert _survey_marked( marker ) == [ ]


def test_200_arguments_from_stdin( tmp_path, home ):
    ''' Invoke reads its arguments from standard input with --arguments -.
    '''
    ( tmp_path / 'a.txt' ).write_text( 'alpha' )
    process = _run(
        'invoke', 'read_file', '--arguments', '-', cwd = tmp_path,
        home = home, stdin = '{"path": "a.txt"}\n' )
    assert process.returncode == 0, process.stderr
    assert process.stdout == 'alpha\n'
    process = _run(
        'invoke', 'read_file', '--arguments', '-', cwd = tmp_path,
        home = home, stdin = 'not json' )
    assert process.returncode == 2
    assert process.stderr.startswith(
        'invocables: error: the standard input (--arguments -) is not '
        'valid JSON' )


@pytest.mark.parametrize( 'arguments', [
    ( 'survey', '--no-such-option' ),
    ( 'invoke', 'read_file', '--arguments', '[1]' ),
    ( 'invoke', 'read_file', '--arguments', '{' ),
    ( 'schemas', '--provider', 'nobody' ),
    ( 'search', 'file', '--limit', '99' ),
    ( 'converse', '--provider', 'nobody', 'Hello?' ),
    ( 'converse', '--rounds', '0', 'Hello?' ),
    ( 'converse', '--provider', 'openai', '--base-url',
      'http://127.0.0.1:9/v1', 'Hello?' ),
    ( 'serve', '--http', '--port', '99999' ),
    ( 'serve', '--http', '--workers', '0' ),
    ( 'serve', '--http', '--workers', '2' ),
    ( 'snapshot', 'nothing' ),
] )
def test_300_usage_errors_exit_2( tmp_path, home, arguments ):
    ''' Every usage error exits with status 2, without a traceback. '''
    process = _run( *arguments, cwd = tmp_path, home = home )
    assert process.returncode == 2, process.stderr
    assert 'Traceback' not in process.stderr
    assert process.stdout == ''
