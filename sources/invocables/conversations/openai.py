# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an OpenAI client (Chat Completions).

    Works with ``openai.AsyncOpenAI`` and with the servers which speak
    Chat Completions (Ollama, vLLM, LM Studio, OpenRouter: give the client
    their ``base_url``). Whole and streamed responses both come from
    ``client.chat.completions.create``. The transcript holds ``{ role,
    content }`` messages, assistant messages with ``tool_calls`` and
    ``{ role: 'tool', tool_call_id, content }`` results; the system prompt
    is sent first in every request, never stored. ``tokens_maximum`` is
    sent as ``max_completion_tokens``; servers which know only
    ``max_tokens`` take it in ``parameters``. The SDK is never imported
    here.
'''


import invocables.conversations.__ as __
import invocables.conversations.base as _base


class OpenaiConversation(
    _base.ConversationBase[ __.processors.natives.OpenaiChatMessage ]
):
    ''' Conversation loop over an OpenAI Chat Completions client. '''

    provider = 'openai'
