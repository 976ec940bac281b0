# SPDX-License-Identifier: Apache-2.0

''' Regular expressions of schemas which cannot run away, and the
    jsonschema validator whose pattern keywords match with them and whose
    ``uniqueItems`` runs in linear time (see :py:mod:`invocables.schemata`).
'''


import contextvars as _contextvars

import invocables.__ as __
import invocables._steps as _steps
import invocables.exceptions as _exceptions


PATTERNS_EXPANSION_MAXIMUM = 100_000
''' Most positions which a pattern for the ``regex`` package may expand to,
    its counted repetitions multiplied out: compiling a larger one could
    take minutes. '''
PATTERNS_TIMEOUT = 0.25

_KEYWORDS_DATA = frozenset( ( 'const', 'default', 'enum', 'examples' ) )
_KEYWORDS_NAMING = frozenset( (
    '$defs', 'definitions', 'dependentSchemas', 'properties' ) )
_PATTERNS_CACHE_SIZE = 1024
_REPETITION = __.re.compile( r'\{(\d+)(?:,(\d*))?\}' )
_SURROGATES = __.re.compile( '[\ud800-\udfff]' ) # lone: no pair in a str

deadline: _contextvars.ContextVar[ float | None ] = _contextvars.ContextVar(
    'invocables.schemata.deadline', default = None )
''' Deadline of the validation under way, for patterns the regex package
    runs. '''


class Expression:
    ''' Compiled regular expression which cannot run away. '''

    __slots__ = ( '_compiled', 'pattern' )

    def __init__( self, pattern: str, compiled: __.typx.Any = None ):
        self.pattern = pattern
        self._compiled = compiled # of the engine which runs it

    def search( self, text: str, deadline: float | None = None ) -> bool:
        ''' Returns whether expression matches somewhere in text.

            ``deadline`` (in :py:func:`time.monotonic` seconds) bounds the
            matching of expressions which RE2 cannot run; past it, raises
            :py:class:`invocables.exceptions.PatternInterruption`. Without
            it, :py:data:`PATTERNS_TIMEOUT` from now.
        '''
        raise NotImplementedError # pragma: no cover


class _ExpressionLinear( Expression ):
    ''' Expression compiled by RE2: linear time, no deadline needed. '''

    def search( self, text: str, deadline: float | None = None ) -> bool:
        ''' Returns whether expression matches somewhere in text. '''
        try: return self._compiled.search( text ) is not None
        except UnicodeEncodeError: # RE2 reads UTF-8: no lone surrogate
            text = _SURROGATES.sub( '\ufffd', text )
            return self._compiled.search( text ) is not None


class _ExpressionBounded( Expression ):
    ''' Expression compiled by the regex package: bounded in time. '''

    def search( self, text: str, deadline: float | None = None ) -> bool:
        ''' Returns whether expression matches somewhere in text. '''
        now = __.time.monotonic( )
        if deadline is None: deadline = now + PATTERNS_TIMEOUT
        remaining = deadline - now
        if remaining <= 0:
            raise _exceptions.PatternInterruption( self.pattern )
        try: match = self._compiled.search( text, timeout = remaining )
        except TimeoutError as exception:
            raise _exceptions.PatternInterruption(
                self.pattern ) from exception
        return match is not None


@__.funct.cache
def access_validator_class( ) -> __.typx.Any:
    ''' Returns Draft 2020-12 validator whose patterns cannot run away.

        jsonschema matches ``pattern`` and ``patternProperties`` with
        Python's ``re`` in four keywords; those are replaced by versions
        which match with :py:func:`compile_pattern`, and otherwise do as
        jsonschema 4 does. Its ``uniqueItems`` finds duplicates in linear
        time, with jsonschema's equality (``1`` equals ``1.0``, ``true``
        does not equal ``1``, arrays and objects compare by content);
        jsonschema's compares every pair of items. Its keywords which
        descend into subschemas count how often they check each part of
        the value (see :py:mod:`invocables._steps`).
    '''
    from jsonschema import Draft202012Validator
    from jsonschema import validators as _validators
    validators: __.typx.Any = _validators # only partly typed
    checks: dict[ str, __.typx.Any ] = {
        **Draft202012Validator.VALIDATORS,
        'additionalProperties': _check_additional_properties,
        'pattern': _check_pattern,
        'patternProperties': _check_pattern_properties,
        'unevaluatedProperties': _check_unevaluated_properties,
        'uniqueItems': _check_unique_items,
    }
    return validators.extend(
        Draft202012Validator, validators = _steps.count_steps( checks ) )


