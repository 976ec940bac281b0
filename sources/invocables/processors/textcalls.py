# SPDX-License-Identifier: Apache-2.0

''' Reader of tool calls which local models write as text.

    Small local models (served by llama.cpp, vLLM without a tool parser,
    Ollama's raw mode, LM Studio) often write their tool calls into the
    message text rather than as native tool calls. This reader finds them,
    whole or streamed, in these formats:

    * ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
      (Hermes 2 Pro, Qwen 2.5 and 3, Granite 4);
    * ``json``: bare or fenced JSON objects ``{"name": ..., "arguments":
      ...}``, one or several, or a JSON list of them;
    * ``llama``: Llama 3.x JSON ``{"name": ..., "parameters": ...}``, bare
      or after ``<|python_tag|>``, several joined by ``;``;
    * ``mistral``: ``[TOOL_CALLS][{...}, ...]`` and, from tokenizer v11,
      ``[TOOL_CALLS]name{...}``;
    * ``pythonic``: ``[tool(a=1, b='x'), ...]`` (Llama 3.2 and 4, maybe in
      ``<|python_start|>`` ... ``<|python_end|>``), read with :py:mod:`ast`
      as literals only, never evaluated.

    ``auto`` reads them all; ``strict`` reads them all, but only in tags
    (``<tool_call>``, ``[TOOL_CALLS]``, ``<|python_tag|>``,
    ``<|python_start|>``) or code fences, never bare in prose. Only
    complete calls which name an offered tool are read (with ``unknown``,
    as processors read, also complete JSON calls and tagged calls of tools
    not offered, which the engine answers as calls of unknown tools);
    everything else stays text. A JSON object is a call only if its keys
    are a call's (``name``, ``arguments`` or ``parameters``, ``type``,
    ``id``): one with any other key (``result``, ``output``, ...) is
    text. Nothing partial or repaired is
    ever run: a call which names an offered tool but does not parse (JSON
    with doubled braces, repeated keys, ``NaN`` or ``Infinity``, broken
    Python, Python repeating an argument or a key) becomes an
    invocation with ``invalidity`` set, which the engine answers with an
    error result the model can act on; a call cut off by the end of the
    text is never read (its name is reported in ``truncations``, and its
    text is withheld). Separators around calls (spaces, ``[``, ``]``, ``,``,
    ``;``, code fences) are dropped with them. A thinking block
    (``<think>`` to ``</think>`` or the end of the text) is text, calls in
    it too; a ``</think>`` which the text never opened (the chat template
    did) makes every call before it a thought: none of them is read.

    Streaming: :py:class:`TextCallsReader` withholds text which may be the
    start of a call until it is known, and releases it as text otherwise;
    the result does not depend on how the text is split. Sizes are
    bounded: a candidate call longer than :py:data:`REGION_SIZE_MAXIMUM`
    characters, or nested deeper than :py:data:`DEPTH_MAXIMUM`, is released
    as text. The work is linear in the length of the text: no text is
    scanned again from each opener (the text after a brace left open at the
    end is read again once, from a one-pass survey of where a scan from
    each brace ends).

    Truncation, one rule whole and streamed: when a response stopped on its
    token limit and its text holds a call cut off, none of its text calls
    is run (whole, :py:meth:`TextCallsOption.read` raises truncation;
    streamed, :py:class:`TextCallsStream` holds its calls until the end of
    the response, emits none, and raises interruption).

    The accumulators of the processors which take option ``text_calls``
    (OpenAI Chat, Responses, Ollama) subclass
    :py:class:`TextCallsAccumulatorBase`: it keeps the text of the stream,
    reads the calls in it, and releases the text less those calls.
'''


import invocables.processors.__ as __
import invocables.processors.natives as _natives
import invocables.processors.streaming as _streaming
from ._textreader import (
    DEPTH_MAXIMUM as DEPTH_MAXIMUM,
    FORMATS as FORMATS,
    REGION_SIZE_MAXIMUM as REGION_SIZE_MAXIMUM,
    Invocations as Invocations,
    TextCallsReader as TextCallsReader,
    TextCallsRelease as TextCallsRelease,
    validate_format as validate_format,
)


_STREAM_POSITION = 1000 # apart from the positions of native calls


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class TextCallsReading:
    ''' Calls read from whole text, the text beside them, and the names of
        calls which the end of the text cut off (never read).
    '''

    text: str
    invocations: Invocations
    truncations: tuple[ str, ... ]


