# SPDX-License-Identifier: Apache-2.0

''' Wire helpers of processors: fields, arguments, ids, failures, media.

    Provider shapes are read with :py:func:`access_field` and
    :py:func:`access_items`, which accept plain dictionaries of the wire
    format and SDK typed objects alike; canisters are built with
    :py:func:`produce_invocation`, which decodes arguments
    (:py:func:`decode_arguments`, JSON is never repaired) and synthesizes
    missing identifiers (:py:func:`synthesize_identifier`, recorded in the
    canister); error bodies raise :py:func:`produce_failure`. Payloads are
    recognized by their fields (:py:func:`validate_shape`): another
    provider's payload raises rather than giving no calls.
'''


import invocables.processors.__ as __
import invocables.processors._textscans as _textscans
import invocables.processors.natives as _natives


_KIND_MAPPING = 0
_KIND_OBJECT = 1
_KIND_VALUE = 2
_KINDS_VALUE = (
    str, bytes, bytearray, int, float, list, tuple, type( None ) )
_DIGEST_LENGTH = 16
_kinds: dict[ type, int ] = { dict: _KIND_MAPPING }
_scribe = __.produce_scribe( __name__ )

Invocations: __.typx.TypeAlias = tuple[
    __.canisters.InvocationCanister, ... ]
ImageMediaType: __.typx.TypeAlias = __.typx.Literal[
    'image/gif', 'image/jpeg', 'image/png', 'image/webp' ]
NativeObject: __.typx.TypeAlias = _natives.NativeObject

IMAGE_MEDIA_TYPES: frozenset[ str ] = frozenset( (
    'image/gif', 'image/jpeg', 'image/png', 'image/webp' ) )


def access_field(
    value: __.typx.Any, name: str, default: __.typx.Any = None
) -> __.typx.Any:
    ''' Returns field of JSON object or attribute of SDK typed object.

        Other JSON values (arrays, strings, numbers) have no fields. Hot
        path: plain dictionaries first, then the kind of each other type,
        classified once; no call but the lookup itself.
    '''
    genus = value.__class__ # typed Any, as value is
    if genus is dict: return value.get( name, default )
    kind = _kinds.get( genus )
    if kind is None: kind = _classify_kind( genus )
    if kind == _KIND_OBJECT: return getattr( value, name, default )
    if kind == _KIND_MAPPING: return value.get( name, default )
    return default


def access_genus(
    event: object, label: __.Absential[ str ] = __.absent
) -> object:
    ''' Returns type of stream event: its ``type``, else the label (the
        server-sent event's name), if any.
    '''
    genus = access_field( event, 'type' )
    if genus is None and not __.is_absent( label ): return label
    return genus


def access_index(
    value: object, provider: str, where: str, name: str = 'index'
) -> int:
    ''' Returns integer index field of event.

        Raises :py:class:`invocables.exceptions.ResponseInvalidity` when it
        is missing or not an integer: without it, the event cannot be told
        apart from those of other calls.
    '''
    index = access_field( value, name )
    if isinstance( index, int ) and not isinstance( index, bool ):
        return index
    raise __.exceptions.ResponseInvalidity(
        provider, f"{where} has no integer {name!r}." )


def access_items(
    value: object, provider: str, where: str
) -> __.cabc.Sequence[ __.typx.Any ]:
    ''' Returns list of JSON array; none for null or text.

        Raises :py:class:`invocables.exceptions.ResponseInvalidity` for
        other values.
    '''
    if value is None or isinstance( value, str ): return ( )
    if isinstance( value, ( list, tuple ) ):
        return __.typx.cast( __.cabc.Sequence[ __.typx.Any ], value )
    raise __.exceptions.ResponseInvalidity(
        provider, f"{where} is not an array." )


def access_function_arguments( call: object ) -> object:
    ''' Returns arguments of a function call of the Chat Completions
        shape, as sent (text, or a mapping). '''
    return access_field( access_field( call, 'function' ), 'arguments' )


def access_text( value: object, provider: str, where: str ) -> str:
    ''' Returns text of JSON string; empty for null.

        Raises :py:class:`invocables.exceptions.ResponseInvalidity` for
        other values.
    '''
    if value is None: return ''
    if isinstance( value, str ): return value
    raise __.exceptions.ResponseInvalidity(
        provider, f"{where} is not a string." )


