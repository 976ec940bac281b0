# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an Amazon Bedrock Runtime client (Converse).

    Works with aiobotocore's asynchronous client and with boto3's
    synchronous one (whose calls and stream reads then run in a worker
    thread, so that the event loop never blocks): whole responses come
    from ``client.converse``, streamed ones from ``client.converse_stream``.
    The transcript holds Converse messages (``{ role, content: [ blocks ]
    }``): user prompts as text blocks, assistant messages with ``toolUse``
    blocks, results as one user message of ``toolResult`` blocks. The
    system prompt goes in ``system``, never into the transcript;
    ``tokens_maximum`` goes as ``inferenceConfig.maxTokens``. The SDK is
    never imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'bedrock'


class BedrockConversation(
    _base.ConversationBase[ __.processors.natives.BedrockMessage ]
):
    ''' Conversation loop over a Bedrock Runtime client (Converse API). '''

    provider = PROVIDER

    def produce_message( self, prompt: str ) -> _base.NativeObject:
        ''' Returns ``{ role: 'user', content: [ { text: prompt } ] }``. '''
        return { 'role': 'user', 'content': [ { 'text': prompt } ] }

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.converse``; returns its reply. '''
        response = await _call(
            self.client.converse, self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( response )
        access = __.processors.wire.access_field
        message = _base.nativize_object(
            access( access( response, 'output' ), 'message' ) or {
                'role': 'assistant', 'content': [ ] } )
        return _base.Reply(
            response = response, messages = ( message, ),
            invocations = invocations, text = _join_texts( message ) )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.converse_stream``; yields text deltas and tool
            calls as they come, then the reply.
        '''
        access = __.processors.wire.access_field
        accumulator = self.processor.produce_accumulator( )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        events: list[ object ] = [ ]
        response = await _call(
            self.client.converse_stream,
            self._produce_request( messages, tools ) )
        async for event in _iterate( access( response, 'stream' ) ):
            events.append( event )
            delta = access( access( event, 'contentBlockDelta' ), 'delta' )
            text = access( delta, 'text' )
            if isinstance( text, str ) and text: yield text
            for invocation in accumulator.ingest( event ):
                invocations.append( invocation )
                yield invocation
        for invocation in accumulator.conclude( ):
            invocations.append( invocation )
            yield invocation
        message = accumulator.produce_message( )
        yield _base.Reply(
            response = events, messages = ( message, ),
            invocations = tuple( invocations ), text = _join_texts( message ) )

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.NativeObject:
        request: _base.NativeObject = {
            'modelId': self.model, 'messages': messages }
        if tools: request[ 'toolConfig' ] = { 'tools': tools }
        if not __.is_absent( self.instructions ):
            request[ 'system' ] = [ { 'text': self.instructions } ]
        if not __.is_absent( self.tokens_maximum ):
            request[ 'inferenceConfig' ] = {
                'maxTokens': self.tokens_maximum }
        request.update( self.parameters )
        return request


async def _call(
    method: __.typx.Any, request: _base.NativeObject
) -> __.typx.Any:
    ''' Calls method of asynchronous client, or of synchronous client in a
        worker thread.
    '''
    if __.inspect.iscoroutinefunction( __.inspect.unwrap( method ) ):
        return await method( **request )
    result = await __.asyncio.to_thread( lambda: method( **request ) )
    if __.inspect.isawaitable( result ): return await result
    return result


async def _iterate( stream: __.typx.Any ) -> __.cabc.AsyncIterator[ object ]:
    ''' Yields events of asynchronous stream, or of synchronous stream
        read in a worker thread.
    '''
    if hasattr( stream, '__aiter__' ):
        async for event in stream: yield event
        return
    iterator = iter( stream )
    end = object( )
    while True:
        event = await __.asyncio.to_thread( next, iterator, end )
        if event is end: return
        yield event


def _join_texts( message: _base.NativeObject ) -> str:
    blocks = message.get( 'content' )
    if not isinstance( blocks, list ): return ''
    texts = [
        block.get( 'text' ) for block in __.typx.cast(
            list[ dict[ str, object ] ], blocks )
        if isinstance( block, dict ) ]
    return ''.join( text for text in texts if isinstance( text, str ) )
