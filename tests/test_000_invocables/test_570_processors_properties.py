# SPDX-License-Identifier: Apache-2.0

''' Properties: arbitrary input gives canisters or the library's errors.

    For Gemini, Cohere and Ollama: any JSON body through
    ``normalize_invocations`` and any sequence of events through an
    accumulator gives canisters or an error of the package's own family,
    never another exception. For every dialect: any schema, however hostile
    (wrong JSON types, non-string keys, non-finite numbers, deep nesting,
    reference cycles, huge enumerations), gives a schema which meets the
    dialect's rules (checked by the independent checkers of test_400) or
    the dialect's refusal, the input is never modified, and
    ``prepare_tools`` leaves such a tool out alone. For generated schemas
    with valid arguments, adaptation keeps what the tool can be called with
    (see ``schemas_support``).

    ``INVOCABLES_FUZZ_EXAMPLES=10000`` runs each property with that many
    examples (default: a few hundred, a few seconds each), without the
    suite's time bound.
'''


import collections
import json
import math
import warnings

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import invocables

from invocables import (
    InvocationCanister, dialects, exceptions, invokers, schemata )
from invocables.processors import produce_processor

from . import schemas_support
from .test_400_dialects import verify_dialect


EXAMPLES = schemas_support.access_examples( 400 )
EXAMPLES_SCHEMAS = schemas_support.access_examples( 200 )
# A long fuzzing run is asked for: the bound which proves that the suite's
# size does not hang would only cut it short.
_unbounded = pytest.mark.timeout(
    0 if schemas_support.is_fuzzing( ) else 300 )
PROVIDERS = ( 'gemini', 'cohere', 'ollama' )

_settings = settings(
    max_examples = EXAMPLES, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )

_scalars = (
    st.none( ) | st.booleans( ) | st.integers( -5, 5 )
    | st.floats( allow_nan = False, allow_infinity = False )
    | st.sampled_from( [ '', 'x', '{}', 'null', '{"a": 1}', '{"a', '[1]',
                         '[DONE]', 'f', 'MAX_TOKENS', 'STOP' ] ) )
_keys = st.sampled_from( [
    'candidates', 'content', 'parts', 'functionCall', 'function_call',
    'name', 'args', 'id', 'partialArgs', 'jsonPath', 'stringValue',
    'numberValue', 'boolValue', 'willContinue', 'finishReason', 'index',
    'error', 'code', 'message', 'status', 'type', 'delta', 'tool_calls',
    'function', 'arguments', 'finish_reason', 'role', 'x' ] )
_json = st.recursive(
    _scalars,
    lambda children: (
        st.lists( children, max_size = 4 )
        | st.dictionaries( _keys, children, max_size = 5 ) ),
    max_leaves = 30 )


def _verify_invocations( invocations ):
    assert isinstance( invocations, tuple )
    for invocation in invocations:
        assert isinstance( invocation, InvocationCanister )
        assert isinstance( invocation.identifier, str )
        assert invocation.identifier
        assert isinstance( invocation.name, str )
        assert isinstance( invocation.arguments, dict )


@pytest.mark.slow
@pytest.mark.parametrize( 'provider', PROVIDERS )
@_unbounded
def test_100_arbitrary_bodies( provider ):
    ''' Any JSON body gives canisters or the package's own error. '''
    processor = produce_processor( provider )

    @_settings
    @given( body = _json )
    def check( body ):
        try: invocations = processor.normalize_invocations( body )
        except exceptions.Omnierror: return
        _verify_invocations( invocations )

    check( )


_schema_names_early = st.sampled_from( [ 'a', 'b', 'c' ] )


# Structured events: close enough to the wire to reach deep paths.
_names = st.sampled_from( [ 'f', 'g', '', None, 3 ] )
_paths = st.sampled_from( [
    '$.a', '$.a.b', '$.a[0]', '$.a[1]', "$['a b']", '$', 'a', '$.', 3 ] )
_partial = st.fixed_dictionaries(
    { 'jsonPath': _paths },
    optional = {
        'stringValue': st.sampled_from( [ 'x', '', 'yz' ] ) | _scalars,
        'numberValue': _scalars, 'boolValue': st.booleans( ),
        'willContinue': st.booleans( ) } )
