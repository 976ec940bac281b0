# SPDX-License-Identifier: Apache-2.0

''' Scanners and parsers of the text-call reader: each scanner finds the
    end of a candidate call in one pass, quote-aware, bounded in size and
    depth; the parsers read a call's region strictly (JSON without repeated
    keys, Python literals only, never evaluated); the validators check the
    reader's arguments (format, names, position).

    Scanners are fed text from a start index and return the index where the
    candidate ended (closed, broken or abandoned), or ``None`` while it is
    open: nothing is copied but the candidate itself. :py:func:`survey_braces`
    answers, in one pass, where a scan from each brace of a text would end,
    so that the reader never scans the same text again from each brace
    left open at its end.
'''


import ast as _ast

import invocables.processors.__ as __


DEPTH_MAXIMUM = 64
FORMATS = frozenset( (
    'auto', 'hermes', 'json', 'llama', 'mistral', 'pythonic', 'strict' ) )
INTEGER_DIGITS_MAXIMUM = 4300
''' Most decimal digits of an integer in a call's arguments (Python's
    default limit of conversions between integers and text; the
    interpreter's own limit where it is lower). '''
REGION_SIZE_MAXIMUM = 1 << 20

# Keys of a call written as JSON: an object with any other key (such as
# 'result' or 'output', a model reciting a call and its result) is text.
_CALL_KEYS = frozenset( ( 'arguments', 'id', 'name', 'parameters', 'type' ) )

_json_special = __.re.compile( r'[{}"]' )
_json_special_all = __.re.compile( r'[{}"\\]' )
_python_special = __.re.compile( r'''[\[\](){}'",\\]''' )
# What ends or escapes the contents of a string, by its quote.
_strings_specials = {
    "'": __.re.compile( r"['\\]" ), '"': __.re.compile( r'["\\]' ) }
_python_closers = { '[': ']', '(': ')', '{': '}' }
_python_name = __.re.compile( r'\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\(' )

Spans: __.typx.TypeAlias = tuple[ tuple[ int, int ], ... ]


class BraceEnds:
    ''' Where a JSON scan from each brace of a text ends: at the end of the
        object (closed), where it was abandoned (too deep), or nowhere (open
        at the end of the text).
    '''

    __slots__ = ( 'abandoned', 'closed' )

    def __init__(
        self, closed: dict[ int, int ], abandoned: dict[ int, int ]
    ) -> None:
        self.closed = closed
        self.abandoned = abandoned


class ScannerBase:
    ''' Scanner of a region of streamed text, kept piece by piece up to
        its maximum size.
    '''

    __slots__ = (
        'abandoned', 'closed', 'escape', 'offset', 'pieces', 'quote' )

    special: __.typx.ClassVar[ __.re.Pattern[ str ] ]

    def __init__( self ) -> None:
        self.abandoned = False
        self.closed = False
        self.escape = False
        self.offset = 0
        self.pieces: list[ str ] = [ ]
        self.quote = ''

    def feed( self, text: str, start: int = 0 ) -> int | None:
        ''' Scans text from start; returns index where the region closed,
            broke or was abandoned (too large or deep), ``None`` while it
            is open.
        '''
        limit = min( len( text ), start + REGION_SIZE_MAXIMUM - self.offset )
        index = start
        while index < limit:
            if self.escape or self.quote:
                index = self._skip_string( text, index, limit )
                continue
            match = self.special.search( text, index, limit )
            if match is None: break
            index = match.end( )
            position = self.offset + index - start - 1
            if self._consume( match.group( ), position ):
                return self._keep( text, start, index )
        return self._keep_rest( text, start, limit )

    def is_closed( self ) -> bool:
        ''' Returns whether the region closed. '''
        return self.closed

    def produce_region( self ) -> str:
        ''' Returns text of region scanned. '''
        return ''.join( self.pieces )

    def _keep( self, text: str, start: int, end: int ) -> int:
        self.pieces.append( text[ start : end ] )
        self.offset += end - start
        return end

    def _keep_rest( self, text: str, start: int, limit: int ) -> int | None:
        ''' Keeps text up to limit; returns limit where the region is
            too large (abandoned at its maximum size), ``None`` while open.
        '''
        if limit < len( text ):
            self.abandoned = True
            return self._keep( text, start, limit )
        self._keep( text, start, limit )
        return None

    def _consume( self, character: str, position: int ) -> bool:
        ''' Hook: takes one special character; returns whether scan ends.
        '''
        raise NotImplementedError  # pragma: no cover

    def _skip_string( self, text: str, index: int, limit: int ) -> int:
        ''' Returns index after string contents (or limit) from index. '''
        if self.escape:
            self.escape = False
            return index + 1
        match = _strings_specials[ self.quote ].search( text, index, limit )
        if match is None: return limit
        if match.group( ) == '\\': self.escape = True
        else: self.quote = ''
        return match.end( )


