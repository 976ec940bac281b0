# SPDX-License-Identifier: Apache-2.0

''' A hostile sandboxed server against the proxy of listed hosts and
    against the sandbox's own folders.

    The proxy runs on a real unix socket, before a real TCP upstream; the
    sandboxed server (``servers/sandbox_hostile_server.py``) runs under
    bubblewrap and leaves traps: folders without modes in its private
    folder, links planted in its writable folder for its next start, the
    proxy's socket opened to other users.
'''


import asyncio
import os
import socket
import time

import pytest
import pytest_asyncio

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.mcp import _proxy

from . import mcp_support, sandbox_support
from . import serving_support


_SECRET = 'planted-secret-0641'
_BOUND = 30.0 # proves "does not hang", never the pace of a machine
_ADDRESSES = {
    'api.example.test': '127.0.0.1',
    'metadata.example.test': '169.254.169.254',
    'zero.example.test': '0.0.0.0', # noqa: S104 (the attack itself)
    'mapped.example.test': '::ffff:169.254.169.254',
    'nat.example.test': '64:ff9b::a9fe:a9fe',
    'local6.example.test': 'fe80::1',
    'multicast.example.test': '224.0.0.1',
}


class _Upstream:
    ''' TCP server which keeps every byte it receives, per connection. '''

    def __init__( self ):
        self.received: list[ bytearray ] = [ ]
        self.changed = asyncio.Event( )
        self.server: asyncio.Server | None = None
        self.port = 0

    async def activate( self ) -> None:
        self.server = await asyncio.start_server(
            self._serve, '127.0.0.1', 0 )
        self.port = self.server.sockets[ 0 ].getsockname( )[ 1 ]

    async def _serve( self, reader, writer ) -> None:
        data = bytearray( )
        self.received.append( data )
        self.changed.set( )
        try:
            while chunk := await reader.read( 65536 ):
                data.extend( chunk )
                self.changed.set( )
        finally: writer.close( )

    async def wait_until( self, predicate ) -> None:
        await serving_support.wait_until( self.changed, predicate, _BOUND )


@pytest_asyncio.fixture
async def upstream( ):
    ''' Raw upstream standing for every listed host. '''
    server = _Upstream( )
    await server.activate( )
    yield server
    assert server.server is not None
    server.server.close( )


@pytest_asyncio.fixture
async def proxy( tmp_path, upstream ):
    ''' Proxy whose names resolve as _ADDRESSES says. '''
    rules = _proxy.produce_rules(
        f"{name}:{upstream.port}" for name in _ADDRESSES )
    instance = _proxy.Proxy(
        'hostile', rules, resolver = lambda name: _ADDRESSES[ name ] )
    path = str( tmp_path / 'proxy.sock' )
    await instance.activate( path )
    yield instance, path
    instance.deactivate( )


async def _ask( path: str, request: str ) -> str:
    reader, writer = await asyncio.open_unix_connection( path )
    writer.write( request.encode( 'latin-1' ) )
    try: data = await asyncio.wait_for( reader.read( ), _BOUND )
    finally: writer.close( )
    return data.decode( 'latin-1' )


async def _wait_for( predicate ) -> None:
    ''' Lets the loop run until predicate holds; bounded, never paced. '''
    deadline = time.monotonic( ) + _BOUND
    while not predicate( ):
        assert time.monotonic( ) < deadline
        await asyncio.sleep( 0 )


def _get( name: str, port: int ) -> str:
    return (
        f"GET http://{name}:{port}/ HTTP/1.1\r\n"
        f"Host: {name}:{port}\r\n\r\n" )


@pytest.mark.asyncio
async def test_100_body_streamed( proxy, upstream ):
    ''' A body announced far longer than it is sent is passed as it
        comes: the application never holds it whole.
    '''
    _, path = proxy
    reader, writer = await asyncio.open_unix_connection( path )
    name = f"api.example.test:{upstream.port}"
    writer.write( (
        f"POST http://{name}/ HTTP/1.1\r\nHost: {name}\r\n"
        f"Content-Length: {10 ** 11}\r\n\r\n" ).encode( ) )
    chunk = b'x' * 65536
    for _ in range( 16 ):
        writer.write( chunk )
        await writer.drain( )
    try:
        await upstream.wait_until( lambda: bool( upstream.received ) and (
            upstream.received[ 0 ].endswith( chunk )
            and len( upstream.received[ 0 ] ) > 16 * len( chunk ) ) )
    finally: writer.close( )
    del reader


