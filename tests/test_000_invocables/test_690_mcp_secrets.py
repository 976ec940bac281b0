# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers never show: not in logs, results or files.

    The secrets are values read from ``env:`` references (in environments,
    headers and URLs), passwords of URLs and literal values under secret
    keys.
'''


import json
import logging

import pytest

import invocables
import invocables.mcp

from invocables import descriptors, exceptions
from invocables.mcp import _sdk as sdk

from . import mcp_support


_SECRET = 'sk-hostile-secret-4242'
_VARIABLE = 'INVOCABLES_TEST_SECRET'


def _context( ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )


async def _call( ensemble, name, arguments = None ):
    invoker = ensemble.access_invoker( name )
    return await invoker( _context( ), arguments or { } )


def _produce_hostile( *flags, **options ):
    return invocables.mcp.produce_ensemble(
        'hostile', command = mcp_support.produce_server_command(
            'hostile_server.py', *flags ),
        environment = { 'LEAKED': f"env:{_VARIABLE}" }, **options )


def _filters_installed( name ):
    return [
        item for item in logging.getLogger( name ).filters
        if type( item ).__module__ == 'invocables.mcp.redaction' ]


@pytest.mark.asyncio
async def test_100_secret_printed_by_server_redacted( monkeypatch, caplog ):
    ''' A secret which the server prints and quotes in an error result
        reaches neither the log records nor the model.

        Before, stdout noise was logged at debug level verbatim, and the
        error result reached the model unredacted.
    '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    caplog.set_level( 'DEBUG' )
    ensemble = _produce_hostile( )
    async with ensemble:
        call = invocables.InvocationCanister(
            identifier = 'c1', name = 'leak', arguments = { 'name': 'LEAKED' } )
        results = await invocables.execute_invocations( [ call ], [ ensemble ] )
    message = results[ 0 ].error.message
    assert message == 'failed with token ***'
    assert 'leaking *** on stdout' in caplog.text
    assert 'leaking *** on stderr' in caplog.text
    assert _SECRET not in caplog.text


@pytest.mark.asyncio
async def test_110_secret_in_result_redacted( monkeypatch ):
    ''' A secret in a successful result is redacted everywhere in it. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    ensemble = _produce_hostile( )
    async with ensemble:
        content = await _call( ensemble, 'reveal', { 'name': 'LEAKED' } )
    assert _SECRET not in repr( content )
    assert content[ 0 ].text == 'the value is ***'
    assert content[ 1 ].text == '***'
    assert content[ 2 ].data == { 'value': '***' }


@pytest.mark.asyncio
async def test_120_secret_in_protocol_error_redacted( monkeypatch, caplog ):
    ''' A protocol error quoting a secret reaches the model redacted. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    caplog.set_level( 'DEBUG' )
    ensemble = _produce_hostile( )
    async with ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as caught:
            await _call( ensemble, 'reject', { 'name': 'LEAKED' } )
    assert 'bad token ***' in str( caught.value )
    assert _SECRET not in str( caught.value )
    assert _SECRET not in caplog.text


