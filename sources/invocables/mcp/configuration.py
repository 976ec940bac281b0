# SPDX-License-Identifier: Apache-2.0

''' How to reach an MCP server: transport, command or URL, secrets.

    Values written ``env:NAME`` in the environment of a child process, in
    the headers of an HTTP transport, or as the user, the password or a
    query value of its URL, are read from the environment of the
    application when the ensemble connects. Values are never shown: the
    representation of parameters lists keys only, URLs lose their query and
    credentials, and secrets are replaced by ``***`` in every message,
    result and log record (see :py:mod:`invocables.mcp.redaction`).
'''


import os as _os
import shlex as _shlex
import shutil as _shutil

from base64 import b64decode as _b64decode
from base64 import b64encode as _b64encode
from urllib.parse import quote as _quote
from urllib.parse import unquote as _unquote
from urllib.parse import urlsplit as _urlsplit
from urllib.parse import urlunsplit as _urlunsplit

import invocables.mcp.__ as __
import invocables.mcp.redaction as _redaction
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
from .redaction import Redactor as Redactor


ENVIRONMENT_PREFIX = __.ENVIRONMENT_PREFIX
PARAMETERS: __.immut.Dictionary[ str, __.typx.Any ] = __.immut.Dictionary(
    command = __.absent, arguments = ( ), environment = __.absent,
    cwd = __.absent, url = __.absent, headers = __.absent,
    transport = __.absent )
''' Fields of server parameters, as not given.

    :meta hide-value:
'''

_reference = __.re.compile( r'^env:([A-Za-z_][A-Za-z0-9_]*)$' )
# Placeholders as mcpServers files of other clients write them: ${NAME},
# ${env:NAME}, ${NAME:-default}; and a scheme before a reference.
_placeholder = __.re.compile(
    r'\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}' )
_reference_schemed = __.re.compile(
    r'^([A-Za-z][A-Za-z0-9_-]*) +env:([A-Za-z_][A-Za-z0-9_]*)$' )
_credentials = __.re.compile( r'^([A-Za-z][A-Za-z0-9_-]*) +(\S+)$' )
# A path segment of a key's alphabet and length, letters and digits mixed,
# is taken for a key (hosted servers put keys in paths: /s/<key>/mcp).
_segment_key = __.re.compile(
    r'(?=[^0-9]*[0-9])(?=[^A-Za-z]*[A-Za-z])[A-Za-z0-9._~+=-]{20,}' )
_userinfo = __.re.compile(
    r'^(?P<user>env:[A-Za-z_][A-Za-z0-9_]*|[^:]*)(?P<colon>:?)(?P<password>.*)$',
    __.re.DOTALL )


class Transports( __.enum.Enum ):
    ''' Transports for MCP servers. '''

    Sse = 'sse'                         # legacy HTTP+SSE transport
    Stdio = 'stdio'                     # child process, stdin and stdout
    StreamableHttp = 'streamable-http'  # current HTTP transport


class Resolution( __.immut.DataclassObject ):
    ''' Values of one connection, with ``env:`` references resolved.

        Shows no values: keys of environment and headers, URL as
        :py:func:`describe_url` does and without the secrets of its path.
    '''

    environment: __.cabc.Mapping[ str, str ]
    headers: __.cabc.Mapping[ str, str ]
    url: __.Absential[ str ]
    redactor: Redactor

    def __repr__( self ) -> str:
        url = '' if __.is_absent( self.url ) else self.redactor.redact(
            describe_url( self.url ) )
        return (
            "{cls}( url = {url!r}, environment = {environment}, "
            "headers = {headers} )".format(
                cls = type( self ).__name__, url = url,
                environment = _describe_keys( self.environment ),
                headers = _describe_keys( self.headers ) ) )


