# SPDX-License-Identifier: Apache-2.0

''' Invokers of functions stay callable as those functions. '''


import dataclasses

import pytest

import invocables

from invocables import exceptions


@invocables.produce_invoker
def add( a: int, b: int = 1 ) -> int:
    ''' Adds. '''
    return a + b


@invocables.produce_invoker( name = 'shout', timeout = 5 )
async def shout( text: str ) -> str:
    ''' Shouts. '''
    return text.upper( )


@invocables.produce_invoker
def greet( context: invocables.Context, name: str ) -> str:
    ''' Greets. '''
    return f"{context.auxdata}:{name}"


@dataclasses.dataclass
class _Context:
    ''' Context of the application's own making. '''

    auxdata: object
    invoker: object
    namespace: dict


def _context( invoker, auxdata = 'app' ):
    return invocables.InvocationContext(
        auxdata = auxdata, invoker = invoker, namespace = { } )


def test_100_plain_sync_call( ):
    ''' A decorated sync function is called as itself, by any arguments. '''
    assert add( 2, 3 ) == 5
    assert add( 2 ) == 3
    assert add( a = 2, b = 5 ) == 7
    assert add.function( 1, 1 ) == 2
    assert isinstance( add, invocables.FunctionInvoker )
    with pytest.raises( TypeError ):
        add( 1, 2, 3 )


@pytest.mark.asyncio
async def test_110_plain_async_call( ):
    ''' A decorated async function gives its own coroutine. '''
    assert await shout( 'hi' ) == 'HI'
    assert await shout( text = 'yo' ) == 'YO'


@pytest.mark.asyncio
async def test_120_invocation_call( ):
    ''' A context and a mapping make an invocation, which validates. '''
    context = _context( add )
    assert await add( context, { 'a': 1 } ) == (
        invocables.StructureContent( data = 2 ), )
    assert await add( context = context, arguments = { 'a': 4 } ) == (
        invocables.StructureContent( data = 5 ), )
    assert await add( context, arguments = { 'a': 5 } ) == (
        invocables.StructureContent( data = 6 ), )
    assert await shout( context, { 'text': 'a' } ) == (
        invocables.TextContent( text = 'A' ), )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await add( context, { 'a': 'one' } )


@pytest.mark.asyncio
async def test_130_any_context_object( ):
    ''' Any object with the members of a context makes an invocation. '''
    context = _Context( auxdata = 'mine', invoker = greet, namespace = { } )
    assert await greet( context, { 'name': 'n' } ) == (
        invocables.TextContent( text = 'mine:n' ), )
    assert greet( context, 'n' ) == 'mine:n'
    assert greet( context = context, name = 'k' ) == 'mine:k'


@pytest.mark.asyncio
async def test_140_explicit_schema( ):
    ''' With an explicit schema the invocation wins; function stays near. '''

    def search( context, arguments ):
        return [ context, dict( arguments ) ]

    invoker = invocables.produce_invoker(
        search, arguments_schema = {
            'type': 'object', 'properties': { 'q': { 'type': 'string' } } } )
    context = _context( invoker )
    content = await invoker( context, { 'q': 'x' } )
    assert content == ( invocables.StructureContent(
        data = [ context, { 'q': 'x' } ] ), )
    assert invoker.function( 'c', { 'q': 1 } ) == [ 'c', { 'q': 1 } ]
    assert invoker( 'c', { 'q': 1 } ) == [ 'c', { 'q': 1 } ]


@pytest.mark.asyncio
async def test_150_bound_copies( ):
    ''' Invokers in an ensemble keep the function and both calls. '''
    ensemble = invocables.produce_ensemble( 'math', [ add ] )
    bound = ensemble.access_invoker( 'add' )
    assert bound is not add
    assert bound.function is add.function
    assert bound( 2, 2 ) == 4
    assert await bound( _context( bound ), { 'a': 2 } ) == (
        invocables.StructureContent( data = 3 ), )


@pytest.mark.asyncio
async def test_160_invokers_without_function( ):
    ''' Invokers of other sources take every call as an invocation. '''

    async def echo( context, arguments ):
        return arguments[ 'text' ]

    invoker = invocables.FunctionInvoker(
        name = 'echo', invocable = echo, arguments_schema = {
            'type': 'object', 'properties': { 'text': { 'type': 'string' } },
            'required': [ 'text' ] } )
    assert invocables.__.is_absent( invoker.function )
    assert await invoker( _context( invoker ), { 'text': 'e' } ) == (
        invocables.TextContent( text = 'e' ), )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await invoker( 'not a context', 'not a mapping' )


@pytest.mark.asyncio
async def test_170_engine_still_invokes( ):
    ''' The execution engine runs decorated functions as tools. '''
    ensemble = invocables.produce_ensemble( 'tools', [ add, greet ] )
    results = await invocables.execute_invocations( [
        invocables.InvocationCanister(
            identifier = 'c1', name = 'add', arguments = { 'a': 1 } ),
        invocables.InvocationCanister(
            identifier = 'c2', name = 'greet', arguments = { 'name': 'x' } ),
    ], [ ensemble ], auxdata = 'engine' )
    assert [ result.as_text( ) for result in results ] == [ '2', 'engine:x' ]
