# SPDX-License-Identifier: Apache-2.0

''' Processors: one per provider API, on one common base.

    Provider modules are imported when first requested, so that importing
    this package imports no provider SDK (processors need none: they read
    SDK typed objects by attribute and plain dictionaries alike).
'''


from . import __
from . import base as base

from .base import (
    AccumulatorBase as AccumulatorBase,
    InvocationsAccumulator as InvocationsAccumulator,
    InvocationsProcessor as InvocationsProcessor,
    PartialInvocation as PartialInvocation,
    ProcessorBase as ProcessorBase,
    StreamedInvocation as StreamedInvocation,
)


PROVIDERS: __.typx.Annotated[
    __.cabc.Mapping[ str, str ],
    __.ddoc.Doc( ''' Known provider names and their modules. ''' ),
] = __.types.MappingProxyType( {
    'anthropic': 'anthropic',
    'cohere': 'cohere',
    'gemini': 'gemini',
    'ollama': 'ollama',
    'openai': 'openai',
    'openai-responses': 'openai_responses',
} )


def produce_processor(
    provider: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' One of 'anthropic', 'openai', 'openai-responses',
            'gemini', 'cohere', 'ollama'. ''' ),
    ],
    **options: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Options of the provider's processor. ''' ),
    ],
) -> InvocationsProcessor:
    ''' Produces processor for provider API.

        Raises :py:class:`invocables.exceptions.ProviderNoSupport`, listing
        the known providers, for an unknown name.
    '''
    from importlib import import_module
    module_name = PROVIDERS.get( provider )
    if module_name is None:
        raise __.exceptions.ProviderNoSupport(
            provider, "known providers are {names}.".format(
                names = ', '.join( sorted( PROVIDERS ) ) ) )
    module = import_module( f"{__name__}.{module_name}" )
    producer: __.cabc.Callable[ ..., InvocationsProcessor ] = (
        module.produce_processor )
    return producer( **options )
