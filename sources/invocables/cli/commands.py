# SPDX-License-Identifier: Apache-2.0

''' The survey, invoke, schemas and snapshot commands of ``invocables``.

    The configuration is the file given with ``--configuration``, else the
    file named by the ``INVOCABLES_CONFIGURATION`` environment variable,
    else ``invocables/invocables.toml`` in the user's configuration folder
    (``$XDG_CONFIG_HOME``, by default ``~/.config``), else the shipped
    defaults (the built-in ``io`` ensemble, reading the current directory).
'''


import argparse as _argparse
import sys as _sys

import invocables.cli.__ as __
import invocables.cli._escapes as _escapes
import invocables.canisters as _canisters
import invocables.descriptors as _descriptors
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.execution as _execution
import invocables.naming as _naming
import invocables.providers as _providers
import invocables.descriptors.paths as _paths


EXIT_FAILURE = 1
EXIT_INTERRUPTION = 130
EXIT_SUCCESS = 0
EXIT_USAGE = 2
PROGRAM = 'invocables'
STDIN_ARGUMENT = '-'

_EXTRAS_PARTS = __.types.MappingProxyType( {
    'mcp': f"{__.package_name}.mcp",
} )


def add_command(
    commands: __.typx.Any,
    common: _argparse.ArgumentParser,
    name: str,
    execute: __.cabc.Callable[
        [ _argparse.Namespace ], __.cabc.Awaitable[ int ] ],
    summary: str,
) -> _argparse.ArgumentParser:
    ''' Returns parser of a command, which execute runs. '''
    parser = commands.add_parser( name, parents = [ common ], help = summary )
    parser.set_defaults( execute = execute )
    return parser


@__.ctxl.asynccontextmanager
async def connect_configuration(
    options: _argparse.Namespace,
    *,
    connect: bool = True,
    interactive: bool = False,
) -> __.cabc.AsyncGenerator[ tuple[ _ensembles.Ensemble, ... ], None ]:
    ''' Yields enabled ensembles of the configuration which the options
        locate (see :py:func:`prepare_ensembles`); disconnects them after.
    '''
    configuration = produce_configuration( options )
    ensembles = await prepare_ensembles(
        configuration, connect = connect, interactive = interactive )
    try: yield ensembles
    finally: await disconnect( ensembles )


async def connect_ensembles(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ],
    *,
    tolerant: bool = False,
) -> list[ __.Absential[ Exception ] ]:
    ''' Connects ensembles concurrently; returns failure of each, if any.

        Reports each MCP server on the error stream of a terminal while it
        connects and lists its tools. Unless tolerant, the first failure (in
        the order of the ensembles) is raised once every ensemble is
        disconnected. After a cancellation, every ensemble is disconnected
        (those connected already too) before it propagates.
    '''
    servers = [
        ensemble for ensemble in ensembles if _is_server( ensemble ) ]
    async def connect(
        ensemble: _ensembles.Ensemble
    ) -> __.Absential[ Exception ]:
        if ensemble in servers:
            report_progress( "connecting to {name!r} ({index} of {count})"
                "...".format(
                    name = ensemble.name,
                    index = servers.index( ensemble ) + 1,
                    count = len( servers ) ) )
        try: await ensemble.connect( )
        except Exception as exception: return exception
        return __.absent
    tasks = [
        __.asyncio.ensure_future( connect( ensemble ) )
        for ensemble in ensembles ]
    try: failures = list( await __.asyncio.gather( *tasks ) )
    except BaseException:
        for task in tasks: task.cancel( )
        await __.asyncio.gather( *tasks, return_exceptions = True )
        await disconnect( ensembles )
        raise
    failure = next(
        ( item for item in failures if not __.is_absent( item ) ), None )
    if failure is not None and not tolerant:
        await disconnect( ensembles )
        raise failure
    return failures


def describe_exception( exception: BaseException ) -> str:
    ''' Returns one line for the error stream, naming the error. '''
    return f"{PROGRAM}: error: {describe_message( exception )}\n"


def describe_message( exception: BaseException ) -> str:
    ''' Returns message of exception on one line, without prefix.

        Errors of the library say what failed; the class names others.
    '''
    message = _escapes.escape_text( ' '.join( str( exception ).split( ) ) )
    if isinstance( exception, _exceptions.Omnierror ): return message
    return "{genus}: {message}".format(
        genus = type( exception ).__name__, message = message ).rstrip(
            ': ' )


