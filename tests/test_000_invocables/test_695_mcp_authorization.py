# SPDX-License-Identifier: Apache-2.0

''' Authorization with a protected MCP server and its OAuth authorization
    server (the mcp SDK's server-side auth components) on 127.0.0.1,
    driven by a headless redirect handler.
'''


import asyncio
import contextlib
import json
import logging
import os
import stat
import sys

import httpx2
import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.mcp import authorization

from . import mcp_support


pytestmark = pytest.mark.asyncio
_BOUND = 30.0
_SECRET = 'client-secret-value-42'


@contextlib.contextmanager
def _serve( *options ):
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'oauth_server.py', '--port', str( port ),
        '--client', f"svc:{_SECRET}", *options )
    with mcp_support.serve_http( command, port ) as url: yield url


class _Browser:
    ''' Headless user agent: follows the authorization URL's redirect to
        the loopback listener.
    '''

    def __init__( self ):
        self.visits = 0

    async def open( self, url ):
        self.visits += 1
        async with httpx2.AsyncClient( ) as client:
            answer = await client.get( url )
            await client.get( answer.headers[ 'location' ] )


def _produce( url, browser, directory, name = 'oauth' ):
    grant = authorization.produce_loopback_authorization(
        mcp_support.select_port( ), opener = browser.open,
        storage = directory, timeout = _BOUND )
    return invocables.mcp.produce_ensemble(
        name, url = url, authorization = grant )


