# SPDX-License-Identifier: Apache-2.0

''' The gateway of a server: upstream resources, prompts and completion.

    The resources, resource templates and prompts of the upstream MCP
    servers among the ensembles are served as the server's own (prompts
    named as tools are, scoped by ensemble when names clash); completion
    and resource subscriptions go to the upstream server which has the
    prompt, template or resource; the changes upstream servers announce
    (updated resources, new lists) reach the clients subscribed or known.
    Local ensembles have none. A URI reaches the server which listed it,
    else the first whose template it matches, else the only server with
    resources, else none (``-32002``; ``-32602`` under MCP 2026-07-28).
    A URI which a listing showed (the client's or the gateway's own) goes
    to its server without listing again, until a server announces new
    resources or a session is replaced; if that server finds no such
    resource, the URI is routed afresh once. A resource is subscribed to
    upstream while a client follows it (a session subscribed to it, or a
    stream of ``subscriptions/listen`` names it): at the first, and
    unsubscribed from at the last (see ``_gatewayinterest``); an upstream
    server of MCP 2026-07-28 gets the resources on a stream of
    ``subscriptions/listen``. What goes to an upstream server is bounded
    by its ensemble's ``list_timeout``. Also the conversion of contents
    into the SDK's models.

    What an upstream server asks while it makes a prompt or reads a
    resource (elicitation, sampling, log messages) goes to the client
    which asked, as during a tool call: under MCP 2025-11-25, as the
    server's own requests; under MCP 2026-07-28, as rounds of input
    (``input_required``) of the ``prompts/get`` or ``resources/read``.
'''


import base64 as _base64
import weakref as _weakref

import anyio as _anyio

import invocables.serving.__ as __
import invocables.serving._continuations as _continuations
import invocables.serving._gatewayinterest as _gatewayinterest
import invocables.serving._gatewayroutes as _gatewayroutes
import invocables.serving._gatewaystreams as _gatewaystreams
import invocables.serving._liaisons as _liaisons
import invocables.serving._subscriptions as _subscriptions
import invocables.serving._sdk as _server_sdk
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


_Featured: __.typx.TypeAlias = tuple[ __.typx.Any, __.typx.Any ]

_ANNOUNCERS = __.types.MappingProxyType( {
    'notifications/resources/updated': 'send_resource_updated',
    'notifications/resources/list_changed': 'send_resource_list_changed',
    'notifications/prompts/list_changed': 'send_prompt_list_changed',
} )
VISITS_MAXIMUM = 1000
''' Most elicitations by URL remembered, to tell their clients when the
    visit is complete. '''

_ELICITATION_COMPLETE = 'notifications/elicitation/complete'
_RESOURCES_CHANGED = 'notifications/resources/list_changed'
# MCP's code of a resource not found up to 2025-11-25; from 2026-07-28
# (SEP-2164), that of invalid parameters.
_RESOURCE_ABSENT = -32002
_scribe = __.produce_scribe( __name__ )

scope_uri = _gatewayroutes.scope_uri


