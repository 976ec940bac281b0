# SPDX-License-Identifier: Apache-2.0

''' Processor for the OpenAI Responses API.

    Tools go out as ``{ type: 'function', name, description, parameters,
    strict }``; calls come back as output items of type ``function_call``,
    identified by their ``call_id`` (not the ``fc_`` item id); results go
    back as ``{ type: 'function_call_output', call_id, output }`` input
    items. Streams are read from the events
    ``response.output_item.added``, ``response.function_call_arguments.delta``
    and ``.done``, ``response.output_item.done``, ``response.incomplete``,
    ``response.failed`` and ``error``, keyed by output index and item id.
'''


import invocables.processors.__ as __
import invocables.processors.natives as _natives
import invocables.processors.openai as _openai
import invocables.processors.streaming as _streaming
import invocables.processors.textcalls as _textcalls
import invocables.processors._wire as _wire

# Type checkers see through 'module.TYPE_CHECKING', not through the hub.
import typing_extensions as _typx


PROVIDER = 'openai-responses'

# Other APIs name their event types with dashes, or with underscores and
# no dots (all types but 'error' of this API start with 'response.').
_GENERA_FOREIGN = __.re.compile( r'-|^[^.]*_[^.]*$' )

if not _typx.TYPE_CHECKING: # plain dictionaries; the SDK's types below
    _Output = str | list[ _wire.NativeObject ]
    _Part = _wire.NativeObject
else:
    from openai.types import responses as _sdk
    _Output = str | _sdk.ResponseFunctionCallOutputItemListParam
    _Part = _sdk.ResponseFunctionCallOutputItemParam


_Items: __.typx.TypeAlias = list[ _natives.OpenaiResponsesItem ]


