# SPDX-License-Identifier: Apache-2.0

''' Elicitation on a terminal: asks the user what a server requests.

    :py:func:`produce_terminal_elicitor` gives an elicitor for
    ``produce_ensemble( ..., elicitor = ... )``. It writes the server's
    message and, for each field of the requested schema, its type,
    description, default and choices; it reads one answer per field,
    checks it against the field's schema (asking again after a bad
    answer), then asks whether to send the answers. ``y`` accepts,
    ``decline`` (or ``!decline`` at any field) declines, an empty answer,
    ``n``, ``!cancel``, the end of input (Ctrl-D) or Ctrl-C cancels.
    Streams are given, so that it serves terminals, notebooks and tests
    alike; answers are read in a thread of their own, so that the event
    loop (and the sessions of other servers) keeps running meanwhile.
'''


import signal as _signal
import sys as _sys
import threading as _threading

import invocables.mcp.__ as __
import invocables.mcp.callbacks as _callbacks
import invocables.mcp.exchanges as _exchanges


_ANSWERS_ACCEPTING = frozenset( ( 'y', 'yes', 'send', 'accept' ) )
_ANSWERS_DECLINING = frozenset( ( 'decline', 'd', '!decline' ) )
_ANSWERS_FALSE = frozenset( ( 'n', 'no', 'false', '0', 'off' ) )
_ANSWERS_TRUE = frozenset( ( 'y', 'yes', 'true', '1', 'on' ) )
_ESCAPE_CANCEL = '!cancel'
_ESCAPE_DECLINE = '!decline'
_NUMBERS = ( 'integer', 'number' )
_integral = __.re.compile( r'[-+]?[0-9]+' )
_scribe = __.produce_scribe( __name__ )