def describe_error( exception: BaseException ) -> dict[ str, str ]:
    ''' Returns error as data, for JSON output: genus and message. '''
    return {
        'genus': type( exception ).__name__,
        'message': ' '.join( str( exception ).split( ) ) }


async def disconnect(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ]
) -> None:
    ''' Disconnects ensembles in reverse order; reports failures. '''
    for ensemble in reversed( ensembles ):
        await _disconnect_quietly( ensemble )


async def _disconnect_quietly( ensemble: _ensembles.Ensemble ) -> None:
    try: await ensemble.disconnect( )
    except Exception as exception:
        _sys.stderr.write( describe_exception( exception ) )


async def _execute_invoke( options: _argparse.Namespace ) -> int:
    arguments = _parse_arguments( options.arguments )
    async with connect_configuration(
        options, interactive = True
    ) as ensembles:
        invocation = _canisters.InvocationCanister(
            identifier = 'invocables-cli', name = options.name,
            arguments = arguments )
        results = await _execution.execute_invocations(
            [ invocation ], ensembles, _execution.ExecutionOptions(
                failure_policy = _execution.FailurePolicies.Report,
                policy = _produce_policy( options ) ) )
    result = results[ 0 ]
    if options.json:
        _sys.stdout.write( __.json.dumps(
            _render_result( result ), indent = 2 ) + '\n' )
    else:
        text = '\n'.join(
            _canisters.render_content_text( item )
            for item in result.content )
        if text: _sys.stdout.write(
            _escapes.escape_text( text.rstrip( '\n' ) ) + '\n' )
    if __.is_absent( result.error ): return EXIT_SUCCESS
    if not options.json:
        _sys.stderr.write( "{program}: error: {message}\n".format(
            program = PROGRAM, message = _escapes.escape_text(
                ' '.join( result.error.message.split( ) ) ) ) )
    return EXIT_FAILURE


async def _execute_schemas( options: _argparse.Namespace ) -> int:
    import invocables.processors as _processors
    provider = validate_provider( options.provider, 'schemas' )
    processor = _processors.produce_processor( provider )
    async with connect_configuration( options ) as ensembles:
        tools = processor.prepare_tools( ensembles )
    text = __.json.dumps( tools, indent = 2, ensure_ascii = False )
    # Controls which JSON leaves as they are (C1, bidirectional) escaped.
    _sys.stdout.write( _escapes.escape_json_text( text ) + '\n' )
    return 0


async def _execute_snapshot( options: _argparse.Namespace ) -> int:
    configuration = produce_configuration( options )
    try: descriptor = configuration.access_ensemble( options.name )
    except _exceptions.EnsembleAbsence as exception:
        names = ', '.join(
            item.name for item in configuration.ensembles
            if not __.is_absent( item.server ) ) or 'none'
        raise _exceptions.UsageInvalidity(
            f"no ensemble named {options.name!r} in "
            f"{configuration.location}; MCP servers there: "
            f"{names}." ) from exception
    if __.is_absent( descriptor.server ):
        raise _exceptions.UsageInvalidity(
            f"ensemble {options.name!r} is not an MCP server; only "
            "servers can be snapshot." )
    target = options.folder / _descriptors.access_descriptor_path(
        descriptor.name )
    if target.exists( ) and not options.replace:
        raise _exceptions.DescriptorInvalidity(
            str( target ), '', "the file exists already; choose another "
            "folder or pass --replace." )
    verify_extras( configuration, ( descriptor, ) )
    ensemble = _descriptors.produce_ensemble(
        __.dcls.replace( descriptor, invokers = ( ) ) )
    await connect_ensembles( [ ensemble ] )
    try:
        path = _descriptors.create_descriptors(
            ensemble, options.folder, server = descriptor.server,
            replace = options.replace )
        count = len( ensemble.survey_invokers( ) )
    finally: await disconnect( [ ensemble ] )
    _sys.stdout.write(
        "Wrote {path} ({count} tools). To offer the pinned "
        "tools, name this file as 'source' of an [[ensembles]] entry of "
        "the configuration (relative to the folder of the "
        "configuration).\n".format( path = path.resolve( ), count = count ) )
    return 0


