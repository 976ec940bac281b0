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


class OpenaiResponsesConversation(
    _base.ConversationBase[ __.processors.natives.OpenaiResponsesItem ]
):
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
        accumulator = self.processor.produce_accumulator( )
        stream = await self.client.responses.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            async for portion in self.relay_continuous(
                stream, accumulator, _access_delta, _produce_stream_reply
            ): yield portion

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


def _access_delta( event: object ) -> str:
    ''' Returns text delta of stream event. '''
    access = __.processors.wire.access_field
    if access( event, 'type' ) != 'response.output_text.delta': return ''
    text = access( event, 'delta' )
    return text if isinstance( text, str ) else ''


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
        for item in __.processors.wire.access_items(
            __.processors.wire.access_field( response, 'output' ),
            PROVIDER, 'output' ) )
    return _base.Reply(
        response = response, messages = items,
        invocations = invocations, text = _access_text( items ) )


def _produce_stream_reply(
    events: __.cabc.Sequence[ object ], invocations: _base.Invocations
) -> _base.Reply:
    ''' Returns reply of the response which concluded the stream. '''
    access = __.processors.wire.access_field
    for event in reversed( events ):
        response = access( event, 'response' )
        if access( event, 'type' ) in _CONCLUSIONS and response is not None:
            return _produce_reply( response, invocations )
    raise __.exceptions.ResponseInvalidity(
        PROVIDER, "the stream ended without a completed response." )