@__.funct.lru_cache( maxsize = _PATTERNS_CACHE_SIZE )
def compile_pattern( pattern: str ) -> Expression:
    import re2 as _re2
    re2: __.typx.Any = _re2 # only partly typed
    options = re2.Options( )
    options.log_errors = False # a refused pattern is not worth a log line
    # RE2 reads UTF-8: a pattern with a lone surrogate is the regex's.
    try: compiled = re2.compile( pattern, options )
    except ( re2.error, UnicodeEncodeError ): pass
    else: return _ExpressionLinear( pattern, compiled )
    expansion = _access_expansion( pattern )
    if expansion > PATTERNS_EXPANSION_MAXIMUM:
        raise _exceptions.PatternInvalidity(
            pattern, "RE2 refuses it, and its repetitions multiply out to "
            f"more than {PATTERNS_EXPANSION_MAXIMUM} positions" )
    import regex
    try: compiled = regex.compile( pattern )
    except regex.error as exception:
        raise _exceptions.PatternInvalidity(
            pattern, str( exception ) ) from exception
    return _ExpressionBounded( pattern, compiled )


def compile_patterns( schema: __.Schema ) -> None:
    ''' Compiles every pattern of schema; raises pattern invalidity. '''
    for pattern in _survey_patterns( schema ): compile_pattern( pattern )


def _access_expansion( pattern: str ) -> int:
    ''' Returns how many positions pattern expands to, its counted
        repetitions multiplied out. A pattern which Python's parser cannot
        read is taken as if every count multiplied every other.
    '''
    import importlib
    parser: __.typx.Any = importlib.import_module(
        're._parser' if __.sys.version_info >= ( 3, 11 ) else 'sre_parse' )
    try: tree = parser.parse( pattern )
    except Exception: # syntax of the regex package only
        expansion = 1
        for low, high in _REPETITION.findall( pattern ):
            expansion *= max( int( low ), int( high or 0 ), 1 )
            if expansion > PATTERNS_EXPANSION_MAXIMUM: break
        return expansion
    try: return _count_positions( tree, parser.MAXREPEAT )
    except RecursionError: return PATTERNS_EXPANSION_MAXIMUM + 1


def _check_additional_properties(
    validator: __.typx.Any,
    additional: __.typx.Any,
    instance: __.typx.Any,
    schema: __.typx.Any,
) -> __.cabc.Iterator[ __.typx.Any ]:
    from jsonschema.exceptions import ValidationError
    if not validator.is_type( instance, 'object' ): return
    extras = set( _survey_additional_keys( instance, schema ) )
    if validator.is_type( additional, 'object' ):
        for extra in extras:
            yield from validator.descend(
                instance[ extra ], additional, path = extra )
    elif not additional and extras:
        if 'patternProperties' in schema:
            verb = 'does' if len( extras ) == 1 else 'do'
            joined = ', '.join( repr( each ) for each in sorted( extras ) )
            patterns = ', '.join(
                repr( each )
                for each in sorted( schema[ 'patternProperties' ] ) )
            yield ValidationError(
                f"{joined} {verb} not match any of the regexes: {patterns}" )
        else:
            yield ValidationError(
                "Additional properties are not allowed ({extras} {verb} "
                "unexpected)".format( **_describe_extras( extras ) ) )


def _check_pattern(
    validator: __.typx.Any,
    pattern: __.typx.Any,
    instance: __.typx.Any,
    schema: __.typx.Any,
) -> __.cabc.Iterator[ __.typx.Any ]:
    from jsonschema.exceptions import ValidationError
    if validator.is_type( instance, 'string' ) and not _search(
        pattern, instance
    ): yield ValidationError( f"{instance!r} does not match {pattern!r}" )


def _check_pattern_properties(
    validator: __.typx.Any,
    patterns: __.typx.Any,
    instance: __.typx.Any,
    schema: __.typx.Any,
) -> __.cabc.Iterator[ __.typx.Any ]:
    if not validator.is_type( instance, 'object' ): return
    for pattern, subschema in patterns.items( ):
        for key, value in instance.items( ):
            if _search( pattern, key ):
                yield from validator.descend(
                    value, subschema, path = key, schema_path = pattern )


