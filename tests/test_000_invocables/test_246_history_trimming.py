# SPDX-License-Identifier: Apache-2.0

''' Trimming of stale tool results: each strategy, on every provider's
    shapes; untouched messages, determinism, pairing.
'''


import copy
import json

import pytest

import invocables

from invocables import exceptions, history


def _anthropic( rounds ):
    ''' History of Anthropic messages: one call and result per round. '''
    messages = [ { 'role': 'user', 'content': 'Work.' } ]
    for index, ( name, arguments, text ) in enumerate( rounds ):
        messages.append( { 'role': 'assistant', 'content': [
            { 'type': 'text', 'text': 'Calling.' },
            { 'type': 'tool_use', 'id': f"toolu_{index}", 'name': name,
              'input': arguments } ] } )
        messages.append( { 'role': 'user', 'content': [
            { 'type': 'tool_result', 'tool_use_id': f"toolu_{index}",
              'content': text } ] } )
    return messages


def _results( messages ):
    return [
        block[ 'content' ] for message in messages
        if isinstance( message[ 'content' ], list )
        for block in message[ 'content' ] if block[ 'type' ] == 'tool_result' ]


_READS = [
    ( 'read_file', { 'path': '/a' }, 'A1' * 100 ),
    ( 'read_file', { 'path': '/b' }, 'B1' * 100 ),
    ( 'read_file', { 'path': '/a' }, 'A2' * 100 ),
    ( 'write_file', { 'path': '/b', 'text': 'x' }, 'Wrote /b. ' * 20 ),
    ( 'list_directory', { 'path': '/' }, 'a b ' * 50 ),
]


def test_100_superseded_exact_default( ):
    ''' By default, a later call with the same name and arguments makes
        the earlier result stale; the placeholder says why.
    '''
    messages = _anthropic( _READS )
    trimmed = history.trim_history( messages )
    assert trimmed.trimmed == ( 'toolu_0', )
    results = _results( trimmed.messages )
    assert results[ 0 ].startswith( history.PLACEHOLDER_PREFIX )
    assert 'read_file' in results[ 0 ]
    assert results[ 1 : ] == [ text for _, _, text in _READS[ 1 : ] ]
    assert trimmed.saved == 200 - len( results[ 0 ] )


def test_110_untouched_messages_are_the_same_objects( ):
    ''' Messages not trimmed are returned as given; the input is not
        changed.
    '''
    messages = _anthropic( _READS )
    original = copy.deepcopy( messages )
    trimmed = history.trim_history( messages )
    assert messages == original
    changed = [
        index for index, ( before, after ) in enumerate(
            zip( messages, trimmed.messages ) ) if before is not after ]
    assert changed == [ 2 ]
    assert trimmed.messages[ 1 ] is messages[ 1 ]


def test_120_keyed_staleness( ):
    ''' A declared relation: a write of a path makes earlier reads of that
        path stale, a later read too; other tools are compared exactly.
    '''
    staleness = history.KeyedStaleness(
        reads = { 'read_file': ( 'path', ) },
        writes = { 'write_file': ( 'path', ) } )
    trimmed = history.trim_history(
        _anthropic( _READS ), superseded = staleness )
    assert trimmed.trimmed == ( 'toolu_0', 'toolu_1' )
    assert 'write_file' in _results( trimmed.messages )[ 1 ]


def test_130_deduplicator_protocol( ):
    ''' A deduplicator of the design documents' protocol (or a function
        producing one) decides which later calls repeat earlier ones.
    '''

    class PathDeduplicator:

        def __init__( self ):
            self.seen = set( )

        def is_duplicate( self, name, arguments ):
            return arguments.get( 'path' ) in self.seen

        def record( self, name, arguments ):
            self.seen.add( arguments.get( 'path' ) )

    trimmed = history.trim_history(
        _anthropic( _READS ), superseded = PathDeduplicator )
    assert trimmed.trimmed == ( 'toolu_0', 'toolu_1' )
    exact = history.trim_history(
        _anthropic( _READS ),
        superseded = invocables.execution.deduplicators.ExactDeduplicator )
    assert exact.trimmed == ( 'toolu_0', )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        history.trim_history( _anthropic( _READS ), superseded = 3 )


