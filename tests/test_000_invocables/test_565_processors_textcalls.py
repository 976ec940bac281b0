# SPDX-License-Identifier: Apache-2.0

''' Text-call reader: real local-model replies and parser test suites. '''


import json
import re
import time

from pathlib import Path

import openai
import pytest

import invocables

from invocables import conversations, exceptions
from invocables.processors import produce_processor, textcalls

from . import scripted


_DATA = Path( __file__ ).parents[ 1 ] / 'data' / 'local-models'
_FORMATS = _DATA / 'text-formats'
_QWEN = json.loads(
    ( _DATA / 'qwen2.5-coder-llamacpp.json' ).read_text( encoding = 'utf-8' ) )
_QWEN_EXPECTED = json.loads(
    ( _DATA / 'qwen2.5-coder-llamacpp.expected.json' ).read_text(
        encoding = 'utf-8' ) )
_CASES = [
    ( path.name, index, case )
    for path in sorted( _FORMATS.glob( '*.json' ) )
    for index, case in enumerate(
        json.loads( path.read_text( encoding = 'utf-8' ) )[ 'cases' ] ) ]
_IDS = [ f"{name}-{index}" for name, index, _ in _CASES ]
# Where this reader chooses otherwise than the origin test (INDEX.md asks
# to say which behaviour is chosen): every JSON object is read on its own,
# so a call after an object which is not a call is still read (Ollama keeps
# the whole reply as text).
_CALLS_OTHERWISE = {
    ( 'bare-json.json', 3 ): [
        ( 'get_conditions', { 'location': 'San Francisco' } ) ],
    ( 'bare-json.json', 4 ): [
        ( 'get_conditions', { 'location': 'San Francisco' } ) ],
}
# Text chosen otherwise: the calls above are not text; the text of a call
# cut off by the end is withheld (as Ollama does); a call naming no offered
# tool stays text; an unparsable pythonic call naming an offered tool is an
# invalid call, not text; a lone '[' at the end is text.
_CONTENT_OTHERWISE = frozenset( (
    ( 'bare-json.json', 3 ), ( 'bare-json.json', 4 ),
    ( 'bare-json.json', 8 ), ( 'llama3-json.json', 3 ),
    ( 'pythonic.json', 12 ), ( 'pythonic.json', 18 ),
) )
_word = re.compile( r'[A-Za-z_][A-Za-z0-9_-]*' )


def _offer( case ):
    ''' Returns tools offered: the case's own, or (when the origin offers
        none, since its parser checks no names) every word of the text, so
        that only the structure of a call decides.
    '''
    if case[ 'offered_tools' ] is not None: return case[ 'offered_tools' ]
    return set( _word.findall( case[ 'text' ] ) )


def _summarize( invocations ):
    return [
        ( item.name, 'invalid' if isinstance( item.invalidity, str )
          else item.arguments )
        for item in invocations ]


def _stream( text, names, pieces, format_ = 'auto' ):
    reader = textcalls.TextCallsReader( names, format_ )
    texts, invocations = [ ], [ ]
    for piece in pieces:
        release = reader.feed( piece )
        texts.append( release.text )
        invocations.extend( release.invocations )
    release = reader.conclude( )
    texts.append( release.text )
    invocations.extend( release.invocations )
    return ''.join( texts ), invocations, reader.truncations


def _normalize_space( text ):
    return ' '.join( text.split( ) )


@pytest.mark.parametrize( ( 'name', 'index', 'case' ), _CASES, ids = _IDS )
def test_100_format_cases( name, index, case ):
    ''' Every case of the five formats gives exactly the calls its origin
        asserts: names and decoded arguments, in order; arguments which are
        not an object give an invalid call, never run.
    '''
    reading = textcalls.read_text_calls( case[ 'text' ], _offer( case ) )
    valid = [
        ( item.name, item.arguments ) for item in reading.invocations
        if not isinstance( item.invalidity, str ) ]
    expected = _CALLS_OTHERWISE.get( ( name, index ), [
        ( call[ 'name' ], call[ 'arguments' ] )
        for call in case[ 'expected' ]
        if isinstance( call[ 'arguments' ], dict ) ] )
    assert valid == expected
    invalid = [
        item.name for item in reading.invocations
        if isinstance( item.invalidity, str ) ]
    for call in case[ 'expected' ]:
        if not isinstance( call[ 'arguments' ], dict ):
            assert call[ 'name' ] in invalid
    identifiers = [ item.identifier for item in reading.invocations ]
    assert len( set( identifiers ) ) == len( identifiers )


