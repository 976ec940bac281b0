# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over a Google Gemini client (google-genai).

    Works with ``google.genai.Client``, through its asynchronous side
    (``client.aio``): whole responses come from
    ``client.aio.models.generate_content``, streamed ones from
    ``generate_content_stream``. The transcript holds contents ``{ role,
    parts }`` as google-genai's typed dictionaries name them, in snake_case
    (``function_call``, ``function_response``, ``thought_signature`` as
    base64 text), which google-genai accepts as input. Tools, the system prompt
    (``system_instruction``), the token limit (``max_output_tokens``) and
    ``parameters`` go in each request's ``config``; automatic function
    calling of the SDK is disabled, since the loop calls the tools. The SDK
    is never imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'gemini'


class GeminiConversation(
    _base.ConversationBase[ __.processors.natives.GeminiContent ]
):
    ''' Conversation loop over a google-genai client.

        ``parameters`` are entries of the request's ``config`` (such as
        ``temperature`` or ``thinking_config``).
    '''

    provider = PROVIDER

    def produce_message( self, prompt: str ) -> _base.NativeObject:
        ''' Returns ``{ role: 'user', parts: [ { text: prompt } ] }``. '''
        return { 'role': 'user', 'parts': [ { 'text': prompt } ] }

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.aio.models.generate_content``; returns reply. '''
        response = await self.client.aio.models.generate_content(
            **self._produce_request( messages, tools ) )
        invocations = self.processor.normalize_invocations( response )
        parts = [
            _base.nativize_object( part )
            for part in _access_parts( response ) ]
        return _produce_reply( response, parts, invocations )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.aio.models.generate_content_stream``; yields
            text deltas and function calls as they come, then the reply.
        '''
        accumulator = self.processor.produce_accumulator( )

        def reply(
            events: tuple[ object, ... ], invocations: _base.Invocations
        ) -> _base.Reply:
            message = accumulator.produce_message( )
            return _produce_reply(
                list( events ), message[ 'parts' ], invocations )

        stream = await self.client.aio.models.generate_content_stream(
            **self._produce_request( messages, tools ) )
        async for portion in self.relay_continuous(
            stream, accumulator, _access_delta, reply
        ): yield portion

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.NativeObject:
        configuration: _base.NativeObject = {
            'automatic_function_calling': { 'disable': True } }
        if tools: configuration[ 'tools' ] = tools
        if not __.is_absent( self.instructions ):
            configuration[ 'system_instruction' ] = self.instructions
        if not __.is_absent( self.tokens_maximum ):
            configuration[ 'max_output_tokens' ] = self.tokens_maximum
        configuration.update( self.parameters )
        return {
            'model': self.model, 'contents': messages,
            'config': configuration }


def _access_delta( chunk: object ) -> str:
    ''' Returns text delta of streamed chunk (thoughts left out). '''
    return ''.join(
        _access_text( _base.nativize_object( part ) )
        for part in _access_parts( chunk ) )


def _access_parts( response: object ) -> __.cabc.Sequence[ object ]:
    ''' Returns parts of first candidate's content. '''
    access = __.processors.wire.access_field
    candidates = __.processors.wire.access_items(
        access( response, 'candidates' ), PROVIDER, 'candidates' )
    if not candidates: return ( )
    content = access( candidates[ 0 ], 'content' )
    return __.processors.wire.access_items(
        access( content, 'parts' ), PROVIDER, 'parts' )


def _access_text( part: _base.NativeObject ) -> str:
    ''' Returns text of part, unless it is a thought. '''
    text = part.get( 'text' )
    if not isinstance( text, str ) or part.get( 'thought' ): return ''
    return text


def _produce_reply(
    response: object,
    parts: list[ _base.NativeObject ],
    invocations: _base.Invocations,
) -> _base.Reply:
    parts_ = [ part for part in parts if part and part != { 'text': '' } ]
    text = ''.join( _access_text( part ) for part in parts_ )
    messages = (
        ( { 'role': 'model', 'parts': parts_ }, ) if parts_ else ( ) )
    return _base.Reply(
        response = response, messages = messages,
        invocations = invocations, text = text )