_function_call = st.fixed_dictionaries( { }, optional = {
    'name': _names, 'args': _json, 'id': st.sampled_from( [ 'i1', 'i2' ] ),
    'partialArgs': st.lists( _partial, max_size = 3 ) | _scalars,
    'willContinue': st.booleans( ) } )
_gemini_part = st.one_of(
    st.fixed_dictionaries( { 'functionCall': _function_call } ),
    st.fixed_dictionaries( { 'text': st.just( 'hi' ) } ), _json )
_gemini_event = st.one_of(
    st.fixed_dictionaries( { 'candidates': st.lists(
        st.fixed_dictionaries(
            { 'content': st.fixed_dictionaries(
                { 'parts': st.lists( _gemini_part, max_size = 3 ) } ) },
            optional = {
                'finishReason': st.sampled_from( [ 'STOP', 'MAX_TOKENS' ] ),
                'index': st.integers( 0, 1 ) } ),
        max_size = 2 ) } ),
    st.fixed_dictionaries( { 'error': _json } ),
    _json, st.sampled_from( [ '{}', 'oops', b'{"candidates": []}' ] ) )
_cohere_call = st.fixed_dictionaries( { }, optional = {
    'id': st.sampled_from( [ 'c1', 'c2', '' ] ),
    'function': st.fixed_dictionaries( { }, optional = {
        'name': _names,
        'arguments': st.sampled_from( [ '', '{"a"', ': 1}', '{}', 'null' ] )
        | _scalars } ) } )
_cohere_event = st.one_of(
    st.fixed_dictionaries(
        { 'type': st.sampled_from( [
            'tool-call-start', 'tool-call-delta', 'tool-call-end',
            'message-end', 'content-delta', 'tool-plan-delta' ] ) },
        optional = {
            'index': st.integers( 0, 2 ) | _scalars,
            'delta': st.fixed_dictionaries( { }, optional = {
                'message': st.fixed_dictionaries( { }, optional = {
                    'tool_calls': _cohere_call } ),
                'finish_reason': st.sampled_from( [
                    'TOOL_CALL', 'MAX_TOKENS' ] ),
                'error': _scalars } ) } ),
    _json, st.sampled_from( [ '[DONE]', 'oops', '{"type": "x"}' ] ) )
_ollama_event = st.one_of(
    st.fixed_dictionaries( { 'message': st.fixed_dictionaries( { }, optional = {
        'content': st.just( 'hi' ),
        'tool_calls': st.lists( st.fixed_dictionaries( { }, optional = {
            'id': st.sampled_from( [ 'o1', '' ] ),
            'function': st.fixed_dictionaries( { }, optional = {
                'name': _names, 'arguments': _json } ) } ), max_size = 3 )
        | _scalars } ) } ),
    st.fixed_dictionaries( { 'error': _json } ),
    _json, st.sampled_from( [ '', '\n', 'oops', b'{"done": true}' ] ) )
# Well-formed events: sequences of them mostly complete calls.
_fragments = st.sampled_from( [ '{"a": ', '1', '}', '"x"', '{}', '' ] )
_cohere_wellformed = st.one_of(
    st.builds(
        lambda index, identifier, name, fragment: {
            'type': 'tool-call-start', 'index': index, 'delta': {
                'message': { 'tool_calls': {
                    'id': identifier, 'type': 'function', 'function': {
                        'name': name, 'arguments': fragment } } } } },
        st.integers( 0, 1 ), st.sampled_from( [ 'c1', 'c2', 'c3' ] ),
        st.sampled_from( [ 'f', 'g' ] ), _fragments ),
    st.builds(
        lambda index, fragment: {
            'type': 'tool-call-delta', 'index': index, 'delta': {
                'message': { 'tool_calls': {
                    'function': { 'arguments': fragment } } } } },
        st.integers( 0, 1 ), _fragments ),
    st.builds(
        lambda index: { 'type': 'tool-call-end', 'index': index },
        st.integers( 0, 1 ) ) )