class BraceScanner( ScannerBase ):
    ''' Finds the end of a JSON object, string-aware, in linear time. '''

    __slots__ = ( 'name', 'stack' )

    special = _json_special

    def __init__( self, name: str | None = None ) -> None:
        super( ).__init__( )
        self.name = name
        self.stack: list[ tuple[ int, list[ tuple[ int, int ] ] ] ] = [ ]

    def survey_inner( self ) -> Spans:
        ''' Returns spans of complete objects inside open ones, in order.
        '''
        spans = [ span for _, inner in self.stack for span in inner ]
        return tuple( sorted( spans ) )

    def _close( self, position: int ) -> bool:
        start, _ = self.stack.pop( )
        if not self.stack:
            self.closed = True
            return True
        self.stack[ -1 ][ 1 ].append( ( start, position + 1 ) )
        return False

    def _consume( self, character: str, position: int ) -> bool:
        ''' Takes one special character; returns whether scan ends. '''
        if character == '"': self.quote = character
        elif character == '{':
            self.stack.append( ( position, [ ] ) )
            if len( self.stack ) > DEPTH_MAXIMUM: self.abandoned = True
            return self.abandoned
        else: return self._close( position )
        return False


class ListScanner( ScannerBase ):
    ''' Finds the end of a Python list of calls, quote-aware, in linear
        time, with the spans of its items.
    '''

    __slots__ = ( 'broken', 'items', 'stack', 'start' )

    special = _python_special

    def __init__( self ) -> None:
        super( ).__init__( )
        self.broken = False
        self.items: list[ tuple[ int, int ] ] = [ ]
        self.stack: list[ str ] = [ ]
        self.start = 1

    def survey_items( self ) -> Spans:
        ''' Returns spans of complete items. '''
        return tuple( self.items )

    def _close( self, character: str, position: int ) -> bool:
        if not self.stack or self.stack[ -1 ] != character:
            self.broken = True
            return True
        self.stack.pop( )
        if self.stack: return False
        self.items.append( ( self.start, position ) )
        self.closed = True
        return True

    def _consume( self, character: str, position: int ) -> bool:
        ''' Takes one special character; returns whether scan ends. '''
        if character in '\'"': self.quote = character
        elif character in _python_closers:
            self.stack.append( _python_closers[ character ] )
            if len( self.stack ) > DEPTH_MAXIMUM: self.abandoned = True
            return self.abandoned
        elif character == ',':
            if len( self.stack ) == 1:
                self.items.append( ( self.start, position ) )
                self.start = position + 1
        elif character != '\\': return self._close( character, position )
        return False


_Stack: __.typx.TypeAlias = list[ list[ int ] ]


def access_digits_maximum( ) -> int:
    ''' Returns most decimal digits of an integer in a call's arguments:
        :py:data:`INTEGER_DIGITS_MAXIMUM`, or the interpreter's limit of
        conversions between integers and text where it is lower (an
        integer beyond it can be neither rendered nor hashed as text).
    '''
    limit: int = getattr( __.sys, 'get_int_max_str_digits', int )( )
    return min( limit, INTEGER_DIGITS_MAXIMUM ) if limit > 0 else (
        INTEGER_DIGITS_MAXIMUM )


def access_python_name( item: str ) -> str | None:
    match = _python_name.match( item )
    return None if match is None else match.group( 1 )


class RefusalError( ValueError ):
    ''' JSON object repeats a key, or holds a number which JSON has no
        form for: whole JSON, which is refused.
    '''


def decode_json(
    text: str, *, repetitions: bool = True
) -> tuple[ __.typx.Any, __.Absential[ str ] ]:
    ''' Decodes JSON strictly: repeated keys are refused, not resolved
        (unless not ``repetitions``); so are ``NaN``, ``Infinity`` and
        numbers beyond floats, which Python's decoder takes but JSON has
        no form for.
    '''
    try: return load_json( text, repetitions = repetitions ), __.absent
    except RefusalError as exception: return { }, str( exception )
    except ValueError as exception:
        if _is_integer_overlong( exception ):
            return { }, describe_integer( 'the arguments hold' )
        return { }, "arguments are not valid JSON: {message}".format(
            message = exception )
    except RecursionError: return { }, "arguments are nested too deeply"


def describe_integer( holder: str ) -> str:
    ''' Returns reason to refuse an integer too long to be read, for the
        model: what holds it (``"argument 'q' holds"``), the bound, and
        what to send instead.
    '''
    return (
        "{holder} an integer of more than {digits} digits, which cannot "
        "be read; send such a number as a string".format(
            holder = holder, digits = access_digits_maximum( ) ) )


