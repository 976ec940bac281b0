# SPDX-License-Identifier: Apache-2.0

''' Built-in io ensemble under hostile arguments: every path a model can
    send gives a result it can act on, never an execution failure, and
    nothing outside the roots is read or written.
'''


import json
import os
import subprocess
import sys
import tempfile
import tracemalloc

from pathlib import Path

import pytest

import invocables
from invocables import descriptors

from invocables import exceptions


_NAME_LONG = 'n' * 300 # longer than a name may be (255 bytes)
_PATH_LONG = 'd/' * 2500 + 'f' # longer than a path may be (4096 bytes)
_PR_CAPBSET_DROP = 24 # prctl option of Linux


def _drop_overrides( ):
    ''' Drops the superuser's capabilities to override file permissions
        (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) for the program about to
        be executed.
    '''
    import ctypes
    libc = ctypes.CDLL( None, use_errno = True )
    for capability in ( 1, 2 ):
        if libc.prctl( _PR_CAPBSET_DROP, capability, 0, 0, 0 ):
            raise OSError( ctypes.get_errno( ), "prctl refused." )


async def _prepare( *roots, **configuration ):
    ''' Returns io ensembles over roots: ( path, writable[, hard_links] ). '''
    entry = { 'builtin': 'io' }
    if configuration: entry[ 'configuration' ] = configuration
    return await descriptors.prepare_ensembles( {
        'ensembles': [ entry ],
        'roots': [
            dict( zip( ( 'path', 'writable', 'hard_links' ),
                       ( str( root[ 0 ] ), *root[ 1 : ] ) ) )
            for root in roots ],
    }, connect = True )


async def _invoke( ensembles, name, **arguments ):
    ''' Runs one call under the default (fail-fast) policy. '''
    invocation = invocables.InvocationCanister(
        identifier = 'call', name = name, arguments = arguments )
    results = await invocables.execute_invocations( [ invocation ], ensembles )
    return results[ 0 ]


def _assert_refused( result, fragment = '' ):
    assert result.is_error( ), result
    assert result.error.genus is invocables.FaultGenera.Refusal, result
    assert fragment in result.error.message, result.error.message


@pytest.fixture
def tree( tmp_path ):
    ''' Root with files, and a secret outside of it. '''
    root = tmp_path / 'root'
    ( root / 'docs' ).mkdir( parents = True )
    ( root / 'docs' / 'note.txt' ).write_text( 'first\nsecond\nthird\n' )
    ( root / 'readme.md' ).write_text( '# Title\n' )
    ( tmp_path / 'secret.txt' ).write_text( 'top secret\n' )
    return root


@pytest.mark.asyncio
@pytest.mark.parametrize( 'name, arguments', [
    ( 'read_file', { 'path': _NAME_LONG } ),
    ( 'read_file', { 'path': f"docs/{_NAME_LONG}/x" } ),
    ( 'read_file', { 'path': _PATH_LONG } ),
    ( 'get_file_info', { 'path': _NAME_LONG } ),
    ( 'list_directory', { 'path': _NAME_LONG } ),
    ( 'search_files', { 'path': _NAME_LONG, 'pattern': '*' } ),
    ( 'search_text', { 'path': _NAME_LONG, 'pattern': 'x' } ),
    ( 'write_file', { 'path': _NAME_LONG, 'content': 'x' } ),
    ( 'write_file', {
        'path': f"{_NAME_LONG}/x", 'content': 'x',
        'create_parents': True } ),
    ( 'edit_file', { 'path': _NAME_LONG, 'old_text': 'a', 'new_text': 'b' } ),
    ( 'create_directory', { 'path': f"docs/{_NAME_LONG}" } ),
    ( 'move_file', { 'source': 'readme.md', 'destination': _NAME_LONG } ),
    ( 'move_file', { 'source': _NAME_LONG, 'destination': 'x' } ),
] )
async def test_100_name_too_long_is_refusal( tree, name, arguments ):
    ''' Names and paths longer than the file system allows are refusals,
        under the default fail-fast policy, with a shortened path.
    '''
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke( ensembles, name, **arguments )
    _assert_refused( result )
    assert len( result.error.message ) < 1000
    assert sorted( path.name for path in tree.iterdir( ) ) == [
        'docs', 'readme.md' ]


