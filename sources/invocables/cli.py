# SPDX-License-Identifier: Apache-2.0

''' The ``invocables`` command: survey, invoke, schemas and snapshot.

    The configuration is the file given with ``--configuration``, else the
    file named by the ``INVOCABLES_CONFIGURATION`` environment variable,
    else ``invocables/invocables.toml`` in the user's configuration folder
    (``$XDG_CONFIG_HOME``, by default ``~/.config``), else the shipped
    defaults (the built-in ``io`` ensemble, reading the current directory).
    Errors print one line on the standard error stream (for a descriptor,
    naming its file and key) and exit with a non-zero status: never a
    traceback, never a silent exit, also when a tool or an imported module
    asks the program to exit.
'''


import argparse as _argparse
import os as _os
import sys as _sys
import warnings as _warnings

from . import __
from . import canisters as _canisters
from . import descriptors as _descriptors
from . import ensembles as _ensembles
from . import exceptions as _exceptions
from . import execution as _execution
from . import naming as _naming
from .descriptors import access_data_location as _access_data_location


CONFIGURATION_VARIABLE = 'INVOCABLES_CONFIGURATION'
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTION = 130

_PROGRAM = 'invocables'


class UsageInvalidity( _exceptions.Omnierror, ValueError ):
    ''' Command was used wrongly (exit status 2). '''


def locate_configuration(
    option: __.Absential[ str ] = __.absent
) -> __.Path:
    ''' Returns path of configuration: option, variable, user, shipped.

        A leading ``~`` is left for the loading of the configuration to
        expand (which reports a home folder that cannot be found).
    '''
    if not __.is_absent( option ): return __.Path( option )
    variable = _os.environ.get( CONFIGURATION_VARIABLE )
    if variable: return __.Path( variable )
    home = _os.environ.get( 'XDG_CONFIG_HOME' ) or str(
        __.Path.home( ) / '.config' )
    user = __.Path( home ) / 'invocables' / _descriptors.CONFIGURATION_NAME
    if user.is_file( ): return user
    return (
        _access_data_location( ) / 'configuration'
        / _descriptors.CONFIGURATION_NAME )


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
            f"{_PROGRAM}: error: something called sys.exit( "
            f"{exception.code!r} ) while the command ran (a tool, or a "
            "module imported for one); the command stopped.\n" )
        status = _access_exit_status( exception )
    except KeyboardInterrupt:
        _sys.stderr.write( f"{_PROGRAM}: interrupted.\n" )
        status = EXIT_INTERRUPTION
    except BrokenPipeError: # reader went away, as with 'head'
        devnull = _os.open( _os.devnull, _os.O_WRONLY )
        _os.dup2( devnull, _sys.stdout.fileno( ) )
        status = EXIT_FAILURE
    except UsageInvalidity as exception:
        _sys.stderr.write( f"{_PROGRAM}: error: {exception}\n" )
        status = EXIT_USAGE
    except Exception as exception: # one line, no traceback
        _sys.stderr.write( _describe_exception( exception ) )
        status = EXIT_FAILURE
    raise SystemExit( status )


def _access_exit_status( exception: SystemExit ) -> int:
    ''' Returns non-zero status for exit request: its own, or failure. '''
    code = exception.code
    if isinstance( code, int ) and not isinstance( code, bool ) and code:
        return code
    return EXIT_FAILURE


async def _connect_quietly(
    ensemble: _ensembles.Ensemble
) -> __.Absential[ Exception ]:
    try: await ensemble.connect( )
    except Exception as exception: return exception
    return __.absent


def _describe_exception( exception: BaseException ) -> str:
    message = ' '.join( str( exception ).split( ) )
    if not isinstance( exception, _exceptions.Omnierror ):
        message = "{genus}: {message}".format(
            genus = type( exception ).__name__, message = message )
    return f"{_PROGRAM}: error: {message}\n"


async def _disconnect(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ]
) -> None:
    for ensemble in reversed( ensembles ):
        await _disconnect_quietly( ensemble )


async def _disconnect_quietly( ensemble: _ensembles.Ensemble ) -> None:
    try: await ensemble.disconnect( )
    except Exception as exception:
        _sys.stderr.write( _describe_exception( exception ) )


