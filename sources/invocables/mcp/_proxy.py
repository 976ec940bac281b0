# SPDX-License-Identifier: Apache-2.0

''' Filtering proxy through which a sandbox reaches its listed hosts.

    A sandbox with a list of hosts has no network of its own: the library
    runs this proxy on a unix socket in the sandbox's private folder, and a
    bridge started inside the sandbox (:py:data:`BRIDGE`) listens on the
    sandbox's loopback and passes each connection to that socket. The proxy
    answers HTTP ``CONNECT`` (tunnels, for ``https://``) and plain HTTP
    requests in absolute form (for ``http://``), to listed hosts only, and
    ``403`` otherwise.
'''


import concurrent.futures as _futures
import ipaddress as _ipaddress
import os as _os
import socket as _socket

import invocables.mcp.__ as __
import invocables.exceptions as _exceptions


Resolver: __.typx.TypeAlias = __.cabc.Callable[ [ str ], str ]

_CHUNK_MAXIMUM = 65536
# Connections held at once, each with its upstream: bounds the descriptors
# a server takes from the application's process.
_CONNECTIONS_MAXIMUM = 64
_HEAD_MAXIMUM = 65536
_CONNECT_TIMEOUT = 30.0
_HEAD_TIMEOUT = 30.0
# Lookups of names held at once, each in a thread of the proxy's own: a
# server which floods the proxy with names which never resolve takes no
# thread of the application's default executor, nor of another proxy.
_LOOKUPS_MAXIMUM = 4
_LOOKUP_TIMEOUT = 15.0
_PORTS_DEFAULT = ( 80, 443 )
# A server which floods the proxy with refused requests must not flood the
# application's logs: the first refusals are warnings, the others debug.
_REFUSALS_LOGGED = 100
_REASON_LENGTH_MAXIMUM = 300
_SOCKET = 'proxy.sock'
# The socket's folder, inside the private folder: the sandbox shows it
# read-only, so that the server can neither replace the socket nor open it
# to other users (as it may open its own folder).
_SOCKET_FOLDER = '.proxy'
_PORT_LIMIT = 65536
_STATUSES = __.immut.Dictionary( {
    400: 'Bad Request', 403: 'Forbidden', 501: 'Not Implemented',
    502: 'Bad Gateway', 503: 'Service Unavailable' } )
_HEADERS_HOP = frozenset( (
    'connection', 'keep-alive', 'proxy-authorization', 'proxy-connection',
    'te', 'trailer', 'upgrade' ) )
_BROADCAST = _ipaddress.IPv4Address( '255.255.255.255' )
_NAT64 = _ipaddress.IPv6Network( '64:ff9b::/96' )
_digits = __.re.compile( r'[0-9]{1,12}' )
_label = __.re.compile( r'[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?' )
_numeric = __.re.compile( r'[0-9]+|0x[0-9a-f]*' )
_scribe = __.produce_scribe( __name__ )

# Runs inside the sandbox (python -I -S -c BRIDGE SOCKET PROGRAM ...):
# listens on the sandbox's loopback, sets the proxy variables, forks a
# bridge to the proxy's unix socket, and becomes the server.
BRIDGE = '''
import os, socket, sys, threading
listener = socket.socket( )
listener.bind( ( '127.0.0.1', 0 ) )
listener.listen( 64 )
url = 'http://127.0.0.1:%d' % listener.getsockname( )[ 1 ]
for name in ( 'http_proxy', 'https_proxy', 'all_proxy' ):
    os.environ[ name ] = os.environ[ name.upper( ) ] = url
for name in ( 'no_proxy', 'NO_PROXY' ): os.environ.pop( name, None )
def pump( source, target ):
    try:
        while True:
            data = source.recv( 65536 )
            if not data: break
            target.sendall( data )
    except OSError: pass
    try: target.shutdown( socket.SHUT_WR )
    except OSError: pass
def serve( peer ):
    upstream = socket.socket( socket.AF_UNIX )
    try: upstream.connect( sys.argv[ 1 ] )
    except OSError:
        peer.close( )
        return
    thread = threading.Thread( target = pump, args = ( upstream, peer ) )
    thread.start( )
    pump( peer, upstream )
    thread.join( )
    peer.close( )
    upstream.close( )
if os.fork( ) == 0:
    null = os.open( os.devnull, os.O_RDWR )
    for descriptor in ( 0, 1, 2 ): os.dup2( null, descriptor )
    while True:
        peer, _ = listener.accept( )
        peer.setsockopt( socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 )
        threading.Thread(
            target = serve, args = ( peer, ), daemon = True ).start( )
listener.close( )
os.execv( sys.argv[ 2 ], sys.argv[ 2 : ] )
'''


