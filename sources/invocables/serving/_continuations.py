# SPDX-License-Identifier: Apache-2.0

''' Calls which ask their client for input under MCP 2026-07-28: multi
    round trip requests (SEP-2322).

    A server of MCP 2026-07-28 sends its client no request: a call which
    needs the client's input (elicitation, sampling, roots) is answered
    with a result ``input_required`` which holds the requests
    (``inputRequests``, by key) and a state (``requestState``); the client
    answers them and sends the call again, with its answers
    (``inputResponses``) and the state.

    A served tool asks as ever, awaiting ``context.elicit( ... )``: its
    call runs as an asyncio task, which stays suspended at its request
    while the client answers. The call waits, a :py:class:`Continuation`,
    under an identifier which the state carries; the ``mcp`` SDK's
    boundary (``RequestStateBoundary``, AES-GCM under a key of the
    process) seals the state against tampering and binds it to the tool
    and its arguments. The answers of the client resume the call, which
    either ends (its result goes to the client) or asks again (a new
    round, a new state). A state is good for one round only.

    Continuations are bounded: at most ``maximum`` wait at once (another
    call which asks gets an error), and each waits ``duration`` seconds at
    most for the client's next round (a round whose answers are refused,
    or which answers nothing, keeps its deadline): then its call is
    cancelled and forgotten.
    Answers given before their requests serve those of the first round
    only; the others are forgotten. They live in the memory of the
    process which started them: under stateless HTTP with several
    workers, a client's next round must come to the same worker, or it
    gets the error of an expired state.
'''


import itertools as _itertools
import secrets as _secrets

import invocables.serving.__ as __
import invocables.serving._liaisons as _liaisons
import invocables.serving._taskinputs as _taskinputs
from ..mcp._sdk import produce_error as _produce_error
from ..mcp._sdk import types as _mcp_types


DURATION_DEFAULT = 300.0
''' Seconds a call waits for its client's next round, by default. '''
MAXIMUM_DEFAULT = 100
''' Calls which wait for their client at once, by default. '''
BUSY = -32050
''' Error of a call refused because the most calls wait already: serve's
    own code, of JSON-RPC's range for servers (neither JSON-RPC nor MCP
    names a busy server). The condition passes: a client may try again.
'''

_MISSING_CAPABILITY = -32021 # MissingRequiredClientCapability
_SETTLE_ROUNDS = 8 # loop turns which gather the requests of one round
_STATE_INVALID = "Invalid or expired requestState"