@pytest.mark.asyncio
async def test_120_connections_bounded( proxy, upstream ):
    ''' Connections held at once are bounded: one more is answered 503
        at once, and closed; closing one makes room again.
    '''
    instance, path = proxy
    maximum = 64 # the most the proxy holds
    held = [
        await asyncio.open_unix_connection( path )
        for _ in range( maximum ) ]
    try:
        await _wait_for( lambda: len( instance.connections ) == maximum )
        # Answered before anything is read: the proxy holds nothing more.
        answer = await _ask( path, '' )
        assert answer.startswith( 'HTTP/1.1 503' )
        assert not upstream.received
        _, writer = held.pop( )
        writer.close( )
        await _wait_for( lambda: len( instance.connections ) < maximum )
        request = asyncio.create_task( _ask(
            path, _get( 'api.example.test', upstream.port ) ) )
        await upstream.wait_until( lambda: bool( upstream.received ) )
        request.cancel( )
    finally:
        for _, writer in held: writer.close( )


@pytest.mark.asyncio
async def test_130_addresses_refused( proxy, upstream ):
    ''' A listed name which resolves to a link-local (cloud metadata),
        unspecified, multicast address, also inside IPv6, is refused:
        neither a request nor a tunnel reaches it.
    '''
    _, path = proxy
    port = upstream.port
    for name in _ADDRESSES:
        if name == 'api.example.test': continue
        for request in (
            _get( name, port ), f"CONNECT {name}:{port} HTTP/1.1\r\n\r\n",
        ):
            answer = await _ask( path, request )
            assert answer.startswith( 'HTTP/1.1 403' ), request
            assert 'never reaches' in answer, request
    assert not upstream.received


@pytest.mark.asyncio
async def test_140_head_bounded( proxy, upstream ):
    ''' A head which never ends, or is too long, is dropped; nothing
        reaches the upstream.
    '''
    instance, path = proxy
    reader, writer = await asyncio.open_unix_connection( path )
    writer.write(
        f"GET http://api.example.test:{upstream.port}/ HTTP/1.1\r\n".encode( )
        + b'X-Long: ' + b'a' * 70000 )
    await writer.drain( )
    assert await asyncio.wait_for( reader.read( ), _BOUND ) == b''
    writer.close( )
    await _wait_for( lambda: not instance.connections )
    assert not upstream.received


@pytest.mark.asyncio
async def test_150_tunnel_ended( proxy, upstream ):
    ''' A tunnel which neither end closes ends with the proxy: the
        upstream sees its connection closed, and no task is left.
    '''
    instance, path = proxy
    reader, writer = await asyncio.open_unix_connection( path )
    writer.write(
        f"CONNECT api.example.test:{upstream.port} HTTP/1.1\r\n\r\n"
        "payload".encode( ) )
    await upstream.wait_until( lambda: bool( upstream.received ) and (
        upstream.received[ 0 ] == b'payload' ) )
    tasks = set( instance.connections )
    instance.deactivate( )
    done, _ = await asyncio.wait( tasks, timeout = _BOUND )
    assert done == tasks
    assert await asyncio.wait_for( reader.read( ), _BOUND ) == (
        b'HTTP/1.1 200 Connection Established\r\n\r\n' )
    writer.close( )
    assert not instance.connections
    connection = socket.socket( socket.AF_UNIX )
    with pytest.raises( OSError ): connection.connect( path )
    connection.close( )


@pytest.mark.asyncio
async def test_160_refusals_logged_bounded( proxy, caplog ):
    ''' A flood of refused requests, some of huge targets, does not
        flood the application's logs: the first refusals are warnings of
        bounded length, then one line says the others are debug.
    '''
    _, path = proxy
    requests = [ _get( 'a' * 30000, 80 ) ] + [
        _get( f"other{index}.example.test", 80 ) for index in range( 150 ) ]
    with caplog.at_level( 'WARNING', logger = 'invocables.mcp._proxy' ):
        for request in requests:
            answer = await _ask( path, request )
            assert answer.startswith( 'HTTP/1.1 403' )
            assert len( answer ) < 2000
    messages = [
        record.getMessage( ) for record in caplog.records
        if record.name == 'invocables.mcp._proxy'
        and record.levelname == 'WARNING' ]
    assert 50 <= len( messages ) <= 101
    assert all( len( message ) < 1000 for message in messages )
    assert 'further refusals' in messages[ -1 ]


_call = sandbox_support.retrieve_text


def _produce_hostile( name: str, *arguments: str, **options ):
    return invocables.mcp.produce_ensemble(
        name, command = mcp_support.produce_server_command(
            'sandbox_hostile_server.py', *arguments ), **options )


@pytest.fixture
def planted( tmp_path ):
    ''' Secrets beside a writable folder, under names which the
        writable folder also holds: a folder, and a file named among a
        server's arguments.
    '''
    ( tmp_path / 'notes' ).mkdir( )
    ( tmp_path / 'notes' / 'key' ).write_text( _SECRET, encoding = 'utf-8' )
    ( tmp_path / 'settings.txt' ).write_text( _SECRET, encoding = 'utf-8' )
    writable = tmp_path / 'writable'
    ( writable / 'documents' / 'notes' ).mkdir( parents = True )
    ( writable / 'configuration' ).mkdir( )
    ( writable / 'configuration' / 'settings.txt' ).write_text(
        'setting', encoding = 'utf-8' )
    return { 'root': tmp_path, 'writable': writable }