@pytest.mark.asyncio
async def test_130_secret_in_quoted_noise_redacted( monkeypatch, caplog ):
    ''' Non-protocol output quoted by a failed handshake is redacted. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    caplog.set_level( 'DEBUG' )
    ensemble = _produce_hostile(
        '--banner-from', 'LEAKED', connect_timeout = 1, grace = 0.2 )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    assert "stdout: '***" in str( caught.value )
    assert _SECRET not in str( caught.value )
    assert _SECRET not in caplog.text


@pytest.mark.slow
@pytest.mark.asyncio
async def test_200_url_credentials_from_environment( monkeypatch, caplog ):
    ''' URL credentials may be ``env:`` references; the HTTP client's logs
        and the library's show none of them, nor literal ones.

        Before, ``env:`` in a URL was sent literally, and ``httpx2`` logged
        every request's full URL at INFO level.
    '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    caplog.set_level( 'DEBUG' )
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ) )
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url.replace(
                '127.0.0.1', 'alice:literal-password@127.0.0.1' )
            + f"?token=env:{_VARIABLE}&v=2" )
        async with ensemble:
            assert _filters_installed( sdk.HTTP_LOGGERS[ 0 ] )
            content = await _call( ensemble, 'request_query' )
    query, authorization = content[ 0 ].text.split( '|' )
    assert query == 'token=***&v=2'
    assert authorization == 'Basic ***'
    assert 'HTTP Request: POST http://***@127.0.0.1' in caplog.text
    assert 'token=***' in caplog.text
    assert _SECRET not in caplog.text
    assert 'literal-password' not in caplog.text
    # Closed: the connection's secrets are no longer its to hide. (A filter
    # may stay for OAuth tokens of earlier tests, which stay hidden.)
    caplog.clear( )
    logging.getLogger( sdk.HTTP_LOGGERS[ 0 ] ).warning(
        "after close: %s", 'literal-password' )
    assert 'after close: literal-password' in caplog.text


@pytest.mark.slow
@pytest.mark.asyncio
async def test_300_snapshot_writes_references( monkeypatch, tmp_path ):
    ''' A snapshot never holds a secret literally: it holds references.

        Literal secrets are written as references to variables named after
        their keys, told in a warning; the snapshot loads and works once
        they are set.
    '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ) )
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'remote',
            url = url.replace( '127.0.0.1', 'alice:hunter22@127.0.0.1' )
            + f"?token=literal-token-5678&key=env:{_VARIABLE}&v=2",
            headers = {
                'Authorization': 'Bearer sk-literal-header',
                'Accept-Language': 'en' } )
        async with ensemble:
            with pytest.warns( exceptions.SecretReferenceWarning ) as caught:
                path = descriptors.create_descriptors( ensemble, tmp_path )
        text = path.read_text( )
        for secret in (
            'hunter22', 'literal-token-5678', 'sk-literal-header', _SECRET,
        ): assert secret not in text
        table = descriptors.produce_ensemble_descriptor( path ).server
        assert table.url == url.replace(
            '127.0.0.1', 'alice:env:REMOTE_PASSWORD@127.0.0.1' ) + (
            f"?token=env:REMOTE_TOKEN&key=env:{_VARIABLE}&v=2" )
        assert dict( table.headers ) == {
            'Authorization': 'env:REMOTE_AUTHORIZATION',
            'Accept-Language': 'en' }
        warning = str( caught[ 0 ].message )
        for name in (
            'REMOTE_PASSWORD', 'REMOTE_TOKEN', 'REMOTE_AUTHORIZATION',
        ): assert name in warning
        for name, value in (
            ( 'REMOTE_PASSWORD', 'hunter22' ),
            ( 'REMOTE_TOKEN', 'literal-token-5678' ),
            ( 'REMOTE_AUTHORIZATION', 'Bearer sk-literal-header' ),
        ): monkeypatch.setenv( name, value )
        copies = await descriptors.prepare_ensembles(
            { 'ensembles': [ { 'source': str( path ) } ] }, connect = True )
        try:
            content = await _call( copies[ 0 ], 'request_query' )
        finally: await copies[ 0 ].disconnect( )
    query, authorization = content[ 0 ].text.split( '|' )
    assert query == 'token=***&key=***&v=2'
    assert authorization == 'Basic ***'


@pytest.mark.asyncio
async def test_310_snapshot_of_stdio_environment( monkeypatch, tmp_path ):
    ''' Literal secrets of a child's environment become references too. '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    ensemble = invocables.mcp.produce_ensemble(
        'local', command = mcp_support.produce_server_command(
            'echo_server.py' ),
        environment = {
            'API_KEY': 'sk-literal-environment', 'MODE': 'fast',
            'TOKEN': f"env:{_VARIABLE}" } )
    async with ensemble:
        with pytest.warns( exceptions.SecretReferenceWarning ):
            documents = descriptors.produce_documents( ensemble )
    environment = documents[ 'local.toml' ][ 'mcp' ][ 'environment' ]
    assert environment == {
        'API_KEY': 'env:API_KEY', 'MODE': 'fast',
        'TOKEN': f"env:{_VARIABLE}" }