class Rule( __.immut.DataclassObject ):
    ''' One listed host: a name (or, wildcard, a suffix) and a port. '''

    name: str
    wildcard: bool = False
    port: __.Absential[ int ] = __.absent

    def __str__( self ) -> str:
        prefix = '*.' if self.wildcard else ''
        suffix = '' if __.is_absent( self.port ) else f":{self.port}"
        return f"{prefix}{self.name}{suffix}"

    def is_match( self, name: str, port: int ) -> bool:
        ''' Returns whether rule allows name (normalized) and port. '''
        ports = _PORTS_DEFAULT if __.is_absent( self.port ) else (
            self.port, )
        if port not in ports: return False
        if self.wildcard: return name.endswith( '.' + self.name )
        return name == self.name


class Proxy(
    __.immut.Object, instances_mutables = ( 'server', 'closed', 'refusals' )
):
    ''' Filtering proxy of one start of a sandboxed server. '''

    def __init__(
        self,
        ensemble: str,
        rules: __.cabc.Sequence[ Rule ],
        resolver: Resolver | None = None,
    ):
        self.ensemble = ensemble
        self.rules = tuple( rules )
        # Tests map names to a local server; else the host resolves them.
        self.resolver = resolver
        self.server: __.asyncio.Server | None = None
        self.connections: set[ __.asyncio.Task[ None ] ] = set( )
        self.lookups = _futures.ThreadPoolExecutor(
            _LOOKUPS_MAXIMUM, thread_name_prefix = 'invocables-proxy-lookup' )
        self.closed = False
        self.refusals = 0

    async def activate( self, path: str ) -> None:
        ''' Listens on unix socket at path. '''
        self.server = await __.asyncio.start_unix_server(
            self._serve, path = path, limit = _HEAD_MAXIMUM )

    def deactivate( self ) -> None:
        ''' Stops listening, ends every connection and drops lookups yet
            to start (one under way ends in its thread, as the host's
            resolver gives up).
        '''
        self.closed = True
        if self.server is not None: self.server.close( )
        for task in tuple( self.connections ): task.cancel( )
        self.lookups.shutdown( wait = False, cancel_futures = True )

    def is_allowed( self, name: str, port: int ) -> bool:
        ''' Returns whether a listed host matches name and port. '''
        return any( rule.is_match( name, port ) for rule in self.rules )

    async def _serve(
        self, reader: __.asyncio.StreamReader, writer: __.asyncio.StreamWriter
    ) -> None:
        task = __.asyncio.current_task( )
        # A connection accepted as the proxy stops is not served.
        if self.closed or task is None:
            writer.close( )
            return
        full = len( self.connections ) >= _CONNECTIONS_MAXIMUM
        self.connections.add( task )
        try:
            if full:
                await self._refuse( writer, _Refusal(
                    503, "the sandbox holds {count} connections already, "
                    "the most it may".format(
                        count = _CONNECTIONS_MAXIMUM ) ) )
            else: await self._relay( reader, writer )
        except (
            OSError, EOFError, ValueError, __.asyncio.LimitOverrunError,
            __.asyncio.TimeoutError,
        ):
            pass
        # Ended by deactivation: the connection's task ends quietly.
        except __.asyncio.CancelledError: pass
        finally:
            self.connections.discard( task )
            writer.close( )

    async def _relay(
        self, reader: __.asyncio.StreamReader, writer: __.asyncio.StreamWriter
    ) -> None:
        head = await __.asyncio.wait_for(
            reader.readuntil( b'\r\n\r\n' ), _HEAD_TIMEOUT )
        request = _parse_request( head )
        if isinstance( request, _Refusal ):
            await self._refuse( writer, request )
            return
        name, port = request.address
        if not self.is_allowed( name, port ):
            await self._refuse(
                writer, _Refusal( 403, f"host {name}:{port} is not listed" ) )
        elif request.method.upper( ) == 'CONNECT':
            await self._tunnel( reader, writer, request.address )
        else: await self._forward( reader, writer, request )

    async def _connect(
        self, writer: __.asyncio.StreamWriter, address: tuple[ str, int ]
    ) -> tuple[ __.asyncio.StreamReader, __.asyncio.StreamWriter ] | None:
        name, port = address
        host = name if self.resolver is None else self.resolver( name )
        # Loopback only for a name listed as it is: under a wildcard, whoever
        # names subdomains could point one at the host's own services.
        exact = any(
            not rule.wildcard and rule.is_match( name, port )
            for rule in self.rules )
        try:
            hosts = await self._resolve( host, port, loopback = exact )
            if isinstance( hosts, str ):
                await self._refuse( writer, _Refusal(
                    403, f"host {name}:{port} resolves to {hosts}" ) )
                return None
            # The addresses checked, not the name again: its next answer
            # may differ.
            return await __.asyncio.wait_for(
                _open_connection( hosts, port ), _CONNECT_TIMEOUT )
        except ( OSError, __.asyncio.TimeoutError ) as exception:
            cause = str( exception ) or 'timed out'
            await self._refuse( writer, _Refusal(
                502, f"host {name}:{port} is not reached ({cause})" ) )
            return None

    async def _forward(
        self,
        reader: __.asyncio.StreamReader,
        writer: __.asyncio.StreamWriter,
        request: '_Request',
    ) -> None:
        connection = await self._connect( writer, request.address )
        if connection is None: return
        upstream_reader, upstream_writer = connection
        authority, path = _split_target( request.target )
        kept = ''.join(
            f"{key}: {value}\r\n" for key, value in request.headers
            if key.lower( ) not in _HEADERS_HOP and key.lower( ) != 'host' )
        upstream_writer.write( (
            f"{request.method} {path} {request.version}\r\n"
            f"Host: {authority}\r\n{kept}Connection: close\r\n\r\n"
        ).encode( 'latin-1' ) )
        # Only the announced body, passed as it comes: a second request on
        # this connection would reach the same address under another Host.
        try:
            await _pump_length( reader, upstream_writer, request.length )
            await _pump( upstream_reader, writer )
        finally: upstream_writer.close( )

    async def _refuse(
        self, writer: __.asyncio.StreamWriter, refusal: '_Refusal'
    ) -> None:
        reason = refusal.reason
        if len( reason ) > _REASON_LENGTH_MAXIMUM:
            reason = reason[ : _REASON_LENGTH_MAXIMUM ] + '...'
        self.refusals += 1
        log = (
            _scribe.warning if self.refusals <= _REFUSALS_LOGGED
            else _scribe.debug )
        log(
            "Proxy of MCP ensemble %r refused a request: %s.",
            self.ensemble, reason )
        if self.refusals == _REFUSALS_LOGGED:
            _scribe.warning(
                "Proxy of MCP ensemble %r logs its further refusals at "
                "debug level.", self.ensemble )
        body = (
            "invocables sandbox proxy: {reason}; the sandbox lists "
            "{hosts}.\n".format(
                reason = reason,
                hosts = ', '.join( map( str, self.rules ) ) ) ).encode( )
        writer.write( (
            "HTTP/1.1 {status} {phrase}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: {length}\r\nConnection: close\r\n\r\n"
        ).format(
            status = refusal.status, phrase = _STATUSES[ refusal.status ],
            length = len( body ) ).encode( ) + body )
        await writer.drain( )

    async def _resolve(
        self, host: str, port: int, *, loopback: bool
    ) -> tuple[ str, ... ] | str:
        ''' Returns addresses of host, or which refused one it resolves to
            (loopback is refused unless allowed); looks up in the proxy's
            own threads, waiting for one at most the lookup's deadline.
        '''
        loop = __.asyncio.get_running_loop( )
        try:
            lookup = loop.run_in_executor(
                self.lookups, _socket.getaddrinfo, host, port, 0,
                _socket.SOCK_STREAM )
        except RuntimeError as exception: # shut down: the proxy stopped
            raise OSError( "the proxy stopped" ) from exception
        try: found = await __.asyncio.wait_for( lookup, _LOOKUP_TIMEOUT )
        except __.asyncio.TimeoutError as exception:
            raise OSError(
                "its name did not resolve within {seconds:g} seconds".format(
                    seconds = _LOOKUP_TIMEOUT ) ) from exception
        addresses = tuple( dict.fromkeys(
            str( information[ 4 ][ 0 ] ) for information in found ) )
        return _refuse_addresses( addresses, loopback = loopback )

    async def _tunnel(
        self,
        reader: __.asyncio.StreamReader,
        writer: __.asyncio.StreamWriter,
        address: tuple[ str, int ],
    ) -> None:
        connection = await self._connect( writer, address )
        if connection is None: return
        upstream_reader, upstream_writer = connection
        writer.write( b'HTTP/1.1 200 Connection Established\r\n\r\n' )
        try:
            await __.asyncio.gather(
                _pump( reader, upstream_writer ),
                _pump( upstream_reader, writer ) )
        finally: upstream_writer.close( )


