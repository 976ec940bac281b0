# SPDX-License-Identifier: Apache-2.0

''' JSON Schemas and invocables from signatures of typed Python functions.

    Uses pydantic's schema generation (for what
    ``invocables.signatures.derivations`` does not derive itself) and
    ``docstring_parser``, imported only when a function-based invoker is
    produced, so that ``import invocables`` stays light.
'''


import invocables.__ as __
from .derivations import derive_schema as _derive_schema
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.execution.workers as _workers


_Function: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]
_Parameter: __.typx.TypeAlias = __.inspect.Parameter
Descriptions: __.typx.TypeAlias = __.cabc.Mapping[ str, str ]

_CONTEXT_PARAMETER = 'context'
_CONTEXT_ANNOTATIONS = ( _invokers.Context, _invokers.InvocationContext )
_DEFS_PREFIX = '#/$defs/'
_DOCSTRING_MARKERS = ( ':', '@', '-', '..' )
_NOTES_SECTIONS = frozenset( ( 'note', 'notes' ) )
_PLAIN_TYPES = frozenset( ( str, int, float, bool, type( None ), object ) )
_RECEIVER_NAMES = frozenset( ( 'self', 'cls' ) )
# Keywords whose values are schemas, maps of schemas, lists of schemas.
_SCHEMA_KEYWORDS = frozenset( (
    'additionalItems', 'additionalProperties', 'contains', 'else', 'if',
    'items', 'not', 'propertyNames', 'then', 'unevaluatedItems',
    'unevaluatedProperties' ) )
_SCHEMA_MAPS = frozenset( (
    '$defs', 'definitions', 'dependentSchemas', 'patternProperties',
    'properties' ) )
_SCHEMA_LISTS = frozenset( ( 'allOf', 'anyOf', 'oneOf', 'prefixItems' ) )


def parse_docstring( function: _Function ) -> tuple[ str, Descriptions ]:
    ''' Returns description and parameter descriptions from docstring.

        Understands Google (``Args:``), NumPy (``Parameters`` with a rule)
        and Sphinx (``:param name:``) styles, continuation lines included.
        ``Returns``, ``Raises``, ``Yields`` and ``Examples`` sections are
        left out of the description; the rest of the text is kept.
    '''
    docstring = _access_docstring( function )
    # Besides its ParseError, the parser raises assorted errors (such as
    # IndexError) on odd text: then the whole docstring is the description.
    try: parsed = _parse_docstring( docstring )
    except Exception: return docstring.strip( ), { }
    descriptions = {
        parameter.arg_name: ' '.join( parameter.description.split( ) )
        for parameter in parsed.params if parameter.description }
    parts = [
        part for part in (
            parsed.short_description, parsed.long_description )
        if part ]
    separator = '\n\n' if parsed.blank_after_short_description else '\n'
    notes = [
        meta.description for meta in parsed.meta
        if meta.args and meta.args[ 0 ].lower( ) in _NOTES_SECTIONS
        and meta.description ]
    text = '\n\n'.join( ( separator.join( parts ), *notes ) )
    return text.strip( ), descriptions


def produce_signature_invocable(
    name: str, function: _Function, descriptions: Descriptions
) -> tuple[ __.Schema, __.cabc.Callable[ ..., __.typx.Any ] ]:
    ''' Returns argument schema and invocable for typed function.

        The schema of common signatures is derived directly (see
        ``invocables.signatures.derivations``), of others by a pydantic model.
        Arguments that JSON values represent exactly are passed as they are
        (validated by the schema); others (models, enums, dates, tuples)
        are converted by a pydantic model of the function, made once, at
        the first call unless the schema needed it.
    '''
    parameters, accepts_context = _survey_parameters( name, function )
    schematic = tuple(
        parameter for parameter in parameters
        if parameter.name != _CONTEXT_PARAMETER )
    _validate_defaults( name, schematic )
    schema = _derive_schema( tuple(
        ( parameter.name, parameter.annotation, parameter.default,
          _access_description( parameter, descriptions ) )
        for parameter in schematic ) )
    model: __.typx.Any = None
    if schema is None:
        model = _produce_model( name, function, schematic, descriptions )
        schema = _clean_schema( model.model_json_schema( ) )
    elif '$defs' in schema: schema = _clean_schema( schema ) # enumerations
    plain = all(
        _is_plain_annotation( parameter.annotation )
        for parameter in schematic )
    if plain: convert = _pass_arguments
    else:
        convert = _produce_converter(
            name, function, schematic, descriptions, model )
    invocable = _produce_invocable(
        _adapt_positional( function, parameters ), convert, accepts_context )
    return __.types.MappingProxyType( schema ), invocable


