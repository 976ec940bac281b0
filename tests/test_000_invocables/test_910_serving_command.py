# SPDX-License-Identifier: Apache-2.0

''' The serve command: stdio and HTTP, token, stateless workers, errors. '''


import contextlib
import os
import signal
import subprocess
import sys

from pathlib import Path

import pytest

from mcp import ClientSession, StdioServerParameters, stdio_client

import invocables

from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk

from . import mcp_support
from . import serving_support


_DATA = Path( __file__ ).parent.parent / 'data' / 'serving'
_CONFIGURATION = _DATA / 'invocables.toml'
_TOKEN = 'a-token-for-the-tests-only'


def _produce_command( *arguments: str ) -> list[ str ]:
    return [ sys.executable, '-m', 'invocables', 'serve', *arguments ]


def _produce_environment( ) -> dict[ str, str ]:
    return serving_support.produce_environment(
        isolated = False, SERVE_TOKEN = _TOKEN )


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


@contextlib.contextmanager
def _serve_http( *arguments: str ):
    port = mcp_support.select_port( )
    with serving_support.run(
        _produce_command(
            '--configuration', str( _CONFIGURATION ), '--http',
            '--port', str( port ), *arguments ),
        port, _produce_environment( ),
    ) as process: yield f"http://127.0.0.1:{port}/mcp", process


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_stdio_official_client( ):
    ''' Over stdio, the official client sees local, descriptor and upstream
        tools, and calls them; invalid arguments are error results.
    '''
    command = _produce_command( '--configuration', str( _CONFIGURATION ) )
    parameters = StdioServerParameters(
        command = command[ 0 ], args = command[ 1 : ],
        env = _produce_environment( ) )
    with open( os.devnull, 'w' ) as errlog: # noqa: SIM117
        async with stdio_client( parameters, errlog = errlog ) as streams:
            async with ClientSession( *streams ) as session:
                await session.initialize( )
                tools = {
                    tool.name: tool
                    for tool in ( await session.list_tools( ) ).tools }
                assert { 'greet', 'worker', 'get_current_time' } <= set(
                    tools )
                assert sdk.access_field(
                    tools[ 'greet' ].annotations, 'read_only_hint' )
                result = await session.call_tool(
                    'greet', { 'name': 'Ada' } )
                assert result.content[ 0 ].text == 'Hello, Ada!'
                result = await session.call_tool(
                    'get_current_time', { 'timezone': 'UTC' } )
                assert not sdk.access_field( result, 'is_error' )
                assert 'UTC' in result.content[ 0 ].text
                result = await session.call_tool( 'greet', { 'name': 1 } )
                assert sdk.access_field( result, 'is_error' )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_110_stdio_own_ensemble( ):
    ''' This library's own MCP ensemble calls the served tools. '''
    command = _produce_command( '--configuration', str( _CONFIGURATION ) )
    ensemble = invocables.mcp.produce_ensemble(
        'served', command = command, environment = _produce_environment( ) )
    async with ensemble:
        results = await invocables.execute_invocations(
            [ _call( 'a', 'greet', { 'name': 'Grace' } ),
              _call( 'b', 'convert_time', {
                  'source_timezone': 'UTC', 'time': '12:00',
                  'target_timezone': 'Europe/Paris' } ) ],
            [ ensemble ] )
    assert results[ 0 ].content[ 0 ].text == 'Hello, Grace!'
    assert not results[ 1 ].is_error( )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_200_http_token( ):
    ''' Over HTTP, a request without the token is refused; with it, both
        clients work.
    '''
    with _serve_http( '--token-variable', 'SERVE_TOKEN' ) as ( url, _ ):
        async with sdk.http.AsyncClient( ) as http:
            answer = await http.post( url, json = {
                'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list' } )
            assert answer.status_code == 401
        headers = { 'Authorization': f"Bearer {_TOKEN}" }
        async with (
            sdk.http.AsyncClient( headers = headers ) as http,
            sdk_http.open_streamable_http( url, http, None ) as streams,
            ClientSession( *streams ) as session,
        ):
            await session.initialize( )
            result = await session.call_tool( 'greet', { 'name': 'Ada' } )
            assert result.content[ 0 ].text == 'Hello, Ada!'
        ensemble = invocables.mcp.produce_ensemble(
            'served', url = url,
            headers = { 'Authorization': f"Bearer {_TOKEN}" } )
        async with ensemble:
            results = await invocables.execute_invocations(
                [ _call( 'a', 'greet', { 'name': 'Lin' } ) ], [ ensemble ] )
        assert results[ 0 ].content[ 0 ].text == 'Hello, Lin!'
        refused = invocables.mcp.produce_ensemble( 'refused', url = url )
        with pytest.raises( invocables.exceptions.ConnectionFailure ):
            await refused.connect( )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_210_stateless_workers( ):
    ''' Stateless HTTP serves one configuration with two workers. '''
    with _serve_http( '--stateless', '--workers', '2' ) as ( url, _ ):
        ensemble = invocables.mcp.produce_ensemble( 'served', url = url )
        async with ensemble:
            results = await invocables.execute_invocations(
                [ _call( str( index ), 'worker' ) for index in range( 20 ) ],
                [ ensemble ] )
    assert not any( result.is_error( ) for result in results )
    pids = { result.content[ 0 ].text for result in results }
    assert 1 <= len( pids ) <= 2


