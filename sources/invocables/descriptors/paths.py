# SPDX-License-Identifier: Apache-2.0

''' Files named by descriptors: paths expanded, resolved and confined.

    A descriptor names other files relative to its own folder; such a path
    may not leave the folder, also not through symbolic links. Every
    failure raises :py:class:`invocables.exceptions.DescriptorInvalidity`.
    The configuration of the ``invocables`` command and server is found by
    :py:func:`locate_configuration`; the names of the files which writing
    makes, by :py:func:`produce_file_stems`.
'''


import errno as _errno
import os as _os
import stat as _stat

from os import PathLike as _PathLike
from os import fspath as _fspath

import invocables.descriptors.__ as __
import invocables.exceptions as _exceptions
import invocables.naming as _naming
from .records import CONFIGURATION_NAME as _CONFIGURATION_NAME
from .tables import Table as _Table


CONFIGURATION_VARIABLE = 'INVOCABLES_CONFIGURATION'
# Device names which Windows reserves, with any suffix, in any case.
_NAMES_RESERVED = frozenset( (
    'aux', 'con', 'nul', 'prn',
    * ( f"{device}{digit}" for device in ( 'com', 'lpt' )
        for digit in '123456789' ) ) )


def access_data_location( ) -> __.Path:
    ''' Returns folder of data shipped with the package.

        Installed packages hold it as ``invocables/data``; editable
        installs use the ``data`` folder of the repository.
    '''
    package = __.Path( __file__ ).resolve( ).parent.parent
    installed = package / 'data'
    if installed.is_dir( ): return installed
    return package.parent.parent / 'data'


def expand_path( table: _Table, key: str, value: str ) -> __.Path:
    ''' Returns path with home folder (``~``) expanded. '''
    try: return __.Path( value ).expanduser( )
    # No such user, no home; a NUL in a user name.
    except ( RuntimeError, ValueError ) as exception:
        table.fail(
            key, f"cannot expand {value!r} ({exception}); give a full "
            "path.", cause = exception )


def locate_configuration(
    option: __.Absential[ str ] = __.absent
) -> __.Path:
    ''' Returns path of configuration: option, variable, user, shipped.

        The option, else the file named by the ``INVOCABLES_CONFIGURATION``
        environment variable, else ``invocables/invocables.toml`` in the
        user's configuration folder (``$XDG_CONFIG_HOME``, by default
        ``~/.config``), else the shipped defaults. A leading ``~`` is left
        for the loading of the configuration to expand (which reports a
        home folder that cannot be found).
    '''
    if not __.is_absent( option ): return __.Path( option )
    variable = _os.environ.get( CONFIGURATION_VARIABLE )
    if variable: return __.Path( variable )
    home = _os.environ.get( 'XDG_CONFIG_HOME' ) or str(
        __.Path.home( ) / '.config' )
    user = __.Path( home ) / 'invocables' / _CONFIGURATION_NAME
    if user.is_file( ): return user
    return (
        access_data_location( ) / 'configuration' / _CONFIGURATION_NAME )


def locate_file(
    source: str | _PathLike[ str ], *, expand: bool = True
) -> __.Path:
    ''' Returns absolute path of descriptor file named by application. '''
    try: path = __.Path( source )
    except TypeError as exception:
        raise _exceptions.DescriptorInvalidity(
            repr( source ), '', "expected the path of a descriptor file, "
            "or a mapping." ) from exception
    if expand:
        try: path = path.expanduser( )
        # No such user, no home; a NUL in a user name.
        except ( RuntimeError, ValueError ) as exception:
            raise _exceptions.DescriptorInvalidity(
                str( path ), '', f"cannot expand the path ({exception}); "
                "give a full path." ) from exception
    return path.absolute( )


