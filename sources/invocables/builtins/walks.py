# SPDX-License-Identifier: Apache-2.0

''' Walks of trees beneath roots, for the entries which match a glob
    pattern, for the ``io`` ensemble.

    Trees are walked without recursion, folder by folder from an open
    folder (see :py:mod:`invocables.builtins.files`), in time linear in
    their size; every step asks the walk's deadline first.
'''


import os as _os

from fnmatch import translate as _translate

import invocables.builtins.__ as __
import invocables.builtins.files as _files
import invocables.exceptions as _exceptions
from ..descriptors import Root as _Root


_Entry: __.typx.TypeAlias = tuple[ str, bool, bool ] # name, folder, link

_RECURSIONS_MAXIMUM = 2 # '**' in one glob pattern


def validate_pattern( pattern: str ) -> str:
    ''' Returns relative glob pattern with repeated '**' collapsed.

        Each '**' walks the whole tree again below each of its matches:
        more than two would make a search cost the size of the tree to a
        power.
    '''
    if not isinstance( pattern, str ) or not pattern or (
        __.Path( pattern ).is_absolute( ) or '..' in __.Path( pattern ).parts
    ):
        shown = (
            _files.quote( pattern ) if isinstance( pattern, str )
            else repr( pattern ) )
        raise _exceptions.InvocationRefusal(
            f"Pattern {shown} must be relative, without '..'." )
    parts: list[ str ] = [ ]
    for part in __.Path( pattern ).parts:
        if part == '**' and parts and parts[ -1 ] == '**': continue
        parts.append( part )
    if parts.count( '**' ) > _RECURSIONS_MAXIMUM:
        raise _exceptions.InvocationRefusal(
            f"Pattern {_files.quote( pattern )} holds '**' more than "
            f"{_RECURSIONS_MAXIMUM} times; use fewer." )
    # A final '/' asks for folders only.
    return '/'.join( parts ) + ( '/' if pattern.endswith( '/' ) else '' )


