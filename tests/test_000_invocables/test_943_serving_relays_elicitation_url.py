# SPDX-License-Identifier: Apache-2.0

''' Elicitation of mode ``url`` (MCP 2025-11-25): an upstream server's
    request that the user visit a URL reaches the downstream client which
    made the call under ``serve`` (if it declared ``elicitation.url``), an
    application's liaison (``elicit_url``), or the ensemble's own elicitor
    (the request's ``url`` and ``identifier``); the answer goes back up as
    its action alone.
'''


import asyncio
import json

import pytest

from mcp import types

import invocables

from invocables import invokers, serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


_SERVER = str( mcp_support.SERVERS / 'sampling_server.py' )
_URL = 'https://example.com/authorize?state=1'


class _Downstream:
    ''' The downstream client's user, recorded. '''

    def __init__( self, action = 'accept' ):
        self.action = action
        self.requests = [ ]
        self.completions = [ ]
        self.completed = asyncio.Event( )

    async def on_elicit( self, context, parameters ):
        self.requests.append( (
            parameters.mode, parameters.message, str( parameters.url ),
            sdk.access_field( parameters, 'elicitation_id' ) ) )
        return types.ElicitResult( action = self.action )

    async def on_message( self, message ):
        message = getattr( message, 'root', message )
        if not isinstance( message, types.ElicitCompleteNotification ):
            return
        self.completions.append(
            sdk.access_field( message.params, 'elicitation_id' ) )
        self.completed.set( )


class _Liaison:
    ''' An application's user, recorded. '''

    def __init__( self ):
        self.requests = [ ]

    async def elicit_url( self, message, url, identifier ):
        self.requests.append( ( message, url, identifier ) )
        return { 'action': 'decline' }


def _open_downstream( server, downstream ):
    ''' Returns the context of a client of the server, of 2025-11-25,
        whose user is downstream. '''
    return mcp_support.open_memory_client(
        server.produce_server( ),
        elicitation_callback = downstream.on_elicit,
        message_handler = downstream.on_message, mode = 'legacy' )


def _assert_opaque( identifier ):
    ''' Asserts that an identifier of a visit is a stand-in of the relay,
        not the server's own (``visit-1``). '''
    assert identifier.startswith( 'visit-' ) and len( identifier ) > 20


def _produce_upstream( name = 'visits', **keywords ):
    return invocables.mcp.produce_ensemble(
        name, command = [ mcp_support.SERVERS_PYTHON, _SERVER ],
        **keywords )


async def _execute( upstream ):
    results = await invocables.execute_invocations(
        [ invocables.InvocationCanister(
            identifier = 'c1', name = 'visit', arguments = { } ) ],
        [ upstream ] )
    assert not results[ 0 ].is_error( ), results[ 0 ]
    return json.loads( results[ 0 ].content[ 0 ].text )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_100_url_relayed( ):
    ''' The downstream client gets the upstream's URL and message, and
        an opaque identifier; its answer reaches the upstream, and the
        upstream's word that the visit is complete reaches the client
        under that identifier.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_downstream( server, downstream ) as client:
            result = await client.call_tool( 'visit', { } )
            await asyncio.wait_for( downstream.completed.wait( ), 10 )
    assert json.loads( result.content[ 0 ].text ) == { 'action': 'accept' }
    ( *request, identifier ), = downstream.requests
    assert request == [ 'url', 'Please authorize.', _URL ]
    _assert_opaque( identifier )
    assert downstream.completions == [ identifier ]


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_105_upstreams_alike_kept_apart( ):
    ''' Two upstream servers which name their visits alike
        (``visit-1``): the downstream client gets two identifiers, and
        each upstream's word that its visit is complete reaches the client
        under its own.
    '''
    server = serving.ToolServer( [
        _produce_upstream( 'alpha' ), _produce_upstream( 'beta' ) ] )
    downstream = _Downstream( )
    async with invocables.connect_ensembles( server.ensembles ):
        async with _open_downstream( server, downstream ) as client:
            for name in ( 'alpha__visit', 'beta__visit' ):
                downstream.completed.clear( )
                await client.call_tool( name, { } )
                await asyncio.wait_for( downstream.completed.wait( ), 10 )
    identifiers = [ request[ -1 ] for request in downstream.requests ]
    assert len( set( identifiers ) ) == 2 # noqa: PLR2004
    for identifier in identifiers: _assert_opaque( identifier )
    assert downstream.completions == identifiers


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_110_downstream_without_elicitation( ):
    ''' A downstream client which did not declare elicitation by URL is
        not asked: the upstream gets the error which says so.
    '''
    server = serving.ToolServer( [ _produce_upstream( ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), mode = 'legacy'
        ) as client:
            result = await client.call_tool( 'visit', { } )
    answer = json.loads( result.content[ 0 ].text )
    assert answer.startswith( 'error ' ), answer
    assert "elicitation of mode 'url'" in answer


@pytest.mark.asyncio
async def test_200_application_liaison( ):
    ''' In an application's loop, the liaison's ``elicit_url`` gets the
        request; its answer reaches the upstream.
    '''
    upstream = _produce_upstream( )
    upstream.configure_relay( )
    liaison = _Liaison( )
    async with upstream:
        with invokers.liaise( liaison ):
            answer = await _execute( upstream )
    assert answer == { 'action': 'decline' }
    ( *request, identifier ), = liaison.requests
    assert request == [ 'Please authorize.', _URL ]
    _assert_opaque( identifier )


@pytest.mark.asyncio
async def test_300_own_elicitor( ):
    ''' The library's client gives its elicitor the URL and identifier of
        the request; an accepted visit goes back as its action alone.
    '''
    asked = [ ]

    def elicit( request ):
        asked.append( request )
        return { 'action': 'accept', 'content': { 'ignored': 'yes' } }

    upstream = _produce_upstream( elicitor = elicit )
    async with upstream: answer = await _execute( upstream )
    assert answer == { 'action': 'accept' }
    request, = asked
    assert ( request.url, request.identifier, request.message ) == (
        _URL, 'visit-1', 'Please authorize.' )
    assert dict( request.schema ) == { }


@pytest.mark.asyncio
async def test_310_liaison_without_urls( ):
    ''' A relaying ensemble whose caller's liaison cannot ask for a visit
        (no ``elicit_url``): the ensemble's own elicitor answers.
    '''
    class Liaison:
        async def elicit( self, message, schema ):
            raise AssertionError( "A form is not a visit." )

    def elicit( request ): return { 'action': 'cancel' }

    upstream = _produce_upstream( elicitor = elicit )
    upstream.configure_relay( )
    async with upstream:
        with invokers.liaise( Liaison( ) ): answer = await _execute( upstream )
    assert answer == { 'action': 'cancel' }
