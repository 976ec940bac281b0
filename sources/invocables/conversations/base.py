# SPDX-License-Identifier: Apache-2.0

''' Common loop of conversations: rounds, hooks, events and transcript.

    A conversation subclasses :py:class:`ConversationBase` and sets
    ``provider``, a name of :py:data:`invocables.providers.PROVIDERS`: its
    row says how requests are made (the client's methods, where the model,
    history, tools, system prompt and token limit go, the finals of a
    stream), and its processor, the default ``processor``, reads the
    responses (``prepare_message`` of a whole one; the accumulator of a
    stream gives its calls, text deltas, assistant message and stop
    reason). No provider's stream is parsed here. Hooks: ``produce_message``
    (the user message of a prompt), ``query`` and ``query_continuous`` (the
    calls of the client, for clients which are not SDKs), and, for a
    provider without a row, ``request`` (one whole call of the model) and
    ``request_continuous`` (one streamed call), which return a
    :py:class:`Reply`: the native messages to append to the transcript,
    the tool calls and the text. The streamed call first yields text
    deltas (``str``), then, once the response is whole, each tool call
    (``InvocationCanister``), then its reply.

    One rule for what a user sees, whole and streamed: the text is the
    text the processor releases (with option ``text_calls``, less the
    calls written in it, which become tool calls of the stored assistant
    message), and a call is announced only when it runs (a stream cut off
    announces none). Ids which the loop's processor synthesized (for calls
    which came without one, text calls among them) are made unique within
    the conversation: they carry the length of the transcript before the
    response, so that a call repeated round after round gets a new id each
    time; so does a call whose provider's id a call of the transcript had
    (a server which numbers the calls of each response from ``call_0``),
    for every provider, renamed alike in its message and its result.
'''


import invocables.conversations.__ as __
import invocables.history as _history
import invocables.toolsets.policies as _policies
import invocables.providers as _providers
import invocables.toolsets.selection as _selection
import invocables.conversations.records as _records
from .records import (
    ConclusionEvent as ConclusionEvent,
    Event as Event,
    InvocationEvent as InvocationEvent,
    Invocations as Invocations,
    NativeObject as NativeObject,
    Reply as Reply,
    ResponseEvent as ResponseEvent,
    ResultEvent as ResultEvent,
    ResultsEvent as ResultsEvent,
    Results as Results,
    Terminations as Terminations,
    TextEvent as TextEvent,
    Transcript as Transcript,
    relabel_reply as relabel_reply,
)


ROUNDS_MAXIMUM = 10

Approver: __.typx.TypeAlias = __.cabc.Callable[
    [ __.canisters.InvocationCanister ],
    bool | __.cabc.Awaitable[ bool ] ]
Messages: __.typx.TypeAlias = (
    str | __.cabc.Sequence[ __.cabc.Mapping[ str, __.typx.Any ] ] )

