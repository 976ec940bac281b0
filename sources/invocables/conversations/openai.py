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


class OpenaiConversation(
    _base.ConversationBase[ __.processors.natives.OpenaiChatMessage ]
):
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
        access = __.processors.wire.access_field
        completion = await self.client.chat.completions.create(
            **self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( completion )
        choices = __.processors.wire.access_items(
            access( completion, 'choices' ), PROVIDER, 'choices' )
        message = access( choices[ 0 ], 'message' ) if choices else None
        text = __.processors.wire.access_text(
            access( message, 'content' ), PROVIDER, 'content' )
        calls = [
            _Call(
                name = access( access( call, 'function' ), 'name' ),
                arguments = access( access( call, 'function' ), 'arguments' ) )
            for call in __.processors.wire.access_items(
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

        def reply(
            events: tuple[ object, ... ], invocations: _base.Invocations
        ) -> _base.Reply:
            message = accumulator.produce_message( )
            return _base.Reply(
                response = list( events ), messages = ( message, ),
                invocations = invocations,
                text = message.get( 'content' ) or '' )

        stream = await self.client.chat.completions.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            # The SDK consumes the closing '[DONE]': pass it on.
            async for portion in self.relay_continuous(
                stream, accumulator, _access_delta, reply,
                finals = ( '[DONE]', )
            ): yield portion

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


def _access_delta( chunk: object ) -> str:
    ''' Returns text delta of the first choice of chunk. '''
    access = __.processors.wire.access_field
    choices = access( chunk, 'choices' )
    if not isinstance( choices, ( list, tuple ) ) or not choices: return ''
    choice = __.typx.cast( __.cabc.Sequence[ object ], choices )[ 0 ]
    text = access( access( choice, 'delta' ), 'content' )
    return text if isinstance( text, str ) else ''


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
                    'arguments': __.processors.wire.render_arguments(
                        calls[ index ].arguments if paired
                        else invocation.arguments ),
                },
            }
            for index, invocation in enumerate( invocations ) ]
    return _base.Reply(
        response = response, messages = ( message, ),
        invocations = invocations, text = text )