def decode_arguments(
    value: object
) -> tuple[ dict[ str, __.typx.Any ], __.Absential[ str ] ]:
    ''' Returns arguments decoded from text or object, with invalidity.

        Text is parsed as JSON; empty text, ``null`` and absence give an
        empty object; an object is taken as it is. Text which is not JSON,
        or JSON which is not an object, gives an empty object and the
        reason; the engine then sends an error result to the model. JSON
        is never repaired: ``NaN``, ``Infinity`` or a number beyond floats
        (which Python's decoder takes, JSON has no form for, and a provider
        refuses when the history goes back) is such a reason. A repeated
        key takes its last value, as providers' own decoders take it.
    '''
    if value is None or __.is_absent( value ): return { }, __.absent
    if isinstance( value, dict ):
        return __.typx.cast( dict[ str, __.typx.Any ], value ), __.absent
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value )
        return dict( mapping ), __.absent
    if isinstance( value, ( bytes, bytearray ) ):
        value = bytes( value ).decode( 'utf-8', errors = 'replace' )
    if not isinstance( value, str ): return { }, describe_genus( value )
    if not value or value.isspace( ): return { }, __.absent
    return _decode_text( value )


def decode_event(
    provider: str,
    event: str | bytes | bytearray,
    ends: __.cabc.Collection[ str ] = ( ),
) -> object:
    ''' Returns JSON value of event text (SSE data, NDJSON line).

        Returns ``None`` for text which, stripped, is one of ``ends`` (such
        as ``[DONE]``). Raises
        :py:class:`invocables.exceptions.ResponseInvalidity` for text which
        is not UTF-8 or not JSON.
    '''
    try:
        text = (
            bytes( event ).decode( 'utf-8' )
            if isinstance( event, ( bytes, bytearray ) ) else event )
    except UnicodeDecodeError as exception:
        raise __.exceptions.ResponseInvalidity(
            provider, f"event is not UTF-8: {exception}" ) from exception
    if text.strip( ) in ends: return None
    try: return __.json.loads( text )
    except ValueError as exception:
        raise __.exceptions.ResponseInvalidity(
            provider, f"event is not JSON: {exception}" ) from exception
    except RecursionError:
        raise __.exceptions.ResponseInvalidity(
            provider, "event nests arrays or objects too deep to be read."
        ) from None


def describe_genus( value: object ) -> str:
    return "arguments are a JSON {genus}, not an object".format(
        genus = _name_json_genus( value ) )


def encode_base64( data: bytes ) -> str:
    ''' Returns base64 text of bytes, as providers take images. '''
    import base64
    return base64.b64encode( data ).decode( 'ascii' )


def is_complete_arguments( value: object ) -> bool:
    ''' Returns whether arguments are whole, as a cut-off call's are not.

        Text is whole when it is JSON (of any kind), since text cut off
        before its end does not parse; empty text is not whole (the call
        may have been cut off right after its name); objects are whole.
    '''
    if value is None or __.is_absent( value ): return False
    if isinstance( value, ( bytes, bytearray ) ):
        value = bytes( value ).decode( 'utf-8', errors = 'replace' )
    if not isinstance( value, str ): return True
    if not value or value.isspace( ): return False
    try: __.json.loads( value )
    except ( ValueError, RecursionError ): return False
    return True


def is_image_media_type(
    media_type: str
) -> __.typx.TypeIs[ ImageMediaType ]:
    ''' Returns whether providers take images of media type inline. '''
    return media_type in IMAGE_MEDIA_TYPES


def is_field_present( value: __.typx.Any, name: str ) -> bool:
    ''' Returns whether JSON object has key, or SDK object attribute. '''
    genus = value.__class__ # typed Any, as value is
    if genus is dict: return name in value
    kind = _kinds.get( genus )
    if kind is None: kind = _classify_kind( genus )
    if kind == _KIND_OBJECT: return hasattr( value, name )
    if kind == _KIND_MAPPING: return name in value
    return False


def mark_repetitions(
    provider: str, invocations: Invocations, *, report: bool = True
) -> tuple[ __.canisters.InvocationCanister | None, ... ]:
    ''' Returns invocations, in order, each call which repeats the id of
        an earlier one as ``None`` (an id of the provider names one call:
        only the first call under it is run and kept, as streams keep
        it), with a warning for each unless not to ``report``.
    '''
    identifiers = { invocation.identifier for invocation in invocations }
    if len( identifiers ) == len( invocations ): return invocations
    seen: set[ str ] = set( )
    marked: list[ __.canisters.InvocationCanister | None ] = [ ]
    for invocation in invocations:
        if invocation.identifier in seen:
            if report: report_repetition( provider, invocation.identifier )
            marked.append( None )
            continue
        seen.add( invocation.identifier )
        marked.append( invocation )
    return tuple( marked )


