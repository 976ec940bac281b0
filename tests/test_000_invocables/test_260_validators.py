# SPDX-License-Identifier: Apache-2.0

''' Compiled validators: the fast path agrees with jsonschema, always. '''


import operator
import os

import jsonschema
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from invocables import exceptions
from invocables import schemata


# INVOCABLES_FUZZ_EXAMPLES=10000 runs the meta check property that long.
_FUZZ_EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '300' ) )
_SCHEMAS = [
    { 'type': 'object',
      'properties': { 'message': { 'type': 'string' } },
      'required': [ 'message' ] },
    { 'type': 'object',
      'properties': {
          'a': { 'type': 'number', 'description': 'A.' },
          'b': { 'type': 'integer', 'default': 1 },
          'c': { 'type': 'boolean' }, 'd': { 'type': 'null' },
          'e': { 'type': 'array' }, 'f': { 'type': 'object' },
          'g': { 'title': 'anything' } },
      'required': [ 'a' ], 'additionalProperties': False },
    { 'type': 'object', 'properties': { } },
    { 'type': 'object',
      'properties': { 'n': { 'type': 'string', 'minLength': 2 } } },
]
_VALIDATORS = [
    ( schemata.produce_validator( 'tool', schema ),
      jsonschema.Draft202012Validator( schema ) )
    for schema in _SCHEMAS ]
_VALUES = st.recursive(
    st.none( ) | st.booleans( ) | st.integers( ) | st.floats(
        allow_nan = False ) | st.text( max_size = 3 ),
    lambda children: st.lists( children, max_size = 2 ) | st.dictionaries(
        st.text( max_size = 2 ), children, max_size = 2 ),
    max_leaves = 4 )
_ARGUMENTS = st.dictionaries(
    st.sampled_from( [ 'message', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'n', 'z' ] ),
    _VALUES, max_size = 4 )


def test_100_fast_path_planned_for_flat_schemas( ):
    ''' Flat schemas of primitives get a fast plan; others do not. '''
    assert schemata._produce_plan( _SCHEMAS[ 0 ] ) is not None
    assert schemata._produce_plan( _SCHEMAS[ 1 ] ) is not None
    assert schemata._produce_plan( _SCHEMAS[ 3 ] ) is None
    assert schemata._produce_plan(
        { 'type': 'object', 'properties': { 'x': { 'enum': [ 1 ] } } } ) is None


@settings( max_examples = 150, deadline = None )
@given( index = st.integers( 0, len( _SCHEMAS ) - 1 ), arguments = _ARGUMENTS )
def test_110_agrees_with_jsonschema( index, arguments ):
    ''' Valid arguments pass and invalid ones fail exactly as jsonschema. '''
    validator, reference = _VALIDATORS[ index ]
    expected = reference.is_valid( arguments )
    try: validator.validate_arguments( arguments )
    except exceptions.ArgumentsInvalidity: valid = False
    else: valid = True
    assert valid == expected


def test_120_invalid_schema_refused( ):
    ''' An invalid schema is refused, naming the tool. '''
    with pytest.raises( exceptions.SchemaInvalidity ) as caught:
        schemata.produce_validator(
            'broken', { 'type': 'object',
                        'properties': { 'x': { 'type': 'nonsense' } } } )
    assert "'broken'" in str( caught.value )


def test_130_non_objects_refused( ):
    ''' Arguments which are not an object are refused. '''
    validator = schemata.produce_validator( 'tool', _SCHEMAS[ 2 ] )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        validator.validate_arguments( [ 1 ] )
    assert validator.validate_arguments( { 'anything': 1 } ) == {
        'anything': 1 }


_PATTERNS = [ '^a', 'b', '^[a-c]+$', 'x|y', '^$', '[0-9]{2}' ]
_PATTERN_SCHEMAS = [
    { 'type': 'object', 'properties': {
        'p': { 'type': 'string', 'pattern': pattern } } }
    for pattern in _PATTERNS ] + [
    { 'type': 'object',
      'patternProperties': { '^a': { 'type': 'integer' }, 'b': { } },
      'additionalProperties': { 'type': 'string' } },
    { 'type': 'object',
      'patternProperties': { '^[ab]+$': { 'type': 'integer' } },
      'additionalProperties': False },
    { 'type': 'object',
      'properties': { 'p': { } },
      'patternProperties': { '^a': { 'type': 'integer' } },
      'unevaluatedProperties': False },
    { 'type': 'object',
      'allOf': [ { 'patternProperties': { 'b': { 'type': 'string' } } } ],
      'anyOf': [ { 'properties': { 'ab': { } } }, { 'required': [ 'x' ] } ],
      'unevaluatedProperties': { 'type': 'boolean' } },
]
_PATTERN_VALIDATORS = [
    ( schemata.produce_validator( 'tool', schema ),
      jsonschema.Draft202012Validator( schema ) )
    for schema in _PATTERN_SCHEMAS ]
