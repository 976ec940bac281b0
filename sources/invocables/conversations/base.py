# SPDX-License-Identifier: Apache-2.0

''' Common loop of conversations: rounds, hooks, events and transcript.

    Contract for a provider module (one small module per provider API):
    a conversation subclasses :py:class:`ConversationBase`, sets
    ``provider`` (a name of :py:mod:`invocables.providers`, whose processor
    is the default ``processor``), and implements
    ``produce_message`` (the user message of a prompt), ``request`` (one
    whole call of the model) and ``request_continuous`` (one streamed call
    of the model). Both calls use the application's own SDK client and
    return a :py:class:`Reply`: the native messages to append to the
    transcript, the tool calls and the text. The streamed call first
    yields text deltas (``str``), then, once the response is whole, each
    tool call (``InvocationCanister``), then its reply.

    One rule for what a user sees, whole and streamed: the text is the
    text the processor releases (with option ``text_calls``, less the
    calls written in it, which become tool calls of the stored assistant
    message), and a call is announced only when it runs (a stream cut off
    announces none). Ids which the loop's processor synthesized (for calls
    which came without one, text calls among them) are made unique within
    the conversation: they carry the length of the transcript before the
    response, so that a call repeated round after round gets a new id each
    time.
'''


from . import __
from .. import history as _history
from .. import providers as _providers
from ..toolsets import selection as _selection


ROUNDS_MAXIMUM = 10

_IDENTIFIER_KEYS = frozenset( ( 'call_id', 'id', 'tool_call_id' ) )

NativeObject: __.typx.TypeAlias = dict[ str, __.typx.Any ]
Invocations: __.typx.TypeAlias = tuple[
    __.canisters.InvocationCanister, ... ]
Results: __.typx.TypeAlias = tuple[ __.canisters.ResultCanister, ... ]
Approver: __.typx.TypeAlias = __.cabc.Callable[
    [ __.canisters.InvocationCanister ],
    bool | __.cabc.Awaitable[ bool ] ]
Messages: __.typx.TypeAlias = (
    str | __.cabc.Sequence[ __.cabc.Mapping[ str, __.typx.Any ] ] )

# Native message of a provider's conversation (see Transcript).
_Message = __.typx.TypeVar( '_Message', default = __.typx.Any )


class Terminations( __.enum.Enum ):
    ''' Why a conversation loop stopped. '''

    Completion = 'completion'   # the model answered without calling tools
    Exhaustion = 'exhaustion'   # the bound on rounds was reached


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class Transcript( __.typx.Generic[ _Message ] ):
    ''' Outcome of a conversation loop.

        ``messages`` are the provider's native messages (plain
        dictionaries which its SDK accepts as input): those given, then
        those which the loop appended. Every tool call in them has its
        result. ``text`` is the text of the last response of the model.

        Generic in the provider's message: type checkers see the SDK's own
        parameter type of the conversation's provider (such as
        ``MessageParam`` for Anthropic, ``ChatCompletionMessageParam`` for
        OpenAI Chat; see :py:mod:`invocables.processors._natives`), so that
        the messages continue a typed list of the application's own.
    '''

    messages: list[ _Message ]
    termination: Terminations
    rounds: int
    text: str


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class Reply:
    ''' One whole response of the model, as a provider module reads it.

        ``resumable`` marks a response which paused without calling tools
        and asks to be called again (such as Anthropic's ``pause_turn``
        during long server-side tool runs).
    '''

    response: object
    messages: tuple[ NativeObject, ... ]
    invocations: Invocations
    text: str
    resumable: bool = False


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class TextEvent:
    ''' Text from the model: a delta when streamed, else the whole text. '''

    round: int
    text: str


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class InvocationEvent:
    ''' Tool call of the model, complete, in a response which is whole
        (not yet approved nor run): only calls which the loop runs (or
        asks about) are announced.
    '''

    round: int
    invocation: __.canisters.InvocationCanister


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResponseEvent:
    ''' Whole response of the model, with the native messages appended. '''

    round: int
    response: object
    messages: tuple[ NativeObject, ... ]
    invocations: Invocations
    text: str


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResultEvent:
    ''' Result of one tool call (run, failed or refused) is ready. '''

    round: int
    invocation: __.canisters.InvocationCanister
    result: __.canisters.ResultCanister


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResultsEvent:
    ''' Results of a round, with the native messages appended. '''

    round: int
    results: Results
    messages: tuple[ NativeObject, ... ]


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ConclusionEvent:
    ''' Loop stopped; last event of every conversation loop. '''

    transcript: Transcript