def _check_unevaluated_properties(
    validator: __.typx.Any,
    unevaluated: __.typx.Any,
    instance: __.typx.Any,
    schema: __.typx.Any,
) -> __.cabc.Iterator[ __.typx.Any ]:
    from jsonschema.exceptions import ValidationError
    if not validator.is_type( instance, 'object' ): return
    evaluated = _survey_evaluated_keys( validator, instance, schema )
    failures: list[ __.typx.Any ] = [ ]
    for key in instance:
        if key in evaluated: continue
        if not _is_valid( validator.descend(
            instance[ key ], unevaluated, path = key, schema_path = key )
        ): failures.append( key )
    if not failures: return
    if unevaluated is False:
        yield ValidationError(
            "Unevaluated properties are not allowed ({extras} {verb} "
            "unexpected)".format( **_describe_extras( failures ) ) )
    else:
        yield ValidationError(
            "Unevaluated properties are not valid under the given schema "
            "({extras} {verb} unevaluated and invalid)".format(
                **_describe_extras( failures, ordered = False ) ) )


def _check_unique_items(
    validator: __.typx.Any,
    unique: __.typx.Any,
    instance: __.typx.Any,
    schema: __.typx.Any,
) -> __.cabc.Iterator[ __.typx.Any ]:
    from jsonschema.exceptions import ValidationError
    if unique and validator.is_type( instance, 'array' ) and not _is_unique(
        instance
    ): yield ValidationError( f"{instance!r} has non-unique elements" )


def _count_positions( items: __.typx.Any, unbounded: object ) -> int:
    ''' Returns positions of parsed pattern, repetitions multiplied out. '''
    total = 0
    for operation, argument in items:
        if str( operation ).endswith( '_REPEAT' ):
            low, high, part = argument
            times = low if high == unbounded else max( low, high )
            total += max( times, 1 ) * _count_positions( part, unbounded )
        else:
            parts = __.typx.cast(
                tuple[ __.typx.Any, ... ],
                argument if isinstance( argument, tuple ) else ( argument, ) )
            total += 1 + sum(
                _count_positions( each, unbounded )
                for part in parts for each in _survey_parts( part ) )
        if total > PATTERNS_EXPANSION_MAXIMUM: break
    return total


def _describe_extras(
    extras: __.cabc.Iterable[ __.typx.Any ], *, ordered: bool = True
) -> dict[ str, str ]:
    items = sorted( extras, key = str ) if ordered else list( extras )
    return {
        'extras': ', '.join( repr( item ) for item in items ),
        'verb': 'was' if len( items ) == 1 else 'were' }


def _is_valid( errors: __.cabc.Iterator[ __.typx.Any ] ) -> bool:
    return next( errors, None ) is None


def _is_unique( items: __.cabc.Sequence[ __.typx.Any ] ) -> bool:
    ''' Returns whether items are distinct, as jsonschema judges them: by
        keys of their content, in linear time; by pairs, in jsonschema's
        way, for items which are not JSON and have no such key.
    '''
    keys: set[ object ] = set( )
    try:
        for item in items:
            key = _produce_key( item )
            if key in keys: return False
            keys.add( key )
    except TypeError: # unhashable: not JSON
        from jsonschema import _utils
        utilities: __.typx.Any = _utils # private, untyped
        return bool( utilities.uniq( items ) )
    return True


def _produce_key( value: object ) -> object:
    ''' Returns hashable key of value, equal for values which jsonschema's
        equality finds equal: ``1`` and ``1.0`` alike, ``true`` and ``1``
        not, arrays by their items, objects by their members in any order.
    '''
    if isinstance( value, str ): return value
    if value is True or value is False: return ( 'boolean', value )
    if isinstance( value, __.cabc.Sequence ):
        return ( 'array', tuple(
            _produce_key( item ) for item in
            __.typx.cast( __.cabc.Sequence[ object ], value ) ) )
    if isinstance( value, __.cabc.Mapping ):
        members = __.typx.cast( __.cabc.Mapping[ object, object ], value )
        return ( 'object', frozenset(
            ( key, _produce_key( item ) ) for key, item in members.items( ) ) )
    hash( value ) # raises TypeError if it has no key
    return value


def _search( pattern: __.typx.Any, text: str ) -> bool:
    if not isinstance( pattern, str ): return True # not a pattern: ignored
    try: expression = compile_pattern( pattern )
    except _exceptions.PatternInvalidity: return True # as annotations are
    return expression.search( text, deadline.get( ) )


