# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over Ollama's native chat API, by plain HTTP.

    The client is the application's ``httpx.AsyncClient`` whose
    ``base_url`` is the Ollama server (such as ``http://127.0.0.1:11434``):
    whole and streamed responses come from ``POST /api/chat``; streams are
    newline-delimited JSON. The transcript holds Ollama's ``{ role,
    content }`` messages (assistant messages as the server sent them, with
    ``tool_calls`` and ``thinking``) and ``{ role: 'tool', content,
    tool_name }`` results; the system prompt is sent first in every
    request, never stored. ``tokens_maximum`` is sent as the option
    ``num_predict``; ``parameters`` are further fields of the request (such
    as ``options`` or ``think``). Error bodies raise
    :py:class:`invocables.exceptions.ProviderFailure`. For Ollama's
    OpenAI-compatible endpoint, use the 'openai' loop instead.
'''


from . import __
from . import base as _base


PROVIDER = 'ollama'
_PATH = '/api/chat'


class OllamaConversation( _base.ConversationBase ):
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
            __.processors.base.access_field( body, 'message' ) or { } )
        text = __.processors.base.access_text(
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
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        assembly = _Assembly( )
        async with self.client.stream(
            'POST', _PATH,
            json = self._produce_request( messages, tools, streaming = True )
        ) as response:
            if response.status_code >= 400: # noqa: PLR2004
                _decode_body( await response.aread( ), response.status_code )
            async for line in response.aiter_lines( ):
                if not line.strip( ): continue
                chunk = _decode_body( line.encode( ), response.status_code )
                text = assembly.ingest( chunk )
                if text: yield text
                for invocation in accumulator.ingest( chunk ):
                    invocations.append( invocation )
                    yield invocation
        for invocation in accumulator.conclude( ):
            invocations.append( invocation )
            yield invocation
        yield _base.Reply(
            response = assembly.chunks, messages = ( assembly.message, ),
            invocations = tuple( invocations ),
            text = assembly.message[ 'content' ] )

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


class _Assembly:
    ''' Assembles streamed chunks into one assistant message. '''

    __slots__ = ( 'chunks', 'message' )

    def __init__( self ) -> None:
        self.chunks: list[ object ] = [ ]
        self.message: _base.NativeObject = {
            'role': 'assistant', 'content': '' }

    def ingest( self, chunk: object ) -> str:
        ''' Ingests chunk; returns its text delta. '''
        access = __.processors.base.access_field
        self.chunks.append( chunk )
        message = access( chunk, 'message' )
        for field in ( 'content', 'thinking' ):
            piece = access( message, field )
            if isinstance( piece, str ) and piece:
                self.message[ field ] = self.message.get( field, '' ) + piece
        calls = access( message, 'tool_calls' )
        if isinstance( calls, list ) and calls:
            self.message.setdefault( 'tool_calls', [ ] ).extend(
                __.typx.cast( list[ object ], calls ) )
        text = access( message, 'content' )
        return text if isinstance( text, str ) else ''


def _decode_body( content: bytes, status: int ) -> object:
    ''' Decodes JSON body; error bodies raise provider failure. '''
    try: body = __.json.loads( content )
    except ValueError as exception:
        raise __.exceptions.ResponseInvalidity(
            PROVIDER, f"body is not JSON (status {status}): {exception}"
        ) from exception
    error = __.processors.base.access_field( body, 'error' )
    if error is not None:
        failure = __.processors.base.produce_failure( PROVIDER, error )
        raise __.exceptions.ProviderFailure(
            PROVIDER, status, failure.genus, failure.message )
    return body
