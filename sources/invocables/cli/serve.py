# SPDX-License-Identifier: Apache-2.0

''' The ``invocables serve`` command: options and execution.

    Light to import (the ``mcp`` SDK loads only when the command runs), so
    that the ``invocables`` command can register it. Serves the ensembles
    of the configuration over stdio, or over streamable HTTP with
    ``--http`` (``--stateless`` and ``--workers N`` for several worker
    processes, ``--token-variable NAME`` for a bearer token).
'''


import argparse as _argparse
import logging as _logging
import os as _os
import signal as _signal
import socket as _socket
import sys as _sys

import invocables.__ as __
import invocables.cli.commands as _commands
import invocables.exceptions as _exceptions


EXIT_FAILURE = 1
EXIT_INTERRUPTION = 130
EXIT_USAGE = 2
PORT_DEFAULT = 8000

_FACTORY = 'invocables.cli.serve:produce_worker_application'
# Seconds which connections have to end once stopping; then they are cut
# (a client's stream of subscriptions/listen lasts until then).
_GRACE_SHUTDOWN = 5
# Limits of HTTP serving: option (seconds for a timeout, else a count), and
# its help; their destinations are the keys of the settings of serving.
_LIMITS = (
    ( '--header-timeout', "seconds in which a request must complete its "
      "headers, or the connection is closed (default: 10)" ),
    ( '--body-timeout', "seconds in which a request must complete its body "
      "once its headers are in, or the connection is closed (default: "
      "30)" ),
    ( '--idle-timeout', "seconds an idle kept-alive connection stays open "
      "(default: 5)" ),
    ( '--connections-maximum', "connections and requests at once, per "
      "worker; more get 503 (default: 1000)" ),
    ( '--sessions-maximum', "sessions open at once; a client which would "
      "open one more gets 503 (default: 10000; not with --stateless)" ),
    ( '--session-idle-timeout', "seconds a session without requests stays "
      "open, then it is closed (default: 1800; not with --stateless)" ),
)
_PROGRAM = 'invocables serve'
_PROTOCOL = 'invocables.serving:HeaderTimeoutProtocol'
_SPEAKER = 'invocables' # of the lines which say where it serves, and when
_WILDCARDS = __.types.MappingProxyType( {
    '': '127.0.0.1', '0.0.0.0': '127.0.0.1', '::': '::1' } ) # noqa: S104


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
        '--port', type = _validate_port, default = PORT_DEFAULT,
        help = "port to listen on, 1 to 65535, or 0 for any free port "
        "(default: 8000)" )
    parser.add_argument(
        '--stateless', action = 'store_true',
        help = "no sessions: every request stands alone, so that several "
        "workers can serve" )
    parser.add_argument(
        '--workers', type = _commands.validate_count, default = 1,
        help = "worker processes (needs --stateless)" )
    parser.add_argument(
        '--token-variable', metavar = 'NAME',
        help = "environment variable which holds the bearer token every "
        "HTTP request must carry" )
    parser.add_argument(
        '--no-token', action = 'store_true',
        help = "serve beyond the loopback without a token (refused "
        "otherwise; whoever reaches the server can call every tool)" )
    parser.add_argument(
        '--allowed-host', metavar = 'NAME', action = 'append', default = [ ],
        help = "host name (or NAME:PORT) which clients may give in the Host "
        "header, besides the loopback names; repeatable" )
    parser.add_argument(
        '--allowed-origin', metavar = 'ORIGIN', action = 'append',
        default = [ ],
        help = "origin (https://app.example.com) which browsers may give, "
        "besides those of the allowed hosts; repeatable" )
    for name, text in _LIMITS:
        seconds = name.endswith( '-timeout' )
        parser.add_argument(
            name, metavar = 'SECONDS' if seconds else 'N',
            type = (
                _validate_seconds if seconds else _commands.validate_count ),
            default = None, help = text )


