# SPDX-License-Identifier: Apache-2.0

''' The ``converse`` command of ``invocables``.

    Produces the provider's SDK client from the environment (or for a
    local OpenAI-compatible server given by ``--base-url``), runs the
    streamed loop with the configured ensembles, writes the model's text
    to the standard output stream as it comes, and each tool call and
    result, briefly, to the standard error stream. What comes from the
    model or a tool is written with its control characters escaped (shown
    as ``\x1b``, ...), so that it cannot drive the terminal.

    Text calls (tool calls which local models write as text) are read with
    ``--text-calls FORMAT``; against a server given by ``--base-url``, and
    for Ollama, they are read by default (format ``auto``), since small
    local models write their calls as text; ``--text-calls none`` turns
    them off.
'''


import argparse as _argparse
import sys as _sys

import invocables.cli.__ as __
import invocables.cli._escapes as _escapes
import invocables.cli.commands as _commands
import invocables.canisters as _canisters
import invocables.conversations as _conversations
import invocables.exceptions as _exceptions
import invocables.execution as _execution
import invocables.history as _history
import invocables.processors as _processors
import invocables.processors.textcalls as _textcalls
import invocables.providers as _providers


KEYS_VARIABLES: __.cabc.Mapping[ str, tuple[ str, ... ] ] = (
    __.types.MappingProxyType( {
        name: provider.keys
        for name, provider in _providers.PROVIDERS.items( ) } ) )
MODELS_DEFAULT: __.cabc.Mapping[ str, str ] = __.types.MappingProxyType( {
    name: provider.model
    for name, provider in _providers.PROVIDERS.items( )
    if not __.is_absent( provider.model ) } )
OLLAMA_URL_DEFAULT = 'http://127.0.0.1:11434'

# The client of each SDK, by its module (see the rows of
# 'invocables.providers'), from the module, the key and a server's URL.
_client_producers: __.cabc.Mapping[
    str, __.cabc.Callable[ [ __.typx.Any, str, str | None ], __.typx.Any ],
] = __.types.MappingProxyType( {
    'anthropic': lambda sdk, key, url: sdk.AsyncAnthropic(
        api_key = key, base_url = url ),
    'boto3': lambda sdk, key, url: sdk.client(
        'bedrock-runtime', endpoint_url = url ),
    'cohere': lambda sdk, key, url: sdk.AsyncClientV2(
        api_key = key, **( { 'base_url': url } if url else { } ) ),
    'google.genai': lambda sdk, key, url: sdk.Client(
        api_key = key, http_options = { 'base_url': url } if url else None ),
    'httpx': lambda sdk, key, url: sdk.AsyncClient(
        base_url = url or OLLAMA_URL_DEFAULT, timeout = 600 ),
    'mistralai.client': lambda sdk, key, url: sdk.Mistral(
        api_key = key, server_url = url ),
    'openai': lambda sdk, key, url: sdk.AsyncOpenAI(
        api_key = key, base_url = url ),
} )
# Errors of SDKs (and of httpx, which most use) when a server is unreachable.
_CONNECTION_ERRORS = frozenset( (
    'APIConnectionError', 'APITimeoutError', 'ConnectError',
    'ConnectTimeout', 'EndpointConnectionError', 'ConnectionError',
) )
# Control characters (but line feeds and tabs) and those which reorder
# text: what a terminal could take as a command.
_LOCAL_KEY = 'local' # OpenAI-compatible local servers ignore the key
_NO_ANSWER = '(no answer)'
_SUMMARY_LENGTH_MAXIMUM = 160
# Providers whose processors read text calls (option 'text_calls').
TEXT_CALLS_PROVIDERS = frozenset( ( 'ollama', 'openai', 'openai-responses' ) )
TEXT_CALLS_FORMATS: tuple[ str, ... ] = (
    *sorted( _textcalls.FORMATS ), 'none' )


def access_model(
    provider: str,
    model: str | None,
    base_url: str | None,
) -> str:
    ''' Returns model: given, else the provider's default.

        A server given by its URL has no known default: the model must be
        named.
    '''
    if model: return model
    if base_url or provider not in MODELS_DEFAULT:
        raise _exceptions.UsageInvalidity(
            "--model is needed: name the model which the server at "
            "{url} serves (such as --model qwen3:8b).".format(
                url = base_url or OLLAMA_URL_DEFAULT ) )
    return MODELS_DEFAULT[ provider ]


