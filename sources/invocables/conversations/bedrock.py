# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over an Amazon Bedrock Runtime client (Converse).

    Works with aiobotocore's asynchronous client and with boto3's
    synchronous one (whose calls and stream reads then run in a worker
    thread, so that the event loop never blocks): whole responses come
    from ``client.converse``, streamed ones from ``client.converse_stream``.
    The transcript holds Converse messages (``{ role, content: [ blocks ]
    }``): user prompts as text blocks, assistant messages with ``toolUse``
    blocks, results as one user message of ``toolResult`` blocks. The
    system prompt goes in ``system``, never into the transcript;
    ``tokens_maximum`` goes as ``inferenceConfig.maxTokens``. The SDK is
    never imported here.
'''


import invocables.conversations.__ as __
import invocables.conversations.base as _base


class BedrockConversation(
    _base.ConversationBase[ __.processors.natives.BedrockMessage ]
):
    ''' Conversation loop over a Bedrock Runtime client (Converse API). '''

    provider = 'bedrock'

    def produce_message( self, prompt: str ) -> _base.NativeObject:
        ''' Returns ``{ role: 'user', content: [ { text: prompt } ] }``. '''
        return { 'role': 'user', 'content': [ { 'text': prompt } ] }
