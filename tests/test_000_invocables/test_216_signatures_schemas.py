# SPDX-License-Identifier: Apache-2.0

''' Schemas of typed functions: titles, definitions, parameter kinds. '''


import asyncio
import enum
import functools
import threading

from typing import Optional

import pydantic
import pytest

import invocables

from invocables import exceptions


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

    schema = invocables.produce_invoker( mark ).argschema
    titled = [ path for path, node in _walk( schema ) if 'title' in node ]
    assert titled == [ ]
    label = schema[ 'properties' ][ 'label' ]
    assert label[ 'properties' ][ 'title' ] == { 'type': 'string' }
    assert label[ 'description' ] == 'A label, whose field is named title.'


def test_110_definitions_minimal( ):
    ''' Definitions used once are inlined; shared and recursive ones stay. '''

    def draw( segment: Segment, tree: Tree, label: Label ) -> None:
        return None

    schema = invocables.produce_invoker( draw ).argschema
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

    schema = invocables.produce_invoker( place ).argschema
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
    assert set( invoker.argschema[ 'properties' ] ) == {
        'start', 'stop', 'step' }
    assert invoker.argschema[ 'required' ] == [ 'start' ]
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
        assert list( invoker.argschema[ 'required' ] ) == [ base ]
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
        assert list( invoker.argschema[ 'properties' ] ) == [ 'name' ]
        content = await invoker( _context( invoker ), { 'name': 'n' } )
        assert content == ( invocables.TextContent( text = 'app:n' ), )
