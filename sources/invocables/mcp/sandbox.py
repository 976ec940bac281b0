# SPDX-License-Identifier: Apache-2.0

''' Confinement of the stdio servers which ensembles start.

    A :py:class:`Sandbox` says what a server may touch: paths it may read,
    paths it may write, whether it may reach the network, and which
    variables of the application's environment it sees. Each start of a
    server gets a confinement (:py:func:`prepare_confinement`): the command
    which runs the server inside the sandbox, its environment, its working
    folder and a private temporary folder, removed when the server ends.

    On Linux, the server runs under bubblewrap (``bwrap``, found on the
    PATH): new mount, PID, IPC, UTS, user and (unless the network is
    allowed) network namespaces, no capabilities, and a root which holds
    only the system's programs and libraries, a few files of ``/etc``, the
    server's own installation, the paths of the sandbox and the private
    folder. With a list of hosts, it has no network but a filtering HTTP
    proxy which the library runs while the server runs (see
    ``_proxy``), reached from inside through a unix socket in the private
    folder. On macOS, it runs under ``sandbox-exec`` with a profile which
    denies by default. Anywhere else, or where the sandbox cannot be set
    up, connecting fails with
    :py:class:`invocables.exceptions.SandboxNoSupport`, saying why and what
    to install: a server is never started unconfined instead.
'''


import os as _os
import shutil as _shutil
import tempfile as _tempfile

import invocables.mcp.__ as __
import invocables.mcp._proxy as _proxy
import invocables.mcp._sandboxpaths as _paths
import invocables.exceptions as _exceptions


# Read by the default profile on Linux: the system's programs and libraries
# and the files of /etc which programs need (names, time, certificates,
# the resolver, the dynamic linker); never shadow, keys or credentials.
_SYSTEM_FOLDERS = (
    '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32',
    '/nix/store',
)
_SYSTEM_FILES = tuple( f"/etc/{name}" for name in (
    'alternatives', 'ca-certificates', 'ca-certificates.conf',
    'crypto-policies', 'debian_version', 'fonts', 'gai.conf', 'group',
    'host.conf', 'hostname', 'hosts', 'ld.so.cache', 'ld.so.conf',
    'ld.so.conf.d', 'locale.alias', 'locale.conf', 'localtime',
    'lsb-release', 'magic', 'mime.types', 'nsswitch.conf', 'os-release',
    'passwd', 'pki/ca-trust', 'pki/tls/certs', 'protocols',
    'resolv.conf', 'services', 'ssl/certs', 'ssl/openssl.cnf',
    'timezone', 'xdg',
) )
# Read by the default profile on macOS (real paths: /etc is /private/etc).
_SYSTEM_FOLDERS_DARWIN = (
    '/usr', '/bin', '/sbin', '/System', '/Library/Apple',
    '/Library/Frameworks', '/private/var/db/timezone',
    '/private/var/db/dyld', '/opt/homebrew/Cellar', '/opt/homebrew/opt',
    '/dev/null', '/dev/zero', '/dev/random', '/dev/urandom',
)
_SYSTEM_FILES_DARWIN = tuple( f"/private/etc/{name}" for name in (
    'group', 'hosts', 'localtime', 'passwd', 'protocols', 'resolv.conf',
    'services', 'ssl/cert.pem', 'ssl/openssl.cnf',
) )
# Folders which hold far more than one installation: never read whole for
# a program or script found in them (named, not used: noqa S108).
_FOLDERS_BROAD = frozenset( (
    '/', '/etc', '/home', '/media', '/mnt', '/opt', '/private/etc',
    '/private/tmp', '/private/var', '/root', '/run', '/srv',
    '/tmp', # noqa: S108
    '/Users', '/usr/local/etc', '/var',
    '/var/tmp', # noqa: S108
) )
_KEYS = frozenset( (
    'read', 'write', 'network', 'environment', 'disk_maximum' ) )
_DISK_MINIMUM = 65536
_DISK_MAXIMUM = 1 << 60 # an exbibyte: beyond any machine's memory
_PATH_SYSTEM = ( '/usr/local/bin', '/usr/bin', '/bin' )
_PRIVATE_PREFIX = 'invocables-sandbox-'
_variable = __.re.compile( r'[A-Za-z_][A-Za-z0-9_]*' )
_scribe = __.produce_scribe( __name__ )
# Whether bwrap works here, and with which options: probed once per bwrap.
_probes: dict[ str, 'Probe' ] = { }