class GatewayExtension:
    ''' Handlers of resources, prompts and completion, which ask the
        upstream MCP servers among the ensembles.
    '''

    ensembles: tuple[ __.typx.Any, ... ]
    continuations: _continuations.ContinuationsManager
    subscriptions: _subscriptions.Subscriptions
    _levels: _weakref.WeakKeyDictionary[ __.typx.Any, str ]
    _listeners: _weakref.WeakSet[ __.typx.Any ]
    _visits: _weakref.WeakValueDictionary[ str, __.typx.Any ]

    async def announce_change(
        self, ensemble: str, method: str, uri: str | None
    ) -> None:
        ''' Tells clients of a change an upstream server announced: an
            updated resource to the clients subscribed to it (by its URI,
            or its URI scoped by ensemble), new lists of resources or
            prompts to the clients known, a completed elicitation (whose
            identifier is given as uri) to the client asked to visit its
            URL.
        '''
        if method == _ELICITATION_COMPLETE:
            await self._complete_visit( uri )
            return
        if method == _RESOURCES_CHANGED: self._routes.forget_routes( )
        for served in ( ( None, ) if uri is None
                        else ( uri, scope_uri( ensemble, uri ) ) ):
            await self.subscriptions.publish( method, served )
        announcer = _ANNOUNCERS.get( method )
        if announcer is None: return
        if uri is None:
            targets = [ ( connection, ( ) )
                        for connection in tuple( self._listeners ) ]
        else:
            targets = [
                ( connection, ( served, ) ) for connection, served
                in self._interests.survey_connections( ensemble, uri ) ]
        for connection, arguments in targets:
            if not await _announce( connection, announcer, arguments ):
                self._listeners.discard( connection ) # client gone

    async def complete_argument(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.CompleteResult:
        ''' Handles ``completion/complete``: asks the upstream server of
            the prompt or resource template; no values if it has none or
            refuses; its values redacted and sendable. An error if it does
            not answer within its ensemble's list timeout.
        '''
        reference = parameters.ref
        target: __.typx.Any = None
        if reference.type == 'ref/prompt':
            found = _access_prompt_names( await self._survey_prompts( ) )
            if reference.name in found:
                target, prompt = found[ reference.name ]
                reference = _mcp_types.PromptReference(
                    type = 'ref/prompt', name = prompt.name )
        else:
            target, uri = await self._find_template( str( reference.uri ) )
            reference = _mcp_types.ResourceTemplateReference(
                type = 'ref/resource', uri = uri )
        values: list[ str ] = [ ]
        if target is not None:
            arguments = None if parameters.context is None else (
                parameters.context.arguments )
            argument = {
                'name': parameters.argument.name,
                'value': parameters.argument.value }

            async def complete(
                session: __.typx.Any, redactor: __.typx.Any
            ) -> list[ str ]:
                result = await session.complete(
                    reference, argument, arguments )
                # Where completion enters: redacted, then sendable.
                return [
                    redactor.prepare( value )
                    for value in result.completion.values ]

            values = await _ask_upstream(
                target, 'completion/complete', complete ) or [ ]
        return _mcp_types.CompleteResult(
            completion = _mcp_types.Completion( values = values ) )

    def follow_resources(
        self, uris: __.cabc.Sequence[ str ]
    ) -> __.typx.AsyncContextManager[ None ]:
        ''' Returns context in which a stream of ``subscriptions/listen``
            follows resources (by URI as served): subscribed to upstream
            before it is entered, unless followed already, unsubscribed
            from once nothing follows them after it.
        '''
        return self._interests.follow_stream( uris )

    def release_streams( self ) -> None:
        ''' Ends the streams of ``subscriptions/listen`` kept open on
            upstream servers (when serving stops). '''
        self._streams.release( )

    async def retrieve_prompt(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``prompts/get``: the prompt of its upstream server,
            whose requests meanwhile go to the client.
        '''
        name = str( parameters.name )
        found = _access_prompt_names( await self._survey_prompts( ) )
        if name not in found:
            raise _sdk.produce_error(
                _mcp_types.INVALID_PARAMS,
                f"Unknown prompt {name!r}. List the prompts for the names "
                "which this server offers." )
        ensemble, prompt = found[ name ]

        async def retrieve(
            liaison: _liaisons.SessionLiaison
        ) -> _mcp_types.GetPromptResult:
            try:
                messages = await ensemble.retrieve_prompt(
                    prompt.name, parameters.arguments, context = liaison )
            except _exceptions.PromptAbsence as exception:
                raise _sdk.produce_error(
                    _mcp_types.INVALID_PARAMS, exception.reason ) from None
            return _sdk.produce_model(
                _mcp_types.GetPromptResult,
                description = prompt.description or None,
                messages = [
                    _mcp_types.PromptMessage(
                        role = __.typx.cast( __.typx.Any, message.role ),
                        content = produce_block( item ) )
                    for message in messages for item in message.content ] )

        return await self._relay( context, parameters, retrieve )

    async def retrieve_resource(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> __.typx.Any:
        ''' Handles ``resources/read``: asks the upstream server of the
            URI (the one which listed it, else the first whose template
            it matches, else the only one with resources; else the error
            of a resource not found), whose requests meanwhile go to the
            client.
        '''
        uri = str( parameters.uri )

        async def retrieve(
            liaison: _liaisons.SessionLiaison
        ) -> _mcp_types.ReadResourceResult:
            found = await _gatewayroutes.retrieve_routed(
                self._survey_featured( ), self._routes, uri,
                __.funct.partial( _retrieve, uri = uri, liaison = liaison ) )
            if found is None: raise _produce_absence( uri, context )
            contents, inner = found
            prefix = uri[ : len( uri ) - len( inner ) ]
            return _mcp_types.ReadResourceResult( contents = [
                produce_resource( item, prefix ) for item in contents
                if isinstance( item, _canisters.ResourceContent ) ] )

        return await self._relay( context, parameters, retrieve )

    async def subscribe_resource(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.EmptyResult:
        ''' Handles ``resources/subscribe`` (MCP 2025-11-25 and earlier):
            forwarded to the upstream server of the URI, as reading is (not
            found if none), or named on its stream under MCP 2026-07-28,
            unless another client follows it already; an error if it does
            not answer within its ensemble's list timeout, or if the
            session follows the most resources. A refusal is not an error:
            the server may yet announce updates.
        '''
        uri = str( parameters.uri )
        route = await self._route_uri( uri, context )
        await self._interests.follow_session(
            _access_connection( context ), uri, route )
        return _mcp_types.EmptyResult( )

    def _note_listener( self, context: __.typx.Any ) -> None:
        ''' Remembers the connection of a client of MCP 2025-11-25 or
            earlier, to tell it of changes; later clients hear them on
            their streams of ``subscriptions/listen``. '''
        if _server_sdk.is_modern_session( context ): return
        self._listeners.add( _access_connection( context ) )

    async def survey_prompts(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListPromptsResult:
        ''' Handles ``prompts/list``: the upstream servers' prompts, named
            as tools are (scoped by ensemble when names clash).
        '''
        self._note_listener( context )
        found = _access_prompt_names( await self._survey_prompts( ) )
        return _mcp_types.ListPromptsResult( prompts = [
            _sdk.produce_model(
                _mcp_types.Prompt, name = name,
                title = nullify( prompt.title ),
                description = prompt.description or None,
                arguments = [
                    _mcp_types.PromptArgument(
                        name = argument.name,
                        description = argument.description or None,
                        required = argument.required )
                    for argument in prompt.arguments ] )
            for name, ( _, prompt ) in found.items( ) ] )

    async def survey_resources(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListResourcesResult:
        ''' Handles ``resources/list``: every upstream server's (a URI
            which several offer is scoped by ensemble).
        '''
        self._note_listener( context )
        listed = await _gatewayroutes.survey_resources(
            self._survey_featured( ), self._routes )
        found = [ ( served, item ) for served, _, item in listed ]
        return _mcp_types.ListResourcesResult( resources = [
            _produce_listed( _mcp_types.Resource, resource, uri = uri )
            for uri, resource in found ] )

    async def survey_resource_templates(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.ListResourceTemplatesResult:
        ''' Handles ``resources/templates/list``: every upstream's,
            scoped as URIs are.
        '''
        found = await self._survey_scoped(
            'survey_resource_templates', 'uri_template' )
        return _sdk.produce_model(
            _mcp_types.ListResourceTemplatesResult,
            resource_templates = [
                _produce_listed(
                    _mcp_types.ResourceTemplate, template,
                    uri_template = uri )
                for uri, template in found ] )

    async def unsubscribe_resource(
        self, context: __.typx.Any, parameters: __.typx.Any
    ) -> _mcp_types.EmptyResult:
        ''' Handles ``resources/unsubscribe``: forwarded likewise, if no
            other client follows the resource (a URI not subscribed to is
            not an error).
        '''
        await self._interests.unfollow_session(
            _access_connection( context ), str( parameters.uri ) )
        return _mcp_types.EmptyResult( )

    def note_visit( self, connection: __.typx.Any, identifier: str ) -> None:
        ''' Remembers the client which accepted to visit the URL of an
            elicitation, to tell it when the visit is complete (the latest
            visits of the clients connected).
        '''
        visits = self._visits
        visits.pop( identifier, None )
        visits[ identifier ] = connection
        while len( visits ) > VISITS_MAXIMUM:
            visits.pop( next( iter( visits ) ), None )

    async def _complete_visit( self, identifier: str | None ) -> None:
        if identifier is None: return
        connection = self._visits.pop( identifier, None )
        if connection is None: return
        try:
            await _server_sdk.notify_elicitation_complete(
                connection, identifier )
        except Exception: # client gone: nothing to tell
            self._listeners.discard( connection )

    async def _find_template(
        self, uri: str
    ) -> tuple[ __.typx.Any, str ]:
        ''' Returns server of a template as served (none if unknown), with
            the template which it knows.
        '''
        templates = await _gatewayroutes.survey_scoped(
            self._survey_featured( ), 'survey_resource_templates',
            'uri_template' )
        for served, ensemble, template in templates:
            if served == uri: return ensemble, template.uri_template
        return None, uri

    async def _relay(
        self,
        context: __.typx.Any,
        parameters: __.typx.Any,
        retrieve: __.cabc.Callable[
            [ _liaisons.SessionLiaison ],
            __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ] ],
    ) -> __.typx.Any:
        ''' Retrieves with the liaison of the client, which the upstream
            server's requests reach: under MCP 2026-07-28, in rounds of
            input, as a tool call's (a request sent again with its state
            resumes the retrieval which waits).
        '''
        connection = _access_connection( context )
        level = self._levels.get( connection, 'debug' )
        note_visit = __.funct.partial( self.note_visit, connection )
        if not _server_sdk.is_modern_session( context ):
            return await retrieve( _liaisons.SessionLiaison(
                context, level, note_visit = note_visit ) )
        liaison = _continuations.InputLiaison(
            context, level, note_visit = note_visit )
        return await self.continuations.invoke(
            parameters, liaison, retrieve )

    async def _survey_prompts( self ) -> list[ _Featured ]:
        found: list[ _Featured ] = [ ]
        for ensemble in self._survey_featured( ):
            try: prompts = await ensemble.survey_prompts( )
            except _exceptions.Omnierror: continue
            found.extend( ( ensemble, prompt ) for prompt in prompts )
        return found

    @__.funct.cached_property
    def _interests( self ) -> _gatewayinterest.InterestLedger:
        ''' Interest of the clients in upstream resources (made when
            first used, as the memo). '''
        async def route(
            uris: __.cabc.Collection[ str ]
        ) -> dict[ str, _gatewayroutes.Route ]:
            return await _gatewayroutes.route_uris(
                self._survey_featured( ), uris, self._routes )
        return _gatewayinterest.InterestLedger(
            _ask_upstream, route, self._streams )

    @__.funct.cached_property
    def _routes( self ) -> _gatewayroutes.RoutesMemo:
        ''' Memo of the servers of URIs listed (made when first used: the
            server freezes its attributes once made). '''
        return _gatewayroutes.RoutesMemo( )

    @__.funct.cached_property
    def _streams( self ) -> _gatewaystreams.UpstreamStreams:
        ''' Streams of the resources subscribed to on upstream servers
            of MCP 2026-07-28 (made when first used, as the memo). '''
        return _gatewaystreams.UpstreamStreams( )

    async def _route_uri(
        self, uri: str, context: __.typx.Any
    ) -> _gatewayroutes.Route:
        ''' Returns server of a URI as served, with the URI which it
            knows: the one remembered, else as listing finds it. Raises the
            MCP error of an unknown resource if none.
        '''
        route = await _gatewayroutes.route_uri(
            self._survey_featured( ), uri, self._routes )
        if route is None: raise _produce_absence( uri, context )
        return route

    async def _survey_scoped(
        self, method: str, field: str
    ) -> list[ tuple[ str, __.typx.Any ] ]:
        ''' Returns what servers list, each with its URI as served. '''
        found = await _gatewayroutes.survey_scoped(
            self._survey_featured( ), method, field )
        return [ ( served, item ) for served, _, item in found ]

    def _survey_featured( self ) -> tuple[ __.typx.Any, ... ]:
        ''' Returns ensembles with resources and prompts (MCP servers). '''
        from ..mcp.resources import FeaturesExtension
        return tuple(
            ensemble for ensemble in self.ensembles
            if isinstance( ensemble, FeaturesExtension ) )


def nullify( value: __.Absential[ str ] ) -> str | None:
    ''' Returns value, or ``None`` if absent (as the SDK's models hold it).
    '''
    return None if __.is_absent( value ) else value


def produce_block( item: _canisters.Content ) -> __.typx.Any:
    ''' Produces content block of the SDK of a content. '''
    match item:
        case _canisters.TextContent( ):
            return _mcp_types.TextContent( type = 'text', text = item.text )
        case _canisters.ImageContent( ):
            return _sdk.produce_model(
                _mcp_types.ImageContent, type = 'image',
                data = _encode( item.data ), mime_type = item.media_type )
        case _canisters.AudioContent( ):
            return _sdk.produce_model(
                _mcp_types.AudioContent, type = 'audio',
                data = _encode( item.data ), mime_type = item.media_type )
        case _canisters.ResourceContent( ):
            return _mcp_types.EmbeddedResource(
                type = 'resource', resource = produce_resource( item ) )
        case _canisters.ResourceLinkContent( ):
            return _sdk.produce_model(
                _mcp_types.ResourceLink,
                type = 'resource_link', uri = item.uri,
                name = item.uri if __.is_absent( item.name ) else item.name,
                description = nullify( item.description ),
                mime_type = nullify( item.media_type ) )
        case _: # pragma: no cover
            return _mcp_types.TextContent(
                type = 'text', text = _canisters.render_content_text( item ) )


def produce_resource(
    item: _canisters.ResourceContent, prefix: str = ''
) -> __.typx.Any:
    ''' Produces resource contents of the SDK of a resource content, its
        URI after prefix (the scope of a URI which several servers offer).
    '''
    media_type = nullify( item.media_type )
    uri = f"{prefix}{item.uri}"
    if not __.is_absent( item.text ):
        return _sdk.produce_model(
            _mcp_types.TextResourceContents,
            uri = uri, mime_type = media_type, text = item.text )
    data = b'' if __.is_absent( item.data ) else item.data
    return _sdk.produce_model(
        _mcp_types.BlobResourceContents,
        uri = uri, mime_type = media_type, blob = _encode( data ) )


def _access_connection( context: __.typx.Any ) -> __.typx.Any:
    ''' Returns connection of a request's client, which lasts and notifies
        (no public accessor on the low-level context, mcp 2.3).
    '''
    session = context.session
    return getattr( session, '_connection', session )


def _access_prompt_names(
    found: __.cabc.Sequence[ _Featured ]
) -> dict[ str, _Featured ]:
    ''' Returns prompts by the names served: their own, or scoped by
        ensemble (``ensemble__name``) when two ensembles share one.
    '''
    counts = __.collections.Counter( prompt.name for _, prompt in found )
    return {
        ( prompt.name if counts[ prompt.name ] == 1
          else f"{ensemble.name}__{prompt.name}" ): ( ensemble, prompt )
        for ensemble, prompt in found }


async def _ask_upstream(
    ensemble: __.typx.Any, method: str,
    request: __.cabc.Callable[
        [ __.typx.Any, __.typx.Any ],
        __.cabc.Coroutine[ __.typx.Any, __.typx.Any, __.typx.Any ] ],
) -> __.typx.Any:
    ''' Returns what request (given the session of an upstream server and
        its redactor) returns, within the ensemble's list timeout; none if
        the server refuses it or is not connected. Past the timeout, logs
        and raises the MCP error to answer (the request is cancelled).
    '''
    timeout = ensemble.access_list_timeout( )
    try:
        session, redactor = ensemble.access_session_for_features( )
        with _anyio.fail_after( timeout ):
            return await request( session, redactor )
    except ( _exceptions.Omnierror, _sdk.Error ): return None
    except TimeoutError:
        _scribe.warning(
            "Upstream server %r did not answer %s within %s seconds.",
            ensemble.name, method, timeout )
        raise _sdk.produce_error(
            _mcp_types.INTERNAL_ERROR,
            f"The upstream server {ensemble.name!r} did not answer "
            f"{method} within {timeout} seconds (its list timeout)."
        ) from None


async def _announce(
    connection: __.typx.Any, announcer: str, arguments: tuple[ str, ... ]
) -> bool:
    ''' Sends notification to client; returns whether it could. '''
    try: await getattr( connection, announcer )( *arguments )
    except Exception: return False
    return True


def _encode( data: bytes ) -> str:
    return _base64.b64encode( data ).decode( 'ascii' )


def _produce_absence( uri: str, context: __.typx.Any ) -> __.typx.Any:
    ''' Produces MCP error of a resource which no upstream server has,
        of the session's version (``-32002``, or ``-32602`` from MCP
        2026-07-28).
    '''
    code = _mcp_types.INVALID_PARAMS if _server_sdk.is_modern_session(
        context ) else _RESOURCE_ABSENT
    return _sdk.produce_error(
        code, f"Unknown resource {uri!r}.", { 'uri': uri } )


def _produce_listed(
    model: __.typx.Any, entry: __.typx.Any, **fields: __.typx.Any
) -> __.typx.Any:
    ''' Produces SDK model of listed upstream resource or template. '''
    return _sdk.produce_model(
        model, name = entry.name, title = nullify( entry.title ),
        description = entry.description or None,
        mime_type = nullify( entry.media_type ), **fields )


async def _retrieve(
    route: _gatewayroutes.Route,
    *,
    uri: str,
    liaison: _liaisons.SessionLiaison,
) -> _canisters.ContentSequence:
    ''' Returns contents of a resource (its URI as served) from its
        server, whose requests meanwhile go to the liaison. Raises the MCP
        error of a failed connection; passes on the server's absence of
        the resource.
    '''
    ensemble, inner = route
    try: return await ensemble.retrieve_resource( inner, context = liaison )
    except _exceptions.ConnectionFailure as exception:
        raise _sdk.produce_error(
            _mcp_types.INTERNAL_ERROR,
            f"Could not read resource {uri!r}. {exception}" ) from None
