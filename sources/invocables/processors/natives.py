# SPDX-License-Identifier: Apache-2.0

''' Native shapes of provider APIs, as type checkers see them.

    Processors return plain dictionaries. For type checkers, those
    dictionaries have the provider SDK's own parameter types, so that the
    tools and results of a processor go into the SDK's typed calls without
    casts: ``client.messages.create( tools = processor.prepare_tools(
    ensembles ) )`` and ``messages.extend( processor.nativize_results(
    results ) )``. The SDKs are imported only by type checkers, never at run
    time; at run time, each alias below stands for ``dict[ str, Any ]``.

    * ``AnthropicTool``, ``AnthropicMessage``: ``ToolParam`` and
      ``MessageParam`` of ``anthropic.types``.
    * ``OpenaiTool``, ``OpenaiMessage``: ``ChatCompletionToolParam`` and
      ``ChatCompletionToolMessageParam`` of ``openai.types.chat``.
    * ``OpenaiResponsesTool``, ``OpenaiResponsesItem``:
      ``FunctionToolParam`` and ``ResponseInputItemParam`` of
      ``openai.types.responses``.
    * ``GeminiTool``, ``GeminiDeclaration``, ``GeminiContent``:
      ``ToolUnionDict`` (what ``GenerateContentConfigDict`` takes in
      ``tools``), ``FunctionDeclarationDict`` and ``ContentDict`` of
      ``google.genai.types``.
    * ``CohereTool``, ``CohereMessage``: :py:class:`FunctionTool` and
      :py:class:`CohereToolMessage`.
    * ``OllamaTool``, ``OllamaMessage``: :py:class:`FunctionTool` and
      :py:class:`OllamaToolMessage`.

    Cohere's SDK types its parameters as pydantic models only, and Ollama's
    native API has no SDK here: their shapes are the typed dictionaries of
    this module. Cohere's models take them through ``model_validate``, such
    as ``cohere.ToolV2.model_validate( tool )``.
'''


from . import __

# Type checkers see through 'module.TYPE_CHECKING', not through the hub;
# linters read the literals of 'module.Literal' as literals.
import typing_extensions as _typx


NativeObject: __.typx.TypeAlias = dict[ str, __.typx.Any ]

# Native tool and message (or input item) of a processor.
Tool = __.typx.TypeVar( 'Tool', default = __.typx.Any )
Message = __.typx.TypeVar( 'Message', default = __.typx.Any )


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


class OllamaToolMessage( __.typx.TypedDict ):
    ''' Ollama tool message: ``{ role: 'tool', content, tool_name }``, with
        ``tool_call_id`` when the server gave the call an id.
    '''

    role: __.typx.Required[ _typx.Literal[ 'tool' ] ]
    content: __.typx.Required[ str ]
    tool_name: __.typx.Required[ str ]
    tool_call_id: __.typx.NotRequired[ str ]


# Type checkers take the SDK's types (the last declaration); at run time,
# each alias stands for plain dictionaries and no SDK is imported.
if not _typx.TYPE_CHECKING:
    AnthropicTool = __.typx.TypeAliasType( 'AnthropicTool', NativeObject )
    AnthropicMessage = __.typx.TypeAliasType(
        'AnthropicMessage', NativeObject )
    OpenaiTool = __.typx.TypeAliasType( 'OpenaiTool', NativeObject )
    OpenaiMessage = __.typx.TypeAliasType( 'OpenaiMessage', NativeObject )
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
    OpenaiResponsesTool = _openai_responses.FunctionToolParam
    OpenaiResponsesItem = _openai_responses.ResponseInputItemParam
    GeminiTool = _gemini.ToolUnionDict
    GeminiDeclaration = _gemini.FunctionDeclarationDict
    GeminiContent = _gemini.ContentDict

CohereTool: __.typx.TypeAlias = FunctionTool
CohereMessage: __.typx.TypeAlias = CohereToolMessage
OllamaTool: __.typx.TypeAlias = FunctionTool
OllamaMessage: __.typx.TypeAlias = OllamaToolMessage