async def _execute_survey( options: _argparse.Namespace ) -> int:
    configuration = produce_configuration( options )
    ensembles = await prepare_ensembles( configuration, connect = False )
    failures = await connect_ensembles( ensembles, tolerant = True )
    try:
        connected = [
            ensemble for ensemble, failure in zip( ensembles, failures )
            if __.is_absent( failure ) ]
        nomenclature = _naming.produce_nomenclature( connected )
        report = _produce_survey(
            configuration, ensembles, failures, nomenclature )
    finally: await disconnect( ensembles )
    if options.json:
        _sys.stdout.write( __.json.dumps( report, indent = 2 ) + '\n' )
    else:
        _sys.stdout.write( _escapes.escape_text( _render_survey( report ) ) )
    return EXIT_FAILURE if any(
        not __.is_absent( failure ) for failure in failures ) else 0


def _is_server( ensemble: _ensembles.Ensemble ) -> bool:
    ''' Returns whether ensemble reaches an MCP server; tells without
        importing the ``mcp`` subpackage.
    '''
    if isinstance( ensemble, _descriptors.PinnedEnsemble ): return True
    return type( ensemble ).__module__.startswith(
        f"{__.package_name}.mcp" )


def _parse_arguments( text: str ) -> dict[ str, __.typx.Any ]:
    ''' Returns arguments of --arguments: JSON object, or standard input.
    '''
    source = '--arguments'
    if text == STDIN_ARGUMENT:
        source = 'the standard input (--arguments -)'
        text = _sys.stdin.read( )
    try: arguments = __.json.loads( text )
    except ( ValueError, RecursionError ) as exception:
        reason = (
            "it nests too deeply" if isinstance( exception, RecursionError )
            else str( exception ) )
        raise _exceptions.UsageInvalidity(
            f"{source} is not valid JSON ({reason}); give one JSON "
            "object, such as '{\"path\": \".\"}'." ) from exception
    if not isinstance( arguments, dict ):
        raise _exceptions.UsageInvalidity(
            f"{source} must be a JSON object, not "
            f"{type( arguments ).__name__}; give one JSON object, such as "
            "'{\"path\": \".\"}'." )
    return __.typx.cast( dict[ str, __.typx.Any ], arguments )


async def prepare_ensembles(
    configuration: _descriptors.Configuration,
    *,
    connect: bool = True,
    interactive: bool = False,
) -> tuple[ _ensembles.Ensemble, ... ]:
    ''' Returns enabled ensembles of configuration, connected if asked.

        Checks first that the extras which they need are installed. With
        interactive, MCP servers may ask the user in the terminal (see
        :py:func:`produce_elicitor`).
    '''
    descriptors = verify_extras( configuration )
    elicitor = produce_elicitor( ) if interactive and descriptors else (
        __.absent )
    ensembles = await _descriptors.prepare_ensembles(
        configuration, connect = False, elicitor = elicitor )
    if connect: await connect_ensembles( ensembles )
    return ensembles


def report_progress( text: str ) -> None:
    ''' Writes progress line on the error stream, if it is a terminal.

        Pipes, files and tests see nothing.
    '''
    stream = _sys.stderr
    try: terminal = stream.isatty( )
    except ( AttributeError, ValueError ): terminal = False
    if not terminal: return
    stream.write( f"{PROGRAM}: {text}\n" )
    stream.flush( )


def verify_extras(
    configuration: _descriptors.Configuration,
    descriptors: __.Absential[
        __.cabc.Sequence[ _descriptors.EnsembleDescriptor ] ] = __.absent,
) -> tuple[ _descriptors.EnsembleDescriptor, ... ]:
    ''' Returns descriptors of MCP servers; raises if the extra is absent.

        Of the enabled ensembles of the configuration, unless given. The
        ``mcp`` subpackage (and SDK) is imported only when there are some.
    '''
    if __.is_absent( descriptors ):
        descriptors = [
            descriptor for descriptor in configuration.ensembles
            if descriptor.enabled ]
    servers = tuple(
        descriptor for descriptor in descriptors
        if not __.is_absent( descriptor.server ) )
    if servers: import_extra( 'mcp', f"the MCP server {servers[ 0 ].name!r}" )
    return servers


def import_extra( extra: str, user: str ) -> None:
    ''' Imports the part of the package which an extra serves; raises
        :py:class:`invocables.exceptions.ExtraAbsence` if it is absent.

        The extra ``mcp`` serves the ``mcp`` subpackage (with the SDK,
        uvicorn and starlette).
    '''
    from importlib import import_module
    module = _EXTRAS_PARTS.get( extra )
    if module is None: return
    try: import_module( module )
    except ImportError as exception:
        if not _is_foreign( exception ): raise
        raise _exceptions.ExtraAbsence( extra, user ) from exception