@pytest.mark.parametrize( ( 'name', 'index', 'case' ), _CASES, ids = _IDS )
def test_110_format_content( name, index, case ):
    ''' The text beside the calls is what the origin asserts (spacing
        aside), except where this reader says otherwise.
    '''
    if case[ 'content' ] is None or ( name, index ) in _CONTENT_OTHERWISE:
        return
    reading = textcalls.read_text_calls( case[ 'text' ], _offer( case ) )
    assert _normalize_space( reading.text ) == _normalize_space(
        case[ 'content' ] )


@pytest.mark.parametrize( ( 'name', 'index', 'case' ), _CASES, ids = _IDS )
def test_120_format_streams( name, index, case ):
    ''' Streamed in the origin's chunks, and one character at a time, each
        case gives the same calls, text and truncations as whole.
    '''
    names = _offer( case )
    reading = textcalls.read_text_calls( case[ 'text' ], names )
    whole = ( reading.text, _summarize( reading.invocations ),
              reading.truncations )
    for pieces in ( case.get( 'chunks' ) or [ case[ 'text' ] ],
                    list( case[ 'text' ] ) ):
        text, invocations, truncations = _stream(
            case[ 'text' ], names, pieces )
        assert ( text, _summarize( invocations ), truncations ) == whole


@pytest.mark.parametrize(
    'reply', _QWEN_EXPECTED[ 'replies' ], ids = lambda reply: str(
        reply[ 'reply' ] ) )
def test_130_qwen_replies( reply ):
    ''' Every real Qwen2.5-Coder reply gives the calls, invalid calls,
        truncations and text of its expectation; sizes 1 to 7 of streamed
        pieces give the same.
    '''
    source = _QWEN[ 'replies' ][ reply[ 'reply' ] ]
    names = source[ 'offered_tools' ]
    reading = textcalls.read_text_calls( source[ 'content' ], names )
    expected = [
        ( call[ 'name' ], 'invalid' if call.get( 'invalid' )
          else call[ 'arguments' ] )
        for call in reply[ 'calls' ] ]
    assert _summarize( reading.invocations ) == expected
    assert list( reading.truncations ) == reply[ 'truncations' ]
    assert reading.text == reply[ 'text' ]
    content = source[ 'content' ]
    for size in range( 1, 8 ):
        pieces = [
            content[ start : start + size ]
            for start in range( 0, len( content ), size ) ]
        text, invocations, truncations = _stream( content, names, pieces )
        assert ( text, _summarize( invocations ), list( truncations ) ) == (
            reply[ 'text' ], expected, reply[ 'truncations' ] )


def test_140_qwen_summary( ):
    ''' The Qwen replies hold calls in most replies, invalid calls where the
        model doubled braces or repeated keys, and cut-off calls exactly in
        the replies which stopped on ``length``.
    '''
    replies = _QWEN[ 'replies' ]
    for reply, expected in zip( replies, _QWEN_EXPECTED[ 'replies' ] ):
        assert bool( expected[ 'truncations' ] ) == (
            reply[ 'finish_reason' ] == 'length' )
        if '{{' in reply[ 'content' ]:
            assert expected[ 'calls' ][ 0 ].get( 'invalid' )
        if '{' not in reply[ 'content' ]:
            assert not expected[ 'calls' ]
            assert expected[ 'text' ] == reply[ 'content' ]


