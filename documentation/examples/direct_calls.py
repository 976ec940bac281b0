# SPDX-License-Identifier: Apache-2.0
''' Direct calls: tools as plain functions, one tool run directly, a group
    of ensembles connected and disconnected together.
'''

import asyncio

import invocables


@invocables.produce_invoker
def add( a: int, b: int = 1 ) -> int:
    ''' Adds two integers.

        Args:
            a: First term.
            b: Second term, one
                unless given.
    '''
    return a + b


@invocables.produce_invoker( timeout = 5 )
async def shout( text: str ) -> str:
    ''' Shouts text. '''
    return text.upper( )


async def call_plainly( ) -> None:
    ''' Decorated functions stay callable, as in the application's tests. '''
    total: int = add( 2, 3 )
    loud: str = await shout( 'hi' )
    print( total, loud )


async def main( ) -> None:
    ''' Runs tools directly, then as a model's calls would run. '''
    await call_plainly( )
    print( add.arguments_schema[ 'properties' ][ 'b' ][ 'description' ] )
    math = invocables.produce_ensemble( 'math', [ add ] )
    words = invocables.produce_ensemble( 'words', [ shout ] )
    async with invocables.connect_ensembles( [ math, words ] ) as connected:
        content = await math.invoke( 'add', { 'a': 2, 'b': 3 } )
        print( content )
        try: await words.invoke( 'shout', { 'text': 3 } )
        except invocables.exceptions.ArgumentsInvalidity as exception:
            print( exception.reason )
        context = invocables.InvocationContext(
            auxdata = None, invoker = add, namespace = { } )
        print( await add( context, { 'a': 40, 'b': 2 } ) )
        print( [ ensemble.is_connected( ) for ensemble in connected ] )
    print( [ ensemble.is_connected( ) for ensemble in ( math, words ) ] )


if __name__ == '__main__':
    asyncio.run( main( ) )
