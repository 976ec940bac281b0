# SPDX-License-Identifier: Apache-2.0

''' Processor for OpenAI Chat Completions and the servers that speak it.

    Tools go out as ``{ type: 'function', function: { name, description,
    parameters } }`` (optionally strict); calls come back in
    ``message.tool_calls``, with arguments as JSON text or, from some
    compatible servers (Ollama, llama.cpp), as an object, and with ids
    synthesized where a server omits them; results go back as one
    ``{ role: 'tool', tool_call_id, content }`` message per result. Streams
    are read from chunks (``choices[].delta.tool_calls``, keyed by index and
    id) up to ``finish_reason`` or ``[DONE]``.
'''


import invocables.processors.__ as __
import invocables.processors.base as _base
import invocables.processors.natives as _natives
import invocables.processors.streaming as _streaming
import invocables.processors.textcalls as _textcalls
import invocables.processors._wire as _wire
import invocables.dialects as _dialects


PROVIDER = 'openai'

_DONE = '[DONE]'
_STOPS_TRUNCATING = frozenset( ( 'content_filter', 'length' ) )

# Assistant message of Chat Completions, as each API which speaks it names
# its type (Mistral's accumulator shares this one).
_Assistant = __.typx.TypeVar(
    '_Assistant', default = _natives.OpenaiAssistantMessage )


