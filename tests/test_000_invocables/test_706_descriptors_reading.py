# SPDX-License-Identifier: Apache-2.0

''' Reading of descriptor documents in linear work: key paths made only
    for the error they name, a too-deep value located by one scan.
'''


import subprocess
import sys
import textwrap
import tracemalloc

from pathlib import Path

import pytest

from invocables import descriptors, exceptions
from invocables.descriptors import reading


def _peak_of( function ):
    ''' Returns the peak of memory allocated while function runs. '''
    tracemalloc.start( )
    try:
        function( )
        return tracemalloc.get_traced_memory( )[ 1 ]
    finally: tracemalloc.stop( )


def test_100_keypaths_not_made_per_value( ):
    ''' A table under a long key holding many entries is checked within
        memory of the document, not of its entries times the key (the
        old cost: 1,000 paths of 50,000 characters, 50 MB).
    '''
    document = { 'k' * 50_000: { f"x{index}": 1 for index in range( 1000 ) } }
    peak = _peak_of(
        lambda: reading.validate_document( 'memory', '', document ) )
    assert peak < 5_000_000


def test_110_keypaths_not_made_for_arrays( ):
    ''' An array under a long key costs no path per item either. '''
    document = { 'k' * 50_000: [ [ index ] for index in range( 1000 ) ] }
    peak = _peak_of(
        lambda: reading.validate_document( 'memory', 'root', document ) )
    assert peak < 5_000_000


def test_120_keypath_of_lone_surrogate( ):
    ''' An error names the key path of the value, under the given path,
        through tables and arrays.
    '''
    document = { 'a': [ { 'b': 'ok' }, { 'c': [ 1, 'x\ud800' ] } ] }
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        reading.validate_document( 'memory', 'root', document )
    assert caught.value.keypath == 'root.a[1].c[1]'
    assert 'UTF-16' in caught.value.reason
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        reading.validate_document( 'memory', '', document )
    assert caught.value.keypath == 'a[1].c[1]'


def test_130_keypath_of_key_errors( ):
    ''' A key which is not a string, or not Unicode, is named by the path
        of its table; an array at the top starts the path with its index.
    '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        reading.validate_document( 'memory', '', { 'a': { 'b': { 1: 2 } } } )
    assert caught.value.keypath == 'a.b'
    assert 'not a string' in caught.value.reason
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        reading.validate_document( 'memory', '', [ { 'x\udc00': 1 } ] )
    assert caught.value.keypath == '[0]'


def test_140_keypath_of_infinite_and_deep( ):
    ''' Numbers which are not finite (when asked) and nesting beyond the
        limit are named by their key path, a cycle too.
    '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        reading.validate_document(
            'memory', 'servers', { 'a': [ 1.0, float( 'nan' ) ] },
            finite = True )
    assert caught.value.keypath == 'servers.a[1]'
    cycle: dict[ str, object ] = { }
    cycle[ 'c' ] = cycle
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        reading.validate_document( 'memory', '', cycle )
    assert caught.value.keypath == '.'.join( [ 'c' ] * reading.DEPTH_MAXIMUM )


def test_150_keypath_of_empty_keys( ):
    ''' An empty key adds nothing to a path that is still empty, as
        before.
    '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        reading.validate_document( 'memory', '', { '': { 'x': 'y\ud800' } } )
    assert caught.value.keypath == 'x'


def test_200_nesting_scan_linear( tmp_path ):
    ''' A value too deep for the TOML parser, after a key line of three
        million characters, is located within a generous bound (a scan
        which copies the statement per character takes minutes), in a
        child process which a hang cannot stop the tests with.
    '''
    code = textwrap.dedent( '''
        import sys
        from invocables.descriptors import reading
        text = 'k' * 3_000_000 + ' = 1\\nx = ' + '[' * 3000 + ']' * 3000
        print( reading.locate_nesting_toml( text ) )
    ''' )
    try:
        completed = subprocess.run(
            [ sys.executable, '-c', code ], capture_output = True,
            text = True, timeout = 30, check = True )
    except subprocess.TimeoutExpired: # pragma: no cover
        pytest.fail( "Scan of a long statement did not end in 30 s." )
    assert completed.stdout.strip( ) == "('x', 2)"


@pytest.mark.parametrize( 'text, keypath, line', [
    ( "a = 1\n[t]\nb = 2\nc = " + '[' * 70, 't.c', 4 ),
    ( '"q k" = ' + '[' * 70, '"q k"', 1 ),
    ( "[t] # note\n  key   = " + '[' * 70, 't.key', 2 ),
    ( "x = '''a\nb'''\ny = " + '{ a = ' * 70, 'y', 3 ),
    ( "arr = [\n  [ 1 ], # c\n  " + '[' * 70, 'arr', 3 ),
    ( " = " + '[' * 70, '?', 1 ),
] )
def test_210_nesting_scan_names_key( text, keypath, line ):
    ''' The scan names the table and key of the too-deep value, and its
        line: quoted keys, comments, blanks and multi-line strings alike.
    '''
    assert reading.locate_nesting_toml( text ) == ( keypath, line )


def test_220_deep_toml_file_named( tmp_path ):
    ''' A descriptor too deep for the parser, after a long key, is refused
        naming the key of the deep value.
    '''
    path = tmp_path / 'deep.toml'
    path.write_text(
        'k' * 100_000 + ' = 1\nx = ' + '[' * 3000 + ']' * 3000 + '\n' )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_ensemble_descriptor( Path( path ) )
    assert caught.value.keypath == 'x'
    assert 'line 2' in caught.value.reason
