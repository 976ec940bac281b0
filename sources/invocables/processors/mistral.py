# SPDX-License-Identifier: Apache-2.0

''' Processor for Mistral's chat API (``chat.complete``, ``chat.stream``).

    The shapes are those of OpenAI Chat Completions, and so is the
    dialect of JSON Schema: tools go out as ``{ type: 'function',
    function: { name, description, parameters } }``; calls come back in
    ``message.tool_calls`` with arguments as JSON text or as an object
    (the SDK allows both); streams carry each call whole in one delta, or
    (for models served through the API by others) incrementally.

    Mistral requires the id of a tool call sent back to it to be exactly
    nine letters and digits. Ids are read as sent (a foreign id such as
    ``chatcmpl-tool-...`` included), and mapped only when written back:
    :py:func:`nativize_identifier` keeps an id of that shape and maps any
    other one (including ids synthesized for calls which came without
    one) to nine characters derived from it, deterministically, so that
    the assistant message (:py:meth:`MistralProcessor.prepare_message`, or
    the accumulator's ``produce_message``) and the results
    (``nativize_results``: one ``{ role: 'tool', tool_call_id, name,
    content }`` message each) always agree. Typed objects of the
    ``mistralai`` SDK and plain dictionaries are accepted alike.
'''


import invocables.processors.__ as __
import invocables.processors.base as _base
import invocables.processors._wire as _wire
import invocables.processors.openai as _openai

# Type checkers see through 'module.TYPE_CHECKING', not through the hub.
import typing_extensions as _typx


PROVIDER = 'mistral'

# Type checkers see the SDK's own parameter types (``Tool``, ``ToolMessage``,
# ``AssistantMessage`` and ``ChatCompletionRequestMessage`` of
# ``mistralai.client.models``, as typed dictionaries); at run time each
# alias stands for plain dictionaries and no SDK is imported.
if not _typx.TYPE_CHECKING:
    MistralTool = __.typx.TypeAliasType( 'MistralTool', _base.NativeObject )
    MistralMessage = __.typx.TypeAliasType(
        'MistralMessage', _base.NativeObject )
    MistralAssistantMessage = __.typx.TypeAliasType(
        'MistralAssistantMessage', _base.NativeObject )
    MistralChatMessage = __.typx.TypeAliasType(
        'MistralChatMessage', _base.NativeObject )
else:
    from mistralai.client import models as _models
    MistralTool = _models.ToolTypedDict
    MistralMessage = _models.ToolMessageTypedDict
    MistralAssistantMessage = _models.AssistantMessageTypedDict
    MistralChatMessage = _models.ChatCompletionRequestMessageTypedDict

_ALPHABET = (
    '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz' )
_IDENTIFIER_LENGTH = 9
_identifier = __.re.compile( r'[A-Za-z0-9]{9}' )


class MistralAccumulator(
    _openai.OpenaiAccumulator[ MistralAssistantMessage ]
):
    ''' Accumulates Mistral chat chunks into tool calls.

        As for Chat Completions; the assistant message of the stream has
        ids of Mistral's shape.
    '''

    __slots__ = ( )

    provider = PROVIDER

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _base.Invocations:
        ''' Maps one chunk (or ``[DONE]``) onto the accumulator.

            Takes the SDK's events (``CompletionEvent``, whose ``data`` is
            the chunk), chunks, and their JSON text.
        '''
        data = _wire.access_field( event, 'data' )
        if data is not None and _wire.access_field(
            event, 'choices'
        ) is None: event = data
        event = _nativize( event )
        _raise_on_error( event )
        return super( ).ingest_event( event, label )

    def produce_message( self ) -> MistralAssistantMessage:
        ''' Returns ``{ role: 'assistant', content, tool_calls }`` with
            ids of Mistral's shape.
        '''
        return _nativize_calls( super( ).produce_message( ) )