def test_135_library_deduplicators_by_signature( ):
    ''' The library's deduplicators compare calls by their signatures (a
        semantic key too); their records are left as they were.
    '''
    deduplicator = invocables.SemanticDeduplicator(
        key = lambda name, arguments: arguments.get( 'path' ) )
    deduplicator.record( 'read_file', { 'path': '/z' } )
    trimmed = history.trim_history(
        _anthropic( _READS ), superseded = deduplicator )
    assert trimmed.trimmed == ( 'toolu_0', 'toolu_1' )
    assert deduplicator.is_duplicate( 'read_file', { 'path': '/z' } )
    assert not deduplicator.is_duplicate( 'read_file', { 'path': '/a' } )
    exact = history.trim_history(
        _anthropic( _READS ),
        superseded = invocables.ExactDeduplicator( ) )
    assert exact.trimmed == ( 'toolu_0', )


def test_140_recency( ):
    ''' With ``keep``, the most recent results stay; older are trimmed. '''
    trimmed = history.trim_history(
        _anthropic( _READS ), superseded = False, keep = 2 )
    assert trimmed.trimmed == ( 'toolu_0', 'toolu_1', 'toolu_2' )
    assert _results( trimmed.messages )[ 3 : ] == [
        'Wrote /b. ' * 20, 'a b ' * 50 ]
    assert 'most recent' in _results( trimmed.messages )[ 0 ]


def test_150_budget_clears_at_least_oldest_first( ):
    ''' Nothing is trimmed under the budget; over it, the oldest results
        go first, at least ``clear_at_least`` at once; between trims the
        history stays the same while it grows by less than that.
    '''
    rounds = [ ( 'read_file', { 'path': f"/{i}" }, 'x' * 400 )
               for i in range( 10 ) ]
    messages = _anthropic( rounds )
    # The size of a history: characters of each message's JSON.
    size = sum(
        len( json.dumps( m, ensure_ascii = False ) ) for m in messages )
    untouched = history.trim_history(
        messages, superseded = False, budget = size )
    assert untouched.trimmed == ( )
    assert untouched.messages == messages
    over = history.trim_history(
        messages, superseded = False, budget = size - 10,
        clear_at_least = 1000 )
    assert over.trimmed == tuple( f"toolu_{i}" for i in range( 4 ) )
    assert over.saved >= 1000
    longer = _anthropic(
        [ *rounds, ( 'read_file', { 'path': '/x' }, 'y' * 200 ) ] )
    again = history.trim_history(
        longer, superseded = False, budget = size - 10,
        clear_at_least = 1000 )
    assert again.messages[ : len( messages ) ] == over.messages
    kept = history.trim_history(
        messages, superseded = False, budget = 100, keep = 4 )
    assert kept.trimmed == tuple( f"toolu_{i}" for i in range( 6 ) )


def test_160_budget_in_tokens( ):
    ''' The budget may count tokens through the application's counter. '''
    rounds = [ ( 'read_file', { 'path': f"/{i}" }, 'word ' * 100 )
               for i in range( 4 ) ]
    messages = _anthropic( rounds )
    def count( text ):
        return len( text.split( ) )
    total = sum( count( json.dumps( m ) ) for m in messages )
    trimmed = history.trim_history(
        messages, superseded = False, budget = total - 50, counter = count )
    assert trimmed.trimmed == ( 'toolu_0', )


def test_170_exclusions_and_arguments( ):
    ''' Excluded tools (by pattern or ensemble) are never trimmed but still
        supersede; arguments of trimmed calls may be cleared.
    '''
    def read_file( path: str ) -> str:
        ''' Reads a file. '''
        return path
    ensemble = invocables.produce_ensemble( 'files', [ read_file ] )
    for exclude in ( [ 'read_*' ], [ ensemble ] ):
        trimmed = history.trim_history(
            _anthropic( _READS ), superseded = False, keep = 0,
            exclude = exclude )
        assert trimmed.trimmed == ( 'toolu_3', 'toolu_4' )
    cleared = history.trim_history(
        _anthropic( _READS ), clear_arguments = True )
    assert cleared.messages[ 1 ][ 'content' ][ 1 ][ 'input' ] == { }
    assert cleared.messages[ 1 ][ 'content' ][ 1 ][ 'id' ] == 'toolu_0'


