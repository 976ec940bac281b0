# SPDX-License-Identifier: Apache-2.0

''' Schemas of typed functions: titles, definitions, parameter kinds. '''


import asyncio
import datetime
import enum
import functools
import inspect
import json
import os
import threading
import typing
import uuid
import warnings

from typing import Optional

import pydantic
import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import invocables

from invocables import exceptions, signatures


class Color( enum.Enum ):
    ''' Colours. '''

    Red = 'red'
    Blue = 'blue'


class Point( pydantic.BaseModel ):
    ''' A point. '''

    x: int
    y: int = 0


class Label( pydantic.BaseModel ):
    ''' A label, whose field is named title. '''

    title: str = pydantic.Field( title = 'Explicit title' )
    color: Color = Color.Red


class Segment( pydantic.BaseModel ):
    ''' Two points. '''

    start: Point
    end: Optional[ Point ] = None # noqa: UP045


class Tree( pydantic.BaseModel ):
    ''' A recursive structure. '''

    name: str
    children: list[ 'Tree' ] = [ ]


def _context( invoker ):
    return invocables.InvocationContext(
        auxdata = 'app', invoker = invoker, namespace = { } )


def _walk( schema, path = ( ) ):
    ''' Yields ( path, schema ) for every subschema, by keyword. '''
    if not isinstance( schema, dict ): return
    yield path, schema
    for key, value in schema.items( ):
        if key in ( 'properties', '$defs' ):
            for name, member in value.items( ):
                yield from _walk( member, ( *path, key, name ) )
        elif key in ( 'anyOf', 'allOf', 'oneOf', 'prefixItems' ):
            for index, member in enumerate( value ):
                yield from _walk( member, ( *path, key, index ) )
        elif key in ( 'items', 'additionalProperties', 'not' ):
            yield from _walk( value, ( *path, key ) )


def test_100_titles_stripped_everywhere( ):
    ''' No subschema carries a title; a property named title stays. '''

    def mark( label: Label, segment: Segment, color: Color ) -> str:
        return label.title

    schema = invocables.produce_invoker( mark ).arguments_schema
    titled = [ path for path, node in _walk( schema ) if 'title' in node ]
    assert titled == [ ]
    label = schema[ 'properties' ][ 'label' ]
    assert label[ 'properties' ][ 'title' ] == { 'type': 'string' }
    assert label[ 'description' ] == 'A label, whose field is named title.'


def test_110_definitions_minimal( ):
    ''' Definitions used once are inlined; shared and recursive ones stay. '''

    def draw( segment: Segment, tree: Tree, label: Label ) -> None:
        return None

    schema = invocables.produce_invoker( draw ).arguments_schema
    assert set( schema[ '$defs' ] ) == { 'Point', 'Tree' }
    properties = schema[ 'properties' ]
    segment = properties[ 'segment' ]
    assert segment[ 'properties' ][ 'start' ] == { '$ref': '#/$defs/Point' }
    assert properties[ 'tree' ] == { '$ref': '#/$defs/Tree' }
    children = schema[ '$defs' ][ 'Tree' ][ 'properties' ][ 'children' ]
    assert children[ 'items' ] == { '$ref': '#/$defs/Tree' }
    assert properties[ 'label' ][ 'properties' ][ 'color' ][ 'enum' ] == [
        'red', 'blue' ]

    def place( point: Point, color: Color = Color.Blue ) -> None:
        return None

    schema = invocables.produce_invoker( place ).arguments_schema
    assert '$defs' not in schema
    assert schema[ 'properties' ][ 'color' ] == {
        'description': 'Colours.', 'enum': [ 'red', 'blue' ],
        'type': 'string', 'default': 'blue' }