async def execute_command( options: _argparse.Namespace ) -> int:
    ''' Serves as the parsed options say; returns exit status.

        Everything is checked (options, extra, token, configuration,
        policies, the port) before anything is served. The standard error
        stream says where the server listens once it serves, and that it
        stopped; the standard output stays the protocol's (stdio). Stopped
        by Ctrl-C or SIGTERM, HTTP serving ends well (status 0).
    '''
    if options.http and options.workers > 1 and not options.stateless:
        raise _exceptions.UsageInvalidity(
            "--workers: several workers need --stateless (a session lives "
            "in one worker only)." )
    if options.http and options.stateless: _validate_stateless( options )
    _serving = _import_serving( )
    settings = {
        'configuration': getattr( options, 'configuration', None ),
        'policies': options.policies, 'name': options.name }
    if not options.http:
        # A server which cannot start fails before anything is served.
        server = await _serving.prepare_server(
            settings | { 'connect': True } )
        try:
            await _serving.serve_stdio(
                server, announce = lambda: _announce( server, 'over stdio '
                    '(the end of the standard input or Ctrl-C stops)' ) )
        finally: _say( "stopped." )
        return 0
    _validate_exposure( _serving, options )
    token = _access_token( options.token_variable )
    server = await _serving.prepare_server( settings | { 'connect': True } )
    listener = _listen( options.host, options.port )
    limits = _access_limits( _serving, options )
    if options.workers > 1:
        # The port is free (or chosen, for 0): uvicorn's supervisor binds
        # it again for its workers.
        with listener: url = _describe_url( listener, options.host )
        return await _supervise_workers(
            options, { **settings, **limits }, url )
    application = _serving.produce_application(
        server, stateless = options.stateless,
        token = __.absent if token is None else token, host = options.host,
        allowed_hosts = options.allowed_host,
        allowed_origins = options.allowed_origin,
        allow_unauthenticated = options.no_token,
        sessions_maximum = limits[ 'sessions_maximum' ],
        session_idle_timeout = limits[ 'session_idle_timeout' ] )
    url = _describe_url( listener, options.host )
    with listener:
        return await _serve_http( server, application, listener, url, limits )


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
        status = EXIT_USAGE if isinstance(
            exception, _exceptions.UsageInvalidity ) else EXIT_FAILURE
    raise SystemExit( status )


def produce_worker_application( ) -> __.typx.Any:
    ''' Produces application of a worker process of ``--workers N``.

        For uvicorn's worker processes (``--factory``): the log of each is
        bounded as serve's own (``invocables.serving``'s factory, which
        builds the application, leaves logging alone).
    '''
    # In a worker, uvicorn took the signals before it imports the
    # application: its handler of SIGTERM is the worker's web server.
    def stopping( ) -> bool:
        web_server = getattr(
            _signal.getsignal( _signal.SIGTERM ), '__self__', None )
        return bool( getattr( web_server, 'should_exit', False ) )

    # uvicorn gave its own handler to its workers' loggers.
    _logging.getLogger( 'uvicorn' ).handlers.clear( )
    _bound_logs( _UvicornHandler( stopping ) )
    return _import_serving( ).produce_application_from_environment( )


def _access_token( variable: str | None ) -> str | None:
    if not variable: return None
    token = _os.environ.get( variable )
    if not token:
        raise _exceptions.ConfigurationInvalidity(
            '--token-variable', f"environment variable {variable!r} is "
            "not set or empty; export the token in it." )
    _import_serving( ).applications.validate_token(
        token, f"--token-variable {variable}" )
    return token


def _access_limits(
    serving: __.typx.Any, options: _argparse.Namespace
) -> dict[ str, __.typx.Any ]:
    ''' Returns the limits of HTTP serving, by key of the settings: each
        as its option gives it, or else its default.
    '''
    limits: dict[ str, __.typx.Any ] = { }
    for name, _ in _LIMITS:
        key = name[ 2 : ].replace( '-', '_' )
        value = getattr( options, key )
        limits[ key ] = getattr(
            serving, key.upper( ) + '_DEFAULT' ) if value is None else value
    return limits


def _announce( server: __.typx.Any, where: str ) -> None:
    import invocables.naming as _naming
    count = len( _naming.access_nomenclature( server.ensembles ).designations )
    _say( "serving {count} tool{plural} {where}".format(
        count = count, plural = '' if count == 1 else 's', where = where ) )