class MistralProcessor(
    _base.ProcessorBase[ MistralTool, MistralMessage, MistralAssistantMessage ]
):
    ''' Processor for Mistral's chat API. '''

    accumulator_class = MistralAccumulator

    def __init__( self, *, choice: int = 0 ):
        self._chat = _openai.OpenaiProcessor( choice = choice )
        self.choice = choice

    def produce_accumulator( self ) -> MistralAccumulator:
        ''' Produces accumulator for one streamed response. '''
        return MistralAccumulator( choice = self.choice )

    def produce_tool(
        self, name: str, description: str, schema: _base.NativeObject
    ) -> MistralTool:
        ''' Returns tool as ``{ type: 'function', function: ... }``. '''
        return { 'type': 'function', 'function': {
            'name': name, 'description': description, 'parameters': schema,
        } } if description else { 'type': 'function', 'function': {
            'name': name, 'parameters': schema } }

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns tool calls of response, choice or message.

            Error bodies (``{ detail }`` or ``{ object: 'error', ... }``)
            raise provider failure.
        '''
        native_message = _nativize( native_message )
        _raise_on_error( native_message )
        try: return self._chat.produce_invocations( native_message )
        except __.exceptions.ResponseInvalidity as exception:
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, exception.reason ) from exception

    def prepare_message(
        self, native_message: object
    ) -> MistralAssistantMessage:
        ''' Returns assistant message of whole response for the next turn:
            its text and calls, with ids of Mistral's shape (those of
            ``nativize_results``).
        '''
        invocations = [
            invocation
            for invocation in self.access_invocations( native_message )
            if invocation is not None ]
        message, _ = _access_message(
            _nativize( native_message ), self.choice )
        text = _wire.access_field( message, 'content' )
        native: MistralAssistantMessage = {
            'role': 'assistant',
            'content': text if isinstance( text, str ) else '' }
        if invocations:
            native[ 'tool_calls' ] = [
                {
                    'id': nativize_identifier( invocation.identifier ),
                    'type': 'function',
                    'function': {
                        'name': invocation.name,
                        'arguments': __.json.dumps(
                            invocation.arguments, ensure_ascii = False ),
                    },
                }
                for invocation in invocations ]
        return native

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ MistralMessage ]:
        ''' Returns one ``{ role: 'tool', tool_call_id, name, content }``
            each, with ids of Mistral's shape.

            Content is text: structured data as JSON, binary content as a
            textual stand-in, errors prefixed with ``Error:``.
        '''
        messages: list[ MistralMessage ] = [ ]
        for result in results:
            message: MistralMessage = {
                'role': 'tool',
                'tool_call_id': nativize_identifier( result.invocation_id ),
                'content': result.as_text( ),
            }
            if result.name: message[ 'name' ] = result.name
            messages.append( message )
        return messages


def nativize_identifier( identifier: str ) -> str:
    ''' Returns id of call as Mistral takes it: nine letters and digits.

        An id of that shape is kept; any other is mapped to nine characters
        derived from its SHA-256 digest (deterministic, so that a call and
        its result always agree).
    '''
    if _identifier.fullmatch( identifier ): return identifier
    number = int.from_bytes(
        __.hashlib.sha256( identifier.encode( ) ).digest( )[ : 8 ], 'big' )
    characters: list[ str ] = [ ]
    for _ in range( _IDENTIFIER_LENGTH ):
        number, remainder = divmod( number, len( _ALPHABET ) )
        characters.append( _ALPHABET[ remainder ] )
    return ''.join( characters )


def produce_processor( **options: __.typx.Any ) -> MistralProcessor:
    ''' Produces processor for Mistral's chat API; option ``choice`` (the
        index of the choice to read, default 0).
    '''
    _wire.validate_options( PROVIDER, options, ( 'choice', ) )
    return MistralProcessor( **options )


def _access_message(
    native_message: object, choice: int
) -> tuple[ object, object ]:
    access = _wire.access_field
    choices = access( native_message, 'choices' )
    if choices is not None:
        selected = _wire.survey_choices(
            _wire.access_items( choices, PROVIDER, 'choices' ), choice )
        if not selected: return None, None
        return access( selected[ 0 ], 'message' ), None
    message = access( native_message, 'message' )
    return ( native_message if message is None else message ), None


def _nativize( value: object ) -> object:
    ''' Returns plain JSON of SDK object: the SDK marks fields not sent
        with a sentinel of its own, which only its dump leaves out.
    '''
    if isinstance( value, ( dict, list, str, bytes, bytearray ) ):
        return __.typx.cast( object, value )
    if not callable( getattr( value, 'model_dump', None ) ): return value
    native = _wire.nativize_object( value, aliases = True )
    # The SDK gives calls sent without id the id 'null' (a string).
    for choice in _wire.access_items(
        _wire.access_field( native, 'choices' ), PROVIDER, 'choices'
    ):
        for field in ( 'delta', 'message' ):
            calls = _wire.access_field(
                _wire.access_field( choice, field ), 'tool_calls' )
            if not isinstance( calls, list ): continue
            for call in __.typx.cast( list[ object ], calls ):
                if not isinstance( call, dict ): continue
                call_ = __.typx.cast( dict[ str, object ], call )
                if call_.get( 'id' ) == 'null': del call_[ 'id' ]
    return native


def _nativize_calls(
    message: MistralAssistantMessage
) -> MistralAssistantMessage:
    calls = message.get( 'tool_calls' )
    if not calls: return message
    message[ 'tool_calls' ] = [
        { **call, 'id': nativize_identifier( call.get( 'id' ) or '' ) }
        for call in calls ]
    return message


def _raise_on_error( body: object ) -> None:
    ''' Raises provider failure for Mistral's error bodies. '''
    if not isinstance( body, __.cabc.Mapping ): return
    body_ = __.typx.cast( __.cabc.Mapping[ str, object ], body )
    if 'choices' in body_: return
    detail = body_.get( 'detail' )
    if detail is not None:
        message = detail if isinstance( detail, str ) else (
            __.json.dumps( detail, default = repr ) )
        raise __.exceptions.ProviderFailure(
            PROVIDER, __.absent, __.absent, message )
    if body_.get( 'object' ) == 'error':
        raise _wire.produce_failure( PROVIDER, body_ )
