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
    received) and the server gets an error naming only its class.
'''


import os as _os

from urllib.parse import quote as _quote

import anyio as _anyio

from pydantic import BaseModel as _BaseModel

from . import __
from . import redaction as _redaction
from . import _sdk as _sdk
from ._sdk import types as _mcp_types
from .. import canisters as _canisters
from .. import exceptions as _exceptions


LOGGER_PREFIX = 'invocables.mcp.servers'
SAMPLING_REQUESTS_DEFAULT = 100
SAMPLING_TOKENS_DEFAULT = 4096

_LEVELS = __.types.MappingProxyType( {
    'debug': __.logging.DEBUG, 'info': __.logging.INFO,
    'notice': __.logging.INFO + 5, 'warning': __.logging.WARNING,
    'error': __.logging.ERROR, 'critical': __.logging.CRITICAL,
    'alert': __.logging.CRITICAL + 5, 'emergency': __.logging.CRITICAL + 10,
} )
_ACTIONS = frozenset( ( 'accept', 'decline', 'cancel' ) )
_CONTENT_EXPECTED = (
    "a mapping of the requested fields to strings, numbers, booleans, "
    "lists of strings or None as 'content'" )
_ELICITATION_EXPECTED = (
    "an ElicitationResponse, a mapping of MCP's ElicitResult "
    "({'action': 'accept', 'content': {...}}) or mcp.types.ElicitResult" )
_SAMPLING_CONTENT_EXPECTED = (
    "text content ({'type': 'text', 'text': ...}) as 'content'" )
_SAMPLING_EXPECTED = (
    "a SamplingResponse, a mapping of MCP's CreateMessageResult "
    "({'role': 'assistant', 'content': {'type': 'text', 'text': ...}, "
    "'model': ...}) or mcp.types.CreateMessageResult" )
_SAMPLING_MODELS: tuple[ type[ __.typx.Any ], ... ] = tuple(
    getattr( _mcp_types, name )
    for name in ( 'CreateMessageResult', 'CreateMessageResultWithTools' )
    if hasattr( _mcp_types, name ) )
_scribe = __.produce_scribe( __name__ )


class ElicitationActions( __.enum.Enum ):
    ''' Answers of the user to an elicitation. '''

    Accept = 'accept'       # content given, matching the requested schema
    Cancel = 'cancel'       # dismissed without a choice
    Decline = 'decline'     # refused explicitly


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ElicitationRequest:
    ''' Request of a server for input from the user.

        ``schema`` is the JSON schema of the requested content (a flat
        object); for a request to visit a URL, ``url`` is given instead and
        ``schema`` is empty.
    '''

    ensemble: str
    message: str
    schema: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = lambda: __.types.MappingProxyType( { } ) )
    url: __.Absential[ str ] = __.absent


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ElicitationResponse:
    ''' Answer to an elicitation: action and, on accept, content.

        ``action`` is an :py:class:`ElicitationActions` member; ``content``
        maps the requested fields to strings, numbers, booleans, lists of
        strings or None. Anything else is refused when the record is made,
        with :py:class:`invocables.exceptions.CallbackAnswerInvalidity`.
    '''

    action: ElicitationActions
    content: __.cabc.Mapping[ str, __.typx.Any ] | None = None

    def __post_init__( self ) -> None:
        action: object = self.action
        if not isinstance( action, ElicitationActions ):
            raise _produce_invalidity(
                'elicitor', "an ElicitationActions member as 'action'",
                action, _advise_action( action ) )
        _validate_elicited_content( self.content )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingMessage:
    ''' One message of a sampling request, as neutral canisters. '''

    role: str
    content: _canisters.ContentSequence


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingRequest:
    ''' Request of a server for a completion by the application's model. '''

    ensemble: str
    messages: tuple[ SamplingMessage, ... ]
    max_tokens: int
    system: __.Absential[ str ] = __.absent
    temperature: __.Absential[ float ] = __.absent
    stop_sequences: tuple[ str, ... ] = ( )
    model_hints: tuple[ str, ... ] = ( )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingResponse:
    ''' Completion for a sampling request.

        ``text``, ``model`` (the name of the model which answered) and
        ``stop_reason`` (``'endTurn'``, ``'stopSequence'``, ``'maxTokens'``
        or another reason) are strings; anything else is refused when the
        record is made, with
        :py:class:`invocables.exceptions.CallbackAnswerInvalidity`.
    '''

    text: str
    model: str
    stop_reason: str = 'endTurn'

    def __post_init__( self ) -> None:
        for name in ( 'text', 'model', 'stop_reason' ):
            value: object = getattr( self, name )
            if isinstance( value, str ): continue
            raise _produce_invalidity(
                'sampler', f"a string as {name!r} of a SamplingResponse",
                value )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingLimits:
    ''' Bounds on the sampling requests of one ensemble.

        ``requests`` is the number of requests served per connection;
        ``tokens`` the largest ``maxTokens`` a request may ask for. A request
        beyond either is refused with an error which the server sees.
        ``None`` for no bound.
    '''

    requests: int | None = SAMPLING_REQUESTS_DEFAULT
    tokens: int | None = SAMPLING_TOKENS_DEFAULT


