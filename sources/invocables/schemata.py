# SPDX-License-Identifier: Apache-2.0

''' JSON Schema checks and compiled argument validators.

    ``jsonschema`` is imported when the first validator is produced, so that
    ``import invocables`` stays light.

    Regular expressions of schemas (``pattern``, ``patternProperties``)
    never run on Python's backtracking engine, which a schema from anyone
    (an MCP server) could make run for hours: they run on RE2, in linear
    time; the few which RE2 cannot run (lookarounds, backreferences) run on
    the ``regex`` package, within :py:data:`PATTERNS_TIMEOUT` seconds per
    validation, after which the arguments are refused as invalid. A
    validation which checks one part of the value by one subschema more
    than :py:data:`VISITS_MAXIMUM` times refuses the value too: parts of a
    schema which apply each other at every level of the value would
    otherwise make its validation take exponentially long in the depth of
    the value.

    Most tools take a flat object of primitives (``{ message: string }``),
    for which a general jsonschema validation (10 to 25 µs) would be most of
    the engine's cost. For schemas built only of keywords understood
    completely here, a precompiled plan accepts valid arguments in about a
    microsecond; whenever the plan is not sure, jsonschema decides (and gives
    the error message), so the outcome is always jsonschema's.
'''


import invocables.__ as __
import invocables._fanout as _fanout
import invocables._patterns as _patterns
import invocables._steps as _steps
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions

from ._fanout import FANOUT_MAXIMUM as FANOUT_MAXIMUM
from ._patterns import (
    PATTERNS_EXPANSION_MAXIMUM as PATTERNS_EXPANSION_MAXIMUM,
    PATTERNS_TIMEOUT as PATTERNS_TIMEOUT,
    Expression as Expression,
)
from ._steps import VISITS_MAXIMUM as VISITS_MAXIMUM


ARGUMENTS_DEPTH_MAXIMUM_DEFAULT = __.values.ARGUMENTS_DEPTH_MAXIMUM
ARGUMENTS_SIZE_MAXIMUM_DEFAULT = __.values.ARGUMENTS_SIZE_MAXIMUM
PLAIN_DEPTH_MAXIMUM = __.values.PLAIN_DEPTH_MAXIMUM

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

KEYS_ROOT_PLAIN = frozenset( (
    'additionalProperties', 'description', 'properties', 'required',
    'title', 'type' ) )
''' Keys of a root with nothing to resolve and nothing to drop. '''
_KEYS_ROOT_DECLARED = KEYS_ROOT_PLAIN | { '$schema' }
_TYPES_NAME: frozenset[ type ] = frozenset( ( str, ) )


