# SPDX-License-Identifier: Apache-2.0

''' Schemas with valid arguments, and the round trip through processors.

    ``schemas_with_arguments`` draws a JSON Schema of tool arguments (the
    constructs real tools use: nested and optional objects, arrays of
    objects, enums, alternatives, nullable types, references, recursion,
    merged top-level combinators, ``Optional[ Model ]`` roots, free-form
    dictionaries) together with arguments valid under it.

    ``verify_round_trip`` states what adaptation must keep, for one dialect:
    the provider's view of the adapted schema accepts the arguments (in
    strict mode, with the nulls strict mode forces), and
    ``execute_invocations`` of the provider's processor runs the tool with
    arguments valid under the original schema, which differ from the sent
    ones only by nulls strict mode forced.
'''


import asyncio
import os

from jsonschema import Draft202012Validator
from hypothesis import assume
from hypothesis import strategies as st

import invocables

from invocables import (
    InvocationCanister, dialects, exceptions, invokers, schemata )
from invocables.processors import produce_processor


EXAMPLES_DEFAULT = 200
PROCESSORS = {
    'anthropic': ( 'anthropic', { } ),
    'cohere': ( 'cohere', { } ),
    'gemini': ( 'gemini', { } ),
    'ollama': ( 'ollama', { } ),
    'openai': ( 'openai', { } ),
    'openai-strict': ( 'openai', { 'strict': True } ),
}

_NAMES = ( 'a', 'b', 'c', 'd', 'e' )
_TEXT = 'abcxyz'
_TREE = {
    'type': 'object',
    'properties': {
        'v': { 'type': 'integer' },
        'kids': { 'type': 'array', 'items': { '$ref': '#/$defs/Tree' } } },
    'required': [ 'v' ] }
_trees = st.recursive(
    st.fixed_dictionaries( { 'v': st.integers( -3, 3 ) } ),
    lambda children: st.fixed_dictionaries(
        { 'v': st.integers( -3, 3 ) },
        optional = { 'kids': st.lists( children, max_size = 2 ) } ),
    max_leaves = 4 )
_json_small = st.recursive(
    st.none( ) | st.booleans( ) | st.integers( -3, 3 ) | st.text( _TEXT,
                                                                max_size = 3 ),
    lambda children: st.lists( children, max_size = 2 )
    | st.dictionaries( st.sampled_from( _NAMES ), children, max_size = 2 ),
    max_leaves = 4 )


def access_examples( default: int = EXAMPLES_DEFAULT ) -> int:
    ''' Returns number of examples: ``INVOCABLES_FUZZ_EXAMPLES``, or default.
    '''
    value = os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '' )
    return int( value ) if value else default


def is_fuzzing( ) -> bool:
    ''' Returns whether ``INVOCABLES_FUZZ_EXAMPLES`` asks for a long run. '''
    return bool( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '' ) )


@st.composite
def schemas_with_arguments( draw ):
    ''' Draws ( schema, arguments ) with arguments valid under schema. '''
    definitions, strategies = draw( _definitions( ) )
    schema, values = draw( _roots( definitions, strategies ) )
    if definitions:
        key = draw( st.sampled_from( [ '$defs', 'definitions' ] ) )
        if any( '#/$defs/Tree' in repr( item )
                for item in definitions.values( ) ):
            key = '$defs'
        schema = { **schema, key: _rekey( definitions, key ) }
        if key == 'definitions': schema = _rename_references( schema )
    arguments = draw( values )
    validator = Draft202012Validator( schema )
    assume( validator.is_valid( arguments ) )
    return schema, arguments


def convert_gemini( node ):
    ''' Returns JSON Schema reading of Gemini schema (nullable as null). '''
    if isinstance( node, list ): return [ convert_gemini( item ) for item in node ]
    if not isinstance( node, dict ): return node
    converted = {
        key: (
            { name: convert_gemini( value ) for name, value in item.items( ) }
            if key == 'properties' else convert_gemini( item ) )
        for key, item in node.items( )
        if key not in ( 'nullable', 'example', 'propertyOrdering' ) }
    if node.get( 'nullable' ) is True:
        return { 'anyOf': [ converted, { 'type': 'null' } ] }
    return converted


