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


def _check_types(
    location: Path, sources: dict[ str, str ], mode: str = 'standard'
) -> dict[ str, object ]:
    ''' Runs pyright over sources in a folder of their own; returns report.

        The configuration is pyright's mode and nothing else; the package
        comes from the running interpreter's environment, as an installed
        library.
    '''
    for name, source in sources.items( ):
        ( location / name ).write_text( source, encoding = 'utf-8' )
    configuration = location / 'pyrightconfig.json'
    configuration.write_text( json.dumps( {
        'include': sorted( sources ),
        'typeCheckingMode': mode,
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
def test_200_users_code_type_checks( tmp_path ):
    ''' Pyright's standard mode finds no error in users' code: public names
        are exported, and what processors give goes into the SDKs' typed
        calls as it is.
    '''
    sources = _survey_sources( )
    report = _check_types( tmp_path, sources )
    summary = report[ 'summary' ]
    errors = [
        _render_diagnostic( diagnostic )
        for diagnostic in report[ 'generalDiagnostics' ]
        if diagnostic[ 'severity' ] == 'error' ]
    assert not errors, '\n'.join( errors )
    assert summary[ 'errorCount' ] == 0
    assert summary[ 'filesAnalyzed' ] == len( sources )


@pytest.mark.slow
def test_300_users_code_type_checks_strictly( tmp_path ):
    ''' Pyright's strict mode finds no error in users' code either: the
        assistant messages of whole and streamed responses, the results and
        the transcripts go into typed lists of the SDKs' own message types
        with no cast (``documentation/examples/typed_*.py``).
    '''
    sources = {
        name: source for name, source in _survey_sources( ).items( )
        if name not in _SOURCES_LAX }
    assert {
        'example_typed_anthropic.py', 'example_typed_openai.py',
        'application_openai_chat.py', 'application_anthropic_messages.py',
        'page_openai.py', 'page_anthropic.py' } <= set( sources )
    report = _check_types( tmp_path, sources, mode = 'strict' )
    errors = [
        _render_diagnostic( diagnostic )
        for diagnostic in report[ 'generalDiagnostics' ]
        if diagnostic[ 'severity' ] == 'error' ]
    assert not errors, '\n'.join( errors )
    assert report[ 'summary' ][ 'filesAnalyzed' ] == len( sources )
