# SPDX-License-Identifier: Apache-2.0

''' Common core of processors: protocols, base classes, decoding, streaming.

    Contract for a provider module (one small module per provider API):

    * A processor subclasses :py:class:`ProcessorBase`, sets ``provider``
      (the name used in errors), ``dialect`` (the schema dialect given to
      ``invocables.dialects``) and ``accumulator_class``, and implements
      ``produce_tool`` (one tool in native format), ``produce_invocations``
      (native message to canisters) and ``nativize_results``. Provider
      shapes are read with :py:func:`access_field` and
      :py:func:`access_items`, which accept plain dictionaries of the wire
      format and SDK typed objects alike; canisters are built with
      :py:func:`produce_invocation`, which decodes arguments and synthesizes
      missing identifiers; error bodies raise :py:func:`produce_failure`.
    * An accumulator subclasses :py:class:`AccumulatorBase` and implements
      ``ingest_event( event, label )`` with the building blocks
      ``commence_call``, ``extend_call``, ``complete_call`` and
      ``complete_calls``, which key calls by index (any hashable) and by
      tag (the provider's id of the call or item, when it sends one).
      Arguments arrive as text fragments (joined) or objects (merged);
      each call is emitted once, whatever optional fields are missing.
      Setting ``reason`` records why open calls may be cut off (for
      example, a stop reason of ``max_tokens``). Where natural, it also
      implements ``produce_message``, from ``survey_invocations``.
    * Payloads are recognized by their fields (:py:func:`validate_shape`):
      another provider's payload, or an event of no known shape, raises
      rather than giving no calls; unknown event *types* are ignored, since
      providers add new ones.
    * Any exception other than the package's own, raised while reading
      malformed input, becomes
      :py:class:`invocables.exceptions.ResponseInvalidity`.
'''


from . import __
from . import natives as _natives
from .. import dialects as _dialects


REASON_DEFAULT = "the stream ended before the call was complete."

_ANONYMOUS = '<unnamed>'
_KIND_MAPPING = 0
_KIND_OBJECT = 1
_KIND_VALUE = 2
_KINDS_VALUE = (
    str, bytes, bytearray, int, float, list, tuple, type( None ) )
_DIGEST_LENGTH = 16
_kinds: dict[ type, int ] = { dict: _KIND_MAPPING }
_scribe = __.produce_scribe( __name__ )

Ensembles: __.typx.TypeAlias = __.execution.Ensembles
Invocations: __.typx.TypeAlias = tuple[
    __.canisters.InvocationCanister, ... ]
NativeObject: __.typx.TypeAlias = _natives.NativeObject

_Product = __.typx.TypeVar( '_Product' )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class PartialInvocation:
    ''' Tool call still being streamed, offered for display only.

        Its arguments are incomplete text; it must never be run.
    '''

    identifier: __.Absential[ str ]
    name: str
    text: str


class InvocationsAccumulator( __.typx.Protocol ):
    ''' Accumulates streamed events into complete tool calls. '''

    def ingest(
        self, event: object, label: __.Absential[ str ] = __.absent
    ) -> Invocations:
        ''' Ingests one stream event; returns calls completed by it.

            The event is an SDK typed event or the decoded JSON of one
            server-sent event; the label is the SSE event name, for
            providers which need it.
        '''
        raise NotImplementedError  # pragma: no cover

    def conclude( self ) -> Invocations:
        ''' Returns remaining calls at end of stream.

            Raises :py:class:`invocables.exceptions.InvocationInterruption`,
            naming the tools, if calls are still incomplete.
        '''
        raise NotImplementedError  # pragma: no cover

    def survey_partials( self ) -> tuple[ PartialInvocation, ... ]:
        ''' Returns calls still being streamed, for display. '''
        raise NotImplementedError  # pragma: no cover

    def produce_message( self ) -> NativeObject:
        ''' Returns assistant message of the stream, for the next turn. '''
        raise NotImplementedError  # pragma: no cover


