# SPDX-License-Identifier: Apache-2.0

''' Checks made when invokers are produced from Python, at construction. '''


import functools
import math

import pytest

import invocables

from invocables import exceptions


def power( base: int, exponent: int = 2 ) -> int:
    ''' Raises base to exponent. '''
    return base ** exponent


def _search( context, arguments ):
    return arguments


_SCHEMA = { 'type': 'object', 'properties': { 'q': { 'type': 'string' } } }


def _define( source ):
    ''' Returns the function named probe, defined by source in a module-like
        namespace (so that its annotations are resolved against it).
    '''
    namespace = { '__name__': 'probe_module' }
    exec( compile( source, 'probe_module', 'exec' ), namespace ) # noqa: S102
    return namespace[ 'probe' ]


@pytest.mark.parametrize(
    'name', [ '', '   ', 'my\ttool', 'files\nread', 'x' * 257, 'a\u200bb' ] )
def test_100_tool_name_rule( name ):
    ''' Names outside the rule are refused, naming the rule. '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( power, name = name )
    message = str( caught.value )
    assert repr( name[ : 80 ] )[ : -1 ] in message
    assert '1 to 256 printable characters' in message
    invoker = invocables.produce_invoker( power, name = 'power-2_x' )
    assert invoker.name == 'power-2_x'


def test_110_derived_names( ):
    ''' Objects without a usable name are refused with the reason. '''
    cases = (
        ( lambda base: base, 'lambda' ),
        ( functools.partial( power, exponent = 3 ), 'functools.partial' ),
    )
    for function, reason in cases:
        with pytest.raises( exceptions.InvokerInvalidity ) as caught:
            invocables.produce_invoker( function )
        assert reason in str( caught.value )
        assert "'name'" in str( caught.value )


@pytest.mark.parametrize(
    'timeout', [ '5', True, 0, -1, math.inf, math.nan, [ 5 ] ] )
def test_120_timeout_refused( timeout ):
    ''' Timeouts other than positive finite numbers or None are refused. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_invoker( power, timeout = timeout )
    message = str( caught.value )
    assert "tool 'power'" in message
    assert "'timeout'" in message
    assert repr( timeout ) in message
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.produce_invoker( timeout = timeout )( power )


def test_121_timeout_accepted( ):
    ''' Positive numbers become seconds; None means no limit. '''
    assert invocables.produce_invoker( power, timeout = 5 ).timeout == 5.0
    assert invocables.produce_invoker( power, timeout = 0.5 ).timeout == 0.5
    assert invocables.produce_invoker( power, timeout = None ).timeout is None
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_invoker( power, timeout = math.inf )
    assert 'None for no limit' in str( caught.value )


def test_130_explicit_schema_signature( ):
    ''' With an explicit schema, the function must take two arguments. '''

    def lone( arguments ):
        return arguments

    def greedy( context, arguments, extra ):
        return extra

    for function in ( lone, greedy ):
        with pytest.raises( exceptions.InvokerInvalidity ) as caught:
            invocables.produce_invoker( function, arguments_schema = _SCHEMA )
        message = str( caught.value )
        assert repr( function.__name__ ) in message
        assert '( context, arguments )' in message
        assert str( __import__( 'inspect' ).signature( function ) ) in message


def test_131_explicit_schema_accepted_shapes( ):
    ''' Defaults, variadic parameters and callable objects fit the call. '''

    def optional( context, arguments, extra = 1 ):
        return extra

    def variadic( *values ):
        return len( values )

    class Searcher:
        ''' Searches. '''

        def __call__( self, context, arguments ):
            return arguments

    for function, name in (
        ( optional, 'optional' ), ( variadic, 'variadic' ),
        ( Searcher( ), 'searcher' ),
    ):
        invoker = invocables.produce_invoker(
            function, name = name, arguments_schema = _SCHEMA )
        assert invoker.arguments_schema == _SCHEMA
    assert invocables.signatures.validate_invocable( 'x', _search ) is _search



@pytest.mark.parametrize( 'schema', [
    { 'type': 'object', 'properties': {
        'a': { 'type': 'number', 'maximum': float( 'inf' ) } } },
    { 'type': 'object', 'properties': {
        'a': { 'type': 'number', 'default': float( 'nan' ) } } },
    { 'type': 'object', 'properties': {
        'a': { 'enum': [ 1, { 'b': [ float( '-inf' ) ] } ] } } },
    { 'type': 'object', 'properties': {
        'a': { 'type': 'number', 'multipleOf': float( 'nan' ) } } },
] )
def test_132_explicit_schema_non_finite( schema ):
    ''' A schema which holds NaN or Infinity anywhere (no JSON text carries
        them) is refused when the tool is made, naming the tool. '''

    def search( context, arguments ): return arguments

    with pytest.raises( exceptions.SchemaInvalidity, match = 'NaN' ):
        invocables.produce_invoker(
            search, name = 'search', arguments_schema = schema )
    finite = { 'type': 'object', 'properties': {
        'a': { 'type': 'number', 'maximum': 1e308, 'default': 0.5 } } }
    invocables.produce_invoker(
        search, name = 'search', arguments_schema = finite )