@pytest.mark.slow
@pytest.mark.asyncio
async def test_200_locked_folder( ):
    ''' A private folder whose modes the server took away, with
        folders inside, is still removed when the server ends.
    '''
    ensemble = _produce_hostile( 'locker', sandbox = True )
    async with ensemble:
        answer = await _call( ensemble, 'lock_folder' )
        assert answer.startswith( 'ok: ' )
        folder = answer[ 4 : ]
        assert os.path.isdir( folder )
    try: assert not os.path.lexists( folder )
    finally:
        for path, _, _ in os.walk( folder ): os.chmod( path, 0o700 )
        if os.path.isdir( folder ): os.chmod( folder, 0o700 )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_210_planted_read_path( planted ):
    ''' A readable folder inside the writable one, whose parent the
        server moved aside for a link (the folder itself is a mount
        point), is refused at the next start: the link (relative, so that
        it leads the same way inside) would show the folder of the same
        name beside the writable one.
    '''
    writable = planted[ 'writable' ]
    documents = writable / 'documents'
    notes = documents / 'notes'
    sandbox = invocables.mcp.Sandbox( read = [ notes ], write = [ writable ] )
    ensemble = _produce_hostile( 'planter', sandbox = sandbox )
    async with ensemble:
        answer = await _call(
            ensemble, 'plant_link', path = str( documents ),
            target = '..' )
        assert answer.startswith( 'ok: ' )
        answer = await _call(
            ensemble, 'read_file', path = str( notes / 'key' ) )
        assert answer.startswith( 'refused:' )
    assert documents.is_symlink( )
    again = _produce_hostile( 'planter_again', sandbox = sandbox )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        async with again:
            answer = await _call(
                again, 'read_file', path = str( notes / 'key' ) )
            assert _SECRET not in answer
    assert 'leads through link' in str( caught.value )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_220_planted_argument( planted ):
    ''' A file named among the arguments, in the writable folder, whose
        folder the server replaced by a link, shows nothing new at the
        next start (it would show the secret file the link leads to).
    '''
    writable, root = planted[ 'writable' ], planted[ 'root' ]
    configuration = writable / 'configuration'
    settings = configuration / 'settings.txt'
    sandbox = invocables.mcp.Sandbox( write = [ writable ] )
    for name in ( 'arguer', 'arguer_again' ):
        ensemble = _produce_hostile( name, str( settings ), sandbox = sandbox )
        async with ensemble:
            answer = await _call(
                ensemble, 'read_file', path = str( settings ) )
            assert _SECRET not in answer
            if name == 'arguer':
                assert answer == 'ok: setting'
                answer = await _call(
                    ensemble, 'plant_link', path = str( configuration ),
                    target = '..' )
                assert answer.startswith( 'ok: ' )
            else: assert answer.startswith( 'refused:' )
            answer = await _call(
                ensemble, 'read_file', path = str( root / 'settings.txt' ) )
            assert answer.startswith( 'refused:' )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_225_proxy_socket_kept( ):
    ''' The server may open its private folder to everyone, but neither
        the folder of the proxy's socket nor the socket: other users of
        the host never reach the proxy, and the socket stays in place.
    '''
    ensemble = _produce_hostile(
        'exposer',
        sandbox = invocables.mcp.Sandbox( network = [ 'example.com' ] ) )
    async with ensemble:
        answer = await _call( ensemble, 'expose_proxy' )
        *attempts, path = answer.split( '\n' )
        assert attempts[ 0 ].startswith( 'ok:' )
        for attempt in attempts[ 1 : ]:
            assert attempt.startswith( 'refused:' ), attempts
        assert os.stat( os.path.dirname( path ) ).st_mode & 0o077 == 0
        assert os.path.exists( path )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_230_descriptors_environment( monkeypatch ):
    ''' The server starts with standard streams only, and without the
        application's keys.
    '''
    monkeypatch.setenv( 'OPENAI_API_KEY', _SECRET )
    monkeypatch.setenv( 'AWS_SECRET_ACCESS_KEY', _SECRET )
    opened = os.open( os.devnull, os.O_RDONLY )
    try:
        ensemble = _produce_hostile(
            'surveyor', sandbox = invocables.mcp.Sandbox(
                network = [ 'example.com' ] ) )
        async with ensemble:
            answer = await _call( ensemble, 'survey_process' )
    finally: os.close( opened )
    descriptors, names = answer.split( '\n' )
    # The interpreter's listing of its descriptors opens one more.
    assert set( map( int, descriptors.split( ) ) ) <= { 0, 1, 2, 3 }
    assert 'OPENAI_API_KEY' not in names.split( )
    assert 'AWS_SECRET_ACCESS_KEY' not in names.split( )
    assert _SECRET not in answer
