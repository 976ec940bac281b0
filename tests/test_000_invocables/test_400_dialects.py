# SPDX-License-Identifier: Apache-2.0

''' JSON Schema dialects: each provider's rules, transformations, refusals.

    The checkers here state each dialect's rules independently of the
    implementation; the property tests (test_570) reuse them.
'''


import copy
import json
import logging
import random
import warnings

from pathlib import Path

import pytest

from invocables import __, dialects, exceptions, schemata


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


def test_240_root_optional_model_adapted( ):
    ''' A root Optional[ Model ] (anyOf with null) is adapted as Model in
        every dialect: tool arguments are never null.
    '''
    schema = {
        '$defs': { 'Model': { 'type': 'object', 'properties': {
            'q': { 'type': 'string' } }, 'required': [ 'q' ] } },
        'anyOf': [ { '$ref': '#/$defs/Model' }, { 'type': 'null' } ] }
    for dialect in sorted( dialects.DIALECTS ):
        adapted = dialects.adapt_schema( schema, dialect )
        assert verify_dialect( adapted, dialect ) == [ ]
        assert adapted[ 'properties' ][ 'q' ][ 'type' ] == 'string'
        assert adapted[ 'required' ] == [ 'q' ]
    for schema in (
        { 'oneOf': [ { 'type': 'null' } ] },
        { 'anyOf': [ { 'const': None } ] },
    ):
        with pytest.raises( exceptions.SchemaDialectInvalidity ):
            dialects.adapt_schema( schema, 'anthropic' )


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


def test_350_strict_free_form_dictionary_refused( ):
    ''' additionalProperties {} (zod's record(any)) is a free-form
        dictionary, like true: strict mode refuses it rather than close it.
    '''
    for schema in (
        _FREE_FORM,
        { 'type': 'object', 'additionalProperties': { } },
        { 'type': 'object', 'properties': { 'a': { 'type': 'string' } },
          'additionalProperties': { 'description': 'anything' } },
    ):
        with pytest.raises(
            exceptions.SchemaDialectInvalidity, match = 'open-ended'
        ): dialects.adapt_schema( schema, 'openai-strict' )
        assert dialects.adapt_schema( schema, 'openai' ) == {
            **schema, 'properties': schema.get( 'properties', { } ) }
    closed = { 'type': 'object', 'properties': { 'm': {
        'type': 'object', 'additionalProperties': False } } }
    adapted = dialects.adapt_schema( closed, 'openai-strict' )
    assert adapted[ 'properties' ][ 'm' ][ 'properties' ] == { }


def test_355_strict_required_without_property_refused( ):
    ''' A required name without a property could never be sent in strict
        mode's closed objects: strict mode refuses it.
    '''
    schema = { 'type': 'object', 'properties': {
        'a': { 'type': 'object', 'properties': {
            'b': { 'type': 'string' } }, 'required': [ 'b', 'c' ] } } }
    with pytest.raises(
        exceptions.SchemaDialectInvalidity, match = "'c'"
    ): dialects.adapt_schema( schema, 'openai-strict' )


def test_360_strict_nulls_stripped_in_arrays_and_alternatives( ):
    ''' Nulls strict mode forced are removed in arrays of objects, in
        alternatives and through references; nulls the original accepts
        stay.
    '''
    schema = {
        '$defs': { 'Tag': { 'type': 'object', 'properties': {
            'key': { 'type': 'string' }, 'value': { 'type': 'string' },
            'note': { 'type': [ 'string', 'null' ] } },
            'required': [ 'key' ] } },
        'type': 'object',
        'properties': {
            'rows': { 'type': 'array', 'items': {
                'type': 'object', 'properties': {
                    'id': { 'type': 'integer' },
                    'label': { 'type': 'string' } },
                'required': [ 'id' ] } },
            'tags': { 'type': 'array', 'items': { '$ref': '#/$defs/Tag' } },
            'target': { 'anyOf': [
                { 'type': 'object', 'properties': {
                    'path': { 'type': 'string' },
                    'mode': { 'type': 'string' } },
                  'required': [ 'path' ] },
                { 'type': 'string' } ] } },
        'required': [ 'rows', 'tags', 'target' ] }
    arguments = {
        'rows': [ { 'id': 1, 'label': None }, { 'id': 2, 'label': 'x' } ],
        'tags': [ { 'key': 'k', 'value': None, 'note': None } ],
        'target': { 'path': '/tmp', 'mode': None } }
    assert verify_dialect(
        dialects.adapt_schema( schema, 'openai-strict' ),
        'openai-strict' ) == [ ]
    assert dialects.normalize_strict_arguments( schema, arguments ) == {
        'rows': [ { 'id': 1 }, { 'id': 2, 'label': 'x' } ],
        'tags': [ { 'key': 'k', 'note': None } ],
        'target': { 'path': '/tmp' } }
    assert dialects.normalize_strict_arguments(
        schema, { **arguments, 'target': 'plain' } )[ 'target' ] == 'plain'