class OpenaiAccumulator( _textcalls.TextCallsAccumulatorBase[ _Assistant ] ):
    ''' Accumulates Chat Completions chunks into tool calls.

        Reads one choice (the first, unless another is asked for), as
        ``normalize_invocations`` does. Calls are keyed by tool call index
        and id: a new id at a used index is a new call; indexes need not
        start at 0. Arguments come as text fragments (joined) or, from some
        compatible servers, as objects (merged). Calls are complete at the
        choice's ``finish_reason`` or at ``[DONE]``; when the reason cuts
        them off (such as ``length``), only calls whose arguments are whole
        are emitted, and the others are interrupted.
    '''

    __slots__ = ( '_choice', '_others', '_refusals', '_seen', '_truncated' )

    provider = PROVIDER

    def __init__(
        self,
        choice: int = 0,
        text_calls: _textcalls.TextCallsOption | None = None,
    ) -> None:
        super( ).__init__( text_calls )
        self._choice = choice
        self._others = False
        self._seen = False
        self._refusals: list[ str ] = [ ]
        self._truncated = False

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _wire.Invocations:
        ''' Maps one chunk (or ``[DONE]``) onto the accumulator. '''
        if isinstance( event, ( str, bytes, bytearray ) ):
            event = _wire.decode_event( PROVIDER, event, ( _DONE, ) )
            if event is None:
                self.finish( )
                natives = ( ) if self._truncated else self.complete_calls( )
                return natives + self.conclude_text( natives )
        error = _access_error( event )
        if error is not None: raise _wire.produce_failure( PROVIDER, error )
        choices = _wire.access_field( event, 'choices' )
        if choices is None:
            _wire.validate_shape(
                PROVIDER, event, ( 'choices', ), 'a Chat Completions chunk' )
        choices = _wire.access_items( choices, PROVIDER, 'choices' )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        # Hot path: the choices read as survey_choices reads them, in one
        # pass with no list of its own.
        for position, choice in enumerate( choices ):
            ordinal = _wire.access_field( choice, 'index' )
            if ( position if ordinal is None else ordinal ) != self._choice:
                self._others = True
                continue
            self._seen = True
            invocations.extend( self._ingest_choice( choice ) )
        return tuple( invocations )

    def conclude_stream(
        self
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Raises response invalidity if the stream never carried the
            choice read, though it carried others.
        '''
        if self._others and not self._seen:
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, f"the stream carried no choice {self._choice}; "
                "ask for more choices (n), or read another one." )
        return super( ).conclude_stream( )

    def produce_message( self ) -> _Assistant:
        ''' Returns ``{ role: 'assistant', content, tool_calls }``.

            Holds the text of the choice and each call emitted so far, with
            its id (synthesized ones included) and its arguments as sent, so
            that the message can start the next turn.
        '''
        calls = _streaming.produce_function_calls(
            self.survey_invocations( ) )
        text = ''.join( self._texts )
        message: _wire.NativeObject = {
            'role': 'assistant', 'content': text or ( None if calls else '' ) }
        refusal = ''.join( self._refusals )
        if refusal: message[ 'refusal' ] = refusal
        if calls: message[ 'tool_calls' ] = calls
        # The shape of Chat Completions, which the type argument names.
        return __.typx.cast( _Assistant, message )

    def _ingest_choice( self, choice: object ) -> _wire.Invocations:
        access = _wire.access_field
        delta = access( choice, 'delta' )
        text = access( delta, 'content' )
        invocations = list( self.feed_text( text ) ) if text else [ ]
        calls = access( delta, 'tool_calls' )
        if calls is None:
            refusal = access( delta, 'refusal' )
            if isinstance( refusal, str ) and refusal:
                self._refusals.append( refusal )
        else:
            calls = _wire.access_items( calls, PROVIDER, 'tool_calls' )
            for position, call in enumerate( calls ):
                invocations.extend( self._ingest_call( position, call ) )
        stop = access( choice, 'finish_reason' )
        if stop is None: return tuple( invocations )
        self.finish( )
        if stop in _STOPS_TRUNCATING:
            self._truncated = True
            self.record_truncation( stop )
            if self._calls is not None: self._calls.truncated = True
            invocations.extend( self.complete_calls( truncated = True ) )
        else: invocations.extend( self.complete_calls( ) )
        invocations.extend( self.conclude_text( invocations ) )
        return tuple( invocations )

    def _ingest_call(
        self, position: int, call: object
    ) -> _wire.Invocations:
        access = _wire.access_field
        index = access( call, 'index' )
        key = position if index is None else index
        tag = access( call, 'id' )
        function = access( call, 'function' )
        name = access( function, 'name' )
        arguments = access( function, 'arguments' )
        if tag is None and name is None and (
            self.is_open( key ) or self.is_closed( key )
        ): # Hot path: a fragment (text, or object) of an open call.
            self.extend_call( key, arguments )
            return ( )
        tag_ = tag if isinstance( tag, str ) and tag else None
        # A delta of a call already complete repeats it (some servers
        # repeat the id in every delta): nothing of it is taken again.
        if self.is_repeated( key, tag_ ): return ( )
        emitted = self.commence_call(
            key, tag_, _wire.access_text( name, PROVIDER, 'name' ) )
        self.extend_call( key, arguments )
        return emitted


class StrictProcessorBase(
    _base.ProcessorBase[
        _natives.Tool, _natives.Message, _natives.Assistant ]
):
    ''' OpenAI processors, with strict mode where schemas allow it. '''

    tool_options = ( 'strict', )

    def __init__(
        self, *, strict: bool = False, text_calls: str | None = None
    ):
        self.strict = strict
        self.text_calls = _textcalls.TextCallsOption( text_calls )

    def observe_ensembles( self, ensembles: _base.Ensembles ) -> None:
        ''' Records the names of the tools of the ensembles: with option
            ``text_calls``, only calls written as text which name them are
            read.
        '''
        self.text_calls.record_ensembles( ensembles )

    def adapt_tool(
        self, name: str, description: str, invoker: __.invokers.Invoker
    ) -> _base.Recipe | None:
        ''' Returns arguments of ``produce_tool``; strict when asked and
            the schema allows it.

            A schema which cannot be made strict is offered without strict
            mode (with a warning) rather than failing the request.
        '''
        if self.strict:
            schema = _base.adapt_invoker_schema(
                invoker, name, 'openai-strict', self.provider )
            if schema is not None:
                return ( name, description, schema, True )
        schema = _base.adapt_invoker_schema( invoker, name, self.dialect )
        if schema is None: return None
        return ( name, description, schema, False )

    def adapt_tools(
        self,
        names: __.cabc.Sequence[ str ],
        invokers: __.cabc.Sequence[ __.invokers.Invoker ],
    ) -> tuple[ tuple[ __.typx.Any, ... ], ... ]:
        ''' Returns what ``adapt_tool`` gives for each tool, by column,
            refused tools left out: in one pass without strict mode (in
            strict mode, tool by tool, each warning after the one before).
        '''
        if self.strict:
            return tuple( zip( *filter( None, map(
                self.adapt_tool, names,
                [ invoker.description for invoker in invokers ],
                invokers ) ) ) )
        return _base.compose_columns(
            names, [ invoker.description for invoker in invokers ],
            _base.adapt_invoker_schemas( invokers, names, self.dialect ),
            [ False ] * len( names ) )

    def is_remembered(
        self, columns: tuple[ tuple[ __.typx.Any, ... ], ... ]
    ) -> bool:
        ''' Returns whether every tool is strict when strict mode is asked.
        '''
        return not self.strict or not columns or all( columns[ 3 ] )

    async def execute_invocations(
        self,
        invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
        ensembles: _base.Ensembles,
        **options: __.typx.Any,
    ) -> tuple[ __.canisters.ResultCanister, ... ]:
        ''' Executes invocations with the engine; one result each, in order.

            In strict mode, first removes the ``null`` values which strict
            schemas make the model send for optional properties.
        '''
        if self.strict:
            invocations = normalize_strict_invocations(
                invocations, ensembles )
        return await super( ).execute_invocations(
            invocations, ensembles, **options )


class OpenaiProcessor(
    StrictProcessorBase[
        _natives.OpenaiTool, _natives.OpenaiMessage,
        _natives.OpenaiAssistantMessage ]
):
    ''' Processor for OpenAI Chat Completions (and compatible servers). '''

    accumulator_class = OpenaiAccumulator

    def __init__(
        self,
        *,
        strict: bool = False,
        choice: int = 0,
        text_calls: str | None = None,
    ):
        super( ).__init__( strict = strict, text_calls = text_calls )
        if not isinstance( choice, int ) or isinstance( choice, bool ) or (
            choice < 0
        ):
            raise __.exceptions.ConfigurationInvalidity(
                f"processor {PROVIDER!r}",
                f"option 'choice' must be an index (0 or more), not "
                f"{choice!r}." )
        self.choice = choice

    def produce_accumulator( self ) -> OpenaiAccumulator:
        ''' Produces accumulator for one streamed response.

            It reads the same choice as ``normalize_invocations``.
        '''
        return OpenaiAccumulator(
            choice = self.choice, text_calls = self.text_calls )

    produce_tool = _wire.produce_function_tool
    produce_tools = _wire.produce_function_tools

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns tool calls of completion, choice or message.

            Takes the first choice of a completion (or the one of option
            ``choice``), as the accumulator does. Error bodies raise
            provider failure; calls whose arguments the token limit cut off
            raise :py:class:`invocables.exceptions.InvocationTruncation`,
            naming them. Payloads of another shape raise response
            invalidity.
        '''
        access = _wire.access_field
        error = access( native_message, 'error' )
        if error is not None: raise _wire.produce_failure( PROVIDER, error )
        message, stop = _access_message( native_message, self.choice )
        calls = _access_calls( message )
        invocations = _wire.produce_function_invocations(
            PROVIDER, calls, stop, _STOPS_TRUNCATING )
        # The server read calls: text calls are dropped (see textcalls).
        if invocations: return invocations
        return self.text_calls.read(
            access( message, 'content' ), 0,
            truncated = stop in _STOPS_TRUNCATING )

    def prepare_message(
        self, native_message: object
    ) -> _natives.OpenaiAssistantMessage:
        ''' Returns ``{ role: 'assistant', content, tool_calls }`` of
            whole completion, choice or message (SDK typed or dict).

            Reads the choice which ``normalize_invocations`` reads, and
            raises as it does. Each function call has the id of its
            canister (synthesized ones included) and its arguments as sent;
            calls written as text (option ``text_calls``) are moved from
            the text into ``tool_calls``. Holds ``refusal`` and the id of
            ``audio``, if any.
        '''
        access = _wire.access_field
        invocations = self.access_invocations( native_message )
        message, _ = _access_message( native_message, self.choice )
        calls = _access_calls( message )
        text = access( message, 'content' )
        text = text if isinstance( text, str ) else ''
        text = self.text_calls.strip( text )
        native: _natives.OpenaiAssistantMessage = {
            'role': 'assistant',
            'content': text or ( None if invocations else '' ) }
        refusal = access( message, 'refusal' )
        if isinstance( refusal, str ) and refusal:
            native[ 'refusal' ] = refusal
        audio = access( access( message, 'audio' ), 'id' )
        if isinstance( audio, str ) and audio:
            native[ 'audio' ] = { 'id': audio }
        if invocations: native[ 'tool_calls' ] = [
            {
                'id': invocation.identifier,
                'type': 'function',
                'function': {
                    'name': invocation.name,
                    'arguments': _wire.render_arguments(
                        _wire.access_function_arguments( calls[ index ] )
                        if index < len( calls ) else invocation.arguments ),
                },
            }
            for index, invocation in enumerate( invocations )
            if invocation is not None ]
        return native

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.OpenaiMessage ]:
        ''' Returns one ``{ role: 'tool', tool_call_id, content }`` each.

            Content is text: structured data as JSON, binary content as a
            textual stand-in, errors prefixed with ``Error:``.
        '''
        return [
            {
                'role': 'tool',
                'tool_call_id': result.invocation_id,
                'content': result.as_text( ),
            }
            for result in results ]


