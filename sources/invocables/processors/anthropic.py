# SPDX-License-Identifier: Apache-2.0

''' Processor for the Anthropic Messages API.

    Tools go out as ``{ name, description, input_schema }``; calls come back
    as ``tool_use`` content blocks (server-executed blocks, such as
    ``server_tool_use``, are skipped); results go back as one user message
    of ``tool_result`` blocks. Streams are read from the raw events
    (``stream = True``): ``content_block_start``, ``content_block_delta``
    with ``input_json_delta``, ``content_block_stop``, ``message_delta``
    and ``error``.
'''


import invocables.processors.__ as __
import invocables.processors.base as _base
import invocables.processors.natives as _natives
import invocables.processors.streaming as _streaming
import invocables.processors._wire as _wire

# Type checkers see through 'module.TYPE_CHECKING', not through the hub.
import typing_extensions as _typx


PROVIDER = 'anthropic'

_STATUSES = __.types.MappingProxyType( {
    'api_error': 500,
    'authentication_error': 401,
    'billing_error': 402,
    'invalid_request_error': 400,
    'not_found_error': 404,
    'overloaded_error': 529,
    'permission_error': 403,
    'rate_limit_error': 429,
    'request_too_large': 413,
    'timeout_error': 504,
} )
_STOPS_TRUNCATING = frozenset( (
    'max_tokens', 'model_context_window_exceeded', 'pause_turn', 'refusal',
) )

# Other APIs name their event types with dots or dashes.
_GENERA_FOREIGN = __.re.compile( r'[.-]' )
_GENERA_KNOWN = frozenset( (
    'content_block_delta', 'content_block_start', 'content_block_stop',
    'error', 'message_delta', 'message_start', 'message_stop', 'ping',
) )
_DELTAS_FIELDS = __.types.MappingProxyType( {
    'text_delta': 'text',
    'thinking_delta': 'thinking',
    'signature_delta': 'signature',
    'input_json_delta': 'partial_json',
} )

_MessageBlock: __.typx.TypeAlias = dict[ str, __.typx.Any ]
if not _typx.TYPE_CHECKING: # plain dictionaries; the SDK's types below
    _Block = _ResultBlock = _wire.NativeObject
else:
    from anthropic import types as _sdk
    _Block = (
        _sdk.TextBlockParam | _sdk.ImageBlockParam | _sdk.DocumentBlockParam )
    _ResultBlock = _sdk.ToolResultBlockParam


