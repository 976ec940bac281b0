# SPDX-License-Identifier: Apache-2.0

''' Argument validation with a fast path for flat schemas.

    Most MCP tools take a flat object of primitives (``{ message: string }``),
    and a trivial call over stdio costs about 0.3 ms, so the 10 to 25 µs of a
    general jsonschema validation would be most of the adapter's overhead.
    For schemas built only of keywords this module understands completely,
    a precompiled check accepts valid arguments in about a microsecond;
    whenever it is not sure, the core's jsonschema validator decides (and
    gives the error message), so the outcome is always jsonschema's.
'''


from . import __
from .. import schemata as _schemata


_Check: __.typx.TypeAlias = __.cabc.Callable[ [ object ], bool ]

_ANNOTATION_KEYWORDS = frozenset( (
    '$comment', '$schema', 'default', 'description', 'examples', 'format',
    'title',
) )
_OBJECT_KEYWORDS = _ANNOTATION_KEYWORDS | {
    'additionalProperties', 'properties', 'required', 'type' }
_PROPERTY_KEYWORDS = _ANNOTATION_KEYWORDS | { 'type' }


def _is_array( value: object ) -> bool: return type( value ) is list


def _is_boolean( value: object ) -> bool: return type( value ) is bool


def _is_integer( value: object ) -> bool: return type( value ) is int


def _is_null( value: object ) -> bool: return value is None


def _is_number( value: object ) -> bool:
    return type( value ) is int or type( value ) is float


def _is_object( value: object ) -> bool: return type( value ) is dict


def _is_string( value: object ) -> bool: return type( value ) is str


# Checks answer "certainly valid"; False means "let jsonschema decide".
_TYPE_CHECKS: dict[ str, _Check ] = {
    'array': _is_array,
    'boolean': _is_boolean,
    'integer': _is_integer,
    'null': _is_null,
    'number': _is_number,
    'object': _is_object,
    'string': _is_string,
}


class ArgumentsValidator( _schemata.Validator ):
    ''' Core validator with a fast path for flat schemas of primitives. '''

    def __init__( self, name: str, schema: __.Schema ):
        super( ).__init__( name, schema )
        self._plan = _produce_plan( schema )

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid. Raises invalidity error otherwise. '''
        plan = self._plan
        if plan is not None and _is_certainly_valid( plan, arguments ):
            return __.typx.cast( __.Arguments, arguments )
        return super( ).validate_arguments( arguments )


class _Plan( __.typx.NamedTuple ):

    checks: dict[ str, _Check | None ]
    required: tuple[ str, ... ]
    closed: bool


def produce_validator( name: str, schema: __.Schema ) -> ArgumentsValidator:
    ''' Checks schema and returns validator with fast path, if possible. '''
    _schemata.validate_schema( name, schema )
    return ArgumentsValidator( name, schema )


def _is_certainly_valid( plan: _Plan, arguments: object ) -> bool:
    if type( arguments ) is not dict: return False
    values = __.typx.cast( dict[ str, object ], arguments )
    for name in plan.required:
        if name not in values: return False
    checks = plan.checks
    for key, value in values.items( ):
        if key not in checks:
            if plan.closed: return False
            continue
        check = checks[ key ]
        if check is not None and not check( value ): return False
    return True


def _produce_check( schema: object ) -> tuple[ bool, _Check | None ]:
    ''' Returns whether property schema is understood, and its check. '''
    if not isinstance( schema, __.cabc.Mapping ): return False, None
    schema_ = __.typx.cast( __.cabc.Mapping[ str, object ], schema )
    if not set( schema_ ) <= _PROPERTY_KEYWORDS: return False, None
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
        set( schema ) <= _OBJECT_KEYWORDS
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