def _access_docstring( function: _Function ) -> str:
    ''' Returns docstring of function, of the function of a partial, or of
        the ``__call__`` (else the class) of a callable object.
    '''
    subject = _unwrap_partial( function )
    if __.inspect.isroutine( subject ) or isinstance( subject, type ):
        return __.inspect.getdoc( subject ) or ''
    call = __.inspect.getattr_static( type( subject ), '__call__', None )
    docstring = __.inspect.getdoc( call ) if call is not None else None
    return docstring or __.inspect.cleandoc( type( subject ).__doc__ or '' )


def _adapt_positional(
    function: _Function, parameters: __.cabc.Sequence[ _Parameter ]
) -> _Function:
    ''' Returns function which takes keywords only, for positional-only
        parameters too (passed by position, in order).
    '''
    positional = tuple(
        parameter for parameter in parameters
        if parameter.kind is _Parameter.POSITIONAL_ONLY )
    if not positional: return function

    def arrange(
        nomargs: dict[ str, __.typx.Any ]
    ) -> tuple[ list[ __.typx.Any ], dict[ str, __.typx.Any ] ]:
        posargs: list[ __.typx.Any ] = [ ]
        for index, parameter in enumerate( positional ):
            if parameter.name in nomargs:
                posargs.append( nomargs.pop( parameter.name ) )
            elif any(
                later.name in nomargs for later in positional[ index + 1 : ]
            ): posargs.append( parameter.default )
            else: break
        return posargs, nomargs

    if __.inspect.iscoroutinefunction( function ):
        async def call_async( **nomargs: __.typx.Any ) -> __.typx.Any:
            posargs, nomargs_ = arrange( nomargs )
            return await function( *posargs, **nomargs_ )
        return call_async

    def call( **nomargs: __.typx.Any ) -> __.typx.Any:
        posargs, nomargs_ = arrange( nomargs )
        return function( *posargs, **nomargs_ )

    return call


def _access_namespace( function: _Function ) -> dict[ str, __.typx.Any ]:
    ''' Returns globals of the code behind a function, method, partial,
        decorated function or callable object, to evaluate annotations.
    '''
    subject = _unwrap( function )
    if not __.inspect.isroutine( subject ) and not isinstance( subject, type ):
        subject = _unwrap(
            __.inspect.getattr_static( type( subject ), '__call__', subject ) )
    namespace = getattr( subject, '__globals__', None )
    if isinstance( namespace, dict ):
        return __.typx.cast( dict[ str, __.typx.Any ], namespace )
    module = __.inspect.getmodule( subject )
    return dict( vars( module ) ) if module is not None else { }


def _clean_schema(
    schema: dict[ str, __.typx.Any ]
) -> dict[ str, __.typx.Any ]:
    ''' Removes titles, which pydantic generates from names, everywhere;
        inlines definitions referenced once and not recursive, so that
        ``$defs`` holds only what needs it; trims descriptions.
    '''
    definitions: dict[ str, __.typx.Any ] = schema.get( '$defs', { } )
    inlinable = _survey_inlinable( schema, definitions )
    cleaned = _clean_subschema( schema, definitions, inlinable )
    remainder = {
        key: value for key, value in cleaned.get( '$defs', { } ).items( )
        if key not in inlinable }
    if remainder: cleaned[ '$defs' ] = remainder
    else: cleaned.pop( '$defs', None )
    cleaned.setdefault( 'properties', { } )
    return cleaned


def _clean_subschema(
    schema: __.typx.Any,
    definitions: __.cabc.Mapping[ str, __.typx.Any ],
    inlinable: __.cabc.Set[ str ],
) -> __.typx.Any:
    if not isinstance( schema, dict ): return schema
    schema_ = __.typx.cast( dict[ str, __.typx.Any ], schema )
    target = _access_reference( schema_ )
    if target in inlinable:
        siblings = {
            key: value for key, value in schema_.items( ) if key != '$ref' }
        schema_ = { **definitions[ target ], **siblings }
    cleaned: dict[ str, __.typx.Any ] = { }
    for key, value in schema_.items( ):
        if key == 'title': continue
        if key == 'description' and isinstance( value, str ):
            cleaned[ key ] = value.strip( ) # padded docstrings of classes
        else:
            cleaned[ key ] = _clean_value(
                key, value, definitions, inlinable )
    return cleaned


