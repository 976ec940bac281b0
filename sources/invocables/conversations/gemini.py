# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over a Google Gemini client (google-genai).

    Works with ``google.genai.Client``, through its asynchronous side
    (``client.aio``): whole responses come from
    ``client.aio.models.generate_content``, streamed ones from
    ``generate_content_stream``. The transcript holds contents ``{ role,
    parts }`` as google-genai's typed dictionaries name them, in snake_case
    (``function_call``, ``function_response``, ``thought_signature`` as
    base64 text), which google-genai accepts as input. Tools, the system
    prompt (``system_instruction``), the token limit
    (``max_output_tokens``) and ``parameters`` (such as ``temperature`` or
    ``thinking_config``) go in each request's ``config``; automatic
    function calling of the SDK is disabled, since the loop calls the
    tools. The SDK is never imported here.
'''


import invocables.conversations.__ as __
import invocables.conversations.base as _base


class GeminiConversation(
    _base.ConversationBase[ __.processors.natives.GeminiContent ]
):
    ''' Conversation loop over a google-genai client. '''

    provider = 'gemini'

    def produce_message( self, prompt: str ) -> _base.NativeObject:
        ''' Returns ``{ role: 'user', parts: [ { text: prompt } ] }``. '''
        return { 'role': 'user', 'parts': [ { 'text': prompt } ] }
