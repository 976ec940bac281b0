# SPDX-License-Identifier: Apache-2.0

''' Redaction of secrets in messages, results and log records.

    The secrets of a server are the values read from ``env:`` references
    (in its environment, headers or URL), the password of its URL, and
    literal values under keys which name a secret (``Authorization``,
    ``API_KEY``, ``token`` ...). They are replaced by ``***`` wherever text
    from the server or about it is shown; URLs on the server's host also
    lose their credentials and the values of their queries.

    While a connection is open, its redactor is active: a filter on the
    library's loggers, and on the loggers of the ``mcp`` SDK's client and
    of its HTTP client (``httpx2``; ``httpx`` with SDK 1.x), applies every
    active redactor to each record, its arguments and its traceback. The
    filter leaves the loggers of others once no connection is open.

    Each secret is also known stripped of surrounding whitespace and in the
    forms in which a server may quote it: percent-encoded, in base64,
    escaped for JSON, in upper and lower case (see :py:class:`Redactor`).
'''


import threading as _threading

from base64 import b64encode as _b64encode
from base64 import urlsafe_b64encode as _urlsafe_b64encode
from urllib.parse import quote as _quote
from urllib.parse import quote_plus as _quote_plus

import invocables.mcp.__ as __
import invocables.mcp._sdk as _sdk


REDACTION = '***'

_LENGTH_MINIMUM = 4
_LOGGERS_FOREIGN = ( *_sdk.HTTP_LOGGERS, 'mcp.client', 'mcp.shared' )
_key_secret = __.re.compile(
    r'auth|token|secret|passw|credential|cookie|signature|apikey'
    r'|api[-_]key|(?:private|access|client)[-_]?key|(?:^|[-_])key$',
    __.re.IGNORECASE )
_query_value = __.re.compile( r'=[^&;#]*' )
# The scheme is bounded: unbounded, each of the many places where a word
# starts in text such as 'a.a.a.' scanned to its end (quadratic time).
_url = __.re.compile(
    r'''(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]{0,31}://)'''
    r'''(?P<userinfo>[^\s/?#@'"<>]*@)?'''
    r'''(?P<host>[^\s/?#'"<>]+)'''
    r'''(?P<path>[^\s?#'"<>]*)'''
    r'''(?P<query>\?[^\s#'"<>]*)?''' )
_formatter = __.logging.Formatter( )
_lock = _threading.Lock( )
_redactors: list[ 'Redactor' ] = [ ]


class Redactor( __.immut.Object ):
    ''' Replaces secrets in text by ``***``.

        Values shorter than four characters are left alone (they would
        hide too much). Each secret is learned as it is and stripped of
        surrounding whitespace, and each of these in the forms which a
        server may quote: percent-encoded (as in a path, as in a query or
        form), in base64 (standard and URL-safe, with and without padding),
        escaped as JSON escapes it (where that differs) and with every
        character a ``\\u`` escape, in upper and lower case. (Case is not
        ignored otherwise: a secret in mixed case is another word.) URLs on
        one of the hosts lose their credentials and the values of their
        queries (hosts are names or addresses, without ports).
    '''

    def __init__(
        self,
        secrets: __.cabc.Iterable[ str ] = ( ),
        hosts: __.cabc.Iterable[ str ] = ( ),
    ):
        # Longest first: a form which holds another goes whole.
        self.secrets = tuple( sorted(
            { form for secret in secrets for form in _survey_forms( secret )
              if len( form ) >= _LENGTH_MINIMUM },
            key = len, reverse = True ) )
        self.hosts = frozenset( host.lower( ) for host in hosts if host )

    def is_vacant( self ) -> bool:
        ''' Returns whether redactor has nothing to hide. '''
        return not self.secrets and not self.hosts

    def redact( self, text: str ) -> str:
        ''' Returns text with every secret replaced. '''
        text = self.redact_link( text )
        if self.hosts and '://' in text:
            text = _url.sub( self._redact_url, text )
        return text

    def redact_link( self, url: str ) -> str:
        ''' Returns URL a server asks the user to visit, with every secret
            replaced; its query stays, which the visit needs.
        '''
        for secret in self.secrets:
            if secret in url: url = url.replace( secret, REDACTION )
        return url

    def redact_data( self, data: __.typx.Any ) -> __.typx.Any:
        ''' Returns JSON-like data with secrets replaced in its strings. '''
        if self.is_vacant( ): return data
        return redact_json( self.redact, data )

    def _redact_url( self, match: __.re.Match[ str ] ) -> str:
        host = match[ 'host' ]
        if _strip_port( host ).lower( ) not in self.hosts:
            return match[ 0 ]
        userinfo = f"{REDACTION}@" if match[ 'userinfo' ] else ''
        query = match[ 'query' ] or ''
        if query:
            query = _query_value.sub( f"={REDACTION}", query )
            if '=' not in query: query = f"?{REDACTION}"
        return "{scheme}{userinfo}{host}{path}{query}".format(
            scheme = match[ 'scheme' ], userinfo = userinfo, host = host,
            path = match[ 'path' ], query = query )


