# SPDX-License-Identifier: Apache-2.0

''' Fuzzing of configurations: whatever is given, loading raises nothing
    but the library's own exceptions (for descriptors,
    ``DescriptorInvalidity``), naming a file.

    The suite runs sixty examples of each test; run them at scale
    with the environment variable ``INVOCABLES_FUZZ_EXAMPLES``, such as::

        INVOCABLES_FUZZ_EXAMPLES=10000 python -m pytest \\
            tests/test_000_invocables/test_770_descriptors_fuzz.py
'''


import asyncio
import copy
import json
import os
import tempfile

from pathlib import Path

import tomli_w

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invocables import descriptors

from invocables import exceptions


_EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '60' ) )
_SETTINGS = settings(
    max_examples = _EXAMPLES, deadline = None, database = None,
    suppress_health_check = [ HealthCheck.too_slow, HealthCheck.data_too_large ] )

# Keys which the loaders know, so that examples reach past the first check.
_KEYS = (
    'ensembles', 'roots', 'source', 'builtin', 'mcp_servers', 'enabled',
    'configuration', 'path', 'writable', 'hard_links', 'ensemble', 'name',
    'description', 'defaults', 'timeout', 'invokers', 'mcp', 'transport',
    'command', 'environment', 'cwd', 'url', 'headers', 'startup_timeout',
    'tool_timeout', 'enabled_tools', 'disabled_tools', 'invoker',
    'implementation', 'deduplicate', 'annotations', 'arguments', 'results',
    'type', 'properties', 'required', 'mcpServers', 'servers', 'args', 'env',
    'disabled', 'descripton', 'builtins',
)
# Hostile and valid strings; paths are relative to the folder of the
# example, which holds a loop of links, a pipe and a folder.
_TEXTS = (
    '', 'io', 'sample.toml', 'tool.toml', 'mcp.json', 'loop', 'fifo',
    'folder', '../outside.toml', '/dev/null', '/dev/zero', '/etc/passwd',
    '~', '~no-such-user-of-invocables', 'a\x00b', 'tool\n', 'x' * 300,
    'stdio', 'http', 'sse', 'http://127.0.0.1:1/mcp', 'env:HOME',
    '${HOME}', 'object', 'string', '\ud800', '\ufeff', 'C:\\x', 'inf',
)
# Only these are ever imported: random names could name a module of the
# standard library with effects when imported.
_IMPLEMENTATIONS = (
    'invocables.builtins.io:list_roots', 'invocables.builtins.io:nothing',
    'os.path:basename', 'ast:walk', 'invocables_fuzz_absent:run',
    'invocables.builtins.io', 'invocables.builtins.io:ENTRIES_MAXIMUM_DEFAULT',
    'test_000_invocables.descriptors_support:echo',
    'test_000_invocables.descriptors_support:whisper',
    'invocables.builtins.io:list_roots\n', ':', 3,
)

_scalars = st.one_of(
    st.sampled_from( _TEXTS ),
    st.text( max_size = 20 ),
    st.booleans( ),
    st.integers( min_value = -( 10 ** 30 ), max_value = 10 ** 400 ),
    st.floats( allow_nan = True, allow_infinity = True ),
)


def _nest( value: object, depth: int ) -> object:
    for _ in range( depth ): value = [ value ]
    return value


_deep = st.builds(
    _nest, _scalars, st.sampled_from( ( 63, 64, 65, 200 ) ) )


def _extend( children: st.SearchStrategy[ object ] ) -> st.SearchStrategy[ object ]:
    return st.one_of(
        st.lists( children, max_size = 4 ),
        st.dictionaries( st.sampled_from( _KEYS ), children, max_size = 5 ) )


# One leaf in ten is a deep nest.
_leaves = st.integers( min_value = 0, max_value = 9 ).flatmap(
    lambda number: _deep if number == 0 else _scalars )
_values = st.recursive( _leaves, _extend, max_leaves = 12 )