def test_370_strict_nulls_stripped_under_merged_root( ):
    ''' Nulls strict mode forced for a merged top-level anyOf or oneOf are
        removed, so that the arguments match one original alternative.
    '''
    branches = [
        { 'type': 'object', 'properties': {
            'path': { 'type': 'string' },
            'depth': { 'type': [ 'integer', 'null' ] } },
          'required': [ 'path' ] },
        { 'type': 'object', 'properties': {
            'url': { 'type': 'string' } }, 'required': [ 'url' ] } ]
    from jsonschema import Draft202012Validator
    for key in ( 'anyOf', 'oneOf' ):
        schema = { key: branches }
        adapted = dialects.adapt_schema( schema, 'openai-strict' )
        assert adapted[ 'required' ] == [ 'path', 'depth', 'url' ]
        for sent, expected in (
            ( { 'path': 'p', 'depth': None, 'url': None }, { 'path': 'p' } ),
            ( { 'path': None, 'depth': None, 'url': 'u' }, { 'url': 'u' } ),
            ( { 'path': 'p', 'depth': 2, 'url': None },
              { 'path': 'p', 'depth': 2 } ),
        ):
            normalized = dialects.normalize_strict_arguments( schema, sent )
            assert Draft202012Validator( schema ).is_valid( normalized )
            assert { key: value for key, value in normalized.items( )
                     if value is not None } == expected


def test_380_strict_fallback_warns( caplog ):
    ''' A tool strict mode cannot express is offered without it, after a
        ToolStrictnessWarning (a ToolExclusionWarning) which is also logged.
    '''
    with caplog.at_level( logging.WARNING, logger = 'invocables' ):
        with pytest.warns( exceptions.ToolStrictnessWarning ) as caught:
            adapted = dialects.adapt_tool_schema_strictly(
                'notes', _FREE_FORM, 'openai' )
    assert adapted is None
    warning, = caught
    assert isinstance( warning.message, exceptions.ToolExclusionWarning )
    assert warning.message.name == 'notes'
    assert warning.message.provider == 'openai'
    assert warning.message.dialect == 'openai-strict'
    assert 'open-ended' in warning.message.rule
    assert 'without strict mode' in str( warning.message )
    assert warning.filename == __file__
    assert any( 'notes' in record.getMessage( ) for record in caplog.records )
    assert dialects.adapt_tool_schema_strictly(
        'weather', _WEATHER ) is not None


def test_390_strict_nulls_kept_for_tools_without_strict_mode( ):
    ''' Arguments of a schema strict mode cannot express come back as they
        are: strict mode added nothing to strip.
    '''
    arguments = { 'name': 'n', 'meta': None }
    assert dialects.normalize_strict_arguments(
        _FREE_FORM, arguments ) == arguments


