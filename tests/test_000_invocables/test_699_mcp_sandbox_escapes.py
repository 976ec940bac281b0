# SPDX-License-Identifier: Apache-2.0

''' A hostile server in a sandbox: every escape is refused from inside.

    The server (``servers/escape_server.py``) tries, from its own process,
    to read planted secrets, write outside its folders, follow links out,
    reach the network and unix sockets, read its parent's files and
    environment through ``/proc``, and see variables not passed.
'''


import os
import socket
import sys
import threading

import pytest
import pytest_asyncio

import invocables
import invocables.mcp

from . import mcp_support


pytestmark = pytest.mark.asyncio( loop_scope = 'module' )

_SECRET = 'planted-secret-4711'


class _Listener:
    ''' Listener which greets each connection, on TCP or a unix socket. '''

    def __init__( self, family: int, address: object ):
        self.socket = socket.socket( family, socket.SOCK_STREAM )
        self.socket.bind( address )
        self.socket.listen( 8 )
        self.address = self.socket.getsockname( )
        self.accepted = 0
        self.thread = threading.Thread( target = self._serve, daemon = True )
        self.thread.start( )

    def _serve( self ) -> None:
        while True:
            try: peer, _ = self.socket.accept( )
            except OSError: return
            self.accepted += 1
            with peer: peer.sendall( b'hello' )

    def close( self ) -> None:
        self.socket.close( )


@pytest.fixture( scope = 'module' )
def planted( tmp_path_factory ):
    ''' Secrets outside the sandbox; a writable folder; listeners. '''
    root = tmp_path_factory.mktemp( 'escape' )
    home = root / 'home'
    ( home / '.ssh' ).mkdir( parents = True )
    ( home / '.ssh' / 'id_ed25519' ).write_text(
        _SECRET, encoding = 'utf-8' )
    writable = root / 'writable'
    writable.mkdir( )
    readable = root / 'readable'
    readable.mkdir( )
    ( readable / 'allowed.txt' ).write_text( 'allowed', encoding = 'utf-8' )
    tcp = _Listener( socket.AF_INET, ( '127.0.0.1', 0 ) )
    unix = _Listener( socket.AF_UNIX, str( root / 'outside.sock' ) )
    abstract_name = f"invocables-escape-{os.getpid( )}"
    abstract = _Listener( socket.AF_UNIX, '\0' + abstract_name )
    os.environ[ 'INVOCABLES_PLANTED_SECRET' ] = _SECRET
    yield {
        'root': root, 'home': home, 'writable': writable,
        'readable': readable, 'tcp': tcp, 'unix': unix,
        'abstract': '@' + abstract_name }
    os.environ.pop( 'INVOCABLES_PLANTED_SECRET', None )
    for listener in ( tcp, unix, abstract ): listener.close( )


@pytest_asyncio.fixture( scope = 'module', loop_scope = 'module' )
async def hostile( planted ):
    ''' Escape server in a sandbox: reads one folder, writes another. '''
    ensemble = invocables.mcp.produce_ensemble(
        'escape',
        command = mcp_support.produce_server_command( 'escape_server.py' ),
        environment = { 'GIVEN': 'given-value' },
        sandbox = invocables.mcp.Sandbox(
            read = [ planted[ 'readable' ] ],
            write = [ planted[ 'writable' ] ] ) )
    async with ensemble: yield ensemble


async def _call( ensemble, name, **arguments ) -> str:
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    content = await ensemble.access_invoker( name )( context, arguments )
    if isinstance( content, invocables.TextContent ): return content.text
    return ''.join(
        item.text for item in content
        if isinstance( item, invocables.TextContent ) )


async def test_100_planted_secret( hostile, planted ):
    ''' A secret outside the readable folders cannot be read. '''
    path = planted[ 'home' ] / '.ssh' / 'id_ed25519'
    answer = await _call( hostile, 'read_file', path = str( path ) )
    assert answer.startswith( 'refused:' )
    assert _SECRET not in answer


