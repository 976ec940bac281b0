# SPDX-License-Identifier: Apache-2.0

''' Native shapes of provider APIs, as type checkers see them.

    Processors return plain dictionaries. For type checkers, those
    dictionaries have the provider SDK's own parameter types, so that the
    tools and results of a processor go into the SDK's typed calls without
    casts: ``client.messages.create( tools = processor.prepare_tools(
    ensembles ) )`` and ``messages.extend( processor.nativize_results(
    results ) )``. The SDKs are imported only by type checkers, never at run
    time; at run time, each alias below stands for ``dict[ str, Any ]``.

    Three shapes per provider: the tool (what ``prepare_tools`` gives), the
    message of results (what ``nativize_results`` gives) and the assistant
    message (what the accumulator's ``produce_message`` and the processor's
    ``prepare_message`` give); a fourth, the message of a conversation,
    types :py:attr:`invocables.conversations.Transcript.messages`.

    * ``AnthropicTool``, ``AnthropicMessage``: ``ToolParam`` and
      ``MessageParam`` of ``anthropic.types`` (results, assistant message
      and conversation alike).
    * ``OpenaiTool``, ``OpenaiMessage``, ``OpenaiAssistantMessage``,
      ``OpenaiChatMessage``: ``ChatCompletionToolParam``,
      ``ChatCompletionToolMessageParam``,
      ``ChatCompletionAssistantMessageParam`` and
      ``ChatCompletionMessageParam`` of ``openai.types.chat``.
    * ``OpenaiResponsesTool``, ``OpenaiResponsesItem``:
      ``FunctionToolParam`` and ``ResponseInputItemParam`` of
      ``openai.types.responses``; the assistant message is a list of items,
      ``list[ OpenaiResponsesItem ]`` (``ResponseInputParam``).
    * ``GeminiTool``, ``GeminiDeclaration``, ``GeminiContent``:
      ``ToolUnionDict`` (what ``GenerateContentConfigDict`` takes in
      ``tools``), ``FunctionDeclarationDict`` and ``ContentDict`` of
      ``google.genai.types`` (results, assistant content and conversation).
    * ``CohereTool``, ``CohereMessage``, ``CohereAssistantMessage``,
      ``CohereChatMessage``: :py:class:`FunctionTool`,
      :py:class:`CohereToolMessage`, :py:class:`CohereAssistantMessage` and
      the union of Cohere's messages.
    * ``OllamaTool``, ``OllamaMessage``, ``OllamaAssistantMessage``,
      ``OllamaChatMessage``: :py:class:`FunctionTool`,
      :py:class:`OllamaToolMessage`, :py:class:`OllamaAssistantMessage` and
      the union of Ollama's messages.
    * ``BedrockMessage``: :py:class:`BedrockMessage`, a Converse message
      (results, assistant message and conversation alike).

    Cohere's SDK types its parameters as pydantic models only, Ollama's
    native API has no SDK here, and boto3 has no typed parameters: their
    shapes are the typed dictionaries of this module. Cohere's models take
    them through ``model_validate``, such as
    ``cohere.ToolV2.model_validate( tool )`` or
    ``cohere.AssistantChatMessageV2.model_validate( message )``. Mistral's
    own types are in :py:mod:`invocables.processors.mistral`.
'''


import invocables.processors.__ as __

# Type checkers see through 'module.TYPE_CHECKING', not through the hub;
# linters read the literals of 'module.Literal' as literals.
import typing_extensions as _typx


NativeObject: __.typx.TypeAlias = dict[ str, __.typx.Any ]

# Native tool, message (or input item) of results, and assistant message
# (or input items) of a processor.
Tool = __.typx.TypeVar( 'Tool', default = __.typx.Any )
Message = __.typx.TypeVar( 'Message', default = __.typx.Any )
Assistant = __.typx.TypeVar( 'Assistant', default = __.typx.Any )


class FunctionSpecification( __.typx.TypedDict ):
    ''' Function of a function tool: name, description, parameters. '''

    name: __.typx.Required[ str ]
    description: __.typx.NotRequired[ str ]
    parameters: __.typx.NotRequired[ dict[ str, object ] ]
    strict: __.typx.NotRequired[ bool | None ]