@pytest.mark.asyncio
async def test_395_strict_round_trip_through_processor( ):
    ''' Through the OpenAI processor in strict mode, a call with the nulls
        strict mode forces in an array of objects runs the tool; a
        free-form dictionary keeps its keys.
    '''
    import invocables
    from invocables.processors import produce_processor
    received = [ ]
    async def record( context, arguments ):
        received.append( arguments )
        return 'ok'
    rows = { 'type': 'object', 'properties': {
        'rows': { 'type': 'array', 'items': { 'type': 'object',
            'properties': { 'id': { 'type': 'integer' },
                            'label': { 'type': 'string' } },
            'required': [ 'id' ] } } }, 'required': [ 'rows' ] }
    ensembles = [ invocables.produce_ensemble( 'tools', [
        invocables.produce_invoker(
            record, name = 'rows', arguments_schema = rows ),
        invocables.produce_invoker(
            record, name = 'notes', arguments_schema = _FREE_FORM ) ] ) ]
    processor = produce_processor( 'openai', strict = True )
    with pytest.warns( exceptions.ToolStrictnessWarning ):
        tools = processor.prepare_tools( ensembles )
    assert [ tool[ 'function' ].get( 'strict' ) for tool in tools ] == [
        True, None ]
    invocations = processor.normalize_invocations( { 'choices': [ {
        'finish_reason': 'tool_calls', 'message': { 'tool_calls': [
            { 'id': 'c1', 'type': 'function', 'function': {
                'name': 'rows', 'arguments': json.dumps( { 'rows': [
                    { 'id': 1, 'label': None } ] } ) } },
            { 'id': 'c2', 'type': 'function', 'function': {
                'name': 'notes', 'arguments': json.dumps( {
                    'name': 'n', 'meta': { 'k': 1 } } ) } } ] } } ] } )
    results = await processor.execute_invocations( invocations, ensembles )
    assert [ result.as_text( ) for result in results ] == [ 'ok', 'ok' ]
    assert received == [
        { 'rows': [ { 'id': 1 } ] }, { 'name': 'n', 'meta': { 'k': 1 } } ]


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


_FREE_FORM = {
    'type': 'object',
    'properties': {
        'name': { 'type': 'string' },
        'meta': { 'type': 'object', 'additionalProperties': { } } },
    'required': [ 'name' ] }


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


def test_440_gemini_free_form_root_refused( ):
    ''' A root which takes any keys cannot be offered to Gemini as a tool
        without parameters; a root without properties still can.
    '''
    for extra in ( True, { } ):
        with pytest.raises(
            exceptions.SchemaDialectInvalidity, match = 'open-ended'
        ):
            dialects.adapt_schema(
                { 'type': 'object', 'additionalProperties': extra },
                'gemini' )
    assert dialects.adapt_schema( { 'type': 'object' }, 'gemini' ) == {
        'type': 'object', 'properties': { } }


def test_450_gemini_hostile_keywords( ):
    ''' Keywords of the wrong JSON type are dropped, and bounds beyond
        what the provider reads (a double; a 64-bit count), which its SDK
        refuses with the whole request; large bounds within stay exact.
    '''
    from google.genai import types as genai_types
    schema = { 'type': 'object', 'properties': {
        'a': { 'type': 'string', 'description': 3, 'minLength': -1,
               'pattern': [ 'x' ] },
        'b': { 'type': 'integer', 'exclusiveMinimum': 10 ** 400 },
        'c': { 'type': 'number', 'maximum': -10 ** 400, 'minimum': 1e308 },
        'd': { 'type': 'string', 'maxLength': 2 ** 64 },
        'e': { 'type': 'integer', 'exclusiveMaximum': 2 ** 70 } } }
    adapted = dialects.adapt_schema( schema, 'gemini' )
    properties = adapted[ 'properties' ]
    assert properties[ 'a' ] == { 'type': 'string' }
    assert properties[ 'b' ] == { 'type': 'integer' }
    assert properties[ 'c' ] == { 'type': 'number', 'minimum': 1e308 }
    assert properties[ 'd' ] == { 'type': 'string' }
    assert properties[ 'e' ] == { 'type': 'integer', 'maximum': 2 ** 70 - 1 }
    genai_types.Tool.model_validate( { 'function_declarations': [
        { 'name': 'f', 'parameters': adapted } ] } )


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


def _deep( depth ):
    node = { 'type': 'string' }
    for _ in range( depth ):
        node = { 'type': 'object', 'properties': { 'a': node } }
    return node


def _cyclic( ):
    schema = { 'type': 'object', 'properties': { } }
    schema[ 'properties' ][ 'self' ] = schema
    return schema


