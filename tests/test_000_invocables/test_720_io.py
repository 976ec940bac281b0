# SPDX-License-Identifier: Apache-2.0

''' Built-in io ensemble: confinement to roots, atomic writes, limits. '''


import os
import stat

import pytest

import invocables
from invocables import descriptors
from invocables.builtins import io as io_tools

from invocables import exceptions

from . import io_support


_PNG = (
    b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01'
    b'\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8'
    b'\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82' )


_prepare = io_support.prepare
_invoke = io_support.invoke
_assert_refused = io_support.assert_refused


@pytest.fixture
def tree( tmp_path ):
    ''' Root with files, and a secret outside of it. '''
    root = tmp_path / 'root'
    ( root / 'docs' ).mkdir( parents = True )
    ( root / 'docs' / 'note.txt' ).write_text( 'first\nsecond\nthird\n' )
    ( root / 'readme.md' ).write_text( '# Title\nsecret? no\n' )
    ( tmp_path / 'secret.txt' ).write_text( 'top secret' )
    return root


@pytest.mark.asyncio
async def test_100_read_inside_root( tree ):
    ''' Relative and absolute paths inside the root are read. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'read_file', path = 'docs/note.txt' )
    assert result.as_text( ) == 'first\nsecond\nthird\n'
    result = await _invoke(
        ensembles, 'read_file', path = str( tree / 'readme.md' ) )
    assert result.as_text( ).startswith( '# Title' )
    result = await _invoke(
        ensembles, 'read_file', path = 'docs/../docs/./note.txt' )
    assert not result.is_error( )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'path', [
    '../secret.txt',
    'docs/../../secret.txt',
    '..',
    '/etc/passwd',
    '/',
] )
async def test_110_escapes_refused( tree, path ):
    ''' Paths which leave the root are refused with a clear error. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'read_file', path = path )
    _assert_refused( result, 'outside the allowed roots' )
    result = await _invoke( ensembles, 'list_directory', path = path )
    _assert_refused( result, 'outside the allowed roots' )


@pytest.mark.asyncio
async def test_120_symlink_out_refused( tree ):
    ''' Symbolic links which point out of the root are refused. '''
    ( tree / 'leak.txt' ).symlink_to( tree.parent / 'secret.txt' )
    ( tree / 'outdir' ).symlink_to( tree.parent )
    ( tree / 'inner.txt' ).symlink_to( tree / 'docs' / 'note.txt' )
    ensembles = await _prepare( ( tree, True ) )
    for path in ( 'leak.txt', 'outdir/secret.txt' ):
        result = await _invoke( ensembles, 'read_file', path = path )
        _assert_refused( result, 'outside the allowed roots' )
    result = await _invoke(
        ensembles, 'write_file', path = 'leak.txt', content = 'x' )
    _assert_refused( result, 'outside the allowed roots' )
    assert ( tree.parent / 'secret.txt' ).read_text( ) == 'top secret'
    result = await _invoke( ensembles, 'read_file', path = 'inner.txt' )
    assert result.as_text( ).startswith( 'first' )


@pytest.mark.asyncio
async def test_130_dangling_symlink_out_refused( tree ):
    ''' Writing through a dangling link to outside the root is refused. '''
    ( tree / 'trap.txt' ).symlink_to( tree.parent / 'created.txt' )
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'write_file', path = 'trap.txt', content = 'x' )
    _assert_refused( result, 'outside the allowed roots' )
    assert not ( tree.parent / 'created.txt' ).exists( )


@pytest.mark.asyncio
async def test_140_search_skips_links_out( tree ):
    ''' Searches do not follow links out of the root. '''
    ( tree / 'outdir' ).symlink_to( tree.parent )
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'search_files', pattern = '**/*.txt' )
    assert 'secret.txt' not in result.as_text( )
    assert 'docs/note.txt' in result.as_text( )
    result = await _invoke( ensembles, 'search_text', pattern = 'top secret' )
    assert result.as_text( ) == 'No line matches.'


