# SPDX-License-Identifier: Apache-2.0

''' Processor for Ollama's native chat API (``/api/chat``).

    Tools go out as ``{ type: 'function', function: { name, description,
    parameters } }``; calls come back in ``message.tool_calls`` with
    arguments as a JSON object (older servers send no id: distinct,
    deterministic ids are synthesized); results go back as one ``{ role:
    'tool', content, tool_name }`` message per result (with
    ``tool_call_id`` when the server gave the call an id). Streams are
    newline-delimited JSON chunks, each carrying whole tool calls. Plain
    dictionaries and typed objects of the ``ollama`` client (``ChatResponse``)
    are accepted alike. For Ollama's OpenAI-compatible ``/v1`` endpoint, use
    the 'openai' processor instead.
'''


import invocables.processors.__ as __
import invocables.processors.base as _base
import invocables.processors.natives as _natives
import invocables.processors.textcalls as _textcalls
import invocables.processors._wire as _wire


PROVIDER = 'ollama'



class OllamaAccumulator(
    _textcalls.TextCallsAccumulatorBase[ _natives.OllamaAssistantMessage ]
):
    ''' Accumulates streamed ``/api/chat`` chunks into tool calls.

        Each chunk carries whole calls, so each call is complete in the
        chunk which carries it. Chunks may be given decoded or as lines of
        JSON text; a call after the final chunk (``done``) raises response
        invalidity. The text is kept for :py:meth:`produce_message`.
    '''

    __slots__ = ( '_serial', '_thoughts' )

    provider = PROVIDER

    def __init__(
        self, text_calls: _textcalls.TextCallsOption | None = None
    ) -> None:
        super( ).__init__( text_calls )
        self._serial = 0
        self._thoughts: list[ str ] = [ ]

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _wire.Invocations:
        ''' Maps one chunk onto the accumulator. '''
        if isinstance( event, ( str, bytes, bytearray ) ):
            event = _wire.decode_event( PROVIDER, event, ( '', ) )
            if event is None: return ( )
        _raise_on_error( event )
        _validate_body( event )
        message = _wire.access_field( event, 'message' )
        thought = _wire.access_field( message, 'thinking' )
        if isinstance( thought, str ) and thought:
            self._thoughts.append( thought )
        invocations = list( self.feed_text(
            _wire.access_field( message, 'content' ) ) )
        done = _wire.access_field( event, 'done' ) is True
        for call in _access_calls( event ):
            key = ( 'call', self._serial )
            self._serial += 1
            function = _wire.access_field( call, 'function' )
            tag = _wire.access_field( call, 'id' )
            self.commence_call(
                key, tag if isinstance( tag, str ) and tag else None,
                _access_name( function ) )
            invocations.extend( self.complete_call(
                key, arguments = _wire.access_field(
                    function, 'arguments' ) ) )
        if done:
            self.finish( )
            invocations.extend( self._conclude_text( event, invocations ) )
        return tuple( invocations )

    def _conclude_text(
        self, event: object, natives: __.cabc.Sequence[ object ]
    ) -> _wire.Invocations:
        if self._calls is None: return ( )
        stop = _wire.access_field( event, 'done_reason' )
        if stop == 'length':
            self._calls.truncated = True
            self.record_truncation( stop )
        return self.conclude_text( natives )

    def produce_message( self ) -> _natives.OllamaAssistantMessage:
        ''' Returns ``{ role: 'assistant', content, tool_calls }``.

            Holds the text (and thinking) of the stream and each call
            emitted so far, with its arguments as an object, so that the
            message can start the next turn.
        '''
        invocations = [
            emission.invocation for emission in self.survey_invocations( ) ]
        return _produce_message(
            ''.join( self._texts ), ''.join( self._thoughts ), invocations )


