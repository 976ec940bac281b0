# SPDX-License-Identifier: Apache-2.0

''' Files beneath roots, opened folder by folder, for the ``io`` ensemble.

    A path is first resolved and checked against the roots; it is then
    opened from its root one name at a time, relative to the folder opened
    before (``openat``), refusing symbolic links on the way
    (``O_NOFOLLOW``). So a link which appears between the check and the
    opening is refused, never followed out of the roots. Files are opened
    without blocking (a pipe or device never hangs a read) and only if
    they are still the regular file which was checked (same inode). POSIX
    only (Linux, macOS).

    Failures which the model can act on raise
    :py:class:`invocables.exceptions.InvocationRefusal`; so do the errors
    of the file system which its paths cause, and recursion too deep for
    Python (:py:func:`refuse_errors`).

    Work whose length the model's arguments decide (lines skipped, entries
    of folders, files searched) goes in steps, each of which asks a
    :py:class:`Deadline` first: a thread never runs on past its call's
    timeout. Trees are walked in :py:mod:`invocables.builtins.walks`.
'''


import codecs as _codecs
import errno as _errno
import heapq as _heapq
import os as _os
import stat as _stat
import threading as _threading

from secrets import token_hex as _token_hex

import invocables.builtins.__ as __
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions
import invocables.execution.workers as _workers
from ..descriptors import Root as _Root


CHUNK_SIZE = 65_536 # characters read at once when reading by lines
ENTRIES_EXAMINED_MAXIMUM = 100_000 # entries of folders one walk reads
FOLDERS_OPEN_MAXIMUM = 64 # folders one walk holds open at once

_PATH_SHOWN_MAXIMUM = 160 # characters of a path repeated in a message
# Text encodings whose decoding takes time quadratic in the size.
_ENCODINGS_REFUSED = frozenset( ( 'punycode', ) )
FOLDER_FLAGS = (
    _os.O_RDONLY | getattr( _os, 'O_DIRECTORY', 0 )
    | getattr( _os, 'O_NOFOLLOW', 0 ) | getattr( _os, 'O_CLOEXEC', 0 ) )
_FILE_FLAGS = (
    _os.O_RDONLY | getattr( _os, 'O_NOFOLLOW', 0 )
    | getattr( _os, 'O_NONBLOCK', 0 ) | getattr( _os, 'O_NOCTTY', 0 )
    | getattr( _os, 'O_CLOEXEC', 0 ) )
# Errors of link(2) where a file system has no hard links.
_LINKS_ABSENT = frozenset( ( _errno.EPERM, _errno.EOPNOTSUPP, _errno.EXDEV ) )
_PERMISSIONS_KEPT = 0o1777 # of a replaced file: not setuid or setgid
_WRITE_FLAGS = (
    _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL
    | getattr( _os, 'O_NOFOLLOW', 0 ) | getattr( _os, 'O_CLOEXEC', 0 ) )

# Errors of the file system which the paths of the model cause; others
# (such as a full disk) fail the execution, so that the application knows.
_errors_refused = __.types.MappingProxyType( {
    _errno.EACCES: "permission denied by the file system",
    _errno.EBUSY: "the file or folder is in use (such as a mount point)",
    _errno.EEXIST: "it exists already",
    _errno.EFBIG: "the content is larger than the file system allows",
    _errno.EILSEQ: "the file system does not accept a character of it",
    _errno.EINVAL: "the file system refuses it as invalid",
    _errno.EISDIR: "it is a folder, not a file",
    _errno.ELOOP: "it passes through a symbolic link which changed while "
        "it was opened, or which loops",
    _errno.EMLINK: "it has too many links",
    _errno.ENAMETOOLONG: "a name in it is longer than the file system "
        "allows; use shorter names",
    _errno.ENODEV: "it is a device, not a file",
    _errno.ENOENT: "it does not exist (or a folder on the way does not); "
        "use list_directory or search_files to find it",
    _errno.ENOTDIR: "a part of it is not a folder",
    _errno.ENOTEMPTY: "it is a folder which is not empty",
    _errno.ENXIO: "it is a device or pipe with nothing behind it",
    _errno.EPERM: "the operation is not permitted by the file system",
    _errno.EROFS: "the file system is read-only",
    _errno.ETXTBSY: "it is a running program",
    _errno.EXDEV: "it cannot be moved to another file system; write a copy "
        "with read_file and write_file instead",
} )