class AnthropicAccumulator(
    _streaming.AccumulatorBase[ _natives.AnthropicMessage ]
):
    ''' Accumulates raw Messages stream events into tool calls.

        A ``tool_use`` block is complete at its ``content_block_stop``; a
        block cut off (for example by ``max_tokens``) is never emitted. A
        stopped block whose JSON does not parse waits for the stop reason:
        cut off, it is interrupted; otherwise it is emitted as invalid.
        The blocks are also assembled, for :py:meth:`produce_message`.
    '''

    __slots__ = ( '_blocks', '_pieces', '_stopped' )

    provider = PROVIDER

    def __init__( self ) -> None:
        super( ).__init__( )
        self._blocks: dict[ int, _MessageBlock ] = { }
        self._pieces: dict[ int, dict[ str, list[ object ] ] ] = { }
        # Blocks stopped with JSON that does not parse wait for the stop
        # reason: cut off by the token limit, they are never emitted.
        self._stopped: list[ int ] = [ ]

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _wire.Invocations:
        ''' Maps one raw stream event onto the accumulator. '''
        access = _wire.access_field
        genus = _wire.access_genus( event, label )
        if genus not in _GENERA_KNOWN:
            _wire.validate_genus(
                PROVIDER, genus, _GENERA_FOREIGN, 'Messages' )
        match genus:
            case 'content_block_start':
                return self._ingest_start( event )
            case 'content_block_delta':
                self._ingest_delta( event )
            case 'content_block_stop':
                return self._ingest_stop( event )
            case 'message_delta':
                stop = access( access( event, 'delta' ), 'stop_reason' )
                self.stop = stop
                if stop in _STOPS_TRUNCATING:
                    self.record_truncation( stop )
                    return ( )
                return self._release_stopped( )
            case 'message_stop':
                self.finish( )
                if self.reason == _streaming.REASON_DEFAULT:
                    return self._release_stopped( )
            case 'error':
                raise _produce_failure( access( event, 'error' ) )
            case _: pass # New event types must not break a stream.
        return ( )

    def produce_message( self ) -> _natives.AnthropicMessage:
        ''' Returns ``{ role: 'assistant', content: [ ... ] }``.

            Holds every content block of the stream (text, thinking with
            its signature, server tools, ...), in order, with each
            ``tool_use`` block as emitted (blocks cut off are left out), so
            that the message can start the next turn.
        '''
        emitted = {
            emission.index: emission.invocation
            for emission in self.survey_invocations( ) }
        content: list[ _MessageBlock ] = [ ]
        for index, block in self._blocks.items( ):
            block_ = _assemble_block( block, self._pieces.get( index, { } ) )
            if block_.get( 'type' ) == 'tool_use':
                invocation = emitted.get( index )
                if invocation is None: continue
                block_[ 'id' ] = invocation.identifier
                block_[ 'input' ] = invocation.arguments
            content.append( block_ )
        return _produce_message( content )

    def _ingest_delta( self, event: object ) -> None:
        access = _wire.access_field
        index = _wire.access_index( event, PROVIDER, 'content_block_delta' )
        delta = access( event, 'delta' )
        genus = access( delta, 'type' )
        if genus == 'input_json_delta' and self.is_open( index ) and (
            not self._stopped
        ): # Hot path: input of an open tool_use block.
            self.extend_call( index, access( delta, 'partial_json' ) )
            return
        if genus == 'citations_delta':
            self._append_citation( index, access( delta, 'citation' ) )
            return
        field = _DELTAS_FIELDS.get( genus ) if isinstance(
            genus, str ) else None
        if field is None: return # New delta types must not break a stream.
        piece = access( delta, field )
        if genus == 'text_delta': self.record_text( piece )
        if field == 'partial_json':
            if index not in self._blocks and piece:
                raise __.exceptions.ResponseInvalidity(
                    PROVIDER,
                    f"input of block {index} came before its start." )
            if index in self._stopped and piece:
                raise __.exceptions.ResponseInvalidity(
                    PROVIDER, f"input of block {index} came after its stop." )
            self.extend_call( index, piece )
        block = self._blocks.get( index )
        if block is None or not isinstance( piece, str ): return
        if field != 'partial_json' or block.get( 'type' ) != 'tool_use':
            self._pieces.setdefault( index, { } ).setdefault(
                field, [ ] ).append( piece )

    def _append_citation( self, index: int, citation: object ) -> None:
        if index not in self._blocks or citation is None: return
        self._pieces.setdefault( index, { } ).setdefault(
            'citations', [ ] ).append( _wire.nativize_object( citation ) )

    def _ingest_start( self, event: object ) -> _wire.Invocations:
        access = _wire.access_field
        index = _wire.access_index( event, PROVIDER, 'content_block_start' )
        block = access( event, 'content_block' )
        genus = access( block, 'type' )
        if not isinstance( genus, str ):
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, "content_block_start has no typed content_block." )
        previous = self._blocks.get( index )
        if previous is not None and self.is_open( index ) and (
            previous.get( 'id' ) != access( block, 'id' )
        ):
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, f"block {index} started again before its stop." )
        block_ = _wire.nativize_object( block )
        if isinstance( block_, dict ):
            self._blocks[ index ] = __.typx.cast( _MessageBlock, block_ )
            self._pieces.pop( index, None )
        if genus != 'tool_use': return ( )
        identifier = access( block, 'id' )
        return self.commence_call(
            index,
            identifier if isinstance( identifier, str ) and identifier
            else None,
            _wire.access_text( access( block, 'name' ), PROVIDER, 'name' ),
            initial = access( block, 'input' ) )

    def _ingest_stop( self, event: object ) -> _wire.Invocations:
        index = _wire.access_index( event, PROVIDER, 'content_block_stop' )
        if not self.is_open( index ) or index in self._stopped: return ( )
        if self.is_whole( index ): return self.complete_call( index )
        self._stopped.append( index )
        return ( )

    def _release_stopped( self ) -> _wire.Invocations:
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        for index in self._stopped:
            invocations.extend( self.complete_call( index ) )
        self._stopped.clear( )
        return tuple( invocations )


