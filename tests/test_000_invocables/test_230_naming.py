# SPDX-License-Identifier: Apache-2.0

''' Provider-facing names: unique, safe, deterministic, reversible. '''


import json
import re
import subprocess
import sys

import pytest

import invocables

from invocables import exceptions, naming


# Gemini's rule, the strictest: every other provider's is looser.
_rule = re.compile( r'^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$' )


# The constructors take names which produce_invoker and produce_ensemble
# refuse (dots, spaces, over 64 characters), as MCP servers may send them.
def _invoker( name ):
    return invocables.FunctionInvoker(
        name = name, invocable = lambda context, arguments: name,
        arguments_schema = { 'type': 'object' } )


def _ensemble( name, *tools ):
    return invocables.LocalEnsemble(
        name, [ _invoker( tool ) for tool in tools ],
        invocables.EnsembleConfiguration( ) )


def _names( nomenclature ):
    return {
        ( item.ensemble.name, item.invoker.name ): item.name
        for item in nomenclature.designations }


def test_100_bare_names_kept( ):
    ''' Names stay bare when nothing collides. '''
    nomenclature = naming.produce_nomenclature( [
        _ensemble( 'files', 'read_file', 'write-file' ),
        _ensemble( 'web', 'fetch' ) ] )
    assert _names( nomenclature ) == {
        ( 'files', 'read_file' ): 'read_file',
        ( 'files', 'write-file' ): 'write-file',
        ( 'web', 'fetch' ): 'fetch' }


def test_110_collisions_across_three_ensembles( ):
    ''' Colliding names are scoped by ensemble; others stay bare. '''
    ensembles = [
        _ensemble( 'alpha', 'echo', 'time' ),
        _ensemble( 'beta', 'echo', 'fetch' ),
        _ensemble( 'gamma', 'echo', 'time', 'sum' ) ]
    nomenclature = naming.produce_nomenclature( ensembles )
    assert _names( nomenclature ) == {
        ( 'alpha', 'echo' ): 'alpha__echo',
        ( 'alpha', 'time' ): 'alpha__time',
        ( 'beta', 'echo' ): 'beta__echo',
        ( 'beta', 'fetch' ): 'fetch',
        ( 'gamma', 'echo' ): 'gamma__echo',
        ( 'gamma', 'time' ): 'gamma__time',
        ( 'gamma', 'sum' ): 'sum' }
    for item in nomenclature.designations:
        back = nomenclature.access_designation( item.name )
        assert back.invoker is item.invoker
        assert back.ensemble is item.ensemble
        assert nomenclature.access_name(
            item.ensemble.name, item.invoker.name ) == item.name


def test_120_every_provider_rule( ):
    ''' Every name matches ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$ and is unique. '''
    odd = [
        'files.read', 'files/read', 'files_read', 'ü-mlaut', 'space name',
        'x' * 64, 'y' * 65, 'z' * 200, '...', '', 'a:b', 'tool🙂' ]
    ensembles = [
        _ensemble( 'server.one', *odd ),
        _ensemble( 'server/two', *odd[ : 6 ] ),
        _ensemble( 'e' * 70, 'files.read', 'z' * 200 ) ]
    nomenclature = naming.produce_nomenclature( ensembles )
    names = [ item.name for item in nomenclature.designations ]
    assert len( names ) == len( set( names ) )
    for name in names: assert _rule.fullmatch( name ), name
    for item in nomenclature.designations:
        assert nomenclature.access_designation( item.name ).invoker is (
            item.invoker )


def test_130_safe_names_stable( ):
    ''' Safe names are unchanged; unsafe ones get a stable hash suffix. '''
    assert naming.produce_safe_name( 'read_file' ) == 'read_file'
    cleaned = naming.produce_safe_name( 'files.read' )
    assert cleaned.startswith( 'files_read_' )
    assert cleaned == naming.produce_safe_name( 'files.read' )
    assert cleaned != naming.produce_safe_name( 'files/read' )
    long = naming.produce_safe_name( 'q' * 100 )
    assert len( long ) == 64
    assert _rule.fullmatch( long )
    assert naming.produce_safe_name( '🙂' ).startswith( 'tool_' )


