# SPDX-License-Identifier: Apache-2.0

''' Secrets of a server on the surfaces its ensemble passes on: the
    identifier of an elicitation by URL (an opaque stand-in, under which
    the visit completes too), the name of the logger of a relayed log
    message, binary contents (a blob of a JSON document, redacted as
    text), and the URIs and templates a server lists (left out). The
    server is ``servers/spilling_server.py``.
'''


import asyncio
import base64
import json

import pytest

import invocables

from invocables import invokers

from . import mcp_support


_SECRET = 'Zq9-spill-Spill-4417'


class _Liaison:
    ''' An application's caller, recorded. '''

    def __init__( self ):
        self.records = [ ]

    async def log( self, level, data, logger ):
        self.records.append( ( 'log', level, data, logger ) )

    async def report_progress( self, progress, total, message ):
        self.records.append( ( 'progress', progress, total, message ) )

    async def elicit_url( self, message, url, identifier ):
        self.records.append( ( 'visit', message, url, identifier ) )
        return { 'action': 'accept' }


def _produce_ensemble( monkeypatch, **options ):
    monkeypatch.setenv( 'INVOCABLES_TEST_SPILL', _SECRET )
    return invocables.mcp.produce_ensemble(
        'spilling',
        command = mcp_support.produce_server_command( 'spilling_server.py' ),
        environment = { 'SPILL': 'env:INVOCABLES_TEST_SPILL' }, **options )


async def _call( ensemble, name ):
    results = await invocables.execute_invocations(
        [ invocables.InvocationCanister(
            identifier = 'c1', name = name, arguments = { } ) ],
        [ ensemble ] )
    return results[ 0 ]


def _assert_clean( value ):
    text = json.dumps( value, default = repr )
    assert _SECRET not in text, text
    assert _SECRET not in repr( value )


@pytest.mark.asyncio
async def test_100_visit_identifier_stands_in( monkeypatch ):
    ''' The identifier of a visit which holds a secret reaches the
        caller's liaison as an opaque stand-in, as a plain one does (two
        servers may name their visits alike). Before, the secret went out
        as the server gave it.
    '''
    ensemble = _produce_ensemble( monkeypatch )
    ensemble.configure_relay( )
    liaison = _Liaison( )
    async with ensemble:
        with invokers.liaise( liaison ):
            await _call( ensemble, 'visit' )
            await _call( ensemble, 'visit_plain' )
    ( _, message, url, hidden ), ( *_, plain ) = liaison.records
    _assert_clean( liaison.records )
    assert ( message, url ) == (
        'Visit, please.', 'https://elsewhere.example/start' )
    assert hidden.startswith( 'visit-' ) and len( hidden ) > 20
    assert plain != hidden
    assert plain.startswith( 'visit-' ) and len( plain ) > 20


@pytest.mark.asyncio
async def test_110_visit_completes_under_stand_in( monkeypatch ):
    ''' The observer of a relaying ensemble hears that the visit is
        complete under the stand-in its caller saw (never the server's
        identifier); the ensemble's own elicitor, which answers when the
        caller has no liaison, gets the same stand-in.
    '''
    observed = [ ]
    asked = [ ]
    completed = asyncio.Event( )

    async def observe( ensemble, method, uri ):
        observed.append( ( method, uri ) )
        completed.set( )

    def elicit( request ):
        asked.append( request.identifier )
        return { 'action': 'accept' }

    ensemble = _produce_ensemble( monkeypatch, elicitor = elicit )
    ensemble.configure_relay( observer = observe )
    async with ensemble:
        result = await _call( ensemble, 'visit' )
        await asyncio.wait_for( completed.wait( ), 10 )
    assert not result.is_error( ), result
    identifier, = asked
    assert observed == [
        ( 'notifications/elicitation/complete', identifier ) ]
    _assert_clean( ( observed, asked ) )
    assert identifier.startswith( 'visit-' )


@pytest.mark.asyncio
async def test_120_own_elicitor_identifier_redacted( monkeypatch ):
    ''' Without a relay, the ensemble's own elicitor gets the identifier
        of a visit redacted.
    '''
    asked = [ ]

    def elicit( request ):
        asked.append( request )
        return { 'action': 'decline' }

    ensemble = _produce_ensemble( monkeypatch, elicitor = elicit )
    async with ensemble: await _call( ensemble, 'visit' )
    request, = asked
    assert request.identifier == 'eid-***'


@pytest.mark.asyncio
async def test_200_relayed_logger_redacted( monkeypatch ):
    ''' The name of the logger of a relayed log message is redacted, as
        its data are. Before, it went out as the server gave it.
    '''
    ensemble = _produce_ensemble( monkeypatch )
    ensemble.configure_relay( )
    liaison = _Liaison( )
    async with ensemble:
        with invokers.liaise( liaison ): await _call( ensemble, 'log' )
    ( kind, level, data, logger ), = liaison.records
    assert ( kind, level, logger ) == ( 'log', 'error', 'lg-***' )
    assert data == { 'said': 'a\\ud800b ***' }


@pytest.mark.asyncio
async def test_300_blob_read_as_tool_redacted( monkeypatch ):
    ''' A model which reads a resource (``resources_as_tools``) whose
        blob is a JSON document holding the secret gets the document as
        text, redacted. Before, it got the secret.
    '''
    ensemble = _produce_ensemble( monkeypatch, resources_as_tools = True )
    async with ensemble:
        results = await invocables.execute_invocations(
            [ invocables.InvocationCanister(
                identifier = 'r1', name = 'read_resource',
                arguments = { 'uri': 'file:///config.json' } ) ],
            [ ensemble ] )
    text = results[ 0 ].as_text( )
    assert json.loads( text ) == { 'config': { 'api_key': '***' } }
    for name in invocables.processors.PROVIDERS:
        native = invocables.produce_processor( name ).nativize_results(
            results )
        _assert_clean( native )


@pytest.mark.asyncio
async def test_310_blobs_redacted_where_they_enter( monkeypatch ):
    ''' The bytes of a blob, in a tool's result and in a resource read,
        lose the secret: its base64 no longer holds it at any alignment.
    '''
    ensemble = _produce_ensemble( monkeypatch )
    async with ensemble:
        result = await _call( ensemble, 'config' )
        contents = await ensemble.retrieve_resource( 'file:///config.json' )
        redactor = ensemble.access_session_for_features( )[ 1 ]
    for item in ( result.content[ 0 ], contents[ 0 ] ):
        assert json.loads( item.data ) == { 'config': { 'api_key': '***' } }
        blob = base64.b64encode( item.data ).decode( )
        assert redactor.redact( blob ) == blob


@pytest.mark.asyncio
async def test_400_listed_uris_holding_secret_left_out( monkeypatch ):
    ''' A resource or template whose URI holds a secret is left out of
        the listings (reading needs the URI as it is); the others stay.
    '''
    ensemble = _produce_ensemble( monkeypatch )
    async with ensemble:
        resources = await ensemble.survey_resources( )
        templates = await ensemble.survey_resource_templates( )
    _assert_clean( [ resource.uri for resource in resources ] )
    _assert_clean( [ template.uri_template for template in templates ] )
    assert 'file:///r.txt' in { resource.uri for resource in resources }
    assert 'file:///t/{x}' in {
        template.uri_template for template in templates }