class ServerParameters( __.immut.DataclassObject ):
    ''' Where and how to reach one MCP server. Shows no values of secrets. '''

    transport: Transports
    command: __.Absential[ str ] = __.absent
    arguments: tuple[ str, ... ] = ( )
    environment: __.cabc.Mapping[ str, str ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, str ] )
    cwd: __.Absential[ str ] = __.absent
    url: __.Absential[ str ] = __.absent
    headers: __.cabc.Mapping[ str, str ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, str ] )

    def __repr__( self ) -> str:
        return (
            "{cls}( transport = {transport!r}, target = {target!r}, "
            "environment = {environment}, headers = {headers} )".format(
                cls = type( self ).__name__,
                transport = self.transport.value,
                target = self.describe_target( ),
                environment = _describe_keys( self.environment ),
                headers = _describe_keys( self.headers ) ) )

    def describe_target( self ) -> str:
        ''' Returns command name, or URL as :py:func:`describe_url` does. '''
        if not __.is_absent( self.command ):
            return __.Path( self.command ).name
        if __.is_absent( self.url ): return '?' # pragma: no cover
        return describe_url( self.url )

    def survey_url_secrets( self ) -> tuple[ str, ... ]:
        ''' Returns parts of URL which may be secret: query, credentials,
            path segments which look like keys.
        '''
        if __.is_absent( self.url ): return ( )
        parts = _urlsplit( self.url )
        return tuple( part for part in (
            parts.query, parts.fragment, parts.username, parts.password,
            *(
                segment for segment in parts.path.split( '/' )
                if is_path_key( segment ) ),
        ) if part )

    def resolve(
        self, ensemble: str, authorization: __.typx.Any = __.absent
    ) -> Resolution:
        ''' Returns values for a connection, with references resolved.

            The redactor knows every secret of the connection: of its
            environment, headers and URL, and of its authorization (a
            bearer token, a client secret). Raises
            :py:class:`invocables.exceptions.ConfigurationInvalidity`
            naming the key and the variable if a variable is not set.
        '''
        secrets: list[ str ] = list(
            survey_authorization_secrets( authorization ) )
        environment = _resolve_references(
            ensemble, 'environment', self.environment, secrets )
        headers = _resolve_references(
            ensemble, 'headers', self.headers, secrets )
        url, hosts = __.absent, ( )
        if not __.is_absent( self.url ):
            url = _resolve_url( ensemble, self.url, secrets )
            hostname = _urlsplit( self.url ).hostname
            hosts = ( hostname, ) if hostname else ( )
        return Resolution(
            environment = environment, headers = headers, url = url,
            redactor = Redactor( secrets, hosts ) )


def survey_authorization_secrets( authorization: object ) -> tuple[ str, ... ]:
    ''' Returns secret values of an authorization: its token or secret.

        References (``env:NAME``) are resolved where their variable is set;
        the authorization itself reports one which is not.
    '''
    secrets: list[ str ] = [ ]
    for attribute in (
        'token', 'client_secret', 'private_key', 'identity_token',
        'identity_provider_client_secret',
    ):
        value = getattr( authorization, attribute, None )
        if not isinstance( value, str ) or not value: continue
        if value.startswith( ENVIRONMENT_PREFIX ):
            value = _os.environ.get(
                value[ len( ENVIRONMENT_PREFIX ) : ] ) or ''
        if value: secrets.extend( ( value, *_survey_credentials( value ) ) )
    return tuple( secrets )


def access_parameters(
    name: str,
    parameters: __.Absential[ ServerParameters ],
    given: __.cabc.Mapping[ str, __.typx.Any ],
) -> ServerParameters:
    ''' Returns server parameters, given or made of their fields. '''
    fields = { key: given[ key ] for key in PARAMETERS if key in given }
    if not __.is_absent( parameters ):
        if fields:
            raise _exceptions.ConfigurationInvalidity(
                f"MCP ensemble {name!r}", "give the server parameters or "
                "their fields ({names}), not both.".format(
                    names = ', '.join( fields ) ) )
        _ensembles.validate_ensemble_name( name )
        return parameters
    return produce_parameters(
        name, **{ **PARAMETERS, **fields } )


def produce_parameters(
    ensemble: str, *,
    command: __.Absential[ str | __.cabc.Sequence[ str ] ],
    arguments: __.cabc.Sequence[ str ],
    environment: __.Absential[ __.cabc.Mapping[ str, str ] ],
    cwd: __.Absential[ str | _os.PathLike[ str ] ],
    url: __.Absential[ str ],
    headers: __.Absential[ __.cabc.Mapping[ str, str ] ],
    transport: __.Absential[ Transports | str ],
) -> ServerParameters:
    ''' Checks name and connection options; returns server parameters.

        The name follows the rule of every ensemble (see
        :py:func:`invocables.ensembles.validate_ensemble_name`): a registry
        name such as ``io.github.owner/server`` is fine.
    '''
    _ensembles.validate_ensemble_name( ensemble )
    location = f"MCP ensemble {ensemble!r}"
    transport_ = _infer_transport( location, command, url, transport )
    if transport_ is Transports.Stdio:
        if not __.is_absent( headers ):
            raise _exceptions.ConfigurationInvalidity(
                location, "'headers' apply to HTTP transports only." )
        program, arguments_ = _split_command(
            location, __.typx.cast( str | __.cabc.Sequence[ str ], command ),
            arguments )
        return ServerParameters(
            transport = transport_, command = program,
            arguments = arguments_,
            environment = _freeze_strings(
                location, 'environment', environment ),
            cwd = __.absent if __.is_absent( cwd ) else _os.fspath( cwd ) )
    if not __.is_absent( environment ) or not __.is_absent( cwd ) or arguments:
        raise _exceptions.ConfigurationInvalidity(
            location,
            "'environment', 'cwd' and 'arguments' apply to stdio only." )
    url_ = __.typx.cast( str, url )
    if not url_.startswith( ( 'http://', 'https://' ) ):
        raise _exceptions.ConfigurationInvalidity(
            location, "'url' must start with http:// or https://." )
    _validate_url_references( location, url_ )
    return ServerParameters(
        transport = transport_, url = url_,
        headers = _freeze_strings( location, 'headers', headers ) )


