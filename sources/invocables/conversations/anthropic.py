# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an Anthropic client (Messages API).

    Works with ``anthropic.AsyncAnthropic`` (and its Bedrock and Vertex
    variants): whole and streamed responses come from
    ``client.messages.create`` (streams as raw events, which the
    processor's accumulator reads and assembles, so that arguments which
    are not JSON reach the model as an error result rather than failing the
    stream). The transcript holds ``{ role,
    content }`` messages; the system prompt goes in ``system``. The SDK is
    never imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'anthropic'
TOKENS_MAXIMUM = 4096


class AnthropicConversation(
    _base.ConversationBase[ __.processors.natives.AnthropicMessage ]
):
    ''' Conversation loop over an Anthropic client.

        ``tokens_maximum`` (Anthropic's ``max_tokens``) defaults to 4096.
    '''

    provider = PROVIDER

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.messages.create``; returns its reply. '''
        response = await self.client.messages.create(
            **self._produce_request( messages, tools ) )
        access = __.processors.wire.access_field
        blocks = __.processors.wire.access_items(
            access( response, 'content' ), PROVIDER, 'content' )
        return _produce_reply(
            response, blocks, access( response, 'stop_reason' ),
            self.processor.normalize_invocations( response ) )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.messages.create`` with ``stream``; yields text
            deltas and tool calls as they come, then the reply.
        '''
        accumulator = self.processor.produce_accumulator( )

        def reply(
            events: tuple[ object, ... ], invocations: _base.Invocations
        ) -> _base.Reply:
            message = accumulator.produce_message( )
            return _produce_reply(
                events, message[ 'content' ], _access_stop( events ),
                invocations )

        stream = await self.client.messages.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            async for portion in self.relay_continuous(
                stream, accumulator, _access_delta, reply
            ): yield portion

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


def _access_delta( event: object ) -> str:
    ''' Returns text delta of raw stream event. '''
    access = __.processors.wire.access_field
    if access( event, 'type' ) != 'content_block_delta': return ''
    delta = access( event, 'delta' )
    if access( delta, 'type' ) != 'text_delta': return ''
    text = access( delta, 'text' )
    return text if isinstance( text, str ) else ''


def _access_stop( events: __.cabc.Sequence[ object ] ) -> object:
    ''' Returns stop reason of raw stream events. '''
    access = __.processors.wire.access_field
    for event in reversed( events ):
        if access( event, 'type' ) == 'message_delta':
            return access( access( event, 'delta' ), 'stop_reason' )
    return None


def _produce_reply(
    response: object,
    blocks: __.cabc.Sequence[ object ],
    stop: object,
    invocations: _base.Invocations,
) -> _base.Reply:
    blocks_ = [ _base.nativize_object( block ) for block in blocks ]
    text = ''.join(
        block.get( 'text', '' ) for block in blocks_
        if block.get( 'type' ) == 'text' )
    messages = (
        ( { 'role': 'assistant', 'content': blocks_ }, ) if blocks_
        else ( ) )
    return _base.Reply(
        response = response, messages = messages,
        invocations = invocations, text = text,
        resumable = stop == 'pause_turn' )