def _describe_url( listener: _socket.socket, host: str ) -> str:
    ''' Returns URL which clients use, for the address listened on. '''
    from ..serving import PATH_DEFAULT
    port = listener.getsockname( )[ 1 ]
    address = _WILDCARDS.get( host, host )
    if ':' in address: address = f"[{address}]"
    return f"http://{address}:{port}{PATH_DEFAULT}"


def _import_serving( ) -> __.typx.Any:
    ''' Imports the serving module; names the extra if it is absent. '''
    try: import invocables.serving as serving
    except ImportError as exception:
        name = exception.name or ''
        if not name or name.split( '.', 1 )[ 0 ] == __.package_name: raise
        raise _exceptions.ExtraAbsence(
            'mcp', f"'{_PROGRAM}'" ) from exception
    return serving


def _listen( host: str, port: int ) -> _socket.socket:
    ''' Returns socket bound to host and port; one clear failure else.

        It listens only once the web server serves on it (asyncio listens
        as it starts serving), after the server took the signals: a
        client finds the port open only when it is served, and a SIGTERM
        from then on stops serve cleanly.
    '''
    import errno
    where = f"port {port} on {host}"
    try:
        family, kind, protocol, _, address = _socket.getaddrinfo(
            host or None, port, type = _socket.SOCK_STREAM,
            flags = _socket.AI_PASSIVE )[ 0 ]
    except _socket.gaierror as exception:
        raise _exceptions.ServerActivateFailure(
            f"cannot listen on {host!r}: {exception.strerror}; give an "
            "address of this machine with --host." ) from exception
    listener = _socket.socket( family, kind, protocol )
    try:
        # As uvicorn does: a port left in TIME_WAIT may be bound again.
        listener.setsockopt( _socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1 )
        listener.bind( address )
    except OSError as exception:
        listener.close( )
        reasons = {
            errno.EADDRINUSE: "is in use; stop what uses it or choose "
                "another with --port",
            errno.EACCES: "needs privileges (ports below 1024 do); choose "
                "another with --port",
            errno.EADDRNOTAVAIL: "is not an address of this machine; check "
                "--host",
        }
        reason = reasons.get(
            exception.errno or 0,
            f"cannot be listened on ({exception.strerror})" )
        raise _exceptions.ServerActivateFailure(
            f"{where} {reason}." ) from exception
    return listener


def _say( text: str ) -> None:
    ''' Writes one line on the standard error stream (never stdout). '''
    _sys.stderr.write( f"{_SPEAKER}: {text}\n" )
    _sys.stderr.flush( )


async def _serve_http(
    server: __.typx.Any,
    application: __.typx.Any,
    listener: _socket.socket,
    url: str,
    limits: __.cabc.Mapping[ str, __.typx.Any ],
) -> int:
    ''' Serves application on listener with uvicorn, until stopped.

        Says where it serves once the ensembles are connected, and that it
        stopped. A failure to start (such as an upstream server which
        cannot be reached) is raised as it is, not logged as a traceback;
        uvicorn's own exit at startup is not taken for a tool's.
    '''
    import uvicorn
    failures: list[ BaseException ] = [ ]
    _guard_lifespan(
        application, failures,
        lambda: _announce( server, f"at {url} (Ctrl-C stops)" ) )
    configuration = uvicorn.Config(
        application, log_config = None, log_level = 'warning',
        lifespan = 'on',
        http = _import_serving( ).produce_protocol(
            limits[ 'header_timeout' ], limits[ 'body_timeout' ] ),
        timeout_keep_alive = limits[ 'idle_timeout' ],
        limit_concurrency = limits[ 'connections_maximum' ],
        timeout_graceful_shutdown = _GRACE_SHUTDOWN )
    web_server = _produce_web_server(
        uvicorn.Server, configuration, server.subscriptions.close )
    handler = _UvicornHandler(
        lambda: getattr( web_server, 'should_exit', False ), failures )
    loggers = _bound_logs( handler )
    try: await web_server.serve( sockets = [ listener ] )
    except SystemExit as exception: # uvicorn's, at startup
        if failures: raise failures[ 0 ] from None
        raise _exceptions.ServerActivateFailure(
            f"the web server stopped as it started (status "
            f"{exception.code!r})." ) from None
    finally:
        for logger in loggers:
            logger.removeHandler( handler )
            logger.propagate = True
    if failures: raise failures[ 0 ]
    _say( "stopped." )
    return 0


