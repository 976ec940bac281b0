# SPDX-License-Identifier: Apache-2.0

''' Schemas and values which would stall validation are refused or checked
    in bounded time: ``uniqueItems`` in linear time, patterns which expand
    too far, applicators which fan out too far (arguments and output),
    strict mode's own validation, and validations which repeat their work
    at every level of the value (old code: exponential).
'''


import types

import jsonschema._utils
import pytest

from invocables import _fanout, _patterns, exceptions, schemata
from invocables.dialects import _strict
from invocables.mcp import exchanges, results, _sdk as sdk


_PATTERN_HUGE = '^(((a{100}){100}){100}){1}$' # RE2 refuses; 10**6 positions


def _chain( keyword, depth, leaf = None ):
    ''' Returns schema of definitions which each apply the next twice:
        2**depth subschemas for one value. '''
    definitions = {
        f"d{index}": { keyword: [
            { '$ref': f"#/$defs/d{index + 1}" },
            { '$ref': f"#/$defs/d{index + 1}" } ] }
        for index in range( depth ) }
    definitions[ f"d{depth}" ] = leaf or { 'type': 'object' }
    return {
        'type': 'object', '$defs': definitions,
        'properties': { 'x': { '$ref': '#/$defs/d0' } } }


def _spy_equality( monkeypatch, maximum ):
    ''' Makes jsonschema's pairwise equality fail past maximum calls, so
        that a quadratic check of unique items fails at once. '''
    original = jsonschema._utils.equal
    calls = [ 0 ]

    def equal( one, two ):
        calls[ 0 ] += 1
        if calls[ 0 ] > maximum:
            raise AssertionError( "uniqueItems compares pairs of items" )
        return original( one, two )

    monkeypatch.setattr( jsonschema._utils, 'equal', equal )


def _validate_unique( items ):
    validator = schemata.produce_instance_validator(
        { 'type': 'array', 'uniqueItems': True } )
    return validator.is_valid( items )


def test_100_unique_items_equality( ):
    ''' uniqueItems judges equality as jsonschema does: 1 equals 1.0, true
        differs from 1, arrays and objects compare by content (members in
        any order), text never equals an array. '''
    duplicates = (
        [ 1, 1.0 ], [ None, None ], [ True, True ], [ 'a', 'b', 'a' ],
        [ { 'a': 1, 'b': [ 2 ] }, { 'b': [ 2.0 ], 'a': 1 } ],
        [ [ 1, [ 2 ] ], [ 1, [ 2.0 ] ] ], [ [ ], [ ] ], [ { }, { } ] )
    distinct = (
        [ 1, True ], [ 0, False ], [ [ 1 ], [ True ] ],
        [ { 'a': [ 1 ] }, { 'a': [ True ] } ], [ 'a', [ 'a' ] ],
        [ None, 0 ], [ [ ], { } ], [ '1', 1 ],
        [ { 'a': 1 }, { 'a': 1, 'b': 1 } ], [ 1, 'x', { 'x': 1 } ] )
    for items in duplicates:
        assert not _validate_unique( items ), items
        assert not jsonschema._utils.uniq( items ), items
    for items in distinct:
        assert _validate_unique( items ), items
        assert jsonschema._utils.uniq( items ), items


def test_110_unique_items_linear( monkeypatch ):
    ''' Large arrays of objects, and of integers with one text (which
        jsonschema cannot sort), are judged without comparing pairs. '''
    count = 20_000
    _spy_equality( monkeypatch, count )
    objects = [ { 'i': index, 'tags': [ index ] } for index in range( count ) ]
    assert _validate_unique( objects )
    assert not _validate_unique( [ *objects, { 'tags': [ 5 ], 'i': 5.0 } ] )
    numbers = [ *range( count ), 'x' ]
    assert _validate_unique( numbers )
    assert not _validate_unique( [ *numbers, 7.0 ] )


def test_120_unique_items_arguments( monkeypatch ):
    ''' A tool's array of unique items refuses a duplicate among many, and
        names the wrong item, without comparing pairs. '''
    count = 20_000
    _spy_equality( monkeypatch, count )
    validator = schemata.produce_validator( 'tag', {
        'type': 'object',
        'properties': { 'ids': {
            'type': 'array', 'uniqueItems': True,
            'items': { 'type': 'integer' } } },
        'required': [ 'ids' ] } )
    ids = list( range( count ) )
    assert validator.validate_arguments( { 'ids': ids } ) == { 'ids': ids }
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        validator.validate_arguments( { 'ids': [ *ids, 'x' ] } )
    assert 'is not of type' in str( caught.value )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        validator.validate_arguments( { 'ids': [ *ids, 3 ] } )
    assert 'non-unique' in str( caught.value )


