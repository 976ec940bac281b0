# SPDX-License-Identifier: Apache-2.0

''' Client program of the official MCP conformance suite
    (``@modelcontextprotocol/conformance``), written from
    ``documentation/mcp.rst`` with the public API only.

    The suite starts it once per client scenario, with the URL of its test
    server as the last argument, the scenario in ``MCP_CONFORMANCE_SCENARIO``
    and, for some, a JSON context in ``MCP_CONFORMANCE_CONTEXT`` (client
    credentials, keys, an identity token). It connects, lists the tools,
    calls the scenario's tool (or tools, together) and exits 0; it exits 1
    with the error on standard error when the library fails.

    The scenarios of MCP 2026-07-28 whose checks begin at the first request
    (``MODERN``) open the session with ``server/discover``: the ensemble's
    option ``protocol = 'modern'``, which the SDK 1.x, speaking no
    2026-07-28, answers with ``initialize``. A scenario whose context
    lists ``toolCalls`` has those calls made, in order, with their
    arguments, less those which are null (a parameter not given: the
    library refuses a null which the tool's schema does not allow);
    ``http-invalid-tool-headers`` has every tool listed called, and
    ``http-standard-headers`` its server's resources and prompts listed
    and the first of each read; ``json-schema-2020-12-preservation`` has
    the schema which the library kept for one tool echoed back by another.

    Most scenarios build their ensemble in code; ``auth/client-credentials-
    jwt`` and ``auth/cross-app-access-complete-flow`` through a configuration
    and a server descriptor with ``[mcp.authorization]``, as the command
    line reads them (the key in a PEM file beside the descriptor, secrets as
    ``env:`` references).
'''


import asyncio
import json
import logging
import os
import sys
import tempfile
import urllib.error
import urllib.request

from collections.abc import Mapping
from urllib.parse import urlsplit

import invocables
import invocables.mcp

from invocables.mcp import (
    ClientCredentialsAuthorization,
    CodeAuthorization,
    ElicitationActions,
    ElicitationResponse,
    EnterpriseAuthorization,
    MemoryTokenStorage,
    WorkloadAuthorization,
)


# A client ID metadata document URL, as the suite's authorization server
# expects from a client which supports such documents.
METADATA_URL = 'https://conformance-test.local/client-metadata.json'
REDIRECT_URI = 'http://localhost:3000/callback'
# Scenarios run through a descriptor, as the command line does (in code
# too with CONFORMANCE_MODE=code).
DESCRIBED = frozenset( (
    'auth/client-credentials-jwt', 'auth/cross-app-access-complete-flow',
    'auth/wif-jwt-bearer' ) )
# Tools each scenario calls, with their arguments (auth scenarios call the
# first tool listed, with none).
CALLS = {
    'tools_call': ( 'add_numbers', { 'a': 5, 'b': 3 } ),
    'sse-retry': ( 'test_reconnection', { } ),
    'elicitation-sep1034-client-defaults': (
        'test_client_elicitation_defaults', { } ),
}
# Tools which scenarios of MCP 2026-07-28 (the suite's pre-release) call
# together, with no arguments: multi round trip requests (SEP-2322), the
# unrelated call beside the others, whose answers must not leak into it.
TOGETHER = {
    'sep-2322-client-request-state': (
        'test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_unrelated',
        'test_mrtr_no_result_type' ),
}
# Scenarios of MCP 2026-07-28 whose checks begin at the first request:
# the session opens with server/discover.
MODERN = frozenset( (
    'request-metadata', 'http-standard-headers', 'http-custom-headers',
    'http-invalid-tool-headers' ) )
# Scenarios which call every tool listed, with arguments of their types.
EVERY = frozenset( ( 'http-invalid-tool-headers', ) )
# Scenarios which also list resources and prompts, and read the first.
FEATURES = frozenset( ( 'http-standard-headers', ) )
# Scenarios which have a tool echo back the schema the library kept for
# another tool (the schema's tool, then the echoing tool): JSON Schema
# 2020-12 keywords preserved as the server sent them (SEP-1613, SEP-2106).
ECHOES = {
    'json-schema-2020-12-preservation': (
        'json_schema_2020_12_tool', 'json_schema_echo' ),
}
# Argument for a required parameter, by its JSON type.
SAMPLES = {
    'string': 'us-west1', 'integer': 1, 'number': 1.5, 'boolean': True,
    'object': { }, 'array': [ ], 'null': None }


