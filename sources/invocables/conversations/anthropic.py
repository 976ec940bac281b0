# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an Anthropic client (Messages API).

    Works with ``anthropic.AsyncAnthropic`` (and its Bedrock and Vertex
    variants): whole and streamed responses come from
    ``client.messages.create`` (streams as raw events, assembled here, so
    that arguments which are not JSON reach the model as an error result
    rather than failing the stream). The transcript holds ``{ role,
    content }`` messages; the system prompt goes in ``system``. The SDK is
    never imported here.
'''


from . import __
from . import base as _base


PROVIDER = 'anthropic'
TOKENS_MAXIMUM = 4096

_DELTAS_FIELDS = ( # delta type, field of block which it extends
    ( 'text_delta', 'text' ),
    ( 'thinking_delta', 'thinking' ),
    ( 'signature_delta', 'signature' ),
    ( 'citations_delta', 'citation' ),
)


class AnthropicConversation( _base.ConversationBase ):
    ''' Conversation loop over an Anthropic client.

        ``tokens_maximum`` (Anthropic's ``max_tokens``) defaults to 4096.
    '''

    provider = PROVIDER

    async def request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.Reply:
        ''' Calls ``client.messages.create``; returns its reply. '''
        response = await self.client.messages.create(
            **self._produce_request( messages, tools ) )
        return self._produce_reply(
            response, self.processor.normalize_invocations( response ) )

    async def request_continuous(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> __.cabc.AsyncIterator[ _base.Portion ]:
        ''' Calls ``client.messages.create`` with ``stream``; yields text
            deltas and tool calls as they come, then the reply.
        '''
        accumulator = self.processor.produce_accumulator( )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        assembly = _Assembly( )
        stream = await self.client.messages.create(
            **self._produce_request( messages, tools ), stream = True )
        async with stream: # closes the response, also when abandoned
            async for event in stream:
                text = assembly.ingest( event )
                if text: yield text
                for invocation in accumulator.ingest( event ):
                    invocations.append( invocation )
                    yield invocation
        for invocation in accumulator.conclude( ):
            invocations.append( invocation )
            yield invocation
        yield self._produce_reply( assembly.message, tuple( invocations ) )

    def _produce_reply(
        self, response: object, invocations: _base.Invocations
    ) -> _base.Reply:
        blocks = [
            _base.nativize_object( block )
            for block in __.processors.base.access_items(
                __.processors.base.access_field( response, 'content' ),
                PROVIDER, 'content' ) ]
        text = ''.join(
            block.get( 'text', '' ) for block in blocks
            if block.get( 'type' ) == 'text' )
        messages = (
            ( { 'role': 'assistant', 'content': blocks }, ) if blocks
            else ( ) )
        stop = __.processors.base.access_field( response, 'stop_reason' )
        return _base.Reply(
            response = response, messages = messages,
            invocations = invocations, text = text,
            resumable = stop == 'pause_turn' )

    def _produce_request(
        self,
        messages: list[ _base.NativeObject ],
        tools: list[ _base.NativeObject ],
    ) -> _base.NativeObject:
        request: _base.NativeObject = {
            'model': self.model,
            'max_tokens': (
                TOKENS_MAXIMUM if __.is_absent( self.tokens_maximum )
                else self.tokens_maximum ),
            'messages': messages,
        }
        if tools: request[ 'tools' ] = tools
        if not __.is_absent( self.instructions ):
            request[ 'system' ] = self.instructions
        request.update( self.parameters )
        return request


class _Assembly:
    ''' Assembles raw stream events into the message they make.

        Streamed tool input which is not JSON becomes an empty input in the
        message (the API takes only objects); the accumulator marks such a
        call, and the model receives an error result for it.
    '''

    __slots__ = ( 'blocks', 'fragments', 'message' )

    def __init__( self ) -> None:
        self.blocks: dict[ int, _base.NativeObject ] = { }
        self.fragments: dict[ int, list[ str ] ] = { }
        self.message: _base.NativeObject = {
            'role': 'assistant', 'content': [ ] }

    def ingest( self, event: object ) -> str:
        ''' Ingests raw event; returns its text delta. '''
        access = __.processors.base.access_field
        match access( event, 'type' ):
            case 'message_start':
                self.message = _base.nativize_object(
                    access( event, 'message' ) )
                self.message[ 'content' ] = [ ]
            case 'content_block_start':
                block = _base.nativize_object(
                    access( event, 'content_block' ) )
                self.blocks[ access( event, 'index' ) ] = block
                self.message[ 'content' ].append( block )
            case 'content_block_delta':
                return self._ingest_delta(
                    access( event, 'index' ), access( event, 'delta' ) )
            case 'content_block_stop':
                self._complete( access( event, 'index' ) )
            case 'message_delta':
                delta = _base.nativize_object( access( event, 'delta' ) )
                self.message.update( delta )
            case _: pass
        return ''

    def _complete( self, index: int ) -> None:
        fragments = self.fragments.pop( index, None )
        block = self.blocks.get( index )
        if fragments is None or block is None: return
        text = ''.join( fragments )
        arguments: object = { }
        try: arguments = __.json.loads( text ) if text.strip( ) else { }
        except ValueError: arguments = { }
        block[ 'input' ] = arguments if isinstance( arguments, dict ) else { }

    def _ingest_delta( self, index: int, delta: object ) -> str:
        access = __.processors.base.access_field
        block = self.blocks.get( index )
        if block is None: return ''
        genus = access( delta, 'type' )
        if genus == 'input_json_delta':
            self.fragments.setdefault( index, [ ] ).append(
                access( delta, 'partial_json' ) or '' )
            return ''
        for kind, field in _DELTAS_FIELDS:
            if genus != kind: continue
            piece = access( delta, field )
            if field == 'citation':
                block.setdefault( 'citations', [ ] ).append(
                    _base.nativize_object( piece ) )
            elif isinstance( piece, str ):
                block[ field ] = block.get( field, '' ) + piece
                if field == 'text': return piece
        return ''