_gemini_wellformed = st.builds(
    lambda calls, finish: { 'candidates': [ {
        'content': { 'role': 'model', 'parts': [
            { 'functionCall': call } for call in calls ] },
        **( { 'finishReason': finish } if finish else { } ) } ] },
    st.lists( st.one_of(
        st.fixed_dictionaries( {
            'name': st.sampled_from( [ 'f', 'g' ] ),
            'args': st.dictionaries( _schema_names_early, _scalars,
                                     max_size = 2 ) } ),
        st.fixed_dictionaries( {
            'name': st.sampled_from( [ 'f', 'g' ] ),
            'willContinue': st.just( True ) } ),
        st.fixed_dictionaries( {
            'partialArgs': st.lists( st.fixed_dictionaries(
                { 'jsonPath': st.sampled_from( [ '$.a', '$.b', '$.c[0]' ] ),
                  'stringValue': st.sampled_from( [ 'x', 'y', '' ] ) },
                optional = { 'willContinue': st.booleans( ) } ),
                max_size = 2 ),
            'willContinue': st.booleans( ) } ),
        st.just( { } ) ), max_size = 2 ),
    st.sampled_from( [ None, None, 'STOP', 'MAX_TOKENS' ] ) )
_ollama_wellformed = st.builds(
    lambda calls: { 'message': { 'role': 'assistant', 'content': '',
                                 'tool_calls': calls }, 'done': False },
    st.lists( st.builds(
        lambda name, arguments, identifier: {
            'function': { 'name': name, 'arguments': arguments },
            **( { 'id': identifier } if identifier else { } ) },
        st.sampled_from( [ 'f', 'g' ] ),
        st.dictionaries( _schema_names_early, _scalars, max_size = 2 ),
        st.sampled_from( [ None, 'o1' ] ) ), max_size = 2 ) )


_wellformed = {
    'gemini': _gemini_wellformed, 'cohere': _cohere_wellformed,
    'ollama': _ollama_wellformed }
_events = {
    provider: st.one_of( _wellformed[ provider ], anything )
    for provider, anything in (
        ( 'gemini', _gemini_event ), ( 'cohere', _cohere_event ),
        ( 'ollama', _ollama_event ) ) }


def _sequences( provider ):
    ''' Event sequences: wholly well-formed ones, or mixed with junk. '''
    return st.one_of(
        st.lists(
            st.tuples( _wellformed[ provider ], st.none( ) ), max_size = 10 ),
        st.lists( st.tuples( _events[ provider ], _labels ), max_size = 10 ) )
_labels = st.sampled_from( [ None, 'tool-call-start', 'tool-call-end' ] )


@pytest.mark.slow
@pytest.mark.parametrize( 'provider', PROVIDERS )
@_unbounded
def test_110_arbitrary_event_sequences( provider ):
    ''' Any event sequence gives canisters or the package's own error. '''
    processor = produce_processor( provider )

    @_settings
    @given( events = _sequences( provider ) )
    def check( events ):
        accumulator = processor.produce_accumulator( )
        emitted = [ ]
        try:
            for event, label in events:
                arguments = ( event, ) if label is None else ( event, label )
                invocations = accumulator.ingest( *arguments )
                _verify_invocations( invocations )
                emitted.extend( invocations )
            invocations = accumulator.conclude( )
        except exceptions.Omnierror: return
        _verify_invocations( invocations )
        emitted.extend( invocations )
        synthesized = [
            item.identifier for item in emitted
            if item.identifier.startswith( 'call_' ) ]
        assert len( set( synthesized ) ) == len( synthesized )

    check( )


@pytest.mark.slow
@pytest.mark.parametrize( 'provider', PROVIDERS )
@_unbounded
def test_120_structured_bodies( provider ):
    ''' Wire-like bodies give canisters or the package's own error. '''
    processor = produce_processor( provider )

    @_settings
    @given( body = _events[ provider ] )
    def check( body ):
        try: invocations = processor.normalize_invocations( body )
        except exceptions.Omnierror: return
        _verify_invocations( invocations )

    check( )