def normalize_strict_invocations(
    invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
    ensembles: _base.Ensembles,
) -> tuple[ __.canisters.InvocationCanister, ... ]:
    ''' Returns invocations without nulls added by strict mode.

        Unknown names and undecodable arguments pass unchanged, for the
        engine to report.
    '''
    nomenclature = __.naming.access_nomenclature( ensembles )
    normalized: list[ __.canisters.InvocationCanister ] = [ ]
    for invocation in invocations:
        try: designation = nomenclature.access_designation( invocation.name )
        except __.exceptions.InvokerAbsence:
            normalized.append( invocation )
            continue
        arguments = _dialects.normalize_strict_arguments(
            designation.invoker.arguments_schema, invocation.arguments )
        normalized.append(
            __.dcls.replace( invocation, arguments = arguments ) )
    return tuple( normalized )


def produce_processor( **options: __.typx.Any ) -> OpenaiProcessor:
    ''' Produces processor for Chat Completions; options ``strict``,
        ``choice`` (the index of the choice to read, default 0) and
        ``text_calls`` (read tool calls written as text: 'auto' or a format
        of :py:mod:`invocables.processors.textcalls`).
    '''
    _wire.validate_options(
        PROVIDER, options, ( 'choice', 'strict', 'text_calls' ) )
    return OpenaiProcessor( **options )


