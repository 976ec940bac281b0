# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an Anthropic client (Messages API).

    Works with ``anthropic.AsyncAnthropic`` (and its Bedrock and Vertex
    variants): whole responses come from ``client.messages.create``,
    streamed ones from ``client.messages.stream``. The transcript holds
    ``{ role, content }`` messages; the system prompt goes in ``system``.
    The SDK is never imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'anthropic'
TOKENS_MAXIMUM = 4096


class AnthropicConversation( _base.ConversationBase ):
    ''' Conversation loop over an Anthropic client.

        ``tokens_maximum`` (Anthropic's ``max_tokens``) defaults to 4096.
    '''

    provider = PROVIDER

    processor: __.processors.InvocationsProcessor = __.dcls.field(
        default_factory = lambda: __.processors.produce_processor(
            PROVIDER ) )

    def produce_message( self, prompt: str ) -> _base.NativeObject:
        ''' Returns ``{ role: 'user', content: prompt }``. '''
        return { 'role': 'user', 'content': prompt }

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.messages.create``; returns its reply. '''
        response = await self.client.messages.create(
            **self._produce_request( messages, tools ) )
        return self._produce_reply(
            response, self.processor.normalize_invocations( response ) )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.messages.stream``; yields text deltas and tool
            calls as they come, then the reply.
        '''
        accumulator = self.processor.produce_accumulator( )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        async with self.client.messages.stream(
            **self._produce_request( messages, tools )
        ) as stream:
            async for event in stream:
                text = _access_text_delta( event )
                if text: yield text
                for invocation in accumulator.ingest( event ):
                    invocations.append( invocation )
                    yield invocation
            response = await stream.get_final_message( )
        for invocation in accumulator.conclude( ):
            invocations.append( invocation )
            yield invocation
        yield self._produce_reply( response, tuple( invocations ) )

    def _produce_reply(
        self, response: object, invocations: _base.Invocations
    ) -> _base.Reply:
        blocks = [
            _base.nativize_object( block )
            for block in __.processors.base.access_items(
                __.processors.base.access_field( response, 'content' ),
                PROVIDER, 'content' ) ]
        text = ''.join(
            block.get( 'text', '' ) for block in blocks
            if block.get( 'type' ) == 'text' )
        messages = (
            ( { 'role': 'assistant', 'content': blocks }, ) if blocks
            else ( ) )
        stop = __.processors.base.access_field( response, 'stop_reason' )
        return _base.Reply(
            response = response, messages = messages,
            invocations = invocations, text = text,
            resumable = stop == 'pause_turn' )

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.NativeObject:
        request: _base.NativeObject = {
            'model': self.model,
            'max_tokens': (
                TOKENS_MAXIMUM if __.is_absent( self.tokens_maximum )
                else self.tokens_maximum ),
            'messages': messages,
        }
        if tools: request[ 'tools' ] = tools
        if not __.is_absent( self.instructions ):
            request[ 'system' ] = self.instructions
        request.update( self.parameters )
        return request


def _access_text_delta( event: object ) -> str:
    access = __.processors.base.access_field
    if access( event, 'type' ) != 'content_block_delta': return ''
    delta = access( event, 'delta' )
    if access( delta, 'type' ) != 'text_delta': return ''
    text = access( delta, 'text' )
    return text if isinstance( text, str ) else ''
