# SPDX-License-Identifier: Apache-2.0

''' MCP ensembles: options, transports, secrets (no server needed). '''


import pytest

import invocables
import invocables.mcp

from invocables import exceptions


def test_100_stdio_by_command( ):
    ''' A command gives a stdio ensemble, unconnected. '''
    ensemble = invocables.mcp.produce_ensemble(
        'time', command = [ 'mcp-server-time', '--local-timezone', 'UTC' ] )
    assert ensemble.parameters.transport is invocables.mcp.Transports.Stdio
    assert ensemble.parameters.command == 'mcp-server-time'
    assert ensemble.parameters.arguments == ( '--local-timezone', 'UTC' )
    assert not ensemble.is_connected( )
    assert isinstance( ensemble, invocables.ensembles.EnsembleBase )


def test_110_command_and_arguments( ):
    ''' Arguments may also be given apart from the program. '''
    ensemble = invocables.mcp.produce_ensemble(
        'time', command = 'mcp-server-time', arguments = [ '--x' ] )
    assert ensemble.parameters.arguments == ( '--x', )


def test_120_transport_from_url( ):
    ''' A URL gives streamable HTTP, or legacy SSE for a path ending /sse. '''
    transports = invocables.mcp.Transports
    http = invocables.mcp.produce_ensemble(
        'web', url = 'http://127.0.0.1:1/mcp' )
    assert http.parameters.transport is transports.StreamableHttp
    sse = invocables.mcp.produce_ensemble(
        'old', url = 'http://127.0.0.1:1/sse' )
    assert sse.parameters.transport is transports.Sse
    forced = invocables.mcp.produce_ensemble(
        'old', url = 'http://127.0.0.1:1/events', transport = 'sse' )
    assert forced.parameters.transport is transports.Sse


@pytest.mark.parametrize( 'options', [
    { },
    { 'command': 'x', 'url': 'http://127.0.0.1:1/mcp' },
    { 'command': 'x', 'transport': 'streamable-http' },
    { 'url': 'http://127.0.0.1:1/mcp', 'transport': 'stdio' },
    { 'url': 'http://127.0.0.1:1/mcp', 'transport': 'carrier-pigeon' },
    { 'url': 'ftp://127.0.0.1/mcp' },
    { 'url': 'http://127.0.0.1:1/mcp', 'cwd': '/' },
    { 'url': 'http://127.0.0.1:1/mcp', 'environment': { 'A': 'b' } },
    { 'command': 'x', 'headers': { 'A': 'b' } },
    { 'command': [ ] },
    { 'command': 'x', 'environment': { 'A': 1 } },
    { 'command': 'x', 'timeout': 0 },
    { 'command': 'x', 'timeouts': { 'tool': -1 } },
    { 'command': 'x', 'result_limit': 0 },
    { 'command': 'x', 'result_limit': 1.5 },
    { 'url': 'http://127.0.0.1:1/key-env:PATH/mcp' },
    { 'url': 'http://127.0.0.1:1/mcp?token=Bearer%20env:TOKEN' },
] )
def test_130_contradictory_options( options ):
    ''' Missing or contradictory options are refused at once. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.mcp.produce_ensemble( 'bad', **options )


@pytest.mark.parametrize( 'command', [
    'npx -y @modelcontextprotocol/server-everything stdio',
    [ 'mcp-server-time --local-timezone UTC' ],
] )
def test_140_command_line_as_one_string( command ):
    ''' A whole command line given as one string is refused clearly.

        It is never run through a shell, so it would fail as a program
        which is not found.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.mcp.produce_ensemble( 'line', command = command )
    message = str( caught.value )
    assert 'use a list of arguments' in message
    words = ( command if isinstance( command, str ) else command[ 0 ] ).split( )
    assert repr( words ) in message


def test_150_program_path_with_blanks( tmp_path ):
    ''' A program whose path holds blanks is accepted if it exists. '''
    program = tmp_path / 'my server'
    program.write_text( '#!/bin/sh\n' )
    program.chmod( 0o755 )
    ensemble = invocables.mcp.produce_ensemble(
        'spaced', command = str( program ) )
    assert ensemble.parameters.command == str( program )


def test_160_timeout_not_claimed( ):
    ''' An ensemble claims no timeout which it was not given. '''
    ensemble = invocables.mcp.produce_ensemble( 'plain', command = 'x' )
    assert ensemble.configuration.timeout is invocables.__.absent
    given = invocables.mcp.produce_ensemble(
        'given', command = 'x', timeout = None )
    assert given.configuration.timeout is None


def test_200_repr_shows_no_secrets( ):
    ''' Repr lists keys of environment and headers, never their values. '''
    stdio = invocables.mcp.produce_ensemble(
        'secretive', command = '/opt/bin/server',
        environment = { 'API_KEY': 'sk-verysecret-1234' } )
    text = repr( stdio )
    assert 'API_KEY' in text
    assert 'sk-verysecret-1234' not in text
    http = invocables.mcp.produce_ensemble(
        'remote',
        url = 'https://user:password@example.com/mcp?token=abcdef123',
        headers = { 'Authorization': 'Bearer sk-verysecret-5678' } )
    text = repr( http )
    assert 'Authorization' in text
    assert 'sk-verysecret-5678' not in text
    assert 'password' not in text
    assert 'abcdef123' not in text
    assert 'https://example.com/mcp' in text


@pytest.mark.parametrize(
    'name', [ 'io.github.owner/server', 'My Server', 'files.v2', 'a' * 256 ] )