def test_200_pattern_expansion_refused( ):
    ''' A pattern which RE2 refuses and whose repetitions multiply out past
        the bound is invalid, without compiling it; its schema too. '''
    with pytest.raises( exceptions.PatternInvalidity ) as caught:
        schemata.produce_expression( _PATTERN_HUGE )
    assert 'multiply out' in caught.value.reason
    with pytest.raises( exceptions.SchemaInvalidity ):
        schemata.validate_schema( 'p', {
            'type': 'object',
            'properties': { 's': {
                'type': 'string', 'pattern': _PATTERN_HUGE } } } )
    # Syntax of the regex package alone: every count taken as nested.
    with pytest.raises( exceptions.PatternInvalidity ):
        schemata.produce_expression( r'\p{L}{100}(?=x){2000}' )


def test_210_pattern_expansion_within_bound( ):
    ''' Patterns which RE2 refuses but which expand moderately compile on
        the regex package and match. '''
    expression = schemata.produce_expression(
        '(?<=x)[a-z]{1,64}@[a-z]{1,255}' )
    assert expression.search( 'xab@cd' )
    assert not expression.search( 'yab@cd' )
    expression = schemata.produce_expression( '^(?=a)(a{100}){10}$' )
    assert expression.search( 'a' * 1000 )
    assert not expression.search( 'a' * 999 )
    assert schemata.PATTERNS_EXPANSION_MAXIMUM == 100_000


@pytest.mark.parametrize( 'keyword', [ 'allOf', 'anyOf', 'oneOf' ] )
def test_300_fanout_refused( keyword ):
    ''' Definitions which each apply the next twice make the schema
        invalid past the bound, naming the cause. '''
    with pytest.raises( exceptions.SchemaInvalidity ) as caught:
        schemata.validate_schema( 'hostile', _chain( keyword, 14 ) )
    assert 'subschemas to one value' in caught.value.reason
    frozen = types.MappingProxyType( _chain( keyword, 14 ) )
    with pytest.raises( exceptions.SchemaInvalidity ):
        schemata.validate_schema( 'hostile', frozen )


def test_310_fanout_references_resolved( ):
    ''' Fan-out through anchors, identifiers and in-place keywords (not,
        if, then, else) is counted as jsonschema resolves it. '''
    anchored = { f"d{index}": {
        '$anchor': f"a{index}",
        'allOf': [ { '$ref': f"#a{index + 1}" } ] * 2 }
        for index in range( 16 ) }
    anchored[ 'd16' ] = { '$anchor': 'a16' }
    identified = { f"d{index}": {
        '$id': f"urn:d{index}",
        'allOf': [ { '$ref': f"urn:d{index + 1}" } ] * 2 }
        for index in range( 16 ) }
    identified[ 'd16' ] = { '$id': 'urn:d16' }
    negated = { f"d{index}": {
        'not': { 'not': { '$ref': f"#/$defs/d{index + 1}" } },
        'if': { '$ref': f"#/$defs/d{index + 1}" } }
        for index in range( 16 ) }
    negated[ 'd16' ] = { }
    for definitions, reference in (
        ( anchored, '#a0' ), ( identified, 'urn:d0' ),
        ( negated, '#/$defs/d0' ),
    ):
        schema = {
            'type': 'object', '$defs': definitions,
            'properties': { 'x': { '$ref': reference } } }
        with pytest.raises( exceptions.SchemaInvalidity ):
            schemata.validate_schema( 'hostile', schema )


