# SPDX-License-Identifier: Apache-2.0

''' How a served tool asks its client: log messages, progress, elicitation
    and sampling, through the session of the calling client.

    :py:class:`SessionLiaison` answers an ordinary call, on the stream of
    its request; :py:class:`TaskLiaison` answers a call run as a task,
    whose request was answered: on the session's own stream, each message
    naming the task; its requests for input (MCP 2025-11-25) on the stream
    of a ``tasks/result``.
'''


import warnings as _warnings

import invocables.serving.__ as __
import invocables.serving._sdk as _server_sdk
import invocables.exceptions as _exceptions
import invocables.mcp.exchanges as _exchanges
from ..mcp._sdk import produce_error as _produce_error
from ..mcp._sdk import types as _mcp_types


LEVELS = (
    'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert',
    'emergency' )
''' Levels of log messages, least first. '''
SAMPLING_TOKENS_DEFAULT = 1000

_RELATED_TASK = 'io.modelcontextprotocol/related-task'

Asker: __.typx.TypeAlias = __.cabc.Callable[
    [ str, __.cabc.Callable[
        [ __.typx.Any ], __.cabc.Awaitable[ __.typx.Any ] ] ],
    __.cabc.Awaitable[ __.typx.Any ] ]
''' Asks the client, for a task (with a status message), by a sender of
    the request on the stream of a ``tasks/result``; returns the answer.
'''


