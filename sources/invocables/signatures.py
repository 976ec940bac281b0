# SPDX-License-Identifier: Apache-2.0

''' JSON Schemas and invocables from signatures of typed Python functions.

    Uses pydantic's schema generation, imported only when a function-based
    invoker is produced, so that ``import invocables`` stays light.
'''


from . import __
from . import exceptions as _exceptions
from . import workers as _workers


_CONTEXT_PARAMETER = 'context'
_PLAIN_TYPES = frozenset( ( str, int, float, bool, type( None ), object ) )
_param_sphinx = __.re.compile( r'^\s*:param\s+(?:\S+\s+)?(\w+):\s*(.*)$' )
_section_google = __.re.compile( r'^\s*(Args|Arguments|Parameters):\s*$' )
_param_google = __.re.compile( r'^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)$' )

_Function: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]
Descriptions: __.typx.TypeAlias = __.cabc.Mapping[ str, str ]


def parse_docstring( function: _Function ) -> tuple[ str, Descriptions ]:
    ''' Returns description and parameter descriptions from docstring.

        Understands Sphinx ``:param name: text`` lines and Google-style
        ``Args:`` sections; everything else is the description.
    '''
    docstring = __.inspect.getdoc( function ) or ''
    lines: list[ str ] = [ ]
    descriptions: dict[ str, str ] = { }
    in_section = False
    for line in docstring.splitlines( ):
        if _section_google.match( line ):
            in_section = True
            continue
        if in_section:
            match = _param_google.match( line )
            if match:
                descriptions[ match[ 1 ] ] = match[ 2 ].strip( )
                continue
            if line.strip( ) and not line.startswith( ' ' ):
                in_section = False
            else: continue
        match = _param_sphinx.match( line )
        if match: descriptions[ match[ 1 ] ] = match[ 2 ].strip( )
        else: lines.append( line )
    return '\n'.join( lines ).strip( ), descriptions


def produce_signature_invocable(
    name: str, function: _Function, descriptions: Descriptions
) -> tuple[ __.Schema, __.cabc.Callable[ ..., __.typx.Any ] ]:
    ''' Returns argument schema and invocable for typed function.

        Arguments that JSON values represent exactly are passed as they are
        (validated by the schema); others (models, enums, dates) are
        converted by a pydantic model built once for the function.
    '''
    parameters, accepts_context = _survey_parameters( name, function )
    model = _produce_model( name, function, parameters, descriptions )
    schema = _clean_schema( model.model_json_schema( ) )
    plain = all(
        _is_plain_annotation( parameter.annotation )
        for parameter in parameters )
    names = tuple( parameter.name for parameter in parameters )
    convert = _pass_arguments if plain else (
        _produce_converter( name, model, names ) )
    invocable = _produce_invocable( function, convert, accepts_context )
    return __.types.MappingProxyType( schema ), invocable


def _clean_schema(
    schema: dict[ str, __.typx.Any ]
) -> dict[ str, __.typx.Any ]:
    ''' Removes titles which pydantic generates from names. '''
    schema.pop( 'title', None )
    properties = schema.get( 'properties', { } )
    for property_ in properties.values( ):
        property_.pop( 'title', None )
    schema.setdefault( 'properties', { } )
    return schema


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


def _pass_arguments( arguments: __.Arguments ) -> __.Arguments:
    return arguments


def _produce_converter(
    name: str, model: __.typx.Any, names: tuple[ str, ... ]
) -> __.cabc.Callable[ [ __.Arguments ], __.Arguments ]:
    from pydantic import ValidationError

    def convert( arguments: __.Arguments ) -> __.Arguments:
        try: instance = model.model_validate( arguments )
        except ValidationError as exception:
            raise _exceptions.ArgumentsInvalidity(
                name, str( exception ) ) from exception
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
            return await _workers.execute_in_thread(
                function, context = context, ** arguments_ )
        return await _workers.execute_in_thread( function, ** arguments_ )

    return invoke


def _produce_model(
    name: str,
    function: _Function,
    parameters: __.cabc.Sequence[ __.inspect.Parameter ],
    descriptions: Descriptions,
) -> __.typx.Any:
    from pydantic import ConfigDict, Field, create_model
    fields: dict[ str, __.typx.Any ] = { }
    for parameter in parameters:
        annotation = parameter.annotation
        if annotation is __.inspect.Parameter.empty: annotation = __.typx.Any
        description = _access_doc( annotation ) or descriptions.get(
            parameter.name )
        default = (
            ... if parameter.default is __.inspect.Parameter.empty
            else parameter.default )
        fields[ parameter.name ] = (
            annotation, Field( default, description = description ) )
    try:
        return create_model( # pyright: ignore[reportCallIssue,reportUnknownVariableType]
            f"{name}_arguments",
            __config__ = ConfigDict( extra = 'forbid' ),
            ** fields )
    except Exception as exception:
        raise _exceptions.InvokerInvalidity(
            name, f"cannot derive a JSON Schema from the signature of "
            f"{function!r}: {exception}" ) from exception


def _access_doc( annotation: __.typx.Any ) -> str | None:
    if __.typx.get_origin( annotation ) is not __.typx.Annotated: return None
    for item in __.typx.get_args( annotation )[ 1 : ]:
        if isinstance( item, __.ddoc.Doc ): return item.documentation
    return None


def _survey_parameters(
    name: str, function: _Function
) -> tuple[ tuple[ __.inspect.Parameter, ... ], bool ]:
    try: signature = __.inspect.signature( function, eval_str = True )
    except ( TypeError, ValueError, NameError ) as exception:
        raise _exceptions.InvokerInvalidity(
            name, f"cannot inspect signature: {exception}" ) from exception
    parameters: list[ __.inspect.Parameter ] = [ ]
    accepts_context = False
    for parameter in signature.parameters.values( ):
        if parameter.name == _CONTEXT_PARAMETER:
            accepts_context = True
            continue
        if parameter.kind in (
            __.inspect.Parameter.VAR_POSITIONAL,
            __.inspect.Parameter.VAR_KEYWORD,
            __.inspect.Parameter.POSITIONAL_ONLY,
        ):
            raise _exceptions.InvokerInvalidity(
                name, f"parameter {parameter.name!r} must be passable by "
                "keyword (no *args, **kwargs or positional-only)." )
        parameters.append( parameter )
    return tuple( parameters ), accepts_context