def produce_file_stems( names: __.cabc.Sequence[ str ] ) -> dict[ str, str ]:
    ''' Returns file name (without suffix) for each name: safe, and
        distinct also where the file system does not tell cases apart.

        Names whose safe names are equal but for case (``Echo`` and
        ``echo``, ``1x`` and ``_1x``), and device names which Windows
        reserves (``con``, ``aux``, ``com1`` ...), get a digest.
    '''
    stems = { name: _naming.produce_safe_name( name ) for name in names }
    forced: set[ str ] = set( )
    while True:
        groups: dict[ str, list[ str ] ] = { }
        for name, stem in stems.items( ):
            groups.setdefault( stem.casefold( ), [ ] ).append( name )
        clashing = [
            name for key, members in groups.items( )
            if len( members ) > 1 or key in _NAMES_RESERVED
            for name in members if name not in forced ]
        # Digests clashing too: loading the staged files refuses them.
        if not clashing: return stems
        for name in clashing:
            stems[ name ] = _naming.produce_safe_name(
                name, force_digest = True )
            forced.add( name )


def probe_folder( path: __.Path ) -> bool:
    ''' Returns whether path is a folder; false if it cannot be told. '''
    try: return _stat.S_ISDIR( _os.stat( path ).st_mode )
    except ( OSError, ValueError ): return False


def resolve_folder(
    table: _Table, key: str, value: str, folder: __.Path, origin: str
) -> __.Path:
    ''' Returns path of existing folder named relative to folder, the
        folder of origin (named in the error).
    '''
    path = resolve_path(
        table, key, folder / expand_path( table, key, value ) )
    if not probe_folder( path ):
        table.fail(
            key, f"folder '{path}' does not exist; create it or correct "
            f"the path (relative paths start at the folder of {origin})." )
    return path


def resolve_path( table: _Table, key: str, path: __.Path ) -> __.Path:
    ''' Returns path with symbolic links and ``..`` resolved.

        Refuses paths which hold NUL characters or loops of links.
    '''
    try: resolved = __.Path( _os.path.realpath( path ) )
    except ( OSError, ValueError ) as exception:
        table.fail(
            key, f"path '{path}' is not valid ({exception}); correct it.",
            cause = exception )
    try: _os.stat( resolved )
    except OSError as exception:
        if exception.errno == _errno.ELOOP:
            table.fail(
                key, f"path '{path}' is a loop of symbolic links; correct "
                "the links or the path.", cause = exception )
        if exception.errno == _errno.ENAMETOOLONG:
            table.fail(
                key, "a name in the path is longer than the file system "
                "allows; correct the path.", cause = exception )
    return resolved


def resolve_source(
    table: _Table, key: str, folder: __.Path, *, confined: bool = True
) -> __.Path:
    ''' Returns path of existing file named relative to folder.

        Refuses absolute paths and paths which leave the folder, also
        through symbolic links, unless not confined (a mapping made by an
        application may name any file, also as a path object).
    '''
    if not confined:
        value = table.access( key, object )
        if isinstance( value, _PathLike ):
            value = _fspath( __.typx.cast( _PathLike[ str ], value ) )
        if not isinstance( value, str ):
            table.fail( key, "expected a string holding a path." )
        source = expand_path( table, key, value )
        path = resolve_path( table, key, folder / source )
        return _validate_file( table, key, path )
    source = table.access( key, str )
    if __.Path( source ).is_absolute( ) or source.startswith( '~' ):
        table.fail(
            key, f"{source!r} is absolute; give a path relative to the "
            f"folder '{folder}'." )
    base = resolve_path( table, key, folder )
    path = resolve_path( table, key, base / source )
    if path != base and base not in path.parents:
        table.fail(
            key, f"{source!r} leaves the folder '{base}'; keep "
            "descriptors inside the folder of the file which names them." )
    return _validate_file( table, key, path )


def _validate_file( table: _Table, key: str, path: __.Path ) -> __.Path:
    try: status = _os.stat( path )
    except OSError:
        table.fail(
            key, f"file '{path}' does not exist; create it or "
            "correct the path (relative to the folder of this file)." )
    if not _stat.S_ISREG( status.st_mode ):
        table.fail(
            key, f"'{path}' is not a regular file (a folder, pipe or "
            "device); name a descriptor file." )
    return path
