# SPDX-License-Identifier: Apache-2.0

''' Built-in io ensemble under hostile input which earlier rounds left
    out: text which no file name can hold, files whose lines other
    programs count differently, searches whose result would be far larger
    than the size limit, encodings and paths or patterns whose work grows
    with the square of their size, limits beyond any size, and files which
    claim no size or fail their reads.
'''


import os
import stat
import tempfile

from pathlib import Path

import pytest

from invocables import exceptions
from invocables.builtins import files

from . import io_support


@pytest.fixture
def root( tmp_path: Path ) -> Path:
    ''' Writable root with one file. '''
    root = tmp_path / 'root'
    root.mkdir( )
    ( root / 'note.txt' ).write_text( 'first\nsecond\n' )
    return root


@pytest.mark.asyncio
@pytest.mark.parametrize( 'name, arguments', [
    ( 'move_file', { 'source': 'note.txt', 'destination': '\ud800' } ),
    ( 'move_file', { 'source': '\ud800', 'destination': 'moved.txt' } ),
    ( 'move_file', {
        'source': 'note.txt', 'destination': 'a\udbff\udbff.txt' } ),
] )
async def test_100_lone_surrogates_in_paths_refused(
    root: Path, name: str, arguments: dict[ str, str ]
) -> None:
    ''' A path which holds a lone surrogate (which JSON can carry, but no
        file name can hold) is a refusal, whichever name of a path it is
        and whether or not the tool follows links there; nothing moves.
    '''
    ensembles = await io_support.prepare( ( root, True ) )
    result = await io_support.invoke( ensembles, name, **arguments )
    io_support.assert_refused( result, 'not valid' )
    assert sorted( path.name for path in root.iterdir( ) ) == [ 'note.txt' ]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    'pattern', [ '\ud800', '(?<=a)\udfff', 'a[\ud800]' ] )
async def test_110_lone_surrogates_in_expressions_searched(
    root: Path, pattern: str
) -> None:
    ''' A regular expression which holds a lone surrogate is searched as
        any other (no text read from UTF-8 holds one): no failure of the
        execution.
    '''
    ensembles = await io_support.prepare( ( root, False ) )
    result = await io_support.invoke(
        ensembles, 'search_text', pattern = pattern )
    assert not result.is_error( ), result
    assert result.as_text( ) == 'No line matches.'


@pytest.mark.asyncio
async def test_200_search_numbers_lines_as_read_file( root: Path ) -> None:
    ''' search_text numbers lines as read_file's start_line counts them
        (breaks at '\\n', '\\r\\n' and '\\r'), even in files which hold
        form feeds, other separators of str.splitlines, or old Mac breaks:
        the line which a search names is the line which read_file returns.
    '''
    ( root / 'odd.txt' ).write_text(
        'one\ntwo\x0cthree\nfour\u2028five\x1c\x85six\r\nseven\rtarget\n',
        newline = '' )
    ensembles = await io_support.prepare( ( root, False ) )
    result = await io_support.invoke(
        ensembles, 'search_text', pattern = 'target' )
    assert result.as_text( ) == 'odd.txt:5: target'
    result = await io_support.invoke(
        ensembles, 'read_file', path = 'odd.txt', start_line = 5,
        line_count = 1 )
    assert result.as_text( ) == 'target\n'
    result = await io_support.invoke(
        ensembles, 'search_text', pattern = 'five' )
    assert result.as_text( ) == 'odd.txt:3: four\u2028five\x1c\x85six'


@pytest.mark.asyncio
async def test_210_search_result_within_size_limit( root: Path ) -> None:
    ''' Lines which search_text returns, together, stay within the size
        limit of reads, however many large files match; the result says
        that it stopped there.
    '''
    for index in range( 6 ):
        ( root / f"long{index}.txt" ).write_text( 'm' * 900 + '\n' )
    ensembles = await io_support.prepare(
        ( root, False ), read_size_maximum = 2000 )
    result = await io_support.invoke( ensembles, 'search_text', pattern = 'm' )
    text = result.as_text( )
    assert len( text ) <= 2000 + 100
    assert text.count( 'm' * 900 ) == 2
    assert text.endswith( 'stopped at the size limit; search a narrower '
        'pattern, or read the file by lines]' )
    result = await io_support.invoke(
        ensembles, 'search_text', pattern = 'm', glob = 'long0.txt' )
    assert result.as_text( ) == 'long0.txt:1: ' + 'm' * 900


