# SPDX-License-Identifier: Apache-2.0

''' Processor for Google Gemini (generateContent, streamGenerateContent).

    Tools go out as one ``{ function_declarations: [ { name, description,
    parameters } ] }`` tool, with schemas in Gemini's OpenAPI 3 subset (the
    'gemini' dialect), or, with option ``json_schema``, in
    ``parameters_json_schema``. Calls come back as ``functionCall`` parts
    of the first candidate's content; Gemini usually sends no call id, so
    distinct, deterministic ids are synthesized. Results go back as one
    content ``{ role: 'user', parts: [ { function_response: { name,
    response } } ] }``. What goes out has the snake_case keys of
    google-genai's typed dictionaries (``ToolDict``, ``ContentDict``), which
    the REST API takes as well as camelCase. Streams carry whole calls in
    chunks, or, on Vertex AI with streamed function call arguments, a call
    opened by ``functionCall{ name, willContinue }``, filled by
    ``partialArgs`` and closed by an empty ``functionCall``. Plain
    dictionaries (camelCase or snake_case keys) and google-genai typed
    objects (such as ``GenerateContentResponse``) are accepted alike;
    google-genai is never imported.
'''


import invocables.processors.__ as __
import invocables.processors.base as _base
import invocables.processors.natives as _natives
import invocables.processors._gemini_partials as _partials
import invocables.processors.streaming as _streaming
import invocables.processors._wire as _wire

# Type checkers see through 'module.TYPE_CHECKING', not through the hub.
import typing_extensions as _typx


PROVIDER = 'gemini'

_CHUNK_FIELDS = (
    'candidates', 'usageMetadata', 'usage_metadata', 'promptFeedback',
    'prompt_feedback', 'modelVersion', 'model_version', 'responseId',
    'response_id',
)
_STOPS_TRUNCATING = frozenset( ( 'MAX_TOKENS', 'MALFORMED_FUNCTION_CALL' ) )

_access = _partials.access_aliased

if not _typx.TYPE_CHECKING: # plain dictionaries; the SDK's types below
    _Blob = _Response = _Schema = _wire.NativeObject
else:
    from google.genai import types as _sdk
    _Blob = _sdk.FunctionResponseBlobDict
    _Response = _sdk.FunctionResponseDict
    _Schema = _sdk.SchemaDict


