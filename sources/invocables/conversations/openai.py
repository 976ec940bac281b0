# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an OpenAI client (Chat Completions).

    Works with ``openai.AsyncOpenAI`` and with the servers which speak
    Chat Completions (Ollama, vLLM, LM Studio, OpenRouter: give the client
    their ``base_url``). Whole and streamed responses both come from
    ``client.chat.completions.create``. The transcript holds ``{ role,
    content }`` messages, assistant messages with ``tool_calls`` and
    ``{ role: 'tool', tool_call_id, content }`` results; the system prompt
    is sent first in every request, never stored. The SDK is never
    imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'openai'


class OpenaiConversation( _base.ConversationBase ):
    ''' Conversation loop over an OpenAI Chat Completions client.

        ``tokens_maximum`` is sent as ``max_completion_tokens``; servers
        which know only ``max_tokens`` take it in ``parameters``.
    '''

    provider = PROVIDER

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.chat.completions.create``; returns its reply. '''
        access = __.processors.base.access_field
        completion = await self.client.chat.completions.create(
            **self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( completion )
        choices = __.processors.base.access_items(
            access( completion, 'choices' ), PROVIDER, 'choices' )
        message = access( choices[ 0 ], 'message' ) if choices else None
        text = __.processors.base.access_text(
            access( message, 'content' ), PROVIDER, 'content' )
        calls = [
            _Call(
                name = access( access( call, 'function' ), 'name' ),
                arguments = access( access( call, 'function' ), 'arguments' ) )
            for call in __.processors.base.access_items(
                access( message, 'tool_calls' ), PROVIDER, 'tool_calls' )
            if access( call, 'type' ) in ( None, 'function' ) ]
        return _produce_reply( completion, text, calls, invocations )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.chat.completions.create`` with ``stream``;
            yields text deltas and tool calls as they come, then the reply.
        '''
        accumulator = self.processor.produce_accumulator( )
        assembly = _Assembly( )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        stream = await self.client.chat.completions.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            async for chunk in stream:
                text = assembly.ingest( chunk )
                if text: yield text
                for invocation in accumulator.ingest( chunk ):
                    invocations.append( invocation )
                    yield invocation
        # The SDK consumes the closing '[DONE]': pass it on.
        for invocation in (
            accumulator.ingest( '[DONE]' ) + accumulator.conclude( )
        ):
            invocations.append( invocation )
            yield invocation
        yield _produce_reply(
            assembly.chunks, ''.join( assembly.texts ),
            assembly.survey_calls( ), tuple( invocations ) )

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.NativeObject:
        messages_ = self.prefix_instructions( messages )
        request: _base.NativeObject = {
            'model': self.model, 'messages': messages_ }
        if tools: request[ 'tools' ] = tools
        if not __.is_absent( self.tokens_maximum ):
            request[ 'max_completion_tokens' ] = self.tokens_maximum
        request.update( self.parameters )
        return request


@__.dcls.dataclass( slots = True, kw_only = True )
class _Call:
    ''' Tool call as the model sent it: name and raw arguments. '''

    name: object
    arguments: object
    fragments: list[ str ] = __.dcls.field( default_factory = list[ str ] )
    tag: object = None


class _Assembly:
    ''' Assembles streamed chunks of the first choice into one message.

        Tool calls are keyed by index and id, as the accumulator keys them,
        so that they pair with its canisters in order of opening.
    '''

    __slots__ = ( 'chunks', 'latest', 'order', 'texts' )

    def __init__( self ) -> None:
        self.chunks: list[ object ] = [ ]
        self.latest: dict[ object, _Call ] = { }
        self.order: list[ _Call ] = [ ]
        self.texts: list[ str ] = [ ]

    def ingest( self, chunk: object ) -> str:
        ''' Ingests chunk; returns its text delta. '''
        access = __.processors.base.access_field
        self.chunks.append( chunk )
        choices = access( chunk, 'choices' )
        if not isinstance( choices, ( list, tuple ) ) or not choices:
            return ''
        choice = __.typx.cast( __.cabc.Sequence[ object ], choices )[ 0 ]
        delta = access( choice, 'delta' )
        calls = access( delta, 'tool_calls' )
        if isinstance( calls, ( list, tuple ) ):
            for position, call in enumerate(
                __.typx.cast( __.cabc.Sequence[ object ], calls )
            ): self._ingest_call( position, call )
        text = access( delta, 'content' )
        if not isinstance( text, str ) or not text: return ''
        self.texts.append( text )
        return text

    def survey_calls( self ) -> list[ _Call ]:
        ''' Returns calls, in order of opening, with joined arguments. '''
        for call in self.order:
            if call.fragments: call.arguments = ''.join( call.fragments )
        return self.order

    def _ingest_call( self, position: int, call: object ) -> None:
        access = __.processors.base.access_field
        index = access( call, 'index' )
        if index is None: index = position
        tag = access( call, 'id' )
        function = access( call, 'function' )
        name = access( function, 'name' )
        arguments = access( function, 'arguments' )
        current = self.latest.get( index )
        if current is None or ( tag and current.tag and tag != current.tag ):
            current = _Call( name = name, arguments = None, tag = tag )
            self.latest[ index ] = current
            self.order.append( current )
        if tag and not current.tag: current.tag = tag
        if name and not current.name: current.name = name
        if isinstance( arguments, str ): current.fragments.append( arguments )
        elif arguments is not None: current.arguments = arguments


def _produce_reply(
    response: object,
    text: str,
    calls: __.cabc.Sequence[ _Call ],
    invocations: _base.Invocations,
) -> _base.Reply:
    ''' Produces reply; the assistant message carries the canisters' ids.

        Ids synthesized for calls which came without one are written into
        the message, so that each result matches its call.
    '''
    message: _base.NativeObject = { 'role': 'assistant' }
    message[ 'content' ] = text if text or not invocations else None
    if invocations:
        paired = len( calls ) == len( invocations )
        message[ 'tool_calls' ] = [
            {
                'id': invocation.identifier,
                'type': 'function',
                'function': {
                    'name': invocation.name,
                    'arguments': _render_arguments(
                        calls[ index ].arguments if paired
                        else invocation.arguments ),
                },
            }
            for index, invocation in enumerate( invocations ) ]
    return _base.Reply(
        response = response, messages = ( message, ),
        invocations = invocations, text = text )


def _render_arguments( arguments: object ) -> str:
    ''' Returns arguments as the model sent them, as JSON text. '''
    if isinstance( arguments, str ): return arguments
    if arguments is None: return '{}'
    return __.json.dumps( arguments, ensure_ascii = False )
