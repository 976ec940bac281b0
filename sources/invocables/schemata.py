# SPDX-License-Identifier: Apache-2.0

''' JSON Schema checks and compiled argument validators.

    ``jsonschema`` is imported when the first validator is produced, so that
    ``import invocables`` stays light.

    Most tools take a flat object of primitives (``{ message: string }``),
    for which a general jsonschema validation (10 to 25 µs) would be most of
    the engine's cost. For schemas built only of keywords understood
    completely here, a precompiled plan accepts valid arguments in about a
    microsecond; whenever the plan is not sure, jsonschema decides (and gives
    the error message), so the outcome is always jsonschema's.
'''


from . import __
from . import exceptions as _exceptions


_Check: __.typx.TypeAlias = __.cabc.Callable[ [ object ], bool ]

_ERRORS_MAXIMUM = 5
_KEYWORDS_ANNOTATION = frozenset( (
    '$comment', '$schema', 'default', 'description', 'examples', 'format',
    'title',
) )
_KEYWORDS_OBJECT = _KEYWORDS_ANNOTATION | {
    'additionalProperties', 'properties', 'required', 'type' }
_KEYWORDS_PROPERTY = _KEYWORDS_ANNOTATION | { 'type' }
_SCHEMA_EMPTY: __.immut.Dictionary[ str, __.typx.Any ] = __.immut.Dictionary(
    type = 'object', properties = { } )