@pytest.mark.asyncio
async def test_120_inlined_schema_validates( ):
    ''' Inlined schemas validate and convert as the definitions did. '''
    seen = { }

    def draw( segment: Segment, tree: Tree ) -> int:
        seen[ 'segment' ] = segment
        seen[ 'tree' ] = tree
        return len( tree.children )

    invoker = invocables.produce_invoker( draw )
    arguments = {
        'segment': { 'start': { 'x': 1 } },
        'tree': { 'name': 'a', 'children': [ { 'name': 'b' } ] } }
    assert await invoker( _context( invoker ), arguments ) == (
        invocables.StructureContent( data = 1 ), )
    assert seen[ 'segment' ] == Segment( start = Point( x = 1 ) )
    assert seen[ 'tree' ].children[ 0 ].name == 'b'
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        await invoker(
            _context( invoker ),
            { 'segment': { 'start': { 'x': 'one' } }, 'tree': { } } )
    assert "'one' is not of type 'integer'" in str( caught.value )


@pytest.mark.asyncio
async def test_130_keyword_and_positional_only( ):
    ''' Keyword-only and positional-only parameters are both filled. '''

    def span( start: int, stop: int = 10, /, *, step: int = 1 ) -> list:
        return [ start, stop, step ]

    invoker = invocables.produce_invoker( span )
    assert set( invoker.arguments_schema[ 'properties' ] ) == {
        'start', 'stop', 'step' }
    assert invoker.arguments_schema[ 'required' ] == [ 'start' ]
    context = _context( invoker )
    for arguments, expected in (
        ( { 'start': 1 }, [ 1, 10, 1 ] ),
        ( { 'start': 1, 'stop': 5, 'step': 2 }, [ 1, 5, 2 ] ),
        ( { 'start': 1, 'step': 3 }, [ 1, 10, 3 ] ),
    ):
        content = await invoker( context, arguments )
        assert content == ( invocables.StructureContent( data = expected ), )


@pytest.mark.asyncio
async def test_131_positional_only_gap( ):
    ''' An omitted positional-only parameter before a given one defaults. '''

    def pad( text: str = 'x', width: int = 3, / ) -> str:
        return text * width

    invoker = invocables.produce_invoker( pad )
    assert await invoker( _context( invoker ), { 'width': 2 } ) == (
        invocables.TextContent( text = 'xx' ), )

    async def pad_async( text: str = 'y', width: int = 3, / ) -> str:
        return text * width

    invoker = invocables.produce_invoker( pad_async )
    assert await invoker( _context( invoker ), { 'width': 2 } ) == (
        invocables.TextContent( text = 'yy' ), )


class Scaler:
    ''' Scales by a factor. '''

    factor = 3

    def __init__( self, factor: int ):
        self.factor = factor

    def scale( self, value: int ) -> int:
        ''' Scales value. '''
        return value * self.factor

    @classmethod
    def triple( cls, value: int ) -> int:
        ''' Triples value. '''
        return value * cls.factor

    @staticmethod
    def negate( value: int ) -> int:
        ''' Negates value. '''
        return -value

    def __call__( self, value: int ) -> int:
        ''' Scales value (called). '''
        return value * self.factor


class AsyncScaler:
    ''' Scales by two, asynchronously. '''

    def __init__( self ):
        self.threads = [ ]

    async def __call__( self, value: int ) -> int:
        ''' Doubles value. '''
        self.threads.append( threading.get_ident( ) )
        await asyncio.sleep( 0 )
        return 2 * value


@pytest.mark.asyncio
async def test_140_callable_kinds( ):
    ''' Methods, partials and callable objects become working tools. '''

    def power( base: int, exponent: int = 2 ) -> int:
        return base ** exponent

    scaler = Scaler( 5 )
    cases = (
        ( invocables.produce_invoker( scaler.scale ), 10 ),
        ( invocables.produce_invoker( Scaler.triple ), 6 ),
        ( invocables.produce_invoker( Scaler.negate ), -2 ),
        ( invocables.produce_invoker( scaler, name = 'scaler' ), 10 ),
        ( invocables.produce_invoker(
            functools.partial( power, exponent = 3 ), name = 'cube' ), 8 ),
    )
    for invoker, expected in cases:
        base = 'base' if invoker.name == 'cube' else 'value'
        assert list( invoker.arguments_schema[ 'required' ] ) == [ base ]
        content = await invoker( _context( invoker ), { base: 2 } )
        assert content == ( invocables.StructureContent( data = expected ), )