class OpenaiResponsesAccumulator(
    _textcalls.TextCallsAccumulatorBase[ _Items ]
):
    ''' Accumulates Responses stream events into function calls.

        A call is complete at ``response.function_call_arguments.done`` or
        at ``response.output_item.done``, whichever comes first, and is
        emitted once, whether or not its item carries an id; an item done
        with status ``incomplete`` is never emitted. The items done are
        kept for :py:meth:`produce_message`.
    '''

    __slots__ = ( '_items', '_option' )

    provider = PROVIDER

    def __init__(
        self, text_calls: _textcalls.TextCallsOption | None = None
    ) -> None:
        super( ).__init__( text_calls )
        self._items: dict[ int, object ] = { }
        self._option = text_calls

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _wire.Invocations:
        ''' Maps one stream event onto the accumulator. '''
        access = _wire.access_field
        genus = _wire.validate_genus(
            PROVIDER, _wire.access_genus( event, label ), _GENERA_FOREIGN,
            'Responses' )
        match genus:
            case 'response.output_item.added':
                return self._ingest_item( event )
            case 'response.function_call_arguments.delta':
                self.extend_call(
                    _access_index( event ), access( event, 'delta' ),
                    _access_tag( access( event, 'item_id' ) ) )
            case 'response.function_call_arguments.done':
                arguments = access( event, 'arguments' )
                return self.complete_call(
                    _access_index( event ),
                    _access_tag( access( event, 'item_id' ) ),
                    __.absent if arguments is None else arguments )
            case 'response.output_item.done':
                self._record_item( event )
                return self._ingest_item( event, done = True )
            case 'response.incomplete':
                self.finish( )
                details = access(
                    access( event, 'response' ), 'incomplete_details' )
                stop = access( details, 'reason' )
                self.reason = f"the response is incomplete ({stop!r})."
                if self._calls is not None: self._calls.truncated = True
                return self._ingest_text_event( 'response.completed', event )
            case 'response.failed':
                error = access( access( event, 'response' ), 'error' )
                raise _wire.produce_failure( PROVIDER, error )
            case 'error':
                raise _produce_event_failure( event )
            case _: # New event types must not break a stream.
                return self._ingest_text_event( genus, event )
        return ( )

    def produce_message( self ) -> _Items:
        ''' Returns the output items of the stream, as input items.

            Holds each item done (messages, reasoning, server tools, ...),
            in order of output, and each function call emitted so far, with
            the id of its canister and its arguments as sent (calls cut off
            are left out; calls written as text follow, as function call
            items), so that the items can start the next turn.
        '''
        emitted: dict[ int, _streaming.StreamedInvocation ] = { }
        texts: list[ _streaming.StreamedInvocation ] = [ ]
        for emission in self.survey_invocations( ):
            if isinstance( emission.index, int ):
                emitted[ emission.index ] = emission
            else: texts.append( emission ) # written as text
        items: list[ _wire.NativeObject ] = [ ]
        for index in sorted( { *self._items, *emitted } ):
            item = _nativize_item( self._items.get( index ) )
            emission = emitted.get( index )
            if emission is not None:
                items.append( _produce_call( emission, item ) )
            elif item is not None and item.get( 'type' ) != 'function_call':
                items.extend( _strip_message( item, self._option ) )
        items.extend( _produce_call( emission, None ) for emission in texts )
        # Output items as the API sent them: input items of its own type.
        return __.typx.cast( _Items, items )

    def _record_item( self, event: object ) -> None:
        ''' Keeps item done, made plain only for ``produce_message``. '''
        index = _wire.access_field( event, 'output_index' )
        if isinstance( index, int ):
            self._items[ index ] = _wire.access_field( event, 'item' )

    def _ingest_text_event(
        self, genus: str, event: object
    ) -> _wire.Invocations:
        ''' Reads text deltas, and the end of the text, for text calls. '''
        if genus == 'response.completed':
            self.finish( )
            self.conclusion = _wire.access_field( event, 'response' )
            return self.conclude_text( )
        if genus != 'response.output_text.delta': return ( )
        return self.feed_text( _wire.access_field( event, 'delta' ) )

    def _ingest_item(
        self, event: object, *, done: bool = False
    ) -> _wire.Invocations:
        ''' Opens the call of a function call item added; of one done,
            opens it unless emitted already, and completes it.
        '''
        access = _wire.access_field
        item = access( event, 'item' )
        if access( item, 'type' ) != 'function_call': return ( )
        index = _access_index( event )
        tag = _access_tag( access( item, 'id' ) )
        # Done after the arguments were: the call was emitted already.
        if done and not self.is_open( index ) and self.is_closed(
            index, tag
        ): return ( )
        if self.is_repeated( index, tag ): return ( )
        emitted = self.commence_call(
            index, tag,
            _wire.access_text( access( item, 'name' ), PROVIDER, 'name' ),
            identifier = _access_tag( access( item, 'call_id' ) ) )
        arguments = access( item, 'arguments' )
        if not done:
            self.extend_call( index, arguments, tag )
            return emitted
        if access( item, 'status' ) == 'incomplete':
            self.reason = "the function call item is incomplete."
            return emitted
        return emitted + self.complete_call(
            index, tag, __.absent if arguments is None else arguments )


