# SPDX-License-Identifier: Apache-2.0

''' Invokers from typed functions and from explicit schemas. '''


import asyncio
import enum
import threading

from typing import Annotated, Literal, Optional

import pydantic
import pytest

import invocables

from invocables import Doc, exceptions


class Units( enum.Enum ):
    ''' Temperature units. '''

    Celsius = 'c'
    Fahrenheit = 'f'


class Place( pydantic.BaseModel ):
    ''' A place. '''

    city: str
    country: str = 'FR'


def _context( invoker ):
    return invocables.InvocationContext(
        auxdata = None, invoker = invoker, namespace = { } )


def test_100_schema_from_signature( ):
    ''' Schema has types, defaults, required names and descriptions. '''

    def forecast(
        city: Annotated[ str, Doc( 'Name of the city.' ) ],
        days: int = 3,
        units: Literal[ 'c', 'f' ] = 'c',
        note: Optional[ str ] = None, # noqa: UP045
    ) -> str:
        ''' Gives the weather forecast.

            :param days: Number of days ahead.
        '''
        return city

    invoker = invocables.produce_invoker( forecast )
    schema = invoker.arguments_schema
    assert invoker.name == 'forecast'
    assert invoker.description == 'Gives the weather forecast.'
    assert schema[ 'type' ] == 'object'
    assert schema[ 'required' ] == [ 'city' ]
    properties = schema[ 'properties' ]
    assert properties[ 'city' ] == {
        'type': 'string', 'description': 'Name of the city.' }
    assert properties[ 'days' ][ 'default' ] == 3
    assert properties[ 'days' ][ 'description' ] == 'Number of days ahead.'
    assert properties[ 'units' ][ 'enum' ] == [ 'c', 'f' ]
    assert { 'type': 'null' } in properties[ 'note' ][ 'anyOf' ]
    assert schema[ 'additionalProperties' ] is False


def test_110_google_docstring( ):
    ''' Google-style argument sections give parameter descriptions. '''

    def scale( factor: float ) -> float:
        ''' Scales things.

            Args:
                factor: How much to scale.
        '''
        return factor

    invoker = invocables.produce_invoker( scale )
    assert invoker.description == 'Scales things.'
    properties = invoker.arguments_schema[ 'properties' ]
    assert properties[ 'factor' ][ 'description' ] == (
        'How much to scale.' )


@pytest.mark.asyncio
async def test_120_nested_models_and_enums_converted( ):
    ''' Nested models and enums arrive as Python objects. '''
    seen = { }

    def locate( place: Place, units: Units = Units.Celsius ) -> str:
        seen[ 'place' ] = place
        seen[ 'units' ] = units
        return place.city

    invoker = invocables.produce_invoker( locate )
    assert '$defs' not in invoker.arguments_schema # used once: inlined
    content = await invoker(
        _context( invoker ),
        { 'place': { 'city': 'Paris' }, 'units': 'f' } )
    assert content == ( invocables.TextContent( text = 'Paris' ), )
    assert seen[ 'place' ] == Place( city = 'Paris', country = 'FR' )
    assert seen[ 'units' ] is Units.Fahrenheit


@pytest.mark.asyncio
async def test_130_sync_runs_off_loop( ):
    ''' Sync functions run in a worker thread, not on the event loop. '''
    loop_thread = threading.get_ident( )

    def where( ) -> int:
        return threading.get_ident( )

    invoker = invocables.produce_invoker( where )
    content = await invoker( _context( invoker ), { } )
    assert content[ 0 ].data != loop_thread  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_140_async_function( ):
    ''' Async functions are awaited. '''

    async def double( x: int ) -> int:
        await asyncio.sleep( 0 )
        return 2 * x

    invoker = invocables.produce_invoker( double )
    assert await invoker( _context( invoker ), { 'x': 4 } ) == (
        invocables.StructureContent( data = 8 ), )