class Browser:
    ''' Headless user agent: follows the authorization URL to the redirect
        which the suite's authorization server answers at once.
    '''

    def __init__( self ) -> None:
        self.location: str | None = None

    async def redirect( self, url: str ) -> None:
        status, headers, _ = await asyncio.to_thread( fetch, url )
        self.location = headers.get( 'location' )
        if not self.location:
            raise RuntimeError(
                f"The authorization URL answered {status}, not a "
                "redirect." )

    async def receive( self ) -> str:
        location, self.location = self.location, None
        if location is None:
            raise RuntimeError( "No redirect was received." )
        return location


class _Unfollowing( urllib.request.HTTPRedirectHandler ):

    def redirect_request( self, *arguments, **options ): return None


def fetch( url: str ) -> tuple[ int, dict[ str, str ], bytes ]:
    ''' Returns status, headers and body of a GET, redirects unfollowed
        (the standard library's client: the same under both SDK majors).
    '''
    opener = urllib.request.build_opener( _Unfollowing( ) )
    try:
        with opener.open( url, timeout = 10 ) as answer:
            return (
                answer.status, { key.lower( ): value
                for key, value in answer.headers.items( ) }, answer.read( ) )
    except urllib.error.HTTPError as answer:
        return (
            answer.code, { key.lower( ): value
            for key, value in answer.headers.items( ) }, answer.read( ) )


def access_context( ) -> dict[ str, object ]:
    ''' Returns the scenario's context (empty if none). '''
    text = os.environ.get( 'MCP_CONFORMANCE_CONTEXT' )
    return json.loads( text ) if text else { }


def export_secret( name: str, value: object ) -> str:
    ''' Puts a secret of the context into the environment; returns its
        ``env:`` reference, as a user writes it.
    '''
    os.environ[ name ] = str( value )
    return f"env:{name}"


async def elicit( request ):
    ''' Accepts with the defaults of the requested schema (SEP-1034). '''
    properties = request.schema.get( 'properties', { } )
    content = {
        name: field[ 'default' ] for name, field in properties.items( )
        if 'default' in field }
    return ElicitationResponse(
        action = ElicitationActions.Accept, content = content )


async def discover_issuer( url: str ) -> str:
    ''' Returns the first authorization server of the protected resource
        metadata of URL: what an administrator reads once and configures.
    '''
    parts = urlsplit( url )
    document = (
        f"{parts.scheme}://{parts.netloc}"
        f"/.well-known/oauth-protected-resource{parts.path}" )
    status, _, body = await asyncio.to_thread( fetch, document )
    if status != 200:
        status, _, body = await asyncio.to_thread(
            fetch, f"{parts.scheme}://{parts.netloc}"
            "/.well-known/oauth-protected-resource" )
    return json.loads( body )[ 'authorization_servers' ][ 0 ]