def nativize_object( value: object, *, aliases: bool = False ) -> object:
    ''' Returns plain JSON value of SDK typed object, mapping or list.

        Mappings and lists are copied (one level deep, so that they may be
        extended); typed objects are dumped without their ``None`` fields,
        with wire names if ``aliases``. Other values pass unchanged.
    '''
    if isinstance( value, __.cabc.Mapping ):
        return dict( __.typx.cast( __.cabc.Mapping[ str, object ], value ) )
    if isinstance( value, ( list, tuple ) ):
        return list( __.typx.cast( __.cabc.Sequence[ object ], value ) )
    if isinstance( value, _KINDS_VALUE ): return __.typx.cast( object, value )
    dump = getattr( value, 'model_dump', None )
    if callable( dump ):
        return dump( mode = 'json', exclude_none = True, by_alias = aliases )
    return value


def produce_data_url( media_type: str, data: bytes ) -> str:
    ''' Returns ``data:`` URL of bytes, as providers take images. '''
    return "data:{media_type};base64,{data}".format(
        media_type = media_type, data = encode_base64( data ) )


def produce_failure(
    provider: str,
    error: object,
    status: __.Absential[ int ] = __.absent,
) -> __.exceptions.ProviderFailure:
    ''' Produces provider failure from error object of response or event.

        Reads ``type`` (else ``code``) and ``message``; a text error is the
        message itself.
    '''
    if isinstance( error, str ):
        return __.exceptions.ProviderFailure(
            provider, status, __.absent, error )
    genus = access_field( error, 'type' )
    if not isinstance( genus, str ) or not genus:
        genus = access_field( error, 'code' )
    message = access_field( error, 'message' )
    if not isinstance( message, str ) or not message:
        message = render_json( error )
    code = access_field( error, 'status', access_field( error, 'code' ) )
    if __.is_absent( status ) and isinstance( code, int ) and not (
        isinstance( code, bool )
    ): status = code
    return __.exceptions.ProviderFailure(
        provider, status,
        genus if isinstance( genus, str ) and genus else __.absent,
        message )


def produce_function_tool(
    self: object,
    name: str,
    description: str,
    schema: NativeObject,
    strict: bool = False, # noqa: FBT001,FBT002
) -> _natives.FunctionTool:
    ''' Returns tool as ``{ type: 'function', function: ... }``.

        The tool shape of OpenAI Chat Completions, which Cohere and Ollama
        share: their processors take this function as their
        ``produce_tool`` method (one call per tool, not two).
    '''
    function: _natives.FunctionSpecification = (
        { 'name': name, 'description': description, 'parameters': schema }
        if description else { 'name': name, 'parameters': schema } )
    if strict: function[ 'strict' ] = True
    return { 'type': 'function', 'function': function }


def produce_function_tools(
    self: object, *columns: __.cabc.Sequence[ __.typx.Any ]
) -> list[ _natives.FunctionTool ]:
    ''' Returns tools as :py:func:`produce_function_tool` does for each
        recipe (names, descriptions, schemas and perhaps whether strict, by
        column), in one pass: the ``produce_tools`` method of the
        processors which take that function as ``produce_tool``.
    '''
    names, descriptions, schemas, *rest = columns
    stricts: __.cabc.Sequence[ bool ] = rest[ 0 ] if rest else ( )
    if True in stricts:
        return [
            produce_function_tool( self, name, description, schema, strict )
            for name, description, schema, strict in zip(
                names, descriptions, schemas, stricts ) ]
    return [
        { 'type': 'function', 'function':
            { 'name': name, 'description': description, 'parameters': schema }
            if description else { 'name': name, 'parameters': schema } }
        for name, description, schema in zip( names, descriptions, schemas ) ]


def produce_function_invocations(
    provider: str,
    calls: __.cabc.Sequence[ object ],
    stop: object,
    truncating: __.cabc.Container[ object ],
) -> tuple[ __.canisters.InvocationCanister, ... ]:
    ''' Returns invocations of function calls of the Chat Completions
        shape (``{ id, function: { name, arguments } }``, Cohere's alike),
        in order; a stop among ``truncating`` raises truncation naming the
        calls it cut off (see :py:func:`validate_whole_calls`).
    '''
    named = [
        ( access_text( access_field( access_field( call, 'function' ),
            'name' ), provider, 'name' ), access_function_arguments( call ) )
        for call in calls ]
    if named and stop in truncating:
        validate_whole_calls( provider, named, stop )
    return tuple(
        produce_invocation(
            access_field( call, 'id' ), name, arguments, position )
        for position, ( call, ( name, arguments ) )
        in enumerate( zip( calls, named ) ) )