@pytest.mark.parametrize( 'dialect', sorted( dialects.DIALECTS ) )
@pytest.mark.parametrize( 'schema, fragment', [
    ( { 'type': 'object', 'properties': { 1: { 'type': 'string' } } },
      'keys' ),
    ( { 'type': 'object', 'properties': { 'a': {
        'type': 'number', 'maximum': float( 'nan' ) } } }, 'finite' ),
    ( { 'type': 'object', 'properties': { 'a': {
        'enum': { 'x', 'y' } } } }, 'JSON values' ),
    ( _deep( 200 ), 'nested more than' ),
    ( _cyclic( ), 'nested more than' ),
    ( { '$defs': { 'A': { '$ref': '#/$defs/B' },
                   'B': { 'anyOf': [ { '$ref': '#/$defs/A' } ] } },
        'type': 'object', 'properties': { 'x': { '$ref': '#/$defs/A' } } },
      'refers back' ),
    ( { 'type': 'object', 'required': '' }, "'required'" ),
] )
def test_800_hostile_schemas_refused( dialect, schema, fragment ):
    ''' Hostile schemas are refused in every dialect, naming why. '''
    with pytest.raises( exceptions.SchemaDialectInvalidity ) as caught:
        dialects.adapt_schema( schema, dialect, 'hostile' )
    assert fragment in caught.value.rule
    assert caught.value.name == 'hostile'


def test_810_explosive_references_refused( ):
    ''' References which double with each definition when inlined are
        refused before they exhaust memory.
    '''
    definitions = { 'D0': { 'type': 'string' } }
    for index in range( 1, 40 ):
        below = { '$ref': f"#/$defs/D{index - 1}", 'description': 'x' }
        definitions[ f"D{index}" ] = {
            'type': 'object', 'properties': { 'a': below, 'b': below } }
    schema = { '$defs': definitions, 'type': 'object',
               'properties': { 'x': { '$ref': '#/$defs/D39' } } }
    with pytest.raises( exceptions.SchemaDialectInvalidity, match = 'grows' ):
        dialects.adapt_schema( schema, 'gemini' )
    with pytest.raises( exceptions.SchemaDialectInvalidity ):
        dialects.adapt_schema( schema, 'openai-strict' )
    assert dialects.adapt_schema( schema, 'anthropic' ) == schema


def test_820_strict_enumeration_limits( ):
    ''' Strict mode refuses enumerations beyond OpenAI's limits; other
        dialects keep them.
    '''
    many = { 'type': 'object', 'properties': {
        'a': { 'type': 'integer', 'enum': list( range( 1001 ) ) } },
        'required': [ 'a' ] }
    long = { 'type': 'object', 'properties': {
        'a': { 'type': 'string',
               'enum': [ f"{index:060d}" for index in range( 300 ) ] } },
        'required': [ 'a' ] }
    for schema, fragment in ( ( many, 'enum values' ), ( long, 'characters' ) ):
        with pytest.raises(
            exceptions.SchemaDialectInvalidity, match = fragment
        ): dialects.adapt_schema( schema, 'openai-strict' )
        assert dialects.adapt_schema( schema, 'anthropic' ) == schema


def test_830_strict_unknown_type_refused( ):
    ''' Strict mode refuses types OpenAI does not know, and 'type' of the
        wrong JSON type.
    '''
    for genus in ( 'date', [ 'string', 3 ], { }, [ ] ):
        schema = { 'type': 'object', 'properties': { 'a': { 'type': genus } } }
        with pytest.raises(
            exceptions.SchemaDialectInvalidity, match = 'type'
        ): dialects.adapt_schema( schema, 'openai-strict' )


def test_840_strict_nullable_keeps_alternatives( ):
    ''' An optional property with a type beside anyOf is wrapped whole, so
        that null is accepted and the alternatives still apply.
    '''
    schema = { 'type': 'object', 'properties': { 'a': {
        'type': 'string', 'anyOf': [
            { 'type': 'string', 'pattern': '^x' },
            { 'type': 'string', 'pattern': '^y' } ] } } }
    adapted = dialects.adapt_schema( schema, 'openai-strict' )
    from jsonschema import Draft202012Validator
    validator = Draft202012Validator( adapted )
    assert validator.is_valid( { 'a': None } )
    assert validator.is_valid( { 'a': 'xa' } )
    assert not validator.is_valid( { 'a': 'za' } )