_PATTERN_ARGUMENTS = st.dictionaries(
    st.sampled_from( [ 'p', 'a', 'ab', 'b', 'ba', 'x', 'c', 'aab', '' ] ),
    st.one_of(
        st.text( alphabet = 'abcxy09', max_size = 4 ), st.integers( ),
        st.booleans( ) ),
    max_size = 4 )


@settings( max_examples = 300, deadline = None )
@given(
    index = st.integers( 0, len( _PATTERN_SCHEMAS ) - 1 ),
    arguments = _PATTERN_ARGUMENTS )
def test_140_patterns_agree_with_jsonschema( index, arguments ):
    ''' Keywords which match patterns on RE2 (pattern, patternProperties,
        additionalProperties, unevaluatedProperties) decide as jsonschema's.
    '''
    validator, reference = _PATTERN_VALIDATORS[ index ]
    try: validator.validate_arguments( arguments )
    except exceptions.ArgumentsInvalidity: valid = False
    else: valid = True
    assert valid == reference.is_valid( arguments )


_SCHEMAS_INVALID = [
    { 'type': 'object', 'required': [ 'a', 'a' ] },
    { 'type': 'object', 'properties': { 'a': { 'type': [ 'string', 'string' ] } } },
    { 'type': 'object', 'properties': { 'a': { 'type': [ ] } } },
    { 'type': 'object', 'properties': { 'a': { 'type': 'text' } } },
    { 'type': 'object', 'properties': { 'a': { 'minLength': -1 } } },
    { 'type': 'object', 'properties': { 'a': { 'anyOf': [ ] } } },
    { 'type': 'object', 'properties': { 'a': { 'items': 3 } } },
    { 'type': 'object', 'properties': { 'a': { 'enum': 'x' } } },
    { 'type': 'object', 'properties': { 'a': { 'maximum': '3' } } },
    { 'type': 'object', 'properties': { 'a': { 'description': 3 } } },
    { 'type': 'object', 'properties': { 'a': { 'pattern': '(' } } },
    { 'type': 'object', 'properties': { 'a': { 'multipleOf': 0 } } },
    { 'type': 'object', '$defs': { 'a': { 'uniqueItems': 'yes' } } },
]


@pytest.mark.parametrize( 'schema', _SCHEMAS_INVALID )
def test_150_quick_meta_check_refuses_what_metaschema_refuses( schema ):
    ''' Schemas the meta-schema refuses are refused, quick check or not. '''
    with pytest.raises( jsonschema.SchemaError ):
        jsonschema.Draft202012Validator.check_schema( schema )
    with pytest.raises( exceptions.SchemaInvalidity ):
        schemata.produce_validator( 'tool', schema )


def test_160_quick_meta_check_accepts_generated_schemas( ):
    ''' Schemas pydantic generates, with references, pass the check. '''
    schema = {
        'type': 'object',
        '$defs': { 'Point': {
            'type': 'object',
            'properties': {
                'x': { 'type': 'number', 'minimum': 0 },
                'y': { 'anyOf': [ { 'type': 'integer' }, { 'type': 'null' } ],
                       'default': None } },
            'required': [ 'x' ] } },
        'properties': {
            'point': { '$ref': '#/$defs/Point' },
            'tags': { 'type': 'array', 'items': { 'type': 'string' },
                      'maxItems': 3 },
            'mode': { 'enum': [ 'a', 'b' ], 'description': 'Mode.' } },
        'required': [ 'point' ],
        'additionalProperties': False }
    jsonschema.Draft202012Validator.check_schema( schema )
    validator = schemata.produce_validator( 'tool', schema )
    assert validator.validate_arguments(
        { 'point': { 'x': 1 } } ) == { 'point': { 'x': 1 } }


_META_VALUES = st.one_of(
    st.none( ), st.booleans( ), st.integers( -2, 3 ),
    st.floats( -1, 1, allow_nan = False ),
    st.sampled_from( ( '^a', '(', 'a{2}', '[', 'string', 'x', '#/$defs/a' ) ),
    st.lists( st.sampled_from( ( 'a', 'b', 'string', 'integer' ) ),
              max_size = 3 ) )
_META_KEYWORDS = st.sampled_from( (
    'type', 'minimum', 'multipleOf', 'pattern', 'minItems', 'maxLength',
    'uniqueItems', 'enum', 'const', 'required', 'description', '$ref' ) )