class OllamaProcessor(
    _base.ProcessorBase[
        _natives.OllamaTool, _natives.OllamaMessage,
        _natives.OllamaAssistantMessage ]
):
    ''' Processor for Ollama's native chat API. '''

    accumulator_class = OllamaAccumulator

    def __init__( self, *, text_calls: str | None = None ):
        self.text_calls = _textcalls.TextCallsOption( text_calls )

    def observe_ensembles( self, ensembles: _base.Ensembles ) -> None:
        ''' Records the names of the tools of the ensembles: with option
            ``text_calls``, only calls written as text which name them are
            read.
        '''
        self.text_calls.record_ensembles( ensembles )

    def produce_accumulator( self ) -> OllamaAccumulator:
        ''' Produces accumulator for one streamed response. '''
        return OllamaAccumulator( text_calls = self.text_calls )

    produce_tool = _wire.produce_function_tool
    produce_tools = _wire.produce_function_tools

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns tool calls of chat response or message.

            Error bodies (``{ error: "..." }``) raise provider failure.
        '''
        _raise_on_error( native_message )
        _validate_body( native_message )
        invocations = tuple(
            _wire.produce_invocation(
                _wire.access_field( call, 'id' ),
                _access_name( _wire.access_field( call, 'function' ) ),
                _wire.access_field(
                    _wire.access_field( call, 'function' ), 'arguments' ),
                position )
            for position, call in enumerate(
                _access_calls( native_message ) ) )
        # The server read calls: text calls are dropped (see textcalls).
        if not self.text_calls.is_enabled( ) or invocations:
            return invocations
        message = _wire.access_field( native_message, 'message' )
        if message is None: message = native_message
        return self.text_calls.read(
            _wire.access_field( message, 'content' ), 0,
            truncated = _wire.access_field(
                native_message, 'done_reason' ) == 'length' )

    def prepare_message(
        self, native_message: object
    ) -> _natives.OllamaAssistantMessage:
        ''' Returns ``{ role: 'assistant', content, tool_calls }`` of whole
            chat response or message.

            Holds the text (and thinking) and each call, with its arguments
            as an object and its id when the server gave one, as the
            accumulator's message does; calls written as text (option
            ``text_calls``) are moved from the text into ``tool_calls``.
            Raises as ``normalize_invocations`` does.
        '''
        access = _wire.access_field
        invocations = self.access_invocations( native_message )
        message = access( native_message, 'message' )
        if message is None: message = native_message
        text = access( message, 'content' )
        text = text if isinstance( text, str ) else ''
        text = self.text_calls.strip( text )
        thinking = access( message, 'thinking' )
        return _produce_message(
            text, thinking if isinstance( thinking, str ) else '', [
                invocation for invocation in invocations
                if invocation is not None ] )

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.OllamaMessage ]:
        ''' Returns one ``{ role: 'tool', content, tool_name }`` each.

            Content is text: structured data as JSON, binary content as a
            textual stand-in, errors prefixed with ``Error:``. The call's
            id goes back as ``tool_call_id`` only when Ollama gave one.
        '''
        messages: list[ _natives.OllamaMessage ] = [ ]
        for result in results:
            message: _natives.OllamaMessage = {
                'role': 'tool',
                'content': result.as_text( ),
                'tool_name': result.name,
            }
            if not result.invocation_id_synthesized:
                message[ 'tool_call_id' ] = result.invocation_id
            messages.append( message )
        return messages


def produce_processor( **options: __.typx.Any ) -> OllamaProcessor:
    ''' Produces processor for Ollama's native chat API; option
        ``text_calls`` (read tool calls written as text: 'auto' or a format
        of :py:mod:`invocables.processors.textcalls`).
    '''
    _wire.validate_options( PROVIDER, options, ( 'text_calls', ) )
    return OllamaProcessor( **options )


def _access_calls( body: object ) -> __.cabc.Sequence[ __.typx.Any ]:
    message = _wire.access_field( body, 'message' )
    if message is None: message = body
    return _wire.access_items(
        _wire.access_field( message, 'tool_calls' ), PROVIDER, 'tool_calls' )


def _access_name( function: object ) -> str:
    return _wire.access_text(
        _wire.access_field( function, 'name' ), PROVIDER, 'name' )


def _produce_message(
    text: str,
    thinking: str,
    invocations: __.cabc.Sequence[ __.canisters.InvocationCanister ],
) -> _natives.OllamaAssistantMessage:
    message: _natives.OllamaAssistantMessage = {
        'role': 'assistant', 'content': text }
    if thinking: message[ 'thinking' ] = thinking
    calls: list[ _natives.OllamaToolCall ] = [ ]
    for invocation in invocations:
        call: _natives.OllamaToolCall = { 'function': {
            'name': invocation.name, 'arguments': invocation.arguments } }
        if not invocation.identifier_synthesized:
            call[ 'id' ] = invocation.identifier
        calls.append( call )
    if calls: message[ 'tool_calls' ] = calls
    return message


def _raise_on_error( body: object ) -> None:
    error = _wire.access_field( body, 'error' )
    if error is None: return
    raise _wire.produce_failure( PROVIDER, error )


def _validate_body( body: object ) -> None:
    ''' Raises response invalidity unless body is a chat response, chunk or
        message.
    '''
    _wire.validate_shape(
        PROVIDER, body, ( 'message', 'done', 'tool_calls', 'content' ),
        'an Ollama chat response or message', untyped = True )