def test_850_shared_adaptation( ):
    ''' With share, a plain schema whose root alone changes is copied at
        the root only; the input is unchanged; other schemas are copied
        whole, as without share.
    '''
    schema = {
        'properties': { 'a': { 'type': 'string', 'enum': [ 'x', 'y' ] } },
        'required': [ 'a' ], '$schema': 'x' }
    original = copy.deepcopy( schema )
    for dialect in ( 'anthropic', 'cohere', 'ollama', 'openai' ):
        adapted = dialects.adapt_schema( schema, dialect, share = True )
        assert adapted == {
            'type': 'object', 'properties': schema[ 'properties' ],
            'required': [ 'a' ] }
        assert adapted is not schema
        assert adapted[ 'properties' ] is schema[ 'properties' ]
        assert schema == original
    whole = dialects.adapt_schema( schema, 'openai' )
    assert whole[ 'properties' ] is not schema[ 'properties' ]
    for other in (
        { 'anyOf': [ { 'properties': schema[ 'properties' ] } ] },
        { 'type': 'object', 'properties': { 'a': { 'enum': ( 1, 2 ) } } },
    ):
        adapted = dialects.adapt_schema( other, 'openai', share = True )
        assert adapted[ 'properties' ] is not schema[ 'properties' ]
        assert adapted[ 'properties' ][ 'a' ] is not (
            other.get( 'properties', { } ).get( 'a' ) )
    gemini = dialects.adapt_schema( schema, 'gemini', share = True )
    assert gemini[ 'properties' ] is not schema[ 'properties' ]
    with pytest.raises( exceptions.SchemaDialectInvalidity ):
        dialects.adapt_schema(
            { 'type': 'object', 'properties': { 1: { } } }, 'openai',
            share = True )


_DATA = Path( __file__ ).resolve( ).parents[ 1 ] / 'data'
_DIALECTS_SHARED = ( 'anthropic', 'cohere', 'gemini', 'ollama', 'openai' )


def _survey_real_schemas( ):
    schemas = [ ]
    for path in sorted( ( _DATA / 'toolsets' / 'mcp' ).glob( '*.json' ) ):
        answer = json.loads( path.read_text( encoding = 'utf-8' ) )
        schemas.extend(
            ( tool[ 'name' ], tool[ 'inputSchema' ] )
            for tool in answer[ 'result' ][ 'tools' ] )
    for path in sorted( ( _DATA / 'schemas' ).glob( '*.json' ) ):
        schemas.extend( sorted( json.loads(
            path.read_text( encoding = 'utf-8' ) ).items( ) ) )
    return schemas


def _produce_random_node( chooser, depth, rate = 0.12 ):
    ''' Returns a small schema node near Gemini's subset, often off it. '''
    genus = chooser.choice( (
        'string', 'integer', 'number', 'boolean', 'array', 'object',
        'null', 'date', [ 'string', 'null' ], None ) )
    node = { } if genus is None else { 'type': genus }
    extras = {
        'description': ( 'text', 3 ), 'title': ( 'Title', ),
        'format': ( 'date-time', 'int32', 'float', 'email', [ 'x' ] ),
        'enum': (
            [ 'a', 'b' ], [ 'a', None ], [ 1, 2 ], [ ], 'a', [ [ 'a' ] ] ),
        'minimum': ( 0, 1.5, True ), 'maxLength': ( 3, -1 ),
        'nullable': ( True, False ), 'default': ( 'x', { 'a': [ 1 ] } ),
        'example': ( 'x', ), 'examples': ( [ 'x' ], ),
        'additionalProperties': ( False, ), 'pattern': ( '^a', ),
        'anyOf': ( [ { 'type': 'string' }, { 'type': 'null' } ], ),
        'propertyOrdering': ( [ 'a' ], ), 'exclusiveMinimum': ( 0, ),
        'const': ( 'a', ),
    }
    for key, values in extras.items( ):
        if chooser.random( ) < rate: node[ key ] = chooser.choice( values )
    if genus in ( 'object', None ) and depth < 3 and chooser.random( ) < 0.8:
        names = [ f"p{index}" for index in range( chooser.randint( 0, 3 ) ) ]
        node[ 'properties' ] = {
            name: _produce_random_node( chooser, depth + 1, rate )
            for name in names }
        if chooser.random( ) < 0.5:
            node[ 'required' ] = chooser.choice( (
                names[ : 1 ], names + names[ : 1 ], [ 'zz' ], [ ], 'p0' ) )
    if genus in ( 'array', None ) and depth < 3 and chooser.random( ) < 0.8:
        node[ 'items' ] = chooser.choice( (
            _produce_random_node( chooser, depth + 1, rate ), True ) )
    if genus == 'string' and chooser.random( ) < 0.1:
        node[ 'items' ] = { 'type': 'string' }
    return node