async def test_110_system_secrets( hostile ):
    ''' Shadow passwords, host keys and the home folder are not there:
        of the home, only the way to an installation the server runs from.
    '''
    answer = await _call( hostile, 'read_file', path = '/etc/shadow' )
    assert answer.startswith( 'refused:' )
    answer = await _call( hostile, 'list_folder', path = '/etc/ssh' )
    assert answer.startswith( 'refused:' )
    home = os.path.expanduser( '~' )
    answer = await _call( hostile, 'list_folder', path = home )
    installations = [
        os.path.realpath( path ) for path in (
            sys.prefix, sys.base_prefix, mcp_support.SERVERS_PYTHON,
            mcp_support.SERVERS ) ]
    if answer.startswith( 'ok:' ):
        for name in answer[ 3 : ].split( ):
            way = os.path.join( home, name ) + os.sep
            assert any(
                path.startswith( way ) for path in installations ), name


async def test_120_readable_folder( hostile, planted ):
    ''' A readable folder reads, but refuses writes. '''
    readable = planted[ 'readable' ]
    answer = await _call(
        hostile, 'read_file', path = str( readable / 'allowed.txt' ) )
    assert answer == 'ok: allowed'
    answer = await _call(
        hostile, 'write_file', path = str( readable / 'new.txt' ),
        text = 'x' )
    assert answer.startswith( 'refused:' )
    assert not ( readable / 'new.txt' ).exists( )


async def test_130_write_outside( hostile, planted ):
    ''' Writes land in the writable folder, nowhere else. '''
    inside = planted[ 'writable' ] / 'inside.txt'
    answer = await _call(
        hostile, 'write_file', path = str( inside ), text = 'inside' )
    assert answer.startswith( 'ok:' )
    assert inside.read_text( encoding = 'utf-8' ) == 'inside'
    for outside in (
        planted[ 'root' ] / 'outside.txt',
        planted[ 'home' ] / '.bashrc',
        mcp_support.SERVERS / 'planted.py',
    ):
        answer = await _call(
            hostile, 'write_file', path = str( outside ), text = 'x' )
        assert answer.startswith( 'refused:' ), outside
        assert not outside.exists( )


async def test_140_symbolic_link( hostile, planted ):
    ''' A link planted in the writable folder does not lead outside. '''
    target = planted[ 'home' ] / '.ssh' / 'id_ed25519'
    link = planted[ 'writable' ] / 'link'
    answer = await _call(
        hostile, 'follow_link', target = str( target ), link = str( link ) )
    assert answer.startswith( 'refused:' )
    assert _SECRET not in answer
    answer = await _call(
        hostile, 'link_hard', target = str( target ),
        link = str( planted[ 'writable' ] / 'hard' ) )
    assert answer.startswith( 'refused:' )


async def test_145_link_in_readable( hostile, planted ):
    ''' A link to a secret, lying in a readable folder, leads nowhere. '''
    link = planted[ 'readable' ] / 'planted-link'
    if not link.is_symlink( ):
        link.symlink_to( planted[ 'home' ] / '.ssh' / 'id_ed25519' )
    answer = await _call( hostile, 'read_file', path = str( link ) )
    assert answer.startswith( 'refused:' )
    assert _SECRET not in answer
    answer = await _call(
        hostile, 'list_folder', path = str( planted[ 'home' ] ) )
    assert answer.startswith( 'refused:' )


async def test_150_network( hostile, planted ):
    ''' No TCP connection leaves the sandbox, not even to loopback. '''
    listener = planted[ 'tcp' ]
    before = listener.accepted
    answer = await _call(
        hostile, 'connect_tcp', host = '127.0.0.1',
        port = listener.address[ 1 ] )
    assert answer.startswith( 'refused:' )
    assert listener.accepted == before


async def test_160_unix_sockets( hostile, planted ):
    ''' Unix sockets outside, named or abstract, are not reached. '''
    for path in ( str( planted[ 'unix' ].address ), planted[ 'abstract' ] ):
        answer = await _call( hostile, 'connect_unix', path = path )
        assert answer.startswith( 'refused:' ), path


async def test_170_environment( hostile ):
    ''' Only the variables given and the sandbox's own are seen. '''
    answer = await _call( hostile, 'read_environment' )
    names = { line.split( '=', 1 )[ 0 ] for line in answer.splitlines( ) }
    assert _SECRET not in answer
    assert 'GIVEN=given-value' in answer.splitlines( )
    assert names <= { 'GIVEN', 'HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR' }