class AnthropicProcessor(
    _base.ProcessorBase[
        _natives.AnthropicTool, _natives.AnthropicMessage,
        _natives.AnthropicMessage ]
):
    ''' Processor for the Anthropic Messages API. '''

    accumulator_class = AnthropicAccumulator

    def prepare_message(
        self, native_message: object
    ) -> _natives.AnthropicMessage:
        ''' Returns ``{ role: 'assistant', content: [ ... ] }`` of whole
            message (SDK ``Message``, dict, or list of content blocks).

            Holds every content block (text, thinking with its signature,
            server tools, ...), in order, as plain dictionaries, with the id
            of each ``tool_use`` block as its canister has it. Raises as
            ``normalize_invocations`` does.
        '''
        invocations = iter( self.access_invocations( native_message ) )
        access = _wire.access_field
        if isinstance( native_message, ( list, tuple ) ):
            blocks = __.typx.cast( __.cabc.Sequence[ object ], native_message )
        else:
            blocks = _wire.access_items(
                access( native_message, 'content' ), PROVIDER, 'content' )
        content: list[ _MessageBlock ] = [ ]
        for block in blocks:
            block_ = _wire.nativize_object( block )
            if not isinstance( block_, dict ): continue
            block__ = __.typx.cast( _MessageBlock, block_ )
            if block__.get( 'type' ) == 'tool_use':
                invocation = next( invocations )
                if invocation is None: continue # repeated id: not run
                block__[ 'id' ] = invocation.identifier
            content.append( block__ )
        return _produce_message( content )

    def produce_tool(
        self, name: str, description: str, schema: _wire.NativeObject
    ) -> _natives.AnthropicTool:
        ''' Returns tool as ``{ name, description, input_schema }``. '''
        if description:
            return {
                'name': name, 'description': description,
                'input_schema': schema }
        return { 'name': name, 'input_schema': schema }

    def produce_tools(
        self, *columns: __.cabc.Sequence[ __.typx.Any ]
    ) -> list[ _natives.AnthropicTool ]:
        ''' Returns what ``produce_tool`` gives for each tool (names,
            descriptions and schemas, by column), in one pass.
        '''
        names, descriptions, schemas = columns
        return [
            { 'name': name, 'description': description,
              'input_schema': schema }
            if description else { 'name': name, 'input_schema': schema }
            for name, description, schema in zip(
                names, descriptions, schemas ) ]

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns client tool calls of message (SDK ``Message``, dict, or
            list of content blocks).

            Error bodies raise provider failure; a ``tool_use`` block cut off
            by the token limit raises invocation interruption.
        '''
        access = _wire.access_field
        if access( native_message, 'type' ) == 'error':
            raise _produce_failure( access( native_message, 'error' ) )
        if isinstance( native_message, ( list, tuple ) ):
            blocks = __.typx.cast( __.cabc.Sequence[ object ], native_message )
        else:
            _validate_message( native_message )
            blocks = _wire.access_items(
                access( native_message, 'content' ), PROVIDER, 'content' )
        stop = access( __.typx.cast( object, native_message ), 'stop_reason' )
        if (
            blocks and stop in _STOPS_TRUNCATING
            and access( blocks[ -1 ], 'type' ) == 'tool_use'
        ): # The API gives no partial JSON to check: the last call is cut.
            raise __.exceptions.InvocationTruncation(
                [ str( access( blocks[ -1 ], 'name' ) ) ],
                f"the response stopped for reason {stop!r}." )
        uses = [
            block for block in blocks
            if access( block, 'type' ) == 'tool_use' ]
        return _wire.produce_invocations(
            PROVIDER, uses, ( 'id', 'name', 'input' ) )

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.AnthropicMessage ]:
        ''' Returns one user message of ``tool_result`` blocks (or none).

            Images of the kinds Anthropic takes go as base64 image blocks,
            PDF documents as document blocks; other binary content becomes a
            textual stand-in. Errors set ``is_error``.
        '''
        if not results: return [ ]
        return [ {
            'role': 'user',
            'content': [ _nativize_result( result ) for result in results ],
        } ]


def produce_processor( **options: __.typx.Any ) -> AnthropicProcessor:
    ''' Produces processor for the Anthropic Messages API (no options). '''
    _wire.validate_options( PROVIDER, options, ( ) )
    return AnthropicProcessor( )


def _assemble_block(
    block: _MessageBlock, pieces: __.cabc.Mapping[ str, list[ object ] ]
) -> _MessageBlock:
    ''' Returns block with its streamed pieces joined (once). '''
    block_ = dict( block )
    for field, parts in pieces.items( ):
        prefix = block_.get( field )
        if field == 'citations':
            block_[ field ] = [
                *( __.typx.cast( list[ object ], prefix )
                   if isinstance( prefix, list ) else ( ) ), *parts ]
            continue
        text = ''.join( __.typx.cast( list[ str ], parts ) )
        if field != 'partial_json':
            block_[ field ] = (
                prefix + text if isinstance( prefix, str ) else text )
            continue
        if not text.strip( ): continue
        arguments, invalidity = _wire.decode_arguments( text )
        if __.is_absent( invalidity ): block_[ 'input' ] = arguments
    return block_


def _produce_message(
    content: list[ _MessageBlock ]
) -> _natives.AnthropicMessage:
    ''' Returns assistant message of content blocks (plain dictionaries
        of the API's blocks, which type checkers cannot follow).
    '''
    return __.typx.cast(
        _natives.AnthropicMessage,
        { 'role': 'assistant', 'content': content } )


def _nativize_binary(
    data: bytes, media_type: str, content: __.canisters.Content
) -> _Block | None:
    if _wire.is_image_media_type( media_type ):
        return {
            'type': 'image',
            'source': {
                'type': 'base64', 'media_type': media_type,
                'data': _wire.encode_base64( data ) } }
    if media_type == 'application/pdf':
        return {
            'type': 'document',
            'source': {
                'type': 'base64', 'media_type': media_type,
                'data': _wire.encode_base64( data ) } }
    return _nativize_text( content )


def _nativize_content( content: __.canisters.Content ) -> _Block | None:
    match content:
        case __.canisters.TextContent( ):
            if not content.text: return None
            return { 'type': 'text', 'text': content.text }
        case __.canisters.ImageContent( ):
            return _nativize_binary(
                content.data, content.media_type, content )
        case __.canisters.ResourceContent( ):
            data = content.data
            if __.is_absent( data ) or __.is_absent( content.media_type ):
                return _nativize_text( content )
            return _nativize_binary( data, content.media_type, content )
        case _: return _nativize_text( content )


def _nativize_result(
    result: __.canisters.ResultCanister
) -> _ResultBlock:
    blocks: list[ _Block ] = [ ]
    if not __.is_absent( result.error ):
        blocks.append( {
            'type': 'text', 'text': f"Error: {result.error.message}" } )
    for content in result.content:
        block = _nativize_content( content )
        if block is not None: blocks.append( block )
    native: _ResultBlock = {
        'type': 'tool_result', 'tool_use_id': result.invocation_id }
    if blocks: native[ 'content' ] = blocks
    if result.is_error( ): native[ 'is_error' ] = True
    return native


def _nativize_text( content: __.canisters.Content ) -> _Block | None:
    text = __.canisters.render_content_text( content )
    if not text: return None
    return { 'type': 'text', 'text': text }


def _produce_failure( error: object ) -> __.exceptions.ProviderFailure:
    genus = _wire.access_field( error, 'type' )
    status = _STATUSES.get( genus, __.absent ) if isinstance(
        genus, str ) else __.absent
    return _wire.produce_failure( PROVIDER, error, status )


def _validate_message( message: object ) -> None:
    ''' Raises response invalidity unless message has Anthropic's shape.
    '''
    _wire.validate_shape(
        PROVIDER, message, ( 'content', ), 'a Messages API message' )
    if _wire.access_field( message, 'tool_calls' ) is not None:
        raise __.exceptions.ResponseInvalidity(
            PROVIDER, "the message has 'tool_calls': it is a message of "
            "another provider, not of the Messages API." )