class Validator( __.immut.Object ):
    ''' Compiled validator of arguments against one JSON Schema.

        Compiled once, when the invoker is produced, and reused for every
        invocation.
    '''

    name: str
    schema: __.Schema

    def __init__( self, name: str, schema: __.Schema ):
        from jsonschema import Draft202012Validator
        self.name = name
        self.schema = schema
        # jsonschema's validator methods are only partly typed.
        self._validator: __.typx.Any = Draft202012Validator(
            thaw_json( schema ) )
        self._plan = _produce_plan( schema )

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid. Raises invalidity error otherwise. '''
        if not isinstance( arguments, __.cabc.Mapping ):
            raise _exceptions.ArgumentsInvalidity(
                self.name, "arguments must be a JSON object." )
        arguments_ = __.typx.cast( __.Arguments, arguments )
        plan = self._plan
        if plan is not None and plan.is_certainly_valid( arguments_ ):
            return arguments_
        if self._validator.is_valid( arguments_ ): return arguments_
        raise _exceptions.ArgumentsInvalidity(
            self.name, self._describe_errors( arguments_ ) )

    def _describe_errors( self, arguments: object ) -> str:
        from jsonschema.exceptions import relevance
        errors = sorted(
            self._validator.iter_errors( arguments ), key = relevance )
        lines: list[ str ] = [ ]
        for error in errors[ : _ERRORS_MAXIMUM ]:
            path = '.'.join( str( part ) for part in error.absolute_path )
            where = f"at '{path}'" if path else 'at top level'
            lines.append( f"{where}: {error.message}" )
        if len( errors ) > _ERRORS_MAXIMUM:
            lines.append( "({count} more errors)".format(
                count = len( errors ) - _ERRORS_MAXIMUM ) )
        return '; '.join( lines ) + '.'


class _Plan( __.typx.NamedTuple ):
    ''' Precompiled check of a flat schema; answers "certainly valid". '''

    checks: dict[ str, _Check | None ]
    required: tuple[ str, ... ]
    closed: bool

    def is_certainly_valid( self, arguments: object ) -> bool:
        ''' Returns True if valid for sure; False means "ask jsonschema". '''
        if type( arguments ) is not dict: return False
        values = __.typx.cast( dict[ str, object ], arguments )
        for name in self.required:
            if name not in values: return False
        checks = self.checks
        for key, value in values.items( ):
            if key not in checks:
                if self.closed: return False
                continue
            check = checks[ key ]
            if check is not None and not check( value ): return False
        return True


def produce_validator( name: str, schema: __.Schema ) -> Validator:
    ''' Checks schema and returns compiled validator for it. '''
    validate_schema( name, schema )
    return Validator( name, schema )


def validate_schema( name: str, schema: object ) -> __.Schema:
    ''' Returns schema if valid JSON Schema Draft 2020-12 for tool arguments.

        Raises :py:class:`invocables.exceptions.SchemaInvalidity`, naming the
        tool, otherwise.
    '''
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    if not isinstance( schema, __.cabc.Mapping ):
        raise _exceptions.SchemaInvalidity(
            name, "the schema must be a JSON object (mapping)." )
    schema_ = __.typx.cast( __.Schema, schema )
    genus = schema_.get( 'type', 'object' )
    if genus != 'object':
        raise _exceptions.SchemaInvalidity(
            name, f"tool arguments must be an object, not {genus!r}." )
    try: Draft202012Validator.check_schema( thaw_json( schema_ ) )
    except SchemaError as exception:
        raise _exceptions.SchemaInvalidity(
            name, exception.message ) from exception
    return schema_


def access_schema_empty( ) -> __.Schema:
    ''' Returns schema of a tool which takes no arguments. '''
    return _SCHEMA_EMPTY


def thaw_json( value: __.typx.Any ) -> __.typx.Any:
    ''' Returns plain JSON copy (dicts, lists) of mappings and sequences. '''
    if isinstance( value, __.cabc.Mapping ):
        items = __.typx.cast( __.cabc.Mapping[ str, object ], value )
        return { key: thaw_json( item ) for key, item in items.items( ) }
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return [ thaw_json( item ) for item in items ]
    return value




def _is_array( value: object ) -> bool: return type( value ) is list


def _is_boolean( value: object ) -> bool: return type( value ) is bool


def _is_integer( value: object ) -> bool: return type( value ) is int


def _is_null( value: object ) -> bool: return value is None


def _is_number( value: object ) -> bool:
    return type( value ) is int or type( value ) is float


def _is_object( value: object ) -> bool: return type( value ) is dict


def _is_string( value: object ) -> bool: return type( value ) is str


# Exact types only: anything else (subclasses, 1.0 for integer) goes to
# jsonschema, which knows the finer rules.
_TYPE_CHECKS: __.cabc.Mapping[ str, _Check ] = __.types.MappingProxyType( {
    'array': _is_array,
    'boolean': _is_boolean,
    'integer': _is_integer,
    'null': _is_null,
    'number': _is_number,
    'object': _is_object,
    'string': _is_string,
} )


def _produce_check( schema: object ) -> tuple[ bool, _Check | None ]:
    ''' Returns whether property schema is understood, and its check. '''
    if not isinstance( schema, __.cabc.Mapping ): return False, None
    schema_ = __.typx.cast( __.cabc.Mapping[ str, object ], schema )
    if not set( schema_ ) <= _KEYWORDS_PROPERTY: return False, None
    genus = schema_.get( 'type' )
    if genus is None: return True, None
    if isinstance( genus, str ) and genus in _TYPE_CHECKS:
        return True, _TYPE_CHECKS[ genus ]
    return False, None


def _produce_plan( schema: __.Schema ) -> _Plan | None:
    ''' Returns fast plan, or None if schema uses what it cannot judge. '''
    properties = schema.get( 'properties', { } )
    required = schema.get( 'required', ( ) )
    additional = schema.get( 'additionalProperties', True )
    if not (
        set( schema ) <= _KEYWORDS_OBJECT
        and schema.get( 'type', 'object' ) == 'object'
        and isinstance( properties, __.cabc.Mapping )
        and isinstance( required, ( list, tuple ) )
        and isinstance( additional, bool )
    ): return None
    checks: dict[ str, _Check | None ] = { }
    for name, subschema in __.typx.cast(
        __.cabc.Mapping[ str, object ], properties
    ).items( ):
        understood, check = _produce_check( subschema )
        if not understood: return None
        checks[ name ] = check
    names = tuple( __.typx.cast( __.cabc.Sequence[ object ], required ) )
    if not all( isinstance( name, str ) for name in names ): return None
    return _Plan(
        checks = checks,
        required = __.typx.cast( tuple[ str, ... ], names ),
        closed = not additional )