class InvocationsProcessor(
    __.typx.Protocol[ _natives.Tool, _natives.Message ]
):
    ''' Converts tools, calls and results for one provider API.

        Generic in the native tool and message of the provider (see
        :py:mod:`invocables.processors.natives`); unparameterized, both are
        ``Any``.
    '''

    @property
    def provider( self ) -> str:
        ''' Name of provider API. '''
        raise NotImplementedError  # pragma: no cover

    def prepare_tools(
        self, ensembles: Ensembles
    ) -> list[ _natives.Tool ]:
        ''' Returns tool definitions in native format. '''
        raise NotImplementedError  # pragma: no cover

    def normalize_invocations( self, native_message: object ) -> Invocations:
        ''' Returns tool calls of whole native response or message. '''
        raise NotImplementedError  # pragma: no cover

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.Message ]:
        ''' Returns native messages or items which carry results. '''
        raise NotImplementedError  # pragma: no cover

    async def execute_invocations(
        self,
        invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
        ensembles: Ensembles,
        **options: __.typx.Any,
    ) -> tuple[ __.canisters.ResultCanister, ... ]:
        ''' Executes invocations; returns one result per invocation. '''
        raise NotImplementedError  # pragma: no cover

    def produce_accumulator( self ) -> InvocationsAccumulator:
        ''' Produces accumulator for one streamed response. '''
        raise NotImplementedError  # pragma: no cover


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class StreamedInvocation:
    ''' Call which an accumulator emitted, with its arguments as sent.

        ``arguments`` is what the provider streamed for the call: the text
        of its arguments, or the object it sent (``None`` if nothing).
        Assistant messages echo it back as it was.
    '''

    invocation: __.canisters.InvocationCanister
    index: __.cabc.Hashable
    arguments: object


@__.dcls.dataclass( slots = True )
class _Slot:
    ''' Call being streamed (mutable on purpose: hot path). '''

    tag: str | None
    identifier: str | None
    name: str
    position: int
    fragments: list[ str ] = __.dcls.field( default_factory = list[ str ] )
    initial: object = None
    patch: dict[ str, __.typx.Any ] | None = None
    invalidity: str | None = None
    decoded: object = None  # JSON value of the one joined fragment