class Continuation:
    ''' A call which runs, suspended at the requests for input it made
        while its client answers them.
    '''

    def __init__(
        self, answers: __.cabc.Mapping[ str, __.typx.Any ] | None = None
    ):
        # Answers which came before their request: a first round may
        # carry them (the keys the tool chooses), for its requests only.
        self.answers: dict[ str, __.typx.Any ] = dict( answers or { } )
        self.requests: dict[
            str, tuple[ __.typx.Any, __.asyncio.Future[ __.typx.Any ] ]
        ] = { }
        self.asked = __.asyncio.Event( )
        self.counter = _itertools.count( 1 )
        self.round = 0
        self.task: __.asyncio.Task[ __.typx.Any ] | None = None
        self.liaison: InputLiaison | None = None
        # A request refused for a capability which the client lacks.
        self.refusal: BaseException | None = None
        self.timer: __.asyncio.TimerHandle | None = None
        self.deadline = 0.0 # loop time of the end of the client's round

    async def ask(
        self, key: str | None, request: __.typx.Any
    ) -> __.typx.Any:
        ''' Returns the client's answer to request (an MCP input request),
            under key (chosen here if none, or taken). An answer given
            before its request, not of its kind, is refused (the error of
            invalid parameters, which the call's client then gets).
        '''
        if key is not None and key in self.answers:
            answer = self.answers.pop( key )
            try: return _validate_response( key, request, answer )
            except BaseException as exception:
                self.refusal = exception
                raise
        if key is None or key in self.requests:
            key = "{kind}-{number}".format(
                kind = request.method.split( '/' )[ 0 ],
                number = next( self.counter ) )
        future = __.asyncio.get_running_loop( ).create_future( )
        self.requests[ key ] = ( request, future )
        self.asked.set( )
        try: return await future
        finally: self.requests.pop( key, None )

    def answer(
        self, responses: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> int:
        ''' Answers the requests which wait, with the responses of their
            keys; ignores the others. Returns how many it answered. Raises
            an error of invalid parameters if a response is not of its
            request's kind.
        '''
        validated = [
            ( future, _validate_response( key, request, responses[ key ] ) )
            for key, ( request, future ) in self.requests.items( )
            if key in responses and not future.done( ) ]
        for future, response in validated: future.set_result( response )
        return len( validated )

    def survey_requests( self ) -> dict[ str, __.typx.Any ]:
        ''' Returns the requests which wait for an answer, by key. '''
        return {
            key: request for key, ( request, future )
            in self.requests.items( ) if not future.done( ) }

    async def proceed( self, *, patient: bool = True ) -> bool:
        ''' Runs the call until it ends (returns true) or waits for
            requests (false). Impatient, for a few turns of the loop only.
        '''
        task = self.task
        assert task is not None
        while True:
            if task.done( ): return True
            if self.survey_requests( ) or not patient:
                for _ in range( _SETTLE_ROUNDS ): await __.asyncio.sleep( 0 )
                return task.done( )
            await _taskinputs.await_signal( task, self.asked )


class ContinuationsManager:
    ''' The calls which wait for their clients' input, by identifier. '''

    def __init__(
        self,
        maximum: int = MAXIMUM_DEFAULT,
        duration: float = DURATION_DEFAULT,
    ):
        self.maximum = maximum
        self.duration = duration
        self.continuations: dict[ str, Continuation ] = { }

    async def invoke(
        self,
        parameters: __.typx.Any,
        liaison: 'InputLiaison',
        call: __.cabc.Callable[
            [ _liaisons.SessionLiaison ],
            __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ] ],
        escalate: __.cabc.Callable[
            [ Continuation ], __.cabc.Awaitable[ __.typx.Any ] ]
        | None = None,
    ) -> __.typx.Any:
        ''' Runs a call whose liaison asks its client by input requests;
            returns its result, or the requests it waits for.

            A call sent again with a state resumes the call which waits
            under it, with the answers; an unknown, spent or expired
            state is an error (invalid parameters). With escalate, a call
            which does not ask at once (in a few turns of the loop) is
            escalated (made a task, whose answer is returned), rather than
            awaited.
        '''
        state = getattr( parameters, 'request_state', None )
        responses: __.cabc.Mapping[ str, __.typx.Any ] = (
            getattr( parameters, 'input_responses', None ) or { } )
        if state is None:
            continuation = Continuation( responses )
            continuation.liaison = liaison
            liaison.continuation = continuation
            continuation.task = __.asyncio.get_running_loop( ).create_task(
                call( liaison ) )
            identifier = _secrets.token_hex( 16 )
            answered = 1 # a first round sets the deadline
        else:
            identifier, continuation = self._resume( state, liaison )
            try: answered = continuation.answer( responses )
            except BaseException: # the same round again, its state good
                self._suspend( identifier, continuation, advance = False )
                raise
        try:
            ended = await continuation.proceed( patient = escalate is None )
            continuation.answers.clear( ) # those of keys never asked
            if escalate is not None and not continuation.survey_requests( ):
                return await escalate( continuation )
        except BaseException:
            self._cancel( continuation )
            raise
        if ended: return _conclude( continuation )
        if state is None and len( self.continuations ) >= self.maximum:
            self._cancel( continuation )
            raise _produce_error(
                BUSY,
                "Too many calls wait for their clients' input (at most "
                f"{self.maximum}); the server is busy: try again later.",
                { 'reason': 'busy', 'maximum': self.maximum } )
        # A round which answers nothing keeps its deadline.
        self._suspend( identifier, continuation, renew = answered > 0 )
        return _mcp_types.InputRequiredResult(
            input_requests = continuation.survey_requests( ),
            request_state = f"{identifier}.{continuation.round}" )

    def release( self ) -> None:
        ''' Cancels every call which waits. '''
        for identifier in tuple( self.continuations ):
            self._expire( identifier )

    def _cancel( self, continuation: Continuation ) -> None:
        if continuation.timer is not None: continuation.timer.cancel( )
        if continuation.task is not None: continuation.task.cancel( )

    def _expire( self, identifier: str ) -> None:
        continuation = self.continuations.pop( identifier, None )
        if continuation is not None: self._cancel( continuation )

    def _resume(
        self, state: str, liaison: 'InputLiaison'
    ) -> tuple[ str, Continuation ]:
        identifier, _, round_ = state.partition( '.' )
        continuation = self.continuations.get( identifier )
        if continuation is None or str( continuation.round ) != round_:
            raise _produce_error(
                _mcp_types.INVALID_PARAMS, _STATE_INVALID )
        del self.continuations[ identifier ]
        if continuation.timer is not None: continuation.timer.cancel( )
        # The liaison of the call answers on the stream of this round.
        if continuation.liaison is not None:
            continuation.liaison.context = liaison.context
        return identifier, continuation

    def _suspend(
        self,
        identifier: str,
        continuation: Continuation,
        *,
        advance: bool = True,
        renew: bool = True,
    ) -> None:
        # The same round again (its answers refused) keeps its deadline.
        loop = __.asyncio.get_running_loop( )
        if advance: continuation.round += 1
        if advance and renew:
            continuation.deadline = loop.time( ) + self.duration
        continuation.timer = loop.call_at(
            continuation.deadline, self._expire, identifier )
        self.continuations[ identifier ] = continuation


