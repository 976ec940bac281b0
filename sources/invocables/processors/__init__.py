# SPDX-License-Identifier: Apache-2.0

''' Processors: one per provider API, on one common base.

    Provider modules are imported when first requested, so that importing
    this package imports no provider SDK (processors need none: they read
    SDK typed objects by attribute and plain dictionaries alike). For type
    checkers, ``produce_processor`` returns the provider's own processor,
    whose tools, results and assistant messages (``prepare_message`` of a
    whole response, ``produce_message`` of its accumulator) have the
    provider SDK's parameter types (see
    :py:mod:`invocables.processors.natives`).
'''


from . import __
from . import base as base
from . import natives as natives
from . import streaming as streaming
from . import _wire as wire
import invocables.providers as _providers
from ..providers import PROVIDERS as PROVIDERS

# Type checkers see through 'module.TYPE_CHECKING', not through the hub;
# linters read the literals of 'module.Literal' as literals.
import typing_extensions as _typx

from .base import (
    InvocationsAccumulator as InvocationsAccumulator,
    InvocationsProcessor as InvocationsProcessor,
    ProcessorBase as ProcessorBase,
)
from .streaming import (
    AccumulatorBase as AccumulatorBase,
    PartialInvocation as PartialInvocation,
    StreamedInvocation as StreamedInvocation,
)


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
def produce_processor(
    provider: _typx.Literal[ 'anthropic' ]
) -> '_anthropic.AnthropicProcessor': ...


@_typx.overload
def produce_processor(
    provider: _typx.Literal[ 'openai' ],
    *,
    strict: bool = ...,
    choice: int = ...,
    text_calls: str | None = ...,
) -> '_openai.OpenaiProcessor': ...


@_typx.overload
def produce_processor(
    provider: _typx.Literal[ 'openai-responses' ],
    *,
    strict: bool = ...,
    text_calls: str | None = ...,
) -> '_openai_responses.OpenaiResponsesProcessor': ...


@_typx.overload
def produce_processor(
    provider: _typx.Literal[ 'gemini' ],
    *,
    json_schema: bool = ...,
    media: bool = ...,
) -> '_gemini.GeminiProcessor': ...


@_typx.overload
def produce_processor(
    provider: _typx.Literal[ 'cohere' ]
) -> '_cohere.CohereProcessor': ...


@_typx.overload
def produce_processor(
    provider: _typx.Literal[ 'ollama' ], *, text_calls: str | None = ...
) -> '_ollama.OllamaProcessor': ...


@_typx.overload
def produce_processor(
    provider: _typx.Literal[ 'bedrock' ]
) -> '_bedrock.BedrockProcessor': ...


@_typx.overload
def produce_processor(
    provider: _typx.Literal[ 'mistral' ], *, choice: int = ...
) -> '_mistral.MistralProcessor': ...


@_typx.overload
def produce_processor(
    provider: str, **options: __.typx.Any
) -> InvocationsProcessor: ...


def produce_processor(
    provider: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' One of 'anthropic', 'openai', 'openai-responses',
            'gemini', 'cohere', 'ollama', 'bedrock', 'mistral'. ''' ),
    ],
    **options: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Options of the provider's processor: ``strict``
            and ``text_calls`` for 'openai' and 'openai-responses' (and
            ``choice`` for 'openai'); ``text_calls`` for 'ollama';
            ``json_schema`` and ``media`` for 'gemini'; ``choice`` for
            'mistral'. ''' ),
    ],
) -> InvocationsProcessor:
    ''' Produces processor for provider API.

        Type checkers see the provider's own processor for a literal name
        (such as
        :py:class:`invocables.processors.anthropic.AnthropicProcessor`).
        Raises :py:class:`invocables.exceptions.ProviderNoSupport`, listing
        the known providers, for an unknown name.
    '''
    from importlib import import_module
    entry = _providers.access_provider( provider )
    module = import_module( f"{__name__}.{entry.processor}" )
    producer: __.cabc.Callable[ ..., InvocationsProcessor ] = (
        module.produce_processor )
    return producer( **options )