async def converse(
    client: __.typx.Any,
    ensembles: _execution.Ensembles,
    provider: str,
    model: str,
    prompt: str,
    rounds: int,
    streams: tuple[ __.typx.TextIO, __.typx.TextIO ],
    confirmation: __.typx.TextIO | None = None,
    **options: __.typx.Any,
) -> bool:
    ''' Runs streamed loop; writes text and tool calls as they come.

        With a confirmation stream (such as the standard input), asks
        before each tool call and runs it only if the answer is yes.
        Returns whether the model finished (``False`` if the bound on
        rounds stopped it). Further options go to the conversation (such
        as ``trimming``).
    '''
    if confirmation is not None:
        options[ 'approver' ] = _Confirmer( confirmation, streams[ 1 ] )
    conversation = _conversations.produce_conversation(
        provider, client, ensembles, model = model, rounds_maximum = rounds,
        options = _execution.ExecutionOptions(
            failure_policy = _execution.FailurePolicies.Report ), **options )
    display = _Display( *streams )
    termination = _conversations.base.Terminations.Completion
    async for event in conversation.converse_continuous( prompt ):
        display.show( event )
        if isinstance( event, _conversations.base.ConclusionEvent ):
            termination = event.transcript.termination
            answered = event.transcript.text.strip( )
            if not answered and termination is (
                _conversations.base.Terminations.Completion
            ): display.show_line( _NO_ANSWER )
    display.conclude( )
    return termination is _conversations.base.Terminations.Completion


def produce_client( provider: str, base_url: str | None ) -> __.typx.Any:
    ''' Returns SDK client for provider, with key from the environment.

        Raises :py:class:`invocables.exceptions.CredentialsAbsence`, naming
        the variable to set, when there is neither a key nor a server URL.
    '''
    import os
    entry = _providers.access_provider(
        _commands.validate_provider( provider, 'converse' ) )
    variables = entry.keys
    key = next( filter( None, map( os.environ.get, variables ) ), None )
    if variables and not key and not base_url:
        raise _exceptions.CredentialsAbsence(
            provider, "set {names}, or give --base-url of a local "
            "OpenAI-compatible server (with --provider openai).".format(
                names = ' or '.join( variables ) ) )
    return _client_producers[ entry.sdk ](
        _import_sdk( entry ), key or _LOCAL_KEY, base_url )