@pytest.mark.asyncio
async def test_110_not_a_folder_is_refusal( tree ):
    ''' A file used as a folder on the way is a refusal, for every tool. '''
    ensembles = await _prepare( ( tree, True ) )
    calls = (
        ( 'read_file', { 'path': 'readme.md/x' } ),
        ( 'get_file_info', { 'path': 'readme.md/x' } ),
        ( 'list_directory', { 'path': 'readme.md' } ),
        ( 'write_file', {
            'path': 'readme.md/x/y', 'content': 'x',
            'create_parents': True } ),
        ( 'write_file', { 'path': 'readme.md/x', 'content': 'x' } ),
        ( 'create_directory', { 'path': 'readme.md/x' } ),
        ( 'move_file', { 'source': 'docs', 'destination': 'readme.md/x' } ),
        ( 'search_files', { 'path': 'readme.md', 'pattern': '*' } ),
    )
    for name, arguments in calls:
        _assert_refused( await _invoke( ensembles, name, **arguments ) )
    assert ( tree / 'readme.md' ).read_text( ) == '# Title\n'


def test_120_permission_denied_is_refusal( tmp_path ):
    ''' Files the process may not read or write are refusals (checked in
        a process without the superuser's power to override permissions).
    '''
    root = tmp_path
    ( root / 'locked.txt' ).write_text( 'locked' )
    os.chmod( root / 'locked.txt', 0 )
    ( root / 'shut' ).mkdir( mode = 0o700 )
    ( root / 'shut' / 'inner.txt' ).write_text( 'inner' )
    os.chmod( root / 'shut', 0 )
    script = (
        "import asyncio, json, sys\n"
        "import invocables\n"
        "from invocables import descriptors\n"
        "async def main( ):\n"
        "    ensembles = await descriptors.prepare_ensembles( {\n"
        "        'ensembles': [ { 'builtin': 'io' } ],\n"
        "        'roots': [ { 'path': sys.argv[ 1 ], 'writable': True } ]\n"
        "    }, connect = True )\n"
        "    calls = [ invocables.InvocationCanister(\n"
        "        identifier = str( index ), name = name, arguments = arguments )\n"
        "        for index, ( name, arguments ) in enumerate( json.loads(\n"
        "            sys.argv[ 2 ] ) ) ]\n"
        "    results = await invocables.execute_invocations(\n"
        "        calls, ensembles )\n"
        "    print( json.dumps( [ result.error.genus.value\n"
        "        for result in results ] ) )\n"
        "asyncio.run( main( ) )\n" )
    calls = [
        ( 'read_file', { 'path': 'locked.txt' } ),
        ( 'read_file', { 'path': 'shut/inner.txt' } ),
        ( 'list_directory', { 'path': 'shut' } ),
        ( 'write_file', { 'path': 'shut/new.txt', 'content': 'x' } ),
        ( 'edit_file', {
            'path': 'locked.txt', 'old_text': 'l', 'new_text': 'x' } ),
    ]
    process = subprocess.run(
        [ sys.executable, '-c', script, str( root ), json.dumps( calls ) ],
        capture_output = True, text = True, timeout = 60, check = False,
        preexec_fn = _drop_overrides if os.geteuid( ) == 0 else None )
    assert process.returncode == 0, process.stderr
    assert json.loads( process.stdout ) == [ 'refusal' ] * len( calls )


@pytest.mark.asyncio
async def test_130_move_across_file_systems_is_refusal( tree ):
    ''' A move between roots on different file systems is a refusal which
        says what to do instead.
    '''
    other = Path( tempfile.mkdtemp( dir = '/dev/shm' ) )
    try:
        ensembles = await _prepare( ( tree, True ), ( other, True ) )
        result = await _invoke(
            ensembles, 'move_file', source = 'readme.md',
            destination = str( other / 'readme.md' ) )
        _assert_refused( result, 'write a copy' )
        assert ( tree / 'readme.md' ).is_file( )
    finally:
        for path in other.iterdir( ): path.unlink( )
        other.rmdir( )


