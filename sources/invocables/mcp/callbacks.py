# SPDX-License-Identifier: Apache-2.0

''' Requests of servers to the client: elicitation, sampling, roots, logs.

    A server may ask the application for input (elicitation), ask its model
    for a completion (sampling), ask which directories it may work in
    (roots), and send log messages. Each is served by what the application
    gave to ``produce_ensemble``: an ``elicitor``, a ``sampler``, ``roots``;
    log messages go to the Python logger ``invocables.mcp.servers.<name>``.
    Without an elicitor or a sampler, the server is told that the client
    does not support them (and the capability is not advertised).

    An elicitor or a sampler may be a coroutine function or a plain one; it
    returns the library's record (``ElicitationResponse``,
    ``SamplingResponse``), the MCP wire shape as a mapping, or the SDK's
    result (``mcp.types.ElicitResult``, ``mcp.types.CreateMessageResult``),
    converted once into the record. Any other answer is logged (on
    ``invocables.mcp.callbacks``, naming the shapes expected and the type
    received) and the server gets an error naming only its class. The
    records and the conversion of answers are in
    :py:mod:`invocables.mcp.exchanges` (and importable from here).
'''


import os as _os
import weakref as _weakref

from urllib.parse import quote as _quote

import anyio as _anyio

import invocables.mcp.__ as __
import invocables.mcp.exchanges as _exchanges
import invocables.mcp.redaction as _redaction
import invocables.mcp._sdk as _sdk
from ._sdk import types as _mcp_types
import invocables.exceptions as _exceptions
from .exchanges import (
    SAMPLING_REQUESTS_DEFAULT as SAMPLING_REQUESTS_DEFAULT,
    SAMPLING_TOKENS_DEFAULT as SAMPLING_TOKENS_DEFAULT,
    ElicitationActions as ElicitationActions,
    ElicitationAnswer as ElicitationAnswer,
    ElicitationRequest as ElicitationRequest,
    ElicitationResponse as ElicitationResponse,
    Elicitor as Elicitor,
    LoggingLevels as LoggingLevels,
    Root as Root,
    Sampler as Sampler,
    SamplingAnswer as SamplingAnswer,
    SamplingLimits as SamplingLimits,
    SamplingMessage as SamplingMessage,
    SamplingRequest as SamplingRequest,
    SamplingResponse as SamplingResponse,
    produce_elicitation_response as produce_elicitation_response,
    produce_sampling_response as produce_sampling_response,
)


LOGGER_PREFIX = 'invocables.mcp.servers'

_LEVELS = __.types.MappingProxyType( {
    'debug': __.logging.DEBUG, 'info': __.logging.INFO,
    'notice': __.logging.INFO + 5, 'warning': __.logging.WARNING,
    'error': __.logging.ERROR, 'critical': __.logging.CRITICAL,
    'alert': __.logging.CRITICAL + 5, 'emergency': __.logging.CRITICAL + 10,
} )
_scribe = __.produce_scribe( __name__ )

_AnswerT = __.typx.TypeVar( '_AnswerT' )

SamplingGate: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any, object ], _mcp_types.ErrorData | None ]
''' Counts a sampling request (its parameters) of a session, or of the
    call it is relayed to (the call's caller, or None); returns the error
    for the server if the request is beyond the limits. '''


class SessionArguments( dict[ str, __.typx.Any ] ):
    ''' Keyword arguments of the SDK's ``ClientSession``, and the hand
        over of the gate of the session's sampling requests
        (``delegate_admission``): a relay, which answers every sampling
        request of the session, applies the limits itself, once a request.
    '''

    def __init__(
        self, delegate_admission: __.cabc.Callable[ [ ], SamplingGate ]
    ):
        super( ).__init__( )
        self.delegate_admission = delegate_admission