class OpenaiResponsesProcessor(
    _openai.StrictProcessorBase[
        _natives.OpenaiResponsesTool, _natives.OpenaiResponsesItem, _Items ]
):
    ''' Processor for the OpenAI Responses API. '''

    accumulator_class = OpenaiResponsesAccumulator

    def produce_accumulator( self ) -> OpenaiResponsesAccumulator:
        ''' Produces accumulator for one streamed response. '''
        return OpenaiResponsesAccumulator( text_calls = self.text_calls )

    def produce_tool(
        self,
        name: str,
        description: str,
        schema: _wire.NativeObject,
        strict: bool = False, # noqa: FBT001,FBT002
    ) -> _natives.OpenaiResponsesTool:
        ''' Returns tool as ``{ type: 'function', name, ... }``. '''
        if description:
            return {
                'type': 'function', 'name': name,
                'description': description, 'parameters': schema,
                'strict': strict }
        return {
            'type': 'function', 'name': name, 'parameters': schema,
            'strict': strict }

    def produce_tools(
        self, *columns: __.cabc.Sequence[ __.typx.Any ]
    ) -> list[ _natives.OpenaiResponsesTool ]:
        ''' Returns what ``produce_tool`` gives for each tool (names,
            descriptions, schemas and whether strict, by column), in one
            pass.
        '''
        names, descriptions, schemas, stricts = columns
        return [
            { 'type': 'function', 'name': name,
              'description': description, 'parameters': schema,
              'strict': strict }
            if description else {
                'type': 'function', 'name': name, 'parameters': schema,
                'strict': strict }
            for name, description, schema, strict in zip(
                names, descriptions, schemas, stricts ) ]

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns function calls of response (or of its output items).

            Echoed tool definitions are ignored. Error bodies and failed
            responses raise provider failure; an incomplete function call
            raises invocation interruption.
        '''
        access = _wire.access_field
        if isinstance( native_message, ( list, tuple ) ): items = __.typx.cast(
            __.cabc.Sequence[ object ], native_message )
        else:
            error = access( native_message, 'error' )
            if error is not None:
                raise _wire.produce_failure( PROVIDER, error )
            _wire.validate_shape(
                PROVIDER, native_message, ( 'output', ),
                'a Responses API response' )
            items = _wire.access_items(
                access( native_message, 'output' ), PROVIDER, 'output' )
        calls = [
            item for item in items
            if access( item, 'type' ) == 'function_call' ]
        incomplete = [
            str( access( call, 'name' ) ) for call in calls
            if access( call, 'status' ) == 'incomplete' ]
        if incomplete:
            raise __.exceptions.InvocationTruncation(
                incomplete, "the function call item is incomplete." )
        invocations = _wire.produce_invocations(
            PROVIDER, calls, ( 'call_id', 'name', 'arguments' ) )
        # The server read calls: text calls are dropped (see textcalls).
        if not self.text_calls.is_enabled( ) or invocations:
            return invocations
        incomplete = access( native_message, 'status' ) == 'incomplete' if (
            not isinstance( native_message, ( list, tuple ) ) ) else False
        return self.text_calls.read(
            _join_output_texts( items ), 0, truncated = incomplete )

    def prepare_message( self, native_message: object ) -> _Items:
        ''' Returns the output items of whole response (or the items
            themselves), as input items for the next request.

            Holds every item (messages, reasoning, server tools, ...), in
            order, as plain dictionaries, with the ``call_id`` of each
            function call as its canister has it; calls written as text
            (option ``text_calls``) follow, as function call items. Raises
            as ``normalize_invocations`` does.
        '''
        access = _wire.access_field
        invocations = iter( self.access_invocations( native_message ) )
        if isinstance( native_message, ( list, tuple ) ):
            outputs = __.typx.cast(
                __.cabc.Sequence[ object ], native_message )
        else:
            outputs = _wire.access_items(
                access( native_message, 'output' ), PROVIDER, 'output' )
        items: list[ _wire.NativeObject ] = [ ]
        for output in outputs:
            item = _wire.nativize_object( output )
            if not isinstance( item, dict ): continue
            item_ = __.typx.cast( _wire.NativeObject, item )
            if item_.get( 'type' ) == 'function_call':
                invocation = next( invocations )
                if invocation is None: continue # repeated id: not run
                item_[ 'call_id' ] = invocation.identifier
            items.extend( _strip_message( item_, self.text_calls ) )
        items.extend(
            _produce_text_call( invocation ) for invocation in invocations
            if invocation is not None )
        # Output items as the API sent them: input items of its own type.
        return __.typx.cast( _Items, items )

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.OpenaiResponsesItem ]:
        ''' Returns one ``function_call_output`` item per result.

            Output is text, unless images are present: then a list of
            ``input_text`` and ``input_image`` parts. Other binary content
            becomes a textual stand-in; errors are prefixed with ``Error:``.
        '''
        return [
            {
                'type': 'function_call_output',
                'call_id': result.invocation_id,
                'output': _nativize_output( result ),
            }
            for result in results ]


def produce_processor( **options: __.typx.Any ) -> OpenaiResponsesProcessor:
    ''' Produces processor for the Responses API; options ``strict`` and
        ``text_calls`` (read tool calls written as text: 'auto' or a
        format of :py:mod:`invocables.processors.textcalls`).
    '''
    _wire.validate_options( PROVIDER, options, ( 'strict', 'text_calls' ) )
    return OpenaiResponsesProcessor( **options )


def _join_output_texts( items: __.cabc.Sequence[ object ] ) -> str:
    ''' Returns text of the output messages (``output_text`` parts). '''
    access = _wire.access_field
    texts: list[ str ] = [ ]
    for item in items:
        if access( item, 'type' ) != 'message': continue
        for part in _wire.access_items(
            access( item, 'content' ), PROVIDER, 'content'
        ):
            text = access( part, 'text' )
            if access( part, 'type' ) == 'output_text' and isinstance(
                text, str
            ): texts.append( text )
    return ''.join( texts )


def _access_index( event: object ) -> int:
    return _wire.access_index(
        event, PROVIDER, 'function call event', 'output_index' )


def _access_tag( value: object ) -> str | None:
    return value if isinstance( value, str ) and value else None


def _is_image( content: __.canisters.Content ) -> bool:
    return (
        isinstance( content, __.canisters.ImageContent )
        and _wire.is_image_media_type( content.media_type ) )


def _nativize_output( result: __.canisters.ResultCanister ) -> _Output:
    if not any( _is_image( content ) for content in result.content ):
        return result.as_text( )
    parts: list[ _Part ] = [ ]
    if not __.is_absent( result.error ):
        parts.append( {
            'type': 'input_text', 'text': f"Error: {result.error.message}" } )
    for content in result.content:
        if isinstance( content, __.canisters.ImageContent ) and _is_image(
            content
        ):
            url = _wire.produce_data_url( content.media_type, content.data )
            parts.append( { 'type': 'input_image', 'image_url': url } )
            continue
        text = __.canisters.render_content_text( content )
        if text: parts.append( { 'type': 'input_text', 'text': text } )
    return parts


def _nativize_item( item: object ) -> _wire.NativeObject | None:
    native = _wire.nativize_object( item )
    if not isinstance( native, dict ): return None
    return __.typx.cast( _wire.NativeObject, native )


def _produce_call(
    emission: _streaming.StreamedInvocation,
    item: _wire.NativeObject | None,
) -> _wire.NativeObject:
    ''' Returns function call item of emitted call: its item done, if
        any, with the id of the canister and the arguments as sent.
    '''
    invocation = emission.invocation
    if item is None or item.get( 'type' ) != 'function_call':
        return _produce_text_call(
            invocation, _wire.render_arguments( emission.arguments ) )
    return {
        **item, 'call_id': invocation.identifier,
        'arguments': _wire.render_arguments( emission.arguments ) }


def _produce_text_call(
    invocation: __.canisters.InvocationCanister,
    arguments: __.Absential[ str ] = __.absent,
) -> _wire.NativeObject:
    ''' Returns function call item of call read without one. '''
    return {
        'type': 'function_call', 'call_id': invocation.identifier,
        'name': invocation.name,
        'arguments': (
            _wire.render_arguments( invocation.arguments )
            if __.is_absent( arguments ) else arguments ) }


def _produce_event_failure(
    event: object
) -> __.exceptions.ProviderFailure:
    access = _wire.access_field
    code = access( event, 'code' )
    message = access( event, 'message' )
    return __.exceptions.ProviderFailure(
        PROVIDER, __.absent,
        code if isinstance( code, str ) and code else 'error',
        message if isinstance( message, str ) else repr( message ) )


def _strip_message(
    item: _wire.NativeObject, option: _textcalls.TextCallsOption | None
) -> list[ _wire.NativeObject ]:
    ''' Returns output item, a message without the calls written in its
        text (option ``text_calls``); none if nothing else was in it.

        So that the history holds each call once, as a function call item
        which its output follows, whole and streamed alike.
    '''
    if option is None or not option.is_enabled( ) or (
        item.get( 'type' ) != 'message' ): return [ item ]
    parts: list[ object ] = [ ]
    contents = __.typx.cast(
        __.cabc.Sequence[ object ], item.get( 'content' ) or ( ) )
    for part in contents:
        text = _wire.access_field( part, 'text' )
        if _wire.access_field( part, 'type' ) != 'output_text' or (
            not isinstance( text, str )
        ):
            parts.append( part )
            continue
        text = option.strip( text )
        if text:
            parts.append( {
                **__.typx.cast( _wire.NativeObject, part ), 'text': text } )
    if not parts: return [ ]
    return [ { **item, 'content': parts } ]
