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


import invocables.conversations.__ as __
import invocables.conversations.base as _base


_PATH = '/api/chat'
_PROVIDER = 'ollama'


class OllamaConversation(
    _base.ConversationBase[ __.processors.natives.OllamaChatMessage ]
):
    ''' Conversation loop over Ollama's native chat API (httpx client). '''

    provider = _PROVIDER

    async def query( self, request: _base.NativeObject ) -> object:
        ''' Posts request to ``/api/chat``; returns the decoded body. '''
        response = await self.client.post(
            _PATH, json = { 'stream': False, **request } )
        return _decode_body( response.content, response.status_code )

    @__.ctxl.asynccontextmanager
    async def query_continuous(
        self, request: _base.NativeObject
    ) -> __.cabc.AsyncGenerator[ __.cabc.AsyncIterator[ object ] ]:
        ''' Posts streamed request to ``/api/chat``; gives its chunks. '''
        async with self.client.stream(
            'POST', _PATH, json = { 'stream': True, **request }
        ) as response:
            if response.status_code >= 400: # noqa: PLR2004
                _decode_body( await response.aread( ), response.status_code )
            yield _decode_lines( response )


def _decode_body( content: bytes, status: int ) -> object:
    ''' Decodes JSON body; error bodies raise provider failure. '''
    try: body = __.json.loads( content )
    except ( ValueError, RecursionError ) as exception:
        raise __.exceptions.ResponseInvalidity(
            _PROVIDER, f"body is not JSON (status {status}): {exception}"
        ) from exception
    error = __.processors.wire.access_field( body, 'error' )
    if error is not None:
        failure = __.processors.wire.produce_failure( _PROVIDER, error )
        raise __.exceptions.ProviderFailure(
            _PROVIDER, status, failure.genus, failure.message )
    return body


async def _decode_lines(
    response: __.typx.Any
) -> __.cabc.AsyncIterator[ object ]:
    ''' Yields decoded chunk of each line of streamed body. '''
    async for line in response.aiter_lines( ):
        if not line.strip( ): continue
        yield _decode_body( line.encode( ), response.status_code )
