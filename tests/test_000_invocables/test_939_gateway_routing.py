# SPDX-License-Identifier: Apache-2.0

''' serve as a gateway: which upstream server a URI reaches (the one which
    listed it, else the first whose template matches it, else the only one
    with resources, else the error ``-32002``), and the deadline of
    completion and subscriptions (the ensemble's list timeout).
'''


import asyncio

import pytest

from mcp import types

import invocables

from invocables import serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


_ROUTES = str( mcp_support.SERVERS / 'routes_server.py' )
_BOUND = 30 # seconds: proves that an answer comes, not how soon


def _produce_upstream( name: str, *arguments: str, **options ):
    return invocables.mcp.produce_ensemble(
        name, command = [
            mcp_support.SERVERS_PYTHON, _ROUTES, '--label', name,
            *arguments ], **options )


async def _list( client ):
    ''' Returns URIs of the resources which client lists. '''
    listing = await client.list_resources( )
    return [ str( resource.uri ) for resource in listing.resources ]


def _produce_bank( ):
    ''' Returns a server listing what ``bank`` lists scoped, and ``bank``.
    '''
    return [
        _produce_upstream(
            'evil', '--resources', 'bank+secret://statement' ),
        _produce_upstream( 'bank', '--resources', 'secret://statement' ) ]


async def _read( client, uri: str ) -> tuple[ str, str ]:
    result = await client.read_resource( uri )
    contents = result.contents[ 0 ]
    return contents.text, str( contents.uri )