def _survey_additional_keys(
    instance: __.typx.Any, schema: __.typx.Any
) -> __.cabc.Iterator[ __.typx.Any ]:
    properties = schema.get( 'properties', { } )
    patterns = tuple( schema.get( 'patternProperties', { } ) )
    for key in instance:
        if key in properties: continue
        if any( _search( pattern, key ) for pattern in patterns ): continue
        yield key


def _survey_evaluated_keys( # noqa: C901,PLR0912
    validator: __.typx.Any, instance: __.typx.Any, schema: __.typx.Any
) -> list[ __.typx.Any ]:
    ''' Returns keys which schema evaluates, as jsonschema 4 finds them. '''
    if validator.is_type( schema, 'boolean' ): return [ ]
    evaluated: list[ __.typx.Any ] = [ ]
    for keyword in ( '$ref', '$dynamicRef' ):
        reference = schema.get( keyword )
        if reference is None: continue
        resolved = validator._resolver.lookup( reference )
        evaluated.extend( _survey_evaluated_keys(
            validator.evolve(
                schema = resolved.contents, _resolver = resolved.resolver ),
            instance, resolved.contents ) )
    properties = schema.get( 'properties' )
    if validator.is_type( properties, 'object' ):
        evaluated.extend( properties.keys( ) & instance.keys( ) )
    for keyword in ( 'additionalProperties', 'unevaluatedProperties' ):
        subschema = schema.get( keyword )
        if subschema is None: continue
        evaluated.extend(
            key for key, value in instance.items( )
            if _is_valid( validator.descend( value, subschema ) ) )
    if 'patternProperties' in schema:
        evaluated.extend(
            key for key in instance
            for pattern in schema[ 'patternProperties' ]
            if _search( pattern, key ) )
    for key, subschema in schema.get( 'dependentSchemas', { } ).items( ):
        if key not in instance: continue
        evaluated.extend(
            _survey_evaluated_keys( validator, instance, subschema ) )
    for keyword in ( 'allOf', 'oneOf', 'anyOf' ):
        for subschema in schema.get( keyword, [ ] ):
            if not _is_valid( validator.descend( instance, subschema ) ):
                continue
            evaluated.extend(
                _survey_evaluated_keys( validator, instance, subschema ) )
    if 'if' in schema:
        if validator.evolve( schema = schema[ 'if' ] ).is_valid( instance ):
            evaluated.extend(
                _survey_evaluated_keys( validator, instance, schema[ 'if' ] ) )
            if 'then' in schema:
                evaluated.extend( _survey_evaluated_keys(
                    validator, instance, schema[ 'then' ] ) )
        elif 'else' in schema:
            evaluated.extend( _survey_evaluated_keys(
                validator, instance, schema[ 'else' ] ) )
    return evaluated


def _survey_parts( value: object ) -> __.cabc.Iterator[ __.typx.Any ]:
    ''' Yields parsed subpatterns in argument of a parsed operation. '''
    if isinstance( value, list ): # alternatives of a branch
        for item in __.typx.cast( list[ object ], value ):
            yield from _survey_parts( item )
    elif hasattr( value, 'data' ): yield value # a parsed subpattern


def _survey_patterns( schema: object ) -> __.cabc.Iterator[ str ]:
    ''' Yields regular expressions of schema: ``pattern``, and the keys of
        ``patternProperties``, wherever a subschema may be.
    '''
    if isinstance( schema, ( list, tuple ) ):
        for item in __.typx.cast( __.cabc.Sequence[ object ], schema ):
            yield from _survey_patterns( item )
        return
    if not isinstance( schema, __.cabc.Mapping ): return
    for key, value in __.typx.cast(
        __.cabc.Mapping[ str, object ], schema
    ).items( ):
        if key in _KEYWORDS_DATA: continue
        if key == 'pattern' and isinstance( value, str ): yield value
        elif key == 'patternProperties' and isinstance(
            value, __.cabc.Mapping
        ):
            subschemas = __.typx.cast( __.cabc.Mapping[ str, object ], value )
            yield from subschemas
            for subschema in subschemas.values( ):
                yield from _survey_patterns( subschema )
        elif key in _KEYWORDS_NAMING and isinstance( value, __.cabc.Mapping ):
            for subschema in __.typx.cast(
                __.cabc.Mapping[ str, object ], value
            ).values( ): yield from _survey_patterns( subschema )
        else: yield from _survey_patterns( value )
