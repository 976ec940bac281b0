# SPDX-License-Identifier: Apache-2.0

''' Processor for Cohere Chat v2.

    Tools go out as ``{ type: 'function', function: { name, description,
    parameters } }``; calls come back in ``message.tool_calls`` with
    arguments as JSON text (``"null"`` for a tool without parameters);
    results go back as one ``{ role: 'tool', tool_call_id, content }``
    message per result, whose content is a list of ``text`` and
    ``document`` blocks. Streams are read from ``tool-call-start``,
    ``tool-call-delta`` and ``tool-call-end`` events, keyed by index. Plain
    dictionaries and cohere typed objects (``V2ChatResponse``, stream
    events) are accepted alike; cohere is never imported.
'''


import invocables.processors.__ as __
import invocables.processors.base as _base
import invocables.processors.natives as _natives
import invocables.processors.streaming as _streaming
import invocables.processors._wire as _wire


PROVIDER = 'cohere'

_DONE = '[DONE]'
# Other APIs name their event types with dots or underscores.
_GENERA_FOREIGN = __.re.compile( r'[._]' )
_STOPS_TRUNCATING = frozenset( ( 'MAX_TOKENS', 'ERROR', 'TIMEOUT' ) )
_EMPTY_TEXT = 'The tool returned no content.'


class CohereAccumulator(
    _streaming.AccumulatorBase[ _natives.CohereAssistantMessage ]
):
    ''' Accumulates Cohere v2 stream events into tool calls.

        A call opens at ``tool-call-start``, grows with ``tool-call-delta``
        and is complete at ``tool-call-end`` (same index). The event type
        is read from the event, else from its SSE event name (label). The
        tool plan and text are kept for :py:meth:`produce_message`.
    '''

    __slots__ = ( '_plans', '_texts' )

    provider = PROVIDER

    def __init__( self ) -> None:
        super( ).__init__( )
        self._plans: list[ str ] = [ ]
        self._texts: list[ str ] = [ ]

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _wire.Invocations:
        ''' Maps one stream event onto the accumulator. '''
        access = _wire.access_field
        if isinstance( event, ( str, bytes, bytearray ) ):
            event = _wire.decode_event( PROVIDER, event, ( _DONE, ) )
            if event is None: return ( )
        genus = _wire.access_genus( event, label )
        _raise_on_error( event, genus )
        _wire.validate_genus( PROVIDER, genus, _GENERA_FOREIGN, 'Cohere v2' )
        match genus:
            case 'tool-call-start':
                return self._commence( event )
            case 'tool-call-delta':
                index = _access_index( event )
                function = access( _access_call( event ), 'function' )
                self.extend_call( index, access( function, 'arguments' ) )
            case 'tool-call-end':
                return self.complete_call( _access_index( event ) )
            case 'tool-plan-delta':
                self._append(
                    self._plans, _access_message( event ), 'tool_plan' )
            case 'content-delta':
                content = access( _access_message( event ), 'content' )
                self._append( self._texts, content, 'text' )
                self.record_text( access( content, 'text' ) )
            case 'message-end': self._conclude( event )
            case _: pass # New event types must not break a stream.
        return ( )

    def produce_message( self ) -> _natives.CohereAssistantMessage:
        ''' Returns ``{ role: 'assistant', tool_plan, tool_calls }`` (or
            ``content``, without calls).

            Holds the tool plan (or text) of the stream and each call
            emitted so far, with its id and its arguments as sent, so that
            the message can start the next turn.
        '''
        calls = _streaming.produce_function_calls(
            self.survey_invocations( ) )
        return _produce_message(
            ''.join( self._plans ), calls, ''.join( self._texts ) )

    def _append(
        self, pieces: list[ str ], value: object, field: str
    ) -> None:
        piece = _wire.access_field( value, field )
        if isinstance( piece, str ) and piece: pieces.append( piece )

    def _conclude( self, event: object ) -> None:
        self.finish( )
        delta = _wire.access_field( event, 'delta' )
        stop = _wire.access_field( delta, 'finish_reason' )
        if stop in _STOPS_TRUNCATING: self.record_truncation( stop )

    def _commence( self, event: object ) -> _wire.Invocations:
        access = _wire.access_field
        index = _access_index( event )
        call = _access_call( event )
        tag = access( call, 'id' )
        tag_ = tag if isinstance( tag, str ) and tag else None
        if self.is_repeated( index, tag_ ): return ( )
        function = access( call, 'function' )
        name = _wire.access_text(
            access( function, 'name' ), PROVIDER, 'name' )
        emitted = self.commence_call( index, tag_, name )
        self.extend_call( index, access( function, 'arguments' ) )
        return emitted