class Deadline:
    ''' When the work of one call must stop: at a time of the monotonic
        clock, or once its caller stopped awaiting it (its timeout passed,
        or it was cancelled: the engine's threads for sync tools tell,
        as :py:func:`~invocables.execution.deadlines.is_expired` asks
        them, and so
        does :py:meth:`withdraw`), whichever comes first.

        Made in the event loop, asked in the tool's thread between steps
        of work (:py:meth:`verify`); never stops anything by itself.
    '''

    __slots__ = ( '_withdrawal', 'name', 'time', 'timeout' )

    def __init__(
        self, timeout: float | None = None, name: str = 'io'
    ) -> None:
        self.name = name
        self.timeout = timeout
        self.time = (
            None if timeout is None else __.time.monotonic( ) + timeout )
        self._withdrawal = _threading.Event( )

    def is_passed( self ) -> bool:
        ''' Returns whether the work must stop now. '''
        if self._withdrawal.is_set( ) or _workers.is_abandoned( ): return True
        return self.time is not None and __.time.monotonic( ) >= self.time

    def verify( self ) -> None:
        ''' Raises :py:class:`invocables.exceptions.InvocationExpiry` if
            the work must stop now.
        '''
        if self.is_passed( ):
            raise _exceptions.InvocationExpiry(
                self.name, self.timeout or 0.0 )

    def withdraw( self ) -> None:
        ''' Tells the work to stop: its caller no longer awaits it. '''
        self._withdrawal.set( )


DEADLINE_NEVER = Deadline( )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class Found:
    ''' Entry of a tree which matched a pattern, found by a walk.

        A plain slotted dataclass, not a frigid object: one is made for
        every match, and frigid objects cost about ten times as much.

        ``relative`` is its path from the folder walked, as the file system
        names it (render it before showing it). For a regular file or a
        folder, ``folder`` is the open folder which holds it (valid until
        the walk goes on) and ``location`` is absent; for a symbolic link
        whose target is inside the roots, ``location`` is that target.
    '''

    relative: str
    name: str
    folder: int
    root: _Root
    directory: bool
    location: __.Absential[ 'Location' ] = __.absent


class Location( __.immut.DataclassObject ):
    ''' Resolved path and the root which holds it. '''

    path: __.Path
    root: _Root

    @property
    def parts( self ) -> tuple[ str, ... ]:
        ''' Returns names from root to path (none for the root itself). '''
        return self.path.relative_to( self.root.path ).parts


def access_root(
    roots: __.cabc.Sequence[ _Root ], path: __.Path
) -> _Root | None:
    ''' Returns most specific root which holds resolved path, if any.

        The root returned has its path resolved.
    '''
    resolved = sorted(
        map( resolve_root, roots ),
        key = lambda root: len( root.path.parts ), reverse = True )
    for root in resolved:
        if path == root.path or root.path in path.parents: return root
    return None


def close( descriptor: int ) -> None:
    ''' Closes file descriptor; nothing is left to do if that fails. '''
    with __.ctxl.suppress( OSError ): _os.close( descriptor )


def decode( data: bytes, encoding: str, path: str ) -> str:
    ''' Returns text of bytes; refuses unknown or wrong encodings. '''
    validate_encoding( encoding )
    try: return data.decode( encoding )
    except UnicodeDecodeError as exception:
        raise _exceptions.InvocationRefusal(
            f"File {quote( path )} is not {encoding} text "
            f"({exception.reason} at byte {exception.start}). If it is text "
            "in another encoding, pass 'encoding' (for example 'latin-1'); "
            "other binary files than images cannot be read." ) from exception
    except UnicodeError as exception:
        raise _exceptions.InvocationRefusal(
            f"File {quote( path )} cannot be decoded as {encoding} "
            f"({exception}); pass another 'encoding'." ) from exception


def encode( text: str, encoding: str ) -> bytes:
    ''' Returns bytes of text; refuses unknown or unfit encodings. '''
    validate_encoding( encoding )
    try: return text.encode( encoding )
    except UnicodeError as exception:
        reason = f"Cannot encode the content as {encoding!r}: {exception}."
        raise _exceptions.InvocationRefusal( reason ) from exception