@pytest.mark.asyncio
async def test_200_hard_link_out_refused( tree ):
    ''' A hard link inside the root to a file outside is neither read,
        edited nor searched, unless the root allows hard links.
    '''
    os.link( tree.parent / 'secret.txt', tree / 'linked.txt' )
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke( ensembles, 'read_file', path = 'linked.txt' )
    _assert_refused( result, '2 hard links' )
    result = await _invoke(
        ensembles, 'read_file', path = 'linked.txt', start_line = 1 )
    _assert_refused( result, '2 hard links' )
    result = await _invoke(
        ensembles, 'edit_file', path = 'linked.txt', old_text = 'top',
        new_text = 'leaked' )
    _assert_refused( result, '2 hard links' )
    result = await _invoke( ensembles, 'search_text', pattern = 'secret' )
    assert result.as_text( ) == 'No line matches.'
    assert ( tree.parent / 'secret.txt' ).read_text( ) == 'top secret\n'
    ensembles = await _prepare( ( tree, False, True ) )
    result = await _invoke( ensembles, 'read_file', path = 'linked.txt' )
    assert result.as_text( ) == 'top secret\n'
    result = await _invoke( ensembles, 'search_text', pattern = 'secret' )
    assert result.as_text( ) == 'linked.txt:1: top secret'


def test_210_hard_links_key_of_roots( tmp_path ):
    ''' Roots take 'hard_links' (a boolean) in a configuration file. '''
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[roots]]\npath = '.'\nhard_links = true\n" )
    configuration = descriptors.produce_configuration(
        tmp_path / 'invocables.toml' )
    assert configuration.roots[ 0 ].hard_links
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[roots]]\npath = '.'\nhard_links = 'yes'\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( tmp_path / 'invocables.toml' )
    assert caught.value.keypath == 'roots[0].hard_links'


@pytest.mark.asyncio
async def test_300_huge_line_read_in_bounded_memory( tree ):
    ''' Reading lines of a 64 MB file of one line holds about the size
        limit in memory, not the line.
    '''
    path = tree / 'huge.txt'
    with path.open( 'wb' ) as stream: stream.truncate( 64 * 1024 * 1024 )
    ensembles = await _prepare( ( tree, False ) )
    tracemalloc.start( )
    try:
        result = await _invoke(
            ensembles, 'read_file', path = 'huge.txt', start_line = 1,
            line_count = 1 )
        skipped = await _invoke(
            ensembles, 'read_file', path = 'huge.txt', start_line = 2 )
        _, peak = tracemalloc.get_traced_memory( )
    finally: tracemalloc.stop( )
    assert result.as_text( ) == '[... stopped at the size limit]\n'
    assert skipped.as_text( ) == ''
    assert peak < 32 * 1024 * 1024, peak


@pytest.mark.asyncio
async def test_310_lines_across_pieces( tree ):
    ''' Lines longer than one piece of reading, and a CR LF cut by the
        size of a piece, are counted as lines once.
    '''
    long = 'a' * 65_535
    ( tree / 'long.txt' ).write_bytes(
        f"{long}\r\nsecond\rthird\r\n{long}{long}\nlast".encode( ) )
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke(
        ensembles, 'read_file', path = 'long.txt', start_line = 2,
        line_count = 2 )
    assert result.as_text( ) == 'second\rthird\r\n'
    result = await _invoke(
        ensembles, 'read_file', path = 'long.txt', start_line = 4 )
    assert result.as_text( ) == f"{long}{long}\nlast"
    result = await _invoke(
        ensembles, 'read_file', path = 'long.txt', start_line = 6 )
    assert result.as_text( ) == ''


@pytest.mark.asyncio
async def test_320_text_encodings_only( tree ):
    ''' Names of codecs which are not text encodings are refusals. '''
    ensembles = await _prepare( ( tree, True ) )
    for encoding in ( 'undefined', 'rot13', 'base64', 'no\x00such' ):
        result = await _invoke(
            ensembles, 'read_file', path = 'readme.md', encoding = encoding )
        _assert_refused( result, 'encoding' )
        result = await _invoke(
            ensembles, 'read_file', path = 'readme.md', encoding = encoding,
            start_line = 1 )
        _assert_refused( result, 'encoding' )
        result = await _invoke(
            ensembles, 'write_file', path = 'out.txt', content = 'x',
            encoding = encoding )
        _assert_refused( result, 'encoding' )
    assert not ( tree / 'out.txt' ).exists( )