def _bound_logs( handler: _logging.Handler ) -> list[ _logging.Logger ]:
    ''' Gives handler to the web server's and the SDK's server logs,
        which no longer propagate; returns their loggers.

        Once stopping, the SDK's lines are not shown: the 1.x SDK reports
        its streams closed at shutdown as errors, with tracebacks.
    '''
    loggers = [
        _logging.getLogger( name ) for name in ( 'uvicorn', 'mcp.server' ) ]
    for logger in loggers:
        logger.addHandler( handler )
        logger.propagate = False
    return loggers


def _guard_lifespan(
    application: __.typx.Any,
    failures: list[ BaseException ],
    announce: __.cabc.Callable[ [ ], None ],
) -> None:
    ''' Wraps lifespan of application: keeps failure to start, for it to
        be raised rather than logged; announces once started.
    '''
    inner = application.router.lifespan_context

    @__.ctxl.asynccontextmanager
    async def lifespan(
        app: __.typx.Any
    ) -> __.cabc.AsyncGenerator[ None, None ]:
        async with __.ctxl.AsyncExitStack( ) as stack:
            try: await stack.enter_async_context( inner( app ) )
            except Exception as exception:
                failures.append( exception )
                raise
            announce( )
            yield

    application.router.lifespan_context = lifespan


def _produce_web_server(
    base: type[ __.typx.Any ],
    configuration: __.typx.Any,
    stop: __.cabc.Callable[ [ ], None ],
) -> __.typx.Any:
    ''' Returns uvicorn server which stops on Ctrl-C or SIGTERM and
        returns, rather than raising the signal again once stopped. On the
        signal, stop ends the streams which would keep connections open.
    '''
    import threading

    class Server( base ):

        def handle_exit( self, sig: int, frame: __.typx.Any ) -> None:
            # A signal interrupts the loop: stop runs at its next turn.
            try: __.asyncio.get_running_loop( ).call_soon_threadsafe( stop )
            except RuntimeError: stop( ) # no loop runs
            super( ).handle_exit( sig, frame ) # pyright: ignore[reportUnknownMemberType]

        @__.ctxl.contextmanager
        def capture_signals(
            self
        ) -> __.cabc.Generator[ None, None, None ]:
            if threading.current_thread( ) is not threading.main_thread( ):
                yield
                return
            originals = {
                number: _signal.signal( number, self.handle_exit )
                for number in ( _signal.SIGINT, _signal.SIGTERM ) }
            try: yield
            finally:
                for number, original in originals.items( ):
                    _signal.signal( number, original )

    return Server( configuration )


class _UvicornHandler( _logging.Handler ):
    ''' Shows uvicorn's warnings and errors as one line each, of bounded
        length; the first hundred warnings, and errors, of each logger
        only (clients cause them: refused requests, which echo their
        headers, or bodies cut short). Those of the SDK are not shown once
        the web server stops (stopping).

        Once the application failed to start, its failure is raised and
        uvicorn's report of it (a traceback) is not shown.
    '''

    def __init__(
        self,
        stopping: __.cabc.Callable[ [ ], bool ],
        failures: __.cabc.Sequence[ BaseException ] = ( ),
    ):
        super( ).__init__( _logging.WARNING )
        self.failures = failures
        self.stopping = stopping
        self.tally = __.logs.Tally( )

    def emit( self, record: _logging.LogRecord ) -> None:
        if self.failures: return
        if record.name.startswith( 'mcp.' ) and self.stopping( ): return
        lines = record.getMessage( ).strip( ).splitlines( )
        if not lines: return
        genus = 'error' if record.levelno >= _logging.ERROR else 'warning'
        note = self.tally.count( record.name, genus )
        if note is None: return
        line = __.logs.bound_line( lines[ -1 ] ) + note
        _sys.stderr.write( f"{_SPEAKER}: {genus}: {line}\n" )


def _validate_port( text: str ) -> int:
    ''' Returns port: 1 to 65535, or 0 for any free one (for argparse).
    '''
    try: port = int( text )
    except ValueError: port = -1
    if not 0 <= port <= 65535: # noqa: PLR2004
        raise _argparse.ArgumentTypeError(
            f"expected a port from 1 to 65535 (or 0: any free port), not "
            f"{text!r}" )
    return port


