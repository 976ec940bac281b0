# SPDX-License-Identifier: Apache-2.0

''' The redactor of an MCP ensemble knows every secret it was given and
    covers every surface through which text leaves the process: results,
    tool lists of every provider, descriptors written, spans.

    Secrets given: bearer tokens of the authorization, header values and
    their credentials alone, placeholders resolved from the environment.
'''


import json

import pytest

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

import invocables
import invocables.mcp

from invocables import descriptors, exceptions
from invocables.telemetry import Settings, configure_telemetry

from . import mcp_support


_SECRET = 'sk-surface-secret-5151'
_VARIABLE = 'INVOCABLES_TEST_SURFACE'


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


@pytest.mark.asyncio
async def test_100_bearer_authorization_redacted( monkeypatch ):
    ''' A token given as BearerAuthorization( token = 'env:T' ), quoted
        back by the server, does not reach the model. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ) )
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url,
            authorization = invocables.mcp.BearerAuthorization(
                token = f"env:{_VARIABLE}" ) )
        async with ensemble:
            results = await invocables.execute_invocations(
                [ _call( 'a', 'request_query' ),
                  _call( 'b', 'echo', { 'message': f"bare {_SECRET}" } ) ],
                [ ensemble ] )
    assert results[ 0 ].as_text( ).endswith( '|Bearer ***' )
    assert results[ 1 ].as_text( ) == 'bare ***'


@pytest.mark.asyncio
async def test_110_header_credentials_redacted_alone( monkeypatch ):
    ''' A header read whole from the environment hides its credentials
        alone too, where a server quotes only them. '''
    monkeypatch.setenv( _VARIABLE, f"Bearer {_SECRET}" )
    ensemble = invocables.mcp.produce_ensemble(
        'hostile', command = mcp_support.produce_server_command(
            'hostile_server.py' ),
        environment = { 'SERVICE_HEADER': f"env:{_VARIABLE}" } )
    async with ensemble:
        results = await invocables.execute_invocations(
            [ _call( 'a', 'echo', { 'message': f"token {_SECRET}." } ) ],
            [ ensemble ] )
    assert results[ 0 ].as_text( ) == 'token ***.'


@pytest.mark.parametrize( 'value', [
    'Bearer ${INVOCABLES_TEST_SURFACE}',
    'Bearer ${env:INVOCABLES_TEST_SURFACE}',
    'Bearer env:INVOCABLES_TEST_SURFACE',
] )
def test_200_placeholders_resolved( monkeypatch, value ):
    ''' Placeholders which users mean as variables are resolved, and what
        they give is secret. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    parameters = invocables.mcp.produce_ensemble(
        'remote', url = 'http://127.0.0.1:9/mcp',
        headers = { 'Authorization': value, 'X-Plain': 'p-${NOPE:-dflt}' }
    ).parameters
    resolution = parameters.resolve( 'remote' )
    assert resolution.headers[ 'Authorization' ] == f"Bearer {_SECRET}"
    assert resolution.headers[ 'X-Plain' ] == 'p-dflt'
    assert resolution.redactor.redact( f"saw {_SECRET}" ) == 'saw ***'


@pytest.mark.parametrize( ( 'value', 'fragment' ), [
    ( 'Bearer ${INVOCABLES_TEST_UNSET}', 'INVOCABLES_TEST_UNSET' ),
    ( 'Bearer env:INVOCABLES_TEST_UNSET', 'INVOCABLES_TEST_UNSET' ),
    ( 'Bearer x env:INVOCABLES_TEST_SURFACE', "'env:NAME'" ),
    ( 'Bearer ${INVOCABLES_TEST_SURFACE', 'unfinished placeholder' ),
] )
def test_210_placeholders_refused( monkeypatch, value, fragment ):
    ''' A placeholder which cannot be resolved is refused, naming the key;
        never sent as it is. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    monkeypatch.delenv( 'INVOCABLES_TEST_UNSET', raising = False )
    parameters = invocables.mcp.produce_ensemble(
        'remote', url = 'http://127.0.0.1:9/mcp',
        headers = { 'Authorization': value } ).parameters
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        parameters.resolve( 'remote' )
    assert "'Authorization'" in str( caught.value )
    assert fragment in str( caught.value )


@pytest.mark.asyncio
async def test_220_placeholders_of_mcp_servers_file( monkeypatch, tmp_path ):
    ''' A server of an mcpServers file with "Bearer ${TOKEN}" sends the
        token, not the placeholder. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    path = tmp_path / 'servers.json'
    path.write_text( json.dumps( { 'mcpServers': { 'remote': {
        'type': 'http', 'url': 'http://127.0.0.1:9/mcp',
        'headers': { 'Authorization': f"Bearer ${{{_VARIABLE}}}" },
    } } } ) )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'servers.json'\n" )
    ensemble, = await descriptors.prepare_ensembles(
        tmp_path / 'invocables.toml', connect = False )
    resolution = ensemble.parameters.resolve( ensemble.name )
    assert resolution.headers[ 'Authorization' ] == f"Bearer {_SECRET}"


