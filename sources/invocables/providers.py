# SPDX-License-Identifier: Apache-2.0

''' Registry of providers: one data row per provider API.

    Everything which lists providers reads this registry: the producers of
    processors and conversations, the command line (keys, default models,
    clients, help), the check of a conversation's client, and the requests
    of the conversation loop (method, keys, where the system prompt goes).
    Adding a provider is one row here and one processor module which maps
    its wire shapes (under :py:mod:`invocables.processors`), plus the
    name of its conversation class (under
    :py:mod:`invocables.conversations`). Rows are data only: importing this
    module imports no provider SDK.
'''


import invocables.__ as __
import invocables.exceptions as _exceptions


class Provider( __.immut.DataclassObject ):
    ''' One provider API: its names, modules, SDK, defaults and requests. '''

    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of provider, as users give it. ''' ) ]
    dialect: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' JSON Schema dialect of its tools (see
            :py:mod:`invocables.dialects`). Default: its name. ''' ),
    ] = ''
    processor: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Module of its processor, under
            :py:mod:`invocables.processors`; it offers
            ``produce_processor( **options )``. Default: its name, with
            underscores for hyphens. ''' ),
    ] = ''
    conversation: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Module of its conversation loop, under
            :py:mod:`invocables.conversations`; it offers the class
            named by ``conversation_class``. Default: as ``processor``.
            ''' ),
    ] = ''
    conversation_class: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Class of its conversation loop. Default: the
            words of its name, capitalized, then ``Conversation``. ''' ),
    ] = ''
    extra: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Extra of the package which installs its SDK
            (from a clone, ``pip install --editable '.[extra]'``).
            Default: its name. ''' ),
    ] = ''
    sdk: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Module of its SDK client. Default: its extra. ''' ),
    ] = ''
    client: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' How an application makes its asynchronous
            client, for messages. ''' ),
    ]
    method: __.typx.Annotated[
        tuple[ str, ... ],
        __.ddoc.Doc( ''' Attribute path of the client's method which the
            conversation loop awaits. ''' ),
    ]
    keys: __.typx.Annotated[
        tuple[ str, ... ],
        __.ddoc.Doc( ''' Environment variables which may hold its API key,
            in order of preference; none for local servers. ''' ),
    ] = ( )
    model: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Default model of the command line; absent for
            servers whose models the user names. ''' ),
    ] = __.absent
    description: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Short note for help texts. ''' )
    ] = ''
    # Requests of the conversation loop. Keys are paths: 'a.b' is key 'b'
    # of the object at key 'a' of the request.
    streaming_method: __.typx.Annotated[
        tuple[ str, ... ],
        __.ddoc.Doc( ''' Attribute path of the client's method of streamed
            requests; none: ``method``, with ``stream = True``. ''' ),
    ] = ( )
    stream_key: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Key of the events in the streamed response;
            none: the response is the events. ''' ),
    ] = ''
    blocking: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether its client may be synchronous (its calls
            and stream reads then run in a worker thread). ''' ),
    ] = False
    model_key: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Key of the model in requests. ''' )
    ] = 'model'
    messages_key: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Key of the history in requests. ''' )
    ] = 'messages'
    tools_key: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Key of the tools in requests. ''' )
    ] = 'tools'
    instructions_key: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Key of the system prompt in requests; none: it
            is sent as a first system message. ''' ),
    ] = ''
    instructions_blocks: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether the system prompt is sent as a list of
            one text block. ''' ),
    ] = False
    tokens_key: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Key of the most output tokens. ''' )
    ] = 'max_tokens'
    tokens_default: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc( ''' Most output tokens when none are given, for
            APIs which require them. ''' ),
    ] = __.absent
    parameters_key: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Key of the object which takes the further
            parameters of requests; none: the request itself. ''' ),
    ] = ''
    fixtures: __.typx.Annotated[
        tuple[ tuple[ str, __.typx.Any ], ... ],
        __.ddoc.Doc( ''' Entries of every request, by key. ''' ),
    ] = ( )
    finals: __.typx.Annotated[
        tuple[ str, ... ],
        __.ddoc.Doc( ''' Events which end every stream but which its SDK
            consumes (such as ``[DONE]``), for the accumulator. ''' ),
    ] = ( )
    resumptions: __.typx.Annotated[
        frozenset[ str ],
        __.ddoc.Doc( ''' Stop reasons of a response which paused and asks
            to be called again (such as Anthropic's ``pause_turn``). ''' ),
    ] = frozenset( )

    def __post_init__( self ) -> None:
        module = self.name.replace( '-', '_' )
        words = ''.join( map( str.capitalize, self.name.split( '-' ) ) )
        defaults = (
            ( 'dialect', self.name ), ( 'processor', module ),
            ( 'conversation', module ),
            ( 'conversation_class', f"{words}Conversation" ),
            ( 'extra', self.name ), ( 'sdk', '' ) )
        for key, value in defaults:
            # The SDK's module defaults to the extra, known only by now.
            if getattr( self, key ): continue
            setattr( self, key, value or self.extra )

    @property
    def package( self ) -> str:
        ''' Top-level package of its SDK's classes. '''
        return self.sdk.split( '.', 1 )[ 0 ]