def test_150_decorator_forms( ):
    ''' Usable as bare decorator and with options. '''

    @invocables.produce_invoker
    def first( ) -> str:
        return 'a'

    @invocables.produce_invoker( name = 'second_tool', timeout = 2.5 )
    def second( ) -> str:
        return 'b'

    assert isinstance( first, invocables.FunctionInvoker )
    assert second.name == 'second_tool'
    assert second.timeout == 2.5


@pytest.mark.asyncio
async def test_160_explicit_schema( ):
    ''' An explicit schema makes a ( context, arguments ) invocable. '''
    schema = {
        'type': 'object',
        'properties': { 'q': { 'type': 'string' } },
        'required': [ 'q' ] }

    async def search( context, arguments ):
        return f"found {arguments[ 'q' ]} for {context.auxdata}"

    invoker = invocables.produce_invoker(
        search, arguments_schema = schema, description = 'Searches.' )
    context = invocables.InvocationContext(
        auxdata = 'app', invoker = invoker, namespace = { } )
    assert await invoker( context, { 'q': 'x' } ) == (
        invocables.TextContent( text = 'found x for app' ), )

    def sync_search( context, arguments ):
        return arguments[ 'q' ]

    invoker = invocables.produce_invoker(
        sync_search, arguments_schema = schema )
    assert await invoker( context, { 'q': 'y' } ) == (
        invocables.TextContent( text = 'y' ), )


@pytest.mark.asyncio
async def test_170_context_parameter( ):
    ''' A parameter named context receives the context, not in schema. '''

    def who( context, name: str ) -> str:
        return f"{context.auxdata}:{name}"

    invoker = invocables.produce_invoker( who )
    assert list( invoker.arguments_schema[ 'properties' ] ) == [ 'name' ]
    context = invocables.InvocationContext(
        auxdata = 'app', invoker = invoker, namespace = { } )
    assert await invoker( context, { 'name': 'n' } ) == (
        invocables.TextContent( text = 'app:n' ), )


def test_200_broken_schema_refused( ):
    ''' A schema that is not valid JSON Schema is refused, naming the tool. '''
    with pytest.raises( exceptions.SchemaInvalidity ) as caught:
        invocables.produce_invoker(
            lambda context, arguments: None, name = 'broken',
            arguments_schema = { 'type': 'object', 'properties': 3 } )
    assert "'broken'" in str( caught.value )
    with pytest.raises( exceptions.SchemaInvalidity ):
        invocables.produce_invoker(
            lambda context, arguments: None, name = 'listy',
            arguments_schema = { 'type': 'array' } )
    with pytest.raises( exceptions.SchemaInvalidity ):
        invocables.produce_invoker(
            lambda context, arguments: None, name = 'text',
            arguments_schema = 'not a schema' )  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_210_invalid_arguments( ):
    ''' Invalid arguments raise invalidity with the validator's message. '''

    def add( a: int, b: int ) -> int:
        return a + b

    invoker = invocables.produce_invoker( add )
    with pytest.raises( exceptions.ArgumentsInvalidity ) as caught:
        await invoker( _context( invoker ), { 'a': 'x' } )
    message = str( caught.value )
    assert "'x' is not of type 'integer'" in message
    assert "'b' is a required property" in message
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        invoker.validate_arguments( [ 1, 2 ] )


def test_220_validator_compiled_once( ):
    ''' One validator per invoker, kept when the invoker is regrouped. '''

    def add( a: int ) -> int:
        return a

    invoker = invocables.produce_invoker( add )
    validator = invoker.validator
    invoker.validate_arguments( { 'a': 1 } )
    invoker.validate_arguments( { 'a': 2 } )
    assert invoker.validator is validator
    assert invoker.with_ensemble( 'math' ).validator is validator


def test_230_unsupported_functions( ):
    ''' Functions with *args, **kwargs or no name are refused clearly. '''

    def variadic( *values: int ) -> int:
        return sum( values )

    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( variadic )
    assert 'values' in str( caught.value )
    with pytest.raises( exceptions.InvokerInvalidity ):
        invocables.produce_invoker( lambda x: x )
    with pytest.raises( exceptions.InvokerInvalidity ):
        invocables.produce_invoker( 3 )  # type: ignore[call-overload]