def test_140_cleaning_collisions_resolved( ):
    ''' Names made equal by cleaning become distinct. '''
    nomenclature = naming.produce_nomenclature( [
        _ensemble( 'one', 'a.b' ), _ensemble( 'two', 'a_b' ) ] )
    names = _names( nomenclature )
    assert names[ ( 'two', 'a_b' ) ] == 'a_b'
    assert names[ ( 'one', 'a.b' ) ] != 'a_b'


def test_150_order_independent( ):
    ''' Names do not depend on the order of the ensembles. '''
    first = _ensemble( 'alpha', 'echo', 'x.y' )
    second = _ensemble( 'beta', 'echo' )
    forward = _names( naming.produce_nomenclature( [ first, second ] ) )
    backward = _names( naming.produce_nomenclature( [ second, first ] ) )
    assert forward == backward


def test_160_deterministic_across_processes( ):
    ''' Two processes give the same names for the same ensembles. '''
    script = '''
import json, invocables
from invocables import naming
def tool( name ):
    return invocables.FunctionInvoker(
        name = name, invocable = lambda c, a: None,
        arguments_schema = { 'type': 'object' } )
def ensemble( name, tools ):
    return invocables.LocalEnsemble(
        name, tools, invocables.EnsembleConfiguration( ) )
ensembles = [
    ensemble( 'srv.a', [ tool( 'echo' ), tool( 'x.y' ) ] ),
    ensemble( 'srv.b', [ tool( 'echo' ), tool( 'q' * 90 ) ] ),
]
nomenclature = naming.produce_nomenclature( ensembles )
print( json.dumps( [ item.name for item in nomenclature.designations ] ) )
'''
    outputs = [
        json.loads( subprocess.run(
            [ sys.executable, '-c', script ], capture_output = True,
            text = True, check = True,
            env = { 'PYTHONHASHSEED': seed, 'PATH': '' },
        ).stdout )
        for seed in ( '1', '2' ) ]
    assert outputs[ 0 ] == outputs[ 1 ]
    assert outputs[ 0 ][ 0 ].startswith( 'srv_a_' )


def test_170_duplicate_ensemble_names( ):
    ''' Two ensembles with one name are refused. '''
    with pytest.raises( exceptions.EnsemblesInvalidity ) as caught:
        naming.produce_nomenclature( [
            _ensemble( 'tools', 'a' ), _ensemble( 'tools', 'b' ) ] )
    assert "'tools'" in str( caught.value )


@pytest.mark.asyncio
async def test_175_careless_ensembles_refused( ):
    ''' What is no sequence of ensembles (one ensemble alone, None, a
        number, a name, a mapping) is refused with the library's error at
        every entry point, not a raw TypeError or AttributeError.
    '''
    alone = _ensemble( 'tools', 'a' )
    call = invocables.InvocationCanister(
        identifier = 'c', name = 'a', arguments = { } )
    processor = invocables.produce_processor( 'openai' )
    for value in ( alone, None, 5, 'tools', [ 5 ], { 'tools': alone } ):
        with pytest.raises( exceptions.EnsemblesInvalidity ) as caught:
            await invocables.execute_invocations( [ call ], value )
        assert 'expected a sequence of ensembles' in str( caught.value )
        with pytest.raises( exceptions.EnsemblesInvalidity ):
            processor.prepare_tools( value )
    assert processor.prepare_tools( [ alone ] )[ 0 ][ 'function' ][
        'name' ] == 'a'


def test_180_unknown_name( ):
    ''' Unknown provider-facing names raise the absence error. '''
    nomenclature = naming.produce_nomenclature( [ _ensemble( 'a', 'x' ) ] )
    with pytest.raises( exceptions.InvokerAbsence ):
        nomenclature.access_designation( 'y' )
    with pytest.raises( exceptions.InvokerAbsence ):
        nomenclature.access_name( 'a', 'y' )


def test_190_cache_follows_changes( ):
    ''' Cached nomenclature is reused until the ensembles change. '''
    first = _ensemble( 'alpha', 'echo' )
    second = _ensemble( 'beta', 'echo' )
    one = naming.access_nomenclature( [ first, second ] )
    assert naming.access_nomenclature( [ first, second ] ) is one
    assert naming.access_nomenclature( one ) is one
    other = naming.access_nomenclature( [ first ] )
    assert _names( other ) == { ( 'alpha', 'echo' ): 'echo' }