def test_200_names_offered_only( ):
    ''' A complete call naming no offered tool stays text. '''
    text = '{"name": "search", "arguments": {"q": "x"}}'
    reading = textcalls.read_text_calls( text, [ 'get_weather' ] )
    assert reading.invocations == ( )
    assert reading.text == text


def test_210_formats_restrict( ):
    ''' A named format reads only its own syntax; others stay text. '''
    names = [ 'add' ]
    bare = '{"name": "add", "arguments": {"a": 1}}'
    tagged = f"<tool_call>{bare}</tool_call>"
    pythonic = '[add(a=1)]'
    mistral = '[TOOL_CALLS]add{"a": 1}'
    python_tag = '<|python_tag|>{"name": "add", "parameters": {"a": 1}}'
    expectations = {
        'hermes': ( tagged, ( bare, pythonic, mistral ) ),
        'json': ( bare, ( pythonic, ) ),
        'llama': ( python_tag, ( pythonic, ) ),
        'mistral': ( mistral, ( bare, pythonic ) ),
        'pythonic': ( pythonic, ( bare, mistral ) ),
    }
    for format_, ( read, ignored ) in expectations.items( ):
        reading = textcalls.read_text_calls( read, names, format_ )
        assert _summarize( reading.invocations ) == [ ( 'add', { 'a': 1 } ) ]
        for text in ignored:
            reading = textcalls.read_text_calls( text, names, format_ )
            assert reading.invocations == ( ), ( format_, text )
        reading = textcalls.read_text_calls( read, names, 'auto' )
        assert _summarize( reading.invocations ) == [ ( 'add', { 'a': 1 } ) ]