class Features:
    ''' What the client offers one server: callbacks, roots, log level.

        Mutable: roots change at run time (``configure_roots``); the count
        of sampling requests restarts with each connection.
    '''

    def __init__(
        self,
        ensemble: str,
        *,
        elicitor: __.Absential[ Elicitor ] = __.absent,
        sampler: __.Absential[ Sampler ] = __.absent,
        sampling_limits: __.Absential[ SamplingLimits ] = __.absent,
        roots: __.Absential[ __.cabc.Iterable[ Root ] ] = __.absent,
        log_level: __.Absential[ LoggingLevels ] = __.absent,
        authorization: __.typx.Any = __.absent,
        authorization_timeout: float | None = None, # expose
    ):
        for label, callback in (
            ( 'elicitor', elicitor ), ( 'sampler', sampler ),
        ):
            if __.is_absent( callback ) or callable( callback ): continue
            raise _exceptions.ConfigurationInvalidity(
                f"MCP ensemble {ensemble!r} {label!r}",
                "must be a function (async or plain) which takes the "
                "request and returns the answer, not "
                f"{type( callback ).__name__}." )
        self.ensemble = ensemble
        self.elicitor = elicitor
        self.sampler = sampler
        self.sampling_limits = (
            SamplingLimits( ) if __.is_absent( sampling_limits )
            else sampling_limits )
        self.roots: __.Absential[ tuple[ str, ... ] ] = (
            __.absent if __.is_absent( roots )
            else produce_root_uris(
                roots, f"MCP ensemble {ensemble!r} 'roots'" ) )
        self.log_level = log_level
        self.authorization = authorization
        # expose: seconds allowed to each request of an OAuth flow.
        self.authorization_timeout = authorization_timeout
        self.auth: __.typx.Any = None
        self.deadline: _anyio.CancelScope | None = None # while connecting
        self.samplings = 0
        # Relayed requests count per call: one upstream session of a
        # gateway serves every client for as long as it runs.
        self.samplings_relayed: _weakref.WeakKeyDictionary[
            object, int ] = _weakref.WeakKeyDictionary( )
        self.admitting = True # False: a relay admits sampling requests
        self.redactor = _redaction.Redactor( )
        self.scribe = __.logging.getLogger( f"{LOGGER_PREFIX}.{ensemble}" )

    def produce_session_arguments(
        self, redactor: _redaction.Redactor
    ) -> SessionArguments:
        ''' Returns keyword arguments of the SDK's ``ClientSession``.

            Passing a callback advertises its capability to the server; the
            logging callback is always given.
        '''
        self.redactor = redactor
        self.samplings = 0
        self.admitting = True
        arguments = SessionArguments( self.delegate_admission )
        arguments[ 'logging_callback' ] = self._receive_log
        if not __.is_absent( self.elicitor ):
            arguments[ 'elicitation_callback' ] = self._elicit
        if not __.is_absent( self.sampler ):
            arguments[ 'sampling_callback' ] = self._sample
        if not __.is_absent( self.roots ):
            arguments[ 'list_roots_callback' ] = self._list_roots
        return arguments

    def produce_auth( self, url: str ) -> __.typx.Any:
        ''' Returns ``httpx2.Auth`` for an HTTP transport, or None.

            The same one serves every connection of the ensemble, so that
            tokens obtained once are reused after a reconnection.
        '''
        if __.is_absent( self.authorization ): return None
        if self.auth is None:
            import invocables.mcp.authorization as _authorization
            self.auth = _authorization.produce_auth(
                self.ensemble, self.authorization, url,
                timeout = self.authorization_timeout, # expose
                suspension = self.suspend_deadline )
        return self.auth

    def is_interactive( self ) -> bool:
        ''' Whether connecting may wait for a user (the code grant). '''
        if __.is_absent( self.authorization ): return False
        import invocables.mcp.authorization as _authorization
        return isinstance(
            self.authorization, _authorization.CodeAuthorization )

    @__.ctxl.contextmanager
    def suspend_deadline( self ) -> __.cabc.Generator[ None, None, None ]:
        ''' Stops the connect deadline while the user authorizes.

            A user needs more than a connect timeout to log in; the
            handlers of the code grant bound their own wait.
        '''
        scope = self.deadline
        if scope is None:
            yield
            return
        remainder = max( scope.deadline - _anyio.current_time( ), 0.0 )
        scope.deadline = __.math.inf
        try: yield
        finally: scope.deadline = _anyio.current_time( ) + remainder

    def explain_failure(
        self,
        exceptions: __.cabc.Sequence[ BaseException ],
        primary: BaseException,
    ) -> BaseException:
        ''' Returns authorization failure for a session which ended while
            an OAuth request was unanswered (expose); else primary.
        '''
        if getattr( self.auth, 'stalled', None ) is None: return primary
        import invocables.mcp.authorization as _authorization
        return _authorization.explain_failure(
            self.ensemble, self.auth, exceptions ) or primary

    async def prepare_session( self, session: __.typx.Any ) -> None:
        ''' Asks server for the chosen log level, if it offers logging. '''
        if __.is_absent( self.log_level ): return
        capabilities = access_server_capabilities( session )
        if capabilities is None or capabilities.logging is None:
            _scribe.info(
                "MCP server %r offers no logging; its level is not set.",
                self.ensemble )
            return
        await set_logging_level(
            session, __.typx.cast( LoggingLevels, self.log_level ) )

    def admit_sampling(
        self, params: __.typx.Any, caller: object = None
    ) -> _mcp_types.ErrorData | None:
        ''' Counts a sampling request of the session, or of the call it is
            relayed to (caller), whoever answers it; returns the error for
            the server instead if the request is beyond the limits.
        '''
        count = (
            self.samplings if caller is None
            else self.samplings_relayed.get( caller, 0 ) )
        refusal = self._check_sampling( params, count )
        if refusal is not None:
            _scribe.warning(
                "MCP ensemble %r: sampling request refused: %s",
                self.ensemble, refusal )
            return _produce_error( refusal )
        if caller is None: self.samplings += 1
        else: self.samplings_relayed[ caller ] = count + 1
        return None

    def delegate_admission( self ) -> SamplingGate:
        ''' Returns the gate of the session's sampling requests, which
            the caller applies from now on to every request (a relay); the
            ensemble's own sampler applies it no more.
        '''
        self.admitting = False
        return self.admit_sampling

    async def _elicit(
        self, context: __.typx.Any, params: __.typx.Any
    ) -> __.typx.Any:
        url = getattr( params, 'url', None )
        identifier = _sdk.access_field( params, 'elicitation_id', None )
        schema: dict[ str, __.typx.Any ] = (
            _sdk.access_field( params, 'requested_schema', None ) or { } )
        if _exchanges.is_schema_deep( schema ):
            return produce_depth_refusal( self.ensemble )
        redactor = self.redactor
        request = ElicitationRequest(
            ensemble = self.ensemble,
            message = redactor.redact( params.message ),
            schema = __.types.MappingProxyType(
                redactor.redact_data( dict( schema ) ) ),
            url = __.absent if url is None else redactor.redact_link( url ),
            # Under a relay, a stand-in already if it held a secret.
            identifier = (
                __.absent if identifier is None
                else redactor.redact( identifier ) ) )
        response = await self._consult(
            'elicitor', 'elicit input', request, produce_elicitation_response )
        if isinstance( response, _mcp_types.ErrorData ): return response
        return produce_elicit_result(
            self.ensemble, schema, response, url = url is not None )

    async def _consult(
        self,
        callback: str,
        action: str,
        request: object,
        produce: __.cabc.Callable[ [ object ], _AnswerT ],
    ) -> _AnswerT | _mcp_types.ErrorData:
        ''' Returns the answer of an application's callback as a record;
            an error for the server if the callback raises or answers
            amiss (logged in full; the server learns only the class).
        '''
        try: answer = await _await_answer( getattr( self, callback ), request )
        except Exception as exception:
            _scribe.exception(
                "%s of MCP ensemble %r raised.",
                callback.capitalize( ), self.ensemble )
            return _produce_error(
                f"The client failed to {action}: "
                f"{type( exception ).__name__}.", internal = True )
        try: return produce( answer )
        except _exceptions.CallbackAnswerInvalidity as exception:
            _scribe.error( "MCP ensemble %r: %s", self.ensemble, exception )
            return _produce_error(
                f"The client's {callback} returned an invalid answer "
                f"({type( answer ).__name__}).", internal = True )

    async def _list_roots( self, context: __.typx.Any ) -> __.typx.Any:
        roots = __.typx.cast( tuple[ str, ... ], self.roots )
        return _mcp_types.ListRootsResult( roots = [
            _mcp_types.Root( uri = __.typx.cast( __.typx.Any, uri ) )
            for uri in roots ] )

    async def _receive_log( self, params: __.typx.Any ) -> None:
        level = _LEVELS.get( str( params.level ), __.logging.INFO )
        if not self.scribe.isEnabledFor( level ): return
        data = params.data
        text = data if isinstance( data, str ) else __.json.dumps(
            data, default = str )
        origin = '' if params.logger is None else f"[{params.logger}] "
        self.scribe.log(
            level, "%s%s", self.redactor.redact( origin ),
            self.redactor.redact( text ),
            extra = { 'mcp_level': str( params.level ) } )

    async def _sample(
        self, context: __.typx.Any, params: __.typx.Any
    ) -> __.typx.Any:
        if self.admitting:
            refusal = self.admit_sampling( params )
            if refusal is not None: return refusal
        request = _produce_sampling_request(
            self.ensemble, params, self.redactor )
        response = await self._consult(
            'sampler', 'sample', request, produce_sampling_response )
        if isinstance( response, _mcp_types.ErrorData ): return response
        return produce_sampling_result( response )

    def _check_sampling(
        self, params: __.typx.Any, count: int
    ) -> str | None:
        limits = self.sampling_limits
        if limits.requests is not None and count >= limits.requests:
            return (
                f"The client serves at most {limits.requests} sampling "
                "requests per session (per call, when relayed); this one "
                "was refused." )
        tokens = _sdk.access_field( params, 'max_tokens' )
        if limits.tokens is not None and tokens > limits.tokens:
            return (
                f"The request asks for {tokens} tokens; the client allows "
                f"at most {limits.tokens}." )
        return None


