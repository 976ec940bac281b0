# SPDX-License-Identifier: Apache-2.0

''' Reader of text calls, streamed piece by piece: the machine behind
    :py:mod:`invocables.processors.textcalls`.

    It withholds text which may be the start of a call until it is known,
    and releases it as text otherwise; scanners of
    :py:mod:`invocables.processors._textscans` find where each candidate
    ends, and its parsers read it.
'''


import invocables.processors.__ as __
import invocables.processors._textscans as _textscans
from ._textscans import (
    access_python_name as _access_python_name,
    decode_json as _decode_json,
    is_call as _is_call,
    parse_python_call as _parse_python_call,
    validate_format as validate_format,
    validate_names as _validate_names,
    validate_position as _validate_position,
)
import invocables.processors._wire as _wire


DEPTH_MAXIMUM = _textscans.DEPTH_MAXIMUM
FORMATS = _textscans.FORMATS
REGION_SIZE_MAXIMUM = _textscans.REGION_SIZE_MAXIMUM

_GLUE_MAXIMUM = 4096
_LOOKAHEAD_MAXIMUM = 128
_MARKERS: __.cabc.Mapping[ str, tuple[ str, bool ] ] = (
    __.types.MappingProxyType( {
        '<tool_call>': ( 'hermes', True ),
        '</tool_call>': ( 'hermes', False ),
        '[TOOL_CALLS]': ( 'mistral', True ),
        '[/TOOL_CALLS]': ( 'mistral', False ),
        '<|python_tag|>': ( 'llama', True ),
        '<|python_start|>': ( 'pythonic', True ),
        '<|python_end|>': ( 'pythonic', False ),
    } ) )
_brackets = __.re.compile( r'\[+' )
_fence = __.re.compile( r'```[A-Za-z0-9_+-]{0,32}' )
_fence_prefix = __.re.compile( r'```[A-Za-z0-9_+-]{0,32}|`{1,2}' )
# Separators, with each '[' which starts nothing (not a marker, a run of
# brackets or a pythonic call): a run of them is one token.
_glue = __.re.compile( r'(?:[\s\],;]|\[(?=\s*[^\sA-Za-z_/]))+' )
_mistral_head = __.re.compile( r'\s*([A-Za-z0-9_.-]{1,64})\s*\{' )
_mistral_prefix = __.re.compile( r'\s*(?:[A-Za-z0-9_.-]{1,64}\s*)?' )
_name = __.re.compile( r'[A-Za-z0-9_.-]{1,64}' )
_name_field = __.re.compile( r'"name"\s{0,8}:\s{0,8}"([A-Za-z0-9_.-]{1,64})"' )
_python_head = __.re.compile( r'\[\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\(' )
_python_prefix = __.re.compile( r'\[\s*(?:[A-Za-z_][A-Za-z0-9_]{0,63}\s*)?' )
_text = __.re.compile( r'[^{\[<`\s\],;]+' )
_THOUGHT_OPENER = '<think>'
_THOUGHT_CLOSER = '</think>'

Invocations: __.typx.TypeAlias = tuple[
    __.canisters.InvocationCanister, ... ]
_Scanner: __.typx.TypeAlias = (
    _textscans.BraceScanner | _textscans.ListScanner )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class TextCallsRelease:
    ''' What one step of streamed text releases: text and complete calls.
    '''

    text: str
    invocations: Invocations