def fill_nulls( value, node, root ):
    ''' Returns value with null for every property the model must send.

        Independent of the library: walks the strict schema as the model
        would fill it in, choosing the first alternative which accepts the
        filled value.
    '''
    node = _resolve( node, root )
    if not isinstance( node, dict ): return value
    branches = node.get( 'anyOf' )
    if isinstance( branches, list ):
        for branch in branches:
            candidate = fill_nulls( value, branch, root )
            if _validate( candidate, branch, root ): return candidate
        return value
    if isinstance( value, dict ) and isinstance( node.get( 'properties' ),
                                                 dict ):
        properties = node[ 'properties' ]
        filled = {
            key: fill_nulls( item, properties.get( key ), root )
            for key, item in value.items( ) }
        for key in properties:
            filled.setdefault( key, None )
        return filled
    if isinstance( value, list ) and isinstance( node.get( 'items' ), dict ):
        return [ fill_nulls( item, node[ 'items' ], root ) for item in value ]
    return value


def produce_round_trip( ):
    ''' Returns checker of the round trip, with its own event loop. '''
    loop = asyncio.new_event_loop( )
    processors = {
        dialect: produce_processor( provider, **options )
        for dialect, ( provider, options ) in PROCESSORS.items( ) }

    def verify( schema, arguments, outcomes ):
        received = [ ]

        async def record( context, arguments ):
            received.append( arguments )
            return 'ok'

        # The schema is valid by construction; skip the costly check.
        invoker = invokers.FunctionInvoker(
            name = 'tool', invocable = record, arguments_schema = schema,
            validator = schemata.Validator( 'tool', schema ) )
        ensembles = [ invocables.produce_ensemble( 'fuzz', [ invoker ] ) ]
        for dialect in sorted( PROCESSORS ):
            received.clear( )
            verify_round_trip(
                dialect, processors[ dialect ], ensembles, schema, arguments,
                received, loop, outcomes )

    return verify, loop


def verify_received( received, sent ):
    ''' Asserts received arguments are the sent ones but for nulls.

        A property may arrive null where it was left out (strict mode
        forced the null and the original accepts it), or left out where it
        was null: under a merged top-level ``oneOf`` whose alternatives
        both accept null for their required properties, strict mode's
        arguments cannot tell which alternative was meant.
    '''
    if isinstance( sent, dict ):
        assert isinstance( received, dict ), ( received, sent )
        for key, value in received.items( ):
            if key in sent: verify_received( value, sent[ key ] )
            else: assert value is None, ( key, received, sent )
        for key, value in sent.items( ):
            assert key in received or value is None, ( received, sent )
    elif isinstance( sent, list ):
        assert isinstance( received, list ), ( received, sent )
        assert len( received ) == len( sent )
        for item, original in zip( received, sent ):
            verify_received( item, original )
    else: assert received == sent, ( received, sent )


def verify_round_trip( # noqa: PLR0913
    dialect, processor, ensembles, schema, arguments, received, loop,
    outcomes,
):
    ''' Checks adaptation and execution of one tool for one dialect. '''
    import warnings
    try: adapted = dialects.adapt_schema( schema, dialect, 'tool' )
    except exceptions.SchemaDialectInvalidity as exception:
        assert 'could not be read' not in exception.rule, exception.rule
        outcomes[ dialect, 'refused' ] += 1
        return
    outcomes[ dialect, 'adapted' ] += 1
    with warnings.catch_warnings( ):
        warnings.simplefilter( 'ignore' )
        tools = processor.prepare_tools( ensembles )
    sent = arguments
    if dialect == 'openai-strict':
        strict = tools[ 0 ][ 'function' ].get( 'strict' ) is True
        assert strict
        sent = fill_nulls( arguments, adapted, adapted )
        assert _validate( sent, adapted, adapted ), ( adapted, sent )
    elif dialect == 'gemini':
        view = convert_gemini( adapted )
        assert _validate( arguments, view, view ), ( view, arguments )
    else: assert _validate( arguments, adapted, adapted ), ( adapted, sent )
    invocation = InvocationCanister(
        identifier = 'call_1', name = 'tool', arguments = sent )
    result, = loop.run_until_complete(
        processor.execute_invocations( [ invocation ], ensembles ) )
    assert not result.is_error( ), ( result.as_text( ), schema, sent )
    arrived, = received
    assert Draft202012Validator( schema ).is_valid( arrived )
    verify_received( arrived, arguments )


@st.composite
def _arrays( draw, depth, definitions, strategies ):
    items, values = draw( _nodes( depth + 1, definitions, strategies ) )
    low = draw( st.integers( 0, 1 ) )
    schema = { 'type': 'array', 'items': items }
    if low: schema[ 'minItems' ] = low
    return schema, st.lists( values, min_size = low, max_size = 2 )


