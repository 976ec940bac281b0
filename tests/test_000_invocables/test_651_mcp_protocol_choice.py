# SPDX-License-Identifier: Apache-2.0

''' The handshake which opens a session (the option ``protocol``):
    ``auto`` (``initialize``, then ``server/discover`` if refused),
    ``modern`` (``server/discover`` first, then ``initialize`` if refused)
    and ``legacy`` (``initialize`` alone), against ``serve`` over HTTP,
    fronted to record the requests in order and to refuse some methods.
    The mcp SDK 1.x speaks no MCP 2026-07-28: every choice opens with
    ``initialize`` there, which the tests assert (not skip).
'''


import contextlib
import json

import pytest

from absence import absent

import invocables
import invocables.mcp

from invocables import exceptions
from invocables import serving
from invocables.mcp import _sdk

from . import mcp_support


pytestmark = pytest.mark.asyncio
_MODERN = _sdk.MAJOR >= 2 # the SDK speaks 2026-07-28
_DISCOVER = 'server/discover'
_INITIALIZE = 'initialize'
_UNKNOWN = { 'code': -32601, 'message': 'Method not found' }
_UNSUPPORTED = {
    'code': -32022, 'message': 'Unsupported protocol version.',
    'data': { 'supported': [ '2026-07-28' ], 'requested': '2025-11-25' } }
_WAIT = 30 # seconds: bounds which prove "does not hang"


class _Record( list ):
    ''' Method and ``Mcp-Method`` header of each request, in order. '''

    def survey_methods( self ):
        return [ method for method, _ in self ]


def _produce_server( ):
    async def echo( message: str ) -> str:
        ''' Returns the message. '''
        return message

    ensemble = invocables.produce_ensemble(
        'local', [ invocables.produce_invoker( echo ) ] )
    return serving.ToolServer( [ ensemble ] )


def _front( application, record, refusals ):
    ''' Returns the application, which records each request and answers
        the refused methods with their errors.
    '''
    async def front( scope, receive, send ):
        if scope[ 'type' ] != 'http' or scope[ 'method' ] != 'POST':
            return await application( scope, receive, send )
        chunks = [ ]
        while True:
            message = await receive( )
            chunks.append( message.get( 'body', b'' ) )
            if not message.get( 'more_body' ): break
        body = b''.join( chunks )
        request = json.loads( body ) if body else { }
        method = request.get( 'method' ) if isinstance( request, dict ) else ''
        headers = dict( scope[ 'headers' ] )
        record.append( (
            method, headers.get( b'mcp-method', b'' ).decode( ) ) )
        if method in refusals:
            answer = json.dumps( {
                'jsonrpc': '2.0', 'id': request.get( 'id' ),
                'error': refusals[ method ] } ).encode( )
            await send( {
                'type': 'http.response.start', 'status': 400,
                'headers': [ ( b'content-type', b'application/json' ) ] } )
            await send( { 'type': 'http.response.body', 'body': answer } )
            return None
        replayed = False

        async def replay( ):
            nonlocal replayed
            if replayed: return await receive( )
            replayed = True
            return {
                'type': 'http.request', 'body': body, 'more_body': False }

        return await application( scope, replay, send )

    return front


@contextlib.asynccontextmanager
async def _serve( refusals = None ):
    ''' Serves the echo tool over streamable HTTP in the running loop,
        fronted; yields its URL and the record of requests.
    '''
    record = _Record( )
    application = _front(
        serving.produce_application( _produce_server( ) ), record,
        refusals or { } )
    async with mcp_support.serve_application( application ) as url:
        yield url, record


async def _call_echo( ensemble ):
    ''' Returns the text of a call of the echo tool. '''
    call = invocables.InvocationCanister(
        identifier = 'call-1', name = 'echo',
        arguments = { 'message': 'hello' } )
    results = await invocables.execute_invocations( [ call ], [ ensemble ] )
    return results[ 0 ].as_text( )


async def test_100_option_values( ):
    ''' The option defaults to ``auto``; it takes the enumeration's members
        and their values; another value is a configuration error naming
        the choices.
    '''
    Protocols = invocables.mcp.Protocols
    ensemble = invocables.mcp.produce_ensemble(
        'remote', url = 'http://127.0.0.1:9/mcp' )
    assert ensemble.options.protocol is Protocols.Automatic
    for value, member in (
        ( 'modern', Protocols.Modern ), ( 'legacy', Protocols.Legacy ),
        ( 'auto', Protocols.Automatic ),
        ( Protocols.Modern, Protocols.Modern ),
    ):
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = 'http://127.0.0.1:9/mcp', protocol = value )
        assert ensemble.options.protocol is member
    with pytest.raises(
        exceptions.ConfigurationInvalidity, match = "'modern'"
    ):
        invocables.mcp.produce_ensemble(
            'remote', url = 'http://127.0.0.1:9/mcp', protocol = '2026' )


async def test_110_automatic_initializes( ):
    ''' By default the session opens with ``initialize``, which a server
        of both protocols accepts: no ``server/discover``, a session of
        the legacy protocol, whose calls work.
    '''
    async with _serve( ) as ( url, record ):
        ensemble = invocables.mcp.produce_ensemble( 'remote', url = url )
        async with ensemble:
            assert await _call_echo( ensemble ) == 'hello'
            assert not _sdk.is_modern( ensemble.connection )
    methods = record.survey_methods( )
    assert methods[ 0 ] == _INITIALIZE
    assert _DISCOVER not in methods


