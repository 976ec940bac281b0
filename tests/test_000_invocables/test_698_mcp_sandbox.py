# SPDX-License-Identifier: Apache-2.0

''' Sandboxed servers: the record, the command, real servers confined.

    Real servers (the npm filesystem server, mcp-server-git,
    mcp-server-fetch, the test servers) run under bubblewrap: their tools
    work within what the sandbox allows, and the rest is refused from
    inside the server process. The lifecycle (no process left, deadlines,
    reconnection, stderr) is the same as unconfined.
'''


import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import invocables
import invocables.mcp

from invocables import descriptors, exceptions
from invocables.mcp import sandbox as sandboxes

from . import mcp_support


async def _call( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return await ensemble.access_invoker( name )( context, arguments or { } )


def _text( content ) -> str:
    if isinstance( content, invocables.TextContent ): return content.text
    return ''.join(
        item.text for item in content or ( )
        if isinstance( item, invocables.TextContent ) )


def _access_parent( pid: int ) -> int:
    with open( f"/proc/{pid}/stat", encoding = 'utf-8' ) as stream:
        return int( stream.read( ).rsplit( ')', 1 )[ -1 ].split( )[ 1 ] )


def _read_arguments( pid: int ) -> list[ str ]:
    try:
        with open( f"/proc/{pid}/cmdline", 'rb' ) as stream:
            return stream.read( ).decode( errors = 'replace' ).split( '\0' )
    except OSError: return [ ]


def _produce_echo( name = 'echo', **options ):
    return invocables.mcp.produce_ensemble(
        name, command = mcp_support.produce_server_command( 'echo_server.py' ),
        **options )


def test_100_record_normalizes( tmp_path, monkeypatch ):
    ''' Paths become absolute (relative to the current folder, ``~``
        expanded), lists become tuples, duplicates go.
    '''
    monkeypatch.chdir( tmp_path )
    sandbox = invocables.mcp.Sandbox(
        read = [ 'data', 'data', tmp_path / 'other' ], write = [ '~/out' ],
        environment = [ 'TOKEN' ] )
    assert sandbox.read == (
        str( tmp_path / 'data' ), str( tmp_path / 'other' ) )
    assert sandbox.write == ( os.path.expanduser( '~/out' ), )
    assert sandbox.environment == ( 'TOKEN', )
    assert sandbox.as_dictionary( ) == {
        'read': list( sandbox.read ), 'write': list( sandbox.write ),
        'network': False, 'environment': [ 'TOKEN' ] }


def test_110_record_refusals( ):
    ''' A host which is no DNS name, a bad variable name, a string of
        paths or an unknown key are refused, each saying what to write.
    '''
    for hosts in (
        [ '127.0.0.1' ], [ '[::1]:443' ], [ 'a..example.com' ],
        [ 'example.com:99999' ], [ 'example.com:http' ], [ 3 ],
        'example.com', [ '*.2130706433' ], [ 'user@example.com' ],
    ):
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            invocables.mcp.Sandbox( network = hosts )
        assert "sandbox 'network'" in str( caught.value ), hosts
    assert 'write a DNS name' in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.mcp.Sandbox( environment = [ 'NOT A NAME' ] )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.mcp.Sandbox( read = '/usr' )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        sandboxes.validate_sandbox( { 'raed': [ '/usr' ] } )
    assert "'raed'" in str( caught.value )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        sandboxes.validate_sandbox( 'yes' )
    assert sandboxes.validate_sandbox( True ) == invocables.mcp.Sandbox( )
    assert not isinstance(
        sandboxes.validate_sandbox( False ), invocables.mcp.Sandbox )


def test_115_record_hosts( ):
    ''' A list of hosts is kept normalized: lower case, IDNA, no final
        dot, duplicates gone; an empty list is no network.
    '''
    sandbox = invocables.mcp.Sandbox( network = [
        'API.Example.com.', '*.GitHub.com:443', 'bücher.example',
        'api.example.com' ] )
    assert sandbox.network == (
        'api.example.com', '*.github.com:443', 'xn--bcher-kva.example' )
    assert sandbox.as_dictionary( )[ 'network' ] == list( sandbox.network )
    assert invocables.mcp.Sandbox( network = [ ] ).network is False
    assert sandboxes.validate_sandbox(
        { 'network': [ 'example.com' ] } ).network == ( 'example.com', )


def test_120_ensemble_options( ):
    ''' The ensemble keeps its sandbox; ``True`` is the default profile;
        an HTTP server takes none.
    '''
    ensemble = _produce_echo( sandbox = True )
    assert ensemble.options.sandbox == invocables.mcp.Sandbox( )
    ensemble = _produce_echo( sandbox = False )
    assert not isinstance(
        ensemble.options.sandbox, invocables.mcp.Sandbox )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        invocables.mcp.produce_ensemble(
            'remote', url = 'http://127.0.0.1:9/mcp', sandbox = True )
    assert 'stdio servers only' in str( caught.value )


def test_130_bwrap_arguments( tmp_path ):
    ''' Bubblewrap gets every namespace, no capabilities, a read-only root,
        binds parents first, and the network only when allowed.
    '''
    inner = tmp_path / 'outer' / 'inner'
    sandbox = invocables.mcp.Sandbox(
        read = [ tmp_path / 'outer' ], write = [ inner ] )
    options = sandboxes.produce_bwrap_arguments(
        sandbox, ( '/opt/server', ), '/tmp/private', '/opt/server' )
    for option in (
        '--die-with-parent', '--unshare-all', '--unshare-user',
        '--disable-userns',
    ): assert option in options
    assert options[ options.index( '--cap-drop' ) + 1 ] == 'ALL'
    assert '--share-net' not in options
    assert options[ -2 : ] == [ '--remount-ro', '/' ]
    outer = options.index( str( tmp_path / 'outer' ) )
    assert options[ outer - 1 ] == '--ro-bind'
    assert options[ options.index( str( inner ) ) - 1 ] == '--bind'
    assert outer < options.index( str( inner ) )
    assert options[ options.index( '/tmp/private' ) - 1 ] == '--bind'
    assert '/etc/shadow' not in options
    assert '/etc/passwd' in options
    options = sandboxes.produce_bwrap_arguments(
        invocables.mcp.Sandbox( network = True ), ( ), '/tmp/p', '/tmp/p',
        userns_disable = False )
    assert '--share-net' in options
    assert '--disable-userns' not in options
    options = sandboxes.produce_bwrap_arguments(
        invocables.mcp.Sandbox( network = [ 'example.com' ] ), ( ),
        '/tmp/p', '/tmp/p' )
    assert '--share-net' not in options


def test_140_profile_darwin( tmp_path ):
    ''' The macOS profile denies by default, allows the paths given, and
        the network only when allowed.
    '''
    quoted = tmp_path / 'a "quoted" folder'
    quoted.mkdir( )
    sandbox = invocables.mcp.Sandbox( read = [ quoted ], write = [ tmp_path ] )
    profile = sandboxes.produce_profile( sandbox, ( '/opt/x', ), '/tmp/p' )
    assert profile.startswith( '(version 1)\n(deny default)\n' )
    assert '(subpath "{path}")'.format(
        path = str( quoted ).replace( '"', '\\"' ) ) in profile
    write = next(
        line for line in profile.splitlines( )
        if line.startswith( '(allow file-write*' ) )
    assert str( tmp_path ) in write
    assert str( quoted ).replace( '"', '\\"' ) not in write
    assert 'network' not in profile
    profile = sandboxes.produce_profile(
        invocables.mcp.Sandbox( network = True ), ( ), '/tmp/p' )
    assert '(allow network*)' in profile


def test_150_installation( ):
    ''' The installation of an npm server is its node_modules folder; of a
        Python script, its virtual environment and the interpreter's
        prefix; never the home folder.
    '''
    files = mcp_support.locate_npm_server( 'mcp-server-filesystem' )
    modules = str( mcp_support.NPM_BINS.parent )
    assert modules in sandboxes.survey_installation( files )
    python = mcp_support.SERVERS_PYTHON
    found = sandboxes.survey_installation(
        python, [ str( mcp_support.SERVERS / 'echo_server.py' ) ] )
    assert str( mcp_support.SERVERS ) in found
    assert os.path.expanduser( '~' ) not in found
    assert '/' not in found
    assert any(
        os.path.realpath( python ).startswith( path + os.sep )
        for path in found )


def test_160_installation_narrow( tmp_path ):
    ''' A configuration file among the arguments is read alone, not its
        folder; a script in a broad folder (the home, /tmp) alone too.
    '''
    python = mcp_support.SERVERS_PYTHON
    settings = tmp_path / 'settings.json'
    settings.write_text( '{}', encoding = 'utf-8' )
    found = sandboxes.survey_installation(
        python, [ '--config', str( settings ), '/etc/hostname' ] )
    assert str( settings ) in found
    assert str( tmp_path ) not in found
    assert '/etc' not in found
    script = tmp_path / 'server.py'
    script.write_text( 'print( )\n', encoding = 'utf-8' )
    assert str( tmp_path ) in sandboxes.survey_installation(
        python, [ str( script ) ] )
    found = sandboxes.survey_installation( python, [ '/etc/hostname' ] )
    assert not any( path in ( '/', '/etc', '/tmp' ) for path in found )


def _produce_linked_environment( root ):
    ''' Makes a virtual environment whose python is a link to a link
        outside it (as a venv made by a ``python3`` of a ``bin`` folder of
        links); it sees the servers' packages through a ``.pth`` file.
    '''
    python = os.path.realpath( mcp_support.SERVERS_PYTHON )
    links = root / 'links'
    links.mkdir( )
    ( links / 'python3' ).symlink_to( python )
    environment = root / 'environment'
    ( environment / 'bin' ).mkdir( parents = True )
    ( environment / 'bin' / 'python' ).symlink_to( links / 'python3' )
    ( environment / 'pyvenv.cfg' ).write_text(
        f"home = {os.path.dirname( python )}\n"
        "include-system-site-packages = false\n", encoding = 'utf-8' )
    packages = subprocess.run(
        [ mcp_support.SERVERS_PYTHON, '-c',
          'import sysconfig; print( sysconfig.get_paths( )[ "purelib" ] )' ],
        capture_output = True, text = True, check = True ).stdout.strip( )
    version = 'python{}.{}'.format( *subprocess.run(
        [ python, '-c', 'import sys; print( *sys.version_info[ :2 ] )' ],
        capture_output = True, text = True, check = True ).stdout.split( ) )
    own = environment / 'lib' / version / 'site-packages'
    own.mkdir( parents = True )
    ( own / 'servers.pth' ).write_text( packages + '\n', encoding = 'utf-8' )
    return environment / 'bin' / 'python', links, packages


def test_170_installation_links( tmp_path ):
    ''' Each link on the way to the interpreter is shown, not only the
        first path and the real one.
    '''
    python, links, _ = _produce_linked_environment( tmp_path )
    found = sandboxes.survey_installation( str( python ) )
    assert str( python.parent.parent ) in found
    assert str( links ) in found
    assert any(
        os.path.realpath( python ).startswith( path + os.sep )
        for path in found )


@pytest.mark.asyncio
async def test_175_linked_environment( tmp_path ):
    ''' A server runs confined from a virtual environment whose python
        leads through a link outside it.
    '''
    python, _, packages = _produce_linked_environment( tmp_path )
    ensemble = invocables.mcp.produce_ensemble(
        'linked', command = [
            str( python ), str( mcp_support.SERVERS / 'echo_server.py' ) ],
        sandbox = invocables.mcp.Sandbox( read = [ packages ] ) )
    async with ensemble:
        content = await _call( ensemble, 'echo', { 'message': 'through' } )
    assert 'through' in _text( content )


@pytest.mark.asyncio
async def test_200_no_bubblewrap( tmp_path, monkeypatch ):
    ''' Without bubblewrap, connecting fails in one line naming what to
        install, and starts nothing.
    '''
    monkeypatch.setenv( 'PATH', str( tmp_path ) )
    before = mcp_support.survey_descendants( os.getpid( ) )
    ensemble = _produce_echo( sandbox = True )
    with pytest.raises( exceptions.SandboxNoSupport ) as caught:
        await ensemble.connect( )
    message = str( caught.value )
    assert '\n' not in message
    assert 'apt-get install bubblewrap' in message
    assert isinstance( caught.value, exceptions.ConnectionFailure )
    assert not ensemble.is_connected( )
    assert mcp_support.survey_descendants( os.getpid( ) ) <= before


@pytest.mark.asyncio
async def test_205_proxy_unavailable( tmp_path, monkeypatch ):
    ''' Where the proxy of listed hosts cannot listen (a unix socket path
        too long), connecting fails saying so, and leaves no folder.
    '''
    folder = tmp_path / ( 'long' * 30 )
    folder.mkdir( )
    monkeypatch.setattr( tempfile, 'tempdir', str( folder ) )
    ensemble = _produce_echo(
        sandbox = invocables.mcp.Sandbox( network = [ 'example.com' ] ) )
    with pytest.raises( exceptions.SandboxNoSupport ) as caught:
        await ensemble.connect( )
    assert 'shorter TMPDIR' in str( caught.value )
    assert not list( folder.iterdir( ) )


@pytest.mark.asyncio
async def test_210_missing_path( tmp_path ):
    ''' A path of the sandbox which does not exist is refused at connect.
    '''
    ensemble = _produce_echo(
        sandbox = invocables.mcp.Sandbox( write = [ tmp_path / 'absent' ] ) )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        await ensemble.connect( )
    assert 'does not exist' in str( caught.value )


@pytest.mark.asyncio
async def test_300_filesystem_server( tmp_path ):
    ''' The npm filesystem server writes in its writable folder; a write
        elsewhere under its allowed folder is refused by the sandbox.
    '''
    inner = tmp_path / 'inner'
    inner.mkdir( )
    ( tmp_path / 'note.txt' ).write_text( 'readable', encoding = 'utf-8' )
    ensemble = invocables.mcp.produce_ensemble(
        'files', command = [
            mcp_support.locate_npm_server( 'mcp-server-filesystem' ),
            str( tmp_path ) ],
        sandbox = invocables.mcp.Sandbox(
            read = [ tmp_path ], write = [ inner ] ) )
    async with ensemble:
        content = await _call(
            ensemble, 'read_text_file',
            { 'path': str( tmp_path / 'note.txt' ) } )
        assert 'readable' in _text( content )
        await _call( ensemble, 'write_file', {
            'path': str( inner / 'new.txt' ), 'content': 'written' } )
        assert ( inner / 'new.txt' ).read_text( ) == 'written'
        with pytest.raises( exceptions.InvocationRefusal ) as caught:
            await _call( ensemble, 'write_file', {
                'path': str( tmp_path / 'outside.txt' ),
                'content': 'escaped' } )
        assert 'read-only' in str( caught.value ).lower( ) or (
            'EROFS' in str( caught.value ) )
    assert not ( tmp_path / 'outside.txt' ).exists( )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_310_git_server( tmp_path ):
    ''' mcp-server-git reads a repository it may read, and cannot change
        it until the sandbox lets it write there.
    '''
    repository = tmp_path / 'repository'
    repository.mkdir( )
    git = [ 'git', '-C', str( repository ) ]
    identity = [ '-c', 'user.name=Tester', '-c', 'user.email=t@example.org' ]
    subprocess.run( [ *git, 'init', '--quiet' ], check = True )
    ( repository / 'file.txt' ).write_text( 'one\n', encoding = 'utf-8' )
    subprocess.run( [ *git, 'add', 'file.txt' ], check = True )
    subprocess.run(
        [ *git, *identity, 'commit', '--quiet', '--message', 'First.' ],
        check = True )
    program = str( mcp_support.SERVERS_BINS / 'mcp-server-git' )
    arguments = { 'repo_path': str( repository ), 'branch_name': 'other' }
    ensemble = invocables.mcp.produce_ensemble(
        'git', command = [ program, '--repository', str( repository ) ],
        sandbox = invocables.mcp.Sandbox( read = [ repository ] ) )
    async with ensemble:
        content = await _call(
            ensemble, 'git_log', { 'repo_path': str( repository ) } )
        assert 'First.' in _text( content )
        with pytest.raises( exceptions.InvocationRefusal ):
            await _call( ensemble, 'git_create_branch', arguments )
    branches = subprocess.run(
        [ *git, 'branch', '--list' ], check = True, capture_output = True,
        text = True ).stdout
    assert 'other' not in branches
    ensemble = invocables.mcp.produce_ensemble(
        'git', command = [ program, '--repository', str( repository ) ],
        sandbox = invocables.mcp.Sandbox( write = [ repository ] ) )
    async with ensemble:
        await _call( ensemble, 'git_create_branch', arguments )
    branches = subprocess.run(
        [ *git, 'branch', '--list' ], check = True, capture_output = True,
        text = True ).stdout
    assert 'other' in branches


class _PageHandler( BaseHTTPRequestHandler ):

    def do_GET( self ) -> None: # noqa: N802 (the standard library's name)
        body = b'<html><body><p>sandboxed page</p></body></html>'
        self.send_response( 200 )
        self.send_header( 'Content-Type', 'text/html' )
        self.send_header( 'Content-Length', str( len( body ) ) )
        self.end_headers( )
        self.wfile.write( body )

    def log_message( self, *arguments ) -> None: pass


@pytest.mark.slow
@pytest.mark.asyncio
async def test_320_fetch_server( ):
    ''' mcp-server-fetch cannot reach a local page with the network off,
        and fetches it with the network on.
    '''
    server = ThreadingHTTPServer( ( '127.0.0.1', 0 ), _PageHandler )
    thread = threading.Thread( target = server.serve_forever, daemon = True )
    thread.start( )
    url = "http://127.0.0.1:{port}/page".format(
        port = server.server_address[ 1 ] )
    command = [
        str( mcp_support.SERVERS_BINS / 'mcp-server-fetch' ),
        '--ignore-robots-txt', '--allow-private-ips' ]
    try:
        for network in ( False, True ):
            ensemble = invocables.mcp.produce_ensemble(
                f"fetch_{network}".lower( ), command = command,
                sandbox = invocables.mcp.Sandbox( network = network ) )
            async with ensemble:
                if network:
                    content = await _call(
                        ensemble, 'fetch', { 'url': url, 'raw': True } )
                    assert 'sandboxed page' in _text( content )
                    continue
                with pytest.raises( exceptions.InvocationRefusal ) as caught:
                    await _call(
                        ensemble, 'fetch', { 'url': url, 'raw': True } )
                assert 'sandboxed page' not in str( caught.value )
                assert 'All connection attempts failed' in str(
                    caught.value )
    finally:
        server.shutdown( )
        server.server_close( )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_330_fetch_server_hosts( caplog ):
    ''' With a list of hosts, mcp-server-fetch fetches a listed page
        through the library's proxy; a name or port not listed, and an
        address, are refused with 403 from inside the server process, and
        the refusals are logged.
    '''
    server = ThreadingHTTPServer( ( '127.0.0.1', 0 ), _PageHandler )
    thread = threading.Thread( target = server.serve_forever, daemon = True )
    thread.start( )
    port = server.server_address[ 1 ]
    command = [
        str( mcp_support.SERVERS_BINS / 'mcp-server-fetch' ),
        '--ignore-robots-txt', '--allow-private-ips' ]
    ensemble = invocables.mcp.produce_ensemble(
        'fetch_hosts', command = command,
        sandbox = invocables.mcp.Sandbox( network = [ f"localhost:{port}" ] ) )
    try:
        async with ensemble:
            content = await _call( ensemble, 'fetch', {
                'url': f"http://LOCALHOST:{port}/page", 'raw': True } )
            assert 'sandboxed page' in _text( content )
            with caplog.at_level(
                'WARNING', logger = 'invocables.mcp._proxy'
            ):
                for url in (
                    f"http://127.0.0.1:{port}/page",
                    f"http://localhost:{port + 1}/page",
                    f"http://blocked.invalid:{port}/page",
                    "https://blocked.invalid/page",
                ):
                    with pytest.raises(
                        exceptions.InvocationRefusal
                    ) as caught:
                        await _call(
                            ensemble, 'fetch', { 'url': url, 'raw': True } )
                    assert '403' in str( caught.value ), url
                    assert 'sandboxed page' not in str( caught.value )
        logged = [ record.getMessage( ) for record in caplog.records ]
        assert len( logged ) == 4
        assert all( 'fetch_hosts' in message for message in logged )
    finally:
        server.shutdown( )
        server.server_close( )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_400_no_process_left( ):
    ''' Disconnecting leaves no process, also a child the server spawned.
    '''
    before = mcp_support.survey_descendants( os.getpid( ) )
    ensemble = _produce_echo( sandbox = True )
    async with ensemble:
        await _call( ensemble, 'spawn_child' )
        started = mcp_support.survey_descendants( os.getpid( ) ) - before
        assert len( started ) >= 3 # bubblewrap, its init, server, child
    assert not mcp_support.wait_until_dead( started )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_405_no_proxy_left( ):
    ''' With a list of hosts, disconnecting also ends the bridge inside
        the sandbox, the proxy's open connections and its socket.
    '''
    before = mcp_support.survey_descendants( os.getpid( ) )
    ensemble = _produce_echo(
        sandbox = invocables.mcp.Sandbox( network = [ 'example.com' ] ) )
    async with ensemble:
        started = mcp_support.survey_descendants( os.getpid( ) ) - before
        assert len( started ) >= 4 # bubblewrap, its init, bridge, server
        content = await _call(
            ensemble, 'read_environment', { 'name': 'HTTPS_PROXY' } )
        assert _text( content ).startswith( 'http://127.0.0.1:' )
        path, = {
            argument for pid in started
            for argument in _read_arguments( pid )
            if argument.endswith( '/proxy.sock' ) }
        reader, writer = await asyncio.open_unix_connection( path )
        writer.write( b'CONNECT example.com:443 HTTP/1.1\r\n' )
        await writer.drain( )
    assert await asyncio.wait_for( reader.read( ), 30 ) == b''
    writer.close( )
    assert not os.path.exists( path )
    assert not mcp_support.wait_until_dead( started )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_410_deadline( ):
    ''' A call beyond its timeout is refused; the session lives on. '''
    ensemble = _produce_echo( sandbox = True, timeouts = { 'sleep': 0.5 } )
    async with ensemble:
        with pytest.raises( exceptions.InvocationRefusal ):
            await _call( ensemble, 'sleep', { 'seconds': 30 } )
        content = await _call( ensemble, 'echo', { 'message': 'alive' } )
        assert _text( content ) == 'alive'


@pytest.mark.slow
@pytest.mark.asyncio
async def test_420_reconnect( ):
    ''' A sandboxed server killed while idle is restarted on next call,
        still confined.
    '''
    before = mcp_support.survey_descendants( os.getpid( ) )
    ensemble = _produce_echo( sandbox = True )
    async with ensemble:
        started = mcp_support.survey_descendants( os.getpid( ) ) - before
        leader, = (
            pid for pid in started if _access_parent( pid ) == os.getpid( ) )
        os.killpg( leader, signal.SIGKILL )
        assert not mcp_support.wait_until_dead( started )
        for _ in range( 3000 ): # bounded: no hang
            if not ensemble.is_connected( ): break
            await asyncio.sleep( 0.01 )
        content = await _call( ensemble, 'echo', { 'message': 'back' } )
        assert _text( content ) == 'back'
        content = await _call(
            ensemble, 'read_environment', { 'name': 'USER' } )
        assert _text( content ) == '(unset)'


@pytest.mark.asyncio
async def test_430_stderr( ):
    ''' A sandboxed server which dies at start is reported with its
        status and its last stderr lines.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'exiting', command = mcp_support.produce_server_command(
            'exit_server.py' ), sandbox = True )
    with pytest.raises( exceptions.ConnectionFailure ) as caught:
        await ensemble.connect( )
    assert 'exited with status 3' in str( caught.value )
    assert 'cannot start, no configuration' in str( caught.value )


def test_500_descriptor_table( tmp_path ):
    ''' ``sandbox`` of ``[mcp]``: paths from the descriptor's folder, and
        the ensemble confined so; written back as read.
    '''
    ( tmp_path / 'data' ).mkdir( )
    path = tmp_path / 'server.toml'
    path.write_text(
        "[ensemble]\nname = 'files'\n\n[mcp]\n"
        "command = [ 'mcp-server-filesystem', 'data' ]\n"
        "sandbox = { read = [ 'data' ], write = [ 'out' ], "
        "network = false, environment = [ 'TOKEN' ] }\n" )
    descriptor = descriptors.produce_ensemble_descriptor( path )
    ensemble = descriptors.produce_ensemble( descriptor )
    assert ensemble.options.sandbox == invocables.mcp.Sandbox(
        read = [ tmp_path / 'data' ], write = [ tmp_path / 'out' ],
        environment = [ 'TOKEN' ] )
    server = descriptors.servers.access_server_descriptor( ensemble )
    assert server.sandbox[ 'read' ] == [ str( tmp_path / 'data' ) ]
    path.write_text(
        "[ensemble]\nname = 'files'\n\n[mcp]\n"
        "command = [ 'mcp-server-filesystem' ]\nsandbox = true\n" )
    ensemble = descriptors.produce_ensemble(
        descriptors.produce_ensemble_descriptor( path ) )
    assert ensemble.options.sandbox == invocables.mcp.Sandbox( )


def test_505_descriptor_hosts( tmp_path ):
    ''' ``network`` of ``sandbox`` may list hosts; the ensemble gets them,
        and they are written back as read.
    '''
    path = tmp_path / 'server.toml'
    path.write_text(
        "[ensemble]\nname = 'fetch'\n\n[mcp]\n"
        "command = [ 'mcp-server-fetch' ]\n"
        "sandbox = { network = [ 'API.example.com', '*.github.com:443' ] }"
        "\n" )
    ensemble = descriptors.produce_ensemble(
        descriptors.produce_ensemble_descriptor( path ) )
    assert ensemble.options.sandbox.network == (
        'api.example.com', '*.github.com:443' )
    server = descriptors.servers.access_server_descriptor( ensemble )
    assert server.sandbox[ 'network' ] == [
        'api.example.com', '*.github.com:443' ]
    path.write_text(
        "[ensemble]\nname = 'fetch'\n\n[mcp]\n"
        "command = [ 'mcp-server-fetch' ]\n"
        "sandbox = { network = [ '10.0.0.1' ] }\n" )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        descriptors.produce_ensemble(
            descriptors.produce_ensemble_descriptor( path ) )
    assert 'DNS name' in str( caught.value )


def test_510_descriptor_refusals( tmp_path ):
    ''' A network which is no list of strings and an unknown key of
        ``sandbox`` are refused.
    '''
    path = tmp_path / 'server.toml'
    for sandbox, expected in (
        ( "{ network = [ 3 ] }", 'expected a string' ),
        ( "{ network = 'example.com' }", 'network' ),
        ( "{ raed = [ 'data' ] }", 'raed' ),
        ( "'yes'", 'expected true, false or a table' ),
    ):
        path.write_text(
            "[ensemble]\nname = 'files'\n\n[mcp]\n"
            f"command = [ 'mcp-server-filesystem' ]\nsandbox = {sandbox}\n" )
        with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
            descriptors.produce_ensemble_descriptor( path )
        assert expected in str( caught.value )


def test_520_servers_json( tmp_path ):
    ''' ``sandbox`` of a server of mcpServers JSON confines it too. '''
    document = { 'mcpServers': {
        'git': {
            'command': 'mcp-server-git', 'args': [ '--repository', '.' ],
            'sandbox': { 'read': [ 'repository' ], 'network': False } },
        'time': { 'command': 'mcp-server-time', 'sandbox': True },
        'open': { 'command': 'mcp-server-time', 'sandbox': False },
        'fetch': {
            'command': 'mcp-server-fetch',
            'sandbox': { 'network': [ 'Docs.Python.org' ] } },
    } }
    ( tmp_path / 'mcp.json' ).write_text( json.dumps( document ) )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'mcp.json'\n" )
    configuration = descriptors.produce_configuration(
        tmp_path / 'invocables.toml' )
    git, time, open_, fetch = (
        descriptors.produce_ensemble( descriptor )
        for descriptor in configuration.ensembles )
    assert fetch.options.sandbox.network == ( 'docs.python.org', )
    assert git.options.sandbox.read == ( str( tmp_path / 'repository' ), )
    assert time.options.sandbox == invocables.mcp.Sandbox( )
    assert not isinstance( open_.options.sandbox, invocables.mcp.Sandbox )


@pytest.mark.slow
def test_600_survey( tmp_path ):
    ''' ``survey`` and ``survey --json`` show each server's sandbox, the
        server connected inside it; an unconfined server says so.
    '''
    echo = mcp_support.produce_server_command( 'echo_server.py' )
    document = { 'mcpServers': {
        'confined': {
            'command': echo[ 0 ], 'args': echo[ 1 : ],
            'sandbox': { 'read': [ 'data' ], 'environment': [ 'TOKEN' ] } },
        'open': { 'command': echo[ 0 ], 'args': echo[ 1 : ] },
        'listed': {
            'command': echo[ 0 ], 'args': echo[ 1 : ],
            'sandbox': { 'network': [ 'example.com', '*.example.org' ] } },
    } }
    ( tmp_path / 'data' ).mkdir( )
    ( tmp_path / 'mcp.json' ).write_text( json.dumps( document ) )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'mcp.json'\n" )
    environment = dict( os.environ )
    environment.pop( 'INVOCABLES_CONFIGURATION', None )
    environment[ 'XDG_CONFIG_HOME' ] = str( tmp_path )
    def survey( *arguments ):
        process = subprocess.run(
            [ sys.executable, '-m', 'invocables', '--configuration',
              str( tmp_path / 'invocables.toml' ), 'survey', *arguments ],
            cwd = tmp_path, env = environment, capture_output = True,
            text = True, timeout = 120, check = False )
        assert process.returncode == 0, process.stderr
        return process.stdout
    report = json.loads( survey( '--json' ) )
    entries = { entry[ 'name' ]: entry for entry in report[ 'ensembles' ] }
    assert entries[ 'confined' ][ 'sandbox' ] == {
        'read': [ str( tmp_path / 'data' ) ], 'write': [ ],
        'network': False, 'environment': [ 'TOKEN' ] }
    assert entries[ 'confined' ][ 'error' ] is None
    assert entries[ 'confined' ][ 'tools' ]
    assert entries[ 'open' ][ 'sandbox' ] is False
    assert entries[ 'listed' ][ 'sandbox' ][ 'network' ] == [
        'example.com', '*.example.org' ]
    assert entries[ 'listed' ][ 'tools' ]
    text = survey( )
    assert "network example.com, *.example.org;" in text
    assert "Sandbox: read {path}; write private folder only; network off; "\
        "environment TOKEN".format( path = tmp_path / 'data' ) in text
    assert 'Sandbox: none (unconfined)' in text


@pytest.mark.asyncio
async def test_530_prepared_ensembles( tmp_path ):
    ''' The ensembles which ``serve`` aggregates (prepared from the
        configuration) keep their sandboxes, connected inside them.
    '''
    echo = mcp_support.produce_server_command( 'echo_server.py' )
    ( tmp_path / 'mcp.json' ).write_text( json.dumps( { 'mcpServers': {
        'echo': {
            'command': echo[ 0 ], 'args': echo[ 1 : ],
            'sandbox': { 'network': False } } } } ) )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'mcp.json'\n" )
    ensembles = await descriptors.prepare_ensembles(
        tmp_path / 'invocables.toml' )
    try:
        echo_, = ( item for item in ensembles if item.name == 'echo' )
        assert echo_.options.sandbox == invocables.mcp.Sandbox( )
        content = await _call(
            echo_, 'read_environment', { 'name': 'USER' } )
        assert _text( content ) == '(unset)'
    finally:
        for ensemble in ensembles: await ensemble.disconnect( )