PROVIDERS: __.cabc.Mapping[ str, Provider ] = __.types.MappingProxyType( {
    provider.name: provider for provider in (
    Provider(
        name = 'anthropic', client = 'anthropic.AsyncAnthropic( )',
        method = ( 'messages', 'create' ),
        keys = ( 'ANTHROPIC_API_KEY', ), model = 'claude-sonnet-5',
        instructions_key = 'system', tokens_default = 4096,
        resumptions = frozenset( ( 'pause_turn', ) ) ),
    Provider(
        name = 'openai', client = 'openai.AsyncOpenAI( )',
        method = ( 'chat', 'completions', 'create' ),
        keys = ( 'OPENAI_API_KEY', ), model = 'gpt-5.5',
        description = 'Chat Completions, also of local servers',
        tokens_key = 'max_completion_tokens', finals = ( '[DONE]', ) ),
    Provider(
        name = 'openai-responses', dialect = 'openai', extra = 'openai',
        client = 'openai.AsyncOpenAI( )', method = ( 'responses', 'create' ),
        keys = ( 'OPENAI_API_KEY', ), model = 'gpt-5.5',
        messages_key = 'input', instructions_key = 'instructions',
        tokens_key = 'max_output_tokens' ),
    Provider(
        name = 'gemini', sdk = 'google.genai',
        client = 'google.genai.Client( ) (its .aio side is used)',
        method = ( 'aio', 'models', 'generate_content' ),
        keys = ( 'GEMINI_API_KEY', 'GOOGLE_API_KEY' ),
        model = 'gemini-3.8-flash',
        streaming_method = ( 'aio', 'models', 'generate_content_stream' ),
        messages_key = 'contents', tools_key = 'config.tools',
        instructions_key = 'config.system_instruction',
        tokens_key = 'config.max_output_tokens', parameters_key = 'config',
        fixtures = ( (
            'config.automatic_function_calling', { 'disable': True } ), ) ),
    Provider(
        name = 'cohere', client = 'cohere.AsyncClientV2( )',
        method = ( 'chat', ), keys = ( 'CO_API_KEY', ),
        model = 'command-a-plus-05-2026',
        streaming_method = ( 'chat_stream', ) ),
    Provider(
        name = 'ollama', extra = 'openai', sdk = 'httpx',
        client = "httpx.AsyncClient( base_url = 'http://127.0.0.1:11434' )",
        method = ( 'post', ),
        description = 'native API, at --base-url, by default '
        'http://127.0.0.1:11434',
        tokens_key = 'options.num_predict' ),
    Provider(
        name = 'bedrock', dialect = 'anthropic', sdk = 'boto3',
        client = "boto3.client( 'bedrock-runtime' ) (or aiobotocore's)",
        method = ( 'converse', ),
        model = 'us.amazon.nova-2-lite-v1:0',
        description = 'Converse API; AWS credentials as boto3 finds them',
        streaming_method = ( 'converse_stream', ), stream_key = 'stream',
        blocking = True, model_key = 'modelId', tools_key = 'toolConfig.tools',
        instructions_key = 'system', instructions_blocks = True,
        tokens_key = 'inferenceConfig.maxTokens' ),
    Provider(
        name = 'mistral', dialect = 'openai', sdk = 'mistralai.client',
        client = 'mistralai.client.Mistral( api_key = ... )',
        method = ( 'chat', 'complete_async' ),
        keys = ( 'MISTRAL_API_KEY', ), model = 'mistral-medium-latest',
        streaming_method = ( 'chat', 'stream_async' ),
        finals = ( '[DONE]', ) ),
) } )
''' Known providers by name, in order of listing.

    :meta hide-value:
'''