def produce_invalidity(
    provider: str, exception: Exception
) -> __.exceptions.ResponseInvalidity:
    return __.exceptions.ResponseInvalidity(
        provider, "{kind}: {message}".format(
            kind = type( exception ).__name__, message = exception ) )


def produce_invocation(
    identifier: object,
    name: str,
    arguments: object,
    position: int,
    invalidity: __.Absential[ str ] = __.absent,
) -> __.canisters.InvocationCanister:
    ''' Produces canister, decoding arguments and synthesizing missing id.

        ``position`` is the ordinal of the call in its response or stream.
        An ``invalidity`` given says why the arguments cannot be read: they
        are then not decoded, and the canister carries the reason.
    '''
    if __.is_absent( invalidity ):
        arguments_, invalidity = decode_arguments( arguments )
    else: arguments_ = { }
    synthesized = not isinstance( identifier, str ) or not identifier
    if not isinstance( identifier, str ) or not identifier:
        identifier = synthesize_identifier(
            position, name, arguments_ if __.is_absent( invalidity )
            else arguments )
    return __.canisters.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments_,
        invalidity = invalidity, identifier_synthesized = synthesized )


def produce_invocations(
    provider: str,
    calls: __.cabc.Iterable[ object ],
    keys: tuple[ str, str, str ],
    access: __.cabc.Callable[ [ object, str ], object ] = access_field,
) -> tuple[ __.canisters.InvocationCanister, ... ]:
    ''' Produces canisters of calls, in order, reading the id, name (a
        string) and arguments of each at keys.
    '''
    identifier, name, arguments = keys
    return tuple(
        produce_invocation(
            access( call, identifier ),
            access_text( access( call, name ), provider, 'name' ),
            access( call, arguments ), position )
        for position, call in enumerate( calls ) )


def render_arguments( arguments: object ) -> str:
    ''' Returns arguments as sent, as JSON text for an assistant message.

        Text is kept as it came; objects are encoded; no arguments give
        ``{}``.
    '''
    if isinstance( arguments, str ) and arguments and not arguments.isspace( ):
        return arguments
    if arguments is None or isinstance( arguments, str ): return '{}'
    try:
        return __.json.dumps(
            arguments, ensure_ascii = False, default = repr )
    except ( TypeError, ValueError, RecursionError ): return '{}'


def render_json( value: object ) -> str:
    ''' Renders value as canonical JSON; falls back to its repr. '''
    if isinstance( value, str ): return value
    try:
        return __.json.dumps(
            value, sort_keys = True, ensure_ascii = False, default = repr )
    except ( TypeError, ValueError, RecursionError ): return repr( value )


def report_repetition( provider: str, identifier: str ) -> None:
    _scribe.warning(
        "Provider {provider!r} gave call id {identifier!r} to more than one "
        "call; only the first is run.".format(
            provider = provider, identifier = identifier ) )


def survey_choices(
    items: __.cabc.Sequence[ __.typx.Any ],
    ordinal: int,
    ordinal_absent: int | None = None,
) -> list[ __.typx.Any ]:
    ''' Returns the items (choices, candidates) whose ``index`` is
        ordinal, in order. An item without one is at ``ordinal_absent``
        where given (JSON which omits zeros), else at its position.
    '''
    selected: list[ __.typx.Any ] = [ ]
    for position, item in enumerate( items ):
        index = access_field( item, 'index' )
        if index is None:
            index = position if ordinal_absent is None else ordinal_absent
        if index == ordinal: selected.append( item )
    return selected


def synthesize_identifier(
    position: int, name: str, arguments: object
) -> str:
    ''' Returns deterministic id for call which came without one.

        Derived from the position of the call, its name and a hash of its
        arguments: distinct within a response, stable across runs.
    '''
    hasher = __.hashlib.sha256( )
    hasher.update( f"{position}\x00{name}\x00".encode( ) )
    hasher.update( render_json( arguments ).encode( errors = 'replace' ) )
    digest = hasher.hexdigest( )[ : _DIGEST_LENGTH ]
    return f"call_{position}_{digest}"


