# SPDX-License-Identifier: Apache-2.0

''' Properties: arbitrary input gives canisters or the library's errors.

    For Gemini, Cohere and Ollama: any JSON body through
    ``normalize_invocations`` and any sequence of events through an
    accumulator gives canisters or an error of the package's own family,
    never another exception. For every dialect: any JSON Schema gives a
    schema which meets the dialect's rules (checked by the independent
    checkers of test_400) or the dialect's refusal, and the input is never
    modified.
'''


import copy
import json
import warnings

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invocables import InvocationCanister, dialects, exceptions
from invocables.processors import produce_processor

from .test_400_dialects import verify_dialect


EXAMPLES = 400
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
    'https://example.com/s', 3 ] )
_types = st.sampled_from( [
    'object', 'string', 'integer', 'number', 'boolean', 'array', 'null',
    'date' ] )
_type_values = _types | st.lists( _types, max_size = 3 ) | st.just( 3 )


def _schema_node( children ):
    node = st.fixed_dictionaries( { }, optional = {
        'type': _type_values,
        'properties': st.dictionaries( _schema_names, children, max_size = 3 )
        | _scalars,
        'required': st.lists( _schema_names, max_size = 3 ) | _scalars,
        'additionalProperties': st.booleans( ) | children,
        'patternProperties': st.dictionaries(
            st.just( '^x' ), children, max_size = 1 ),
        'items': children | st.lists( children, max_size = 2 ),
        'prefixItems': st.lists( children, max_size = 2 ),
        'anyOf': st.lists( children, max_size = 3 ) | _scalars,
        'oneOf': st.lists( children, max_size = 3 ),
        'allOf': st.lists( children, max_size = 2 ),
        'not': children,
        '$ref': _references,
        'enum': st.lists( _scalars, max_size = 3 ) | _scalars,
        'const': _scalars,
        'format': st.sampled_from( [ 'date-time', 'email', 'int32', 'x' ] ),
        'exclusiveMinimum': _scalars, 'exclusiveMaximum': _scalars,
        'minimum': st.integers( -3, 3 ), 'minLength': st.integers( 0, 3 ),
        'default': _scalars, 'examples': st.lists( _scalars, max_size = 2 ),
        'description': st.just( 'd' ), 'title': st.just( 't' ),
        'nullable': st.booleans( ),
        '$schema': st.just( 'https://json-schema.org/draft/2020-12/schema' ),
    } )
    return node | st.booleans( )


_subschemas = st.recursive(
    st.fixed_dictionaries( { 'type': _types } ) | st.booleans( ),
    _schema_node, max_leaves = 12 )
_definitions = st.dictionaries(
    st.sampled_from( [ 'A', 'B' ] ), _subschemas, max_size = 2 )
_roots = st.one_of(
    st.builds(
        lambda node, definitions, legacy: (
            { **node, ( 'definitions' if legacy else '$defs' ): definitions }
            if isinstance( node, dict ) and definitions else node ),
        _schema_node( _subschemas ), _definitions, st.booleans( ) ),
    _json )


@pytest.mark.slow
@pytest.mark.parametrize( 'dialect', sorted( dialects.DIALECTS ) )
def test_200_arbitrary_schemas( dialect ):
    ''' Any schema gives one which meets the dialect's rules, or its
        refusal; the input is never modified.
    '''
    outcomes = { 'adapted': 0, 'refused': 0 }

    @_settings
    @given( schema = _roots )
    def check( schema ):
        original = copy.deepcopy( schema )
        try: adapted = dialects.adapt_schema( schema, dialect, 'fuzzed' )
        except exceptions.SchemaDialectInvalidity as exception:
            assert exception.name == 'fuzzed'
            assert exception.dialect == dialect
            assert exception.rule
            outcomes[ 'refused' ] += 1
        else:
            assert verify_dialect( adapted, dialect ) == [ ], adapted
            json.dumps( adapted )
            outcomes[ 'adapted' ] += 1
        assert schema == original

    check( )
    assert outcomes[ 'adapted' ] > 0
    assert outcomes[ 'refused' ] > 0


@pytest.mark.slow
def test_210_exclusion_never_fails_request( ):
    ''' A list of arbitrary schemas never fails: unfit tools are left out. '''

    @settings(
        max_examples = EXAMPLES // 2, deadline = None,
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