@pytest.mark.asyncio
async def test_200_read_only_default( tree, monkeypatch ):
    ''' Without roots, the current directory is readable, not writable. '''
    monkeypatch.chdir( tree )
    ensembles = await descriptors.prepare_ensembles(
        { 'ensembles': [ { 'builtin': 'io' } ] } )
    result = await _invoke( ensembles, 'read_file', path = 'readme.md' )
    assert not result.is_error( )
    result = await _invoke(
        ensembles, 'write_file', path = 'new.txt', content = 'x' )
    _assert_refused( result, 'read-only root' )
    assert "writable = true" in result.error.message
    result = await _invoke( ensembles, 'create_directory', path = 'new' )
    _assert_refused( result, 'read-only root' )
    assert not ( tree / 'new.txt' ).exists( )
    assert not ( tree / 'new' ).exists( )
    result = await _invoke( ensembles, 'list_roots' )
    assert result.as_text( ) == f"{tree} (read-only)"


@pytest.mark.asyncio
async def test_210_read_only_root_among_writable( tree, tmp_path ):
    ''' Writability belongs to the root which holds the path. '''
    output = tmp_path / 'output'
    output.mkdir( )
    ensembles = await _prepare( ( tree, False ), ( output, True ) )
    result = await _invoke(
        ensembles, 'write_file', path = str( output / 'a.txt' ),
        content = 'a' )
    assert not result.is_error( ), result
    assert ( output / 'a.txt' ).read_text( ) == 'a'
    result = await _invoke(
        ensembles, 'write_file', path = 'a.txt', content = 'a' )
    _assert_refused( result, 'read-only root' )


@pytest.mark.asyncio
async def test_220_nested_writable_root( tree ):
    ''' Most specific root decides: a writable folder in a read-only root. '''
    ensembles = await _prepare( ( tree, False ), ( tree / 'docs', True ) )
    result = await _invoke(
        ensembles, 'write_file', path = 'docs/new.txt', content = 'ok' )
    assert not result.is_error( ), result
    result = await _invoke(
        ensembles, 'write_file', path = 'new.txt', content = 'no' )
    _assert_refused( result, 'read-only root' )


@pytest.mark.asyncio
async def test_300_write_atomic( tree ):
    ''' Write replaces the file by rename: old links keep the old text. '''
    target = tree / 'docs' / 'note.txt'
    target.chmod( 0o640 )
    alias = tree / 'alias.txt'
    os.link( target, alias )
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'write_file', path = 'docs/note.txt', content = 'new\n' )
    assert result.as_text( ) == f"Wrote 4 bytes to {target}."
    assert target.read_text( ) == 'new\n'
    assert alias.read_text( ) == 'first\nsecond\nthird\n'
    assert stat.S_IMODE( target.stat( ).st_mode ) == 0o640
    assert sorted( path.name for path in target.parent.iterdir( ) ) == [
        'note.txt' ]


@pytest.mark.asyncio
async def test_310_write_new_file( tree ):
    ''' New file gets usual permissions; parents only when asked. '''
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'write_file', path = 'a/b/c.txt', content = 'x' )
    _assert_refused( result, 'does not exist' )
    result = await _invoke(
        ensembles, 'write_file', path = 'a/b/c.txt', content = 'x',
        create_parents = True )
    assert not result.is_error( ), result
    path = tree / 'a' / 'b' / 'c.txt'
    umask = os.umask( 0 )
    os.umask( umask )
    assert stat.S_IMODE( path.stat( ).st_mode ) == 0o666 & ~umask


@pytest.mark.asyncio
async def test_320_write_no_overwrite( tree ):
    ''' Existing file is kept when overwrite is false. '''
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'write_file', path = 'readme.md', content = 'x',
        overwrite = False )
    _assert_refused( result, "'overwrite' is false" )
    assert ( tree / 'readme.md' ).read_text( ).startswith( '# Title' )


