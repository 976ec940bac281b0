# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an OpenAI client (Responses API).

    Works with ``openai.AsyncOpenAI``: whole and streamed responses both
    come from ``client.responses.create``. The loop is stateless: every
    request carries the whole transcript as ``input`` items (the user's
    messages, the output items of each response, and the
    ``function_call_output`` items of the results), so it needs no stored
    responses. The system prompt goes in ``instructions``. The SDK is never
    imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'openai-responses'

_CONCLUSIONS = frozenset( ( 'response.completed', 'response.incomplete' ) )


class OpenaiResponsesConversation( _base.ConversationBase ):
    ''' Conversation loop over an OpenAI Responses client.

        ``tokens_maximum`` is sent as ``max_output_tokens``.
    '''

    provider = PROVIDER

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.responses.create``; returns its reply. '''
        response = await self.client.responses.create(
            **self._produce_request( messages, tools ) )
        return _produce_reply(
            response, self.processor.normalize_invocations( response ) )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.responses.create`` with ``stream``; yields text
            deltas and function calls as they come, then the reply.
        '''
        access = __.processors.base.access_field
        accumulator = self.processor.produce_accumulator( )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        response: object = None
        stream = await self.client.responses.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            async for event in stream:
                genus = access( event, 'type' )
                if genus == 'response.output_text.delta':
                    text = access( event, 'delta' )
                    if isinstance( text, str ) and text: yield text
                elif genus in _CONCLUSIONS:
                    response = access( event, 'response' )
                for invocation in accumulator.ingest( event ):
                    invocations.append( invocation )
                    yield invocation
        for invocation in accumulator.conclude( ):
            invocations.append( invocation )
            yield invocation
        if response is None:
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, "the stream ended without a completed response." )
        yield _produce_reply( response, tuple( invocations ) )

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.NativeObject:
        request: _base.NativeObject = {
            'model': self.model, 'input': messages }
        if tools: request[ 'tools' ] = tools
        if not __.is_absent( self.instructions ):
            request[ 'instructions' ] = self.instructions
        if not __.is_absent( self.tokens_maximum ):
            request[ 'max_output_tokens' ] = self.tokens_maximum
        request.update( self.parameters )
        return request


def _access_text( items: __.cabc.Sequence[ _base.NativeObject ] ) -> str:
    ''' Returns text of output messages. '''
    texts: list[ str ] = [ ]
    for item in items:
        if item.get( 'type' ) != 'message': continue
        for part in item.get( 'content' ) or ( ):
            if not isinstance( part, dict ): continue
            part_ = __.typx.cast( _base.NativeObject, part )
            text = part_.get( 'text' )
            if part_.get( 'type' ) == 'output_text' and isinstance(
                text, str
            ): texts.append( text )
    return ''.join( texts )


def _produce_reply(
    response: object, invocations: _base.Invocations
) -> _base.Reply:
    items = tuple(
        _base.nativize_object( item )
        for item in __.processors.base.access_items(
            __.processors.base.access_field( response, 'output' ),
            PROVIDER, 'output' ) )
    return _base.Reply(
        response = response, messages = items,
        invocations = invocations, text = _access_text( items ) )