async def test_120_modern_discovers( ):
    ''' With ``modern`` (SDK 2.x), the first request is ``server/discover``
        with its ``Mcp-Method`` header, no ``initialize`` follows, and the
        session speaks 2026-07-28: every request carries the header, and
        calls work. Under 1.x the session opens with ``initialize``.
    '''
    async with _serve( ) as ( url, record ):
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url, protocol = 'modern' )
        async with ensemble:
            assert await _call_echo( ensemble ) == 'hello'
            assert _sdk.is_modern( ensemble.connection ) is _MODERN
    methods = record.survey_methods( )
    if not _MODERN:
        assert methods[ 0 ] == _INITIALIZE
        assert _DISCOVER not in methods
        return
    assert methods[ 0 ] == _DISCOVER
    assert _INITIALIZE not in methods
    assert 'tools/call' in methods
    assert all( header == method for method, header in record )


async def test_130_modern_falls_back( ):
    ''' With ``modern``, a server which refuses ``server/discover`` (a
        server of former revisions: method not found) is asked
        ``initialize`` next, and the session works in the legacy protocol.
    '''
    async with _serve( { _DISCOVER: _UNKNOWN } ) as ( url, record ):
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url, protocol = 'modern' )
        async with ensemble:
            assert await _call_echo( ensemble ) == 'hello'
            assert not _sdk.is_modern( ensemble.connection )
    methods = record.survey_methods( )
    expected = [ _DISCOVER, _INITIALIZE ] if _MODERN else [ _INITIALIZE ]
    assert methods[ : len( expected ) ] == expected
    assert methods.count( _DISCOVER ) == ( 1 if _MODERN else 0 )


async def test_140_legacy_never_discovers( ):
    ''' With ``legacy``, a server of 2026-07-28 alone (which refuses
        ``initialize`` with an unsupported version) is never asked
        ``server/discover``: connecting fails, naming the server. Under
        ``auto`` the same server connects with the SDK 2.x (discovered).
    '''
    refusals = { _INITIALIZE: _UNSUPPORTED }
    async with _serve( refusals ) as ( url, record ):
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url, protocol = 'legacy', connect_timeout = 10 )
        with pytest.raises( exceptions.ConnectionFailure, match = 'remote' ):
            async with ensemble: pass
        assert _DISCOVER not in record.survey_methods( )
        record.clear( )
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url, connect_timeout = 10 )
        if not _MODERN:
            with pytest.raises( exceptions.ConnectionFailure ):
                async with ensemble: pass
            return
        async with ensemble:
            assert await _call_echo( ensemble ) == 'hello'
            assert _sdk.is_modern( ensemble.connection )
    assert record.survey_methods( )[ : 2 ] == [ _INITIALIZE, _DISCOVER ]


async def test_150_modern_refused_both( ):
    ''' With ``modern``, a server which refuses both handshakes fails the
        connection with the error of the first (``server/discover``, under
        SDK 2.x), each asked once.
    '''
    refusals = { _DISCOVER: _UNKNOWN, _INITIALIZE: _UNSUPPORTED }
    async with _serve( refusals ) as ( url, record ):
        ensemble = invocables.mcp.produce_ensemble(
            'remote', url = url, protocol = 'modern', connect_timeout = 10 )
        with pytest.raises( exceptions.ConnectionFailure ) as caught:
            async with ensemble: pass
    methods = record.survey_methods( )
    if _MODERN:
        assert methods == [ _DISCOVER, _INITIALIZE ]
        assert 'Method not found' in str( caught.value )
    else: assert methods == [ _INITIALIZE ]


async def test_160_descriptor( tmp_path ):
    ''' A descriptor chooses the handshake (``protocol`` in ``[mcp]``);
        the ensemble opens with it, and the choice survives writing the
        descriptor back; the default is not written; a bad value is named.
    '''
    from invocables import descriptors
    path = tmp_path / 'remote.toml'
    async with _serve( ) as ( url, record ):
        path.write_text(
            "[ensemble]\nname = 'remote'\n\n[mcp]\n"
            f"url = {url!r}\nprotocol = 'modern'\n" )
        descriptor = descriptors.produce_ensemble_descriptor( path )
        assert descriptor.server.protocol == 'modern'
        ensemble = descriptors.produce_ensemble( descriptor )
        assert ensemble.options.protocol is invocables.mcp.Protocols.Modern
        async with ensemble:
            documents = descriptors.produce_documents( ensemble )
    assert documents[ 'remote.toml' ][ 'mcp' ][ 'protocol' ] == 'modern'
    assert record.survey_methods( )[ 0 ] == (
        _DISCOVER if _MODERN else _INITIALIZE )
    plain = invocables.mcp.produce_ensemble(
        'plain', url = 'http://127.0.0.1:9/mcp' )
    from invocables.descriptors import servers
    assert servers.access_server_descriptor( plain ).protocol is absent
    path.write_text(
        "[ensemble]\nname = 'remote'\n\n[mcp]\n"
        "url = 'http://127.0.0.1:9/mcp'\nprotocol = 'newest'\n" )
    with pytest.raises(
        exceptions.DescriptorInvalidity, match = 'unknown protocol'
    ): descriptors.produce_ensemble_descriptor( path )
