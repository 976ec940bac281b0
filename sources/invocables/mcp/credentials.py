# SPDX-License-Identifier: Apache-2.0

''' The kinds of authorization which an application gives an MCP ensemble.

    Records only: a bearer token, OAuth client credentials, the OAuth
    authorization code grant, enterprise-managed authorization, workload
    identity federation; and the
    protocol of the storage of tokens. The flows are in
    :py:mod:`invocables.mcp.authorization`, which also offers these names.
'''


import os as _os

import invocables.mcp.__ as __
import invocables.mcp._oauth as _oauth
import invocables.mcp.configuration as _configuration


class TokenStorage( __.typx.Protocol ):
    ''' Keeps tokens and client registration of one server.

        The ``mcp`` SDK's protocol: values are its ``OAuthToken`` and
        ``OAuthClientInformationFull`` models.
    '''

    async def get_tokens( self ) -> __.typx.Any: ...

    async def set_tokens( self, tokens: __.typx.Any ) -> None: ...

    async def get_client_info( self ) -> __.typx.Any: ...

    async def set_client_info( self, client_info: __.typx.Any ) -> None: ...


RedirectHandler: __.typx.TypeAlias = __.cabc.Callable[
    [ str ], __.cabc.Awaitable[ None ] ]


CallbackHandler: __.typx.TypeAlias = __.cabc.Callable[
    [ ], __.cabc.Awaitable[ str ] ]


Storage: __.typx.TypeAlias = TokenStorage | str | _os.PathLike[ str ]


Suspension: __.typx.TypeAlias = __.cabc.Callable[
    [ ], __.ctxl.AbstractContextManager[ None ] ]


class BearerAuthorization( __.immut.DataclassObject ):
    ''' Static bearer token, sent in the ``Authorization`` header.

        ``token`` is best written ``env:NAME``: it is read from the
        environment at connect time.
    '''

    token: str

    def __repr__( self ) -> str:
        return f"{type( self ).__name__}( token = {_show( self.token )} )"


class ClientCredentialsAuthorization( __.immut.DataclassObject ):
    ''' OAuth client credentials grant (machine to machine).

        The client authenticates with ``client_secret`` (best written
        ``env:NAME``), or with ``private_key`` (``private_key_jwt``: a JWT
        signed by the key, RFC 7523): a PEM key written ``env:NAME``, a path
        to a PEM file, or the PEM text itself. ``signing_algorithm`` follows
        the key (RS256, ES256, ES384, ES512, EdDSA) unless given.
    '''

    client_id: str
    client_secret: __.Absential[ str ] = __.absent
    scope: __.Absential[ str ] = __.absent
    issuer: __.Absential[ str ] = __.absent
    storage: __.Absential[ Storage ] = __.absent
    private_key: __.Absential[ str ] = __.absent
    signing_algorithm: __.Absential[ str ] = __.absent

    def __repr__( self ) -> str:
        credentials = ''.join(
            f", {label} = {_show( value )}" for label, value in (
                ( 'client_secret', self.client_secret ),
                ( 'private_key', self.private_key ) )
            if not __.is_absent( value ) )
        return (
            f"{type( self ).__name__}( client_id = {self.client_id!r}"
            f"{credentials} )" )


class CodeAuthorization( __.immut.DataclassObject ):
    ''' OAuth authorization code grant with PKCE, for a user.

        ``redirect_handler`` receives the authorization URL to show or open;
        ``callback_handler`` returns the URL (with ``code`` and ``state``)
        the browser was redirected to, at ``redirect_uri``.

        The client is registered dynamically, unless given: ``client_id``
        (and ``client_secret``, best written ``env:NAME``, for a
        confidential client) of a client registered beforehand, or
        ``client_metadata_url``, the HTTPS URL of a client ID metadata
        document, used as client ID by servers which accept such documents
        (others register the client dynamically).
    '''

    redirect_handler: RedirectHandler
    callback_handler: CallbackHandler
    redirect_uri: str
    scope: __.Absential[ str ] = __.absent
    client_name: str = __.package_name
    storage: __.Absential[ Storage ] = __.absent
    client_id: __.Absential[ str ] = __.absent
    client_secret: __.Absential[ str ] = __.absent
    client_metadata_url: __.Absential[ str ] = __.absent

    def __repr__( self ) -> str:
        return (
            f"{type( self ).__name__}( redirect_uri = "
            f"{self.redirect_uri!r}{_show_client( self.client_id )} )" )