def _describe_kind( ensemble: _ensembles.Ensemble ) -> str:
    server = getattr( ensemble, 'server', None )
    parameters = getattr( ensemble, 'parameters', None )
    if isinstance( server, _descriptors.ServerDescriptor ):
        return f"MCP {server.transport}, pinned"
    if parameters is not None:
        transport = getattr( parameters, 'transport', None )
        genus = getattr( transport, 'value', transport )
        return f"MCP {genus}"
    return 'local'


async def _execute_converse( options: _argparse.Namespace ) -> int:
    from .conversations import _command as _conversing
    client = _conversing.produce_client( options.provider, options.base_url )
    model = _conversing.access_model(
        options.provider, options.model, options.base_url )
    configuration = _produce_configuration( options )
    ensembles = await _descriptors.prepare_ensembles(
        configuration, connect = True )
    try:
        finished = await _conversing.converse(
            client, ensembles, options.provider, model, options.prompt,
            options.rounds, ( _sys.stdout, _sys.stderr ),
            _sys.stdin if options.confirm else None )
    finally: await _disconnect( ensembles )
    if finished: return 0
    _sys.stderr.write(
        f"{_PROGRAM}: stopped after {options.rounds} rounds, with tool "
        "calls answered but no final reply; raise --rounds.\n" )
    return EXIT_FAILURE


async def _execute_invoke( options: _argparse.Namespace ) -> int:
    try: arguments = __.json.loads( options.arguments )
    except ( ValueError, RecursionError ) as exception:
        reason = (
            "it nests too deeply" if isinstance( exception, RecursionError )
            else str( exception ) )
        raise UsageInvalidity(
            f"--arguments is not valid JSON ({reason}); give one JSON "
            "object, such as '{\"path\": \".\"}'." ) from exception
    configuration = _produce_configuration( options )
    ensembles = await _descriptors.prepare_ensembles(
        configuration, connect = True )
    try:
        invocation = _canisters.InvocationCanister(
            identifier = 'invocables-cli', name = options.name,
            arguments = arguments )
        results = await _execution.execute_invocations(
            [ invocation ], ensembles,
            failure_policy = _execution.FailurePolicies.Report )
    finally: await _disconnect( ensembles )
    result = results[ 0 ]
    if options.json:
        _sys.stdout.write( __.json.dumps(
            _render_result( result ), indent = 2 ) + '\n' )
    else:
        text = '\n'.join(
            _canisters.render_content_text( item )
            for item in result.content )
        if text: _sys.stdout.write( text.rstrip( '\n' ) + '\n' )
    if __.is_absent( result.error ): return 0
    if not options.json:
        _sys.stderr.write( "{program}: error: {message}\n".format(
            program = _PROGRAM,
            message = ' '.join( result.error.message.split( ) ) ) )
    return EXIT_FAILURE


async def _execute_schemas( options: _argparse.Namespace ) -> int:
    from . import processors as _processors
    provider: str = options.provider
    processor = _processors.produce_processor( provider )
    configuration = _produce_configuration( options )
    ensembles = await _descriptors.prepare_ensembles(
        configuration, connect = True )
    try: tools = processor.prepare_tools( ensembles )
    finally: await _disconnect( ensembles )
    _sys.stdout.write(
        __.json.dumps( tools, indent = 2, ensure_ascii = False ) + '\n' )
    return 0


async def _execute_snapshot( options: _argparse.Namespace ) -> int:
    configuration = _produce_configuration( options )
    try: descriptor = configuration.access_ensemble( options.name )
    except _exceptions.EnsembleAbsence as exception:
        names = ', '.join(
            item.name for item in configuration.ensembles
            if not __.is_absent( item.server ) ) or 'none'
        raise UsageInvalidity(
            f"no ensemble named {options.name!r} in "
            f"{configuration.location}; MCP servers there: "
            f"{names}." ) from exception
    if __.is_absent( descriptor.server ):
        raise UsageInvalidity(
            f"ensemble {options.name!r} is not an MCP server; only "
            "servers can be snapshot." )
    target = options.folder / f"{descriptor.name}.toml"
    if target.exists( ) and not options.replace:
        raise _exceptions.DescriptorInvalidity(
            str( target ), '', "the file exists already; choose another "
            "folder or pass --replace." )
    ensemble = _descriptors.produce_ensemble(
        __.dcls.replace( descriptor, invokers = ( ) ) )
    await ensemble.connect( )
    try:
        path = _descriptors.create_descriptors(
            ensemble, options.folder, server = descriptor.server,
            replace = options.replace )
        count = len( ensemble.survey_invokers( ) )
    finally: await _disconnect( [ ensemble ] )
    _sys.stdout.write(
        "Wrote {path} ({count} tools). To offer the pinned "
        "tools, name this file as 'source' of an [[ensembles]] entry of "
        "the configuration (relative to the folder of the "
        "configuration).\n".format( path = path.resolve( ), count = count ) )
    return 0


