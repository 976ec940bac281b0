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
    forms in which a server may quote it: percent-encoded, escaped for JSON
    or JavaScript, or written as HTML's character references (any of its
    characters escaped, in either case of hex, the others left plain; its
    spaces as ``+``), in base64 (also within longer base64 text), in upper
    and lower case (see :py:class:`Redactor`); and when a server splits it
    over texts which a processor joins (see :py:func:`redact_straddles`).
'''


import threading as _threading

from bisect import bisect_left as _bisect_left
from bisect import bisect_right as _bisect_right
from itertools import accumulate as _accumulate
from itertools import pairwise as _pairwise

import invocables.mcp.__ as __
import invocables.canisters as _canisters
import invocables.mcp._redactforms as _redactforms
import invocables.mcp._redactviews as _redactviews
import invocables.mcp._sdk as _sdk


REDACTION = '***'

_MARKS = '%\\&' # which begin escapes
_LOGGERS_FOREIGN = ( *_sdk.HTTP_LOGGERS, 'mcp.client', 'mcp.shared' )
# Of the HTTP client's transport (httpcore2), which logs answers' headers.
_TRANSPORT_LOGGERS = ( 'connection', 'http11', 'http2', 'proxy', 'socks' )
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
_nonspace = __.re.compile( r'\S' )
_space = __.re.compile( r'\s+' )
_formatter = __.logging.Formatter( )
_scribe = __.logging.getLogger( __name__ )
_SHORTS_WARNING = (
    "{count} secret(s) of an MCP server are shorter than four characters, "
    "or decode to a form which is (such as '&lt;&gt;'): not redacted in "
    "that form, as redacting so short a text would hide common words. "
    "Use longer secrets." )
_lock = _threading.Lock( )
_redactors: list[ 'Redactor' ] = [ ]


class Redactor( __.immut.Object ):
    ''' Replaces secrets in text by ``***``.

        Values shorter than four characters are left alone (they would
        hide too much), and so are forms of secrets which decode to fewer
        characters; a warning says how many secrets are such. Each secret
        is learned as it is and stripped of surrounding whitespace, and
        each of these in the forms which a server may quote:
        percent-encoded (as in a path, as in a query or form, with ``+``
        for spaces), in base64 (standard and URL-safe,
        with and without padding), escaped as JSON escapes it (where that
        differs) and with every character a ``\\u`` escape, its bytes in
        hex (either case, with separators between them or none) and each
        read as a character (as Latin-1 and Windows' code page 1252 read
        them; Python's ``repr`` of bytes writes them ``\\xNN``), in upper
        and lower case. (Case is not ignored otherwise: a secret in mixed
        case is another word.) URLs on one of the hosts lose their
        credentials and the values of their queries (hosts are names or
        addresses, without ports).

        Encoders escape different characters, in either case of hex: in a
        text which holds ``%``, a backslash or ``&``, a secret is also
        found with any of its characters percent-encoded (their UTF-8
        bytes), escaped as JSON or JavaScript may escape them (``\\u`` in
        either case, a pair for a character beyond the first plane,
        ``\\u{...}``, ``\\x``, Python's ``\\U``, ``\\/`` and the other
        short escapes) or written as HTML's character references
        (``&#NN;``, ``&#xHH;``, ``&amp;`` and the other named ones of an
        escaper), the others left plain, and so through two kinds at once
        (a URL inside JSON or HTML), or three levels (JSON inside a JSON
        string inside a JSON string): in a view of the text with each
        escape decoded, made in one scan of the text, and in views of that
        view (once more for each level of escapes within a secret, up to
        two;
        see :py:mod:`invocables.mcp._redactviews`). A secret with spaces
        is also found with any of them ``+`` (as a form writes them),
        where the text holds ``+``; a ``+`` stands for no other character.
        The escapes of the secret's characters go whole with it.

        Within longer base64 text (a server's encoding of a document which
        holds the secret, as it is or escaped for JSON), the secret is
        known by its core at each of the three byte alignments, in both
        alphabets: the characters which its bytes alone decide. The
        character before a core and the one after it, which share bits
        with the secret, go with it when those bits agree. A core is
        learned only if at least eight characters long (48 bits: shorter,
        it would match other base64 by chance), which secrets of seven
        bytes or more reach at every alignment.
    '''

    def __init__(
        self,
        secrets: __.cabc.Iterable[ str ] = ( ),
        hosts: __.cabc.Iterable[ str ] = ( ),
    ):
        secrets = tuple( secrets )
        margins, views, depth, shorts = _redactforms.survey_margins(
            secrets )
        if shorts: _scribe.warning( _SHORTS_WARNING.format( count = shorts ) )
        self._hexes = _redactforms.produce_hexes( secrets )
        # Longest first: a form which holds another goes whole.
        self.secrets = tuple( sorted( margins, key = len, reverse = True ) )
        self._forms = tuple(
            ( form, *margins[ form ] ) for form in self.secrets )
        # A text without '%', backslash or '&' holds no form with one:
        # the forms per those which a text holds.
        self._forms_marked = {
            marks: tuple(
                form for form in self._forms
                if all( mark in marks for mark in _MARKS if mark in form[ 0 ] )
            ) for marks in _survey_marks( ) }
        self._views = _redactforms.produce_views( views, depth )
        self._spreads = _survey_spreads( self.secrets )
        self._spread_width = max(
            ( len( form ) for form, _ in self._spreads ), default = 0 )
        self._escaped_width = _redactforms.WIDTH_MAXIMUM * max(
            map( len, views ), default = 0 )
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
        for pattern in self._hexes:
            url = _redactforms.redact_hexes( pattern, url, REDACTION )
        marks = ''.join( mark for mark in _MARKS if mark in url )
        forms = self._forms_marked[ marks ]
        if self._views.forms and (
            marks or ( self._views.spaced and '+' in url )
        ):
            # One replacement of what both find, lest either cut a match
            # of the other (a secret ending in '%' in its form '...%25').
            spans = _redactviews.locate_forms( url, forms )
            spans.extend( _redactviews.locate_escaped( url, self._views ) )
            return _replace_spans( url, spans ) if spans else url
        for secret, before, after in forms:
            if secret not in url: continue
            if before or after:
                url = _redact_core( url, secret, before, after )
            else: url = url.replace( secret, REDACTION )
        return url

    def redact_data( self, data: __.typx.Any ) -> __.typx.Any:
        ''' Returns JSON-like data with secrets replaced in its strings. '''
        if self.is_vacant( ): return data
        return redact_json( self.redact, data )

    def prepare( self, text: str ) -> str:
        ''' Returns text of a server as it may go out: secrets replaced,
            then made sendable by the one normaliser
            (:py:func:`invocables.canisters.normalize_text`). '''
        return _canisters.normalize_text( self.redact( text ) )

    def prepare_data( self, data: __.typx.Any ) -> __.typx.Any:
        ''' Returns JSON-like data of a server as it may go out: secrets
            replaced, then made sendable
            (:py:func:`invocables.canisters.normalize_data`). '''
        return _canisters.normalize_data( self.redact_data( data ) )

    def redact_straddles(
        self, texts: __.cabc.Sequence[ str ]
    ) -> list[ str ]:
        ''' Returns texts (see :py:func:`redact_straddles`). '''
        results = list( texts )
        if len( results ) < 2 or not self._spreads: # noqa: PLR2004
            return results
        squeeze = _squeeze_texts( results, self._spread_width )
        spans: dict[ int, list[ tuple[ int, int ] ] ] = { }
        for form, gaps in self._spreads:
            for owner, start, end in _survey_shares( squeeze, form, gaps ):
                spans.setdefault( owner, [ ] ).append( ( start, end ) )
        chains = _redactviews.locate_chains(
            results, self._views, self._escaped_width )
        for owner, pairs in chains.items( ):
            spans.setdefault( owner, [ ] ).extend( pairs )
        for owner, pairs in spans.items( ):
            results[ owner ] = _replace_spans( results[ owner ], pairs )
        return results

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
        if _redactors: redact_record( record, redact_everywhere )
        return True


def redact_record(
    record: __.logging.LogRecord, redact: __.cabc.Callable[ [ str ], str ]
) -> None:
    ''' Redacts log record in place: message, arguments (a message which
        quotes no secret keeps them, which handlers may read), traceback
        (formatted, then redacted), stack. '''
    try: message = record.getMessage( )
    except Exception: return # logging reports the bad record
    redacted = redact( message )
    if redacted != message: # else handlers keep the record's arguments
        record.msg = redacted
        record.args = None
    if record.exc_info:
        text = record.exc_text or _formatter.formatException(
            record.exc_info )
        record.exc_text = redact( text )
        record.exc_info = None
    elif record.exc_text:
        record.exc_text = redact( record.exc_text )
    if record.stack_info: record.stack_info = redact( record.stack_info )


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


def _survey_spreads(
    forms: __.cabc.Iterable[ str ]
) -> tuple[ tuple[ str, tuple[ int, ... ] ], ... ]:
    ''' Returns each form without its whitespace (once, if long enough),
        with the length of the whitespace after each of its characters but
        the last. '''
    spreads: dict[ str, tuple[ int, ... ] ] = { }
    for form in forms:
        places = [ match.start( ) for match in _nonspace.finditer( form ) ]
        if len( places ) < _redactforms.LENGTH_MINIMUM: continue
        squeezed = ''.join( form[ place ] for place in places )
        if squeezed in spreads: continue
        spreads[ squeezed ] = tuple(
            after - before - 1
            for before, after in _pairwise( places ) )
    return tuple( spreads.items( ) )


def _survey_marks( ) -> tuple[ str, ... ]:
    ''' Returns each choice of the characters which begin escapes, in
        order. '''
    return tuple(
        ''.join( mark for place, mark in enumerate( _MARKS )
                 if choice >> place & 1 )
        for choice in range( 1 << len( _MARKS ) ) )


def _survey_loggers( ) -> list[ __.logging.Logger ]:
    ''' Returns loggers of the library, the SDK's client, the HTTP client.
    '''
    # exist before their first request (a record of a logger made after
    # the filter was attached would pass unredacted)
    __.logging.getLogger( _sdk.HTTP_LOGGERS[ 0 ] )
    for name in _TRANSPORT_LOGGERS:
        __.logging.getLogger( f"{_sdk.HTTP_LOGGERS[ 1 ]}.{name}" )
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
        neighbouring texts spread between them replaced in each, whitespace
        at the joints aside: the end of one begins the secret, the texts
        after it (each shorter than the secret, or blank) continue it, and
        the start of the last ends it. A processor which joins the texts,
        with or without newlines, would give it whole.

        The secret's whitespace at a joint goes with the later text, as far
        as that text leads with whitespace. Work is linear in the length of
        texts and of secrets: only the heads and tails of texts, as long as
        the longest secret, are scanned, in one pass per form of secret.

        A secret with its characters escaped, as found in one text (see
        :py:class:`Redactor`), is found across the joints of neighbouring
        texts too (any number of them, each cut inside an escape or not),
        as they meet, with whitespace at the joints aside, or with it as
        one space of the secret's: texts are
        searched as one, in chains which a text longer than twice the
        longest form escaped twice ends (by its head) and begins (by its
        tail).
    '''
    return redactor.redact_straddles( texts )


class _Squeeze( __.immut.DataclassObject ):
    ''' Texts, as far as a secret spread over them may reach, without
        whitespace: their characters, in segments (a whole text, or its
        head and its tail), and the joints between texts. '''

    texts: __.cabc.Sequence[ str ]
    characters: str
    # owner, start and end in owner, characters of each segment
    segments: list[ tuple[ int, int, int, str ] ]
    starts: list[ int ] # where each segment starts in characters
    joints: list[ int ] # where a text starts in characters, but the first
    places: dict[ int, list[ int ] ] = __.dcls.field(
        default_factory = dict[ int, list[ int ] ] )


def _locate_piece(
    squeeze: _Squeeze, first: int, last: int
) -> list[ int ]:
    ''' Returns owner, start and end in owner of the squeezed characters
        from first to last (one segment). '''
    segment = _bisect_right( squeeze.starts, first ) - 1
    owner, start, end, _ = squeeze.segments[ segment ]
    places = squeeze.places.get( segment )
    if places is None:
        places = squeeze.places[ segment ] = [
            match.start( ) for match
            in _nonspace.finditer( squeeze.texts[ owner ], start, end ) ]
    offset = squeeze.starts[ segment ]
    return [ owner, places[ first - offset ], places[ last - 1 - offset ] + 1 ]


def _locate_shares(
    squeeze: _Squeeze, index: int, gaps: tuple[ int, ... ]
) -> list[ list[ int ] ]:
    ''' Returns owner, start and end in owner of each text's share in
        the secret at index of the squeezed characters (gaps: the lengths
        of its whitespace). The secret's whitespace at a joint goes to the
        later text as far as it leads with whitespace, the rest to the
        earlier as far as it ends with whitespace. '''
    end = index + len( gaps ) + 1
    joints = squeeze.joints
    cuts = joints[
        _bisect_right( joints, index ) : _bisect_left( joints, end ) ]
    marks = ( index, *cuts, end )
    shares = [
        _locate_piece( squeeze, first, last )
        for first, last in _pairwise( marks ) ]
    for left, right, cut in zip( shares, shares[ 1 : ], cuts ):
        gap = gaps[ cut - index - 1 ]
        taken = min( gap, right[ 1 ] ) # right starts with its first word
        right[ 1 ] -= taken
        trailing = len( squeeze.texts[ left[ 0 ] ] ) - left[ 2 ]
        left[ 2 ] += min( gap - taken, trailing )
    return shares


def _locate_straddles( squeeze: _Squeeze, form: str ) -> list[ int ]:
    ''' Returns where form starts in the squeezed characters, wherever it
        crosses a joint; leftmost first, not overlapping. Each search
        starts past the last match, or near the next joint. '''
    characters, joints = squeeze.characters, squeeze.joints
    size = len( form )
    found: list[ int ] = [ ]
    index = characters.find( form )
    while index >= 0:
        following = _bisect_right( joints, index )
        if following == len( joints ): break
        joint = joints[ following ]
        if joint < index + size:
            found.append( index )
            start = index + size
        else: start = joint - size + 1
        index = characters.find( form, start )
    return found


def _redact_core( text: str, core: str, before: str, after: str ) -> str:
    ''' Returns text with every core replaced, with the character before
        it and the one after it if among those which go with it. '''
    pieces: list[ str ] = [ ]
    cursor = 0
    index = text.find( core )
    while index >= 0:
        end = index + len( core )
        if index > cursor and text[ index - 1 ] in before: index -= 1
        if end < len( text ) and text[ end ] in after: end += 1
        pieces.extend( ( text[ cursor : index ], REDACTION ) )
        cursor = end
        index = text.find( core, end )
    pieces.append( text[ cursor : ] )
    return ''.join( pieces )


def _replace_spans(
    text: str, spans: list[ tuple[ int, int ] ]
) -> str:
    ''' Returns text with each span replaced, overlapping ones as one. '''
    merged: list[ list[ int ] ] = [ ]
    for start, end in sorted( spans ):
        if merged and start <= merged[ -1 ][ 1 ]:
            merged[ -1 ][ 1 ] = max( merged[ -1 ][ 1 ], end )
        else: merged.append( [ start, end ] )
    pieces: list[ str ] = [ ]
    cursor = 0
    for start, end in merged:
        pieces.extend( ( text[ cursor : start ], REDACTION ) )
        cursor = end
    pieces.append( text[ cursor : ] )
    return ''.join( pieces )


def _squeeze_end(
    text: str, width: int, *, head: bool
) -> tuple[ int, str ] | None:
    ''' Returns length of the shortest slice at the head (or tail) of
        text, from twice width by powers of four, which holds width
        characters other than whitespace, with them; none if it would
        reach half of text. '''
    size = 2 * width
    while 2 * size < len( text ):
        piece = text[ : size ] if head else text[ -size : ]
        squeezed = _space.sub( '', piece )
        if len( squeezed ) >= width: return size, squeezed
        size *= 4
    return None


def _squeeze_texts(
    texts: __.cabc.Sequence[ str ], width: int
) -> _Squeeze:
    ''' Returns texts squeezed, each as far as a secret of width
        characters (whitespace aside) which crosses a joint may reach. '''
    segments = [
        ( owner, start, end, squeezed )
        for owner, text in enumerate( texts )
        for start, end, squeezed in _survey_windows( text, width )
        if squeezed ]
    starts = list( _accumulate(
        ( len( segment[ 3 ] ) for segment in segments ), initial = 0 ) )
    joints = [
        starts[ index ] for index in range( 1, len( segments ) )
        if segments[ index ][ 0 ] != segments[ index - 1 ][ 0 ] ]
    return _Squeeze(
        texts = texts, segments = segments, starts = starts,
        joints = joints,
        characters = ''.join( segment[ 3 ] for segment in segments ) )


def _survey_shares(
    squeeze: _Squeeze, form: str, gaps: tuple[ int, ... ]
) -> __.cabc.Iterator[ list[ int ] ]:
    ''' Yields owner, start and end in owner of each text's share in each
        place where form crosses a joint. '''
    for index in _locate_straddles( squeeze, form ):
        yield from _locate_shares( squeeze, index, gaps )


def _survey_windows(
    text: str, width: int
) -> list[ tuple[ int, int, str ] ]:
    ''' Returns the spans of text which a secret crossing into or out of
        it may reach, with their characters other than whitespace: the
        whole text, or its head and its tail, each with width characters
        at least (so that no secret reaches from one to the other). '''
    head = _squeeze_end( text, width, head = True )
    tail = (
        None if head is None
        else _squeeze_end( text, width, head = False ) )
    if head is None or tail is None:
        return [ ( 0, len( text ), _space.sub( '', text ) ) ]
    return [
        ( 0, head[ 0 ], head[ 1 ] ),
        ( len( text ) - tail[ 0 ], len( text ), tail[ 1 ] ) ]
