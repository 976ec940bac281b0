# SPDX-License-Identifier: Apache-2.0

''' A hostile server in a sandbox: every escape is refused from inside.

    The server (``servers/escape_server.py``) tries, from its own process,
    to read planted secrets, write outside its folders, follow links out,
    reach the network and unix sockets, read its parent's files and
    environment through ``/proc``, and see variables not passed.
'''


import asyncio
import os
import socket
import sys
import threading

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import pytest_asyncio

import invocables
import invocables.mcp

from invocables.mcp import _proxy

from . import mcp_support, sandbox_support


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


_call = sandbox_support.retrieve_text


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


@pytest.mark.slow
async def test_230_network_listed( planted ):
    ''' With a list of hosts, the server sees the proxy's variables, and
        a connection which does not go through the proxy leaves nothing.
    '''
    ensemble = invocables.mcp.produce_ensemble(
        'escape_hosts',
        command = mcp_support.produce_server_command( 'escape_server.py' ),
        sandbox = invocables.mcp.Sandbox( network = [ 'localhost' ] ) )
    listener = planted[ 'tcp' ]
    before = listener.accepted
    async with ensemble:
        answer = await _call( ensemble, 'read_environment' )
        variables = dict(
            line.split( '=', 1 ) for line in answer.splitlines( ) )
        for name in (
            'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy',
            'https_proxy', 'all_proxy',
        ): assert variables[ name ].startswith( 'http://127.0.0.1:' ), name
        for host in ( '127.0.0.1', 'localhost' ):
            answer = await _call(
                ensemble, 'connect_tcp', host = host,
                port = listener.address[ 1 ] )
            assert answer.startswith( 'refused:' ), host
    assert listener.accepted == before


class _Upstream:
    ''' HTTP server which counts requests and keeps their Host headers. '''

    def __init__( self ):
        self.hosts: list[ str ] = [ ]
        upstream = self

        class Handler( BaseHTTPRequestHandler ):

            def do_GET( self ) -> None: # noqa: N802 (standard name)
                upstream.hosts.append( self.headers.get( 'Host', '' ) )
                body = f"page {self.path}".encode( )
                self.send_response( 200 )
                self.send_header( 'Content-Length', str( len( body ) ) )
                self.end_headers( )
                self.wfile.write( body )

            do_POST = do_GET # noqa: N815 (standard name)

            def log_message( self, *arguments ) -> None: pass

        self.server = ThreadingHTTPServer( ( '127.0.0.1', 0 ), Handler )
        self.port = self.server.server_address[ 1 ]
        self.thread = threading.Thread(
            target = self.server.serve_forever, daemon = True )
        self.thread.start( )

    def close( self ) -> None:
        self.server.shutdown( )
        self.server.server_close( )


@pytest.fixture( scope = 'module' )
def upstream( ):
    ''' HTTP server standing for every listed host. '''
    server = _Upstream( )
    yield server
    server.close( )


@pytest_asyncio.fixture( loop_scope = 'module' )
async def proxy( tmp_path, upstream, planted ):
    ''' Proxy on a unix socket; every name resolves to loopback. '''
    port, tunnel = upstream.port, planted[ 'tcp' ].address[ 1 ]
    rules = _proxy.produce_rules( (
        f"api.example.test:{port}", f"*.wild.test:{port}",
        f"bücher.example.test:{port}", f"tunnel.example.test:{tunnel}",
        'default.example.test' ) )
    instance = _proxy.Proxy(
        'proxied', rules, resolver = lambda name: '127.0.0.1' )
    path = str( tmp_path / 'proxy.sock' )
    await instance.activate( path )
    yield instance, path, port
    instance.deactivate( )


async def _ask( path: str, request: str ) -> str:
    reader, writer = await asyncio.open_unix_connection( path )
    writer.write( request.encode( 'latin-1' ) )
    writer.write_eof( )
    try: data = await asyncio.wait_for( reader.read( ), 30 )
    finally: writer.close( )
    return data.decode( 'latin-1' )