def _clean_value(
    key: str,
    value: __.typx.Any,
    definitions: __.cabc.Mapping[ str, __.typx.Any ],
    inlinable: __.cabc.Set[ str ],
) -> __.typx.Any:
    if key in _SCHEMA_KEYWORDS:
        return _clean_subschema( value, definitions, inlinable )
    if key in _SCHEMA_MAPS and isinstance( value, dict ):
        members = __.typx.cast( dict[ str, __.typx.Any ], value )
        return {
            name: _clean_subschema( member, definitions, inlinable )
            for name, member in members.items( ) }
    if key in _SCHEMA_LISTS and isinstance( value, list ):
        items = __.typx.cast( list[ __.typx.Any ], value )
        return [
            _clean_subschema( item, definitions, inlinable )
            for item in items ]
    return value


def _access_reference( schema: __.cabc.Mapping[ str, __.typx.Any ] ) -> str:
    ''' Returns name of local definition which schema references, or ''. '''
    reference = schema.get( '$ref' )
    if isinstance( reference, str ) and reference.startswith( _DEFS_PREFIX ):
        return reference[ len( _DEFS_PREFIX ) : ]
    return ''


def _survey_references(
    schema: __.typx.Any, references: list[ str ]
) -> list[ str ]:
    ''' Appends names of definitions referenced by schema (not from its
        own ``$defs``), once per reference.
    '''
    if not isinstance( schema, dict ): return references
    schema_ = __.typx.cast( dict[ str, __.typx.Any ], schema )
    target = _access_reference( schema_ )
    if target: references.append( target )
    for key, value in schema_.items( ):
        if key == '$defs': continue
        if key in _SCHEMA_KEYWORDS: _survey_references( value, references )
        elif key in _SCHEMA_MAPS and isinstance( value, dict ):
            members = __.typx.cast( dict[ str, __.typx.Any ], value )
            for member in members.values( ):
                _survey_references( member, references )
        elif key in _SCHEMA_LISTS and isinstance( value, list ):
            items = __.typx.cast( list[ __.typx.Any ], value )
            for item in items: _survey_references( item, references )
    return references


def _survey_inlinable(
    schema: __.cabc.Mapping[ str, __.typx.Any ],
    definitions: __.cabc.Mapping[ str, __.typx.Any ],
) -> frozenset[ str ]:
    ''' Returns names of definitions referenced once and not recursively. '''
    edges = {
        name: frozenset( _survey_references( body, [ ] ) )
        for name, body in definitions.items( ) }
    counts = __.collections.Counter( _survey_references( schema, [ ] ) )
    for body in definitions.values( ):
        counts.update( _survey_references( body, [ ] ) )
    return frozenset(
        name for name in definitions
        if counts[ name ] == 1 and not _is_recursive( name, edges ) )


def _is_recursive(
    name: str, edges: __.cabc.Mapping[ str, frozenset[ str ] ]
) -> bool:
    ''' Returns whether definition reaches itself through references. '''
    seen: set[ str ] = set( )
    pending = list( edges.get( name, ( ) ) )
    while pending:
        current = pending.pop( )
        if current == name: return True
        if current in seen: continue
        seen.add( current )
        pending.extend( edges.get( current, ( ) ) )
    return False


def _evaluate_annotation(
    name: str,
    parameter: _Parameter,
    namespace: __.cabc.Mapping[ str, __.typx.Any ],
) -> __.typx.Any:
    ''' Returns annotation of parameter, evaluated if it is a string. '''
    annotation = parameter.annotation
    if not isinstance( annotation, str ): return annotation
    holder = __.types.SimpleNamespace(
        __annotations__ = { 'value': annotation } )
    try:
        hints = __.typx.get_type_hints(
            holder, globalns = dict( namespace ), include_extras = True )
    except Exception as exception:
        raise _exceptions.InvokerInvalidity(
            name, f"cannot evaluate the annotation {annotation!r} of "
            f"parameter {parameter.name!r} ({exception}); import the names "
            "it uses at module level, not only under TYPE_CHECKING."
        ) from exception
    return hints[ 'value' ]


def _is_plain_annotation( annotation: __.typx.Any ) -> bool:
    ''' Returns whether JSON values represent annotation exactly. '''
    if annotation is __.inspect.Parameter.empty: return True
    if annotation in _PLAIN_TYPES or annotation is __.typx.Any: return True
    origin = __.typx.get_origin( annotation )
    arguments = __.typx.get_args( annotation )
    if origin is __.typx.Annotated:
        return _is_plain_annotation( arguments[ 0 ] )
    if origin is __.typx.Literal: return True
    if origin in ( list, dict, __.types.UnionType, __.typx.Union ):
        return all( _is_plain_annotation( item ) for item in arguments )
    return False