# Schemas: keywords of JSON Schema, with junk in their places now and then.
_schema_names = st.sampled_from( [ 'a', 'b', 'c' ] )
_references = st.sampled_from( [
    '#/$defs/A', '#/$defs/B', '#/definitions/A', '#/$defs/Z',
    'https://example.com/s', '#', '#/properties/a', 3 ] )
_types = st.sampled_from( [
    'object', 'string', 'integer', 'number', 'boolean', 'array', 'null',
    'date' ] )
_type_values = (
    _types | st.lists( _types, max_size = 3 ) | st.just( 3 )
    | st.just( { } ) | st.just( [ ] ) )
# Values no JSON document holds, but which a Python schema may.
_hostile_scalars = st.one_of(
    st.sampled_from( [ math.nan, math.inf, -math.inf, 10 ** 400, b'x' ] ),
    st.builds( set ), st.builds( object ) )
_junk = _scalars | _hostile_scalars | st.just( [ ] ) | st.just( { } )
_counts = st.integers( -2, 3 ) | _junk


def _schema_node( children ):
    node = st.fixed_dictionaries( { }, optional = {
        'type': _type_values,
        'properties': st.dictionaries( _schema_names, children, max_size = 3 )
        | _junk,
        'required': st.lists( _schema_names | _junk, max_size = 3 ) | _junk,
        'additionalProperties': st.booleans( ) | children | _junk,
        'patternProperties': st.dictionaries(
            st.just( '^x' ), children, max_size = 1 ),
        'items': children | st.lists( children, max_size = 2 ) | _junk,
        'prefixItems': st.lists( children, max_size = 2 ),
        'anyOf': st.lists( children, max_size = 3 ) | _junk,
        'oneOf': st.lists( children, max_size = 3 ) | _junk,
        'allOf': st.lists( children, max_size = 2 ) | _junk,
        'not': children,
        '$ref': _references | st.lists( _references, max_size = 1 ),
        'enum': st.lists( _scalars, max_size = 3 ) | _junk,
        'const': _scalars | _junk,
        'format': st.sampled_from( [ 'date-time', 'email', 'int32', 'x' ] )
        | _junk,
        'exclusiveMinimum': _junk, 'exclusiveMaximum': _junk,
        'minimum': st.integers( -3, 3 ) | _junk, 'minLength': _counts,
        'maxItems': _counts, 'multipleOf': _counts, 'pattern': _junk,
        'default': _scalars, 'examples': st.lists( _scalars, max_size = 2 ),
        'description': st.just( 'd' ) | _junk, 'title': st.just( 't' ),
        'nullable': st.booleans( ), 'propertyOrdering': _junk,
        '$schema': st.just( 'https://json-schema.org/draft/2020-12/schema' ),
    } )
    return node | st.booleans( ) | st.builds(
        lambda mapping, key: { **mapping, key: { 'type': 'string' } },
        node, st.sampled_from( [ 1, 2.5, None, ( 'a', ), False ] ) )


_subschemas = st.recursive(
    st.fixed_dictionaries( { 'type': _types } ) | st.booleans( ),
    _schema_node, max_leaves = 12 )
_definitions = st.dictionaries(
    st.sampled_from( [ 'A', 'B' ] ), _subschemas, max_size = 2 )


def _nest( depth, keyword ):
    ''' Returns schema nested depth levels deep through keyword. '''
    node = { 'type': 'string' }
    for _ in range( depth ):
        match keyword:
            case 'properties':
                node = { 'type': 'object', 'properties': { 'a': node } }
            case 'items': node = { 'type': 'array', 'items': node }
            case _: node = { keyword: [ node ] }
    return { 'type': 'object', 'properties': { 'deep': node } }


def _explode( width ):
    ''' Returns schema which doubles with each definition when inlined. '''
    definitions = { 'D0': { 'type': 'string' } }
    for index in range( 1, width ):
        below = { '$ref': f"#/$defs/D{index - 1}", 'description': 'x' }
        definitions[ f"D{index}" ] = {
            'type': 'object', 'properties': { 'a': below, 'b': below },
            'required': [ 'a', 'b' ] }
    return {
        '$defs': definitions, 'type': 'object',
        'properties': { 'x': { '$ref': f"#/$defs/D{width - 1}" } } }