def test_140_option_types( ):
    ''' Descriptions must be strings and annotations mappings. '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( power, description = 3 )
    assert 'description' in str( caught.value )
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( power, annotations = [ 'readOnly' ] )
    assert 'annotations' in str( caught.value )


def test_150_constructor_checks( ):
    ''' The constructor takes server names as they are, but checks types. '''
    invoker = invocables.FunctionInvoker(
        name = 'files.read', invocable = _search, arguments_schema = _SCHEMA )
    assert invoker.name == 'files.read'
    with pytest.raises( exceptions.InvokerInvalidity ):
        invocables.FunctionInvoker( name = 3, invocable = _search )
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.FunctionInvoker( name = 'x', invocable = 'not callable' )
    assert 'not callable' in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.FunctionInvoker(
            name = 'x', invocable = _search, timeout = '5' )


def test_160_variadic_parameters( ):
    ''' *args and **kwargs are refused, saying what to declare instead. '''

    def gather( *values: int ) -> int:
        return sum( values )

    def options( name: str, **extra: str ) -> str:
        return name

    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( gather )
    assert '*values' in str( caught.value )
    assert 'list parameter' in str( caught.value )
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( options )
    assert '**extra' in str( caught.value )
    assert 'arguments_schema' in str( caught.value )


def test_170_defaults_not_json( ):
    ''' Defaults which JSON cannot represent are refused at construction. '''
    marker = object( )

    def tagged( label: object = marker ) -> None:
        return None

    def ratio( value: float = math.nan ) -> float:
        return value

    for function, name in ( ( tagged, 'label' ), ( ratio, 'value' ) ):
        with pytest.raises( exceptions.InvokerInvalidity ) as caught:
            invocables.produce_invoker( function )
        assert repr( name ) in str( caught.value )
        assert 'JSON' in str( caught.value )


def test_171_defaults_json( ):
    ''' Defaults with a JSON form (dates, sets, tuples) appear in schema. '''
    import datetime

    def plan(
        day: datetime.date = datetime.date( 2026, 1, 2 ),
        tags: frozenset[ str ] = frozenset( ( 'a', ) ),
        pair: tuple[ int, int ] = ( 1, 2 ),
        note: str | None = None,
    ) -> None:
        return None

    invoker = invocables.produce_invoker( plan )
    properties = invoker.arguments_schema[ 'properties' ]
    assert properties[ 'day' ][ 'default' ] == '2026-01-02'
    assert properties[ 'tags' ][ 'default' ] == [ 'a' ]
    assert properties[ 'pair' ][ 'default' ] == [ 1, 2 ]
    assert properties[ 'note' ][ 'default' ] is None


def test_180_unbound_method( ):
    ''' A method taken from its class is refused, saying what to pass. '''

    class Calculator:
        ''' Calculates. '''

        def double( self, value: int ) -> int:
            ''' Doubles. '''
            return 2 * value

    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( Calculator.double )
    assert "'self'" in str( caught.value )
    invoker = invocables.produce_invoker( Calculator( ).double )
    assert list( invoker.arguments_schema[ 'properties' ] ) == [ 'value' ]


def test_190_unresolvable_annotation( ):
    ''' An annotation which cannot be evaluated names its parameter. '''
    probe = _define(
        'from __future__ import annotations\n'
        'from typing import TYPE_CHECKING\n'
        'if TYPE_CHECKING:\n'
        '    from decimal import Decimal\n'
        'def probe( amount: Decimal ) -> str:\n'
        '    return str( amount )\n' )
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( probe )
    message = str( caught.value )
    assert "'amount'" in message
    assert "'Decimal'" in message
    assert 'TYPE_CHECKING' in message


def test_191_context_annotation_unevaluated( ):
    ''' The context parameter's annotation may be a TYPE_CHECKING name. '''
    probe = _define(
        'from __future__ import annotations\n'
        'from typing import TYPE_CHECKING\n'
        'if TYPE_CHECKING:\n'
        '    from invocables import Context\n'
        'def probe( context: Context, count: int ) -> int:\n'
        '    return count\n' )
    invoker = invocables.produce_invoker( probe )
    assert list( invoker.arguments_schema[ 'properties' ] ) == [ 'count' ]
    assert invoker.arguments_schema[ 'properties' ][ 'count' ] == {
        'type': 'integer' }


def test_192_context_under_other_name( ):
    ''' A parameter typed as the context must be named context. '''

    def probe( ctx: invocables.Context, count: int ) -> int:
        return count

    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( probe )
    assert "'ctx'" in str( caught.value )
    assert "name it 'context'" in str( caught.value )
