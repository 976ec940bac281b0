# SPDX-License-Identifier: Apache-2.0

''' Resources and prompts of MCP servers, and the features of a session.

    :py:class:`FeaturesExtension` gives server ensembles their methods for
    resources (``survey_resources``, ``survey_resource_templates``,
    ``retrieve_resource``), prompts (``survey_prompts``,
    ``retrieve_prompt``), roots and the log level of the server. Listings
    follow every page. Each request is bounded by the list timeout of the
    ensemble.

    What a server lists and gives (its prompts, resources and templates,
    the messages of a prompt, the contents of a resource) is redacted by
    the connection's redactor and made sendable by the one normaliser
    (:py:func:`invocables.canisters.normalize_text`,
    :py:func:`invocables.canisters.validate_content`) where it enters,
    here, so that the application, a model and the clients of ``serve``
    alike get it so. What retrieving needs as it is (the names of prompts
    and their arguments, URIs and templates of URIs) is never changed: an
    entry where it holds a secret, or is not sendable, is left out, with a
    warning.

    A prompt or a resource read with the caller's context (``context``)
    relays what the server asks meanwhile (elicitation, sampling, log
    messages) to that caller, as a tool call of a relaying ensemble does
    (see :py:mod:`invocables.mcp._relays`): under ``serve``, to the client
    which asked for the prompt or the resource. The caller's answers count
    within the list timeout.
'''


import anyio as _anyio

import invocables.mcp.__ as __
import invocables.mcp.callbacks as _callbacks
import invocables.mcp._inputs as _inputs
import invocables.mcp.listings as _listings
import invocables.mcp._relays as _relays
import invocables.mcp.redaction as _redaction
import invocables.mcp.results as _results
import invocables.mcp._sdk as _sdk
from ._sdk import Error as _MCPError
from ._sdk import types as _mcp_types
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions


_CONNECTION_CLOSED = -32000
_CONTEXT_DOCUMENTATION = '''
    Context of the caller (an invocation's context, or a liaison: what
    has ``elicit``, ``elicit_url``, ``sample`` and ``log``), to which the
    server's requests meanwhile are relayed, if the ensemble relays
    (``configure_relay``). None: the ensemble's own callbacks answer. '''
_scribe = __.produce_scribe( __name__ )


class ResourceDescription( __.immut.DataclassObject ):
    ''' What a server says of one of its resources. '''

    uri: str
    name: str
    title: __.Absential[ str ] = __.absent
    description: str = ''
    media_type: __.Absential[ str ] = __.absent
    size: __.Absential[ int ] = __.absent


class ResourceTemplateDescription( __.immut.DataclassObject ):
    ''' What a server says of a template of resource URIs (RFC 6570). '''

    uri_template: str
    name: str
    title: __.Absential[ str ] = __.absent
    description: str = ''
    media_type: __.Absential[ str ] = __.absent


class PromptArgument( __.immut.DataclassObject ):
    ''' Argument of a prompt. '''

    name: str
    description: str = ''
    required: bool = False


class PromptDescription( __.immut.DataclassObject ):
    ''' What a server says of one of its prompts. '''

    name: str
    title: __.Absential[ str ] = __.absent
    description: str = ''
    arguments: tuple[ PromptArgument, ... ] = ( )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class PromptMessage:
    ''' Message of a prompt: role and neutral content canisters. '''

    role: str
    content: _canisters.ContentSequence