class InputLiaison( _liaisons.SessionLiaison ):
    ''' Answers a local tool's requests by the input requests of MCP
        2026-07-28, in the result of its call, which its client answers
        in its next round. Requests of kinds which the client did not
        declare are refused.
    '''

    continuation: Continuation | None = None

    async def elicit(
        self,
        message: str,
        schema: __.cabc.Mapping[ str, __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Asks ``elicitation/create`` (form); returns the answer. '''
        self._verify_capability( 'elicitation' )
        request = _mcp_types.ElicitRequest(
            method = 'elicitation/create',
            params = _mcp_types.ElicitRequestFormParams(
                message = message,
                requested_schema = __.values.thaw_json( schema ) ) )
        return await self._ask( options.get( 'key' ), request )

    async def elicit_url(
        self, message: str, url: str, identifier: str
    ) -> __.typx.Any:
        ''' Asks ``elicitation/create`` of mode ``url``; returns the
            answer.
        '''
        self._verify_capability( 'elicitation', 'url' )
        request = _mcp_types.ElicitRequest(
            method = 'elicitation/create',
            params = _mcp_types.ElicitRequestURLParams(
                message = message, url = url, elicitation_id = identifier ) )
        return _liaisons.note_visit(
            self.note_visit, identifier, await self._ask( None, request ) )

    async def sample(
        self, messages: __.cabc.Sequence[ __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Asks ``sampling/createMessage``; returns the answer. '''
        self._verify_capability( 'sampling' )
        key = options.pop( 'key', None )
        samples, options = _liaisons.produce_sampling( messages, options )
        request = _mcp_types.CreateMessageRequest(
            method = 'sampling/createMessage',
            params = _mcp_types.CreateMessageRequestParams(
                messages = samples, **options ) )
        return await self._ask( key, request )

    async def survey_roots( self, **options: __.typx.Any ) -> __.typx.Any:
        ''' Asks ``roots/list``; returns the answer. '''
        self._verify_capability( 'roots' )
        request = _mcp_types.ListRootsRequest( method = 'roots/list' )
        return await self._ask( options.get( 'key' ), request )

    async def _ask(
        self, key: str | None, request: __.typx.Any
    ) -> __.typx.Any:
        continuation = self.continuation
        if continuation is None:
            raise _produce_error(
                _mcp_types.INTERNAL_ERROR, "No call to continue." )
        return await continuation.ask( key, request )

    def _verify_capability(
        self, kind: str, mode: str | None = None
    ) -> None:
        capabilities = getattr(
            self.context.session, 'client_capabilities', None )
        capability = getattr( capabilities, kind, None )
        if capability is not None and mode is not None:
            capability = getattr( capability, mode, None )
        if capability is not None: return
        error = _produce_error(
            _MISSING_CAPABILITY,
            f"The client does not support {kind}"
            + ( f" of mode {mode!r}." if mode else "." ),
            { 'requiredCapabilities': {
                kind: { mode: { } } if mode else { } } } )
        if self.continuation is not None:
            self.continuation.refusal = error
        raise error


class TaskInputLiaison( InputLiaison, _liaisons.TaskLiaison ):
    ''' Answers the requests of a tool run as a task of MCP 2026-07-28 by
        input requests which the task holds (its status
        ``input_required``, on ``tasks/get``), which the client answers
        by ``tasks/update``. Logging and progress as a task's.
    '''


def answer_wire(
    continuation: Continuation | None, parameters: __.typx.Any
) -> None:
    ''' Answers the requests of a continuation with the responses of
        request parameters (JSON, ``inputResponses``), if any. Raises an
        error of invalid parameters if they are not an object.
    '''
    if not isinstance( parameters, __.cabc.Mapping ): return
    entries = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], parameters )
    responses: __.typx.Any = entries.get( 'inputResponses' )
    if responses is not None and not isinstance(
        responses, __.cabc.Mapping
    ):
        raise _produce_error(
            _mcp_types.INVALID_PARAMS,
            "The input responses must be an object, by key." )
    if continuation is None or responses is None: return
    continuation.answer(
        __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], responses ) )


