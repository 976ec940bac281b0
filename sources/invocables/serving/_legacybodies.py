# SPDX-License-Identifier: Apache-2.0

''' Bodies of requests to the streamable HTTP of the ``mcp`` SDK 1.x.

    The 1.x transport parses a body with ``json.loads`` and takes only its
    ``JSONDecodeError`` for a parse error: a body nested too deep
    (``RecursionError``) or not UTF-8 (``UnicodeDecodeError``) got ``500``
    and an error in the log, where the 2.x transport answers ``400``
    (``-32700``, parse error). :py:func:`verify_body` answers those as 2.x
    does, before the transport reads them.
'''


import json as _json

import invocables.serving.__ as __


_PARSE_ERROR = -32700
_BAD_REQUEST = 400
# The transport's own bound (mcp.server.transport_security); a body beyond
# it is handed on unread, for the transport to refuse (413).
_SIZE_MAXIMUM = 4 * 1024 * 1024


async def verify_body(
    scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any
) -> __.typx.Any:
    ''' Reads body of a request, up to the transport's bound; answers a
        body nested too deep or not UTF-8 (400, parse error) and returns
        ``None``. Else returns a receive which gives the body again.
    '''
    messages: list[ dict[ str, __.typx.Any ] ] = [ ]
    size = 0
    whole = False
    while size <= _SIZE_MAXIMUM:
        message = await receive( )
        messages.append( message )
        if message[ 'type' ] != 'http.request': break
        size += len( message.get( 'body' ) or b'' )
        if not message.get( 'more_body', False ):
            whole = True
            break
    if whole and size <= _SIZE_MAXIMUM:
        body = b''.join(
            message.get( 'body' ) or b'' for message in messages )
        reason = _diagnose( body )
        if reason is not None:
            await _answer( scope, receive, send, reason )
            return None

    async def receive_again( ) -> dict[ str, __.typx.Any ]:
        if messages: return messages.pop( 0 )
        return await receive( )

    return receive_again


async def _answer(
    scope: __.typx.Any, receive: __.typx.Any, send: __.typx.Any, reason: str
) -> None:
    ''' Answers a parse error, as the 2.x transport does. '''
    from starlette.responses import JSONResponse
    response = JSONResponse( {
        'jsonrpc': '2.0', 'id': None, 'error': {
            'code': _PARSE_ERROR, 'message': f"Parse error: {reason}" } },
        status_code = _BAD_REQUEST )
    await response( scope, receive, send )


def _diagnose( body: bytes ) -> str | None:
    ''' Returns why body cannot be parsed, if the 1.x transport would
        fail on it other than with a parse error; else ``None``.
    '''
    try: _json.loads( body )
    except RecursionError: return "nested too deep."
    except UnicodeDecodeError: return "not UTF-8."
    except ValueError: return None # the transport's parse error
    return None
