# SPDX-License-Identifier: Apache-2.0

''' Implementation of the built-in ``io`` ensemble: files within roots.

    Every path is resolved (``..`` and symbolic links included) and must
    fall inside one of the roots of the configuration; writes need a
    writable root and are atomic (a temporary file in the same folder,
    then a rename). Without roots, the current directory is the one root,
    read-only. Failures the model can act on raise
    :py:class:`invocables.exceptions.InvocationRefusal`, so that the model
    receives an error result.

    The tools reach the roots and the configuration of their ensemble
    through ``context.invoker`` (a descriptor invoker).
'''


import os as _os
import stat as _stat

from datetime import datetime as _datetime
from datetime import timezone as _timezone
from secrets import token_hex as _token_hex

from . import __
from . import canisters as _canisters
from . import exceptions as _exceptions
from . import invokers as _invokers
from . import schemata as _schemata
from . import workers as _workers
from .descriptors import Root as _Root


ENTRIES_MAXIMUM_DEFAULT = 1000
MATCHES_MAXIMUM_DEFAULT = 200
READ_SIZE_MAXIMUM_DEFAULT = 1_048_576
SEARCH_TIMEOUT = 5.0 # for expressions which RE2 cannot run

_image_signatures = (
    ( b'\x89PNG\r\n\x1a\n', 'image/png' ),
    ( b'\xff\xd8\xff', 'image/jpeg' ),
    ( b'GIF87a', 'image/gif' ),
    ( b'GIF89a', 'image/gif' ),
)


class Settings( __.immut.DataclassObject ):
    ''' Roots and limits which apply to one invocation. '''

    roots: tuple[ _Root, ... ]
    read_size_maximum: int = READ_SIZE_MAXIMUM_DEFAULT
    entries_maximum: int = ENTRIES_MAXIMUM_DEFAULT
    matches_maximum: int = MATCHES_MAXIMUM_DEFAULT

    @classmethod
    def from_context( cls, context: _invokers.Context ) -> __.typx.Self:
        ''' Produces settings from invoker of context.

            Without roots (an invoker not made from a descriptor), the
            current directory is the one root, read-only.
        '''
        invoker = context.invoker
        roots = tuple( getattr( invoker, 'roots', ( ) ) ) or (
            _Root( path = __.Path.cwd( ) ), )
        configuration = __.typx.cast(
            __.cabc.Mapping[ str, __.typx.Any ],
            getattr( invoker, 'configuration', { } ) )
        limits = {
            key: configuration[ key ] for key in (
                'read_size_maximum', 'entries_maximum', 'matches_maximum' )
            if isinstance( configuration.get( key ), int ) }
        return cls( roots = roots, ** limits )


class Location( __.immut.DataclassObject ):
    ''' Resolved path and the root which holds it. '''

    path: __.Path
    root: _Root


