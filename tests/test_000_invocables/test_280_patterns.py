# SPDX-License-Identifier: Apache-2.0

''' Regular expressions of schemas and of search_text cannot run away. '''


import time

import pytest

import invocables

from invocables import FaultGenera, descriptors, exceptions, schemata


_EVIL = '^(a+)+$'
_EVIL_TEXT = 'a' * 28 + 'b'
# Bound which proves "does not hang": the backtracking engine takes minutes.
_SECONDS_MAXIMUM = 5.0


def _call( identifier, name, arguments ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


async def _echo( context, arguments ):
    return dict( arguments )


def _produce_ensemble( **schemas ):
    return invocables.produce_ensemble( 'tools', [
        invocables.produce_invoker(
            _echo, name = name, arguments_schema = schema )
        for name, schema in schemas.items( ) ] )


async def _execute( ensemble, *invocations ):
    started = time.monotonic( )
    results = await invocables.execute_invocations( invocations, [ ensemble ] )
    assert time.monotonic( ) - started < _SECONDS_MAXIMUM
    return results


@pytest.mark.asyncio
async def test_100_pattern_runs_in_linear_time( ):
    ''' A catastrophic pattern against hostile text is decided at once. '''
    ensemble = _produce_ensemble( evil = {
        'type': 'object',
        'properties': { 'text': { 'type': 'string', 'pattern': _EVIL } } } )
    results = await _execute(
        ensemble,
        _call( 'a', 'evil', { 'text': _EVIL_TEXT } ),
        _call( 'b', 'evil', { 'text': 'aaa' } ) )
    assert results[ 0 ].error.genus is FaultGenera.Invalidity
    assert 'does not match' in results[ 0 ].error.message
    assert not results[ 1 ].is_error( )


@pytest.mark.asyncio
async def test_110_pattern_properties_run_in_linear_time( ):
    ''' patternProperties, with additionalProperties or
        unevaluatedProperties beside it, match keys in linear time.
    '''
    properties = { _EVIL: { 'type': 'integer' } }
    ensemble = _produce_ensemble(
        matched = { 'type': 'object', 'patternProperties': properties },
        closed = {
            'type': 'object', 'patternProperties': properties,
            'additionalProperties': False },
        unevaluated = {
            'type': 'object', 'patternProperties': properties,
            'unevaluatedProperties': False } )
    results = await _execute(
        ensemble,
        _call( 'a', 'matched', { _EVIL_TEXT: 'not checked' } ),
        _call( 'b', 'matched', { 'aaa': 'not an integer' } ),
        _call( 'c', 'closed', { _EVIL_TEXT: 1 } ),
        _call( 'd', 'closed', { 'aaa': 1 } ),
        _call( 'e', 'unevaluated', { _EVIL_TEXT: 1 } ),
        _call( 'f', 'unevaluated', { 'aaa': 1 } ) )
    assert [ result.is_error( ) for result in results ] == [
        False, True, True, False, True, False ]
    assert 'not match any of the regexes' in results[ 2 ].error.message
    assert 'Unevaluated properties' in results[ 4 ].error.message


@pytest.mark.asyncio
async def test_120_lookarounds_run_within_deadline( ):
    ''' Patterns which RE2 cannot run (lookarounds, backreferences) still
        work, and a catastrophic one is stopped at its deadline: an
        invalid-arguments result.
    '''
    ensemble = _produce_ensemble(
        user = {
            'type': 'object', 'properties': {
                'name': { 'type': 'string', 'pattern': '^(?!admin$)' },
                'pair': { 'type': 'string', 'pattern': r'^(\w)\1$' } } },
        evil = {
            'type': 'object', 'properties': {
                'text': { 'type': 'string', 'pattern': '^((?=a)a|a)+$' } } } )
    results = await _execute(
        ensemble,
        _call( 'a', 'user', { 'name': 'ada', 'pair': 'xx' } ),
        _call( 'b', 'user', { 'name': 'admin' } ),
        _call( 'c', 'user', { 'pair': 'xy' } ),
        _call( 'd', 'evil', { 'text': 'a' * 40 + '!' } ) )
    assert [ result.is_error( ) for result in results ] == [
        False, True, True, True ]
    assert 'took too long' in results[ 3 ].error.message
    assert results[ 3 ].error.genus is FaultGenera.Invalidity


def test_130_patterns_which_compile_nowhere_refused( ):
    ''' A schema whose pattern neither engine compiles is refused when the
        invoker is produced.
    '''
    for schema in (
        { 'type': 'object', 'properties': {
            'x': { 'type': 'string', 'pattern': 'a(?<' } } },
        { 'type': 'object', 'patternProperties': { '(?P<': { } } },
    ):
        with pytest.raises( exceptions.SchemaInvalidity ):
            invocables.produce_invoker(
                _echo, name = 'broken', arguments_schema = schema )
    invocables.produce_invoker( _echo, name = 'data', arguments_schema = {
        'type': 'object', 'properties': { 'pattern': {
            'type': 'string', 'const': '(' } } } )


def test_140_expressions( ):
    ''' Expressions match as expected, in RE2 or in the regex package. '''
    assert schemata.produce_expression( r'\p{Lu}\w+' ).search( 'hi Ada' )
    assert not schemata.produce_expression( '^b' ).search( 'ab' )
    assert schemata.produce_expression( '(?<=a)b' ).search( 'ab' )
    with pytest.raises( exceptions.PatternInvalidity ):
        schemata.produce_expression( '(' )
    expression = schemata.produce_expression( '^((?=a)a|a)+$' )
    with pytest.raises( exceptions.PatternInterruption ):
        expression.search( 'a' * 40 + '!', time.monotonic( ) + 0.05 )


@pytest.mark.asyncio
async def test_150_search_text_runs_in_linear_time( tmp_path ):
    ''' search_text with a catastrophic pattern over hostile lines does not
        freeze the process.
    '''
    ( tmp_path / 'hostile.txt' ).write_text(
        '\n'.join( [ _EVIL_TEXT ] * 20 ) + '\naaaa\n' )
    ensembles = await descriptors.prepare_ensembles( {
        'ensembles': [ { 'builtin': 'io' } ],
        'roots': [ { 'path': str( tmp_path ) } ],
    }, connect = True )
    started = time.monotonic( )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'search_text', { 'pattern': '(a+)+$' } ),
          _call( 'b', 'search_text', { 'pattern': '(?<=a)b' } ) ],
        ensembles )
    assert time.monotonic( ) - started < _SECONDS_MAXIMUM
    assert results[ 0 ].as_text( ) == 'hostile.txt:21: aaaa'
    assert results[ 1 ].as_text( ).count( 'hostile.txt' ) == 20