def test_320_fanout_within_bound( ):
    ''' Moderate fan-out, recursive schemas and unresolvable references
        are accepted; their validation gives jsonschema's outcome. '''
    assert schemata.FANOUT_MAXIMUM == 10_000
    validator = schemata.produce_validator(
        'chain', _chain( 'anyOf', 8, { 'type': 'integer' } ) )
    assert validator.validate_arguments( { 'x': 3 } ) == { 'x': 3 }
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        validator.validate_arguments( { 'x': 'three' } )
    tree = {
        'type': 'object', '$ref': '#/$defs/node',
        '$defs': { 'node': {
            'type': 'object',
            'properties': {
                'label': { 'anyOf': [
                    { 'type': 'string' }, { 'type': 'null' } ] },
                'children': {
                    'type': 'array', 'items': { '$ref': '#/$defs/node' } },
            } } } }
    validator = schemata.produce_validator( 'tree', tree )
    arguments = { 'label': 'a', 'children': [ { 'label': None } ] }
    assert validator.validate_arguments( arguments ) == arguments
    assert _fanout.access_fanout( tree ) < 10
    remote = {
        'type': 'object',
        'properties': { 'a': { '$ref': 'https://example.com/a.json' } } }
    assert schemata.validate_schema( 'remote', remote ) is remote


def test_330_fanout_output_schema( ):
    ''' An MCP tool whose output schema fans out too far has its result
        refused as breaking its own declaration, without validating it. '''
    result = sdk.produce_model(
        sdk.types.CallToolResult,
        content = [ ], structured_content = { 'x': { } } )
    schema = types.MappingProxyType( _chain( 'allOf', 14 ) )
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        results.validate_result( result, 'hostile', 'tool', schema )
    assert 'output schema is not valid' in str( caught.value )
    assert 'subschemas to one value' in str( caught.value )
    schema = types.MappingProxyType( _chain( 'allOf', 6 ) )
    results.validate_result( result, 'hostile', 'tool', schema )


def test_400_strict_validator_bounded( ):
    ''' Strict mode's stripping validates with the library's validator:
        patterns on RE2 (which reads syntax Python's re does not), unique
        items in linear time. '''
    validator = _strict._produce_validator( { 'type': 'string' } )
    assert isinstance( validator, _patterns.access_validator_class( ) )
    assert _strict._probe_validity(
        { 'type': 'string', 'pattern': r'^\pL+$' }, 'abc' )
    assert not _strict._probe_validity(
        { 'type': 'string', 'pattern': r'^\pL+$' }, 'a1' )


def test_410_strict_stripping_catastrophic_pattern( ):
    ''' Stripping of strict mode's nulls, whose alternatives hold a
        catastrophic pattern, answers at once for text which would make
        Python's re backtrack for ages. '''
    pattern = '^(a+)+$'
    schema = {
        'type': 'object',
        'oneOf': [
            {   'type': 'object',
                'properties': {
                    'word': { 'type': 'string', 'pattern': pattern },
                    'note': { 'type': 'string' } },
                'required': [ 'word' ] },
            {   'type': 'object',
                'properties': {
                    'other': { 'type': 'string' },
                    'note': { 'type': 'string' } },
                'required': [ 'other' ] } ] }
    record = _strict.access_record( schema )
    assert record is not None
    # Checked first: the stripping below must not reach Python's re.
    assert isinstance(
        _strict._produce_validator( schema ),
        _patterns.access_validator_class( ) )
    word = 'a' * 64 + 'b'
    stripped = record.strip( { 'word': word, 'note': None, 'other': None } )
    assert stripped == { 'word': word }


def _nest_twice( depth ):
    ''' Returns schema whose definitions each apply the next twice to
        property x, and a value nested depth levels in x: 2**depth
        checks of the deepest level. '''
    definitions = {
        f"d{index}": { 'allOf': [
            { 'properties': { 'x': { '$ref': f"#/$defs/d{index + 1}" } } }
        ] * 2 }
        for index in range( depth ) }
    definitions[ f"d{depth}" ] = { 'type': 'integer' }
    value = 1
    for _ in range( depth ): value = { 'x': value }
    return {
        'type': 'object', '$defs': definitions,
        'properties': { 'x': { '$ref': '#/$defs/d0' } } }, { 'x': value }


def _recurse_twice( depth ):
    ''' Returns recursive schema whose two failing branches each descend
        into x, and a value nested depth levels whose leaf fails: 2**depth
        checks of the leaf. '''
    branch = {
        'type': 'object', 'required': [ 'x' ],
        'properties': { 'x': { '$ref': '#/$defs/node' } } }
    value = 'leaf'
    for _ in range( depth ): value = { 'x': value }
    return {
        'type': 'object',
        '$defs': { 'node': { 'anyOf': [
            { 'type': 'integer' }, branch, dict( branch ) ] } },
        'properties': { 'x': { '$ref': '#/$defs/node' } } }, { 'x': value }


