# SPDX-License-Identifier: Apache-2.0

''' Authorization options beyond dynamic registration: clients registered
    beforehand, client ID metadata documents, ``private_key_jwt`` client
    credentials, enterprise-managed authorization and workload identity
    federation, in code and in
    ``[mcp.authorization]`` of descriptors (the flows themselves run against
    the official conformance suite, in test_694).
'''


import json
import sys

from importlib.metadata import version

import jwt
import pytest

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

import invocables
import invocables.mcp

from invocables import descriptors
from invocables import exceptions
from invocables.descriptors import servers
from invocables.mcp import authorization


MAJOR = int( version( 'mcp' ).split( '.' )[ 0 ] )
_URL = 'http://127.0.0.1:9/mcp'
_SECRET = 'client-secret-value-42'


def _produce_pem( key ):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption( ) ).decode( )


def _load( tmp_path, table ):
    path = tmp_path / 'server.toml'
    path.write_text(
        "[ensemble]\nname = 'secured'\n\n[mcp]\n"
        f"url = '{_URL}'\n\n[mcp.authorization]\n{table}" )
    return descriptors.produce_ensemble_descriptor( path )


def _echo( text: str ) -> str:
    ''' Returns text. '''
    return text


def _grant( tmp_path, table ):
    ''' Returns authorization of the ensemble of a descriptor. '''
    ensemble = descriptors.produce_ensemble( _load( tmp_path, table ) )
    return ensemble.features.authorization


def test_100_registered_client_descriptor( tmp_path ):
    ''' ``kind = 'oauth'`` takes a client registered beforehand (its
        secret as a reference) and a client ID metadata document URL.
    '''
    grant = _grant( tmp_path, (
        "kind = 'oauth'\nport = 33999\nclient_id = 'desk'\n"
        "client_secret = 'env:DESK_SECRET'\n"
        "client_metadata_url = 'https://app.example.com/client.json'\n" ) )
    assert isinstance( grant, authorization.CodeAuthorization )
    assert grant.client_id == 'desk'
    assert grant.client_secret == 'env:DESK_SECRET'
    assert grant.client_metadata_url == 'https://app.example.com/client.json'
    assert grant.redirect_uri == 'http://127.0.0.1:33999/callback'
    assert 'DESK_SECRET' in repr( grant ) or 'desk' in repr( grant )


def test_110_private_key_descriptor( tmp_path ):
    ''' ``private_key`` of client credentials is a file from the folder of
        the descriptor, or an ``env:`` reference kept as it is.
    '''
    grant = _grant( tmp_path, (
        "kind = 'client-credentials'\nclient_id = 'svc'\n"
        "private_key = 'keys/client.pem'\nsigning_algorithm = 'ES256'\n" ) )
    assert isinstance( grant, authorization.ClientCredentialsAuthorization )
    assert grant.private_key == str( tmp_path / 'keys' / 'client.pem' )
    assert grant.signing_algorithm == 'ES256'
    grant = _grant( tmp_path, (
        "kind = 'client-credentials'\nclient_id = 'svc'\n"
        "private_key = 'env:SVC_KEY'\n" ) )
    assert grant.private_key == 'env:SVC_KEY'


def test_120_enterprise_descriptor( tmp_path ):
    ''' ``kind = 'enterprise'`` gives enterprise-managed authorization. '''
    grant = _grant( tmp_path, (
        "kind = 'enterprise'\nidentity_token = 'env:ID_TOKEN'\n"
        "identity_provider_token_endpoint = 'https://idp.example.com/token'\n"
        "identity_provider_client_id = 'agent-at-idp'\n"
        "issuer = 'https://auth.example.com'\nclient_id = 'agent'\n"
        "client_secret = 'env:AGENT_SECRET'\nscope = 'notes.read'\n" ) )
    assert isinstance( grant, authorization.EnterpriseAuthorization )
    assert grant.identity_provider_client_id == 'agent-at-idp'
    assert grant.issuer == 'https://auth.example.com'
    assert grant.scope == 'notes.read'
    assert 'ID_TOKEN' in repr( grant )


_JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJl'


def test_125_workload_descriptor( tmp_path ):
    ''' ``kind = 'workload'`` gives workload identity federation: its
        ``assertion`` a file from the folder of the descriptor, an
        ``env:`` reference or a JWT, each kept as it is; a repr never
        shows the JWT.
    '''
    grant = _grant( tmp_path, (
        "kind = 'workload'\nassertion = 'tokens/workload.jwt'\n"
        "client_id = 'fleet'\nscope = 'inventory.read'\n" ) )
    assert isinstance( grant, authorization.WorkloadAuthorization )
    assert grant.assertion == str( tmp_path / 'tokens' / 'workload.jwt' )
    assert grant.client_id == 'fleet'
    assert grant.scope == 'inventory.read'
    assert 'workload.jwt' in repr( grant )
    grant = _grant( tmp_path, (
        "kind = 'workload'\nassertion = 'env:WORKLOAD_JWT'\n" ) )
    assert grant.assertion == 'env:WORKLOAD_JWT'
    grant = _grant( tmp_path, f"kind = 'workload'\nassertion = '{_JWT}'\n" )
    assert grant.assertion == _JWT
    assert _JWT not in repr( grant ) and 'eyJ' not in repr( grant )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        _load( tmp_path, "kind = 'workload'\nclient_id = 'fleet'\n" )
    assert 'mcp.authorization.assertion' in str( caught.value )


def test_126_workload_assertion_read( tmp_path, monkeypatch ):
    ''' The workload's JWT is read anew at each grant (a platform renews
        its file); a file which cannot be read, or which holds no JWT, is
        an authorization failure which names the file, never the text.
    '''
    from invocables.mcp import _grants
    path = tmp_path / 'workload.jwt'
    path.write_text( f"{_JWT}\n" )
    grant = authorization.WorkloadAuthorization( assertion = str( path ) )
    assert _grants._read_assertion( 'fleet', grant ) == _JWT
    renewed = _JWT.replace( 'c2lnbmF0dXJl', 'cmVuZXdlZA' )
    path.write_text( renewed )
    assert _grants._read_assertion( 'fleet', grant ) == renewed
    monkeypatch.setenv( 'WORKLOAD_JWT', f" {_JWT} " )
    grant = authorization.WorkloadAuthorization( assertion = 'env:WORKLOAD_JWT' )
    assert _grants._read_assertion( 'fleet', grant ) == _JWT
    missing = authorization.WorkloadAuthorization(
        assertion = str( tmp_path / 'absent.jwt' ) )
    with pytest.raises( exceptions.AuthorizationFailure ) as caught:
        _grants._read_assertion( 'fleet', missing )
    assert 'absent.jwt' in str( caught.value )
    path.write_text( 'not-a-token-but-secret-text' )
    grant = authorization.WorkloadAuthorization( assertion = str( path ) )
    with pytest.raises( exceptions.AuthorizationFailure ) as caught:
        _grants._read_assertion( 'fleet', grant )
    assert 'not a JWT' in str( caught.value )
    assert 'secret-text' not in str( caught.value )


def _make_pipe( folder ):
    ''' Returns a named pipe which nothing writes: opening it to read
        blocks, unless asked not to. '''
    import os
    path = folder / 'credential.pipe'
    if not path.exists( ): os.mkfifo( path )
    return path


