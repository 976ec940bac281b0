# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: tools named as real tool sets name them.

    Dotted names (as in the Berkeley Function Calling Leaderboard), an
    OpenAPI operation (``get /users/{id}``), and the longest name which
    MCP allows (128 characters).
'''


from mcp.server.mcpserver import MCPServer


LONG_NAME = 'api.v1.' + 'x' * 117 + '.get' # 128 characters


server = MCPServer( 'named' )


@server.tool( name = 'math.sum', structured_output = False )
def add( a: int, b: int ) -> str:
    ''' Adds two integers. '''
    return f"server sum {a + b}"


@server.tool( name = 'get /users/{id}', structured_output = False )
def get_user( identifier: str ) -> str:
    ''' Returns a user. '''
    return f"server user {identifier}"


@server.tool( name = LONG_NAME, structured_output = False )
def long_named( ) -> str:
    ''' Has the longest name allowed. '''
    return 'server long'


if __name__ == '__main__': server.run( )
