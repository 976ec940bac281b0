# SPDX-License-Identifier: Apache-2.0

''' Records of the conversation loop: replies of the model, events,
    transcript.

    A :py:class:`Reply` is one whole response of the model as the loop
    reads it (from the processor's ``prepare_message`` of a whole response,
    or from its accumulator of a stream); ids which the processor
    synthesized, and ids of the provider which calls of earlier responses
    had, are made unique within the conversation by
    :py:func:`relabel_reply`.
'''


import invocables.conversations.__ as __


_IDENTIFIER_KEYS = frozenset(
    ( 'call_id', 'id', 'tool_call_id', 'toolUseId' ) )
_TEXT_GENERA = frozenset( ( 'output_text', 'text' ) )

NativeObject: __.typx.TypeAlias = dict[ str, __.typx.Any ]
Invocations: __.typx.TypeAlias = tuple[
    __.canisters.InvocationCanister, ... ]
Results: __.typx.TypeAlias = tuple[ __.canisters.ResultCanister, ... ]

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
        OpenAI Chat; see :py:mod:`invocables.processors.natives`), so that
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
class _RoundEvent:
    ''' Event of a round of the loop. '''

    round: int


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class TextEvent( _RoundEvent ):
    ''' Text from the model: a delta when streamed, else the whole text. '''

    text: str


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class InvocationEvent( _RoundEvent ):
    ''' Tool call of the model, complete, in a response which is whole
        (not yet approved nor run): only calls which the loop runs (or
        asks about) are announced.
    '''

    invocation: __.canisters.InvocationCanister


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResponseEvent( _RoundEvent ):
    ''' Whole response of the model, with the native messages appended. '''

    response: object
    messages: tuple[ NativeObject, ... ]
    invocations: Invocations
    text: str


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResultEvent( _RoundEvent ):
    ''' Result of one tool call (run, failed or refused) is ready. '''

    invocation: __.canisters.InvocationCanister
    result: __.canisters.ResultCanister


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ResultsEvent( _RoundEvent ):
    ''' Results of a round, with the native messages appended. '''

    results: Results
    messages: tuple[ NativeObject, ... ]


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ConclusionEvent:
    ''' Loop stopped; last event of every conversation loop. '''

    transcript: Transcript


Event: __.typx.TypeAlias = (
    TextEvent | InvocationEvent | ResponseEvent | ResultEvent
    | ResultsEvent | ConclusionEvent )


def produce_reply(
    response: object,
    message: object,
    invocations: Invocations,
    *,
    resumable: bool = False,
) -> Reply:
    ''' Returns reply of response and of its assistant message (or output
        items): the native messages, less empty ones, and their text.
    '''
    natives = __.typx.cast( __.cabc.Sequence[ object ], message ) if (
        isinstance( message, ( list, tuple ) ) ) else ( message, )
    messages = tuple(
        native for native in (
            _prune( __.processors.wire.nativize_object( item ) )
            for item in natives )
        if not _is_empty( native ) )
    return Reply(
        response = response, messages = messages,
        invocations = invocations,
        text = ''.join( _access_text( native ) for native in messages ),
        resumable = resumable )


def relabel_reply(
    reply: Reply,
    turn: int,
    identifiers: __.cabc.Container[ str ] = ( ),
    nativize: __.cabc.Callable[ [ str ], str ] = str,
) -> Reply:
    ''' Returns reply whose ids of calls are unique in a conversation.

        A synthesized id depends on the call's position, name and
        arguments: a call repeated in a later response would get the same
        one, and results could no longer be paired with calls by id (and
        servers which check ids refuse the history). A provider's own id
        may repeat too (a server which numbers the calls of each response
        from ``call_0``). Each synthesized id, and each id of the provider
        already among ``identifiers`` (the ids of the calls of the
        transcript, as sent: see :py:func:`survey_identifiers`), becomes
        ``call_<turn>_<position>_<digest>``, with ``turn`` the length of
        the transcript before the response, and the position of the call
        in its response (whole and streamed alike), and a suffix (``_2``,
        ``_3``, ...) if the transcript holds that id already (a history
        which the application trimmed, its turns counted again); the
        messages of the
        reply carry the new ids, as ``nativize`` writes ids into messages
        (such as Mistral's nine characters), and so do its results.

        An id which no UTF-8 encoder takes (lone surrogates, from JSON's
        escapes) is renamed too; then the messages are made sendable (see
        :py:func:`invocables.canisters.normalize_data`): the model's text
        and arguments may hold lone surrogates as well.
    '''
    renamed: dict[ str, str ] = { }
    invocations: list[ __.canisters.InvocationCanister ] = [ ]
    taken: set[ str ] = set( )
    for position, invocation in enumerate( reply.invocations ):
        if not invocation.identifier_synthesized and (
            _is_sendable( invocation.identifier )
            and nativize( invocation.identifier ) not in identifiers
        ):
            taken.add( nativize( invocation.identifier ) )
            invocations.append( invocation )
            continue
        synthesized = __.processors.wire.synthesize_identifier(
            position, invocation.name, invocation.arguments )
        identifier = _produce_identifier(
            "call_{turn}_{rest}".format(
                turn = turn, rest = synthesized.removeprefix( 'call_' ) ),
            nativize, identifiers, taken )
        renamed[ nativize( invocation.identifier ) ] = nativize( identifier )
        invocations.append(
            __.dcls.replace( invocation, identifier = identifier ) )
    renamed.update( _relabel_items( reply.messages, turn, identifiers ) )
    messages = tuple(
        _normalize_message( _relabel_value( message, renamed ) )
        if renamed else _normalize_message( message )
        for message in reply.messages )
    if not renamed and all(
        new is old for new, old in zip( messages, reply.messages )
    ): return reply
    return __.dcls.replace(
        reply, messages = messages, invocations = tuple( invocations ) )


