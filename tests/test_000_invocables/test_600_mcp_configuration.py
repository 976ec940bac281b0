# SPDX-License-Identifier: Apache-2.0

''' MCP ensembles: options, transports, secrets (no server needed). '''


import pytest

import invocables
import invocables.mcp

from invocables import exceptions


def test_100_stdio_by_command( ):
    ''' A command gives a stdio ensemble, unconnected, with no tools. '''
    ensemble = invocables.mcp.produce_ensemble(
        'time', command = [ 'mcp-server-time', '--local-timezone', 'UTC' ] )
    assert ensemble.parameters.transport is invocables.mcp.Transports.Stdio
    assert ensemble.parameters.command == 'mcp-server-time'
    assert ensemble.parameters.arguments == ( '--local-timezone', 'UTC' )
    assert not ensemble.is_connected( )
    assert ensemble.survey_invokers( ) == ( )
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
] )
def test_130_contradictory_options( options ):
    ''' Missing or contradictory options are refused at once. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.mcp.produce_ensemble( 'bad', **options )


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


@pytest.mark.asyncio
async def test_300_disconnect_unconnected( ):
    ''' Disconnecting an ensemble never connected does nothing. '''
    ensemble = invocables.mcp.produce_ensemble( 'idle', command = 'x' )
    await ensemble.disconnect( )
    assert not ensemble.is_connected( )
    with pytest.raises( exceptions.InvokerAbsence ):
        ensemble.access_invoker( 'anything' )