def _get( authority: str, host: str | None = None, path = '/page' ) -> str:
    host = authority if host is None else host
    return f"GET http://{authority}{path} HTTP/1.1\r\nHost: {host}\r\n\r\n"


async def test_300_proxy_forwards( proxy, upstream ):
    ''' A listed host is reached, in its own name, by plain HTTP: also
        in mixed case and punycode, and without a Host header. A name
        which only a wildcard lists reaches no loopback address: whoever
        names its subdomains could point one at the host's own services.
    '''
    instance, path, port = proxy
    assert instance.is_allowed( 'a.b.wild.test', port )
    answer = await _ask( path, _get( f"a.b.wild.test:{port}" ) )
    assert answer.startswith( 'HTTP/1.1 403' )
    assert 'a loopback address' in answer
    for authority in (
        f"api.example.test:{port}", f"API.Example.TEST.:{port}",
        f"XN--BCHER-KVA.example.test:{port}",
    ):
        answer = await _ask( path, _get( authority ) )
        assert answer.startswith( 'HTTP/1.0 200' ), authority
        assert answer.endswith( 'page /page' ), authority
        assert upstream.hosts[ -1 ] == authority
    answer = await _ask(
        path, f"GET http://api.example.test:{port}/x?y HTTP/1.0\r\n\r\n" )
    assert answer.endswith( 'page /x?y' )
    assert upstream.hosts[ -1 ] == f"api.example.test:{port}"


