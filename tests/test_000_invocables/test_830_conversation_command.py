# SPDX-License-Identifier: Apache-2.0

''' The ``invocables converse`` command, run as a subprocess.

    Without a key it says what is missing, in one line; with ``--base-url``
    it talks to a scripted OpenAI-compatible server on 127.0.0.1 and runs
    the loop with the shipped ``io`` ensemble.
'''


import os
import socket
import subprocess
import sys

import pytest

from . import scripted


_KEYS = (
    'ANTHROPIC_API_KEY', 'CO_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY',
    'OPENAI_API_KEY', 'INVOCABLES_CONFIGURATION',
)


def _run( arguments, folder, answers = None, **variables ):
    environment = {
        name: value for name, value in os.environ.items( )
        if name not in _KEYS }
    environment[ 'XDG_CONFIG_HOME' ] = str( folder / 'configuration' )
    environment.update( variables )
    return subprocess.run(
        [ sys.executable, '-m', 'invocables', 'converse', *arguments ],
        capture_output = True, text = True, timeout = 60, cwd = folder,
        env = environment, check = False, input = answers )


@pytest.mark.slow
def test_100_missing_key( tmp_path ):
    ''' Without key nor server URL: one clear line, non-zero status. '''
    for provider, variable in (
        ( 'anthropic', 'ANTHROPIC_API_KEY' ),
        ( 'openai', 'OPENAI_API_KEY' ),
        ( 'openai-responses', 'OPENAI_API_KEY' ),
        ( 'gemini', 'GEMINI_API_KEY or GOOGLE_API_KEY' ),
        ( 'cohere', 'CO_API_KEY' ),
    ):
        completed = _run( [ '--provider', provider, 'Hello?' ], tmp_path )
        assert completed.returncode != 0
        assert completed.stdout == ''
        lines = completed.stderr.splitlines( )
        assert len( lines ) == 1, completed.stderr
        assert lines[ 0 ].startswith( 'invocables: error: ' )
        assert variable in lines[ 0 ]
        assert '--base-url' in lines[ 0 ]


def test_110_unknown_provider( tmp_path ):
    ''' Unknown provider: one line naming the known ones. '''
    completed = _run( [ '--provider', 'nobody', 'Hello?' ], tmp_path )
    assert completed.returncode != 0
    lines = completed.stderr.splitlines( )
    assert len( lines ) == 1
    assert 'openai-responses' in lines[ 0 ]


def test_120_server_needs_model( tmp_path ):
    ''' With a server URL, the model must be named. '''
    completed = _run(
        [ '--provider', 'openai', '--base-url', 'http://127.0.0.1:9/v1',
          'Hello?' ], tmp_path )
    assert completed.returncode != 0
    lines = completed.stderr.splitlines( )
    assert len( lines ) == 1
    assert '--model' in lines[ 0 ]


def test_130_ollama_needs_model( tmp_path ):
    ''' Ollama needs no key, but the model must be named. '''
    completed = _run( [ '--provider', 'ollama', 'Hello?' ], tmp_path )
    assert completed.returncode != 0
    lines = completed.stderr.splitlines( )
    assert len( lines ) == 1
    assert '--model' in lines[ 0 ]
    assert '127.0.0.1:11434' in lines[ 0 ]


