# SPDX-License-Identifier: Apache-2.0

''' Tool listings which one bad tool does not spoil.

    The SDK validates a ``tools/list`` result as a whole: one tool which
    its models refuse (a real server lists tools whose ``inputSchema`` is
    only ``{"$schema": ...}``) fails the whole listing, and with it the
    connection. A screen sits between the transport and the session, on
    every transport: it notes the requests which list tools, and takes the
    tools which the SDK would refuse out of their answers, one by one,
    before the session sees them. Each left-out tool is logged as a warning
    naming it, and kept as an omission; the other tools work. The tools
    which the SDK itself drops after its check (under MCP 2026-07-28, a
    tool whose ``x-mcp-header`` designation is invalid) are kept as
    omissions too, with its reason abbreviated. The screen also redacts
    the message and data of every error the server answers with, before
    the SDK quotes them.
'''


import anyio as _anyio

from mcp.shared.message import SessionMessage as _SessionMessage

import invocables.mcp.__ as __
import invocables.mcp.records as _records
import invocables.mcp.redaction as _redaction
import invocables.mcp.results as _results
import invocables.mcp._sdk as _sdk
from ._sdk import types as _mcp_types


_Item: __.typx.TypeAlias = _SessionMessage | Exception

_CURRENT = _sdk.MAJOR >= 2 # noqa: PLR2004
_LIST = 'tools/list'
_PAGES_MAXIMUM = 1000
_Error = _mcp_types.JSONRPCError
_Request = _mcp_types.JSONRPCRequest
_INITIALIZE = 'initialize'
_REASONS_MAXIMUM = 3
_REASON_LENGTH_MAXIMUM = 200 # characters of the SDK's reason to drop
_VERSION_DEFAULT = '2025-11-25'
_scribe = __.produce_scribe( __name__ )


def _produce_header_check( ) -> tuple[
    __.cabc.Collection[ str ],
    __.cabc.Callable[ [ __.typx.Any ], str | None ] | None,
]:
    ''' Returns protocols under which the SDK drops tools whose
        x-mcp-header is invalid, and its check (2.x alone). '''
    if not _CURRENT: return ( ), None
    from mcp.shared.inbound import find_invalid_x_mcp_header
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS
    return MODERN_PROTOCOL_VERSIONS, find_invalid_x_mcp_header


_MODERNS, _find_header_fault = _produce_header_check( )


async def survey_pages(
    name: str,
    lister: __.cabc.Callable[ ..., __.cabc.Awaitable[ __.typx.Any ] ],
    attribute: str,
) -> list[ __.typx.Any ]:
    ''' Returns the items of every page of a listing, following its
        cursors; stops, with a warning, where the server repeats a cursor.
    '''
    items: list[ __.typx.Any ] = [ ]
    cursor: str | None = None
    seen: set[ str ] = set( )
    for _ in range( _PAGES_MAXIMUM ):
        params = (
            None if cursor is None
            else _mcp_types.PaginatedRequestParams( cursor = cursor ) )
        result = await lister( params = params )
        items.extend( _sdk.access_field( result, attribute ) )
        cursor = _sdk.access_field( result, 'next_cursor' )
        if cursor is None: return items
        if cursor in seen:
            _scribe.warning(
                "MCP server %r repeats listing cursors; listing stopped.",
                name )
            return items
        seen.add( cursor )
    _scribe.warning(
        "MCP server %r gives more than %d pages of %s; listing stopped.",
        name, _PAGES_MAXIMUM, attribute )
    return items


