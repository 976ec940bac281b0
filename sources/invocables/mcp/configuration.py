# SPDX-License-Identifier: Apache-2.0

''' How to reach an MCP server: transport, command or URL, secrets.

    Values written ``env:NAME`` in the environment of a child process or in
    the headers of an HTTP transport are read from the environment of the
    application when the ensemble connects. Values are never shown: the
    representation of parameters lists keys only, URLs lose their query and
    credentials, and every message which may quote server output has the
    values replaced by ``***``.
'''


import os as _os

from . import __
from .. import exceptions as _exceptions


ENVIRONMENT_PREFIX = 'env:'

_REDACTION = '***'
_REDACTION_LENGTH_MINIMUM = 4


class Transports( __.enum.Enum ):
    ''' Transports for MCP servers. '''

    Sse = 'sse'                         # legacy HTTP+SSE transport
    Stdio = 'stdio'                     # child process, stdin and stdout
    StreamableHttp = 'streamable-http'  # current HTTP transport


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
        ''' Returns command name or URL without query and credentials. '''
        if not __.is_absent( self.command ):
            return __.Path( self.command ).name
        if __.is_absent( self.url ): return '?' # pragma: no cover
        return strip_url( self.url )

    def survey_url_secrets( self ) -> tuple[ str, ... ]:
        ''' Returns parts of URL which may be secret: query, credentials. '''
        if __.is_absent( self.url ): return ( )
        from urllib.parse import urlsplit
        parts = urlsplit( self.url )
        return tuple( part for part in (
            parts.query, parts.fragment, parts.username, parts.password,
        ) if part )

    def resolve_environment(
        self, ensemble: str
    ) -> __.immut.Dictionary[ str, str ]:
        ''' Returns environment with ``env:`` references resolved. '''
        return _resolve_references( ensemble, 'environment', self.environment )

    def resolve_headers(
        self, ensemble: str
    ) -> __.immut.Dictionary[ str, str ]:
        ''' Returns headers with ``env:`` references resolved. '''
        return _resolve_references( ensemble, 'headers', self.headers )


class Redactor( __.immut.Object ):
    ''' Replaces known secret values in text by ``***``. '''

    def __init__( self, secrets: __.cabc.Iterable[ str ] = ( ) ):
        self.secrets = tuple( sorted(
            { secret for secret in secrets
              if len( secret ) >= _REDACTION_LENGTH_MINIMUM },
            key = len, reverse = True ) )

    def redact( self, text: str ) -> str:
        ''' Returns text with every secret replaced. '''
        for secret in self.secrets:
            text = text.replace( secret, _REDACTION )
        return text


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
    ''' Checks connection options and returns server parameters. '''
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
    return ServerParameters(
        transport = transport_, url = url_,
        headers = _freeze_strings( location, 'headers', headers ) )


def strip_url( url: str ) -> str:
    ''' Returns URL without credentials, query and fragment. '''
    from urllib.parse import urlsplit, urlunsplit
    parts = urlsplit( url )
    netloc = parts.netloc.rsplit( '@', maxsplit = 1 )[ -1 ]
    return urlunsplit( ( parts.scheme, netloc, parts.path, '', '' ) )


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
    ensemble: str, label: str, mapping: __.cabc.Mapping[ str, str ]
) -> __.immut.Dictionary[ str, str ]:
    resolved: dict[ str, str ] = { }
    for key, value in mapping.items( ):
        if not value.startswith( ENVIRONMENT_PREFIX ):
            resolved[ key ] = value
            continue
        variable = value[ len( ENVIRONMENT_PREFIX ) : ]
        found = _os.environ.get( variable )
        if found is None:
            raise _exceptions.ConfigurationInvalidity(
                f"MCP ensemble {ensemble!r} {label} {key!r}",
                f"environment variable {variable!r} is not set; set it "
                "before connecting, or change the value." )
        resolved[ key ] = found
    return __.immut.Dictionary[ str, str ]( resolved )


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
    return parts[ 0 ], parts[ 1 : ]
