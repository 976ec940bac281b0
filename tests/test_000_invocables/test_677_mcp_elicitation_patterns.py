# SPDX-License-Identifier: Apache-2.0

''' Patterns of an MCP server's elicitation schemas run bounded.

    The schemas server (``servers/schemas_server.py``) asks for a word
    whose requested schema holds the pattern ``^(a+)+$``; an answer of
    ``'a' * 40 + 'b'``, checked with Python's ``re`` in the event loop,
    froze the process for hours.
'''


import asyncio
import json

import pytest

import invocables
import invocables.mcp

from invocables.mcp import elicitation

from . import mcp_support


_BOUND = 30 # seconds: "does not hang", never a timing assertion
_HOSTILE = 'a' * 40 + 'b'
_PATTERN = '^(a+)+$'
# A frozen event loop cannot end a test: the thread method can.
_unfrozen = pytest.mark.timeout( 120, method = 'thread' )


def _produce( elicitor ):
    return invocables.mcp.produce_ensemble(
        'schemas', command = mcp_support.produce_server_command(
            'schemas_server.py' ), elicitor = elicitor )


@_unfrozen
@pytest.mark.asyncio
async def test_100_accepted_content_checked_bounded( ):
    ''' Content accepted by the elicitor which breaks the requested
        schema's catastrophic pattern is refused to the server, at once;
        content which matches is sent. '''
    answers = [ _HOSTILE, 'aaa' ]

    async def elicitor( request ):
        return { 'action': 'accept', 'content': {
            'word': answers.pop( 0 ) } }

    async with _produce( elicitor ) as ensemble:
        refused = await asyncio.wait_for(
            ensemble.invoke( 'elicit', { } ), _BOUND )
        accepted = await asyncio.wait_for(
            ensemble.invoke( 'elicit', { } ), _BOUND )
    assert refused[ 0 ].text.startswith( 'error ' )
    assert "keyword 'pattern'" in refused[ 0 ].text
    assert _HOSTILE not in refused[ 0 ].text
    assert json.loads( accepted[ 0 ].text ) == {
        'action': 'accept', 'content': { 'word': 'aaa' } }


@_unfrozen
def test_200_terminal_answer_checked_bounded( ):
    ''' An answer typed on the terminal is checked against the field's
        catastrophic pattern at once. '''
    field = { 'type': 'string', 'pattern': _PATTERN }
    with pytest.raises( ValueError, match = 'does not match' ):
        elicitation.validate_answer( field, _HOSTILE )
    assert elicitation.validate_answer( field, 'aaaa' ) == 'aaaa'


@_unfrozen
def test_210_terminal_answer_lookahead_bounded( ):
    ''' A pattern which RE2 cannot run refuses the answer, or stops at
        the patterns' deadline; either way, at once. '''
    field = { 'type': 'string', 'pattern': '^(?=a)(a|aa)+$' }
    with pytest.raises( ValueError ):
        elicitation.validate_answer( field, 'a' * 60 + 'b' )
