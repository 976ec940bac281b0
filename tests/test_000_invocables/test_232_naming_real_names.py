# SPDX-License-Identifier: Apache-2.0

''' Names as real tool sets give them: accepted, made safe, reversible.

    Tools and ensembles take any printable name of 1 to 256 characters:
    dotted names of the Berkeley Function Calling Leaderboard
    (``math.sum``), OpenAPI operations (``get /users/{id}``,
    ``listUsers``), MCP's 128-character names, registry names of MCP
    servers (``io.github.owner/server``). Every provider sees safe, unique
    names, and a call by such a name runs the right tool.
'''


import json
import re

import pytest

import invocables

from invocables import exceptions, naming
from invocables.toolsets import wrappers
from invocables.processors import produce_processor


# Gemini's rule, the strictest: every other provider's is looser.
_rule = re.compile( r'^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$' )
PROVIDERS = (
    'anthropic', 'openai', 'openai-responses', 'gemini', 'cohere', 'ollama',
    'bedrock', 'mistral' )
_SCHEMA = { 'type': 'object', 'properties': { 'n': { 'type': 'integer' } } }
_ACCEPTED = {
    'bfcl dotted': 'math.sum',
    'bfcl nested': 'spotify.playlist.add_track',
    'openapi path': 'get /users/{id}',
    'openapi camel': 'listUsers',
    'mcp longest': 'a' * 128,
    'mcp charset': 'files-v2.read_text',
    'registry': 'io.github.owner/server',
    'spaces inside': 'calc sum',
    'latin letters': 'größe',
    'other script': '计算',
    'emoji': 'tool🙂',
    'longest': 'z' * 256,
    'padded': ' sum ',
}
_REFUSED = {
    'empty': '',
    'space': ' ',
    'spaces': '    ',
    'tab': '\t',
    'newline inside': 'a\nb',
    'final newline': 'tool\n',
    'carriage return': 'a\rb',
    'nul': 'a\x00b',
    'delete': 'a\x7fb',
    'c1 control': 'a\x85b',
    'zero width space': 'a\u200bb',
    'line separator': 'a\u2028b',
    'no-break space only': '\u00a0',
    'lone surrogate': 'a\ud800b',
    'private use': 'a\ue000b',
    'too long': 'z' * 257,
}


def _tool( name ):
    ''' Returns invoker which answers its own name and its argument. '''
    async def invoke( context, arguments ):
        return { 'tool': name, 'n': arguments.get( 'n' ) }
    return invocables.produce_invoker(
        invoke, name = name, arguments_schema = _SCHEMA )


def _survey_names( tools ):
    ''' Returns tool names of a provider's tool list, in order. '''
    names = [ ]
    for tool in tools:
        if 'function_declarations' in tool:
            names.extend(
                item[ 'name' ] for item in tool[ 'function_declarations' ] )
        elif 'toolSpec' in tool: names.append( tool[ 'toolSpec' ][ 'name' ] )
        elif 'function' in tool: names.append( tool[ 'function' ][ 'name' ] )
        else: names.append( tool[ 'name' ] )
    return names


@pytest.mark.parametrize( 'name', _ACCEPTED.values( ), ids = _ACCEPTED )
def test_100_names_accepted( name ):
    ''' Tools and ensembles take names of real tool sets, unchanged. '''
    assert _tool( name ).name == name
    def add( a: int, b: int ) -> int:
        ''' Adds. '''
        return a + b
    assert invocables.produce_invoker( add, name = name ).name == name
    ensemble = invocables.produce_ensemble( name, [ add ] )
    assert ensemble.name == name
    assert wrappers.FilteredEnsemble( ensemble, name = name ).name == name


@pytest.mark.parametrize( 'name', _REFUSED.values( ), ids = _REFUSED )
def test_110_names_refused( name ):
    ''' Names which are empty, blank, too long or hold unprintable
        characters are refused, saying what is allowed.
    '''
    with pytest.raises( exceptions.InvokerInvalidity ) as caught:
        _tool( name )
    assert '1 to 256 printable characters' in caught.value.reason
    assert 'is not allowed' in caught.value.reason
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.produce_ensemble( name, [ ] )
    assert '1 to 256 printable characters' in caught.value.reason


