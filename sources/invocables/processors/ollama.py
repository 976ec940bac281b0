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


from . import __
from . import base as _base
from . import natives as _natives
from . import streaming as _streaming
from . import wire as _wire


PROVIDER = 'ollama'



class OllamaAccumulator( _streaming.AccumulatorBase ):
    ''' Accumulates streamed ``/api/chat`` chunks into tool calls.

        Each chunk carries whole calls, so each call is complete in the
        chunk which carries it. Chunks may be given decoded or as lines of
        JSON text; a call after the final chunk (``done``) raises response
        invalidity. The text is kept for :py:meth:`produce_message`.
    '''

    __slots__ = ( '_done', '_serial', '_texts', '_thoughts' )

    provider = PROVIDER

    def __init__( self ) -> None:
        super( ).__init__( )
        self._done = False
        self._serial = 0
        self._texts: list[ str ] = [ ]
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
        for pieces, field in (
            ( self._texts, 'content' ), ( self._thoughts, 'thinking' )
        ):
            piece = _wire.access_field( message, field )
            if isinstance( piece, str ) and piece: pieces.append( piece )
        calls = _access_calls( event )
        if calls and self._done:
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, "tool calls came after the final chunk." )
        if _wire.access_field( event, 'done' ) is True: self._done = True
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        for call in calls:
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
        return tuple( invocations )

    def produce_message( self ) -> _wire.NativeObject:
        ''' Returns ``{ role: 'assistant', content, tool_calls }``.

            Holds the text (and thinking) of the stream and each call
            emitted so far, with its arguments as an object, so that the
            message can start the next turn.
        '''
        message: _wire.NativeObject = {
            'role': 'assistant', 'content': ''.join( self._texts ) }
        thinking = ''.join( self._thoughts )
        if thinking: message[ 'thinking' ] = thinking
        calls: list[ _wire.NativeObject ] = [ ]
        for emission in self.survey_invocations( ):
            invocation = emission.invocation
            call: _wire.NativeObject = { 'function': {
                'name': invocation.name,
                'arguments': invocation.arguments } }
            if not invocation.identifier_synthesized:
                call[ 'id' ] = invocation.identifier
            calls.append( call )
        if calls: message[ 'tool_calls' ] = calls
        return message


class OllamaProcessor(
    _base.ProcessorBase[ _natives.OllamaTool, _natives.OllamaMessage ]
):
    ''' Processor for Ollama's native chat API. '''

    provider = PROVIDER
    dialect = __.providers.PROVIDERS[ PROVIDER ].dialect
    accumulator_class = OllamaAccumulator

    def produce_tool(
        self, name: str, description: str, schema: _wire.NativeObject
    ) -> _natives.OllamaTool:
        ''' Returns tool as ``{ type: 'function', function: ... }``. '''
        return _wire.produce_function_tool( name, description, schema )

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns tool calls of chat response or message.

            Error bodies (``{ error: "..." }``) raise provider failure.
        '''
        _raise_on_error( native_message )
        _validate_body( native_message )
        return tuple(
            _wire.produce_invocation(
                _wire.access_field( call, 'id' ),
                _access_name( _wire.access_field( call, 'function' ) ),
                _wire.access_field(
                    _wire.access_field( call, 'function' ), 'arguments' ),
                position )
            for position, call in enumerate(
                _access_calls( native_message ) ) )

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
    ''' Produces processor for Ollama's native chat API (no options). '''
    _wire.validate_options( PROVIDER, options, ( ) )
    return OllamaProcessor( )


def _access_calls( body: object ) -> __.cabc.Sequence[ __.typx.Any ]:
    message = _wire.access_field( body, 'message' )
    if message is None: message = body
    return _wire.access_items(
        _wire.access_field( message, 'tool_calls' ), PROVIDER, 'tool_calls' )


def _access_name( function: object ) -> str:
    return _wire.access_text(
        _wire.access_field( function, 'name' ), PROVIDER, 'name' )


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
        'an Ollama chat response or message' )
    if _wire.access_field( body, 'type' ) is not None:
        raise __.exceptions.ResponseInvalidity(
            PROVIDER, "the payload has a 'type': it is not an Ollama chat "
            "response or message (the payload of another provider?)." )