class _Refusal( __.typx.NamedTuple ):

    status: int
    reason: str


class _Request( __.typx.NamedTuple ):

    method: str
    target: str
    version: str
    headers: list[ tuple[ str, str ] ]
    address: tuple[ str, int ]
    length: int


async def activate_proxy(
    ensemble: str, hosts: __.cabc.Sequence[ str ], folder: str
) -> tuple[ Proxy, tuple[ str, ... ] ]:
    ''' Starts proxy of listed hosts on a unix socket in private folder.

        Returns it and the command of the bridge to it, which runs the
        server inside the sandbox.
    '''
    # Python's own library, isolated: no site, no virtual environment.
    interpreter = _os.path.realpath( __.sys.executable )
    if not __.sys.executable or not _os.path.isfile( interpreter ):
        raise _exceptions.SandboxNoSupport(
            ensemble, "no Python interpreter is known (sys.executable) to "
            "run the bridge to the proxy of listed hosts." )
    proxy = Proxy( ensemble, produce_rules( hosts ) )
    place = _os.path.join( folder, _SOCKET_FOLDER )
    path = _os.path.join( place, _SOCKET )
    try:
        _os.mkdir( place, 0o700 )
        await proxy.activate( path )
    except OSError as exception:
        raise _exceptions.SandboxNoSupport(
            ensemble, f"the proxy of listed hosts cannot listen at {path!r} "
            f"({exception}); a shorter TMPDIR may help." ) from exception
    return proxy, ( interpreter, '-I', '-S', '-c', BRIDGE, path )