def validate_genus(
    provider: str, genus: object, foreign: __.re.Pattern[ str ], what: str
) -> str:
    ''' Returns type of stream event; raises response invalidity if it is
        not a string or foreign matches it (the type of another provider's
        events). ``what`` names the expected stream.
    '''
    if isinstance( genus, str ) and not foreign.search( genus ): return genus
    raise __.exceptions.ResponseInvalidity(
        provider, f"the event has no 'type' of a {what} stream event "
        "(the payload of another provider?)." )


def validate_options(
    provider: str,
    options: __.cabc.Mapping[ str, __.typx.Any ],
    known: __.cabc.Collection[ str ],
) -> None:
    ''' Raises configuration invalidity if options has unknown names. '''
    unknown = sorted( set( options ) - set( known ) )
    if not unknown: return
    raise __.exceptions.ConfigurationInvalidity(
        f"processor {provider!r}",
        "unknown options {names}; known options are {known}.".format(
            names = ', '.join( unknown ),
            known = ', '.join( sorted( known ) ) or 'none' ) )


def validate_shape(
    provider: str,
    value: object,
    fields: __.cabc.Sequence[ str ],
    what: str,
    *,
    untyped: bool = False,
) -> object:
    ''' Returns value if it has one of the fields; raises otherwise.

        Recognizes the shape of a provider's response or event, so that
        another provider's payload (or an empty one) raises
        :py:class:`invocables.exceptions.ResponseInvalidity` rather than
        giving no calls, as if the model had finished. ``what`` names the
        expected shape. With ``untyped``, a value which has a ``type``
        (as the payloads of typed APIs have) raises too.
    '''
    if any( is_field_present( value, name ) for name in fields ):
        if untyped and access_field( value, 'type' ) is not None:
            raise __.exceptions.ResponseInvalidity(
                provider, f"the payload has a 'type': it is not {what} "
                "(the payload of another provider?)." )
        return value
    if isinstance( value, __.cabc.Mapping ):
        keys = ', '.join( sorted(
            str( key ) for key in __.typx.cast(
                __.cabc.Mapping[ object, object ], value ) )[ : 8 ] )
        found = f"fields {keys}" if keys else "no fields"
    else: found = f"a {type( value ).__name__}"
    raise __.exceptions.ResponseInvalidity(
        provider,
        "expected {what}, with one of the fields {fields}; got {found} "
        "(the payload of another provider?).".format(
            what = what, fields = ', '.join( fields ), found = found ) )


def validate_whole_calls(
    provider: str,
    calls: __.cabc.Iterable[ tuple[ str, object ] ],
    stop: object,
) -> None:
    ''' Raises truncation naming calls (name, arguments) cut off by stop.

        For whole responses which stopped for a reason which may cut calls
        off (such as ``length``): a call is cut off when its arguments are
        not whole (see :py:func:`is_complete_arguments`). Raises
        :py:class:`invocables.exceptions.InvocationTruncation` naming only
        those calls; returns if none was cut off.
    '''
    names = [
        name for name, arguments in calls
        if not is_complete_arguments( arguments ) ]
    if names:
        raise __.exceptions.InvocationTruncation(
            names, f"the response stopped for reason {stop!r}." )


def _classify_kind( genus: type ) -> int:
    if issubclass( genus, __.cabc.Mapping ): kind = _KIND_MAPPING
    elif issubclass( genus, _KINDS_VALUE ): kind = _KIND_VALUE
    else: kind = _KIND_OBJECT
    _kinds[ genus ] = kind
    return kind


def _decode_text(
    text: str
) -> tuple[ dict[ str, __.typx.Any ], __.Absential[ str ] ]:
    # No NaN or Infinity, which a provider refuses when the history goes
    # back; a repeated key takes its last value, as providers take it.
    decoded, invalidity = _textscans.decode_json( text, repetitions = False )
    if not __.is_absent( invalidity ): return { }, invalidity
    if decoded is None: return { }, __.absent
    if isinstance( decoded, dict ):
        return __.typx.cast( dict[ str, __.typx.Any ], decoded ), __.absent
    return { }, describe_genus( decoded )


def _name_json_genus( value: object ) -> str:
    match value:
        case bool( ): return 'boolean'
        case int( ) | float( ): return 'number'
        case str( ): return 'string'
        case list( ) | tuple( ): return 'array'
        case _: return type( value ).__name__