async def _execute_survey( options: _argparse.Namespace ) -> int:
    configuration = _produce_configuration( options )
    ensembles = await _descriptors.prepare_ensembles( configuration )
    failures: list[ __.Absential[ Exception ] ] = [ ]
    try:
        # One by one, so that those connected before a cancellation are
        # known and disconnected.
        for ensemble in ensembles:
            failures.append( await _connect_quietly( ensemble ) ) # noqa: PERF401
        connected = [
            ensemble for ensemble, failure in zip( ensembles, failures )
            if __.is_absent( failure ) ]
        nomenclature = _naming.produce_nomenclature( connected )
        report = _produce_survey(
            configuration, ensembles, failures, nomenclature )
    finally:
        await _disconnect( [
            ensemble for ensemble, failure in zip( ensembles, failures )
            if __.is_absent( failure ) ] )
    if options.json:
        _sys.stdout.write( __.json.dumps( report, indent = 2 ) + '\n' )
    else: _sys.stdout.write( _render_survey( report ) )
    return EXIT_FAILURE if any(
        not __.is_absent( failure ) for failure in failures ) else 0


def _produce_configuration(
    options: _argparse.Namespace
) -> _descriptors.Configuration:
    option = getattr( options, 'configuration', None )
    path = locate_configuration( __.absent if option is None else option )
    return _descriptors.produce_configuration( path )


def _produce_parser( ) -> _argparse.ArgumentParser:
    common = _argparse.ArgumentParser( add_help = False )
    common.add_argument(
        '--configuration', metavar = 'PATH', default = _argparse.SUPPRESS,
        help = "configuration file (default: $INVOCABLES_CONFIGURATION, "
        "then $XDG_CONFIG_HOME/invocables/invocables.toml, then the "
        "shipped defaults)" )
    parser = _argparse.ArgumentParser(
        prog = _PROGRAM, parents = [ common ],
        description = "Survey, try and export the tools of a configuration." )
    commands = parser.add_subparsers(
        dest = 'command', required = True, metavar = 'COMMAND' )
    survey = commands.add_parser(
        'survey', parents = [ common ],
        help = "list ensembles and tools, with provider-facing names" )
    survey.add_argument(
        '--json', action = 'store_true', help = "print JSON" )
    survey.set_defaults( execute = _execute_survey )
    invoke = commands.add_parser(
        'invoke', parents = [ common ],
        help = "validate and run one tool, print its result" )
    invoke.add_argument( 'name', help = "provider-facing tool name" )
    invoke.add_argument(
        '--arguments', metavar = 'JSON', default = '{}',
        help = "arguments as one JSON object (default: {})" )
    invoke.add_argument(
        '--json', action = 'store_true',
        help = "print the result as JSON (content and error)" )
    invoke.set_defaults( execute = _execute_invoke )
    _produce_parser_extras( commands, common )
    _produce_parser_converse( commands, common )
    return parser


def _describe_providers( default: str = '' ) -> str:
    ''' Returns names of providers for help, with notes and default. '''
    from . import providers
    names = [
        provider.name + ''.join(
            f" ({note})" for note in (
                'default' if provider.name == default else '',
                provider.description ) if note )
        for provider in providers.PROVIDERS.values( ) ]
    return ', '.join( names[ : -1 ] ) + ' or ' + names[ -1 ]