@pytest.mark.slow
def test_200_local_server( tmp_path ):
    ''' With --base-url of a compatible server: the tool call runs on the
        io ensemble, the call and result are shown, the answer streams to
        the standard output; status 0.
    '''
    ( tmp_path / 'note.txt' ).write_text( 'The code is 4217.\n' )
    with scripted.ScriptedServer( [
        scripted.openai_tool_calls_stream( [
            ( 'call_1', 'read_file', { 'path': 'note.txt' } ) ] ),
        scripted.openai_text_stream( [ 'The code ', 'is 4217.' ] ),
    ] ) as server:
        completed = _run(
            [ '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'llama3.2', 'What is the code in note.txt?' ],
            tmp_path )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == 'The code is 4217.\n'
    lines = completed.stderr.splitlines( )
    assert lines == [
        '[tool] read_file {"path": "note.txt"}',
        '[result] read_file: The code is 4217.' ]
    first, second = ( request.body for request in server.requests )
    assert first[ 'model' ] == 'llama3.2'
    assert first[ 'stream' ] is True
    assert 'read_file' in [
        tool[ 'function' ][ 'name' ] for tool in first[ 'tools' ] ]
    assert second[ 'messages' ][ -1 ] == {
        'role': 'tool', 'tool_call_id': 'call_1',
        'content': 'The code is 4217.\n' }


@pytest.mark.slow
def test_210_rounds_bound( tmp_path ):
    ''' At the bound of --rounds: the calls are answered, then one line
        says so; non-zero status.
    '''
    with scripted.ScriptedServer( [
        scripted.openai_tool_calls_stream( [
            ( 'call_1', 'list_roots', { } ) ] ),
    ] ) as server:
        completed = _run(
            [ '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'm', '--rounds', '1', 'Roots?' ], tmp_path )
    assert completed.returncode == 1
    lines = completed.stderr.splitlines( )
    assert lines[ 0 ] == '[tool] list_roots {}'
    assert lines[ 1 ].startswith( '[result] list_roots: ' )
    assert lines[ -1 ].startswith( 'invocables: stopped after 1 rounds' )
    assert len( server.requests ) == 1


@pytest.mark.slow
def test_220_tool_error_reaches_model( tmp_path ):
    ''' A tool error is shown and sent to the model; the loop goes on. '''
    with scripted.ScriptedServer( [
        scripted.openai_tool_calls_stream( [
            ( 'call_1', 'read_file', { 'path': '../../etc/passwd' } ) ] ),
        scripted.openai_text_stream( [ 'I cannot read that.' ] ),
    ] ) as server:
        completed = _run(
            [ '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'm', 'Read it.' ], tmp_path )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == 'I cannot read that.\n'
    assert completed.stderr.splitlines( )[ 1 ].startswith(
        '[error] read_file: Error: ' )
    result = server.requests[ 1 ].body[ 'messages' ][ -1 ]
    assert result[ 'content' ].startswith( 'Error: ' )


@pytest.mark.slow
def test_230_provider_error_one_line( tmp_path ):
    ''' An error of the provider prints one line; non-zero status. '''
    with scripted.ScriptedServer( [ scripted.answer_fixture(
        'openai_chat/error-404-model-not-found.json', 404 ) ] ) as server:
        completed = _run(
            [ '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'gpt-5', 'Hi' ], tmp_path )
    assert completed.returncode == 1
    lines = completed.stderr.splitlines( )
    assert len( lines ) == 1
    assert lines[ 0 ].startswith( 'invocables: error: NotFoundError' )
    assert 'does not exist' in lines[ 0 ]


@pytest.mark.slow
def test_240_ollama_native( tmp_path ):
    ''' Ollama's native API at --base-url: no key, streamed NDJSON. '''
    ( tmp_path / 'note.txt' ).write_text( 'Seven.\n' )
    with scripted.ScriptedServer( [
        scripted.ollama_stream(
            [ ], [ ( None, 'read_file', { 'path': 'note.txt' } ) ] ),
        scripted.ollama_stream( [ 'It says ', 'seven.' ] ),
    ] ) as server:
        completed = _run(
            [ '--provider', 'ollama', '--base-url', server.url,
              '--model', 'qwen3:8b', 'Read note.txt.' ], tmp_path )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == 'It says seven.\n'
    assert completed.stderr.splitlines( ) == [
        '[tool] read_file {"path": "note.txt"}',
        '[result] read_file: Seven.' ]
    assert server.requests[ 0 ].path == '/api/chat'
    assert server.requests[ 1 ].body[ 'messages' ][ -1 ] == {
        'role': 'tool', 'content': 'Seven.\n', 'tool_name': 'read_file' }


@pytest.mark.slow
def test_250_confirm( tmp_path ):
    ''' With --confirm, each call is asked about; a call refused on the
        standard input is not run and the model is told so.
    '''
    ( tmp_path / 'a.txt' ).write_text( 'Alpha.\n' )
    ( tmp_path / 'b.txt' ).write_text( 'Beta.\n' )
    with scripted.ScriptedServer( [
        scripted.openai_tool_calls_stream( [
            ( 'call_1', 'read_file', { 'path': 'a.txt' } ),
            ( 'call_2', 'read_file', { 'path': 'b.txt' } ) ] ),
        scripted.openai_text_stream( [ 'Only alpha.' ] ),
    ] ) as server:
        completed = _run(
            [ '--provider', 'openai', '--base-url', f"{server.url}/v1",
              '--model', 'm', '--confirm', 'Read both.' ], tmp_path,
            answers = 'y\nn\n' )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == 'Only alpha.\n'
    assert completed.stderr.count( ' Run it? [y/N] ' ) == 2
    assert '[error] read_file: Error: The user did not approve' in (
        completed.stderr )
    results = server.requests[ 1 ].body[ 'messages' ][ -2 : ]
    assert results[ 0 ] == {
        'role': 'tool', 'tool_call_id': 'call_1', 'content': 'Alpha.\n' }
    assert results[ 1 ][ 'content' ].startswith(
        'Error: The user did not approve' )


@pytest.mark.slow
@pytest.mark.parametrize( 'provider, key, url', [
    ( 'openai', 'OPENAI_API_KEY', '{base}/v1' ),
    ( 'anthropic', 'ANTHROPIC_API_KEY', '{base}' ),
    ( 'ollama', 'OLLAMA_UNUSED', '{base}' ),
] )
def test_260_unreachable_server_named( tmp_path, provider, key, url ):
    ''' A provider's server which refuses the connection is one line which
        names its URL; status 1.
    '''
    with socket.socket( ) as probe: # a port nobody listens on
        probe.bind( ( '127.0.0.1', 0 ) )
        base = f"http://127.0.0.1:{probe.getsockname( )[ 1 ]}"
    address = url.format( base = base )
    completed = _run(
        [ '--provider', provider, '--base-url', address, '--model', 'm',
          'Hello?' ], tmp_path, **{ key: 'a-test-key' } )
    assert completed.returncode == 1
    assert completed.stdout == ''
    lines = completed.stderr.splitlines( )
    assert lines == [
        f"invocables: error: cannot reach {address}: connection refused "
        f"(provider {provider!r})." ]


def test_270_usage_errors( tmp_path ):
    ''' Unknown provider, missing model, rounds below 1: status 2. '''
    for arguments in (
        [ '--provider', 'nobody', 'Hello?' ],
        [ '--provider', 'ollama', 'Hello?' ],
        [ '--rounds', '0', 'Hello?' ],
    ):
        completed = _run( arguments, tmp_path )
        assert completed.returncode == 2, completed.stderr
        assert 'Traceback' not in completed.stderr