def test_127_credential_files_bounded( tmp_path ):
    ''' A credential's file is read only if it is a regular file of at
        most 64 KiB: a named pipe which nothing writes, a device which
        never ends, a directory or a huge file fail at once, saying why.
    '''
    from invocables.mcp import _grants
    huge = tmp_path / 'huge.jwt'
    huge.write_text( _JWT + ' ' * 70_000 )
    cases = (
        ( _make_pipe( tmp_path ), 'not a regular file' ),
        ( '/dev/zero', 'not a regular file' ),
        ( tmp_path, 'not a regular file' ),
        ( huge, 'larger than' ) )
    for path, reason in cases:
        grant = authorization.WorkloadAuthorization( assertion = str( path ) )
        with pytest.raises( exceptions.AuthorizationFailure ) as caught:
            _grants._read_assertion( 'fleet', grant )
        assert reason in str( caught.value ), str( caught.value )
    link = tmp_path / 'link.jwt'
    ( tmp_path / 'target.jwt' ).write_text( _JWT )
    link.symlink_to( tmp_path / 'target.jwt' )
    grant = authorization.WorkloadAuthorization( assertion = str( link ) )
    assert _grants._read_assertion( 'fleet', grant ) == _JWT


def test_128_workload_names_with_dots( tmp_path ):
    ''' A file name with two dots (``sa.token.txt``) is a file of the
        descriptor's folder, not a JWT given as it is: a JWT's first part
        is a JSON object naming its algorithm. '''
    from invocables import __
    for name in ( 'sa.token.txt', 'eyes.token.jwt', 'run.a.b' ):
        grant = _grant( tmp_path, (
            f"kind = 'workload'\nassertion = '{name}'\n" ) )
        assert grant.assertion == str( tmp_path / name )
        assert not __.is_jwt( name )
    assert __.is_jwt( _JWT ) and __.is_jwt( f" {_JWT}\n" )


