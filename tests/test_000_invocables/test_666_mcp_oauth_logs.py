# SPDX-License-Identifier: Apache-2.0

''' Log records of the mcp SDK's OAuth code, against a hostile server.

    The server names metadata at a URL of thousands of characters which
    quotes the client's secret, and refuses the token request with a body
    of a hundred thousand characters and thousands of lines which quotes
    it too. The SDK logs both (the URL, the refusal's traceback): each
    record reaches the handlers redacted, its lines of bounded length, its
    traceback of bounded lines, and the records of each level of each of
    its loggers bounded in number; the records of the HTTP client's
    transport, which quote the answers' headers, are redacted too.
'''


import asyncio
import logging

import pytest

import invocables.mcp

from invocables import exceptions
from invocables.__ import logs
from invocables.mcp import _logbounds, authorization


_BOUND = 60.0 # seconds: proves "does not hang"
_SECRET = 'client-secret-of-666-Zq8'
_CUT = len( '... (cut)' )


async def _answer( reader, writer ):
    ''' Answers one request of the flow, hostile where it can be. '''
    try: head = await reader.readuntil( b'\r\n\r\n' )
    except ( OSError, asyncio.IncompleteReadError ):
        writer.close( )
        return
    path = head.split( b' ' )[ 1 ].decode( )
    port = writer.get_extra_info( 'sockname' )[ 1 ]
    status, extra, body = 401, '', b'{}'
    if path.startswith( '/prm/' ): status, body = 200, b'{"resource": 5}'
    elif path.startswith( '/.well-known' ): status = 404
    elif path.startswith( '/token' ):
        body = ( _SECRET + 'y' * 100_000 + '\nline' * 3000 ).encode( )
    else:
        extra = (
            'WWW-Authenticate: Bearer resource_metadata='
            f'"http://127.0.0.1:{port}/prm/{_SECRET}{"x" * 5000}"\r\n' )
    writer.write(
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len( body )}\r\nConnection: close\r\n\r\n"
        .encode( ) + body )
    try: await writer.drain( )
    except OSError: pass
    writer.close( )


async def _connect( caplog ):
    ''' Connects a client of client credentials to the hostile server;
        returns the records logged. '''
    caplog.set_level( logging.DEBUG )
    server = await asyncio.start_server( _answer, '127.0.0.1', 0 )
    port = server.sockets[ 0 ].getsockname( )[ 1 ]
    grant = authorization.ClientCredentialsAuthorization(
        client_id = 'svc', client_secret = _SECRET,
        storage = authorization.MemoryTokenStorage( ) )
    ensemble = invocables.mcp.produce_ensemble(
        'hostile666', url = f"http://127.0.0.1:{port}/mcp",
        authorization = grant )
    try:
        with pytest.raises( exceptions.Omnierror ):
            await asyncio.wait_for( ensemble.connect( ), _BOUND )
    finally:
        await ensemble.disconnect( )
        server.close( )
        await server.wait_closed( )
    return list( caplog.records )


def _survey_texts( record ):
    return [
        text for text in (
            record.getMessage( ), record.exc_text, record.stack_info )
        if text ]


@pytest.mark.asyncio
async def test_100_records_bounded( caplog, monkeypatch ):
    ''' Every record of the SDK's OAuth loggers has lines of bounded
        length (cut ones marked) and a traceback of bounded lines; it and
        every other record name no secret. '''
    monkeypatch.setattr( _logbounds._filter, 'tally', logs.Tally( ) )
    records = await _connect( caplog )
    ours = [
        record for record in records
        if record.name.startswith( 'mcp.client.auth' ) ]
    assert any( '(cut)' in record.getMessage( ) for record in ours )
    assert any( record.exc_text for record in ours )
    for record in ours:
        for text in _survey_texts( record ):
            lines = text.splitlines( )
            assert len( lines ) <= _logbounds.LINES_MAXIMUM + 1
            for line in lines:
                assert len( line ) <= logs.LINE_MAXIMUM + _CUT + 60
    for record in records:
        for text in _survey_texts( record ): assert _SECRET not in text
    assert any(
        record.name.startswith( 'httpcore' ) and '***' in record.getMessage( )
        for record in records )


@pytest.mark.asyncio
async def test_110_records_counted( caplog, monkeypatch ):
    ''' Of the records of each level of each SDK OAuth logger, the first
        ones only pass; the last which passes says that further ones are
        not shown. '''
    monkeypatch.setattr(
        _logbounds._filter, 'tally', logs.Tally( maximum = 3 ) )
    records = await _connect( caplog )
    records += await _connect( caplog )
    debug = [
        record for record in records
        if record.name == 'mcp.client.auth.oauth2'
        and record.levelno == logging.DEBUG ]
    assert len( { id( record ) for record in debug } ) == 3
    assert debug[ -1 ].getMessage( ).endswith(
        "(further debug records of mcp.client.auth.oauth2 not shown)" )
    errors = { id( record ) for record in records if (
        record.name == 'mcp.client.auth.oauth2'
        and record.levelno == logging.ERROR ) }
    assert 1 <= len( errors ) <= 3


def test_120_bound_text( ):
    ''' A text of many long lines keeps its last lines, each cut and
        marked, with a note of those left out; a short one is itself. '''
    assert logs.bound_text( 'a\nb', 3 ) == 'a\nb'
    text = '\n'.join( f"{index} " + 'z' * 500 for index in range( 10 ) )
    bounded = logs.bound_text( text, 3 ).splitlines( )
    assert bounded[ 0 ] == '... (7 lines not shown)'
    assert [ line.split( ' ' )[ 0 ] for line in bounded[ 1 : ] ] == [
        '7', '8', '9' ]
    assert all( line.endswith( '... (cut)' ) for line in bounded[ 1 : ] )
    assert all(
        len( line ) == logs.LINE_MAXIMUM + _CUT
        for line in bounded[ 1 : ] )
