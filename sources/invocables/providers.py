# SPDX-License-Identifier: Apache-2.0

''' Registry of providers: one data row per provider API.

    Everything which lists providers reads this registry: the producers of
    processors and conversations, the command line (keys, default models,
    clients, help), and the check of a conversation's client. Adding a
    provider is one row here, one processor module which maps its wire
    shapes (under :py:mod:`invocables.processors`) and one conversation
    module which builds its requests and messages (under
    :py:mod:`invocables.conversations`). Rows are data only: importing this
    module imports no provider SDK.
'''


from . import __
from . import exceptions as _exceptions


class Provider( __.immut.DataclassObject ):
    ''' One provider API: its names, modules, SDK and defaults. '''

    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of provider, as users give it. ''' ) ]
    dialect: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' JSON Schema dialect of its tools (see
            :py:mod:`invocables.dialects`). ''' ),
    ]
    processor: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Module of its processor, under
            :py:mod:`invocables.processors`; it offers
            ``produce_processor( **options )``. ''' ),
    ]
    conversation: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Module of its conversation loop, under
            :py:mod:`invocables.conversations`; it offers the class
            named by ``conversation_class``. ''' ),
    ]
    conversation_class: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Class of its conversation loop. ''' ) ]
    extra: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Extra of the package which installs its SDK
            (from a clone, ``pip install --editable '.[extra]'``). ''' ),
    ]
    sdk: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Module of its SDK client. ''' ) ]
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

    @property
    def package( self ) -> str:
        ''' Top-level package of its SDK's classes. '''
        return self.sdk.split( '.', 1 )[ 0 ]


PROVIDERS: __.typx.Annotated[
    __.cabc.Mapping[ str, Provider ],
    __.ddoc.Doc( ''' Known providers by name, in order of listing. ''' ),
] = __.types.MappingProxyType( { provider.name: provider for provider in (
    Provider(
        name = 'anthropic', dialect = 'anthropic',
        processor = 'anthropic', conversation = 'anthropic',
        conversation_class = 'AnthropicConversation',
        extra = 'anthropic', sdk = 'anthropic',
        client = 'anthropic.AsyncAnthropic( )',
        method = ( 'messages', 'create' ),
        keys = ( 'ANTHROPIC_API_KEY', ), model = 'claude-sonnet-5' ),
    Provider(
        name = 'openai', dialect = 'openai',
        processor = 'openai', conversation = 'openai',
        conversation_class = 'OpenaiConversation',
        extra = 'openai', sdk = 'openai',
        client = 'openai.AsyncOpenAI( )',
        method = ( 'chat', 'completions', 'create' ),
        keys = ( 'OPENAI_API_KEY', ), model = 'gpt-5.5',
        description = 'Chat Completions, also of local servers' ),
    Provider(
        name = 'openai-responses', dialect = 'openai',
        processor = 'openai_responses', conversation = 'openai_responses',
        conversation_class = 'OpenaiResponsesConversation',
        extra = 'openai', sdk = 'openai',
        client = 'openai.AsyncOpenAI( )',
        method = ( 'responses', 'create' ),
        keys = ( 'OPENAI_API_KEY', ), model = 'gpt-5.5' ),
    Provider(
        name = 'gemini', dialect = 'gemini',
        processor = 'gemini', conversation = 'gemini',
        conversation_class = 'GeminiConversation',
        extra = 'gemini', sdk = 'google.genai',
        client = 'google.genai.Client( ) (its .aio side is used)',
        method = ( 'aio', 'models', 'generate_content' ),
        keys = ( 'GEMINI_API_KEY', 'GOOGLE_API_KEY' ),
        model = 'gemini-3.8-flash' ),
    Provider(
        name = 'cohere', dialect = 'cohere',
        processor = 'cohere', conversation = 'cohere',
        conversation_class = 'CohereConversation',
        extra = 'cohere', sdk = 'cohere',
        client = 'cohere.AsyncClientV2( )', method = ( 'chat', ),
        keys = ( 'CO_API_KEY', ), model = 'command-a-plus-05-2026' ),
    Provider(
        name = 'ollama', dialect = 'ollama',
        processor = 'ollama', conversation = 'ollama',
        conversation_class = 'OllamaConversation',
        extra = 'openai', sdk = 'httpx',
        client = "httpx.AsyncClient( base_url = 'http://127.0.0.1:11434' )",
        method = ( 'post', ),
        description = 'native API, at --base-url, by default '
        'http://127.0.0.1:11434' ),
    Provider(
        name = 'bedrock', dialect = 'anthropic',
        processor = 'bedrock', conversation = 'bedrock',
        conversation_class = 'BedrockConversation',
        extra = 'bedrock', sdk = 'boto3',
        client = "boto3.client( 'bedrock-runtime' ) (or aiobotocore's)",
        method = ( 'converse', ),
        model = 'us.amazon.nova-2-lite-v1:0',
        description = 'Converse API; AWS credentials as boto3 finds them' ),
    Provider(
        name = 'mistral', dialect = 'openai',
        processor = 'mistral', conversation = 'mistral',
        conversation_class = 'MistralConversation',
        extra = 'mistral', sdk = 'mistralai.client',
        client = 'mistralai.client.Mistral( api_key = ... )',
        method = ( 'chat', 'complete_async' ),
        keys = ( 'MISTRAL_API_KEY', ), model = 'mistral-medium-latest' ),
) } )


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