def access_server_capabilities( session: __.typx.Any ) -> __.typx.Any:
    ''' Returns capabilities the server declared (SDK 1.x and 2.x). '''
    getter = getattr( session, 'get_server_capabilities', None )
    if callable( getter ): return getter( )
    return session.server_capabilities


async def set_logging_level(
    session: __.typx.Any, level: LoggingLevels
) -> None:
    ''' Sends ``logging/setLevel``. '''
    with suppress_deprecation( ): await session.set_logging_level( level )


@__.ctxl.contextmanager
def suppress_deprecation( ) -> __.cabc.Generator[ None, None, None ]:
    ''' Silences the SDK 2.x warnings on logging and roots.

        They are deprecated from protocol 2026-07-28 on; sessions here
        speak 2025-11-25, where both are current.
    '''
    import warnings
    with warnings.catch_warnings( ):
        warnings.filterwarnings(
            'ignore',
            message = r'.*(?:logging|roots) capability is deprecated' )
        yield


def produce_sampler(
    provider: __.typx.Annotated[
        str,
        __.ddoc.Doc(
            ''' Provider of the conversation loop: 'anthropic', 'openai',
                'openai-responses', 'gemini', 'cohere', 'ollama'. ''' ),
    ],
    client: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' The application's own asynchronous SDK client. ''' ),
    ],
    *,
    model: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Model which answers sampling requests. ''' )
    ],
) -> Sampler:
    ''' Produces sampler served by the application's provider and model.

        Each request becomes one response of the model, without tools:
        its messages (as text), its system prompt as instructions, its
        ``maxTokens`` as the bound on tokens.
    '''
    import invocables.canisters as canisters_
    import invocables.conversations as conversations_

    async def sample( request: SamplingRequest ) -> SamplingResponse:
        options: dict[ str, __.typx.Any ] = {
            'model': model, 'tokens_maximum': request.max_tokens }
        if not __.is_absent( request.system ):
            options[ 'instructions' ] = request.system
        conversation = conversations_.produce_conversation(
            provider, client, [ ], **options )
        messages: list[ __.typx.Any ] = [ ]
        for message in request.messages:
            text = '\n'.join(
                canisters_.render_content_text( item )
                for item in message.content )
            native = dict( conversation.produce_message( text ) )
            if message.role != 'user':
                native[ 'role' ] = (
                    'model' if provider == 'gemini' else 'assistant' )
            messages.append( native )
        transcript = await conversation.converse( messages )
        return SamplingResponse( text = transcript.text, model = model )

    return sample