def test_320_json_references_in_url( ):
    ''' ``${NAME}`` in the URL of common mcpServers JSON is a reference. '''
    ensembles = descriptors.produce_server_descriptors( { 'mcpServers': {
        'search': {
            'url': 'https://${USER_NAME}:${env:PASSWORD}@example.com/mcp'
                   '?key=${API_KEY}' } } } )
    assert ensembles[ 0 ].server.url == (
        'https://env:USER_NAME:env:PASSWORD@example.com/mcp?key=env:API_KEY' )
    ensemble = descriptors.produce_ensemble( ensembles[ 0 ] )
    assert 'env:' not in repr( ensemble )
    assert json.dumps( ensembles[ 0 ].server.url ).count( 'env:' ) == 3


def test_330_server_descriptor_shows_no_values( ):
    ''' A server descriptor's repr names its settings but shows none of
        their values: not the headers, environment, arguments, URL
        credentials or query, nor the authorization's client secret. '''
    secrets = ( 'hdr-secret-1', 'arg-secret-2', 'env-secret-3',
                'url-password-4', 'query-secret-5', 'client-secret-6' )
    ensembles = descriptors.produce_server_descriptors( { 'mcpServers': {
        'remote': {
            'url': f"https://alice:{secrets[ 3 ]}@example.com/mcp"
                   f"?key={secrets[ 4 ]}",
            'headers': { 'Authorization': f"Bearer {secrets[ 0 ]}" },
            'authorization': {
                'kind': 'client-credentials', 'client_id': 'app',
                'client_secret': secrets[ 5 ] } },
        'local': {
            'command': '/usr/bin/server', 'args': [ '--token', secrets[ 1 ] ],
            'env': { 'API_KEY': secrets[ 2 ] } } } } )
    texts = [ repr( ensemble.server ) for ensemble in ensembles ]
    assert all( secret not in text for secret in secrets for text in texts )
    remote, local = sorted(
        texts, key = lambda text: 'https' not in text )
    assert "target = 'https://example.com/mcp'" in remote
    assert "headers = [ 'Authorization' ]" in remote
    assert "target = 'server', arguments = 2" in local
    assert "environment = [ 'API_KEY' ]" in local


def test_340_log_records_keep_arguments_without_secret( ):
    ''' While a redactor is active, a record which quotes a secret loses
        its arguments to the redacted message; one which quotes none keeps
        them, for the handlers which read them.
    '''
    from invocables.mcp import redaction

    class Keeper( logging.Handler ):

        def __init__( self ):
            super( ).__init__( logging.DEBUG )
            self.records = [ ]

        def emit( self, record ):
            self.records.append( ( record.getMessage( ), record.args ) )

    scribe = logging.getLogger( 'invocables.mcp.sessions' )
    keeper = Keeper( )
    scribe.addHandler( keeper )
    level = scribe.level
    scribe.setLevel( logging.DEBUG )
    redactor = redaction.Redactor( [ 'sk-kept-args-secret' ] )
    redaction.activate_redactor( redactor )
    try:
        scribe.debug( "Task %s of %r.", 'one', 'plain' )
        scribe.debug( "Token %s.", 'sk-kept-args-secret' )
    finally:
        redaction.deactivate_redactor( redactor )
        scribe.removeHandler( keeper )
        scribe.setLevel( level )
    assert keeper.records[ 0 ] == ( "Task one of 'plain'.", ( 'one', 'plain' ) )
    assert keeper.records[ 1 ] == ( 'Token ***.', None )