def activate_redactor( redactor: Redactor ) -> None:
    ''' Applies redactor to log records until it is deactivated. '''
    if redactor.is_vacant( ): return
    with _lock:
        _redactors.append( redactor )
        _attach_filter( )


def deactivate_redactor( redactor: Redactor ) -> None:
    ''' Stops applying redactor to log records. '''
    with _lock:
        if not any( item is redactor for item in _redactors ): return
        _redactors[ : ] = [
            item for item in _redactors if item is not redactor ]
        if not _redactors: _detach_filter( )


def is_secret_key( key: str ) -> bool:
    ''' Returns whether name of variable, header or parameter is secret. '''
    return _key_secret.search( key ) is not None


def redact_everywhere( text: str ) -> str:
    ''' Returns text with secrets of every open connection replaced. '''
    for redactor in tuple( _redactors ): text = redactor.redact( text )
    return text


class _Filter( __.logging.Filter ):
    ''' Redacts log records: message, arguments, traceback, stack.

        A message which quotes no secret keeps its arguments, which
        handlers may read.
    '''

    def filter( self, record: __.logging.LogRecord ) -> bool:
        if not _redactors: return True
        try: message = record.getMessage( )
        except Exception: return True # logging reports the bad record
        redacted = redact_everywhere( message )
        if redacted != message: # else handlers keep the record's arguments
            record.msg = redacted
            record.args = None
        if record.exc_info:
            text = record.exc_text or _formatter.formatException(
                record.exc_info )
            record.exc_text = redact_everywhere( text )
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = redact_everywhere( record.exc_text )
        if record.stack_info:
            record.stack_info = redact_everywhere( record.stack_info )
        return True


_filter = _Filter( )


def _attach_filter( ) -> None:
    for logger in _survey_loggers( ):
        if _filter not in logger.filters: logger.addFilter( _filter )


def _detach_filter( ) -> None:
    for logger in _survey_loggers( ): logger.removeFilter( _filter )


def redact_json(
    redact: __.cabc.Callable[ [ str ], str ],
    data: __.typx.Any,
    depth_maximum: int | None = None,
) -> __.typx.Any:
    ''' Returns JSON-like data with its strings and keys redacted; below
        depth maximum (if any: an error's data), a redaction mark only.
    '''
    if isinstance( data, str ): return redact( data )
    if depth_maximum is not None:
        if depth_maximum <= 0: return REDACTION
        depth_maximum -= 1
    if isinstance( data, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ object, __.typx.Any ], data )
        return {
            redact( str( key ) ): redact_json( redact, value, depth_maximum )
            for key, value in mapping.items( ) }
    if isinstance( data, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ __.typx.Any ], data )
        return [ redact_json( redact, item, depth_maximum ) for item in items ]
    return data


def _strip_port( host: str ) -> str:
    if host.startswith( '[' ):
        return host.split( ']', maxsplit = 1 )[ 0 ] + ']'
    return host.split( ':', maxsplit = 1 )[ 0 ]


