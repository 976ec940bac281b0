# SPDX-License-Identifier: Apache-2.0

''' Optional conversation loop, per provider, over the application's client.

    The loop calls the model with the prepared tools, collects its tool
    calls (whole or streamed), asks an approver about each, executes them,
    appends the native results, and repeats until the model stops calling
    tools or a bound on rounds is reached. It returns the transcript in the
    provider's native messages. Provider modules are imported when first
    requested; none of them imports a provider SDK: they use the client
    which the application gives.
'''


from . import __
from . import base as base
import invocables.history as _history
import invocables.providers as _providers
from ..providers import PROVIDERS as PROVIDERS
import invocables.toolsets.selection as _selection

# Type checkers see through 'module.TYPE_CHECKING', not through the hub;
# linters read the literals of 'module.Literal' as literals.
import typing_extensions as _typx

from .base import (
    ROUNDS_MAXIMUM as ROUNDS_MAXIMUM,
    ConclusionEvent as ConclusionEvent,
    ConversationBase as ConversationBase,
    Event as Event,
    InvocationEvent as InvocationEvent,
    Reply as Reply,
    ResponseEvent as ResponseEvent,
    ResultEvent as ResultEvent,
    ResultsEvent as ResultsEvent,
    Terminations as Terminations,
    TextEvent as TextEvent,
    Transcript as Transcript,
)


_EXECUTION_SHORTCUTS = frozenset(
    field.name for field in __.dcls.fields( __.execution.ExecutionOptions )
    if not field.name.startswith( '_' ) )


class ConversationOptions(
    __.execution.ExecutionShortcuts, total = False
):
    ''' Options of :py:func:`produce_conversation`, for type checkers.

        The fields of :py:class:`invocables.conversations.ConversationBase`
        besides ``client`` and ``ensembles`` (only ``model`` is required),
        and the fields of :py:class:`invocables.execution.ExecutionOptions`
        as shortcuts into ``options``.
    '''

    model: _typx.Required[ str ]
    instructions: str
    tokens_maximum: int
    rounds_maximum: int
    approver: base.Approver
    observer: base.Observer
    processor: __.processors.InvocationsProcessor
    parameters: __.cabc.Mapping[ str, __.typx.Any ]
    options: __.execution.ExecutionOptions
    selector: _selection.Selector
    trimming: _history.Trimming


if _typx.TYPE_CHECKING:
    from . import anthropic as _anthropic
    from . import bedrock as _bedrock
    from . import cohere as _cohere
    from . import gemini as _gemini
    from . import mistral as _mistral
    from . import ollama as _ollama
    from . import openai as _openai
    from . import openai_responses as _openai_responses


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'anthropic' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_anthropic.AnthropicConversation': ...


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'openai' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_openai.OpenaiConversation': ...


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'openai-responses' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_openai_responses.OpenaiResponsesConversation': ...


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'gemini' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_gemini.GeminiConversation': ...


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'cohere' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_cohere.CohereConversation': ...


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'ollama' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_ollama.OllamaConversation': ...


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'bedrock' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_bedrock.BedrockConversation': ...


@_typx.overload
def produce_conversation(
    provider: _typx.Literal[ 'mistral' ],
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> '_mistral.MistralConversation': ...


@_typx.overload
def produce_conversation(
    provider: str,
    client: __.typx.Any,
    ensembles: __.execution.Ensembles,
    **options: _typx.Unpack[ ConversationOptions ],
) -> ConversationBase: ...


def produce_conversation(
    provider: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' One of 'anthropic', 'openai' (also for servers
            which speak Chat Completions), 'openai-responses', 'gemini',
            'cohere', 'ollama' (native API, over an ``httpx`` client). ''' ),
    ],
    client: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' The application's own asynchronous SDK client,
            such as ``anthropic.AsyncAnthropic( )``,
            ``openai.AsyncOpenAI( )``, ``google.genai.Client( )``,
            ``cohere.AsyncClientV2( )`` or, for Ollama,
            ``httpx.AsyncClient( base_url = ... )``. ''' ),
    ],
    ensembles: __.typx.Annotated[
        __.execution.Ensembles,
        __.ddoc.Doc( ''' Connected ensembles whose tools are offered. ''' ),
    ],
    **options: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Options of the conversation: ``model``
            (required), ``instructions``, ``tokens_maximum``,
            ``rounds_maximum``, ``approver``, ``observer``, ``processor``,
            ``parameters``, ``auxdata``, ``namespace``, ``selector``,
            ``trimming``, the engine's ``options``, and the fields of
            :py:class:`invocables.execution.ExecutionOptions` as
            shortcuts into them (``timeout``, ``policy`` ...). ''' ),
    ],
) -> ConversationBase:
    ''' Produces conversation loop for provider, over client.

        Type checkers see the provider's own conversation for a literal
        name, and the options of :py:class:`ConversationOptions`. Raises
        :py:class:`invocables.exceptions.ProviderNoSupport`, listing the
        known providers, for an unknown name, and
        :py:class:`invocables.exceptions.ConfigurationInvalidity` for
        unknown or missing options.
    '''
    from importlib import import_module
    entry = _providers.access_provider(
        provider, 'known providers of conversations' )
    module = import_module( f"{__name__}.{entry.conversation}" )
    producer: type[ ConversationBase ] = getattr(
        module, entry.conversation_class )
    _validate_options( producer, provider, options )
    return producer(
        client = client, ensembles = ensembles,
        **_fold_execution_options( producer, options ) )


def _fold_execution_options(
    producer: type[ ConversationBase ],
    options: __.cabc.Mapping[ str, __.typx.Any ],
) -> dict[ str, __.typx.Any ]:
    ''' Returns options with the engine's shortcuts folded into
        ``options``. '''
    names = _access_option_names( producer )
    shortcuts = {
        name: value for name, value in options.items( )
        if name not in names }
    if not shortcuts: return dict( options )
    execution = options.get( 'options', __.execution.OPTIONS_DEFAULT )
    return {
        **{ name: value for name, value in options.items( )
            if name in names },
        'options': __.dcls.replace( execution, **shortcuts ) }


def _access_option_names(
    producer: type[ ConversationBase ]
) -> frozenset[ str ]:
    return frozenset(
        field.name for field in __.dcls.fields( producer )
        if not field.name.startswith( '_' ) )


def _validate_options(
    producer: type[ ConversationBase ],
    provider: str,
    options: __.cabc.Mapping[ str, __.typx.Any ],
) -> None:
    known = (
        set( _access_option_names( producer ) ) - { 'client', 'ensembles' }
    ) | _EXECUTION_SHORTCUTS
    unknown = sorted( set( options ) - known )
    if unknown:
        raise __.exceptions.ConfigurationInvalidity(
            f"conversation {provider!r}",
            "unknown options {names}.{hint} The known options are "
            "{known}.".format(
                names = ', '.join( unknown ),
                hint = _suggest_names( unknown, known ),
                known = ', '.join( sorted( known ) ) ) )
    if 'model' not in options:
        raise __.exceptions.ConfigurationInvalidity(
            f"conversation {provider!r}", "option 'model' is required." )


def _suggest_names(
    names: __.cabc.Sequence[ str ], known: __.cabc.Collection[ str ]
) -> str:
    ''' Returns " Did you mean ...?" for names close to known ones. '''
    from difflib import get_close_matches
    suggestions = [
        f"{matches[ 0 ]!r} for {name!r}" for name in names
        if ( matches := get_close_matches( name, sorted( known ), n = 1 ) ) ]
    if not suggestions: return ''
    return " Did you mean {items}?".format(
        items = ', '.join( suggestions ) )