# Valid documents, which examples edit in a few places.
_BASES = {
    'invocables.toml': {
        'ensembles': [
            { 'source': 'sample.toml', 'configuration': { 'limit': 3 } },
            { 'source': 'server.toml' },
            { 'mcp_servers': 'mcp.json', 'enabled': True },
            { 'builtin': 'io', 'enabled': False },
        ],
        'roots': [ { 'path': '.', 'writable': True, 'hard_links': False } ],
    },
    'sample.toml': {
        'ensemble': { 'name': 'sample', 'description': 'Sample.' },
        'defaults': { 'timeout': 5 },
        'configuration': { 'limit': 2 },
        'invokers': [ { 'source': 'tool.toml' } ],
    },
    'tool.toml': {
        'invoker': {
            'name': 'tool', 'description': 'Tool.', 'timeout': 3,
            'implementation': 'invocables.builtins.io:list_roots',
            'deduplicate': True, 'annotations': { 'readOnlyHint': True } },
        'arguments': {
            'type': 'object', 'required': [ 'path' ],
            'properties': { 'path': { 'type': 'string' } } },
        'results': { 'type': 'object' },
    },
    'server.toml': {
        'ensemble': { 'name': 'server' },
        'mcp': {
            'command': [ 'mcp-server-time', '--local-timezone', 'UTC' ],
            'environment': { 'TZ': 'UTC', 'TOKEN': 'env:TOKEN' },
            'cwd': '.', 'startup_timeout': 5, 'tool_timeout': 5,
            'enabled_tools': [ 'get_time' ], 'disabled_tools': [ 'x' ] },
    },
    'mcp.json': {
        'mcpServers': {
            'time': {
                'command': 'mcp-server-time',
                'args': [ '--local-timezone', 'UTC' ],
                'env': { 'TOKEN': '${TOKEN}' }, 'cwd': '.',
                'disabled': False, 'alwaysAllow': [ 'x' ] },
            'web': {
                'type': 'http', 'url': 'http://127.0.0.1:1/mcp',
                'headers': { 'Authorization': '${env:WEB}' } },
        },
    },
}


def _survey_paths(
    value: object, prefix: tuple[ object, ... ] = ( )
) -> list[ tuple[ object, ... ] ]:
    ''' Returns paths of every node below value. '''
    paths: list[ tuple[ object, ... ] ] = [ ]
    if isinstance( value, dict ):
        for key, item in value.items( ):
            paths.append( ( *prefix, key ) )
            paths.extend( _survey_paths( item, ( *prefix, key ) ) )
    elif isinstance( value, list ):
        for index, item in enumerate( value ):
            paths.append( ( *prefix, index ) )
            paths.extend( _survey_paths( item, ( *prefix, index ) ) )
    return paths


def _edit(
    document: object, path: tuple[ object, ... ], action: str, value: object
) -> None:
    ''' Replaces or deletes node at path, or adds a key beside it. '''
    container = document
    for step in path[ : -1 ]:
        try: container = container[ step ] # type: ignore[index]
        except ( KeyError, IndexError, TypeError ): return
    last = path[ -1 ]
    if isinstance( container, dict ) and last in container:
        if action == 'delete': del container[ last ]
        elif action == 'add': container[ f"{last}s" ] = value
        else: container[ last ] = value
    elif isinstance( container, list ) and isinstance( last, int ) and (
        last < len( container )
    ):
        if action == 'delete': del container[ last ]
        else: container[ last ] = value


@st.composite
def _edited( draw: st.DrawFn, name: str ) -> object:
    ''' Draws valid document of the given file with a few places edited. '''
    document = copy.deepcopy( _BASES[ name ] )
    paths = _survey_paths( document )
    for _ in range( draw( st.integers( min_value = 0, max_value = 3 ) ) ):
        path = draw( st.sampled_from( paths ) )
        action = draw( st.sampled_from( ( 'replace', 'delete', 'add' ) ) )
        value = draw(
            st.sampled_from( _IMPLEMENTATIONS )
            if path[ -1 ] == 'implementation' else _values )
        _edit( document, path, action, value )
    return document