class FeaturesExtension:
    ''' Resources, prompts, roots and logging of an MCP server ensemble. '''

    name: str
    features: _callbacks.Features

    def access_session_for_features( self ) -> __.typx.Any:
        ''' Returns live session and its redactor. '''
        raise NotImplementedError # pragma: no cover

    def access_list_timeout( self ) -> float:
        ''' Returns seconds allowed to one listing request. '''
        raise NotImplementedError # pragma: no cover

    def access_relay_for_features( self ) -> '_relays.Relay | None':
        ''' Returns relay of the live session, if it relays. '''
        return None

    async def configure_logging(
        self,
        level: __.typx.Annotated[
            _callbacks.LoggingLevels,
            __.ddoc.Doc( ''' Least severe level the server should send. ''' ),
        ],
    ) -> None:
        ''' Asks server to send log messages of level and above.

            The level is kept and asked again after each reconnection.
        '''
        self.features.log_level = level
        session, redactor = self.access_session_for_features( )
        await self._request(
            _callbacks.set_logging_level( session, level ), redactor )

    async def configure_roots(
        self,
        roots: __.typx.Annotated[
            __.cabc.Iterable[ _callbacks.Root ],
            __.ddoc.Doc( ''' Paths or URIs the server may work in. ''' ),
        ],
    ) -> None:
        ''' Replaces roots and notifies server (``roots/list_changed``).

            Only for ensembles produced with ``roots``: the capability is
            declared when the session begins.
        '''
        if __.is_absent( self.features.roots ):
            raise _exceptions.ConfigurationInvalidity(
                f"MCP ensemble {self.name!r} 'roots'",
                "give roots to produce_ensemble to change them later; the "
                "roots capability is declared when the session begins." )
        self.features.roots = _callbacks.produce_root_uris( roots )
        session, redactor = self.access_session_for_features( )
        with _callbacks.suppress_deprecation( ):
            await self._request(
                session.send_roots_list_changed( ), redactor )

    async def retrieve_prompt(
        self,
        name: __.typx.Annotated[
            str, __.ddoc.Doc( ''' Name of prompt on server. ''' ) ],
        arguments: __.typx.Annotated[
            __.cabc.Mapping[ str, str ] | None,
            __.ddoc.Doc( ''' Values of the prompt's arguments. ''' ),
        ] = None,
        *,
        context: __.typx.Annotated[
            __.typx.Any,
            __.ddoc.Doc( _CONTEXT_DOCUMENTATION ),
        ] = None,
    ) -> tuple[ PromptMessage, ...]:
        ''' Returns messages of prompt, with arguments filled in.

            Raises :py:class:`invocables.exceptions.PromptAbsence` if the
            server knows no such prompt or refuses the arguments, or
            answers out of shape (the account of its faults redacted and
            abbreviated).
        '''
        session, redactor = self.access_session_for_features( )
        try:
            result = await self._request( _inputs.get_prompt(
                session, name,
                None if arguments is None else dict( arguments ),
                redactor.redact ), redactor, context )
        except _MCPError as exception:
            raise _exceptions.PromptAbsence(
                self.name, name, _results.produce_excerpt(
                    exception.error.message, redactor.redact ) ) from None
        except ValueError as exception: # its answer is out of shape
            if isinstance( exception, _exceptions.Omnierror ): raise
            raise _exceptions.PromptAbsence(
                self.name, name,
                _produce_flaw( redactor, exception ) ) from None
        try:
            return tuple(
                PromptMessage(
                    role = message.role,
                    content = _seal( redactor, (
                        _results.produce_content( message.content ), ) ) )
                for message in result.messages )
        except _exceptions.ResultInvalidity as exception:
            raise _exceptions.PromptAbsence(
                self.name, name, _results.produce_excerpt(
                    str( exception ), redactor.redact ) ) from None

    async def retrieve_resource(
        self,
        uri: __.typx.Annotated[
            str, __.ddoc.Doc( ''' URI of resource on server. ''' ) ],
        *,
        context: __.typx.Annotated[
            __.typx.Any,
            __.ddoc.Doc( _CONTEXT_DOCUMENTATION ),
        ] = None,
    ) -> _canisters.ContentSequence:
        ''' Returns contents of resource, as resource canisters.

            Raises :py:class:`invocables.exceptions.ResourceAbsence` if the
            server knows no resource at the URI, or answers out of shape
            (the account of its faults redacted and abbreviated).
        '''
        session, redactor = self.access_session_for_features( )
        try:
            result = await self._request(
                _inputs.read_resource( session, uri, redactor.redact ),
                redactor, context )
        except _MCPError as exception:
            raise _exceptions.ResourceAbsence(
                self.name, redactor.redact( uri ), _results.produce_excerpt(
                    exception.error.message, redactor.redact ) ) from None
        except ValueError as exception: # its answer is out of shape
            if isinstance( exception, _exceptions.Omnierror ): raise
            raise _exceptions.ResourceAbsence(
                self.name, redactor.redact( uri ),
                _produce_flaw( redactor, exception ) ) from None
        try:
            return _seal( redactor, tuple(
                _results.produce_content( _sdk.produce_model(
                    _mcp_types.EmbeddedResource,
                    type = 'resource', resource = contents ) )
                for contents in result.contents ) )
        except _exceptions.ResultInvalidity as exception:
            raise _exceptions.ResourceAbsence(
                self.name, redactor.redact( uri ), _results.produce_excerpt(
                    str( exception ), redactor.redact ) ) from None

    async def survey_prompts( self ) -> tuple[ PromptDescription, ... ]:
        ''' Returns descriptions of the prompts of server, every page.

            Their texts are redacted and sendable (not the names, which
            retrieving needs); a prompt whose name, or an argument's,
            holds a secret of the connection or is not sendable is left
            out, with a warning.
        '''
        session, redactor = self.access_session_for_features( )
        prompts = await self._list(
            session.list_prompts, redactor, 'prompts' )
        prepare = redactor.prepare
        prompts = [
            prompt for prompt in prompts
            if not _is_withheld( self.name, 'prompt', redactor.redact, (
                prompt.name, *(
                    argument.name for argument in prompt.arguments or ( ) )
            ) ) ]
        return tuple(
            PromptDescription(
                name = prompt.name,
                title = _absentify( prompt.title, prepare ),
                description = prepare( prompt.description or '' ),
                arguments = tuple(
                    PromptArgument(
                        name = argument.name,
                        description = prepare( argument.description or '' ),
                        required = bool( argument.required ) )
                    for argument in prompt.arguments or ( ) ) )
            for prompt in prompts )

    async def survey_resource_templates(
        self
    ) -> tuple[ ResourceTemplateDescription, ... ]:
        ''' Returns templates of resource URIs of server, every page.

            Their texts are redacted and sendable (not the templates,
            which reading needs: one which holds a secret of the
            connection, or is not sendable, is left out, with a warning).
        '''
        session, redactor = self.access_session_for_features( )
        templates = await self._list(
            session.list_resource_templates, redactor,
            'resource_templates' )
        found = (
            ( _sdk.access_field( template, 'uri_template' ), template )
            for template in templates )
        return tuple(
            ResourceTemplateDescription(
                uri_template = uri, **_describe_listed( template, redactor ) )
            for uri, template in found
            if not _is_withheld(
                self.name, 'resource template', redactor.redact_link,
                ( uri, ) ) )

    async def survey_resources( self ) -> tuple[ ResourceDescription, ... ]:
        ''' Returns descriptions of the resources of server, every page.

            Their texts are redacted and sendable (not the URIs, which
            reading needs: a resource whose URI holds a secret of the
            connection, or is not sendable, is left out, with a warning).
        '''
        session, redactor = self.access_session_for_features( )
        resources = await self._list(
            session.list_resources, redactor, 'resources' )
        found = ( ( str( resource.uri ), resource ) for resource in resources )
        return tuple(
            ResourceDescription(
                uri = uri, size = _absentify( resource.size ),
                **_describe_listed( resource, redactor ) )
            for uri, resource in found
            if not _is_withheld(
                self.name, 'resource', redactor.redact_link, ( uri, ) ) )

    async def _list(
        self,
        lister: __.cabc.Callable[ ..., __.typx.Any ],
        redactor: __.typx.Any,
        attribute: str,
    ) -> list[ __.typx.Any ]:
        ''' Lists every page, all within the list timeout, as the tools
            are listed: a server which gives new cursors for ever is cut
            off at the deadline, not after a thousand pages.
        '''
        async def list_page( params: __.typx.Any ) -> __.typx.Any:
            return await self._request( lister( params = params ), redactor )
        timeout = self.access_list_timeout( )
        try:
            with _anyio.fail_after( timeout ):
                return await _listings.survey_pages(
                    self.name, list_page, attribute )
        except TimeoutError:
            raise _exceptions.ConnectionFailure(
                self.name,
                f"the server did not list its {attribute} within {timeout} "
                "seconds." ) from None

    async def _request(
        self,
        awaitable: __.cabc.Awaitable[ __.typx.Any ],
        redactor: __.typx.Any,
        context: __.typx.Any = None,
    ) -> __.typx.Any:
        ''' Awaits request within the list timeout; maps lost sessions;
            redacts the server's errors. With the caller's context, the
            server's requests meanwhile go to the caller, if the session
            relays.
        '''
        timeout = self.access_list_timeout( )
        relay = None if context is None else (
            self.access_relay_for_features( ) )
        try:
            with (
                _anyio.fail_after( timeout ),
                _relays.track( relay, context ),
            ): return await awaitable
        except TimeoutError:
            raise _exceptions.ConnectionFailure(
                self.name,
                f"the server did not answer within {timeout} "
                "seconds." ) from None
        except _MCPError as exception:
            if exception.error.code != _CONNECTION_CLOSED:
                raise _redact_error( redactor, exception ) from None
            raise _exceptions.ConnectionFailure(
                self.name, "the session was closed." ) from None
        except ( _anyio.ClosedResourceError, _anyio.BrokenResourceError ):
            raise _exceptions.ConnectionFailure(
                self.name, "the session was closed." ) from None