ElicitationAnswer: __.typx.TypeAlias = (
    ElicitationResponse
    | __.cabc.Mapping[ str, __.typx.Any ]
    | _mcp_types.ElicitResult )
SamplingAnswer: __.typx.TypeAlias = (
    SamplingResponse
    | __.cabc.Mapping[ str, __.typx.Any ]
    | _mcp_types.CreateMessageResult )
Elicitor: __.typx.TypeAlias = __.cabc.Callable[
    [ ElicitationRequest ],
    __.cabc.Awaitable[ ElicitationAnswer ] | ElicitationAnswer ]
Sampler: __.typx.TypeAlias = __.cabc.Callable[
    [ SamplingRequest ],
    __.cabc.Awaitable[ SamplingAnswer ] | SamplingAnswer ]
Root: __.typx.TypeAlias = (
    str
    | _os.PathLike[ str ]
    | __.cabc.Mapping[ str, __.typx.Any ]
    | _mcp_types.Root )
LoggingLevels: __.typx.TypeAlias = __.typx.Literal[
    'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert',
    'emergency' ]


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
        self.redactor = _redaction.Redactor( )
        self.scribe = __.logging.getLogger( f"{LOGGER_PREFIX}.{ensemble}" )

    def produce_session_arguments(
        self, redactor: _redaction.Redactor
    ) -> dict[ str, __.typx.Any ]:
        ''' Returns keyword arguments of the SDK's ``ClientSession``.

            Passing a callback advertises its capability to the server; the
            logging callback is always given.
        '''
        self.redactor = redactor
        self.samplings = 0
        arguments: dict[ str, __.typx.Any ] = {
            'logging_callback': self._receive_log }
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
            from . import authorization as _authorization
            self.auth = _authorization.produce_auth(
                self.ensemble, self.authorization, url,
                timeout = self.authorization_timeout, # expose
                suspension = self.suspend_deadline )
        return self.auth

    def is_interactive( self ) -> bool:
        ''' Whether connecting may wait for a user (the code grant). '''
        if __.is_absent( self.authorization ): return False
        from . import authorization as _authorization
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
        from . import authorization as _authorization
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

    async def _elicit(
        self, context: __.typx.Any, params: __.typx.Any
    ) -> __.typx.Any:
        url = getattr( params, 'url', None )
        schema: dict[ str, __.typx.Any ] = (
            _sdk.access_field( params, 'requested_schema', None ) or { } )
        request = ElicitationRequest(
            ensemble = self.ensemble, message = params.message,
            schema = __.types.MappingProxyType( dict( schema ) ),
            url = __.absent if url is None else url )
        try: answer = await _await_answer( self.elicitor, request )
        except Exception as exception:
            _scribe.exception(
                "Elicitor of MCP ensemble %r raised.", self.ensemble )
            return _produce_error(
                f"The client failed to elicit input: "
                f"{type( exception ).__name__}.", internal = True )
        try: response = produce_elicitation_response( answer )
        except _exceptions.CallbackAnswerInvalidity as exception:
            return self._refuse_answer( 'elicitor', answer, exception )
        return self._validate_elicitation( request, response )

    def _refuse_answer(
        self,
        callback: str,
        answer: object,
        exception: _exceptions.CallbackAnswerInvalidity,
    ) -> _mcp_types.ErrorData:
        ''' Logs an invalid answer in full; tells server only its class. '''
        _scribe.error(
            "MCP ensemble %r: %s", self.ensemble, exception )
        return _produce_error(
            f"The client's {callback} returned an invalid answer "
            f"({type( answer ).__name__}).", internal = True )

    def _validate_elicitation(
        self, request: ElicitationRequest, response: ElicitationResponse
    ) -> __.typx.Any:
        if response.action is not ElicitationActions.Accept:
            return _mcp_types.ElicitResult( action = response.action.value )
        content: dict[ str, __.typx.Any ] = {
            name: _thaw_value( value )
            for name, value in ( response.content or { } ).items( ) }
        failure = _validate_content( request.schema, content )
        if failure is not None:
            where, keyword, reason = failure
            _scribe.error(
                "Elicitor of MCP ensemble %r accepted with content which "
                "does not match the requested schema: at %s: %s",
                self.ensemble, where, reason )
            # The server learns where and which rule, never the value.
            return _produce_error(
                "The answer of the user does not match the requested "
                f"schema: at {where}, keyword {keyword!r}." )
        return _mcp_types.ElicitResult( action = 'accept', content = content )

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
            level, "%s%s", origin, self.redactor.redact( text ),
            extra = { 'mcp_level': str( params.level ) } )

    async def _sample(
        self, context: __.typx.Any, params: __.typx.Any
    ) -> __.typx.Any:
        refusal = self._check_sampling( params )
        if refusal is not None:
            _scribe.warning(
                "MCP ensemble %r: sampling request refused: %s",
                self.ensemble, refusal )
            return _produce_error( refusal )
        self.samplings += 1
        request = _produce_sampling_request( self.ensemble, params )
        try: answer = await _await_answer( self.sampler, request )
        except Exception as exception:
            _scribe.exception(
                "Sampler of MCP ensemble %r raised.", self.ensemble )
            return _produce_error(
                f"The client failed to sample: "
                f"{type( exception ).__name__}.", internal = True )
        try: response = produce_sampling_response( answer )
        except _exceptions.CallbackAnswerInvalidity as exception:
            return self._refuse_answer( 'sampler', answer, exception )
        return _sdk.produce_model(
            _mcp_types.CreateMessageResult,
            role = 'assistant', model = response.model,
            content = _mcp_types.TextContent(
                type = 'text', text = response.text ),
            stop_reason = response.stop_reason )

    def _check_sampling( self, params: __.typx.Any ) -> str | None:
        limits = self.sampling_limits
        if limits.requests is not None and self.samplings >= limits.requests:
            return (
                f"The client serves at most {limits.requests} sampling "
                "requests per session; this one was refused." )
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
    from .. import canisters as canisters_
    from .. import conversations as conversations_

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


