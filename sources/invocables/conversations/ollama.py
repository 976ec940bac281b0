# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over Ollama's native chat API, by plain HTTP.

    The client is the application's ``httpx.AsyncClient`` whose
    ``base_url`` is the Ollama server (such as ``http://127.0.0.1:11434``):
    whole and streamed responses come from ``POST /api/chat``; streams are
    newline-delimited JSON. The transcript holds Ollama's ``{ role,
    content }`` messages (assistant messages as the processor's
    ``prepare_message`` makes them, whole and streamed alike: the text less
    the calls written in it, ``tool_calls`` and ``thinking``) and
    ``{ role: 'tool', content, tool_name }`` results; the system prompt
    is sent first in every request, never stored. ``tokens_maximum`` is
    sent as the option ``num_predict``; ``parameters`` are further fields
    of the request (such as ``options`` or ``think``). Error bodies raise
    :py:class:`invocables.exceptions.ProviderFailure`. For Ollama's
    OpenAI-compatible endpoint, use the 'openai' loop instead.
'''


from . import __
from . import base as _base


PROVIDER = 'ollama'
_PATH = '/api/chat'


class OllamaConversation(
    _base.ConversationBase[ __.processors.natives.OllamaChatMessage ]
):
    ''' Conversation loop over Ollama's native chat API (httpx client). '''

    provider = PROVIDER

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Posts to ``/api/chat`` without streaming; returns reply. '''
        response = await self.client.post(
            _PATH, json = self._produce_request(
                messages, tools, streaming = False ) )
        body = _decode_body( response.content, response.status_code )
        invocations = self.processor.normalize_invocations( body )
        message = _base.nativize_object(
            self.processor.prepare_message( body ) )
        text = __.processors.wire.access_text(
            message.get( 'content' ), PROVIDER, 'content' )
        return _base.Reply(
            response = body, messages = ( message, ),
            invocations = invocations, text = text )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Posts to ``/api/chat`` with streaming; yields text deltas and
            tool calls as they come, then the reply.
        '''
        accumulator = self.processor.produce_accumulator( )

        def reply(
            events: tuple[ object, ... ], invocations: _base.Invocations
        ) -> _base.Reply:
            message = accumulator.produce_message( )
            return _base.Reply(
                response = list( events ), messages = ( message, ),
                invocations = invocations, text = message[ 'content' ] )

        async with self.client.stream(
            'POST', _PATH,
            json = self._produce_request( messages, tools, streaming = True )
        ) as response:
            if response.status_code >= 400: # noqa: PLR2004
                _decode_body( await response.aread( ), response.status_code )
            texter = _base.produce_texter( accumulator, _access_delta )
            async for portion in self.relay_continuous(
                _decode_lines( response ), accumulator, texter, reply
            ): yield portion

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
        *,
        streaming: bool,
    ) -> _base.NativeObject:
        messages_ = self.prefix_instructions( messages )
        request: _base.NativeObject = {
            'model': self.model, 'messages': messages_,
            'stream': streaming }
        if tools: request[ 'tools' ] = tools
        if not __.is_absent( self.tokens_maximum ):
            request[ 'options' ] = { 'num_predict': self.tokens_maximum }
        request.update( self.parameters )
        return request


def _access_delta( chunk: object ) -> str:
    ''' Returns text delta of streamed chunk. '''
    access = __.processors.wire.access_field
    text = access( access( chunk, 'message' ), 'content' )
    return text if isinstance( text, str ) else ''


def _decode_body( content: bytes, status: int ) -> object:
    ''' Decodes JSON body; error bodies raise provider failure. '''
    try: body = __.json.loads( content )
    except ValueError as exception:
        raise __.exceptions.ResponseInvalidity(
            PROVIDER, f"body is not JSON (status {status}): {exception}"
        ) from exception
    error = __.processors.wire.access_field( body, 'error' )
    if error is not None:
        failure = __.processors.wire.produce_failure( PROVIDER, error )
        raise __.exceptions.ProviderFailure(
            PROVIDER, status, failure.genus, failure.message )
    return body


async def _decode_lines(
    response: __.typx.Any
) -> __.cabc.AsyncIterator[ object ]:
    ''' Yields decoded chunk of each line of streamed body. '''
    async for line in response.aiter_lines( ):
        if not line.strip( ): continue
        yield _decode_body( line.encode( ), response.status_code )