@pytest.mark.asyncio
async def test_330_write_failure_leaves_original( tree ):
    ''' Content which cannot be encoded leaves the file and no debris. '''
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'write_file', path = 'readme.md', content = 'caf\u00e9 \u2603',
        encoding = 'latin-1' )
    _assert_refused( result, 'Cannot encode' )
    assert ( tree / 'readme.md' ).read_text( ).startswith( '# Title' )
    names = sorted( path.name for path in tree.iterdir( ) )
    assert names == [ 'docs', 'readme.md' ]


@pytest.mark.asyncio
async def test_340_write_folder_refused( tree ):
    ''' Writing over a folder is refused. '''
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'write_file', path = 'docs', content = 'x' )
    _assert_refused( result, 'is a folder' )


@pytest.mark.asyncio
async def test_350_create_directory( tree ):
    ''' Folders are created with parents, idempotently. '''
    ensembles = await _prepare( ( tree, True ) )
    for _ in range( 2 ):
        result = await _invoke(
            ensembles, 'create_directory', path = 'x/y/z' )
        assert not result.is_error( ), result
    assert ( tree / 'x' / 'y' / 'z' ).is_dir( )
    result = await _invoke(
        ensembles, 'create_directory', path = 'readme.md' )
    _assert_refused( result, 'not a folder' )


@pytest.mark.asyncio
async def test_360_edit_file( tree ):
    ''' One exact passage is replaced; absent or repeated ones refused. '''
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'edit_file', path = 'docs/note.txt',
        old_text = 'second\n', new_text = '2nd\n' )
    assert not result.is_error( ), result
    assert ( tree / 'docs' / 'note.txt' ).read_text( ) == (
        'first\n2nd\nthird\n' )
    result = await _invoke(
        ensembles, 'edit_file', path = 'docs/note.txt',
        old_text = 'fourth', new_text = 'x' )
    _assert_refused( result, 'occurs 0 times' )
    result = await _invoke(
        ensembles, 'edit_file', path = 'docs/note.txt',
        old_text = 'ir', new_text = 'x' )
    _assert_refused( result, 'occurs 2 times' )
    assert ( tree / 'docs' / 'note.txt' ).read_text( ) == (
        'first\n2nd\nthird\n' )


@pytest.mark.asyncio
async def test_370_edit_read_only( tree ):
    ''' Editing in a read-only root is refused. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke(
        ensembles, 'edit_file', path = 'readme.md', old_text = 'Title',
        new_text = 'x' )
    _assert_refused( result, 'read-only root' )


@pytest.mark.asyncio
async def test_380_move_file( tree, tmp_path ):
    ''' Files move within writable roots, never over existing ones. '''
    outside = tmp_path / 'elsewhere'
    outside.mkdir( )
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke(
        ensembles, 'move_file', source = 'readme.md',
        destination = 'docs/readme.md' )
    assert not result.is_error( ), result
    assert ( tree / 'docs' / 'readme.md' ).is_file( )
    assert not ( tree / 'readme.md' ).exists( )
    result = await _invoke(
        ensembles, 'move_file', source = 'docs/readme.md',
        destination = 'docs/note.txt' )
    _assert_refused( result, 'exists already' )
    result = await _invoke(
        ensembles, 'move_file', source = 'docs/readme.md',
        destination = str( outside / 'readme.md' ) )
    _assert_refused( result, 'outside the allowed roots' )
    result = await _invoke(
        ensembles, 'move_file', source = 'docs', destination = 'docs/inner' )
    _assert_refused( result, 'into itself' )
    result = await _invoke(
        ensembles, 'move_file', source = 'absent', destination = 'x' )
    _assert_refused( result, 'does not exist' )


@pytest.mark.asyncio
async def test_400_size_limit( tree ):
    ''' Files over the size limit are refused; parts may still be read. '''
    ( tree / 'big.txt' ).write_text(
        ''.join( f"line {number}\n" for number in range( 1, 101 ) ) )
    ensembles = await _prepare( ( tree, False ), read_size_maximum = 100 )
    result = await _invoke( ensembles, 'read_file', path = 'big.txt' )
    _assert_refused( result, 'more than the limit of 100' )
    result = await _invoke(
        ensembles, 'read_file', path = 'big.txt', start_line = 10,
        line_count = 2 )
    assert result.as_text( ) == 'line 10\nline 11\n'
    result = await _invoke(
        ensembles, 'read_file', path = 'big.txt', start_line = 1 )
    assert result.as_text( ).endswith( '[... stopped at the size limit]\n' )
    assert len( result.as_text( ) ) < 200


@pytest.mark.asyncio
async def test_410_invalid_line_arguments( tree ):
    ''' Line numbers are checked against the schema before running. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke(
        ensembles, 'read_file', path = 'readme.md', start_line = 0 )
    assert result.error.genus is invocables.FaultGenera.Invalidity