class TerminalElicitor:
    ''' Asks the user on text streams for the input a server requests. '''

    def __init__(
        self, reader: __.typx.TextIO, writer: __.typx.TextIO
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.lock = __.asyncio.Lock( )
        self.pending: __.asyncio.Future[ str | None ] | None = None
        self.interruption: __.asyncio.Future[ None ] | None = None

    def __repr__( self ) -> str:
        return f"{type( self ).__name__}( )"

    async def __call__(
        self, request: _callbacks.ElicitationRequest
    ) -> _callbacks.ElicitationResponse:
        ''' Asks the user; returns accept, decline or cancel. '''
        # One question at a time, when several servers ask at once.
        async with self.lock:
            loop = __.asyncio.get_running_loop( )
            self.interruption = loop.create_future( )
            try:
                with _intercept_interruption( loop, self.interruption ):
                    return await self._ask( request )
            except _Outcome as outcome:
                self._write( f"[elicitation] {outcome.action.value}.\n" )
                return _callbacks.ElicitationResponse(
                    action = outcome.action )

    async def _ask(
        self, request: _callbacks.ElicitationRequest
    ) -> _callbacks.ElicitationResponse:
        self._write(
            f"\n[elicitation] MCP server {request.ensemble!r} asks: "
            f"{request.message}\n" )
        if not __.is_absent( request.url ):
            self._write( f"  Open this URL: {request.url}\n" )
            return await self._confirm( None )
        schema = request.schema
        if _exchanges.is_schema_deep( schema ): # never asked of a user
            self._write( "  Its form is nested too deep to be shown.\n" )
            raise _Outcome( _callbacks.ElicitationActions.Decline )
        properties = __.typx.cast(
            __.cabc.Mapping[ str, __.cabc.Mapping[ str, __.typx.Any ] ],
            schema.get( 'properties', { } ) )
        required = frozenset( schema.get( 'required', ( ) ) )
        self._write(
            "  Answer each field (an empty answer takes the default or "
            "skips an optional field; '!decline' or '!cancel' stops).\n" )
        content: dict[ str, __.typx.Any ] = { }
        for name, field in properties.items( ):
            value = await self._ask_field(
                name, field, required = name in required )
            if value is not _SKIPPED: content[ name ] = value
        return await self._confirm( content )

    async def _ask_field(
        self,
        name: str,
        field: __.cabc.Mapping[ str, __.typx.Any ],
        *,
        required: bool,
    ) -> __.typx.Any:
        self._write( describe_field( name, field, required = required ) )
        while True:
            text = ( await self._read( f"  {name}: " ) ).strip( )
            if text.lower( ) == _ESCAPE_DECLINE:
                raise _Outcome( _callbacks.ElicitationActions.Decline )
            if text.lower( ) == _ESCAPE_CANCEL:
                raise _Outcome( _callbacks.ElicitationActions.Cancel )
            if not text:
                if 'default' in field: return field[ 'default' ]
                if not required: return _SKIPPED
                self._write( "  This field is required.\n" )
                continue
            try: return validate_answer( field, text )
            except ValueError as exception:
                self._write( f"  Not accepted: {exception}\n" )

    async def _confirm(
        self, content: dict[ str, __.typx.Any ] | None
    ) -> _callbacks.ElicitationResponse:
        if content is not None:
            self._write( "  Answers: {answers}\n".format(
                answers = __.json.dumps( content, ensure_ascii = False ) ) )
        text = ( await self._read(
            "  Send? [y: send / decline / empty: cancel] " ) ).strip( )
        answer = text.lower( )
        if answer in _ANSWERS_ACCEPTING:
            self._write( "[elicitation] sent.\n" )
            return _callbacks.ElicitationResponse(
                action = _callbacks.ElicitationActions.Accept,
                content = content or { } )
        if answer in _ANSWERS_DECLINING:
            raise _Outcome( _callbacks.ElicitationActions.Decline )
        raise _Outcome( _callbacks.ElicitationActions.Cancel )

    async def _read( self, prompt: str ) -> str:
        ''' Reads a line in a daemon thread; cancels at the end of input
            or on Ctrl-C (where the loop runs in the main thread).

            A line still being read when Ctrl-C came answers the next
            question: no line is lost to a forgotten thread.
        '''
        self._write( prompt )
        loop = __.asyncio.get_running_loop( )
        pending = self.pending
        if pending is None or pending.get_loop( ) is not loop:
            pending = self.pending = self._start_reading( loop )
        interruption = self.interruption
        if interruption is None or interruption.get_loop( ) is not loop:
            interruption = self.interruption = loop.create_future( )
        await __.asyncio.wait(
            ( pending, interruption ),
            return_when = __.asyncio.FIRST_COMPLETED )
        line = None
        if pending.done( ) and not interruption.done( ):
            self.pending = None
            line = pending.result( )
        if line is None:
            self._write( '\n' )
            raise _Outcome( _callbacks.ElicitationActions.Cancel )
        # A terminal echoes the answer; for other streams, show it.
        if not _is_interactive( self.reader ):
            self._write( line if line.endswith( '\n' ) else f"{line}\n" )
        return line

    def _start_reading(
        self, loop: __.asyncio.AbstractEventLoop
    ) -> __.asyncio.Future[ str | None ]:
        received: __.asyncio.Future[ str | None ] = loop.create_future( )

        def settle( line: str | None ) -> None:
            if not received.done( ): received.set_result( line )

        def read( ) -> None:
            try: line: str | None = self.reader.readline( )
            except ( OSError, ValueError ): line = None
            # None at the end of input: readline gives an empty string.
            with __.ctxl.suppress( RuntimeError ): # loop closed meanwhile
                loop.call_soon_threadsafe( settle, line or None )

        _threading.Thread(
            target = read, name = 'invocables-elicitation',
            daemon = True ).start( )
        return received

    def _write( self, text: str ) -> None:
        self.writer.write( text )
        self.writer.flush( )


def describe_field(
    name: str,
    field: __.cabc.Mapping[ str, __.typx.Any ],
    *,
    required: bool,
) -> str:
    ''' Returns lines which describe one field of a requested schema. '''
    genus = field.get( 'type', 'string' )
    title = field.get( 'title' )
    head = f"  - {name} ({genus}, {'required' if required else 'optional'})"
    if title and title != name: head += f" {title}"
    lines = [ head ]
    description = field.get( 'description' )
    if description: lines.append( f"    {description}" )
    choices = survey_choices( field )
    if choices:
        several = genus == 'array'
        lines.append( "    {kind}: {choices}".format(
            kind = 'choices (several, comma-separated)' if several
            else 'choices',
            choices = ', '.join(
                value if label == value else f"{value} ({label})"
                for value, label in choices ) ) )
    for key, label in (
        ( 'minimum', 'at least' ), ( 'maximum', 'at most' ),
        ( 'minLength', 'characters at least' ),
        ( 'maxLength', 'characters at most' ),
        ( 'minItems', 'choices at least' ),
        ( 'maxItems', 'choices at most' ), ( 'format', 'format' ),
    ):
        if key in field: lines.append( f"    {label}: {field[ key ]}" )
    if 'default' in field:
        lines.append( "    default: {default}".format(
            default = __.json.dumps( field[ 'default' ] ) ) )
    return '\n'.join( lines ) + '\n'


def produce_terminal_elicitor(
    reader: __.typx.Annotated[
        __.typx.TextIO | None,
        __.ddoc.Doc(
            ''' Stream the answers are read from, line by line; default:
                the standard input. ''' ),
    ] = None,
    writer: __.typx.Annotated[
        __.typx.TextIO | None,
        __.ddoc.Doc(
            ''' Stream the questions are written to; default: the
                standard error stream (the standard output stays the
                model's). ''' ),
    ] = None,
) -> _callbacks.Elicitor:
    ''' Produces elicitor which asks the user on a terminal (or streams).

        Give it to ``produce_ensemble( ..., elicitor = ... )``. Answers are
        checked against the requested schema; a bad one is asked again.
    '''
    return TerminalElicitor(
        _sys.stdin if reader is None else reader,
        _sys.stderr if writer is None else writer )


def survey_choices(
    field: __.cabc.Mapping[ str, __.typx.Any ]
) -> tuple[ tuple[ str, str ], ... ]:
    ''' Returns values and labels of an enumerated field, if any.

        Understands ``enum`` (with the legacy ``enumNames``), ``oneOf`` or
        ``anyOf`` of ``const`` with ``title``, and arrays of either.
    '''
    source = field
    if field.get( 'type' ) == 'array':
        source = __.typx.cast(
            __.cabc.Mapping[ str, __.typx.Any ], field.get( 'items', { } ) )
    if 'enum' in source:
        values = [ str( value ) for value in source[ 'enum' ] ]
        labels = list( source.get( 'enumNames', values ) )
        if len( labels ) != len( values ): labels = values
        return tuple( zip( values, map( str, labels ) ) )
    options: __.cabc.Sequence[ __.typx.Any ] = (
        source.get( 'oneOf' ) or source.get( 'anyOf' ) or ( ) )
    choices: list[ tuple[ str, str ] ] = [ ]
    for option in options:
        if not isinstance( option, __.cabc.Mapping ): continue
        option_ = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], option )
        if 'const' not in option_: continue
        value = str( option_[ 'const' ] )
        choices.append( ( value, str( option_.get( 'title', value ) ) ) )
    return tuple( choices )


