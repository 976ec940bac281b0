# SPDX-License-Identifier: Apache-2.0

''' Documentation builds without warnings; its examples run. '''


import re
import subprocess
import sys

from pathlib import Path

import pytest


_root = Path( __file__ ).parents[ 2 ]


def test_100_readme_example_runs( ):
    ''' The example of README runs and prints its result. '''
    readme = ( _root / 'README.rst' ).read_text( )
    block = readme.split( '.. code-block:: python', 1 )[ 1 ]
    lines = [ ]
    for line in block.splitlines( )[ 1 : ]:
        if line and not line.startswith( '    ' ): break
        lines.append( line[ 4 : ] )
    completed = subprocess.run(
        [ sys.executable, '-c', '\n'.join( lines ) ],
        capture_output = True, text = True, timeout = 60, check = True )
    assert completed.stdout.strip( ) == '3'


def test_110_examples_run( ):
    ''' Every example script of the documentation runs. '''
    examples = sorted( ( _root / 'documentation' / 'examples' ).glob( '*.py' ) )
    assert examples
    for example in examples:
        completed = subprocess.run(
            [ sys.executable, str( example ) ],
            capture_output = True, text = True, timeout = 120 )
        assert completed.returncode == 0, ( example, completed.stderr )


def test_120_local_example_output( ):
    ''' The local tools example shows a result, a timeout, an invalidity. '''
    completed = subprocess.run(
        [ sys.executable,
          str( _root / 'documentation' / 'examples' / 'local_tools.py' ) ],
        capture_output = True, text = True, timeout = 60, check = True )
    lines = completed.stdout.splitlines( )
    assert lines[ 0 ] == 'call-1 3'
    assert lines[ 1 ].startswith( "call-2 Error: Tool 'wait' did not finish" )
    assert "'two' is not of type 'integer'" in lines[ 2 ]


@pytest.mark.slow
def test_200_sphinx_builds_without_warnings( tmp_path ):
    ''' Sphinx builds the documentation with warnings as errors; the API
        reference shows parameters as users read them: the prose of their
        Doc annotations, their types without Annotated or AbsentSingleton,
        and absent defaults as an ellipsis.
    '''
    completed = subprocess.run(
        [ sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q',
          '-b', 'html', str( _root / 'documentation' ),
          str( tmp_path / 'html' ) ],
        capture_output = True, text = True, timeout = 300 )
    assert completed.returncode == 0, completed.stderr
    assert 'WARNING' not in completed.stderr, completed.stderr
    for page in ( 'api.html', 'conversation.html' ):
        text = _render_text( tmp_path / 'html' / page )
        for raw in ( 'AbsentSingleton', 'Annotated[', 'absence.absent' ):
            assert raw not in text, ( page, raw )
    reference = _render_text( tmp_path / 'html' / 'api.html' )
    assert (
        'produce_invoker(function=..., /, *, name=..., description=...'
        in reference )
    assert 'name (str) – Tool name: 1 to 256 printable characters' in (
        reference )
    assert 'failure_policy=FailurePolicies.Raise' in reference


def _render_text( page: Path ) -> str:
    ''' Returns text of HTML page, without markup, entities decoded. '''
    import html
    import re
    markup = page.read_text( encoding = 'utf-8' )
    return html.unescape( re.sub( r'<[^>]+>', '', markup ) )


_UNRESOLVED = re.compile(
    r'^(?P<where>\S*documentation/(?P<page>[\w/-]+)\.rst):\d+: WARNING: '
    r'py:\w+ reference target not found: (?P<target>invocables\.[\w.]+)',
    re.MULTILINE )


@pytest.mark.slow
def test_210_guides_references_resolve( tmp_path ):
    ''' Every reference which a guide makes to a public name of the
        library leads to its documentation, also where a package
        re-exports the name (``invocables.InvocationCanister``).
    '''
    completed = subprocess.run(
        [ sys.executable, '-m', 'sphinx', '-n', '-q', '-b', 'html',
          str( _root / 'documentation' ), str( tmp_path / 'html' ) ],
        capture_output = True, text = True, timeout = 300 )
    assert completed.returncode == 0, completed.stderr
    unresolved = sorted( {
        ( match[ 'page' ], match[ 'target' ] )
        for match in _UNRESOLVED.finditer( completed.stderr )
        if match[ 'page' ] != 'api'
        and not any(
            part.startswith( '_' ) for part in match[ 'target' ].split( '.' ) )
    } )
    assert not unresolved
    guide = ( tmp_path / 'html' / 'conversation.html' ).read_text( )
    assert 'href="api.html#invocables.canisters.InvocationCanister"' in guide