Event: __.typx.TypeAlias = (
    TextEvent | InvocationEvent | ResponseEvent | ResultEvent
    | ResultsEvent | ConclusionEvent )
Observer: __.typx.TypeAlias = __.cabc.Callable[
    [ Event ], None | __.cabc.Awaitable[ None ] ]
Portion: __.typx.TypeAlias = str | __.canisters.InvocationCanister | Reply


class ConversationBase(
    __.immut.DataclassObject, __.typx.Generic[ _Message ]
):
    ''' Conversation loop with tools, over the application's SDK client.

        Each round calls the model with the prepared tools, collects its
        tool calls, asks the approver about each, executes the approved
        ones with the engine, and appends the assistant message and the
        native results to the transcript. The loop stops when the model
        answers without calling tools (termination ``Completion``) or after
        ``rounds_maximum`` rounds (termination ``Exhaustion``): the tool
        calls of the last round are still run and answered, so that the
        transcript can be continued. Ensembles are connected by the
        application. Errors of the SDK client propagate unchanged.

        Generic in the native message of the provider, which its
        transcript holds.
    '''

    provider: __.typx.ClassVar[ str ] = 'unknown'

    client: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' The application's own asynchronous SDK client. ''' ),
    ]
    ensembles: __.typx.Annotated[
        __.execution.Ensembles,
        __.ddoc.Doc( ''' Connected ensembles whose tools are offered. ''' ),
    ]
    model: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of the model. ''' ) ]
    instructions: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' System prompt, sent with every request (never
            stored in the transcript). ''' ),
    ] = __.absent
    tokens_maximum: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc( ''' Most output tokens of each response. ''' ),
    ] = __.absent
    rounds_maximum: __.typx.Annotated[
        int,
        __.ddoc.Doc( ''' Most rounds (calls of the model) per loop. ''' ),
    ] = ROUNDS_MAXIMUM
    approver: __.typx.Annotated[
        __.Absential[ Approver ],
        __.ddoc.Doc( ''' Called with each tool call before it runs;
            returns whether it may run (or raises
            :py:class:`invocables.exceptions.InvocationRefusal` with a
            message for the model). May be a coroutine function. ''' ),
    ] = __.absent
    observer: __.typx.Annotated[
        __.Absential[ Observer ],
        __.ddoc.Doc( ''' Called with each event of the loop. May be a
            coroutine function. ''' ),
    ] = __.absent
    processor: __.typx.Annotated[
        __.processors.InvocationsProcessor,
        __.ddoc.Doc( ''' Processor of the provider API (default: the
            provider's processor, without options). ''' ),
    ] = __.typx.cast( # absent until '__post_init__' produces the default
        __.processors.InvocationsProcessor, __.absent )
    parameters: __.typx.Annotated[
        __.cabc.Mapping[ str, __.typx.Any ],
        __.ddoc.Doc( ''' Further parameters of each request, passed to
            the SDK client as they are (such as ``temperature``). ''' ),
    ] = __.dcls.field(
        default_factory = lambda: __.types.MappingProxyType( { } ) )
    auxdata: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Application data passed to every invocable. ''' ),
    ] = None
    namespace: __.typx.Annotated[
        __.Namespace,
        __.ddoc.Doc( ''' State of the conversation, shared by its rounds
            and loops (deduplication happens within it). ''' ),
    ] = __.dcls.field( default_factory = dict[ str, __.typx.Any ] )
    options: __.typx.Annotated[
        __.execution.ExecutionOptions,
        __.ddoc.Doc( ''' Options of the engine for the tool calls
            (:py:class:`invocables.execution.ExecutionOptions`: timeout,
            concurrency, failure policy, alerter, permission policy,
            limits, retries); the conversation's ``auxdata`` and
            ``namespace`` replace those of the record. ''' ),
    ] = __.dcls.field(
        default_factory = lambda: __.execution.OPTIONS_DEFAULT )
    selector: __.typx.Annotated[
        __.Absential[ _selection.Selector ],
        __.ddoc.Doc( ''' Chooses the tools offered in each round (see
            :py:mod:`invocables.toolsets.selection`; a
            :py:class:`~invocables.toolsets.search.ToolSearch`, for
            instance). Calls
            of tools not offered in their round are answered as calls of
            unknown tools. Default: every tool, every round. ''' ),
    ] = __.absent
    trimming: __.typx.Annotated[
        __.Absential[ _history.Trimming ],
        __.ddoc.Doc( ''' Trims stale tool results from the history before
            each request (see :py:mod:`invocables.history`); the
            transcript keeps them all. Default: nothing trimmed. ''' ),
    ] = __.absent

    def __post_init__( self ) -> None:
        if self.rounds_maximum < 1:
            raise __.exceptions.ConfigurationInvalidity(
                'rounds_maximum', "must be at least 1." )
        if not __.is_absent( self.tokens_maximum ) and (
            self.tokens_maximum < 1
        ):
            raise __.exceptions.ConfigurationInvalidity(
                'tokens_maximum', "must be at least 1." )
        validate_client( self.provider, self.client )
        if __.is_absent( self.processor ):
            # The default depends on the class's provider, which a field's
            # default factory cannot see; type checkers see the field frozen.
            object.__setattr__(
                self, 'processor',
                __.processors.produce_processor( self.provider ) )

    async def converse(
        self,
        messages: __.typx.Annotated[
            Messages,
            __.ddoc.Doc( ''' A prompt, or native messages to continue
                (such as the messages of an earlier transcript, with a new
                user message appended). ''' ),
        ],
    ) -> Transcript[ _Message ]:
        ''' Runs loop with whole responses; returns transcript.

            The observer, if any, sees every event, as in
            :py:meth:`converse_continuous`.
        '''
        async with __.ctxl.aclosing(
            self._advance( messages, streaming = False )
        ) as events:
            async for event in events:
                if isinstance( event, ConclusionEvent ):
                    return event.transcript
        raise __.exceptions.ResponseInvalidity( # pragma: no cover
            self.provider, "the loop ended without a transcript." )

    def converse_continuous(
        self,
        messages: __.typx.Annotated[
            Messages,
            __.ddoc.Doc( ''' A prompt, or native messages to continue. ''' ),
        ],
    ) -> __.cabc.AsyncGenerator[ Event, None ]:
        ''' Runs loop with streamed responses; yields events as they happen.

            Yields text deltas (:py:class:`TextEvent`: the text which the
            processor releases, never a call it read) and, once the
            response is whole, each tool call (:py:class:`InvocationEvent`;
            a stream cut off announces none), then the
            whole response (:py:class:`ResponseEvent`), each result
            (:py:class:`ResultEvent`) and the native results
            (:py:class:`ResultsEvent`), round after round; the last event
            is a :py:class:`ConclusionEvent` with the transcript.
        '''
        return self._advance( messages, streaming = True )

    def prefix_instructions(
        self, messages: list[ NativeObject ]
    ) -> list[ NativeObject ]:
        ''' Returns messages after a system message of the instructions.

            For providers which take the system prompt as the first message;
            the transcript itself never stores it.
        '''
        if __.is_absent( self.instructions ): return messages
        system = { 'role': 'system', 'content': self.instructions }
        return [ system, *messages ]

    def produce_message( self, prompt: str ) -> NativeObject:
        ''' Returns native user message which carries prompt.

            Default: ``{ role: 'user', content: prompt }``, as most
            providers take it.
        '''
        return { 'role': 'user', 'content': prompt }

    async def request(
        self, messages: list[ NativeObject ], tools: list[ NativeObject ]
    ) -> Reply:
        ''' Hook: calls model once, whole; returns its reply. '''
        raise NotImplementedError # pragma: no cover

    def request_continuous(
        self, messages: list[ NativeObject ], tools: list[ NativeObject ]
    ) -> __.cabc.AsyncIterator[ Portion ]:
        ''' Hook: calls model once, streamed; yields text deltas and tool
            calls as they come, then the reply.
        '''
        raise NotImplementedError # pragma: no cover

    async def relay_continuous(
        self,
        events: __.cabc.AsyncIterable[ object ],
        accumulator: __.processors.InvocationsAccumulator,
        texter: __.cabc.Callable[ [ object ], str ],
        replier: __.cabc.Callable[
            [ tuple[ object, ... ], Invocations ], Reply ],
        finals: __.cabc.Sequence[ object ] = ( ),
    ) -> __.cabc.AsyncIterator[ Portion ]:
        ''' Relays stream: yields text deltas, then tool calls and reply.

            Hands each event to the processor's accumulator, the one reader
            of tool calls, then yields the text which ``texter`` gives
            (called after the accumulator took the event, and with ``None``
            at the end: an accumulator which holds back text calls gives
            the text it released). After the stream, the ``finals`` events
            (such as a closing ``[DONE]`` which the SDK consumed) are
            ingested and the accumulator is concluded; only then, the
            response being whole, are its calls yielded (a stream cut off
            raises at its conclusion, having yielded none); ``replier``
            makes the reply from the events and the calls (typically with
            the accumulator's ``produce_message``).
        '''
        received: list[ object ] = [ ]
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        async for event in events:
            received.append( event )
            invocations.extend( accumulator.ingest( event ) )
            text = texter( event )
            if text: yield text
        for event in finals:
            invocations.extend( accumulator.ingest( event ) )
        invocations.extend( accumulator.conclude( ) )
        text = texter( None )
        if text: yield text
        for invocation in invocations: yield invocation
        yield replier( tuple( received ), tuple( invocations ) )

    async def _advance(
        self, messages: Messages, *, streaming: bool
    ) -> __.cabc.AsyncGenerator[ Event, None ]:
        transcript = self._produce_transcript( messages )
        offered: __.execution.Ensembles = self.ensembles
        # With a selector, tools are prepared round by round instead.
        tools = (
            self.processor.prepare_tools( offered )
            if __.is_absent( self.selector ) else [ ] )
        termination = Terminations.Exhaustion
        text = ''
        round_ = 0
        while round_ < self.rounds_maximum:
            round_ += 1
            if not __.is_absent( self.selector ):
                offered, tools = await self._select(
                    self.selector, transcript, round_ )
            reply: __.Absential[ Reply ] = __.absent
            async for portion in self._request(
                self._trim( transcript ), tools, streaming = streaming
            ):
                if isinstance( portion, Reply ):
                    reply = portion
                    continue
                if isinstance( portion, str ):
                    yield await self._notify(
                        TextEvent( round = round_, text = portion ) )
            if __.is_absent( reply ):
                raise __.exceptions.ResponseInvalidity(
                    self.provider, "the request ended without a reply." )
            reply = relabel_reply( reply, len( transcript ) )
            async for event in self._announce(
                reply, round_, streaming = streaming
            ): yield event
            transcript.extend( reply.messages )
            text = reply.text
            yield await self._notify( ResponseEvent(
                round = round_, response = reply.response,
                messages = reply.messages,
                invocations = reply.invocations, text = reply.text ) )
            if reply.resumable and not reply.invocations: continue
            if not reply.invocations:
                termination = Terminations.Completion
                break
            async for event in self._answer(
                transcript, round_, reply.invocations, offered
            ): yield event
        yield await self._notify( ConclusionEvent( transcript = Transcript(
            messages = transcript, termination = termination,
            rounds = round_, text = text ) ) )

    async def _announce(
        self, reply: Reply, round_: int, *, streaming: bool
    ) -> __.cabc.AsyncGenerator[ Event, None ]:
        ''' Yields text of whole reply, and each call of the reply. '''
        if not streaming and reply.text:
            yield await self._notify(
                TextEvent( round = round_, text = reply.text ) )
        for invocation in reply.invocations:
            yield await self._notify(
                InvocationEvent( round = round_, invocation = invocation ) )

    async def _answer(
        self,
        transcript: list[ NativeObject ],
        round_: int,
        invocations: Invocations,
        offered: __.execution.Ensembles,
    ) -> __.cabc.AsyncGenerator[ Event, None ]:
        ''' Approves and executes invocations; appends native results. '''
        results = await self._execute( invocations, offered )
        for invocation, result in zip( invocations, results ):
            yield await self._notify( ResultEvent(
                round = round_, invocation = invocation, result = result ) )
        natives = tuple( self.processor.nativize_results( results ) )
        transcript.extend( natives )
        yield await self._notify( ResultsEvent(
            round = round_, results = results, messages = natives ) )

    async def _approve(
        self, invocation: __.canisters.InvocationCanister
    ) -> __.Absential[ __.canisters.ResultCanister ]:
        ''' Returns refusal result, or absence if invocation may run. '''
        if __.is_absent( self.approver ): return __.absent
        try:
            verdict = self.approver( invocation )
            if __.inspect.isawaitable( verdict ): verdict = await verdict
        except __.exceptions.InvocationRefusal as exception:
            return produce_refusal( invocation, exception.message )
        if verdict: return __.absent
        return produce_refusal( invocation )

    async def _execute(
        self, invocations: Invocations, offered: __.execution.Ensembles
    ) -> Results:
        ''' Executes approved invocations; refused ones get error results.

            Returns one result per invocation, in order.
        '''
        refusals: dict[ int, __.canisters.ResultCanister ] = { }
        for index, invocation in enumerate( invocations ):
            refusal = await self._approve( invocation )
            if not __.is_absent( refusal ): refusals[ index ] = refusal
        approved = [
            invocation for index, invocation in enumerate( invocations )
            if index not in refusals ]
        executed = iter( await self.processor.execute_invocations(
            approved, offered, options = self._produce_options( ) ) )
        return tuple(
            refusals[ index ] if index in refusals else next( executed )
            for index in range( len( invocations ) ) )

    async def _notify( self, event: Event ) -> Event:
        ''' Calls observer with event; returns event. '''
        if __.is_absent( self.observer ): return event
        outcome = self.observer( event )
        if __.inspect.isawaitable( outcome ): await outcome
        return event

    def _produce_options( self ) -> __.execution.ExecutionOptions:
        return __.dcls.replace(
            self.options, auxdata = self.auxdata, namespace = self.namespace )

    async def _select(
        self,
        selector: _selection.Selector,
        transcript: list[ NativeObject ],
        round_: int,
    ) -> tuple[ __.execution.Ensembles, list[ __.typx.Any ] ]:
        ''' Returns the tools which selector offers in round, prepared. '''
        offered = await _selection.survey_selection(
            self.ensembles, selector, round = round_,
            messages = tuple( transcript ), namespace = self.namespace )
        return offered, self.processor.prepare_tools( offered )

    def _produce_transcript(
        self, messages: Messages
    ) -> list[ NativeObject ]:
        if isinstance( messages, str ):
            return [ self.produce_message( messages ) ]
        return [ dict( message ) for message in messages ]

    def _trim(
        self, transcript: list[ NativeObject ]
    ) -> list[ NativeObject ]:
        ''' Returns history to send: the transcript, trimmed if asked. '''
        if __.is_absent( self.trimming ): return transcript
        return self.trimming.trim_history(
            transcript, self.provider ).messages

    async def _request(
        self,
        messages: list[ NativeObject ],
        tools: list[ NativeObject ],
        *,
        streaming: bool,
    ) -> __.cabc.AsyncIterator[ Portion ]:
        ''' Yields portions of one call of the model, whole or streamed. '''
        if streaming:
            async for portion in self.request_continuous( messages, tools ):
                yield portion
            return
        reply = await self.request( messages, tools )
        yield reply


def produce_texter(
    accumulator: object,
    fallback: __.cabc.Callable[ [ object ], str ] = lambda event: '',
) -> __.cabc.Callable[ [ object ], str ]:
    ''' Returns texter of ``relay_continuous`` which gives the text that
        accumulator released (its ``release_text``: the text less the
        calls written in it); an accumulator without it (an application's
        own) gives the text of each event, by ``fallback``.
    '''
    release = getattr( accumulator, 'release_text', None )
    if not callable( release ): return fallback
    release_ = __.typx.cast( __.cabc.Callable[ [ ], str ], release )
    return lambda event: release_( )


def relabel_reply( reply: Reply, turn: int ) -> Reply:
    ''' Returns reply whose synthesized ids are unique in a conversation.

        A synthesized id depends on the call's position, name and
        arguments: a call repeated in a later response would get the same
        one, and results could no longer be paired with calls by id (and
        servers which check ids refuse the history). The id becomes
        ``call_<turn>_<position>_<digest>``, with ``turn`` the length of the
        transcript before the response, and the position of the call in its
        response (whole and streamed alike); the messages of the reply carry
        the new ids.
    '''
    identifiers: dict[ str, str ] = { }
    invocations: list[ __.canisters.InvocationCanister ] = [ ]
    for position, invocation in enumerate( reply.invocations ):
        if not invocation.identifier_synthesized:
            invocations.append( invocation )
            continue
        synthesized = __.processors.wire.synthesize_identifier(
            position, invocation.name, invocation.arguments )
        identifier = "call_{turn}_{rest}".format(
            turn = turn, rest = synthesized.removeprefix( 'call_' ) )
        identifiers[ invocation.identifier ] = identifier
        invocations.append(
            __.dcls.replace( invocation, identifier = identifier ) )
    if not identifiers: return reply
    messages = tuple(
        _relabel_value( message, identifiers ) for message in reply.messages )
    return __.dcls.replace(
        reply, messages = messages, invocations = tuple( invocations ) )


def validate_client( provider: str, client: object ) -> None:
    ''' Refuses client of another provider, or a synchronous client.

        The loop awaits one method of the client (such as
        ``client.messages.create``): it must exist, and, for the
        provider's own SDK, be a coroutine function. Providers without a
        known client (loops of applications) are not checked.
    '''
    entry = _providers.PROVIDERS.get( provider )
    if entry is None: return
    attributes, example = entry.method, entry.client
    location = f"client of conversation {provider!r}"
    genus = type( client )
    package = genus.__module__.split( '.', 1 )[ 0 ]
    name = (
        'None' if client is None
        else f"{genus.__module__}.{genus.__qualname__}" )
    owners = _survey_package_providers( package )
    if client is None or ( owners and package != entry.package ):
        hint = f" (its loop is provider {owners})" if owners else ''
        raise __.exceptions.ConfigurationInvalidity(
            location, f"{name} is not a client of provider {provider!r}"
            f"{hint}; give {example}." )
    method = _access_method( client, attributes )
    path = '.'.join( ( 'client', *attributes ) )
    if method is None:
        raise __.exceptions.ConfigurationInvalidity(
            location, f"{name} has no {path}, which the loop calls; give "
            f"{example}." )
    if package == entry.package and not __.inspect.iscoroutinefunction(
        __.inspect.unwrap( method )
    ):
        raise __.exceptions.ConfigurationInvalidity(
            location, f"{name} is a synchronous client ({path} is not a "
            "coroutine function); the loop is asynchronous, so give the "
            f"asynchronous client, {example}." )


def nativize_object(
    value: object, *, aliases: bool = False
) -> NativeObject:
    ''' Returns plain dictionary of SDK typed object (or of mapping).

        Fields which are ``None`` are left out, as the SDKs do on input;
        with ``aliases``, fields are named as on the wire (such as
        ``functionCall``) rather than as in Python.
    '''
    native = __.processors.wire.nativize_object( value, aliases = aliases )
    if isinstance( native, dict ):
        return __.typx.cast( NativeObject, native )
    raise __.exceptions.ResponseInvalidity(
        'unknown', "{genus} is neither a mapping nor an SDK object.".format(
            genus = type( value ).__name__ ) )


def produce_refusal(
    invocation: __.canisters.InvocationCanister,
    message: __.Absential[ str ] = __.absent,
) -> __.canisters.ResultCanister:
    ''' Produces error result for invocation which was not approved. '''
    if __.is_absent( message ):
        message = (
            f"The user did not approve the call of tool {invocation.name!r};"
            " it was not run. Do not repeat it unchanged: ask the user, or "
            "continue without it." )
    return __.canisters.ResultCanister(
        invocation_id = invocation.identifier,
        error = __.canisters.Fault(
            genus = __.canisters.FaultGenera.Refusal, message = message ),
        name = invocation.name,
        invocation_id_synthesized = invocation.identifier_synthesized )


def _access_method(
    client: object, attributes: __.cabc.Sequence[ str ]
) -> __.typx.Any:
    ''' Returns method of client at attribute path, or none. '''
    value: object = client
    try:
        for attribute in attributes: value = getattr( value, attribute )
    except Exception: return None # such as AttributeError
    return value


def _survey_package_providers( package: str ) -> str:
    ''' Returns providers whose clients are of package, for messages. '''
    names = [
        repr( provider.name ) for provider in _providers.PROVIDERS.values( )
        if provider.package == package ]
    return ' or '.join( names )


def _relabel_value(
    value: object, identifiers: __.cabc.Mapping[ str, str ]
) -> __.typx.Any:
    ''' Returns copy of JSON value with ids (values of keys ``id``,
        ``call_id`` and ``tool_call_id``) renamed as mapped.
    '''
    if isinstance( value, dict ):
        mapping = __.typx.cast( dict[ str, object ], value )
        return {
            key: (
                identifiers.get( item, item )
                if key in _IDENTIFIER_KEYS and isinstance( item, str )
                else _relabel_value( item, identifiers ) )
            for key, item in mapping.items( ) }
    if isinstance( value, list ):
        return [
            _relabel_value( item, identifiers )
            for item in __.typx.cast( list[ object ], value ) ]
    return value
