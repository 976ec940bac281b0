# SPDX-License-Identifier: Apache-2.0

''' Events and texts nested beyond any parser's depth: the processor which
    decodes raw events refuses one with the package's own error, naming
    the nesting; an MCP result whose text nests so deep is kept as it is.
'''


import pytest

from invocables import exceptions
from invocables.processors import produce_processor


# Providers whose accumulators take raw event texts (SSE data, NDJSON).
PROVIDERS = ( 'cohere', 'gemini', 'ollama', 'openai' )
_DEPTH = 100_000


@pytest.mark.parametrize( 'provider', PROVIDERS )
@pytest.mark.parametrize( 'opener', ( '[', '{"a":' ) )
def test_100_deep_event_refused( provider, opener ):
    ''' A raw event nested 100,000 deep raises the package's response
        invalidity, which names the nesting; nothing else escapes. '''
    accumulator = produce_processor( provider ).produce_accumulator( )
    with pytest.raises( exceptions.ResponseInvalidity, match = 'too deep' ):
        list( accumulator.ingest( opener * _DEPTH ) )


def test_110_deep_text_beside_structure_kept( ):
    ''' An MCP result whose one text nests too deep to read, beside a
        structure, keeps both: the text is not taken for a repeat. '''
    from invocables.mcp import results
    from invocables.mcp._sdk import types
    text = '[' * _DEPTH
    result = types.CallToolResult.model_validate( {
        'content': [ { 'type': 'text', 'text': text } ],
        'structuredContent': { 'a': 1, 'b': 2 } } )
    contents = results.produce_contents( result )
    assert [ type( item ).__name__ for item in contents ] == [
        'TextContent', 'StructureContent' ]
    assert contents[ 0 ].text == text
