# SPDX-License-Identifier: Apache-2.0

''' Real tool sets (``tests/data/toolsets``) as local ensembles.

    The tools of 18 real MCP servers, as their ``tools/list`` answered,
    become invokers with the same names, descriptions and schemas; calling
    one returns a text naming it (nothing is contacted).
'''


import functools
import json

from pathlib import Path

import invocables


TOOLSETS = Path( __file__ ).resolve( ).parents[ 1 ] / 'data' / 'toolsets'


@functools.cache
def produce_mcp_ensembles( ):
    ''' Returns one local ensemble per recorded MCP server, by file name.

        Made once per test session (local ensembles need no connection).
    '''
    ensembles = [ ]
    for path in sorted( ( TOOLSETS / 'mcp' ).glob( '*.json' ) ):
        answer = json.loads( path.read_text( encoding = 'utf-8' ) )
        invokers = [
            _produce_invoker( tool ) for tool in answer[ 'result' ][ 'tools' ] ]
        ensembles.append( invocables.produce_ensemble( path.stem, invokers ) )
    return tuple( ensembles )


def _produce_invoker( tool ):
    name = tool[ 'name' ]

    async def invoke( context, arguments ):
        return f"ran {name}"

    return invocables.FunctionInvoker(
        name = name, invocable = invoke,
        arguments_schema = tool[ 'inputSchema' ],
        description = tool.get( 'description' ) or '',
        annotations = tool.get( 'annotations' ) or { } )
