# SPDX-License-Identifier: Apache-2.0
''' Local tools: make invokers, group them, execute tool calls. '''

import asyncio

from typing import Annotated

import invocables

from invocables import Doc


@invocables.produce_invoker
def add( a: Annotated[ int, Doc( 'First term.' ) ], b: int = 1 ) -> int:
    ''' Adds two integers. '''
    return a + b


@invocables.produce_invoker( timeout = 0.1 )
async def wait( seconds: float ) -> str:
    ''' Waits a while. '''
    await asyncio.sleep( seconds )
    return 'done'


async def main( ) -> None:
    ''' Executes three calls as a model would send them. '''
    async with invocables.produce_ensemble( 'demo', [ add, wait ] ) as demo:
        calls = [
            invocables.InvocationCanister(
                identifier = 'call-1', name = 'add', arguments = { 'a': 2 } ),
            invocables.InvocationCanister(
                identifier = 'call-2', name = 'wait',
                arguments = { 'seconds': 1 } ),
            invocables.InvocationCanister(
                identifier = 'call-3', name = 'add',
                arguments = { 'a': 'two' } ),
        ]
        for result in await invocables.execute_invocations( calls, [ demo ] ):
            print( result.invocation_id, result.as_text( ) )


if __name__ == '__main__':
    asyncio.run( main( ) )