def normalize_name( text: str ) -> str:
    ''' Returns host name in lower-case ASCII (IDNA), without final dot.

        Raises ``ValueError`` for what is no DNS name: an address (also
        written in decimal, octal or hexadecimal parts), an empty label,
        or a character outside letters, digits, hyphens and underscores.
    '''
    if not text or text.startswith( '[' ) or '%' in text:
        raise ValueError( f"{text!r} is not a DNS name" )
    try: name = text.lower( ).encode( 'idna' ).decode( 'ascii' )
    except UnicodeError as exception:
        raise ValueError( f"{text!r} is not a DNS name" ) from exception
    name = name.lower( ).removesuffix( '.' )
    labels = name.split( '.' )
    if len( name ) > 253 or not all( # noqa: PLR2004
        _label.fullmatch( label ) for label in labels
    ): raise ValueError( f"{text!r} is not a DNS name" )
    if _numeric.fullmatch( labels[ -1 ] ):
        raise ValueError(
            f"{text!r} is an address; the proxy reaches DNS names only" )
    return name


def produce_rules(
    entries: __.cabc.Iterable[ object ], location: str = "sandbox 'network'"
) -> tuple[ Rule, ... ]:
    ''' Returns rules of host list entries: ``name``, ``*.suffix``, each
        with an optional ``:port``.
    '''
    rules: dict[ str, Rule ] = { }
    for entry in entries:
        try: rule = _produce_rule( entry )
        except ValueError as exception:
            raise _exceptions.ConfigurationInvalidity(
                location, f"{entry!r} is not a host: write a DNS name "
                "('api.example.com'), maybe with a wildcard "
                "('*.example.com') or a port ('api.example.com:8443')."
            ) from exception
        rules[ str( rule ) ] = rule
    return tuple( rules.values( ) )


