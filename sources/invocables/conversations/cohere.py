# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over a Cohere client (Chat v2).

    Works with ``cohere.AsyncClientV2``: whole responses come from
    ``client.chat``, streamed ones from ``client.chat_stream``. The
    transcript holds ``{ role, content }`` messages, assistant messages
    with ``tool_plan`` and ``tool_calls``, and ``{ role: 'tool',
    tool_call_id, content }`` results; the system prompt is sent first in
    every request, never stored. The SDK is never imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'cohere'


class CohereConversation(
    _base.ConversationBase[ __.processors.natives.CohereChatMessage ]
):
    ''' Conversation loop over a Cohere Chat v2 client.

        ``tokens_maximum`` is sent as ``max_tokens``.
    '''

    provider = PROVIDER

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.chat``; returns its reply. '''
        access = __.processors.wire.access_field
        response = await self.client.chat(
            **self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( response )
        message = _base.nativize_object( access( response, 'message' ) )
        message.pop( 'citations', None )
        text = _access_text( message.get( 'content' ) )
        return _base.Reply(
            response = response, messages = ( message, ),
            invocations = invocations, text = text )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.chat_stream``; yields text deltas and tool calls
            as they come, then the reply.
        '''
        accumulator = self.processor.produce_accumulator( )

        def reply(
            events: tuple[ object, ... ], invocations: _base.Invocations
        ) -> _base.Reply:
            message = accumulator.produce_message( )
            return _base.Reply(
                response = list( events ), messages = ( message, ),
                invocations = invocations,
                text = _access_text( message.get( 'content' ) ) )

        async for portion in self.relay_continuous(
            self.client.chat_stream(
                **self._produce_request( messages, tools ) ),
            accumulator, _access_delta, reply
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
            request[ 'max_tokens' ] = self.tokens_maximum
        request.update( self.parameters )
        return request


def _access_delta( event: object ) -> str:
    ''' Returns text delta of stream event. '''
    access = __.processors.wire.access_field
    if access( event, 'type' ) != 'content-delta': return ''
    message = access( access( event, 'delta' ), 'message' )
    text = access( access( message, 'content' ), 'text' )
    return text if isinstance( text, str ) else ''


def _access_text( content: object ) -> str:
    ''' Returns text of message content (text, or list of parts). '''
    if isinstance( content, str ): return content
    access = __.processors.wire.access_field
    texts: list[ str ] = [ ]
    for part in __.processors.wire.access_items(
        content, PROVIDER, 'content'
    ):
        text = access( part, 'text' )
        if access( part, 'type' ) == 'text' and isinstance( text, str ):
            texts.append( text )
    return ''.join( texts )