def describe_url( url: str ) -> str:
    ''' Returns URL to show: without credentials, query and fragment, and
        with path segments which look like keys (or are ``env:``
        references) shown as ``***``.
    '''
    parts = _urlsplit( url )
    netloc = parts.netloc.rsplit( '@', maxsplit = 1 )[ -1 ]
    path = '/'.join(
        _redaction.REDACTION
        if is_path_key( segment ) or segment.startswith( ENVIRONMENT_PREFIX )
        else segment for segment in parts.path.split( '/' ) )
    return _urlunsplit( ( parts.scheme, netloc, path, '', '' ) )


def is_path_key( segment: str ) -> bool:
    ''' Returns whether segment of URL path looks like a key or token:
        twenty or more characters of a key's alphabet, letters and digits
        mixed (as hosted MCP servers put keys in their paths).
    '''
    return _segment_key.fullmatch( _unquote( segment ) ) is not None


def strip_url( url: str ) -> str:
    ''' Returns URL without credentials, query and fragment. '''
    parts = _urlsplit( url )
    netloc = parts.netloc.rsplit( '@', maxsplit = 1 )[ -1 ]
    return _urlunsplit( ( parts.scheme, netloc, parts.path, '', '' ) )


def split_userinfo( userinfo: str ) -> tuple[ str, str, str ]:
    ''' Returns user, colon (if any) and password of userinfo of URL.

        A user written as ``env:NAME`` keeps its colon.
    '''
    match = __.typx.cast( __.re.Match[ str ], _userinfo.match( userinfo ) )
    return match[ 'user' ], match[ 'colon' ], match[ 'password' ]


def survey_url_references( url: str ) -> tuple[ tuple[ str, str ], ... ]:
    ''' Returns place and raw value of each part of URL which may be a
        reference: user, password, path segments and query values.
    '''
    parts = _urlsplit( url )
    found: list[ tuple[ str, str ] ] = [ ]
    if '@' in parts.netloc:
        user, colon, password = split_userinfo(
            parts.netloc.rsplit( '@', maxsplit = 1 )[ 0 ] )
        found.append( ( 'user', user ) )
        if colon: found.append( ( 'password', password ) )
    found.extend(
        ( f"path segment {index}", segment )
        for index, segment in enumerate( parts.path.split( '/' ) )
        if segment )
    for item in parts.query.split( '&' ) if parts.query else ( ):
        key, _, value = item.partition( '=' )
        found.append( ( f"query {_unquote( key )!r}", value ) )
    return tuple( found )


def _describe_keys( mapping: __.cabc.Mapping[ str, str ] ) -> str:
    return '[ {keys} ]'.format(
        keys = ', '.join( repr( key ) for key in sorted( mapping ) ) )


def _freeze_strings(
    location: str,
    label: str,
    mapping: __.Absential[ __.cabc.Mapping[ str, str ] ],
) -> __.immut.Dictionary[ str, str ]:
    if __.is_absent( mapping ): return __.immut.Dictionary[ str, str ]( )
    for key, value in mapping.items( ):
        if not isinstance( key, str ) or not isinstance( value, str ):
            raise _exceptions.ConfigurationInvalidity(
                f"{location} {label}",
                "keys and values must be strings." )
    return __.immut.Dictionary[ str, str ]( mapping )


