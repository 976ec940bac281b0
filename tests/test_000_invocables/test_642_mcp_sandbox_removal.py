# SPDX-License-Identifier: Apache-2.0

''' Removal of a sandbox's private folder off the event loop.

    A server may leave a hundred thousand files in its private folder: the
    loop keeps running while they go, and nothing is left behind when the
    ensemble disconnects, also when it is cancelled during the removal.
'''


import asyncio
import os

import pytest

import invocables
import invocables.mcp

from . import mcp_support, sandbox_support


_BOUND = 60.0 # proves "does not hang", never the pace of a machine
_FILES = 100_000
# Disconnecting waits for the server's end and the removal about four
# grace periods: generous, as the removal is slow on a busy machine.
_GRACE = 10.0


class _Watch:
    ''' Ticks on the event loop; counts ticks which find a folder part
        removed (changed since it was filled, not yet gone).
    '''

    def __init__( self, many: str ):
        self.many = many
        self.filled = os.stat( many ).st_mtime_ns
        self.during = 0
        self.seen = asyncio.Event( )

    async def tick( self ) -> None:
        while True:
            try: changed = os.stat( self.many ).st_mtime_ns != self.filled
            except FileNotFoundError: return
            if changed:
                self.during += 1
                self.seen.set( )
            await asyncio.sleep( 0.001 )


def _fill( folder: str ) -> str:
    many = os.path.join( folder, 'many' )
    os.mkdir( many )
    for index in range( _FILES ):
        os.close( os.open(
            os.path.join( many, str( index ) ), os.O_CREAT | os.O_WRONLY ) )
    return many


def _produce_escape( ) -> invocables.mcp.ServerEnsemble:
    return invocables.mcp.produce_ensemble(
        'removal',
        command = mcp_support.produce_server_command( 'escape_server.py' ),
        sandbox = True, grace = _GRACE )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_100_loop_runs_during_removal( ):
    ''' While a private folder of a hundred thousand files is removed, the
        event loop runs other tasks; when the ensemble has disconnected,
        the folder is gone.
    '''
    ensemble = _produce_escape( )
    async with ensemble:
        folder = await sandbox_support.access_private_folder( ensemble )
        many = await asyncio.to_thread( _fill, folder )
        watch = _Watch( many )
        ticker = asyncio.create_task( watch.tick( ) )
    assert not os.path.lexists( folder )
    await asyncio.wait_for( ticker, _BOUND )
    assert watch.during > 0


@pytest.mark.slow
@pytest.mark.asyncio
async def test_110_cancelled_during_removal( ):
    ''' A task cancelled, then cancelled again while its private folder is
        being removed, ends only once the folder is gone.
    '''
    ensemble = _produce_escape( )
    ready = asyncio.Event( )
    found: list[ str ] = [ ]
    async def hold( ) -> None:
        async with ensemble:
            folder = await sandbox_support.access_private_folder( ensemble )
            found.extend( (
                folder, await asyncio.to_thread( _fill, folder ) ) )
            ready.set( )
            await asyncio.Event( ).wait( )
    task = asyncio.create_task( hold( ) )
    await asyncio.wait_for( ready.wait( ), _BOUND )
    folder, many = found
    watch = _Watch( many )
    ticker = asyncio.create_task( watch.tick( ) )
    task.cancel( )
    await asyncio.wait_for( watch.seen.wait( ), _BOUND )
    task.cancel( )
    with pytest.raises( asyncio.CancelledError ):
        await asyncio.wait_for( task, _BOUND )
    assert not os.path.lexists( folder )
    await asyncio.wait_for( ticker, _BOUND )
