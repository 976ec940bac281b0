# SPDX-License-Identifier: Apache-2.0

''' JSON Schema dialects: each provider's rules, transformations, refusals.

    The checkers here state each dialect's rules independently of the
    implementation; the property tests (test_570) reuse them.
'''


import copy
import json
import logging
import warnings

import pytest

from invocables import __, dialects, exceptions


ROOT_FORBIDDEN = ( 'allOf', 'anyOf', 'const', 'enum', 'not', 'oneOf', '$ref' )
GEMINI_KEYS = frozenset( (
    'anyOf', 'default', 'description', 'enum', 'example', 'format', 'items',
    'maxItems', 'maxLength', 'maxProperties', 'maximum', 'minItems',
    'minLength', 'minProperties', 'minimum', 'nullable', 'pattern',
    'properties', 'propertyOrdering', 'required', 'title', 'type' ) )
GEMINI_TYPES = frozenset( (
    'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' ) )
GEMINI_FORMATS = {
    'string': { 'enum', 'date-time' }, 'integer': { 'int32', 'int64' },
    'number': { 'float', 'double' } }
STRICT_KEYS = frozenset( (
    '$ref', 'additionalProperties', 'anyOf', 'const', 'description', 'enum',
    'exclusiveMaximum', 'exclusiveMinimum', 'format', 'items', 'maxItems',
    'maximum', 'minItems', 'minimum', 'multipleOf', 'pattern', 'properties',
    'required', 'title', 'type' ) )
STRICT_FORMATS = frozenset( (
    'date', 'date-time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6',
    'time', 'uuid' ) )


def _check_root( schema, problems ):
    if not isinstance( schema, dict ):
        problems.append( 'root is not an object' )
        return False
    if schema.get( 'type' ) != 'object':
        problems.append( 'root type is not object' )
    if not isinstance( schema.get( 'properties' ), dict ):
        problems.append( 'root properties missing' )
        return False
    for key in ROOT_FORBIDDEN:
        if key in schema: problems.append( f'root has {key}' )
    return True


def _types( node ):
    genus = node.get( 'type' )
    if isinstance( genus, list ): return set( genus )
    return { genus } if genus is not None else set( )


def _check_gemini( node, path, problems, root = False ):
    if not isinstance( node, dict ):
        problems.append( f'{path}: not an object' )
        return
    extra = set( node ) - GEMINI_KEYS
    if extra: problems.append( f'{path}: keys {sorted( extra )}' )
    if 'nullable' in node and node[ 'nullable' ] is not True:
        problems.append( f'{path}: nullable not true' )
    if 'anyOf' in node:
        branches = node[ 'anyOf' ]
        if not isinstance( branches, list ) or not branches:
            problems.append( f'{path}: bad anyOf' )
            return
        for index, branch in enumerate( branches ):
            _check_gemini( branch, f'{path}/anyOf/{index}', problems )
        return
    genus = node.get( 'type' )
    if not isinstance( genus, str ) or genus not in GEMINI_TYPES:
        problems.append( f'{path}: type {genus!r}' )
        return
    if 'format' in node and node[ 'format' ] not in GEMINI_FORMATS.get(
        genus, ( )
    ): problems.append( f'{path}: format {node[ "format" ]!r}' )
    if 'enum' in node and ( genus != 'string' or not isinstance(
        node[ 'enum' ], list ) or not all(
            isinstance( value, str ) for value in node[ 'enum' ] ) ):
        problems.append( f'{path}: enum not of strings' )
    if genus == 'object':
        properties = node.get( 'properties' )
        if not isinstance( properties, dict ) or (
            not properties and not root
        ):
            problems.append( f'{path}: object without properties' )
            return
        for key, value in properties.items( ):
            _check_gemini( value, f'{path}/properties/{key}', problems )
        required = node.get( 'required', [ ] )
        if not isinstance( required, list ) or not set( required ) <= set(
            properties
        ): problems.append( f'{path}: required not in properties' )
    elif genus == 'array':
        if not isinstance( node.get( 'items' ), dict ):
            problems.append( f'{path}: array without items' )
        else: _check_gemini( node[ 'items' ], f'{path}/items', problems )
    elif 'properties' in node or 'items' in node:
        problems.append( f'{path}: stray properties or items' )


