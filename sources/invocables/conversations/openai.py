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
        ''' Calls ``client.chat.completions.create``; returns its reply.

            The assistant message is the processor's (``prepare_message``):
            the text less the calls written in it, and each call under the
            id of its canister.
        '''
        completion = await self.client.chat.completions.create(
            **self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( completion )
        message = dict( self.processor.prepare_message( completion ) )
        text = message.get( 'content' )
        return _base.Reply(
            response = completion, messages = ( message, ),
            invocations = invocations,
            text = text if isinstance( text, str ) else '' )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.chat.completions.create`` with ``stream``;
            yields the text which the accumulator releases as it comes,
            then the tool calls and the reply.
        '''
        accumulator = self.processor.produce_accumulator( )

        def reply(
            events: tuple[ object, ... ], invocations: _base.Invocations
        ) -> _base.Reply:
            message = dict( accumulator.produce_message( ) )
            text = message.get( 'content' )
            return _base.Reply(
                response = list( events ), messages = ( message, ),
                invocations = invocations,
                text = text if isinstance( text, str ) else '' )

        stream = await self.client.chat.completions.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            # The SDK consumes the closing '[DONE]': pass it on.
            texter = _base.produce_texter( accumulator, _access_delta )
            async for portion in self.relay_continuous(
                stream, accumulator, texter, reply, finals = ( '[DONE]', )
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


def _access_delta( chunk: object ) -> str:
    ''' Returns text delta of the first choice of chunk. '''
    access = __.processors.wire.access_field
    choices = access( chunk, 'choices' )
    if not isinstance( choices, ( list, tuple ) ) or not choices: return ''
    choice = __.typx.cast( __.cabc.Sequence[ object ], choices )[ 0 ]
    text = access( access( choice, 'delta' ), 'content' )
    return text if isinstance( text, str ) else ''