@pytest.mark.asyncio
@pytest.mark.parametrize( 'encoding', [ 'punycode', 'PunyCode', 'PUNYCODE' ] )
async def test_300_quadratic_encodings_refused(
    root: Path, encoding: str
) -> None:
    ''' Punycode, whose decoding takes time quadratic in the size (a file
        of the size limit would hold a thread for minutes, past any
        deadline), is refused in every spelling, by every tool which
        takes an encoding; nothing is written.
    '''
    ( root / 'puny.txt' ).write_bytes( b'abc-9d' )
    ensembles = await io_support.prepare( ( root, True ) )
    for name, arguments in (
        ( 'read_file', { 'path': 'puny.txt' } ),
        ( 'read_file', { 'path': 'puny.txt', 'start_line': 1 } ),
        ( 'edit_file', {
            'path': 'puny.txt', 'old_text': 'a', 'new_text': 'b' } ),
        ( 'write_file', { 'path': 'new.txt', 'content': 'x\u00e9' } ),
    ):
        result = await io_support.invoke(
            ensembles, name, encoding = encoding, **arguments )
        io_support.assert_refused( result, 'names of domains' )
    assert sorted( path.name for path in root.iterdir( ) ) == [
        'note.txt', 'puny.txt' ]
    assert ( root / 'puny.txt' ).read_bytes( ) == b'abc-9d'


@pytest.mark.asyncio
async def test_400_large_read_limit_costs_no_buffer( root: Path ) -> None:
    ''' A large size limit (32 TiB) costs a read no buffer of that size:
        small files are read and searched as with the default limit.
    '''
    ensembles = await io_support.prepare(
        ( root, False ), read_size_maximum = 2 ** 45 )
    result = await io_support.invoke(
        ensembles, 'read_file', path = 'note.txt' )
    assert result.as_text( ) == 'first\nsecond\n'
    result = await io_support.invoke(
        ensembles, 'search_text', pattern = 'sec' )
    assert result.as_text( ) == 'note.txt:2: second'


@pytest.mark.asyncio
@pytest.mark.parametrize( 'key', [
    'read_size_maximum', 'entries_maximum', 'matches_maximum' ] )
async def test_410_limits_beyond_maximum_refused(
    root: Path, key: str
) -> None:
    ''' A limit of the configuration larger than any size Python can
        index fails the execution as an invalid configuration naming it,
        never with an error of Python.
    '''
    ensembles = await io_support.prepare(
        ( root, False ), **{ key: 10 ** 20 } )
    with pytest.raises( exceptions.InvocationExecutionFailure ) as caught:
        await io_support.invoke( ensembles, 'read_file', path = 'note.txt' )
    cause = caught.value.__cause__
    assert isinstance( cause, exceptions.ConfigurationInvalidity )
    assert key in str( cause )
    assert 'at most' in str( cause )


@pytest.mark.asyncio
async def test_420_files_which_claim_no_size_read_whole( ) -> None:
    ''' Files which claim size 0 but hold text (as in /proc) are read
        whole, and refused past the size limit.
    '''
    status = Path( '/proc/self/status' ).read_text( )
    assert len( status ) > 100
    ensembles = await io_support.prepare( ( Path( '/proc/self' ), False ) )
    result = await io_support.invoke( ensembles, 'read_file', path = 'status' )
    assert result.as_text( ).startswith( 'Name:' )
    assert 'State:' in result.as_text( )
    ensembles = await io_support.prepare(
        ( Path( '/proc/self' ), False ), read_size_maximum = 100 )
    result = await io_support.invoke( ensembles, 'read_file', path = 'status' )
    io_support.assert_refused( result, 'more than the limit of 100' )


@pytest.mark.asyncio
async def test_430_search_leaves_out_files_which_fail_reads( ) -> None:
    ''' A file whose read fails (/proc/self/mem: input/output error,
        /proc/self/clear_refs: invalid argument) is left out of a search,
        which goes on and finds the lines of the others.
    '''
    ensembles = await io_support.prepare( ( Path( '/proc/self' ), False ) )
    result = await io_support.invoke(
        ensembles, 'search_text', pattern = '^Name:', glob = '*' )
    assert result.as_text( ).startswith( 'status:1: Name:' )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'name, arguments', [
    ( 'create_directory', { 'path': 'a/' * 3000 } ),
    ( 'write_file', {
        'path': 'a/' * 3000 + 'x', 'content': 'x', 'create_parents': True } ),
    ( 'read_file', { 'path': 'a/' * 200_000 + 'x' } ),
    ( 'move_file', { 'source': 'note.txt', 'destination': 'b/' * 3000 } ),
    ( 'search_files', { 'path': '\u00e9/' * 1500, 'pattern': '*' } ),
] )
async def test_500_paths_over_path_maximum_refused(
    root: Path, name: str, arguments: dict[ str, object ]
) -> None:
    ''' A path longer than the file system allows (4096 bytes, counted
        as UTF-8) is refused before it is resolved, whose time grows with
        the square of its length, and before anything is made: the
        folders of a path too long to open are never created one by one.
    '''
    ensembles = await io_support.prepare( ( root, True ) )
    result = await io_support.invoke( ensembles, name, **arguments )
    io_support.assert_refused(
        result, 'longer than the file system allows (4096)' )
    assert sorted( path.name for path in root.iterdir( ) ) == [ 'note.txt' ]


