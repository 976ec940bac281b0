# SPDX-License-Identifier: Apache-2.0
''' What type checkers see of processors and conversations, asserted.

    Guards the typed surface against a silent fall back to ``Any``, which
    would let every application type-check while checking nothing.
'''

from typing import Any

import cohere
import httpx
import openai

from anthropic.types import MessageParam, ToolParam
from google.genai import types as genai_types
from mistralai.client import models as mistral_models
from openai.types import chat, responses
from typing_extensions import assert_type

import invocables

from invocables.conversations import ConversationBase, produce_conversation
from invocables.conversations.anthropic import AnthropicConversation
from invocables.conversations.ollama import OllamaConversation
from invocables.processors import (
    InvocationsProcessor,
    natives,
    produce_processor,
)
from invocables.processors.anthropic import AnthropicProcessor
from invocables.processors.cohere import CohereProcessor
from invocables.processors.gemini import GeminiProcessor
from invocables.processors.ollama import OllamaProcessor
from invocables.processors.openai import OpenaiProcessor
from invocables.processors.openai_responses import OpenaiResponsesProcessor


def assert_processors(
    ensembles: list[ invocables.Ensemble ],
    results: list[ invocables.ResultCanister ],
    name: str,
) -> None:
    ''' Each literal name gives its processor, typed with its SDK. '''
    anthropic_ = produce_processor( 'anthropic' )
    assert_type( anthropic_, AnthropicProcessor )
    assert_type( anthropic_.prepare_tools( ensembles ), list[ ToolParam ] )
    assert_type(
        anthropic_.nativize_results( results ), list[ MessageParam ] )
    openai_ = produce_processor( 'openai', strict = True )
    assert_type( openai_, OpenaiProcessor )
    assert_type(
        openai_.prepare_tools( ensembles ),
        list[ chat.ChatCompletionToolParam ] )
    assert_type(
        openai_.nativize_results( results ),
        list[ chat.ChatCompletionToolMessageParam ] )
    responses_ = produce_processor( 'openai-responses' )
    assert_type( responses_, OpenaiResponsesProcessor )
    assert_type(
        responses_.prepare_tools( ensembles ),
        list[ responses.FunctionToolParam ] )
    assert_type(
        responses_.nativize_results( results ),
        list[ responses.ResponseInputItemParam ] )
    gemini_ = produce_processor( 'gemini', media = True )
    assert_type( gemini_, GeminiProcessor )
    assert_type(
        gemini_.prepare_tools( ensembles ),
        list[ genai_types.ToolUnionDict ] )
    assert_type(
        gemini_.nativize_results( results ),
        list[ genai_types.ContentDict ] )
    cohere_ = produce_processor( 'cohere' )
    assert_type( cohere_, CohereProcessor )
    assert_type(
        cohere_.prepare_tools( ensembles ), list[ natives.FunctionTool ] )
    assert_type(
        cohere_.nativize_results( results ),
        list[ natives.CohereToolMessage ] )
    ollama_ = produce_processor( 'ollama' )
    assert_type( ollama_, OllamaProcessor )
    assert_type(
        ollama_.nativize_results( results ),
        list[ natives.OllamaToolMessage ] )
    any_ = produce_processor( name )
    assert_type( any_, InvocationsProcessor[ Any, Any, Any ] )
    assert_type( any_.prepare_tools( ensembles ), list[ Any ] )


