# SPDX-License-Identifier: Apache-2.0

''' HTTP/1.1 of uvicorn, bounded in the time a client takes to send a
    request's headers and its body; the options of serving in
    ``INVOCABLES_SERVE_OPTIONS``, which it reads (as do the workers'
    applications).
'''


import os as _os

import h11 as _h11

from uvicorn.protocols.http.h11_impl import H11Protocol as _H11Protocol

import invocables.serving.__ as __
import invocables.exceptions as _exceptions


BODY_TIMEOUT_DEFAULT = 30.0
HEADER_TIMEOUT_DEFAULT = 10.0
OPTIONS_VARIABLE = 'INVOCABLES_SERVE_OPTIONS'


class HeaderTimeoutProtocol( _H11Protocol ):
    ''' HTTP/1.1 of uvicorn which closes connections whose request does
        not complete its headers, or its body, in time (uvicorn has no
        such limits).

        The header timeout (seconds) counts from the connection, or from
        the first byte of a request on a kept connection, to the end of
        the request's headers; the body timeout, from the end of the
        headers to the end of the body (a body dripped byte by byte would
        hold its connection and its request for ever). Each is the class's
        (a subclass of :py:func:`produce_protocol`) or else the
        ``header_timeout`` or ``body_timeout`` of
        ``INVOCABLES_SERVE_OPTIONS``; 10 s and 30 s by default. Give it to
        uvicorn as its HTTP implementation: ``--http
        invocables.serving:HeaderTimeoutProtocol``.
    '''

    body_timeout: __.typx.ClassVar[ float | None ] = None
    header_timeout: __.typx.ClassVar[ float | None ] = None

    def __init__( self, *arguments: __.typx.Any, **keywords: __.typx.Any ):
        super( ).__init__( *arguments, **keywords )
        # A timer per state of the request which must end in time.
        self._timers: dict[ type, __.asyncio.TimerHandle ] = { }
        header_timeout, body_timeout = (
            type( self ).header_timeout, type( self ).body_timeout )
        if header_timeout is None or body_timeout is None:
            settings = access_settings( )
            if header_timeout is None:
                header_timeout = settings.get( 'header_timeout' )
            if body_timeout is None:
                body_timeout = settings.get( 'body_timeout' )
        self._header_timeout = float( _choose(
            header_timeout, HEADER_TIMEOUT_DEFAULT ) )
        self._body_timeout = float( _choose(
            body_timeout, BODY_TIMEOUT_DEFAULT ) )

    def connection_made( # pyright: ignore[reportIncompatibleMethodOverride]
        self, transport: __.asyncio.Transport
    ) -> None:
        super( ).connection_made( transport )
        self._arm( _h11.IDLE )

    def connection_lost( self, exc: Exception | None ) -> None:
        for timer in self._timers.values( ): timer.cancel( )
        self._timers.clear( )
        super( ).connection_lost( exc )

    def data_received( self, data: bytes ) -> None:
        if self.conn.their_state is _h11.IDLE: self._arm( _h11.IDLE )
        super( ).data_received( data )
        state = self.conn.their_state
        if state is not _h11.IDLE: self._disarm( _h11.IDLE )
        if state is _h11.SEND_BODY: self._arm( _h11.SEND_BODY )
        else: self._disarm( _h11.SEND_BODY )

    def _arm( self, state: type ) -> None:
        ''' Starts the timer of a state (headers: idle; body), if none. '''
        if state in self._timers: return
        timeout = (
            self._header_timeout if state is _h11.IDLE
            else self._body_timeout )
        self._timers[ state ] = self.loop.call_later(
            timeout, self._expire, state )

    def _disarm( self, state: type ) -> None:
        timer = self._timers.pop( state, None )
        if timer is not None: timer.cancel( )

    def _expire( self, state: type ) -> None:
        ''' Closes the connection if its request is still in the state. '''
        self._timers.pop( state, None )
        if self.conn.their_state is not state: return
        if not self.transport.is_closing( ): self.transport.close( )


def access_settings( ) -> __.cabc.Mapping[ str, __.typx.Any ]:
    ''' Returns options of ``INVOCABLES_SERVE_OPTIONS`` (JSON object). '''
    text = _os.environ.get( OPTIONS_VARIABLE ) or '{}'
    try: settings: __.typx.Any = __.json.loads( text )
    except ValueError: settings = None
    if not isinstance( settings, dict ):
        raise _exceptions.ConfigurationInvalidity(
            OPTIONS_VARIABLE, "expected a JSON object." )
    return __.typx.cast( dict[ str, __.typx.Any ], settings )


def produce_protocol(
    header_timeout: float = HEADER_TIMEOUT_DEFAULT,
    body_timeout: float = BODY_TIMEOUT_DEFAULT,
) -> type[ HeaderTimeoutProtocol ]:
    ''' Produces HTTP implementation for uvicorn with a header timeout and
        a body timeout.
    '''
    return type(
        'HeaderTimeoutProtocol', ( HeaderTimeoutProtocol, ),
        { 'header_timeout': header_timeout, 'body_timeout': body_timeout } )


def _choose( value: __.typx.Any, default: __.typx.Any ) -> __.typx.Any:
    return default if value is None else value