async def _call( ensemble, name ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    contents = await asyncio.wait_for(
        ensemble.access_invoker( name )( context, { } ), _BOUND )
    return contents[ 0 ].text


async def test_100_code_flow_and_storage( tmp_path ):
    ''' The code flow with discovery, registration and PKCE authorizes
        once; tokens are stored in a 0600 file and reused by a new
        ensemble without asking the user again.
    '''
    browser = _Browser( )
    with _serve( ) as url:
        async with _produce( url, browser, tmp_path ) as ensemble:
            client = await _call( ensemble, 'whoami' )
        async with _produce( url, browser, tmp_path ) as ensemble:
            again = await _call( ensemble, 'whoami' )
    assert client == again != 'anonymous'
    assert browser.visits == 1
    path, = tmp_path.iterdir( )
    assert stat.S_IMODE( path.stat( ).st_mode ) == 0o600
    stored = json.loads( path.read_text( ) )
    assert stored[ 'tokens' ][ 'access_token' ].startswith( 'at-' )
    assert stored[ 'client' ][ 'client_id' ] == client


async def test_110_refresh_on_rejection( tmp_path ):
    ''' A token the server stops accepting (401) is refreshed, without
        asking the user again.
    '''
    browser = _Browser( )
    with _serve( ) as url:
        async with _produce( url, browser, tmp_path ) as ensemble:
            assert await _call( ensemble, 'forget_tokens' ) == 'forgotten'
            assert await _call( ensemble, 'whoami' ) != 'anonymous'
            assert await _call( ensemble, 'count_refreshes' ) == '1'
    assert browser.visits == 1


async def test_120_expired_tokens_refreshed( tmp_path ):
    ''' A stored token past its expiry is refreshed before use, without
        asking the user again.
    '''
    browser = _Browser( )
    with _serve( ) as url:
        async with _produce( url, browser, tmp_path ): pass
        path, = tmp_path.iterdir( )
        stored = json.loads( path.read_text( ) )
        stored[ 'tokens' ][ 'access_token' ] = 'at-stale'
        stored[ 'tokens' ][ 'expires_at' ] -= 7200
        path.write_text( json.dumps( stored ) )
        async with _produce( url, browser, tmp_path ) as ensemble:
            assert await _call( ensemble, 'whoami' ) != 'anonymous'
            assert await _call( ensemble, 'count_refreshes' ) == '1'
    assert browser.visits == 1


class _ForgingBrowser( _Browser ):
    ''' Headless user agent which first follows a redirect whose state was
        forged, then the true one; keeps the listener's answers.
    '''

    def __init__( self, forgeries = 1, truthful = True ):
        super( ).__init__( )
        self.forgeries = forgeries
        self.truthful = truthful
        self.statuses = [ ]
        self.locations = [ ]

    async def open( self, url ):
        self.visits += 1
        async with httpx2.AsyncClient( ) as client:
            answer = await client.get( url )
            location = answer.headers[ 'location' ]
            self.locations.append( location )
            forged = location.replace( 'state=', 'state=forged' )
            for _ in range( self.forgeries ):
                reply = await client.get( forged )
                self.statuses.append( reply.status_code )
            if not self.truthful: return
            reply = await client.get( location )
            self.statuses.append( reply.status_code )


async def test_130_wrong_state_then_right( tmp_path ):
    ''' The loopback listener answers a redirect with a wrong state 400
        and waits on: the redirect with the right state then authorizes.

        Before, the listener took the first redirect whatever its state,
        and the authorization failed.
    '''
    browser = _ForgingBrowser( forgeries = 2 )
    with _serve( ) as url:
        async with _produce( url, browser, tmp_path ) as ensemble:
            assert await _call( ensemble, 'whoami' ) != 'anonymous'
    assert browser.statuses == [ 400, 400, 200 ]
    assert browser.visits == 1


async def test_133_wrong_state_only( tmp_path ):
    ''' Only redirects with a wrong state: the listener refuses them and
        waits until its deadline; the connection then fails with an
        authorization failure which names the server and the wrong state,
        and shows no code.
    '''
    browser = _ForgingBrowser( truthful = False )
    grant = authorization.produce_loopback_authorization(
        mcp_support.select_port( ), opener = browser.open,
        storage = tmp_path, timeout = 1.0 )
    with _serve( ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'oauth', url = url, authorization = grant )
        with pytest.raises( exceptions.AuthorizationFailure ) as caught:
            await asyncio.wait_for( ensemble.connect( ), _BOUND )
    message = str( caught.value )
    assert "'oauth'" in message and "wrong 'state'" in message
    code = browser.locations[ 0 ].split( 'code=' )[ 1 ].split( '&' )[ 0 ]
    assert code not in message
    assert browser.statuses == [ 400 ]
    assert isinstance( caught.value, exceptions.ConnectionFailure )


async def test_136_wrong_state_from_handler( tmp_path ):
    ''' A callback handler of the application which returns a redirect
        with a wrong state is refused (by the SDK's check) with an
        authorization failure naming the server and showing no code.
    '''
    codes = [ ]
    redirects = [ ]

    async def redirect( url ):
        async with httpx2.AsyncClient( ) as client:
            answer = await client.get( url )
        location = answer.headers[ 'location' ]
        codes.append( location.split( 'code=' )[ 1 ].split( '&' )[ 0 ] )
        redirects.append( location.replace( 'state=', 'state=forged' ) )

    async def receive( ): return redirects[ -1 ]

    grant = authorization.CodeAuthorization(
        redirect_handler = redirect, callback_handler = receive,
        redirect_uri = 'http://127.0.0.1:9/callback', storage = tmp_path )
    with _serve( ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'oauth', url = url, authorization = grant )
        with pytest.raises( exceptions.AuthorizationFailure ) as caught:
            await asyncio.wait_for( ensemble.connect( ), _BOUND )
    message = str( caught.value )
    assert "'oauth'" in message and 'state' in message
    assert codes and codes[ 0 ] not in message


async def test_150_loopback_listener( ):
    ''' The listener answers only the state of the authorization URL it
        was given: a wrong, missing or repeated state gets 400, another
        path 404, and it keeps waiting; the right state gets 200 and is
        returned. Alone, wrong states end at the listener's deadline.
    '''
    opened = [ ]

    async def opener( url ): opened.append( url )

    port = mcp_support.select_port( )
    loopback = authorization.LoopbackRedirect( port, opener, timeout = _BOUND )
    issued = 'https://as.example/authorize?client_id=c&state=s-42&x=1'
    await loopback.redirect( issued )
    assert opened == [ issued ]
    receiving = asyncio.create_task( loopback.receive( ) )
    base = loopback.redirect_uri
    async with httpx2.AsyncClient( ) as client:
        for target, status in (
            ( f"{base}?code=c1&state=s-41", 400 ),
            ( f"{base}?code=c1", 400 ),
            ( f"{base}?code=c1&state=s-42&state=s-41", 400 ),
            ( f"{base}?code=c1&state=", 400 ),
            ( f"http://127.0.0.1:{port}/other?state=s-42", 404 ),
            ( f"{base}?code=c2&state=s-42", 200 ),
        ):
            reply = await client.get( target )
            assert reply.status_code == status, target
            if status != 200: assert not receiving.done( )
    received = await asyncio.wait_for( receiving, _BOUND )
    assert received == f"{base}?code=c2&state=s-42"
    assert loopback.refusals == 4
    quick = authorization.LoopbackRedirect(
        mcp_support.select_port( ), opener, timeout = 1.0 )
    await quick.redirect( issued )
    receiving = asyncio.create_task( quick.receive( ) )
    async with httpx2.AsyncClient( ) as client:
        reply = await client.get( f"{quick.redirect_uri}?code=c&state=bad" )
    assert reply.status_code == 400
    assert b'wrong state' in reply.content
    with pytest.raises( TimeoutError ) as caught:
        await asyncio.wait_for( receiving, _BOUND )
    assert "1 with a wrong 'state'" in str( caught.value )


@pytest.mark.parametrize( 'options', [
    { 'port': -1 }, { 'port': 0 }, { 'port': 65536 }, { 'port': 10 ** 400 },
    { 'port': True }, { 'port': '8080' }, { 'timeout': 0 },
    { 'timeout': float( 'nan' ) }, { 'timeout': None },
] )
def test_155_loopback_options_refused( options ):
    ''' A port which no listener can take, and a timeout which is not a
        positive number of seconds, are refused when the listener is
        made, naming the option, not when a user's login waits on it.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        authorization.LoopbackRedirect( **options )
    assert f"authorization {next( iter( options ) )}" in str( caught.value )


async def test_140_wrong_audience( tmp_path ):
    ''' Tokens issued for another resource are refused by the server: the
        connection fails, bounded, without looping on the user, with an
        authorization failure naming the status and the server's error.
    '''
    browser = _Browser( )
    with _serve( '--audience', 'http://127.0.0.1:9/elsewhere' ) as url:
        ensemble = _produce( url, browser, tmp_path )
        with pytest.raises( exceptions.AuthorizationFailure ) as caught:
            await asyncio.wait_for( ensemble.connect( ), _BOUND )
    assert 1 <= browser.visits <= 2
    message = str( caught.value )
    assert "'oauth'" in message and '401' in message, message
    assert 'invalid_token' in message, message


async def test_200_client_credentials( monkeypatch ):
    ''' Client credentials from the environment authorize; a wrong secret
        fails without showing it.
    '''
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    storage = authorization.MemoryTokenStorage( )
    grant = authorization.ClientCredentialsAuthorization(
        client_id = 'svc', client_secret = 'env:TEST_OAUTH_SECRET',
        storage = storage )
    with _serve( ) as url:
        async with invocables.mcp.produce_ensemble(
            'machine', url = url, authorization = grant
        ) as ensemble:
            assert await _call( ensemble, 'whoami' ) == 'svc'
        monkeypatch.setenv( 'TEST_OAUTH_SECRET', 'wrong-secret-value' )
        refused = invocables.mcp.produce_ensemble(
            'machine', url = url,
            authorization = authorization.ClientCredentialsAuthorization(
                client_id = 'svc', client_secret = 'env:TEST_OAUTH_SECRET',
                storage = authorization.MemoryTokenStorage( ) ) )
        with pytest.raises( exceptions.AuthorizationFailure ) as caught:
            await asyncio.wait_for( refused.connect( ), _BOUND )
    assert 'wrong-secret-value' not in str( caught.value )
    assert "'machine'" in str( caught.value )
    assert storage.tokens is not None


async def test_210_bearer_token( monkeypatch ):
    ''' A static bearer token from the environment is sent; an unknown one
        fails the connection.
    '''
    storage = authorization.MemoryTokenStorage( )
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    with _serve( ) as url:
        async with invocables.mcp.produce_ensemble(
            'machine', url = url,
            authorization = authorization.ClientCredentialsAuthorization(
                client_id = 'svc', client_secret = 'env:TEST_OAUTH_SECRET',
                storage = storage ) ): pass
        monkeypatch.setenv( 'TEST_BEARER', storage.tokens.access_token )
        async with invocables.mcp.produce_ensemble(
            'bearer', url = url,
            authorization = authorization.BearerAuthorization(
                token = 'env:TEST_BEARER' )
        ) as ensemble:
            assert await _call( ensemble, 'whoami' ) == 'svc'
        monkeypatch.setenv( 'TEST_BEARER', 'unknown-token-value' )
        refused = invocables.mcp.produce_ensemble(
            'bearer', url = url,
            authorization = authorization.BearerAuthorization(
                token = 'env:TEST_BEARER' ) )
        with pytest.raises( exceptions.ConnectionFailure ) as caught:
            await asyncio.wait_for( refused.connect( ), _BOUND )
    assert 'unknown-token-value' not in str( caught.value )


async def test_300_secrets_hidden( tmp_path, caplog ):
    ''' Tokens and secrets appear in no repr and no log record. '''
    caplog.set_level( logging.DEBUG )
    browser = _Browser( )
    with _serve( ) as url:
        async with _produce( url, browser, tmp_path ) as ensemble:
            await _call( ensemble, 'forget_tokens' )
            await _call( ensemble, 'whoami' )
            shown = repr( ensemble ) + repr( ensemble.features.authorization )
    path, = tmp_path.iterdir( )
    tokens = json.loads( path.read_text( ) )[ 'tokens' ]
    texts = [ record.getMessage( ) for record in caplog.records ]
    for secret in ( tokens[ 'access_token' ], tokens[ 'refresh_token' ] ):
        assert secret not in shown
        assert not any( secret in text for text in texts )
    literal = authorization.BearerAuthorization( token = 'literal-secret' )
    assert 'literal-secret' not in repr( literal )
    credentials = authorization.ClientCredentialsAuthorization(
        client_id = 'svc', client_secret = 'literal-secret' )
    assert 'literal-secret' not in repr( credentials )


async def test_310_configuration( ):
    ''' Authorization applies to HTTP servers only; an unset variable
        names itself at connect time.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.mcp.produce_ensemble(
            'local', command = [ sys.executable, '-c', 'pass' ],
            authorization = authorization.BearerAuthorization(
                token = 'x' ) )
    os.environ.pop( 'TEST_UNSET_TOKEN', None )
    ensemble = invocables.mcp.produce_ensemble(
        'remote', url = 'http://127.0.0.1:9/mcp',
        authorization = authorization.BearerAuthorization(
            token = 'env:TEST_UNSET_TOKEN' ) )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        await asyncio.wait_for( ensemble.connect( ), _BOUND )
    assert 'TEST_UNSET_TOKEN' in str( caught.value )



async def test_400_descriptor( tmp_path, monkeypatch ):
    ''' A server descriptor's [mcp.authorization] table authorizes. '''
    from invocables import descriptors
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    path = tmp_path / 'server.toml'
    with _serve( ) as url:
        path.write_text(
            "[ensemble]\nname = 'secured'\n\n[mcp]\n"
            f"url = '{url}'\n\n[mcp.authorization]\n"
            "kind = 'client-credentials'\nclient_id = 'svc'\n"
            "client_secret = 'env:TEST_OAUTH_SECRET'\n"
            f"storage = '{tmp_path / 'tokens'}'\n" )
        descriptor = descriptors.produce_ensemble_descriptor( path )
        assert descriptor.server.authorization[ 'kind' ] == (
            'client-credentials' )
        ensemble = descriptors.produce_ensemble( descriptor )
        async with ensemble:
            assert await _call( ensemble, 'whoami' ) == 'svc'
    assert _SECRET not in repr( ensemble )
    assert ( tmp_path / 'tokens' ).is_dir( )


async def test_410_descriptor_invalid( tmp_path ):
    ''' An unknown kind, a missing key and authorization for a stdio
        server are refused at their key paths.
    '''
    from invocables import descriptors
    path = tmp_path / 'server.toml'
    cases = (
        ( "url = 'http://127.0.0.1:9/mcp'\n\n[mcp.authorization]\n"
          "kind = 'magic'\n", 'mcp.authorization.kind' ),
        ( "url = 'http://127.0.0.1:9/mcp'\n\n[mcp.authorization]\n"
          "kind = 'bearer'\n", 'mcp.authorization.token' ),
        ( "command = [ 'server' ]\n\n[mcp.authorization]\n"
          "kind = 'bearer'\ntoken = 'env:X'\n", 'mcp.authorization' ),
    )
    for table, keypath in cases:
        path.write_text(
            f"[ensemble]\nname = 'secured'\n\n[mcp]\n{table}" )
        with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
            descriptors.produce_ensemble_descriptor( path )
        assert keypath in str( caught.value ), str( caught.value )


async def test_420_json_import( tmp_path, monkeypatch ):
    ''' The mcpServers JSON takes an authorization object of the shapes of
        [mcp.authorization] (``${NAME}`` references become ``env:NAME``),
        and authorizes; a bad one is refused at its key path.
    '''
    from invocables import descriptors
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    with _serve( ) as url:
        document = { 'mcpServers': { 'secured': {
            'url': url, 'resourcesAsTools': True,
            'authorization': {
                'kind': 'client-credentials', 'client_id': 'svc',
                'client_secret': '${TEST_OAUTH_SECRET}',
                'storage': str( tmp_path / 'tokens' ) } } } }
        descriptor, = descriptors.produce_server_descriptors( document )
        server = descriptor.server
        assert server.authorization[ 'client_secret' ] == (
            'env:TEST_OAUTH_SECRET' )
        assert server.resources_as_tools
        ensemble = descriptors.produce_ensemble( descriptor )
        async with ensemble:
            assert await _call( ensemble, 'whoami' ) == 'svc'
            assert 'read_resource' in {
                invoker.name for invoker in ensemble.survey_invokers( ) }
    oauth = { 'mcpServers': { 'user': {
        'url': 'http://127.0.0.1:9/mcp',
        'authorization': { 'kind': 'oauth', 'port': 33999 } } } }
    descriptor, = descriptors.produce_server_descriptors( oauth )
    assert dict( descriptor.server.authorization ) == {
        'kind': 'oauth', 'port': 33999 }
    cases = (
        ( { 'kind': 'bearer' }, 'mcpServers.bad.authorization.token' ),
        ( { 'kind': 'magic' }, 'mcpServers.bad.authorization.kind' ),
        ( 'env:TOKEN', 'mcpServers.bad.authorization' ),
    )
    for value, keypath in cases:
        bad = { 'mcpServers': { 'bad': {
            'url': 'http://127.0.0.1:9/mcp', 'authorization': value } } }
        with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
            descriptors.produce_server_descriptors( bad )
        assert keypath in str( caught.value ), str( caught.value )


@pytest.mark.filterwarnings( 'ignore::invocables.exceptions.'
                             'SecretReferenceWarning' )
async def test_430_written_back_without_secrets( tmp_path, monkeypatch ):
    ''' Writing descriptors of a server (as the snapshot command does)
        writes [mcp.authorization] back, with references only: a literal
        token or client secret, given in a descriptor or to
        produce_ensemble, is never written; loading what was written gives
        the same table.
    '''
    if sys.version_info >= ( 3, 11 ): import tomllib
    else: import tomli as tomllib
    from invocables import descriptors
    from invocables.descriptors import servers
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    bearer = servers.access_server_descriptor(
        invocables.mcp.produce_ensemble(
            'keyed', url = 'http://127.0.0.1:9/mcp',
            authorization = authorization.BearerAuthorization(
                token = 'literal-token-value' ) ) )
    oauth = servers.access_server_descriptor(
        invocables.mcp.produce_ensemble(
            'user', url = 'http://127.0.0.1:9/mcp', resources_as_tools = True,
            authorization = authorization.produce_loopback_authorization(
                33999, scope = 'mcp', storage = tmp_path / 'tokens' ) ) )
    with _serve( ) as url:
        literal = descriptors.produce_server_descriptors( { 'mcpServers': {
            'secured': { 'url': url, 'authorization': {
                'kind': 'client-credentials', 'client_id': 'svc',
                'client_secret': _SECRET, 'scope': 'mcp',
                'storage': str( tmp_path / 'tokens' ) } } } } )[ 0 ]
        ensemble = descriptors.produce_ensemble( literal )
        async with ensemble:
            path = descriptors.create_descriptors(
                ensemble, tmp_path / 'out', server = literal.server )
            direct = descriptors.produce_documents( ensemble )
            keyed = descriptors.produce_documents( ensemble, server = bearer )
            user = descriptors.produce_documents( ensemble, server = oauth )
    text = path.read_text( )
    assert _SECRET not in text
    table = tomllib.loads( text )[ 'mcp' ][ 'authorization' ]
    assert table == {
        'kind': 'client-credentials', 'client_id': 'svc',
        'client_secret': 'env:SECURED_CLIENT_SECRET', 'scope': 'mcp',
        'storage': str( tmp_path / 'tokens' ) }
    loaded = descriptors.produce_ensemble_descriptor( path )
    assert dict( loaded.server.authorization ) == table
    assert direct[ 'secured.toml' ][ 'mcp' ][ 'authorization' ] == table
    assert _SECRET not in json.dumps( direct, default = str )
    assert keyed[ 'secured.toml' ][ 'mcp' ][ 'authorization' ] == {
        'kind': 'bearer', 'token': 'env:SECURED_TOKEN' }
    assert 'literal-token-value' not in json.dumps( keyed, default = str )
    written = user[ 'secured.toml' ][ 'mcp' ]
    assert written[ 'authorization' ] == {
        'kind': 'oauth', 'port': 33999, 'scope': 'mcp',
        'storage': str( tmp_path / 'tokens' ) }
    assert written[ 'resources_as_tools' ] is True


def _produce_credentials( url, name = 'machine', **options ):
    return invocables.mcp.produce_ensemble(
        name, url = url, **options,
        authorization = authorization.ClientCredentialsAuthorization(
            client_id = 'svc', client_secret = 'env:TEST_OAUTH_SECRET',
            storage = authorization.MemoryTokenStorage( ) ) )


class _Orphans( logging.Handler ):
    ''' Keeps asyncio's reports of tasks which failed unobserved. '''

    def __init__( self ):
        super( ).__init__( logging.ERROR )
        self.records = [ ]

    def emit( self, record ):
        self.records.append( record.getMessage( ) )


async def test_500_token_endpoint_timeout( tmp_path, monkeypatch ):
    ''' A token endpoint which does not answer fails the connection with
        an authorization failure within the connect timeout, naming the
        server and the endpoint, showing no secret, leaving no task.

        Before, the connect timeout ended it with a plain connection
        failure, and the SDK's flow, closed in another task, reported
        "The current task is not holding this lock".
    '''
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    orphans = _Orphans( )
    logging.getLogger( 'asyncio' ).addHandler( orphans )
    try:
        with _serve( '--token-delay', '600' ) as url:
            for ensemble in (
                _produce_credentials( url, 'slow', connect_timeout = 4 ),
                invocables.mcp.produce_ensemble(
                    'slow', url = url, connect_timeout = 4,
                    authorization = _produce(
                        url, _Browser( ), tmp_path
                    ).features.authorization ),
            ):
                with pytest.raises( exceptions.AuthorizationFailure ) as caught:
                    await asyncio.wait_for( ensemble.connect( ), 40 )
                message = str( caught.value )
                assert "'slow'" in message and '/token' in message
                assert 'did not answer in time' in message
                assert _SECRET not in message
                assert not ensemble.is_connected( )
            await asyncio.sleep( 0 )
        import gc
        gc.collect( )
        await asyncio.sleep( 0 )
    finally: logging.getLogger( 'asyncio' ).removeHandler( orphans )
    assert not orphans.records, orphans.records
    assert not [
        task for task in asyncio.all_tasks( )
        if task.get_name( ).startswith( 'invocables.mcp:' ) ]


async def test_510_invalid_metadata( tmp_path, monkeypatch ):
    ''' Metadata of the authorization server which are not valid, with
        no endpoints at the default paths, fail with an authorization
        failure which says so, for both grants.
    '''
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    with _serve( '--invalid-metadata' ) as url:
        for ensemble in (
            _produce_credentials( url, 'broken' ),
            _produce( url, _Browser( ), tmp_path, name = 'broken' ),
        ):
            with pytest.raises( exceptions.AuthorizationFailure ) as caught:
                await asyncio.wait_for( ensemble.connect( ), _BOUND )
            message = str( caught.value )
            assert "'broken'" in message
            assert 'are not valid OAuthMetadata' in message
            assert _SECRET not in message


async def test_520_revoked_tokens( tmp_path, monkeypatch ):
    ''' Tokens revoked by the server (access and refresh): the refresh
        fails, and authorization starts again (the user is asked once
        more; client credentials are sent again).
    '''
    monkeypatch.setenv( 'TEST_OAUTH_SECRET', _SECRET )
    browser = _Browser( )
    with _serve( ) as url:
        async with _produce( url, browser, tmp_path ) as ensemble:
            client = await _call( ensemble, 'whoami' )
            assert await _call( ensemble, 'revoke_tokens' ) == 'revoked'
            assert await _call( ensemble, 'whoami' ) == client
            assert await _call( ensemble, 'count_refreshes' ) == '0'
        async with _produce_credentials( url ) as ensemble:
            assert await _call( ensemble, 'revoke_tokens' ) == 'revoked'
            assert await _call( ensemble, 'whoami' ) == 'svc'
    assert browser.visits == 2


class _SlowBrowser( _Browser ):
    ''' Headless user agent of a user who takes a while to log in. '''

    def __init__( self, delay ):
        super( ).__init__( )
        self.delay = delay

    async def open( self, url ):
        await asyncio.sleep( self.delay ) # the user reads and logs in
        await super( ).open( url )


async def test_530_user_time_not_counted( tmp_path ):
    ''' The user's time at the authorization page does not count against
        the connect timeout: a login slower than it still connects.
    '''
    browser = _SlowBrowser( delay = 5.0 )
    grant = authorization.produce_loopback_authorization(
        mcp_support.select_port( ), opener = browser.open,
        storage = tmp_path, timeout = _BOUND )
    with _serve( ) as url:
        async with invocables.mcp.produce_ensemble(
            'patient', url = url, authorization = grant,
            connect_timeout = 4.0,
        ) as ensemble:
            assert await _call( ensemble, 'whoami' ) != 'anonymous'
    assert browser.visits == 1
