# SPDX-License-Identifier: Apache-2.0

''' Accumulator of streamed tool calls, keyed by call index and id.

    An accumulator of a provider subclasses :py:class:`AccumulatorBase` and
    implements ``ingest_event( event, label )`` with the building blocks
    ``commence_call``, ``extend_call``, ``complete_call`` and
    ``complete_calls``, which key calls by index (any hashable) and by tag
    (the provider's id of the call or item, when it sends one). Arguments
    arrive as text fragments (joined) or objects (merged); each call is
    emitted once, whatever optional fields are missing.
    ``record_truncation( stop )`` sets ``reason``, why open calls are cut
    off (for example, a stop reason of ``max_tokens``); ``finish( )``
    notes the final event of the stream, after which a call raises. It
    also implements ``produce_message``, from ``survey_invocations``: the
    assistant message of the stream, which the conversation loops append;
    it hands the text deltas it reads to ``record_text`` (the loops show
    what ``release_text`` returns), and sets ``stop``, the provider's stop
    reason where a loop needs it (such as Anthropic's ``pause_turn``), and
    ``conclusion``, the whole response which ends the stream, if the
    provider sends one. Unknown event *types* are ignored, since providers
    add new ones; any exception other than the package's own, raised
    while reading malformed input, becomes
    :py:class:`invocables.exceptions.ResponseInvalidity`.
'''


import invocables.processors.__ as __
import invocables.processors._textscans as _textscans
import invocables.processors.natives as _natives
import invocables.processors._wire as _wire


REASON_DEFAULT = "the stream ended before the call was complete."

_ANONYMOUS = '<unnamed>'

Invocations: __.typx.TypeAlias = _wire.Invocations
NativeObject: __.typx.TypeAlias = _wire.NativeObject


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class PartialInvocation:
    ''' Tool call still being streamed, offered for display only.

        Its arguments are incomplete text; it must never be run.
    '''

    identifier: __.Absential[ str ]
    name: str
    text: str


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