class Sandbox( __.immut.DataclassObject ):
    ''' What a stdio server may touch besides the default profile.

        The default profile reads the system (its programs, libraries and
        the harmless files of ``/etc``) and the server's own installation
        (the folder of its program, the virtual environment, prefix or
        ``node_modules`` folder it lies in, its interpreter's, and those of
        scripts named among its arguments), writes only a private temporary
        folder (``HOME`` and ``TMPDIR``), and has no network. ``read`` and
        ``write`` add paths (folders or files; relative paths start at the
        current folder, ``~`` is expanded); ``environment`` names variables
        of the application's environment which the server sees (besides
        the ``environment`` given to the ensemble, and ``PATH``, ``HOME``,
        ``TMPDIR`` and ``LANG`` set by the sandbox).

        ``network`` is false (none), true (all hosts) or, on Linux, a list
        of hosts (``api.example.com``, ``*.example.com`` for the names
        under it, each maybe with a ``:port``; else ports 80 and 443):
        the server then has no network but a filtering HTTP proxy, run by
        the library and named by ``HTTP_PROXY``, ``HTTPS_PROXY`` and
        ``ALL_PROXY``, which reaches those hosts only.

        ``disk_maximum``, on Linux, bounds the bytes of the private folder:
        it is then a file system in memory of that size (``tmpfs``), which
        ends with the sandbox; a write beyond fails inside the server (no
        space left). Absent, the private folder is not bounded.
    '''

    read: __.cabc.Sequence[ str ] = ( )
    write: __.cabc.Sequence[ str ] = ( )
    network: bool | __.cabc.Sequence[ str ] = False
    environment: __.cabc.Sequence[ str ] = ( )
    disk_maximum: __.Absential[ int ] = __.absent

    def __post_init__( self ) -> None:
        object.__setattr__(
            self, 'disk_maximum', _validate_disk_maximum( self.disk_maximum ) )
        # Paths absolute from here on, names checked, all of them tuples.
        for label, value in (
            ( 'read', _normalize_paths( 'read', self.read ) ),
            ( 'write', _normalize_paths( 'write', self.write ) ),
            ( 'environment', _normalize_names( self.environment ) ),
        ): object.__setattr__( self, label, value )
        network: object = self.network
        if isinstance( network, bool ): return
        if isinstance( network, str ) or not isinstance(
            network, __.cabc.Iterable
        ):
            raise _exceptions.ConfigurationInvalidity(
                "sandbox 'network'", "must be true (all hosts), false "
                "(none) or a list of hosts." )
        rules = _proxy.produce_rules(
            __.typx.cast( __.cabc.Iterable[ object ], network ) )
        object.__setattr__(
            self, 'network', tuple( map( str, rules ) ) or False )

    def as_dictionary( self ) -> dict[ str, __.typx.Any ]:
        ''' Returns sandbox as plain JSON: read, write, network,
            environment.
        '''
        network = self.network
        dictionary: dict[ str, __.typx.Any ] = {
            'read': list( self.read ), 'write': list( self.write ),
            'network': (
                network if isinstance( network, bool ) else list( network ) ),
            'environment': list( self.environment ) }
        if not __.is_absent( self.disk_maximum ):
            dictionary[ 'disk_maximum' ] = self.disk_maximum
        return dictionary


class Probe( __.immut.DataclassObject ):
    ''' What a probe of bubblewrap found: whether it works, and how. '''

    reason: str = ''
    userns_disable: bool = False
    size: bool = False # a tmpfs of bounded size (--size, bubblewrap 0.8)


class Confinement( __.immut.DataclassObject ):
    ''' One start of a server in a sandbox: command, environment, folders.
    '''

    command: tuple[ str, ... ]
    environment: __.cabc.Mapping[ str, str ]
    cwd: __.Absential[ str ]
    folder: str
    proxy: __.Absential[ _proxy.Proxy ] = __.absent

    async def release( self ) -> None:
        ''' Stops proxy of listed hosts, if any, and removes private
            temporary folder, whatever the server left, off the event
            loop; finishes the removal even when cancelled.
        '''
        if not __.is_absent( self.proxy ): self.proxy.deactivate( )
        await _paths.remove_folder_async( self.folder )


