# SPDX-License-Identifier: Apache-2.0

''' The ``invocables`` command: survey, invoke, schemas, snapshot, converse,
    serve.

    :py:mod:`invocables.cli.commands` holds the commands over a
    configuration, :py:mod:`invocables.cli.converse` the conversation with
    a provider. Errors print one line on the standard error stream (for a
    descriptor, naming its file and key) and exit with a non-zero status:
    never a traceback, never a silent exit, also when a tool or an imported
    module asks the program to exit.
'''


import argparse as _argparse
import os as _os
import sys as _sys
import warnings as _warnings

from . import __
from . import commands as _commands
from . import converse as _converse
from .. import serving_command as _serving_command
from ..exceptions import UsageInvalidity as UsageInvalidity

from .commands import (
    CONFIGURATION_VARIABLE as CONFIGURATION_VARIABLE,
    EXIT_FAILURE as EXIT_FAILURE,
    locate_configuration as locate_configuration,
)


EXIT_USAGE = 2
EXIT_INTERRUPTION = 130


def main( arguments: __.cabc.Sequence[ str ] | None = None ) -> None:
    ''' Runs command line; exits with its status. '''
    parser = _produce_parser( )
    options = parser.parse_args( arguments )
    _warnings.showwarning = _show_warning
    for stream in ( _sys.stdout, _sys.stderr ):
        # Text which the terminal cannot show (such as undecodable file
        # names) is escaped rather than fatal.
        reconfigure = getattr( stream, 'reconfigure', None )
        if reconfigure is not None: reconfigure( errors = 'backslashreplace' )
    try: status = __.asyncio.run( options.execute( options ) )
    except SystemExit as exception: # from a tool or an imported module
        _sys.stderr.write(
            f"{_commands.PROGRAM}: error: something called sys.exit( "
            f"{exception.code!r} ) while the command ran (a tool, or a "
            "module imported for one); the command stopped.\n" )
        status = _access_exit_status( exception )
    except KeyboardInterrupt:
        _sys.stderr.write( f"{_commands.PROGRAM}: interrupted.\n" )
        status = EXIT_INTERRUPTION
    except BrokenPipeError: # reader went away, as with 'head'
        devnull = _os.open( _os.devnull, _os.O_WRONLY )
        _os.dup2( devnull, _sys.stdout.fileno( ) )
        status = _commands.EXIT_FAILURE
    except UsageInvalidity as exception:
        _sys.stderr.write( f"{_commands.PROGRAM}: error: {exception}\n" )
        status = EXIT_USAGE
    except Exception as exception: # one line, no traceback
        _sys.stderr.write( _commands.describe_exception( exception ) )
        status = _commands.EXIT_FAILURE
    raise SystemExit( status )


def _access_exit_status( exception: SystemExit ) -> int:
    ''' Returns non-zero status for exit request: its own, or failure. '''
    code = exception.code
    if isinstance( code, int ) and not isinstance( code, bool ) and code:
        return code
    return _commands.EXIT_FAILURE


def _produce_parser( ) -> _argparse.ArgumentParser:
    common = _argparse.ArgumentParser( add_help = False )
    common.add_argument(
        '--configuration', metavar = 'PATH', default = _argparse.SUPPRESS,
        help = "configuration file (default: $INVOCABLES_CONFIGURATION, "
        "then $XDG_CONFIG_HOME/invocables/invocables.toml, then the "
        "shipped defaults)" )
    parser = _argparse.ArgumentParser(
        prog = _commands.PROGRAM, parents = [ common ],
        description = "Survey, try and export the tools of a configuration." )
    commands = parser.add_subparsers(
        dest = 'command', required = True, metavar = 'COMMAND' )
    _commands.produce_parsers( commands, common )
    _converse.produce_parser( commands, common )
    # serving: the serve command lives in its own module.
    serve = commands.add_parser(
        'serve', parents = [ common ],
        help = "serve the tools as one MCP server (stdio or HTTP)" )
    _serving_command.add_arguments( serve, configuration = False )
    serve.set_defaults( execute = _serving_command.execute_command )
    return parser


def _show_warning(
    message: Warning | str,
    category: type[ Warning ],
    filename: str,
    lineno: int,
    file: __.typx.Any = None,
    line: str | None = None,
) -> None:
    ''' Prints warning as one line. '''
    text = ' '.join( str( message ).split( ) )
    _sys.stderr.write( f"{_commands.PROGRAM}: warning: {text}\n" )