@pytest.mark.asyncio
@pytest.mark.slow
async def test_600_globs_of_many_names_linear( root: Path ) -> None:
    ''' A glob pattern of a million names (2 MB) is prepared in time
        linear in its size, well within the call's timeout (the thread
        which prepares it asks no deadline), and the result repeats only
        a shortened pattern.
    '''
    pattern = 'a/' * 1_000_000 + '*'
    ensembles = await io_support.prepare( ( root, False ) )
    result = await io_support.invoke(
        ensembles, 'search_files', pattern = pattern )
    assert not result.is_error( ), result
    text = result.as_text( )
    assert text.startswith( "No path matches 'a/a/" )
    assert '(2000001 characters)' in text
    assert len( text ) < 1000


@pytest.mark.asyncio
@pytest.mark.parametrize( 'name, arguments', [
    ( 'write_file', { 'path': 'tool', 'content': '#!/bin/sh\necho 2\n' } ),
    ( 'edit_file', { 'path': 'tool', 'old_text': '1', 'new_text': '2' } ),
] )
async def test_700_writes_clear_set_user_and_group_ids(
    root: Path, name: str, arguments: dict[ str, str ]
) -> None:
    ''' A file written over keeps its permissions but loses set-user-ID
        and set-group-ID, as a write clears them: content which a model
        wrote never runs as the owner of the program it replaced.
    '''
    tool = root / 'tool'
    tool.write_text( '#!/bin/sh\necho 1\n' )
    tool.chmod( 0o6755 )
    ensembles = await io_support.prepare( ( root, True ) )
    result = await io_support.invoke( ensembles, name, **arguments )
    assert not result.is_error( ), result
    assert tool.read_text( ) == '#!/bin/sh\necho 2\n'
    assert stat.S_IMODE( tool.stat( ).st_mode ) == 0o755



@pytest.mark.asyncio
async def test_710_new_files_never_written_over( root: Path ) -> None:
    ''' A write with ``overwrite`` false never replaces a file: the new
        file is linked in place, which fails if a file came there after the
        check (another writer between check and write), and then nothing
        is left behind; a new file is written whole.
    '''
    ensembles = await io_support.prepare( ( root, True ) )
    result = await io_support.invoke(
        ensembles, 'write_file', path = 'new.txt', content = 'fresh',
        overwrite = False )
    assert not result.is_error( ), result
    assert ( root / 'new.txt' ).read_text( ) == 'fresh'
    # The file which came after the check: the last step meets it.
    folder = os.open( root, os.O_RDONLY | os.O_DIRECTORY )
    try:
        with pytest.raises( exceptions.InvocationRefusal ) as caught:
            files._write_durably( # pyright: ignore[reportPrivateUsage]
                folder, 'note.txt', b'model', None, path = 'note.txt' )
    finally: os.close( folder )
    assert "'overwrite' is false" in str( caught.value )
    assert ( root / 'note.txt' ).read_text( ) == 'first\nsecond\n'
    assert sorted( path.name for path in root.iterdir( ) ) == [
        'new.txt', 'note.txt' ]

@pytest.mark.asyncio
@pytest.mark.parametrize( 'seconds', [ 10 ** 15, -( 10 ** 14 ) ] )
async def test_800_times_outside_calendar_shown( seconds: int ) -> None:
    ''' A time of change beyond the years of the calendar (which tmpfs
        keeps) is shown in seconds by get_file_info, never an error.
    '''
    with tempfile.TemporaryDirectory( dir = '/dev/shm' ) as folder:
        root = Path( folder )
        ( root / 'old.txt' ).write_text( 'x' )
        os.utime( root / 'old.txt', ( 0, seconds ) )
        ensembles = await io_support.prepare( ( root, False ) )
        result = await io_support.invoke(
            ensembles, 'get_file_info', path = 'old.txt' )
        assert not result.is_error( ), result
        assert (
            f"modified: {seconds} seconds from 1970 (outside the calendar)"
            in result.as_text( ) )