@pytest.mark.asyncio
async def test_500_encodings( tree ):
    ''' Text in other encodings is read and written when named. '''
    ( tree / 'latin.txt' ).write_bytes( 'caf\u00e9\n'.encode( 'latin-1' ) )
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke( ensembles, 'read_file', path = 'latin.txt' )
    _assert_refused( result, "pass 'encoding'" )
    result = await _invoke(
        ensembles, 'read_file', path = 'latin.txt', encoding = 'latin-1' )
    assert result.as_text( ) == 'caf\u00e9\n'
    result = await _invoke(
        ensembles, 'read_file', path = 'latin.txt', encoding = 'latin-1',
        start_line = 1, line_count = 1 )
    assert result.as_text( ) == 'caf\u00e9\n'
    result = await _invoke(
        ensembles, 'write_file', path = 'out.txt', content = '\u00e9',
        encoding = 'latin-1' )
    assert ( tree / 'out.txt' ).read_bytes( ) == b'\xe9'
    result = await _invoke(
        ensembles, 'read_file', path = 'latin.txt', encoding = 'klingon' )
    _assert_refused( result, "Unknown encoding 'klingon'" )


@pytest.mark.asyncio
async def test_510_images( tree ):
    ''' Images are returned as image content. '''
    ( tree / 'pixel.png' ).write_bytes( _PNG )
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'read_file', path = 'pixel.png' )
    content = result.content[ 0 ]
    assert isinstance( content, invocables.ImageContent )
    assert content.media_type == 'image/png'
    assert content.data == _PNG


@pytest.mark.asyncio
async def test_520_binary_refused( tree ):
    ''' Binary files other than images are refused with a hint. '''
    ( tree / 'blob.bin' ).write_bytes( bytes( range( 128, 256 ) ) )
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'read_file', path = 'blob.bin' )
    _assert_refused( result, 'is not utf-8 text' )


@pytest.mark.asyncio
async def test_530_missing_and_folder( tree ):
    ''' Missing files and folders give errors the model can act on. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'read_file', path = 'absent.txt' )
    _assert_refused( result, 'does not exist' )
    result = await _invoke( ensembles, 'read_file', path = 'docs' )
    _assert_refused( result, 'use list_directory' )
    os.mkfifo( tree / 'pipe' )
    result = await _invoke( ensembles, 'read_file', path = 'pipe' )
    _assert_refused( result, 'not a regular file' )


@pytest.mark.asyncio
async def test_600_list_directory( tree ):
    ''' Listing shows folders with a slash and files with sizes. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'list_directory' )
    assert result.as_text( ) == 'docs/\nreadme.md (19 bytes)'
    ( tree / 'empty' ).mkdir( )
    result = await _invoke( ensembles, 'list_directory', path = 'empty' )
    assert 'is empty' in result.as_text( )


@pytest.mark.asyncio
async def test_610_list_limit( tree ):
    ''' Long listings are cut at the entries limit, saying so. '''
    for number in range( 5 ): ( tree / f"file{number}" ).write_text( '' )
    ensembles = await _prepare( ( tree, False ), entries_maximum = 3 )
    result = await _invoke( ensembles, 'list_directory' )
    lines = result.as_text( ).splitlines( )
    assert len( lines ) == 4
    assert lines[ -1 ] == '... and 4 more entries.'