def _is_withheld(
    server: str,
    kind: str,
    redact: __.cabc.Callable[ [ str ], str ],
    names: __.cabc.Sequence[ str ],
) -> bool:
    ''' Returns whether one of the names of an entry of a listing (of a
        prompt and its arguments, the URI of a resource or template)
        holds a secret or is not sendable (warns then: retrieving needs
        the name as it is, and no one may see it, or it cannot go out).
    '''
    if any( redact( name ) != name for name in names ):
        reason = 'holds a secret of the connection'
    elif any(
        _canisters.normalize_text( name ) is not name for name in names
    ): reason = 'is not valid Unicode (lone surrogates)'
    else: return False
    subject = (
        'its name, or the name of an argument,' if kind == 'prompt'
        else 'its URI' )
    _scribe.warning(
        "MCP server %r: %s %r left out: %s %s.",
        server, kind, _canisters.normalize_text( redact( names[ 0 ] ) ),
        subject, reason )
    return True


def _absentify(
    value: __.typx.Any, redact: __.cabc.Callable[ [ str ], str ] | None = None
) -> __.typx.Any:
    if value is None: return __.absent
    return value if redact is None else redact( value )


def _describe_listed(
    entry: __.typx.Any, redactor: __.typx.Any
) -> dict[ str, __.typx.Any ]:
    ''' Returns what a server says of a resource or template it lists:
        name, title, description, media type; redacted and sendable. '''
    prepare = redactor.prepare
    return {
        'name': prepare( entry.name ),
        'title': _absentify( entry.title, prepare ),
        'description': prepare( entry.description or '' ),
        'media_type': _absentify(
            _sdk.access_field( entry, 'mime_type' ), prepare ) }