def _access_calls( message: object ) -> list[ object ]:
    ''' Returns function calls of message (other tool calls are left). '''
    access = _wire.access_field
    return [
        call for call in _wire.access_items(
            access( message, 'tool_calls' ), PROVIDER, 'tool_calls' )
        if access( call, 'type' ) in ( None, 'function' ) ]


def _access_error( event: object ) -> object:
    ''' Returns error of chunk: typed chunks carry none (the SDK raises on
        error payloads).
    '''
    if not isinstance( event, dict ): return None
    return __.typx.cast( dict[ str, object ], event ).get( 'error' )


def _access_message(
    native_message: object, choice: int
) -> tuple[ object, object ]:
    ''' Returns message and finish reason of completion or choice. '''
    access = _wire.access_field
    _wire.validate_shape(
        PROVIDER, native_message,
        ( 'choices', 'message', 'tool_calls', 'content' ),
        'a Chat Completions response, choice or message', untyped = True )
    choices = access( native_message, 'choices' )
    if choices is not None:
        items = _wire.access_items( choices, PROVIDER, 'choices' )
        selected = _wire.survey_choices( items, choice )
        if not items: return None, None
        if not selected:
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, f"the response has no choice {choice}; ask for "
                "more choices (n), or read another one." )
        return (
            access( selected[ 0 ], 'message' ),
            access( selected[ 0 ], 'finish_reason' ) )
    message = access( native_message, 'message' )
    if message is not None:
        return message, access( native_message, 'finish_reason' )
    return native_message, None
