# SPDX-License-Identifier: Apache-2.0

''' Built-in io ensemble against deep trees, long chains of links, huge
    files and links to move: recursion becomes the model's error result,
    never a failure of the batch; work stops at the call's timeout, so
    that its thread serves the next call; a link is moved itself.
'''


import json
import os
import subprocess
import sys

import pytest

import invocables
from invocables import descriptors
from invocables.builtins import files
from invocables.builtins import walks
from invocables.builtins import io as io_tools


async def _prepare( root, writable = True ):
    return await descriptors.prepare_ensembles( {
        'ensembles': [ { 'builtin': 'io' } ],
        'roots': [ { 'path': str( root ), 'writable': writable } ],
    }, connect = True )


async def _invoke( ensembles, name, **arguments ):
    ''' Runs one call under the default (fail-fast) policy. '''
    invocation = invocables.InvocationCanister(
        identifier = 'call', name = name, arguments = arguments )
    results = await invocables.execute_invocations( [ invocation ], ensembles )
    return results[ 0 ]


def _make_chain( root, depth, name = 'd' ):
    ''' Makes folders nested depth levels below root, one in another,
        deeper than a path may be long; returns parts of the deepest.
    '''
    folder = os.open( root, os.O_RDONLY | os.O_DIRECTORY )
    try:
        for _ in range( depth ):
            os.mkdir( name, dir_fd = folder )
            inner = os.open( name, os.O_RDONLY | os.O_DIRECTORY,
                dir_fd = folder )
            os.close( folder )
            folder = inner
        descriptor = os.open(
            'leaf.txt', os.O_WRONLY | os.O_CREAT, dir_fd = folder )
        os.write( descriptor, b'needle\n' )
        os.close( descriptor )
    finally: os.close( folder )
    return [ name ] * depth


def _remove_tree( path ):
    ''' Removes a tree of any depth without recursion (which pytest's
        removal of temporary folders would exceed), holding one folder
        open: down to a folder without folders, then up by '..'.
    '''
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    folder = os.open( path, flags )
    names = [ ]
    try:
        while True:
            inner = None
            with os.scandir( folder ) as scanner:
                for entry in scanner:
                    if entry.is_dir( follow_symlinks = False ):
                        inner = entry.name
                        break
                    os.unlink( entry.name, dir_fd = folder )
            if inner is not None:
                following = os.open( inner, flags, dir_fd = folder )
                os.close( folder )
                folder = following
                names.append( inner )
                continue
            if not names: break
            following = os.open( '..', flags, dir_fd = folder )
            os.close( folder )
            folder = following
            os.rmdir( names.pop( ), dir_fd = folder )
    finally: os.close( folder )
    os.rmdir( path )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_100_deep_folders_searched( tmp_path ):
    ''' A tree 1200 folders deep made by create_directory, and one 1100
        deep (beyond Python's recursion and the length of a path), are
        searched: no RecursionError fails the batch, the leaf is found.
    '''
    tree = tmp_path / 'tree'
    tree.mkdir( )
    try: await _search_deep_folders( tree )
    finally: _remove_tree( tree )


async def _search_deep_folders( tree ):
    ensembles = await _prepare( tree )
    result = await _invoke(
        ensembles, 'create_directory', path = 'a/' * 1200 )
    assert not result.is_error( ), result
    result = await _invoke( ensembles, 'search_files', pattern = '**/leaf.txt' )
    assert result.as_text( ) == "No path matches '**/leaf.txt'."
    parts = _make_chain( tree, 1100, 'dddd' ) # 5500 characters
    relative = '/'.join( [ *parts, 'leaf.txt' ] )
    result = await _invoke( ensembles, 'search_files', pattern = '**/leaf.txt' )
    assert result.as_text( ) == relative
    result = await _invoke( ensembles, 'search_text', pattern = 'needle' )
    assert result.as_text( ) == f"{relative}:1: needle"
    result = await _invoke(
        ensembles, 'search_files', pattern = 'dddd/*/dddd' )
    assert result.as_text( ) == 'dddd/dddd/dddd'