def validate_answer(
    field: __.cabc.Mapping[ str, __.typx.Any ], text: str
) -> __.typx.Any:
    ''' Returns answer as a value of the field's type, checked against its
        schema. Raises ``ValueError`` with the reason otherwise.
    '''
    genus = field.get( 'type', 'string' )
    value = _convert( field, genus, text )
    # A server's patterns never run on Python's backtracking re.
    import invocables.exceptions as exceptions
    import invocables.schemata as schemata
    if schemata.is_schema_fanned( field ):
        raise ValueError(
            "The field's schema applies too many subschemas to check an "
            "answer against it." )
    validator = schemata.produce_instance_validator( field, formats = True )
    try:
        with schemata.bound_steps( ):
            errors: list[ __.typx.Any ] = list(
                validator.iter_errors( value ) )
    except exceptions.PatternInterruption as exception:
        raise ValueError(
            "The answer took too long to check against the pattern "
            f"{exception.pattern!r}; give a shorter one." ) from exception
    except exceptions.ValidationExhaustion as exception:
        raise ValueError(
            schemata.describe_exhaustion( 'answer' ) ) from exception
    if errors: raise ValueError( str( errors[ 0 ].message ) )
    return value


class _Outcome( Exception ):
    ''' Internal signal: the user declined or cancelled. '''

    def __init__( self, action: _callbacks.ElicitationActions ):
        super( ).__init__( action.value )
        self.action = action


_SKIPPED = object( )


def _convert(
    field: __.cabc.Mapping[ str, __.typx.Any ], genus: object, text: str
) -> __.typx.Any:
    choices = survey_choices( field )
    if genus == 'array':
        return [
            _select_choice( choices, item.strip( ) )
            for item in text.split( ',' ) if item.strip( ) ]
    if choices: return _select_choice( choices, text )
    if genus == 'boolean':
        answer = text.lower( )
        if answer in _ANSWERS_TRUE: return True
        if answer in _ANSWERS_FALSE: return False
        raise ValueError( "answer y or n." )
    if genus in _NUMBERS: return _convert_number( genus, text )
    return text


def _convert_number( genus: object, text: str ) -> int | float:
    try: number = float( text )
    except ValueError: raise ValueError( "answer a number." ) from None
    if genus == 'integer':
        if not number.is_integer( ):
            raise ValueError( "answer a whole number." )
        return int( number )
    return int( text ) if _integral.fullmatch( text ) else number


@__.ctxl.contextmanager
def _intercept_interruption(
    loop: __.asyncio.AbstractEventLoop,
    interruption: __.asyncio.Future[ None ],
) -> __.cabc.Generator[ None, None, None ]:
    ''' Makes Ctrl-C cancel the question rather than the program, while
        the loop runs in the main thread (as in the command).
    '''
    if _threading.current_thread( ) is not _threading.main_thread( ):
        yield
        return

    def interrupt( number: int, frame: object ) -> None:
        loop.call_soon_threadsafe( _settle, interruption )

    try: previous = _signal.signal( _signal.SIGINT, interrupt )
    except ValueError: # not settable here (an embedding interpreter)
        yield
        return
    try: yield
    finally: _signal.signal( _signal.SIGINT, previous )


def _is_interactive( stream: __.typx.Any ) -> bool:
    probe = getattr( stream, 'isatty', None )
    try: return bool( probe( ) ) if callable( probe ) else False
    except ( OSError, ValueError ): return False


def _settle( future: __.asyncio.Future[ None ] ) -> None:
    if not future.done( ): future.set_result( None )


def _select_choice(
    choices: __.cabc.Sequence[ tuple[ str, str ] ], text: str
) -> str:
    ''' Returns value chosen by value, label or number (from 1). '''
    for value, label in choices:
        if text in ( value, label ) or text.lower( ) == label.lower( ):
            return value
    if text.isdigit( ) and 1 <= int( text ) <= len( choices ):
        return choices[ int( text ) - 1 ][ 0 ]
    raise ValueError( "choose one of {choices}.".format(
        choices = ', '.join( label for _, label in choices ) ) )