def _produce_identifier(
    identifier: str,
    nativize: __.cabc.Callable[ [ str ], str ],
    identifiers: __.cabc.Container[ str ],
    taken: set[ str ],
) -> str:
    ''' Returns identifier, or it with the first suffix which makes it new
        to the transcript and to the reply (taken); records it as taken.
    '''
    candidate = identifier
    suffix = 1
    while nativize( candidate ) in identifiers or (
        nativize( candidate ) in taken
    ):
        suffix += 1
        candidate = f"{identifier}_{suffix}"
    taken.add( nativize( candidate ) )
    return candidate


def _relabel_items(
    messages: __.cabc.Sequence[ object ],
    turn: int,
    identifiers: __.cabc.Container[ str ],
) -> dict[ str, str ]:
    ''' Returns new ids for items of a reply (OpenAI Responses: ``fc_...``,
        ``msg_...``) whose ids earlier items had: the API refuses an input
        which holds an item id twice. The new id is new to the transcript
        too (a suffix, if a trimmed history holds it).
    '''
    renamed: dict[ str, str ] = { }
    taken: set[ str ] = set( )
    for position, message in enumerate( messages ):
        if not isinstance( message, dict ): continue
        item = __.typx.cast( NativeObject, message )
        identifier = item.get( 'id' )
        if 'type' in item and isinstance( identifier, str ) and (
            identifier in identifiers
        ): renamed[ identifier ] = _produce_identifier(
            f"{identifier}_{turn}_{position}", str, identifiers, taken )
    return renamed


def survey_identifiers(
    messages: __.cabc.Iterable[ object ]
) -> set[ str ]:
    ''' Returns ids in native messages: values of the keys which carry
        ids of calls (``id``, ``call_id``, ``tool_call_id``,
        ``toolUseId``), at any depth; other ids among them only make
        renaming by :py:func:`relabel_reply` likelier.
    '''
    identifiers: set[ str ] = set( )
    pending = list( messages )
    while pending:
        value = pending.pop( )
        if isinstance( value, dict ):
            mapping = __.typx.cast( dict[ str, object ], value )
            for key, item in mapping.items( ):
                if isinstance( item, str ):
                    if key in _IDENTIFIER_KEYS: identifiers.add( item )
                elif isinstance( item, ( dict, list ) ):
                    pending.append( __.typx.cast( object, item ) )
        elif isinstance( value, list ):
            pending.extend( __.typx.cast( list[ object ], value ) )
    return identifiers


def _access_text( message: NativeObject ) -> str:
    ''' Returns text of native message (or item): its content if text,
        else its text blocks or parts, less thoughts.
    '''
    content = message.get( 'parts', message.get( 'content' ) )
    if isinstance( content, str ): return content
    if not isinstance( content, list ): return ''
    texts: list[ str ] = [ ]
    for block in __.typx.cast( list[ object ], content ):
        if not isinstance( block, dict ): continue
        block_ = __.typx.cast( NativeObject, block )
        text = block_.get( 'text' )
        if isinstance( text, str ) and not block_.get( 'thought' ) and (
            block_.get( 'type', 'text' ) in _TEXT_GENERA
        ): texts.append( text )
    return ''.join( texts )


def _is_empty( message: NativeObject ) -> bool:
    ''' Returns whether native message has a role and no content. '''
    return 'role' in message and (
        message.get( 'parts', message.get( 'content' ) ) == [ ] )


def _normalize_message( message: NativeObject ) -> NativeObject:
    ''' Returns native message whose keys and texts are sendable; the
        same message, if they are.
    '''
    return __.typx.cast(
        NativeObject, __.canisters.normalize_data( message ) )


def _is_sendable( identifier: str ) -> bool:
    ''' Returns whether every UTF-8 encoder takes identifier. '''
    return identifier.isascii( ) or (
        __.canisters.normalize_text( identifier ) is identifier )


def _prune( native: object ) -> NativeObject:
    ''' Returns native message less its empty parts (streams of Gemini end
        with parts of empty text).
    '''
    message = __.typx.cast( NativeObject, native )
    parts = message.get( 'parts' )
    if not isinstance( parts, list ): return message
    return { **message, 'parts': [
        part for part in __.typx.cast( list[ object ], parts )
        if part and part != { 'text': '' } ] }


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
