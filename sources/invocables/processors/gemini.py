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


from itertools import pairwise as _pairwise

from . import __
from . import base as _base
from . import natives as _natives

# Type checkers see through 'module.TYPE_CHECKING', not through the hub.
import typing_extensions as _typx


PROVIDER = 'gemini'

_STOPS_TRUNCATING = frozenset( ( 'MAX_TOKENS', 'MALFORMED_FUNCTION_CALL' ) )
_synthesized = __.re.compile( r'^call_\d+_[0-9a-f]{16}$' )
_path_step = __.re.compile(
    r'''\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[(?:'([^']*)'|"([^"]*)")\]''' )

_Step: __.typx.TypeAlias = str | int
if not _typx.TYPE_CHECKING: # plain dictionaries; the SDK's types below
    _Blob = _Response = _Schema = _base.NativeObject
else:
    from google.genai import types as _sdk
    _Blob = _sdk.FunctionResponseBlobDict
    _Response = _sdk.FunctionResponseDict
    _Schema = _sdk.SchemaDict


class GeminiAccumulator( _base.AccumulatorBase ):
    ''' Accumulates streamed Gemini chunks into function calls.

        A whole ``functionCall`` in a chunk is complete at once. A call
        streamed with ``partialArgs`` (Vertex AI) is complete at the empty
        ``functionCall`` which closes it; string values continued over
        several chunks are joined once, at completion. A call still open at
        the end of the stream is reported as interrupted, never emitted.
        Only the first candidate is read, as for whole responses.
    '''

    __slots__ = ( '_arguments', '_serial' )

    provider = PROVIDER

    def __init__( self ) -> None:
        super( ).__init__( )
        self._arguments: dict[ __.cabc.Hashable, _PartialArguments ] = { }
        self._serial = 0

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _base.Invocations:
        ''' Maps one chunk (object, or JSON text) onto the accumulator. '''
        event = _decode_event( event )
        _raise_on_error( event )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        for candidate in _access_candidates( event ):
            ordinal = _access( candidate, 'index' ) or 0
            # Like whole responses, only the first candidate is read.
            if ordinal != 0: continue
            content = _access( candidate, 'content' )
            for part in _base.access_items(
                _access( content, 'parts' ), PROVIDER, 'parts'
            ):
                call = _access( part, 'functionCall', 'function_call' )
                if call is None: continue
                invocations.extend( self._ingest_call( ordinal, call ) )
            stop = _access( candidate, 'finishReason', 'finish_reason' )
            if _render_enum( stop ) in _STOPS_TRUNCATING:
                self.reason = (
                    "the response stopped for reason {stop!r}.".format(
                        stop = _render_enum( stop ) ) )
        return tuple( invocations )

    def survey_partials( self ) -> tuple[ _base.PartialInvocation, ... ]:
        ''' Returns calls still being streamed, with their arguments so far
            as JSON text, for display only.
        '''
        partials = super( ).survey_partials( )
        texts = [
            __.json.dumps(
                self._arguments[ key ].assemble( ), ensure_ascii = False )
            if key in self._arguments else partial.text
            for key, partial in zip( tuple( self._slots ), partials ) ]
        return tuple(
            __.dcls.replace( partial, text = text )
            for partial, text in zip( partials, texts ) )

    def _ingest_call(
        self, ordinal: object, call: object
    ) -> _base.Invocations:
        key = ( ordinal, 'streamed' )
        name = _base.access_text( _access( call, 'name' ), PROVIDER, 'name' )
        partials = _access( call, 'partialArgs', 'partial_args' )
        continues = bool( _access( call, 'willContinue', 'will_continue' ) )
        if name and not continues and partials is None:
            return self._emit_whole( ordinal, call, name )
        emitted: list[ __.canisters.InvocationCanister ] = [ ]
        if name:
            # A new call closes one left open: the provider moved on.
            if self.is_open( key ): emitted.extend( self._complete( key ) )
            identifier = _access( call, 'id' )
            emitted.extend( self.commence_call(
                key, None, name,
                identifier if isinstance( identifier, str ) else None ) )
            self._arguments[ key ] = _PartialArguments( )
        elif not self.is_open( key ): return ( )
        if partials is not None: self._arguments[ key ].ingest( partials )
        if not continues: emitted.extend( self._complete( key ) )
        return tuple( emitted )

    def _complete( self, key: __.cabc.Hashable ) -> _base.Invocations:
        partial = self._arguments.pop( key )
        return self.complete_call( key, arguments = partial.assemble( ) )

    def _emit_whole(
        self, ordinal: object, call: object, name: str
    ) -> _base.Invocations:
        arguments = _access( call, 'args' )
        key = ( ordinal, 'whole', self._serial )
        self._serial += 1
        identifier = _access( call, 'id' )
        self.commence_call(
            key, identifier if isinstance( identifier, str ) else None,
            name, initial = arguments )
        return self.complete_call( key, arguments = arguments )


