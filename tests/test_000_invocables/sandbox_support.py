# SPDX-License-Identifier: Apache-2.0

''' Calls of tools of sandboxed servers, for tests of sandboxes. '''


import invocables
import invocables.mcp


async def retrieve_text(
    ensemble: invocables.mcp.ServerEnsemble, name: str, **arguments: object
) -> str:
    ''' Returns the text which tool name of ensemble answers to
        arguments. '''
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    content = await ensemble.access_invoker( name )( context, arguments )
    if isinstance( content, invocables.TextContent ): return content.text
    return ''.join(
        item.text for item in content
        if isinstance( item, invocables.TextContent ) )


async def access_private_folder(
    ensemble: invocables.mcp.ServerEnsemble
) -> str:
    ''' Returns the private folder (HOME) of an escape server's sandbox. '''
    lines = ( await retrieve_text( ensemble, 'read_environment' ) ).split(
        '\n' )
    return next(
        line[ 5 : ] for line in lines if line.startswith( 'HOME=' ) )
