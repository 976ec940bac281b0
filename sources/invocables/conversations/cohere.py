# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over a Cohere client (Chat v2).

    Works with ``cohere.AsyncClientV2``: whole responses come from
    ``client.chat``, streamed ones from ``client.chat_stream``. The
    transcript holds ``{ role, content }`` messages, assistant messages
    with ``tool_plan`` and ``tool_calls``, and ``{ role: 'tool',
    tool_call_id, content }`` results; the system prompt is sent first in
    every request, never stored. ``tokens_maximum`` is sent as
    ``max_tokens``. The SDK is never imported here.
'''


import invocables.conversations.__ as __
import invocables.conversations.base as _base


class CohereConversation(
    _base.ConversationBase[ __.processors.natives.CohereChatMessage ]
):
    ''' Conversation loop over a Cohere Chat v2 client. '''

    provider = 'cohere'