def test_220_format_unknown( ):
    ''' An unknown format raises configuration invalidity, naming the known
        ones.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        textcalls.TextCallsReader( [ 'add' ], 'xml' )
    assert 'hermes' in str( caught.value )


def test_230_invalid_never_repaired( ):
    ''' Doubled braces, repeated keys, non-literal Python and arguments
        without a JSON form give invalid calls with a reason; nothing is
        repaired.
    '''
    names = [ 'add' ]
    for text in (
        '{{"name": "add", "arguments": {"a": 1}}}',
        '{"name": "add", "arguments": {"a": 1, "a": 2}}',
        '<tool_call>{"name": "add", "arguments": [1, 2]}</tool_call>',
        '[add(a=__import__("os"))]',
        '[add(a={1, 2})]',
        '[add(1, 2)]',
        '[add(**x)]',
        "[add(a=float('nan'))]",
        '[TOOL_CALLS]add{"a": 1,}',
    ):
        reading = textcalls.read_text_calls( text, names )
        assert len( reading.invocations ) == 1, text
        invocation = reading.invocations[ 0 ]
        assert invocation.name == 'add'
        assert isinstance( invocation.invalidity, str ), text
        assert invocation.arguments == { }


def test_240_holdback_releases( ):
    ''' Streamed text is released as soon as it cannot start a call; text
        which may start one is withheld, then released as text when it
        does not.
    '''
    reader = textcalls.TextCallsReader( [ 'add' ] )
    assert reader.feed( 'Hello there' ).text == 'Hello there'
    assert reader.feed( ' <tool' ).text == ''
    release = reader.feed( 'box> is a tag' )
    assert release.text == ' <toolbox> is a tag'
    release = reader.feed( ' {"name": "add", "argu' )
    assert release.text == ''
    release = reader.feed( 'ments": {"a": 1}} done' )
    assert _summarize( release.invocations ) == [ ( 'add', { 'a': 1 } ) ]
    assert release.text == ' done'
    assert reader.conclude( ).text == ''
    with pytest.raises( exceptions.AccumulatorReuseInvalidity ):
        reader.feed( 'more' )


def test_250_holdback_truncation( ):
    ''' A call cut off by the end of a stream is never read; its name is
        reported and its text withheld.
    '''
    reader = textcalls.TextCallsReader( [ 'add' ] )
    release = reader.feed( 'Sure. <tool_call>{"name": "add", "arguments": {' )
    assert release.text == 'Sure.'
    assert release.invocations == ( )
    release = reader.conclude( )
    assert release.invocations == ( )
    assert release.text == ''
    assert reader.truncations == ( 'add', )


def test_260_positions_and_ids( ):
    ''' Calls get distinct, deterministic ids from their position, which
        may start after the provider's own calls.
    '''
    text = '[add(a=1), add(a=1)]'
    first = textcalls.read_text_calls( text, [ 'add' ], position = 2 )
    again = textcalls.read_text_calls( text, [ 'add' ], position = 2 )
    identifiers = [ item.identifier for item in first.invocations ]
    assert identifiers == [ item.identifier for item in again.invocations ]
    assert len( set( identifiers ) ) == 2
    assert identifiers[ 0 ].startswith( 'call_2_' )


@pytest.mark.parametrize( 'text', [
    '{' * 200_000,
    '[' * 200_000,
    '[a(' * 50_000,
    '{"name": "add", "arguments": "' + 'x' * 2_000_000,
    '<tool_call>' * 50_000,
    '{"a": ' * 50_000,
    '[add(a=' + '[' * 100_000,
    ( '{' + '"x": 1, ' * 10 ) * 20_000,
    '`' * 100_000,
    '[TOOL_CALLS]' + 'n' * 100_000,
], ids = lambda text: repr( text[ : 12 ] ) )
def test_300_hostile_bounded( text ):
    ''' Hostile text is read in linear time, in bounded memory, whole and
        in small pieces, without error: no call is read from it.
    '''
    started = time.monotonic( )
    reading = textcalls.read_text_calls( text, [ 'add', 'a' ] )
    assert all( item.name in ( 'add', 'a' ) for item in reading.invocations )
    pieces = [ text[ start : start + 997 ] for start in range(
        0, len( text ), 997 ) ]
    streamed, invocations, _ = _stream( text, [ 'add', 'a' ], pieces )
    assert _summarize( invocations ) == _summarize( reading.invocations )
    assert streamed == reading.text
    assert time.monotonic( ) - started < 30 # does not hang


def get_weather( city: str ) -> str:
    ''' Returns weather in city. '''
    return f"Sunny in {city}."


def add( a: int, b: int ) -> int:
    ''' Adds two integers. '''
    return a + b


def _produce_processor( provider, text_calls = 'auto' ):
    processor = produce_processor( provider, text_calls = text_calls )
    processor.prepare_tools( [ invocables.produce_ensemble(
        'tools', [ get_weather, add ] ) ] )
    return processor


def _completion( content, stop = 'stop' ):
    return { 'choices': [ {
        'index': 0, 'finish_reason': stop,
        'message': { 'role': 'assistant', 'content': content } } ] }


def _chunks( pieces, stop = 'stop' ):
    chunks = [
        { 'choices': [ { 'index': 0, 'delta': { 'content': piece } } ] }
        for piece in pieces ]
    chunks.append( { 'choices': [ {
        'index': 0, 'delta': { }, 'finish_reason': stop } ] } )
    return chunks


_HERMES = (
    'Let me check. <tool_call>{"name": "get_weather", '
    '"arguments": {"city": "Lima"}}</tool_call>' )


def test_400_openai_whole( ):
    ''' The OpenAI Chat processor reads text calls of a completion only
        when asked; a complete call of a tool not prepared is read too
        (for the engine to answer as unknown), a pythonic one is not.
    '''
    assert produce_processor( 'openai' ).normalize_invocations(
        _completion( _HERMES ) ) == ( )
    processor = _produce_processor( 'openai' )
    invocations = processor.normalize_invocations( _completion( _HERMES ) )
    assert _summarize( invocations ) == [ ( 'get_weather', { 'city': 'Lima' } ) ]
    assert invocations[ 0 ].identifier_synthesized
    other = _HERMES.replace( 'get_weather', 'search' )
    assert _summarize( processor.normalize_invocations(
        _completion( other ) ) ) == [ ( 'search', { 'city': 'Lima' } ) ]
    assert processor.normalize_invocations(
        _completion( "[search(city='Lima')]" ) ) == ( )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        produce_processor( 'openai', text_calls = 'xml' )


def test_410_openai_stream( ):
    ''' Streamed, text calls come out of the accumulator; its assistant
        message holds the text beside them and the calls with their ids.
    '''
    processor = _produce_processor( 'openai', 'hermes' )
    accumulator = processor.produce_accumulator( )
    pieces = [ _HERMES[ start : start + 5 ] for start in range(
        0, len( _HERMES ), 5 ) ]
    invocations = [ ]
    for chunk in _chunks( pieces ):
        invocations.extend( accumulator.ingest( chunk ) )
    invocations.extend( accumulator.ingest( '[DONE]' ) )
    invocations.extend( accumulator.conclude( ) )
    assert _summarize( invocations ) == [ ( 'get_weather', { 'city': 'Lima' } ) ]
    message = accumulator.produce_message( )
    assert message[ 'content' ] == 'Let me check.'
    assert message[ 'tool_calls' ][ 0 ][ 'id' ] == invocations[ 0 ].identifier
    assert json.loads(
        message[ 'tool_calls' ][ 0 ][ 'function' ][ 'arguments' ] ) == {
        'city': 'Lima' }


def test_420_truncated( ):
    ''' A text call cut off by ``length`` raises truncation (whole) or
        interruption (streamed), naming it; nothing runs.
    '''
    processor = _produce_processor( 'openai' )
    text = '{"name": "add", "arguments": {"a": 1, "b"'
    with pytest.raises( exceptions.InvocationTruncation ) as caught:
        processor.normalize_invocations( _completion( text, 'length' ) )
    assert caught.value.names == ( 'add', )
    accumulator = processor.produce_accumulator( )
    for chunk in _chunks( [ text ], 'length' ):
        assert accumulator.ingest( chunk ) == ( )
    with pytest.raises( exceptions.InvocationInterruption ):
        accumulator.conclude( )


def test_430_ollama( ):
    ''' The Ollama processor reads text calls whole and streamed. '''
    processor = _produce_processor( 'ollama' )
    body = { 'message': { 'role': 'assistant', 'content': _HERMES },
             'done': True }
    invocations = processor.normalize_invocations( body )
    assert _summarize( invocations ) == [ ( 'get_weather', { 'city': 'Lima' } ) ]
    accumulator = processor.produce_accumulator( )
    streamed = [ ]
    for start in range( 0, len( _HERMES ), 7 ):
        streamed.extend( accumulator.ingest( { 'message': {
            'role': 'assistant', 'content': _HERMES[ start : start + 7 ] },
            'done': False } ) )
    streamed.extend( accumulator.ingest( {
        'message': { 'role': 'assistant', 'content': '' }, 'done': True,
        'done_reason': 'stop' } ) )
    streamed.extend( accumulator.conclude( ) )
    assert _summarize( streamed ) == _summarize( invocations )
    message = accumulator.produce_message( )
    assert message[ 'content' ] == 'Let me check.'
    assert 'id' not in message[ 'tool_calls' ][ 0 ]


def test_440_openai_responses( ):
    ''' The Responses processor reads text calls of output messages whole
        and of ``output_text`` deltas streamed, these at the end of the
        response.
    '''
    processor = _produce_processor( 'openai-responses', 'pythonic' )
    text = "Sure: [add(a=1, b=2)]"
    response = { 'output': [ { 'type': 'message', 'role': 'assistant',
        'content': [ { 'type': 'output_text', 'text': text } ] } ] }
    invocations = processor.normalize_invocations( response )
    assert _summarize( invocations ) == [ ( 'add', { 'a': 1, 'b': 2 } ) ]
    accumulator = processor.produce_accumulator( )
    streamed = [ ]
    for piece in ( text[ : 9 ], text[ 9 : 15 ], text[ 15 : ] ):
        streamed.extend( accumulator.ingest( {
            'type': 'response.output_text.delta', 'delta': piece } ) )
    assert streamed == [ ] # held until the end of the response
    streamed.extend( accumulator.ingest( {
        'type': 'response.completed', 'response': { } } ) )
    assert _summarize( streamed ) == _summarize( invocations )
    assert accumulator.conclude( ) == ( )
    assert len( streamed ) == 1


@pytest.mark.parametrize(
    'reply', _QWEN_EXPECTED[ 'replies' ], ids = lambda reply: str(
        reply[ 'reply' ] ) )
def test_450_qwen_through_openai( reply ):
    ''' Each real Qwen reply, as the Chat Completion llama.cpp returned,
        gives its calls through the OpenAI processor; replies which stopped
        on ``length`` with a call cut off raise truncation.
    '''
    source = _QWEN[ 'replies' ][ reply[ 'reply' ] ]
    processor = produce_processor( 'openai', text_calls = 'auto' )
    processor.text_calls.record_names( source[ 'offered_tools' ] )
    completion = _completion( source[ 'content' ], source[ 'finish_reason' ] )
    if reply[ 'truncations' ]:
        with pytest.raises( exceptions.InvocationTruncation ):
            processor.normalize_invocations( completion )
        return
    invocations = processor.normalize_invocations( completion )
    assert [ item.name for item in invocations ] == [
        call[ 'name' ] for call in reply[ 'calls' ] ]


@pytest.mark.asyncio
async def test_460_round_trip( ):
    ''' Text calls run; an invalid one gives an error result the model can
        act on, and is not run.
    '''
    processor = produce_processor( 'openai', text_calls = 'auto' )
    ensembles = [ invocables.produce_ensemble( 'tools', [ get_weather, add ] ) ]
    processor.prepare_tools( ensembles )
    content = (
        '{"name": "add", "arguments": {"a": 2, "b": 3}}\n'
        '{{"name": "get_weather", "arguments": {"city": "Lima"}}}' )
    invocations = processor.normalize_invocations( _completion( content ) )
    async with ensembles[ 0 ]:
        results = await processor.execute_invocations(
            invocations, ensembles )
    messages = processor.nativize_results( results )
    assert messages[ 0 ][ 'content' ] == '5'
    assert messages[ 1 ][ 'content' ].startswith( 'Error:' )
    assert 'not valid JSON' in messages[ 1 ][ 'content' ]


@pytest.mark.asyncio
async def test_470_conversation_loop( ):
    ''' The OpenAI conversation loop with a processor reading text calls
        runs a real Qwen reply's call (bare JSON in the text, as llama.cpp
        returned it) and sends its result back with the call's id.
    '''
    content = _QWEN[ 'replies' ][ 12 ][ 'content' ]
    ensemble = invocables.produce_ensemble( 'tools', [ get_weather, add ] )
    with scripted.ScriptedServer( [
        scripted.openai_text( content ), scripted.openai_text( 'Sunny.' ),
    ] ) as server:
        client = openai.AsyncOpenAI(
            api_key = 'testing', base_url = f"{server.url}/v1" )
        conversation = conversations.produce_conversation(
            'openai', client, [ ensemble ], model = 'qwen2.5-coder',
            processor = produce_processor( 'openai', text_calls = 'auto' ) )
        async with ensemble:
            transcript = await conversation.converse( 'Weather in Paris?' )
        await client.close( )
    assert transcript.text == 'Sunny.'
    messages = transcript.messages
    assert [ message[ 'role' ] for message in messages ] == [
        'user', 'assistant', 'tool', 'assistant' ]
    call = messages[ 1 ][ 'tool_calls' ][ 0 ]
    assert call[ 'function' ][ 'name' ] == 'get_weather'
    assert messages[ 2 ][ 'tool_call_id' ] == call[ 'id' ]
    assert messages[ 2 ][ 'content' ] == 'Sunny in Paris.'