def produce_depth_refusal( ensemble: str ) -> _mcp_types.ErrorData:
    ''' Returns error for a server whose elicitation schema is nested
        too deep to show anyone (relayed or not); logs it.
    '''
    _scribe.warning(
        "MCP server %r requested an elicitation whose schema is nested "
        "too deep; refused.", ensemble )
    return _produce_error(
        "The requested schema is nested deeper than "
        f"{_exchanges.SCHEMA_DEPTH_MAXIMUM} levels (MCP's are flat); it is "
        "not shown to the user." )


def produce_elicit_result(
    ensemble: str,
    schema: __.cabc.Mapping[ str, __.typx.Any ],
    response: ElicitationResponse,
    *,
    url: bool = False,
) -> __.typx.Any:
    ''' Returns the SDK's elicitation result of a response, or an error
        for the server if accepted content does not match the requested
        schema (the server learns where and which rule, never the value).
        The answer to a request to visit a URL (if url) is its action only.
    '''
    if url or response.action is not ElicitationActions.Accept:
        return _mcp_types.ElicitResult( action = response.action.value )
    content: dict[ str, __.typx.Any ] = {
        name: _exchanges.thaw_value( value )
        for name, value in ( response.content or { } ).items( ) }
    failure = _exchanges.validate_content( schema, content )
    if failure is not None:
        where, keyword, reason = failure
        _scribe.error(
            "Elicitation answer for MCP ensemble %r accepted with content "
            "which does not match the requested schema: at %s: %s",
            ensemble, where, reason )
        return _produce_error(
            "The answer of the user does not match the requested "
            f"schema: at {where}, keyword {keyword!r}." )
    return _mcp_types.ElicitResult( action = 'accept', content = content )


