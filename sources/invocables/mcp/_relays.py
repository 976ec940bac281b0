# SPDX-License-Identifier: Apache-2.0

''' What a server asks and tells during a call, relayed to its caller.

    While a call to a tool of a relaying ensemble runs, the server's
    elicitation, sampling, log messages and progress for that call go to
    the call's context, as a local tool's requests do: under ``serve``, to
    the client which made the call (a gateway passes them through); in an
    application's loop, to its liaison (``invokers.liaise``). A request
    belongs to a call when it comes on the call's own stream (streamable
    HTTP), or when the call is the only one running on the session (stdio
    says no more). Otherwise, and when the caller has no liaison, the
    ensemble's own callbacks answer; without them, the server is told that
    nobody can answer. The answers go back to the server as they came.
    A prompt or a resource read given the caller's context is tracked as
    a call is (``FeaturesExtension``), its requests relayed alike.

    What goes to the caller is redacted by the connection's redactor and
    made sendable by the one normaliser (lone surrogates escaped), here,
    where it leaves the session: every text of an elicitation, a sampling
    request, a log message (its data and the name of its logger) and
    progress. The identifier of an elicitation by URL which holds a
    secret, or is not sendable, goes as an opaque stand-in, under which
    the server's word that the visit is complete goes too.
'''


import contextvars as _contextvars
import secrets as _secrets

import invocables.mcp.__ as __
import invocables.mcp.callbacks as _callbacks
import invocables.mcp.exchanges as _exchanges
import invocables.mcp.records as _records
import invocables.mcp._sdk as _sdk
from ._sdk import Error as _MCPError
from ._sdk import types as _mcp_types
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions


_Callback: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]
Observer: __.typx.TypeAlias = __.cabc.Callable[
    [ str, str, str | None ], __.cabc.Awaitable[ None ] ]
''' Takes the changes a server announces: the name of its ensemble, the
    method of its notification (``notifications/resources/updated``,
    ``.../resources/list_changed``, ``.../prompts/list_changed``,
    ``notifications/elicitation/complete``) and the URI of an updated
    resource or the identifier of a completed elicitation. '''

_SETTLE_TIMEOUT = 1.0
_VISITS_MAXIMUM = 1000 # stand-ins of identifiers of visits remembered
_SAMPLING_FIELDS = (
    'max_tokens', 'system_prompt', 'include_context', 'temperature',
    'stop_sequences', 'metadata', 'model_preferences' )
# Given to the caller as MCP's wire shapes, redacted: what the model may
# call (2025-11-25).
_SAMPLING_TOOLS_FIELDS = ( 'tools', 'tool_choice' )
_calls: _contextvars.ContextVar[ object ] = _contextvars.ContextVar(
    'invocables_mcp_call', default = None )
_scribe = __.produce_scribe( __name__ )