def test_180_deterministic_and_idempotent( ):
    ''' Same input, same output; trimming a trimmed history trims nothing
        more.
    '''
    options = { 'keep': 2, 'clear_arguments': True }
    first = history.trim_history( _anthropic( _READS ), **options )
    second = history.trim_history( _anthropic( _READS ), **options )
    assert first == second
    again = history.trim_history( first.messages, **options )
    assert again.trimmed == ( )
    assert again.messages == first.messages


def test_190_invalid_options_and_providers( ):
    ''' Unknown providers and invalid numbers are refused. '''
    with pytest.raises( exceptions.ProviderNoSupport ):
        history.trim_history( [ ], 'nobody' )
    for option in ( { 'keep': -1 }, { 'budget': 0 }, { 'keep': True } ):
        with pytest.raises( exceptions.ConfigurationInvalidity ):
            history.trim_history( [ ], **option )


def _chat_history( provider, identifiers, arguments_as_text = True ):
    messages = [ { 'role': 'user', 'content': 'Work.' } ]
    for index, identifier in enumerate( identifiers ):
        arguments = { 'path': '/a' }
        call = { 'type': 'function', 'function': {
            'name': 'read_file',
            'arguments': json.dumps( arguments ) if arguments_as_text
            else arguments } }
        if identifier is not None: call[ 'id' ] = identifier
        messages.append( { 'role': 'assistant', 'tool_calls': [ call ] } )
        result = { 'role': 'tool', 'content': f"text {index} " * 40 }
        if identifier is not None: result[ 'tool_call_id' ] = identifier
        if provider == 'ollama': result[ 'tool_name' ] = 'read_file'
        messages.append( result )
    return messages


@pytest.mark.parametrize( 'provider', [ 'openai', 'mistral', 'cohere' ] )
def test_200_chat_shapes( provider ):
    ''' Chat Completions shapes: results are tool messages named by id;
        cleared arguments stay text.
    '''
    messages = _chat_history( provider, [ 'c1', 'c2' ] )
    trimmed = history.trim_history(
        messages, provider, clear_arguments = True )
    assert trimmed.trimmed == ( 'c1', )
    assert trimmed.messages[ 2 ][ 'content' ].startswith(
        history.PLACEHOLDER_PREFIX )
    assert trimmed.messages[ 2 ][ 'tool_call_id' ] == 'c1'
    assert trimmed.messages[ 1 ][ 'tool_calls' ][ 0 ][ 'function' ][
        'arguments' ] == '{}'
    assert trimmed.messages[ 3 : ] == messages[ 3 : ]


def test_210_ollama_without_ids( ):
    ''' Ollama's calls without ids pair with results by position. '''
    messages = _chat_history(
        'ollama', [ None, None, None ], arguments_as_text = False )
    trimmed = history.trim_history( messages, 'ollama', keep = 1 )
    assert trimmed.trimmed == ( '1:0', '3:0' )
    assert trimmed.messages[ 6 ] is messages[ 6 ]


