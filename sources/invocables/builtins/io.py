# SPDX-License-Identifier: Apache-2.0

''' Implementation of the built-in ``io`` ensemble: files within roots.

    Every path is resolved (``..`` and symbolic links included) and must
    fall inside one of the roots of the configuration; writes need a
    writable root and are atomic (a temporary file in the same folder,
    then a rename). Without roots, the current directory is the one root,
    read-only.

    Files are then opened folder by folder from their root, refusing
    symbolic links on the way, and read only if they are still the regular
    file which was checked: a link swapped in between is refused, and a
    pipe or device never blocks a read. Regular files with more than one
    hard link may be the same file as one outside the roots: they are read
    only where their root allows it (``hard_links = true``). POSIX only.

    Failures the model can act on, including the errors of the file system
    which its paths cause (missing file, name too long, not a folder,
    permission denied) and trees or paths too deep to follow, raise
    :py:class:`invocables.exceptions.InvocationRefusal`, so that the model
    receives an error result; they never fail the execution.

    Each tool runs in a thread, in steps (pieces of lines, entries of
    folders, files, lines) which each ask the call's deadline first: at its
    timeout, or once its caller stops awaiting it, a tool stops within a
    step, and its thread is free for the next call. Searches walk a tree in
    time linear in its size.

    Names of files and paths in results (listings, searches, messages) go
    through :py:func:`invocables.canisters.render_name`: on one line, with
    line breaks, other control characters and bytes which are not UTF-8
    shown as escapes (``bad\\xff.txt``), so that no name forges a line
    of a listing or makes a result which cannot be sent.

    The tools reach the roots and the configuration of their ensemble
    through ``context.invoker`` (a descriptor invoker).
'''


import errno as _errno
import io as _io
import os as _os
import stat as _stat

from datetime import datetime as _datetime
from datetime import timezone as _timezone

import invocables.builtins.__ as __
import invocables.builtins.files as _files
import invocables.builtins.roots as _roots
import invocables.builtins.walks as _walks
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.schemata as _schemata
import invocables.execution.workers as _workers
from .files import Location as Location
from .roots import ENTRIES_MAXIMUM_DEFAULT as ENTRIES_MAXIMUM_DEFAULT
from .roots import MATCHES_MAXIMUM_DEFAULT as MATCHES_MAXIMUM_DEFAULT
from .roots import READ_SIZE_MAXIMUM_DEFAULT as READ_SIZE_MAXIMUM_DEFAULT
from .roots import Settings as Settings
from .roots import resolve_location as resolve_location


PATHS_MAXIMUM = _files.ENTRIES_EXAMINED_MAXIMUM # entries one search reads
SEARCH_TIMEOUT = 5.0 # for expressions which RE2 cannot run

_LINES_BETWEEN_CHECKS = 256 # lines searched between checks of the deadline

_render_name = _canisters.render_name
_PATH_KEYS = ( 'path', 'source', 'destination' )
_image_signatures = (
    ( b'\x89PNG\r\n\x1a\n', 'image/png' ),
    ( b'\xff\xd8\xff', 'image/jpeg' ),
    ( b'GIF87a', 'image/gif' ),
    ( b'GIF89a', 'image/gif' ),
)


_Result = __.typx.TypeVar( '_Result' )


def _threaded(
    function: __.cabc.Callable[ [ Settings, __.Arguments ], _Result ]
) -> __.cabc.Callable[
    [ _invokers.Context, __.Arguments ], __.cabc.Awaitable[ _Result ]
]:
    ''' Returns tool which runs function in a thread, with its docstring.

        Errors which the tool's paths cause are refusals. The thread's work
        stops at the deadline of the call, or as soon as the call is
        cancelled (its timeout passed) and its thread abandoned: the
        thread is then free for the next call.
    '''

    async def tool(
        context: _invokers.Context, arguments: __.Arguments
    ) -> _Result:
        settings = Settings.from_context( context )
        paths = tuple( arguments.get( key ) for key in _PATH_KEYS )
        return await _workers.execute_in_thread(
            _files.refuse_errors, function, paths, settings, arguments )

    tool.__name__ = tool.__qualname__ = function.__name__
    tool.__doc__ = function.__doc__
    # The function itself, for callers with settings of their own.
    setattr( tool, 'implementation', function ) # noqa: B010
    return tool