@pytest.mark.slow
def test_300_bad_policy_file( ):
    ''' A policy file with an unknown action is refused at load, naming
        file and key; nothing is served, nothing is left running.
    '''
    completion = subprocess.run(
        _produce_command(
            '--configuration', str( _CONFIGURATION ),
            '--policies', str( _DATA / 'bad-policies.toml' ), '--http' ),
        env = _produce_environment( ), capture_output = True, text = True,
        timeout = 60, check = False )
    assert completion.returncode == 1
    assert 'bad-policies.toml' in completion.stderr
    assert 'policies[1].action' in completion.stderr
    assert 'Traceback' not in completion.stderr


@pytest.mark.slow
def test_310_workers_need_stateless( ):
    ''' Several workers without the stateless mode are a usage error. '''
    completion = subprocess.run(
        _produce_command(
            '--configuration', str( _CONFIGURATION ), '--http',
            '--workers', '2' ),
        env = _produce_environment( ), capture_output = True, text = True,
        timeout = 60, check = False )
    assert completion.returncode == 2
    assert '--stateless' in completion.stderr


@pytest.mark.slow
def test_320_missing_token_variable( ):
    ''' A token variable which is not set is refused before serving. '''
    completion = subprocess.run(
        _produce_command(
            '--configuration', str( _CONFIGURATION ), '--http',
            '--token-variable', 'NO_SUCH_VARIABLE_SET' ),
        env = _produce_environment( ), capture_output = True, text = True,
        timeout = 60, check = False )
    assert completion.returncode == 1
    assert 'NO_SUCH_VARIABLE_SET' in completion.stderr


@pytest.mark.asyncio
@pytest.mark.slow
async def test_120_stdio_progress_relayed( tmp_path ):
    ''' Progress of a configured upstream server reaches the client. '''
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    ( tmp_path / 'everything.toml' ).write_text(
        "[ensemble]\nname = 'everything'\n[mcp]\n"
        f"command = [ '{program}', 'stdio' ]\n", encoding = 'utf-8' )
    configuration = tmp_path / 'invocables.toml'
    configuration.write_text(
        "[[ensembles]]\nsource = 'everything.toml'\n", encoding = 'utf-8' )
    command = _produce_command( '--configuration', str( configuration ) )
    parameters = StdioServerParameters(
        command = command[ 0 ], args = command[ 1 : ],
        env = _produce_environment( ) )
    progresses: list[ float ] = [ ]

    async def note( progress, total, message ):
        progresses.append( progress )

    with open( os.devnull, 'w' ) as errlog: # noqa: SIM117
        async with stdio_client( parameters, errlog = errlog ) as streams:
            async with ClientSession( *streams ) as session:
                await session.initialize( )
                await session.list_tools( )
                result = await session.call_tool(
                    'trigger-long-running-operation',
                    { 'duration': 0.4, 'steps': 2 },
                    progress_callback = note )
                assert not sdk.access_field( result, 'is_error' )
    assert progresses == [ 1, 2 ]


@pytest.mark.slow
def test_400_invoke_policies( ):
    ''' The invoke command applies a policy file: denied calls fail naming
        the rule; asking rules are confirmed in the terminal.
    '''
    base = [
        sys.executable, '-m', 'invocables', 'invoke', 'greet',
        '--configuration', str( _CONFIGURATION ),
        '--arguments', '{"name": "Ada"}' ]
    denied = subprocess.run(
        [ *base, '--policies', str( _DATA / 'policies.toml' ) ],
        env = _produce_environment( ), capture_output = True, text = True,
        timeout = 60, check = False )
    assert denied.returncode == 1
    assert 'no greetings' in denied.stderr
    for answer, status in ( ( 'y\n', 0 ), ( 'n\n', 1 ) ):
        asked = subprocess.run(
            [ *base, '--policies', str( _DATA / 'ask-policies.toml' ) ],
            env = _produce_environment( ), capture_output = True,
            text = True, timeout = 60, check = False, input = answer )
        assert asked.returncode == status, asked.stderr
        assert "Allow tool 'greet'" in asked.stderr
        assert ( 'Hello, Ada!' in asked.stdout ) is ( status == 0 )


async def _drain( stream ):
    ''' Reads a stream of subscriptions/listen to its end. '''
    async for _ in stream: pass


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.parametrize( 'mode', ( ( ), ( '--stateless', ) ) )
async def test_220_stops_with_listen_streams_open( mode ):
    ''' SIGTERM stops serve, with status 0, although a client
        of MCP 2026-07-28 holds a stream of ``subscriptions/listen`` open:
        the stream ends with the server. Under the mcp SDK 1.x no such
        stream is served, and serve stops as well.
    '''
    with _serve_http( *mode ) as ( url, process ):
        if sdk.MAJOR >= 2: # noqa: PLR2004
            import asyncio
            import mcp
            async with mcp.Client( url, mode = 'auto' ) as client:
                async with client.listen( tools_list_changed = True ) as stream:
                    ending = asyncio.create_task( _drain( stream ) )
                    process.send_signal( signal.SIGTERM )
                    # Bounds which prove "does not hang": before, it did.
                    status = await asyncio.to_thread( process.wait, 60 )
                    await asyncio.wait_for( ending, 60 ) # ended, not lost
        else:
            process.send_signal( signal.SIGTERM )
            status = process.wait( 60 )
    assert status == 0


@pytest.mark.slow
def test_230_port_open_only_when_served( ):
    ''' The port of serve opens only once it serves, after it took the
        signals: a SIGTERM as soon as the port opens stops it with status 0
        (it was killed by the signal when the port opened before). Thrice,
        stateful and stateless. '''
    for mode in ( ( ), ( '--stateless', ), ( ) ):
        with _serve_http( *mode ) as ( _, process ):
            process.send_signal( signal.SIGTERM )
            status = process.wait( 60 )
        assert status == 0, mode