_META_SCHEMAS = st.recursive(
    st.dictionaries( _META_KEYWORDS, _META_VALUES, max_size = 3 ),
    lambda inner: st.one_of(
        st.builds(
            lambda keyword, items, rest: { **rest, keyword: items },
            st.sampled_from( ( 'prefixItems', 'anyOf', 'allOf' ) ),
            st.lists( inner, max_size = 2 ), inner ),
        st.builds(
            lambda keyword, item, rest: { **rest, keyword: item },
            st.sampled_from( ( 'items', 'additionalProperties', 'not' ) ),
            inner, inner ),
        st.builds(
            lambda members, rest: { **rest, 'properties': members },
            st.dictionaries(
                st.sampled_from( ( 'a', 'b' ) ), inner, max_size = 2 ),
            inner ) ),
    max_leaves = 6 )


@settings( max_examples = _FUZZ_EXAMPLES, deadline = None )
@given( _META_SCHEMAS )
def test_170_quick_meta_check_agrees_with_metaschema( schema ):
    ''' Whatever the quick meta check accepts (prefixItems, multipleOf and
        pattern included), the Draft 2020-12 meta-schema accepts.
    '''
    if not schemata._is_schema_surely_valid( schema ): return
    jsonschema.Draft202012Validator(
        jsonschema.Draft202012Validator.META_SCHEMA,
        format_checker = jsonschema.Draft202012Validator.FORMAT_CHECKER,
    ).validate( schema )


def test_180_plain_schemas_found( ):
    ''' A tool's plain schema is found plain when the tool is made, and
        its plain object root copied; a schema holding a tuple is not
        plain, and has no root copy; one holding NaN is not plain either,
        and no tool is made of it (no JSON text carries NaN). '''
    import invocables

    async def forecast( context: object, arguments: object ) -> str:
        return 'sunny'
    plain = { 'type': 'object',
              'properties': { 'city': { 'type': 'string' } },
              'required': [ 'city' ] }
    unplain = { 'type': 'object',
                'properties': { 'units': {
                    'type': 'string', 'enum': ( 'metric', 'imperial' ) } } }
    unfinite = { 'type': 'object',
                 'properties': { 'days': {
                     'type': 'number', 'maximum': float( 'nan' ) } } }
    invokers = [
        invocables.produce_invoker(
            forecast, name = f"forecast{index}", arguments_schema = schema )
        for index, schema in enumerate( ( plain, unplain ) ) ]
    assert schemata.is_plain( plain )
    assert not schemata.is_plain( unplain )
    assert not schemata.is_plain( unfinite )
    assert invokers[ 0 ].validator.root == plain
    assert invokers[ 1 ].validator.root is None
    with pytest.raises( exceptions.SchemaInvalidity ):
        invocables.produce_invoker(
            forecast, name = 'forecast2', arguments_schema = unfinite )


def test_195_plain_roots_copied_once( ):
    ''' A plain schema has a plain object root when every dialect of
        roots would take its root as it is (less ``$schema``), and that
        root is copied with its validator, once, its nested nodes shared.
    '''
    rooted = [
        { 'type': 'object', 'properties': { } },
        { '$schema': 'https://json-schema.org/draft/2020-12/schema',
          'type': 'object', 'title': 'Forecast', 'description': 'd',
          'properties': { 'city': { 'type': 'string' } },
          'required': [ 'city' ], 'additionalProperties': False },
    ]
    unrooted = [
        { 'type': 'object', 'properties': { },
          '$defs': { 'a': { 'type': 'string' } } },
        { 'type': 'object',
          'anyOf': [ { 'required': [ 'a' ] }, { 'required': [ 'b' ] } ],
          'properties': { 'a': { }, 'b': { } } },
        { 'properties': { 'city': { 'type': 'string' } } }, # no type
        { 'type': 'object', 'properties': { }, 'required': [ 1 ] },
        { 'type': 'object', 'properties': [ ] },
        { 'type': 'object', 'properties': { }, 'enum': [ { } ] },
    ]
    validators = [
        schemata.Validator( f"tool{index}", schema )
        for index, schema in enumerate( rooted + unrooted ) ]
    roots = [ validator.root for validator in validators ]
    assert roots[ len( rooted ) : ] == [ None ] * len( unrooted )
    # All of them plain JSON all the same: that is not about roots.
    assert all( map( schemata.is_plain, rooted + unrooted ) )
    # Root copies, made with the validator: less $schema, not the schema,
    # the same objects at every access, nested nodes shared.
    roots = roots[ : len( rooted ) ]
    assert roots == [
        { key: value for key, value in schema.items( )
          if key != '$schema' } for schema in rooted ]
    assert all( root is not schema for root, schema in zip( roots, rooted ) )
    assert all(
        root[ 'properties' ] is schema[ 'properties' ]
        for root, schema in zip( roots, rooted ) )
    assert all( map(
        operator.is_, roots,
        [ validator.root for validator in validators[ : len( rooted ) ] ] ) )
