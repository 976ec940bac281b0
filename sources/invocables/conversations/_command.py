# SPDX-License-Identifier: Apache-2.0

''' The ``converse`` subcommand of the ``invocables`` command.

    Produces the provider's SDK client from the environment (or for a
    local OpenAI-compatible server given by ``--base-url``), runs the
    streamed loop with the configured ensembles, writes the model's text
    to the standard output stream as it comes, and each tool call and
    result, briefly, to the standard error stream.
'''


from . import __
from . import base as _base


KEYS_VARIABLES: __.cabc.Mapping[ str, tuple[ str, ... ] ] = (
    __.types.MappingProxyType( {
        'anthropic': ( 'ANTHROPIC_API_KEY', ),
        'cohere': ( 'CO_API_KEY', ),
        'gemini': ( 'GEMINI_API_KEY', 'GOOGLE_API_KEY' ),
        'ollama': ( ),
        'openai': ( 'OPENAI_API_KEY', ),
        'openai-responses': ( 'OPENAI_API_KEY', ),
    } ) )
MODELS_DEFAULT: __.cabc.Mapping[ str, str ] = __.types.MappingProxyType( {
    'anthropic': 'claude-sonnet-5',
    'cohere': 'command-a-plus-05-2026',
    'gemini': 'gemini-3.8-flash',
    'openai': 'gpt-5.5',
    'openai-responses': 'gpt-5.5',
} )
OLLAMA_URL_DEFAULT = 'http://127.0.0.1:11434'

_LOCAL_KEY = 'local' # OpenAI-compatible local servers ignore the key
_SUMMARY_LENGTH_MAXIMUM = 160


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
        raise __.exceptions.ConfigurationInvalidity(
            '--model', "name the model which the server at "
            "{url} serves (such as --model qwen3:8b).".format(
                url = base_url or OLLAMA_URL_DEFAULT ) )
    return MODELS_DEFAULT[ provider ]


async def converse(
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    provider: str,
    model: str,
    prompt: str,
    rounds: int,
    streams: tuple[ __.typx.TextIO, __.typx.TextIO ],
    confirmation: __.typx.TextIO | None = None,
) -> bool:
    ''' Runs streamed loop; writes text and tool calls as they come.

        With a confirmation stream (such as the standard input), asks
        before each tool call and runs it only if the answer is yes.
        Returns whether the model finished (``False`` if the bound on
        rounds stopped it).
    '''
    from . import produce_conversation
    options: dict[ str, __.typx.Any ] = { }
    if confirmation is not None:
        options[ 'approver' ] = _Confirmer( confirmation, streams[ 1 ] )
    conversation = produce_conversation(
        provider, client, ensembles, model = model, rounds_maximum = rounds,
        failure_policy = __.execution.FailurePolicies.Report, **options )
    display = _Display( *streams )
    termination = _base.Terminations.Completion
    async for event in conversation.converse_continuous( prompt ):
        display.show( event )
        if isinstance( event, _base.ConclusionEvent ):
            termination = event.transcript.termination
    display.conclude( )
    return termination is _base.Terminations.Completion


def produce_client( provider: str, base_url: str | None ) -> __.typx.Any:
    ''' Returns SDK client for provider, with key from the environment.

        Raises :py:class:`invocables.exceptions.CredentialsAbsence`, naming
        the variable to set, when there is neither a key nor a server URL.
    '''
    import os
    variables = KEYS_VARIABLES.get( provider )
    if variables is None:
        raise __.exceptions.ProviderNoSupport(
            provider, "the converse command knows {names}.".format(
                names = ', '.join( sorted( KEYS_VARIABLES ) ) ) )
    key = next( filter( None, map( os.environ.get, variables ) ), None )
    if variables and not key and not base_url:
        raise __.exceptions.CredentialsAbsence(
            provider, "set {names}, or give --base-url of a local "
            "OpenAI-compatible server (with --provider openai).".format(
                names = ' or '.join( variables ) ) )
    return _client_producers[ provider ]( key or _LOCAL_KEY, base_url )


class _Confirmer:
    ''' Asks on the error stream before each tool call; reads the answer. '''

    def __init__( self, answers: __.typx.TextIO, errors: __.typx.TextIO ):
        self.answers = answers
        self.errors = errors

    async def __call__(
        self, invocation: __.canisters.InvocationCanister
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

    def show( self, event: _base.Event ) -> None:
        ''' Shows one event of the loop. '''
        match event:
            case _base.TextEvent( ):
                self.output.write( event.text )
                self.output.flush( )
                self.fresh = event.text.endswith( '\n' )
            case _base.InvocationEvent( ):
                self._show_line( "[tool] {name} {arguments}".format(
                    name = event.invocation.name,
                    arguments = __.json.dumps(
                        event.invocation.arguments, ensure_ascii = False ) ) )
            case _base.ResultEvent( ):
                result = event.result
                genus = 'error' if result.is_error( ) else 'result'
                self._show_line( "[{genus}] {name}: {text}".format(
                    genus = genus, name = event.invocation.name,
                    text = _summarize( result.as_text( ) ) ) )
            case _: pass

    def _show_line( self, line: str ) -> None:
        self.conclude( )
        self.errors.write( _summarize( line ) + '\n' )
        self.errors.flush( )


def _produce_anthropic_client(
    key: str, base_url: str | None
) -> __.typx.Any:
    anthropic = _import_sdk( 'anthropic', 'anthropic' )
    return anthropic.AsyncAnthropic( api_key = key, base_url = base_url )


def _produce_cohere_client( key: str, base_url: str | None ) -> __.typx.Any:
    cohere = _import_sdk( 'cohere', 'cohere' )
    if base_url:
        return cohere.AsyncClientV2( api_key = key, base_url = base_url )
    return cohere.AsyncClientV2( api_key = key )


def _produce_gemini_client( key: str, base_url: str | None ) -> __.typx.Any:
    genai = _import_sdk( 'google.genai', 'gemini' )
    options = { 'base_url': base_url } if base_url else None
    return genai.Client( api_key = key, http_options = options )


def _produce_ollama_client( key: str, base_url: str | None ) -> __.typx.Any:
    httpx = _import_sdk( 'httpx', 'openai' )
    return httpx.AsyncClient(
        base_url = base_url or OLLAMA_URL_DEFAULT, timeout = 600 )


def _produce_openai_client( key: str, base_url: str | None ) -> __.typx.Any:
    openai = _import_sdk( 'openai', 'openai' )
    return openai.AsyncOpenAI( api_key = key, base_url = base_url )


_client_producers: __.cabc.Mapping[
    str, __.cabc.Callable[ [ str, str | None ], __.typx.Any ]
] = __.types.MappingProxyType( {
    'anthropic': _produce_anthropic_client,
    'cohere': _produce_cohere_client,
    'gemini': _produce_gemini_client,
    'ollama': _produce_ollama_client,
    'openai': _produce_openai_client,
    'openai-responses': _produce_openai_client,
} )


def _import_sdk( module: str, extra: str ) -> __.typx.Any:
    from importlib import import_module
    try: return import_module( module )
    except ImportError as exception:
        raise __.exceptions.ProviderNoSupport(
            module, f"its SDK is not installed; install "
            f"'invocables[{extra}]'." ) from exception


def _summarize( text: str ) -> str:
    ''' Returns text on one line, shortened. '''
    line = ' '.join( text.split( ) )
    if len( line ) <= _SUMMARY_LENGTH_MAXIMUM: return line
    return line[ : _SUMMARY_LENGTH_MAXIMUM - 3 ] + '...'
