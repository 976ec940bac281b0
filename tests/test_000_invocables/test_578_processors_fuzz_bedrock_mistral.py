# SPDX-License-Identifier: Apache-2.0

''' Fuzzing of the Bedrock and Mistral processors, whole and streamed.

    Three properties for each, at the size of ``test_580``:

    * Generated replies (calls with arbitrary JSON arguments, sent whole or
      as randomly cut text fragments, with ids or without) give each call
      exactly once, with exactly its arguments, whole and streamed alike.
    * Mutated real captures (events dropped, repeated, shuffled) and
      arbitrary event sequences give only the package's own exceptions and
      well-formed canisters.
    * Arbitrary JSON bodies give only the package's own exceptions.

    A few dozen cases each in the suite; set ``INVOCABLES_FUZZ_EXAMPLES``
    (for example to 10000) to run that many cases per property and
    processor.
'''


import json
import os

import botocore.eventstream
import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invocables.processors import produce_processor

from . import replay


EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '0' ) ) or 20
PROVIDERS = ( 'bedrock', 'mistral' )

_LOCATION = replay.access_fixtures_location( )
_timeout = pytest.mark.timeout( max( 300, EXAMPLES // 4 ) )
_settings = settings(
    max_examples = EXAMPLES, deadline = None, database = None,
    suppress_health_check = list( HealthCheck ) )

_values = st.recursive(
    st.none( ) | st.booleans( ) | st.integers( - 10 ** 9, 10 ** 9 )
    | st.floats( allow_nan = False, allow_infinity = False )
    | st.text( max_size = 10 ),
    lambda inner: st.lists( inner, max_size = 3 )
    | st.dictionaries( st.text( max_size = 5 ), inner, max_size = 3 ),
    max_leaves = 10 )
_calls = st.lists(
    st.tuples(
        st.from_regex( r'[a-z_]{1,12}', fullmatch = True ),
        st.dictionaries( st.text( max_size = 6 ), _values, max_size = 4 ),
        st.booleans( ),
    ),
    min_size = 1, max_size = 4 )


def _cut( text, cuts ):
    points = sorted( { cut % ( len( text ) + 1 ) for cut in cuts } )
    pieces, start = [ ], 0
    for point in points:
        pieces.append( text[ start : point ] )
        start = point
    pieces.append( text[ start : ] )
    return pieces


def _render_bedrock( calls, cuts ):
    ''' Returns whole response and stream events of calls. '''
    content = [ { 'text': 'Sure.' } ]
    events = [
        { 'messageStart': { 'role': 'assistant' } },
        { 'contentBlockDelta': {
            'contentBlockIndex': 0, 'delta': { 'text': 'Sure.' } } },
        { 'contentBlockStop': { 'contentBlockIndex': 0 } },
    ]
    for index, ( name, arguments, _ ) in enumerate( calls, start = 1 ):
        identifier = f"tooluse_{index}"
        content.append( { 'toolUse': {
            'toolUseId': identifier, 'name': name, 'input': arguments } } )
        events.append( { 'contentBlockStart': {
            'contentBlockIndex': index,
            'start': { 'toolUse': {
                'toolUseId': identifier, 'name': name } } } } )
        events.extend(
            { 'contentBlockDelta': {
                'contentBlockIndex': index,
                'delta': { 'toolUse': { 'input': piece } } } }
            for piece in _cut( json.dumps( arguments ), cuts ) )
        events.append( { 'contentBlockStop': { 'contentBlockIndex': index } } )
    events.append( { 'messageStop': { 'stopReason': 'tool_use' } } )
    whole = {
        'output': { 'message': { 'role': 'assistant', 'content': content } },
        'stopReason': 'tool_use' }
    return whole, events


def _render_mistral( calls, cuts ):
    ''' Returns whole response and stream chunks of calls. '''
    tool_calls, chunks = [ ], [ ]
    for index, ( name, arguments, identified ) in enumerate( calls ):
        call = { 'type': 'function', 'index': index, 'function': {
            'name': name, 'arguments': json.dumps( arguments ) } }
        if identified: call[ 'id' ] = f"abcd{index:05d}"
        tool_calls.append( call )
        head = { **call, 'function': { 'name': name, 'arguments': '' } }
        chunks.append( { 'choices': [ {
            'index': 0, 'delta': { 'tool_calls': [ head ] } } ] } )
        chunks.extend(
            { 'choices': [ { 'index': 0, 'delta': { 'tool_calls': [ {
                'index': index, 'function': { 'arguments': piece } } ] } } ] }
            for piece in _cut( call[ 'function' ][ 'arguments' ], cuts ) )
    chunks.append( { 'choices': [ {
        'index': 0, 'delta': { }, 'finish_reason': 'tool_calls' } ] } )
    whole = { 'choices': [ {
        'index': 0, 'finish_reason': 'tool_calls',
        'message': { 'role': 'assistant', 'content': '',
                     'tool_calls': tool_calls } } ] }
    return whole, [ *chunks, '[DONE]' ]


def _survey_pool( provider ):
    ''' Returns event sequences of the provider's streamed captures. '''
    pools = [ ]
    for path in sorted( ( _LOCATION / provider ).iterdir( ) ):
        if path.suffix == '.sse':
            pools.append( [
                event.decode( )
                for event in replay.parse_events( path.read_bytes( ) ) ] )
        elif path.suffix == '.eventstream':
            buffer = botocore.eventstream.EventStreamBuffer( )
            buffer.add_data( path.read_bytes( ) )
            pools.append( [
                { message.headers[ ':event-type' ]:
                    json.loads( message.payload ) }
                for message in buffer ] )
    return pools


_POOLS = { provider: _survey_pool( provider ) for provider in PROVIDERS }


def _events_strategy( provider ):
    pools = _POOLS[ provider ]
    pool = [ event for events in pools for event in events ]
    arbitrary = st.lists(
        st.sampled_from( pool ) | replay.produce_json_strategy( ),
        max_size = 30 )
    mangled = st.sampled_from( pools ).flatmap( lambda events: st.one_of(
        st.permutations( events ),
        st.integers( 0, len( events ) ).map( lambda size: events[ : size ] ),
        st.lists( st.sampled_from( events ), max_size = 40 ) ) )
    return arbitrary | mangled


@_timeout
@pytest.mark.parametrize( 'provider', PROVIDERS )
@_settings
@given(
    calls = _calls,
    cuts = st.lists( st.integers( 0, 10 ** 6 ), max_size = 6 ) )
def test_100_generated_replies( provider, calls, cuts ):
    ''' Generated calls come out exactly once each, with their arguments,
        whole and streamed alike.
    '''
    processor = produce_processor( provider )
    render = _render_bedrock if provider == 'bedrock' else _render_mistral
    whole, events = render( calls, cuts )
    invocations = processor.normalize_invocations( whole )
    accumulator = processor.produce_accumulator( )
    streamed = [ ]
    for event in events: streamed.extend( accumulator.ingest( event ) )
    streamed.extend( accumulator.conclude( ) )
    expected = [ ( name, arguments ) for name, arguments, _ in calls ]
    for sequence in ( invocations, streamed ):
        assert [ ( item.name, item.arguments ) for item in sequence ] == (
            expected )
        identifiers = [ item.identifier for item in sequence ]
        assert len( set( identifiers ) ) == len( identifiers )
    assert [ item.identifier for item in invocations ] == [
        item.identifier for item in streamed ]


@_timeout
@pytest.mark.parametrize( 'provider', PROVIDERS )
@_settings
@given( data = st.data( ) )
def test_200_mutated_streams( provider, data ):
    ''' Mutated captures and arbitrary events give only package errors
        and well-formed canisters.
    '''
    events = data.draw( _events_strategy( provider ) )
    replay.check_events_robust( produce_processor( provider ), events )


@_timeout
@pytest.mark.parametrize( 'provider', PROVIDERS )
@_settings
@given( body = replay.produce_json_strategy( ) )
def test_300_arbitrary_bodies( provider, body ):
    ''' Arbitrary JSON bodies give canisters or package errors. '''
    replay.check_normalize_robust( produce_processor( provider ), body )
