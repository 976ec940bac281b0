# SPDX-License-Identifier: Apache-2.0

''' The ``invocables serve`` command: options and execution.

    Light to import (the ``mcp`` SDK loads only when the command runs), so
    that the ``invocables`` command can register it. Serves the ensembles
    of the configuration over stdio, or over streamable HTTP with
    ``--http`` (``--stateless`` and ``--workers N`` for several worker
    processes, ``--token-variable NAME`` for a bearer token).
'''


import argparse as _argparse
import os as _os
import sys as _sys

from . import __
from . import exceptions as _exceptions


EXIT_FAILURE = 1
EXIT_INTERRUPTION = 130
PORT_DEFAULT = 8000

_FACTORY = 'invocables.serving:produce_application_from_environment'
_PROGRAM = 'invocables serve'


def add_arguments(
    parser: _argparse.ArgumentParser, *, configuration: bool = True
) -> None:
    ''' Adds the options of ``invocables serve`` to parser.

        Without ``configuration``, the parser (such as the ``invocables``
        command's) provides ``--configuration`` itself.
    '''
    if configuration:
        parser.add_argument(
            '--configuration', metavar = 'PATH',
            help = "configuration of the ensembles (invocables.toml)" )
    parser.add_argument(
        '--policies', metavar = 'PATH',
        help = "TOML file of [[policies]] for every call; calls which a "
        "rule would ask about are refused" )
    parser.add_argument(
        '--name', default = 'invocables',
        help = "name of the server (default: invocables)" )
    parser.add_argument(
        '--http', action = 'store_true',
        help = "serve streamable HTTP at /mcp instead of stdio" )
    parser.add_argument(
        '--host', default = '127.0.0.1',
        help = "address to listen on (default: 127.0.0.1)" )
    parser.add_argument(
        '--port', type = int, default = PORT_DEFAULT,
        help = "port to listen on (default: 8000)" )
    parser.add_argument(
        '--stateless', action = 'store_true',
        help = "no sessions: every request stands alone, so that several "
        "workers can serve" )
    parser.add_argument(
        '--workers', type = int, default = 1,
        help = "worker processes (needs --stateless)" )
    parser.add_argument(
        '--token-variable', metavar = 'NAME',
        help = "environment variable which holds the bearer token every "
        "HTTP request must carry" )


async def execute_command( options: _argparse.Namespace ) -> int:
    ''' Serves as the parsed options say; returns exit status.

        Everything is checked (token, options, configuration, policies)
        before anything is served.
    '''
    from . import serving as _serving
    settings = {
        'configuration': getattr( options, 'configuration', None ),
        'policies': options.policies, 'name': options.name }
    if not options.http:
        server = await _serving.prepare_server( settings )
        await _serving.serve_stdio( server )
        return 0
    token = _access_token( options.token_variable )
    workers = options.workers
    if workers < 1 or ( workers > 1 and not options.stateless ):
        raise _exceptions.ConfigurationInvalidity(
            '--workers', "several workers need --stateless (a session "
            "lives in one worker only); give at least 1." )
    server = await _serving.prepare_server( settings )
    if workers == 1:
        import uvicorn
        application = _serving.produce_application(
            server, stateless = options.stateless,
            token = __.absent if token is None else token,
            host = options.host )
        await uvicorn.Server( uvicorn.Config(
            application, host = options.host, port = options.port,
            log_level = 'warning' ) ).serve( )
        return 0
    return await _supervise_workers( options, settings )


def main( arguments: __.cabc.Sequence[ str ] | None = None ) -> None:
    ''' Runs ``invocables serve`` alone; exits with its status. '''
    parser = _argparse.ArgumentParser(
        prog = _PROGRAM,
        description = "Serve the configured ensembles as one MCP server." )
    add_arguments( parser )
    options = parser.parse_args( arguments )
    try: status = __.asyncio.run( execute_command( options ) )
    except KeyboardInterrupt: status = EXIT_INTERRUPTION
    except Exception as exception: # one line, no traceback
        message = ' '.join( str( exception ).split( ) )
        _sys.stderr.write( f"{_PROGRAM}: error: {message}\n" )
        status = EXIT_FAILURE
    raise SystemExit( status )


def _access_token( variable: str | None ) -> str | None:
    if not variable: return None
    token = _os.environ.get( variable )
    if not token:
        raise _exceptions.ConfigurationInvalidity(
            '--token-variable', f"environment variable {variable!r} is "
            "not set or empty; export the token in it." )
    return token


async def _supervise_workers(
    options: _argparse.Namespace,
    settings: __.cabc.Mapping[ str, __.typx.Any ],
) -> int:
    ''' Runs uvicorn's supervisor of worker processes; returns its status.

        Workers build the application from the options passed in the
        environment (never the token itself: the name of its variable).
    '''
    from .serving import OPTIONS_VARIABLE
    environment = dict( _os.environ )
    environment[ OPTIONS_VARIABLE ] = __.json.dumps( {
        **settings, 'stateless': True,
        'token_variable': options.token_variable, 'host': options.host } )
    process = await __.asyncio.create_subprocess_exec(
        _sys.executable, '-m', 'uvicorn', '--factory', _FACTORY,
        '--host', options.host, '--port', str( options.port ),
        '--workers', str( options.workers ), '--log-level', 'warning',
        env = environment )
    try: return await process.wait( )
    except __.asyncio.CancelledError:
        process.terminate( )
        await process.wait( )
        raise