class GeminiAccumulator(
    _streaming.AccumulatorBase[ _natives.GeminiContent ]
):
    ''' Accumulates streamed Gemini chunks into function calls.

        A whole ``functionCall`` in a chunk is complete at once. A call
        streamed with ``partialArgs`` (Vertex AI) is complete at the empty
        ``functionCall`` which closes it; string values continued over
        several chunks are joined once, at completion. A call still open at
        the end of the stream is reported as interrupted, never emitted.
        Only the first candidate is read, as for whole responses; calls
        after it finished raise response invalidity. Its parts are kept
        for :py:meth:`produce_message`.
    '''

    __slots__ = ( '_arguments', '_parts', '_serial', '_streamed' )

    provider = PROVIDER

    def __init__( self ) -> None:
        super( ).__init__( )
        self._arguments: dict[
            __.cabc.Hashable, _partials.PartialArguments ] = { }
        self._parts: list[ _Part ] = [ ]
        self._serial = 0
        self._streamed: __.cabc.Hashable | None = None

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _wire.Invocations:
        ''' Maps one chunk (object, or JSON text) onto the accumulator. '''
        if isinstance( event, ( str, bytes, bytearray ) ):
            event = _wire.decode_event( PROVIDER, event )
        _raise_on_error( event )
        _wire.validate_shape(
            PROVIDER, event, _CHUNK_FIELDS, 'a Gemini response chunk' )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        # Like whole responses, only the first candidate is read.
        for candidate in _wire.survey_choices(
            _access_candidates( event ), 0, 0
        ):
            content = _access( candidate, 'content' )
            for part in _wire.access_items(
                _access( content, 'parts' ), PROVIDER, 'parts'
            ): invocations.extend( self._ingest_part( part ) )
            stop = _access( candidate, 'finishReason', 'finish_reason' )
            if stop is None: continue
            self.finish( )
            stop = _render_enum( stop )
            if stop in _STOPS_TRUNCATING: self.record_truncation( stop )
        return tuple( invocations )

    def produce_message( self ) -> _natives.GeminiContent:
        ''' Returns ``{ role: 'model', parts: [ ... ] }``.

            Holds the parts of the first candidate (text and thoughts,
            joined chunk by chunk, thought signatures kept) and each call
            emitted so far, with its arguments as sent, so that the content
            can start the next turn.
        '''
        emitted = {
            emission.index: emission
            for emission in self.survey_invocations( ) }
        parts: list[ _wire.NativeObject ] = [ ]
        for part in self._parts:
            native = part.produce_native( emitted )
            if native is not None: parts.append( native )
        return _produce_content( parts )

    def produce_partial_text( self, index: __.cabc.Hashable ) -> str:
        ''' Returns arguments so far of open call, as JSON text. '''
        arguments = self._arguments.get( index )
        if arguments is None: return super( ).produce_partial_text( index )
        return __.json.dumps( arguments.assemble( ), ensure_ascii = False )

    def _ingest_part( self, part: object ) -> _wire.Invocations:
        call = _access( part, 'functionCall', 'function_call' )
        if call is None:
            self._record_part( part, None )
            if not _access( part, 'thought' ):
                self.record_text( _access( part, 'text' ) )
            return ( )
        name = _wire.access_text( _access( call, 'name' ), PROVIDER, 'name' )
        # Any call part (a whole call, a start, partial arguments or a
        # close) contradicts the final chunk, not only a start.
        self.validate_unfinished(
            f"a function call {name!r}" if name
            else "a part of a streamed function call" )
        partials = _access( call, 'partialArgs', 'partial_args' )
        continues = bool( _access( call, 'willContinue', 'will_continue' ) )
        if name and not continues and partials is None:
            return self._emit_whole( part, call, name )
        emitted: list[ __.canisters.InvocationCanister ] = [ ]
        if name:
            # A new call closes one left open: the provider moved on.
            if self._streamed is not None:
                emitted.extend( self._complete( self._streamed ) )
            emitted.extend( self._commence( part, call, name ) )
        key = self._streamed
        if key is None:
            if _wire.access_items( partials, PROVIDER, 'partialArgs' ):
                raise __.exceptions.ResponseInvalidity(
                    PROVIDER, "partial arguments came for no open call." )
            return tuple( emitted )
        if partials is not None: self._arguments[ key ].ingest( partials )
        if not continues: emitted.extend( self._complete( key ) )
        return tuple( emitted )

    def _commence(
        self, part: object, call: object, name: str
    ) -> _wire.Invocations:
        key = ( 0, 'streamed', self._serial )
        self._serial += 1
        identifier = _access( call, 'id' )
        emitted = self.commence_call(
            key, None, name,
            identifier if isinstance( identifier, str ) else None )
        self._arguments[ key ] = _partials.PartialArguments( )
        self._streamed = key
        self._record_part( part, key )
        return emitted

    def _complete( self, key: __.cabc.Hashable ) -> _wire.Invocations:
        self._streamed = None
        partial = self._arguments.pop( key )
        return self.complete_call( key, arguments = partial.assemble( ) )

    def _emit_whole(
        self, part: object, call: object, name: str
    ) -> _wire.Invocations:
        arguments = _access( call, 'args' )
        key = ( 0, 'whole', self._serial )
        self._serial += 1
        identifier = _access( call, 'id' )
        self.commence_call(
            key, identifier if isinstance( identifier, str ) else None,
            name, initial = arguments )
        self._record_part( part, key )
        return self.complete_call( key, arguments = arguments )

    def _record_part(
        self, part: object, key: __.cabc.Hashable | None
    ) -> None:
        native = _wire.nativize_object( part, aliases = True )
        if not isinstance( native, dict ): return
        native_ = __.typx.cast( _wire.NativeObject, native )
        if key is None and self._parts and self._parts[ -1 ].absorb( native_ ):
            return
        self._parts.append( _Part( native = native_, key = key ) )


