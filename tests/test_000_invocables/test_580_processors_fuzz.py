# SPDX-License-Identifier: Apache-2.0

''' Fuzzing of every processor's whole and streamed parsing.

    Three properties, for each of the six processors:

    * Generated replies (a list of model calls, rendered as the provider's
      stream with random fragmentation, interleaving, missing optional
      fields and harmless unknown events, and as its whole reply) give each
      call exactly once, with exactly its arguments (or marked invalid when
      they are not an object), and the same calls whole and streamed.
    * Mutated real captures (``tests/data/providers``: events dropped,
      repeated, swapped, fields removed or replaced by hostile values) give
      only the package's own exceptions, well-formed canisters, and no
      provider id twice (for processors keyed by index).
    * Arbitrary JSON bodies and events give only the package's own
      exceptions.

    A few dozen cases each in the suite; set ``INVOCABLES_FUZZ_EXAMPLES``
    (for example to 10000) to run that many cases per property and
    processor.
'''


import copy
import json
import os
import re

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import invocables

from invocables import InvocationCanister, exceptions
from invocables.processors import produce_processor

from . import replay


PROVIDERS = (
    'anthropic', 'cohere', 'gemini', 'ollama', 'openai', 'openai-responses' )
EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '0' ) ) or 20

_FOLDERS = {
    'anthropic': 'anthropic', 'cohere': 'cohere', 'gemini': 'gemini',
    'ollama': 'ollama', 'openai': 'openai_chat',
    'openai-responses': 'openai_responses' }
_INDEXED = frozenset( (
    'anthropic', 'cohere', 'openai', 'openai-responses' ) )