class GeminiProcessor(
    _base.ProcessorBase[ _natives.GeminiTool, _natives.GeminiContent ]
):
    ''' Processor for Gemini generateContent and streamGenerateContent. '''

    provider = PROVIDER
    dialect = 'gemini'
    accumulator_class = GeminiAccumulator

    def __init__(
        self, *, json_schema: bool = False, media: bool = False
    ):
        self.json_schema = json_schema
        self.media = media

    def prepare_tools(
        self, ensembles: _base.Ensembles
    ) -> list[ _natives.GeminiTool ]:
        ''' Returns one tool which declares every function; none if empty.

            Each schema is adapted to the 'gemini' dialect (or, with
            ``json_schema``, to the lenient 'openai' one and sent as
            ``parameters_json_schema``); a tool whose schema cannot be
            adapted is left out alone, with a warning.
        '''
        declarations = _base.produce_tools(
            ensembles, self.prepare_declaration )
        if not declarations: return [ ]
        return [ { 'function_declarations': declarations } ]

    def prepare_tool(
        self, name: str, description: str, schema: __.Schema
    ) -> _natives.GeminiTool | None:
        ''' Returns one tool which declares one function, or ``None``. '''
        declaration = self.prepare_declaration( name, description, schema )
        if declaration is None: return None
        return { 'function_declarations': [ declaration ] }

    def prepare_declaration(
        self, name: str, description: str, schema: __.Schema
    ) -> _natives.GeminiDeclaration | None:
        ''' Returns one function declaration, or ``None`` if refused. '''
        dialect = 'openai' if self.json_schema else self.dialect
        schema_ = _base.adapt_schema( PROVIDER, name, schema, dialect )
        if schema_ is None: return None
        return self.produce_declaration( name, description, schema_ )

    def produce_tool(
        self, name: str, description: str, schema: _base.NativeObject
    ) -> _natives.GeminiTool:
        ''' Returns one tool which declares one function. '''
        declaration = self.produce_declaration( name, description, schema )
        return { 'function_declarations': [ declaration ] }

    def produce_declaration(
        self, name: str, description: str, schema: _base.NativeObject
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
        return tuple(
            _base.produce_invocation(
                _access( call, 'id' ),
                _base.access_text( _access( call, 'name' ), PROVIDER, 'name' ),
                _access( call, 'args' ), position )
            for position, call in enumerate( calls ) )

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
        if not _synthesized.match( result.invocation_id ):
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
    _base.validate_options( PROVIDER, options, ( 'json_schema', 'media' ) )
    return GeminiProcessor( **options )


@__.dcls.dataclass( slots = True )
class _PartialArguments:
    ''' Arguments of a call streamed as ``partialArgs``, by JSON path. '''

    values: dict[ tuple[ _Step, ... ], list[ __.typx.Any ] ] = (
        __.dcls.field( default_factory = dict[
            tuple[ _Step, ... ], list[ __.typx.Any ] ] ) )

    def assemble( self ) -> dict[ str, __.typx.Any ]:
        ''' Returns arguments object; string pieces are joined once. '''
        root: dict[ str, __.typx.Any ] = { }
        for steps, pieces in self.values.items( ):
            value = (
                ''.join( pieces ) if all(
                    isinstance( piece, str ) for piece in pieces )
                else pieces[ -1 ] )
            _place_value( root, steps, value )
        return root

    def ingest( self, partials: object ) -> None:
        ''' Records values of one chunk's ``partialArgs``. '''
        for partial in _base.access_items(
            partials, PROVIDER, 'partialArgs'
        ):
            path = _base.access_text(
                _access( partial, 'jsonPath', 'json_path' ),
                PROVIDER, 'jsonPath' )
            steps = _parse_path( path )
            self.values.setdefault( steps, [ ] ).append(
                _access_partial_value( partial ) )


def _access(
    value: object, name: str, alias: __.Absential[ str ] = __.absent
) -> __.typx.Any:
    ''' Returns field by wire name (camelCase) or Python name. '''
    found = _base.access_field( value, name )
    if found is None and not __.is_absent( alias ):
        found = _base.access_field( value, alias )
    return found


def _access_candidates( event: object ) -> __.cabc.Sequence[ __.typx.Any ]:
    return _base.access_items(
        _access( event, 'candidates' ), PROVIDER, 'candidates' )


def _access_partial_value( partial: object ) -> __.typx.Any:
    for name, alias in (
        ( 'stringValue', 'string_value' ),
        ( 'numberValue', 'number_value' ),
        ( 'boolValue', 'bool_value' ),
    ):
        value = _access( partial, name, alias )
        if value is not None: return value
    return None


def _access_parts( message: object ) -> __.cabc.Sequence[ __.typx.Any ]:
    ''' Returns parts of first candidate, of candidate, or of content. '''
    candidates = _access( message, 'candidates' )
    if candidates is not None:
        items = _base.access_items( candidates, PROVIDER, 'candidates' )
        if not items: return ( )
        message = items[ 0 ]
    content = _access( message, 'content' )
    if content is not None: message = content
    return _base.access_items( _access( message, 'parts' ), PROVIDER, 'parts' )


def _decode_event( event: object ) -> object:
    ''' Decodes event given as JSON text (such as SSE data). '''
    if isinstance( event, ( bytes, bytearray ) ):
        event = bytes( event ).decode( 'utf-8' )
    if not isinstance( event, str ): return event
    try: return __.json.loads( event )
    except ValueError as exception:
        raise __.exceptions.ResponseInvalidity(
            PROVIDER, f"event is not JSON: {exception}" ) from exception


def _parse_path( path: str ) -> tuple[ _Step, ... ]:
    ''' Parses JSON path such as ``$.a.b[0]['c d']`` into steps. '''
    if not path.startswith( '$' ):
        raise __.exceptions.ResponseInvalidity(
            PROVIDER, f"JSON path {path!r} does not start at '$'." )
    steps: list[ _Step ] = [ ]
    position = 1
    while position < len( path ):
        match = _path_step.match( path, position )
        if match is None:
            raise __.exceptions.ResponseInvalidity(
                PROVIDER, f"JSON path {path!r} cannot be read." )
        name, index, single, double = match.groups( )
        if index is not None: steps.append( int( index ) )
        else: steps.append( next(
            part for part in ( name, single, double ) if part is not None ) )
        position = match.end( )
    if not steps or not isinstance( steps[ 0 ], str ):
        raise __.exceptions.ResponseInvalidity(
            PROVIDER, f"JSON path {path!r} does not name an argument." )
    return tuple( steps )


def _place_value(
    root: dict[ str, __.typx.Any ],
    steps: tuple[ _Step, ... ],
    value: __.typx.Any,
) -> None:
    ''' Places value at path in nested objects and arrays. '''
    container: __.typx.Any = root
    for step, following in _pairwise( steps ):
        fresh: __.typx.Any = { } if isinstance( following, str ) else [ ]
        container = _descend( container, step, fresh )
    _store( container, steps[ -1 ], value )


def _descend(
    container: __.typx.Any, step: _Step, fresh: __.typx.Any
) -> __.typx.Any:
    if isinstance( step, str ) and isinstance( container, dict ):
        return __.typx.cast( dict[ str, __.typx.Any ], container ).setdefault(
            step, fresh )
    if isinstance( step, int ) and isinstance( container, list ):
        items = __.typx.cast( list[ __.typx.Any ], container )
        while len( items ) <= step: items.append( None )
        if items[ step ] is None: items[ step ] = fresh
        return items[ step ]
    raise __.exceptions.ResponseInvalidity(
        PROVIDER, "JSON paths of partial arguments disagree." )


def _store( container: __.typx.Any, step: _Step, value: __.typx.Any ) -> None:
    if isinstance( step, str ) and isinstance( container, dict ):
        __.typx.cast( dict[ str, __.typx.Any ], container )[ step ] = value
        return
    if isinstance( step, int ) and isinstance( container, list ):
        items = __.typx.cast( list[ __.typx.Any ], container )
        while len( items ) <= step: items.append( None )
        items[ step ] = value
        return
    raise __.exceptions.ResponseInvalidity(
        PROVIDER, "JSON paths of partial arguments disagree." )


def _produce_blob( media_type: str, data: bytes ) -> _Blob:
    ''' Returns ``{ mime_type, data }`` with data as base64 text.

        Text, not bytes, so that messages stay JSON: google-genai decodes
        base64 text into its bytes fields, and the REST API takes it.
    '''
    blob = { 'mime_type': media_type, 'data': _base.encode_base64( data ) }
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
        else _base.produce_failure( PROVIDER, error ).message )


def _render_enum( value: object ) -> str | None:
    ''' Returns name of enumeration member or text (typed or wire form). '''
    if value is None: return None
    name = getattr( value, 'name', None )
    if isinstance( name, str ): return name
    return str( value )