@pytest.mark.asyncio
async def test_141_async_callable_object( ):
    ''' An object with an async __call__ is awaited on the event loop. '''
    scaler = AsyncScaler( )
    invoker = invocables.produce_invoker( scaler, name = 'double' )
    assert invoker.description == 'Doubles value.'
    content = await invoker( _context( invoker ), { 'value': 4 } )
    assert content == ( invocables.StructureContent( data = 8 ), )
    assert scaler.threads == [ threading.get_ident( ) ]


@pytest.mark.asyncio
async def test_150_context_parameter_typed( ):
    ''' A parameter named context and typed Context receives it. '''

    async def greet( context: invocables.Context, name: str ) -> str:
        return f"{context.auxdata}:{name}"

    def greet_sync( name: str, context: invocables.InvocationContext ) -> str:
        return f"{context.auxdata}:{name}"

    def greet_positional( context, /, name: str ) -> str:
        return f"{context.auxdata}:{name}"

    for function in ( greet, greet_sync, greet_positional ):
        invoker = invocables.produce_invoker( function )
        assert list( invoker.arguments_schema[ 'properties' ] ) == [ 'name' ]
        content = await invoker( _context( invoker ), { 'name': 'n' } )
        assert content == ( invocables.TextContent( text = 'app:n' ), )


# Schemas derived without pydantic (invocables.signatures.derivations) against the
# schemas pydantic derives. INVOCABLES_FUZZ_EXAMPLES=10000 runs each
# property with that many signatures.

_FUZZ_EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '60' ) )


class Priority( enum.IntEnum ):
    Low = 1
    High = 2


class _Shadow:
    ''' Holds an enumeration named as another, which pydantic renames. '''

    class Color( enum.Enum ):
        ''' Other colours. '''

        Green = 'green'

_LITERALS = st.one_of(
    st.text( max_size = 3 ), st.integers( -3, 3 ), st.booleans( ),
    st.none( ) )
_LEAVES = st.sampled_from( (
    str, int, float, bool, None, type( None ), typing.Any, object, list,
    dict, tuple, set, frozenset, typing.List, typing.Dict, # noqa: UP006
    Color, Priority, _Shadow.Color, datetime.date, datetime.datetime,
    uuid.UUID, bytes, Point, Segment, Label, Tree ) ) | st.lists(
        _LITERALS, min_size = 1, max_size = 3
    ).map( lambda values: typing.Literal[ tuple( values ) ] )


def _extend_annotations( inner ):
    pairs = st.tuples( inner, inner )
    return st.one_of(
        inner.map( lambda item: list[ item ] ),
        inner.map( lambda item: typing.List[ item ] ), # noqa: UP006
        inner.map( lambda item: dict[ str, item ] ),
        inner.map( lambda item: dict[ int, item ] ),
        inner.map( lambda item: tuple[ item, ... ] ),
        pairs.map( lambda items: tuple[ items ] ),
        inner.map( lambda item: tuple[ item ] ),
        inner.map( lambda item: frozenset[ item ] ),
        inner.map( lambda item: typing.Optional[ item ] ), # noqa: UP045
        pairs.map( lambda items: typing.Union[ items ] ), # noqa: UP007
        st.tuples( inner, inner, inner ).map(
            lambda items: typing.Union[ items ] ) ) # noqa: UP007