def access_provider(
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of provider. ''' ) ],
    what: __.typx.Annotated[
        str, __.ddoc.Doc( ''' What asks, for the error message. ''' )
    ] = 'known providers',
) -> Provider:
    ''' Returns row of provider by name.

        Raises :py:class:`invocables.exceptions.ProviderNoSupport`, listing
        the known providers, for an unknown name.
    '''
    provider = PROVIDERS.get( name )
    if provider is not None: return provider
    raise _exceptions.ProviderNoSupport(
        name, "{what} are {names}.".format(
            what = what, names = survey_names( ) ) )


def survey_names( ) -> str:
    ''' Returns names of known providers, sorted, as one text. '''
    return ', '.join( sorted( PROVIDERS ) )


def validate_client( provider: str, client: object ) -> None:
    ''' Refuses client of another provider, or a synchronous client.

        The loop awaits one method of the client (such as
        ``client.messages.create``): it must exist, and, for the
        provider's own SDK, be a coroutine function. Providers without a
        known client (loops of applications) are not checked.
    '''
    entry = PROVIDERS.get( provider )
    if entry is None: return
    attributes, example = entry.method, entry.client
    location = f"client of conversation {provider!r}"
    genus = type( client )
    package = genus.__module__.split( '.', 1 )[ 0 ]
    name = (
        'None' if client is None
        else f"{genus.__module__}.{genus.__qualname__}" )
    owners = _survey_package_providers( package )
    if client is None or ( owners and package != entry.package ):
        hint = f" (its loop is provider {owners})" if owners else ''
        raise _exceptions.ConfigurationInvalidity(
            location, f"{name} is not a client of provider {provider!r}"
            f"{hint}; give {example}." )
    method = _access_method( client, attributes )
    path = '.'.join( ( 'client', *attributes ) )
    if method is None:
        raise _exceptions.ConfigurationInvalidity(
            location, f"{name} has no {path}, which the loop calls; give "
            f"{example}." )
    if package == entry.package and not __.inspect.iscoroutinefunction(
        __.inspect.unwrap( method )
    ):
        raise _exceptions.ConfigurationInvalidity(
            location, f"{name} is a synchronous client ({path} is not a "
            "coroutine function); the loop is asynchronous, so give the "
            f"asynchronous client, {example}." )


def _access_method(
    client: object, attributes: __.cabc.Sequence[ str ]
) -> __.typx.Any:
    ''' Returns method of client at attribute path, or none. '''
    value: object = client
    try:
        for attribute in attributes: value = getattr( value, attribute )
    except Exception: return None # such as AttributeError
    return value


def _survey_package_providers( package: str ) -> str:
    ''' Returns providers whose clients are of package, for messages. '''
    names = [
        repr( provider.name ) for provider in PROVIDERS.values( )
        if provider.package == package ]
    return ' or '.join( names )