@st.composite
def _definitions( draw ):
    count = draw( st.integers( 0, 2 ) )
    definitions = { }
    strategies = { }
    for index in range( count ):
        name = f"D{index}"
        definitions[ name ], strategies[ name ] = draw(
            _nodes( 1, definitions.copy( ), strategies.copy( ) ) )
    if draw( st.booleans( ) ):
        definitions[ 'Tree' ] = _TREE
        strategies[ 'Tree' ] = _trees
    return definitions, strategies


@st.composite
def _leaves( draw ):
    kind = draw( st.sampled_from( [
        'string', 'integer', 'number', 'boolean', 'enum', 'const' ] ) )
    match kind:
        case 'string':
            schema = { 'type': 'string' }
            low = draw( st.sampled_from( [ 0, 0, 1 ] ) )
            if low: schema[ 'minLength' ] = low
            if draw( st.booleans( ) ): schema[ 'pattern' ] = '^[a-z]*$'
            if draw( st.booleans( ) ): schema[ 'format' ] = draw(
                st.sampled_from( [ 'date-time', 'email', 'uri' ] ) )
            return schema, st.text( _TEXT, min_size = low, max_size = 4 )
        case 'integer':
            schema = { 'type': 'integer' }
            if draw( st.booleans( ) ): schema[ 'exclusiveMinimum' ] = 0
            if draw( st.booleans( ) ): schema[ 'maximum' ] = 9
            return schema, st.integers( 1, 9 )
        case 'number':
            return (
                { 'type': 'number', 'minimum': 0 },
                st.floats( 0, 5 ) | st.integers( 0, 5 ) )
        case 'boolean': return { 'type': 'boolean' }, st.booleans( )
        case 'enum':
            values = draw( st.sampled_from( [
                [ 'x', 'y' ], [ 1, 2 ], [ 'x', 1 ], [ 'x', None ] ] ) )
            schema = { 'enum': values }
            if all( isinstance( value, str ) for value in values ):
                if draw( st.booleans( ) ): schema[ 'type' ] = 'string'
            return schema, st.sampled_from( values )
        case _:
            value = draw( st.sampled_from( [ 'fixed', 3, True ] ) )
            return { 'const': value }, st.just( value )


@st.composite
def _nodes( draw, depth, definitions, strategies ):
    kinds = [ 'leaf', 'leaf', 'leaf' ]
    if depth < 3: # noqa: PLR2004
        kinds += [
            'object', 'object', 'array', 'nullable', 'optional', 'anyOf',
            'oneOf', 'allOf', 'dictionary' ]
    if definitions: kinds.append( 'reference' )
    kind = draw( st.sampled_from( kinds ) )
    match kind:
        case 'leaf': return draw( _leaves( ) )
        case 'object':
            return draw( _objects( depth, definitions, strategies ) )
        case 'array':
            return draw( _arrays( depth, definitions, strategies ) )
        case 'dictionary':
            extra = draw( st.sampled_from( [
                True, { }, { 'type': 'string' }, None ] ) )
            schema = { 'type': 'object' }
            if extra is not None: schema[ 'additionalProperties' ] = extra
            values = (
                st.dictionaries(
                    st.sampled_from( _NAMES ), st.text( _TEXT, max_size = 3 ),
                    max_size = 2 )
                if isinstance( extra, dict ) and extra
                else st.dictionaries(
                    st.sampled_from( _NAMES ), _json_small, max_size = 2 ) )
            return schema, values
        case 'nullable':
            schema, values = draw( _leaves( ) )
            if isinstance( schema.get( 'type' ), str ):
                schema = { **schema, 'type': [ schema[ 'type' ], 'null' ] }
                return schema, values | st.none( )
            return schema, values
        case 'optional':
            schema, values = draw( _nodes( depth + 1, definitions, strategies ) )
            return (
                { 'anyOf': [ schema, { 'type': 'null' } ] },
                values | st.none( ) )
        case 'anyOf':
            first, one = draw( _nodes( depth + 1, definitions, strategies ) )
            second, two = draw( _nodes( depth + 1, definitions, strategies ) )
            return { 'anyOf': [ first, second ] }, one | two
        case 'oneOf':
            return draw( _exclusive( ) )
        case 'allOf':
            schema, values = draw(
                _nodes( depth + 1, definitions, strategies ) )
            return { 'allOf': [ schema ], 'description': 'all of' }, values
        case _:
            name = draw( st.sampled_from( sorted( definitions ) ) )
            schema = { '$ref': f"#/$defs/{name}" }
            if draw( st.booleans( ) ): schema[ 'description' ] = 'reference'
            return schema, strategies[ name ]