def read_text_calls(
    text: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Whole text of a model's message. ''' ) ],
    names: __.typx.Annotated[
        __.cabc.Iterable[ str ],
        __.ddoc.Doc( ''' Provider-facing names of the offered tools. ''' ),
    ],
    format: __.typx.Annotated[ # noqa: A002
        str,
        __.ddoc.Doc( ''' 'auto' or one of 'hermes', 'json', 'llama',
            'mistral', 'pythonic'. ''' ),
    ] = 'auto',
    position: __.typx.Annotated[
        int,
        __.ddoc.Doc( ''' Ordinal of the first call (for synthesized ids).
        ''' ),
    ] = 0,
    *,
    unknown: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Reads complete calls of tools not offered too
            (JSON objects of a call's keys only, and calls in tags), so
            that the model can be told they do not exist. ''' ),
    ] = False,
) -> TextCallsReading:
    ''' Returns tool calls written in text, the text beside them, and the
        names of calls cut off by the end of the text.
    '''
    reader = TextCallsReader( names, format, position, unknown = unknown )
    first = reader.feed( text )
    last = reader.conclude( )
    invocations = first.invocations + last.invocations
    return TextCallsReading(
        text = first.text + last.text,
        invocations = invocations[ reader.retractions : ],
        truncations = reader.truncations )


class TextCallsOption:
    ''' Opt-in reading of text calls by a processor.

        Holds the format (none: off) and the names of the tools which the
        processor prepared last (only calls naming them are read). A plain
        class: the names change when the processor prepares tools.
    '''

    __slots__ = ( 'format', 'names' )

    def __init__( self, format: str | None = None ) -> None: # noqa: A002
        self.format = None if format is None else validate_format( format )
        self.names: set[ str ] = set( )

    def is_enabled( self ) -> bool:
        ''' Returns whether text calls are read. '''
        return self.format is not None

    def record_names( self, names: __.cabc.Iterable[ str ] ) -> None:
        ''' Records names of the offered tools. '''
        self.names.clear( )
        self.names.update( names )

    def record_ensembles( self, ensembles: __.execution.Ensembles ) -> None:
        ''' Records provider-facing names of the tools of ensembles. '''
        if self.format is None: return
        self.record_names( __.naming.access_nomenclature( ensembles ).names )

    def read(
        self, text: object, position: int, *, truncated: bool
    ) -> Invocations:
        ''' Returns calls written in text of a whole response.

            Raises :py:class:`invocables.exceptions.InvocationTruncation`,
            naming them, for calls cut off when the response was truncated.
        '''
        if self.format is None or not isinstance( text, str ) or not text:
            return ( )
        reading = read_text_calls(
            text, self.names, self.format, position, unknown = True )
        if truncated and reading.truncations:
            raise __.exceptions.InvocationTruncation(
                reading.truncations,
                "the response stopped before the call written as text was "
                "complete." )
        return reading.invocations

    def produce_stream( self ) -> 'TextCallsStream | None':
        ''' Produces reader of one stream, if text calls are read. '''
        if self.format is None: return None
        return TextCallsStream( TextCallsReader(
            self.names, self.format, _STREAM_POSITION, unknown = True ) )

    def strip( self, text: str ) -> str:
        ''' Returns text of a whole response without the calls which
            ``read`` reads from it (the text a stream releases).
        '''
        if self.format is None or not text: return text
        return read_text_calls(
            text, self.names, self.format, unknown = True ).text


class TextCallsStream:
    ''' Text calls of one streamed response, inside an accumulator.

        Holds the calls it reads until the end of the response, so that a
        streamed response gives the calls which the same response gives
        whole: none, when the response was truncated (or the stream ended
        without its end) with a call cut off; else every complete call.
    '''

    __slots__ = ( 'concluded', 'held', 'reader', 'truncated' )

    def __init__( self, reader: TextCallsReader ) -> None:
        self.reader = reader
        self.concluded = False
        self.held: list[ __.canisters.InvocationCanister ] = [ ]
        self.truncated = False

    def feed( self, text: str, texts: list[ str ] ) -> Invocations:
        ''' Feeds text delta; appends released text to texts; holds the
            calls completed until the end (returns none).
        '''
        if self.concluded: return ( )
        release = self.reader.feed( text )
        if release.text: texts.append( release.text )
        self.held.extend( release.invocations )
        return ( )

    def conclude(
        self, texts: list[ str ], *, natives: bool = False
    ) -> Invocations:
        ''' Ends the text; appends released text; returns the calls held,
            unless the response was truncated with a call cut off (then
            ``validate`` raises), or carried native calls (``natives``: the
            server's own reading of calls wins; the text calls are dropped,
            their text too).
        '''
        if self.concluded: return ( )
        self.concluded = True
        release = self.reader.conclude( )
        if release.text: texts.append( release.text )
        held = ( *self.held, *release.invocations )[
            self.reader.retractions : ]
        self.held.clear( )
        if natives or ( self.truncated and self.reader.truncations ):
            return ( )
        return held

    def validate( self, reason: str, *, ended: bool ) -> None:
        ''' Raises invocation interruption for calls cut off, when the
            response was truncated or the stream ended without a stop.
        '''
        truncations = self.reader.truncations
        if truncations and ( self.truncated or not ended ):
            raise __.exceptions.InvocationInterruption( truncations, reason )


class TextCallsAccumulatorBase(
    _streaming.AccumulatorBase[ _natives.Assistant ]
):
    ''' Accumulator whose stream may write calls as text (option
        ``text_calls``): keeps the text deltas, reads the calls in them,
        and releases the text less those calls.
    '''

    __slots__ = ( '_calls', '_shown', '_texts' )

    def __init__( self, text_calls: TextCallsOption | None = None ) -> None:
        super( ).__init__( )
        self._calls = (
            None if text_calls is None else text_calls.produce_stream( ) )
        self._shown = 0
        self._texts: list[ str ] = [ ]

    def conclude_stream(
        self
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns calls written as text which the end completes; raises
            interruption for those cut off.
        '''
        if self._calls is None: return ( )
        ended = self._calls.concluded
        invocations = self.conclude_text( )
        self._calls.validate( self.reason, ended = ended )
        return invocations

    def conclude_text(
        self, natives: __.cabc.Sequence[ object ] = ( )
    ) -> Invocations:
        ''' Ends text calls; drops them if the response called natively.
        '''
        if self._calls is None: return ( )
        return self._calls.conclude( self._texts, natives = bool(
            natives or self.survey_invocations( ) ) )

    def feed_text( self, text: object ) -> Invocations:
        ''' Takes text delta of the stream: kept, or read for calls. '''
        if not isinstance( text, str ) or not text: return ( )
        if self._calls is None:
            self._texts.append( text )
            return ( )
        return self._calls.feed( text, self._texts )

    def release_text( self ) -> str:
        ''' Returns text released since the last call: the text of the
            stream, less the calls written in it (option ``text_calls``),
            which the reader holds back until it knows them.
        '''
        text = ''.join( self._texts[ self._shown : ] )
        self._shown = len( self._texts )
        return text