_ANNOTATIONS = st.recursive( _LEAVES, _extend_annotations, max_leaves = 6 )
_JSON = st.recursive(
    st.none( ) | st.booleans( ) | st.integers( -10, 10 )
    | st.floats( allow_nan = False, allow_infinity = False, width = 32 )
    | st.text( max_size = 4 ),
    lambda inner: st.lists( inner, max_size = 3 )
    | st.dictionaries( st.text( max_size = 3 ), inner, max_size = 3 ),
    max_leaves = 8 )
_DEFAULTS = st.one_of(
    st.just( inspect.Parameter.empty ), _JSON,
    st.lists( st.integers( -3, 3 ), max_size = 3 ).map( tuple ),
    st.sets( st.integers( -3, 3 ), max_size = 3 ),
    st.frozensets( st.text( max_size = 2 ), max_size = 3 ),
    st.sampled_from( (
        Color.Red, Priority.High, float( 'inf' ), b'x',
        datetime.date( 2026, 1, 1 ) ) ) )
_NUMBERS = st.integers( -5, 5 ) | st.floats( -5, 5, width = 32 )
_FIELDS = st.one_of(
    st.builds(
        lambda text: pydantic.Field( description = text ),
        st.text( max_size = 5 ) ),
    st.builds( lambda value: pydantic.Field( ge = value ), _NUMBERS ),
    st.builds( lambda value: pydantic.Field( lt = value ), _NUMBERS ),
    st.builds(
        lambda low, high: pydantic.Field( gt = low, le = high ),
        _NUMBERS, _NUMBERS ),
    st.builds(
        lambda value: pydantic.Field( multiple_of = value ),
        st.integers( 1, 5 ) ),
    st.builds(
        lambda low, high: pydantic.Field(
            min_length = low, max_length = high ),
        st.integers( 0, 3 ), st.integers( 0, 5 ) ),
    st.just( pydantic.Field( pattern = '^a' ) ),
    st.just( pydantic.Field( title = 'T' ) ),
    st.builds( lambda text: invocables.Doc( text ), st.text( max_size = 5 ) ),
    st.just( 'unknown metadata' ) )


@st.composite
def _annotated( draw ):
    annotation = draw( _ANNOTATIONS )
    metadata = draw( st.lists( _FIELDS, max_size = 2 ) )
    if not metadata: return annotation
    return typing.Annotated[ ( annotation, *metadata ) ]


@st.composite
def _signatures( draw ):
    ''' Draws parameters: names, annotations, defaults; and a docstring
        which describes some of them.
    '''
    names = draw( st.lists(
        st.sampled_from( (
            'text', 'count', 'title', 'default', 'properties', 'items',
            'a', 'b', 'type' ) ),
        unique = True, max_size = 4 ) )
    parameters = [ ]
    described = [ ]
    for name in names:
        annotation = draw( st.just( inspect.Parameter.empty ) | _annotated( ) )
        default = draw( _DEFAULTS )
        parameters.append( inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY,
            annotation = annotation, default = default ) )
        if draw( st.booleans( ) ): described.append( name )
    lines = [ f"        {name}: Describes {name}." for name in described ]
    docstring = '\n'.join( (
        'Does something.', '', '    Args:', *lines ) ) if lines else None
    return inspect.Signature( parameters ), docstring


def _produce_function( signature, docstring ):
    received = [ ]

    def function( **arguments ):
        received.append( arguments )
        return 'done'

    function.__signature__ = signature
    function.__doc__ = docstring
    return function, received


def _derive_by_pydantic( function ):
    ''' Returns schema which pydantic derives (the path before derivations
        existed), or the exception which building raised.
    '''
    from invocables import signatures
    name = 'tool'
    try:
        functions = signatures._functions
        _, descriptions = signatures.parse_docstring( function )
        parameters, _ = functions._survey_parameters( name, function )
        functions._validate_defaults( name, parameters )
        model = functions._produce_model(
            name, function, parameters, descriptions )
        return functions._clean_schema( model.model_json_schema( ) ), model
    except exceptions.InvokerInvalidity as exception:
        return exception, None