def assert_messages( reply: object ) -> None:
    ''' Assistant messages of whole and streamed responses have each
        provider's own parameter type.
    '''
    anthropic_ = produce_processor( 'anthropic' )
    assert_type( anthropic_.prepare_message( reply ), MessageParam )
    assert_type(
        anthropic_.produce_accumulator( ).produce_message( ), MessageParam )
    openai_ = produce_processor( 'openai', choice = 1, text_calls = 'auto' )
    assert_type( openai_, OpenaiProcessor )
    assert_type(
        produce_processor( 'openai-responses', text_calls = 'hermes' ),
        OpenaiResponsesProcessor )
    assert_type(
        produce_processor( 'ollama', text_calls = 'auto' ), OllamaProcessor )
    assert_type(
        openai_.prepare_message( reply ),
        chat.ChatCompletionAssistantMessageParam )
    assert_type(
        openai_.produce_accumulator( ).produce_message( ),
        chat.ChatCompletionAssistantMessageParam )
    responses_ = produce_processor( 'openai-responses' )
    assert_type(
        responses_.prepare_message( reply ),
        list[ responses.ResponseInputItemParam ] )
    assert_type(
        responses_.produce_accumulator( ).produce_message( ),
        list[ responses.ResponseInputItemParam ] )
    gemini_ = produce_processor( 'gemini' )
    assert_type( gemini_.prepare_message( reply ), genai_types.ContentDict )
    assert_type(
        gemini_.produce_accumulator( ).produce_message( ),
        genai_types.ContentDict )
    cohere_ = produce_processor( 'cohere' )
    assert_type(
        cohere_.prepare_message( reply ), natives.CohereAssistantMessage )
    assert_type(
        cohere_.produce_accumulator( ).produce_message( ),
        natives.CohereAssistantMessage )
    ollama_ = produce_processor( 'ollama' )
    assert_type(
        ollama_.prepare_message( reply ), natives.OllamaAssistantMessage )
    assert_type(
        ollama_.produce_accumulator( ).produce_message( ),
        natives.OllamaAssistantMessage )
    bedrock_ = produce_processor( 'bedrock' )
    assert_type( bedrock_.prepare_message( reply ), natives.BedrockMessage )
    assert_type(
        bedrock_.produce_accumulator( ).produce_message( ),
        natives.BedrockMessage )
    mistral_ = produce_processor( 'mistral' )
    assert_type(
        mistral_.prepare_message( reply ),
        mistral_models.AssistantMessageTypedDict )
    assert_type(
        mistral_.produce_accumulator( ).produce_message( ),
        mistral_models.AssistantMessageTypedDict )


async def assert_transcripts(
    client: openai.AsyncOpenAI, ensembles: list[ invocables.Ensemble ]
) -> None:
    ''' Transcripts hold each provider's own messages. '''
    anthropic_ = produce_conversation(
        'anthropic', client, ensembles, model = 'm' )
    assert_type(
        ( await anthropic_.converse( 'Hi' ) ).messages, list[ MessageParam ] )
    openai_ = produce_conversation( 'openai', client, ensembles, model = 'm' )
    assert_type(
        ( await openai_.converse( 'Hi' ) ).messages,
        list[ chat.ChatCompletionMessageParam ] )
    responses_ = produce_conversation(
        'openai-responses', client, ensembles, model = 'm' )
    assert_type(
        ( await responses_.converse( 'Hi' ) ).messages,
        list[ responses.ResponseInputItemParam ] )
    gemini_ = produce_conversation( 'gemini', client, ensembles, model = 'm' )
    assert_type(
        ( await gemini_.converse( 'Hi' ) ).messages,
        list[ genai_types.ContentDict ] )
    bedrock_ = produce_conversation(
        'bedrock', client, ensembles, model = 'm' )
    assert_type(
        ( await bedrock_.converse( 'Hi' ) ).messages,
        list[ natives.BedrockMessage ] )


def assert_conversations(
    client: openai.AsyncOpenAI,
    local: httpx.AsyncClient,
    other: cohere.AsyncClientV2,
    ensembles: list[ invocables.Ensemble ],
    name: str,
) -> None:
    ''' Each literal name gives its conversation. '''
    assert_type(
        produce_conversation( 'anthropic', client, ensembles, model = 'm' ),
        AnthropicConversation )
    assert_type(
        produce_conversation( 'ollama', local, ensembles, model = 'm' ),
        OllamaConversation )
    assert_type(
        produce_conversation( name, other, ensembles, model = 'm' ),
        ConversationBase )