class AccumulatorBase:
    ''' Generic accumulator of streamed tool calls, keyed by index and tag.

        A call is opened by ``commence_call``, grows by ``extend_call`` and
        is emitted by ``complete_call``. Arguments arrive as text fragments,
        which are kept in a list, joined and parsed once at completion (cost
        is linear in the size of the stream), or as objects, which are
        merged key by key; a call which mixes both, or which gets another
        JSON value, is emitted with ``invalidity`` set, as is text which does
        not parse (JSON is never repaired).

        A new tag at a used index opens a new call; indexes need not start
        at 0 nor be contiguous; calls may interleave. Each call is emitted
        once: a repeated start or stop of a completed call is ignored, and a
        fragment for it, or a start which no tag tells from it, raises
        :py:class:`invocables.exceptions.ResponseInvalidity`. Calls still
        open at ``conclude( )`` are never emitted. An accumulator reads one
        stream: once concluded, it refuses further events.

        A plain class, not a frigid object: it changes with every event.
    '''

    __slots__ = (
        '_closed', '_concluded', '_count', '_emissions', '_identifiers',
        '_pending', '_slots', 'reason',
    )

    provider: __.typx.ClassVar[ str ] = 'unknown'

    def __init__( self ) -> None:
        self._slots: dict[ __.cabc.Hashable, _Slot ] = { }
        self._closed: dict[ __.cabc.Hashable, set[ str | None ] ] = { }
        self._emissions: list[ StreamedInvocation ] = [ ]
        self._identifiers: set[ str ] = set( )
        self._pending: dict[ int, StreamedInvocation ] = { }
        self._concluded = False
        self._count = 0
        self.reason = REASON_DEFAULT

    def ingest(
        self, event: object, label: __.Absential[ str ] = __.absent
    ) -> Invocations:
        ''' Ingests one stream event; returns calls completed by it.

            Raises :py:class:`invocables.exceptions.AccumulatorReuseInvalidity`
            once the accumulator is concluded.
        '''
        if self._concluded:
            raise __.exceptions.AccumulatorReuseInvalidity( self.provider )
        if self._pending: self._pending.clear( )
        try: invocations = tuple( self.ingest_event( event, label ) )
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _produce_invalidity(
                self.provider, exception ) from exception
        if invocations: self._record( invocations )
        return invocations

    def conclude( self ) -> Invocations:
        ''' Returns remaining complete calls; ends the stream.

            Raises :py:class:`invocables.exceptions.InvocationInterruption`,
            naming the tools, if calls are still open. Concluding again
            returns nothing; ingesting again raises.
        '''
        if self._concluded: return ( )
        self._concluded = True
        self._pending.clear( )
        try: invocations = tuple( self.conclude_stream( ) )
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _produce_invalidity(
                self.provider, exception ) from exception
        finally:
            slots = tuple( self._slots.values( ) )
            self._slots.clear( )
        if slots:
            raise __.exceptions.InvocationInterruption(
                [ slot.name or _ANONYMOUS for slot in slots ], self.reason )
        if invocations: self._record( invocations )
        return invocations

    def produce_message( self ) -> NativeObject:
        ''' Returns assistant message of the stream, to append to the
            conversation: its text and the calls emitted so far.

            Raises :py:class:`invocables.exceptions.ProviderNoSupport` for
            providers whose accumulator does not assemble messages.
        '''
        raise __.exceptions.ProviderNoSupport(
            self.provider, "its accumulator does not assemble messages." )

    def survey_invocations( self ) -> tuple[ StreamedInvocation, ... ]:
        ''' Returns calls emitted so far, in order, with their arguments as
            sent.
        '''
        return tuple( self._emissions )

    def survey_partials( self ) -> tuple[ PartialInvocation, ... ]:
        ''' Returns calls still being streamed, for display only. '''
        try:
            return tuple(
                PartialInvocation(
                    identifier = (
                        __.absent if slot.identifier is None
                        else slot.identifier ),
                    name = slot.name,
                    text = self.produce_partial_text( index ) )
                for index, slot in tuple( self._slots.items( ) ) )
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _produce_invalidity(
                self.provider, exception ) from exception

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Hook: maps one provider event onto the building blocks. '''
        raise NotImplementedError  # pragma: no cover

    def conclude_stream(
        self
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Hook: returns calls which the end of stream completes.

            By default the end of stream completes nothing: open calls are
            interrupted. The hook may raise; the stream is concluded anyway.
        '''
        return ( )

    def produce_partial_text( self, index: __.cabc.Hashable ) -> str:
        ''' Hook: returns arguments so far of open call, as text. '''
        slot = self._slots[ index ]
        text = ''.join( slot.fragments )
        if slot.patch is not None and ( not text or text.isspace( ) ):
            return _render_json( slot.patch )
        return text

    def commence_call(
        self,
        index: __.cabc.Hashable,
        tag: str | None,
        name: str | None,
        identifier: __.Absential[ str | None ] = __.absent,
        initial: object = None,
    ) -> Invocations:
        ''' Opens call at index, unless it continues the open one.

            The tag is the provider's id of the call (or of its item); the
            identifier is the id for the canister (default: the tag; none:
            synthesized at completion). A call at the same index with
            another tag, or without tags and with another name, is a new
            call: the open one is completed and returned. A tag already
            completed at this index is ignored (a repeated start); a start
            without tag at an index whose call is complete raises response
            invalidity, since nothing tells it from a repetition.
            ``initial`` holds arguments given whole at the start, used when
            no fragment follows.
        '''
        if self.is_repeated( index, tag ): return ( )
        slot = self._slots.get( index )
        emitted: Invocations = ( )
        if slot is not None:
            if not _is_new_call( slot, tag, name ):
                if slot.tag is None and tag is not None:
                    slot.tag = tag
                    if slot.identifier is None: slot.identifier = tag
                if name and not slot.name: slot.name = name
                return ( )
            emitted = self.complete_call( index )
        elif tag is None and index in self._closed:
            raise __.exceptions.ResponseInvalidity(
                self.provider,
                f"a call at index {index!r} started again after it was "
                "complete, with no id to tell it from a repetition." )
        identifier_ = tag if __.is_absent( identifier ) else identifier
        self._slots[ index ] = _Slot(
            tag = tag, identifier = identifier_ or None, name = name or '',
            position = self._count, initial = initial )
        self._count += 1
        return emitted

    def complete_call(
        self,
        index: __.cabc.Hashable,
        tag: str | None = None,
        arguments: object = __.absent,
    ) -> Invocations:
        ''' Completes open call at index; returns its canister, if any.

            ``arguments``, if given, replaces the streamed fragments (some
            providers repeat the whole arguments at completion). A stop for
            no open call (such as a repeated one) is ignored. An id of the
            provider names one call: a call with an id already emitted
            (repeated at another index) is not emitted again.
        '''
        slot = self._slots.get( index )
        if slot is None or _is_other_tag( slot, tag ): return ( )
        del self._slots[ index ]
        self._closed.setdefault( index, set( ) ).add( slot.tag )
        if slot.identifier is not None:
            if slot.identifier in self._identifiers:
                _report_repetition( self.provider, slot.identifier )
                return ( )
            self._identifiers.add( slot.identifier )
        invalidity: __.Absential[ str ] = __.absent
        decoded = arguments
        if __.is_absent( arguments ):
            arguments, invalidity = _resolve_arguments( slot )
            decoded = _access_decoded( slot, arguments )
        invocation = produce_invocation(
            slot.identifier, slot.name, decoded, slot.position,
            invalidity = invalidity )
        self._pending[ id( invocation ) ] = StreamedInvocation(
            invocation = invocation, index = index, arguments = arguments )
        return ( invocation, )

    def complete_calls(
        self,
        selector: __.Absential[
            __.cabc.Callable[ [ __.cabc.Hashable ], bool ] ] = __.absent,
        *,
        truncated: bool = False,
    ) -> Invocations:
        ''' Completes open calls (those whose index the selector accepts,
            if given), in order of opening.

            With ``truncated`` (the response was cut off), only calls whose
            arguments are whole are completed; the others stay open, to be
            reported as interrupted.
        '''
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        for index in tuple( self._slots ):
            if not __.is_absent( selector ) and not selector( index ):
                continue
            if truncated and not self.is_whole( index ): continue
            invocations.extend( self.complete_call( index ) )
        return tuple( invocations )

    def extend_call(
        self,
        index: __.cabc.Hashable,
        fragment: object,
        tag: str | None = None,
    ) -> None:
        ''' Adds argument fragment (text or object) to open call at index.

            Text is appended; an object is merged key by key; ``None`` adds
            nothing; any other value makes the arguments invalid. Fragments
            for no open call (such as those of server-executed tools) are
            ignored, unless they come after the call was complete: that
            raises response invalidity, since the emitted arguments were
            not those sent.
        '''
        slot = self._slots.get( index )
        if slot is None or _is_other_tag( slot, tag ):
            if slot is None and _is_substantial( fragment ) and (
                self.is_closed( index, tag )
            ):
                raise __.exceptions.ResponseInvalidity(
                    self.provider,
                    f"arguments for the call at index {index!r} came after "
                    "the call was complete." )
            return
        if isinstance( fragment, str ): slot.fragments.append( fragment )
        else: _merge_fragment( slot, fragment )

    def is_closed(
        self, index: __.cabc.Hashable, tag: str | None = None
    ) -> bool:
        ''' Returns whether a call at index (with tag, if known) was
            completed: a later event for it repeats or extends it.
        '''
        closed = self._closed.get( index )
        if not closed: return False
        return tag is None or None in closed or tag in closed

    def is_repeated( self, index: __.cabc.Hashable, tag: str | None ) -> bool:
        ''' Returns whether tag names a call completed at index: an event
            which starts it again repeats it.
        '''
        if tag is None: return False
        closed = self._closed.get( index )
        return closed is not None and tag in closed

    def is_open( self, index: __.cabc.Hashable ) -> bool:
        ''' Returns whether a call is open at index. '''
        return index in self._slots

    def is_whole( self, index: __.cabc.Hashable ) -> bool:
        ''' Returns whether arguments of open call at index are whole.

            Text is whole when it is JSON (of any kind); objects are whole;
            no arguments at all are not (the call may have been cut off
            right after its name).
        '''
        slot = self._slots[ index ]
        if slot.invalidity is not None: return True
        text = ''.join( slot.fragments )
        if not text or text.isspace( ):
            return slot.patch is not None or slot.initial is not None
        # Keep the joined text and its value: completion decodes once.
        slot.fragments = [ text ]
        try: slot.decoded = __.json.loads( text )
        except ( ValueError, RecursionError ): return False
        return True

    def _record( self, invocations: Invocations ) -> None:
        for invocation in invocations:
            emission = self._pending.pop( id( invocation ), None )
            if emission is None:
                emission = StreamedInvocation(
                    invocation = invocation, index = None,
                    arguments = invocation.arguments )
            self._emissions.append( emission )


