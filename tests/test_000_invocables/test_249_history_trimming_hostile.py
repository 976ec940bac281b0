# SPDX-License-Identifier: Apache-2.0

''' Trimming of hostile histories and careless options: arguments which
    have no canonical JSON, text which is not JSON, one pattern given as a
    string, exclusions and counters of the wrong kind.
'''


import typing

import pytest

from invocables import exceptions, history

from . import test_246_history_trimming as trimming


# The histories of the tests of trimming, one call and result per round.
anthropic_of = typing.cast( typing.Callable[
    [ list[ tuple[ str, typing.Any, str ] ] ],
    list[ dict[ str, typing.Any ] ] ], vars( trimming )[ '_anthropic' ] )


def _nest( depth: int ) -> list[ typing.Any ]:
    value: list[ typing.Any ] = [ ]
    for _ in range( depth ): value = [ value ]
    return value


def test_100_deep_arguments_compared_with_none( ):
    ''' Arguments of a history nested deeper than the interpreter recurses
        (the engine never bounded them) give no raw RecursionError: such
        calls supersede none and are superseded by none, and the others
        are trimmed as ever.
    '''
    deep = _nest( 50_000 )
    messages = anthropic_of( [
        ( 'read_file', { 'x': deep }, 'D1' * 100 ),
        ( 'read_file', { 'path': '/a' }, 'A1' * 100 ),
        ( 'read_file', { 'x': deep }, 'D2' * 100 ),
        ( 'read_file', { 'path': '/a' }, 'A2' * 100 ),
    ] )
    trimmed = history.trim_history( messages )
    assert trimmed.trimmed == ( 'toolu_1', )
    keyed = history.KeyedStaleness( reads = { 'read_file': [ 'x' ] } )
    trimmed = history.trim_history( messages, superseded = keyed )
    assert trimmed.trimmed == ( 'toolu_1', ) # no 'x': equal keys


def test_110_cyclic_arguments_compared_with_none( ):
    ''' Arguments which hold a cycle (a history built in code) give no raw
        ValueError; such a call is compared with no other.
    '''
    cyclic: dict[ str, typing.Any ] = { 'path': '/a' }
    cyclic[ 'self' ] = cyclic
    messages = anthropic_of( [
        ( 'read_file', cyclic, 'C1' * 100 ),
        ( 'read_file', cyclic, 'C2' * 100 ),
    ] )
    assert history.trim_history( messages ).trimmed == ( )


def test_130_histories_json_cannot_render_measured( ):
    ''' A budget measures a history whose result is nested deeper than
        the interpreter recurses, or holds a cycle (histories built in
        code), by its keys and leaves, with no raw RecursionError or
        ValueError; calls whose ids are no text are paired by position.
    '''
    cyclic: dict[ str, typing.Any ] = { 'path': '/a' }
    cyclic[ 'self' ] = cyclic
    messages = anthropic_of( [
        ( 'read_file', { 'path': '/d' }, 'D' * 400 ),
        ( 'read_file', { 'path': '/e' }, 'E' * 400 ),
    ] )
    messages[ 2 ][ 'content' ][ 0 ][ 'content' ] = [ { 'type': 'text',
        'text': 'D' * 400, 'deep': _nest( 50_000 ), 'cycle': cyclic } ]
    trimmed = history.trim_history(
        messages, superseded = False, budget = 500 )
    assert trimmed.trimmed == ( 'toolu_0', 'toolu_1' )
    chat = [
        { 'role': 'assistant', 'content': None, 'tool_calls': [ {
            'id': { 'odd': 1 }, 'type': 'function', 'function': {
                'name': 'read_file', 'arguments': '{}' } } ] },
        { 'role': 'tool', 'tool_call_id': { 'odd': 1 }, 'content': 'x' },
    ]
    assert history.trim_history(
        chat, provider = 'openai', superseded = False ).trimmed == ( )


def test_120_arguments_not_json_not_equal( ):
    ''' Two calls whose argument texts are not JSON, and differ, are not
        the same call: neither result is trimmed as superseded (both once
        decoded to an empty object, equal).
    '''
    messages = anthropic_of( [
        ( 'read_file', '{"path": "/a"', 'A1' * 100 ),
        ( 'read_file', '{"path": "/b"', 'B1' * 100 ),
    ] )
    assert history.trim_history( messages ).trimmed == ( )


def test_200_exclude_string_is_one_pattern( ):
    ''' A string given for ``exclude`` is one glob pattern, as filters
        take it: never one pattern per character (whose ``*`` excluded
        every tool, and whose letters excluded none of the name).
    '''
    messages = anthropic_of( [
        ( 'read_file', { 'path': '/a' }, 'A1' * 100 ),
        ( 'write_file', { 'path': '/a' }, 'W1' * 100 ),
        ( 'read_file', { 'path': '/b' }, 'B1' * 100 ),
    ] )
    trimmed = history.trim_history(
        messages, superseded = False, keep = 0, exclude = 'read_*' )
    assert trimmed.trimmed == ( 'toolu_1', )
    trimmed = history.trim_history(
        messages, superseded = False, keep = 0, exclude = 'write_file' )
    assert trimmed.trimmed == ( 'toolu_0', 'toolu_2' )


@pytest.mark.parametrize( 'exclude', [ [ 5 ], [ None ], 5, [ b'read_*' ] ] )
def test_210_exclude_of_wrong_kind_refused( exclude: object ):
    ''' Exclusions which are neither patterns nor ensembles are refused
        with an error of configuration, not a raw AttributeError.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        history.trim_history( anthropic_of( [ ] ), exclude = exclude )
    assert 'exclude' in str( caught.value )


def _many( text: str ) -> object: return 'many'


def _nothing( text: str ) -> object: return None


def _negative( text: str ) -> object: return -1


@pytest.mark.parametrize( 'counter', [ _many, _nothing, _negative, 5 ] )
def test_220_counter_of_wrong_kind_refused( counter: object ):
    ''' A counter which is not callable, or returns no whole number, is
        refused with an error of configuration, not a raw TypeError.
    '''
    messages = anthropic_of( [
        ( 'read_file', { 'path': '/a' }, 'A1' * 100 ) ] )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        history.trim_history( messages, budget = 10, counter = counter )
    assert 'counter' in str( caught.value )


def test_300_keyed_staleness_one_argument_string( ):
    ''' One string for the arguments of a tool in a keyed staleness is
        one argument: reads of different paths stay (once a key per
        character, all absent, made every earlier read stale).
    '''
    messages = anthropic_of( [
        ( 'read_file', { 'path': '/a' }, 'A1' * 100 ),
        ( 'read_file', { 'path': '/b' }, 'B1' * 100 ),
        ( 'write_file', { 'path': '/a' }, 'W1' * 100 ),
    ] )
    staleness = history.KeyedStaleness(
        reads = { 'read_file': 'path' }, writes = { 'write_file': 'path' } )
    trimmed = history.trim_history( messages, superseded = staleness )
    assert trimmed.trimmed == ( 'toolu_0', )


@pytest.mark.parametrize( 'reads', [
    None, 5, { 'read_file': [ 5 ] }, { 5: [ 'path' ] }, { 'read_file': 5 },
] )
def test_310_keyed_staleness_of_wrong_kind_refused( reads: object ):
    ''' Keys of a staleness which are not a table of tool names to names
        of arguments are refused at construction, not at the first trim.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        history.KeyedStaleness( reads = reads ) # type: ignore[arg-type]