def is_call( value: __.cabc.Mapping[ str, object ] ) -> bool:
    ''' Returns whether object has the keys of a call and no others. '''
    if not _CALL_KEYS.issuperset( value ): return False
    if value.get( 'type', 'function' ) != 'function': return False
    return isinstance( value.get( 'id', '' ), str )


def load_json( text: str, *, repetitions: bool = True ) -> __.typx.Any:
    ''' Returns JSON value of text, read strictly (see
        :py:func:`decode_json`); raises :py:class:`RefusalError` for whole
        JSON which is refused, ``ValueError`` or ``RecursionError`` for
        text which is no JSON. Without ``repetitions``, a repeated key
        takes its last value, as providers' own decoders take it.
    '''
    return __.json.loads(
        text, object_pairs_hook = _refuse_repetitions if repetitions
        else None,
        parse_constant = _refuse_constant, parse_float = _decode_float )


def parse_python_call(
    item: str, name: str
) -> tuple[ dict[ str, __.typx.Any ], __.Absential[ str ] ]:
    ''' Parses one pythonic call with literal arguments; never evaluates.
    '''
    try: tree = _ast.parse( item.strip( ), mode = 'eval' )
    except ( SyntaxError, ValueError ) as exception:
        # A decimal literal beyond the interpreter's limit fails here.
        if _is_integer_overlong( exception ):
            return { }, describe_integer( f"the call of {name!r} holds" )
        return { }, f"the call of {name!r} is not valid Python"
    except ( RecursionError, MemoryError, OverflowError ):
        return { }, f"the call of {name!r} is not valid Python"
    call = tree.body
    if not isinstance( call, _ast.Call ) or not isinstance(
        call.func, _ast.Name
    ): return { }, f"the call of {name!r} is not a plain call"
    if call.args:
        return { }, "arguments must be given by keyword, not by position"
    return _evaluate_keywords( call.keywords )


def survey_braces( text: str ) -> BraceEnds:
    ''' Returns where a JSON scan from each brace of text would end, in one
        pass over its special characters.

        A scan from a brace differs from a scan from an earlier one only in
        its depth and its string state; scans in the same string state at
        the same place go on alike. So the pass follows at most three
        tracks, one per string state (outside strings, inside, just after a
        backslash inside), each a stack of groups of braces (the scans at
        one depth); tracks which meet are merged, groups aligned from the
        top. Text must be shorter than the maximum size of a region (no
        scan of it is abandoned as too large).
    '''
    closed: dict[ int, int ] = { }
    abandoned: dict[ int, int ] = { }
    outside: _Stack | None = None
    inside: _Stack | None = None
    escaped: _Stack | None = None
    backslash = -2
    for match in _json_special_all.finditer( text ):
        index = match.start( )
        if escaped is not None and backslash + 1 < index:
            # The escape took the character after the backslash.
            inside = _merge_tracks( inside, escaped )
            escaped = None
        character = match.group( )
        if character == '"':
            outside, inside, escaped = (
                inside, _merge_tracks( outside, escaped ), None )
        elif character == '\\':
            inside, escaped = escaped, inside
            backslash = index
        else:
            inside = _merge_tracks( inside, escaped )
            escaped = None
            if character == '{':
                if outside is None: outside = [ ]
                _push_brace( outside, index, abandoned )
            elif outside:
                for position in outside.pop( ): closed[ position ] = index + 1
    return BraceEnds( closed, abandoned )


def validate_format( format: str ) -> str: # noqa: A002
    ''' Returns format of text calls; raises configuration invalidity if it
        is unknown.
    '''
    if isinstance( format, str ) and format in FORMATS: return format
    raise __.exceptions.ConfigurationInvalidity(
        "option 'text_calls'",
        "unknown format {format!r}; known formats are {known}.".format(
            format = format, known = ', '.join( sorted( FORMATS ) ) ) )


def validate_names( names: __.cabc.Iterable[ str ] ) -> frozenset[ str ]:
    ''' Returns names of the offered tools; raises configuration
        invalidity for one text (its letters are no tools) or names which
        are not texts.
    '''
    location = "names of the tools of text calls"
    if isinstance( names, str ) or not isinstance(
        names, __.cabc.Iterable
    ):
        raise __.exceptions.ConfigurationInvalidity(
            location, "expected texts, not {kind}.".format(
                kind = type( names ).__name__ ) )
    names_ = frozenset( names )
    if not all( isinstance( name, str ) for name in names_ ):
        raise __.exceptions.ConfigurationInvalidity(
            location, "expected texts only." )
    return names_


