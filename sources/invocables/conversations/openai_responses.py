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
        ''' Calls ``client.responses.create``; returns its reply.

            The items are the processor's (``prepare_message``): messages
            less the calls written in their text, and each call as a
            ``function_call`` item under the id of its canister.
        '''
        response = await self.client.responses.create(
            **self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( response )
        items = tuple(
            _base.nativize_object( item )
            for item in self.processor.prepare_message( response ) )
        return _base.Reply(
            response = response, messages = items,
            invocations = invocations, text = _access_text( items ) )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.responses.create`` with ``stream``; yields the
            text which the accumulator releases as it comes, then the
            function calls and the reply.
        '''
        accumulator = self.processor.produce_accumulator( )

        def reply(
            events: tuple[ object, ... ], invocations: _base.Invocations
        ) -> _base.Reply:
            response = _access_conclusion( events )
            items = tuple(
                _base.nativize_object( item )
                for item in accumulator.produce_message( ) )
            return _base.Reply(
                response = response, messages = items,
                invocations = invocations, text = _access_text( items ) )

        stream = await self.client.responses.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            texter = _base.produce_texter( accumulator, _access_delta )
            async for portion in self.relay_continuous(
                stream, accumulator, texter, reply
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


def _access_conclusion( events: __.cabc.Sequence[ object ] ) -> object:
    ''' Returns the response which concluded the stream. '''
    access = __.processors.wire.access_field
    for event in reversed( events ):
        response = access( event, 'response' )
        if access( event, 'type' ) in _CONCLUSIONS and response is not None:
            return response
    raise __.exceptions.ResponseInvalidity(
        PROVIDER, "the stream ended without a completed response." )