class TreeWalk:
    ''' Walk of the tree below a folder, for the entries which match a glob
        pattern, in the order of their paths (as ``sorted`` orders paths).

        :py:meth:`survey` yields :py:class:`~invocables.builtins.files.Found`
        entries. The walk holds no recursion of Python: a stack of folders,
        each opened from the one above without following links (so nothing
        is walked out of the roots, even if a folder is swapped for a link
        meanwhile), and each entry costs the same, however deep: linear in
        the size of the tree. ``**`` (any folders, zero or more) does not
        enter symbolic links; a link which matches is found if its target
        is inside the roots. Names starting with a dot are left out unless
        a part of the pattern starts with one. A pattern which ends with
        ``/`` finds folders only.

        Each entry asks the deadline first. At most
        :py:data:`~invocables.builtins.files.ENTRIES_EXAMINED_MAXIMUM`
        entries are read. At most
        :py:data:`~invocables.builtins.files.FOLDERS_OPEN_MAXIMUM` folders
        are held open: deeper, a folder is closed when the walk enters a
        folder below it, and opened again from that folder (``..``) when
        the walk comes back, only if it is still the same folder (device
        and inode). ``truncation`` says what was left out: ``'entries'``
        (too many), ``'changed'``
        (a folder was moved away during the walk).
    '''

    __slots__ = (
        'accept', 'closures', 'deadline', 'directories_only', 'examined',
        'hidden', 'location', 'matchers', 'opened', 'roots',
        'roots_by_path', 'truncation' )

    def __init__(
        self,
        location: _files.Location,
        pattern: str,
        roots: __.cabc.Sequence[ _Root ],
        deadline: _files.Deadline = _files.DEADLINE_NEVER,
    ) -> None:
        parts = [ part for part in pattern.split( '/' ) if part ]
        self.location = location
        self.deadline = deadline
        self.matchers = tuple( map( _produce_matcher, parts ) )
        self.accept = len( parts )
        self.closures = _produce_closures( self.matchers )
        self.directories_only = pattern.endswith( '/' )
        self.hidden = any( part.startswith( '.' ) for part in parts )
        self.roots = tuple( map( _files.resolve_root, roots ) )
        self.roots_by_path = { str( root.path ): root for root in self.roots }
        self.examined = 0
        self.opened = 0 # folders open now
        # Why entries were left out: 'entries', 'changed'.
        self.truncation: str | None = None

    def survey( self ) -> __.cabc.Generator[ _files.Found, None, None ]:
        ''' Yields entries which match, in the order of their paths.

            Close the generator (or exhaust it) to close the folders which
            the walk holds open.
        '''
        folder = _files.open_folder( self.location )
        try: entries = self._read( folder )
        except BaseException:
            _files.close( folder )
            raise
        self.opened = 1
        states = self.closures[ 0 ]
        start = _Frame(
            folder, '', str( self.location.path ), self.location.root,
            states, entries )
        if self.accept in states: # '**' alone: the folder itself too
            yield _files.Found(
                relative = '.', name = '.', folder = folder,
                root = self.location.root, directory = True )
        stack = [ start ]
        try: yield from self._walk( stack )
        finally:
            for frame in stack: self._close( frame )

    def _advance(
        self, states: frozenset[ int ], name: str, folder: bool # noqa: FBT001
    ) -> frozenset[ int ]:
        ''' Returns states of the pattern after an entry. '''
        following: set[ int ] = set( )
        for index in states:
            if index == self.accept: continue
            matcher = self.matchers[ index ]
            if matcher is None:
                if folder: following |= self.closures[ index ]
            elif matcher( name ): following |= self.closures[ index + 1 ]
        return frozenset( following )

    def _descend(
        self,
        stack: list[ '_Frame' ],
        frame: '_Frame',
        name: str,
        states: frozenset[ int ],
    ) -> None:
        ''' Opens a folder below the frame and pushes it on the stack. '''
        if self.truncation == 'entries': return
        try:
            folder = _os.open(
                name, _files.FOLDER_FLAGS, dir_fd = frame.folder )
        except OSError: return # gone, swapped for a link, or not readable
        self.opened += 1
        try: entries = self._read( folder )
        except BaseException as exception:
            _files.close( folder )
            self.opened -= 1
            if isinstance( exception, OSError ): return
            raise
        real = _join( frame.real, name )
        child = _Frame(
            folder, f"{frame.prefix}{name}/", real,
            self.roots_by_path.get( real, frame.root ), states, entries )
        # Deep down, the folder above waits closed: it is opened again
        # from this one when the walk comes back.
        if self.opened > _files.FOLDERS_OPEN_MAXIMUM:
            frame.identity = _identify( frame.folder )
            self._close( frame )
        stack.append( child )

    def _ascend( self, stack: list[ '_Frame' ] ) -> None:
        ''' Pops the frame done; opens the one above again if closed. '''
        frame = stack.pop( )
        above = stack[ -1 ] if stack else None
        if above is not None and above.folder < 0:
            above.folder = self._reopen( frame, above )
            if above.folder < 0: # moved away: nothing more in it
                above.index = len( above.entries )
                self.truncation = self.truncation or 'changed'
            else: self.opened += 1
        self._close( frame )

    def _reopen( self, frame: '_Frame', above: '_Frame' ) -> int:
        ''' Returns folder above frame, opened from it; -1 if it is not
            the folder which the walk left (or frame's is closed).
        '''
        if frame.folder < 0: return -1
        try:
            folder = _os.open(
                '..', _files.FOLDER_FLAGS, dir_fd = frame.folder )
        except OSError: return -1
        try: identity = _identify( folder )
        except OSError: identity = None
        if identity is None or identity != above.identity:
            _files.close( folder )
            return -1
        return folder

    def _close( self, frame: '_Frame' ) -> None:
        if frame.folder < 0: return
        _files.close( frame.folder )
        frame.folder = -1
        self.opened -= 1

    def _produce_found(
        self, frame: '_Frame', name: str, directory: bool, link: bool # noqa: FBT001
    ) -> _files.Found | None:
        relative = frame.prefix + name
        if not link:
            if self.directories_only and not directory: return None
            return _files.Found(
                relative = relative, name = name, folder = frame.folder,
                root = frame.root, directory = directory )
        real = __.Path( _os.path.realpath( _join( frame.real, name ) ) )
        root = _files.access_root( self.roots, real )
        if root is None: return None
        directory = _os.path.isdir( real )
        if self.directories_only and not directory: return None
        return _files.Found(
            relative = relative, name = name, folder = frame.folder,
            root = root, directory = directory,
            location = _files.Location( path = real, root = root ) )

    def _read( self, folder: int ) -> list[ _Entry ]:
        ''' Returns entries of an open folder, sorted by name. '''
        entries: list[ _Entry ] = [ ]
        with _os.scandir( folder ) as scanner:
            for entry in scanner:
                self.deadline.verify( )
                name = entry.name
                if not self.hidden and name.startswith( '.' ): continue
                self.examined += 1
                if self.examined > _files.ENTRIES_EXAMINED_MAXIMUM:
                    self.truncation = 'entries'
                    break
                try:
                    directory = entry.is_dir( follow_symlinks = False )
                    link = entry.is_symlink( )
                except OSError: continue
                entries.append( ( name, directory, link ) )
        entries.sort( )
        return entries

    def _walk(
        self, stack: list[ '_Frame' ]
    ) -> __.cabc.Iterator[ _files.Found ]:
        accept = self.accept
        while stack:
            frame = stack[ -1 ]
            if frame.index >= len( frame.entries ):
                self._ascend( stack )
                continue
            name, directory, link = frame.entries[ frame.index ]
            frame.index += 1
            self.deadline.verify( )
            states = self._advance(
                frame.states, name, directory and not link )
            if not states: continue
            if accept in states:
                found = self._produce_found( frame, name, directory, link )
                if found is not None: yield found
            if link or not directory: continue
            if len( states ) == 1 and accept in states: continue
            self._descend( stack, frame, name, states )