async def prepare_confinement(
    ensemble: str,
    sandbox: Sandbox,
    program: str,
    arguments: __.cabc.Sequence[ str ],
    environment: __.cabc.Mapping[ str, str ],
    cwd: __.Absential[ str ],
) -> Confinement:
    ''' Returns confinement of one start of a server; makes its folder.

        Raises :py:class:`invocables.exceptions.SandboxNoSupport` if no
        sandbox can be set up here,
        :py:class:`invocables.exceptions.ConfigurationInvalidity` if a path
        of the sandbox does not exist or the working folder is outside it,
        and ``FileNotFoundError`` if the program is not found.
    '''
    tool, probe = await _probe_platform( ensemble, sandbox )
    _paths.validate_paths( ensemble, sandbox.read, sandbox.write )
    located = _locate_program( program, environment )
    installation = survey_installation(
        located, _paths.survey_arguments( arguments, sandbox.write ) )
    folder = _tempfile.mkdtemp( prefix = _PRIVATE_PREFIX )
    proxy: __.Absential[ _proxy.Proxy ] = __.absent
    bridge: tuple[ str, ... ] = ( )
    try:
        if not isinstance( sandbox.network, bool ):
            proxy, bridge = await _proxy.activate_proxy(
                ensemble, sandbox.network, folder )
            # The bridge's interpreter; the folder of the proxy's socket,
            # read-only (a folder inside a writable one has its own mode).
            installation += (
                *survey_installation( bridge[ 0 ] ),
                _os.path.dirname( bridge[ -1 ] ) )
        confinement = _produce_confinement(
            ensemble, sandbox, ( tool, probe ),
            ( located, arguments, bridge ),
            ( installation, folder ), ( environment, cwd ) )
    except BaseException:
        if not __.is_absent( proxy ): proxy.deactivate( )
        _paths.remove_folder( folder )
        raise
    return __.dcls.replace( confinement, proxy = proxy )


def produce_bwrap_arguments(
    sandbox: Sandbox,
    installation: __.cabc.Sequence[ str ],
    folder: str,
    cwd: str,
    *,
    userns_disable: bool = True,
) -> list[ str ]:
    ''' Returns options of bubblewrap for sandbox (before the command).

        Binds are made parents first, so that a path inside another gets
        its own mode.
    '''
    options = [
        '--die-with-parent', '--unshare-all', '--unshare-user' ]
    if userns_disable: options.append( '--disable-userns' )
    options.extend( ( '--cap-drop', 'ALL' ) )
    if sandbox.network is True: options.append( '--share-net' )
    # Kernel settings read-only: a server run by root would change them
    # (root inside is root outside, less its capabilities).
    options.extend( (
        '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys',
        '--dev', '/dev' ) )
    binds: dict[ str, str ] = { }
    for path in _SYSTEM_FOLDERS + _SYSTEM_FILES:
        if _os.path.islink( path ) and path.count( '/' ) == 1:
            options.extend( ( '--symlink', _os.readlink( path ), path ) )
        else: binds[ path ] = '--ro-bind-try'
    for path in installation: binds[ path ] = '--ro-bind'
    for path in sandbox.read: binds[ path ] = '--ro-bind'
    for path in ( *sandbox.write, folder ): binds[ path ] = '--bind'
    disk = sandbox.disk_maximum
    for path in sorted( binds, key = _order_path ):
        if path == folder and not __.is_absent( disk ):
            options.extend( (
                '--perms', '0700', '--size', str( disk ), '--tmpfs', path ) )
        else: options.extend( ( binds[ path ], path, path ) )
    # The root, and the folders made to hold the binds, are read-only.
    options.extend( ( '--dir', cwd, '--chdir', cwd, '--remount-ro', '/' ) )
    return options


def produce_profile(
    sandbox: Sandbox,
    installation: __.cabc.Sequence[ str ],
    folder: str,
) -> str:
    ''' Returns ``sandbox-exec`` profile (macOS) for sandbox.

        Denies by default; paths are given as real paths, since the
        profile matches those (``/tmp`` is ``/private/tmp``).
    '''
    reads = (
        *_SYSTEM_FOLDERS_DARWIN, *_SYSTEM_FILES_DARWIN, *installation,
        *sandbox.read, *sandbox.write, folder )
    writes = ( *sandbox.write, folder, '/dev/null' )
    lines = [
        '(version 1)', '(deny default)',
        '(allow process-exec process-fork)',
        '(allow signal (target same-sandbox))',
        '(allow sysctl-read)', '(allow ipc-posix-shm)',
        '(allow file-read-metadata)',
        '(allow mach-lookup (global-name "com.apple.system.logger")'
        ' (global-name "com.apple.system.opendirectoryd.libinfo")'
        ' (global-name "com.apple.trustd.agent")'
        ' (global-name "com.apple.SystemConfiguration.configd"))',
        '(allow file-read* {paths})'.format(
            paths = _produce_filters( reads ) ),
        '(allow file-write* {paths})'.format(
            paths = _produce_filters( writes ) ),
    ]
    if sandbox.network is True: lines.append( '(allow network*)' )
    return '\n'.join( lines ) + '\n'