async def _pump(
    reader: __.asyncio.StreamReader, writer: __.asyncio.StreamWriter
) -> None:
    while data := await reader.read( 65536 ):
        writer.write( data )
        await writer.drain( )
    if writer.can_write_eof( ): writer.write_eof( )


async def _pump_length(
    reader: __.asyncio.StreamReader,
    writer: __.asyncio.StreamWriter,
    length: int,
) -> None:
    while length > 0:
        data = await reader.read( min( length, _CHUNK_MAXIMUM ) )
        if not data: raise EOFError
        length -= len( data )
        writer.write( data )
        await writer.drain( )


async def _open_connection(
    hosts: __.cabc.Sequence[ str ], port: int
) -> tuple[ __.asyncio.StreamReader, __.asyncio.StreamWriter ]:
    ''' Opens connection to first address of hosts which answers. '''
    failure = OSError( "no address" )
    for host in hosts:
        try: return await __.asyncio.open_connection( host, port )
        except OSError as exception: failure = exception # noqa: PERF203
    raise failure


def _parse_headers(
    lines: __.cabc.Sequence[ str ]
) -> list[ tuple[ str, str ] ] | None:
    headers: list[ tuple[ str, str ] ] = [ ]
    for line in lines:
        key, colon, value = line.partition( ':' )
        if not colon or not key or key != key.strip( ): return None
        headers.append( ( key, value.strip( ) ) )
    return headers


def _parse_request( head: bytes ) -> _Request | _Refusal:
    ''' Returns request of head, or why it is refused. '''
    text = head.decode( 'latin-1' )[ : -4 ]
    lines = text.split( '\r\n' )
    words = lines[ 0 ].split( ' ' )
    headers = _parse_headers( lines[ 1 : ] )
    # A bare line feed or return would end a line for some upstreams.
    bare = ''.join( lines )
    if len( words ) != 3 or headers is None or ( # noqa: PLR2004
        '\n' in bare or '\r' in bare
    ): return _Refusal( 400, "malformed request" )
    method, target, version = words
    if method.upper( ) == 'CONNECT':
        address = _split_authority( target, __.absent )
    elif target[ : 7 ].lower( ) == 'http://':
        address = _split_authority( _split_target( target )[ 0 ], 80 )
    else:
        return _Refusal(
            400, f"target {target!r} is neither http:// nor host:port" )
    if isinstance( address, str ): return _Refusal( 403, address )
    # A CONNECT's Host header, if any, may omit the port of its target.
    port = address[ 1 ] if method.upper( ) == 'CONNECT' else 80
    length = _measure_body( headers, address, port )
    if isinstance( length, _Refusal ): return length
    return _Request( method, target, version, headers, address, length )