@pytest.mark.asyncio
async def test_400_pipes_and_devices_refused( tree, tmp_path ):
    ''' Pipes and devices are refused at once: reads never block. '''
    os.mkfifo( tree / 'pipe.txt' )
    ensembles = await _prepare( ( tree, True ) )
    for name, arguments in (
        ( 'read_file', { 'path': 'pipe.txt' } ),
        ( 'read_file', { 'path': 'pipe.txt', 'start_line': 1 } ),
        ( 'edit_file', {
            'path': 'pipe.txt', 'old_text': 'a', 'new_text': 'b' } ),
    ):
        result = await _invoke( ensembles, name, **arguments )
        _assert_refused( result, 'not a regular file' )
    result = await _invoke(
        ensembles, 'search_text', pattern = 'x', glob = '*.txt' )
    assert result.as_text( ) == 'No line matches.'
    result = await _invoke( ensembles, 'get_file_info', path = 'pipe.txt' )
    assert 'kind: other' in result.as_text( )
    ensembles = await _prepare( ( Path( '/dev' ), False ) )
    for path in ( 'null', 'zero', 'tty' ):
        result = await _invoke( ensembles, 'read_file', path = path )
        _assert_refused( result, 'not a regular file' )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'path', [
    '..\\secret.txt',
    'docs\\..\\..\\secret.txt',
    'C:\\secret.txt',
    '\\\\server\\share\\secret.txt',
    'docs\\note.txt',
    'a\x00b',
    '../root/../secret.txt',
    '//etc/passwd',
    '/proc/self/root/etc/passwd',
    'docs/./../../secret.txt',
] )
async def test_500_hostile_paths_refused( tree, path ):
    ''' Windows separators, NUL bytes, '..' and odd absolute forms never
        reach a file outside the root.
    '''
    ensembles = await _prepare( ( tree, True ) )
    for name, arguments in (
        ( 'read_file', { 'path': path } ),
        ( 'write_file', { 'path': path, 'content': 'x' } ),
        ( 'get_file_info', { 'path': path } ),
    ):
        result = await _invoke( ensembles, name, **arguments )
        _assert_refused( result )
    assert ( tree.parent / 'secret.txt' ).read_text( ) == 'top secret\n'
    assert sorted( item.name for item in tree.iterdir( ) ) == [
        'docs', 'readme.md' ]


@pytest.mark.asyncio
async def test_510_links_in_any_component( tree ):
    ''' Links inside the root are followed; links out, anywhere on the
        path, are refused, and listings show nothing of their targets.
    '''
    ( tree / 'docs' / 'up' ).symlink_to( tree.parent )
    ( tree / 'alias' ).symlink_to( tree / 'docs' )
    ( tree / 'loop' ).symlink_to( tree / 'loop' )
    ensembles = await _prepare( ( tree, True ) )
    result = await _invoke( ensembles, 'read_file', path = 'alias/note.txt' )
    assert result.as_text( ).startswith( 'first' )
    for path in ( 'docs/up/secret.txt', 'alias/up/secret.txt', 'loop/x' ):
        result = await _invoke( ensembles, 'read_file', path = path )
        _assert_refused( result )
        result = await _invoke(
            ensembles, 'write_file', path = path, content = 'x' )
        _assert_refused( result )
    result = await _invoke( ensembles, 'list_directory', path = 'docs' )
    assert result.as_text( ) == (
        'note.txt (19 bytes)\nup (link out of the roots)' )
    assert ( tree.parent / 'secret.txt' ).read_text( ) == 'top secret\n'


def test_515_links_swapped_after_check_refused( tree ):
    ''' A path checked before a folder or the file itself was swapped for
        a link out of the root is refused when opened, never followed.
    '''
    from invocables.builtins import files
    from invocables.builtins import io as io_tools
    outside = tree.parent / 'outside'
    outside.mkdir( )
    ( outside / 'note.txt' ).write_text( 'outside\n' )
    settings = io_tools.Settings(
        roots = ( descriptors.Root( path = tree, writable = True ), ) )
    location = io_tools.resolve_location( settings, 'docs/note.txt' )
    ( tree / 'docs' ).rename( tree / 'moved' )
    ( tree / 'docs' ).symlink_to( outside )
    with pytest.raises( OSError ):
        files.open_file( location, 'docs/note.txt' )
    with pytest.raises( exceptions.InvocationRefusal ):
        files.refuse_errors(
            files.write_location, ( 'docs/note.txt', ), location, b'x',
            'docs/note.txt' )
    assert ( outside / 'note.txt' ).read_text( ) == 'outside\n'
    ( tree / 'docs' ).unlink( )
    ( tree / 'moved' ).rename( tree / 'docs' )
    ( tree / 'docs' / 'note.txt' ).unlink( )
    ( tree / 'docs' / 'note.txt' ).symlink_to( outside / 'note.txt' )
    with pytest.raises( exceptions.InvocationRefusal ) as caught:
        files.open_file( location, 'docs/note.txt' )
    assert 'symbolic link' in str( caught.value )