def survey_installation(
    program: str, arguments: __.cabc.Sequence[ str ] = ( )
) -> tuple[ str, ... ]:
    ''' Returns paths which hold a program's installation.

        For the program, its real path, its interpreter (of a ``#!``
        line) and files named among its arguments (a script): the
        outermost ``node_modules`` folder above it, else the virtual
        environment it lies in, else the prefix of its ``bin`` folder
        (when that holds a ``lib`` folder), else its folder. Never the
        root or the home folder: then the file alone.
    '''
    files = [ ( program, True ) ]
    interpreter = _paths.read_interpreter( program )
    if interpreter: files.append( ( interpreter, True ) )
    files.extend(
        ( argument, _paths.is_script( argument ) ) for argument in arguments
        if _os.path.isabs( argument ) or _os.sep in argument
        if _os.path.isfile( argument ) )
    found: dict[ str, None ] = { }
    for file, script in files:
        for candidate in _paths.follow_links( _os.path.abspath( file ) ):
            found[ _locate_installation( candidate, script = script ) ] = (
                None )
    return tuple( found )


def validate_sandbox(
    value: object, location: str = 'sandbox'
) -> __.Absential[ Sandbox ]:
    ''' Returns sandbox of a value: a sandbox, true (the default profile),
        false (none), or a mapping of its keys.
    '''
    if isinstance( value, Sandbox ): return value
    if value is True: return Sandbox( )
    if __.is_absent( value ) or value is False or value is None:
        return __.absent
    if isinstance( value, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value )
        unknown = set( mapping ) - _KEYS
        if unknown:
            raise _exceptions.ConfigurationInvalidity(
                location, "unknown keys {keys}; the keys are read, write, "
                "network, environment and disk_maximum.".format(
                    keys = ', '.join( sorted( map( repr, unknown ) ) ) ) )
        return Sandbox( **mapping )
    raise _exceptions.ConfigurationInvalidity(
        location, "must be true, false, or a table of read, write, network, "
        "environment and disk_maximum." )


def _locate_installation( path: str, *, script: bool = True ) -> str:
    ''' Returns folder which holds installation of file at path.

        A file which is no program or script (a configuration named among
        the arguments) is its own installation; so is one whose folder is
        broad (the root, the home folder or one above it, ``/etc``,
        ``/tmp``, ...), which would show far more than the server.
    '''
    parts = __.Path( path ).parents
    modules = [ part for part in parts if part.name == 'node_modules' ]
    if modules: return str( modules[ -1 ] )
    for part in parts:
        if ( part / 'pyvenv.cfg' ).is_file( ): return str( part )
    folder = __.Path( path ).parent
    if not script or _is_broad( folder ): return path
    prefix = folder.parent
    if folder.name == 'bin' and not _is_broad( prefix ) and (
        ( prefix / 'lib' ).is_dir( )
    ): return str( prefix )
    return str( folder )


def _is_broad( folder: __.Path ) -> bool:
    ''' Returns whether folder holds far more than one installation. '''
    home = __.Path.home( )
    if folder == home or folder in home.parents: return True
    if folder in ( home / '.local', home / '.config' ): return True
    return str( folder ) in _FOLDERS_BROAD or (
        str( folder ) == _tempfile.gettempdir( ) )


def _locate_program(
    program: str, environment: __.cabc.Mapping[ str, str ]
) -> str:
    if _os.sep in program:
        if not _os.path.exists( program ): raise FileNotFoundError( program )
        return _os.path.abspath( program )
    path = environment.get( 'PATH' ) or _os.environ.get( 'PATH' )
    located = _shutil.which( program, path = path )
    if located is None: raise FileNotFoundError( program )
    return _os.path.abspath( located )


