# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over a Mistral client (``mistralai``).

    Whole responses come from ``client.chat.complete_async``, streamed ones
    from ``client.chat.stream_async``. The transcript holds ``{ role,
    content }`` messages, assistant messages with ``tool_calls`` (their
    ids of nine letters and digits, as Mistral requires, the same as the
    results'), and ``{ role: 'tool', tool_call_id, name, content }``
    results; the system prompt is sent first in every request, never
    stored. ``tokens_maximum`` goes as ``max_tokens``. The SDK is never
    imported here.
'''


from . import __
from . import base as _base
from ..processors import mistral as _mistral


PROVIDER = 'mistral'


class MistralConversation(
    _base.ConversationBase[ _mistral.MistralChatMessage ]
):
    ''' Conversation loop over a Mistral client. '''

    provider = PROVIDER

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.chat.complete_async``; returns its reply. '''
        response = await self.client.chat.complete_async(
            **self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( response )
        preparer = getattr( self.processor, 'prepare_message', None )
        if callable( preparer ):
            message = __.typx.cast(
                _base.NativeObject, preparer( response ) )
        else: message = { 'role': 'assistant', 'content': '' }
        text = message.get( 'content' )
        return _base.Reply(
            response = response, messages = ( message, ),
            invocations = invocations,
            text = text if isinstance( text, str ) else '' )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.chat.stream_async``; yields text deltas and tool
            calls as they come, then the reply.
        '''
        access = __.processors.wire.access_field
        accumulator = self.processor.produce_accumulator( )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        events: list[ object ] = [ ]
        stream = await self.client.chat.stream_async(
            **self._produce_request( messages, tools ) )
        async for event in stream:
            events.append( event )
            chunk = access( event, 'data' ) or event
            choices = access( chunk, 'choices' )
            if isinstance( choices, list ) and choices:
                text = access( access(
                    __.typx.cast( list[ object ], choices )[ 0 ], 'delta' ),
                    'content' )
                if isinstance( text, str ) and text: yield text
            for invocation in accumulator.ingest( event ):
                invocations.append( invocation )
                yield invocation
        for invocation in accumulator.ingest( '[DONE]' ) + (
            accumulator.conclude( )
        ):
            invocations.append( invocation )
            yield invocation
        message = accumulator.produce_message( )
        text = message.get( 'content' )
        yield _base.Reply(
            response = events, messages = ( message, ),
            invocations = tuple( invocations ),
            text = text if isinstance( text, str ) else '' )

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.NativeObject:
        request: _base.NativeObject = {
            'model': self.model,
            'messages': self.prefix_instructions( messages ) }
        if tools: request[ 'tools' ] = tools
        if not __.is_absent( self.tokens_maximum ):
            request[ 'max_tokens' ] = self.tokens_maximum
        request.update( self.parameters )
        return request