def _enumerate( count, width ):
    ''' Returns schema with one enumeration of count values. '''
    values = [ f"{index:0{width}d}" for index in range( count ) ]
    return { 'type': 'object', 'properties': {
        'pick': { 'type': 'string', 'enum': values } } }


def _cycle( kind ):
    ''' Returns schema with a reference cycle, or a cyclic mapping. '''
    if kind == 'python':
        schema = { 'type': 'object', 'properties': { } }
        schema[ 'properties' ][ 'self' ] = schema
        return schema
    definitions = {
        'plain': { 'A': { '$ref': '#/$defs/A' } },
        'pair': { 'A': { '$ref': '#/$defs/B' },
                  'B': { 'anyOf': [ { '$ref': '#/$defs/A' } ] } },
        'sibling': { 'A': { '$ref': '#/$defs/A', 'description': 'x' } },
        'recursive': { 'A': { 'type': 'object', 'properties': {
            'next': { '$ref': '#/$defs/A' } } } },
    }[ kind ]
    return {
        '$defs': definitions, 'type': 'object',
        'properties': { 'x': { '$ref': '#/$defs/A' } } }


_hostile = st.one_of(
    st.builds( _nest, st.integers( 5, 150 ), st.sampled_from( [
        'properties', 'items', 'anyOf', 'allOf' ] ) ),
    st.builds( _explode, st.integers( 2, 24 ) ),
    st.builds(
        _enumerate, st.integers( 0, 3000 ), st.integers( 1, 80 ) ),
    st.builds( _cycle, st.sampled_from( [
        'python', 'plain', 'pair', 'sibling', 'recursive' ] ) ),
    st.builds(
        lambda value: { 'type': 'object', 'properties': { 1: value } },
        _subschemas ),
    st.builds(
        lambda junk, key: { 'type': 'object', key: junk },
        _junk, st.sampled_from( [
            'required', 'type', 'properties', '$defs', 'anyOf', '$ref' ] ) ),
)
_roots = st.one_of(
    st.builds(
        lambda node, definitions, legacy: (
            { **node, ( 'definitions' if legacy else '$defs' ): definitions }
            if isinstance( node, dict ) and definitions else node ),
        _schema_node( _subschemas ), _definitions, st.booleans( ) ),
    _hostile, _json )


def _check_adaptation( schema, dialect, outcomes ):
    ''' Adapts schema; checks the result or the refusal and the input. '''
    fingerprint = repr( schema )
    try: adapted = dialects.adapt_schema( schema, dialect, 'fuzzed' )
    except exceptions.SchemaDialectInvalidity as exception:
        assert exception.name == 'fuzzed'
        assert exception.dialect == dialect
        assert exception.rule
        # The safety net for defects of adapters is never reached.
        assert 'could not be read' not in exception.rule, exception.rule
        outcomes[ 'refused' ] += 1
    else:
        assert verify_dialect( adapted, dialect ) == [ ], adapted
        json.dumps( adapted, allow_nan = False )
        outcomes[ 'adapted' ] += 1
    assert repr( schema ) == fingerprint


@pytest.mark.slow
@pytest.mark.parametrize( 'dialect', sorted( dialects.DIALECTS ) )
@_unbounded
def test_200_arbitrary_schemas( dialect ):
    ''' Any schema gives one which meets the dialect's rules, or its
        refusal; the input is never modified.
    '''
    outcomes = collections.Counter( )

    @settings(
        max_examples = EXAMPLES_SCHEMAS, deadline = None,
        suppress_health_check = [ HealthCheck.too_slow ] )
    @given( schema = _roots )
    def check( schema ): _check_adaptation( schema, dialect, outcomes )

    check( )
    print( f"\n{dialect}: {dict( outcomes )}" ) # counts, shown with -s
    assert outcomes[ 'adapted' ] > 0
    assert outcomes[ 'refused' ] > 0