def _produce_random_schemas( count ):
    chooser = random.Random( 20261127 )
    schemas = [ ]
    for index in range( count ):
        rate = chooser.choice( ( 0.01, 0.12 ) )
        root = _produce_random_node( chooser, 1, rate )
        if chooser.random( ) < 0.7: root[ 'type' ] = 'object'
        if chooser.random( ) < 0.3: root[ '$schema' ] = 'x'
        if chooser.random( ) < 0.7:
            root.setdefault( 'properties', {
                'a': _produce_random_node( chooser, 2, rate ) } )
        schemas.append( ( f"t{index}", root ) )
    return schemas


def test_900_tool_schemas_shared_as_copied( ):
    ''' Adapting tools with share gives for each tool what adapting it
        without gives (the same refusals too), on the schemas of real
        servers and on random ones; inputs are unchanged.
    '''
    tools = _survey_real_schemas( ) + _produce_random_schemas( 1500 )
    # Known plain, as the schemas of live tools are.
    validators = [
        schemata.Validator( name, schema ) for name, schema in tools ]
    originals = copy.deepcopy( tools )
    names = [ name for name, _ in tools ]
    schemas = [ schema for _, schema in tools ]
    with warnings.catch_warnings( ):
        warnings.simplefilter( 'ignore' )
        for dialect in ( *_DIALECTS_SHARED, 'openai-strict' ):
            together = [
                dialects.adapt_tool_schema(
                    name, schema, dialect, share = True )
                for name, schema in zip( names, schemas ) ]
            alone = [
                dialects.adapt_tool_schema( name, schema, dialect )
                for name, schema in tools ]
            assert together == alone, dialect
            assert sum( item is not None for item in together ) > 0
    assert tools == originals
    assert len( validators ) == len( tools )


def test_905_plain_roots_copied_as_adapted( ):
    ''' The root copies made with the validators of plain schemas are
        what adapting them gives, for the dialects which take such roots
        as they are; inputs are unchanged.
    '''
    tools = _survey_real_schemas( ) + _produce_random_schemas( 1500 )
    validators = [
        schemata.Validator( name, schema ) for name, schema in tools ]
    rooted = [
        ( name, schema, validator.root )
        for ( name, schema ), validator in zip( tools, validators )
        if validator.root is not None ]
    assert 100 < len( rooted ) < len( tools )
    originals = copy.deepcopy( tools )
    for dialect in _DIALECTS_SHARED:
        takes = dialect in ( 'anthropic', 'cohere', 'openai' )
        assert dialects.takes_plain_roots( dialect ) is takes
        if not takes: continue
        for name, schema, root in rooted:
            assert root == dialects.adapt_tool_schema(
                name, schema, dialect, share = True ), dialect
            assert root is not schema
    assert tools == originals


def test_910_tool_schemas_share_what_is_taken( ):
    ''' A plain schema which a dialect takes as it is shares its nested
        nodes with the result; the root is a copy, without the keys the
        dialect drops. Not plain, a schema is copied whole for Gemini;
        without share, for every dialect.
    '''
    schema = {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        'type': 'object', 'additionalProperties': False,
        'properties': {
            'city': { 'type': 'string', 'description': 'City.' },
            'days': { 'type': 'integer', 'minimum': 1 } },
        'required': [ 'city' ] }
    validator = schemata.Validator( 'forecast', schema )
    for dialect in _DIALECTS_SHARED:
        adapted = dialects.adapt_tool_schema(
            'forecast', schema, dialect, share = True )
        assert adapted is not schema
        assert adapted[ 'properties' ] is schema[ 'properties' ]
        assert '$schema' not in adapted
        kept = 'additionalProperties' in adapted
        assert kept is ( dialect != 'gemini' )
        assert '$schema' in schema
    other = copy.deepcopy( schema )
    other[ 'required' ] = ( 'city', ) # not plain JSON
    adapted = dialects.adapt_tool_schema(
        'forecast', other, 'gemini', share = True )
    assert adapted == dialects.adapt_schema( other, 'gemini' )
    assert adapted[ 'properties' ] is not other[ 'properties' ]
    for dialect in _DIALECTS_SHARED:
        unshared = dialects.adapt_tool_schema( 'forecast', schema, dialect )
        assert unshared[ 'properties' ] is not schema[ 'properties' ]
    assert validator.schema is schema