def _parse_docstring( docstring: str ) -> __.typx.Any:
    ''' Returns docstring parsed as ``docstring_parser.parse`` does.

        That parses with each of four styles and keeps the result with the
        most sections (the first on a tie: reST). Where no line starts as a
        reST field (``:``), an epydoc field (``@``), a numpydoc rule or
        directive (``-``, ``..``), those three find no section, so a Google
        result with some sections is the one kept: parsed alone, at a
        fourth of the cost.
    '''
    from docstring_parser import DocstringStyle, ParseError, parse
    if not any(
        line.lstrip( ).startswith( _DOCSTRING_MARKERS )
        for line in docstring.splitlines( )
    ):
        try: parsed = parse( docstring, style = DocstringStyle.GOOGLE )
        except ParseError: pass # as parse does: other styles may do
        else:
            if parsed.meta: return parsed
    return parse( docstring )


def _pass_arguments( arguments: __.Arguments ) -> __.Arguments:
    return arguments


def _produce_converter(
    name: str,
    function: _Function,
    parameters: tuple[ _Parameter, ... ],
    descriptions: Descriptions,
    model: __.typx.Any,
) -> __.cabc.Callable[ [ __.Arguments ], __.Arguments ]:
    ''' Returns converter of arguments by the pydantic model of function,
        made on first use unless given (most tools are never called with
        every one of their siblings, and a model holds some 17 KB).
    '''
    names = tuple( parameter.name for parameter in parameters )
    models: list[ __.typx.Any ] = [ ] if model is None else [ model ]

    def convert( arguments: __.Arguments ) -> __.Arguments:
        from pydantic import ValidationError
        if not models:
            models.append(
                _produce_model( name, function, parameters, descriptions ) )
        try: instance = models[ 0 ].model_validate( arguments )
        except ValidationError as exception:
            raise _exceptions.ArgumentsInvalidity(
                name, str( exception ) ) from exception
        except TypeError as exception: # a constraint pydantic cannot apply
            raise _exceptions.InvokerInvalidity(
                name, f"cannot convert arguments by its annotations "
                f"({exception}); fix the annotations of {name!r}."
            ) from exception
        return { name_: getattr( instance, name_ ) for name_ in names }

    return convert


def _produce_invocable(
    function: _Function,
    convert: __.cabc.Callable[ [ __.Arguments ], __.Arguments ],
    accepts_context: bool, # noqa: FBT001
) -> __.cabc.Callable[ ..., __.typx.Any ]:
    if __.inspect.iscoroutinefunction( function ):
        async def invoke_async(
            context: object, arguments: __.Arguments
        ) -> object:
            arguments_ = convert( arguments )
            if accepts_context:
                return await function( context = context, ** arguments_ )
            return await function( ** arguments_ )
        return invoke_async

    async def invoke( context: object, arguments: __.Arguments ) -> object:
        arguments_ = convert( arguments )
        if accepts_context:
            result = await _workers.execute_in_thread(
                function, context = context, ** arguments_ )
        else:
            result = await _workers.execute_in_thread(
                function, ** arguments_ )
        # Such as a plain function which returns a coroutine.
        if __.inspect.isawaitable( result ): return await result
        return result

    return invoke


def _produce_model(
    name: str,
    function: _Function,
    parameters: __.cabc.Sequence[ _Parameter ],
    descriptions: Descriptions,
) -> __.typx.Any:
    from pydantic import ConfigDict, Field, create_model
    fields: dict[ str, __.typx.Any ] = { }
    for parameter in parameters:
        annotation = parameter.annotation
        if annotation is _Parameter.empty: annotation = __.typx.Any
        description = _access_description( parameter, descriptions )
        default = (
            ... if parameter.default is _Parameter.empty
            else parameter.default )
        # An explicit description of None would hide one given inside
        # Annotated[ ..., Field( description = ... ) ].
        field = (
            Field( default ) if description is None
            else Field( default, description = description ) )
        fields[ parameter.name ] = ( annotation, field )
    try:
        return create_model( # pyright: ignore[reportCallIssue,reportUnknownVariableType]
            f"{name}_arguments",
            __config__ = ConfigDict( extra = 'forbid' ),
            ** fields )
    except Exception as exception:
        raise _exceptions.InvokerInvalidity(
            name, f"cannot derive a JSON Schema from the signature of "
            f"{function!r}: {exception}" ) from exception