async def produce_authorization( scenario: str, url: str ):
    ''' Returns the authorization of an auth scenario. '''
    context = access_context( )
    storage = MemoryTokenStorage( )
    match scenario:
        case 'auth/client-credentials-jwt':
            return ClientCredentialsAuthorization(
                client_id = str( context[ 'client_id' ] ),
                private_key = export_secret(
                    'CONFORMANCE_PRIVATE_KEY', context[ 'private_key_pem' ] ),
                storage = storage )
        case 'auth/client-credentials-basic':
            return ClientCredentialsAuthorization(
                client_id = str( context[ 'client_id' ] ),
                client_secret = export_secret(
                    'CONFORMANCE_CLIENT_SECRET', context[ 'client_secret' ] ),
                storage = storage )
        case (
            'auth/cross-app-access-complete-flow'
            | 'auth/enterprise-managed-authorization'
        ):
            return EnterpriseAuthorization(
                identity_token = export_secret(
                    'CONFORMANCE_ID_TOKEN', context[ 'idp_id_token' ] ),
                identity_provider_token_endpoint = str(
                    context[ 'idp_token_endpoint' ] ),
                identity_provider_client_id = str(
                    context[ 'idp_client_id' ] ),
                issuer = await discover_issuer( url ),
                client_id = str( context[ 'client_id' ] ),
                client_secret = export_secret(
                    'CONFORMANCE_CLIENT_SECRET', context[ 'client_secret' ] ),
                storage = storage )
        case 'auth/wif-jwt-bearer':
            return WorkloadAuthorization(
                assertion = export_secret(
                    'CONFORMANCE_WORKLOAD_JWT', context[ 'valid_jwt' ] ),
                client_id = str( context[ 'client_id' ] ),
                storage = storage )
    browser = Browser( )
    registered = { }
    if 'client_id' in context:
        registered[ 'client_id' ] = str( context[ 'client_id' ] )
        if context.get( 'client_secret' ):
            registered[ 'client_secret' ] = export_secret(
                'CONFORMANCE_CLIENT_SECRET', context[ 'client_secret' ] )
    return CodeAuthorization(
        redirect_handler = browser.redirect,
        callback_handler = browser.receive,
        redirect_uri = REDIRECT_URI, storage = storage,
        client_metadata_url = METADATA_URL, **registered )


async def produce_descriptor_table( scenario: str, url: str ) -> str:
    ''' Returns the ``[mcp.authorization]`` table of a scenario run
        through a descriptor, writing the files it names.
    '''
    context = access_context( )
    client = str( context[ 'client_id' ] )
    if scenario == 'auth/client-credentials-jwt':
        with open( 'client.pem', 'w' ) as file:
            file.write( str( context[ 'private_key_pem' ] ) )
        return (
            "kind = 'client-credentials'\n"
            f"client_id = {json.dumps( client )}\n"
            "private_key = 'client.pem'\n"
            "storage = 'tokens'\n" )
    if scenario == 'auth/wif-jwt-bearer':
        # As a platform gives it: a file of the workload's JWT.
        with open( 'workload.jwt', 'w' ) as file:
            file.write( f"{context[ 'valid_jwt' ]}\n" )
        return (
            "kind = 'workload'\n"
            "assertion = 'workload.jwt'\n"
            f"client_id = {json.dumps( client )}\n" )
    export_secret( 'CONFORMANCE_ID_TOKEN', context[ 'idp_id_token' ] )
    export_secret( 'CONFORMANCE_CLIENT_SECRET', context[ 'client_secret' ] )
    issuer = await discover_issuer( url )
    endpoint = str( context[ 'idp_token_endpoint' ] )
    return (
        "kind = 'enterprise'\n"
        "identity_token = 'env:CONFORMANCE_ID_TOKEN'\n"
        f"identity_provider_token_endpoint = {json.dumps( endpoint )}\n"
        "identity_provider_client_id = "
        f"{json.dumps( str( context[ 'idp_client_id' ] ) )}\n"
        f"issuer = {json.dumps( issuer )}\n"
        f"client_id = {json.dumps( client )}\n"
        "client_secret = 'env:CONFORMANCE_CLIENT_SECRET'\n"
        "storage = 'tokens'\n" )


def produce_arguments( schema ) -> dict[ str, object ]:
    ''' Returns an argument of its type for each required parameter. '''
    properties = schema.get( 'properties', { } )
    return {
        name: SAMPLES.get( properties.get( name, { } ).get( 'type' ) )
        for name in schema.get( 'required', ( ) ) }


def thaw( value: object ) -> object:
    ''' Returns plain JSON of a value kept read-only by the library. '''
    if isinstance( value, Mapping ):
        return { key: thaw( item ) for key, item in value.items( ) }
    if isinstance( value, ( list, tuple ) ):
        return [ thaw( item ) for item in value ]
    return value