def _infer_transport(
    location: str,
    command: __.Absential[ str | __.cabc.Sequence[ str ] ],
    url: __.Absential[ str ],
    transport: __.Absential[ Transports | str ],
) -> Transports:
    if __.is_absent( command ) == __.is_absent( url ):
        raise _exceptions.ConfigurationInvalidity(
            location, "give either 'command' (stdio) or 'url' (HTTP)." )
    if __.is_absent( transport ):
        if not __.is_absent( command ): return Transports.Stdio
        path = strip_url( __.typx.cast( str, url ) ).rstrip( '/' )
        return (
            Transports.Sse if path.endswith( '/sse' )
            else Transports.StreamableHttp )
    try: transport_ = Transports( transport )
    except ValueError as exception:
        raise _exceptions.ConfigurationInvalidity(
            f"{location} 'transport'",
            "must be one of {names}.".format(
                names = ', '.join( item.value for item in Transports ) )
        ) from exception
    if ( transport_ is Transports.Stdio ) != ( not __.is_absent( command ) ):
        raise _exceptions.ConfigurationInvalidity(
            f"{location} 'transport'",
            "stdio needs 'command'; HTTP transports need 'url'." )
    return transport_


def _resolve_references(
    ensemble: str,
    label: str,
    mapping: __.cabc.Mapping[ str, str ],
    secrets: list[ str ],
) -> __.immut.Dictionary[ str, str ]:
    ''' Resolves references; collects values which are secrets.

        A whole value ``env:NAME``, a scheme and a reference
        (``Bearer env:NAME``) and placeholders (``${NAME}``,
        ``${env:NAME}``, ``${NAME:-default}``) are read from the
        environment; a variable which is not set is refused, naming the key.
        What a reference gives is secret, and so is the value of a key
        which names a secret; of a secret ``<scheme> <credentials>``, the
        credentials alone are secret too (of ``Basic``, also decoded).
    '''
    resolved: dict[ str, str ] = { }
    for key, value in mapping.items( ):
        location = f"MCP ensemble {ensemble!r} {label} {key!r}"
        found: list[ str ] = [ ]
        resolved[ key ] = text = _resolve_value(
            location, value, found, header = label == 'headers' )
        if found or _redaction.is_secret_key( key ):
            secrets.extend( ( text, *found ) )
            secrets.extend( _survey_credentials( text ) )
    return __.immut.Dictionary[ str, str ]( resolved )


def _resolve_value(
    location: str, value: str, found: list[ str ], *, header: bool
) -> str:
    ''' Returns value with its references resolved; collects what they give.

        In a header, ``env:`` elsewhere than at the start or after a scheme
        is refused: it would be sent as it is.
    '''
    if value.startswith( ENVIRONMENT_PREFIX ):
        found.append( _resolve_reference( location, value ) )
        return found[ -1 ]
    schemed = _reference_schemed.match( value )
    if schemed:
        found.append( _resolve_reference(
            location, f"{ENVIRONMENT_PREFIX}{schemed[ 2 ]}" ) )
        return f"{schemed[ 1 ]} {found[ -1 ]}"
    if header and ENVIRONMENT_PREFIX in _placeholder.sub( '', value ):
        raise _exceptions.ConfigurationInvalidity(
            location,
            "'env:NAME' is read only as the whole value or after a scheme "
            "(as in 'Bearer env:TOKEN'); write '${NAME}' to put a variable "
            "inside other text." )
    if '${' not in value: return value

    def substitute( match: __.re.Match[ str ] ) -> str:
        variable, default = match[ 1 ], match[ 2 ]
        text = _os.environ.get( variable )
        if text is None and default is None:
            raise _exceptions.ConfigurationInvalidity(
                location,
                f"environment variable {variable!r} (in the placeholder "
                f"{match[ 0 ]!r}) is not set; set it before connecting, or "
                "change the value." )
        text = default if text is None else text
        if default is None or text != default: found.append( text )
        return text

    result = _placeholder.sub( substitute, value )
    if '${' in result and '${' in _placeholder.sub( '', value ):
        raise _exceptions.ConfigurationInvalidity(
            location, "it holds an unfinished placeholder ('${' without a "
            "variable name and '}'); write '${NAME}'." )
    return result


def _survey_credentials( value: str ) -> tuple[ str, ... ]:
    ''' Returns secret parts of ``<scheme> <credentials>``.

        Of ``Basic``, the decoded pair and its user and password apart: an
        API key is often sent as the user, with an empty password.
    '''
    match = _credentials.match( value )
    if match is None: return ( )
    scheme, credentials = match[ 1 ], match[ 2 ]
    if scheme.lower( ) != 'basic': return ( credentials, )
    try: decoded = _b64decode( credentials, validate = True ).decode( )
    except ( ValueError, UnicodeDecodeError ): return ( credentials, )
    user, _, password = decoded.partition( ':' )
    return ( credentials, decoded, user, password )