def _survey_forms( secret: str ) -> __.cabc.Iterator[ str ]:
    ''' Yields secret, stripped, and the forms in which each may be quoted.
    '''
    stripped = secret.strip( )
    for core in { secret, stripped }:
        if len( core ) < _LENGTH_MINIMUM: continue
        # The bytes the environment gave; else lone surrogates as they are.
        try: data = core.encode( errors = 'surrogateescape' )
        except UnicodeEncodeError:
            data = core.encode( errors = 'surrogatepass' )
        units = core.encode( 'utf-16-be', errors = 'surrogatepass' )
        yield from (
            core, core.upper( ), core.lower( ),
            _quote( data, safe = '' ), _quote( data ), _quote_plus( data ),
            __.json.dumps( core )[ 1 : -1 ],
            __.json.dumps( core, ensure_ascii = False )[ 1 : -1 ],
            ''.join(
                "\\u{unit:04x}".format( unit = int.from_bytes(
                    units[ index : index + 2 ], 'big' ) )
                for index in range( 0, len( units ), 2 ) ) )
        for encoded in ( _b64encode( data ), _urlsafe_b64encode( data ) ):
            text = encoded.decode( 'ascii' )
            yield from ( text, text.rstrip( '=' ) )


def _survey_loggers( ) -> list[ __.logging.Logger ]:
    ''' Returns loggers of the library, the SDK's client, the HTTP client.
    '''
    # exists before its first request
    __.logging.getLogger( _sdk.HTTP_LOGGERS[ 0 ] )
    manager = __.logging.Logger.manager
    loggers: list[ __.logging.Logger ] = [ ]
    for name, logger in tuple( manager.loggerDict.items( ) ):
        if not isinstance( logger, __.logging.Logger ): continue
        if not _is_watched( name ): continue
        loggers.append( logger )
    return loggers


def _is_watched( name: str ) -> bool:
    for prefix in ( __.package_name, *_LOGGERS_FOREIGN ):
        if name == prefix or name.startswith( f"{prefix}." ): return True
    return False


def redact_straddles(
    redactor: Redactor, texts: __.cabc.Sequence[ str ]
) -> list[ str ]:
    ''' Returns texts (each redacted already), with every secret which
        straddles two neighbours replaced in both: the end of one begins
        the secret and the start of the next ends it, maybe with
        whitespace between (a processor which joins the texts with a
        newline would give it whole). Per boundary and secret, at most as
        many checks as the secret has characters.
    '''
    results = list( texts )
    for index in range( len( results ) - 1 ):
        for secret in redactor.secrets:
            results[ index ], results[ index + 1 ] = _redact_straddle(
                secret, results[ index ], results[ index + 1 ] )
    return results


def _redact_straddle(
    secret: str, left: str, right: str
) -> tuple[ str, str ]:
    ''' Returns left and right with the two parts of secret replaced, if
        left ends with its first part and right begins with the rest
        (whitespace aside); else both as they are. '''
    head = len( left.rstrip( ) )
    tail = len( right ) - len( right.lstrip( ) )
    for cut in range( 1, len( secret ) ):
        start = _locate_end( left, head, secret[ : cut ] )
        if start < 0: continue
        end = _locate_start( right, tail, secret[ cut : ] )
        if end < 0: continue
        return (
            left[ : start ] + REDACTION + left[ start + cut : ],
            right[ : end ] + REDACTION + right[ end + len( secret ) - cut : ] )
    return left, right


def _locate_end( text: str, head: int, part: str ) -> int:
    ''' Returns where part starts in text if only whitespace follows it
        (text is whitespace from head on); else -1. '''
    core = part.rstrip( )
    start = head - len( core )
    if start < 0 or not text.startswith( part, start ): return -1
    return start


def _locate_start( text: str, tail: int, part: str ) -> int:
    ''' Returns where part starts in text if only whitespace precedes it
        (text is whitespace up to tail); else -1. '''
    core = part.lstrip( )
    start = tail - ( len( part ) - len( core ) )
    if start < 0 or not text.startswith( part, start ): return -1
    return start