def test_200_names_start_with_letter_or_underscore( ):
    ''' Names which start with a digit or a hyphen get a leading
        underscore (Gemini's rule); the mapping back stays exact.
    '''
    ensembles = [
        _ensemble( '2fa', '2fa_verify', '-dash', '9' * 64, '2fa.verify' ),
        _ensemble( 'other', '_2fa_verify', 'plain' ) ]
    nomenclature = naming.produce_nomenclature( ensembles )
    names = _names( nomenclature )
    assert names[ ( '2fa', '-dash' ) ] == '_-dash'
    assert names[ ( 'other', 'plain' ) ] == 'plain'
    assert names[ ( '2fa', '2fa_verify' ) ] != names[
        ( 'other', '_2fa_verify' ) ]
    for name in names.values( ): assert _rule.fullmatch( name ), name
    assert len( set( names.values( ) ) ) == len( names )
    for item in nomenclature.designations:
        assert nomenclature.access_designation( item.name ).invoker is (
            item.invoker )
    assert naming.produce_safe_name( '2fa_verify' ) == '_2fa_verify'
    assert naming.produce_safe_name( '9' * 64 ).startswith( '_9' )
    assert len( naming.produce_safe_name( '9' * 64 ) ) == 64


def test_210_line_breaks_are_unsafe( ):
    ''' A name ending with a line break is not taken as safe. '''
    assert not naming.is_name_safe( 'echo\n' )
    assert _rule.fullmatch( naming.produce_safe_name( 'echo\n' ) )


@pytest.mark.asyncio
async def test_220_gemini_calls_renamed_tool( ):
    ''' Gemini is offered '_2fa_verify' for '2fa_verify', and a call of
        that name runs the tool.
    '''
    from invocables.processors import produce_processor
    async def verify( context, arguments ): return f"ok {arguments[ 'code' ]}"
    invoker = invocables.produce_invoker(
        verify, name = '2fa_verify', arguments_schema = {
            'type': 'object', 'properties': { 'code': { 'type': 'string' } },
            'required': [ 'code' ] } )
    ensembles = [ invocables.produce_ensemble( 'auth', [ invoker ] ) ]
    processor = produce_processor( 'gemini' )
    tools = processor.prepare_tools( ensembles )
    declaration, = tools[ 0 ][ 'function_declarations' ]
    assert declaration[ 'name' ] == '_2fa_verify'
    invocations = processor.normalize_invocations( { 'candidates': [ {
        'content': { 'role': 'model', 'parts': [ { 'functionCall': {
            'name': '_2fa_verify', 'args': { 'code': '123' } } } ] } } ] } )
    result, = await processor.execute_invocations( invocations, ensembles )
    assert not result.is_error( )
    assert result.as_text( ) == 'ok 123'


def test_230_names_stable_and_reversible_across_calls( ):
    ''' Names are the same at every call; both directions of the map
        agree, including for names which were scoped or cleaned.
    '''
    ensembles = [
        _ensemble( 'a', 'echo', 'x.y', 'only' ),
        _ensemble( 'b', 'echo', 'x_y' ) ]
    first = naming.produce_nomenclature( ensembles )
    second = naming.produce_nomenclature( ensembles )
    assert _names( first ) == _names( second )
    for item in first.designations:
        assert first.access_name(
            item.ensemble.name, item.invoker.name ) == item.name
        assert first.access_designation( item.name ) is item
    assert first.access_name( 'a', 'echo' ) == 'a__echo'
    assert first.access_name( 'a', 'only' ) == 'only'


