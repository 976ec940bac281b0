# SPDX-License-Identifier: Apache-2.0

''' Provider-facing names: unique, safe, deterministic, reversible. '''


import json
import re
import subprocess
import sys

import pytest

import invocables

from invocables import exceptions, naming


_rule = re.compile( r'^[a-zA-Z0-9_-]{1,64}$' )


# The constructors take names which produce_invoker and produce_ensemble
# refuse (dots, spaces, over 64 characters), as MCP servers may send them.
def _invoker( name ):
    return invocables.FunctionInvoker(
        name = name, invocable = lambda context, arguments: name,
        argschema = { 'type': 'object' } )


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
    ''' Every name matches ^[a-zA-Z0-9_-]{1,64}$ and is unique. '''
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
    for name in names: assert _rule.match( name ), name
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
    assert _rule.match( long )
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
        argschema = { 'type': 'object' } )
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