def _is_foreign( exception: ImportError ) -> bool:
    ''' Returns whether a module of another distribution is missing. '''
    name = exception.name or ''
    return bool( name ) and name.split( '.', 1 )[ 0 ] != __.package_name


def produce_configuration(
    options: _argparse.Namespace
) -> _descriptors.Configuration:
    ''' Returns configuration which the options locate. '''
    option = getattr( options, 'configuration', None )
    path = _paths.locate_configuration(
        __.absent if option is None else option )
    return _descriptors.produce_configuration( path )


def produce_elicitor( ) -> __.typx.Any:
    ''' Returns elicitor of the interactive commands (invoke, converse).

        When an MCP server asks the user for input, the questions go to
        the standard error stream and the answers come from the standard
        input; at its end, the request is cancelled.
    '''
    import invocables.mcp as _mcp
    return _mcp.produce_terminal_elicitor( _sys.stdin, _sys.stderr )


def validate_count( text: str ) -> int:
    ''' Returns whole number of at least 1 (for argparse). '''
    try: count = int( text )
    except ValueError: count = 0
    if count < 1:
        raise _argparse.ArgumentTypeError(
            f"expected a whole number of at least 1, not {text!r}" )
    return count


def validate_provider( name: str, command: str ) -> str:
    ''' Returns name of a known provider; raises usage error else. '''
    if name in _providers.PROVIDERS: return name
    raise _exceptions.UsageInvalidity(
        f"unknown provider {name!r} for --provider; the providers of "
        f"{command} are {_providers.survey_names( )}." )


def describe_providers( default: str = '' ) -> str:
    ''' Returns names of providers for help, with notes and default. '''
    names = [
        provider.name + ''.join(
            f" ({note})" for note in (
                'default' if provider.name == default else '',
                provider.description ) if note )
        for provider in _providers.PROVIDERS.values( ) ]
    return ', '.join( names[ : -1 ] ) + ' or ' + names[ -1 ]


def produce_parsers(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
    ''' Adds parsers of survey, invoke, schemas and snapshot. '''
    add_command(
        commands, common, 'survey', _execute_survey,
        "list ensembles and tools, with provider-facing names"
    ).add_argument( '--json', action = 'store_true', help = "print JSON" )
    invoke = add_command(
        commands, common, 'invoke', _execute_invoke,
        "validate and run one tool, print its result" )
    invoke.add_argument( 'name', help = "provider-facing tool name" )
    invoke.add_argument(
        '--arguments', metavar = 'JSON', default = '{}',
        help = "arguments as one JSON object (default: {})" )
    invoke.add_argument(
        '--json', action = 'store_true',
        help = "print the result as JSON (content and error)" )
    invoke.add_argument( # serving: permission policies
        '--policies', metavar = 'PATH',
        help = "TOML file of [[policies]]; calls which a rule asks about "
        "are confirmed in the terminal (y or n on the standard input)" )
    add_command(
        commands, common, 'schemas', _execute_schemas,
        "print tool definitions as a provider receives them"
    ).add_argument(
        '--provider', required = True,
        help = "provider: {names}".format( names = describe_providers( ) ) )
    snapshot = add_command(
        commands, common, 'snapshot', _execute_snapshot,
        "write descriptors of the tools of a configured MCP server" )
    snapshot.add_argument( 'name', help = "ensemble name of the server" )
    snapshot.add_argument(
        '--folder', default = '.', type = __.Path,
        help = "folder which receives the descriptors (default: .)" )
    snapshot.add_argument(
        '--replace', action = 'store_true',
        help = "replace descriptors written before" )


def _produce_policy( options: _argparse.Namespace ) -> __.typx.Any:
    ''' Returns policy of --policies, asking in the terminal; or absence. '''
    import invocables.toolsets.policies as _policies
    if options.policies is None: return __.absent
    return _policies.load_policy(
        options.policies, approver = _policies.produce_terminal_approver( ) )


def _describe_ensemble(
    ensemble: _ensembles.Ensemble
) -> tuple[ str, __.typx.Any ]:
    ''' Returns kind of ensemble (local, or MCP with its transport), and
        sandbox of a stdio server as JSON (read, write, network,
        environment): false for one unconfined; None for other ensembles.
    '''
    if isinstance( ensemble, _descriptors.PinnedEnsemble ):
        server = ensemble.server
        transport, sandbox = server.transport, server.sandbox
        kind = f"MCP {transport}, pinned"
    elif _is_server( ensemble ):
        server_: __.typx.Any = ensemble # an invocables.mcp.ServerEnsemble
        transport = server_.parameters.transport.value
        kind = f"MCP {transport}"
        sandbox = server_.options.sandbox
        if not __.is_absent( sandbox ): sandbox = sandbox.as_dictionary( )
    else: return 'local', None
    if transport != 'stdio': return kind, None
    if __.is_absent( sandbox ): return kind, False
    values: dict[ str, __.typx.Any ] = {
        'read': [ ], 'write': [ ], 'network': False, 'environment': [ ] }
    if isinstance( sandbox, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], sandbox )
        values.update( {
            key: list( __.typx.cast( __.cabc.Iterable[ str ], value ) )
            if isinstance( value, ( list, tuple ) ) else value
            for key, value in mapping.items( ) } )
    return kind, values


