# SPDX-License-Identifier: Apache-2.0

''' Paths of a sandbox on the host: checked before each start of its
    server, and its private folder removed after.

    A server may write its writable paths between two starts: what it
    leaves there (links, folders without modes) must not change what the
    next start shows it, nor outlive it in the private folder.
'''


import os as _os
import shutil as _shutil

import anyio as _anyio

import invocables.mcp.__ as __
import invocables.exceptions as _exceptions


def remove_folder( folder: str ) -> None:
    ''' Removes private folder, whatever the server left in it.

        The server runs as the application's user: it may have taken the
        modes of its folders away (``chmod 000``), which its owner gives
        back before removing them. Links are never followed.
    '''
    pending = [ folder ]
    while pending:
        path = pending.pop( )
        try:
            if _os.path.islink( path ): continue
            _os.chmod( path, 0o700 )
            with _os.scandir( path ) as entries:
                pending.extend(
                    entry.path for entry in entries
                    if entry.is_dir( follow_symlinks = False ) )
        except OSError: continue
    _shutil.rmtree( folder, ignore_errors = True )


async def remove_folder_async( folder: str ) -> None:
    ''' Removes private folder in a worker thread, off the event loop: a
        folder of many files takes a second or more.

        Cancelled, it still waits for the removal to end before passing
        the cancellation on, so that nothing is left behind.
    '''
    await _anyio.to_thread.run_sync( remove_folder, folder )


def survey_arguments(
    arguments: __.cabc.Sequence[ str ], writes: __.cabc.Sequence[ str ]
) -> tuple[ str, ... ]:
    ''' Returns arguments whose files may show their installation: not
        those in a writable path, which the sandbox shows anyway and whose
        links the server may have planted (a configuration file turned
        into a link to a key, shown at the next start).
    '''
    return tuple(
        argument for argument in arguments
        if not is_within( _os.path.abspath( argument ), writes ) )


def is_within( path: str, folders: __.cabc.Iterable[ str ] ) -> bool:
    ''' Returns whether path is one of folders or lies in one. '''
    return any(
        path == folder or path.startswith( folder.rstrip( '/' ) + '/' )
        for folder in folders )


def validate_paths(
    ensemble: str,
    reads: __.cabc.Sequence[ str ],
    writes: __.cabc.Sequence[ str ],
) -> None:
    ''' Raises configuration error for a path of the sandbox which does
        not exist, or which leads through a link inside a writable path.

        A link there may be the server's: given a readable folder inside
        its writable one, it would replace the folder by a link to
        ``~/.ssh`` and read that at its next start.
    '''
    for label, paths in ( ( 'read', reads ), ( 'write', writes ) ):
        location = f"MCP ensemble {ensemble!r} sandbox {label!r}"
        for path in paths:
            link = _find_link( path, writes )
            if link:
                raise _exceptions.ConfigurationInvalidity(
                    location, f"path {path!r} leads through link {link!r} "
                    "in a writable path, which the server may have made; "
                    "give the path it leads to, or remove the link." )
            if _os.path.exists( path ): continue
            raise _exceptions.ConfigurationInvalidity(
                location,
                f"path {path!r} does not exist; create it or remove it." )


def _find_link( path: str, writes: __.cabc.Sequence[ str ] ) -> str:
    ''' Returns first link on path below a writable path, if any. '''
    for folder in writes:
        if path == folder or not is_within( path, ( folder, ) ): continue
        step = folder
        for part in __.Path( path ).relative_to( folder ).parts:
            step = _os.path.join( step, part )
            if _os.path.islink( step ): return step
    return ''