def produce_sampling_result( response: SamplingResponse ) -> __.typx.Any:
    ''' Returns the SDK's ``CreateMessageResult`` of a sampling response.
    '''
    return _sdk.produce_model(
        _mcp_types.CreateMessageResult,
        role = 'assistant', model = response.model,
        content = _mcp_types.TextContent(
            type = 'text', text = response.text ),
        stop_reason = response.stop_reason )


def produce_root_uris(
    roots: __.cabc.Iterable[ Root ] | Root,
    location: str = "MCP ensemble 'roots'",
) -> tuple[ str, ... ]:
    ''' Returns URIs of roots: paths become absolute ``file://`` URIs.

        A root is a path, a ``file://`` URI, a mapping of MCP's wire shape
        (``{'uri': 'file:///srv', 'name': ...}``) or ``mcp.types.Root``;
        one root alone is taken as a list of one. Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` for
        anything else, and for URIs of other schemes (MCP roots are
        ``file://`` URIs).
    '''
    if isinstance(
        roots, ( str, _os.PathLike, __.cabc.Mapping, _mcp_types.Root )
    ): roots = ( __.typx.cast( Root, roots ), )
    return tuple(
        _produce_root_uri( root, location )
        for root in __.typx.cast( __.cabc.Iterable[ Root ], roots ) )


async def _await_answer( callback: __.typx.Any, request: object ) -> object:
    ''' Returns answer of a callback, plain or asynchronous. '''
    answer: object = callback( request )
    if __.inspect.isawaitable( answer ): return await answer
    return answer


def _produce_error(
    message: str, *, internal: bool = False
) -> _mcp_types.ErrorData:
    code = (
        _mcp_types.INTERNAL_ERROR if internal
        else _mcp_types.INVALID_REQUEST )
    return _mcp_types.ErrorData( code = code, message = message )


def _produce_root_uri( root: object, location: str ) -> str:
    text: object = root
    genus = type( root ).__name__
    if isinstance( root, _mcp_types.Root ): text = str( root.uri )
    elif isinstance( root, __.cabc.Mapping ):
        text = __.typx.cast( __.cabc.Mapping[ str, object ], root ).get(
            'uri' )
    elif isinstance( root, _os.PathLike ):
        text = _os.fspath( __.typx.cast( _os.PathLike[ str ], root ) )
    if not isinstance( text, str ) or not text:
        raise _exceptions.ConfigurationInvalidity(
            location,
            f"a root is a path, a file:// URI, a mapping {{'uri': ...}} or "
            f"mcp.types.Root, not {genus}." )
    if '://' not in text:
        path = __.Path( text ).expanduser( ).resolve( )
        return 'file://' + _quote( path.as_posix( ) )
    try: _mcp_types.Root( uri = __.typx.cast( __.typx.Any, text ) )
    except ValueError as exception: # pydantic's validation error
        raise _exceptions.ConfigurationInvalidity(
            location,
            "a root given as a URI must be a file:// URI "
            "(MCP roots are directories of the client's machine)."
        ) from exception
    return text


def _produce_sampling_request(
    ensemble: str, params: __.typx.Any, redactor: _redaction.Redactor
) -> SamplingRequest:
    ''' Returns the sampler's request, with the server's secrets redacted
        from every text (they would reach the sampler's model).
    '''
    import invocables.mcp.results as _results
    messages: list[ SamplingMessage ] = [ ]
    for message in params.messages:
        content: __.typx.Any = message.content
        blocks: __.cabc.Sequence[ __.typx.Any ] = (
            __.typx.cast( list[ __.typx.Any ], content )
            if isinstance( content, list ) else [ content ] )
        messages.append( SamplingMessage(
            role = message.role,
            content = tuple(
                _results.redact_content(
                    redactor, _results.produce_content( block ) )
                for block in blocks ) ) )
    preferences = _sdk.access_field( params, 'model_preferences' )
    hints = ( ) if preferences is None or not preferences.hints else tuple(
        redactor.redact( hint.name )
        for hint in preferences.hints if hint.name )
    system = _sdk.access_field( params, 'system_prompt' )
    return SamplingRequest(
        ensemble = ensemble, messages = tuple( messages ),
        max_tokens = _sdk.access_field( params, 'max_tokens' ),
        system = __.absent if system is None else redactor.redact( system ),
        temperature = (
            __.absent if params.temperature is None else params.temperature ),
        stop_sequences = tuple(
            redactor.redact( sequence ) for sequence in
            _sdk.access_field( params, 'stop_sequences' ) or ( ) ),
        model_hints = hints )


