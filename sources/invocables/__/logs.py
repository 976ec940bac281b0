# SPDX-License-Identifier: Apache-2.0

''' Bounds of log lines which quote what others sent.

    Servers, clients and their libraries log what they were sent (a
    refused request's headers, a server's metadata URL, a traceback of a
    refused answer): a hostile peer could fill a log. Each line is cut to
    :py:data:`LINE_MAXIMUM` characters, and the records of each level of
    each logger are counted, to :py:data:`RECORDS_MAXIMUM` shown.
'''


import threading as _threading


LINE_MAXIMUM = 240
''' Characters of a line of a record at most (more are cut, marked). '''
RECORDS_MAXIMUM = 100
''' Records of each level of each logger shown at most. '''


class Tally:
    ''' Counts records per logger and level, under a lock. '''

    def __init__( self, maximum: int = RECORDS_MAXIMUM ):
        self.maximum = maximum
        self.counts: dict[ tuple[ str, str ], int ] = { }
        self.lock = _threading.Lock( )

    def count( self, logger: str, level: str ) -> str | None:
        ''' Returns what to append to a record of logger at level: nothing
            while under maximum, a note at it; none beyond (not shown). '''
        with self.lock:
            count = self.counts.get( ( logger, level ), 0 ) + 1
            self.counts[ ( logger, level ) ] = min( count, self.maximum + 1 )
        if count > self.maximum: return None
        if count < self.maximum: return ''
        return " (further {level} records of {logger} not shown)".format(
            level = level.lower( ), logger = logger )


def bound_line( line: str ) -> str:
    ''' Returns line, cut to :py:data:`LINE_MAXIMUM` characters (marked)
        if longer. '''
    if len( line ) <= LINE_MAXIMUM: return line
    return f"{line[ : LINE_MAXIMUM ]}... (cut)"


def bound_text( text: str, lines_maximum: int ) -> str:
    ''' Returns text with each line bounded; of its lines, the last lines
        maximum only, with a note of those left out. '''
    lines = text.splitlines( )
    omitted = max( 0, len( lines ) - lines_maximum )
    lines = lines[ omitted : ]
    if not omitted and all( len( line ) <= LINE_MAXIMUM for line in lines ):
        return text
    bounded = [ bound_line( line ) for line in lines ]
    if omitted: bounded.insert( 0, f"... ({omitted} lines not shown)" )
    return '\n'.join( bounded )