def test_120_refusals_say_why( ):
    ''' Each refusal names its flaw: emptiness, blankness, length, or the
        unprintable character and where it is; long names are shortened.
    '''
    def reason( name ):
        with pytest.raises( exceptions.InvokerInvalidity ) as caught:
            _tool( name )
        return caught.value
    assert 'it is empty' in reason( '' ).reason
    assert 'it is only spaces' in reason( '   ' ).reason
    assert 'U+000A at index 4' in reason( 'tool\n' ).reason
    assert 'U+D800 at index 1' in reason( 'a\ud800b' ).reason
    error = reason( 'z' * 10_000 )
    assert 'it has 10000 characters, more than 256' in error.reason
    assert len( str( error ) ) < 500
    for name in ( 3, None, b'sum' ):
        with pytest.raises( exceptions.InvokerInvalidity ) as caught:
            invocables.produce_invoker( lambda: 1, name = name )
        assert 'expected text' in caught.value.reason


def test_130_derived_names_of_any_script( ):
    ''' A function's own name is taken whatever its script. '''
    namespace = { }
    exec( 'def größe( a: int ) -> int: return a', namespace ) # noqa: S102
    assert invocables.produce_invoker( namespace[ 'größe' ] ).name == (
        'größe' )


def _produce_awkward_ensembles( ):
    ''' Returns ensembles whose names collide in every way cleaning can. '''
    hashed = naming.produce_safe_name( 'math.sum' )
    names = [
        'math.sum', 'math_sum', 'math/sum', 'math sum', hashed,
        'get /users/{id}', 'listUsers', 'a' * 128, 'p' * 70 + '.one',
        'p' * 70 + '.two', 'größe', 'gr__e', '2fa', '-x', '计算', '计数' ]
    return [
        invocables.produce_ensemble(
            'io.github.owner/server', [ _tool( name ) for name in names ] ),
        invocables.produce_ensemble(
            'my tools', [ _tool( 'math.sum' ), _tool( 'listUsers' ) ] ),
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', PROVIDERS )
async def test_200_safe_unique_names_run_their_tools( provider ):
    ''' Each provider's tool list has safe, unique names; a call by each
        safe name runs the tool it stands for, and its result names the
        call.
    '''
    ensembles = _produce_awkward_ensembles( )
    processor = produce_processor( provider )
    names = _survey_names( processor.prepare_tools( ensembles ) )
    nomenclature = naming.produce_nomenclature( ensembles )
    expected = [
        ( ensemble.name, invoker.name )
        for ensemble in ensembles for invoker in ensemble.survey_invokers( ) ]
    assert len( names ) == len( expected )
    assert len( set( names ) ) == len( names )
    for name in names: assert _rule.fullmatch( name ), name
    invocations = [
        invocables.InvocationCanister(
            identifier = f"call-{index}", name = name,
            arguments = { 'n': index } )
        for index, name in enumerate( names ) ]
    results = await processor.execute_invocations( invocations, ensembles )
    for index, ( name, result, ( ensemble, tool ) ) in enumerate(
        zip( names, results, expected )
    ):
        assert result.invocation_id == f"call-{index}"
        assert not result.is_error( ), result.error
        assert result.content[ 0 ].data == { 'tool': tool, 'n': index }
        designation = nomenclature.access_designation( name )
        assert ( designation.ensemble.name, designation.invoker.name ) == (
            ensemble, tool )
        assert nomenclature.access_name( ensemble, tool ) == name


def test_210_collisions_stay_distinct( ):
    ''' Names equal once cleaned (math.sum, math_sum, math/sum, a tool
        named as the hash of another) stay distinct; bare names which
        collide with nothing are kept.
    '''
    ensembles = _produce_awkward_ensembles( )
    names = {
        ( item.ensemble.name, item.invoker.name ): item.name
        for item in naming.produce_nomenclature( ensembles ).designations }
    owner = 'io.github.owner/server'
    assert names[ ( owner, 'math_sum' ) ] == 'math_sum'
    assert names[ ( owner, 'gr__e' ) ] == 'gr__e'
    assert names[ ( owner, '2fa' ) ] == '_2fa'
    scoped = names[ ( owner, 'listUsers' ) ]
    assert scoped.startswith( 'io_github_owner_server__listUsers_' )
    assert names[ ( 'my tools', 'listUsers' ) ].startswith(
        'my_tools__listUsers_' )
    assert len( set( names.values( ) ) ) == len( names )
    long_one = names[ ( owner, 'p' * 70 + '.one' ) ]
    long_two = names[ ( owner, 'p' * 70 + '.two' ) ]
    assert len( long_one ) == len( long_two ) == 64
    assert long_one != long_two


def test_220_names_independent_of_order_and_run( ):
    ''' The names depend only on the names: reversed ensembles and tools
        give the same, and again at the next call.
    '''
    forward = _produce_awkward_ensembles( )
    backward = [
        invocables.produce_ensemble(
            ensemble.name, list( reversed( ensemble.survey_invokers( ) ) ) )
        for ensemble in reversed( forward ) ]
    def survey( ensembles ):
        return {
            ( item.ensemble.name, item.invoker.name ): item.name
            for item in naming.produce_nomenclature(
                ensembles ).designations }
    assert survey( forward ) == survey( backward )
    assert survey( forward ) == survey( _produce_awkward_ensembles( ) )


def test_230_separators_inside_names_stay_apart( ):
    ''' Pairs which read the same when joined with a slash (ensemble
        'a', tool 'b/c'; ensemble 'a/b', tool 'c') get distinct names even
        when both must be hashed again.
    '''
    first = naming.produce_safe_name( 'b/c' )
    second = naming.produce_safe_name( 'a/b__c' )
    ensembles = [
        invocables.produce_ensemble( 'a', [ _tool( 'b/c' ) ] ),
        invocables.produce_ensemble( 'a/b', [ _tool( 'c' ) ] ),
        invocables.produce_ensemble(
            'z', [ _tool( 'c' ), _tool( first ), _tool( second ) ] ) ]
    nomenclature = naming.produce_nomenclature( ensembles )
    names = nomenclature.names
    assert len( set( names ) ) == len( names ) == 5
    for name in names: assert _rule.fullmatch( name )
    for item in nomenclature.designations:
        assert nomenclature.access_designation( item.name ) is item


def test_240_names_sent_by_servers( ):
    ''' Names which only a server may send (unprintable, lone surrogates,
        very long) are made safe too, without failing.
    '''
    names = [ 'a\ud800', 'tab\there', 'x' * 1000, '\x00' ]
    invokers = [
        invocables.FunctionInvoker(
            name = name, invocable = _tool( 'any' ).invocable,
            arguments_schema = _SCHEMA )
        for name in names ]
    ensemble = invocables.LocalEnsemble( 'srv', invokers )
    nomenclature = naming.produce_nomenclature( [ ensemble ] )
    assert len( set( nomenclature.names ) ) == len( names )
    for name in nomenclature.names: assert _rule.fullmatch( name )


@pytest.mark.asyncio
async def test_300_native_calls_by_safe_names( ):
    ''' Native replies naming safe names are read, run and answered with
        the provider's own call ids.
    '''
    ensembles = _produce_awkward_ensembles( )
    nomenclature = naming.produce_nomenclature( ensembles )
    target = nomenclature.access_name( 'my tools', 'math.sum' )
    other = nomenclature.access_name( 'io.github.owner/server', 'math.sum' )
    anthropic = produce_processor( 'anthropic' )
    invocations = anthropic.normalize_invocations( { 'content': [
        { 'type': 'tool_use', 'id': 'toolu_1', 'name': target,
          'input': { 'n': 1 } },
        { 'type': 'tool_use', 'id': 'toolu_2', 'name': other,
          'input': { 'n': 2 } } ] } )
    results = await anthropic.execute_invocations( invocations, ensembles )
    assert [ result.invocation_id for result in results ] == [
        'toolu_1', 'toolu_2' ]
    assert [ result.content[ 0 ].data for result in results ] == [
        { 'tool': 'math.sum', 'n': 1 }, { 'tool': 'math.sum', 'n': 2 } ]
    messages = anthropic.nativize_results( results )
    assert 'toolu_1' in json.dumps( messages, default = str )
    openai = produce_processor( 'openai' )
    invocations = openai.normalize_invocations( { 'choices': [ {
        'message': { 'role': 'assistant', 'tool_calls': [ {
            'id': 'call_9', 'type': 'function', 'function': {
                'name': target, 'arguments': '{"n": 9}' } } ] } } ] } )
    result, = await openai.execute_invocations( invocations, ensembles )
    assert result.invocation_id == 'call_9'
    assert result.content[ 0 ].data == { 'tool': 'math.sum', 'n': 9 }
