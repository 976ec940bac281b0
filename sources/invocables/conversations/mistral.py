# SPDX-License-Identifier: Apache-2.0

''' Conversation loop over a Mistral client (``mistralai``).

    Whole responses come from ``client.chat.complete_async``, streamed ones
    from ``client.chat.stream_async``. The transcript holds ``{ role,
    content }`` messages, assistant messages with ``tool_calls`` (their
    ids of nine letters and digits, as Mistral requires, the same as the
    results'), and ``{ role: 'tool', tool_call_id, name, content }``
    results; the system prompt is sent first in every request, never
    stored. ``tokens_maximum`` goes as ``max_tokens``. The SDK is never
    imported here.
'''


import invocables.conversations.base as _base
import invocables.processors.mistral as _mistral


class MistralConversation(
    _base.ConversationBase[ _mistral.MistralChatMessage ]
):
    ''' Conversation loop over a Mistral client. '''

    provider = 'mistral'

    def nativize_identifier( self, identifier: str ) -> str:
        ''' Returns id of call as Mistral takes it: nine letters and
            digits (see
            :py:func:`invocables.processors.mistral.nativize_identifier`).
        '''
        return _mistral.nativize_identifier( identifier )