def _normalize_names( names: object ) -> tuple[ str, ... ]:
    if isinstance( names, str ) or not isinstance( names, __.cabc.Iterable ):
        raise _exceptions.ConfigurationInvalidity(
            "sandbox 'environment'", "must be a list of variable names." )
    items = tuple( __.typx.cast( __.cabc.Iterable[ object ], names ) )
    for item in items:
        if not isinstance( item, str ) or not _variable.fullmatch( item ):
            raise _exceptions.ConfigurationInvalidity(
                "sandbox 'environment'",
                f"{item!r} is not a variable name; list names such as "
                "'GITHUB_TOKEN' (values go in the ensemble's "
                "environment)." )
    return __.typx.cast( tuple[ str, ... ], items )


def _normalize_paths( label: str, paths: object ) -> tuple[ str, ... ]:
    if isinstance( paths, str ) or not isinstance( paths, __.cabc.Iterable ):
        raise _exceptions.ConfigurationInvalidity(
            f"sandbox {label!r}", "must be a list of paths." )
    items: list[ str ] = [ ]
    for item in __.typx.cast( __.cabc.Iterable[ object ], paths ):
        text = (
            _os.fspath( __.typx.cast( '_os.PathLike[ str ]', item ) )
            if isinstance( item, _os.PathLike ) else item )
        if not isinstance( text, str ) or not text:
            raise _exceptions.ConfigurationInvalidity(
                f"sandbox {label!r}", f"{item!r} is not a path." )
        path = _os.path.expanduser( text )
        items.append( _os.path.normpath( _os.path.abspath( path ) ) )
    return tuple( dict.fromkeys( items ) )


def _validate_disk_maximum( value: object ) -> __.Absential[ int ]:
    if __.is_absent( value ) or value is None: return __.absent
    return __.values.validate_count(
        value, "sandbox 'disk_maximum'", minimum = _DISK_MINIMUM,
        maximum = _DISK_MAXIMUM, reason = "{value!r} is not a size; give a "
        f"whole number of bytes from {_DISK_MINIMUM} to {_DISK_MAXIMUM} "
        "(67108864 for 64 MiB)." )


def _order_path( path: str ) -> tuple[ int, str ]:
    return ( path.rstrip( '/' ).count( '/' ), path )


async def _probe_platform(
    ensemble: str, sandbox: Sandbox
) -> tuple[ str, Probe ]:
    ''' Returns sandboxing tool of this platform and what its probe found.
    '''
    platform = __.sys.platform
    if platform.startswith( 'linux' ):
        tool = _shutil.which( 'bwrap' )
        if tool is None:
            raise _exceptions.SandboxNoSupport(
                ensemble, "bubblewrap ('bwrap') is not on the PATH; install "
                "it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: "
                "dnf install bubblewrap; Arch: pacman -S bubblewrap)." )
        probe = await _probe_bwrap( tool )
        if probe.reason:
            raise _exceptions.SandboxNoSupport( ensemble, probe.reason )
        if not probe.size and not __.is_absent( sandbox.disk_maximum ):
            raise _exceptions.SandboxNoSupport(
                ensemble, "this bubblewrap cannot bound the size of a tmpfs "
                "(--size, bubblewrap 0.8 or later), so 'disk_maximum' "
                "cannot be enforced; upgrade bubblewrap or leave "
                "'disk_maximum' out (the private folder is then not "
                "bounded)." )
        return tool, probe
    if platform == 'darwin':
        tool = _shutil.which( 'sandbox-exec' ) or '/usr/bin/sandbox-exec'
        if not _os.path.exists( tool ):
            raise _exceptions.SandboxNoSupport(
                ensemble, "'sandbox-exec' is not present on this macOS." )
        if not isinstance( sandbox.network, bool ):
            raise _exceptions.SandboxNoSupport(
                ensemble, "a list of hosts needs Linux (bubblewrap); on "
                "macOS, allow the network (true) or not (false)." )
        if not __.is_absent( sandbox.disk_maximum ):
            raise _exceptions.SandboxNoSupport(
                ensemble, "'disk_maximum' needs Linux (bubblewrap): "
                "sandbox-exec cannot bound a folder's size; leave it out "
                "on macOS." )
        return tool, Probe( )
    raise _exceptions.SandboxNoSupport(
        ensemble, f"no sandbox is known on platform {platform!r}; "
        "sandboxes need Linux with bubblewrap or macOS." )