@st.composite
def _tables( draw: st.DrawFn, keys: tuple[ str, ... ] ) -> dict[ str, object ]:
    ''' Draws table of mostly known keys, each with any value. '''
    table: dict[ str, object ] = { }
    for key in draw( st.lists( st.sampled_from( keys ), max_size = 6 ) ):
        if key == 'implementation':
            table[ key ] = draw( st.sampled_from( _IMPLEMENTATIONS ) )
        else: table[ key ] = draw( _values )
    return table


def _configurations( ) -> st.SearchStrategy[ object ]:
    entry = _tables( (
        'source', 'builtin', 'mcp_servers', 'enabled', 'configuration' ) )
    root = _tables( ( 'path', 'writable', 'hard_links', 'typo' ) )
    return st.one_of(
        _edited( 'invocables.toml' ),
        st.fixed_dictionaries( { }, optional = {
            'ensembles': st.one_of( st.lists( entry, max_size = 3 ), _values ),
            'roots': st.one_of( st.lists( root, max_size = 2 ), _values ),
            'extra': _values,
        } ) )


def _ensembles( ) -> st.SearchStrategy[ object ]:
    header = _tables( ( 'name', 'enabled', 'description', 'descripton' ) )
    invoker = _tables( ( 'source', 'name' ) )
    return st.one_of(
        _edited( 'sample.toml' ),
        st.fixed_dictionaries( { }, optional = {
            'ensemble': st.one_of( header, _values ),
            'defaults': st.one_of( _tables( ( 'timeout', ) ), _values ),
            'configuration': _values,
            'invokers': st.one_of(
                st.lists( invoker, max_size = 3 ), _values ),
        } ) )


def _invokers( ) -> st.SearchStrategy[ object ]:
    header = _tables( (
        'name', 'enabled', 'description', 'implementation', 'timeout',
        'deduplicate', 'annotations' ) )
    schema = st.one_of(
        _tables( ( 'type', 'properties', 'required' ) ), _values,
        _values.map( _dump_json ) )
    return st.one_of(
        _edited( 'tool.toml' ),
        st.fixed_dictionaries( { }, optional = {
            'invoker': st.one_of( header, _values ),
            'arguments': schema,
            'results': schema,
        } ) )


def _servers( ) -> st.SearchStrategy[ object ]:
    server = _tables( (
        'command', 'args', 'env', 'cwd', 'url', 'headers', 'type',
        'transport', 'disabled', 'comand', 'alwaysAllow' ) )
    names = st.one_of(
        st.sampled_from( ( 'time', 's', 'a b', 'x\n' ) ),
        st.text( max_size = 8 ) )
    return st.one_of(
        _edited( 'mcp.json' ),
        st.fixed_dictionaries( {
            'mcpServers': st.one_of(
                st.dictionaries( names, server, max_size = 3 ), _values ) } ),
        _values )


def _server_ensembles( ) -> st.SearchStrategy[ object ]:
    return _edited( 'server.toml' )


def _render_toml( document: object, mutation: tuple[ int, str ] ) -> bytes:
    ''' Renders document as TOML (or, if TOML cannot hold it, as text
        which is not TOML), then mutates one place of it.
    '''
    try: text = tomli_w.dumps( document )
    except AttributeError: text = _render_raw( document ) # not a table
    except ( TypeError, ValueError ): text = _render_raw( document )
    except RecursionError: text = 'deep = ' + '[' * 5000 + ']' * 5000
    return _mutate( text, mutation )


def _render_json( document: object, mutation: tuple[ int, str ] ) -> bytes:
    return _mutate( _dump_json( document ), mutation )


def _dump_json( value: object ) -> str:
    ''' Returns JSON text of value, or text which is not JSON. '''
    try: return json.dumps( value )
    except ( TypeError, ValueError ): return _render_raw( value )
    except RecursionError: return '{"a": ' * 3000


def _render_raw( document: object ) -> str:
    try: return repr( document )
    except ( RecursionError, ValueError ): return '[' * 5000


