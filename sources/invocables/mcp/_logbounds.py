# SPDX-License-Identifier: Apache-2.0

''' Bounds of the log records which the ``mcp`` SDK's OAuth code writes.

    Those records quote what servers sent (URLs of metadata, the
    traceback of a refused answer): a hostile server could fill a log.
    Once an OAuth provider is made, a filter on the SDK's OAuth loggers
    (``mcp.client.auth`` and those under it) first redacts each record of
    the secrets of every open connection and of the OAuth flows (tokens
    never reach a log), then bounds it: each line of its message,
    traceback and stack to :py:data:`LINE_MAXIMUM` characters, each of
    these to its last :py:data:`LINES_MAXIMUM` lines, and the records of
    each level of each logger to :py:data:`RECORDS_MAXIMUM` in the process
    (the last says that further ones are not shown). The bounds of a line
    and of a count are those of the lines which ``serve`` shows of its web
    server's log.
'''


import threading as _threading

import invocables.mcp.__ as __
import invocables.mcp.redaction as _redaction


LINE_MAXIMUM = 240
''' Characters of a line of a record at most (more are cut, marked). '''
RECORDS_MAXIMUM = 100
''' Records of each level of each logger passed at most. '''
LINES_MAXIMUM = 40
''' Lines of a message, traceback or stack kept at most: the last, which
    name the failure. '''

_LOGGERS = (
    'mcp.client.auth', 'mcp.client.auth.oauth2', 'mcp.client.auth.utils' )


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


class BoundingFilter( __.logging.Filter ):
    ''' Redacts and bounds records (see module), in place. '''

    def __init__( self, tally: Tally | None = None ):
        super( ).__init__( )
        self.tally = tally or Tally( )

    def filter( self, record: __.logging.LogRecord ) -> bool:
        # Redacted before it is cut, lest a cut leave part of a secret.
        _redaction.redact_record( record, _redaction.redact_everywhere )
        note = self.tally.count( record.name, record.levelname )
        if note is None: return False
        message = record.getMessage( )
        bounded = bound_text( message, LINES_MAXIMUM ) + note
        if bounded != message:
            record.msg = bounded
            record.args = None
        if record.exc_text:
            record.exc_text = bound_text(
                record.exc_text, LINES_MAXIMUM )
        if record.stack_info:
            record.stack_info = bound_text(
                record.stack_info, LINES_MAXIMUM )
        return True


_filter = BoundingFilter( )


def attach_bounds( ) -> None:
    ''' Attaches the bounding filter to the SDK's OAuth loggers (those
        which exist, and the SDK's known ones); once each. '''
    manager = __.logging.Logger.manager
    names = {
        *_LOGGERS,
        *( name for name, logger in tuple( manager.loggerDict.items( ) )
           if isinstance( logger, __.logging.Logger )
           and name.startswith( f"{_LOGGERS[ 0 ]}." ) ) }
    for name in names:
        logger = __.logging.getLogger( name )
        if _filter not in logger.filters: logger.addFilter( _filter )


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
