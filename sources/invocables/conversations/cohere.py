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


class CohereConversation( _base.ConversationBase ):
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
        access = __.processors.base.access_field
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
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        events: list[ object ] = [ ]
        texts: list[ str ] = [ ]
        plans: list[ str ] = [ ]
        async for event in self.client.chat_stream(
            **self._produce_request( messages, tools )
        ):
            events.append( event )
            text, plan = _access_deltas( event )
            if plan: plans.append( plan )
            if text:
                texts.append( text )
                yield text
            for invocation in accumulator.ingest( event ):
                invocations.append( invocation )
                yield invocation
        for invocation in accumulator.conclude( ):
            invocations.append( invocation )
            yield invocation
        text = ''.join( texts )
        yield _base.Reply(
            response = events,
            messages = ( _produce_message(
                text, ''.join( plans ), invocations ), ),
            invocations = tuple( invocations ), text = text )

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


def _access_deltas( event: object ) -> tuple[ str, str ]:
    ''' Returns text delta and tool plan delta of stream event. '''
    access = __.processors.base.access_field
    genus = access( event, 'type' )
    message = access( access( event, 'delta' ), 'message' )
    if genus == 'content-delta':
        text = access( access( message, 'content' ), 'text' )
        return ( text if isinstance( text, str ) else '' ), ''
    if genus == 'tool-plan-delta':
        plan = access( message, 'tool_plan' )
        return '', ( plan if isinstance( plan, str ) else '' )
    return '', ''


def _access_text( content: object ) -> str:
    ''' Returns text of message content (text, or list of parts). '''
    if isinstance( content, str ): return content
    access = __.processors.base.access_field
    texts: list[ str ] = [ ]
    for part in __.processors.base.access_items(
        content, PROVIDER, 'content'
    ):
        text = access( part, 'text' )
        if access( part, 'type' ) == 'text' and isinstance( text, str ):
            texts.append( text )
    return ''.join( texts )


def _produce_message(
    text: str,
    plan: str,
    invocations: __.cabc.Sequence[ __.canisters.InvocationCanister ],
) -> _base.NativeObject:
    ''' Produces assistant message of streamed response. '''
    message: _base.NativeObject = { 'role': 'assistant' }
    if plan: message[ 'tool_plan' ] = plan
    if invocations:
        message[ 'tool_calls' ] = [
            {
                'id': invocation.identifier,
                'type': 'function',
                'function': {
                    'name': invocation.name,
                    'arguments': __.json.dumps(
                        invocation.arguments, ensure_ascii = False ),
                },
            }
            for invocation in invocations ]
    if text or not invocations:
        message[ 'content' ] = [ { 'type': 'text', 'text': text } ]
    return message
