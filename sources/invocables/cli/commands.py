# SPDX-License-Identifier: Apache-2.0

''' The survey, invoke, schemas and snapshot commands of ``invocables``.

    The configuration is the file given with ``--configuration``, else the
    file named by the ``INVOCABLES_CONFIGURATION`` environment variable,
    else ``invocables/invocables.toml`` in the user's configuration folder
    (``$XDG_CONFIG_HOME``, by default ``~/.config``), else the shipped
    defaults (the built-in ``io`` ensemble, reading the current directory).
'''


import argparse as _argparse
import os as _os
import sys as _sys

from . import __
from .. import canisters as _canisters
from .. import descriptors as _descriptors
from .. import ensembles as _ensembles
from .. import exceptions as _exceptions
from .. import execution as _execution
from .. import mcp as _mcp
from .. import naming as _naming
from .. import providers as _providers


CONFIGURATION_VARIABLE = 'INVOCABLES_CONFIGURATION'
EXIT_FAILURE = 1
PROGRAM = 'invocables'


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
        _descriptors.access_data_location( ) / 'configuration'
        / _descriptors.CONFIGURATION_NAME )


async def _connect_quietly(
    ensemble: _ensembles.Ensemble
) -> __.Absential[ Exception ]:
    try: await ensemble.connect( )
    except Exception as exception: return exception
    return __.absent


def describe_exception( exception: BaseException ) -> str:
    ''' Returns one line for the error stream, naming the error. '''
    message = ' '.join( str( exception ).split( ) )
    if not isinstance( exception, _exceptions.Omnierror ):
        message = "{genus}: {message}".format(
            genus = type( exception ).__name__, message = message )
    return f"{PROGRAM}: error: {message}\n"


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


def _describe_kind( ensemble: _ensembles.Ensemble ) -> str:
    if isinstance( ensemble, _descriptors.PinnedEnsemble ):
        return f"MCP {ensemble.server.transport}, pinned"
    if isinstance( ensemble, _mcp.ServerEnsemble ):
        return f"MCP {ensemble.parameters.transport.value}"
    return 'local'


async def _execute_invoke( options: _argparse.Namespace ) -> int:
    try: arguments = __.json.loads( options.arguments )
    except ( ValueError, RecursionError ) as exception:
        reason = (
            "it nests too deeply" if isinstance( exception, RecursionError )
            else str( exception ) )
        raise _exceptions.UsageInvalidity(
            f"--arguments is not valid JSON ({reason}); give one JSON "
            "object, such as '{\"path\": \".\"}'." ) from exception
    configuration = produce_configuration( options )
    ensembles = await _descriptors.prepare_ensembles(
        configuration, connect = True, elicitor = produce_elicitor( ) )
    try:
        invocation = _canisters.InvocationCanister(
            identifier = 'invocables-cli', name = options.name,
            arguments = arguments )
        results = await _execution.execute_invocations(
            [ invocation ], ensembles,
            failure_policy = _execution.FailurePolicies.Report,
            policy = _produce_policy( options ) )
    finally: await disconnect( ensembles )
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
            program = PROGRAM,
            message = ' '.join( result.error.message.split( ) ) ) )
    return EXIT_FAILURE


async def _execute_schemas( options: _argparse.Namespace ) -> int:
    from .. import processors as _processors
    provider: str = options.provider
    processor = _processors.produce_processor( provider )
    configuration = produce_configuration( options )
    ensembles = await _descriptors.prepare_ensembles(
        configuration, connect = True )
    try: tools = processor.prepare_tools( ensembles )
    finally: await disconnect( ensembles )
    _sys.stdout.write(
        __.json.dumps( tools, indent = 2, ensure_ascii = False ) + '\n' )
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
    finally: await disconnect( [ ensemble ] )
    _sys.stdout.write(
        "Wrote {path} ({count} tools). To offer the pinned "
        "tools, name this file as 'source' of an [[ensembles]] entry of "
        "the configuration (relative to the folder of the "
        "configuration).\n".format( path = path.resolve( ), count = count ) )
    return 0


async def _execute_survey( options: _argparse.Namespace ) -> int:
    configuration = produce_configuration( options )
    ensembles = await _descriptors.prepare_ensembles(
        configuration, connect = False )
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
        await disconnect( [
            ensemble for ensemble, failure in zip( ensembles, failures )
            if __.is_absent( failure ) ] )
    if options.json:
        _sys.stdout.write( __.json.dumps( report, indent = 2 ) + '\n' )
    else: _sys.stdout.write( _render_survey( report ) )
    return EXIT_FAILURE if any(
        not __.is_absent( failure ) for failure in failures ) else 0


def produce_configuration(
    options: _argparse.Namespace
) -> _descriptors.Configuration:
    ''' Returns configuration which the options locate. '''
    option = getattr( options, 'configuration', None )
    path = locate_configuration( __.absent if option is None else option )
    return _descriptors.produce_configuration( path )


def produce_elicitor( ) -> _mcp.Elicitor:
    ''' Returns elicitor of the interactive commands (invoke, converse).

        When an MCP server asks the user for input, the questions go to
        the standard error stream and the answers come from the standard
        input; at its end, the request is cancelled.
    '''
    return _mcp.produce_terminal_elicitor( _sys.stdin, _sys.stderr )


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
    _produce_parsers_tools( commands, common )
    _produce_parsers_exports( commands, common )


def _produce_parsers_exports(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
    schemas = commands.add_parser(
        'schemas', parents = [ common ],
        help = "print tool definitions as a provider receives them" )
    schemas.add_argument(
        '--provider', required = True,
        help = "provider: {names}".format(
            names = describe_providers( ) ) )
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


def _produce_parsers_tools(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
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
    invoke.add_argument( # serving: permission policies
        '--policies', metavar = 'PATH',
        help = "TOML file of [[policies]]; calls which a rule asks about "
        "are confirmed in the terminal (y or n on the standard input)" )
    invoke.set_defaults( execute = _execute_invoke )


def _produce_policy( options: _argparse.Namespace ) -> __.typx.Any:
    ''' Returns policy of --policies, asking in the terminal; or absence. '''
    from .. import policies as _policies # serving: permission policies
    if options.policies is None: return __.absent
    return _policies.load_policy(
        options.policies, approver = _policies.produce_terminal_approver( ) )


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
            entry[ 'error' ] = describe_exception( failure ).strip( )
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
