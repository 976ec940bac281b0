# SPDX-License-Identifier: Apache-2.0

''' Moments at which records expire, earliest first.

    A store which forgets its expired records on every request finds them
    here in logarithmic time each, rather than in a scan of all its
    records per request (a flood of ``tasks/get`` against a full store
    would otherwise cost the square of its size).
'''


import heapq as _heapq

import invocables.serving.__ as __


_SLACK = 64 # stale entries beyond twice the live ones, before compaction


class Expiries:
    ''' Moments of expiry (seconds of the epoch), by key. '''

    def __init__( self ):
        self._heap: list[ tuple[ float, str ] ] = [ ]
        self._moments: dict[ str, float ] = { }

    def __len__( self ) -> int:
        return len( self._moments )

    def forget( self, key: str ) -> None:
        ''' Forgets the moment of key (a record removed). '''
        self._moments.pop( key, None )
        self._compact( )

    def note(
        self, key: str, created: __.typx.Any, milliseconds: float
    ) -> None:
        ''' Notes the expiry of key: its time to live (milliseconds) from
            its creation (an aware time); new, or changed.
        '''
        moment = float( created.timestamp( ) ) + milliseconds / 1000
        if self._moments.get( key ) == moment: return
        self._moments[ key ] = moment
        _heapq.heappush( self._heap, ( moment, key ) )
        self._compact( )

    def survey_expired( self, now: float ) -> list[ str ]:
        ''' Returns the keys expired at now, earliest first; forgets them.
        '''
        expired: list[ str ] = [ ]
        heap = self._heap
        while heap and heap[ 0 ][ 0 ] <= now:
            moment, key = _heapq.heappop( heap )
            if self._moments.get( key ) != moment: continue # stale
            del self._moments[ key ]
            expired.append( key )
        return expired

    def _compact( self ) -> None:
        ''' Drops the stale entries, once they outnumber the live ones. '''
        if len( self._heap ) <= 2 * len( self._moments ) + _SLACK: return
        self._heap = [
            ( moment, key ) for key, moment in self._moments.items( ) ]
        _heapq.heapify( self._heap )