def produce_elicitation_response(
    answer: __.typx.Annotated[
        object,
        __.ddoc.Doc(
            ''' What an elicitor returned: an ``ElicitationResponse``, a
                mapping of MCP's ``ElicitResult`` (``{'action': 'accept',
                'content': {...}}``) or ``mcp.types.ElicitResult``. ''' ),
    ],
) -> ElicitationResponse:
    ''' Produces the record of an elicitor's answer, from any shape the
        library accepts.

        Raises :py:class:`invocables.exceptions.CallbackAnswerInvalidity`,
        naming the shapes expected and the type received, for anything
        else (and for a wrong action or content).
    '''
    if isinstance( answer, ElicitationResponse ): return answer
    wire = _access_wire( 'elicitor', _ELICITATION_EXPECTED, answer, (
        _mcp_types.ElicitResult, ) )
    action: object = wire.get( 'action' )
    if isinstance( action, str ) and action in _ACTIONS:
        action = ElicitationActions( action )
    if not isinstance( action, ElicitationActions ):
        raise _produce_invalidity(
            'elicitor', "'accept', 'decline' or 'cancel' as 'action'",
            action, "The action is none of these." )
    if action is not ElicitationActions.Accept:
        return ElicitationResponse( action = action )
    return ElicitationResponse(
        action = action, content = wire.get( 'content' ) )


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