@settings(
    max_examples = _FUZZ_EXAMPLES, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( _signatures( ) )
def test_300_derived_schemas_equal_pydantic( case ):
    ''' Schemas derived without pydantic equal pydantic's, key order
        included; signatures it cannot derive still fail alike.
    '''
    signature, docstring = case
    function, _ = _produce_function( signature, docstring )
    with warnings.catch_warnings( ):
        warnings.simplefilter( 'ignore' )
        expected, _ = _derive_by_pydantic( function )
        try:
            schema = invocables.produce_invoker(
                function, name = 'tool' ).arguments_schema
        except exceptions.Omnierror as exception: schema = exception
    if isinstance( expected, Exception ):
        assert isinstance( schema, exceptions.InvokerInvalidity )
        return
    if isinstance( schema, exceptions.SchemaInvalidity ): return # both
    assert json.dumps( dict( schema ) ) == json.dumps( expected )


def test_301_common_signatures_derived( ):
    ''' Common signatures are derived without a pydantic model. '''
    from invocables.signatures import derivations
    empty = inspect.Parameter.empty
    schema = derivations.derive_schema( (
        ( 'city', str, empty, 'Name of the city.' ),
        ( 'days', typing.Annotated[ int, pydantic.Field( ge = 1 ) ], 3,
          None ),
        ( 'units', typing.Literal[ 'metric', 'imperial' ], 'metric', None ),
        ( 'tags', typing.Optional[ list[ str ] ], None, None ), # noqa: UP045
    ) )
    assert schema == {
        'additionalProperties': False,
        'properties': {
            'city': { 'description': 'Name of the city.', 'type': 'string' },
            'days': { 'default': 3, 'minimum': 1, 'type': 'integer' },
            'units': {
                'default': 'metric', 'enum': [ 'metric', 'imperial' ],
                'type': 'string' },
            'tags': {
                'anyOf': [
                    { 'items': { 'type': 'string' }, 'type': 'array' },
                    { 'type': 'null' } ],
                'default': None },
        },
        'required': [ 'city' ],
        'type': 'object' }
    assert derivations.derive_schema(
        ( ( 'tree', Tree, empty, None ), ) ) is None


@settings(
    max_examples = _FUZZ_EXAMPLES, deadline = None,
    suppress_health_check = [ HealthCheck.too_slow ] )
@given( _signatures( ), st.data( ) )
def test_310_conversion_unchanged( case, data ):
    ''' Invocations pass what they passed before: plain JSON arguments as
        they are, others as the pydantic model of the function converts
        them; invalid arguments are refused.
    '''
    signature, docstring = case
    function, received = _produce_function( signature, docstring )
    with warnings.catch_warnings( ):
        warnings.simplefilter( 'ignore' )
        _, model = _derive_by_pydantic( function )
        try: invoker = invocables.produce_invoker( function, name = 'tool' )
        except exceptions.Omnierror: return
    names = list( signature.parameters )
    arguments = data.draw( st.fixed_dictionaries(
        { }, optional = dict.fromkeys( names, _JSON ) ) )
    context = _context( invoker )
    try: result = asyncio.run( invoker( context, arguments ) )
    except exceptions.ArgumentsInvalidity: return
    except TypeError:
        # pydantic refuses some constraints (a pattern on a tuple) only
        # when it validates: as it always did.
        with pytest.raises( TypeError ): model.model_validate( arguments )
        return
    assert result == ( invocables.TextContent( text = 'done' ), )
    plain = all(
        signatures._functions._is_plain_annotation( parameter.annotation )
        for parameter in signature.parameters.values( ) )
    if plain:
        assert received == [ arguments ]
        return
    instance = model.model_validate( arguments )
    assert received == [
        { name: getattr( instance, name ) for name in names } ]


@pytest.mark.asyncio
async def test_320_conversion_model_made_on_first_call( ):
    ''' Arguments which JSON does not represent exactly (tuples, sets)
        are converted by a pydantic model made at the first call.
    '''
    received = [ ]

    def tally( pair: tuple[ int, str ], tags: frozenset[ str ] ) -> str:
        received.append( ( pair, tags ) )
        return 'ok'

    invoker = invocables.produce_invoker( tally )
    assert invoker.arguments_schema[ 'properties' ][ 'pair' ] == {
        'maxItems': 2, 'minItems': 2,
        'prefixItems': [ { 'type': 'integer' }, { 'type': 'string' } ],
        'type': 'array' }
    for _ in range( 2 ):
        await invoker(
            _context( invoker ), { 'pair': [ 1, 'a' ], 'tags': [ 'x' ] } )
    assert received == [ ( ( 1, 'a' ), frozenset( { 'x' } ) ) ] * 2
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await invoker( _context( invoker ), { 'pair': [ 1 ], 'tags': [ ] } )


@pytest.mark.asyncio
async def test_330_inapplicable_constraint_named( ):
    ''' A constraint pydantic applies only when it validates (a pattern on
        a tuple) fails the call with the library's invoker error naming
        the tool, not with pydantic's bare TypeError.
    '''
    def tag( pair: typing.Annotated[
        tuple[ int, ... ], pydantic.Field( pattern = '^a' ) ],
    ) -> str:
        return 'ok'

    invoker = invocables.produce_invoker( tag )
    with pytest.raises( exceptions.InvokerInvalidity, match = "'tag'" ):
        await invoker( _context( invoker ), { 'pair': [ 1 ] } )


def _enumerated( ):
    ''' Returns signatures with enumerations, dates and identifiers. '''
    empty = inspect.Parameter.empty
    optional = typing.Optional # noqa: UP045
    return [
        ( ( 'color', Color, empty ), ),
        ( ( 'color', Color, Color.Blue ), ),
        ( ( 'color', Color, empty ), ( 'other', optional[ Color ], None ) ),
        ( ( 'colors', list[ Color ], empty ),
          ( 'level', Priority, Priority.High ) ),
        ( ( 'color', Color, empty ), ( 'shade', _Shadow.Color, empty ) ),
        ( ( 'by', dict[ str, Color ], empty ),
          ( 'pair', tuple[ Color, Priority ], empty ) ),
        ( ( 'day', datetime.date, empty ),
          ( 'at', optional[ datetime.datetime ], None ),
          ( 'key', uuid.UUID, empty ) ),
        ( ( 'level', typing.Annotated[
            Priority, invocables.Doc( 'Level.' ) ], 1 ), ),
        ( ( 'point', Point, empty ), ),
        ( ( 'label', Label, empty ), ( 'color', Color, empty ) ),
        ( ( 'segment', Segment, empty ),
          ( 'points', optional[ list[ Point ] ], None ) ),
        ( ( 'label', Label, empty ), ( 'other', optional[ Label ], None ),
          ( 'color', Color, Color.Red ) ),
        ( ( 'point', Point, empty ), ( 'segment', Segment, empty ) ),
    ]


@pytest.mark.parametrize( 'case', _enumerated( ) )
def test_302_enumerated_signatures_equal_pydantic( case ):
    ''' Enumerations and models (inlined when used once, defined when
        shared), dates and identifiers derive as pydantic derives them.
    '''
    signature = inspect.Signature( [
        inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY,
            annotation = annotation, default = default )
        for name, annotation, default in case ] )
    docstring = 'Does.\n\n    Args:\n        color: The colour.\n'
    for text in ( None, docstring ):
        function, _ = _produce_function( signature, text )
        expected, _ = _derive_by_pydantic( function )
        schema = invocables.produce_invoker(
            function, name = 'tool' ).arguments_schema
        assert json.dumps( dict( schema ) ) == json.dumps( expected )
