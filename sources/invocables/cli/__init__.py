# SPDX-License-Identifier: Apache-2.0

''' The ``invocables`` command: survey, invoke, schemas, snapshot, converse,
    serve.

    :py:mod:`invocables.cli.commands` holds the commands over a
    configuration, :py:mod:`invocables.cli.converse` the conversation with
    a provider. Errors print one line on the standard error stream (for a
    descriptor, naming its file and key) and exit with a non-zero status:
    never a traceback, never a silent exit, also when a tool or an imported
    module asks the program to exit. Exit statuses: 0 success, 1 failure, 2
    usage error, 130 interrupted. Nothing but the standard library and the
    package's own light modules is imported before a command needs it: an
    extra (the ``mcp`` SDK, a provider's SDK) loads only for the work which
    uses it, and its absence is one line naming the extra to install.
'''


import argparse as _argparse
import logging as _logging
import os as _os
import signal as _signal
import sys as _sys
import warnings as _warnings

from . import __
from . import _escapes
from . import commands as _commands
from . import converse as _converse
from . import search as _search
import invocables.exceptions as _exceptions
from . import serve as _serve
from ..exceptions import UsageInvalidity as UsageInvalidity

from .commands import EXIT_FAILURE as EXIT_FAILURE
from ..descriptors.paths import (
    CONFIGURATION_VARIABLE as CONFIGURATION_VARIABLE,
    locate_configuration as locate_configuration,
)


EXIT_INTERRUPTION = _commands.EXIT_INTERRUPTION
EXIT_SUCCESS = _commands.EXIT_SUCCESS
EXIT_USAGE = _commands.EXIT_USAGE

_EPILOG = """\
exit status:
  0    success
  1    failure (a tool's error, a server which cannot be reached, a
       configuration which cannot be used, a missing extra)
  2    usage error (unknown option, invalid --arguments, unknown provider)
  130  interrupted (Ctrl-C); 'serve' stopped by Ctrl-C or SIGTERM exits 0

Each error is one line on the standard error stream; with --json, the
output stays JSON and says the error as a field.
"""
# Distributions which extras install, by top-level module: a command which
# misses one names the extra to install.
_EXTRAS_MODULES = __.types.MappingProxyType( {
    'httpx_sse': 'mcp', 'mcp': 'mcp',
    'pydantic_settings': 'mcp', 'sse_starlette': 'mcp',
    'starlette': 'mcp', 'uvicorn': 'mcp',
} )


def main( arguments: __.cabc.Sequence[ str ] | None = None ) -> None:
    ''' Runs command line; exits with its status. '''
    parser = _produce_parser( )
    options = parser.parse_args( arguments )
    _warnings.showwarning = _show_warning
    _configure_logging( )
    for stream in ( _sys.stdout, _sys.stderr ):
        # Text which the terminal cannot show (such as undecodable file
        # names) is escaped rather than fatal.
        reconfigure = getattr( stream, 'reconfigure', None )
        if reconfigure is not None: reconfigure( errors = 'backslashreplace' )
    try: status = __.asyncio.run( _execute_interruptibly( options ) )
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
    except Exception as exception: # one line, no traceback
        status = _report_failure( options, exception )
    raise SystemExit( status )


async def _execute_interruptibly( options: _argparse.Namespace ) -> int:
    ''' Runs the command; Ctrl-C cancels it, so that every cleanup runs.

        Python 3.11 cancels the main task on Ctrl-C by itself; Python 3.10
        raises ``KeyboardInterrupt`` wherever the loop happens to be, which
        can leave a server it was starting running. ``serve`` handles its
        signals itself.
    '''
    execute = options.execute
    if _sys.version_info >= ( 3, 11 ) or execute is _serve.execute_command:
        return await execute( options )
    loop = __.asyncio.get_running_loop( )
    task = __.asyncio.current_task( )
    interruptions: list[ int ] = [ ]
    # A handler of the signal module, as 3.11's runner installs: a part
    # which replaces it for a while (a terminal question) takes Ctrl-C
    # for itself, which a handler of the loop would not let it do.
    def interrupt( number: int, frame: object ) -> None:
        interruptions.append( number )
        if task is not None: loop.call_soon_threadsafe( task.cancel )
    if _signal.getsignal( _signal.SIGINT ) is not _signal.default_int_handler:
        return await execute( options )
    try: _signal.signal( _signal.SIGINT, interrupt )
    except ValueError: # not the main thread
        return await execute( options )
    try: return await execute( options )
    except __.asyncio.CancelledError:
        if interruptions: raise KeyboardInterrupt from None
        raise
    finally: _signal.signal( _signal.SIGINT, _signal.default_int_handler )