def _check_strict( node, path, problems, definitions, depth ):
    if not isinstance( node, dict ):
        problems.append( f'{path}: not an object' )
        return
    if depth > dialects.STRICT_NESTING_MAXIMUM:
        problems.append( f'{path}: too deep' )
    extra = set( node ) - STRICT_KEYS - ( { '$defs', 'definitions' }
                                          if not path else set( ) )
    if extra: problems.append( f'{path}: keys {sorted( extra )}' )
    if not any( key in node for key in ( 'type', 'anyOf', '$ref', 'enum',
                                         'const' ) ):
        problems.append( f'{path}: no type' )
    if '$ref' in node and node[ '$ref' ] not in definitions:
        problems.append( f'{path}: unresolvable $ref' )
    if 'format' in node and node[ 'format' ] not in STRICT_FORMATS:
        problems.append( f'{path}: format' )
    for index, branch in enumerate( node.get( 'anyOf', [ ] ) ):
        _check_strict(
            branch, f'{path}/anyOf/{index}', problems, definitions, depth )
    types = _types( node )
    if 'object' in types or 'properties' in node:
        properties = node.get( 'properties' )
        if not isinstance( properties, dict ):
            problems.append( f'{path}: object without properties' )
            return
        if node.get( 'additionalProperties' ) is not False:
            problems.append( f'{path}: additionalProperties not false' )
        if sorted( node.get( 'required', [ ] ) ) != sorted( properties ):
            problems.append( f'{path}: not all required' )
        for key, value in properties.items( ):
            _check_strict(
                value, f'{path}/properties/{key}', problems, definitions,
                depth + 1 )
    if 'array' in types or 'items' in node:
        if not isinstance( node.get( 'items' ), dict ):
            problems.append( f'{path}: array without items' )
        else:
            _check_strict(
                node[ 'items' ], f'{path}/items', problems, definitions,
                depth + 1 )


def verify_dialect( schema, dialect ):
    ''' Returns the rules of dialect which schema breaks (empty: fit). '''
    problems: list[ str ] = [ ]
    if not _check_root( schema, problems ): return problems
    if dialect == 'gemini':
        _check_gemini( schema, '', problems, root = True )
    elif dialect == 'openai-strict':
        definitions = {
            f'#/{key}/{name}': value
            for key in ( '$defs', 'definitions' )
            for name, value in schema.get( key, { } ).items( ) }
        _check_strict( schema, '', problems, definitions, 0 )
        for name, value in definitions.items( ):
            _check_strict( value, name[ 1 : ], problems, definitions, 1 )
    elif dialect == 'ollama':
        for key, value in schema[ 'properties' ].items( ):
            if not isinstance( value, dict ):
                problems.append( f'/properties/{key}: not an object' )
                continue
            genus = value.get( 'type' )
            if genus is not None and not isinstance( genus, str ) and not (
                isinstance( genus, list )
                and all( isinstance( item, str ) for item in genus )
            ): problems.append( f'/properties/{key}: type not text' )
    return problems


_WEATHER = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema',
    '$defs': {
        'Unit': { 'type': 'string', 'enum': [ 'c', 'f' ] },
        'Place': {
            'type': 'object',
            'properties': {
                'city': { 'type': 'string', 'minLength': 1 },
                'unit': { '$ref': '#/$defs/Unit' } },
            'required': [ 'city' ] } },
    'type': 'object',
    'properties': {
        'place': { '$ref': '#/$defs/Place', 'description': 'Where.' },
        'days': { 'type': [ 'integer', 'null' ], 'exclusiveMinimum': 0,
                  'default': 1 },
        'tags': { 'type': 'array', 'items': { 'type': 'string' },
                  'uniqueItems': True },
        'mode': { 'const': 'fast' },
        'when': { 'type': 'string', 'format': 'date-time' },
        'note': { 'anyOf': [ { 'type': 'string' }, { 'type': 'null' } ] } },
    'required': [ 'place' ],
    'additionalProperties': False,
}


@pytest.mark.parametrize( 'dialect', sorted( dialects.DIALECTS ) )
def test_100_every_dialect_fits_its_rules( dialect ):
    ''' A realistic schema adapts to every dialect and meets its rules. '''
    original = copy.deepcopy( _WEATHER )
    adapted = dialects.adapt_schema( _WEATHER, dialect, 'weather' )
    assert verify_dialect( adapted, dialect ) == [ ]
    assert _WEATHER == original
    json.dumps( adapted )