def test_300_columns_and_designations_on_demand( ):
    ''' Names and invokers are columns in order; the designations, made
        at first use, agree with them and are the same objects which the
        map by name returns, whichever is read first.
    '''
    for reader in ( 'query', 'designations', 'access_name' ):
        ensembles = [
            _ensemble( 'a', 'echo', 'only' ), _ensemble( 'b', 'echo' ) ]
        nomenclature = naming.produce_nomenclature( ensembles )
        assert nomenclature.names == ( 'a__echo', 'only', 'b__echo' )
        assert nomenclature.invokers == (
            *ensembles[ 0 ].survey_invokers( ),
            *ensembles[ 1 ].survey_invokers( ) )
        match reader:
            case 'query':
                found = nomenclature.query_designation( 'only' )
                assert found is not None
                assert found.invoker is nomenclature.invokers[ 1 ]
            case 'designations':
                assert nomenclature.designations[ 2 ].ensemble is (
                    ensembles[ 1 ] )
            case _:
                assert nomenclature.access_name( 'b', 'echo' ) == 'b__echo'
        designations = nomenclature.designations
        assert designations is nomenclature.designations
        assert [ item.name for item in designations ] == list(
            nomenclature.names )
        for item in designations:
            assert nomenclature.query_designation( item.name ) is item
            assert nomenclature.access_designation( item.name ) is item
        assert nomenclature.query_designation( 'echo' ) is None
        assert nomenclature.query_designation( 3 ) is None


def test_310_names_checked_at_once_as_one_by_one( ):
    ''' The quick check of already distinct, safe names agrees with the
        rule of each name: a line break, an unsafe character, a repeat
        or an overlong name still gets its own treatment.
    '''
    cases = (
        ( 'plain', 'other_1', 'x-y' ),
        ( 'a\nb', 'c' ), ( 'echo\n', 'x' ), ( 'x.y', 'z' ),
        ( 'x' * 64, 'y' ), ( 'x' * 65, 'y' ), ( '2fa', 'ok' ), ( '', ),
    )
    for tools in cases:
        nomenclature = naming.produce_nomenclature(
            [ _ensemble( 'e', *tools ) ] )
        assert list( nomenclature.names ) == [
            naming.produce_safe_name( tool ) for tool in tools ]
        assert all( _rule.fullmatch( name ) for name in nomenclature.names )
    nomenclature = naming.produce_nomenclature( [
        _ensemble( 'a', 'same' ), _ensemble( 'b', 'same' ) ] )
    assert nomenclature.names == ( 'a__same', 'b__same' )


def test_320_designations_given( ):
    ''' A nomenclature made from designations (as a selection makes it)
        holds their names and invokers as columns.
    '''
    ensemble = _ensemble( 'a', 'x', 'y', 'z' )
    whole = naming.produce_nomenclature( [ ensemble ] )
    chosen = whole.designations[ 1 : ]
    part = naming.Nomenclature( ( ensemble, ), chosen )
    assert part.names == ( 'y', 'z' )
    assert part.invokers == tuple( item.invoker for item in chosen )
    assert part.designations == tuple( chosen )
    assert part.query_designation( 'x' ) is None
    assert part.access_designation( 'z' ) is chosen[ 1 ]


def test_330_nomenclature_freed_when_dropped( ):
    ''' A nomenclature never read by name holds no cycle: it goes as soon
        as it is dropped, with what processors remember of it.
    '''
    import gc
    import weakref
    nomenclature = naming.produce_nomenclature( [ _ensemble( 'a', 'x' ) ] )
    reference = weakref.ref( nomenclature )
    gc.disable( )
    try:
        del nomenclature
        assert reference( ) is None
    finally: gc.enable( )


@pytest.mark.parametrize( ( 'name', 'patterns', 'expected' ), [
    ( 'read_file', ( 'read_*', ), True ),
    ( 'Read_file', ( 'read_*', ), False ),
    ( 'tool_2', ( 'tool_[0-3]', ), True ),
    ( 'tool_[1]', ( 'tool_[1]', ), True ),
    ( 'tool_1', ( 'tool_?', 'x' ), True ),
    ( 'tool_12', ( 'tool_?', ), False ),
    ( 'tool', ( ), False ),
] )
def test_340_one_match_of_names( name, patterns, expected ):
    ''' Names match a pattern they equal (even one holding glob
        characters) or a case-sensitive glob; globs are recognised.
    '''
    assert naming.is_name_matching( name, patterns ) is expected
    assert naming.is_glob( 'a*' ) and naming.is_glob( '[ab]' )
    assert not naming.is_glob( 'read_file' )
