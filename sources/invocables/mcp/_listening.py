# SPDX-License-Identifier: Apache-2.0

''' What a server of MCP 2026-07-28 announces, heard as before.

    From MCP 2026-07-28 a server sends its changes (tools, prompts and
    resources listed anew) only on the streams which its client opens with
    ``subscriptions/listen`` (SEP-2575). A session of that version keeps
    such a stream open for every change which the server's capabilities
    say it announces. The SDK gives each change on the stream to the
    session's handler, as the notification of earlier versions
    (``notifications/tools/list_changed`` ...): tools are listed again and
    gateways tell their own clients, whatever the version. A stream which
    ends, or which the server could not open (too many streams, say), is
    opened again after a pause, which doubles after each stream which
    ended early, whatever it carried (a server which ends each stream at
    once, after one change, is not heard more often); a server which
    refuses the request (it knows no such method, or finds it invalid) is
    not asked again.
'''


import invocables.mcp.__ as __
from ._sdk import Error as _MCPError


PAUSE_INITIAL = 1.0
''' Seconds before a stream which ended is opened again; doubled after
    each stream which ended early, up to :py:data:`PAUSE_MAXIMUM`. '''
PAUSE_MAXIMUM = 60.0
STEADY_MINIMUM = 60.0
''' Seconds a stream stays open not to have ended early: the pause after
    it is :py:data:`PAUSE_INITIAL` again. '''

# Errors which say that the server will never serve the stream.
_REFUSALS = frozenset( ( -32600, -32601, -32602 ) )

_scribe = __.produce_scribe( __name__ )


async def listen_changes(
    session: __.typx.Any,
    name: str,
    pauses: tuple[ float, float ] | None = None,
) -> None:
    ''' Keeps a stream of the changes which the server of a session of
        MCP 2026-07-28 announces open, until cancelled. Returns at once if
        the server announces none, or when it refuses to be listened to.
        Pauses: the first and the longest (default:
        :py:data:`PAUSE_INITIAL` and :py:data:`PAUSE_MAXIMUM`).
    '''
    tools, prompts, resources = _select_changes( session.server_capabilities )
    if not ( tools or prompts or resources ): return
    from mcp.client.subscriptions import listen
    initial, maximum = pauses or ( PAUSE_INITIAL, PAUSE_MAXIMUM )
    pause = initial
    while True:
        opened = __.time.monotonic( )
        try:
            async with listen(
                session, tools_list_changed = tools,
                prompts_list_changed = prompts,
                resources_list_changed = resources,
            ) as subscription:
                _scribe.debug(
                    "Listening to the changes of MCP server %r.", name )
                async for _ in subscription: pass
        except _MCPError as exception:
            if exception.error.code in _REFUSALS:
                _scribe.info(
                    "MCP server %r refused to be listened to (%s); its "
                    "changes are not heard.", name, exception )
                return
            _scribe.debug( # busy, perhaps (too many streams): again
                "MCP server %r did not open a stream of changes: %s.",
                name, exception )
        except Exception as exception: # a stream lost: listen again
            _scribe.debug(
                "Stream of changes of MCP server %r ended: %s.",
                name, type( exception ).__name__ )
        if __.time.monotonic( ) - opened >= STEADY_MINIMUM: pause = initial
        _scribe.debug(
            "Listening to the changes of MCP server %r again in %s "
            "seconds.", name, pause )
        await __.asyncio.sleep( pause )
        pause = min( pause * 2, maximum )


def _select_changes(
    capabilities: __.typx.Any
) -> tuple[ bool, bool, bool ]:
    ''' Returns whether the server announces changes of its tools, its
        prompts and its resources: those to listen for. '''
    def is_changing( feature: str ) -> bool:
        value = getattr( capabilities, feature, None )
        return getattr( value, 'list_changed', None ) is True
    return (
        is_changing( 'tools' ), is_changing( 'prompts' ),
        is_changing( 'resources' ) )