def test_240_repr( ):
    ''' Representation names the tool. '''

    def noop( ) -> None:
        return None

    assert "'noop'" in repr( invocables.produce_invoker( noop ) )


def test_250_invokers_immutable( ):
    ''' Invokers and their validators refuse assignment and deletion after
        construction; annotations are a read-only copy, kept by copies.
    '''

    def add( a: int ) -> int:
        return a

    given = { 'readOnlyHint': True }
    invoker = invocables.produce_invoker( add, annotations = given )
    for target in ( invoker, invoker.validator ):
        with pytest.raises( AttributeError ):
            target.name = 'other'
        with pytest.raises( AttributeError ):
            del target.name
    with pytest.raises( AttributeError ):
        invoker.extra = 1
    given[ 'readOnlyHint' ] = False
    assert invoker.annotations == { 'readOnlyHint': True }
    with pytest.raises( TypeError ):
        invoker.annotations[ 'readOnlyHint' ] = False # type: ignore[index]
    copy = invoker.with_ensemble( 'math' )
    assert copy.annotations is invoker.annotations
    assert copy.name == 'add' and copy.ensemble == 'math'
    assert invocables.produce_invoker( add ).annotations == { }


def test_260_arguments_roots_made_once( ):
    ''' A tool whose schema is plain with a plain object root has its root
        copied once, with its validator (less ``$schema``), kept by its
        copies and offered by the processors which take it as it is; any
        other tool has none, and a validator of another schema has its
        root not offered.
    '''
    from invocables import dialects, schemata

    def add( a: int, b: int = 0 ) -> int:
        return a + b

    async def noop( context, arguments ) -> None:
        return None

    schema = {
        '$schema': 'https://json-schema.org/draft/2020-12/schema',
        'type': 'object', 'properties': { 'x': { 'type': 'string' } } }
    given = invocables.produce_invoker(
        noop, name = 'given', arguments_schema = schema )
    typed = invocables.produce_invoker( add )
    root = given.validator.root
    assert root == { 'type': 'object', 'properties': schema[ 'properties' ] }
    assert root is not schema
    assert root[ 'properties' ] is schema[ 'properties' ]
    # A typed function's schema, a read-only view, has its root too, as
    # the dialects which take plain roots adapt it.
    assert typed.validator.root == typed.arguments_schema
    assert type( typed.validator.root ) is dict
    for dialect in ( 'anthropic', 'cohere', 'openai' ):
        assert typed.validator.root == dialects.adapt_schema(
            typed.arguments_schema, dialect )
    assert given.with_ensemble( 'e' ).validator.root is root
    tools = invocables.produce_processor( 'anthropic' ).prepare_tools(
        [ invocables.produce_ensemble( 'e', [ given, typed ] ) ] )
    assert [ tool[ 'input_schema' ] for tool in tools ] == [
        root, typed.validator.root ]
    # Not plain at the root ($defs to resolve): no root.
    nested = invocables.produce_invoker( noop, name = 'nested',
        arguments_schema = {
            'type': 'object', '$defs': { 't': { 'type': 'string' } },
            'properties': { 'x': { '$ref': '#/$defs/t' } } } )
    assert nested.validator.root is None
    # A validator of another schema: its root is not offered.
    other = schemata.Validator( 'other', {
        'type': 'object', 'properties': { } } )
    mismatched = invocables.FunctionInvoker(
        name = 'mismatched', invocable = given.invocable,
        arguments_schema = schema, validator = other )
    tools = invocables.produce_processor( 'anthropic' ).prepare_tools(
        [ invocables.produce_ensemble( 'm', [ mismatched ] ) ] )
    assert tools[ 0 ][ 'input_schema' ] is not other.root
    assert tools[ 0 ][ 'input_schema' ] == root