class SessionLiaison:
    ''' Answers a local tool's requests through the calling client's
        session: logging, progress, elicitation, sampling.
    '''

    def __init__(
        self,
        context: __.typx.Any,
        level: str,
        note_visit: __.cabc.Callable[ [ str ], None ] | None = None,
    ):
        self.context = context
        self.level = level
        # Told the identifier of each visit of a URL the client accepted.
        self.note_visit = note_visit

    async def log(
        self, level: str, data: object, logger: str | None
    ) -> None:
        ''' Sends ``notifications/message`` if level is enough. '''
        admitted = _admit_level( level, self.level )
        if admitted is None: return
        await self._send_log( admitted, data, logger )

    async def report_progress(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        ''' Sends progress, if the client asked for it. '''
        await self.context.session.report_progress( progress, total, message )

    async def elicit(
        self,
        message: str,
        schema: __.cabc.Mapping[ str, __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Sends ``elicitation/create``; returns the client's answer.
            Options are of MCP 2026-07-28 (``key``): ignored.
        '''
        return await self.context.session.elicit_form(
            message, __.values.thaw_json( schema ),
            related_request_id = self.context.request_id )

    async def elicit_url(
        self, message: str, url: str, identifier: str
    ) -> __.typx.Any:
        ''' Sends ``elicitation/create`` of mode ``url``; returns the
            client's answer. A client which did not declare it
            (``elicitation.url``) is not asked: the error says so. A visit
            accepted is noted, so that the client learns when it is
            complete.
        '''
        session = self.context.session
        capabilities = session.client_capabilities
        elicitation = getattr( capabilities, 'elicitation', None )
        if getattr( elicitation, 'url', None ) is None:
            raise _produce_error(
                _mcp_types.INVALID_PARAMS,
                "The client does not support elicitation of mode 'url'." )
        result = await session.elicit_url(
            message, url, identifier,
            related_request_id = self.context.request_id )
        return note_visit( self.note_visit, identifier, result )

    async def sample(
        self, messages: __.cabc.Sequence[ __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Sends ``sampling/createMessage``; returns the answer. Messages
            are text (from the user) or MCP sampling messages (mappings);
            ``tools`` and ``tool_choice`` are MCP's (mappings or the SDK's
            models), which the client must support (``sampling.tools``),
            else the SDK refuses them.
        '''
        options.pop( 'key', None ) # of MCP 2026-07-28
        samples, options = produce_sampling( messages, options )
        with _warnings.catch_warnings( ):
            _warnings.simplefilter( 'ignore', UserWarning ) # deprecated
            return await self.context.session.create_message(
                samples, related_request_id = self.context.request_id,
                **options )

    async def survey_roots( self, **options: __.typx.Any ) -> __.typx.Any:
        ''' Sends ``roots/list``; returns the client's answer. '''
        return await self.context.session.list_roots( )

    async def _send_log(
        self, level: str, data: object, logger: str | None
    ) -> None:
        ''' Sends ``notifications/message`` of an admitted level. '''
        with _warnings.catch_warnings( ):
            _warnings.simplefilter( 'ignore', UserWarning ) # deprecated
            await self.context.session.send_log_message(
                level, data, logger,
                related_request_id = self.context.request_id )


class TaskLiaison( SessionLiaison ):
    ''' Answers the requests of a tool run as a task, whose request was
        answered: on the session's own stream, naming the task (``_meta``
        ``io.modelcontextprotocol/related-task``), while the client is
        there. Progress goes to the token of the request which started
        the task, and its message becomes the task's status message (by
        ``note``). Elicitation and sampling wait for the client's next
        ``tasks/result``, on whose stream they go (by ``ask``, which makes
        the task wait for input meanwhile); without ``ask``, and for
        elicitation of mode ``url``, refused.
    '''

    def __init__(
        self,
        context: __.typx.Any,
        level: str,
        identifier: str,
        token: str | int | None,
        note: __.cabc.Callable[ [ str ], __.cabc.Awaitable[ None ] ],
        ask: Asker | None = None,
    ):
        super( ).__init__( context, level )
        self.identifier = identifier
        self.token = token
        self.note = note
        self.ask = ask

    async def report_progress(
        self, progress: float, total: float | None, message: str | None
    ) -> None:
        ''' Notes message as the task's; sends progress if the request
            which started the task asked for it.
        '''
        if message is not None: await self.note( message )
        if self.token is None: return
        await self._notify( _mcp_types.ProgressNotification(
            method = 'notifications/progress',
            params = _mcp_types.ProgressNotificationParams.model_validate( {
                'progressToken': self.token, 'progress': progress,
                'total': total, 'message': message,
                '_meta': self._produce_meta( ) } ) ) )

    async def elicit(
        self,
        message: str,
        schema: __.cabc.Mapping[ str, __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Sends ``elicitation/create`` on the stream of a
            ``tasks/result``; returns the client's answer, if it accepts
            with content which matches schema (else raises the error of
            invalid parameters). Options are of MCP 2026-07-28 (``key``):
            ignored.
        '''
        parameters = {
            'message': message,
            'requestedSchema': __.values.thaw_json( schema ) }
        answer = await self._ask_task(
            'elicitation', f"The tool asks the user: {message}",
            'elicitation/create', parameters, _mcp_types.ElicitResult )
        return validate_elicitation(
            parameters[ 'requestedSchema' ], answer,
            "The answer to elicitation/create" )

    async def elicit_url(
        self, message: str, url: str, identifier: str
    ) -> __.typx.Any:
        ''' Refuses: a task does not ask its client (yet). '''
        raise _exceptions.LiaisonAbsence( 'elicitation' )

    async def sample(
        self, messages: __.cabc.Sequence[ __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Sends ``sampling/createMessage`` on the stream of a
            ``tasks/result``; returns the answer. Messages and options as
            those of an ordinary call.
        '''
        options.pop( 'key', None ) # of MCP 2026-07-28
        samples, options = produce_sampling( messages, options )
        parameters = {
            _produce_camel( name ): _produce_wire( value )
            for name, value in options.items( ) if value is not None }
        parameters[ 'messages' ] = _produce_wire( samples )
        return await self._ask_task(
            'sampling', "The tool asks the client's model.",
            'sampling/createMessage', parameters,
            _mcp_types.CreateMessageResult )

    async def _ask_task(
        self,
        channel: str,
        status: str,
        method: str,
        parameters: dict[ str, __.typx.Any ],
        result: type[ __.typx.Any ],
    ) -> __.typx.Any:
        ''' Sends request, naming the task, on the stream of the client's
            next ``tasks/result``; returns the answer. Refused without
            ``ask``.
        '''
        if self.ask is None: raise _exceptions.LiaisonAbsence( channel )
        parameters[ '_meta' ] = self._produce_meta( )

        async def send( context: __.typx.Any ) -> __.typx.Any:
            return await _server_sdk.send_request(
                context, method, parameters, result )

        return await self.ask( status, send )

    async def _notify( self, notification: __.typx.Any ) -> None:
        with __.ctxl.suppress( Exception ): # client gone: the task goes on
            await self.context.session.send_notification( notification )

    def _produce_meta( self ) -> dict[ str, __.typx.Any ]:
        return { _RELATED_TASK: { 'taskId': self.identifier } }

    async def _send_log(
        self, level: str, data: object, logger: str | None
    ) -> None:
        ''' Sends ``notifications/message`` naming the task. '''
        parameters = _mcp_types.LoggingMessageNotificationParams
        await self._notify( _mcp_types.LoggingMessageNotification(
            method = 'notifications/message',
            params = parameters.model_validate( {
                'level': level, 'data': data, 'logger': logger,
                '_meta': self._produce_meta( ) } ) ) )


def note_visit(
    noter: __.cabc.Callable[ [ str ], None ] | None,
    identifier: str,
    result: __.typx.Any,
) -> __.typx.Any:
    ''' Returns the client's answer to a URL to visit, noting the visit
        if the client accepted it (so that it learns when it is complete).
    '''
    if noter is not None and result.action == 'accept': noter( identifier )
    return result


def validate_elicitation(
    schema: __.typx.Any, answer: __.typx.Any, subject: str
) -> __.typx.Any:
    ''' Returns answer to an elicitation, unless it accepts with content
        which breaks the requested schema: then raises the error of
        invalid parameters, naming subject (the answer), where and why.
    '''
    content = getattr( answer, 'content', None )
    if schema is None or content is None: return answer
    if getattr( answer, 'action', None ) != 'accept': return answer
    # A schema which cannot be checked (an upstream server's) is not.
    try: breach = _exchanges.validate_content( schema, content )
    except Exception: return answer
    if breach is None: return answer
    where, _, reason = breach
    raise _produce_error(
        _mcp_types.INVALID_PARAMS,
        f"{subject} does not match the requested schema at {where}: "
        f"{reason}." )


def produce_sampling(
    messages: __.cabc.Sequence[ __.typx.Any ],
    options: __.cabc.Mapping[ str, __.typx.Any ],
) -> tuple[ list[ __.typx.Any ], dict[ str, __.typx.Any ] ]:
    ''' Produces the MCP sampling messages of messages (text from the
        user, or MCP sampling messages as mappings) and the options of
        the request, tools and tool choice as the SDK's models.
    '''
    samples = [
        _mcp_types.SamplingMessage(
            role = 'user',
            content = _mcp_types.TextContent( type = 'text', text = message ) )
        if isinstance( message, str )
        else _mcp_types.SamplingMessage.model_validate( message )
        for message in messages ]
    options = dict( options )
    options.setdefault( 'max_tokens', SAMPLING_TOKENS_DEFAULT )
    if options.get( 'tools' ) is not None:
        options[ 'tools' ] = [
            _mcp_types.Tool.model_validate( tool )
            for tool in options[ 'tools' ] ]
    if options.get( 'tool_choice' ) is not None:
        options[ 'tool_choice' ] = _mcp_types.ToolChoice.model_validate(
            options[ 'tool_choice' ] )
    return samples, options


def _produce_camel( name: str ) -> str:
    ''' Returns wire name (camelCase) of a keyword (snake_case). '''
    first, *rest = name.split( '_' )
    return first + ''.join( part.capitalize( ) for part in rest )


def _produce_wire( value: __.typx.Any ) -> __.typx.Any:
    ''' Returns JSON of value: the SDK's models dumped, by wire names. '''
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ __.typx.Any ], value )
        return [ _produce_wire( item ) for item in items ]
    if hasattr( value, 'model_dump' ):
        return value.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    return value


def _admit_level( level: str, minimum: str ) -> str | None:
    ''' Returns level of message (``info`` if unknown), if not under the
        least level the client wants.
    '''
    if level not in LEVELS: level = 'info'
    if minimum not in LEVELS: minimum = 'debug'
    if LEVELS.index( level ) < LEVELS.index( minimum ): return None
    return level