# Native message of a provider's conversation (see Transcript).
_Message = __.typx.TypeVar( '_Message', default = __.typx.Any )

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
        __.ddoc.Doc( ''' Called with each tool call which can run, before
            it runs; returns whether it may run (or raises
            :py:class:`invocables.exceptions.InvocationRefusal` with a
            message for the model). May be a coroutine function. A
            shortcut for a permission policy which asks it, before the
            policy of ``options``
            (:py:func:`invocables.toolsets.policies.produce_approval_policy`).
            ''' ),
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
        _providers.validate_client( self.provider, self.client )
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

    def produce_message( self, prompt: str ) -> NativeObject:
        ''' Returns native user message which carries prompt.

            Default: ``{ role: 'user', content: prompt }``, as most
            providers take it.
        '''
        return { 'role': 'user', 'content': prompt }

    def nativize_identifier( self, identifier: str ) -> str:
        ''' Returns id of call as the assistant messages of the provider
            carry it: by default, the id itself.
        '''
        return identifier

    def produce_request(
        self, messages: list[ NativeObject ], tools: list[ NativeObject ]
    ) -> NativeObject:
        ''' Returns request of the provider's row, without ``stream``. '''
        row = _providers.access_provider( self.provider )
        request: NativeObject = { }
        for key, value in row.fixtures:
            _assign( request, key, __.values.thaw_json( value ) )
        _assign( request, row.model_key, self.model )
        instructions = self.instructions
        if not row.instructions_key and not __.is_absent( instructions ):
            system = { 'role': 'system', 'content': instructions }
            messages = [ system, *messages ]
            instructions = __.absent
        _assign( request, row.messages_key, messages )
        if tools: _assign( request, row.tools_key, tools )
        if not __.is_absent( instructions ):
            _assign( request, row.instructions_key, (
                [ { 'text': instructions } ] if row.instructions_blocks
                else instructions ) )
        tokens = (
            row.tokens_default if __.is_absent( self.tokens_maximum )
            else self.tokens_maximum )
        if not __.is_absent( tokens ):
            _assign( request, row.tokens_key, tokens )
        _access_object( request, row.parameters_key ).update( self.parameters )
        return request

    async def query( self, request: NativeObject ) -> object:
        ''' Calls the client's method of the provider's row; returns the
            whole response.
        '''
        row = _providers.access_provider( self.provider )
        return await _call(
            self.client, row.method, request, blocking = row.blocking )

    @__.ctxl.asynccontextmanager
    async def query_continuous(
        self, request: NativeObject
    ) -> __.cabc.AsyncGenerator[ __.cabc.AsyncIterator[ object ] ]:
        ''' Calls the client's streaming method of the provider's row;
            gives its events, and closes the response after them.
        '''
        row = _providers.access_provider( self.provider )
        method = row.streaming_method
        if not method: request = { **request, 'stream': True }
        stream = await _call(
            self.client, method or row.method, request,
            blocking = row.blocking )
        if row.stream_key:
            stream = __.processors.wire.access_field( stream, row.stream_key )
        if not hasattr( stream, '__aenter__' ):
            yield _iterate( stream )
            return
        async with stream: yield _iterate( stream )

    async def request(
        self, messages: list[ NativeObject ], tools: list[ NativeObject ]
    ) -> Reply:
        ''' Calls model once, whole; returns its reply.

            The assistant message is the processor's (``prepare_message``):
            with option ``text_calls``, the text less the calls written in
            it, and each call under the id of its canister.
        '''
        row = _providers.access_provider( self.provider )
        response = await self.query( self.produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( response )
        message = self.processor.prepare_message( response )
        stop = __.processors.wire.access_field( response, 'stop_reason' ) if (
            row.resumptions ) else None
        return _records.produce_reply(
            response, message, invocations,
            resumable = stop in row.resumptions )

    async def request_continuous(
        self, messages: list[ NativeObject ], tools: list[ NativeObject ]
    ) -> __.cabc.AsyncIterator[ Portion ]:
        ''' Calls model once, streamed; yields text deltas as they come,
            then, the response being whole, its tool calls and its reply.

            The processor's accumulator is the one reader of the stream:
            of its calls, of the text it releases (with option
            ``text_calls``, less the calls written in it), of its assistant
            message and stop reason. A stream cut off raises at its
            conclusion, having yielded no call.
        '''
        row = _providers.access_provider( self.provider )
        accumulator = self.processor.produce_accumulator( )
        release = getattr( accumulator, 'release_text', lambda: '' )
        received: list[ object ] = [ ]
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        async with self.query_continuous(
            self.produce_request( messages, tools )
        ) as events:
            async for event in events:
                received.append( event )
                invocations.extend( accumulator.ingest( event ) )
                text = release( )
                if text: yield text
        for event in row.finals:
            invocations.extend( accumulator.ingest( event ) )
        invocations.extend( accumulator.conclude( ) )
        text = release( )
        if text: yield text
        for invocation in invocations: yield invocation
        conclusion = getattr( accumulator, 'conclusion', None )
        yield _records.produce_reply(
            received if conclusion is None else conclusion,
            accumulator.produce_message( ), tuple( invocations ),
            resumable = getattr( accumulator, 'stop', None ) in (
                row.resumptions ) )

    async def _advance(
        self, messages: Messages, *, streaming: bool
    ) -> __.cabc.AsyncGenerator[ Event, None ]:
        transcript = self._produce_transcript( messages )
        identifiers = _records.survey_identifiers( transcript )
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
            reply = self._validate_reply(
                reply, len( transcript ), identifiers )
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

    async def _execute(
        self, invocations: Invocations, offered: __.execution.Ensembles
    ) -> Results:
        ''' Executes invocations, each asked about first if an approver is
            set; returns one result per invocation, in order. '''
        return await self.processor.execute_invocations(
            invocations, offered, options = self._produce_options( ) )

    async def _notify( self, event: Event ) -> Event:
        ''' Calls observer with event; returns event. '''
        if __.is_absent( self.observer ): return event
        outcome = self.observer( event )
        if __.inspect.isawaitable( outcome ): await outcome
        return event

    def _produce_options( self ) -> __.execution.ExecutionOptions:
        options, approver = self.options, self.approver
        policy = options.policy if __.is_absent( approver ) else (
            _policies.produce_approval_policy( approver, options.policy ) )
        return __.dcls.replace(
            options, auxdata = self.auxdata, namespace = self.namespace,
            policy = policy )

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

    def _validate_reply(
        self, reply: __.Absential[ Reply ], turn: int, identifiers: set[ str ]
    ) -> Reply:
        ''' Returns reply of a request, its ids of calls made unique in the
            transcript (see :py:func:`relabel_reply`) and added to
            identifiers; raises response invalidity if there is none.
        '''
        if __.is_absent( reply ):
            raise __.exceptions.ResponseInvalidity(
                self.provider, "the request ended without a reply." )
        reply = relabel_reply(
            reply, turn, identifiers, self.nativize_identifier )
        identifiers.update(
            self.nativize_identifier( invocation.identifier )
            for invocation in reply.invocations )
        identifiers.update( _records.survey_identifiers( reply.messages ) )
        return reply


def _access_object( request: NativeObject, key: str ) -> NativeObject:
    ''' Returns object at key path of request, made if missing. '''
    target = request
    for name in filter( None, key.split( '.' ) ):
        target = target.setdefault( name, { } )
    return target


def _assign( request: NativeObject, key: str, value: object ) -> None:
    ''' Sets value at key path of request. '''
    path, _, name = key.rpartition( '.' )
    _access_object( request, path )[ name ] = value


async def _call(
    client: object,
    path: __.cabc.Sequence[ str ],
    request: NativeObject,
    *,
    blocking: bool,
) -> __.typx.Any:
    ''' Calls method of client at attribute path with request; a method
        of a synchronous client, if allowed, runs in a worker thread.
    '''
    method: __.typx.Any = client
    for name in path: method = getattr( method, name )
    if blocking and not __.inspect.iscoroutinefunction(
        __.inspect.unwrap( method )
    ): result = await __.asyncio.to_thread( lambda: method( **request ) )
    else: result = method( **request )
    if __.inspect.isawaitable( result ): return await result
    return result


async def _iterate( stream: __.typx.Any ) -> __.cabc.AsyncIterator[ object ]:
    ''' Yields events of asynchronous stream, or of synchronous stream
        read in a worker thread.
    '''
    if hasattr( stream, '__aiter__' ):
        async for event in stream: yield event
        return
    iterator = iter( stream )
    end = object( )
    while True:
        event = await __.asyncio.to_thread( next, iterator, end )
        if event is end: return
        yield event
