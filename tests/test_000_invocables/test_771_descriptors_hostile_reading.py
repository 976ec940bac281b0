# SPDX-License-Identifier: Apache-2.0

''' Hostile descriptors and mcpServers JSON, read: dotted keys of many
    parts, NUL characters after a home folder's tilde, references which
    run into other text, both top-level keys of servers.
'''


import importlib
import subprocess
import sys
import tracemalloc

from pathlib import Path
from typing import Any

import pytest

from invocables import descriptors

from invocables import exceptions


def _access_url( entry: descriptors.EnsembleDescriptor ) -> object:
    server: Any = entry.server
    return server.url


def test_100_long_dotted_key_refused_in_proportion( tmp_path: Path ):
    ''' A dotted key of thousands of parts (its table header, its
        statement or a key of an inline table) is refused by line before
        parsing, whose memory would grow with the square of its parts.
    '''
    key = '.'.join( [ 'a' ] * 4000 )
    texts = (
        f"[ensemble]\nname = 'e'\n[configuration]\n{key} = 1\n",
        f"[{key}]\nx = 1\n",
        f"x = {{ {key} = 1 }}\n",
        "[ensemble]\nname = 'e'\n" + ' . '.join( [ '"a.b"' ] * 4000 )
        + " = 1\n" )
    for index, text in enumerate( texts ):
        path = tmp_path / f"{index}.toml"
        path.write_text( text )
        tracemalloc.start( )
        try:
            with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
                descriptors.produce_ensemble_descriptor( path )
            _, peak = tracemalloc.get_traced_memory( )
        finally: tracemalloc.stop( )
        # Reading reserves a buffer of the size limit; parsing the key
        # would take over 50 MB.
        assert peak < descriptors.SIZE_MAXIMUM + 8_000_000, index
        assert caught.value.location == str( path )
        assert 'deeper than 64' in caught.value.reason


def test_110_dotted_texts_accepted( tmp_path: Path ):
    ''' Dots in strings and comments, numbers and keys within the limit
        are no dotted keys too long.
    '''
    dotted = '.'.join( [ 'a' ] * 1000 )
    key = '.'.join( [ 'k' ] * 60 )
    path = tmp_path / 'dots.toml'
    path.write_text(
        "[ensemble]\nname = 'e'\n"
        f"description = \"{dotted}\"\n# {dotted}\n"
        f"[configuration]\nsingle = '{dotted}'\nmulti = \"\"\"\n{dotted}\n"
        f"\"\"\"\nliteral = '''{dotted}'''\n"
        f"numbers = [ {', '.join( [ '1.5' ] * 100 )} ]\n{key} = 1\n"
        "[[invokers]]\nname = 'echo'\n"
        "implementation = 'test_000_invocables.descriptors_support:echo'\n" )
    descriptor = descriptors.produce_ensemble_descriptor( path )
    assert descriptor.description == dotted
    assert descriptor.configuration[ 'multi' ] == f"{dotted}\n"


@pytest.mark.parametrize( 'unit', [
    '\\"""\n', "'''a.\n", '"a.', "'a.", '"\\', '"""a.\n' ], ids = [
    'escaped-multiline', 'literal-multiline', 'basic', 'literal',
    'escapes', 'multiline' ] )