async def test_180_parent_process( hostile, planted ):
    ''' The parent's environment and folder, and the application, are
        out of reach through /proc.
    '''
    answer = await _call( hostile, 'read_parent' )
    assert _SECRET not in answer
    assert 'pyproject.toml' not in answer
    for path in ( '/proc/1/environ', f"/proc/{os.getpid( )}/environ" ):
        answer = await _call( hostile, 'read_file', path = path )
        assert _SECRET not in answer, path
    answer = await _call( hostile, 'signal_process', pid = os.getpid( ) )
    assert answer.startswith( 'refused:' )


async def test_185_kernel_settings( hostile ):
    ''' Kernel settings cannot be written, even by a server run by root;
        /sys is not there.
    '''
    path = '/proc/sys/kernel/printk_ratelimit'
    with open( path, encoding = 'utf-8' ) as stream: value = stream.read( )
    answer = await _call( hostile, 'write_file', path = path, text = value )
    assert answer.startswith( 'refused:' )
    answer = await _call( hostile, 'list_folder', path = '/sys/class' )
    assert answer.startswith( 'refused:' )


async def test_190_working_folder( hostile ):
    ''' The application's folder holds only what the sandbox shows. '''
    answer = await _call( hostile, 'survey_identity' )
    folder = answer.split( ' ', 3 )[ 3 ]
    assert folder == os.getcwd( )
    answer = await _call( hostile, 'list_folder', path = folder )
    assert 'pyproject.toml' not in answer
    answer = await _call(
        hostile, 'read_file', path = os.path.join( folder, 'README.rst' ) )
    assert answer.startswith( 'refused:' )


@pytest.mark.slow
async def test_200_network_allowed( planted ):
    ''' With the network allowed, the same connection succeeds. '''
    ensemble = invocables.mcp.produce_ensemble(
        'escape_net',
        command = mcp_support.produce_server_command( 'escape_server.py' ),
        sandbox = invocables.mcp.Sandbox( network = True ) )
    async with ensemble:
        answer = await _call(
            ensemble, 'connect_tcp', host = '127.0.0.1',
            port = planted[ 'tcp' ].address[ 1 ] )
        assert answer == 'ok: hello'
        answer = await _call(
            ensemble, 'read_file',
            path = str( planted[ 'home' ] / '.ssh' / 'id_ed25519' ) )
        assert answer.startswith( 'refused:' )


@pytest.mark.slow
async def test_210_environment_listed( planted ):
    ''' A variable listed by the sandbox is passed; others are not. '''
    ensemble = invocables.mcp.produce_ensemble(
        'escape_listed',
        command = mcp_support.produce_server_command( 'escape_server.py' ),
        sandbox = invocables.mcp.Sandbox(
            environment = [ 'INVOCABLES_PLANTED_SECRET' ] ) )
    async with ensemble:
        answer = await _call( ensemble, 'read_environment' )
    assert f"INVOCABLES_PLANTED_SECRET={_SECRET}" in answer.splitlines( )
    assert 'USER=' not in answer


def _survey_sleepers( marker: str ) -> set[ int ]:
    found: set[ int ] = set( )
    for entry in os.listdir( '/proc' ):
        if not entry.isdigit( ): continue
        try:
            with open( f"/proc/{entry}/cmdline", 'rb' ) as stream:
                line = stream.read( )
        except OSError: continue
        if marker.encode( ) in line.split( b'\0' ) and (
            mcp_support.probe_process( int( entry ) )
        ): found.add( int( entry ) )
    return found


@pytest.mark.slow
async def test_220_detached_child( ):
    ''' A child which leaves the server's session and ignores SIGTERM
        still ends with the sandbox: no process is left.
    '''
    marker = f"{3000 + os.getpid( ) % 500}.25"
    ensemble = invocables.mcp.produce_ensemble(
        'escape_detached',
        command = mcp_support.produce_server_command( 'escape_server.py' ),
        sandbox = True )
    async with ensemble:
        answer = await _call( ensemble, 'spawn_detached', seconds = marker )
        assert answer.startswith( 'ok:' )
        sleepers = _survey_sleepers( marker )
        assert sleepers
    assert not mcp_support.wait_until_dead( sleepers )
    assert not _survey_sleepers( marker )
