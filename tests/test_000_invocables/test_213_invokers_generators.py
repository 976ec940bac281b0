# SPDX-License-Identifier: Apache-2.0

''' Tools whose calls give no value are refused when made, at every entry.

    A generator function, sync or async, gives an iterator which cannot be
    sent whole: such a tool would fail at every call. It is refused by
    ``produce_invoker`` (typed or explicit schema), ``FunctionInvoker``,
    ``produce_ensemble`` and descriptors, also behind partials, methods,
    decorators and ``__call__``. What gives one value, at once or awaited,
    is accepted and runs.
'''


import functools
import types

from collections.abc import AsyncIterator, Iterator

import pytest

import invocables

from invocables import descriptors, exceptions


MODULE = 'test_000_invocables.test_213_invokers_generators'
_SCHEMA = {
    'type': 'object', 'properties': { 'x': { 'type': 'integer' } },
    'required': [ 'x' ] }


async def stream( x: int ):
    ''' Yields x, asynchronously. '''
    yield x


def produce( x: int ):
    ''' Yields x. '''
    yield x


async def stream_invocable( context, arguments ):
    ''' Yields x, asynchronously, as a ( context, arguments ) callable. '''
    yield arguments[ 'x' ]


def produce_invocable( context, arguments ):
    ''' Yields x, as a ( context, arguments ) callable. '''
    yield arguments[ 'x' ]


def stream_annotated( x: int ) -> AsyncIterator[ int ]:
    ''' Returns an async iterator of x. '''
    return stream( x )


def produce_annotated( x: int ) -> Iterator[ int ]:
    ''' Returns an iterator of x. '''
    return iter( [ x ] )


class Streamer:
    ''' Object whose call is an async generator. '''

    async def __call__( self, x: int ):
        yield x

    async def stream( self, x: int ):
        ''' Yields x, asynchronously. '''
        yield x

    @staticmethod
    async def stream_static( x: int ):
        ''' Yields x, asynchronously. '''
        yield x

    @classmethod
    def produce_class( cls, x: int ):
        ''' Yields x. '''
        yield x


def _pass_through( function ):
    ''' Decorator which keeps __wrapped__ and calls function as it is. '''
    @functools.wraps( function )
    def wrapper( *posargs, **nomargs ):
        return function( *posargs, **nomargs )
    return wrapper


def _pass_through_async( function ):
    ''' Decorator which is itself an async generator. '''
    @functools.wraps( function )
    async def wrapper( *posargs, **nomargs ):
        async for item in function( *posargs, **nomargs ): yield item
    return wrapper


def _collect( function ):
    ''' Decorator which collects the items: its calls give one value. '''
    @functools.wraps( function )
    async def wrapper( *posargs, **nomargs ):
        return [ item async for item in function( *posargs, **nomargs ) ]
    return wrapper


async def add_one( x: int ) -> int:
    ''' Adds one. '''
    return x + 1


@types.coroutine
def add_two( x: int ):
    ''' Adds two, as a generator-based coroutine: awaitable. '''
    yield
    return x + 2


def add_three( x: int ):
    ''' Returns a coroutine: a sync function whose result is awaited. '''
    return add_one( x + 2 )


_REFUSED = {
    'async generator': stream,
    'sync generator': produce,
    'object with async generator __call__': Streamer( ),
    'partial of async generator': functools.partial( stream ),
    'partial of partial': functools.partial( functools.partial( stream ) ),
    'decorated, sync wrapper': _pass_through( stream ),
    'decorated twice': _pass_through( _pass_through( produce ) ),
    'decorated, async generator wrapper': _pass_through_async( stream ),
    'bound method': Streamer( ).stream,
    'static method': Streamer.stream_static,
    'class method': Streamer.produce_class,
    'annotated AsyncIterator': stream_annotated,
    'annotated Iterator': produce_annotated,
    'partial of object': functools.partial( Streamer( ) ),
}


@pytest.mark.parametrize( 'function', _REFUSED.values( ), ids = _REFUSED )
def test_100_typed_functions_refused( function ):
    ''' produce_invoker refuses each form, naming the tool and the fix. '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( function, name = 'lister' )
    assert caught.value.name == 'lister'
    reason = caught.value.reason
    assert 'generator function' in reason or 'annotated to return' in reason
    assert 'return' in reason and 'not yield' in reason
    assert isinstance( caught.value, exceptions.Omnierror )


def test_110_decorator_form_refused( ):
    ''' The decorator form refuses at decoration, with the derived name. '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        @invocables.produce_invoker
        async def listing( x: int ):
            yield x
    assert caught.value.name == 'listing'
    assert 'async generator function' in caught.value.reason
    with pytest.raises( exceptions.InvokerInvalidity ):
        @invocables.produce_invoker( description = 'Lists.' )
        def listing_sync( x: int ):
            yield x


def test_120_string_annotation_refused( ):
    ''' A return annotation written as text is evaluated to decide. '''
    namespace = { '__name__': 'probe_module' }
    source = (
        'from __future__ import annotations\n'
        'from collections.abc import AsyncIterator\n'
        'def probe( x: int ) -> AsyncIterator[ int ]:\n'
        '    return iter( [ x ] )\n'
        'def unknown( x: int ) -> Missing:\n'
        '    return x\n' )
    exec( compile( source, 'probe_module', 'exec' ), namespace ) # noqa: S102
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker( namespace[ 'probe' ] )
    assert 'AsyncIterator' in caught.value.reason
    # Not to be evaluated: not refused here (the result may be a value).
    invoker = invocables.produce_invoker( namespace[ 'unknown' ] )
    assert invoker.name == 'unknown'