@pytest.mark.parametrize( 'dialect', sorted( dialects.DIALECTS - {
    'gemini' } ) )
def test_110_adapted_schemas_are_json_schema( dialect ):
    ''' Adapted schemas stay valid JSON Schema Draft 2020-12. '''
    from jsonschema import Draft202012Validator
    adapted = dialects.adapt_schema( _WEATHER, dialect )
    Draft202012Validator.check_schema( adapted )


def test_120_frozen_input_accepted_and_untouched( ):
    ''' Frozen mappings are accepted; results are plain and independent. '''
    frozen = __.immut.Dictionary(
        type = 'object', properties = __.immut.Dictionary(
            a = __.immut.Dictionary( type = 'string' ) ) )
    adapted = dialects.adapt_schema( frozen, 'openai-strict' )
    adapted[ 'properties' ][ 'a' ][ 'type' ] = 'integer'
    assert frozen[ 'properties' ][ 'a' ][ 'type' ] == 'string'
    again = dialects.adapt_schema( frozen, 'openai-strict' )
    assert again[ 'properties' ][ 'a' ][ 'type' ] == [ 'string', 'null' ]


def test_130_unknown_dialect( ):
    ''' An unknown dialect raises provider no-support, listing dialects. '''
    with pytest.raises( exceptions.ProviderNoSupport, match = 'gemini' ):
        dialects.adapt_schema( { 'type': 'object' }, 'klingon' )


def test_140_non_object_schema_refused( ):
    ''' A schema which is not a JSON object is refused, naming the tool. '''
    with pytest.raises( exceptions.SchemaDialectInvalidity ) as caught:
        dialects.adapt_schema( [ 1 ], 'openai', 'lister' )
    assert caught.value.name == 'lister'
    assert caught.value.dialect == 'openai'
    assert 'JSON object' in caught.value.rule


def test_200_anthropic_hoists_top_level_any_of( ):
    ''' Top-level anyOf of objects becomes one object (union, common
        required).
    '''
    schema = { 'anyOf': [
        { 'type': 'object', 'properties': {
            'id': { 'type': 'string' }, 'x': { 'type': 'integer' } },
          'required': [ 'id', 'x' ] },
        { 'type': 'object', 'properties': {
            'id': { 'type': 'string' }, 'x': { 'type': 'string' } },
          'required': [ 'id' ] } ] }
    adapted = dialects.adapt_schema( schema, 'anthropic' )
    assert adapted == {
        'type': 'object',
        'properties': {
            'id': { 'type': 'string' },
            'x': { 'anyOf': [ { 'type': 'integer' }, { 'type': 'string' } ] } },
        'required': [ 'id' ] }


def test_210_anthropic_merges_all_of_and_root_ref( ):
    ''' Top-level allOf and $ref are merged; conflicts are refused. '''
    schema = {
        '$defs': { 'Base': { 'type': 'object', 'properties': {
            'a': { 'type': 'string' } }, 'required': [ 'a' ] } },
        'allOf': [
            { '$ref': '#/$defs/Base' },
            { 'properties': { 'b': { 'type': 'integer' } },
              'required': [ 'b' ] } ] }
    adapted = dialects.adapt_schema( schema, 'anthropic' )
    assert adapted[ 'properties' ] == {
        'a': { 'type': 'string' }, 'b': { 'type': 'integer' } }
    assert adapted[ 'required' ] == [ 'a', 'b' ]
    assert verify_dialect( adapted, 'anthropic' ) == [ ]
    rooted = { '$ref': '#/$defs/Base', '$defs': schema[ '$defs' ] }
    adapted = dialects.adapt_schema( rooted, 'anthropic' )
    assert adapted[ 'properties' ] == { 'a': { 'type': 'string' } }
    conflicting = { 'allOf': [
        { 'properties': { 'a': { 'type': 'string' } } },
        { 'properties': { 'a': { 'type': 'integer' } } } ] }
    with pytest.raises( exceptions.SchemaDialectInvalidity, match = "'a'" ):
        dialects.adapt_schema( conflicting, 'anthropic' )


