# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an Anthropic client (Messages API).

    Works with ``anthropic.AsyncAnthropic`` (and its Bedrock and Vertex
    variants): whole and streamed responses come from
    ``client.messages.create``. The transcript holds ``{ role, content }``
    messages; the system prompt goes in ``system``; ``tokens_maximum``
    (Anthropic's ``max_tokens``) defaults to 4096. A response which stops
    for ``pause_turn`` is resumed. The SDK is never imported here.
'''


import invocables.conversations.__ as __
import invocables.conversations.base as _base


class AnthropicConversation(
    _base.ConversationBase[ __.processors.natives.AnthropicMessage ]
):
    ''' Conversation loop over an Anthropic client. '''

    provider = 'anthropic'