def _validate_exposure(
    serving: __.typx.Any, options: _argparse.Namespace
) -> None:
    ''' Refuses to serve beyond the loopback without a token, unless
        ``--no-token`` says so; refuses ``--no-token`` with a token.
    '''
    if options.no_token and options.token_variable:
        raise _exceptions.UsageInvalidity(
            "--no-token: contradicts --token-variable; give one of them." )
    if options.token_variable or options.no_token: return
    names = [ options.host or '0.0.0.0', *options.allowed_host ] # noqa: S104
    foreign = [ name for name in names if not serving.is_loopback( name ) ]
    if not foreign: return
    raise _exceptions.UsageInvalidity(
        "serving beyond the loopback ({names}) without a token; give "
        "--token-variable NAME, or --no-token to allow anyone who reaches "
        "the server to call every tool.".format(
            names = ', '.join( foreign ) ) )


def _validate_seconds( text: str ) -> float:
    ''' Returns seconds: a number above 0 (for argparse). '''
    try: seconds = float( text )
    except ValueError: seconds = 0.0
    if not seconds > 0 or seconds == float( 'inf' ):
        raise _argparse.ArgumentTypeError(
            f"expected a number of seconds above 0, not {text!r}" )
    return seconds


def _validate_stateless( options: _argparse.Namespace ) -> None:
    ''' Refuses the options of sessions with ``--stateless``. '''
    for key in ( 'sessions_maximum', 'session_idle_timeout' ):
        if getattr( options, key ) is None: continue
        raise _exceptions.UsageInvalidity(
            "--{name}: --stateless serves no sessions; give one of "
            "them.".format( name = key.replace( '_', '-' ) ) )


async def _supervise_workers(
    options: _argparse.Namespace,
    settings: __.cabc.Mapping[ str, __.typx.Any ],
    url: str,
) -> int:
    ''' Runs uvicorn's supervisor of worker processes; returns its status.

        Workers build the application from the settings and the options
        passed in the environment (never the token itself: the name of its
        variable); uvicorn's own limits are its command's options.
    '''
    import invocables.serving as _serving
    environment = dict( _os.environ )
    environment[ _serving.OPTIONS_VARIABLE ] = __.json.dumps( {
        **settings, 'stateless': True,
        'token_variable': options.token_variable, 'host': options.host,
        'allowed_hosts': options.allowed_host,
        'allowed_origins': options.allowed_origin,
        'allow_unauthenticated': options.no_token } )
    port = url.rsplit( ':', 1 )[ 1 ].split( '/', 1 )[ 0 ]
    # Signals are handled before the line which invites them is said: a
    # signal in between would kill this process and orphan the workers.
    stopped: list[ int ] = [ ]
    processes: list[ __.asyncio.subprocess.Process ] = [ ]
    def stop( number: int ) -> None:
        stopped.append( number )
        for process in processes:
            if process.returncode is None: process.terminate( )
    loop = __.asyncio.get_running_loop( )
    numbers = ( _signal.SIGINT, _signal.SIGTERM )
    for number in numbers: loop.add_signal_handler( number, stop, number )
    try:
        processes.append( await __.asyncio.create_subprocess_exec(
            _sys.executable, '-m', 'uvicorn', '--factory', _FACTORY,
            '--host', options.host, '--port', port,
            '--workers', str( options.workers ), '--log-level', 'warning',
            '--http', _PROTOCOL,
            # uvicorn's command takes whole seconds.
            '--timeout-keep-alive',
            str( __.math.ceil( settings[ 'idle_timeout' ] ) ),
            '--limit-concurrency', str( settings[ 'connections_maximum' ] ),
            '--timeout-graceful-shutdown', str( _GRACE_SHUTDOWN ),
            env = environment ) )
        process = processes[ 0 ]
        if stopped: process.terminate( )
        _say( f"starting {options.workers} workers at {url} (Ctrl-C stops)" )
        try: status = await process.wait( )
        except __.asyncio.CancelledError:
            process.terminate( )
            await process.wait( )
            raise
    finally:
        for number in numbers: loop.remove_signal_handler( number )
        _say( "stopped." )
    return 0 if stopped else status