@pytest.mark.asyncio
async def test_300_tool_definitions_redacted( monkeypatch, tmp_path ):
    ''' A server which repeats a secret in a tool's title, description,
        parameter default and output schema sends it nowhere: no
        provider's tool list, no descriptor written, no span. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    spans = InMemorySpanExporter( )
    provider = TracerProvider( )
    provider.add_span_processor( SimpleSpanProcessor( spans ) )
    configure_telemetry( Settings( tracer_provider = provider ) )
    ensemble = invocables.mcp.produce_ensemble(
        'hostile', command = mcp_support.produce_server_command(
            'hostile_server.py', '--describe-from', 'SERVICE_KEY' ),
        environment = { 'SERVICE_KEY': f"env:{_VARIABLE}" } )
    try:
        async with ensemble:
            invoker = ensemble.access_invoker( 'described' )
            assert 'key ***' in invoker.description
            for name in invocables.processors.PROVIDERS:
                processor = invocables.produce_processor( name )
                tools = processor.prepare_tools( [ ensemble ] )
                text = json.dumps( tools, default = str )
                assert _SECRET not in text, name
            path = descriptors.create_descriptors( ensemble, tmp_path )
            await invocables.execute_invocations(
                [ _call( 'a', 'echo', { 'message': 'hi' } ),
                  _call( 'b', 'described', { 'key': 'x' } ) ],
                [ ensemble ] )
    finally: configure_telemetry( )
    assert _SECRET not in path.read_text( )
    recorded = spans.get_finished_spans( )
    assert len( recorded ) == 2
    for span in recorded:
        assert _SECRET not in json.dumps( dict( span.attributes or { } ) )


@pytest.mark.asyncio
async def test_400_spans_quote_no_argument( ):
    ''' Without content recording, a span carries no argument value: not
        in its status (a validator's message quotes arguments) nor in an
        exception's message. '''
    spans = InMemorySpanExporter( )
    provider = TracerProvider( )
    provider.add_span_processor( SimpleSpanProcessor( spans ) )
    configure_telemetry( Settings( tracer_provider = provider ) )

    async def picky( count: int ) -> str:
        ''' Takes a count. '''
        return str( count )

    async def boom( text: str ) -> str:
        ''' Raises, quoting its argument. '''
        raise RuntimeError( f"cannot use {text}" )

    ensemble = invocables.produce_ensemble( 'tools', [ picky, boom ] )
    try:
        await invocables.execute_invocations(
            [ _call( 'a', 'picky', { 'count': 'value-7373' } ) ],
            [ ensemble ] )
        with pytest.raises( exceptions.InvocationExecutionFailure ):
            await invocables.execute_invocations(
                [ _call( 'b', 'boom', { 'text': 'value-7373' } ) ],
                [ ensemble ] )
    finally: configure_telemetry( )
    recorded = spans.get_finished_spans( )
    assert len( recorded ) == 2
    for span in recorded:
        assert 'value-7373' not in str( span.status.description )
        assert 'value-7373' not in json.dumps(
            dict( span.attributes or { } ) )
        for event in span.events:
            assert 'value-7373' not in json.dumps(
                dict( event.attributes or { } ) )