@pytest.mark.slow
@_unbounded
def test_210_exclusion_never_fails_request( ):
    ''' A list of arbitrary schemas never fails: unfit tools are left out. '''

    @settings(
        max_examples = schemas_support.access_examples( 100 ),
        deadline = None,
        suppress_health_check = [ HealthCheck.too_slow ] )
    @given( schemas = st.dictionaries(
        st.sampled_from( [ 't1', 't2', 't3' ] ), _roots, max_size = 3 ) )
    def check( schemas ):
        for dialect in dialects.DIALECTS:
            with warnings.catch_warnings( record = True ) as caught:
                warnings.simplefilter( 'always' )
                adapted = dialects.adapt_schemas( schemas, dialect )
            assert len( adapted ) + len( caught ) == len( schemas )
            for name, schema in adapted.items( ):
                assert name in schemas
                assert verify_dialect( schema, dialect ) == [ ]

    check( )


async def _echo( context, arguments ): return 'ok'


@pytest.mark.slow
@_unbounded
def test_220_hostile_tools_left_out_by_prepare_tools( ):
    ''' prepare_tools of every processor leaves a hostile tool out alone,
        with a warning naming it, or adapts it; the other tool is kept.
    '''
    good = invokers.FunctionInvoker(
        name = 'good', invocable = _echo, arguments_schema = {
            'type': 'object', 'properties': { 'q': { 'type': 'string' } } } )
    # A validator given up front skips the schema check: the invoker
    # carries its hostile schema as far as prepare_tools.
    validator = schemata.Validator( 'bad', { 'type': 'object' } )
    processors = [
        produce_processor( provider, **options )
        for provider, options in schemas_support.PROCESSORS.values( ) ]
    processors.append( produce_processor( 'openai-responses', strict = True ) )
    processors.append( produce_processor( 'gemini', json_schema = True ) )

    @settings(
        max_examples = schemas_support.access_examples( 100 ),
        deadline = None,
        suppress_health_check = [ HealthCheck.too_slow ] )
    @given( schema = _roots )
    def check( schema ):
        bad = invokers.FunctionInvoker(
            name = 'bad', invocable = _echo, arguments_schema = schema,
            validator = validator )
        ensembles = [ invocables.produce_ensemble( 'mixed', [ bad, good ] ) ]
        for processor in processors:
            with warnings.catch_warnings( record = True ) as caught:
                warnings.simplefilter( 'always' )
                tools = processor.prepare_tools( ensembles )
            names = _survey_tool_names( tools )
            assert 'good' in names
            for warning in caught:
                assert isinstance(
                    warning.message, exceptions.ToolExclusionWarning )
                assert warning.message.name == 'bad'
            excluded = [
                warning for warning in caught
                if not isinstance(
                    warning.message, exceptions.ToolStrictnessWarning ) ]
            assert ( 'bad' in names ) == ( not excluded )
            json.dumps( tools, allow_nan = False )

    check( )


def _survey_tool_names( tools ):
    names = [ ]
    for tool in tools:
        for declaration in tool.get( 'function_declarations', [ tool ] ):
            function = declaration.get( 'function', declaration )
            names.append( function[ 'name' ] )
    return names


@pytest.mark.slow
@_unbounded
def test_300_round_trip_keeps_calls( ):
    ''' For generated schemas with valid arguments, every dialect either
        refuses the schema, or accepts the arguments (in strict mode with
        the nulls it forces) and execute_invocations runs the tool with
        arguments valid under the original schema.
    '''
    verify, loop = schemas_support.produce_round_trip( )
    outcomes = collections.Counter( )

    @settings(
        max_examples = schemas_support.access_examples( ), deadline = None,
        suppress_health_check = list( HealthCheck ) )
    @given( pair = schemas_support.schemas_with_arguments( ) )
    def check( pair ):
        schema, arguments = pair
        verify( schema, arguments, outcomes )

    try: check( )
    finally: loop.close( )
    print( f"\n{sorted( outcomes.items( ) )}" ) # counts, shown with -s
    for dialect in dialects.DIALECTS:
        assert outcomes[ dialect, 'adapted' ] > 0, dict( outcomes )
