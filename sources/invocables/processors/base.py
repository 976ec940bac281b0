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
      Setting ``reason`` records why open calls may be cut off (for
      example, a stop reason of ``max_tokens``).
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


@__.dcls.dataclass( slots = True )
class _Slot:
    ''' Call being streamed (mutable on purpose: hot path). '''

    tag: str | None
    identifier: str | None
    name: str
    position: int
    fragments: list[ str ] = __.dcls.field( default_factory = list[ str ] )
    initial: object = None


class AccumulatorBase:
    ''' Generic accumulator of streamed tool calls, keyed by index and tag.

        A call is opened by ``commence_call``, grows by ``extend_call``
        (argument fragments are kept in a list, joined and parsed once at
        completion, so cost is linear in the size of the stream) and is
        emitted by ``complete_call``. A new tag at a used index opens a new
        call; indexes need not start at 0 nor be contiguous; calls may
        interleave. JSON is never repaired: arguments which do not parse
        give a canister with ``invalidity`` set. Calls still open at
        ``conclude( )`` are never emitted.

        A plain class, not a frigid object: it changes with every event.
    '''

    __slots__ = ( '_completed', '_count', '_slots', 'reason' )

    provider: __.typx.ClassVar[ str ] = 'unknown'

    def __init__( self ) -> None:
        self._slots: dict[ __.cabc.Hashable, _Slot ] = { }
        self._completed: set[ tuple[ __.cabc.Hashable, str ] ] = set( )
        self._count = 0
        self.reason = REASON_DEFAULT

    def ingest(
        self, event: object, label: __.Absential[ str ] = __.absent
    ) -> Invocations:
        ''' Ingests one stream event; returns calls completed by it. '''
        try: return tuple( self.ingest_event( event, label ) )
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _produce_invalidity(
                self.provider, exception ) from exception

    def conclude( self ) -> Invocations:
        ''' Returns remaining complete calls; resets accumulator.

            Raises :py:class:`invocables.exceptions.InvocationInterruption`,
            naming the tools, if calls are still open.
        '''
        try:
            invocations = tuple( self.conclude_stream( ) )
            slots = tuple( self._slots.values( ) )
            reason = self.reason
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _produce_invalidity(
                self.provider, exception ) from exception
        finally:
            self._slots.clear( )
            self._completed.clear( )
            self.reason = REASON_DEFAULT
        if slots:
            raise __.exceptions.InvocationInterruption(
                [ slot.name or _ANONYMOUS for slot in slots ], reason )
        return invocations

    def survey_partials( self ) -> tuple[ PartialInvocation, ... ]:
        ''' Returns calls still being streamed, for display only. '''
        return tuple(
            PartialInvocation(
                identifier = (
                    __.absent if slot.identifier is None
                    else slot.identifier ),
                name = slot.name, text = ''.join( slot.fragments ) )
            for slot in self._slots.values( ) )

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
            interrupted. The hook may raise; the accumulator is reset
            anyway.
        '''
        return ( )

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
            completed at this index is ignored. ``initial`` holds arguments
            given whole at the start, used when no fragment follows.
        '''
        if tag is not None and ( index, tag ) in self._completed: return ( )
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
            providers repeat the whole arguments at completion).
        '''
        slot = self._slots.get( index )
        if slot is None or _is_other_tag( slot, tag ): return ( )
        del self._slots[ index ]
        if slot.tag is not None: self._completed.add( ( index, slot.tag ) )
        if __.is_absent( arguments ):
            text = ''.join( slot.fragments )
            arguments = (
                slot.initial if slot.initial is not None
                and ( not text or text.isspace( ) ) else text )
        return ( produce_invocation(
            slot.identifier, slot.name, arguments, slot.position ), )

    def complete_calls(
        self,
        selector: __.Absential[
            __.cabc.Callable[ [ __.cabc.Hashable ], bool ] ] = __.absent,
    ) -> Invocations:
        ''' Completes open calls (those whose index the selector accepts,
            if given), in order of opening.
        '''
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        for index in tuple( self._slots ):
            if __.is_absent( selector ) or selector( index ):
                invocations.extend( self.complete_call( index ) )
        return tuple( invocations )

    def extend_call(
        self,
        index: __.cabc.Hashable,
        fragment: object,
        tag: str | None = None,
    ) -> None:
        ''' Appends argument fragment to open call at index.

            Fragments for no open call (such as those of server-executed
            tools) are ignored.
        '''
        slot = self._slots.get( index )
        if slot is None or _is_other_tag( slot, tag ): return
        if not isinstance( fragment, str ):
            raise __.exceptions.ResponseInvalidity(
                self.provider, "argument fragment is not text." )
        slot.fragments.append( fragment )

    def is_open( self, index: __.cabc.Hashable ) -> bool:
        ''' Returns whether a call is open at index. '''
        return index in self._slots


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
        try: return tuple( self.produce_invocations( native_message ) )
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _produce_invalidity(
                self.provider, exception ) from exception

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
            ``failure_policy``, ``alerter``).
        '''
        return await __.execution.execute_invocations(
            invocations, ensembles, **options )

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


def encode_base64( data: bytes ) -> str:
    ''' Returns base64 text of bytes, as providers take images. '''
    import base64
    return base64.b64encode( data ).decode( 'ascii' )


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


def produce_invocation(
    identifier: object, name: str, arguments: object, position: int
) -> __.canisters.InvocationCanister:
    ''' Produces canister, decoding arguments and synthesizing missing id.

        ``position`` is the ordinal of the call in its response or stream.
    '''
    arguments_, invalidity = decode_arguments( arguments )
    if not isinstance( identifier, str ) or not identifier:
        identifier = synthesize_identifier(
            position, name, arguments_ if __.is_absent( invalidity )
            else arguments )
    return __.canisters.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments_,
        invalidity = invalidity )


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