async def create_directory(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Creates folder, with missing parents. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread(
        _create_directory, settings, arguments )


async def edit_file(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Replaces one exact passage of text file, atomically. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread( _edit_file, settings, arguments )


async def get_file_info(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Returns kind, size, time of change and permissions of path. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread(
        _get_file_info, settings, arguments )


async def list_directory(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Lists entries of folder: folders end with a slash. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread(
        _list_directory, settings, arguments )


async def list_roots(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Lists roots and whether they are writable. '''
    settings = Settings.from_context( context )
    return '\n'.join(
        "{path} ({mode})".format(
            path = root.path,
            mode = 'writable' if root.writable else 'read-only' )
        for root in settings.roots )


async def move_file(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Moves or renames file or folder within writable roots. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread( _move_file, settings, arguments )


async def read_file(
    context: _invokers.Context, arguments: __.Arguments
) -> str | _canisters.ImageContent:
    ''' Returns text of file, or image for image files. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread( _read_file, settings, arguments )


async def search_files(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Lists paths which match glob pattern, below folder. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread(
        _search_files, settings, arguments )


async def search_text(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Lists lines which match regular expression, in files below folder.

        The expression runs on RE2, in linear time; one which RE2 cannot
        run (lookarounds, backreferences) runs on the ``regex`` package for
        at most :py:data:`SEARCH_TIMEOUT` seconds in all.
    '''
    settings = Settings.from_context( context )
    return await _workers.execute_in_thread(
        _search_text, settings, arguments )


async def write_file(
    context: _invokers.Context, arguments: __.Arguments
) -> str:
    ''' Writes text to file atomically. '''
    settings = Settings.from_context( context )
    return await __.asyncio.to_thread( _write_file, settings, arguments )


def resolve_location(
    settings: Settings, path: str, *, writable: bool = False
) -> Location:
    ''' Returns resolved path inside a root. Refuses any other path.

        Relative paths start at the first root. Symbolic links are
        followed before the check, so links which point out of the roots
        are refused too.
    '''
    base = settings.roots[ 0 ].path
    try: target = __.Path( _os.path.realpath( base / path ) )
    except ( ValueError, OSError ) as exception:
        raise _exceptions.InvocationRefusal(
            f"Path {path!r} is not valid ({exception})." ) from exception
    for root in sorted(
        settings.roots, key = lambda root: len( root.path.parts ),
        reverse = True,
    ):
        root_path = root.path.resolve( )
        if target != root_path and root_path not in target.parents:
            continue
        if writable and not root.writable:
            raise _exceptions.InvocationRefusal(
                f"Path {path!r} is in the read-only root '{root_path}';"
                " nothing may be written there. Writing needs a root "
                "declared with 'writable = true' in the [[roots]] of the "
                "configuration." )
        return Location( path = target, root = root )
    raise _exceptions.InvocationRefusal(
        "Path {path!r} is outside the allowed roots ({roots}); use a path "
        "inside one of them (relative paths start at {base!r}).".format(
            path = path, base = str( base ),
            roots = ', '.join(
                str( root.path ) for root in settings.roots ) ) )


def _access_text_file( location: Location, path: str ) -> None:
    if not location.path.exists( ):
        raise _exceptions.InvocationRefusal(
            f"File {path!r} does not exist. Use list_directory or "
            "search_files to find it." )
    if location.path.is_dir( ):
        raise _exceptions.InvocationRefusal(
            f"{path!r} is a folder, not a file; use list_directory." )
    if not location.path.is_file( ):
        raise _exceptions.InvocationRefusal(
            f"{path!r} is not a regular file (a device, socket or pipe)." )


def _create_directory( settings: Settings, arguments: __.Arguments ) -> str:
    path = arguments[ 'path' ]
    location = resolve_location( settings, path, writable = True )
    if location.path.exists( ) and not location.path.is_dir( ):
        raise _exceptions.InvocationRefusal(
            f"{path!r} exists and is not a folder." )
    location.path.mkdir( parents = True, exist_ok = True )
    return f"Folder {location.path} exists."


def _decode( data: bytes, encoding: str, path: str ) -> str:
    try: return data.decode( encoding )
    except LookupError as exception:
        raise _exceptions.InvocationRefusal(
            f"Unknown encoding {encoding!r}; use one such as 'utf-8' or "
            "'latin-1'." ) from exception
    except UnicodeDecodeError as exception:
        raise _exceptions.InvocationRefusal(
            f"File {path!r} is not {encoding} text ({exception.reason} at "
            f"byte {exception.start}). If it is text in another encoding, "
            "pass 'encoding' (for example 'latin-1'); other binary files "
            "than images cannot be read." ) from exception


def _edit_file( settings: Settings, arguments: __.Arguments ) -> str:
    path = arguments[ 'path' ]
    location = resolve_location( settings, path, writable = True )
    _access_text_file( location, path )
    encoding = arguments.get( 'encoding', 'utf-8' )
    size = location.path.stat( ).st_size
    if size > settings.read_size_maximum:
        raise _exceptions.InvocationRefusal(
            f"File {path!r} has {size} bytes, more than the limit of "
            f"{settings.read_size_maximum}; it cannot be edited here." )
    text = _decode( location.path.read_bytes( ), encoding, path )
    old, new = arguments[ 'old_text' ], arguments[ 'new_text' ]
    count = text.count( old )
    if count != 1:
        raise _exceptions.InvocationRefusal(
            "The passage to replace occurs {count} times in {path!r}; it "
            "must occur exactly once. {hint}".format(
                count = count, path = path,
                hint = (
                    "Read the file again and copy the passage exactly."
                    if count == 0 else
                    "Include more of the surrounding text." ) ) )
    data = text.replace( old, new, 1 ).encode( encoding )
    _write_atomically( location.path, data )
    return f"Replaced 1 passage in {location.path}."


def _get_file_info( settings: Settings, arguments: __.Arguments ) -> str:
    path = arguments[ 'path' ]
    location = resolve_location( settings, path )
    try: status = location.path.stat( )
    except FileNotFoundError as exception:
        raise _exceptions.InvocationRefusal(
            f"{path!r} does not exist." ) from exception
    kind = (
        'folder' if _stat.S_ISDIR( status.st_mode )
        else 'file' if _stat.S_ISREG( status.st_mode ) else 'other' )
    modified = _datetime.fromtimestamp(
        status.st_mtime, _timezone.utc ).isoformat( timespec = 'seconds' )
    permissions = _stat.filemode( status.st_mode )
    return '\n'.join( (
        f"path: {location.path}",
        f"kind: {kind}",
        f"size: {status.st_size} bytes",
        f"modified: {modified}",
        f"permissions: {permissions}",
        "writable root: {writable}".format(
            writable = 'yes' if location.root.writable else 'no' ),
    ) )


def _list_directory( settings: Settings, arguments: __.Arguments ) -> str:
    path = arguments.get( 'path', '.' )
    location = resolve_location( settings, path )
    if not location.path.is_dir( ):
        raise _exceptions.InvocationRefusal(
            f"{path!r} is not a folder (or does not exist)." )
    entries = sorted( location.path.iterdir( ), key = lambda item: item.name )
    lines = [
        _render_entry( entry )
        for entry in entries[ : settings.entries_maximum ] ]
    if len( entries ) > settings.entries_maximum:
        lines.append( "... and {count} more entries.".format(
            count = len( entries ) - settings.entries_maximum ) )
    if not lines: return f"Folder {location.path} is empty."
    return '\n'.join( lines )


def _move_file( settings: Settings, arguments: __.Arguments ) -> str:
    source = resolve_location(
        settings, arguments[ 'source' ], writable = True )
    target = resolve_location(
        settings, arguments[ 'destination' ], writable = True )
    if not _os.path.lexists( source.path ):
        raise _exceptions.InvocationRefusal(
            "{source!r} does not exist.".format(
                source = arguments[ 'source' ] ) )
    if _os.path.lexists( target.path ):
        raise _exceptions.InvocationRefusal(
            "{destination!r} exists already; choose another destination "
            "or move that one away first.".format(
                destination = arguments[ 'destination' ] ) )
    if not target.path.parent.is_dir( ):
        raise _exceptions.InvocationRefusal(
            "Folder of {destination!r} does not exist; create it with "
            "create_directory.".format(
                destination = arguments[ 'destination' ] ) )
    if source.path in target.path.parents:
        raise _exceptions.InvocationRefusal(
            "A folder cannot be moved into itself." )
    _os.rename( source.path, target.path )
    return f"Moved {source.path} to {target.path}."


def _read_file(
    settings: Settings, arguments: __.Arguments
) -> str | _canisters.ImageContent:
    path = arguments[ 'path' ]
    location = resolve_location( settings, path )
    _access_text_file( location, path )
    encoding = arguments.get( 'encoding', 'utf-8' )
    start, count = arguments.get( 'start_line' ), arguments.get( 'line_count' )
    size = location.path.stat( ).st_size
    if start is not None or count is not None:
        return _read_lines(
            settings, location, encoding, start or 1, count )
    if size > settings.read_size_maximum:
        raise _exceptions.InvocationRefusal(
            f"File {path!r} has {size} bytes, more than the limit of "
            f"{settings.read_size_maximum}; read part of it with "
            "'start_line' and 'line_count'." )
    data = location.path.read_bytes( )
    media_type = _access_image_type( location.path, data )
    if media_type is not None:
        return _canisters.ImageContent( data = data, media_type = media_type )
    return _decode( data, encoding, path )


def _read_lines(
    settings: Settings,
    location: Location,
    encoding: str,
    start: int,
    count: int | None,
) -> str:
    lines: list[ str ] = [ ]
    total = 0
    try: stream = location.path.open( encoding = encoding, newline = '' )
    except LookupError as exception:
        raise _exceptions.InvocationRefusal(
            f"Unknown encoding {encoding!r}." ) from exception
    with stream:
        try:
            for number, line in enumerate( stream, start = 1 ):
                if number < start: continue
                if count is not None and len( lines ) >= count: break
                total += len( line )
                if total > settings.read_size_maximum:
                    lines.append( "[... stopped at the size limit]\n" )
                    break
                lines.append( line )
        except UnicodeDecodeError as exception:
            raise _exceptions.InvocationRefusal(
                f"File is not {encoding} text ({exception.reason}); pass "
                "'encoding' (for example 'latin-1')." ) from exception
    return ''.join( lines )


def _render_entry( entry: __.Path ) -> str:
    try: status = entry.stat( )
    except OSError: return f"{entry.name} (unreadable or broken link)"
    if _stat.S_ISDIR( status.st_mode ): return f"{entry.name}/"
    return f"{entry.name} ({status.st_size} bytes)"


def _search_files( settings: Settings, arguments: __.Arguments ) -> str:
    pattern = arguments[ 'pattern' ]
    location = resolve_location( settings, arguments.get( 'path', '.' ) )
    matches = _survey_matches( settings, location, pattern )
    if not matches: return f"No path matches {pattern!r}."
    lines = [
        str( match.relative_to( location.path ) )
        for match in matches[ : settings.entries_maximum ] ]
    if len( matches ) > settings.entries_maximum:
        lines.append( "... and {count} more paths.".format(
            count = len( matches ) - settings.entries_maximum ) )
    return '\n'.join( lines )


def _search_text( settings: Settings, arguments: __.Arguments ) -> str:
    try: expression = _schemata.produce_expression( arguments[ 'pattern' ] )
    except _exceptions.PatternInvalidity as exception:
        reason = (
            "Pattern is not a valid regular expression: "
            f"{exception.reason}." )
        raise _exceptions.InvocationRefusal( reason ) from exception
    deadline = __.time.monotonic( ) + SEARCH_TIMEOUT
    try: return _search_lines( settings, arguments, expression, deadline )
    except _exceptions.PatternInterruption as exception:
        raise _exceptions.InvocationRefusal(
            f"Pattern {expression.pattern!r} took longer than "
            f"{SEARCH_TIMEOUT} seconds to match; simplify it (no "
            "lookarounds or backreferences) or search fewer files." ) from (
                exception )


def _search_lines(
    settings: Settings,
    arguments: __.Arguments,
    expression: _schemata.Expression,
    deadline: float,
) -> str:
    location = resolve_location( settings, arguments.get( 'path', '.' ) )
    files = _survey_matches(
        settings, location, arguments.get( 'glob', '**/*' ) )
    lines: list[ str ] = [ ]
    for file in files:
        if not file.is_file( ): continue
        if file.stat( ).st_size > settings.read_size_maximum: continue
        try: text = file.read_text( encoding = 'utf-8' )
        except ( UnicodeDecodeError, OSError ): continue
        relative = file.relative_to( location.path )
        for number, line in enumerate( text.splitlines( ), start = 1 ):
            if not expression.search( line, deadline ): continue
            if len( lines ) >= settings.matches_maximum:
                lines.append( "[... more matches not shown]" )
                return '\n'.join( lines )
            lines.append( f"{relative}:{number}: {line}" )
    return '\n'.join( lines ) or "No line matches."


def _survey_matches(
    settings: Settings, location: Location, pattern: str
) -> list[ __.Path ]:
    if not location.path.is_dir( ):
        raise _exceptions.InvocationRefusal(
            f"'{location.path}' is not a folder." )
    if __.Path( pattern ).is_absolute( ) or '..' in __.Path( pattern ).parts:
        raise _exceptions.InvocationRefusal(
            f"Pattern {pattern!r} must be relative, without '..'." )
    try: found = sorted( location.path.glob( pattern ) )
    except ( ValueError, NotImplementedError ) as exception:
        reason = f"Pattern {pattern!r} is not valid: {exception}."
        raise _exceptions.InvocationRefusal( reason ) from exception
    hidden = any( part.startswith( '.' ) for part in __.Path( pattern ).parts )
    return [
        path for path in found
        if ( hidden or not _is_hidden( path.relative_to( location.path ) ) )
        and _is_inside( settings, path ) ]


def _write_file( settings: Settings, arguments: __.Arguments ) -> str:
    path = arguments[ 'path' ]
    location = resolve_location( settings, path, writable = True )
    target = location.path
    if target.is_dir( ):
        raise _exceptions.InvocationRefusal(
            f"{path!r} is a folder; give the path of a file." )
    if target.exists( ) and not arguments.get( 'overwrite', True ):
        raise _exceptions.InvocationRefusal(
            f"File {path!r} exists and 'overwrite' is false." )
    if not target.parent.is_dir( ):
        if not arguments.get( 'create_parents', False ):
            raise _exceptions.InvocationRefusal(
                f"Folder of {path!r} does not exist; create it with "
                "create_directory or pass 'create_parents': true." )
        target.parent.mkdir( parents = True, exist_ok = True )
    encoding = arguments.get( 'encoding', 'utf-8' )
    try: data = arguments[ 'content' ].encode( encoding )
    except ( LookupError, UnicodeEncodeError ) as exception:
        reason = f"Cannot encode the content as {encoding!r}: {exception}."
        raise _exceptions.InvocationRefusal( reason ) from exception
    _write_atomically( target, data )
    return "Wrote {size} bytes to {path}.".format(
        size = len( data ), path = location.path )


def _write_atomically( target: __.Path, data: bytes ) -> None:
    ''' Writes temporary file beside target, then renames it over target.

        A new file gets the usual permissions (0o666 less the umask); a
        replaced file keeps its permissions.
    '''
    temporary = target.with_name( ".{name}.{token}.tmp".format(
        name = target.name, token = _token_hex( 6 ) ) )
    flags = _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL
    descriptor = _os.open( temporary, flags, 0o666 )
    try:
        with _os.fdopen( descriptor, 'wb' ) as stream:
            stream.write( data )
            stream.flush( )
            _os.fsync( stream.fileno( ) )
        if target.exists( ):
            _os.chmod( temporary, _stat.S_IMODE( target.stat( ).st_mode ) )
        _os.replace( temporary, target )
    except BaseException:
        temporary.unlink( missing_ok = True )
        raise


def _access_image_type( path: __.Path, data: bytes ) -> str | None:
    for signature, media_type in _image_signatures:
        if data.startswith( signature ): return media_type
    if data[ : 4 ] == b'RIFF' and data[ 8 : 12 ] == b'WEBP':
        return 'image/webp'
    return None


def _is_hidden( path: __.Path ) -> bool:
    return any( part.startswith( '.' ) for part in path.parts )


def _is_inside( settings: Settings, path: __.Path ) -> bool:
    real = __.Path( _os.path.realpath( path ) )
    for root in settings.roots:
        root_path = root.path.resolve( )
        if real == root_path or root_path in real.parents: return True
    return False