def open_file(
    location: Location, path: str
) -> tuple[ int, _os.stat_result ]:
    ''' Opens regular file of location for reading; returns its status.

        Refuses folders, links, pipes and devices (never opened in a way
        which could block), files with several hard links unless their
        root allows them, and files which changed between check and open.
    '''
    folder, name = open_parent( location )
    try:
        status = stat_name( folder, name )
        if status is None:
            raise _exceptions.InvocationRefusal(
                f"File {quote( path )} does not exist. Use list_directory "
                "or search_files to find it." )
        _validate_regular( status, path )
        descriptor = _os.open( name, _FILE_FLAGS, dir_fd = folder )
    finally: close( folder )
    try: _validate_opened( location, path, status, _os.fstat( descriptor ) )
    except BaseException:
        close( descriptor )
        raise
    return descriptor, status


def open_folder(
    location: Location, *, create: bool = False, path: str = ''
) -> int:
    ''' Opens folder of location from its root, one name at a time.

        Refuses symbolic links on the way; creates missing folders if
        asked.
    '''
    descriptor = _os.open( location.root.path, FOLDER_FLAGS )
    try:
        for name in location.parts:
            descriptor = _open_subfolder(
                descriptor, name, create = create, path = path )
    except BaseException:
        close( descriptor )
        raise
    return descriptor


def open_parent( location: Location ) -> tuple[ int, str ]:
    ''' Returns open parent folder of location and name within it. '''
    if not location.parts:
        raise _exceptions.InvocationRefusal(
            "'{path}' is a root folder; give a path inside it.".format(
                path = _canisters.render_name( str( location.path ) ) ) )
    parent = Location( path = location.path.parent, root = location.root )
    return open_folder( parent ), location.parts[ -1 ]


def produce_pieces(
    stream: __.typx.TextIO
) -> __.cabc.Iterator[ tuple[ str, bool ] ]:
    ''' Yields pieces of lines, a bounded size each, and whether each ends
        a line.

        A line longer than :py:data:`CHUNK_SIZE` comes in several pieces,
        so that no line is ever held whole in memory.
    '''
    piece = stream.readline( CHUNK_SIZE )
    while piece:
        following = stream.readline( CHUNK_SIZE )
        if piece.endswith( '\r' ) and following == '\n':
            # One '\r\n', which the size cut in two.
            piece += following
            following = stream.readline( CHUNK_SIZE )
        yield piece, piece.endswith( ( '\n', '\r' ) )
        piece = following


def quote( path: str ) -> str:
    ''' Returns representation of path, shortened if very long. '''
    if len( path ) <= _PATH_SHOWN_MAXIMUM: return repr( path )
    half = _PATH_SHOWN_MAXIMUM // 2
    return "{head!r}...{tail!r} ({size} characters)".format(
        head = path[ : half ], tail = path[ -half : ], size = len( path ) )


def read_found( found: Found, maximum: int ) -> bytes | None:
    ''' Returns content of a file found by a walk; none if a read would
        refuse it (a folder, not a regular file, over maximum bytes, more
        than one hard link where its root does not allow them, changed,
        or an error of the file system while reading it).

        A file is opened from the open folder of the walk, without
        following links; a link whose target is inside the roots, from
        its root (:py:func:`open_file`).
    '''
    if found.directory or (
        found.folder < 0 and __.is_absent( found.location )
    ): return None
    if not __.is_absent( found.location ):
        try: descriptor, _ = open_file( found.location, found.relative )
        except ( _exceptions.InvocationRefusal, OSError ): return None
    else:
        try:
            descriptor = _os.open(
                found.name, _FILE_FLAGS, dir_fd = found.folder )
        except OSError: return None
    with _os.fdopen( descriptor, 'rb' ) as stream:
        status = _os.fstat( descriptor )
        if not _stat.S_ISREG( status.st_mode ) or (
            status.st_size > maximum
        ) or ( status.st_nlink > 1 and not found.root.hard_links ):
            return None
        # A file which refuses reads (as /proc/self/mem) is left out.
        try: data = read_bounded( stream, status.st_size, maximum )
        except OSError: return None
    return None if len( data ) > maximum else data


def read_bounded(
    stream: __.typx.BinaryIO, size: int, maximum: int
) -> bytes:
    ''' Returns content of stream, at most maximum bytes and one more (which
        tells that there is more).

        Asks for the size which the file's status gives first, so that a
        small file never costs a buffer of the maximum (a read allocates
        all it asks for); a file which grew, or which claims no size (as in
        ``/proc``), is read on in pieces.
    '''
    wanted = min( size, maximum ) + 1
    data = stream.read( wanted )
    if len( data ) < wanted or len( data ) > maximum: return data
    pieces, total = [ data ], len( data )
    while total <= maximum:
        piece = stream.read( min( CHUNK_SIZE, maximum + 1 - total ) )
        if not piece: break
        pieces.append( piece )
        total += len( piece )
    return b''.join( pieces )