def _access_exit_status( exception: SystemExit ) -> int:
    ''' Returns non-zero status for exit request: its own, or failure. '''
    code = exception.code
    if isinstance( code, int ) and not isinstance( code, bool ) and code:
        return code
    return _commands.EXIT_FAILURE


def _access_version( ) -> str:
    from .. import __version__
    return __version__


def _adapt_failure( exception: Exception ) -> Exception:
    ''' Returns failure to report: a missing SDK names its extra. '''
    if not isinstance( exception, ImportError ) or isinstance(
        exception, _exceptions.Omnierror
    ): return exception
    name = ( exception.name or '' ).split( '.', 1 )[ 0 ]
    extra = _EXTRAS_MODULES.get( name )
    if extra is None:
        import invocables.providers as _providers
        extra = next( (
            provider.extra for provider in _providers.PROVIDERS.values( )
            if provider.package == name ), None )
    if extra is None: return exception
    return _exceptions.ExtraAbsence(
        extra, f"this command (it misses the module {name!r})" )


def _configure_logging( ) -> None:
    ''' Shows the package's warnings and errors as one line each. '''
    logger = _logging.getLogger( __.package_name )
    if any( isinstance( handler, _LineHandler )
            for handler in logger.handlers ): return
    logger.addHandler( _LineHandler( ) )
    logger.propagate = False


def _produce_parser( ) -> _argparse.ArgumentParser:
    common = _argparse.ArgumentParser( add_help = False )
    common.add_argument(
        '--configuration', metavar = 'PATH', default = _argparse.SUPPRESS,
        help = "configuration file (default: $INVOCABLES_CONFIGURATION, "
        "then $XDG_CONFIG_HOME/invocables/invocables.toml, then the "
        "shipped defaults)" )
    parser = _argparse.ArgumentParser(
        prog = _commands.PROGRAM, parents = [ common ],
        description = "Survey, try and export the tools of a configuration.",
        epilog = _EPILOG,
        formatter_class = _argparse.RawDescriptionHelpFormatter )
    parser.add_argument(
        '--version', action = 'version',
        version = f"{_commands.PROGRAM} {_access_version( )}" )
    commands = parser.add_subparsers(
        dest = 'command', required = True, metavar = 'COMMAND' )
    _commands.produce_parsers( commands, common )
    _converse.produce_parser( commands, common )
    # serving: the serve command lives in its own module.
    _serve.add_arguments( _commands.add_command(
        commands, common, 'serve', _serve.execute_command,
        "serve the tools as one MCP server (stdio or HTTP)"
    ), configuration = False )
    _search.produce_parser( commands, common )
    for subparser in commands.choices.values( ):
        subparser.epilog = _EPILOG
        subparser.formatter_class = _argparse.RawDescriptionHelpFormatter
    return parser


def _report_failure(
    options: _argparse.Namespace, exception: Exception
) -> int:
    ''' Reports failure in one line (and as JSON); returns exit status. '''
    exception = _adapt_failure( exception )
    _sys.stderr.write( _commands.describe_exception( exception ) )
    usage = isinstance( exception, UsageInvalidity )
    if getattr( options, 'json', False ) and not usage:
        _sys.stdout.write( __.json.dumps(
            { 'error': _commands.describe_error( exception ) },
            indent = 2 ) + '\n' )
    return EXIT_USAGE if usage else _commands.EXIT_FAILURE


class _LineHandler( _logging.Handler ):
    ''' Writes each record of warning or worse as one line on stderr. '''

    def __init__( self ):
        super( ).__init__( _logging.WARNING )

    def emit( self, record: _logging.LogRecord ) -> None:
        text = _escapes.escape_text(
            ' '.join( record.getMessage( ).split( ) ) )
        genus = 'error' if record.levelno >= _logging.ERROR else 'warning'
        try: _sys.stderr.write( f"{_commands.PROGRAM}: {genus}: {text}\n" )
        except Exception: self.handleError( record )


def _show_warning(
    message: Warning | str,
    category: type[ Warning ],
    filename: str,
    lineno: int,
    file: __.typx.Any = None,
    line: str | None = None,
) -> None:
    ''' Prints warning as one line. '''
    text = _escapes.escape_text( ' '.join( str( message ).split( ) ) )
    _sys.stderr.write( f"{_commands.PROGRAM}: warning: {text}\n" )