def test_220_gemini_parallel_calls_without_ids( ):
    ''' Gemini's parallel calls pair with their responses by position and
        name; a trimmed response keeps its name.
    '''
    messages = [
        { 'role': 'user', 'parts': [ { 'text': 'Weather?' } ] },
        { 'role': 'model', 'parts': [
            { 'function_call': { 'name': 'weather', 'args': { 'c': 'A' } } },
            { 'functionCall': { 'name': 'time', 'args': { } } } ] },
        { 'role': 'user', 'parts': [
            { 'function_response': {
                'name': 'weather', 'response': { 'result': 'rain' * 50 } } },
            { 'functionResponse': {
                'name': 'time', 'response': { 'result': 'noon' } } } ] },
        { 'role': 'model', 'parts': [
            { 'function_call': { 'name': 'weather', 'args': { 'c': 'A' } } }
        ] },
        { 'role': 'user', 'parts': [
            { 'function_response': {
                'name': 'weather', 'response': { 'result': 'sun' } } } ] },
    ]
    trimmed = history.trim_history( messages, 'gemini' )
    assert trimmed.trimmed == ( '1:0', )
    parts = trimmed.messages[ 2 ][ 'parts' ]
    assert parts[ 0 ][ 'function_response' ][ 'name' ] == 'weather'
    assert parts[ 0 ][ 'function_response' ][ 'response' ][
        'result' ].startswith( history.PLACEHOLDER_PREFIX )
    assert parts[ 1 ] == messages[ 2 ][ 'parts' ][ 1 ]



class _Name( str ):
    ''' Name of a result which counts the comparisons made with it. '''

    __slots__ = ( )
    comparisons = 0

    def __eq__( self, other ):
        _Name.comparisons += 1
        return str.__eq__( self, other )

    __hash__ = str.__hash__


def _gemini_round( count ):
    ''' Gemini history: a round of calls answered in reverse order, then
        a round of one call.
    '''
    calls = [
        { 'functionCall': { 'name': f"t{index}", 'args': { 'i': index } } }
        for index in range( count ) ]
    results = [
        { 'functionResponse': {
            'name': _Name( f"t{index}" ),
            'response': { 'result': f"{index:04d}" * 100 } } }
        for index in reversed( range( count ) ) ]
    return [
        { 'role': 'user', 'parts': [ { 'text': 'Go.' } ] },
        { 'role': 'model', 'parts': calls },
        { 'role': 'user', 'parts': results },
        { 'role': 'model', 'parts': [
            { 'functionCall': { 'name': 'late', 'args': { } } } ] },
        { 'role': 'user', 'parts': [
            { 'functionResponse': {
                'name': 'late', 'response': { 'result': 'ok' } } } ] } ]


def test_225_pairing_linear_in_round( ):
    ''' Results without ids, in another order than their calls, pair each
        with its call by name at a cost linear in the round: the names of
        1,000 results are compared about 1,000 times, not half a million.
    '''
    counts = [ ]
    for count in ( 500, 1000 ):
        _Name.comparisons = 0
        trimmed = history.trim_history(
            _gemini_round( count ), 'gemini', keep = 1 )
        counts.append( _Name.comparisons )
        # Each result was trimmed as the result of its own call.
        assert trimmed.trimmed == tuple(
            f"1:{index}" for index in range( count ) )
        parts = trimmed.messages[ 2 ][ 'parts' ]
        assert [ part[ 'functionResponse' ][ 'name' ] for part in parts ] == [
            f"t{index}" for index in reversed( range( count ) ) ]
    assert counts[ 1 ] <= 2 * 1000
    assert counts[ 1 ] <= 2.5 * counts[ 0 ]


def test_230_bedrock_and_responses_shapes( ):
    ''' Bedrock's ``toolResult`` keeps a text block; Responses' output is
        replaced; server tool blocks are left alone.
    '''
    bedrock = [ message for index in ( 1, 2 ) for message in (
        { 'role': 'assistant', 'content': [ { 'toolUse': {
            'toolUseId': f"t{index}", 'name': 'f', 'input': { } } } ] },
        { 'role': 'user', 'content': [ { 'toolResult': {
            'toolUseId': f"t{index}",
            'content': [ { 'json': { 'a': 'b' * 200 } } ],
            'status': 'success' } } ] } ) ]
    trimmed = history.trim_history( bedrock, 'bedrock' )
    result = trimmed.messages[ 1 ][ 'content' ][ 0 ][ 'toolResult' ]
    assert result[ 'toolUseId' ] == 't1'
    assert result[ 'status' ] == 'success'
    assert result[ 'content' ][ 0 ][ 'text' ].startswith(
        history.PLACEHOLDER_PREFIX )
    items = [ item for index in ( 1, 2 ) for item in (
        { 'type': 'function_call', 'call_id': f"c{index}", 'name': 'f',
          'arguments': '{}' },
        { 'type': 'function_call_output', 'call_id': f"c{index}",
          'output': 'out' * 60 } ) ]
    trimmed = history.trim_history( items, 'openai-responses' )
    assert trimmed.trimmed == ( 'c1', )
    assert trimmed.messages[ 1 ][ 'output' ].startswith(
        history.PLACEHOLDER_PREFIX )


