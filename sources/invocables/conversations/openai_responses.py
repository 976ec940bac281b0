# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an OpenAI client (Responses API).

    Works with ``openai.AsyncOpenAI``: whole and streamed responses both
    come from ``client.responses.create``. The loop is stateless: every
    request carries the whole transcript as ``input`` items (the user's
    messages, the output items of each response, and the
    ``function_call_output`` items of the results), so it needs no stored
    responses. The system prompt goes in ``instructions``;
    ``tokens_maximum`` is sent as ``max_output_tokens``. The SDK is never
    imported here.
'''


import invocables.conversations.__ as __
import invocables.conversations.base as _base


class OpenaiResponsesConversation(
    _base.ConversationBase[ __.processors.natives.OpenaiResponsesItem ]
):
    ''' Conversation loop over an OpenAI Responses client. '''

    provider = 'openai-responses'