class Relay:
    ''' Relays requests of one session to the callers of its calls. '''

    def __init__(
        self,
        ensemble: str,
        redactor: __.typx.Any,
        observer: Observer | None = None,
    ):
        self.ensemble = ensemble
        self.redactor = redactor
        self.observer = observer
        self.calls: dict[ object, _Caller ] = { }
        self.elicitor: _Callback | None = None
        self.sampler: _Callback | None = None
        self.logger: _Callback | None = None
        self.admit: _callbacks.SamplingGate | None = None
        # Stand-ins of the identifiers of visits (elicitations by URL)
        # which may not go out as the server gave them, by those.
        self.visits: dict[ str, str ] = { }

    def produce_session_arguments(
        self, arguments: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> dict[ str, __.typx.Any ]:
        ''' Returns arguments of the SDK's ``ClientSession`` whose
            callbacks relay, falling back to those given.

            Elicitation and sampling (with tools too) are offered to the
            server: the caller may answer them. The limits of sampling
            given with the arguments (``delegate_admission``) apply to
            every sampling request, relayed or not.
        '''
        self.elicitor = arguments.get( 'elicitation_callback' )
        self.sampler = arguments.get( 'sampling_callback' )
        self.logger = arguments.get( 'logging_callback' )
        delegate = getattr( arguments, 'delegate_admission', None )
        self.admit = None if delegate is None else delegate( )
        return dict( arguments ) | {
            'elicitation_callback': self.elicit,
            'sampling_callback': self.sample,
            'logging_callback': self.log,
            # Whether the caller can is known per request: one whose
            # client cannot is refused by the SDK, and the server learns.
            'sampling_capabilities': _produce_sampling_capability( ) }

    @__.ctxl.contextmanager
    def track(
        self, context: __.typx.Any
    ) -> __.cabc.Generator[ None, None, None ]:
        ''' Marks call of context as running within the block. '''
        marker = object( )
        # The caller's liaison is in its task's context, which a request
        # of the server (from the session's task) would not see.
        self.calls[ marker ] = _Caller( context )
        token = _calls.set( marker )
        try: yield
        finally:
            _calls.reset( token )
            del self.calls[ marker ]

    def access_caller( self ) -> '_Caller | None':
        ''' Returns caller of the call a request belongs to, or None. '''
        caller = self.calls.get( _calls.get( ) )
        if caller is not None: return caller
        if len( self.calls ) == 1: return next( iter( self.calls.values( ) ) )
        return None

    async def elicit(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Answers ``elicitation/create`` by the caller's user: a form
            (``elicit``) or a URL to visit (``elicit_url``).
        '''
        caller = self.access_caller( )
        if caller is not None:
            result = await self._elicit_caller( caller, parameters )
            if result is not None: return result
        if self.elicitor is not None:
            return await self.elicitor(
                context, self._screen_elicitation( parameters ) )
        return _produce_refusal( 'elicitation' )

    async def log( self, parameters: __.typx.Any ) -> None:
        ''' Logs as configured, and to the caller of the call: its data
            and the name of its logger redacted and sendable.
        '''
        if self.logger is not None: await self.logger( parameters )
        caller = self.access_caller( )
        if caller is None: return
        logger: str | None = parameters.logger
        try:
            await caller.ask(
                'log', str( parameters.level ),
                self.redactor.prepare_data( parameters.data ),
                None if logger is None
                else self.redactor.prepare( logger ) )
        except Exception: # the caller went away: the call ends anyway
            _scribe.debug(
                "Log message of MCP server %r not relayed.", self.ensemble,
                exc_info = True )

    async def observe( self, message: object ) -> None:
        ''' Tells observer of a change the server announced, if any.

            A visit complete is told by the identifier which went out for
            it (see :py:meth:`produce_visit`); an updated resource, by its
            URI. One which holds a secret or is not sendable, and went out
            as no stand-in, is not told.
        '''
        if self.observer is None: return
        method: str | None = None
        uri: str | None = None
        if isinstance( message, _mcp_types.ResourceUpdatedNotification ):
            method, uri = message.method, str( message.params.uri )
            if not _is_clean( self.redactor, uri ): return
        elif isinstance( message, (
            _mcp_types.ResourceListChangedNotification,
            _mcp_types.PromptListChangedNotification,
        ) ): method = message.method
        elif isinstance( message, _mcp_types.ElicitCompleteNotification ):
            method = message.method
            uri = self._access_visit(
                _sdk.access_field( message.params, 'elicitation_id' ) )
            if uri is None: return
        if method is None: return
        try: await self.observer( self.ensemble, method, uri )
        except Exception:
            _scribe.exception(
                "Observer of MCP server %r raised.", self.ensemble )

    def produce_visit(
        self, identifier: str, *, opaque: bool = False
    ) -> str:
        ''' Returns identifier of an elicitation by URL which may go out:
            the server's, unless it holds a secret of the connection or is
            not sendable, or unless opaque (what goes to a caller: two
            servers may name their visits alike, and neither may end the
            other's); else an opaque stand-in, the same for the same
            identifier, remembered (the latest thousand) so that the
            server's word that the visit is complete goes out under it.
        '''
        if not opaque and _is_clean( self.redactor, identifier ):
            return identifier
        visits = self.visits
        served = visits.pop( identifier, None ) or (
            f"visit-{_secrets.token_hex( 16 )}" )
        visits[ identifier ] = served
        while len( visits ) > _VISITS_MAXIMUM:
            del visits[ next( iter( visits ) ) ]
        return served

    async def sample(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Answers ``sampling/createMessage`` by the caller's model.

            A request with tools goes to the caller only: the ensemble's
            sampler takes no tools.
        '''
        caller = self.access_caller( )
        if self.admit is not None:
            refusal = self.admit( parameters, caller )
            if refusal is not None: return refusal
        tools = any(
            _sdk.access_field( parameters, name, None ) is not None
            for name in _SAMPLING_TOOLS_FIELDS )
        if caller is not None:
            messages, options = self._produce_sampling_arguments(
                parameters )
            result = await self._ask(
                caller, 'sampling',
                lambda answer: _produce_sampling_result( answer, tools ),
                'sample', messages, **options )
            if result is not None: return result
        if tools: return _produce_refusal_tools( )
        if self.sampler is not None:
            return await self.sampler( context, parameters )
        return _produce_refusal( 'sampling' )

    async def _elicit_caller(
        self, caller: '_Caller', parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Returns the server's result of the caller's answer, or None
            if the caller has nobody to ask. The message, schema and URL
            go redacted and sendable; the identifier of a visit, an opaque
            stand-in (see :py:meth:`produce_visit`).
        '''
        redactor = self.redactor
        schema: __.cabc.Mapping[ str, __.typx.Any ] = _sdk.access_field(
            parameters, 'requested_schema', None ) or { }
        if _exchanges.is_schema_deep( schema ):
            return _callbacks.produce_depth_refusal( self.ensemble )
        message = redactor.prepare( parameters.message )
        url: str | None = getattr( parameters, 'url', None )
        if url is None:
            # The answer is checked against the server's own schema.
            return await self._ask(
                caller, 'elicitation',
                lambda answer: self._produce_elicit_result( schema, answer ),
                'elicit', message, redactor.prepare_data( schema ) )
        return await self._ask(
            caller, 'elicitation',
            lambda answer: self._produce_elicit_result(
                schema, answer, url = True ),
            'elicit_url', message,
            _canisters.normalize_text( redactor.redact_link( url ) ),
            self.produce_visit(
                _sdk.access_field( parameters, 'elicitation_id' ),
                opaque = True ) )

    def _access_visit( self, identifier: str ) -> str | None:
        ''' Returns identifier which went out for a visit the server
            says is complete (see :py:meth:`produce_visit`), or None. '''
        served = self.visits.pop( identifier, None )
        if served is not None: return served
        return identifier if _is_clean( self.redactor, identifier ) else None

    def _screen_elicitation( self, parameters: __.typx.Any ) -> __.typx.Any:
        ''' Returns parameters of an elicitation for the ensemble's own
            elicitor: those of a visit with the identifier which may go
            out (see :py:meth:`produce_visit`). '''
        identifier: str | None = _sdk.access_field(
            parameters, 'elicitation_id', None )
        if identifier is None: return parameters
        served = self.produce_visit( identifier )
        if served == identifier: return parameters
        data = parameters.model_dump( by_alias = True )
        data[ 'elicitationId' ] = served
        model = __.typx.cast( __.typx.Any, type( parameters ) )
        return model.model_validate( data )

    def _produce_sampling_arguments(
        self, parameters: __.typx.Any
    ) -> tuple[ list[ __.typx.Any ], dict[ str, __.typx.Any ] ]:
        ''' Returns messages and options of a relayed sampling request:
            messages, tools and tool choice as MCP's wire shapes; every
            text redacted and sendable.
        '''
        redactor = self.redactor
        messages = [
            redactor.prepare_data( _dump_model( message ) )
            for message in parameters.messages ]
        options = {
            name: _redact_option( redactor, value )
            for name in _SAMPLING_FIELDS
            if ( value := _sdk.access_field( parameters, name ) )
            is not None }
        tools = _sdk.access_field( parameters, 'tools', None )
        if tools is not None:
            options[ 'tools' ] = [
                redactor.prepare_data( _dump_model( tool ) )
                for tool in tools ]
        choice = _sdk.access_field( parameters, 'tool_choice', None )
        if choice is not None:
            options[ 'tool_choice' ] = redactor.prepare_data(
                _dump_model( choice ) )
        return messages, options

    async def _ask(
        self,
        caller: '_Caller',
        request: str,
        produce: __.cabc.Callable[ [ object ], __.typx.Any ],
        method: str,
        *arguments: __.typx.Any,
        **keywords: __.typx.Any,
    ) -> __.typx.Any:
        ''' Returns the server's result of the caller's answer, an error
            for the server if asking failed, or None if the caller has
            nobody to ask (then the ensemble's own callback answers).
        '''
        try: answer = await caller.ask( method, *arguments, **keywords )
        except _exceptions.LiaisonAbsence: return None
        except _MCPError as exception: return exception.error
        except Exception as exception:
            return _produce_failure( request, exception )
        return produce( answer )

    def _produce_elicit_result(
        self,
        schema: __.cabc.Mapping[ str, __.typx.Any ],
        answer: object,
        *,
        url: bool = False,
    ) -> __.typx.Any:
        try: response = _exchanges.produce_elicitation_response( answer )
        except _exceptions.CallbackAnswerInvalidity as exception:
            _scribe.error( "Relayed elicitation: %s", exception )
            return _produce_refusal( 'elicitation', invalid = True )
        return _callbacks.produce_elicit_result(
            self.ensemble, schema, response, url = url )


class _Caller:
    ''' Context of a call, and the context of its task. '''

    def __init__( self, context: __.typx.Any ):
        self.context = context
        self.variables = _contextvars.copy_context( )

    async def ask(
        self, method: str, *arguments: __.typx.Any, **keywords: __.typx.Any
    ) -> __.typx.Any:
        ''' Returns answer of the call's context to a request, asked
            within the context of the call's task.
        '''
        coroutine = getattr( self.context, method )( *arguments, **keywords )
        task = self.variables.run( __.asyncio.ensure_future, coroutine )
        try: return await task
        except __.asyncio.CancelledError:
            task.cancel( )
            raise


class Progress:
    ''' Progress callback of one call on a connection: to the reporter,
        and to the caller of the call when the connection relays.
    '''

    def __init__(
        self,
        ensemble: str,
        tool: str,
        context: __.typx.Any,
        reporter: __.Absential[ _records.Reporter ],
        connection: __.typx.Any,
    ):
        self.ensemble = ensemble
        self.tool = tool
        invocation = context.invocation
        self.identifier: __.Absential[ str ] = (
            __.absent if __.is_absent( invocation )
            else invocation.identifier )
        self.reporter = reporter
        self.redactor = connection.redactor
        # Made in the caller's task: its liaison answers the progress.
        self.caller = (
            None if connection.relay is None else _Caller( context ) )
        self.deliveries = 0
        self.idle = __.asyncio.Event( )
        self.idle.set( )

    async def __call__(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        self.deliveries += 1
        self.idle.clear( )
        try: await self._deliver( progress, total, message )
        finally:
            self.deliveries -= 1
            if not self.deliveries: self.idle.set( )

    async def settle( self ) -> None:
        ''' Waits (a second at most) until the progress received before
            the result is delivered, so that it precedes the result.
        '''
        if self.idle.is_set( ): return
        with __.ctxl.suppress( __.asyncio.TimeoutError ):
            await __.asyncio.wait_for( self.idle.wait( ), _SETTLE_TIMEOUT )

    async def _deliver(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        ''' Delivers progress, its message redacted and sendable; to the
            caller, only with a finite progress (JSON has no other), and
            its total if finite.
        '''
        if message is not None:
            message = self.redactor.prepare( message )
        try:
            if not __.is_absent( self.reporter ):
                outcome = self.reporter( _records.Progress(
                    ensemble = self.ensemble, tool = self.tool,
                    progress = progress, total = total, message = message,
                    invocation_id = self.identifier ) )
                if __.inspect.isawaitable( outcome ): await outcome
            if self.caller is not None and __.math.isfinite( progress ):
                if total is not None and not __.math.isfinite( total ):
                    total = None
                await self.caller.ask(
                    'report_progress', progress, total, message )
        except Exception:
            _scribe.exception( "Progress reporter raised." )


def produce_progress(
    ensemble: str,
    tool: str,
    context: __.typx.Any,
    reporter: __.Absential[ _records.Reporter ],
    connection: __.typx.Any,
) -> Progress | None:
    ''' Returns progress callback of a call, if anyone listens. '''
    if connection.relay is None and __.is_absent( reporter ): return None
    return Progress( ensemble, tool, context, reporter, connection )


def track(
    relay: Relay | None, context: __.typx.Any
) -> __.typx.ContextManager[ None ]:
    ''' Marks call as running on a relaying session, if relay. '''
    if relay is None: return __.ctxl.nullcontext( )
    return relay.track( context )


def _redact_option(
    redactor: __.typx.Any, value: __.typx.Any
) -> __.typx.Any:
    ''' Returns option of a sampling request with its texts redacted
        and sendable, in its own type (preferences stay the SDK's model).
    '''
    if not hasattr( value, 'model_dump' ):
        return redactor.prepare_data( value )
    model = __.typx.cast( __.typx.Any, type( value ) )
    return model.model_validate(
        redactor.prepare_data( _dump_model( value ) ) )


def _is_clean( redactor: __.typx.Any, text: str ) -> bool:
    ''' Returns whether text may go out as it is: it holds no secret of
        the connection and is sendable. '''
    return (
        redactor.redact( text ) == text
        and _canisters.normalize_text( text ) is text )


def _dump_model( model: __.typx.Any ) -> __.typx.Any:
    ''' Returns MCP's wire shape of an SDK model. '''
    return model.model_dump(
        by_alias = True, mode = 'json', exclude_none = True )


def _produce_failure(
    request: str, exception: Exception
) -> _mcp_types.ErrorData:
    ''' Logs why the caller could not be asked; tells the server the class.
    '''
    _scribe.warning(
        "Relayed %s failed: %s", request, exception, exc_info = exception )
    return _mcp_types.ErrorData(
        code = _mcp_types.INTERNAL_ERROR,
        message = (
            f"The caller could not be asked for {request} "
            f"({type( exception ).__name__})." ) )


def _produce_refusal(
    request: str, *, invalid: bool = False
) -> _mcp_types.ErrorData:
    if invalid:
        return _mcp_types.ErrorData(
            code = _mcp_types.INTERNAL_ERROR,
            message = f"The caller's answer to {request} was invalid." )
    return _mcp_types.ErrorData(
        code = _mcp_types.INVALID_REQUEST,
        message = (
            f"Nobody can answer {request} here: the request belongs to no "
            "call whose caller answers it, and the client has no callback "
            "of its own." ) )


def _produce_refusal_tools( ) -> _mcp_types.ErrorData:
    return _mcp_types.ErrorData(
        code = _mcp_types.INVALID_REQUEST,
        message = (
            "Nobody can answer sampling with tools here: the request "
            "belongs to no call whose caller answers it, and the client's "
            "own sampler takes no tools." ) )


def _produce_sampling_capability( ) -> __.typx.Any:
    ''' Returns sampling capability of a relaying session: with tools. '''
    return _mcp_types.SamplingCapability(
        tools = _mcp_types.SamplingToolsCapability( ) )


def _produce_sampling_result(
    answer: object, tools: bool # noqa: FBT001
) -> __.typx.Any:
    ''' Returns the server's result of the caller's answer: the SDK's
        result as it came; else the library's conversion, or, for a
        request with tools, MCP's result with tools (its content may hold
        ``tool_use`` blocks).
    '''
    if isinstance( answer, _exchanges.SAMPLING_MODELS ): return answer
    if tools and isinstance( answer, __.cabc.Mapping ):
        try:
            return _mcp_types.CreateMessageResultWithTools.model_validate(
                answer )
        except ValueError as exception: # pydantic's validation error
            _scribe.error( "Relayed sampling with tools: %s", exception )
            return _produce_refusal( 'sampling', invalid = True )
    try: response = _exchanges.produce_sampling_response( answer )
    except _exceptions.CallbackAnswerInvalidity as exception:
        _scribe.error( "Relayed sampling: %s", exception )
        return _produce_refusal( 'sampling', invalid = True )
    return _callbacks.produce_sampling_result( response )