class FunctionTool( __.typx.TypedDict ):
    ''' Tool ``{ type: 'function', function: { ... } }``.

        The shape of OpenAI Chat Completions, which Cohere and Ollama share.
    '''

    type: __.typx.Required[ _typx.Literal[ 'function' ] ]
    function: __.typx.Required[ FunctionSpecification ]


class CohereTextBlock( __.typx.TypedDict ):
    ''' Text block of a Cohere tool message. '''

    type: _typx.Literal[ 'text' ]
    text: str


class CohereDocument( __.typx.TypedDict ):
    ''' Document of a Cohere document block: structured data. '''

    data: dict[ str, object ]


class CohereDocumentBlock( __.typx.TypedDict ):
    ''' Document block of a Cohere tool message. '''

    type: _typx.Literal[ 'document' ]
    document: CohereDocument


class CohereToolMessage( __.typx.TypedDict ):
    ''' Cohere v2 tool message: ``{ role: 'tool', tool_call_id, content }``.
    '''

    role: _typx.Literal[ 'tool' ]
    tool_call_id: str
    content: list[ CohereTextBlock | CohereDocumentBlock ]


class CohereFunctionCall( __.typx.TypedDict ):
    ''' Function of a Cohere tool call: name and arguments as JSON text. '''

    name: str
    arguments: str


class CohereToolCall( __.typx.TypedDict ):
    ''' Tool call of a Cohere assistant message. '''

    id: str
    type: _typx.Literal[ 'function' ]
    function: CohereFunctionCall


class CohereAssistantMessage( __.typx.TypedDict, total = False ):
    ''' Cohere v2 assistant message: ``{ role: 'assistant', tool_plan,
        tool_calls, content }`` (each but ``role`` optional).
    '''

    role: __.typx.Required[ _typx.Literal[ 'assistant' ] ]
    tool_plan: str
    tool_calls: list[ CohereToolCall ]
    content: list[ CohereTextBlock ]


class CohereUserMessage( __.typx.TypedDict ):
    ''' Cohere v2 user or system message: ``{ role, content }``. '''

    role: _typx.Literal[ 'user', 'system' ]
    content: str | list[ CohereTextBlock ]


class OllamaFunctionCall( __.typx.TypedDict ):
    ''' Function of an Ollama tool call: name and arguments (an object).
    '''

    name: str
    arguments: __.cabc.Mapping[ str, __.typx.Any ]


class OllamaToolCall( __.typx.TypedDict, total = False ):
    ''' Tool call of an Ollama assistant message (``id`` when the server
        gave one).
    '''

    function: __.typx.Required[ OllamaFunctionCall ]
    id: str


class OllamaAssistantMessage( __.typx.TypedDict, total = False ):
    ''' Ollama assistant message: ``{ role: 'assistant', content,
        thinking, tool_calls }``.
    '''

    role: __.typx.Required[ _typx.Literal[ 'assistant' ] ]
    content: __.typx.Required[ str ]
    thinking: str
    tool_calls: list[ OllamaToolCall ]


class OllamaUserMessage( __.typx.TypedDict, total = False ):
    ''' Ollama user or system message: ``{ role, content, images }``. '''

    role: __.typx.Required[ _typx.Literal[ 'user', 'system' ] ]
    content: __.typx.Required[ str ]
    images: list[ str ]


class OllamaToolMessage( __.typx.TypedDict ):
    ''' Ollama tool message: ``{ role: 'tool', content, tool_name }``, with
        ``tool_call_id`` when the server gave the call an id.
    '''

    role: __.typx.Required[ _typx.Literal[ 'tool' ] ]
    content: __.typx.Required[ str ]
    tool_name: __.typx.Required[ str ]
    tool_call_id: __.typx.NotRequired[ str ]