def _produce_parser_converse(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
    converse = commands.add_parser(
        'converse', parents = [ common ],
        help = "run a conversation with the tools; streams the reply" )
    converse.add_argument( 'prompt', help = "what to ask the model" )
    converse.add_argument(
        '--provider', default = 'anthropic',
        help = _describe_providers( 'anthropic' ) )
    converse.add_argument(
        '--model', help = "model name (default: the provider's default; "
        "required with --base-url and for ollama)" )
    converse.add_argument(
        '--base-url', help = "URL of an OpenAI-compatible server, such as "
        "http://127.0.0.1:11434/v1 for Ollama (no key needed)" )
    converse.add_argument(
        '--rounds', type = int, default = 10,
        help = "most calls of the model (default: 10)" )
    converse.add_argument(
        '--confirm', action = 'store_true',
        help = "ask before each tool call; answers (y or n) are read from "
        "the standard input" )
    converse.set_defaults( execute = _execute_converse )


def _produce_parser_extras(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
    schemas = commands.add_parser(
        'schemas', parents = [ common ],
        help = "print tool definitions as a provider receives them" )
    schemas.add_argument(
        '--provider', required = True,
        help = "provider: {names}".format(
            names = _describe_providers( ) ) )
    schemas.set_defaults( execute = _execute_schemas )
    snapshot = commands.add_parser(
        'snapshot', parents = [ common ],
        help = "write descriptors of the tools of a configured MCP server" )
    snapshot.add_argument( 'name', help = "ensemble name of the server" )
    snapshot.add_argument(
        '--folder', default = '.', type = __.Path,
        help = "folder which receives the descriptors (default: .)" )
    snapshot.add_argument(
        '--replace', action = 'store_true',
        help = "replace descriptors written before" )
    snapshot.set_defaults( execute = _execute_snapshot )


def _produce_survey(
    configuration: _descriptors.Configuration,
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ],
    failures: __.cabc.Sequence[ __.Absential[ Exception ] ],
    nomenclature: _naming.Nomenclature,
) -> dict[ str, __.typx.Any ]:
    entries: list[ dict[ str, __.typx.Any ] ] = [ ]
    for ensemble, failure in zip( ensembles, failures ):
        entry: dict[ str, __.typx.Any ] = {
            'name': ensemble.name, 'kind': _describe_kind( ensemble ),
            'description': ensemble.configuration.description,
            'tools': [ ] }
        if not __.is_absent( failure ):
            entry[ 'error' ] = _describe_exception( failure ).strip( )
        else:
            entry[ 'tools' ] = [ {
                'name': invoker.name,
                'provider_name': nomenclature.access_name(
                    ensemble.name, invoker.name ),
                'description': invoker.description,
            } for invoker in ensemble.survey_invokers( ) ]
        entries.append( entry )
    disabled = [
        descriptor.name for descriptor in configuration.ensembles
        if not descriptor.enabled ]
    return {
        'configuration': configuration.location,
        'roots': [
            { 'path': str( root.path ), 'writable': root.writable }
            for root in configuration.roots ],
        'ensembles': entries, 'disabled': disabled }


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
    _sys.stderr.write( f"{_PROGRAM}: warning: {text}\n" )


def _render_result( result: _canisters.ResultCanister ) -> __.typx.Any:
    return {
        'content': [
            _canisters.render_content_text( item )
            for item in result.content ],
        'error': (
            None if __.is_absent( result.error ) else {
                'genus': result.error.genus.value,
                'message': result.error.message } ) }


def _render_survey( report: __.cabc.Mapping[ str, __.typx.Any ] ) -> str:
    lines = [ "Configuration: {location}".format(
        location = report[ 'configuration' ] ) ]
    roots = report[ 'roots' ] or [
        { 'path': "{path} (current directory)".format( path = __.Path.cwd( ) ),
          'writable': False } ]
    lines.extend(
        "Root: {path} ({mode})".format(
            path = root[ 'path' ],
            mode = 'writable' if root[ 'writable' ] else 'read-only' )
        for root in roots )
    for entry in report[ 'ensembles' ]:
        lines.append( '' )
        error = entry.get( 'error' )
        lines.append( "Ensemble {name} ({kind}, {count} tools){error}".format(
            name = entry[ 'name' ], kind = entry[ 'kind' ],
            count = len( entry[ 'tools' ] ),
            error = f": {error}" if error else '' ) )
        width = max(
            ( len( tool[ 'provider_name' ] ) for tool in entry[ 'tools' ] ),
            default = 0 )
        for tool in entry[ 'tools' ]:
            summary = _summarize( tool[ 'description' ] )
            lines.append( "  {name}  {summary}".format(
                name = tool[ 'provider_name' ].ljust( width ),
                summary = summary ) )
    if report[ 'disabled' ]:
        lines.append( '' )
        lines.append( "Disabled: {names}".format(
            names = ', '.join( report[ 'disabled' ] ) ) )
    return '\n'.join( lines ) + '\n'


def _summarize( description: str ) -> str:
    ''' Returns first sentence of description, on one line. '''
    text = ' '.join( description.split( ) )
    sentence, separator, _ = text.partition( '. ' )
    return sentence + ( '.' if separator else '' )


if __name__ == '__main__': main( )