def test_100_templates_matched( ):
    ''' A URI matches a template as RFC 6570 expands it: a simple
        expression takes no ``/``, a reserved one does, operators lead
        their expansions; an unknown operator matches nothing. A template
        of many expressions against a long URI which it does not match
        answers (no backtracking).
    '''
    from invocables.serving import _gatewayroutes as routes
    assert routes.match_template( 'note://items/{id}', 'note://items/7' )
    assert routes.match_template( 'note://items/{id}', 'note://items/' )
    assert not routes.match_template( 'note://items/{id}', 'note://items/7/x' )
    assert not routes.match_template( 'note://items/{id}', 'note://other/7' )
    assert routes.match_template( 'file://{+path}', 'file://a/b/c.md' )
    assert routes.match_template( 'doc://{name}{.ext}', 'doc://readme.md' )
    assert routes.match_template( 'doc://{name}{.ext}', 'doc://readme' )
    assert routes.match_template( 'q://find{?word,page}', 'q://find?word=a' )
    assert routes.match_template( 'p://x{/a,b}', 'p://x/1/2' )
    assert not routes.match_template( 'p://{=odd}', 'p://anything' )
    assert not routes.match_template( 'p://{|odd}', 'p://anything' )
    assert not routes.match_template( 'a', 'a' * 70000 )
    hostile = 'h://' + '{a}' * 40 + '!'
    assert not routes.match_template( hostile, 'h://' + 'x' * 5000 )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_110_listed_uri_reaches_its_server( ):
    ''' A URI reaches the server which listed it, not the first server:
        one which lists ``bank+secret://statement`` (as ``bank`` would be
        scoped) gets it, ``bank`` gets its own ``secret://statement``.
    '''
    server = serving.ToolServer( _produce_bank( ) )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            assert await _list( client ) == [
                'bank+secret://statement', 'secret://statement' ]
            assert await _read( client, 'bank+secret://statement' ) == (
                'evil: bank+secret://statement', 'bank+secret://statement' )
            assert await _read( client, 'secret://statement' ) == (
                'bank: secret://statement', 'secret://statement' )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_120_listing_scoped_apart( ):
    ''' A URI which is another server's scoped URI is scoped itself, so
        that no two URIs served are one: each reaches its own server.
    '''
    server = serving.ToolServer( [
        *_produce_bank( ),
        _produce_upstream( 'other', '--resources', 'secret://statement' ),
    ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            assert await _list( client ) == [
                'evil+bank+secret://statement', 'bank+secret://statement',
                'other+secret://statement' ]
            assert await _read( client, 'bank+secret://statement' ) == (
                'bank: secret://statement', 'bank+secret://statement' )
            text, _ = await _read( client, 'evil+bank+secret://statement' )
            assert text == 'evil: bank+secret://statement'


@pytest.mark.asyncio
@pytest.mark.slow
async def test_130_templates_route( ):
    ''' A URI no server listed reaches the first server, in the order of
        the ensembles, whose template matches it, under its own URI when
        the template is scoped; one which a scoped template alone matches
        is not found (``-32602`` under MCP 2026-07-28, which the client of
        the SDK 2.x speaks, as SEP-2164 has it; ``-32002`` before).
    '''
    server = serving.ToolServer( [
        _produce_upstream(
            'alpha', '--resources', 'alpha://fixed',
            '--templates', 'alpha://{id},doc://{+path},same://{id}' ),
        _produce_upstream(
            'beta', '--resources', 'note://fixed',
            '--templates', 'note://items/{id},doc://{name},same://{id}' ),
    ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            text, _ = await _read( client, 'note://items/7' )
            assert text == 'beta: note://items/7'
            text, _ = await _read( client, 'doc://readme' )
            assert text == 'alpha: doc://readme'
            assert await _read( client, 'beta+same://3' ) == (
                'beta: same://3', 'beta+same://3' )
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.read_resource( 'same://3' )
            assert caught.value.error.code == (
                types.INVALID_PARAMS if sdk.MAJOR >= 2 else -32002 )


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_140_unknown_uri_refused( ):
    ''' A URI which no server listed nor matches, among several servers
        with resources, is the error ``-32002`` (reading, subscribing),
        not a question to the first server; unsubscribing is no error.
    '''
    server = serving.ToolServer( [
        _produce_upstream( 'alpha', '--resources', 'alpha://one' ),
        _produce_upstream( 'beta', '--templates', 'beta://{id}' ),
    ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ),
            mode = 'legacy', # resources/subscribe: the handshake's versions
        ) as client:
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.read_resource( 'other://x' )
            assert caught.value.error.code == -32002
            assert 'Unknown resource' in caught.value.error.message
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await client.subscribe_resource( 'other://x' )
            assert caught.value.error.code == -32002
            await client.unsubscribe_resource( 'other://x' )
            await client.subscribe_resource( 'beta://9' )
            text, _ = await _read( client, 'alpha://one' )
            assert text == 'alpha: alpha://one'


@pytest.mark.asyncio
@pytest.mark.slow
async def test_150_only_server_with_resources( ):
    ''' A URI no server listed nor matches reaches the only server which
        lists resources, not a first server which lists none.
    '''
    server = serving.ToolServer( [
        _produce_upstream( 'empty' ),
        _produce_upstream( 'full', '--resources', 'full://one' ),
    ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            text, _ = await _read( client, 'hidden://x' )
            assert text == 'full: hidden://x'


@pytest.mark.asyncio
@pytest.mark.slow
async def test_160_completion_bounded( ):
    ''' An upstream server which never answers ``completion/complete``:
        past its ensemble's list timeout, the client gets an error which
        says so, and the gateway serves on.
    '''
    server = serving.ToolServer( [
        _produce_upstream( 'stall', '--stall', list_timeout = 0.5 ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            reference = types.PromptReference(
                type = 'ref/prompt', name = 'greet' )
            for _ in range( 2 ):
                with pytest.raises( Exception ) as caught: # noqa: PT011
                    await asyncio.wait_for(
                        client.complete(
                            reference, { 'name': 'who', 'value': 'a' } ),
                        _BOUND )
                assert caught.value.error.code == types.INTERNAL_ERROR
                assert "'stall' did not answer completion/complete" in (
                    caught.value.error.message )
            prompts = ( await client.list_prompts( ) ).prompts
            assert [ prompt.name for prompt in prompts ] == [ 'greet' ]


@pytest.mark.asyncio
@pytest.mark.slow
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_170_subscriptions_bounded( ):
    ''' An upstream server which never answers ``resources/subscribe``:
        past its ensemble's list timeout, the client gets an error which
        says so (and unsubscribing asks nothing of it); a server which
        answers completes with its values, and the gateway serves on.
    '''
    server = serving.ToolServer( [
        _produce_upstream(
            'stall', '--stall', '--resources', 'test://one',
            list_timeout = 0.5 ),
        _produce_upstream(
            'calm', '--templates', 'calm://{id}', list_timeout = 0.5 ),
    ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ),
            mode = 'legacy', # resources/subscribe: the handshake's versions
        ) as client:
            with pytest.raises( Exception ) as caught: # noqa: PT011
                await asyncio.wait_for(
                    client.subscribe_resource( 'test://one' ), _BOUND )
            assert caught.value.error.code == types.INTERNAL_ERROR
            assert "'stall' did not answer resources/subscribe" in (
                caught.value.error.message )
            # Not subscribed to (the failure counts no interest): nothing
            # to forward.
            await asyncio.wait_for(
                client.unsubscribe_resource( 'test://one' ), _BOUND )
            await client.subscribe_resource( 'calm://1' )
            completion = await client.complete(
                types.ResourceTemplateReference(
                    type = 'ref/resource', uri = 'calm://{id}' ),
                { 'name': 'id', 'value': '' } )
            assert completion.completion.values == [ 'calm' ]
            text, _ = await _read( client, 'test://one' )
            assert text == 'stall: test://one'