def test_220_anthropic_drops_root_enum_and_not( ):
    ''' Top-level enum, const and not are dropped (validated locally). '''
    schema = {
        'type': 'object', 'properties': { 'a': { 'type': 'string' } },
        'not': { 'required': [ 'b' ] }, 'enum': [ { 'a': 'x' } ] }
    adapted = dialects.adapt_schema( schema, 'anthropic' )
    assert set( adapted ) == { 'type', 'properties' }


def test_230_root_not_object_refused( ):
    ''' A root alternative or type which is not an object is refused. '''
    for schema in (
        { 'anyOf': [ { 'type': 'string' }, { 'type': 'object' } ] },
        { 'type': 'array' },
        { 'type': [ 'string', 'integer' ] },
        { 'oneOf': [ ] },
    ):
        for dialect in dialects.DIALECTS:
            with pytest.raises( exceptions.SchemaDialectInvalidity ):
                dialects.adapt_schema( schema, dialect )
    adapted = dialects.adapt_schema(
        { 'type': [ 'object', 'null' ] }, 'openai' )
    assert adapted == { 'type': 'object', 'properties': { } }


def test_300_strict_requires_everything( ):
    ''' Strict: all required, optional nullable, closed objects. '''
    adapted = dialects.adapt_schema( _WEATHER, 'openai-strict' )
    assert adapted[ 'required' ] == list( adapted[ 'properties' ] )
    assert adapted[ 'additionalProperties' ] is False
    properties = adapted[ 'properties' ]
    assert properties[ 'tags' ][ 'type' ] == [ 'array', 'null' ]
    assert 'uniqueItems' not in properties[ 'tags' ]
    assert properties[ 'days' ][ 'type' ] == [ 'integer', 'null' ]
    assert 'default' not in properties[ 'days' ]
    assert properties[ 'mode' ] == {
        'anyOf': [ { 'const': 'fast' }, { 'type': 'null' } ] }
    assert properties[ 'note' ][ 'anyOf' ][ -1 ] == { 'type': 'null' }
    place = properties[ 'place' ]
    assert place[ 'additionalProperties' ] is False
    assert place[ 'required' ] == [ 'city', 'unit' ]
    assert place[ 'properties' ][ 'unit' ] == {
        'anyOf': [ { '$ref': '#/$defs/Unit' }, { 'type': 'null' } ] }
    definition = adapted[ '$defs' ][ 'Place' ]
    assert definition[ 'additionalProperties' ] is False


@pytest.mark.parametrize( 'schema, fragment', [
    ( { 'type': 'object', 'properties': { 'm': {
        'type': 'object', 'additionalProperties': { 'type': 'string' } } } },
      'open-ended' ),
    ( { 'type': 'object', 'additionalProperties': True }, 'open-ended' ),
    ( { 'type': 'object', 'properties': { 'm': { 'type': 'object' } } },
      'open-ended' ),
    ( { 'type': 'object', 'patternProperties': { '^x': { } } },
      'patternProperties' ),
    ( { 'type': 'object', 'properties': { 'a': { } } }, 'without a type' ),
    ( { 'type': 'object', 'properties': { 'a': { 'type': 'array' } } },
      'items' ),
    ( { 'type': 'object', 'properties': { 'a': { 'allOf': [
        { 'type': 'string' }, { 'minLength': 1 } ] } } }, 'allOf' ),
    ( { 'type': 'object', 'properties': { 'a': True } }, 'boolean' ),
    ( { 'type': 'object', 'properties': { 'a': {
        '$ref': 'https://example.com/x' } } }, 'reference' ),
] )
def test_310_strict_refusals( schema, fragment ):
    ''' Strict mode refuses what it cannot express, leaving input alone. '''
    original = copy.deepcopy( schema )
    with pytest.raises( exceptions.SchemaDialectInvalidity ) as caught:
        dialects.adapt_schema( schema, 'openai-strict', 'tool' )
    assert fragment in caught.value.rule
    assert schema == original
    dialects.adapt_schema( schema, 'openai' )


def test_320_strict_nesting_limit( ):
    ''' Strict mode refuses nesting beyond its limit. '''
    schema = { 'type': 'string' }
    for _ in range( dialects.STRICT_NESTING_MAXIMUM + 1 ):
        schema = { 'type': 'object', 'properties': { 'a': schema },
                   'required': [ 'a' ] }
    with pytest.raises( exceptions.SchemaDialectInvalidity, match = 'nesting' ):
        dialects.adapt_schema( schema, 'openai-strict' )