@pytest.mark.asyncio
async def test_160_lone_surrogates( ):
    ''' Texts and patterns with a lone surrogate (JSON's ``"\\ud800"``, which
        a model or a server may send) are matched as any other character:
        a value which misses the pattern is refused by the arguments'
        check, not failed with an encoding error; a pattern holding one is
        compiled and matches.
    '''
    ensemble = _produce_ensemble(
        lower = { 'type': 'object', 'properties': {
            'code': { 'type': 'string', 'pattern': '^[a-z]+$' } } },
        lone = { 'type': 'object', 'properties': {
            'code': { 'type': 'string', 'pattern': '^a\ud800$' } } },
        keyed = { 'type': 'object', 'patternProperties': {
            '^x.$': { 'type': 'string' } }, 'additionalProperties': False } )
    results = await _execute(
        ensemble,
        _call( 'a', 'lower', { 'code': 'ab\ud800' } ),
        _call( 'b', 'lower', { 'code': 'ab' } ),
        _call( 'c', 'lone', { 'code': 'a\ud800' } ),
        _call( 'd', 'lone', { 'code': 'ab' } ),
        _call( 'e', 'keyed', { 'x\udc80': 'value' } ),
        _call( 'f', 'keyed', { 'x\udc80y': 'value' } ) )
    assert [ result.is_error( ) for result in results ] == [
        True, False, False, True, False, True ]
    for index in ( 0, 3, 5 ):
        assert results[ index ].error.genus is FaultGenera.Invalidity
    assert schemata.produce_expression( '^[^\ud800]$' ).search( '\udc80' )
    assert not schemata.produce_expression( '^[a-z]$' ).search( '\udc80' )
