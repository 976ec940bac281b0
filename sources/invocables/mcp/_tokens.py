# SPDX-License-Identifier: Apache-2.0

''' Files of OAuth tokens: read without following links, written
    atomically under unique names, by one writer at a time.

    A writer holds an advisory lock (``fcntl.flock``) on a lock file beside
    the token file while it reads the records, changes one and replaces the
    file; it removes the lock file before it lets the lock go. Where
    ``fcntl`` is absent (Windows), writes are still atomic (``os.replace``
    of a unique temporary file): a reader sees the old or the new file,
    never a part of one; but two processes which change different records
    of one file at the same moment may lose one change (the last writer
    wins), and that server is authorized again later.
'''


import errno as _errno
import os as _os
import stat as _stat
import sys as _sys
import tempfile as _tempfile

import invocables.mcp.__ as __


if _sys.platform == 'win32': _fcntl = None
else: import fcntl as _fcntl


Records: __.typx.TypeAlias = dict[ str, __.typx.Any ]

_DIRECTORY_MODE = 0o700
_FILE_MODE = 0o600
_FLAGS_READ = (
    _os.O_RDONLY | getattr( _os, 'O_NOFOLLOW', 0 )
    # A FIFO planted at the path does not block the open.
    | getattr( _os, 'O_NONBLOCK', 0 ) | getattr( _os, 'O_CLOEXEC', 0 ) )
_FLAGS_LOCK = (
    _os.O_RDWR | _os.O_CREAT | getattr( _os, 'O_NOFOLLOW', 0 )
    | getattr( _os, 'O_CLOEXEC', 0 ) )
_SIZE_MAXIMUM = 1 << 20
_scribe = __.produce_scribe( __name__ )


def retrieve_records( path: __.Path ) -> Records:
    ''' Returns records of a token file.

        Returns no records, with a warning naming the file, for a file
        which is a symbolic link (never followed), not a regular file,
        unreadable, too large or not a JSON object; none, silently, for an
        absent file.
    '''
    try: content = _read_file( path )
    except FileNotFoundError: return { }
    except OSError as exception:
        _scribe.warning(
            "Token file %s is ignored: %s.", path, _describe_flaw(
                path, exception ) )
        return { }
    if content is None: return { }
    try: data = __.json.loads( content )
    except ( ValueError, RecursionError ):
        _scribe.warning(
            "Token file %s is not JSON; it is ignored (no tokens).", path )
        return { }
    if not isinstance( data, dict ):
        _scribe.warning(
            "Token file %s holds no JSON object; it is ignored "
            "(no tokens).", path )
        return { }
    return __.typx.cast( Records, data )


def update_records( path: __.Path, key: str, value: __.typx.Any ) -> None:
    ''' Sets one record of a token file, keeping the others.

        The folder is made (mode 0700) if absent. Under the lock, the
        records are read again, changed and written to a unique temporary
        file beside the token file (mode 0600, flushed to disk), which then
        replaces it. A link at the path is replaced, never followed.
    '''
    _prepare_directory( path.parent )
    with _hold_lock( path ):
        records = retrieve_records( path )
        records[ key ] = value
        _write_file( path, __.json.dumps( records ).encode( ) )


def _acquire_lock( location: __.Path ) -> int:
    ''' Returns descriptor of the lock file, locked exclusively.

        A lock file removed or replaced while this process waited belongs
        to no one any more: the lock is taken again on the new one. A link
        planted at its path is removed, never followed.
    '''
    fcntl = __.typx.cast( __.typx.Any, _fcntl )
    while True:
        try: descriptor = _os.open( location, _FLAGS_LOCK, _FILE_MODE )
        except OSError:
            if not _os.path.islink( location ): raise
            _scribe.warning(
                "Lock file %s is a symbolic link; it is removed.", location )
            _remove_quietly( location )
            continue
        fcntl.flock( descriptor, fcntl.LOCK_EX )
        held = _os.fstat( descriptor )
        try: current = _os.stat( location, follow_symlinks = False )
        except FileNotFoundError: current = None
        if current is not None and (
            ( current.st_dev, current.st_ino ) == (
                held.st_dev, held.st_ino )
        ): return descriptor
        _os.close( descriptor )


def _describe_flaw( path: __.Path, exception: OSError ) -> str:
    if _os.path.islink( path ):
        return "it is a symbolic link, which is never followed (no tokens)"
    if exception.errno == _errno.EFBIG:
        return "it is larger than a token file can be (no tokens)"
    return "it cannot be read ({name}) (no tokens)".format(
        name = type( exception ).__name__ )


@__.ctxl.contextmanager
def _hold_lock( path: __.Path ) -> __.cabc.Generator[ None, None, None ]:
    ''' Holds the advisory lock of a token file, where ``fcntl`` exists. '''
    if _fcntl is None:
        yield
        return
    location = path.with_name( f"{path.name}.lock" )
    descriptor = _acquire_lock( location )
    try: yield
    finally:
        # Removed while held: a waiter on this file sees it gone and
        # locks the next one; no lock file outlives its writer.
        try: _remove_quietly( location )
        finally: _os.close( descriptor )


def _prepare_directory( directory: __.Path ) -> None:
    if directory.is_dir( ): return
    directory.mkdir( mode = _DIRECTORY_MODE, parents = True, exist_ok = True )
    _os.chmod( directory, _DIRECTORY_MODE )


def _read_file( path: __.Path ) -> bytes | None:
    ''' Returns content of a regular file; None for other kinds (warned).

        Raises OSError for a link at the path (where ``O_NOFOLLOW`` is
        missing, a link is looked for first).
    '''
    if not hasattr( _os, 'O_NOFOLLOW' ) and _os.path.islink( path ):
        raise OSError( _errno.ELOOP, "Symbolic link.", str( path ) )
    descriptor = _os.open( path, _FLAGS_READ )
    with open( descriptor, 'rb', closefd = True ) as stream:
        if not _stat.S_ISREG( _os.fstat( descriptor ).st_mode ):
            _scribe.warning(
                "Token file %s is not a regular file; it is ignored "
                "(no tokens).", path )
            return None
        content = stream.read( _SIZE_MAXIMUM + 1 )
    if len( content ) > _SIZE_MAXIMUM:
        raise OSError( _errno.EFBIG, "Too large.", str( path ) )
    return content


def _remove_quietly( path: __.Path ) -> None:
    try: _os.unlink( path )
    except FileNotFoundError: return


def _sync_directory( directory: __.Path ) -> None:
    ''' Flushes a replacement to disk, where folders can be opened. '''
    try: descriptor = _os.open( directory, _os.O_RDONLY )
    except OSError: return
    try: _os.fsync( descriptor )
    except OSError: pass
    finally: _os.close( descriptor )


def _write_file( path: __.Path, content: bytes ) -> None:
    ''' Replaces file atomically by a unique temporary file beside it.

        ``mkstemp`` creates the temporary file exclusively (``O_EXCL``,
        never through a link) with mode 0600.
    '''
    descriptor, name = _tempfile.mkstemp(
        dir = path.parent, prefix = f".{path.name}.", suffix = '.tmp' )
    try:
        with open( descriptor, 'wb', closefd = True ) as stream:
            if hasattr( _os, 'fchmod' ):
                _os.fchmod( descriptor, _FILE_MODE )
            stream.write( content )
            stream.flush( )
            _os.fsync( descriptor )
        _os.replace( name, path )
    except BaseException:
        _remove_quietly( __.Path( name ) )
        raise
    _sync_directory( path.parent )