@pytest.mark.asyncio
async def test_110_recursion_of_links_is_refusal( tmp_path ):
    ''' A chain of 1500 symbolic links, which Python resolves by recursion
        (up to 3.12), gives every tool an error result or its answer,
        never a failure of the batch.
    '''
    ( tmp_path / 'target.txt' ).write_text( 'x' )
    previous = 'target.txt'
    for index in range( 1500 ):
        os.symlink( previous, tmp_path / f"link{index}" )
        previous = f"link{index}"
    ensembles = await _prepare( tmp_path )
    for name, arguments in (
        ( 'read_file', { 'path': previous } ),
        ( 'get_file_info', { 'path': previous } ),
        ( 'list_directory', { 'path': previous } ),
        ( 'search_files', { 'path': previous, 'pattern': '*' } ),
        ( 'write_file', { 'path': previous, 'content': 'y' } ),
    ):
        result = await _invoke( ensembles, name, **arguments )
        if result.is_error( ):
            assert result.error.genus is invocables.FaultGenera.Refusal
    assert ( tmp_path / 'target.txt' ).read_text( ) in ( 'x', 'y' )


def test_120_walk_holds_few_folders_open( tmp_path ):
    ''' A walk down a tree whose every level holds a folder and then a
        file holds at most its maximum of folders open, and finds every
        file, deeper than that maximum.
    '''
    depth = files.FOLDERS_OPEN_MAXIMUM * 3
    folder = tmp_path / 'tree'
    folder.mkdir( )
    for _ in range( depth ):
        folder = folder / 'a'
        folder.mkdir( )
        ( folder.parent / 'z.txt' ).write_text( 'needle\n' )
    root = descriptors.Root( path = tmp_path )
    location = files.Location( path = tmp_path, root = root )
    walk = walks.TreeWalk( location, '**/z.txt', ( root, ) )
    found = [ ]
    opened = 0
    try:
        for entry in walk.survey( ):
            opened = max( opened, walk.opened )
            found.append( entry.relative )
            assert files.read_found( entry, 100 ) == b'needle\n'
    finally: _remove_tree( tmp_path / 'tree' )
    assert len( found ) == depth
    assert found == sorted( found, key = lambda path: path.split( '/' ) )
    assert opened <= files.FOLDERS_OPEN_MAXIMUM + 1
    assert walk.truncation is None
    assert walk.opened == 0


def test_130_walk_leaves_out_folders_moved_away( tmp_path ):
    ''' A folder closed while the walk is deeper, and moved away before
        the walk comes back, is not followed to its new place: the walk
        leaves out the rest of the folders above it which it closed, and
        says so.
    '''
    depth = files.FOLDERS_OPEN_MAXIMUM * 2
    folder = tmp_path / 'tree'
    folder.mkdir( )
    for _ in range( depth ):
        folder = folder / 'a'
        folder.mkdir( )
        ( folder.parent / 'z.txt' ).write_text( 'needle\n' )
    root = descriptors.Root( path = tmp_path )
    location = files.Location( path = tmp_path / 'tree', root = root )
    walk = walks.TreeWalk( location, '**/z.txt', ( root, ) )
    walking = walk.survey( )
    try:
        first = next( walking ) # the deepest file: every folder entered
        assert first.relative.count( 'a/' ) == depth - 1
        # Deeper than the folders held open: closed, and moved away.
        middle = tmp_path / 'tree' / ( 'a/' * 100 ).strip( '/' )
        os.rename( middle, tmp_path / 'moved' ) # moved, and replaced
        os.mkdir( middle )
        found = [ entry.relative for entry in walking ]
    finally:
        walking.close( )
        _remove_tree( tmp_path / 'tree' )
        _remove_tree( tmp_path / 'moved' )
    assert walk.truncation == 'changed'
    assert len( found ) < depth - 1
    assert found[ -1 ] == 'z.txt'
    assert walk.opened == 0


def test_140_walk_stops_at_deadline( tmp_path ):
    ''' A walk asks the deadline at each entry: withdrawn, it stops with
        an expiry, and closes the folders it holds.
    '''
    for index in range( 50 ): ( tmp_path / f"f{index}" ).mkdir( )
    root = descriptors.Root( path = tmp_path )
    location = files.Location( path = tmp_path, root = root )
    deadline = files.Deadline( 30.0, 'search_files' )
    walk = walks.TreeWalk( location, '**/*', ( root, ), deadline )
    walking = walk.survey( )
    next( walking )
    deadline.withdraw( )
    with pytest.raises( invocables.exceptions.InvocationExpiry ):
        next( walking )
    assert files.Deadline( 0.0 ).is_passed( )
    assert not files.DEADLINE_NEVER.is_passed( )