def produce_sampling_response(
    answer: __.typx.Annotated[
        object,
        __.ddoc.Doc(
            ''' What a sampler returned: a ``SamplingResponse``, a mapping
                of MCP's ``CreateMessageResult`` (``{'role': 'assistant',
                'content': {'type': 'text', 'text': ...}, 'model': ...}``,
                ``stopReason`` or ``stop_reason``) or
                ``mcp.types.CreateMessageResult``. ''' ),
    ],
) -> SamplingResponse:
    ''' Produces the record of a sampler's answer, from any shape the
        library accepts.

        Only text content is accepted (a block or a list of blocks).
        Raises :py:class:`invocables.exceptions.CallbackAnswerInvalidity`,
        naming the shapes expected and the type received, for anything
        else.
    '''
    if isinstance( answer, SamplingResponse ): return answer
    wire = _access_wire(
        'sampler', _SAMPLING_EXPECTED, answer, _SAMPLING_MODELS )
    role: object = wire.get( 'role', 'assistant' )
    if role != 'assistant':
        raise _produce_invalidity( 'sampler', "'assistant' as 'role'", role )
    if 'model' not in wire:
        raise _produce_invalidity(
            'sampler', "the name of the model as 'model'", None,
            "The key 'model' is missing." )
    reason: object = wire.get( 'stopReason', wire.get( 'stop_reason' ) )
    return SamplingResponse(
        text = _produce_sampled_text( wire.get( 'content' ) ),
        model = wire[ 'model' ],
        # The record refuses a reason which is not a string.
        stop_reason = __.typx.cast(
            str, 'endTurn' if reason is None else reason ) )


def _access_wire(
    callback: str,
    expected: str,
    answer: object,
    models: tuple[ type[ __.typx.Any ], ... ],
) -> __.cabc.Mapping[ str, __.typx.Any ]:
    ''' Returns answer as a mapping of its wire shape, or raises. '''
    if isinstance( answer, models ):
        model = __.typx.cast( _BaseModel, answer )
        return model.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    if isinstance( answer, __.cabc.Mapping ):
        return __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], answer )
    raise _produce_invalidity( callback, expected, answer )


def _access_text( block: object ) -> str | None:
    ''' Returns text of a text block; None for any other block. '''
    if not isinstance( block, __.cabc.Mapping ): return None
    block_ = __.typx.cast( __.cabc.Mapping[ str, object ], block )
    text = block_.get( 'text' )
    if block_.get( 'type' ) != 'text' or not isinstance( text, str ):
        return None
    return text


def _advise_action( action: object ) -> str:
    if isinstance( action, str ) and action in _ACTIONS:
        return (
            f"Write ElicitationActions.{action.capitalize( )}, or return "
            f"the MCP wire mapping {{'action': {action!r}, ...}}." )
    return "Write ElicitationActions.Accept, .Decline or .Cancel."


async def _await_answer( callback: __.typx.Any, request: object ) -> object:
    ''' Returns answer of a callback, plain or asynchronous. '''
    answer: object = callback( request )
    if __.inspect.isawaitable( answer ): return await answer
    return answer


def _is_elicited_value( value: object ) -> bool:
    if value is None or isinstance( value, ( str, int, float ) ):
        return True
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return all( isinstance( item, str ) for item in items )
    return False


def _produce_error(
    message: str, *, internal: bool = False
) -> _mcp_types.ErrorData:
    code = (
        _mcp_types.INTERNAL_ERROR if internal
        else _mcp_types.INVALID_REQUEST )
    return _mcp_types.ErrorData( code = code, message = message )


def _produce_invalidity(
    callback: str, expected: str, received: object, reason: str = ''
) -> _exceptions.CallbackAnswerInvalidity:
    ''' Returns invalidity naming the type received, never its value. '''
    return _exceptions.CallbackAnswerInvalidity(
        callback, expected, type( received ).__name__, reason )


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