@st.composite
def _exclusive( draw ):
    kinds = draw( st.lists(
        st.sampled_from( [ 'string', 'integer', 'boolean', 'null' ] ),
        min_size = 2, max_size = 3, unique = True ) )
    values = {
        'string': st.text( _TEXT, max_size = 3 ),
        'integer': st.integers( -3, 3 ), 'boolean': st.booleans( ),
        'null': st.none( ) }
    return (
        { 'oneOf': [ { 'type': kind } for kind in kinds ] },
        st.one_of( *( values[ kind ] for kind in kinds ) ) )


@st.composite
def _objects( # noqa: PLR0913
    draw, depth, definitions, strategies, names = _NAMES, minimum = 0,
    closed = None,
):
    chosen = draw( st.lists(
        st.sampled_from( names ), min_size = minimum, max_size = 3,
        unique = True ) )
    if depth and not chosen: chosen = [ names[ 0 ] ]
    properties = { }
    strategies_ = { }
    for name in chosen:
        properties[ name ], strategies_[ name ] = draw(
            _nodes( depth + 1, definitions, strategies ) )
    required = [
        name for name in chosen
        if draw( st.booleans( ) ) or name in chosen[ : minimum ] ]
    schema = { 'type': 'object', 'properties': properties }
    if not draw( st.integers( 0, 4 ) ): del schema[ 'type' ]
    if required: schema[ 'required' ] = required
    if closed is None: closed = draw( st.booleans( ) )
    if closed: schema[ 'additionalProperties' ] = False
    values = st.fixed_dictionaries(
        { name: strategies_[ name ] for name in required },
        optional = {
            name: strategies_[ name ] for name in chosen
            if name not in required } )
    return schema, values


def _rekey( definitions, key ):
    if key == '$defs': return dict( definitions )
    return _rename_references( dict( definitions ) )


def _rename_references( node ):
    if isinstance( node, list ):
        return [ _rename_references( item ) for item in node ]
    if not isinstance( node, dict ): return node
    renamed = { key: _rename_references( value ) for key, value in node.items( ) }
    reference = renamed.get( '$ref' )
    if isinstance( reference, str ) and reference != '#/$defs/Tree':
        renamed[ '$ref' ] = reference.replace( '#/$defs/', '#/definitions/' )
    return renamed


def _resolve( node, root ):
    seen = 0
    while isinstance( node, dict ) and isinstance( node.get( '$ref' ), str ):
        parts = node[ '$ref' ].split( '/' )
        node = root.get( parts[ 1 ], { } ).get( parts[ 2 ] )
        seen += 1
        if seen > 10: break # noqa: PLR2004
    return node


@st.composite
def _roots( draw, definitions, strategies ):
    kind = draw( st.sampled_from( [
        'object', 'object', 'object', 'reference', 'anyOf', 'oneOf',
        'optional', 'allOf', 'dictionary' ] ) )
    match kind:
        case 'object' | 'reference' | 'optional':
            schema, values = draw( _objects( 0, definitions, strategies ) )
            if kind == 'reference':
                definitions[ 'Root' ] = schema
                schema = { '$ref': '#/$defs/Root' }
            elif kind == 'optional':
                definitions[ 'Model' ] = schema
                schema = { 'anyOf': [
                    { '$ref': '#/$defs/Model' }, { 'type': 'null' } ] }
            return schema, values
        case 'anyOf' | 'oneOf':
            first, one = draw( _objects(
                1, definitions, strategies, ( 'a', 'b' ), 1, False ) )
            second, two = draw( _objects(
                1, definitions, strategies, ( 'c', 'd' ), 1, False ) )
            return { kind: [ first, second ] }, one | two
        case 'allOf':
            first, one = draw( _objects(
                1, definitions, strategies, ( 'a', 'b' ), 0, False ) )
            second, two = draw( _objects(
                1, definitions, strategies, ( 'c', 'd' ), 0, False ) )
            return (
                { 'allOf': [ first, second ] },
                st.tuples( one, two ).map(
                    lambda pair: { **pair[ 0 ], **pair[ 1 ] } ) )
        case _:
            extra = draw( st.sampled_from( [ True, { } ] ) )
            return (
                { 'type': 'object', 'additionalProperties': extra },
                st.dictionaries(
                    st.sampled_from( _NAMES ), _json_small, max_size = 2 ) )


def _validate( value, node, root ):
    schema = node if isinstance( node, dict ) else { }
    composite = { **{
        key: root[ key ] for key in ( '$defs', 'definitions' )
        if isinstance( root, dict ) and key in root }, **schema }
    return Draft202012Validator( composite ).is_valid( value )