def produce_requests_wire(
    continuation: Continuation | None
) -> dict[ str, __.typx.Any ]:
    ''' Returns the requests which wait for an answer, as JSON, by key. '''
    if continuation is None: return { }
    return {
        key: request.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
        for key, request in continuation.survey_requests( ).items( ) }


_RESPONSES = __.types.MappingProxyType( {
    'elicitation/create': ( _mcp_types.ElicitResult, ),
    'sampling/createMessage': (
        _mcp_types.CreateMessageResult,
        _mcp_types.CreateMessageResultWithTools ),
    'roots/list': ( _mcp_types.ListRootsResult, ),
} )


def _conclude( continuation: Continuation ) -> __.typx.Any:
    ''' Returns the result of an ended call; raises the refusal of a
        request for a capability which the client lacks, if the call
        failed (rather than do without).
    '''
    task = continuation.task
    assert task is not None
    result = task.result( )
    refusal = continuation.refusal
    if refusal is not None and getattr( result, 'is_error', False ):
        raise refusal
    return result


def _validate_response(
    key: str, request: __.typx.Any, response: __.typx.Any
) -> __.typx.Any:
    ''' Returns response as the result of request's kind, or raises an
        error of invalid parameters; so too if it accepts an elicitation
        with content which breaks the requested schema.
    '''
    models = _RESPONSES[ request.method ]
    if not isinstance( response, models ):
        response = _convert_response( key, request, response )
    return _liaisons.validate_elicitation(
        getattr( request.params, 'requested_schema', None ), response,
        f"The input response {key!r}" )


def _convert_response(
    key: str, request: __.typx.Any, response: __.typx.Any
) -> __.typx.Any:
    ''' Returns response (JSON, or another model) as the result of
        request's kind, or raises an error of invalid parameters.
    '''
    data = (
        response.model_dump( by_alias = True, exclude_none = True )
        if hasattr( response, 'model_dump' ) else response )
    for model in _RESPONSES[ request.method ]:
        with __.ctxl.suppress( ValueError ):
            return model.model_validate( data )
    raise _produce_error(
        _mcp_types.INVALID_PARAMS,
        f"The input response {key!r} does not answer {request.method}." )
