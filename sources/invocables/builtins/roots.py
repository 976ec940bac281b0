# SPDX-License-Identifier: Apache-2.0

''' Roots and limits of the ``io`` ensemble, and paths resolved within
    them (see :py:mod:`invocables.builtins.io`).
'''


import os as _os

import invocables.builtins.__ as __
import invocables.builtins.files as _files
import invocables.canisters as _canisters
import invocables.execution.deadlines as _deadlines
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
from ..descriptors import Root as _Root
from .files import Location as Location


ENTRIES_MAXIMUM_DEFAULT = 1000
MATCHES_MAXIMUM_DEFAULT = 200
READ_SIZE_MAXIMUM_DEFAULT = 1_048_576
LIMIT_MAXIMUM = 2 ** 53 # largest limit: exact in JSON, and indexable
PATH_MAXIMUM = 4096 # bytes of a path (PATH_MAX of Linux)

_LIMITS = ( 'read_size_maximum', 'entries_maximum', 'matches_maximum' )
_render_name = _canisters.render_name


class Settings( __.immut.DataclassObject ):
    ''' Roots and limits which apply to one invocation. '''

    roots: tuple[ _Root, ... ]
    read_size_maximum: int = READ_SIZE_MAXIMUM_DEFAULT
    entries_maximum: int = ENTRIES_MAXIMUM_DEFAULT
    matches_maximum: int = MATCHES_MAXIMUM_DEFAULT
    deadline: _files.Deadline = _files.DEADLINE_NEVER

    @classmethod
    def from_context( cls, context: _invokers.Context ) -> __.typx.Self:
        ''' Produces settings from invoker of context.

            Without roots (an invoker not made from a descriptor), the
            current directory is the one root, read-only. The deadline is
            the invocation's (in the event loop: call it there). Raises
            :py:class:`invocables.exceptions.ConfigurationInvalidity` for
            a limit of the configuration which is not a positive integer
            of at most :py:data:`LIMIT_MAXIMUM`.
        '''
        invoker = context.invoker
        roots = tuple( getattr( invoker, 'roots', ( ) ) ) or (
            _Root( path = __.Path.cwd( ) ), )
        configuration = __.typx.cast(
            __.cabc.Mapping[ str, __.typx.Any ],
            getattr( invoker, 'configuration', { } ) )
        limits: dict[ str, int ] = { }
        for key in _LIMITS:
            if key not in configuration: continue
            limits[ key ] = __.values.validate_count(
                configuration[ key ],
                "configuration of ensemble {name!r}, key {key}".format(
                    name = getattr( invoker, 'ensemble', '?' ), key = key ),
                maximum = LIMIT_MAXIMUM,
                reason = "expected a positive integer of at most {maximum}, "
                "got {value!r}." )
        return cls(
            roots = roots, deadline = _produce_deadline( context ),
            ** limits )


def resolve_location(
    settings: Settings,
    path: str,
    *,
    writable: bool = False,
    following: bool = True,
) -> Location:
    ''' Returns resolved path inside a root. Refuses any other path.

        Relative paths start at the first root. Symbolic links are
        followed before the check, so links which point out of the roots
        are refused too; without ``following``, a link which is the last
        name of the path is not followed (the link itself is meant, as
        ``move_file`` moves it). Paths to write may not hold backslashes
        (which a model may mean as Windows separators). Paths longer than
        :py:data:`PATH_MAXIMUM` bytes are refused before any resolution.
    '''
    if not isinstance( path, str ):
        raise _exceptions.InvocationRefusal(
            "The path must be a string, got {genus}.".format(
                genus = type( path ).__name__ ) )
    base = _files.resolve_root( settings.roots[ 0 ] ).path
    try:
        size = len( _os.fsencode( path ) ) # a lone surrogate names no file
        # Longer, resolving the path would take time quadratic in it.
        if size > PATH_MAXIMUM:
            raise _exceptions.InvocationRefusal(
                f"Path {_files.quote( path )} has {size} bytes, longer than "
                f"the file system allows ({PATH_MAXIMUM}); use a shorter "
                "path." )
        target = _resolve_path( base / path, following = following )
    except ( ValueError, OSError ) as exception:
        raise _exceptions.InvocationRefusal(
            "Path {path} is not valid ({exception}).".format(
                path = _files.quote( path ), exception = exception )
        ) from exception
    root = _files.access_root( settings.roots, target )
    if root is None:
        raise _exceptions.InvocationRefusal(
            "Path {path} is outside the allowed roots ({roots}); use a path "
            "inside one of them (relative paths start at {base!r}).".format(
                path = _files.quote( path ), base = str( base ),
                roots = ', '.join(
                    _render_name( str( root.path ) )
                    for root in settings.roots ) ) )
    if writable and '\\' in path and _os.sep == '/':
        raise _exceptions.InvocationRefusal(
            f"Path {_files.quote( path )} holds '\\'; separate folders with "
            "'/' (no name written here may hold '\\')." )
    if writable and not root.writable:
        raise _exceptions.InvocationRefusal(
            "Path {path} is in the read-only root '{root}'; nothing may be "
            "written there. Writing needs a root declared with "
            "'writable = true' in the [[roots]] of the "
            "configuration.".format(
                path = _files.quote( path ),
                root = _render_name( str( root.path ) ) ) )
    return Location( path = target, root = root )


def locate( settings: Settings, path: __.Path ) -> Location | None:
    ''' Returns location of path found by a search, if inside a root. '''
    real = __.Path( _os.path.realpath( path ) )
    root = _files.access_root( settings.roots, real )
    if root is None: return None
    return Location( path = real, root = root )


def _produce_deadline( context: _invokers.Context ) -> _files.Deadline:
    ''' Returns deadline of invocation, for its thread: the seconds left
        before the engine's deadline of the invocation, from now.
    '''
    name = str( getattr( context.invoker, 'name', 'io' ) )
    return _files.Deadline( _deadlines.access_remainder( context ), name )


def _resolve_path( path: __.Path, *, following: bool ) -> __.Path:
    ''' Returns real path; without following, the last name is kept as it
        is (a link is not followed), unless it is '.' or '..'.
    '''
    if following or path.name in ( '', '.', '..' ):
        return __.Path( _os.path.realpath( path ) )
    return __.Path( _os.path.realpath( path.parent ) ) / path.name