def validate_position( position: int ) -> int:
    ''' Returns ordinal of the first call; raises configuration invalidity
        for one which is not an integer from 0 to the largest index.
    '''
    if type( position ) is int and 0 <= position <= __.sys.maxsize:
        return position
    raise __.exceptions.ConfigurationInvalidity(
        "position of text calls",
        "expected an integer from 0 to {maximum}, not {kind}.".format(
            maximum = __.sys.maxsize, kind = type( position ).__name__ ) )


def _evaluate_keywords(
    keywords: __.cabc.Sequence[ _ast.keyword ]
) -> tuple[ dict[ str, __.typx.Any ], __.Absential[ str ] ]:
    ''' Returns values of keyword arguments, literals only. '''
    arguments: dict[ str, __.typx.Any ] = { }
    for keyword in keywords:
        if keyword.arg is None:
            return { }, "arguments must be given by keyword, not unpacked"
        if keyword.arg in arguments:
            return { }, (
                f"the call repeats argument {keyword.arg!r}: which value "
                "is meant is unknown" )
        flaw = _survey_literal( keyword.value, keyword.arg )
        if not __.is_absent( flaw ): return { }, flaw
        try: value = _ast.literal_eval( keyword.value )
        except (
            ValueError, TypeError, SyntaxError, RecursionError, MemoryError,
            OverflowError, # an integer beyond floats beside a complex
        ): return { }, f"argument {keyword.arg!r} is not a literal"
        try: arguments[ keyword.arg ] = __.values.copy_plain(
            value, DEPTH_MAXIMUM )
        except __.values.Flaw:
            return { }, f"argument {keyword.arg!r} has no JSON form"
    return arguments, __.absent


def _survey_literal( node: _ast.AST, name: str ) -> __.Absential[ str ]:
    ''' Returns why the expression of argument name cannot be read, in
        one walk: a literal (at any depth, signed or not, in any base) is
        an integer of more digits than may be read (hexadecimal, octal and
        binary literals parse at any length), or a dict repeats a key
        (which value is meant is unknown, as for JSON).
    '''
    bound = _produce_integer_bound( access_digits_maximum( ) )
    for child in _ast.walk( node ):
        if isinstance( child, _ast.Dict ):
            keys = [
                key.value for key in child.keys
                if isinstance( key, _ast.Constant )
                and isinstance( key.value, str ) ]
            if len( set( keys ) ) < len( keys ):
                return (
                    f"argument {name!r} repeats a key of a dict: which "
                    "value is meant is unknown" )
        if not isinstance( child, _ast.Constant ): continue
        value: object = child.value
        if type( value ) is int and abs( value ) >= bound:
            return describe_integer( f"argument {name!r} holds" )
    return __.absent


def _is_integer_overlong( exception: Exception ) -> bool:
    ''' Returns whether parsing failed on an integer beyond the
        interpreter's limit of digits (a decimal literal, a JSON number).
    '''
    return 'integer string conversion' in str( exception )


def _merge_tracks(
    stack: _Stack | None, other: _Stack | None
) -> _Stack | None:
    ''' Returns stacks merged: groups aligned from the top, the smaller
        group moved into the larger.
    '''
    if other is None: return stack
    if stack is None: return other
    if len( stack ) < len( other ): stack, other = other, stack
    for depth in range( 1, len( other ) + 1 ):
        larger, smaller = stack[ - depth ], other[ - depth ]
        if len( larger ) < len( smaller ): larger, smaller = smaller, larger
        larger.extend( smaller )
        stack[ - depth ] = larger
    return stack


@__.funct.lru_cache( maxsize = 4 )
def _produce_integer_bound( digits: int ) -> int:
    ''' Returns the least integer of more decimal digits than digits. '''
    return 10 ** digits


def _push_brace(
    stack: _Stack, index: int, abandoned: dict[ int, int ]
) -> None:
    stack.append( [ index ] )
    if len( stack ) > DEPTH_MAXIMUM:
        for position in stack.pop( 0 ): abandoned[ position ] = index + 1




def _decode_float( text: str ) -> float:
    value = float( text )
    if __.math.isfinite( value ): return value
    raise RefusalError(
        "the JSON holds a number beyond the largest float, which cannot "
        "be read; send such a number as a string" )


def _refuse_constant( text: str ) -> __.typx.NoReturn:
    raise RefusalError(
        f"the JSON holds {text}, which is not JSON; send such a value as "
        "a string or null" )


def _refuse_repetitions(
    pairs: list[ tuple[ str, __.typx.Any ] ]
) -> dict[ str, __.typx.Any ]:
    result = dict( pairs )
    if len( result ) != len( pairs ):
        seen: set[ str ] = set( )
        for key, _ in pairs:
            if key in seen:
                raise RefusalError(
                    f"the JSON repeats key {key!r}: which value is meant "
                    "is unknown" )
            seen.add( key )
    return result
