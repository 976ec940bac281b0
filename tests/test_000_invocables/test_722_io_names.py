# SPDX-License-Identifier: Apache-2.0

''' Built-in io ensemble: names of files which are not UTF-8, or hold line
    breaks and other control characters, give listings which can be sent
    and whose lines are the entries, one each.
'''


import json
import os

import pytest

import invocables
from invocables import descriptors
from invocables.processors import produce_processor


_PROVIDERS = (
    'anthropic', 'bedrock', 'cohere', 'gemini', 'mistral', 'ollama',
    'openai', 'openai-responses' )
_FORGING = (
    'evil\nforged.txt (0 bytes)', 'carriage\rreturn', 'escape\x1b[2J',
    'line\u2028separator', 'paragraph\u2029separator', 'next\x85line',
    'txt.\u202eexe', 'tab\there' )


async def _prepare( root, writable = False ):
    return await descriptors.prepare_ensembles( {
        'ensembles': [ { 'builtin': 'io' } ],
        'roots': [ { 'path': str( root ), 'writable': writable } ],
    }, connect = True )


async def _invoke( ensembles, name, **arguments ):
    invocation = invocables.InvocationCanister(
        identifier = 'call', name = name, arguments = arguments )
    results = await invocables.execute_invocations( [ invocation ], ensembles )
    return results[ 0 ]


def _assert_sendable( result ):
    ''' Result's text, and each provider's message of it, encode as UTF-8.
    '''
    result.as_text( ).encode( 'utf-8' )
    for provider in _PROVIDERS:
        native = produce_processor( provider ).nativize_results( [ result ] )
        json.dumps( native, ensure_ascii = False ).encode( 'utf-8' )


@pytest.fixture
def root( tmp_path ):
    ''' Root holding a file whose name is not UTF-8, in a folder. '''
    root = tmp_path / 'root'
    ( root / 'docs' ).mkdir( parents = True )
    path = os.fsencode( root / 'docs' ) + b'/bad\xff.txt'
    with open( path, 'wb' ) as stream: stream.write( b'needle\n' )
    return root


@pytest.mark.asyncio
async def test_100_names_not_utf8_sendable( root ):
    ''' A name which is not UTF-8 is shown with its byte escaped, in every
        tool which shows names, and every provider can send the result.
    '''
    ensembles = await _prepare( root )
    result = await _invoke( ensembles, 'list_directory', path = 'docs' )
    assert result.as_text( ) == 'bad\\xff.txt (7 bytes)'
    _assert_sendable( result )
    result = await _invoke( ensembles, 'search_files', pattern = '**/*.txt' )
    assert result.as_text( ) == 'docs/bad\\xff.txt'
    _assert_sendable( result )
    result = await _invoke( ensembles, 'search_text', pattern = 'needle' )
    assert result.as_text( ) == 'docs/bad\\xff.txt:1: needle'
    _assert_sendable( result )
    name = os.fsdecode( b'docs/bad\xff.txt' )
    result = await _invoke( ensembles, 'get_file_info', path = name )
    assert 'bad\\xff.txt' in result.as_text( )
    _assert_sendable( result )
    result = await _invoke( ensembles, 'read_file', path = name )
    assert result.as_text( ) == 'needle\n'


@pytest.mark.asyncio
async def test_110_control_characters_forge_no_lines( root ):
    ''' Line breaks and other control characters in names are escaped: a
        listing has one line per entry, whatever the names.
    '''
    for name in _FORGING: ( root / 'docs' / name ).write_text( 'needle\n' )
    ( root / 'docs' / 'back\\slash' ).write_text( '' )
    ensembles = await _prepare( root )
    entries = len( _FORGING ) + 2
    result = await _invoke( ensembles, 'list_directory', path = 'docs' )
    lines = result.as_text( ).splitlines( )
    assert len( lines ) == entries, lines
    assert 'evil\\nforged.txt (0 bytes) (7 bytes)' in lines
    assert 'back\\\\slash (0 bytes)' in lines
    result = await _invoke( ensembles, 'search_files', pattern = 'docs/*' )
    assert len( result.as_text( ).splitlines( ) ) == entries
    assert 'docs/txt.\\u202eexe' in result.as_text( ).splitlines( )
    result = await _invoke( ensembles, 'search_text', pattern = 'needle' )
    lines = result.as_text( ).splitlines( )
    assert len( lines ) == entries - 1
    assert 'docs/escape\\x1b[2J:1: needle' in lines
    for line in lines: assert '\x1b' not in line and '\u202e' not in line


@pytest.mark.asyncio
async def test_120_paths_from_model_sendable( tmp_path ):
    ''' Paths which the model sends, with lone surrogates (as JSON's
        escapes give them) or line breaks, give sendable results on one
        line, for writes, folders, moves and refusals alike.
    '''
    ensembles = await _prepare( tmp_path, writable = True )
    result = await _invoke(
        ensembles, 'write_file', path = 'new\udcff\nline.txt', content = 'x' )
    assert not result.is_error( ), result
    assert len( result.as_text( ).splitlines( ) ) == 1
    assert 'new\\xff\\nline.txt' in result.as_text( )
    _assert_sendable( result )
    result = await _invoke(
        ensembles, 'create_directory', path = 'folder\ud800' )
    assert len( result.as_text( ).splitlines( ) ) == 1
    _assert_sendable( result )
    result = await _invoke(
        ensembles, 'move_file', source = 'new\udcff\nline.txt',
        destination = 'moved\udcfe' )
    assert result.as_text( ).endswith( 'moved\\xfe.' )
    _assert_sendable( result )
    result = await _invoke( ensembles, 'read_file', path = 'absent\udcff' )
    assert result.is_error( )
    _assert_sendable( result )


@pytest.mark.asyncio
async def test_130_content_which_decodes_to_surrogates_sendable( root ):
    ''' Whatever a tool reads, the result is sendable: a file read with an
        encoding which makes lone surrogates keeps its line breaks, and
        shows them as escapes.
    '''
    ( root / 'escaped.txt' ).write_bytes( b'first\\udcff\nsecond\n' )
    ensembles = await _prepare( root )
    result = await _invoke(
        ensembles, 'read_file', path = 'escaped.txt',
        encoding = 'unicode_escape' )
    assert result.as_text( ) == 'first\\xff\nsecond\n'
    _assert_sendable( result )