def test_200_read_past_end_stops_at_timeout( tmp_path ):
    ''' Reading from a line past the end of a huge file stops at the
        call's timeout: with one thread for sync tools, the next call
        runs in it (checked in a process of its own).
    '''
    with ( tmp_path / 'huge.txt' ).open( 'wb' ) as stream:
        stream.truncate( 1 << 40 ) # sparse: a terabyte of one line
    ( tmp_path / 'small.txt' ).write_text( 'small\n' )
    script = (
        "import asyncio, json, os, sys\n"
        "import invocables\n"
        "from invocables.builtins import io as io_tools\n"
        "async def main( ):\n"
        "    os.chdir( sys.argv[ 1 ] )\n"
        "    invoker = invocables.produce_invoker(\n"
        "        io_tools.read_file, name = 'read_file',\n"
        "        arguments_schema = { 'type': 'object' } )\n"
        "    ensemble = invocables.produce_ensemble(\n"
        "        'files', [ invoker ], configuration = { 'timeout': 1 } )\n"
        "    outcomes = [ ]\n"
        "    for arguments in (\n"
        "        { 'path': 'huge.txt', 'start_line': 10 ** 12 },\n"
        "        { 'path': 'small.txt' },\n"
        "    ):\n"
        "        call = invocables.InvocationCanister(\n"
        "            identifier = 'c', name = 'read_file',\n"
        "            arguments = arguments )\n"
        "        results = await invocables.execute_invocations(\n"
        "            [ call ], [ ensemble ] )\n"
        "        result = results[ 0 ]\n"
        "        outcomes.append(\n"
        "            result.error.genus.value if result.is_error( )\n"
        "            else result.as_text( ) )\n"
        "    print( json.dumps( outcomes ) )\n"
        "asyncio.run( main( ) )\n" )
    environment = dict( os.environ, INVOCABLES_THREADS_MAXIMUM = '1' )
    try:
        process = subprocess.run(
            [ sys.executable, '-c', script, str( tmp_path ) ],
            capture_output = True, text = True, timeout = 120,
            check = False, env = environment )
    finally: ( tmp_path / 'huge.txt' ).unlink( )
    assert process.returncode == 0, process.stderr
    assert json.loads( process.stdout ) == [ 'timeout', 'small\n' ]


def test_210_lines_skipped_ask_deadline( tmp_path ):
    ''' Lines skipped before the first line asked for stop the read at a
        deadline which has passed.
    '''
    ( tmp_path / 'lines.txt' ).write_text( 'line\n' * 10 )
    settings = io_tools.Settings(
        roots = ( descriptors.Root( path = tmp_path ), ),
        deadline = files.Deadline( 0.0, 'read_file' ) )
    with pytest.raises( invocables.exceptions.InvocationExpiry ):
        io_tools.read_file.implementation(
            settings, { 'path': 'lines.txt', 'start_line': 5 } )


@pytest.mark.asyncio
async def test_300_move_link_itself( tmp_path ):
    ''' Moving a symbolic link moves the link, never its target: links to
        a file, to a folder, and dangling ones.
    '''
    ( tmp_path / 'docs' ).mkdir( )
    ( tmp_path / 'docs' / 'note.txt' ).write_text( 'note' )
    ( tmp_path / 'file-link' ).symlink_to( 'docs/note.txt' )
    ( tmp_path / 'folder-link' ).symlink_to( 'docs' )
    ( tmp_path / 'dangling' ).symlink_to( 'nowhere' )
    ensembles = await _prepare( tmp_path )
    for source in ( 'file-link', 'folder-link', 'dangling' ):
        result = await _invoke(
            ensembles, 'move_file', source = source,
            destination = f"docs/{source}-moved" )
        assert not result.is_error( ), result
        moved = tmp_path / 'docs' / f"{source}-moved"
        assert moved.is_symlink( )
        assert not os.path.lexists( tmp_path / source )
    assert ( tmp_path / 'docs' / 'note.txt' ).read_text( ) == 'note'
    assert os.readlink( tmp_path / 'docs' / 'file-link-moved' ) == (
        'docs/note.txt' )
    result = await _invoke(
        ensembles, 'move_file', source = 'docs/note.txt',
        destination = 'docs/dangling-moved' )
    assert result.error.genus is invocables.FaultGenera.Refusal
    assert 'exists already' in result.error.message