def _produce_survey(
    configuration: _descriptors.Configuration,
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ],
    failures: __.cabc.Sequence[ __.Absential[ Exception ] ],
    nomenclature: _naming.Nomenclature,
) -> dict[ str, __.typx.Any ]:
    entries: list[ dict[ str, __.typx.Any ] ] = [ ]
    for ensemble, failure in zip( ensembles, failures ):
        kind, sandbox = _describe_ensemble( ensemble )
        entry: dict[ str, __.typx.Any ] = {
            'name': ensemble.name, 'kind': kind,
            'description': ensemble.configuration.description,
            'sandbox': sandbox, 'tools': [ ], 'error': None }
        if not __.is_absent( failure ):
            entry[ 'error' ] = describe_error( failure )
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
    # Without roots, the file tools read the current directory.
    roots = [
        { 'path': str( root.path ), 'writable': root.writable,
          'default': False }
        for root in configuration.roots ] or [
        { 'path': str( __.Path.cwd( ) ), 'writable': False,
          'default': True } ]
    return {
        'configuration': configuration.location, 'roots': roots,
        'ensembles': entries, 'disabled': disabled }


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
    lines.extend(
        "Root: {path}{default} ({mode})".format(
            path = root[ 'path' ],
            default = ' (current directory)' if root[ 'default' ] else '',
            mode = 'writable' if root[ 'writable' ] else 'read-only' )
        for root in report[ 'roots' ] )
    for entry in report[ 'ensembles' ]:
        lines.append( '' )
        error = entry.get( 'error' )
        lines.append( "Ensemble {name} ({kind}, {count} tools){error}".format(
            name = entry[ 'name' ], kind = entry[ 'kind' ],
            count = len( entry[ 'tools' ] ),
            error = ": error: {message}".format(
                message = error[ 'message' ] ) if error else '' ) )
        sandbox = entry.get( 'sandbox' )
        if sandbox is False: lines.append( "  Sandbox: none (unconfined)" )
        elif sandbox:
            lines.append(
                "  Sandbox: read {read}; write {write}; network {network}; "
                "environment {environment}".format(
                    read = ', '.join( sandbox[ 'read' ] ) or (
                        'system and installation' ),
                    write = ', '.join( sandbox[ 'write' ] ) or (
                        'private folder only' ),
                    network = ', '.join( sandbox[ 'network' ] )
                    if isinstance( sandbox[ 'network' ], list )
                    else 'on' if sandbox[ 'network' ] else 'off',
                    environment = ', '.join(
                        sandbox[ 'environment' ] ) or 'none listed' ) )
        width = max(
            ( len( tool[ 'provider_name' ] ) for tool in entry[ 'tools' ] ),
            default = 0 )
        for tool in entry[ 'tools' ]:
            summary = summarize_description( tool[ 'description' ] )
            lines.append( "  {name}  {summary}".format(
                name = tool[ 'provider_name' ].ljust( width ),
                summary = summary ) )
    if report[ 'disabled' ]:
        lines.append( '' )
        lines.append( "Disabled: {names}".format(
            names = ', '.join( report[ 'disabled' ] ) ) )
    return '\n'.join( lines ) + '\n'


def summarize_description( description: str ) -> str:
    ''' Returns first sentence of description, on one line. '''
    text = ' '.join( description.split( ) )
    sentence, separator, _ = text.partition( '. ' )
    return sentence + ( '.' if separator else '' )
