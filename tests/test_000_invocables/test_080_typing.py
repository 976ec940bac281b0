# SPDX-License-Identifier: Apache-2.0

''' Users' code type-checks against the package, without casts.

    Pyright, in its standard mode and with no setting of this project, reads
    the Python examples of README.rst and of the provider pages, every
    script of ``documentation/examples``, and the typical applications of
    ``tests/data/applications`` (one per provider, with the real SDK
    clients' typed calls), as a user's project which has this package
    installed. Its strict mode reads them too, but for the code over SDKs
    whose own types are partly unknown to pyright (google-genai's
    ``ContentUnionDict``, boto3 without stubs).
'''


import json
import re
import subprocess
import sys

from pathlib import Path

import pytest


# One worker runs the module: its tests share one run of pyright.
pytestmark = pytest.mark.xdist_group( 'typing' )
_root = Path( __file__ ).parents[ 2 ]
_applications = _root / 'tests' / 'data' / 'applications'
_block_start = re.compile( r'^\.\. code-block:: python\s*$' )
_casts = re.compile( r'\bcast\(|type:\s*ignore|pyright:\s*ignore' )
# Sources over SDKs whose types pyright's strict mode finds partly unknown.
_SOURCES_LAX = frozenset( (
    'application_gemini.py', 'page_bedrock.py', 'page_gemini.py' ) )


def _extract_blocks( path: Path ) -> list[ str ]:
    ''' Returns Python code blocks of reStructuredText document. '''
    blocks: list[ str ] = [ ]
    lines = path.read_text( encoding = 'utf-8' ).splitlines( )
    for index, line in enumerate( lines ):
        if not _block_start.match( line ): continue
        block: list[ str ] = [ ]
        for line_ in lines[ index + 1 : ]:
            if line_ and not line_.startswith( '    ' ): break
            block.append( line_[ 4 : ] )
        blocks.append( '\n'.join( block ).strip( '\n' ) + '\n' )
    return blocks


def _survey_sources( ) -> dict[ str, str ]:
    ''' Returns user code to check, by file name.

        Each block of README is a program of its own; the blocks of a
        provider page continue one another, so they are read as one module.
    '''
    sources: dict[ str, str ] = { }
    for index, block in enumerate(
        _extract_blocks( _root / 'README.rst' )
    ): sources[ f"readme_{index}.py" ] = block
    pages = sorted( ( _root / 'documentation' / 'providers' ).glob( '*.rst' ) )
    for page in pages:
        blocks = _extract_blocks( page )
        if not blocks: continue
        name = page.stem.replace( '-', '_' )
        sources[ f"page_{name}.py" ] = '\n\n'.join( blocks )
    for folder, prefix in (
        ( _root / 'documentation' / 'examples', 'example' ),
        ( _applications, 'application' ),
    ):
        for script in sorted( folder.glob( '*.py' ) ):
            sources[ f"{prefix}_{script.name}" ] = script.read_text(
                encoding = 'utf-8' )
    return sources


@pytest.fixture( scope = 'module' )
def report( tmp_path_factory: pytest.TempPathFactory ) -> dict[ str, object ]:
    ''' Pyright's report on users' code, in one run: the sources in a
        folder ``standard`` in its standard mode, those which strict mode
        reads in a folder ``strict`` in that mode (one run reads the
        package and the SDKs once, not once per mode).

        The configuration is pyright's modes and nothing else; the package
        comes from the running interpreter's environment, as an installed
        library.
    '''
    location = tmp_path_factory.mktemp( 'typing' )
    sources = _survey_sources( )
    for mode, names in (
        ( 'standard', sorted( sources ) ),
        ( 'strict', sorted( set( sources ) - _SOURCES_LAX ) ),
    ):
        ( location / mode ).mkdir( )
        for name in names:
            ( location / mode / name ).write_text(
                sources[ name ], encoding = 'utf-8' )
    configuration = location / 'pyrightconfig.json'
    configuration.write_text( json.dumps( {
        'include': [ 'standard', 'strict' ],
        'strict': [ 'strict' ],
        'typeCheckingMode': 'standard',
        'pythonVersion': '{}.{}'.format( *sys.version_info[ : 2 ] ),
    } ) )
    completed = subprocess.run(
        [ sys.executable, '-m', 'pyright', '--outputjson',
          '--pythonpath', sys.executable, '--project', str( configuration ) ],
        capture_output = True, text = True, timeout = 600, cwd = location )
    try: return json.loads( completed.stdout )
    except ValueError:
        pytest.fail( "pyright gave no report: {}".format(
            completed.stdout + completed.stderr ) )


def _survey_errors( report: dict[ str, object ], mode: str ) -> list[ str ]:
    ''' Returns errors of the report in the folder of the mode. '''
    diagnostics: list[ dict[ str, object ] ] = report[ 'generalDiagnostics' ]
    return [
        _render_diagnostic( diagnostic ) for diagnostic in diagnostics
        if diagnostic[ 'severity' ] == 'error'
        if Path( str( diagnostic[ 'file' ] ) ).parent.name == mode ]


def _render_diagnostic( diagnostic: dict[ str, object ] ) -> str:
    start = diagnostic[ 'range' ][ 'start' ]
    return "{file}:{line}: {message}".format(
        file = Path( diagnostic[ 'file' ] ).name,
        line = start[ 'line' ] + 1,
        message = diagnostic[ 'message' ] )


def test_100_sources_surveyed( ):
    ''' README, the provider pages, the examples and one application per
        provider are checked, and none of them casts types.
    '''
    sources = _survey_sources( )
    assert { 'readme_0.py', 'readme_1.py' } <= set( sources )
    assert {
        'example_local_tools.py', 'example_typed_anthropic.py',
        'example_typed_openai.py' } <= set( sources )
    for provider in (
        'anthropic', 'openai', 'openai_responses', 'gemini', 'cohere',
        'ollama',
    ): assert f"page_{provider}.py" in sources
    applications = {
        name for name in sources if name.startswith( 'application_' ) }
    assert len( applications ) >= 6
    for name, source in sources.items( ):
        assert not _casts.search( source ), name


@pytest.mark.slow
def test_200_users_code_type_checks( report ):
    ''' Pyright's standard mode finds no error in users' code: public names
        are exported, and what processors give goes into the SDKs' typed
        calls as it is.
    '''
    errors = _survey_errors( report, 'standard' )
    assert not errors, '\n'.join( errors )
    sources = _survey_sources( )
    summary: dict[ str, int ] = report[ 'summary' ]
    assert summary[ 'filesAnalyzed' ] == (
        2 * len( sources ) - len( _SOURCES_LAX & set( sources ) ) )


@pytest.mark.slow
def test_300_users_code_type_checks_strictly( report ):
    ''' Pyright's strict mode finds no error in users' code either: the
        assistant messages of whole and streamed responses, the results and
        the transcripts go into typed lists of the SDKs' own message types
        with no cast (``documentation/examples/typed_*.py``).
    '''
    sources = set( _survey_sources( ) ) - _SOURCES_LAX
    assert {
        'example_typed_anthropic.py', 'example_typed_openai.py',
        'application_openai_chat.py', 'application_anthropic_messages.py',
        'page_openai.py', 'page_anthropic.py' } <= sources
    errors = _survey_errors( report, 'strict' )
    assert not errors, '\n'.join( errors )