def test_150_registry_names_accepted( name ):
    ''' A server's ensemble may take its registry name, or its name in an
        mcpServers file.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        name, command = 'mcp-server-time' )
    assert ensemble.name == name


@pytest.mark.parametrize( 'name', [ '', '  ', 'srv\n', 'a\x00', 'a' * 257, 7 ] )
def test_160_names_refused( name ):
    ''' Names which are empty, blank, unprintable or too long are refused
        before anything starts, saying what is allowed.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.mcp.produce_ensemble( name, command = 'mcp-server-time' )
    assert '1 to 256 printable characters' in str( caught.value )


@pytest.mark.asyncio
async def test_210_missing_variable_named_at_connect( monkeypatch ):
    ''' An unset ``env:`` variable fails connect, naming only the variable.

        The failure happens before any process starts.
    '''
    monkeypatch.delenv( 'INVOCABLES_TEST_ABSENT', raising = False )
    ensemble = invocables.mcp.produce_ensemble(
        'needy', command = '/nonexistent/server',
        environment = { 'TOKEN': 'env:INVOCABLES_TEST_ABSENT' } )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        await ensemble.connect( )
    assert 'INVOCABLES_TEST_ABSENT' in str( caught.value )
    assert "'TOKEN'" in str( caught.value )
    http = invocables.mcp.produce_ensemble(
        'needy', url = 'http://127.0.0.1:1/mcp',
        headers = { 'Authorization': 'env:INVOCABLES_TEST_ABSENT' } )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        await http.connect( )
    assert 'INVOCABLES_TEST_ABSENT' in str( caught.value )


def test_220_redactor( ):
    ''' Redactor hides known values, longest first, ignoring tiny ones. '''
    redactor = invocables.mcp.configuration.Redactor(
        [ 'secret', 'secret-long', 'no' ] )
    assert redactor.redact( 'a secret-long no' ) == 'a *** no'


def test_230_references_in_url_resolved( monkeypatch ):
    ''' User, password and query values of a URL may be references.

        They are resolved at connect time, percent-encoded, and become
        secrets of the connection.
    '''
    monkeypatch.setenv( 'INVOCABLES_TEST_PASSWORD', 'p@ss/word' )
    monkeypatch.setenv( 'INVOCABLES_TEST_TOKEN', 'tok-12345' )
    ensemble = invocables.mcp.produce_ensemble(
        'remote', url = 'https://alice:env:INVOCABLES_TEST_PASSWORD'
        '@example.com/mcp?token=env:INVOCABLES_TEST_TOKEN&v=2' )
    resolution = ensemble.parameters.resolve( 'remote' )
    assert resolution.url == (
        'https://alice:p%40ss%2Fword@example.com/mcp?token=tok-12345&v=2' )
    redactor = resolution.redactor
    assert redactor.redact( 'a tok-12345 b' ) == 'a *** b'
    assert redactor.redact( 'p@ss/word' ) == '***'
    assert redactor.redact(
        'GET https://alice:x@example.com/mcp?token=abc&v=2 200' ) == (
        'GET https://***@example.com/mcp?token=***&v=*** 200' )
    assert redactor.redact( 'https://other.org/?q=1' ) == (
        'https://other.org/?q=1' )


def test_235_keys_in_url_path( monkeypatch ):
    ''' A path segment may be a reference; a literal segment which looks
        like a key is a secret too. Neither shows in the ensemble's repr,
        nor in what its redactor lets through. '''
    key = 'Zk4Tq9vX2mLp7RsW1yB8nC3d'
    monkeypatch.setenv( 'INVOCABLES_TEST_PATH_KEY', 'a1b2/c3d4' )
    ensemble = invocables.mcp.produce_ensemble(
        'hosted', url = f"https://mcp.example.com/api/{key}/s/"
        'env:INVOCABLES_TEST_PATH_KEY/mcp' )
    text = repr( ensemble.parameters )
    assert key not in text and 'env:' not in text
    assert "'https://mcp.example.com/api/***/s/***/mcp'" in text
    resolution = ensemble.parameters.resolve( 'hosted' )
    assert resolution.url == (
        f"https://mcp.example.com/api/{key}/s/a1b2%2Fc3d4/mcp" )
    assert resolution.redactor.redact(
        f"POST {resolution.url} 200" ) == (
        'POST https://mcp.example.com/api/***/s/***/mcp 200' )
    plain = invocables.mcp.produce_ensemble(
        'plain', url = 'https://example.com/v2/mcp-server-filesystem/mcp' )
    assert 'mcp-server-filesystem' in repr( plain.parameters )


@pytest.mark.asyncio
async def test_240_unset_url_variable_named( monkeypatch ):
    ''' An unset variable of a URL fails connect, naming its place. '''
    monkeypatch.delenv( 'INVOCABLES_TEST_ABSENT', raising = False )
    ensemble = invocables.mcp.produce_ensemble(
        'needy', url = 'http://127.0.0.1:1/mcp?key=env:INVOCABLES_TEST_ABSENT' )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        await ensemble.connect( )
    assert "url query 'key'" in str( caught.value )
    assert 'INVOCABLES_TEST_ABSENT' in str( caught.value )


@pytest.mark.asyncio
async def test_300_disconnect_unconnected( ):
    ''' Disconnecting an ensemble never connected does nothing. '''
    ensemble = invocables.mcp.produce_ensemble( 'idle', command = 'x' )
    await ensemble.disconnect( )
    assert not ensemble.is_connected( )
    with pytest.raises( exceptions.ConnectionAbsence ):
        ensemble.access_invoker( 'anything' )
