# SPDX-License-Identifier: Apache-2.0

''' A server over stdin and stdout. '''


import invocables.serving.__ as __
import invocables.serving._stdio as _stdio
import invocables.serving.servers as _servers
import invocables.ensembles as _ensembles


async def serve_stdio(
    server: __.typx.Annotated[
        _servers.ToolServer, __.ddoc.Doc( ''' Tools to serve. ''' )
    ],
    announce: __.typx.Annotated[
        __.cabc.Callable[ [ ], None ] | None,
        __.ddoc.Doc( ''' Called once the ensembles are connected, before
            the first message is read (such as to say so on the standard
            error stream; never the standard output). ''' ),
    ] = None,
) -> None:
    ''' Serves over stdin and stdout until the client closes them.

        Connects the ensembles first and disconnects them at the end. A
        line of the client may not exceed 4 MiB (the bound of a request's
        body over HTTP); a longer one, or one which is no JSON-RPC message
        (not UTF-8, not JSON, nested too deep, a batch), is answered with
        a JSON-RPC error, and serving goes on.
    '''
    mcp_server = server.produce_server( )
    async with (
        _ensembles.connect_ensembles( server.ensembles ),
        _servers.produce_watcher( server ),
        _stdio.produce_streams( ) as ( read, write ),
    ):
        if announce is not None: announce( )
        await mcp_server.run(
            read, write, mcp_server.create_initialization_options( ) )
