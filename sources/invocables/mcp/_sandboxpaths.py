# SPDX-License-Identifier: Apache-2.0

''' Paths of a sandbox on the host: checked before each start of its
    server, the files of its installation read (links, scripts,
    interpreters), and its private folder removed after.

    A server may write its writable paths between two starts: what it
    leaves there (links, folders without modes) must not change what the
    next start shows it, nor outlive it in the private folder.
'''


import os as _os
import shutil as _shutil

import anyio as _anyio

import invocables.mcp.__ as __
import invocables.exceptions as _exceptions


_SUFFIXES_SCRIPTS = frozenset( (
    '.cjs', '.js', '.jar', '.mjs', '.php', '.pl', '.py', '.pyz', '.rb',
    '.sh', '.ts',
) )
_LINKS_MAXIMUM = 40 # as the kernel's own limit on a path's links
_SHEBANG_LENGTH_MAXIMUM = 512


def follow_links( path: str ) -> tuple[ str, ... ]:
    ''' Returns path, each link it leads through, and its real path.

        A virtual environment's ``python`` can name a link outside both
        the environment and the interpreter's installation (a ``bin``
        folder of links, as pyenv's or a CI's); the program runs only if
        each link on the way is shown too.
    '''
    hops = [ path ]
    while len( hops ) <= _LINKS_MAXIMUM and _os.path.islink( hops[ -1 ] ):
        target = _os.readlink( hops[ -1 ] )
        hops.append( _os.path.normpath( _os.path.join(
            _os.path.dirname( hops[ -1 ] ), target ) ) )
    hops.append( _os.path.realpath( path ) )
    return tuple( dict.fromkeys( hops ) )


def is_script( path: str ) -> bool:
    ''' Returns whether file is a script (by suffix or ``#!`` line). '''
    if _os.path.splitext( path )[ 1 ].lower( ) in _SUFFIXES_SCRIPTS:
        return True
    try:
        with open( path, 'rb' ) as stream: return stream.read( 2 ) == b'#!'
    except OSError: return False


def read_interpreter( program: str ) -> str:
    ''' Returns interpreter of a ``#!`` line of program, if any. '''
    try:
        with open( program, 'rb' ) as stream:
            head = stream.read( _SHEBANG_LENGTH_MAXIMUM )
    except OSError: return ''
    if not head.startswith( b'#!' ): return ''
    words = head[ 2 : ].split( b'\n', 1 )[ 0 ].decode(
        'utf-8', errors = 'replace' ).split( )
    if not words: return ''
    if _os.path.basename( words[ 0 ] ) == 'env':
        names = [ word for word in words[ 1 : ] if not word.startswith( '-' ) ]
        if not names: return ''
        return _shutil.which( names[ 0 ] ) or ''
    return words[ 0 ]


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