def _produce_flaw( redactor: __.typx.Any, exception: ValueError ) -> str:
    ''' Returns why a server's answer is refused: the SDK's account of
        its faults, redacted and abbreviated. '''
    account = _results.produce_excerpt( str( exception ), redactor.redact )
    return f"its answer is not a valid MCP result: {account}"


def _redact_error(
    redactor: __.typx.Any, exception: _MCPError
) -> _MCPError:
    ''' Returns error of server with its message redacted and
        abbreviated, its data redacted. '''
    error = exception.error
    return _sdk.produce_error(
        error.code, _results.produce_excerpt( error.message, redactor.redact ),
        _redaction.redact_json(
            redactor.redact, error.data, _results.DATA_DEPTH_MAXIMUM ) )


def _seal(
    redactor: __.typx.Any, contents: _canisters.ContentSequence
) -> _canisters.ContentSequence:
    ''' Returns contents of a prompt or a resource redacted (binary data
        too), then sendable (the one normaliser of results, unbounded in
        size: the transport bounds what a server sends). Raises
        :py:class:`invocables.exceptions.ResultInvalidity` if they are
        deeper than results may be. '''
    if not redactor.is_vacant( ):
        contents = tuple(
            _results.redact_content( redactor, content )
            for content in contents )
    return _canisters.validate_content( contents, size_maximum = None )