@pytest.mark.asyncio
async def test_520_recursive_patterns_bounded( tree ):
    ''' Repeated '**' count once; more than two others are refused, since
        each walks the whole tree again.
    '''
    ensembles = await _prepare( ( tree, False ) )
    result = await _invoke(
        ensembles, 'search_files', pattern = '**/**/**/**/**/*.txt' )
    assert result.as_text( ) == 'docs/note.txt'
    for name, arguments in (
        ( 'search_files', { 'pattern': '**/a/**/b/**/*.txt' } ),
        ( 'search_text', { 'pattern': 'x', 'glob': '**/a/**/b/**/c' } ),
    ):
        result = await _invoke( ensembles, name, **arguments )
        _assert_refused( result, "more than 2 times" )


@pytest.mark.asyncio
async def test_600_read_only_root_refuses_every_write( tree ):
    ''' Every write tool is refused on a read-only root; nothing changes.
    '''
    ensembles = await _prepare( ( tree, False ) )
    for name, arguments in (
        ( 'write_file', { 'path': 'new.txt', 'content': 'x' } ),
        ( 'write_file', { 'path': 'readme.md', 'content': 'x' } ),
        ( 'edit_file', {
            'path': 'readme.md', 'old_text': 'Title', 'new_text': 'x' } ),
        ( 'move_file', { 'source': 'readme.md', 'destination': 'x.md' } ),
        ( 'create_directory', { 'path': 'new' } ),
    ):
        result = await _invoke( ensembles, name, **arguments )
        _assert_refused( result, 'read-only root' )
    assert sorted( path.name for path in tree.iterdir( ) ) == [
        'docs', 'readme.md' ]
    assert ( tree / 'readme.md' ).read_text( ) == '# Title\n'


@pytest.mark.asyncio
async def test_610_roots_cannot_be_moved( tree, tmp_path ):
    ''' A root, or a folder holding one, cannot be moved away. '''
    other = tmp_path / 'other'
    other.mkdir( )
    ensembles = await _prepare(
        ( tree, True ), ( other, True ), ( tree / 'docs', True ) )
    for source in ( '.', str( other ), 'docs' ):
        result = await _invoke(
            ensembles, 'move_file', source = source,
            destination = str( other / 'moved' ) )
        _assert_refused( result, 'roots cannot be moved' )
    assert ( tree / 'docs' ).is_dir( )


@pytest.mark.asyncio
async def test_700_limits_of_configuration_checked( tree ):
    ''' A limit of the configuration which is not a positive integer
        fails the execution (an error of the application), naming it.
    '''
    ensembles = await _prepare( ( tree, False ), read_size_maximum = 'big' )
    with pytest.raises( exceptions.InvocationExecutionFailure ) as caught:
        await _invoke( ensembles, 'read_file', path = 'readme.md' )
    cause = caught.value.__cause__
    assert isinstance( cause, exceptions.ConfigurationInvalidity )
    assert 'read_size_maximum' in str( cause )


@pytest.mark.asyncio
async def test_710_paths_of_wrong_type_refused( tree, monkeypatch ):
    ''' Without a schema (a plain invoker), a path which is not a string
        is a refusal.
    '''
    from invocables.builtins import io as io_tools
    monkeypatch.chdir( tree )
    invoker = invocables.produce_invoker(
        io_tools.read_file, name = 'read_file',
        arguments_schema = { 'type': 'object' } )
    ensemble = invocables.produce_ensemble( 'files', [ invoker ] )
    result = await _invoke( [ ensemble ], 'read_file', path = 42 )
    _assert_refused( result, 'must be a string' )
