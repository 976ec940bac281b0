# SPDX-License-Identifier: Apache-2.0

''' Fuzzing of the text-call reader, whole and streamed.

    * Generated calls (names of offered tools, arbitrary JSON arguments),
      written in each of the five formats between prose, are read exactly,
      in order, with the prose left as text; any split of the text into
      pieces gives the same.
    * Arbitrary text, rich in the characters and markers of the formats,
      gives no error, only calls naming offered tools, and the same result
      whole and in any split.

    A few dozen cases each in the suite; set ``INVOCABLES_FUZZ_EXAMPLES``
    (for example to 10000) to run that many cases per property and format.
'''


import json
import keyword
import os

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invocables.processors import textcalls


EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '0' ) ) or 40
FORMATS = ( 'hermes', 'json', 'llama', 'mistral', 'pythonic' )
NAMES = ( 'add', 'get_weather', 'say_hello', 'say_hello_world' )

_timeout = pytest.mark.timeout( max( 300, EXAMPLES // 4 ) )
_settings = settings(
    max_examples = EXAMPLES, deadline = None, database = None,
    suppress_health_check = list( HealthCheck ) )

_keys = st.from_regex( r'[a-z_][a-z0-9_]{0,8}', fullmatch = True ).filter(
    lambda key: not keyword.iskeyword( key ) )
_scalars = (
    st.none( ) | st.booleans( ) | st.integers( - 10 ** 12, 10 ** 12 )
    | st.floats( allow_nan = False, allow_infinity = False )
    | st.text( max_size = 12 ) )
_values = st.recursive(
    _scalars,
    lambda inner: st.lists( inner, max_size = 3 )
    | st.dictionaries( st.text( max_size = 6 ), inner, max_size = 3 ),
    max_leaves = 8 )
_arguments = st.dictionaries( _keys, _values, max_size = 4 )
_calls = st.lists(
    st.tuples( st.sampled_from( NAMES ), _arguments ),
    min_size = 1, max_size = 4 )
_prose = st.text(
    alphabet = 'abcdefghij klmnop.!?\n', max_size = 30 )
_hostile = st.lists(
    st.sampled_from( (
        '{', '}', '[', ']', '(', ')', '"', "'", '\\', ',', ';', ':', ' ',
        '\n', '`', '```json', '<', '>', 'add', 'name', '"name"',
        '"arguments"', '<tool_call>', '</tool_call>', '[TOOL_CALLS]',
        '[/TOOL_CALLS]', '<|python_tag|>', '<|python_start|>',
        '<|python_end|>', 'a=', '1', 'x', '{"name": "add", ',
        '"arguments": {}', '[add(', 'a=1)', ) )
    | st.text( max_size = 4 ),
    max_size = 60 ).map( ''.join )


def _render( format_, calls, variant ):
    ''' Renders calls as a model writes them in a format. '''
    if format_ == 'hermes':
        return ''.join(
            '<tool_call>\n{}\n</tool_call>'.format( json.dumps(
                { 'name': name, 'arguments': arguments } ) )
            for name, arguments in calls )
    if format_ == 'json':
        objects = [
            json.dumps( { 'name': name, 'arguments': arguments } )
            for name, arguments in calls ]
        body = '\n'.join( objects )
        return f"```json\n{body}\n```" if variant else body
    if format_ == 'llama':
        body = '; '.join(
            json.dumps( { 'name': name, 'parameters': arguments } )
            for name, arguments in calls )
        return f"<|python_tag|>{body}" if variant else body
    if format_ == 'mistral':
        if variant:
            return ''.join(
                f"[TOOL_CALLS]{name}{json.dumps( arguments )}"
                for name, arguments in calls )
        return '[TOOL_CALLS]' + json.dumps( [
            { 'name': name, 'arguments': arguments }
            for name, arguments in calls ] )
    return '[{}]'.format( ', '.join(
        '{}({})'.format( name, ', '.join(
            f"{key}={value!r}" for key, value in arguments.items( ) ) )
        for name, arguments in calls ) )


def _split( text, cuts ):
    points = sorted( { cut % ( len( text ) + 1 ) for cut in cuts } )
    pieces, start = [ ], 0
    for point in points:
        pieces.append( text[ start : point ] )
        start = point
    pieces.append( text[ start : ] )
    return pieces


def _read_streamed( pieces, names, format_ = 'auto' ):
    reader = textcalls.TextCallsReader( names, format_ )
    texts, invocations = [ ], [ ]
    for piece in pieces:
        release = reader.feed( piece )
        texts.append( release.text )
        invocations.extend( release.invocations )
    release = reader.conclude( )
    texts.append( release.text )
    invocations.extend( release.invocations )
    return ''.join( texts ), tuple( invocations ), reader.truncations


def _summarize( invocations ):
    return [
        ( item.identifier, item.name, item.arguments,
          isinstance( item.invalidity, str ) )
        for item in invocations ]


@_timeout
@pytest.mark.parametrize( 'format_', FORMATS )
@_settings
@given(
    calls = _calls, before = _prose, after = _prose,
    variant = st.booleans( ),
    cuts = st.lists( st.integers( 0, 10 ** 6 ), max_size = 12 ) )
def test_100_generated_calls( format_, calls, before, after, variant, cuts ):
    ''' Calls written in a format between prose are read exactly, in order,
        and the prose stays text; any split gives the same.
    '''
    text = f"{before} {_render( format_, calls, variant )} {after}"
    for format__ in ( format_, 'auto' ):
        reading = textcalls.read_text_calls( text, NAMES, format__ )
        assert [
            ( item.name, item.arguments, isinstance( item.invalidity, str ) )
            for item in reading.invocations ] == [
            ( name, arguments, False ) for name, arguments in calls ]
        assert reading.text.split( ) == f"{before} {after}".split( )
        assert reading.truncations == ( )
    streamed = _read_streamed( _split( text, cuts ), NAMES )
    assert streamed[ 0 ] == reading.text
    assert _summarize( streamed[ 1 ] ) == _summarize( reading.invocations )


@_timeout
@_settings
@given(
    text = _hostile,
    cuts = st.lists( st.integers( 0, 10 ** 6 ), max_size = 12 ),
    format_ = st.sampled_from( ( 'auto', *FORMATS ) ) )
def test_200_arbitrary_text( text, cuts, format_ ):
    ''' Arbitrary text gives no error, only calls naming offered tools, and
        the same result whole and in any split.
    '''
    reading = textcalls.read_text_calls( text, ( 'add', 'a' ), format_ )
    for invocation in reading.invocations:
        assert invocation.name in ( 'add', 'a' )
        assert isinstance( invocation.arguments, dict )
    reader_text, invocations, truncations = _read_streamed(
        _split( text, cuts ), ( 'add', 'a' ), format_ )
    assert reader_text == reading.text
    assert _summarize( invocations ) == _summarize( reading.invocations )
    assert truncations == reading.truncations