class ProcessorBase(
    __.immut.Object, __.typx.Generic[ _natives.Tool, _natives.Message ]
):
    ''' Common behavior of processors: tools, execution, error handling.

        Generic in the native tool and message of the provider: a provider
        module names its SDK's parameter types (see
        :py:mod:`invocables.processors.natives`), so that type checkers see
        them in what ``prepare_tools`` and ``nativize_results`` return.
    '''

    provider: __.typx.ClassVar[ str ] = 'unknown'
    dialect: __.typx.ClassVar[ str ] = ''
    accumulator_class: __.typx.ClassVar[ type[ AccumulatorBase ] ]

    def prepare_tools(
        self, ensembles: Ensembles
    ) -> list[ _natives.Tool ]:
        ''' Returns tool definitions in native format.

            Provider-facing names come from the nomenclature of the
            ensembles. A tool whose schema the provider cannot take is left
            out, with a warning, rather than failing the whole request.
        '''
        return produce_tools( ensembles, self.prepare_tool )

    def prepare_tool(
        self, name: str, description: str, schema: __.Schema
    ) -> _natives.Tool | None:
        ''' Returns one tool in native format, or ``None`` if refused. '''
        schema_ = adapt_schema( self.provider, name, schema, self.dialect )
        if schema_ is None: return None
        return self.produce_tool( name, description, schema_ )

    def produce_tool(
        self, name: str, description: str, schema: NativeObject
    ) -> _natives.Tool:
        ''' Hook: returns one tool in native format. '''
        raise NotImplementedError  # pragma: no cover

    def normalize_invocations( self, native_message: object ) -> Invocations:
        ''' Returns tool calls of whole native response or message.

            Accepts SDK typed objects and plain dictionaries alike. Error
            bodies raise :py:class:`invocables.exceptions.ProviderFailure`;
            malformed input raises
            :py:class:`invocables.exceptions.ResponseInvalidity`.
        '''
        if native_message is None or isinstance(
            native_message, ( str, bytes, int, float )
        ):
            raise __.exceptions.ResponseInvalidity(
                self.provider, "the response is not a JSON object." )
        try: invocations = tuple( self.produce_invocations( native_message ) )
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _produce_invalidity(
                self.provider, exception ) from exception
        return _deduplicate_invocations( self.provider, invocations )

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Hook: returns tool calls of native message. '''
        raise NotImplementedError  # pragma: no cover

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.Message ]:
        ''' Returns native messages or items which carry results. '''
        raise NotImplementedError  # pragma: no cover

    async def execute_invocations(
        self,
        invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
        ensembles: Ensembles,
        **options: __.typx.Any,
    ) -> tuple[ __.canisters.ResultCanister, ... ]:
        ''' Executes invocations with the engine; one result each, in order.

            Options go to :py:func:`invocables.execution.execute_invocations`
            (``auxdata``, ``namespace``, ``timeout``, ``concurrency``,
            ``failure_policy``, ``alerter``). Results carry whether the id
            of their invocation was synthesized.
        '''
        invocations = tuple( invocations )
        results = await __.execution.execute_invocations(
            invocations, ensembles, **options )
        return tuple(
            __.dcls.replace( result, invocation_id_synthesized = True )
            if invocation.identifier_synthesized
            and not result.invocation_id_synthesized else result
            for invocation, result in zip(
                invocations, results, strict = True ) )

    def produce_accumulator( self ) -> AccumulatorBase:
        ''' Produces accumulator for one streamed response. '''
        return self.accumulator_class( )


def access_field(
    value: object, name: str, default: __.typx.Any = None
) -> __.typx.Any:
    ''' Returns field of JSON object or attribute of SDK typed object.

        Other JSON values (arrays, strings, numbers) have no fields. Hot
        path: the kind of each type is classified once.
    '''
    genus = type( value )
    kind = _kinds.get( genus )
    if kind is None: kind = _classify_kind( genus )
    if kind == _KIND_MAPPING:
        return __.typx.cast(
            __.cabc.Mapping[ str, __.typx.Any ], value ).get( name, default )
    if kind == _KIND_OBJECT: return getattr( value, name, default )
    return default


def access_index(
    value: object, provider: str, where: str, name: str = 'index'
) -> int:
    ''' Returns integer index field of event.

        Raises :py:class:`invocables.exceptions.ResponseInvalidity` when it
        is missing or not an integer: without it, the event cannot be told
        apart from those of other calls.
    '''
    index = access_field( value, name )
    if isinstance( index, int ) and not isinstance( index, bool ):
        return index
    raise __.exceptions.ResponseInvalidity(
        provider, f"{where} has no integer {name!r}." )


def access_items(
    value: object, provider: str, where: str
) -> __.cabc.Sequence[ __.typx.Any ]:
    ''' Returns list of JSON array; none for null or text.

        Raises :py:class:`invocables.exceptions.ResponseInvalidity` for
        other values.
    '''
    if value is None or isinstance( value, str ): return ( )
    if isinstance( value, ( list, tuple ) ):
        return __.typx.cast( __.cabc.Sequence[ __.typx.Any ], value )
    raise __.exceptions.ResponseInvalidity(
        provider, f"{where} is not an array." )


def access_text( value: object, provider: str, where: str ) -> str:
    ''' Returns text of JSON string; empty for null.

        Raises :py:class:`invocables.exceptions.ResponseInvalidity` for
        other values.
    '''
    if value is None: return ''
    if isinstance( value, str ): return value
    raise __.exceptions.ResponseInvalidity(
        provider, f"{where} is not a string." )


def adapt_schema(
    provider: str, name: str, schema: __.Schema, dialect: str
) -> NativeObject | None:
    ''' Returns schema in dialect of provider; ``None`` to leave tool out.

        The one place where processors reach schema dialects: a tool whose
        schema the dialect cannot express is left out alone, with a
        :py:class:`invocables.exceptions.ToolExclusionWarning`, so that one
        bad schema never fails a whole request. Without a dialect, a plain
        copy passes through. ``provider`` names the caller in logs.
    '''
    if not dialect: return __.schemata.thaw_json( schema )
    return _dialects.adapt_tool_schema( name, schema, dialect )


def decode_arguments(
    value: object
) -> tuple[ dict[ str, __.typx.Any ], __.Absential[ str ] ]:
    ''' Returns arguments decoded from text or object, with invalidity.

        Text is parsed as JSON; empty text, ``null`` and absence give an
        empty object; an object is taken as it is. Text which is not JSON,
        or JSON which is not an object, gives an empty object and the
        reason; the engine then sends an error result to the model. JSON
        is never repaired.
    '''
    if value is None or __.is_absent( value ): return { }, __.absent
    if isinstance( value, dict ):
        return __.typx.cast( dict[ str, __.typx.Any ], value ), __.absent
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value )
        return dict( mapping ), __.absent
    if isinstance( value, ( bytes, bytearray ) ):
        value = bytes( value ).decode( 'utf-8', errors = 'replace' )
    if not isinstance( value, str ): return { }, _describe_genus( value )
    if not value or value.isspace( ): return { }, __.absent
    return _decode_text( value )


def encode_base64( data: bytes ) -> str:
    ''' Returns base64 text of bytes, as providers take images. '''
    import base64
    return base64.b64encode( data ).decode( 'ascii' )


def is_complete_arguments( value: object ) -> bool:
    ''' Returns whether arguments are whole, as a cut-off call's are not.

        Text is whole when it is JSON (of any kind), since text cut off
        before its end does not parse; empty text is not whole (the call
        may have been cut off right after its name); objects are whole.
    '''
    if value is None or __.is_absent( value ): return False
    if isinstance( value, ( bytes, bytearray ) ):
        value = bytes( value ).decode( 'utf-8', errors = 'replace' )
    if not isinstance( value, str ): return True
    if not value or value.isspace( ): return False
    try: __.json.loads( value )
    except ( ValueError, RecursionError ): return False
    return True


def is_field_present( value: object, name: str ) -> bool:
    ''' Returns whether JSON object has key, or SDK object attribute. '''
    genus = type( value )
    kind = _kinds.get( genus )
    if kind is None: kind = _classify_kind( genus )
    if kind == _KIND_MAPPING:
        return name in __.typx.cast( __.cabc.Mapping[ str, object ], value )
    if kind == _KIND_OBJECT: return hasattr( value, name )
    return False


def nativize_object( value: object, *, aliases: bool = False ) -> object:
    ''' Returns plain JSON value of SDK typed object, mapping or list.

        Mappings and lists are copied (one level deep, so that they may be
        extended); typed objects are dumped without their ``None`` fields,
        with wire names if ``aliases``. Other values pass unchanged.
    '''
    if isinstance( value, __.cabc.Mapping ):
        return dict( __.typx.cast( __.cabc.Mapping[ str, object ], value ) )
    if isinstance( value, ( list, tuple ) ):
        return list( __.typx.cast( __.cabc.Sequence[ object ], value ) )
    if isinstance( value, _KINDS_VALUE ): return __.typx.cast( object, value )
    dump = getattr( value, 'model_dump', None )
    if callable( dump ):
        return dump( mode = 'json', exclude_none = True, by_alias = aliases )
    return value


def produce_failure(
    provider: str,
    error: object,
    status: __.Absential[ int ] = __.absent,
) -> __.exceptions.ProviderFailure:
    ''' Produces provider failure from error object of response or event.

        Reads ``type`` (else ``code``) and ``message``; a text error is the
        message itself.
    '''
    if isinstance( error, str ):
        return __.exceptions.ProviderFailure(
            provider, status, __.absent, error )
    genus = access_field( error, 'type' )
    if not isinstance( genus, str ) or not genus:
        genus = access_field( error, 'code' )
    message = access_field( error, 'message' )
    if not isinstance( message, str ) or not message:
        message = _render_json( error )
    code = access_field( error, 'status', access_field( error, 'code' ) )
    if __.is_absent( status ) and isinstance( code, int ) and not (
        isinstance( code, bool )
    ): status = code
    return __.exceptions.ProviderFailure(
        provider, status,
        genus if isinstance( genus, str ) and genus else __.absent,
        message )


def produce_function_tool(
    name: str,
    description: str,
    schema: NativeObject,
    *,
    strict: bool = False,
) -> _natives.FunctionTool:
    ''' Returns ``{ type: 'function', function: { name, ... } }``.

        The tool shape of OpenAI Chat Completions, which Cohere and Ollama
        share.
    '''
    function: _natives.FunctionSpecification = (
        { 'name': name, 'description': description, 'parameters': schema }
        if description else { 'name': name, 'parameters': schema } )
    if strict: function[ 'strict' ] = True
    return { 'type': 'function', 'function': function }


def produce_invocation(
    identifier: object,
    name: str,
    arguments: object,
    position: int,
    invalidity: __.Absential[ str ] = __.absent,
) -> __.canisters.InvocationCanister:
    ''' Produces canister, decoding arguments and synthesizing missing id.

        ``position`` is the ordinal of the call in its response or stream.
        An ``invalidity`` given says why the arguments cannot be read: they
        are then not decoded, and the canister carries the reason.
    '''
    if __.is_absent( invalidity ):
        arguments_, invalidity = decode_arguments( arguments )
    else: arguments_ = { }
    synthesized = not isinstance( identifier, str ) or not identifier
    if not isinstance( identifier, str ) or not identifier:
        identifier = synthesize_identifier(
            position, name, arguments_ if __.is_absent( invalidity )
            else arguments )
    return __.canisters.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments_,
        invalidity = invalidity, identifier_synthesized = synthesized )


def render_arguments( arguments: object ) -> str:
    ''' Returns arguments as sent, as JSON text for an assistant message.

        Text is kept as it came; objects are encoded; no arguments give
        ``{}``.
    '''
    if isinstance( arguments, str ) and arguments and not arguments.isspace( ):
        return arguments
    if arguments is None or isinstance( arguments, str ): return '{}'
    try:
        return __.json.dumps(
            arguments, ensure_ascii = False, default = repr )
    except ( TypeError, ValueError, RecursionError ): return '{}'


def produce_tools(
    ensembles: Ensembles,
    producer: __.cabc.Callable[ [ str, str, __.Schema ], _Product | None ],
) -> list[ _Product ]:
    ''' Returns what producer makes of each tool of ensembles, in order.

        The producer takes the provider-facing name, the description and
        the schema of a tool, and returns ``None`` to leave it out.
    '''
    nomenclature = __.naming.access_nomenclature( ensembles )
    products: list[ _Product ] = [ ]
    for designation in nomenclature.designations:
        invoker = designation.invoker
        product = producer(
            designation.name, invoker.description, invoker.argschema )
        if product is not None: products.append( product )
    return products


def synthesize_identifier(
    position: int, name: str, arguments: object
) -> str:
    ''' Returns deterministic id for call which came without one.

        Derived from the position of the call, its name and a hash of its
        arguments: distinct within a response, stable across runs.
    '''
    hasher = __.hashlib.sha256( )
    hasher.update( f"{position}\x00{name}\x00".encode( ) )
    hasher.update( _render_json( arguments ).encode( errors = 'replace' ) )
    digest = hasher.hexdigest( )[ : _DIGEST_LENGTH ]
    return f"call_{position}_{digest}"


def validate_options(
    provider: str,
    options: __.cabc.Mapping[ str, __.typx.Any ],
    known: __.cabc.Collection[ str ],
) -> None:
    ''' Raises configuration invalidity if options has unknown names. '''
    unknown = sorted( set( options ) - set( known ) )
    if not unknown: return
    raise __.exceptions.ConfigurationInvalidity(
        f"processor {provider!r}",
        "unknown options {names}; known options are {known}.".format(
            names = ', '.join( unknown ),
            known = ', '.join( sorted( known ) ) or 'none' ) )


def validate_shape(
    provider: str,
    value: object,
    fields: __.cabc.Sequence[ str ],
    what: str,
) -> object:
    ''' Returns value if it has one of the fields; raises otherwise.

        Recognizes the shape of a provider's response or event, so that
        another provider's payload (or an empty one) raises
        :py:class:`invocables.exceptions.ResponseInvalidity` rather than
        giving no calls, as if the model had finished. ``what`` names the
        expected shape.
    '''
    if any( is_field_present( value, name ) for name in fields ):
        return value
    if isinstance( value, __.cabc.Mapping ):
        keys = ', '.join( sorted(
            str( key ) for key in __.typx.cast(
                __.cabc.Mapping[ object, object ], value ) )[ : 8 ] )
        found = f"fields {keys}" if keys else "no fields"
    else: found = f"a {type( value ).__name__}"
    raise __.exceptions.ResponseInvalidity(
        provider,
        "expected {what}, with one of the fields {fields}; got {found} "
        "(the payload of another provider?).".format(
            what = what, fields = ', '.join( fields ), found = found ) )


def validate_whole_calls(
    provider: str,
    calls: __.cabc.Iterable[ tuple[ str, object ] ],
    stop: object,
) -> None:
    ''' Raises truncation naming calls (name, arguments) cut off by stop.

        For whole responses which stopped for a reason which may cut calls
        off (such as ``length``): a call is cut off when its arguments are
        not whole (see :py:func:`is_complete_arguments`). Raises
        :py:class:`invocables.exceptions.InvocationTruncation` naming only
        those calls; returns if none was cut off.
    '''
    names = [
        name for name, arguments in calls
        if not is_complete_arguments( arguments ) ]
    if names:
        raise __.exceptions.InvocationTruncation(
            names, f"the response stopped for reason {stop!r}." )


def _access_decoded( slot: _Slot, arguments: object ) -> object:
    ''' Returns object decoded by ``is_whole`` from arguments, if it still
        holds: the text is the one fragment it joined, and is an object.
    '''
    decoded = slot.decoded
    if isinstance( decoded, dict ) and len( slot.fragments ) == 1 and (
        slot.fragments[ 0 ] is arguments and slot.patch is None
    ): return __.typx.cast( dict[ str, __.typx.Any ], decoded )
    return arguments


def _deduplicate_invocations(
    provider: str, invocations: Invocations
) -> Invocations:
    ''' Returns invocations without repetitions of an id (an id of the
        provider names one call), as streams give them.
    '''
    identifiers = { invocation.identifier for invocation in invocations }
    if len( identifiers ) == len( invocations ): return invocations
    seen: set[ str ] = set( )
    unique: list[ __.canisters.InvocationCanister ] = [ ]
    for invocation in invocations:
        if invocation.identifier in seen:
            _report_repetition( provider, invocation.identifier )
            continue
        seen.add( invocation.identifier )
        unique.append( invocation )
    return tuple( unique )


def _classify_kind( genus: type ) -> int:
    if issubclass( genus, __.cabc.Mapping ): kind = _KIND_MAPPING
    elif issubclass( genus, _KINDS_VALUE ): kind = _KIND_VALUE
    else: kind = _KIND_OBJECT
    _kinds[ genus ] = kind
    return kind


def _decode_text(
    text: str
) -> tuple[ dict[ str, __.typx.Any ], __.Absential[ str ] ]:
    try: decoded = __.json.loads( text )
    except ValueError as exception:
        return { }, _describe_decoding( exception )
    except RecursionError:
        return { }, "arguments are nested too deeply"
    if decoded is None: return { }, __.absent
    if isinstance( decoded, dict ):
        return __.typx.cast( dict[ str, __.typx.Any ], decoded ), __.absent
    return { }, _describe_genus( decoded )


def _describe_decoding( exception: ValueError ) -> str:
    if isinstance( exception, __.json.JSONDecodeError ):
        return (
            "arguments are not valid JSON: {message} at position "
            "{position}".format(
                message = exception.msg, position = exception.pos ) )
    return f"arguments are not valid JSON: {exception}"


def _describe_genus( value: object ) -> str:
    return "arguments are a JSON {genus}, not an object".format(
        genus = _name_json_genus( value ) )


def _is_new_call( slot: _Slot, tag: str | None, name: str | None ) -> bool:
    if tag is None:
        return bool( name ) and bool( slot.name ) and name != slot.name
    return slot.tag is not None and slot.tag != tag


def _is_other_tag( slot: _Slot, tag: str | None ) -> bool:
    return tag is not None and slot.tag is not None and slot.tag != tag


def _is_substantial( fragment: object ) -> bool:
    ''' Returns whether fragment carries arguments (not empty, not null).
    '''
    if fragment is None: return False
    if isinstance( fragment, str ): return bool( fragment )
    return True


def _merge_fragment( slot: _Slot, fragment: object ) -> None:
    ''' Merges object fragment into slot; marks other values invalid. '''
    if fragment is None: return
    if isinstance( fragment, __.cabc.Mapping ):
        if slot.patch is None: slot.patch = { }
        slot.patch.update(
            __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], fragment ) )
        return
    if isinstance( fragment, ( bytes, bytearray ) ):
        slot.fragments.append(
            bytes( fragment ).decode( 'utf-8', errors = 'replace' ) )
        return
    if slot.invalidity is None: slot.invalidity = _describe_genus( fragment )


def _name_json_genus( value: object ) -> str:
    match value:
        case bool( ): return 'boolean'
        case int( ) | float( ): return 'number'
        case str( ): return 'string'
        case list( ) | tuple( ): return 'array'
        case _: return type( value ).__name__


def _produce_invalidity(
    provider: str, exception: Exception
) -> __.exceptions.ResponseInvalidity:
    return __.exceptions.ResponseInvalidity(
        provider, "{kind}: {message}".format(
            kind = type( exception ).__name__, message = exception ) )


def _render_json( value: object ) -> str:
    ''' Renders value as canonical JSON; falls back to its repr. '''
    if isinstance( value, str ): return value
    try:
        return __.json.dumps(
            value, sort_keys = True, ensure_ascii = False, default = repr )
    except ( TypeError, ValueError, RecursionError ): return repr( value )


def _report_repetition( provider: str, identifier: str ) -> None:
    _scribe.warning(
        "Provider {provider!r} gave call id {identifier!r} to more than one "
        "call; only the first is run.".format(
            provider = provider, identifier = identifier ) )


def _resolve_arguments(
    slot: _Slot
) -> tuple[ object, __.Absential[ str ] ]:
    ''' Returns arguments of completed slot as sent, with invalidity.

        Text fragments are joined; object fragments were merged; both
        together cannot be read. Without either, the initial arguments.
    '''
    text = ''.join( slot.fragments )
    blank = not text or text.isspace( )
    if slot.invalidity is not None:
        return ( slot.patch if blank else text ), slot.invalidity
    if slot.patch is not None:
        if blank: return slot.patch, __.absent
        return text, "arguments came both as JSON text and as an object"
    if not blank: return text, __.absent
    return slot.initial, __.absent