class EnterpriseAuthorization( __.immut.DataclassObject ):
    ''' Enterprise-managed authorization (cross-app access, SEP-990).

        The user's ``identity_token`` (an OpenID Connect ID token from the
        enterprise identity provider, best written ``env:NAME``) is
        exchanged at ``identity_provider_token_endpoint`` (RFC 8693) for an
        identity assertion grant (ID-JAG) addressed to the MCP server's
        authorization server, ``issuer``; the grant then buys an access
        token there (RFC 7523 JWT bearer grant), with the confidential
        client ``client_id`` and ``client_secret`` registered beforehand.
        ``identity_provider_client_id`` (and ``_secret``) authenticate the
        client at the identity provider, where it needs it. The issuer is
        configuration: the MCP server is never asked where to send the
        grant. Needs the ``mcp`` SDK 2.x.
    '''

    identity_token: str
    identity_provider_token_endpoint: str
    issuer: str
    client_id: str
    client_secret: str
    identity_provider_client_id: __.Absential[ str ] = __.absent
    identity_provider_client_secret: __.Absential[ str ] = __.absent
    scope: __.Absential[ str ] = __.absent
    storage: __.Absential[ Storage ] = __.absent

    def __repr__( self ) -> str:
        return (
            f"{type( self ).__name__}( issuer = {self.issuer!r}, "
            f"client_id = {self.client_id!r}, "
            f"identity_token = {_show( self.identity_token )} )" )


class WorkloadAuthorization( __.immut.DataclassObject ):
    ''' Workload identity federation (SEP-1933): no user, no secret.

        The workload's own JWT, which its platform issues (a Kubernetes
        projected service account token, a SPIFFE JWT-SVID, a cloud
        identity token), buys an access token at the authorization server
        which the MCP server names (RFC 7523 JWT bearer grant).
        ``assertion`` is that JWT: best a file, which the platform renews
        and which is read again for each grant (a path, ``~`` expanded),
        or ``env:NAME``, or the JWT itself. ``client_id`` names the client
        where the authorization server asks for one; ``issuer``, if given,
        is the only authorization server the JWT is sent to. A refused
        grant is an error at once: it is not tried again, nor another
        grant tried in its stead.
    '''

    assertion: str
    client_id: __.Absential[ str ] = __.absent
    scope: __.Absential[ str ] = __.absent
    issuer: __.Absential[ str ] = __.absent
    storage: __.Absential[ Storage ] = __.absent

    def __repr__( self ) -> str:
        return (
            f"{type( self ).__name__}( assertion = "
            f"{_show_assertion( self.assertion )}"
            f"{_show_client( self.client_id )} )" )


Authorization: __.typx.TypeAlias = (
    BearerAuthorization | ClientCredentialsAuthorization | CodeAuthorization
    | EnterpriseAuthorization | WorkloadAuthorization )


def _show( value: str ) -> str:
    if value.startswith( _configuration.ENVIRONMENT_PREFIX ):
        return repr( value )
    return "'***'"


def _show_client( client_id: __.Absential[ str ] ) -> str:
    ''' Shows the client, if any, as the last argument of a repr. '''
    if __.is_absent( client_id ): return ''
    return f", client_id = {client_id!r}"


def _show_assertion( value: str ) -> str:
    ''' Shows a variable or what reads as a path; never a JWT, nor text
        which may be one (a JWT, padded or encrypted, is no path).
    '''
    if value.startswith( _configuration.ENVIRONMENT_PREFIX ) or (
        _oauth.is_path_shown( value ) and not __.is_jwt( value )
    ): return repr( value )
    return "'***'"
