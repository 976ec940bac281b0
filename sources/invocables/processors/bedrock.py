# SPDX-License-Identifier: Apache-2.0

''' Processor for Amazon Bedrock's Converse API (``converse`` and
    ``converse_stream``).

    Tools go out as ``{ toolSpec: { name, description, inputSchema: { json:
    schema } } }`` (for ``toolConfig = { 'tools': [ ... ] }``), in the JSON
    Schema dialect of the Anthropic models which Bedrock serves (an object
    root; other models take the same); calls come back as ``toolUse``
    blocks (``toolUseId``, ``name``, ``input`` as an object) of
    ``output.message.content``; results go back as one user message of
    ``toolResult`` blocks (text, JSON, images; ``status: 'error'`` for
    errors). Streams are read from the events of ``converse_stream`` as
    boto3 and aiobotocore give them (one-key dictionaries such as ``{
    'contentBlockDelta': { ... } }``), or as the payload of a raw event
    with its ``:event-type`` given as label. Tools which Bedrock runs
    itself (``type: 'server_tool_use'``, such as ``nova_grounding``) are
    never read as calls. boto3 has no typed objects: plain dictionaries are
    its native shape.
'''


import invocables.processors.__ as __
import invocables.processors.base as _base
import invocables.processors.natives as _natives
import invocables.processors.streaming as _streaming
import invocables.processors._wire as _wire


PROVIDER = 'bedrock'

_EVENTS = (
    'contentBlockDelta', 'contentBlockStart', 'contentBlockStop',
    'messageStart', 'messageStop', 'metadata',
)
_IMAGE_FORMATS = __.types.MappingProxyType( {
    'image/gif': 'gif', 'image/jpeg': 'jpeg', 'image/png': 'png',
    'image/webp': 'webp',
} )
_SERVER_TOOL = 'server_tool_use'
_STOPS_TRUNCATING = frozenset( (
    'max_tokens', 'model_context_window_exceeded' ) )


class BedrockAccumulator(
    _streaming.AccumulatorBase[ _natives.BedrockMessage ]
):
    ''' Accumulates ``converse_stream`` events into tool calls.

        Calls are keyed by content block index; a call is complete at its
        ``contentBlockStop``. Input arrives as text fragments (joined and
        parsed once). A stop for ``max_tokens`` leaves open calls
        interrupted. Exception events raise provider failure.
    '''

    __slots__ = ( '_blocks', '_texts' )

    provider = PROVIDER

    def __init__( self ) -> None:
        super( ).__init__( )
        self._blocks: list[ tuple[ int, str ] ] = [ ]
        self._texts: dict[ int, list[ str ] ] = { }

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _base.Invocations:
        ''' Maps one event onto the accumulator. '''
        if not __.is_absent( label ): event = { label: event }
        _raise_on_exception( event )
        _wire.validate_shape(
            PROVIDER, event, _EVENTS, 'a Converse stream event' )
        access = _wire.access_field
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        start = access( event, 'contentBlockStart' )
        if start is not None: self._commence( start )
        delta = access( event, 'contentBlockDelta' )
        if delta is not None: self._extend( delta )
        stop = access( event, 'contentBlockStop' )
        if stop is not None:
            index = _wire.access_index(
                stop, PROVIDER, 'contentBlockStop', 'contentBlockIndex' )
            invocations.extend( self.complete_call( index ) )
        ending = access( event, 'messageStop' )
        if ending is not None:
            self.finish( )
            reason = access( ending, 'stopReason' )
            truncated = reason in _STOPS_TRUNCATING
            if truncated:
                self.record_truncation( reason )
            invocations.extend( self.complete_calls( truncated = truncated ) )
        return tuple( invocations )

    def produce_message( self ) -> _natives.BedrockMessage:
        ''' Returns ``{ role: 'assistant', content: [ ... ] }``: the text
            and each call emitted so far, in the order of their blocks.
        '''
        calls = {
            emission.index: emission.invocation
            for emission in self.survey_invocations( ) }
        content: list[ _natives.BedrockBlock ] = [ ]
        for index, kind in self._blocks:
            if kind == 'text':
                text = ''.join( self._texts.get( index, ( ) ) )
                if text: content.append( { 'text': text } )
                continue
            invocation = calls.get( index )
            if invocation is None: continue
            content.append( { 'toolUse': {
                'toolUseId': invocation.identifier,
                'name': invocation.name,
                'input': dict( invocation.arguments ) } } )
        return { 'role': 'assistant', 'content': content }

    def _commence( self, start: object ) -> None:
        access = _wire.access_field
        index = _wire.access_index(
            start, PROVIDER, 'contentBlockStart', 'contentBlockIndex' )
        use = access( access( start, 'start' ), 'toolUse' )
        if use is None or access( use, 'type' ) == _SERVER_TOOL: return
        tag = access( use, 'toolUseId' )
        self.commence_call(
            index, tag if isinstance( tag, str ) and tag else None,
            _wire.access_text( access( use, 'name' ), PROVIDER, 'name' ) )
        self._blocks.append( ( index, 'call' ) )

    def _extend( self, delta: object ) -> None:
        access = _wire.access_field
        index = _wire.access_index(
            delta, PROVIDER, 'contentBlockDelta', 'contentBlockIndex' )
        piece = access( delta, 'delta' )
        text = access( piece, 'text' )
        self.record_text( text )
        if isinstance( text, str ):
            if index not in self._texts:
                self._texts[ index ] = [ ]
                self._blocks.append( ( index, 'text' ) )
            self._texts[ index ].append( text )
            return
        use = access( piece, 'toolUse' )
        if use is not None: self.extend_call( index, access( use, 'input' ) )