async def test_310_proxy_refuses( proxy, upstream ):
    ''' Names not listed, other ports, addresses written any way,
        credentials, a Host header naming another host and targets which
        are not http:// are refused; nothing reaches the upstream.
    '''
    _, path, port = proxy
    before = len( upstream.hosts )
    refused = [
        _get( f"{authority}:{port}" ) for authority in (
            'other.example.test', 'wild.test', 'api.example.test.evil',
            '127.0.0.1', '2130706433', '0x7f.0.0.1', '127.1', '[::1]',
            'user@api.example.test', 'api.example.test%2f' ) ]
    refused.extend( (
        _get( 'api.example.test:1' ), _get( 'api.example.test' ),
        _get( f"api.example.test:{port}", f"other.example.test:{port}" ),
        _get( f"api.example.test:{port}", 'api.example.test' ),
        f"GET http://api.example.test:{port}/ HTTP/1.1\r\n"
        f"Host: api.example.test:{port}\r\n"
        "Host: other.example.test\r\n\r\n",
        "CONNECT api.example.test:443 HTTP/1.1\r\n\r\n",
        f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n",
        "CONNECT api.example.test HTTP/1.1\r\n\r\n",
    ) )
    for request in refused:
        answer = await _ask( path, request )
        assert answer.startswith( 'HTTP/1.1 403 Forbidden' ), request
        assert 'invocables sandbox proxy' in answer
    for request, status in (
        ( f"GET ftp://api.example.test:{port}/ HTTP/1.1\r\n\r\n", '400' ),
        ( f"GET /page HTTP/1.1\r\nHost: api.example.test:{port}\r\n\r\n",
          '400' ),
        ( 'nonsense\r\n\r\n', '400' ),
        ( f"GET http://api.example.test:{port}/ HTTP/1.1\r\n"
          f"Host: api.example.test:{port}\r\nX: a\nHost: other.test\r\n\r\n",
          '400' ),
        ( f"POST http://api.example.test:{port}/ HTTP/1.1\r\n"
          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", '501' ),
    ):
        answer = await _ask( path, request )
        assert answer.startswith( f"HTTP/1.1 {status}" ), request
    assert len( upstream.hosts ) == before


async def test_320_proxy_one_request( proxy, upstream ):
    ''' A request's body is passed, and nothing after it: a second
        request on the same connection, under another Host, never reaches
        the upstream.
    '''
    _, path, port = proxy
    before = len( upstream.hosts )
    request = (
        f"POST http://api.example.test:{port}/form HTTP/1.1\r\n"
        f"Host: api.example.test:{port}\r\nContent-Length: 4\r\n\r\nbody"
        + _get( f"api.example.test:{port}", 'intranet.example.test' ) )
    answer = await _ask( path, request )
    assert answer.endswith( 'page /form' )
    assert upstream.hosts[ before : ] == [ f"api.example.test:{port}" ]


async def test_330_proxy_tunnels( proxy, planted ):
    ''' CONNECT to a listed host and port opens a tunnel; a listed host
        without a port is reached on 80 and 443 only.
    '''
    instance, path, _ = proxy
    listener = planted[ 'tcp' ]
    before = listener.accepted
    answer = await _ask(
        path, "CONNECT tunnel.example.test:{port} HTTP/1.1\r\n"
        "Host: tunnel.example.test:{port}\r\n\r\n".format(
            port = listener.address[ 1 ] ) )
    assert answer == 'HTTP/1.1 200 Connection Established\r\n\r\nhello'
    assert listener.accepted == before + 1
    assert instance.is_allowed( 'default.example.test', 443 )
    assert instance.is_allowed( 'default.example.test', 80 )
    assert not instance.is_allowed( 'default.example.test', 8443 )


async def test_340_proxy_unreached( proxy ):
    ''' A listed host which cannot be reached is answered 502. '''
    instance, path, _ = proxy
    closed = socket.socket( )
    closed.bind( ( '127.0.0.1', 0 ) )
    port = closed.getsockname( )[ 1 ]
    closed.close( )
    rules = _proxy.produce_rules( ( f"api.example.test:{port}", ) )
    other = _proxy.Proxy(
        'unreached', rules, resolver = lambda name: '127.0.0.1' )
    await other.activate( path + '.2' )
    request = _get( f"api.example.test:{port}" )
    try: answer = await _ask( path + '.2', request )
    finally: other.deactivate( )
    assert answer.startswith( 'HTTP/1.1 502 Bad Gateway' )


async def test_350_proxy_logs( proxy, caplog ):
    ''' A refusal is logged with the ensemble's name and the reason. '''
    _, path, port = proxy
    with caplog.at_level( 'WARNING', logger = 'invocables.mcp._proxy' ):
        await _ask( path, _get( f"other.example.test:{port}" ) )
    assert any(
        'proxied' in record.getMessage( )
        and 'other.example.test' in record.getMessage( )
        for record in caplog.records )


async def test_360_proxy_deactivated( proxy ):
    ''' Deactivation ends open connections and stops listening. '''
    instance, path, _ = proxy
    reader, writer = await asyncio.open_unix_connection( path )
    writer.write( b'GET http://api.example.test/ HTTP/1.1\r\n' )
    for _ in range( 1000 ): # bounded: until the proxy holds it
        if instance.connections: break
        await asyncio.sleep( 0 )
    assert instance.connections
    instance.deactivate( )
    assert await asyncio.wait_for( reader.read( ), 30 ) == b''
    writer.close( )
    for _ in range( 1000 ): # bounded: until the cancellation is done
        if not instance.connections: break
        await asyncio.sleep( 0 )
    assert not instance.connections
    with pytest.raises( OSError ):
        await asyncio.open_unix_connection( path )


async def test_370_host_names( ):
    ''' Names are compared in lower-case ASCII; addresses are no names.
    '''
    assert _proxy.normalize_name( 'Bücher.Example.' ) == (
        'xn--bcher-kva.example' )
    for text in (
        '', '127.0.0.1', '1.2.3.0x10', '4294967295', '[::1]', 'a..b',
        'a b', '-a.example', 'a' * 64 + '.example',
    ):
        with pytest.raises( ValueError ): # noqa: PT011
            _proxy.normalize_name( text )