class CohereProcessor(
    _base.ProcessorBase[
        _natives.CohereTool, _natives.CohereMessage,
        _natives.CohereAssistantMessage ]
):
    ''' Processor for Cohere Chat v2. '''

    accumulator_class = CohereAccumulator

    produce_tool = _wire.produce_function_tool
    produce_tools = _wire.produce_function_tools

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns tool calls of chat response or assistant message.

            Error bodies raise provider failure; calls of a response cut
            off by the token limit raise invocation interruption.
        '''
        access = _wire.access_field
        _raise_on_error( native_message, None )
        _wire.validate_shape(
            PROVIDER, native_message,
            ( 'message', 'tool_calls', 'content', 'tool_plan' ),
            'a Cohere v2 chat response or message', untyped = True )
        _, calls = _access_calls( native_message )
        return _wire.produce_function_invocations(
            PROVIDER, calls, access( native_message, 'finish_reason' ),
            _STOPS_TRUNCATING )

    def prepare_message(
        self, native_message: object
    ) -> _natives.CohereAssistantMessage:
        ''' Returns ``{ role: 'assistant', tool_plan, tool_calls }`` (or
            ``content``, without calls) of whole response or message.

            Holds the tool plan, the text and each call, with the id of its
            canister and its arguments as sent, as the accumulator's
            message does. Raises as ``normalize_invocations`` does. Cohere's
            SDK takes it through
            ``cohere.AssistantChatMessageV2.model_validate``.
        '''
        access = _wire.access_field
        invocations = self.access_invocations( native_message )
        message, calls = _access_calls( native_message )
        plan = access( message, 'tool_plan' )
        texts = [
            text for text in (
                access( item, 'text' ) for item in _wire.access_items(
                    access( message, 'content' ), PROVIDER, 'content' )
                if access( item, 'type' ) == 'text' )
            if isinstance( text, str ) ]
        return _produce_message(
            plan if isinstance( plan, str ) else '',
            [
                {
                    'id': invocation.identifier,
                    'type': 'function',
                    'function': {
                        'name': invocation.name,
                        'arguments': _wire.render_arguments(
                            _wire.access_function_arguments( call ) ),
                    },
                }
                for invocation, call in zip( invocations, calls )
                if invocation is not None ],
            ''.join( texts ) )

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.CohereMessage ]:
        ''' Returns one ``{ role: 'tool', tool_call_id, content }`` each.

            Structured data goes in ``document`` blocks (objects as they
            are, other values as ``{ 'result': ... }``), text in ``text``
            blocks, errors as ``Error: ...`` text, binary content as
            textual stand-ins.
        '''
        return [
            {
                'role': 'tool',
                'tool_call_id': result.invocation_id,
                'content': _produce_blocks( result ),
            }
            for result in results ]


def produce_processor( **options: __.typx.Any ) -> CohereProcessor:
    ''' Produces processor for Cohere Chat v2 (no options). '''
    _wire.validate_options( PROVIDER, options, ( ) )
    return CohereProcessor( )


def _access_call( event: object ) -> __.typx.Any:
    return _wire.access_field( _access_message( event ), 'tool_calls' )


def _access_calls(
    native_message: object
) -> tuple[ __.typx.Any, __.cabc.Sequence[ __.typx.Any ] ]:
    access = _wire.access_field
    message = access( native_message, 'message' )
    if message is None: message = native_message
    return message, _wire.access_items(
        access( message, 'tool_calls' ), PROVIDER, 'tool_calls' )


def _access_index( event: object ) -> int:
    return _wire.access_index( event, PROVIDER, 'tool call event' )


def _access_message( event: object ) -> __.typx.Any:
    access = _wire.access_field
    return access( access( event, 'delta' ), 'message' )


def _produce_message(
    plan: str, calls: list[ _natives.CohereToolCall ], text: str
) -> _natives.CohereAssistantMessage:
    message: _natives.CohereAssistantMessage = { 'role': 'assistant' }
    if plan: message[ 'tool_plan' ] = plan
    if calls: message[ 'tool_calls' ] = calls
    if text or not calls:
        message[ 'content' ] = [ { 'type': 'text', 'text': text } ]
    return message


def _produce_blocks(
    result: __.canisters.ResultCanister
) -> list[ _natives.CohereTextBlock | _natives.CohereDocumentBlock ]:
    blocks: list[
        _natives.CohereTextBlock | _natives.CohereDocumentBlock ] = [ ]
    if result.is_error( ):
        error = __.typx.cast( __.canisters.Fault, result.error )
        blocks.append( { 'type': 'text', 'text': f"Error: {error.message}" } )
    for item in result.content:
        if isinstance( item, __.canisters.StructureContent ):
            data = item.data
            blocks.append( {
                'type': 'document',
                'document': {
                    'data': data if isinstance( data, dict )
                    else { 'result': data } } } )
        else:
            blocks.append( {
                'type': 'text',
                'text': __.canisters.render_content_text( item ) } )
    if not blocks: blocks.append( { 'type': 'text', 'text': _EMPTY_TEXT } )
    return blocks


def _raise_on_error( body: object, genus: object ) -> None:
    ''' Raises provider failure for an error body or error event.

        Cohere's error bodies are ``{ id?, message: "..." }``; a response's
        ``message`` is an object instead. A ``message-end`` event may carry
        ``delta.error``.
    '''
    access = _wire.access_field
    message = access( body, 'message' )
    if isinstance( message, str ) and access( body, 'finish_reason' ) is None:
        raise __.exceptions.ProviderFailure(
            PROVIDER, __.absent, __.absent, message )
    error = access( body, 'error' )
    if error is None and genus == 'message-end':
        error = access( access( body, 'delta' ), 'error' )
    if error is not None:
        raise _wire.produce_failure( PROVIDER, error )