def test_330_strict_keeps_recursion( ):
    ''' Recursive references stay references in strict mode. '''
    schema = {
        '$defs': { 'Node': { 'type': 'object', 'properties': {
            'next': { '$ref': '#/$defs/Node' } } } },
        'type': 'object', 'properties': { 'head': { '$ref': '#/$defs/Node' } },
        'required': [ 'head' ] }
    adapted = dialects.adapt_schema( schema, 'openai-strict' )
    assert verify_dialect( adapted, 'openai-strict' ) == [ ]
    assert adapted[ 'properties' ][ 'head' ] == { '$ref': '#/$defs/Node' }


def test_340_strict_nulls_removed_from_arguments( ):
    ''' Nulls strict mode brought for optional properties are removed. '''
    arguments = {
        'place': { 'city': 'Oslo', 'unit': None }, 'days': None,
        'tags': None, 'mode': None, 'note': None }
    assert dialects.normalize_strict_arguments( _WEATHER, arguments ) == {
        'place': { 'city': 'Oslo' }, 'days': None, 'note': None }
    assert dialects.normalize_strict_arguments( _WEATHER, 'text' ) == 'text'


def test_400_gemini_inlines_and_rewrites( ):
    ''' Gemini: refs inlined, null unions nullable, bounds inclusive. '''
    adapted = dialects.adapt_schema( _WEATHER, 'gemini' )
    properties = adapted[ 'properties' ]
    assert properties[ 'place' ] == {
        'type': 'object',
        'properties': {
            'city': { 'type': 'string', 'minLength': 1 },
            'unit': { 'type': 'string', 'enum': [ 'c', 'f' ] } },
        'required': [ 'city' ], 'description': 'Where.' }
    assert properties[ 'days' ] == {
        'type': 'integer', 'nullable': True, 'minimum': 1, 'default': 1 }
    assert properties[ 'mode' ] == { 'type': 'string', 'enum': [ 'fast' ] }
    assert properties[ 'when' ][ 'format' ] == 'date-time'
    assert properties[ 'note' ] == { 'type': 'string', 'nullable': True }
    assert 'additionalProperties' not in adapted
    assert '$defs' not in adapted


def test_410_gemini_valid_for_sdk( ):
    ''' Gemini-adapted schemas validate as google-genai Schema. '''
    from google.genai import types
    adapted = dialects.adapt_schema( _WEATHER, 'gemini' )
    typed = types.Schema.model_validate( adapted )
    assert typed.properties is not None
    assert typed.properties[ 'days' ].nullable is True


@pytest.mark.parametrize( 'schema, fragment', [
    ( { '$defs': { 'N': { 'type': 'object', 'properties': {
        'next': { '$ref': '#/$defs/N' } } } },
        'type': 'object', 'properties': { 'n': { '$ref': '#/$defs/N' } } },
      'recursive' ),
    ( { 'type': 'object', 'properties': { 'm': {
        'type': 'object', 'additionalProperties': { 'type': 'string' } } } },
      'open-ended' ),
    ( { 'type': 'object', 'properties': { 'a': { } } }, 'without a type' ),
    ( { 'type': 'object', 'properties': { 'a': { 'type': 'array' } } },
      'items' ),
    ( { 'type': 'object', 'properties': { 'a': { 'type': 'array',
        'prefixItems': [ { 'type': 'string' } ] } } }, 'tuples' ),
    ( { 'type': 'object', 'properties': { 'a': { 'type': 'date' } } },
      'unknown type' ),
    ( { 'type': 'object', 'properties': { 'a': {
        '$ref': '#/$defs/Missing' } } }, 'reference' ),
] )
def test_420_gemini_refusals( schema, fragment ):
    ''' Gemini refuses what its subset cannot express. '''
    with pytest.raises( exceptions.SchemaDialectInvalidity ) as caught:
        dialects.adapt_schema( schema, 'gemini', 'tool' )
    assert fragment in caught.value.rule