class AccumulatorBase( __.typx.Generic[ _natives.Assistant ] ):
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
        stream: once concluded, it refuses further events; once its
        provider's final event is read (``finish``), a new call raises
        :py:class:`invocables.exceptions.ResponseInvalidity`.

        A plain class, not a frigid object: it changes with every event.
        Generic in the native assistant message of the provider, which
        ``produce_message`` returns (see
        :py:mod:`invocables.processors.natives`).
    '''

    __slots__ = (
        '_closed', '_concluded', '_count', '_emissions', '_final',
        '_identifiers', '_pending', '_released', '_slots', 'conclusion',
        'reason', 'stop',
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
        self._final = False
        self._released: list[ str ] = [ ]
        self.conclusion: object = None
        self.reason = REASON_DEFAULT
        self.stop: object = None

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
            raise _wire.produce_invalidity(
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
            raise _wire.produce_invalidity(
                self.provider, exception ) from exception
        finally:
            slots = tuple( self._slots.values( ) )
            self._slots.clear( )
        if slots:
            raise __.exceptions.InvocationInterruption(
                [ slot.name or _ANONYMOUS for slot in slots ], self.reason )
        if invocations: self._record( invocations )
        return invocations

    def produce_message( self ) -> _natives.Assistant:
        ''' Returns assistant message of the stream, to append to the
            conversation: its text and the calls emitted so far.

            Raises :py:class:`invocables.exceptions.ProviderNoSupport` for
            providers whose accumulator does not assemble messages.
        '''
        raise __.exceptions.ProviderNoSupport(
            self.provider, "its accumulator does not assemble messages." )

    def record_text( self, text: object ) -> None:
        ''' Records text delta of the stream, for ``release_text``. '''
        if isinstance( text, str ) and text: self._released.append( text )

    def record_truncation( self, stop: object ) -> None:
        ''' Records stop reason of the stream which cuts the response off
            (such as ``max_tokens``), as the reason of calls left open.
        '''
        self.reason = f"the response stopped for reason {stop!r}."

    def release_text( self ) -> str:
        ''' Returns text of the stream released since the last call. '''
        text = ''.join( self._released )
        self._released.clear( )
        return text

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
            raise _wire.produce_invalidity(
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
            return _wire.render_json( slot.patch )
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
            call: the open one is completed and returned, if its arguments
            are whole or none came (a call without arguments, as servers
            which reuse one index for each call send it); else response
            invalidity (the two interleave, and the arguments of neither
            are known). A tag already
            completed at this index is ignored (a repeated start); a start
            without tag at an index whose call is complete raises response
            invalidity, since nothing tells it from a repetition.
            ``initial`` holds arguments given whole at the start, used when
            no fragment follows.
        '''
        if self.is_repeated( index, tag ): return ( )
        slot = self._slots.get( index )
        if slot is None and self._final:
            self.validate_unfinished(
                "a call {name!r} (at index {index!r})".format(
                    name = name or _ANONYMOUS, index = index ) )
        emitted: Invocations = ( )
        if slot is not None:
            if not _is_new_call( slot, tag, name ):
                if slot.tag is None and tag is not None:
                    slot.tag = tag
                    if slot.identifier is None: slot.identifier = tag
                if name and not slot.name: slot.name = name
                return ( )
            begun = slot.patch is not None or any(
                fragment.strip( ) for fragment in slot.fragments )
            if begun and not self.is_whole( index ):
                raise __.exceptions.ResponseInvalidity(
                    self.provider,
                    f"a call at index {index!r} started before the call "
                    "open there had whole arguments." )
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
                _wire.report_repetition( self.provider, slot.identifier )
                return ( )
            self._identifiers.add( slot.identifier )
        invalidity: __.Absential[ str ] = __.absent
        decoded = arguments
        if __.is_absent( arguments ):
            arguments, invalidity = _resolve_arguments( slot )
            decoded = _access_decoded( slot, arguments )
        invocation = _wire.produce_invocation(
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
        if slot is None or ( tag is not None and _is_other_tag( slot, tag ) ):
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

    def finish( self ) -> None:
        ''' Notes the final event of the stream (such as a stop reason, or
            the end of the message): nothing may follow but metadata, and
            a call which starts after it raises response invalidity, since
            the stream said the model had finished.
        '''
        self._final = True

    def validate_unfinished( self, event: str ) -> None:
        ''' Raises response invalidity if the final event of the stream
            was read (``finish``): the event named (such as "a function
            call") contradicts it. The one owner of that check: a
            provider whose calls are more than starts (continuations,
            closes) names them here too.
        '''
        if self._final:
            raise __.exceptions.ResponseInvalidity(
                self.provider,
                f"{event} came after the final event of the stream." )

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
            no arguments at all, or empty initial text, are not (the call
            may have been cut off right after its name).
        '''
        slot = self._slots[ index ]
        if slot.invalidity is not None: return True
        text = ''.join( slot.fragments )
        if not text or text.isspace( ):
            return slot.patch is not None or _wire.is_complete_arguments(
                slot.initial )
        # Keep the joined text and its value: completion decodes once.
        slot.fragments = [ text ]
        # Strictly: whole JSON which is refused is decoded again, with
        # its reason, when the call completes.
        try: slot.decoded = _textscans.load_json( text, repetitions = False )
        except _textscans.RefusalError: slot.decoded = None
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


def produce_function_calls(
    emissions: __.cabc.Iterable[ StreamedInvocation ]
) -> list[ _natives.CohereToolCall ]:
    ''' Returns calls emitted as the tool calls of an assistant message of
        Chat Completions (which Cohere shares): ``{ id, type: 'function',
        function: { name, arguments } }``, each with the id of its canister
        and its arguments as sent.
    '''
    return [
        {
            'id': emission.invocation.identifier,
            'type': 'function',
            'function': {
                'name': emission.invocation.name,
                'arguments': _wire.render_arguments( emission.arguments ),
            },
        }
        for emission in emissions ]


def _access_decoded( slot: _Slot, arguments: object ) -> object:
    ''' Returns object decoded by ``is_whole`` from arguments, if it still
        holds: the text is the one fragment it joined, and is an object.
    '''
    decoded = slot.decoded
    if isinstance( decoded, dict ) and len( slot.fragments ) == 1 and (
        slot.fragments[ 0 ] is arguments and slot.patch is None
    ): return __.typx.cast( dict[ str, __.typx.Any ], decoded )
    return arguments


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
    if slot.invalidity is None:
        slot.invalidity = _wire.describe_genus( fragment )


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