@pytest.mark.parametrize( 'shape', [ _nest_twice, _recurse_twice ] )
def test_500_repeated_work_refused( shape ):
    ''' Small schemas whose work doubles at each level of the value are
        accepted, and a value 40 levels deep (2**40 checks) is refused at
        once, saying why, rather than validated for ever; so is content
        checked against such a schema (an MCP server's). '''
    schema, value = shape( 40 )
    validator = schemata.produce_validator( 'doubling', schema )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        validator.validate_arguments( value )
    assert 'repeats itself more than' in caught.value.reason
    breach = exchanges.validate_content( schema, value )
    assert breach is not None and breach[ 1 ] == 'steps'


def test_510_common_work_accepted( ):
    ''' Definitions common to alternatives, many items of one definition
        and recursion which descends once a level validate as jsonschema
        does. '''
    base = { 'type': 'object', 'required': [ 'id' ],
             'properties': { 'id': { 'type': 'integer' } } }
    schema = {
        'type': 'object',
        '$defs': {
            'base': base,
            'cat': { 'allOf': [ { '$ref': '#/$defs/base' } ],
                     'required': [ 'purr' ] },
            'dog': { 'allOf': [ { '$ref': '#/$defs/base' } ],
                     'required': [ 'bark' ] },
            'pet': { 'oneOf': [
                { '$ref': '#/$defs/cat' }, { '$ref': '#/$defs/dog' } ] },
            'tree': { 'type': 'object', 'properties': {
                'children': { 'type': 'array',
                              'items': { '$ref': '#/$defs/tree' } } } },
        },
        'properties': {
            'pets': { 'type': 'array', 'items': { '$ref': '#/$defs/pet' } },
            'flags': { 'type': 'array',
                       'items': { 'anyOf': [ { 'type': 'boolean' } ] } },
            'tree': { '$ref': '#/$defs/tree' },
        } }
    validator = schemata.produce_validator( 'pets', schema )
    tree = { }
    for _ in range( 40 ): tree = { 'children': [ tree, { } ] }
    arguments = {
        'pets': [ { 'id': index, 'purr': True } for index in range( 5000 ) ],
        'flags': [ True ] * 5000, 'tree': tree }
    assert validator.validate_arguments( arguments ) is arguments
    arguments[ 'pets' ].append( { 'id': 'x', 'bark': True } )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        validator.validate_arguments( arguments )
    assert 'repeats itself' not in caught.value.reason


def test_520_part_given_in_many_places_accepted( ):
    ''' One dict or list which a caller places many times in its arguments
        (``[ item ] * 300``) is checked once at each place, not taken for
        repeated work; valid arguments come back whole, and an invalid
        place is still found. (Old code: refused past 100 places.) '''
    schema = {
        'type': 'object', 'properties': { 'items': {
            'type': 'array', 'items': {
                'type': 'object', 'required': [ 'a' ],
                'properties': { 'a': { 'type': 'integer' },
                                'tags': { 'type': 'array' } } } } } }
    validator = schemata.produce_validator( 'gather', schema )
    tags = [ 'x' ]
    item = { 'a': 1, 'tags': tags }
    arguments = { 'items': [ item ] * 300 + [ { 'a': 2, 'tags': tags } ] }
    valid = validator.validate_arguments( arguments )
    assert valid == arguments
    bad = { 'items': [ item ] * 300 + [ { 'a': 'two' } ] }
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        validator.validate_arguments( bad )
    assert 'repeats itself' not in caught.value.reason
    assert "'two'" in caught.value.reason


def test_530_parts_in_many_places_bounded( ):
    ''' Parts placed in many places which, counted at every place, would
        make a vast value (a list holding one list twice, 40 levels deep:
        2**40 places) are refused at once, saying why; repeated work over
        a value whose parts stand in many places is refused too. '''
    schema = {
        'type': 'object', '$defs': { 'node': {
            'type': 'array', 'items': { '$ref': '#/$defs/node' } } },
        'properties': { 'x': { '$ref': '#/$defs/node' } } }
    value: list[ object ] = [ ]
    for _ in range( 40 ): value = [ value, value ]
    validator = schemata.produce_validator( 'vast', schema )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        validator.validate_arguments( { 'x': value } )
    assert 'repeats itself more than' in caught.value.reason
    doubling, deep = _nest_twice( 40 )
    validator = schemata.produce_validator( 'doubling', doubling )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        validator.validate_arguments( { **deep, 'y': [ deep ] * 200 } )
    assert 'repeats itself more than' in caught.value.reason