@pytest.mark.parametrize(
    'invocable', [ stream_invocable, produce_invocable ],
    ids = [ 'async', 'sync' ] )
def test_200_explicit_schema_refused( invocable ):
    ''' With an explicit schema, a generator invocable is refused. '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_invoker(
            invocable, name = 'lister', arguments_schema = _SCHEMA )
    assert caught.value.name == 'lister'
    assert 'generator function' in caught.value.reason


@pytest.mark.parametrize(
    'invocable',
    [ stream_invocable, produce_invocable,
      functools.partial( stream_invocable ),
      _pass_through( stream_invocable ) ],
    ids = [ 'async', 'sync', 'partial', 'decorated' ] )
def test_210_function_invoker_refused( invocable ):
    ''' The FunctionInvoker constructor refuses a generator invocable. '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.FunctionInvoker(
            name = 'lister', invocable = invocable,
            arguments_schema = _SCHEMA )
    assert caught.value.name == 'lister'
    assert 'generator function' in caught.value.reason


def test_300_ensemble_members_refused( ):
    ''' produce_ensemble refuses a generator given as a member, and an
        object of the documents' protocol whose invocable is one.
    '''
    with pytest.raises( exceptions.InvokerInvalidity ):
        invocables.produce_ensemble( 'tools', [ add_one, stream ] )
    documented = types.SimpleNamespace(
        name = 'lister', invocable = stream_invocable,
        arguments_schema = _SCHEMA )
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        invocables.produce_ensemble( 'tools', [ documented ] )
    assert caught.value.name == 'lister'


@pytest.mark.parametrize(
    ( 'target', 'fragment' ),
    [ ( 'stream_invocable', 'async generator function' ),
      ( 'produce_invocable', 'is a generator' ),
      ( 'Streamer.stream', 'async generator function' ) ] )
def test_400_descriptor_implementations_refused(
    tmp_path, target, fragment
):
    ''' An implementation by import path which is a generator function
        makes loading fail at its key, naming the fix.
    '''
    ( tmp_path / 'tool.toml' ).write_text(
        "[invoker]\nname = 'lister'\n"
        f"implementation = '{MODULE}:{target}'\n\n"
        "[arguments]\ntype = 'object'\n" )
    ( tmp_path / 'sample.toml' ).write_text(
        "[ensemble]\nname = 'sample'\n\n"
        "[[invokers]]\nsource = 'tool.toml'\n" )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nsource = 'sample.toml'\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( tmp_path / 'invocables.toml' )
    assert caught.value.keypath == 'invoker.implementation'
    assert fragment in caught.value.reason
    assert 'not yield' in caught.value.reason


def test_410_descriptor_module_implementation_refused( tmp_path ):
    ''' A tool implemented by the function of the ensemble's module named
        after it is refused when that function is a generator.
    '''
    ( tmp_path / 'sample.toml' ).write_text(
        "[ensemble]\nname = 'sample'\n"
        f"implementation = '{MODULE}'\n\n"
        "[[invokers]]\nname = 'stream_invocable'\n\n"
        "[invokers.arguments]\ntype = 'object'\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_ensemble_descriptor( tmp_path / 'sample.toml' )
    assert 'async generator function' in caught.value.reason


def test_420_descriptor_record_refused( ):
    ''' A descriptor record made in Python with a generator function is
        refused by the invoker made of it.
    '''
    from invocables.descriptors.assembly import DescriptorInvoker
    record = descriptors.InvokerDescriptor(
        name = 'lister', location = '<test>',
        implementation = f"{MODULE}:stream_invocable",
        function = stream_invocable )
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        DescriptorInvoker( record )
    assert caught.value.name == 'lister'


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ( 'function', 'expected' ),
    [ ( add_one, 4 ), ( add_two, 5 ), ( add_three, 6 ),
      ( _pass_through( add_one ), 4 ), ( _collect( stream ), [ 3 ] ),
      ( functools.partial( add_one ), 4 ) ],
    ids = [ 'coroutine', 'types.coroutine', 'returns coroutine',
            'decorated coroutine', 'collecting decorator', 'partial' ] )
async def test_500_values_accepted_and_run( function, expected ):
    ''' What gives one value, at once or awaited, is accepted and runs. '''
    invoker = invocables.produce_invoker( function, name = 'compute' )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    results = await invocables.execute_invocations(
        [ invocables.InvocationCanister(
            identifier = 'call-1', name = 'compute',
            arguments = { 'x': 3 } ) ], [ ensemble ] )
    assert not results[ 0 ].is_error( ), results[ 0 ].error
    assert results[ 0 ].invocation_id == 'call-1'
    assert results[ 0 ].content[ 0 ].data == expected


@pytest.mark.asyncio
async def test_510_explicit_sync_returning_coroutine_awaited( ):
    ''' A ( context, arguments ) sync callable which returns a coroutine
        has that coroutine awaited.
    '''
    async def compute( arguments ): return arguments[ 'x' ] * 10
    def invoke( context, arguments ): return compute( arguments )
    invoker = invocables.produce_invoker(
        invoke, name = 'compute', arguments_schema = _SCHEMA )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    content = await ensemble.invoke( 'compute', { 'x': 4 } )
    assert content[ 0 ].data == 40


def test_520_classes_accepted( ):
    ''' A class makes an instance when called: one value, accepted. '''
    class Point:
        ''' A point. '''
        def __init__( self, x: int ): self.x = x
    invoker = invocables.produce_invoker( Point, name = 'point' )
    assert invoker.name == 'point'