def _access_description(
    parameter: _Parameter, descriptions: Descriptions
) -> str | None:
    ''' Returns description of parameter: its ``Doc``, else from the
        docstring, else None.
    '''
    return _access_doc( parameter.annotation ) or descriptions.get(
        parameter.name )


def _access_doc( annotation: __.typx.Any ) -> str | None:
    if __.typx.get_origin( annotation ) is not __.typx.Annotated: return None
    for item in __.typx.get_args( annotation )[ 1 : ]:
        if isinstance( item, __.ddoc.Doc ): return item.documentation
    return None


def _survey_parameters(
    name: str, function: _Function
) -> tuple[ tuple[ _Parameter, ... ], bool ]:
    ''' Returns parameters, annotations evaluated, and whether one of them
        receives the context.
    '''
    try: signature = __.inspect.signature( function )
    except ( TypeError, ValueError ) as exception:
        raise _exceptions.InvokerInvalidity(
            name, f"cannot inspect signature: {exception}" ) from exception
    namespace = _access_namespace( function )
    parameters: list[ _Parameter ] = [ ]
    accepts_context = False
    for index, parameter in enumerate( signature.parameters.values( ) ):
        if parameter.name == _CONTEXT_PARAMETER:
            accepts_context = True
            parameters.append( parameter )
            continue
        _validate_parameter( name, index, parameter )
        annotation = _evaluate_annotation( name, parameter, namespace )
        if annotation in _CONTEXT_ANNOTATIONS:
            raise _exceptions.InvokerInvalidity(
                name, f"parameter {parameter.name!r} is annotated as the "
                "invocation context; name it 'context' to receive the "
                "context." )
        parameters.append( parameter.replace( annotation = annotation ) )
    return tuple( parameters ), accepts_context


def _validate_defaults(
    name: str, parameters: __.cabc.Sequence[ _Parameter ]
) -> None:
    ''' Refuses defaults which JSON cannot represent, at construction. '''
    from pydantic_core import PydanticSerializationError, to_jsonable_python
    for parameter in parameters:
        default = parameter.default
        if default is _Parameter.empty: continue
        try:
            __.json.dumps(
                to_jsonable_python( default ), allow_nan = False )
        except ( PydanticSerializationError, TypeError, ValueError ) as error:
            raise _exceptions.InvokerInvalidity(
                name, f"the default of parameter {parameter.name!r} "
                f"({default!r}) cannot be represented in JSON ({error}); "
                "use a JSON value (string, number, boolean, None, list, "
                "dict), an enum member or a pydantic model as default."
            ) from error


def _validate_parameter(
    name: str, index: int, parameter: _Parameter
) -> None:
    ''' Refuses parameters which no JSON object can fill. '''
    if parameter.kind is _Parameter.VAR_POSITIONAL:
        raise _exceptions.InvokerInvalidity(
            name, f"parameter *{parameter.name} takes any number of values, "
            "which a JSON object cannot name; declare a list parameter "
            "instead, or give an explicit arguments_schema." )
    if parameter.kind is _Parameter.VAR_KEYWORD:
        raise _exceptions.InvokerInvalidity(
            name, f"parameter **{parameter.name} takes any keywords, which "
            "a JSON Schema cannot describe; declare named parameters (or a "
            "dict parameter), or give an explicit arguments_schema." )
    if (
        index == 0 and parameter.name in _RECEIVER_NAMES
        and parameter.annotation is _Parameter.empty
    ):
        raise _exceptions.InvokerInvalidity(
            name, f"the first parameter is {parameter.name!r}: this looks "
            "like a method taken from its class; pass the method of an "
            "instance (or a classmethod) instead." )


def _unwrap( function: object ) -> object:
    ''' Returns what runs behind partials, bound methods and decorators. '''
    subject = _unwrap_partial( function )
    if __.inspect.ismethod( subject ): subject = subject.__func__
    if not callable( subject ): return subject
    try: unwrapped: object = __.inspect.unwrap( subject )
    except ValueError: return subject # a cycle of __wrapped__
    if unwrapped is subject: return subject
    return _unwrap( unwrapped )


def _unwrap_partial( function: object ) -> object:
    subject = function
    while isinstance( subject, __.funct.partial ):
        partial = __.typx.cast( __.funct.partial[ object ], subject )
        subject = partial.func
    return subject