async def _probe_bwrap( tool: str ) -> Probe:
    ''' Runs bubblewrap once with the namespaces of a sandbox. '''
    if tool in _probes: return _probes[ tool ]
    base = [
        tool, '--die-with-parent', '--unshare-all', '--unshare-user' ]
    tail = [ '--cap-drop', 'ALL', '--ro-bind', '/', '/', 'true' ]
    code, error = await _run( [ *base, '--disable-userns', *tail ] )
    userns = [ '--disable-userns' ]
    if code and 'disable-userns' in error:
        code, error = await _run( [ *base, *tail ] )
        userns = [ ]
    # A tmpfs of bounded size over a folder which the root shows.
    sized, _ = await _run( [
        *base, *userns, *tail[ : -1 ], '--size', str( _DISK_MINIMUM ),
        '--tmpfs', '/tmp', 'true' ] ) # noqa: S108
    probe = Probe( userns_disable = bool( userns ), size = not sized )
    if code:
        line = ( error.strip( ).splitlines( ) or [ '' ] )[ -1 ][ : 200 ]
        probe = Probe( reason = (
            f"bubblewrap cannot create its namespaces here ({line}); allow "
            "unprivileged user namespaces (sysctl "
            "kernel.unprivileged_userns_clone=1, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0) or run where "
            "they are allowed." ) )
    _probes[ tool ] = probe
    return probe


def _produce_confinement(
    ensemble: str,
    sandbox: Sandbox,
    tool: tuple[ str, Probe ],
    command: tuple[ str, __.cabc.Sequence[ str ], tuple[ str, ... ] ],
    folders: tuple[ tuple[ str, ... ], str ],
    context: tuple[ __.cabc.Mapping[ str, str ], __.Absential[ str ] ],
) -> Confinement:
    program, arguments, bridge = command
    installation, folder = folders
    environment, cwd = context
    visible = ( *installation, *sandbox.read, *sandbox.write, folder )
    # The application's folder, as unconfined: relative paths among the
    # arguments read the same. Inside the sandbox, it holds only what the
    # sandbox shows of it (maybe nothing).
    cwd_ = _os.getcwd( ) if __.is_absent( cwd ) else _os.path.abspath( cwd )
    if not __.is_absent( cwd ) and not _paths.is_within( cwd_, visible ) and (
        not any( _paths.is_within( path, ( cwd_, ) ) for path in visible )
    ):
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {ensemble!r} 'cwd'",
            f"folder {cwd_!r} is outside the sandbox; add it to the "
            "sandbox's 'read' or 'write' paths." )
    searched = dict.fromkeys( (
        *(
            _os.path.dirname( path ) for path in (
                program, _os.path.realpath( program ) ) ),
        *_PATH_SYSTEM ) )
    variables = {
        'PATH': _os.pathsep.join( searched ), 'HOME': folder,
        'TMPDIR': folder, 'LANG': _os.environ.get( 'LANG', 'C.UTF-8' ) }
    variables.update(
        ( name, _os.environ[ name ] ) for name in sandbox.environment
        if name in _os.environ )
    variables.update( environment )
    name, probe = tool
    if __.sys.platform == 'darwin':
        profile = produce_profile(
            sandbox, tuple( map( _os.path.realpath, installation ) ),
            _os.path.realpath( folder ) )
        line = ( name, '-p', profile, program, *arguments )
        return Confinement(
            command = line, environment = variables, cwd = cwd_,
            folder = folder )
    options = produce_bwrap_arguments(
        sandbox, installation, folder, cwd_,
        userns_disable = probe.userns_disable )
    return Confinement(
        command = ( name, *options, '--', *bridge, program, *arguments ),
        environment = variables, cwd = __.absent, folder = folder )


def _produce_filters( paths: __.cabc.Iterable[ str ] ) -> str:
    filters: list[ str ] = [ ]
    for path in dict.fromkeys( paths ):
        text = path.replace( '\\', '\\\\' ).replace( '"', '\\"' )
        kind = 'subpath' if _os.path.isdir( path ) else 'literal'
        filters.append( f"({kind} \"{text}\")" )
    return ' '.join( filters )


async def _run( command: list[ str ] ) -> tuple[ int, str ]:
    import subprocess
    try:
        process = await __.asyncio.create_subprocess_exec(
            *command, stdin = subprocess.DEVNULL,
            stdout = subprocess.DEVNULL, stderr = subprocess.PIPE )
    except OSError as exception: return 1, str( exception )
    _, error = await process.communicate( )
    return process.returncode or 0, error.decode( errors = 'replace' )