def survey_calls( scenario: str, ensemble ) -> list[ tuple[ str, dict ] ]:
    ''' Returns the calls of the scenario, in order: those of its context
        (``toolCalls``), of ``CALLS``, every tool listed (``EVERY``), else
        the first tool listed with no arguments (none if none listed).
    '''
    tools = list( ensemble.survey_tools( ) )
    context = access_context( )
    if 'toolCalls' in context:
        return [
            ( call[ 'name' ], {
                name: value
                for name, value in call.get( 'arguments', { } ).items( )
                if value is not None } )
            for call in context[ 'toolCalls' ] ]
    if scenario in CALLS: return [ CALLS[ scenario ] ]
    if scenario in ECHOES:
        kept, echo = ECHOES[ scenario ]
        schemas = { tool.name: tool.argschema for tool in tools }
        return [ ( echo, { 'schema': thaw( schemas[ kept ] ) } ) ]
    if scenario in EVERY:
        return [
            ( tool.name, produce_arguments( tool.argschema ) )
            for tool in tools ]
    return [ ( tools[ 0 ].name, { } ) ] if tools else [ ]


async def call_tool( scenario: str, ensemble ) -> None:
    ''' Calls the scenario's tools (for auth scenarios the first tool
        listed, with no arguments) and prints their results.
    '''
    if scenario in TOGETHER:
        calls = [
            invocables.InvocationCanister(
                identifier = f"call-{index}", name = name, arguments = { } )
            for index, name in enumerate( TOGETHER[ scenario ] ) ]
        results = await invocables.execute_invocations(
            calls, [ ensemble ] )
        for result in results: print( result.as_text( ) )
        return
    for index, ( name, arguments ) in enumerate(
        survey_calls( scenario, ensemble )
    ):
        call = invocables.InvocationCanister(
            identifier = f"call-{index}", name = name,
            arguments = arguments )
        results = await invocables.execute_invocations(
            [ call ], [ ensemble ] )
        print( results[ 0 ].as_text( ) )
    if scenario in FEATURES: await retrieve_features( ensemble )


async def retrieve_features( ensemble ) -> None:
    ''' Lists resources and prompts; reads the first of each. '''
    resources = await ensemble.survey_resources( )
    if resources: await ensemble.retrieve_resource( resources[ 0 ].uri )
    prompts = await ensemble.survey_prompts( )
    if prompts: await ensemble.retrieve_prompt( prompts[ 0 ].name, { } )


async def run( scenario: str, url: str ) -> None:
    if scenario in DESCRIBED and os.environ.get( 'CONFORMANCE_MODE' ) != (
        'code'
    ):
        table = await produce_descriptor_table( scenario, url )
        with open( 'server.toml', 'w' ) as file:
            file.write(
                "[ensemble]\nname = 'conformance'\n\n[mcp]\n"
                f"url = {json.dumps( url )}\n\n"
                f"[mcp.authorization]\n{table}" )
        with open( 'invocables.toml', 'w' ) as file:
            file.write( "[[ensembles]]\nsource = 'server.toml'\n" )
        async with invocables.prepare_ensembles(
            'invocables.toml'
        ) as ensembles:
            await call_tool( scenario, ensembles[ 0 ] )
        return
    options = { }
    if scenario.startswith( 'auth/' ):
        options[ 'authorization' ] = await produce_authorization(
            scenario, url )
    if scenario in CALLS or scenario in TOGETHER:
        options[ 'elicitor' ] = elicit
    if scenario in MODERN: options[ 'protocol' ] = 'modern'
    ensemble = invocables.mcp.produce_ensemble(
        'conformance', url = url, **options )
    async with ensemble: await call_tool( scenario, ensemble )


def main( ) -> None:
    logging.basicConfig( level = logging.INFO, stream = sys.stderr )
    url = sys.argv[ -1 ]
    scenario = os.environ.get( 'MCP_CONFORMANCE_SCENARIO', '' )
    with tempfile.TemporaryDirectory( ) as folder:
        os.chdir( folder )
        asyncio.run( run( scenario, url ) )


if __name__ == '__main__': main( )
