# SPDX-License-Identifier: Apache-2.0

''' Files of OAuth tokens (FileTokenStorage): atomic and exclusive writes
    under unique names, never through a link, mode 0600, safe under
    writers in several processes, and a damaged file read as no tokens.
'''


import asyncio
import json
import logging
import multiprocessing
import os
import stat

import pytest

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from invocables.mcp import authorization


pytestmark = pytest.mark.asyncio
_URL = 'http://127.0.0.1:9/mcp'
_WRITERS = 4
_WRITES = 200


def _produce_storage( directory ):
    return authorization.FileTokenStorage( _URL, directory )


def _produce_token( value ):
    return OAuthToken(
        access_token = value, token_type = 'Bearer', expires_in = 3600,
        refresh_token = f"rt-{value}" )


def _produce_client( value ):
    return OAuthClientInformationFull(
        client_id = value, redirect_uris = [ 'http://127.0.0.1:1/callback' ] )


def _survey_leftovers( directory, path ):
    return sorted(
        entry.name for entry in directory.iterdir( ) if entry != path )


async def test_100_mode_and_folder( tmp_path ):
    ''' The token file has mode 0600 whatever the umask, and a folder the
        storage makes has mode 0700; tokens written are read back.
    '''
    directory = tmp_path / 'state' / 'tokens'
    storage = _produce_storage( directory )
    mask = os.umask( 0 )
    try: await storage.set_tokens( _produce_token( 'at-mode' ) )
    finally: os.umask( mask )
    assert stat.S_IMODE( storage.path.stat( ).st_mode ) == 0o600
    assert stat.S_IMODE( directory.stat( ).st_mode ) == 0o700
    assert ( await storage.get_tokens( ) ).access_token == 'at-mode'
    assert _survey_leftovers( directory, storage.path ) == [ ]


async def test_110_existing_file_mode_tightened( tmp_path ):
    ''' A token file readable by others (an older write) is replaced by
        one of mode 0600 at the next write.
    '''
    storage = _produce_storage( tmp_path )
    storage.path.write_text( '{}' )
    storage.path.chmod( 0o644 )
    await storage.set_client_info( _produce_client( 'client-1' ) )
    assert stat.S_IMODE( storage.path.stat( ).st_mode ) == 0o600
    assert ( await storage.get_client_info( ) ).client_id == 'client-1'


async def test_200_link_at_temporary_name( tmp_path ):
    ''' A link planted at the former fixed temporary name is not written
        through: its target is untouched, and the token file is a regular
        file.

        Before, the write opened ``<digest>.tmp`` following the link
        (truncating and writing its target), then renamed the link itself
        over the token file.
    '''
    directory = tmp_path / 'tokens'
    directory.mkdir( )
    victim = tmp_path / 'victim.txt'
    victim.write_text( 'precious' )
    storage = _produce_storage( directory )
    planted = storage.path.with_suffix( '.tmp' )
    planted.symlink_to( victim )
    await storage.set_tokens( _produce_token( 'at-safe' ) )
    assert victim.read_text( ) == 'precious'
    assert not storage.path.is_symlink( )
    assert storage.path.is_file( )
    assert ( await storage.get_tokens( ) ).access_token == 'at-safe'


async def test_210_link_at_token_file( tmp_path, caplog ):
    ''' A link at the token file's path is not followed: reading it gives
        no tokens (with a warning naming the file), and a write replaces
        the link, leaving its target untouched.
    '''
    directory = tmp_path / 'tokens'
    directory.mkdir( )
    victim = tmp_path / 'planted.json'
    planted = { 'tokens': { 'access_token': 'at-planted',
                            'token_type': 'Bearer' } }
    victim.write_text( json.dumps( planted ) )
    storage = _produce_storage( directory )
    storage.path.symlink_to( victim )
    with caplog.at_level( logging.WARNING ):
        assert await storage.get_tokens( ) is None
    assert any(
        str( storage.path ) in record.getMessage( )
        and 'link' in record.getMessage( ) for record in caplog.records )
    await storage.set_tokens( _produce_token( 'at-own' ) )
    assert json.loads( victim.read_text( ) ) == planted
    assert not storage.path.is_symlink( )
    assert ( await storage.get_tokens( ) ).access_token == 'at-own'


async def test_220_link_at_lock_file( tmp_path ):
    ''' A link planted at the lock file's path is not written through. '''
    victim = tmp_path / 'victim.txt'
    victim.write_text( 'precious' )
    directory = tmp_path / 'tokens'
    directory.mkdir( )
    storage = _produce_storage( directory )
    lock = storage.path.with_name( f"{storage.path.name}.lock" )
    lock.symlink_to( victim )
    await storage.set_tokens( _produce_token( 'at-locked' ) )
    assert victim.read_text( ) == 'precious'
    assert ( await storage.get_tokens( ) ).access_token == 'at-locked'
    assert _survey_leftovers( directory, storage.path ) == [ ]