class ListingScreen:
    ''' Watches requests and answers of one session for tool listings. '''

    def __init__(
        self,
        name: str,
        redactor: __.typx.Any = None, # a Redactor of the connection
    ):
        self.name = name
        self.redactor = redactor
        # Reasons quote what the server listed: redacted as the rest.
        self.redact: __.cabc.Callable[ [ str ], str ] = (
            str if redactor is None else redactor.redact )
        self.version = _VERSION_DEFAULT
        self.pending: dict[ str | int, str ] = { }
        self.refusals: list[ _records.Omission ] = [ ]

    def note_request( self, message: __.typx.Any ) -> None:
        ''' Notes request which lists tools or initializes the session. '''
        if not _CURRENT: message = _sdk.access_message( message )
        if not isinstance( message, _Request ): return
        method = message.method
        if method in ( _LIST, _INITIALIZE ):
            self.pending[ message.id ] = method

    def amend( self, message: __.typx.Any ) -> None:
        ''' Amends message, in place, before the session receives it:
            answers of listings (see :py:meth:`amend_answer`), and errors,
            whose message and data are redacted where they enter, before
            the SDK quotes them (in its exceptions, in the status of its
            spans).
        '''
        if self.pending: self.amend_answer( message )
        redactor = self.redactor
        if redactor is None or redactor.is_vacant( ): return
        message = _sdk.access_message( message )
        if isinstance( message, _Error ): _redact_error( message, redactor )

    def amend_answer( self, message: __.typx.Any ) -> None:
        ''' Removes refused tools from answer of a listing, in place. '''
        if not self.pending: return # the usual case: nothing to amend
        message = _sdk.access_message( message )
        if not isinstance( message, _mcp_types.JSONRPCResponse ): return
        method = self.pending.pop( message.id, None )
        if method is None: return
        result = message.result
        if method == _INITIALIZE:
            version = result.get( 'protocolVersion' )
            if isinstance( version, str ): self.version = version
            return
        tools = result.get( 'tools' )
        if not isinstance( tools, list ): return
        entries = __.typx.cast( list[ __.typx.Any ], tools )
        if self._is_refused( result ):
            entries = [
                tool for index, tool in enumerate( entries )
                if self._is_accepted( result, index, tool ) ]
            message.result = dict( result ) | { 'tools': entries }
        self._note_drops( entries )

    def _is_accepted(
        self,
        result: __.cabc.Mapping[ str, __.typx.Any ],
        index: int,
        tool: __.typx.Any,
    ) -> bool:
        single = dict( result ) | { 'tools': [ tool ] }
        try: _sdk.validate_listing( self.version, single )
        except ValueError as exception:
            name = self.redact( _name_tool( tool, index ) )
            reason = self.redact(
                "the MCP SDK refuses its description: {reasons}".format(
                    reasons = _describe_refusal( exception ) ) )
            _scribe.warning(
                "MCP server %r: tool %r left out: %s; the other tools "
                "work.", self.name, name, reason )
            self.refusals.append(
                _records.Omission( name = name, reason = reason ) )
            return False
        return True

    def _note_drops( self, tools: list[ __.typx.Any ] ) -> None:
        ''' Notes as omissions the tools which the SDK will drop from a
            listing it accepts (x-mcp-header, MCP 2026-07-28), as it
            does: it logs them itself. '''
        if self.version not in _MODERNS: return # always so under 1.x
        for index, tool in enumerate( tools ):
            fault = _access_header_fault( tool )
            if fault is None: continue
            reason = _results.produce_excerpt(
                fault, self.redact, maximum = _REASON_LENGTH_MAXIMUM )
            self.refusals.append( _records.Omission(
                name = self.redact( _name_tool( tool, index ) ),
                reason = (
                    "the MCP SDK drops it for an invalid x-mcp-header "
                    f"designation: {reason}" ) ) )

    def _is_refused(
        self, result: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> bool:
        ''' Returns whether SDK refuses listing because of some tool. '''
        try: _sdk.validate_listing( self.version, result )
        except ValueError: pass
        else: return False
        # When the listing without its tools is refused too, the fault is
        # not with a tool: let the session report it.
        empty: dict[ str, __.typx.Any ] = dict( result ) | { 'tools': [ ] }
        try: _sdk.validate_listing( self.version, empty )
        except ValueError: return False
        return True


class ReadStream( _sdk.MessageStream ):
    ''' Stream of messages from transport, with listings amended. '''

    def __init__( self, inner: __.typx.Any, screen: ListingScreen ):
        self.inner = inner
        self.screen = screen

    @property
    def last_context( self ) -> __.typx.Any:
        ''' Context of the sender of the last message (HTTP), if any. '''
        return getattr( self.inner, 'last_context', None )

    async def receive( self ) -> _Item:
        ''' Returns next message from transport. '''
        item: _Item = await self.inner.receive( )
        if isinstance( item, _SessionMessage ):
            self.screen.amend( item.message )
        return item

    async def aclose( self ) -> None:
        ''' Closes stream. '''
        await self.inner.aclose( )

    def __aiter__( self ) -> __.typx.Self:
        return self

    async def __anext__( self ) -> _Item:
        try: return await self.receive( )
        except _anyio.EndOfStream: raise StopAsyncIteration from None


class WriteStream( _sdk.MessageStream ):
    ''' Stream of messages to transport, with listing requests noted. '''

    def __init__( self, inner: __.typx.Any, screen: ListingScreen ):
        self.inner = inner
        self.screen = screen

    async def send( self, item: _SessionMessage, / ) -> None:
        ''' Sends message to transport. '''
        self.screen.note_request( item.message )
        await self.inner.send( item )

    async def aclose( self ) -> None:
        ''' Closes stream. '''
        await self.inner.aclose( )


def _redact_error( message: __.typx.Any, redactor: __.typx.Any ) -> None:
    ''' Replaces error of message with one whose texts are redacted. '''
    error = message.error
    text = redactor.redact( error.message )
    data = None if error.data is None else _redaction.redact_json(
        redactor.redact, error.data, _results.DATA_DEPTH_MAXIMUM )
    if text != error.message or data != error.data:
        message.error = error.model_copy(
            update = { 'message': text, 'data': data } )


def _describe_refusal( exception: ValueError ) -> str:
    errors = getattr( exception, 'errors', None )
    if not callable( errors ): return str( exception )
    parts: list[ str ] = [ ]
    for error in __.typx.cast(
        list[ dict[ str, __.typx.Any ] ], errors( )
    )[ : _REASONS_MAXIMUM ]:
        location = '.'.join( str( part ) for part in error[ 'loc' ][ 2 : ] )
        parts.append( f"{location or 'tool'}: {error[ 'msg' ]}" )
    return '; '.join( parts )


def _access_header_fault( tool: __.typx.Any ) -> str | None:
    ''' Returns why the SDK drops tool for its x-mcp-header, or None. '''
    if _find_header_fault is None or not isinstance( tool, __.cabc.Mapping ):
        return None
    schema = __.typx.cast(
        __.cabc.Mapping[ str, __.typx.Any ], tool ).get( 'inputSchema' )
    try: return _find_header_fault( schema )
    except Exception: return None # the SDK's own check fails alike


def _name_tool( tool: __.typx.Any, index: int ) -> str:
    if isinstance( tool, __.cabc.Mapping ):
        name = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], tool ).get(
            'name' )
        if isinstance( name, str ): return name
    return f"#{index} (no name)"