class TextCallsReader:
    ''' Reads tool calls written as text, streamed piece by piece.

        ``feed`` takes the next piece of text and returns the text it can
        release and the calls it completed; text which may start a call is
        withheld until known. ``conclude`` ends the text and releases the
        rest. A plain class, not a frigid object: it changes with every
        piece.
    '''

    __slots__ = (
        '_buffer', '_concluded', '_count', '_emitted', '_ends', '_fenced',
        '_format', '_glue', '_glue_size', '_invocations', '_named',
        '_names', '_previous', '_retracted', '_scanner', '_tagged',
        '_texts', '_thinking', '_truncations', '_unknown', '_work',
        '_written',
    )

    def __init__(
        self,
        names: __.cabc.Iterable[ str ],
        format: str = 'auto', # noqa: A002
        position: int = 0,
        *,
        unknown: bool = False,
    ) -> None:
        self._format = validate_format( format )
        self._names = _validate_names( names )
        self._unknown = unknown
        self._fenced = False
        self._buffer = ''
        self._concluded = False
        self._count = _validate_position( position )
        self._emitted = 0
        self._ends: _textscans.BraceEnds | None = None
        self._glue: list[ str ] = [ ]
        self._glue_size = 0
        self._invocations: list[ __.canisters.InvocationCanister ] = [ ]
        self._named: __.Absential[ __.re.Match[ str ] | None ] = (
            __.absent )
        self._previous = ''
        self._retracted = 0
        self._scanner: _Scanner | None = None
        self._tagged = False
        self._texts: list[ str ] = [ ]
        self._thinking = False
        self._truncations: list[ str ] = [ ]
        self._work = 0 # characters scanned, for tests of linearity
        self._written = False

    @property
    def retractions( self ) -> int:
        ''' Number of the first calls released which were thoughts: before
            a closer of a thinking block which the text never opened (the
            chat template did). They must not run.
        '''
        return self._retracted

    @property
    def truncations( self ) -> tuple[ str, ... ]:
        ''' Names of calls which the end of the text cut off. '''
        return tuple( self._truncations )

    def feed( self, text: str ) -> TextCallsRelease:
        ''' Takes next piece of text; returns what it releases. '''
        if self._concluded:
            raise __.exceptions.AccumulatorReuseInvalidity( 'text calls' )
        if not isinstance( text, str ):
            raise __.exceptions.ConfigurationInvalidity(
                "text of text calls", "expected a text, not {kind}.".format(
                    kind = type( text ).__name__ ) )
        if self._scanner is not None:
            end = self._scanner.feed( text )
            self._work += len( text ) if end is None else end
            if end is None: return self._release( )
            self._settle_scanner( )
            text = text[ end : ]
        self._buffer += text
        self._work += len( self._buffer )
        self._advance( )
        return self._release( )

    def conclude( self ) -> TextCallsRelease:
        ''' Ends the text; returns the rest of what it releases. '''
        if self._concluded:
            return TextCallsRelease( text = '', invocations = ( ) )
        self._concluded = True
        while True:
            if self._scanner is not None: self._settle_scanner( )
            self._advance( )
            if self._scanner is None: break
        if self._glue and self._previous != 'call': self._emit_text( '' )
        self._clear_glue( )
        self._ends = None
        return self._release( )

    def _advance( self ) -> None:
        ''' Reads buffer from its start as far as it is known. '''
        buffer = self._buffer
        cursor = 0
        while cursor < len( buffer ) and self._scanner is None:
            step = self._step( buffer, cursor )
            if step is None: break
            cursor = step
        self._buffer = '' if self._scanner is not None else buffer[ cursor : ]

    def _step( self, buffer: str, cursor: int ) -> int | None:
        ''' Reads one token at cursor; returns next cursor, or ``None`` to
            wait for more text.
        '''
        if self._thinking: return self._step_thought( buffer, cursor )
        character = buffer[ cursor ]
        if character == '{': return self._step_object( buffer, cursor )
        if character in '<[':
            return self._step_opening( buffer, cursor, character )
        if character == '`': return self._step_fence( buffer, cursor )
        match = _glue.match( buffer, cursor )
        if match is not None: self._emit_glue( match.group( ) )
        else:
            match = __.typx.cast(
                __.re.Match[ str ], _text.match( buffer, cursor ) )
            self._emit_text( match.group( ) )
        return match.end( )

    def _step_opening(
        self, buffer: str, cursor: int, character: str
    ) -> int | None:
        if character == '<':
            step = self._step_thoughts( buffer, cursor )
            if step is not None: return step if step >= 0 else None
        step = self._step_marker( buffer, cursor )
        if step is not None: return step if step >= 0 else None
        if character == '[': return self._step_bracket( buffer, cursor )
        self._emit_text( '<' )
        return cursor + 1

    def _step_bracket( self, buffer: str, cursor: int ) -> int | None:
        run = _brackets.match( buffer, cursor )
        if run is not None and run.end( ) - cursor > 1:
            # Each bracket followed by another starts nothing.
            self._emit_glue( buffer[ cursor : run.end( ) - 1 ] )
            return run.end( ) - 1
        if self._format in ( 'auto', 'pythonic' ) or (
            self._format == 'strict' and self._is_enclosed( )
        ):
            if _python_head.match( buffer, cursor ):
                scanner = _textscans.ListScanner( )
                return self._commence( scanner, buffer, cursor )
            prefix = _python_prefix.match( buffer, cursor )
            if self._is_undecided( prefix, buffer, cursor ): return None
        self._emit_glue( '[' )
        return cursor + 1

    def _step_thoughts( self, buffer: str, cursor: int ) -> int | None:
        ''' Reads opener or closer of a thinking block: returns cursor
            after it, -1 to wait, ``None`` for neither. A closer without
            its opener retracts every call before it.
        '''
        rest = buffer[ cursor : cursor + len( _THOUGHT_CLOSER ) ]
        if rest.startswith( _THOUGHT_OPENER ):
            self._thinking = True
            step = self._step_thought( buffer, cursor )
            return -1 if step is None else step
        if rest == _THOUGHT_CLOSER:
            self._retracted = self._emitted
            self._emit_text( rest )
            return cursor + len( rest )
        if not self._concluded and (
            _THOUGHT_OPENER.startswith( rest )
            or _THOUGHT_CLOSER.startswith( rest )
        ): return -1
        return None

    def _step_thought( self, buffer: str, cursor: int ) -> int | None:
        ''' Reads a thinking block as text, calls in it too (a thought is
            no action), up to its closer or the end of the text; withholds
            what may be the start of the closer.
        '''
        end = buffer.find( _THOUGHT_CLOSER, cursor )
        if end >= 0:
            self._thinking = False
            end += len( _THOUGHT_CLOSER )
        elif self._concluded: end = len( buffer )
        else:
            end = len( buffer )
            for size in range( len( _THOUGHT_CLOSER ) - 1, 0, -1 ):
                if buffer.endswith( _THOUGHT_CLOSER[ : size ] ):
                    end -= size
                    break
            if end <= cursor: return None
        self._emit_text( buffer[ cursor : end ] )
        return end

    def _step_fence( self, buffer: str, cursor: int ) -> int | None:
        end = self._concluded
        match = _fence.match( buffer, cursor )
        if match is not None and ( end or match.end( ) < len( buffer ) ):
            self._fenced = not self._fenced
            self._emit_glue( match.group( ) )
            return match.end( )
        if not end and _fence_prefix.fullmatch( buffer, cursor ):
            return None
        self._emit_text( '`' )
        return cursor + 1

    def _step_marker( self, buffer: str, cursor: int ) -> int | None:
        ''' Returns cursor after marker, -1 to wait, ``None`` for none. '''
        rest = buffer[ cursor : cursor + 16 ]
        for marker, ( genus, opening ) in _MARKERS.items( ):
            if self._format not in ( 'auto', 'strict', genus ): continue
            if rest.startswith( marker ):
                following = cursor + len( marker )
                if genus == 'mistral' and opening:
                    return self._step_mistral( buffer, following )
                self._emit_marker( )
                self._tagged = opening
                return following
            if not self._concluded and marker.startswith( rest ) and len(
                rest
            ) < len( marker ): return -1
        return None

    def _step_mistral( self, buffer: str, cursor: int ) -> int:
        ''' Reads marker of Mistral calls and ``name{...}`` (tokenizer v11)
            after it, if there; returns -1 to wait for more text.
        '''
        match = _mistral_head.match( buffer, cursor )
        if match is None:
            prefix = _mistral_prefix.match( buffer, cursor )
            if self._is_undecided( prefix, buffer, cursor ): return -1
        self._emit_marker( )
        self._tagged = True
        if match is None: return cursor
        scanner = _textscans.BraceScanner( match.group( 1 ) )
        return self._commence( scanner, buffer, match.end( ) - 1 )

    def _is_undecided(
        self,
        prefix: __.re.Match[ str ] | None,
        buffer: str,
        cursor: int,
    ) -> bool:
        ''' Returns whether a prefix which reaches the end of the text so
            far may still become a call (bounded lookahead).
        '''
        return not self._concluded and prefix is not None and (
            prefix.end( ) == len( buffer )
            and len( buffer ) - cursor < _LOOKAHEAD_MAXIMUM )

    def _step_object( self, buffer: str, cursor: int ) -> int:
        if self._format in ( 'auto', 'json', 'llama' ) or (
            self._is_enclosed( )
        ): return self._commence( _textscans.BraceScanner( ), buffer, cursor )
        self._emit_text( '{' )
        return cursor + 1

    def _is_enclosed( self ) -> bool:
        ''' Returns whether the text read is in tags of calls or in a code
            fence (format 'strict' reads calls only there).
        '''
        if self._tagged: return True
        return self._format == 'strict' and self._fenced

    def _commence(
        self, scanner: _Scanner, buffer: str, cursor: int
    ) -> int:
        if self._ends is not None and isinstance(
            scanner, _textscans.BraceScanner
        ): return self._replay( scanner, buffer, cursor )
        end = scanner.feed( buffer, cursor )
        self._work += ( len( buffer ) if end is None else end ) - cursor
        self._scanner = scanner
        if end is None: return len( buffer )
        self._settle_scanner( )
        return end

    def _replay(
        self, scanner: _textscans.BraceScanner, buffer: str, cursor: int
    ) -> int:
        ''' Reads object at cursor from the survey of the text after a
            brace left open at its end, without scanning it again.
        '''
        ends = __.typx.cast( _textscans.BraceEnds, self._ends )
        end = ends.closed.get( cursor )
        scanner.closed = end is not None
        if end is None:
            end = ends.abandoned.get( cursor )
            scanner.abandoned = end is not None
        if end is None: # open to the end of the text
            if scanner.name is None and (
                self._access_name_field( buffer, cursor ) not in self._names
            ):
                self._emit_text( '{' )
                return cursor + 1
            # Takes the rest of the text: scanned once.
            scanner.feed( buffer, cursor )
            self._work += len( buffer ) - cursor
            end = len( buffer )
        else: scanner.pieces.append( buffer[ cursor : end ] )
        self._scanner = scanner
        self._settle_scanner( )
        return end

    def _access_name_field( self, buffer: str, cursor: int ) -> str | None:
        ''' Returns name field of first object from cursor, searching each
            stretch of text once (cursors only grow while replaying).
        '''
        match = self._named
        if __.is_absent( match ) or (
            match is not None and match.start( ) < cursor
        ):
            match = self._named = _name_field.search( buffer, cursor )
        return None if match is None else match.group( 1 )

    def _settle_scanner( self ) -> None:
        scanner = self._scanner
        self._scanner = None
        if scanner is None: return # pragma: no cover
        region = scanner.produce_region( )
        if scanner.abandoned:
            self._emit_text( region )
            return
        if isinstance( scanner, _textscans.BraceScanner ):
            self._settle_object( scanner, region )
        else: self._settle_list( scanner, region )

    def _settle_object(
        self, scanner: _textscans.BraceScanner, region: str
    ) -> None:
        if scanner.is_closed( ):
            self._classify_object( region, scanner.name )
            return
        if scanner.name is not None:
            if scanner.name in self._names:
                self._truncations.append( scanner.name )
            else: self._emit_text( scanner.name + region )
            return
        name = _access_named( region )
        if name is None or name not in self._names:
            # Not a call: read again what follows its brace. Only at the
            # end, once: where a scan from each later brace ends is
            # surveyed in one pass, for the reading again.
            self._emit_text( '{' )
            self._buffer = region[ 1 : ] + self._buffer
            self._ends = _textscans.survey_braces( self._buffer )
            self._work += len( self._buffer )
            return
        # A call cut off by the end of the text: only complete objects
        # inside it are read.
        self._truncations.append( name )
        for start, stop in scanner.survey_inner( ):
            value, invalidity = _decode_json( region[ start : stop ] )
            if not __.is_absent( invalidity ): continue
            invocation = self._read_json_call( value )
            if invocation is not None: self._emit_invocation( invocation )

    def _settle_list(
        self, scanner: _textscans.ListScanner, region: str
    ) -> None:
        spans = [
            ( start, stop ) for start, stop in scanner.survey_items( )
            if _access_python_name( region[ start : stop ] ) in self._names ]
        cursor = 0
        for start, stop in spans:
            self._emit_remnant( region[ cursor : start ] )
            self._emit_invocation(
                self._read_python_call( region[ start : stop ] ) )
            cursor = stop
        if not scanner.is_closed( ) and not scanner.broken:
            # Cut off by the end of the text.
            name = _access_python_name( region[ scanner.start : ] )
            if name in self._names:
                self._emit_remnant( region[ cursor : scanner.start ] )
                self._truncations.append( __.typx.cast( str, name ) )
                return
        if spans: self._emit_remnant( region[ cursor : ] )
        else: self._emit_text( region )

    def _classify_object( self, region: str, name: str | None ) -> None:
        if name is not None:
            if name not in self._names and not self._unknown:
                self._emit_text( name + region )
                return
            self._emit_invocation( self._produce( name, region ) )
            return
        value, invalidity = _decode_json( region )
        if __.is_absent( invalidity ):
            invocation = self._read_json_call( value )
            if invocation is None: self._emit_text( region )
            else: self._emit_invocation( invocation )
            return
        named = _access_named( region )
        if named is None or named not in self._names:
            self._emit_text( region )
            return
        self._emit_invocation( self._produce( named, { }, invalidity ) )

    def _read_json_call(
        self, value: object
    ) -> __.canisters.InvocationCanister | None:
        if not isinstance( value, dict ): return None
        value_ = __.typx.cast( dict[ str, object ], value )
        name = value_.get( 'name' )
        if not isinstance( name, str ) or not _is_call( value_ ): return None
        if name not in self._names and not (
            self._unknown and _name.fullmatch( name ) ): return None
        keys = [
            key for key in ( 'arguments', 'parameters' ) if key in value_ ]
        arguments: object = { }
        invalidity: __.Absential[ str ] = __.absent
        if len( keys ) > 1:
            invalidity = (
                "the call gives both 'arguments' and 'parameters': which "
                "is meant is unknown" )
        elif keys: arguments = value_[ keys[ 0 ] ]
        elif not self._tagged: return None
        return self._produce( name, arguments, invalidity )

    def _read_python_call(
        self, item: str
    ) -> __.canisters.InvocationCanister:
        name = __.typx.cast( str, _access_python_name( item ) )
        arguments, invalidity = _parse_python_call( item, name )
        return self._produce( name, arguments, invalidity )

    def _produce(
        self,
        name: str,
        arguments: object,
        invalidity: __.Absential[ str ] = __.absent,
    ) -> __.canisters.InvocationCanister:
        if isinstance( arguments, str ) and __.is_absent( invalidity ):
            decoded, invalidity = _decode_json( arguments )
            if __.is_absent( invalidity ) and not isinstance( decoded, dict ):
                invalidity = "arguments are JSON, but not an object"
            arguments = __.typx.cast( object, decoded )
        invocation = _wire.produce_invocation(
            None, name, arguments, self._count, invalidity = invalidity )
        self._count += 1
        return invocation

    def _emit_glue( self, glue: str ) -> None:
        self._glue.append( glue )
        self._glue_size += len( glue )
        if self._glue_size > 2 * _GLUE_MAXIMUM and self._previous != 'call':
            self._trim_glue( )

    def _emit_invocation(
        self, invocation: __.canisters.InvocationCanister
    ) -> None:
        self._settle_glue( )
        self._invocations.append( invocation )
        self._emitted += 1
        self._previous = 'call'

    def _emit_marker( self ) -> None:
        self._settle_glue( )
        self._previous = 'call'

    def _emit_remnant( self, text: str ) -> None:
        ''' Emits text between calls of one region, less its separators. '''
        stripped = text.strip( ' \t\r\n[],;' )
        if stripped: self._emit_text( stripped )

    def _clear_glue( self ) -> None:
        self._glue.clear( )
        self._glue_size = 0

    def _settle_glue( self ) -> None:
        ''' Drops glue before a call: only its last part, as if it were
            always trimmed (see ``_trim_glue``).
        '''
        if self._glue_size > _GLUE_MAXIMUM and self._previous != 'call':
            self._trim_glue( )
        self._clear_glue( )

    def _trim_glue( self ) -> None:
        ''' Emits all but the last part of glue as text. Glue is bounded;
            trimmed at twice the bound, but as if at each step, so that what
            is text does not depend on how the text was split.
        '''
        joined = ''.join( self._glue )
        cut = len( joined ) - _GLUE_MAXIMUM
        self._clear_glue( )
        self._emit_text( joined[ : cut ] )
        self._glue.append( joined[ cut : ] )
        self._glue_size = _GLUE_MAXIMUM

    def _emit_text( self, text: str ) -> None:
        glue = ''.join( self._glue )
        self._clear_glue( )
        if glue and self._previous == 'call':
            glue = ''.join( filter( str.isspace, glue ) ) if (
                self._written and text ) else ''
        if not glue and not text: return
        self._texts.append( glue + text )
        self._previous = 'text'
        self._written = True

    def _release( self ) -> TextCallsRelease:
        release = TextCallsRelease(
            text = ''.join( self._texts ),
            invocations = tuple( self._invocations ) )
        self._texts.clear( )
        self._invocations.clear( )
        return release


def _access_named( region: str ) -> str | None:
    match = _name_field.search( region )
    return None if match is None else match.group( 1 )