def test_120_unterminated_strings_scanned_once( tmp_path: Path, unit: str ):
    ''' Strings left open or escaped again and again (a megabyte of them)
        are scanned once for dotted keys, not once per quote: the file is
        refused within a minute, in a child process which a hang cannot
        stop the tests with.
    '''
    path = tmp_path / 'open.toml'
    path.write_text( unit * ( 1_000_000 // len( unit ) ) + '.' * 70 )
    code = (
        "import sys\n"
        "from invocables import descriptors, exceptions\n"
        "try: descriptors.produce_ensemble_descriptor( sys.argv[ 1 ] )\n"
        "except exceptions.DescriptorInvalidity: print( 'refused' )\n" )
    completed = subprocess.run(
        [ sys.executable, '-c', code, str( path ) ],
        capture_output = True, text = True, timeout = 60, check = False )
    assert completed.stdout.strip( ) == 'refused', completed.stderr


def test_130_repeated_ensemble_stops_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    ''' An ensemble listed twice is refused when listed again, before the
        entries after it load: a configuration of a file repeated
        thousands of times does not read it thousands of times.
    '''
    monkeypatch.setattr( sys, 'path', [ str( tmp_path ), *sys.path ] )
    importlib.invalidate_caches( )
    marker = tmp_path / 'imported'
    ( tmp_path / 'marking_771.py' ).write_text(
        f"open( {str( marker )!r}, 'w' ).close( )\n"
        "def echo( context, arguments ): return ''\n" )
    for name, module in (
        ( 'e', 'test_000_invocables.descriptors_support' ),
        ( 'f', 'marking_771' ),
    ):
        ( tmp_path / f"{name}.toml" ).write_text(
            f"[ensemble]\nname = '{name}'\nimplementation = '{module}'\n"
            "[[invokers]]\nname = 'echo'\n" )
    path = tmp_path / 'configuration.toml'
    path.write_text( "[[ensembles]]\nsource = 'e.toml'\n" * 2
                     + "[[ensembles]]\nsource = 'f.toml'\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( path )
    assert "ensemble name 'e' is also used" in caught.value.reason
    assert not marker.exists( )


def test_140_huge_unknown_key_shown_cut( tmp_path: Path ):
    ''' An unknown key of megabytes is refused with an error of bounded
        length which names its size, not one repeating it twice whole.
    '''
    path = tmp_path / 'huge.toml'
    path.write_text(
        "[ensemble]\nname = 'a'\n" + 'k' * 1_000_000 + ' = 1\n' )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_ensemble_descriptor( path )
    message = str( caught.value )
    assert len( message ) < 1_000
    assert '(1000000 characters)' in message
    assert 'description, enabled, implementation, name' in message


@pytest.mark.parametrize( 'mapping, keypath', [
    ( { 'ensembles': [ { 'source': '~\x00x' } ] }, 'ensembles[0].source' ),
    ( { 'roots': [ { 'path': '~\x00x' } ] }, 'roots[0].path' ),
] )
def test_200_nul_after_tilde_refused( mapping: Any, keypath: str ):
    ''' A NUL character in a path after a tilde (a user's home) is a
        descriptor error naming the key, not a raw ValueError.
    '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( mapping )
    assert caught.value.keypath == keypath
    assert 'null' in caught.value.reason


@pytest.mark.parametrize( 'server, keypath', [
    ( { 'command': 'x', 'cwd': '~\x00' }, 'mcpServers.a.cwd' ),
    ( { 'command': 'x', 'sandbox': { 'read': [ '~\x00' ] } },
      'mcpServers.a.sandbox.read' ),
    ( { 'url': 'http://127.0.0.1/mcp',
        'authorization': { 'kind': 'oauth', 'storage': '~\x00' } },
      'mcpServers.a.authorization.storage' ),
] )
def test_210_nul_after_tilde_in_servers_refused(
    server: dict[ str, Any ], keypath: str
):
    ''' So in the paths of mcpServers JSON, and of the file itself. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_server_descriptors(
            { 'mcpServers': { 'a': server } } )
    assert caught.value.keypath == keypath
    with pytest.raises( exceptions.DescriptorInvalidity ):
        descriptors.produce_server_descriptors( '~\x00x' )
    with pytest.raises( exceptions.DescriptorInvalidity ):
        descriptors.produce_configuration( '~\x00x' )


@pytest.mark.parametrize( 'url', [
    'http://127.0.0.1/mcp?token=${A}x',
    'http://127.0.0.1/mcp/${A}x/',
    'http://127.0.0.1/mcp?token=x${env:A}',
] )
def test_300_url_reference_into_text_not_renamed( url: str ):
    ''' A ``${NAME}`` which runs into other text of a URL is not made a
        reference to a variable of another name (``${A}x`` is not
        ``env:Ax``): it is kept, and the ensemble refused.
    '''
    entries = descriptors.produce_server_descriptors(
        { 'mcpServers': { 'a': { 'url': url } } } )
    assert _access_url( entries[ 0 ] ) == url
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        descriptors.produce_ensemble( entries[ 0 ] )


def test_310_url_whole_references_translated( ):
    ''' Whole user, password, path segment and query values are read. '''
    entries = descriptors.produce_server_descriptors( { 'mcpServers': {
        'a': { 'url': 'http://${U}:${P}@127.0.0.1/${env:S}/x?a=${B}&b=1' },
    } } )
    assert _access_url( entries[ 0 ] ) == (
        'http://env:U:env:P@127.0.0.1/env:S/x?a=env:B&b=1' )


def test_320_both_server_keys_refused( tmp_path: Path ):
    ''' JSON with both ``mcpServers`` and ``servers`` is refused, not read
        without the servers of one of them.
    '''
    path = tmp_path / 'mcp.json'
    path.write_text(
        '{ "mcpServers": { "a": { "command": "x" } },'
        ' "servers": { "b": { "command": "y" } } }' )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_server_descriptors( path )
    assert caught.value.location == str( path )
    assert 'servers' in caught.value.reason


@pytest.mark.parametrize( 'annotations, keypath', [
    ( "{ readOnlyHint = 'true' }", 'invoker.annotations.readOnlyHint' ),
    ( "{ destructive = 0 }", 'invoker.annotations.destructive' ),
    ( "{ openWorldHint = 'false', title = 'T' }",
      'invoker.annotations.openWorldHint' ),
    ( "{ readOnlyHint = true, read_only = false }",
      'invoker.annotations.read_only' ),
] )
def test_400_hints_not_booleans_refused(
    tmp_path: Path, annotations: str, keypath: str
):
    ''' A hint which is not a boolean (which rules would take as not
        given), or a hint given under both its names differently, is a
        descriptor error naming it.
    '''
    path = tmp_path / 'tool.toml'
    path.write_text(
        "[invoker]\nname = 'echo'\n"
        "implementation = 'test_000_invocables.descriptors_support:echo'\n"
        f"annotations = {annotations}\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_invoker_descriptor( path )
    assert caught.value.keypath == keypath


def test_410_hints_accepted( tmp_path: Path ):
    ''' Booleans under either name, the same under both, and other
        annotations of any kind are accepted.
    '''
    path = tmp_path / 'tool.toml'
    path.write_text(
        "[invoker]\nname = 'echo'\n"
        "implementation = 'test_000_invocables.descriptors_support:echo'\n"
        "annotations = { readOnlyHint = true, read_only = true, "
        "destructive = false, title = 'Echo', custom = 3 }\n" )
    descriptor = descriptors.produce_invoker_descriptor( path )
    assert descriptor.annotations[ 'custom' ] == 3