class Validator( __.immut.Object, instances_mutables = ( '_validator', ) ):
    ''' Compiled validator of arguments against one JSON Schema.

        Its fast plan is made when the invoker is produced; the general
        (jsonschema) validator is compiled when first needed, then reused
        for every invocation.
    '''

    name: str
    schema: __.Schema
    root: __.typx.Annotated[
        dict[ str, __.typx.Any ] | None,
        __.ddoc.Doc( ''' The schema's root copied, less ``$schema``, when
            the schema is plain JSON with a plain object root (only the
            keys of :py:data:`KEYS_ROOT_PLAIN`, ``type`` ``object``, its
            ``required`` a list of text): what dialects which take such a
            root as it is offer, the same object in every tool list (not
            to be changed). ``None`` otherwise. ''' ),
    ]

    # jsonschema's validator methods are only partly typed.
    _validator: __.typx.Any
    _plan: '_Plan | None'

    def __init__( self, name: str, schema: __.Schema ):
        # In one pass: see FunctionInvoker.__init__.
        vars( self ).update(
            name = name, schema = schema, _validator = None,
            _plan = _produce_plan( schema ),
            root = _produce_root( schema ) )

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid. Raises invalidity error otherwise.

            Arguments which are not a plain dict (other mappings, ``None``)
            are first made plain JSON, within the default limits of depth
            and size (the execution engine does so with its own limits).
        '''
        arguments_: __.Arguments = (
            arguments if _is_dict( arguments )
            else _canisters.produce_arguments(
                self.name, arguments, ARGUMENTS_DEPTH_MAXIMUM_DEFAULT,
                ARGUMENTS_SIZE_MAXIMUM_DEFAULT ) )
        plan = self._plan
        if plan is not None and plan.is_certainly_valid( arguments_ ):
            return arguments_
        validator = self._access_validator( )
        deadline = __.time.monotonic( ) + PATTERNS_TIMEOUT
        token = _patterns.deadline.set( deadline )
        try:
            try: reason = self._judge( validator, arguments_ )
            except _exceptions.ValidationExhaustion:
                # A part given in several places is checked at each: once
                # each place has its own copy, the bound counts true work.
                separated = _steps.separate( arguments_ )
                if separated is arguments_: raise
                arguments_ = separated
                reason = self._judge( validator, arguments_ )
            if reason is None: return arguments_
        except _exceptions.PatternInterruption as exception:
            reason = (
                f"the pattern {exception.pattern!r} took too long to "
                "match; send shorter text." )
        except RecursionError:
            reason = "the arguments are nested too deeply to be checked."
        except _exceptions.ValidationExhaustion:
            reason = describe_exhaustion( 'arguments' )
        finally: _patterns.deadline.reset( token )
        raise _exceptions.ArgumentsInvalidity( self.name, reason )

    def _judge(
        self, validator: __.typx.Any, arguments: __.Arguments
    ) -> str | None:
        ''' Returns why arguments are invalid; ``None`` if valid. '''
        with _steps.bound( ):
            if validator.is_valid( arguments ): return None
            return self._describe_errors( arguments )

    def _access_validator( self ) -> __.typx.Any:
        validator = self._validator
        if validator is None:
            validator = self._validator = _patterns.access_validator_class( )(
                thaw_json( self.schema ) )
        return validator

    def _describe_errors( self, arguments: object ) -> str:
        from jsonschema.exceptions import relevance
        errors = sorted(
            self._access_validator( ).iter_errors( arguments ),
            key = relevance )
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

    def is_certainly_valid( self, arguments: __.Arguments ) -> bool:
        ''' Returns True if valid for sure; False means "ask jsonschema".

            The validator hands over arguments already made a plain dict.
        '''
        for name in self.required:
            if name not in arguments: return False
        checks = self.checks
        for key, value in arguments.items( ):
            if key not in checks:
                if self.closed: return False
                continue
            check = checks[ key ]
            if check is not None and not check( value ): return False
        return True


is_plain = __.values.is_plain


def produce_validator( name: str, schema: __.Schema ) -> Validator:
    ''' Checks schema and returns compiled validator for it. '''
    validate_schema( name, schema )
    return Validator( name, schema )


def produce_instance_validator(
    schema: __.cabc.Mapping[ str, __.typx.Any ], *, formats: bool = False
) -> __.typx.Any:
    ''' Returns jsonschema validator of any value against schema.

        Draft 2020-12, whose patterns match as arguments' do (see
        :py:func:`produce_expression`): for schemas from elsewhere which
        are no schema of arguments, such as the schema of an MCP server's
        elicitation. A pattern which RE2 cannot run matches within
        :py:data:`PATTERNS_TIMEOUT`; past it, validation raises
        :py:class:`invocables.exceptions.PatternInterruption`. With
        ``formats``, formats are checked too.
    '''
    genus = _patterns.access_validator_class( )
    if not formats: return genus( thaw_json( schema ) )
    from jsonschema import FormatChecker
    return genus( thaw_json( schema ), format_checker = FormatChecker( ) )


def produce_expression( pattern: str ) -> 'Expression':
    ''' Returns compiled regular expression, safe against backtracking.

        Compiled by RE2 (matching in linear time) when it can; otherwise
        (lookarounds, backreferences) by the ``regex`` package, whose
        matching stops at a deadline. Compiled expressions are cached.
        Raises :py:class:`invocables.exceptions.PatternInvalidity` if
        neither can compile the pattern.
    '''
    return _patterns.compile_pattern( pattern )


def validate_schema( name: str, schema: object ) -> __.Schema:
    ''' Returns schema if valid JSON Schema Draft 2020-12 for tool arguments.

        Raises :py:class:`invocables.exceptions.SchemaInvalidity`, naming the
        tool, otherwise.
    '''
    from jsonschema.exceptions import SchemaError
    if not isinstance( schema, __.cabc.Mapping ):
        raise _exceptions.SchemaInvalidity(
            name, "the schema must be a JSON object (mapping)." )
    schema_ = __.typx.cast( __.Schema, schema )
    genus = schema_.get( 'type', 'object' )
    if genus != 'object':
        raise _exceptions.SchemaInvalidity(
            name, f"tool arguments must be an object, not {genus!r}." )
    try:
        # Most schemas (all which pydantic generates) use only keywords
        # whose meta-schema rules are simple: checked here in microseconds.
        # Whatever this check is not sure of, the meta-schema decides.
        if not _is_schema_surely_valid( schema_ ):
            _access_metavalidator( ).check( thaw_json( schema_ ) )
            if not _is_finite( schema_ ):
                raise _exceptions.SchemaInvalidity(
                    name, "the schema holds a number which JSON cannot "
                    "carry (NaN or Infinity)." )
    except SchemaError as exception:
        raise _exceptions.SchemaInvalidity(
            name, exception.message ) from exception
    except RecursionError as exception:
        raise _exceptions.SchemaInvalidity(
            name, "the schema is nested too deeply." ) from exception
    _validate_fanout( name, schema_ )
    try: _patterns.compile_patterns( schema_ )
    except _exceptions.PatternInvalidity as exception:
        raise _exceptions.SchemaInvalidity(
            name, f"{exception}" ) from exception
    return schema_


def access_schema_empty( ) -> __.Schema:
    ''' Returns schema of a tool which takes no arguments. '''
    return _SCHEMA_EMPTY


thaw_json = __.values.thaw_json
bound_steps = _steps.bound # bounds the repeated work of validations within


def describe_exhaustion( subject: str ) -> str:
    ''' Returns reason of a validation of subject (``'arguments'``) which
        checked one part of it by one subschema too often.
    '''
    return (
        f"checking the {subject} against the schema repeats itself more "
        f"than {VISITS_MAXIMUM} times on one part of them (parts of the "
        "schema apply each other at every level); send them nested less "
        "deeply." )


def is_schema_fanned( schema: __.cabc.Mapping[ str, __.typx.Any ] ) -> bool:
    ''' Returns whether schema applies more than
        :py:data:`FANOUT_MAXIMUM` subschemas to one value (or is nested
        too deeply to tell): for schemas from elsewhere, such as an MCP
        server's elicitation, which are checked before any value is
        validated against them.
    '''
    try: return _fanout.access_fanout( schema ) > FANOUT_MAXIMUM
    except RecursionError: return True


def _validate_fanout( name: str, schema: __.Schema ) -> None:
    ''' Raises schema invalidity if schema applies too many subschemas to
        one value (see :py:func:`invocables._fanout.access_fanout`).
    '''
    try: fanout = _fanout.access_fanout( schema )
    except RecursionError as exception:
        raise _exceptions.SchemaInvalidity(
            name, "the schema is nested too deeply." ) from exception
    if fanout <= FANOUT_MAXIMUM: return
    raise _exceptions.SchemaInvalidity(
        name, "its applicators (allOf, anyOf, oneOf, not, if, then, else, "
        "dependentSchemas) and references apply more than "
        f"{FANOUT_MAXIMUM} subschemas to one value, which would make "
        "validation take too long." )


def _is_array( value: object ) -> bool: return type( value ) is list


def _is_dict(
    value: __.typx.Any
) -> __.typx.TypeGuard[ dict[ str, __.typx.Any ] ]:
    ''' Returns whether value is exactly a dict (its keys are not checked:
        the validator which follows does). Narrows without a cast. '''
    return type( value ) is dict


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


_METAKEYWORDS_ANY = frozenset( ( 'const', 'default' ) )
_METAKEYWORDS_ARRAY = frozenset( ( 'enum', 'examples' ) )
_METAKEYWORDS_BOOLEAN = frozenset( (
    'deprecated', 'readOnly', 'uniqueItems', 'writeOnly' ) )
_METAKEYWORDS_COUNT = frozenset( (
    'maxItems', 'maxLength', 'maxProperties', 'minItems', 'minLength',
    'minProperties' ) )
_METAKEYWORDS_NUMBER = frozenset( (
    'exclusiveMaximum', 'exclusiveMinimum', 'maximum', 'minimum' ) )
_METAKEYWORDS_SCHEMA = frozenset( (
    'additionalProperties', 'items', 'not' ) )
_METAKEYWORDS_SCHEMAS = frozenset( (
    'allOf', 'anyOf', 'oneOf', 'prefixItems' ) )
_METAKEYWORDS_SCHEMATA = frozenset( ( '$defs', 'properties' ) )
_METAKEYWORDS_TEXT = frozenset( (
    '$comment', 'description', 'format', 'title' ) )
_REFERENCE_LOCAL = __.re.compile( r'^#(?:/[A-Za-z0-9_.~$%-]+)*$' )
_TYPE_NAMES = frozenset( _TYPE_CHECKS )


def _is_schema_surely_valid( schema: object ) -> bool:
    ''' Returns True if schema is surely valid against the meta-schema.

        False means "not sure": only keywords whose Draft 2020-12 rules are
        simple shapes are judged here (exact types; no formats but local
        references); anything else is for the meta-schema to decide.
    '''
    try: return _is_subschema_surely_valid( schema )
    except RecursionError: return False


def _is_subschema_surely_valid( # noqa: C901,PLR0911,PLR0912,PLR0915
    schema: object
) -> bool:
    if type( schema ) is bool: return True
    if not isinstance( schema, __.cabc.Mapping ): return False
    schema_ = __.typx.cast( __.cabc.Mapping[ str, object ], schema )
    for keyword, value in schema_.items( ):
        if keyword in _METAKEYWORDS_TEXT:
            if type( value ) is not str: return False
        elif keyword in _METAKEYWORDS_SCHEMATA:
            if not isinstance( value, __.cabc.Mapping ): return False
            for subschema in __.typx.cast(
                __.cabc.Mapping[ str, object ], value
            ).values( ):
                if not _is_subschema_surely_valid( subschema ): return False
        elif keyword == 'type':
            if not _is_type_surely_valid( value ): return False
        elif keyword == 'required':
            if not _is_names_surely_valid( value ): return False
        elif keyword in _METAKEYWORDS_SCHEMA:
            if not _is_subschema_surely_valid( value ): return False
        elif keyword in _METAKEYWORDS_SCHEMAS:
            if type( value ) not in ( list, tuple ) or not value: return False
            for subschema in __.typx.cast( __.cabc.Sequence[ object ], value ):
                if not _is_subschema_surely_valid( subschema ): return False
        elif keyword in _METAKEYWORDS_ANY:
            if not is_plain( value ): return False
        elif keyword in _METAKEYWORDS_ARRAY:
            if type( value ) is not list or not is_plain( value ):
                return False
        elif keyword in _METAKEYWORDS_COUNT:
            if type( value ) is not int or value < 0: return False
        elif keyword in _METAKEYWORDS_NUMBER:
            if type( value ) is not int and not (
                type( value ) is float
                and __.math.isfinite( __.typx.cast( float, value ) )
            ): return False
        elif keyword in _METAKEYWORDS_BOOLEAN:
            if type( value ) is not bool: return False
        elif keyword == 'multipleOf':
            if not _is_divisor_surely_valid( value ): return False
        elif keyword == 'pattern':
            if not _is_pattern_surely_valid( value ): return False
        elif keyword == '$ref':
            if type( value ) is not str: return False
            if _REFERENCE_LOCAL.match( value ) is None: return False
        else: return False
    return True


def _is_finite( schema: object ) -> bool:
    ''' Returns whether every number of schema is finite (no NaN and no
        Infinity, which no JSON text carries), at any depth.
    '''
    pending: list[ object ] = [ schema ]
    while pending:
        value = pending.pop( )
        if isinstance( value, float ):
            if not __.math.isfinite( value ): return False
        elif isinstance( value, __.cabc.Mapping ):
            pending.extend( __.typx.cast(
                __.cabc.Mapping[ object, object ], value ).values( ) )
        elif isinstance( value, ( list, tuple ) ):
            pending.extend( __.typx.cast( __.cabc.Sequence[ object ], value ) )
    return True


def _is_divisor_surely_valid( value: object ) -> bool:
    if type( value ) is not int and type( value ) is not float: return False
    return __.typx.cast( float, value ) > 0


def _is_pattern_surely_valid( value: object ) -> bool:
    ''' Returns whether the meta-schema's format check of a regular
        expression (compiled by Python's ``re``) surely passes.
    '''
    if type( value ) is not str: return False
    try: __.re.compile( value )
    except __.re.error: return False
    return True


def _is_names_surely_valid( value: object ) -> bool:
    if type( value ) not in ( list, tuple ): return False
    names = __.typx.cast( __.cabc.Sequence[ object ], value )
    if not all( type( name ) is str for name in names ): return False
    return len( set( names ) ) == len( names )


def _is_type_surely_valid( value: object ) -> bool:
    if type( value ) is str: return value in _TYPE_NAMES
    if type( value ) not in ( list, tuple ) or not value: return False
    names = __.typx.cast( __.cabc.Sequence[ object ], value )
    if not all(
        type( name ) is str and name in _TYPE_NAMES for name in names
    ): return False
    return len( set( names ) ) == len( names )


class _Metavalidator:
    ''' Draft 2020-12 meta-schema validator, made once and shared. '''

    def __init__( self ) -> None:
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for
        metaschema = Draft202012Validator.META_SCHEMA
        genus: __.typx.Any = validator_for(
            metaschema, default = Draft202012Validator )
        self._validator: __.typx.Any = genus(
            metaschema, format_checker = genus.FORMAT_CHECKER )

    def check( self, schema: object ) -> None:
        ''' Raises ``SchemaError`` if schema not valid, as jsonschema does. '''
        from jsonschema.exceptions import SchemaError
        for error in self._validator.iter_errors( schema ):
            raise SchemaError.create_from( error )


@__.funct.cache
def _access_metavalidator( ) -> _Metavalidator:
    return _Metavalidator( )


def _produce_root( schema: __.Schema ) -> dict[ str, __.typx.Any ] | None:
    ''' Returns root copy of schema, less ``$schema``, if plain with a
        plain object root; of a read-only view of one (what typed
        functions get) too.
    '''
    genus = type( schema ) # not narrowed: the schema stays a Schema
    if genus is __.types.MappingProxyType: schema = dict( schema )
    elif genus is not dict: return None
    if not ( _is_root_plain( schema ) and is_plain( schema ) ): return None
    root = dict( schema )
    root.pop( '$schema', None )
    return root


def _is_root_plain( schema: __.Schema ) -> bool:
    ''' Returns whether plain schema has a plain object root. '''
    if not (
        schema.keys( ) <= _KEYS_ROOT_DECLARED
        and schema.get( 'type' ) == 'object'
        and type( schema.get( 'properties' ) ) is dict
    ): return False
    required: object = schema.get( 'required', [ ] )
    return type( required ) is list and _TYPES_NAME.issuperset( map(
        type, __.typx.cast( list[ object ], required ) ) )
