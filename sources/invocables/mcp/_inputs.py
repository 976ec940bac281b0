# SPDX-License-Identifier: Apache-2.0

''' Input which a server requires to complete a request (MCP 2026-07-28).

    Under MCP 2026-07-28 a server sends no request of its own during a
    call: it answers ``tools/call``, ``resources/read`` or ``prompts/get``
    with a result of type ``input_required``, whose ``inputRequests``
    (keyed) ask for elicitation, sampling or roots, maybe with a
    ``requestState``. The client answers each of them and sends the
    original request again, with a new JSON-RPC identifier, the answers
    under the same keys (``inputResponses``) and exactly the state it got
    (none if none was given), until the result is complete (SEP-2322).

    The SDK's ``ClientSession`` hands such a result over when asked to
    (``allow_input_required``), and answers an input request with the
    session's callbacks (``dispatch_input_request``), as it answers the
    requests of a server under 2025-11-25; its ``Client`` alone loops
    (with a private driver). The loop is here, with those public parts:
    the same elicitor, sampler and roots, the same relay to the caller of
    a call, the same redaction and sampling limits as under 2025-11-25.
    The requests of a round are answered concurrently, at most
    :py:data:`REQUESTS_MAXIMUM` of them; at most :py:data:`ROUNDS_MAXIMUM`
    rounds are made; the loop runs within the caller's timeout and is
    cancelled with the call.

    Every request here (under either version) raises its failures
    confined (:py:func:`confine`): a traceback of them shows no text of
    the server as the server gave it.
'''


import invocables.mcp.__ as __
import invocables.mcp.results as _results
import invocables.mcp._sdk as _sdk
import invocables.exceptions as _exceptions


REQUESTS_MAXIMUM = 64
''' Most input requests which one round may carry: each is put to the
    application's elicitor, sampler or roots (the SDK sets no bound). '''

ROUNDS_MAXIMUM = 10
''' Most rounds of input which one request may require (as the SDK's
    ``Client``). '''

_Send: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any, str | None ], __.cabc.Awaitable[ __.typx.Any ] ]
_Redact: __.typx.TypeAlias = __.cabc.Callable[ [ str ], str ]
_STATE_DELAY_INITIAL = 0.05 # seconds; a result with state alone
_STATE_DELAY_MAXIMUM = 0.25


def call_tool(
    session: __.typx.Any,
    name: str,
    arguments: dict[ str, __.typx.Any ],
    progress: __.typx.Any,
    redact: _Redact,
) -> __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ]:
    ''' Returns call of tool through session, which answers the input the
        server requires (MCP 2026-07-28); under 2025-11-25, the call of
        :py:func:`invocables.mcp._sdk.call_tool`, confined.
    '''
    if not _sdk.is_modern( session ):
        return confine(
            _sdk.call_tool( session, name, arguments, None, progress ),
            redact )

    def send( responses: __.typx.Any, state: str | None ) -> __.typx.Any:
        return session.call_tool(
            name, arguments, None, progress,
            input_responses = responses, request_state = state,
            allow_input_required = True )

    return resolve( session, send, f"tool {name!r}", redact )


async def get_prompt(
    session: __.typx.Any,
    name: str,
    arguments: dict[ str, str ] | None,
    redact: _Redact,
) -> __.typx.Any:
    ''' Returns prompt (``prompts/get``), answering the input the server
        requires (MCP 2026-07-28).
    '''
    if not _sdk.is_modern( session ):
        return await confine( session.get_prompt( name, arguments ), redact )

    def send( responses: __.typx.Any, state: str | None ) -> __.typx.Any:
        return session.get_prompt(
            name, arguments, input_responses = responses,
            request_state = state, allow_input_required = True )

    return await resolve( session, send, f"prompt {name!r}", redact )


async def read_resource(
    session: __.typx.Any, uri: str, redact: _Redact
) -> __.typx.Any:
    ''' Returns contents of resource (``resources/read``), answering the
        input the server requires (MCP 2026-07-28).
    '''
    if not _sdk.is_modern( session ):
        return await confine( session.read_resource( uri ), redact )

    def send( responses: __.typx.Any, state: str | None ) -> __.typx.Any:
        return session.read_resource(
            uri, input_responses = responses, request_state = state,
            allow_input_required = True )

    return await resolve(
        session, send, f"resource {redact( uri )!r}", redact )


async def resolve(
    session: __.typx.Any,
    send: _Send,
    subject: str,
    redact: _Redact,
    rounds: int = ROUNDS_MAXIMUM,
) -> __.typx.Any:
    ''' Returns complete result of request (sent by send, with answers
        and state), answering the input its server requires, round after
        round.

        Raises :py:class:`invocables.exceptions.InvocationRefusal` if the
        server requires input for more than rounds rounds, or if an input
        could not be given (the callback refused; the server cannot learn
        it under 2026-07-28), or if a result is out of shape with a long
        account of its faults (a shorter one raises as its stand-in: see
        :py:func:`confine`, as the SDK's errors).
    '''
    required = _sdk.types.InputRequiredResult
    count = 0
    delay = _STATE_DELAY_INITIAL
    result = await confine( send( None, None ), redact, subject )
    while isinstance( result, required ):
        count += 1
        if count > rounds:
            raise _exceptions.InvocationRefusal(
                f"The server required input for {subject} for more "
                f"than {rounds} rounds; the request was abandoned." )
        requests = result.input_requests
        if requests:
            delay = _STATE_DELAY_INITIAL
            responses = await answer_requests(
                session, requests, subject, redact )
        else: # state alone: the server is busy; wait a little
            await __.asyncio.sleep( delay )
            delay = min( delay * 2, _STATE_DELAY_MAXIMUM )
            responses = None
        result = await confine(
            send( responses, result.request_state ), redact, subject )
    return result