def test_430_gemini_alternatives_and_enums( ):
    ''' Type lists become anyOf; non-string enums are dropped with type. '''
    schema = { 'type': 'object', 'properties': {
        'a': { 'type': [ 'string', 'integer', 'null' ] },
        'b': { 'enum': [ 1, 2, 3 ] },
        'c': { 'type': 'string', 'enum': [ 'x', None ] },
        'd': { 'oneOf': [ { 'type': 'string' }, { 'type': 'boolean' } ] },
        'e': { 'type': 'integer', 'exclusiveMaximum': 10, 'format': 'int8' },
        'f': { 'allOf': [ { 'type': 'string' } ], 'examples': [ 'x' ] } } }
    adapted = dialects.adapt_schema( schema, 'gemini' )
    properties = adapted[ 'properties' ]
    assert properties[ 'a' ] == {
        'nullable': True,
        'anyOf': [ { 'type': 'string' }, { 'type': 'integer' } ] }
    assert properties[ 'b' ] == { 'type': 'integer' }
    assert properties[ 'c' ] == {
        'type': 'string', 'enum': [ 'x' ], 'nullable': True }
    assert properties[ 'd' ] == {
        'anyOf': [ { 'type': 'string' }, { 'type': 'boolean' } ] }
    assert properties[ 'e' ] == { 'type': 'integer', 'maximum': 9 }
    assert properties[ 'f' ] == { 'type': 'string', 'example': 'x' }
    assert verify_dialect( adapted, 'gemini' ) == [ ]


def test_500_ollama_property_shapes( ):
    ''' Ollama refuses properties its server cannot decode. '''
    with pytest.raises( exceptions.SchemaDialectInvalidity ):
        dialects.adapt_schema(
            { 'type': 'object', 'properties': { 'a': True } }, 'ollama' )
    with pytest.raises( exceptions.SchemaDialectInvalidity ):
        dialects.adapt_schema(
            { 'type': 'object', 'properties': { 'a': { 'type': 3 } } },
            'ollama' )
    adapted = dialects.adapt_schema( _WEATHER, 'ollama' )
    assert adapted[ 'properties' ][ 'place' ][ '$ref' ] == '#/$defs/Place'


def test_600_exclusion_warns_and_keeps_others( caplog ):
    ''' A bad tool is left out alone, warned about and logged by name. '''
    schemas = {
        'good': { 'type': 'object', 'properties': { 'a': {
            'type': 'string' } } },
        'bad': { 'type': 'object', 'properties': { 'm': {
            'type': 'object', 'additionalProperties': True } } },
        'fine': { 'type': 'object' },
    }
    with caplog.at_level( logging.WARNING, logger = 'invocables' ):
        with pytest.warns( exceptions.ToolExclusionWarning ) as caught:
            adapted = dialects.adapt_schemas( schemas, 'gemini' )
    assert list( adapted ) == [ 'good', 'fine' ]
    warning, = caught
    assert warning.message.name == 'bad'
    assert warning.message.dialect == 'gemini'
    assert 'open-ended' in warning.message.rule
    assert warning.filename == __file__
    assert any( 'bad' in record.getMessage( ) for record in caplog.records )
    assert isinstance( warning.message, exceptions.Omniexception )


def test_610_exclusion_from_pairs_and_single( ):
    ''' Pairs are accepted; a single tool gives None when left out. '''
    bad = { 'type': 'array' }
    with warnings.catch_warnings( record = True ) as caught:
        warnings.simplefilter( 'always' )
        adapted = dialects.adapt_schemas(
            [ ( 'a', { 'type': 'object' } ), ( 'b', bad ) ], 'anthropic' )
        assert dialects.adapt_tool_schema( 'b', bad, 'anthropic' ) is None
    assert list( adapted ) == [ 'a' ]
    assert len( caught ) == 2
    with warnings.catch_warnings( ):
        warnings.simplefilter( 'error' )
        with pytest.raises( exceptions.ToolExclusionWarning ):
            dialects.adapt_tool_schema( 'b', bad, 'anthropic' )


@pytest.mark.parametrize( 'dialect', sorted( dialects.DIALECTS ) )
@pytest.mark.parametrize( 'schema', [
    { 'required': None },
    { '$defs': { 'A': { 'type': 'string', 'properties': None } } },
    { 'properties': { 'a': { 'type': 'string', 'required': None } } },
] )
def test_700_malformed_keywords( dialect, schema ):
    ''' Malformed keywords found by fuzzing are dropped or refused. '''
    try: adapted = dialects.adapt_schema( schema, dialect, 'fuzzed' )
    except exceptions.SchemaDialectInvalidity: return
    assert verify_dialect( adapted, dialect ) == [ ]