def _produce_sampled_text( content: object ) -> str:
    ''' Returns text of the content of a sampling answer, or raises. '''
    blocks = _survey_blocks( content )
    texts: list[ str ] = [ ]
    for block in blocks:
        text = _access_text( block )
        if text is None:
            raise _produce_invalidity(
                'sampler', _SAMPLING_CONTENT_EXPECTED, block,
                "Only text content is served (a block or a list of "
                "blocks)." )
        texts.append( text )
    if not texts:
        raise _produce_invalidity(
            'sampler', _SAMPLING_CONTENT_EXPECTED, content,
            "The content holds no block." )
    return '\n'.join( texts )


def _produce_sampling_request(
    ensemble: str, params: __.typx.Any
) -> SamplingRequest:
    from . import results as _results
    messages: list[ SamplingMessage ] = [ ]
    for message in params.messages:
        content: __.typx.Any = message.content
        blocks: __.cabc.Sequence[ __.typx.Any ] = (
            __.typx.cast( list[ __.typx.Any ], content )
            if isinstance( content, list ) else [ content ] )
        messages.append( SamplingMessage(
            role = message.role,
            content = tuple(
                _results.produce_content( block ) for block in blocks ) ) )
    preferences = _sdk.access_field( params, 'model_preferences' )
    hints = ( ) if preferences is None or not preferences.hints else tuple(
        hint.name for hint in preferences.hints if hint.name )
    system = _sdk.access_field( params, 'system_prompt' )
    return SamplingRequest(
        ensemble = ensemble, messages = tuple( messages ),
        max_tokens = _sdk.access_field( params, 'max_tokens' ),
        system = __.absent if system is None else system,
        temperature = (
            __.absent if params.temperature is None else params.temperature ),
        stop_sequences = tuple(
            _sdk.access_field( params, 'stop_sequences' ) or ( ) ),
        model_hints = hints )


def _validate_content(
    schema: __.cabc.Mapping[ str, __.typx.Any ],
    content: __.cabc.Mapping[ str, __.typx.Any ],
) -> tuple[ str, str, str ] | None:
    ''' Returns where content breaks schema, the keyword it breaks and
        why, or None if it matches.
    '''
    # A server's patterns never run on Python's backtracking re.
    from .. import schemata
    validator = schemata.produce_instance_validator( schema )
    try: errors: list[ __.typx.Any ] = sorted(
        validator.iter_errors( dict( content ) ),
        key = lambda error: tuple( str( part ) for part in error.path ) )
    except _exceptions.PatternInterruption as exception:
        return '(unknown)', 'pattern', (
            f"the pattern {exception.pattern!r} took too long to match" )
    if not errors: return None
    error = errors[ 0 ]
    where = '/'.join( str( part ) for part in error.path ) or '(top)'
    return where, str( error.validator ), str( error.message )


def _survey_blocks( content: object ) -> tuple[ object, ... ]:
    ''' Returns blocks of content: a list of blocks, or one block. '''
    if isinstance( content, ( list, tuple ) ):
        return tuple( __.typx.cast( __.cabc.Sequence[ object ], content ) )
    return ( content, )


def _thaw_value( value: object ) -> object:
    ''' Returns a list for a tuple of strings; else value unchanged. '''
    if isinstance( value, tuple ):
        return list( __.typx.cast( tuple[ object, ... ], value ) )
    return value


def _validate_elicited_content( content: object ) -> None:
    ''' Raises invalidity unless content maps names to primitive values. '''
    if content is None: return
    if not isinstance( content, __.cabc.Mapping ):
        raise _produce_invalidity(
            'elicitor', _CONTENT_EXPECTED, content,
            "Give the answers as a mapping of the requested fields." )
    for name, value in __.typx.cast(
        __.cabc.Mapping[ object, object ], content
    ).items( ):
        if not isinstance( name, str ):
            raise _produce_invalidity(
                'elicitor', "names (strings) as keys of 'content'", name )
        if _is_elicited_value( value ): continue
        raise _produce_invalidity(
            'elicitor', _CONTENT_EXPECTED, value,
            f"The value of field {name!r} has a type MCP does not "
            "carry in an elicitation." )