# Many cases take long: the suite's timeout (300 s) grows with their number.
_timeout = pytest.mark.timeout( max( 300, EXAMPLES // 4 ) )
_settings = settings(
    max_examples = EXAMPLES, deadline = None, database = None,
    suppress_health_check = list( HealthCheck ) )


# Model of a reply: the calls a model made, and how their arguments go.

@dataclass
class _Call:
    ''' One call of the model: its arguments as an object or as text. '''

    name: str
    identifier: str | None
    arguments: Any          # object (dict, or another JSON value) or text
    textual: bool

    def expect( self ) -> tuple[ Any, bool ]:
        ''' Returns arguments a parser must give, and whether invalid. '''
        if not self.textual:
            if isinstance( self.arguments, dict ): return self.arguments, False
            return { }, True
        text = self.arguments
        if not text.strip( ): return { }, False
        try: value = json.loads( text )
        except ValueError: return { }, True
        if value is None: return { }, False
        if isinstance( value, dict ): return value, False
        return { }, True


_leaves = (
    st.none( ) | st.booleans( ) | st.integers( -2 ** 62, 2 ** 62 )
    | st.floats( allow_nan = False, allow_infinity = False )
    | st.text( max_size = 12 ) )
_keys = st.text( max_size = 6 ) | st.sampled_from( [ 'city', 'a', 'b' ] )
_objects = st.dictionaries(
    _keys, st.recursive(
        _leaves,
        lambda children: (
            st.lists( children, max_size = 3 )
            | st.dictionaries( _keys, children, max_size = 3 ) ),
        max_leaves = 8 ),
    max_size = 4 )
_names = st.sampled_from( [ 'get_weather', 'f', 'g', 'snapshot', 'x-y_z' ] )


@st.composite
def _texts( draw ):
    ''' Argument text: an object's JSON, another JSON value, or broken. '''
    value = draw( _objects )
    kind = draw( st.sampled_from( [
        'object', 'object', 'object', 'spaced', 'empty', 'null', 'array',
        'number', 'string', 'broken' ] ) )
    match kind:
        case 'object': return json.dumps( value )
        case 'spaced':
            return json.dumps(
                value, indent = 1, ensure_ascii = draw( st.booleans( ) ) )
        case 'empty': return draw( st.sampled_from( [ '', ' ', '\n' ] ) )
        case 'null': return 'null'
        case 'array': return json.dumps( [ value ] )
        case 'number': return '3'
        case 'string': return '"text"'
        case _:
            text = json.dumps( value )
            return text[ : draw( st.integers( 0, max( 0, len( text ) - 1 ) ) ) ]


@st.composite
def _calls( draw, textual = True, objects = True, identifiers = True ):
    ''' Calls of a reply (one to four), ids present or not. '''
    count = draw( st.integers( 1, 4 ) )
    calls: list[ _Call ] = [ ]
    for ordinal in range( count ):
        kinds = [ kind for kind, usable in (
            ( True, textual ), ( False, objects ) ) if usable ]
        is_text = draw( st.sampled_from( kinds ) )
        arguments = draw( _texts( ) if is_text else _objects )
        present = identifiers and draw( st.booleans( ) )
        calls.append( _Call(
            name = draw( _names ),
            identifier = f"id_{ordinal}" if present else None,
            arguments = arguments, textual = is_text ) )
    return calls


def _split( draw, text ):
    ''' Splits text into fragments at random (some empty). '''
    if not text: return [ ]
    cuts = sorted( set( draw( st.lists(
        st.integers( 0, len( text ) ), max_size = 5 ) ) ) )
    return [ text[ a : b ] for a, b in pairwise( [ 0, *cuts, len( text ) ] ) ]


def _patches( draw, value ):
    ''' Splits object into patches whose merge is the object. '''
    keys = list( value )
    if not keys: return [ { } ]
    cuts = sorted( set( draw( st.lists(
        st.integers( 1, len( keys ) ), max_size = 3 ) ) ) )
    return [
        { key: value[ key ] for key in keys[ a : b ] }
        for a, b in pairwise( [ 0, *cuts, len( keys ) ] ) if b > a ]


def _interleave( draw, sequences ):
    ''' Merges sequences, keeping each one's order and their first events
        in order.
    '''
    queues = [ list( sequence ) for sequence in sequences if sequence ]
    started = 0
    merged = [ ]
    while queues:
        choices = list( range( min( started + 1, len( queues ) ) ) )
        index = draw( st.sampled_from( choices ) )
        merged.append( queues[ index ].pop( 0 ) )
        if index == started: started += 1
        if not queues[ index ]:
            queues.pop( index )
            started -= 1
    return merged


def _sprinkle( draw, events, noises ):
    ''' Inserts harmless events of unknown or unrelated types. '''
    events = list( events )
    for _ in range( draw( st.integers( 0, 3 ) ) ):
        position = draw( st.integers( 0, len( events ) ) )
        events.insert( position, draw( st.sampled_from( noises ) ) )
    return events


# Anthropic Messages.

_ANTHROPIC_NOISES = (
    { 'type': 'ping' },
    { 'type': 'brand_new_event', 'payload': [ 1 ] },
    { 'type': 'message_delta', 'delta': { }, 'usage': { 'output_tokens': 1 } },
)


def _render_anthropic( draw, calls ):
    events: list[ Any ] = [ { 'type': 'message_start', 'message': {
        'id': 'msg', 'type': 'message', 'role': 'assistant', 'content': [ ],
        'model': 'claude', 'stop_reason': None } } ]
    blocks: list[ Any ] = [ ]
    index = 0
    if draw( st.booleans( ) ):
        events.append( { 'type': 'content_block_start', 'index': 0,
                         'content_block': { 'type': 'text', 'text': '' } } )
        events.extend(
            { 'type': 'content_block_delta', 'index': 0,
              'delta': { 'type': 'text_delta', 'text': piece } }
            for piece in [ 'Let ', 'me see.' ] )
        events.append( { 'type': 'content_block_stop', 'index': 0 } )
        blocks.append( { 'type': 'text', 'text': 'Let me see.' } )
        index = 1
    for call in calls:
        block: dict[ str, Any ] = { 'type': 'tool_use', 'name': call.name }
        if call.identifier is not None: block[ 'id' ] = call.identifier
        if call.textual:
            block[ 'input' ] = { }
            fragments = _split( draw, call.arguments )
        else:
            block[ 'input' ] = call.arguments
            fragments = [ ]
        events.append( {
            'type': 'content_block_start', 'index': index,
            'content_block': block } )
        events.extend(
            { 'type': 'content_block_delta', 'index': index, 'delta': {
                'type': 'input_json_delta', 'partial_json': fragment } }
            for fragment in fragments )
        events.append( { 'type': 'content_block_stop', 'index': index } )
        blocks.append( { **block, 'input': _decode_loose( call.arguments )
                         if call.textual else call.arguments } )
        index += draw( st.integers( 1, 3 ) )
    events.append( { 'type': 'message_delta',
                     'delta': { 'stop_reason': 'tool_use' } } )
    events.append( { 'type': 'message_stop' } )
    whole = {
        'id': 'msg', 'type': 'message', 'role': 'assistant',
        'content': blocks, 'stop_reason': 'tool_use' }
    return _sprinkle( draw, events, _ANTHROPIC_NOISES ), whole


def _decode_loose( text ):
    ''' Returns JSON value of text, or the text if it is not JSON. '''
    if not text.strip( ): return None
    try: return json.loads( text )
    except ValueError: return text


# OpenAI Chat Completions.

_OPENAI_NOISES = (
    { 'choices': [ ] },
    { 'choices': [ { 'index': 0, 'delta': { 'role': 'assistant' } } ] },
    { 'choices': [ { 'index': 0, 'delta': { 'content': 'Hmm.' } } ] },
    { 'choices': [ { 'index': 1, 'delta': { 'tool_calls': [ {
        'index': 0, 'id': 'other', 'function': {
            'name': 'other', 'arguments': '{}' } } ] } } ] },
    { 'choices': [ { 'index': 0, 'delta': {
        'reasoning_content': 'thinking' } } ], 'usage': None },
)


def _render_openai( draw, calls ):
    index = draw( st.integers( 0, 2 ) )
    shared = all( call.identifier for call in calls ) and draw(
        st.booleans( ) )
    sequences = [ ]
    for call in calls:
        sequences.append( _render_openai_call( draw, call, index ) )
        if not shared: index += draw( st.integers( 1, 2 ) )
    if shared: deltas = [ delta for sequence in sequences for delta in sequence ]
    else: deltas = _interleave( draw, sequences )
    chunks: list[ Any ] = [
        { 'choices': [ { 'index': 0, 'delta': { 'tool_calls': [ delta ] } } ] }
        for delta in deltas ]
    chunks.append( { 'choices': [ {
        'index': 0, 'delta': { }, 'finish_reason': 'tool_calls' } ] } )
    if draw( st.booleans( ) ):
        chunks.append( { 'choices': [ ], 'usage': { 'total_tokens': 1 } } )
    chunks.append( '[DONE]' )
    chunks = [
        json.dumps( chunk ) if isinstance( chunk, dict )
        and draw( st.booleans( ) ) else chunk
        for chunk in _sprinkle( draw, chunks, _OPENAI_NOISES ) ]
    whole = { 'choices': [
        { 'index': 1, 'message': { 'role': 'assistant', 'tool_calls': [ {
            'id': 'other', 'type': 'function', 'function': {
                'name': 'other', 'arguments': '{}' } } ] },
          'finish_reason': 'tool_calls' },
        { 'index': 0, 'message': { 'role': 'assistant', 'content': None,
                                   'tool_calls': [
            _render_openai_whole( call ) for call in calls ] },
          'finish_reason': 'tool_calls' } ] }
    return chunks, whole


def _render_openai_call( draw, call, index ):
    opening: dict[ str, Any ] = {
        'index': index, 'function': { 'name': call.name } }
    if call.identifier is not None:
        opening[ 'id' ] = call.identifier
        opening[ 'type' ] = 'function'
    repeat = call.identifier is not None and draw( st.booleans( ) )
    if call.textual: pieces: list[ Any ] = _split( draw, call.arguments )
    else: pieces = _patches( draw, call.arguments )
    first = draw( st.sampled_from( [ 'absent', 'empty', 'null', 'piece' ] ) )
    if first == 'piece' and pieces:
        opening[ 'function' ][ 'arguments' ] = pieces.pop( 0 )
    elif first == 'empty': opening[ 'function' ][ 'arguments' ] = ''
    elif first == 'null': opening[ 'function' ][ 'arguments' ] = None
    deltas = [ opening ]
    for piece in pieces:
        delta: dict[ str, Any ] = {
            'index': index, 'function': { 'arguments': piece } }
        if repeat: delta[ 'id' ] = call.identifier
        deltas.append( delta )
    return deltas


def _render_openai_whole( call ):
    native: dict[ str, Any ] = { 'type': 'function', 'function': {
        'name': call.name, 'arguments': call.arguments } }
    if call.identifier is not None: native[ 'id' ] = call.identifier
    return native


# OpenAI Responses.

_RESPONSES_NOISES = (
    { 'type': 'response.created', 'response': { 'id': 'r' } },
    { 'type': 'response.in_progress' },
    { 'type': 'response.output_text.delta', 'output_index': 0,
      'delta': 'Hi' },
    { 'type': 'response.brand_new.event', 'sequence_number': 9 },
)


def _render_responses( draw, calls ):
    sequences = [ ]
    items = [ ]
    index = draw( st.integers( 0, 2 ) )
    for ordinal, call in enumerate( calls ):
        tag = f"fc_{ordinal}" if draw( st.booleans( ) ) else None
        sequences.append( _render_responses_call( draw, call, index, tag ) )
        item: dict[ str, Any ] = {
            'type': 'function_call', 'name': call.name,
            'arguments': call.arguments, 'status': 'completed' }
        if tag is not None: item[ 'id' ] = tag
        if call.identifier is not None: item[ 'call_id' ] = call.identifier
        items.append( item )
        index += draw( st.integers( 1, 2 ) )
    events = _interleave( draw, sequences )
    events.append( { 'type': 'response.completed', 'response': {
        'id': 'r', 'output': items } } )
    whole = { 'id': 'r', 'object': 'response', 'output': items }
    return _sprinkle( draw, events, _RESPONSES_NOISES ), whole


def _render_responses_call( draw, call, index, tag ):
    item: dict[ str, Any ] = {
        'type': 'function_call', 'name': call.name, 'arguments': '',
        'status': 'in_progress' }
    if tag is not None: item[ 'id' ] = tag
    if call.identifier is not None: item[ 'call_id' ] = call.identifier
    events: list[ Any ] = [ ]
    ending = draw( st.sampled_from( [ 'both', 'arguments', 'item' ] ) )
    if ending == 'item' and draw( st.booleans( ) ): added = False
    else: added = True
    if added:
        events.append( {
            'type': 'response.output_item.added', 'output_index': index,
            'item': item } )
        for fragment in _split( draw, call.arguments ):
            delta = {
                'type': 'response.function_call_arguments.delta',
                'output_index': index, 'delta': fragment }
            if tag is not None: delta[ 'item_id' ] = tag
            events.append( delta )
    if ending in ( 'both', 'arguments' ):
        done = {
            'type': 'response.function_call_arguments.done',
            'output_index': index, 'arguments': call.arguments }
        if tag is not None and draw( st.booleans( ) ): done[ 'item_id' ] = tag
        events.append( done )
    if ending in ( 'both', 'item' ):
        final = dict(
            item, arguments = call.arguments, status = 'completed' )
        if draw( st.booleans( ) ): final.pop( 'id', None )
        events.append( {
            'type': 'response.output_item.done', 'output_index': index,
            'item': final } )
    return events


# Cohere v2.

_COHERE_NOISES = (
    { 'type': 'message-start', 'delta': { 'message': { 'role': 'assistant' } } },
    { 'type': 'tool-plan-delta', 'delta': { 'message': {
        'tool_plan': 'I will.' } } },
    { 'type': 'citation-start', 'index': 0 },
    { 'type': 'brand-new-event' },
)


def _render_cohere( draw, calls ):
    sequences = [ ]
    for index, call in enumerate( calls ):
        if call.textual: pieces: list[ Any ] = _split( draw, call.arguments )
        else: pieces = _patches( draw, call.arguments )
        first = pieces.pop( 0 ) if pieces and draw( st.booleans( ) ) else ''
        payload: dict[ str, Any ] = {
            'type': 'function',
            'function': { 'name': call.name, 'arguments': first } }
        if call.identifier is not None: payload[ 'id' ] = call.identifier
        sequence: list[ Any ] = [ {
            'type': 'tool-call-start', 'index': index,
            'delta': { 'message': { 'tool_calls': payload } } } ]
        sequence.extend(
            { 'type': 'tool-call-delta', 'index': index, 'delta': {
                'message': { 'tool_calls': {
                    'function': { 'arguments': piece } } } } }
            for piece in pieces )
        sequence.append( { 'type': 'tool-call-end', 'index': index } )
        sequences.append( sequence )
    events = _interleave( draw, sequences )
    events.append( { 'type': 'message-end', 'delta': {
        'finish_reason': 'TOOL_CALL' } } )
    events.append( '[DONE]' )
    whole = { 'id': 'c', 'finish_reason': 'TOOL_CALL', 'message': {
        'role': 'assistant', 'tool_plan': 'I will.', 'tool_calls': [
            _render_openai_whole( call ) for call in calls ] } }
    return _sprinkle( draw, events, _COHERE_NOISES ), whole


# Gemini.

_GEMINI_NOISES = (
    { 'candidates': [ { 'content': { 'role': 'model',
                                     'parts': [ { 'text': 'Hmm.' } ] } } ] },
    { 'usageMetadata': { 'totalTokenCount': 3 } },
    { 'candidates': [ ], 'modelVersion': 'gemini' },
)
_PATH_NAME = re.compile( r'[A-Za-z_][A-Za-z0-9_]*' )


def _render_gemini( draw, calls ):
    chunks: list[ Any ] = [ ]
    parts = [ ]
    for call in calls:
        native: dict[ str, Any ] = { 'name': call.name }
        if call.identifier is not None: native[ 'id' ] = call.identifier
        native[ 'args' ] = call.arguments
        parts.append( { 'functionCall': native } )
        leaves = _enumerate_leaves( call.arguments )
        if leaves is not None and draw( st.booleans( ) ):
            chunks.extend( _render_gemini_partial( draw, native, leaves ) )
        else: chunks.append( _gemini_chunk( [ { 'functionCall': native } ] ) )
    chunks.append( { 'candidates': [ {
        'content': { 'role': 'model', 'parts': [ { 'text': '' } ] },
        'finishReason': 'STOP' } ] } )
    chunks = _sprinkle( draw, chunks[ : -1 ], _GEMINI_NOISES ) + chunks[ -1 : ]
    whole = { 'candidates': [ {
        'content': { 'role': 'model', 'parts': parts },
        'finishReason': 'STOP' } ] }
    return chunks, whole


def _gemini_chunk( parts ):
    return { 'candidates': [ {
        'content': { 'role': 'model', 'parts': parts } } ] }


def _render_gemini_partial( draw, native, leaves ):
    opening = { 'name': native[ 'name' ], 'willContinue': True }
    if 'id' in native: opening[ 'id' ] = native[ 'id' ]
    chunks = [ _gemini_chunk( [ { 'functionCall': opening } ] ) ]
    for path, value in leaves:
        partials: list[ dict[ str, Any ] ] = [ ]
        if isinstance( value, str ):
            pieces = _split( draw, value ) or [ '' ]
            for position, piece in enumerate( pieces ):
                partial = { 'jsonPath': path, 'stringValue': piece }
                if position < len( pieces ) - 1:
                    partial[ 'willContinue' ] = True
                partials.append( partial )
        elif isinstance( value, bool ):
            partials.append( { 'jsonPath': path, 'boolValue': value } )
        elif value is None:
            partials.append( { 'jsonPath': path, 'nullValue': 'NULL_VALUE' } )
        else: partials.append( { 'jsonPath': path, 'numberValue': value } )
        chunks.extend(
            _gemini_chunk( [ { 'functionCall': {
                'partialArgs': [ partial ], 'willContinue': True } } ] )
            for partial in partials )
    chunks.append( _gemini_chunk( [ { 'functionCall': { } } ] ) )
    return chunks


def _enumerate_leaves( value, path = '$' ):
    ''' Returns ( JSON path, leaf ) pairs of object; ``None`` if it has
        empty containers or names no path can carry.
    '''
    if isinstance( value, dict ):
        if not value: return None
        leaves = [ ]
        for key, member in value.items( ):
            if _PATH_NAME.fullmatch( key ): step = f".{key}"
            elif "'" not in key: step = f"['{key}']"
            else: return None
            found = _enumerate_leaves( member, path + step )
            if found is None: return None
            leaves.extend( found )
        return leaves
    if isinstance( value, list ):
        if not value: return None
        leaves = [ ]
        for index, member in enumerate( value ):
            found = _enumerate_leaves( member, f"{path}[{index}]" )
            if found is None: return None
            leaves.extend( found )
        return leaves
    if path == '$': return None
    return [ ( path, value ) ]


# Ollama.

_OLLAMA_NOISES = (
    { 'model': 'qwen3', 'message': { 'role': 'assistant', 'content': 'Hi' },
      'done': False },
    { 'model': 'qwen3', 'message': { 'role': 'assistant', 'content': '',
                                     'thinking': 'hmm' }, 'done': False },
)


def _render_ollama( draw, calls ):
    natives = [ ]
    for call in calls:
        native: dict[ str, Any ] = { 'function': {
            'name': call.name, 'arguments': call.arguments } }
        if call.identifier is not None: native[ 'id' ] = call.identifier
        natives.append( native )
    groups = _split_list( draw, natives )
    chunks: list[ Any ] = [
        { 'model': 'qwen3', 'message': {
            'role': 'assistant', 'content': '', 'tool_calls': group },
          'done': False }
        for group in groups ]
    chunks = _sprinkle( draw, chunks, _OLLAMA_NOISES )
    chunks.append( { 'model': 'qwen3', 'message': {
        'role': 'assistant', 'content': '' }, 'done': True,
        'done_reason': 'stop' } )
    chunks = [
        json.dumps( chunk ) if draw( st.booleans( ) ) else chunk
        for chunk in chunks ]
    whole = { 'model': 'qwen3', 'message': {
        'role': 'assistant', 'content': '', 'tool_calls': natives },
        'done': True }
    return chunks, whole


def _split_list( draw, items ):
    cuts = sorted( set( draw( st.lists(
        st.integers( 1, len( items ) ), max_size = 3 ) ) ) )
    return [
        items[ a : b ] for a, b in pairwise( [ 0, *cuts, len( items ) ] )
        if b > a ]


_RENDERERS = {
    'anthropic': ( _render_anthropic, { } ),
    'cohere': ( _render_cohere, { } ),
    'gemini': ( _render_gemini, { 'textual': False } ),
    'ollama': ( _render_ollama, { } ),
    'openai': ( _render_openai, { } ),
    'openai-responses': ( _render_responses, { 'objects': False } ),
}


def _summarize( invocations, calls ):
    ''' Returns ( id or 'synthesized', name, arguments, invalid ) each. '''
    given = { call.identifier for call in calls if call.identifier }
    summary = [ ]
    for invocation in invocations:
        assert isinstance( invocation, InvocationCanister )
        assert invocation.identifier
        identifier = (
            invocation.identifier if invocation.identifier in given
            else 'synthesized' )
        invalid = not invocables.__.is_absent( invocation.invalidity )
        summary.append( (
            identifier, invocation.name, invocation.arguments, invalid ) )
    return summary


def _expect( calls ):
    summary = [ ]
    for call in calls:
        arguments, invalid = call.expect( )
        summary.append( (
            call.identifier or 'synthesized', call.name, arguments,
            invalid ) )
    return summary


def _key( entry ):
    return json.dumps( entry, sort_keys = True, default = repr )


@_timeout
@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_100_generated_replies( provider ):
    ''' Generated replies give each call once, with exactly its arguments,
        and the same calls whole and streamed.
    '''
    processor = produce_processor( provider )
    render, options = _RENDERERS[ provider ]

    @_settings
    @given( data = st.data( ) )
    def check( data ):
        calls = data.draw( _calls( **options ) )
        events, whole = render( data.draw, calls )
        accumulator = processor.produce_accumulator( )
        streamed = [ ]
        for event in events: streamed.extend( accumulator.ingest( event ) )
        streamed.extend( accumulator.conclude( ) )
        normalized = processor.normalize_invocations( whole )
        expected = sorted( _expect( calls ), key = _key )
        assert sorted( _summarize( streamed, calls ), key = _key ) == expected
        assert sorted(
            _summarize( normalized, calls ), key = _key ) == expected
        for invocations in ( streamed, normalized ):
            identifiers = [ item.identifier for item in invocations ]
            assert len( set( identifiers ) ) == len( identifiers )
        emitted = [ e.invocation for e in accumulator.survey_invocations( ) ]
        assert emitted == streamed

    check( )


_captures = {
    provider: [
        name for name in json.loads( (
            replay.access_fixtures_location( ) / 'expected.json'
        ).read_text( encoding = 'utf-8' ) )
        if name.startswith( _FOLDERS[ provider ] + '/' ) ]
    for provider in PROVIDERS }


def _read_capture( name ):
    ''' Returns events (streams) or one body (whole replies) of capture. '''
    body = ( replay.access_fixtures_location( ) / name ).read_bytes( )
    events = [ event.decode( ) for event in replay.parse_events( body ) ]
    if events: return events
    return [ json.loads( body ) ]


_HOSTILE = (
    None, '', 0, -1, 1.5, True, 'x', '[1]', '3', '{', '[DONE]', { }, [ ],
    10 ** 30, '$.a[1000000000]', { 'a': None }, [ None ], 'x' * 5000,
    { 'type': 'tool_use' }, { 'jsonPath': '$.a[99999999]', 'numberValue': 1 },
)


def _mutate_value( draw, value, depth = 0 ):
    ''' Returns copy of JSON value with one node removed or replaced. '''
    if isinstance( value, dict ) and value and depth < 8:
        key = draw( st.sampled_from( sorted( value ) ) )
        action = draw( st.sampled_from( [
            'descend', 'descend', 'descend', 'delete', 'replace' ] ) )
        copied = dict( value )
        if action == 'delete': del copied[ key ]
        elif action == 'replace': copied[ key ] = draw(
            st.sampled_from( _HOSTILE ) )
        else: copied[ key ] = _mutate_value( draw, value[ key ], depth + 1 )
        return copied
    if isinstance( value, list ) and value and depth < 8:
        index = draw( st.integers( 0, len( value ) - 1 ) )
        copied = list( value )
        copied[ index ] = _mutate_value( draw, value[ index ], depth + 1 )
        return copied
    return draw( st.sampled_from( _HOSTILE ) )


def _mutate_events( draw, events ):
    events = list( events )
    for _ in range( draw( st.integers( 1, 4 ) ) ):
        if not events: break
        action = draw( st.sampled_from( [
            'drop', 'repeat', 'swap', 'mutate', 'mutate', 'cut' ] ) )
        index = draw( st.integers( 0, len( events ) - 1 ) )
        match action:
            case 'drop': events.pop( index )
            case 'repeat':
                events.insert( draw( st.integers( index, len( events ) ) ),
                               copy.deepcopy( events[ index ] ) )
            case 'swap':
                other = draw( st.integers( 0, len( events ) - 1 ) )
                events[ index ], events[ other ] = (
                    events[ other ], events[ index ] )
            case 'mutate':
                events[ index ] = _mutate_value( draw, events[ index ] )
            case _: events = events[ : index + 1 ]
    return events


def _check_canisters( invocations ):
    assert isinstance( invocations, tuple )
    for invocation in invocations:
        assert isinstance( invocation, InvocationCanister )
        assert isinstance( invocation.identifier, str )
        assert invocation.identifier
        assert isinstance( invocation.name, str )
        assert isinstance( invocation.arguments, dict )


@_timeout
@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_200_mutated_captures( provider ):
    ''' Mutated real captures give the package's errors or well-formed
        canisters, never a provider id twice.
    '''
    processor = produce_processor( provider )
    captures = { name: _read_capture( name ) for name in _captures[ provider ] }

    @_settings
    @given( data = st.data( ) )
    def check( data ):
        name = data.draw( st.sampled_from( sorted( captures ) ) )
        events = _mutate_events( data.draw, captures[ name ] )
        emitted = [ ]
        if not name.endswith( '.sse' ):
            for body in events:
                try: emitted.extend( processor.normalize_invocations( body ) )
                except exceptions.Omnierror: pass
            _check_canisters( tuple( emitted ) )
            return
        accumulator = processor.produce_accumulator( )
        try:
            for event in events:
                invocations = accumulator.ingest( event )
                _check_canisters( invocations )
                emitted.extend( invocations )
                accumulator.survey_partials( )
        except exceptions.Omnierror: pass
        try: emitted.extend( accumulator.conclude( ) )
        except exceptions.Omnierror: pass
        _check_canisters( tuple( emitted ) )
        try: accumulator.produce_message( )
        except exceptions.ProviderNoSupport: pass
        if provider in _INDEXED:
            identifiers = [ item.identifier for item in emitted ]
            assert len( set( identifiers ) ) == len( identifiers )

    check( )


@_timeout
@pytest.mark.parametrize( 'provider', PROVIDERS )
def test_300_arbitrary_input( provider ):
    ''' Arbitrary JSON bodies and events give only the package's errors. '''
    processor = produce_processor( provider )
    values = replay.produce_json_strategy( ) | st.sampled_from( _HOSTILE )

    @_settings
    @given( body = values, events = st.lists( values, max_size = 12 ) )
    def check( body, events ):
        try: _check_canisters( processor.normalize_invocations( body ) )
        except exceptions.Omnierror: pass
        accumulator = processor.produce_accumulator( )
        for event in events:
            try: _check_canisters( accumulator.ingest( event ) )
            except exceptions.Omnierror: pass
        try: _check_canisters( accumulator.conclude( ) )
        except exceptions.Omnierror: pass
        accumulator.survey_partials( )

    check( )