def _measure_body(
    headers: list[ tuple[ str, str ] ], address: tuple[ str, int ], port: int
) -> int | _Refusal:
    ''' Returns length of request body, or why the headers are refused.
    '''
    def access( name: str ) -> list[ str ]:
        return [ value for key, value in headers if key.lower( ) == name ]
    hosts, lengths = access( 'host' ), access( 'content-length' )
    if len( hosts ) > 1 or any(
        _split_authority( host, port ) != address for host in hosts
    ): return _Refusal( 403, "the Host header does not name the target" )
    if access( 'transfer-encoding' ):
        return _Refusal( 501, "a request body needs a Content-Length" )
    if len( set( lengths ) ) > 1 or not all(
        _digits.fullmatch( length ) for length in lengths
    ): return _Refusal( 400, "bad Content-Length" )
    return int( lengths[ 0 ] ) if lengths else 0


def _is_refused( address: str, *, loopback: bool = False ) -> bool:
    ''' Returns whether the proxy never reaches address: link-local
        (cloud metadata), unspecified (the host itself), multicast,
        broadcast, also as IPv4 inside IPv6; loopback unless allowed.
    '''
    try: value = _ipaddress.ip_address( address.split( '%', 1 )[ 0 ] )
    except ValueError: return True
    if isinstance( value, _ipaddress.IPv6Address ):
        inner = value.ipv4_mapped or value.sixtofour
        if inner is None and value in _NAT64:
            inner = _ipaddress.IPv4Address( int( value ) & 0xFFFFFFFF )
        if inner is not None: value = inner
    return (
        value.is_link_local or value.is_unspecified or value.is_multicast
        or value == _BROADCAST or ( value.is_loopback and not loopback ) )


def _refuse_addresses(
    addresses: tuple[ str, ... ], *, loopback: bool
) -> tuple[ str, ... ] | str:
    ''' Returns addresses, or which refused one is among them. '''
    refused = [
        address for address in addresses
        if _is_refused( address, loopback = loopback ) ]
    if not refused: return addresses
    if _is_refused( refused[ 0 ], loopback = True ):
        return f"{refused[ 0 ]}, an address the proxy never reaches"
    return (
        f"{refused[ 0 ]}, a loopback address, which only a host listed by "
        "its exact name may reach" )


def _produce_rule( entry: object ) -> Rule:
    if not isinstance( entry, str ): raise ValueError( entry ) # noqa: TRY004
    text, wildcard = entry.strip( ), False
    if text.startswith( '*.' ): text, wildcard = text[ 2 : ], True
    name, colon, number = text.rpartition( ':' )
    if not colon: name, number = text, ''
    port: __.Absential[ int ] = __.absent
    if colon:
        if not _digits.fullmatch( number ) or not (
            0 < int( number ) < _PORT_LIMIT
        ):
            raise ValueError( entry )
        port = int( number )
    return Rule(
        name = normalize_name( name ), wildcard = wildcard, port = port )


def _split_authority(
    text: str, port: __.Absential[ int ]
) -> tuple[ str, int ] | str:
    ''' Returns normalized name and port of ``name[:port]``, or why not.

        Without a port in text, the default port (absent: refused).
    '''
    if '@' in text: return f"authority {text!r} holds credentials"
    name, colon, number = text.rpartition( ':' )
    if not colon: name, number = text, ''
    if number and not (
        _digits.fullmatch( number ) and int( number ) < _PORT_LIMIT
    ): return f"port of {text!r} is not a port number"
    if not number:
        if __.is_absent( port ): return f"authority {text!r} has no port"
        number = str( port )
    try: return normalize_name( name ), int( number )
    except ValueError as exception: return str( exception )


def _split_target( target: str ) -> tuple[ str, str ]:
    ''' Returns authority and origin-form path of absolute HTTP target. '''
    rest = target[ 7 : ]
    ends = [ index for index in map( rest.find, '/?#' ) if index >= 0 ]
    end = min( ends ) if ends else len( rest )
    path = rest[ end : ].split( '#', 1 )[ 0 ]
    if not path.startswith( '/' ): path = '/' + path
    return rest[ : end ], path