@_threaded
def create_directory( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Creates folder, with missing parents. '''
    path = arguments[ 'path' ]
    location = resolve_location( settings, path, writable = True )
    _files.close( _files.open_folder( location, create = True, path = path ) )
    return "Folder {path} exists.".format(
        path = _render_name( str( location.path ) ) )


@_threaded
def edit_file( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Replaces one exact passage of text file, atomically. '''
    path = arguments[ 'path' ]
    location = resolve_location( settings, path, writable = True )
    encoding = arguments.get( 'encoding', 'utf-8' )
    text = _files.decode(
        _read_bytes( settings, location, path, 'edited' ), encoding, path )
    old, new = arguments[ 'old_text' ], arguments[ 'new_text' ]
    count = text.count( old ) if old else 0
    if count != 1:
        raise _exceptions.InvocationRefusal(
            "The passage to replace occurs {count} times in {path}; it "
            "must occur exactly once. {hint}".format(
                count = count, path = _files.quote( path ),
                hint = (
                    "Read the file again and copy the passage exactly."
                    if count == 0 else
                    "Include more of the surrounding text." ) ) )
    content = _files.encode( text.replace( old, new, 1 ), encoding )
    _files.write_location( location, content, path )
    return "Replaced 1 passage in {path}.".format(
        path = _render_name( str( location.path ) ) )


@_threaded
def get_file_info( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Returns kind, size, time of change and permissions of path. '''
    path = arguments[ 'path' ]
    location = resolve_location( settings, path )
    status = _files.stat_location( location )
    kind = (
        'folder' if _stat.S_ISDIR( status.st_mode )
        else 'file' if _stat.S_ISREG( status.st_mode ) else 'other' )
    modified = _render_time( status.st_mtime )
    permissions = _stat.filemode( status.st_mode )
    return '\n'.join( (
        "path: {path}".format( path = _render_name( str( location.path ) ) ),
        f"kind: {kind}",
        f"size: {status.st_size} bytes",
        f"modified: {modified}",
        f"permissions: {permissions}",
        f"links: {status.st_nlink}",
        "writable root: {writable}".format(
            writable = 'yes' if location.root.writable else 'no' ),
    ) )


@_threaded
def list_directory( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Lists entries of folder: folders end with a slash. '''
    path = arguments.get( 'path', '.' )
    location = resolve_location( settings, path )
    try: descriptor = _files.open_folder( location )
    except OSError as exception:
        if exception.errno not in ( _errno.ENOENT, _errno.ENOTDIR ): raise
        raise _exceptions.InvocationRefusal(
            f"{_files.quote( path )} is not a folder (or does not exist)."
        ) from exception
    try:
        with _os.scandir( descriptor ) as scanner:
            entries, count = _files.survey_entries(
                scanner, settings.entries_maximum, settings.deadline )
            lines = [
                _render_entry( settings, location, entry )
                for entry in entries ]
    finally: _files.close( descriptor )
    if count > settings.entries_maximum:
        lines.append( "... and {count} more entries.".format(
            count = count - settings.entries_maximum ) )
    if not lines:
        return "Folder {path} is empty.".format(
            path = _render_name( str( location.path ) ) )
    return '\n'.join( lines )


async def list_roots(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Lists roots and whether they are writable. '''
    settings = Settings.from_context( context )
    return '\n'.join(
        "{path} ({mode})".format(
            path = _render_name( str( root.path ) ),
            mode = 'writable' if root.writable else 'read-only' )
        for root in settings.roots )


@_threaded
def move_file( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Moves or renames file or folder within writable roots. '''
    # A link is moved itself, as rename(2) does, never its target.
    source = resolve_location(
        settings, arguments[ 'source' ], writable = True, following = False )
    target = resolve_location(
        settings, arguments[ 'destination' ], writable = True,
        following = False )
    _validate_move( settings, source, target, arguments[ 'source' ] )
    source_folder, source_name = _files.open_parent( source )
    try:
        try: target_folder, target_name = _files.open_parent( target )
        except FileNotFoundError as exception:
            raise _exceptions.InvocationRefusal(
                "Folder of {destination} does not exist; create it with "
                "create_directory.".format(
                    destination = _files.quote( arguments[ 'destination' ] )
                ) ) from exception
        try:
            _validate_names(
                source_folder, source_name, target_folder, target_name,
                arguments )
            _os.rename(
                source_name, target_name,
                src_dir_fd = source_folder, dst_dir_fd = target_folder )
        finally: _files.close( target_folder )
    finally: _files.close( source_folder )
    return "Moved {source} to {target}.".format(
        source = _render_name( str( source.path ) ),
        target = _render_name( str( target.path ) ) )


@_threaded
def read_file(
    settings: Settings, arguments: __.Arguments
) -> str | _canisters.ImageContent:
    ''' Returns text of file, or image for image files. '''
    path = arguments[ 'path' ]
    location = resolve_location( settings, path )
    encoding = arguments.get( 'encoding', 'utf-8' )
    start, count = arguments.get( 'start_line' ), arguments.get( 'line_count' )
    if start is not None or count is not None:
        _files.validate_encoding( encoding )
        descriptor, _ = _files.open_file( location, path )
        return _read_lines(
            settings, descriptor, encoding, start or 1, count )
    data = _read_bytes( settings, location, path, 'read' )
    media_type = _access_image_type( data )
    if media_type is not None:
        return _canisters.ImageContent( data = data, media_type = media_type )
    return _files.decode( data, encoding, path )


@_threaded
def search_files( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Lists paths which match glob pattern, below folder. '''
    pattern = arguments[ 'pattern' ]
    location = resolve_location( settings, arguments.get( 'path', '.' ) )
    walk = _produce_walk( settings, location, pattern )
    lines: list[ str ] = [ ]
    count = 0
    with __.ctxl.closing( walk.survey( ) ) as entries:
        for found in entries:
            count += 1
            if count > settings.entries_maximum: continue
            lines.append( _render_name( found.relative ) )
    if count > settings.entries_maximum:
        lines.append( "... and {count} more paths.".format(
            count = count - settings.entries_maximum ) )
    if not count: lines.append( f"No path matches {_files.quote( pattern )}." )
    lines.extend( _describe_truncation( walk ) )
    return '\n'.join( lines )


@_threaded
def search_text( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Lists lines which match regular expression, in files below folder.

        The expression runs on RE2, in linear time; one which RE2 cannot
        run (lookarounds, backreferences) runs on the ``regex`` package for
        at most :py:data:`SEARCH_TIMEOUT` seconds in all.
    '''
    pattern = arguments[ 'pattern' ]
    try: expression = _schemata.produce_expression( pattern )
    except _exceptions.PatternInvalidity as exception:
        reason = (
            "Pattern is not a valid regular expression: "
            f"{exception.reason}." )
        raise _exceptions.InvocationRefusal( reason ) from exception
    deadline = __.time.monotonic( ) + SEARCH_TIMEOUT
    try: return _search_lines( settings, arguments, expression, deadline )
    except _exceptions.PatternInterruption as exception:
        raise _exceptions.InvocationRefusal(
            f"Pattern {_files.quote( expression.pattern )} took longer "
            f"than {SEARCH_TIMEOUT} seconds to match; simplify it (no "
            "lookarounds or backreferences) or search fewer files." ) from (
                exception )


@_threaded
def write_file( settings: Settings, arguments: __.Arguments ) -> str:
    ''' Writes text to file atomically. '''
    path = arguments[ 'path' ]
    location = resolve_location( settings, path, writable = True )
    content = _files.encode(
        arguments[ 'content' ], arguments.get( 'encoding', 'utf-8' ) )
    if arguments.get( 'create_parents', False ):
        parent = Location( path = location.path.parent, root = location.root )
        _files.close(
            _files.open_folder( parent, create = True, path = path ) )
    _files.write_location(
        location, content, path,
        overwrite = arguments.get( 'overwrite', True ) )
    return "Wrote {size} bytes to {path}.".format(
        size = len( content ), path = _render_name( str( location.path ) ) )


def _describe_truncation( walk: _walks.TreeWalk ) -> list[ str ]:
    ''' Returns lines which say what a search left out, if anything. '''
    match walk.truncation:
        case 'entries':
            return [
                "[... the search stopped after reading {count} entries of "
                "folders; search a folder further down, or use a narrower "
                "pattern]".format( count = _files.ENTRIES_EXAMINED_MAXIMUM ) ]
        case 'changed':
            return [
                "[... folders were moved while the search ran, and what "
                "they held was left out; search again]" ]
        case _: return [ ]


def _access_image_type( data: bytes ) -> str | None:
    for signature, media_type in _image_signatures:
        if data.startswith( signature ): return media_type
    if data[ : 4 ] == b'RIFF' and data[ 8 : 12 ] == b'WEBP':
        return 'image/webp'
    return None


def _produce_walk(
    settings: Settings, location: Location, pattern: str
) -> _walks.TreeWalk:
    if not _os.path.isdir( location.path ):
        raise _exceptions.InvocationRefusal(
            "{path} is not a folder.".format(
                path = _files.quote( str( location.path ) ) ) )
    pattern = _walks.validate_pattern( pattern )
    return _walks.TreeWalk(
        location, pattern, settings.roots, settings.deadline )


def _read_bytes(
    settings: Settings, location: Location, path: str, action: str
) -> bytes:
    ''' Returns content of file, refusing files over the size limit. '''
    descriptor, status = _files.open_file( location, path )
    with _os.fdopen( descriptor, 'rb' ) as stream:
        _validate_size( settings, status.st_size, path, action )
        data = _files.read_bounded(
            stream, status.st_size, settings.read_size_maximum )
    _validate_size( settings, len( data ), path, action )
    return data


def _read_lines(
    settings: Settings,
    descriptor: int,
    encoding: str,
    start: int,
    count: int | None,
) -> str:
    ''' Returns lines from start, within count and the size limit.

        Reads pieces of a bounded size: a huge line is never held whole.
    '''
    lines: list[ str ] = [ ]
    line: list[ str ] = [ ]
    total, number = 0, 1
    stream = _io.TextIOWrapper(
        _os.fdopen( descriptor, 'rb' ), encoding = encoding, newline = '' )
    deadline = settings.deadline
    with stream:
        try:
            for piece, ends in _files.produce_pieces( stream ):
                deadline.verify( ) # lines skipped cost time too
                taken = number >= start
                if taken:
                    total += len( piece )
                    if total > settings.read_size_maximum:
                        lines.append( "[... stopped at the size limit]\n" )
                        return ''.join( lines )
                    line.append( piece )
                if not ends: continue
                number += 1
                if not taken: continue
                lines.append( ''.join( line ) )
                line.clear( )
                if count is not None and len( lines ) >= count: break
        except UnicodeError as exception:
            raise _exceptions.InvocationRefusal(
                f"File is not {encoding} text ({exception}); pass "
                "'encoding' (for example 'latin-1')." ) from exception
    lines.append( ''.join( line ) )
    return ''.join( lines )


def _read_found_text(
    settings: Settings, found: _files.Found
) -> str | None:
    ''' Returns UTF-8 text of file for searches; none if it cannot be read.

        Files which a read would refuse (outside the roots, several hard
        links, not regular, too large, not UTF-8) are left out.
    '''
    data = _files.read_found( found, settings.read_size_maximum )
    if data is None: return None
    try: return data.decode( 'utf-8' )
    except UnicodeDecodeError: return None


def _render_entry(
    settings: Settings, location: Location, entry: _os.DirEntry[ str ]
) -> str:
    ''' Renders entry: folders end with a slash, files show their size.

        A link is shown as its target when that is inside the roots;
        nothing of a target outside the roots is shown.
    '''
    name = _render_name( entry.name )
    try:
        if entry.is_symlink( ):
            real = _roots.locate( settings, location.path / entry.name )
            if real is None: return f"{name} (link out of the roots)"
            status = real.path.stat( )
        else: status = entry.stat( follow_symlinks = False )
    except OSError: return f"{name} (unreadable or broken link)"
    if _stat.S_ISDIR( status.st_mode ): return f"{name}/"
    return f"{name} ({status.st_size} bytes)"


def _render_time( seconds: float ) -> str:
    ''' Returns time as ISO 8601, or in seconds if outside the calendar
        (a file system may hold times of any year).
    '''
    try:
        return _datetime.fromtimestamp( seconds, _timezone.utc ).isoformat(
            timespec = 'seconds' )
    except ( OverflowError, ValueError, OSError ):
        return f"{seconds:.0f} seconds from 1970 (outside the calendar)"


def _search_lines(
    settings: Settings,
    arguments: __.Arguments,
    expression: _schemata.Expression,
    deadline: float,
) -> str:
    location = resolve_location( settings, arguments.get( 'path', '.' ) )
    walk = _produce_walk( settings, location, arguments.get( 'glob', '**/*' ) )
    lines: list[ str ] = [ ]
    size = 0 # characters of the result, at most the size limit
    with __.ctxl.closing( walk.survey( ) ) as entries:
        for found in entries:
            text = _read_found_text( settings, found )
            if text is None: continue
            relative = _render_name( found.relative )
            for number, line in enumerate( _split_lines( text ), start = 1 ):
                if not number % _LINES_BETWEEN_CHECKS:
                    settings.deadline.verify( )
                if not expression.search( line, deadline ): continue
                if len( lines ) >= settings.matches_maximum:
                    lines.append( "[... more matches not shown]" )
                    return '\n'.join( lines )
                shown = f"{relative}:{number}: {line}"
                size += len( shown ) + 1
                if size > settings.read_size_maximum:
                    lines.append(
                        "[... stopped at the size limit; search a narrower "
                        "pattern, or read the file by lines]" )
                    return '\n'.join( lines )
                lines.append( shown )
    lines.extend( _describe_truncation( walk ) )
    return '\n'.join( lines ) or "No line matches."


def _split_lines( text: str ) -> list[ str ]:
    ''' Returns lines of text as ``read_file`` counts them: split at
        '\\n', '\\r\\n' and '\\r' only (not at form feeds or Unicode
        separators, as ``str.splitlines`` does), so that the numbers of
        a search are the numbers of ``start_line``.
    '''
    if '\r' in text: # '\r\n' first, as one break
        text = text.replace( '\r\n', '\n' ).replace( '\r', '\n' )
    lines = text.split( '\n' )
    if not lines[ -1 ]: lines.pop( ) # text which ends with a line break
    return lines


def _validate_move(
    settings: Settings, source: Location, target: Location, path: str
) -> None:
    for root in settings.roots:
        if root.path == source.path or source.path in root.path.parents:
            raise _exceptions.InvocationRefusal(
                "{path} is or holds the root '{root}'; roots cannot be "
                "moved.".format(
                    path = _files.quote( path ),
                    root = _render_name( str( root.path ) ) ) )
    if source.path in target.path.parents:
        raise _exceptions.InvocationRefusal(
            "A folder cannot be moved into itself." )


def _validate_names(
    source_folder: int,
    source_name: str,
    target_folder: int,
    target_name: str,
    arguments: __.Arguments,
) -> None:
    if _files.stat_name( source_folder, source_name ) is None:
        raise _exceptions.InvocationRefusal(
            "{source} does not exist.".format(
                source = _files.quote( arguments[ 'source' ] ) ) )
    if _files.stat_name( target_folder, target_name ) is not None:
        raise _exceptions.InvocationRefusal(
            "{destination} exists already; choose another destination or "
            "move that one away first.".format(
                destination = _files.quote( arguments[ 'destination' ] ) ) )


def _validate_size(
    settings: Settings, size: int, path: str, action: str
) -> None:
    if size <= settings.read_size_maximum: return
    hint = (
        "read part of it with 'start_line' and 'line_count'."
        if action == 'read' else f"it cannot be {action} here." )
    raise _exceptions.InvocationRefusal(
        f"File {_files.quote( path )} has {size} bytes, more than the limit "
        f"of {settings.read_size_maximum}; {hint}" )
