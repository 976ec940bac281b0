# SPDX-License-Identifier: Apache-2.0

''' Transcripts of conversations, whole or streamed, for tests of
    conversations. '''


import typing

from invocables.conversations import base


async def access_transcript(
    conversation: base.ConversationBase[ typing.Any ], streaming: bool,
    prompt: str,
):
    ''' Returns the transcript of conversation on prompt: of its
        conclusion event when streaming, else of the whole answer. '''
    if not streaming: return await conversation.converse( prompt )
    transcripts = [
        event.transcript
        async for event in conversation.converse_continuous( prompt )
        if isinstance( event, base.ConclusionEvent ) ]
    return transcripts[ -1 ]