@pytest.mark.parametrize( 'content', (
    b'{"tokens": {"access_token": "at-cut', # a write cut short
    b'\xff\xfe not even text',
    b'[ "a list" ]',
    b'{"tokens": {"access_token": 42}, "client": {"client_id": []}}',
) )
async def test_300_damaged_file( tmp_path, caplog, content ):
    ''' A token file which is not JSON, not an object or holds invalid
        records means no tokens, with a warning naming the file; the next
        write replaces it with a valid one.
    '''
    storage = _produce_storage( tmp_path )
    storage.path.write_bytes( content )
    with caplog.at_level( logging.WARNING ):
        assert await storage.get_tokens( ) is None
        assert await storage.get_client_info( ) is None
    assert any(
        str( storage.path ) in record.getMessage( )
        for record in caplog.records )
    await storage.set_tokens( _produce_token( 'at-fresh' ) )
    stored = json.loads( storage.path.read_text( ) )
    assert stored[ 'tokens' ][ 'access_token' ] == 'at-fresh'


async def test_310_not_a_regular_file( tmp_path, caplog ):
    ''' A FIFO or a folder at the token file's path means no tokens, with
        a warning, without blocking.
    '''
    fifo = _produce_storage( tmp_path / 'fifo' )
    fifo.path.parent.mkdir( )
    os.mkfifo( fifo.path )
    folder = _produce_storage( tmp_path / 'folder' )
    folder.path.mkdir( parents = True )
    with caplog.at_level( logging.WARNING ):
        for storage in ( fifo, folder ):
            tokens = await asyncio.wait_for( storage.get_tokens( ), 10 )
            assert tokens is None
    for storage in ( fifo, folder ):
        assert any(
            str( storage.path ) in record.getMessage( )
            for record in caplog.records )


async def test_320_folder_not_writable( tmp_path, caplog ):
    ''' A token folder which cannot be made (a file is in its place): a
        write warns, naming the file, and does not fail; nothing is read.
    '''
    blocker = tmp_path / 'blocker'
    blocker.write_text( 'a file, not a folder' )
    storage = _produce_storage( blocker / 'tokens' )
    with caplog.at_level( logging.WARNING ):
        await storage.set_tokens( _produce_token( 'at-memory' ) )
    assert any(
        str( storage.path ) in record.getMessage( )
        and 'cannot be written' in record.getMessage( )
        for record in caplog.records )
    assert await storage.get_tokens( ) is None
    assert blocker.read_text( ) == 'a file, not a folder'


async def test_330_concurrent_in_process( tmp_path ):
    ''' Two storages of one server in one process, writing tokens and
        registrations at once (threads): no write undoes the other's
        record, and nothing but the token file remains.
    '''
    tokens = _produce_storage( tmp_path )
    clients = _produce_storage( tmp_path )
    await asyncio.gather( *(
        call for count in range( 25 ) for call in (
            tokens.set_tokens( _produce_token( f"at-{count}" ) ),
            clients.set_client_info( _produce_client( f"c-{count}" ) ) ) ) )
    stored = json.loads( tokens.path.read_text( ) )
    assert stored[ 'tokens' ][ 'access_token' ].startswith( 'at-' )
    assert stored[ 'client' ][ 'client_id' ].startswith( 'c-' )
    assert _survey_leftovers( tmp_path, tokens.path ) == [ ]


def _write_concurrently( directory, index, start ):
    ''' Writes tokens (even writers) or client registrations (odd ones)
        many times, from a process of its own.
    '''
    storage = _produce_storage( directory )

    async def write( ):
        for count in range( _WRITES ):
            value = f"v-{index}-{count}"
            if index % 2: await storage.set_client_info(
                _produce_client( value ) )
            else: await storage.set_tokens( _produce_token( value ) )

    start.wait( 120 ) # all at once, once imported
    asyncio.run( write( ) )


@pytest.mark.slow
async def test_400_concurrent_processes( tmp_path ):
    ''' Writers in several processes at once all succeed; the file is then
        valid JSON holding the last token of one writer and the last
        registration of another (no write undid another's record), and no
        temporary or lock file remains.

        Before, writers shared one temporary name: one renamed it away
        under another, which failed with FileNotFoundError.
    '''
    directory = tmp_path / 'tokens'
    context = multiprocessing.get_context( 'spawn' )
    start = context.Barrier( _WRITERS )
    processes = [
        context.Process(
            target = _write_concurrently, args = ( directory, index, start ) )
        for index in range( _WRITERS ) ]
    for process in processes: process.start( )
    loop = asyncio.get_running_loop( )
    for process in processes:
        await loop.run_in_executor( None, process.join, 120 )
    assert [ process.exitcode for process in processes ] == [ 0 ] * _WRITERS
    storage = _produce_storage( directory )
    stored = json.loads( storage.path.read_text( ) )
    last = _WRITES - 1
    tokens = { f"v-{index}-{last}" for index in range( 0, _WRITERS, 2 ) }
    clients = { f"v-{index}-{last}" for index in range( 1, _WRITERS, 2 ) }
    assert stored[ 'tokens' ][ 'access_token' ] in tokens
    assert stored[ 'client' ][ 'client_id' ] in clients
    assert _survey_leftovers( directory, storage.path ) == [ ]
    assert stat.S_IMODE( storage.path.stat( ).st_mode ) == 0o600