async def confine(
    awaitable: __.cabc.Awaitable[ __.typx.Any ],
    redact: _Redact,
    subject: str | None = None,
) -> __.typx.Any:
    ''' Returns result of request; raises its failure confined: the
        SDK's error, or a result out of shape (``ValueError``,
        ``RuntimeError``), as a stand-in which carries the server's text
        redacted (see :py:func:`invocables.mcp.results.produce_cause`),
        raised apart from the original, which is neither its cause nor
        its context; with subject, an account of faults which is long as
        a refusal (see :py:func:`resolve`); an exception of the library
        as it is.
    '''
    try: return await awaitable
    except ( _sdk.Error, ValueError, RuntimeError ) as exception:
        flaw = _produce_flaw( exception, subject, redact )
        if flaw is exception: raise
    raise flaw # apart from the handling: without context


async def answer_requests(
    session: __.typx.Any,
    requests: __.cabc.Mapping[ str, __.typx.Any ],
    subject: str,
    redact: _Redact,
) -> dict[ str, __.typx.Any ]:
    ''' Returns answers to input requests (SDK models), by key, each by
        the session's callbacks (concurrently, within the caller's
        context: a relay finds the caller of the call).

        Raises :py:class:`invocables.exceptions.InvocationRefusal` if an
        input could not be given, or if there are more than
        :py:data:`REQUESTS_MAXIMUM` requests (none is answered then).
    '''
    from mcp.client.session import ClientRequestContext
    if len( requests ) > REQUESTS_MAXIMUM:
        raise _exceptions.InvocationRefusal( redact(
            f"The server required {len( requests )} inputs at once for "
            f"{subject}, more than the {REQUESTS_MAXIMUM} which a round "
            "may ask; the request was abandoned." ) )
    answers: dict[ str, __.typx.Any ] = { }

    async def answer( key: str, request: __.typx.Any ) -> None:
        parameters = getattr( request, 'params', None )
        context = ClientRequestContext(
            session = session, request_id = key,
            meta = getattr( parameters, 'meta', None ) )
        answer = await session.dispatch_input_request( context, request )
        if isinstance( answer, _sdk.types.ErrorData ):
            raise _exceptions.InvocationRefusal( redact(
                f"The input which the server required for {subject} "
                f"could not be given: {answer.message}" ) )
        answers[ key ] = answer

    tasks = [
        __.asyncio.ensure_future( answer( key, request ) )
        for key, request in requests.items( ) ]
    try: await __.asyncio.gather( *tasks )
    except BaseException: # the first failure, or cancellation: end all
        for task in tasks: task.cancel( )
        await __.asyncio.gather( *tasks, return_exceptions = True )
        raise
    return answers


def produce_requests(
    requests: __.cabc.Mapping[ str, __.typx.Any ],
    subject: str,
    redact: _Redact,
) -> dict[ str, __.typx.Any ]:
    ''' Returns input requests (SDK models) out of their wire shapes, by
        key (as a task of the tasks extension carries them).

        Raises ``ValueError`` if they are out of shape, or
        :py:class:`invocables.exceptions.InvocationRefusal` with a long
        account of their faults.
    '''
    if not requests: return { }
    try:
        result = _sdk.types.InputRequiredResult.model_validate(
            { 'resultType': 'input_required',
              'inputRequests': dict( requests ) }, by_name = False )
    except ValueError as exception:
        flaw = _produce_flaw( exception, subject, redact )
    else: return dict( result.input_requests or { } )
    raise flaw # apart from the handling: without context


def _produce_flaw(
    exception: Exception, subject: str | None, redact: _Redact
) -> BaseException:
    ''' Returns the exception of the library as it is; else its stand-in
        (see :py:func:`invocables.mcp.results.produce_cause`), or, for a
        server's result out of shape whose account is long (pydantic's
        lists every fault: thousands, for thousands of requests), a
        refusal with it redacted, then abbreviated (no bound cuts a
        secret), whose cause is the stand-in: if subject is given.
    '''
    cause = _results.produce_cause( exception, redact )
    if subject is None or cause is exception or not isinstance(
        exception, ValueError
    ): return cause
    text = str( cause )
    if len( text ) <= _results.EXCERPT_LENGTH_MAXIMUM: return cause
    refusal = _exceptions.InvocationRefusal(
        f"The server returned a result for {subject} which is not a valid "
        f"MCP result: {_results.produce_excerpt( text )}" )
    refusal.__cause__ = cause
    return refusal