def _resolve_reference( location: str, value: str ) -> str:
    variable = value[ len( ENVIRONMENT_PREFIX ) : ]
    found = _os.environ.get( variable )
    if found is None:
        raise _exceptions.ConfigurationInvalidity(
            location,
            f"environment variable {variable!r} is not set; set it "
            "before connecting, or change the value." )
    return found


def _resolve_url( ensemble: str, url: str, secrets: list[ str ] ) -> str:
    ''' Resolves references in user, password, path segments and query
        values of URL.

        Resolved values are percent-encoded into the URL. The password,
        path segments which look like keys, and query values under secret
        keys, are secrets even when literal.
    '''
    location = f"MCP ensemble {ensemble!r} url"
    parts = _urlsplit( url )
    netloc, query = parts.netloc, parts.query
    segments: list[ str ] = [ ]
    for segment in parts.path.split( '/' ):
        segment_ = _resolve_url_part(
            f"{location} path segment", segment, secrets )
        if segment_ is segment and is_path_key( segment ):
            secrets.append( _unquote( segment ) )
        segments.append( segment_ )
    path = '/'.join( segments )
    if '@' in netloc:
        userinfo, host = netloc.rsplit( '@', maxsplit = 1 )
        user, colon, password = split_userinfo( userinfo )
        user = _resolve_url_part( f"{location} user", user, secrets )
        if colon:
            password = _resolve_url_part(
                f"{location} password", password, secrets )
            secrets.append( _unquote( password ) )
            # As HTTP clients send it, in an Authorization header.
            secrets.append( _b64encode( "{user}:{password}".format(
                user = _unquote( user ), password = _unquote( password )
            ).encode( ) ).decode( 'ascii' ) )
        netloc = f"{user}{colon}{password}@{host}"
    if query:
        pairs: list[ str ] = [ ]
        for item in query.split( '&' ):
            key, equal, value = item.partition( '=' )
            value = _resolve_url_part(
                f"{location} query {_unquote( key )!r}", value, secrets )
            if _redaction.is_secret_key( _unquote( key ) ):
                secrets.append( _unquote( value ) )
            pairs.append( f"{key}{equal}{value}" )
        query = '&'.join( pairs )
    return _urlunsplit( ( parts.scheme, netloc, path, query, parts.fragment ) )


def _resolve_url_part(
    location: str, value: str, secrets: list[ str ]
) -> str:
    if _reference.match( value ) is None: return value
    found = _resolve_reference( location, value )
    # Sent percent-encoded, a form which the redactor learns with it.
    secrets.append( found )
    return _quote( found, safe = '' )


def _split_command(
    location: str,
    command: str | __.cabc.Sequence[ str ],
    arguments: __.cabc.Sequence[ str ],
) -> tuple[ str, tuple[ str, ... ] ]:
    parts = (
        ( command, ) if isinstance( command, str ) else tuple( command ) )
    parts = parts + tuple( arguments )
    if not parts or not parts[ 0 ] or not all(
        isinstance( part, str ) for part in parts
    ):
        raise _exceptions.ConfigurationInvalidity(
            f"{location} 'command'",
            "must be a program name or path, then string arguments." )
    _validate_program( location, parts[ 0 ] )
    return parts[ 0 ], parts[ 1 : ]


def _validate_program( location: str, program: str ) -> None:
    ''' Refuses a whole command line given as program name.

        A program whose name or path holds blanks is accepted if it exists.
    '''
    if not any( character.isspace( ) for character in program ): return
    if _shutil.which( program ) is not None: return
    try: words = _shlex.split( program )
    except ValueError: words = program.split( )
    raise _exceptions.ConfigurationInvalidity(
        f"{location} 'command'",
        f"{program!r} is not a program; the command is never run through "
        "a shell, so use a list of arguments: {words!r}.".format(
            words = words ) )


def _validate_url_references( location: str, url: str ) -> None:
    ''' Refuses ``env:`` references where they would not be resolved. '''
    resolvable = sum(
        1 for _, value in survey_url_references( url )
        if _reference.match( value ) )
    if '${' in url:
        raise _exceptions.ConfigurationInvalidity(
            f"{location} 'url'",
            "'${NAME}' placeholders are not read in URLs; write 'env:NAME' "
            "as the whole user, password, path segment or query value, or "
            "move the secret into 'headers'." )
    if url.count( ENVIRONMENT_PREFIX ) > resolvable:
        raise _exceptions.ConfigurationInvalidity(
            f"{location} 'url'",
            "'env:NAME' references are read only as the whole user, the "
            "whole password, a whole path segment or a whole query value "
            "(as in 'https://host/mcp?token=env:TOKEN'); move the others "
            "there or into 'headers'." )