@__.dcls.dataclass( slots = True, eq = False )
class _Frame:
    ''' Folder of a walk: open, with its entries and where the walk is. '''

    folder: int
    prefix: str
    real: str
    root: _Root
    states: frozenset[ int ]
    entries: list[ _Entry ]
    index: int = __.dcls.field( default = 0, init = False )
    identity: tuple[ int, int ] | None = __.dcls.field( # while closed
        default = None, init = False )


def _identify( folder: int ) -> tuple[ int, int ]:
    ''' Returns device and inode of open folder. '''
    status = _os.fstat( folder )
    return status.st_dev, status.st_ino


def _join( folder: str, name: str ) -> str:
    return f"{folder}{name}" if folder.endswith( '/' ) else f"{folder}/{name}"


def _produce_closures(
    matchers: tuple[ __.cabc.Callable[ [ str ], object ] | None, ... ]
) -> tuple[ frozenset[ int ], ... ]:
    ''' Returns, for each state of a pattern, the states it stands for:
        itself and, past each '**' (which may match no folder), the next.
    '''
    # Made from the last state back, then turned: linear in the parts.
    closures: list[ frozenset[ int ] ] = [ frozenset( ( len( matchers ), ) ) ]
    for index in range( len( matchers ) - 1, -1, -1 ):
        closure = frozenset( ( index, ) )
        if matchers[ index ] is None: closure |= closures[ -1 ]
        closures.append( closure )
    return tuple( reversed( closures ) )


def _produce_matcher(
    part: str
) -> __.cabc.Callable[ [ str ], object ] | None:
    ''' Returns matcher of names for a part of a glob pattern; none for
        '**'.
    '''
    if part == '**': return None
    if not any( character in part for character in '*?[' ):
        return part.__eq__
    return __.re.compile( _translate( part ) ).match