def refuse_errors(
    function: __.cabc.Callable[ ..., __.typx.Any ],
    paths: __.cabc.Sequence[ object ],
    *posargs: __.typx.Any,
) -> __.typx.Any:
    ''' Calls function; errors which the paths cause become refusals.

        Errors of the file system which the model cannot have caused
        (such as a full disk) propagate.
    '''
    try: return function( *posargs )
    except RecursionError as exception:
        raise _exceptions.InvocationRefusal(
            "The call nests deeper than this tool can follow (a path or a "
            "tree too deep, or links which point to links); use a shorter "
            "path, or search a folder further down." ) from exception
    except OSError as exception:
        reason = _errors_refused.get( exception.errno or 0 )
        if reason is None: raise
        shown = ', '.join(
            quote( path ) for path in paths if isinstance( path, str ) )
        raise _exceptions.InvocationRefusal(
            f"Cannot complete the call on {shown or 'its path'}: {reason} "
            f"({exception.strerror})." ) from exception


def resolve_root( root: _Root ) -> _Root:
    ''' Returns root with its path resolved (symbolic links followed). '''
    path = __.Path( _os.path.realpath( root.path ) )
    if path == root.path: return root
    return __.dcls.replace( root, path = path )


def stat_location( location: Location ) -> _os.stat_result:
    ''' Returns status of location itself (a link is not followed). '''
    if not location.parts: return _os.stat( location.root.path )
    folder, name = open_parent( location )
    try: return _os.stat( name, dir_fd = folder, follow_symlinks = False )
    finally: close( folder )


def stat_name( folder: int, name: str ) -> _os.stat_result | None:
    ''' Returns status of name in folder (links not followed), if any. '''
    try: return _os.stat( name, dir_fd = folder, follow_symlinks = False )
    except FileNotFoundError: return None


def validate_encoding( encoding: str ) -> None:
    ''' Refuses names which are not text encodings, and encodings whose
        work grows with the square of the size (punycode).
    '''
    try: information = _codecs.lookup( encoding )
    except ( LookupError, TypeError, ValueError ) as exception:
        raise _exceptions.InvocationRefusal(
            f"Unknown encoding {encoding!r}; use one such as 'utf-8' or "
            "'latin-1'." ) from exception
    if not getattr( information, '_is_text_encoding', True ):
        raise _exceptions.InvocationRefusal(
            f"Unknown encoding {encoding!r}: it is not a text encoding; use "
            "one such as 'utf-8' or 'latin-1'." )
    if information.name in _ENCODINGS_REFUSED:
        raise _exceptions.InvocationRefusal(
            f"Encoding {encoding!r} is for names of domains, not files (its "
            "work grows with the square of the size); use one such as "
            "'utf-8' or 'latin-1'." )


def survey_entries(
    scanner: __.cabc.Iterator[ _os.DirEntry[ str ] ],
    maximum: int,
    deadline: Deadline = DEADLINE_NEVER,
) -> tuple[ list[ _os.DirEntry[ str ] ], int ]:
    ''' Returns first entries by name, at most maximum, and their count.

        Holds no more than maximum entries at once, however large the
        folder; asks the deadline before each entry.
    '''
    count = 0

    def count_entries( ) -> __.cabc.Iterator[ _os.DirEntry[ str ] ]:
        nonlocal count
        for entry in scanner:
            deadline.verify( )
            count += 1
            yield entry

    chosen = _heapq.nsmallest(
        maximum, count_entries( ), key = lambda entry: entry.name )
    return chosen, count


def write_location(
    location: Location, content: bytes, path: str, *, overwrite: bool = True
) -> None:
    ''' Writes content to location atomically, checking what is there.

        A temporary file beside the target is renamed over it: readers see
        the old or the new content. A new file gets the usual permissions
        (0o666 less the umask); a replaced file keeps its permissions
        (but not set-user-ID or set-group-ID, which a write clears).
    '''
    try: folder, name = open_parent( location )
    except FileNotFoundError as exception:
        raise _exceptions.InvocationRefusal(
            f"Folder of {quote( path )} does not exist; create it with "
            "create_directory or pass 'create_parents': true." ) from exception
    try:
        status = stat_name( folder, name )
        if status is not None:
            if _stat.S_ISDIR( status.st_mode ):
                raise _exceptions.InvocationRefusal(
                    f"{quote( path )} is a folder; give the path of a file." )
            if not overwrite: _refuse_existing( path )
        _write_durably(
            folder, name, content, status,
            path = None if overwrite else path )
    finally: close( folder )


