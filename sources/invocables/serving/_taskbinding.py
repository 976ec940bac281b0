# SPDX-License-Identifier: Apache-2.0

''' Tasks bound to the principal of the request which created them.

    MCP 2025-11-25 binds a task to the authorization context of its
    creation, when there is one: a request of another principal finds no
    such task, and ``tasks/list`` gives each principal its own tasks. The
    principal of a request is that of the access token which authenticated
    it (its client, issuer and subject, as the ``mcp`` SDK compares the
    owners of sessions); without authentication there is none, and tasks
    are bound to no one (whoever holds a task's identifier reaches it).

    No authenticated principal runs more than its share of the running
    tasks (:py:class:`Shares`): one which filled the server's most would
    starve the others. Unauthenticated requests have no share; the most of
    the server bounds them.

    The listing of each principal keeps its records in order of creation;
    a cursor names a place in it, so that a page costs about its size, not
    that of all the records (stale places are compacted away in bulk).
'''


import bisect as _bisect
import json as _json
import secrets as _secrets

import invocables.serving.__ as __
import invocables.exceptions as _exceptions
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


_DIGITS = 18 # of a place in a cursor, at most
_SLACK = 64 # stale places beyond twice the live ones, before compaction


def access_principal( context: __.typx.Any ) -> str | None:
    ''' Returns the principal of a request (JSON of the client, issuer and
        subject of its access token), or ``None`` if unauthenticated.
    '''
    request: __.typx.Any = getattr( context, 'request', None )
    scope: __.typx.Any = getattr( request, 'scope', None )
    user: __.typx.Any = (
        __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], scope ).get(
            'user' )
        if isinstance( scope, __.cabc.Mapping ) else None )
    token: __.typx.Any = getattr( user, 'access_token', None )
    if token is None: # the SDK's own record of the request, if any
        from mcp.server.auth.middleware.auth_context import get_access_token
        token = get_access_token( )
    if token is None: return None
    claims: __.typx.Any = getattr( token, 'claims', None ) or { }
    issuer: __.typx.Any = (
        __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], claims ).get(
            'iss' )
        if isinstance( claims, __.cabc.Mapping ) else None )
    return _json.dumps( [
        str( token.client_id ),
        None if issuer is None else str( issuer ),
        getattr( token, 'subject', None ) ] )


class Shares:
    ''' The running tasks of each authenticated principal, counted, and
        the most of one principal: by default a quarter of the most of the
        server (at least one), so that four principals at least run at
        once, whatever one of them asks.
    '''

    def __init__( self, maximum: __.Absential[ int ], total: int ):
        self.maximum = (
            max( 1, total // 4 ) if __.is_absent( maximum ) else maximum )
        self._counts: dict[ str, int ] = { }

    def acquire( self, principal: str | None ) -> None:
        ''' Counts one more running task of principal; beyond its most,
            raises the error which the most of the server gives (invalid
            request). Unauthenticated (``None``): counts nothing.
        '''
        if principal is None: return
        count = self._counts.get( principal, 0 )
        if count >= self.maximum:
            raise _sdk.produce_error(
                _mcp_types.INVALID_REQUEST,
                "This server runs {count} tasks of your principal already, "
                "the most of one; wait for one to end, or call without a "
                "task.".format( count = count ) )
        self._counts[ principal ] = count + 1

    def release( self, principal: str | None ) -> None:
        ''' Counts one running task of principal less (it ended). '''
        if principal is None: return
        count = self._counts.pop( principal, 0 ) - 1
        if count > 0: self._counts[ principal ] = count


class _Listing:
    ''' Keys of one principal, by place (ascending), some places stale. '''

    def __init__( self ):
        self.epoch = _secrets.token_hex( 4 ) # cursors of this listing only
        self.counter = 0
        self.places: list[ int ] = [ ]
        self.keys: dict[ int, str ] = { }


class Listings:
    ''' Keys of records of each principal, in order of creation, which
        pages give by cursor.
    '''

    def __init__( self ):
        self._listings: dict[ str | None, _Listing ] = { }
        self._places: dict[ str, tuple[ str | None, int ] ] = { }

    def __len__( self ) -> int:
        return len( self._places )

    def forget( self, key: str ) -> None:
        ''' Forgets key (a record removed). '''
        found = self._places.pop( key, None )
        if found is None: return
        principal, place = found
        listing = self._listings[ principal ]
        del listing.keys[ place ]
        if not listing.keys:
            del self._listings[ principal ]
            return
        if len( listing.places ) > 2 * len( listing.keys ) + _SLACK:
            listing.places = list( listing.keys ) # ascending, as inserted

    def note( self, key: str, principal: str | None ) -> None:
        ''' Notes key, new, at the end of the listing of principal. '''
        if key in self._places: return
        listing = self._listings.get( principal )
        if listing is None:
            listing = self._listings[ principal ] = _Listing( )
        listing.counter += 1
        listing.places.append( listing.counter )
        listing.keys[ listing.counter ] = key
        self._places[ key ] = ( principal, listing.counter )

    def survey(
        self, principal: str | None, cursor: str | None, size: int
    ) -> tuple[ list[ str ], str | None ]:
        ''' Returns at most size keys of principal, after cursor (from the
            first without), and the cursor of the next page (``None`` after
            the last). Raises :py:class:`invocables.exceptions.TaskAbsence`
            for a cursor not given for this listing.
        '''
        listing = self._listings.get( principal )
        after = 0
        if cursor is not None:
            after = _parse_cursor( listing, cursor )
        if listing is None: return [ ], None
        places, keys = listing.places, listing.keys
        index = _bisect.bisect_right( places, after )
        page: list[ str ] = [ ]
        last = after
        while index < len( places ) and len( page ) < size:
            key = keys.get( places[ index ] )
            if key is not None:
                page.append( key )
                last = places[ index ]
            index += 1
        while index < len( places ) and places[ index ] not in keys:
            index += 1 # stale: compacted in bulk, so paid for once
        if index >= len( places ): return page, None
        return page, f"{listing.epoch}.{last}"


def _parse_cursor( listing: _Listing | None, cursor: str ) -> int:
    ''' Returns the place which cursor names in listing; raises if none.
    '''
    epoch, _, number = cursor.partition( '.' )
    valid = listing is not None and epoch == listing.epoch
    valid = valid and number.isascii( ) and number.isdigit( )
    place = int( number ) if valid and len( number ) <= _DIGITS else -1
    if listing is None or not 0 <= place <= listing.counter:
        raise _exceptions.TaskAbsence( cursor )
    return place