class GeminiProcessor(
    _base.ProcessorBase[
        _natives.GeminiTool, _natives.GeminiContent, _natives.GeminiContent ]
):
    ''' Processor for Gemini generateContent and streamGenerateContent. '''

    accumulator_class = GeminiAccumulator
    tool_options = ( 'json_schema', )

    def __init__(
        self, *, json_schema: bool = False, media: bool = False
    ):
        self.json_schema = json_schema
        self.media = media

    def prepare_tools(
        self,
        ensembles: _base.Ensembles,
        selection: __.Absential[ __.cabc.Iterable[ str ] ] = __.absent,
    ) -> list[ _natives.GeminiTool ]:
        ''' Returns one tool which declares every function; none if empty.

            Each schema is adapted to the 'gemini' dialect (or, with
            ``json_schema``, to the lenient 'openai' one and sent as
            ``parameters_json_schema``); a tool whose schema cannot be
            adapted is left out alone, with a warning.
        '''
        columns = self.survey_recipes( ensembles, selection )
        if not columns: return [ ]
        if _base.is_defined_together(
            type( self ), 'produce_declaration', 'produce_declarations'
        ): declarations = self.produce_declarations( *columns )
        else: declarations = list( map( self.produce_declaration, *columns ) )
        return [ { 'function_declarations': declarations } ]

    def access_dialect( self ) -> str:
        ''' Returns 'openai' with ``json_schema``, else 'gemini'. '''
        return 'openai' if self.json_schema else self.dialect

    def produce_tool(
        self, name: str, description: str, schema: _wire.NativeObject
    ) -> _natives.GeminiTool:
        ''' Returns one tool which declares one function. '''
        declaration = self.produce_declaration( name, description, schema )
        return { 'function_declarations': [ declaration ] }

    def produce_declaration(
        self, name: str, description: str, schema: _wire.NativeObject
    ) -> _natives.GeminiDeclaration:
        ''' Returns ``{ name, description, parameters }``.

            A function without parameters is declared without a schema.
        '''
        declaration: _natives.GeminiDeclaration = { 'name': name }
        if description: declaration[ 'description' ] = description
        if self.json_schema:
            declaration[ 'parameters_json_schema' ] = schema
        elif schema.get( 'properties' ):
            # JSON Schema's names (minLength, anyOf) and lowercase types,
            # which google-genai's Schema model and the REST API take.
            declaration[ 'parameters' ] = __.typx.cast( _Schema, schema )
        return declaration

    def produce_declarations(
        self,
        names: __.cabc.Sequence[ str ],
        descriptions: __.cabc.Sequence[ str ],
        schemas: __.cabc.Sequence[ _wire.NativeObject ],
    ) -> list[ _natives.GeminiDeclaration ]:
        ''' Returns what ``produce_declaration`` gives for each function,
            in one pass.
        '''
        if self.json_schema:
            return [
                { 'name': name, 'description': description,
                  'parameters_json_schema': schema }
                if description else
                { 'name': name, 'parameters_json_schema': schema }
                for name, description, schema in zip(
                    names, descriptions, schemas ) ]
        declarations: list[ _natives.GeminiDeclaration ] = [ ]
        for name, description, schema in zip( names, descriptions, schemas ):
            declaration: _natives.GeminiDeclaration = { 'name': name }
            if description: declaration[ 'description' ] = description
            if schema.get( 'properties' ):
                declaration[ 'parameters' ] = __.typx.cast( _Schema, schema )
            declarations.append( declaration )
        return declarations

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns function calls of response, candidate or content.

            Takes the first candidate of a response. Error bodies raise
            provider failure.
        '''
        _raise_on_error( native_message )
        parts = _access_parts( native_message )
        calls = [
            call for call in (
                _access( part, 'functionCall', 'function_call' )
                for part in parts )
            if call is not None ]
        return _wire.produce_invocations(
            PROVIDER, calls, ( 'id', 'name', 'args' ), _access )

    def prepare_message(
        self, native_message: object
    ) -> _natives.GeminiContent:
        ''' Returns ``{ role: 'model', parts: [ ... ] }`` of whole response
            (its first candidate), candidate or content.

            Holds every part (text, thoughts with their signatures, function
            calls, ...), in order, as plain dictionaries (google-genai's
            typed objects with their Python names, as its typed
            dictionaries have them); empty parts, and calls which repeat
            the id of an earlier one (not run), are left out. A call
            without id keeps none, as its result does. Raises as
            ``normalize_invocations`` does.
        '''
        invocations = iter( self.access_invocations( native_message ) )
        parts: list[ _wire.NativeObject ] = [ ]
        for part in _access_parts( native_message ):
            # A call which repeats an id is not run: left out.
            if _access(
                part, 'functionCall', 'function_call'
            ) is not None and next( invocations ) is None: continue
            native = _wire.nativize_object( part )
            if isinstance( native, dict ) and native:
                parts.append( __.typx.cast( _wire.NativeObject, native ) )
        return _produce_content( parts )

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.GeminiContent ]:
        ''' Returns one user content with a ``functionResponse`` each.

            The response is the tool's JSON object when it returned one,
            otherwise ``{ 'result': ... }``, or ``{ 'error': message }``
            for an error. The id is sent back only when Gemini gave one.
            With option ``media``, images and audio go in the response's
            ``parts`` (Gemini 3 models); otherwise as textual stand-ins.
        '''
        if not results: return [ ]
        return [ {
            'role': 'user',
            'parts': [
                { 'function_response': self._produce_response( result ) }
                for result in results ],
        } ]

    def _produce_response(
        self, result: __.canisters.ResultCanister
    ) -> _Response:
        response: _Response = { 'name': result.name }
        if not result.invocation_id_synthesized:
            response[ 'id' ] = result.invocation_id
        media = [
            item for item in result.content
            if isinstance( item, (
                __.canisters.ImageContent, __.canisters.AudioContent ) ) ]
        content = result.content
        if self.media and media:
            response[ 'parts' ] = [
                { 'inline_data': _produce_blob( item.media_type, item.data ) }
                for item in media ]
            content = tuple( item for item in content if item not in media )
        response[ 'response' ] = _produce_payload( result, content )
        return response


def produce_processor( **options: __.typx.Any ) -> GeminiProcessor:
    ''' Produces processor for Gemini; options ``json_schema``, ``media``. '''
    _wire.validate_options( PROVIDER, options, ( 'json_schema', 'media' ) )
    return GeminiProcessor( **options )


@__.dcls.dataclass( slots = True, kw_only = True )
class _Part:
    ''' Part of the streamed content, for the assistant message. '''

    native: _wire.NativeObject
    key: __.cabc.Hashable | None = None
    texts: list[ str ] = __.dcls.field( default_factory = list[ str ] )

    def absorb( self, native: _wire.NativeObject ) -> bool:
        ''' Joins text part into this one, if both are text alike. '''
        text = native.get( 'text' )
        if self.key is not None or not isinstance( text, str ): return False
        if not isinstance( self.native.get( 'text' ), str ): return False
        if set( self.native ) - { 'text', 'thought' }: return False
        if set( native ) - { 'text', 'thought', 'thoughtSignature' }:
            return False
        if bool( native.get( 'thought' ) ) != bool(
            self.native.get( 'thought' )
        ): return False
        self.texts.append( text )
        signature = native.get( 'thoughtSignature' )
        if signature is not None: self.native[ 'thoughtSignature' ] = signature
        return True

    def produce_native(
        self, emitted: __.cabc.Mapping[
            __.cabc.Hashable, _streaming.StreamedInvocation ]
    ) -> _wire.NativeObject | None:
        ''' Returns part for the message; ``None`` if its call was not
            emitted.
        '''
        native = dict( self.native )
        if self.key is None:
            if self.texts:
                native[ 'text' ] = native[ 'text' ] + ''.join( self.texts )
            return native
        emission = emitted.get( self.key )
        if emission is None: return None
        invocation = emission.invocation
        call: _wire.NativeObject = { 'name': invocation.name }
        if not invocation.identifier_synthesized:
            call[ 'id' ] = invocation.identifier
        call[ 'args' ] = invocation.arguments
        native.pop( 'function_call', None )
        native[ 'functionCall' ] = call
        return native


def _produce_content(
    parts: list[ _wire.NativeObject ]
) -> _natives.GeminiContent:
    ''' Returns model content of parts (plain dictionaries of the API's
        parts, which type checkers cannot follow).
    '''
    return __.typx.cast(
        _natives.GeminiContent, { 'role': 'model', 'parts': parts } )


def _access_candidates( event: object ) -> __.cabc.Sequence[ __.typx.Any ]:
    return _wire.access_items(
        _access( event, 'candidates' ), PROVIDER, 'candidates' )


def _access_parts( message: object ) -> __.cabc.Sequence[ __.typx.Any ]:
    ''' Returns parts of first candidate, of candidate, or of content.

        Raises response invalidity for payloads of another shape.
    '''
    _wire.validate_shape(
        PROVIDER, message, ( *_CHUNK_FIELDS, 'content', 'parts' ),
        'a Gemini response, candidate or content' )
    candidates = _access( message, 'candidates' )
    if candidates is not None:
        items = _wire.access_items( candidates, PROVIDER, 'candidates' )
        selected = _wire.survey_choices( items, 0, 0 )
        if not selected: return ( )
        message = selected[ 0 ]
    content = _access( message, 'content' )
    if content is not None:
        if isinstance( content, ( str, list, tuple ) ):
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, "content is not an object of parts (the payload "
                "of another provider?)." )
        message = content
    return _wire.access_items( _access( message, 'parts' ), PROVIDER, 'parts' )


def _produce_blob( media_type: str, data: bytes ) -> _Blob:
    ''' Returns ``{ mime_type, data }`` with data as base64 text.

        Text, not bytes, so that messages stay JSON: google-genai decodes
        base64 text into its bytes fields, and the REST API takes it.
    '''
    blob = { 'mime_type': media_type, 'data': _wire.encode_base64( data ) }
    return __.typx.cast( _Blob, blob )


def _produce_payload(
    result: __.canisters.ResultCanister,
    content: __.canisters.ContentSequence,
) -> dict[ str, __.typx.Any ]:
    ''' Returns JSON object for ``functionResponse.response``. '''
    texts = [ __.canisters.render_content_text( item ) for item in content ]
    if result.is_error( ):
        error = __.typx.cast( __.canisters.Fault, result.error )
        return { 'error': '\n'.join( [ error.message, *texts ] ) }
    if len( content ) == 1 and isinstance(
        content[ 0 ], __.canisters.StructureContent
    ):
        data = content[ 0 ].data
        if isinstance( data, dict ):
            return __.typx.cast( dict[ str, __.typx.Any ], data )
        return { 'result': data }
    return { 'result': '\n'.join( texts ) }


def _raise_on_error( body: object ) -> None:
    ''' Raises provider failure for ``{ error: { code, message, status } }``.
    '''
    error = _access( body, 'error' )
    if error is None: return
    if isinstance( error, str ):
        raise __.exceptions.ProviderFailure(
            PROVIDER, __.absent, __.absent, error )
    code = _access( error, 'code' )
    status = _access( error, 'status' )
    message = _access( error, 'message' )
    raise __.exceptions.ProviderFailure(
        PROVIDER,
        code if isinstance( code, int ) and not isinstance( code, bool )
        else __.absent,
        status if isinstance( status, str ) and status else __.absent,
        message if isinstance( message, str ) and message
        else _wire.produce_failure( PROVIDER, error ).message )


def _render_enum( value: object ) -> str | None:
    ''' Returns name of enumeration member or text (typed or wire form). '''
    if value is None: return None
    name = getattr( value, 'name', None )
    if isinstance( name, str ): return name
    return str( value )