def _mutate( text: str, mutation: tuple[ int, str ] ) -> bytes:
    position, insertion = mutation
    if position >= 0 and text:
        index = position % len( text )
        text = text[ : index ] + insertion + text[ index + 1 : ]
    return text.encode( 'utf-8', 'surrogatepass' )


_mutations = st.tuples(
    st.one_of( st.just( -1 ), st.integers( min_value = 0, max_value = 10_000 ) ),
    st.sampled_from( ( '', '[', ']', '{', '"', "'", '=', '\n', '\x00',
                       '\ufeff', '\\', '.', '[[', '[' * 3000,
                       '{"a": ' * 3000, '{ a = ' * 3000 ) ) )


def _prepare_folder( folder: Path ) -> None:
    ( folder / 'loop' ).symlink_to( 'loop' )
    os.mkfifo( folder / 'fifo' )
    ( folder / 'folder' ).mkdir( )


def _assert_family( exception: BaseException ) -> None:
    ''' Only the library's errors may escape; descriptor errors name a
        file.
    '''
    assert isinstance( exception, exceptions.Omnierror ), repr( exception )
    if isinstance( exception, exceptions.DescriptorInvalidity ):
        assert exception.location
        assert '_frigid' not in str( exception )


def _load( source: object ) -> None:
    ''' Loads configuration and produces its ensembles, unconnected. '''
    try:
        configuration = descriptors.produce_configuration( source )
        asyncio.run( _prepare( configuration ) )
    except Exception as exception: _assert_family( exception )


@_SETTINGS
@given(
    configuration = _configurations( ),
    ensemble = _ensembles( ),
    invoker = _invokers( ),
    servers = _servers( ),
    server = _server_ensembles( ),
    mutations = st.lists( _mutations, min_size = 5, max_size = 5 ),
)
def test_100_files_raise_only_descriptor_errors(
    configuration, ensemble, invoker, servers, server, mutations
):
    ''' Configuration files, with their ensemble, invoker and mcpServers
        files, mutated anywhere, load or raise the library's errors.
    '''
    with tempfile.TemporaryDirectory( ) as name:
        folder = Path( name )
        _prepare_folder( folder )
        files = {
            'invocables.toml': _render_toml( configuration, mutations[ 0 ] ),
            'sample.toml': _render_toml( ensemble, mutations[ 1 ] ),
            'tool.toml': _render_toml( invoker, mutations[ 2 ] ),
            'mcp.json': _render_json( servers, mutations[ 3 ] ),
            'server.toml': _render_toml( server, mutations[ 4 ] ),
        }
        for relative, content in files.items( ):
            ( folder / relative ).write_bytes( content )
        _load( folder / 'invocables.toml' )
        try: descriptors.produce_server_descriptors( folder / 'mcp.json' )
        except Exception as exception: _assert_family( exception )


@_SETTINGS
@given( configuration = _configurations( ), servers = _servers( ) )
def test_110_mappings_raise_only_descriptor_errors(
    configuration, servers
):
    ''' Configurations and mcpServers given as mappings load or raise the
        library's errors.
    '''
    with tempfile.TemporaryDirectory( ) as name:
        folder = Path( name )
        _prepare_folder( folder )
        cwd = Path.cwd( )
        os.chdir( folder )
        try:
            _load( configuration )
            try: descriptors.produce_server_descriptors( servers )
            except Exception as exception: _assert_family( exception )
        finally: os.chdir( cwd )


@_SETTINGS
@given( content = st.binary( max_size = 400 ) )
def test_120_bytes_raise_only_descriptor_errors( content ):
    ''' Any bytes as a configuration file or an mcpServers file give
        a configuration or a descriptor error.
    '''
    with tempfile.TemporaryDirectory( ) as name:
        path = Path( name ) / 'file'
        path.write_bytes( content )
        for load in (
            descriptors.produce_configuration,
            descriptors.produce_server_descriptors,
        ):
            try: load( path )
            except exceptions.DescriptorInvalidity as exception:
                assert exception.location == str( path )



async def _prepare( configuration ):
    return await descriptors.prepare_ensembles(
        configuration, connect = False )