def produce_parser(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
    ''' Adds parser of the converse command. '''
    count = _commands.validate_count
    converse = _commands.add_command(
        commands, common, 'converse', _execute_converse,
        "run a conversation with the tools; streams the reply" )
    converse.add_argument( 'prompt', help = "what to ask the model" )
    converse.add_argument(
        '--provider', default = 'anthropic',
        help = _commands.describe_providers( 'anthropic' ) )
    converse.add_argument(
        '--model', help = "model name (default: the provider's default; "
        "required with --base-url and for ollama)" )
    converse.add_argument(
        '--base-url', help = "URL of an OpenAI-compatible server, such as "
        "http://127.0.0.1:11434/v1 for Ollama (no key needed)" )
    converse.add_argument(
        '--rounds', type = count, default = 10,
        help = "most calls of the model (default: 10)" )
    converse.add_argument(
        '--confirm', action = 'store_true',
        help = "ask before each tool call; answers (y or n) are read from "
        "the standard input" )
    converse.add_argument(
        '--keep-results', type = count, metavar = 'COUNT',
        help = "send only the COUNT most recent tool results (and none "
        "repeated by a later identical call); older ones become short "
        "placeholders" )
    converse.add_argument(
        '--history-budget', type = count, metavar = 'CHARACTERS',
        help = "past CHARACTERS of history, replace tool results by short "
        "placeholders, oldest first, a quarter of the budget at a time "
        "(and those repeated by a later identical call)" )
    converse.add_argument(
        '--text-calls', choices = TEXT_CALLS_FORMATS, metavar = 'FORMAT',
        help = "read tool calls which the model writes as text, in FORMAT "
        "({formats}); default: auto with --base-url and for ollama, else "
        "none. Tools with side effects are best confirmed: see "
        "--confirm".format( formats = ', '.join( TEXT_CALLS_FORMATS ) ) )
    converse.add_argument(
        '--max-tokens', type = count, metavar = 'COUNT',
        help = "most tokens of each reply of the model" )
    converse.add_argument(
        '--instructions', metavar = 'TEXT',
        help = "system prompt, sent with every request" )
    converse.add_argument(
        '--result-size', type = count, metavar = 'CHARACTERS',
        help = "largest tool result sent to the model (about CHARACTERS "
        "of JSON); a larger one is answered with an error, so that "
        "results fit a small model's context" )


class _Confirmer:
    ''' Asks on the error stream before each tool call; reads the answer. '''

    def __init__( self, answers: __.typx.TextIO, errors: __.typx.TextIO ):
        self.answers = answers
        self.errors = errors

    async def __call__(
        self, invocation: _canisters.InvocationCanister
    ) -> bool:
        self.errors.write( _summarize( "[confirm] {name} {arguments}".format(
            name = invocation.name,
            arguments = __.json.dumps(
                invocation.arguments, ensure_ascii = False ) ) )
            + " Run it? [y/N] " )
        self.errors.flush( )
        answer = await __.asyncio.to_thread( self.answers.readline )
        if not answer.endswith( '\n' ): self.errors.write( '\n' )
        return answer.strip( ).lower( ) in ( 'y', 'yes' )


class _Display:
    ''' Writes text as it streams, tool calls and results on their lines. '''

    def __init__( self, output: __.typx.TextIO, errors: __.typx.TextIO ):
        self.output = output
        self.errors = errors
        self.fresh = True # at the start of a line of output

    def conclude( self ) -> None:
        ''' Ends the last line of text. '''
        if not self.fresh: self.output.write( '\n' )
        self.fresh = True
        self.output.flush( )

    def show( self, event: _conversations.base.Event ) -> None:
        ''' Shows one event of the loop. '''
        match event:
            case _conversations.base.TextEvent( ):
                self.output.write( _escapes.escape_text( event.text ) )
                self.output.flush( )
                self.fresh = event.text.endswith( '\n' )
            case _conversations.base.InvocationEvent( ):
                self.show_line( "[tool] {name} {arguments}".format(
                    name = event.invocation.name,
                    arguments = __.json.dumps(
                        event.invocation.arguments, ensure_ascii = False ) ) )
            case _conversations.base.ResultEvent( ):
                result = event.result
                genus = 'error' if result.is_error( ) else 'result'
                self.show_line( "[{genus}] {name}: {text}".format(
                    genus = genus, name = event.invocation.name,
                    text = _summarize( result.as_text( ) ) ) )
            case _: pass

    def show_line( self, line: str ) -> None:
        ''' Shows line on the error stream, after the text so far. '''
        self.conclude( )
        self.errors.write( _summarize( line ) + '\n' )
        self.errors.flush( )


def _import_sdk( provider: _providers.Provider ) -> __.typx.Any:
    from importlib import import_module
    try: return import_module( provider.sdk )
    except ImportError as exception:
        raise _exceptions.ExtraAbsence(
            provider.extra, f"the provider {provider.name!r}"
        ) from exception


def _access_reason( exception: BaseException ) -> str | None:
    ''' Returns why a server could not be reached, if that went wrong.

        Follows the causes of an SDK's error (such as
        ``APIConnectionError``, from ``httpx.ConnectError``) down to the
        operating system's.
    '''
    import socket
    seen: set[ int ] = set( )
    item: BaseException | None = exception
    reason: str | None = None
    while item is not None and id( item ) not in seen:
        seen.add( id( item ) )
        genus = type( item ).__name__
        if isinstance( item, ConnectionRefusedError ):
            return 'connection refused'
        if isinstance( item, socket.gaierror ):
            return 'unknown host'
        if isinstance( item, ( ConnectionError, TimeoutError ) ) or (
            genus in _CONNECTION_ERRORS
        ): reason = reason or _describe_reason( item )
        item = item.__cause__ or item.__context__
    return reason


def _describe_reason( exception: BaseException ) -> str:
    text = ' '.join( str( exception ).split( ) )
    if 'refused' in text.lower( ): return 'connection refused'
    if 'timed out' in text.lower( ) or 'timeout' in type(
        exception ).__name__.lower( ): return 'timed out'
    return text or type( exception ).__name__


def _access_url(
    client: __.typx.Any, provider: _providers.Provider, base_url: str | None
) -> str:
    ''' Returns URL of provider's server: given, the client's, or name. '''
    if base_url: return base_url
    for name in ( 'base_url', '_base_url' ):
        url = getattr( client, name, None )
        if url: return str( url )
    if provider.sdk == 'httpx': return OLLAMA_URL_DEFAULT
    return f"the {provider.name} API"


def _produce_options(
    options: _argparse.Namespace
) -> dict[ str, __.typx.Any ]:
    ''' Returns options of the conversation which the command's ask. '''
    produced: dict[ str, __.typx.Any ] = dict( _produce_trimming( options ) )
    tokens = getattr( options, 'max_tokens', None )
    if tokens is not None: produced[ 'tokens_maximum' ] = tokens
    instructions = getattr( options, 'instructions', None )
    if instructions: produced[ 'instructions' ] = instructions
    size = getattr( options, 'result_size', None )
    if size is not None:
        produced[ 'limits' ] = _execution.Limits(
            results_size_maximum = size )
    text_calls = access_text_calls(
        options.provider, getattr( options, 'text_calls', None ),
        options.base_url )
    if text_calls is not None:
        produced[ 'processor' ] = _processors.produce_processor(
            options.provider, text_calls = text_calls )
    return produced


def access_text_calls(
    provider: str, format: str | None, base_url: str | None # noqa: A002
) -> str | None:
    ''' Returns format of text calls which the command reads, if any.

        Given (``none``: off), else ``auto`` against a server given by its
        URL and for Ollama (local models write calls as text), else none.
        A format given for a provider whose processor reads no text calls
        raises usage invalidity.
    '''
    if format == 'none': return None
    if format is None:
        local = base_url is not None or provider == 'ollama'
        if local and provider in TEXT_CALLS_PROVIDERS: return 'auto'
        return None
    if provider not in TEXT_CALLS_PROVIDERS:
        raise _exceptions.UsageInvalidity(
            "--text-calls is read by providers {names} only, not by "
            "{provider!r}.".format(
                names = ', '.join( sorted( TEXT_CALLS_PROVIDERS ) ),
                provider = provider ) )
    return format


def _produce_trimming(
    options: _argparse.Namespace
) -> dict[ str, _history.Trimming ]:
    ''' Returns trimming of history asked by the options, if any. '''
    keep = getattr( options, 'keep_results', None )
    budget = getattr( options, 'history_budget', None )
    if keep is None and budget is None: return { }
    return { 'trimming': _history.Trimming(
        keep = __.absent if keep is None else keep,
        budget = __.absent if budget is None else budget,
        clear_at_least = (
            __.absent if budget is None else max( budget // 4, 1 ) ) ) }


def _summarize( text: str ) -> str:
    ''' Returns text on one line, shortened, control characters escaped.
    '''
    line = _escapes.escape_text( ' '.join( text.split( ) ) )
    if len( line ) <= _SUMMARY_LENGTH_MAXIMUM: return line
    return line[ : _SUMMARY_LENGTH_MAXIMUM - 3 ] + '...'


async def _execute_converse( options: _argparse.Namespace ) -> int:
    produced = _produce_options( options ) # usage errors first
    client = produce_client( options.provider, options.base_url )
    model = access_model(
        options.provider, options.model, options.base_url )
    async with _commands.connect_configuration(
        options, interactive = True
    ) as ensembles:
        try:
            finished = await converse(
                client, ensembles, options.provider, model, options.prompt,
                options.rounds, ( _sys.stdout, _sys.stderr ),
                _sys.stdin if options.confirm else None, **produced )
        except Exception as exception:
            reason = _access_reason( exception )
            if reason is None: raise
            provider = _providers.access_provider( options.provider )
            raise _exceptions.ProviderInaccessibility(
                provider.name,
                _access_url( client, provider, options.base_url ),
                reason ) from exception
    if finished: return 0
    _sys.stderr.write(
        f"{_commands.PROGRAM}: stopped after {options.rounds} rounds, "
        "with tool calls answered but no final reply; raise --rounds.\n" )
    return _commands.EXIT_FAILURE