def test_240_linear_work( ):
    ''' A long history is trimmed in one pass: doubling it doubles the
        calls surveyed (counted, not timed).
    '''
    rounds = [ ( 'read_file', { 'path': f"/{i % 7}" }, 'z' * 150 )
               for i in range( 400 ) ]
    trimmed = history.trim_history( _anthropic( rounds ), keep = 10 )
    assert len( trimmed.trimmed ) == 393
    assert trimmed.trimmed[ -1 ] == 'toolu_392'


def test_300_sdk_typed_objects( ):
    ''' SDK typed objects are read as dictionaries are; untouched ones are
        returned as they are, trimmed ones as plain dictionaries which the
        SDK's models take.
    '''
    from anthropic.types import ToolUseBlock
    from google.genai import types as genai_types
    blocks = [
        ToolUseBlock(
            type = 'tool_use', id = f"toolu_{index}", name = 'read_file',
            input = { 'path': '/a' } )
        for index in range( 2 ) ]
    messages = [ message for index, block in enumerate( blocks )
                 for message in (
        { 'role': 'assistant', 'content': [ block ] },
        { 'role': 'user', 'content': [ {
            'type': 'tool_result', 'tool_use_id': f"toolu_{index}",
            'content': 'a' * 300 } ] } ) ]
    trimmed = history.trim_history( messages, clear_arguments = True )
    assert trimmed.trimmed == ( 'toolu_0', )
    assert trimmed.messages[ 0 ][ 'content' ][ 0 ] == {
        'type': 'tool_use', 'id': 'toolu_0', 'name': 'read_file',
        'input': { } }
    assert trimmed.messages[ 2 ][ 'content' ][ 0 ] is blocks[ 1 ]
    contents = [ content for _ in range( 2 ) for content in (
        genai_types.Content( role = 'model', parts = [ genai_types.Part(
            function_call = genai_types.FunctionCall(
                name = 'read_file', args = { 'path': '/a' } ) ) ] ),
        genai_types.Content( role = 'user', parts = [ genai_types.Part(
            function_response = genai_types.FunctionResponse(
                name = 'read_file',
                response = { 'result': 'b' * 300 } ) ) ] ) ) ]
    trimmed = history.trim_history( contents, 'gemini' )
    assert trimmed.trimmed == ( '0:0', )
    assert trimmed.messages[ 3 ] is contents[ 3 ]
    model = genai_types.Content.model_validate( trimmed.messages[ 1 ] )
    response = model.parts[ 0 ].function_response
    assert response.name == 'read_file'
    assert response.response[ 'result' ].startswith(
        history.PLACEHOLDER_PREFIX )


@pytest.mark.slow
def test_400_benchmark_runs( ):
    ''' The benchmark of trimming runs quickly and prints both tables, with
        less sent by every strategy than without trimming.
    '''
    import re
    import subprocess
    import sys
    from pathlib import Path
    root = Path( __file__ ).parents[ 2 ]
    completed = subprocess.run(
        [ sys.executable, str( root / 'benchmarks' / 'history.py' ),
          '--quick' ],
        capture_output = True, text = True, timeout = 600, cwd = root,
        check = False )
    assert completed.returncode == 0, completed.stderr
    totals = [
        int( total.replace( ',', '' ) ) for total in re.findall(
            r'^\| [^|]+ \| [0-9,]+ \| [0-9,]+ \| ([0-9,]+) \|',
            completed.stdout, re.MULTILINE ) ]
    assert len( totals ) == 6
    assert all( total < totals[ 0 ] for total in totals[ 1 : ] )
    assert '## Trimming cost per request' in completed.stdout