def _open_subfolder(
    descriptor: int, name: str, *, create: bool, path: str
) -> int:
    ''' Opens folder name within folder; closes the folder given. '''
    try:
        try: following = _os.open( name, FOLDER_FLAGS, dir_fd = descriptor )
        except FileNotFoundError:
            if not create: raise
            # Made at the same time is fine.
            with __.ctxl.suppress( FileExistsError ):
                _os.mkdir( name, dir_fd = descriptor )
            following = _os.open( name, FOLDER_FLAGS, dir_fd = descriptor )
        except NotADirectoryError as exception:
            if not create: raise
            raise _exceptions.InvocationRefusal(
                f"{quote( path )} exists and is not a folder (or a part of "
                "it is not)." ) from exception
    finally: close( descriptor )
    return following


def _place_new( folder: int, temporary: str, name: str, path: str ) -> bool:
    ''' Links temporary at name, which must not exist; returns whether
        linked (false where the file system has no hard links: the check
        before the write is then the only one).
    '''
    try:
        _os.link(
            temporary, name, src_dir_fd = folder, dst_dir_fd = folder,
            follow_symlinks = False )
    except FileExistsError: _refuse_existing( path )
    except OSError as exception:
        if exception.errno in _LINKS_ABSENT: return False
        raise
    _os.unlink( temporary, dir_fd = folder )
    return True


def _refuse_existing( path: str ) -> __.typx.NoReturn:
    raise _exceptions.InvocationRefusal(
        f"File {quote( path )} exists and 'overwrite' is false." )


def _validate_opened(
    location: Location,
    path: str,
    status: _os.stat_result,
    opened: _os.stat_result,
) -> None:
    if ( opened.st_dev, opened.st_ino ) != (
        status.st_dev, status.st_ino
    ) or not _stat.S_ISREG( opened.st_mode ):
        raise _exceptions.InvocationRefusal(
            f"File {quote( path )} changed while it was opened; try again." )
    if opened.st_nlink > 1 and not location.root.hard_links:
        raise _exceptions.InvocationRefusal(
            f"File {quote( path )} has {opened.st_nlink} hard links, so it "
            "may be the same file as one outside the allowed roots; it is "
            "not read. (Its root may allow such files with "
            "'hard_links = true'.)" )


def _validate_regular( status: _os.stat_result, path: str ) -> None:
    mode = status.st_mode
    if _stat.S_ISDIR( mode ):
        raise _exceptions.InvocationRefusal(
            f"{quote( path )} is a folder, not a file; use list_directory." )
    if _stat.S_ISLNK( mode ):
        raise _exceptions.InvocationRefusal(
            f"{quote( path )} became a symbolic link while it was opened; "
            "try again." )
    if not _stat.S_ISREG( mode ):
        raise _exceptions.InvocationRefusal(
            f"{quote( path )} is not a regular file (a device, socket or "
            "pipe)." )


def _write_durably(
    folder: int,
    name: str,
    content: bytes,
    status: _os.stat_result | None,
    path: str | None = None,
) -> None:
    ''' Writes content to name in folder atomically and durably: a
        temporary file, synced, then renamed over the target.

        With the path of a file which must not exist (``overwrite`` false),
        the temporary file is linked at name instead, which fails if a
        file came there meanwhile: no check then write, which another
        writer could slip between.
    '''
    temporary = ".invocables.{token}.tmp".format( token = _token_hex( 6 ) )
    descriptor = _os.open( temporary, _WRITE_FLAGS, 0o666, dir_fd = folder )
    try:
        with _os.fdopen( descriptor, 'wb' ) as stream:
            stream.write( content )
            stream.flush( )
            if status is not None and _stat.S_ISREG( status.st_mode ):
                # Without set-user-ID and set-group-ID, as a write clears
                # them: new content never runs as the owner of the old.
                _os.chmod(
                    stream.fileno( ), status.st_mode & _PERMISSIONS_KEPT )
            _os.fsync( stream.fileno( ) )
        if path is None or not _place_new( folder, temporary, name, path ):
            _os.replace(
                temporary, name, src_dir_fd = folder, dst_dir_fd = folder )
    except BaseException:
        with __.ctxl.suppress( OSError ): # never made, or gone already
            _os.unlink( temporary, dir_fd = folder )
        raise