def test_129_storage_unexpandable( tmp_path ):
    ''' A token storage under the home of a user who does not exist is
        a descriptor error naming its key, and a configuration error when
        the table is given in code. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        _load( tmp_path, (
            "kind = 'workload'\nassertion = 'env:WORKLOAD_JWT'\n"
            "storage = '~no-such-user-of-invocables/tokens'\n" ) )
    assert 'mcp.authorization.storage' in str( caught.value )
    assert 'cannot expand' in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        authorization.produce_authorization_from_table( {
            'kind': 'workload', 'assertion': 'env:WORKLOAD_JWT',
            'storage': '~no-such-user-of-invocables/tokens' } )
    assert 'give a full path' in str( caught.value )


def test_130_descriptor_refusals( tmp_path ):
    ''' Client credentials need exactly one of secret and key; a secret
        needs its client; enterprise authorization needs its keys; each
        refusal names its key path.
    '''
    cases = (
        ( "kind = 'client-credentials'\nclient_id = 'svc'\n",
          'mcp.authorization.client_secret' ),
        ( "kind = 'client-credentials'\nclient_id = 'svc'\n"
          "client_secret = 'env:S'\nprivate_key = 'env:K'\n",
          'mcp.authorization.client_secret' ),
        ( "kind = 'oauth'\nclient_secret = 'env:S'\n",
          'mcp.authorization.client_secret' ),
        ( "kind = 'enterprise'\nidentity_token = 'env:T'\n",
          'mcp.authorization.identity_provider_token_endpoint' ),
        ( "kind = 'oauth'\nclient_metadata = 'x'\n",
          'mcp.authorization.client_metadata' ),
    )
    for table, keypath in cases:
        with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
            _load( tmp_path, table )
        assert keypath in str( caught.value ), str( caught.value )


@pytest.mark.parametrize( 'key, algorithm', [
    ( lambda: rsa.generate_private_key( 65537, 2048 ), 'RS256' ),
    ( lambda: ec.generate_private_key( ec.SECP256R1( ) ), 'ES256' ),
    ( lambda: ec.generate_private_key( ec.SECP384R1( ) ), 'ES384' ),
    ( lambda: ed25519.Ed25519PrivateKey.generate( ), 'EdDSA' ),
] )
@pytest.mark.asyncio
async def test_140_private_key_algorithm( key, algorithm, tmp_path ):
    ''' The client assertion is signed with the algorithm of the key, read
        from a file or the environment, for the client as issuer and
        subject and the authorization server as audience.
    '''
    pem = _produce_pem( key( ) )
    ( tmp_path / 'client.pem' ).write_text( pem )
    for value in ( str( tmp_path / 'client.pem' ), pem ):
        grant = authorization.ClientCredentialsAuthorization(
            client_id = 'svc', private_key = value,
            storage = authorization.MemoryTokenStorage( ) )
        provider = authorization.produce_auth( 'svc', grant, _URL )
        assertion = await provider._assertion_provider(
            'https://auth.example.com' )
        assert jwt.get_unverified_header( assertion )[ 'alg' ] == algorithm
        claims = jwt.decode(
            assertion, options = { 'verify_signature': False } )
        assert claims[ 'iss' ] == claims[ 'sub' ] == 'svc'
        assert claims[ 'aud' ] == 'https://auth.example.com'
    assert pem not in repr( grant )


def test_150_code_refusals( tmp_path, monkeypatch ):
    ''' Broken options fail at connect time with configuration
        invalidity naming the key: no key or two credentials, a key which
        is not PEM or a file which cannot be read, an unset variable, a
        client metadata URL which is not HTTPS, a secret without client.
    '''
    monkeypatch.delenv( 'UNSET_KEY_VARIABLE', raising = False )
    ( tmp_path / 'junk.pem' ).write_text( 'not a key' )
    storage = authorization.MemoryTokenStorage( )
    cases = (
        ( authorization.ClientCredentialsAuthorization(
            client_id = 'svc', storage = storage ), 'exactly one' ),
        ( authorization.ClientCredentialsAuthorization(
            client_id = 'svc', client_secret = 's', private_key = 'k',
            storage = storage ), 'exactly one' ),
        ( authorization.ClientCredentialsAuthorization(
            client_id = 'svc', storage = storage,
            private_key = str( tmp_path / 'junk.pem' ) ), 'PEM' ),
        ( authorization.ClientCredentialsAuthorization(
            client_id = 'svc', storage = storage,
            private_key = str( tmp_path / 'absent.pem' ) ), 'absent.pem' ),
        ( authorization.ClientCredentialsAuthorization(
            client_id = 'svc', storage = storage,
            private_key = 'env:UNSET_KEY_VARIABLE' ), 'UNSET_KEY_VARIABLE' ),
        ( authorization.ClientCredentialsAuthorization(
            client_id = 'svc', storage = storage,
            private_key = str( _make_pipe( tmp_path ) ) ),
          'not a regular file' ),
        ( authorization.produce_loopback_authorization(
            33999, storage = storage,
            client_metadata_url = 'http://app.example.com/client.json' ),
          'client_metadata_url' ),
        ( authorization.produce_loopback_authorization(
            33999, storage = storage, client_secret = 'env:X' ),
          'client_id' ),
    )
    for grant, fragment in cases:
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            authorization.produce_auth( 'svc', grant, _URL )
        assert fragment in str( caught.value ), str( caught.value )


@pytest.mark.asyncio
async def test_160_registered_client( monkeypatch ):
    ''' A client registered beforehand stands for the stored registration:
        confidential (basic authentication) with a secret, public without.
    '''
    monkeypatch.setenv( 'DESK_SECRET', _SECRET )
    for secret, method in (
        ( 'env:DESK_SECRET', 'client_secret_basic' ), ( None, 'none' ),
    ):
        options = { } if secret is None else { 'client_secret': secret }
        grant = authorization.produce_loopback_authorization(
            33999, client_id = 'desk',
            storage = authorization.MemoryTokenStorage( ), **options )
        provider = authorization.produce_auth( 'desk', grant, _URL )
        await provider._initialize( )
        client = provider.context.client_info
        assert client.client_id == 'desk'
        assert client.token_endpoint_auth_method == method
        assert client.client_secret == ( _SECRET if secret else None )
        assert _SECRET not in repr( grant )


@pytest.mark.asyncio
async def test_165_registered_client_method( monkeypatch ):
    ''' A registered client sends its secret as the authorization server
        accepts: basic authentication, unless the metadata list only the
        secret in the form.
    '''
    import base64
    from mcp.shared.auth import OAuthMetadata
    monkeypatch.setenv( 'DESK_SECRET', _SECRET )
    for methods, basic in (
        ( [ 'client_secret_post' ], False ),
        ( [ 'client_secret_basic', 'client_secret_post' ], True ),
        ( None, True ),
    ):
        grant = authorization.produce_loopback_authorization(
            33999, client_id = 'desk', client_secret = 'env:DESK_SECRET',
            storage = authorization.MemoryTokenStorage( ) )
        provider = authorization.produce_auth( 'desk', grant, _URL )
        await provider._initialize( )
        provider.context.oauth_metadata = OAuthMetadata.model_validate( {
            'issuer': 'https://auth.example.com',
            'authorization_endpoint': 'https://auth.example.com/authorize',
            'token_endpoint': 'https://auth.example.com/token',
            'token_endpoint_auth_methods_supported': methods } )
        request = await provider._exchange_token_authorization_code(
            'the-code', 'the-verifier' )
        body = request.content.decode( )
        header = request.headers.get( 'authorization', '' )
        if basic:
            assert header == 'Basic ' + base64.b64encode(
                f"desk:{_SECRET}".encode( ) ).decode( )
            assert _SECRET not in body
        else:
            assert not header
            assert f"client_secret={_SECRET}" in body


def test_170_enterprise_major( ):
    ''' Enterprise-managed authorization gets the SDK 2.x's identity
        assertion provider; under 1.x, which lacks it, configuration
        invalidity says so.
    '''
    grant = authorization.EnterpriseAuthorization(
        identity_token = 'id-token', issuer = 'https://auth.example.com',
        identity_provider_token_endpoint = 'https://idp.example.com/token',
        client_id = 'agent', client_secret = _SECRET,
        storage = authorization.MemoryTokenStorage( ) )
    assert _SECRET not in repr( grant )
    if MAJOR < 2: # noqa: PLR2004
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            authorization.produce_auth( 'agent', grant, _URL )
        assert 'mcp SDK 2.x' in str( caught.value )
        return
    from mcp.client.auth.extensions.identity_assertion import (
        IdentityAssertionOAuthProvider )
    provider = authorization.produce_auth( 'agent', grant, _URL )
    assert isinstance( provider, IdentityAssertionOAuthProvider )


@pytest.mark.filterwarnings( 'ignore::invocables.exceptions.'
                             'SecretReferenceWarning' )
def test_180_written_back( tmp_path ):
    ''' Writing descriptors writes the new keys back with references only
        (a literal secret, identity token or PEM key never); a key file
        keeps its path; loading what was written gives the same table.
    '''
    if sys.version_info >= ( 3, 11 ): import tomllib
    else: import tomli as tomllib
    pem = _produce_pem( ec.generate_private_key( ec.SECP256R1( ) ) )
    grants = {
        'desk': authorization.produce_loopback_authorization(
            33999, client_id = 'desk', client_secret = _SECRET,
            client_metadata_url = 'https://app.example.com/client.json' ),
        'svc': authorization.ClientCredentialsAuthorization(
            client_id = 'svc', private_key = pem ),
        'batch': authorization.ClientCredentialsAuthorization(
            client_id = 'batch', private_key = str( tmp_path / 'b.pem' ),
            signing_algorithm = 'ES256' ),
        'agent': authorization.EnterpriseAuthorization(
            identity_token = 'literal-id-token',
            issuer = 'https://auth.example.com',
            identity_provider_token_endpoint = 'https://idp.example.com/t',
            client_id = 'agent', client_secret = _SECRET ),
        'fleet': authorization.WorkloadAuthorization(
            assertion = _JWT, client_id = 'fleet' ),
        'depot': authorization.WorkloadAuthorization(
            assertion = str( tmp_path / 'depot.jwt' ) ),
    }
    expected = {
        'desk': {
            'kind': 'oauth', 'port': 33999, 'client_id': 'desk',
            'client_secret': 'env:DESK_CLIENT_SECRET',
            'client_metadata_url': 'https://app.example.com/client.json' },
        'svc': {
            'kind': 'client-credentials', 'client_id': 'svc',
            'private_key': 'env:SVC_PRIVATE_KEY' },
        'batch': {
            'kind': 'client-credentials', 'client_id': 'batch',
            'private_key': str( tmp_path / 'b.pem' ),
            'signing_algorithm': 'ES256' },
        'agent': {
            'kind': 'enterprise', 'identity_token': 'env:AGENT_IDENTITY_TOKEN',
            'identity_provider_token_endpoint': 'https://idp.example.com/t',
            'issuer': 'https://auth.example.com', 'client_id': 'agent',
            'client_secret': 'env:AGENT_CLIENT_SECRET' },
        'fleet': {
            'kind': 'workload', 'assertion': 'env:FLEET_ASSERTION',
            'client_id': 'fleet' },
        'depot': {
            'kind': 'workload', 'assertion': str( tmp_path / 'depot.jwt' ) },
    }
    for name, grant in grants.items( ):
        server = servers.access_server_descriptor(
            invocables.mcp.produce_ensemble(
                name, url = _URL, authorization = grant ) )
        # The tools of a local ensemble stand for the server's.
        ensemble = invocables.produce_ensemble( name, [ _echo ] )
        documents = descriptors.produce_documents( ensemble, server = server )
        text = json.dumps( documents, default = str )
        assert _SECRET not in text and 'literal-id-token' not in text
        assert _JWT not in text
        assert 'PRIVATE KEY' not in text
        table = documents[ f"{name}.toml" ][ 'mcp' ][ 'authorization' ]
        assert table == expected[ name ]
        path = descriptors.create_descriptors(
            ensemble, tmp_path / name, server = server )
        written = tomllib.loads( path.read_text( ) )
        assert written[ 'mcp' ][ 'authorization' ] == expected[ name ]
        loaded = descriptors.produce_ensemble_descriptor( path )
        assert dict( loaded.server.authorization ) == expected[ name ]


def _survey_section_blocks( language ):
    ''' Returns code blocks of a language in the Authorization section of
        the MCP page, dedented.
    '''
    from pathlib import Path
    page = Path( __file__ ).parents[ 2 ] / 'documentation' / 'mcp.rst'
    text = page.read_text( )
    section = text.split( '\nAuthorization\n===' )[ 1 ].split( '\n===' )[ 0 ]
    blocks = [ ]
    for part in section.split( f".. code-block:: {language}" )[ 1 : ]:
        lines = [ ]
        for line in part.splitlines( )[ 1 : ]:
            if line and not line.startswith( '    ' ): break
            lines.append( line[ 4 : ] )
        blocks.append( '\n'.join( lines ) )
    return blocks


def test_190_documented_examples( tmp_path ):
    ''' The examples of the Authorization section build what they say:
        each Python block makes its ensembles, each TOML descriptor loads
        into an ensemble with its authorization.
    '''
    made = [ ]
    for block in _survey_section_blocks( 'python' ):
        if 'produce_ensemble(' not in block: continue
        namespace = { 'invocables': invocables }
        exec( compile( block, 'mcp.rst', 'exec' ), namespace ) # noqa: S102
        made.extend(
            value for value in namespace.values( )
            if isinstance( value, invocables.mcp.ServerEnsemble ) )
    kinds = { type( ensemble.features.authorization ) for ensemble in made }
    assert {
        authorization.CodeAuthorization,
        authorization.ClientCredentialsAuthorization,
        authorization.EnterpriseAuthorization,
        authorization.WorkloadAuthorization } <= kinds
    loaded = set( )
    for index, block in enumerate( _survey_section_blocks( 'toml' ) ):
        if '[mcp.authorization]' not in block: continue
        path = tmp_path / f"server{index}.toml"
        path.write_text( block )
        descriptor = descriptors.produce_ensemble_descriptor( path )
        ensemble = descriptors.produce_ensemble( descriptor )
        loaded.add( descriptor.server.authorization[ 'kind' ] )
        assert ensemble.features.authorization is not None
    assert loaded == { 'client-credentials', 'oauth', 'enterprise' }


class _IdentityProvider:
    ''' Token endpoint on 127.0.0.1 which records each form and answers
        with a given status and body.
    '''

    def __init__( self, status, body ):
        self.status, self.body = status, body
        self.forms = [ ]
        self.server = None

    async def __aenter__( self ):
        import asyncio
        self.server = await asyncio.start_server(
            self._serve, '127.0.0.1', 0 )
        port = self.server.sockets[ 0 ].getsockname( )[ 1 ]
        return f"http://127.0.0.1:{port}/token"

    async def __aexit__( self, *exception ):
        self.server.close( )
        await self.server.wait_closed( )

    async def _serve( self, reader, writer ):
        from urllib.parse import parse_qs
        head = await reader.readuntil( b'\r\n\r\n' )
        length = next(
            int( line.split( b':' )[ 1 ] ) for line in head.split( b'\r\n' )
            if line.lower( ).startswith( b'content-length' ) )
        form = parse_qs( ( await reader.readexactly( length ) ).decode( ) )
        self.forms.append( { key: value[ 0 ] for key, value in form.items( ) } )
        body = json.dumps( self.body ).encode( )
        writer.write(
            f"HTTP/1.1 {self.status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len( body )}\r\nConnection: close\r\n\r\n"
            .encode( ) + body )
        await writer.drain( )
        writer.close( )


@pytest.mark.asyncio
async def test_200_identity_token_exchange( monkeypatch ):
    ''' The identity token (read from its variable at each exchange) is
        exchanged for an identity assertion grant with the fields of RFC
        8693 and SEP-990; a refused exchange fails authorization naming
        the status, without the token.
    '''
    monkeypatch.setenv( 'TEST_ID_TOKEN', 'first-id-token' )
    for status, body in ( ( 200, { 'access_token': 'the-grant' } ),
                          ( 400, { 'error': 'invalid_grant' } ) ):
        idp = _IdentityProvider( status, body )
        async with idp as endpoint:
            grant = authorization.EnterpriseAuthorization(
                identity_token = 'env:TEST_ID_TOKEN',
                identity_provider_token_endpoint = endpoint,
                identity_provider_client_id = 'agent-at-idp',
                issuer = 'https://auth.example.com', client_id = 'agent',
                client_secret = _SECRET, scope = 'notes.read',
                storage = authorization.MemoryTokenStorage( ) )
            if MAJOR < 2: # noqa: PLR2004
                # The 1.x SDK has no identity assertion grant (test_170).
                with pytest.raises( exceptions.ConfigurationInvalidity ):
                    authorization.produce_auth( 'agent', grant, _URL )
                return
            provider = authorization.produce_auth( 'agent', grant, _URL )
            exchange = provider._assertion_provider
            if status != 200: # noqa: PLR2004
                with pytest.raises( exceptions.AuthorizationFailure ) as caught:
                    await exchange( 'https://auth.example.com', _URL )
                assert '400' in str( caught.value )
                assert 'first-id-token' not in str( caught.value )
                continue
            assert await exchange( 'https://auth.example.com', _URL ) == (
                'the-grant' )
            monkeypatch.setenv( 'TEST_ID_TOKEN', 'second-id-token' )
            await exchange( 'https://auth.example.com', _URL )
        first, second = idp.forms
        assert first == {
            'grant_type': 'urn:ietf:params:oauth:grant-type:token-exchange',
            'requested_token_type': 'urn:ietf:params:oauth:token-type:id-jag',
            'subject_token': 'first-id-token',
            'subject_token_type': 'urn:ietf:params:oauth:token-type:id_token',
            'client_id': 'agent-at-idp', 'audience': 'https://auth.example.com',
            'resource': _URL, 'scope': 'notes.read' }
        assert second[ 'subject_token' ] == 'second-id-token'
        monkeypatch.setenv( 'TEST_ID_TOKEN', 'first-id-token' )