@pytest.mark.asyncio
async def test_620_search_files( tree ):
    ''' Glob patterns list matching paths; hidden ones only when named. '''
    ( tree / '.hidden' ).mkdir( )
    ( tree / '.hidden' / 'x.txt' ).write_text( '' )
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'search_files', pattern = '**/*.txt' )
    assert result.as_text( ) == 'docs/note.txt'
    result = await _invoke(
        ensembles, 'search_files', pattern = '.hidden/*.txt' )
    assert result.as_text( ) == '.hidden/x.txt'
    result = await _invoke( ensembles, 'search_files', pattern = '../*' )
    _assert_refused( result, "without '..'" )
    result = await _invoke( ensembles, 'search_files', pattern = '*.none' )
    assert result.as_text( ) == "No path matches '*.none'."


@pytest.mark.asyncio
async def test_630_search_text( tree ):
    ''' Regular expressions find lines, with path and line number. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'search_text', pattern = 'sec' )
    assert result.as_text( ) == (
        'docs/note.txt:2: second\nreadme.md:2: secret? no' )
    result = await _invoke(
        ensembles, 'search_text', pattern = 'sec', glob = '**/*.md' )
    assert result.as_text( ) == 'readme.md:2: secret? no'
    result = await _invoke( ensembles, 'search_text', pattern = '(' )
    _assert_refused( result, 'not a valid regular expression' )


@pytest.mark.asyncio
async def test_640_get_file_info( tree ):
    ''' File information gives kind, size and writability. '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke( ensembles, 'get_file_info', path = 'readme.md' )
    text = result.as_text( )
    assert 'kind: file' in text
    assert 'size: 19 bytes' in text
    assert 'writable root: no' in text
    result = await _invoke( ensembles, 'get_file_info', path = 'docs' )
    assert 'kind: folder' in result.as_text( )
    result = await _invoke( ensembles, 'get_file_info', path = 'absent' )
    _assert_refused( result, 'does not exist' )


@pytest.mark.asyncio
async def test_650_list_roots( tree, tmp_path ):
    ''' Roots are listed in order with their mode. '''
    ensembles = await _prepare( ( tree, False ), ( tmp_path, True ) )
    result = await _invoke( ensembles, 'list_roots' )
    assert result.as_text( ) == (
        f"{tree} (read-only)\n{tmp_path.resolve( )} (writable)" )


def test_700_resolve_location( tree ):
    ''' Resolution maps paths to roots; refusals are invocation refusals. '''
    settings = io_tools.Settings(
        roots = ( descriptors.Root( path = tree ), ) )
    location = io_tools.resolve_location( settings, 'docs/note.txt' )
    assert location.path == tree / 'docs' / 'note.txt'
    with pytest.raises( exceptions.InvocationRefusal ):
        io_tools.resolve_location( settings, '../x' )
    with pytest.raises( exceptions.InvocationRefusal ):
        io_tools.resolve_location( settings, 'x', writable = True )
    with pytest.raises( exceptions.InvocationRefusal ):
        io_tools.resolve_location( settings, 'a\x00b' )


@pytest.mark.asyncio
async def test_710_plain_invoker_defaults( tree, monkeypatch ):
    ''' Used outside descriptors, tools read the current directory only. '''
    monkeypatch.chdir( tree )
    invoker = invocables.produce_invoker(
        io_tools.read_file, name = 'read_file',
        arguments_schema = { 'type': 'object' } )
    ensemble = invocables.produce_ensemble( 'files', [ invoker ] )
    result = await _invoke( [ ensemble ], 'read_file', path = 'readme.md' )
    assert result.as_text( ).startswith( '# Title' )
    result = await _invoke( [ ensemble ], 'read_file', path = '../secret.txt' )
    _assert_refused( result, 'outside the allowed roots' )