class BedrockProcessor(
    _base.ProcessorBase[
        _base.NativeObject, _natives.BedrockMessage, _natives.BedrockMessage ]
):
    ''' Processor for Amazon Bedrock's Converse API. '''

    accumulator_class = BedrockAccumulator

    def produce_tool(
        self, name: str, description: str, schema: _base.NativeObject
    ) -> _base.NativeObject:
        ''' Returns tool as ``{ toolSpec: { name, description,
            inputSchema: { json } } }``.
        '''
        specification: _base.NativeObject = {
            'name': name, 'inputSchema': { 'json': schema } }
        if description: specification[ 'description' ] = description
        return { 'toolSpec': specification }

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns tool calls of Converse response or message.

            Error bodies (``{ message }``, whose type Bedrock sends in a
            header) raise provider failure; calls of a response which
            stopped on ``max_tokens`` raise truncation if cut off.
        '''
        message, stop = _access_message( native_message )
        calls = [
            access_use( block )
            for block in _wire.access_items(
                _wire.access_field( message, 'content' ), PROVIDER,
                'content' )
            if access_use( block ) is not None ]
        calls = [
            call for call in calls
            if _wire.access_field( call, 'type' ) != _SERVER_TOOL ]
        if calls and stop in _STOPS_TRUNCATING:
            _wire.validate_whole_calls( PROVIDER, (
                ( _access_name( call ), _wire.access_field( call, 'input' ) )
                for call in calls ), stop )
        return tuple(
            _wire.produce_invocation(
                _wire.access_field( call, 'toolUseId' ), _access_name( call ),
                _wire.access_field( call, 'input' ), position )
            for position, call in enumerate( calls ) )

    def prepare_message(
        self, native_message: object
    ) -> _natives.BedrockMessage:
        ''' Returns ``{ role: 'assistant', content: [ ... ] }`` of whole
            Converse response or message.

            Holds every content block (text, reasoning, tools which Bedrock
            runs itself, ...), in order, with the ``toolUseId`` of each
            call as its canister has it. Raises as
            ``normalize_invocations`` does.
        '''
        invocations = iter( self.access_invocations( native_message ) )
        message, _ = _access_message( native_message )
        content: list[ _natives.BedrockBlock ] = [ ]
        for block in _wire.access_items(
            _wire.access_field( message, 'content' ), PROVIDER, 'content'
        ):
            native = _wire.nativize_object( block )
            if not isinstance( native, dict ): continue
            # A block of the API: a key of its own type.
            block_ = __.typx.cast( _natives.BedrockBlock, native )
            use = block_.get( 'toolUse' )
            if use is not None and use.get( 'type' ) != _SERVER_TOOL:
                invocation = next( invocations )
                if invocation is None: continue # repeated id: not run
                block_[ 'toolUse' ] = {
                    **use, 'toolUseId': invocation.identifier }
            content.append( block_ )
        return { 'role': 'assistant', 'content': content }

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.BedrockMessage ]:
        ''' Returns one user message of ``toolResult`` blocks (or none).

            Text goes as text blocks, structured data as JSON blocks,
            images of the kinds Bedrock takes as image blocks (raw bytes,
            as boto3 takes them); other content as text. Errors set
            ``status: 'error'``.
        '''
        if not results: return [ ]
        return [ {
            'role': 'user',
            'content': [
                { 'toolResult': _nativize_result( result ) }
                for result in results ],
        } ]


def access_use( block: object ) -> object:
    ''' Returns ``toolUse`` of content block, if any. '''
    return _wire.access_field( block, 'toolUse' )


def produce_processor( **options: __.typx.Any ) -> BedrockProcessor:
    ''' Produces processor for the Converse API (no options). '''
    _wire.validate_options( PROVIDER, options, ( ) )
    return BedrockProcessor( )


def _access_message( native: object ) -> tuple[ object, object ]:
    ''' Returns message and stop reason of response, or message itself. '''
    access = _wire.access_field
    output = access( native, 'output' )
    if output is not None:
        return access( output, 'message' ), access( native, 'stopReason' )
    if access( native, 'content' ) is not None: return native, None
    message = access( native, 'message' )
    if isinstance( message, str ):
        raise _wire.produce_failure( PROVIDER, message )
    _wire.validate_shape(
        PROVIDER, native, ( 'output', 'content' ),
        'a Converse response or message' )
    return None, None # pragma: no cover


def _access_name( call: object ) -> str:
    return _wire.access_text(
        _wire.access_field( call, 'name' ), PROVIDER, 'name' )


def _nativize_content(
    content: __.canisters.Content
) -> _base.NativeObject | None:
    match content:
        case __.canisters.TextContent( ):
            return { 'text': content.text } if content.text else None
        case __.canisters.StructureContent( ):
            return { 'json': content.data }
        case __.canisters.ImageContent( ) if (
            content.media_type in _IMAGE_FORMATS
        ):
            return { 'image': {
                'format': _IMAGE_FORMATS[ content.media_type ],
                'source': { 'bytes': content.data } } }
        case _:
            text = __.canisters.render_content_text( content )
            return { 'text': text } if text else None


def _nativize_result(
    result: __.canisters.ResultCanister
) -> _natives.BedrockToolResult:
    blocks: list[ _base.NativeObject ] = [ ]
    if not __.is_absent( result.error ):
        blocks.append( { 'text': f"Error: {result.error.message}" } )
    for content in result.content:
        block = _nativize_content( content )
        if block is not None: blocks.append( block )
    # Bedrock refuses a result without content, and blank text blocks.
    if not blocks: blocks.append( { 'text': '(no output)' } )
    native: _natives.BedrockToolResult = {
        'toolUseId': result.invocation_id, 'content': blocks }
    if result.is_error( ): native[ 'status' ] = 'error'
    return native


def _raise_on_exception( event: object ) -> None:
    ''' Raises provider failure for exception events of the stream. '''
    if not isinstance( event, __.cabc.Mapping ): return
    for key, value in __.typx.cast(
        __.cabc.Mapping[ object, object ], event
    ).items( ):
        if isinstance( key, str ) and key.endswith( 'Exception' ):
            message = _wire.access_field( value, 'message' )
            raise __.exceptions.ProviderFailure(
                PROVIDER, __.absent, key[ 0 ].upper( ) + key[ 1 : ],
                message if isinstance( message, str ) else key )
