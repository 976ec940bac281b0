# SPDX-License-Identifier: Apache-2.0

''' Bounds of the log records which the ``mcp`` SDK's OAuth code writes.

    Those records quote what servers sent (URLs of metadata, the
    traceback of a refused answer): a hostile server could fill a log.
    Once an OAuth provider is made, a filter on the SDK's OAuth loggers
    (``mcp.client.auth`` and those under it) first redacts each record of
    the secrets of every open connection and of the OAuth flows (tokens
    never reach a log), then bounds it: each line of its message,
    traceback and stack to 240 characters, each of these to its last
    :py:data:`LINES_MAXIMUM` lines, and the records of each level of each
    logger to 100 in the process (the last says that further ones are not
    shown): the bounds of the lines which ``serve`` shows of its web
    server's log, kept in one place.
'''


import invocables.mcp.__ as __
import invocables.mcp.redaction as _redaction


LINES_MAXIMUM = 40
''' Lines of a message, traceback or stack kept at most: the last, which
    name the failure. '''

_LOGGERS = (
    'mcp.client.auth', 'mcp.client.auth.oauth2', 'mcp.client.auth.utils' )


class BoundingFilter( __.logging.Filter ):
    ''' Redacts and bounds records (see module), in place. '''

    def __init__( self, tally: __.logs.Tally | None = None ):
        super( ).__init__( )
        self.tally = tally or __.logs.Tally( )

    def filter( self, record: __.logging.LogRecord ) -> bool:
        # Redacted before it is cut, lest a cut leave part of a secret.
        _redaction.redact_record( record, _redaction.redact_everywhere )
        note = self.tally.count( record.name, record.levelname )
        if note is None: return False
        message = record.getMessage( )
        bounded = __.logs.bound_text( message, LINES_MAXIMUM ) + note
        if bounded != message:
            record.msg = bounded
            record.args = None
        if record.exc_text:
            record.exc_text = __.logs.bound_text(
                record.exc_text, LINES_MAXIMUM )
        if record.stack_info:
            record.stack_info = __.logs.bound_text(
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