class BedrockToolUse( __.typx.TypedDict, total = False ):
    ''' ``toolUse`` of a Converse content block (``type`` for tools which
        Bedrock runs itself).
    '''

    toolUseId: __.typx.Required[ str ]
    name: __.typx.Required[ str ]
    input: __.typx.Required[ __.typx.Any ]
    type: str


class BedrockToolResult( __.typx.TypedDict, total = False ):
    ''' ``toolResult`` of a Converse content block. '''

    toolUseId: __.typx.Required[ str ]
    content: __.typx.Required[ list[ dict[ str, __.typx.Any ] ] ]
    status: _typx.Literal[ 'success', 'error' ]


class BedrockBlock( __.typx.TypedDict, total = False ):
    ''' Converse content block: one of its keys (``text``, ``toolUse``,
        ``toolResult``, ...).
    '''

    text: str
    toolUse: BedrockToolUse
    toolResult: BedrockToolResult
    image: dict[ str, __.typx.Any ]
    document: dict[ str, __.typx.Any ]
    reasoningContent: dict[ str, __.typx.Any ]
    cachePoint: dict[ str, __.typx.Any ]


class BedrockMessage( __.typx.TypedDict ):
    ''' Converse message: ``{ role, content: [ blocks ] }``. '''

    role: _typx.Literal[ 'user', 'assistant' ]
    content: list[ BedrockBlock ]


# Type checkers take the SDK's types (the last declaration); at run time,
# each alias stands for plain dictionaries and no SDK is imported.
if not _typx.TYPE_CHECKING:
    AnthropicTool = __.typx.TypeAliasType( 'AnthropicTool', NativeObject )
    AnthropicMessage = __.typx.TypeAliasType(
        'AnthropicMessage', NativeObject )
    OpenaiTool = __.typx.TypeAliasType( 'OpenaiTool', NativeObject )
    OpenaiMessage = __.typx.TypeAliasType( 'OpenaiMessage', NativeObject )
    OpenaiAssistantMessage = __.typx.TypeAliasType(
        'OpenaiAssistantMessage', NativeObject )
    OpenaiChatMessage = __.typx.TypeAliasType(
        'OpenaiChatMessage', NativeObject )
    OpenaiResponsesTool = __.typx.TypeAliasType(
        'OpenaiResponsesTool', NativeObject )
    OpenaiResponsesItem = __.typx.TypeAliasType(
        'OpenaiResponsesItem', NativeObject )
    GeminiTool = __.typx.TypeAliasType( 'GeminiTool', NativeObject )
    GeminiDeclaration = __.typx.TypeAliasType(
        'GeminiDeclaration', NativeObject )
    GeminiContent = __.typx.TypeAliasType( 'GeminiContent', NativeObject )
else:
    from anthropic import types as _anthropic
    from google.genai import types as _gemini
    from openai.types import chat as _openai
    from openai.types import responses as _openai_responses

    AnthropicTool = _anthropic.ToolParam
    AnthropicMessage = _anthropic.MessageParam
    OpenaiTool = _openai.ChatCompletionToolParam
    OpenaiMessage = _openai.ChatCompletionToolMessageParam
    OpenaiAssistantMessage = _openai.ChatCompletionAssistantMessageParam
    OpenaiChatMessage = _openai.ChatCompletionMessageParam
    OpenaiResponsesTool = _openai_responses.FunctionToolParam
    OpenaiResponsesItem = _openai_responses.ResponseInputItemParam
    GeminiTool = _gemini.ToolUnionDict
    GeminiDeclaration = _gemini.FunctionDeclarationDict
    GeminiContent = _gemini.ContentDict

CohereTool: __.typx.TypeAlias = FunctionTool
CohereMessage: __.typx.TypeAlias = CohereToolMessage
CohereChatMessage: __.typx.TypeAlias = (
    CohereUserMessage | CohereAssistantMessage | CohereToolMessage )
OllamaTool: __.typx.TypeAlias = FunctionTool
OllamaMessage: __.typx.TypeAlias = OllamaToolMessage
OllamaChatMessage: __.typx.TypeAlias = (
    OllamaUserMessage | OllamaAssistantMessage | OllamaToolMessage )
