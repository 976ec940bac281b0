# SPDX-License-Identifier: Apache-2.0

''' Package sanity: public surface, lightness of import, project files. '''


import json
import subprocess
import sys

from pathlib import Path

import invocables


_root = Path( __file__ ).parents[ 2 ]


def test_000_version( ):
    ''' Package has a version string. '''
    assert isinstance( invocables.__version__, str )
    assert invocables.__version__


def test_010_import_is_light( ):
    ''' Importing package does not import provider SDKs, mcp or pydantic. '''
    heavy = (
        'anthropic', 'openai', 'mcp', 'pydantic', 'google.genai', 'cohere',
        'jsonschema', 'httpx' )
    script = (
        'import json, sys; import invocables; '
        f'print( json.dumps( [ m for m in {heavy!r} if m in sys.modules ] ) )' )
    output = subprocess.run(
        [ sys.executable, '-c', script ],
        capture_output = True, text = True, check = True ).stdout
    assert json.loads( output ) == [ ]


def test_020_typed_marker( ):
    ''' Package ships the py.typed marker. '''
    assert ( Path( invocables.__file__ ).parent / 'py.typed' ).is_file( )


def test_030_ci_runs_readme_test_command( ):
    ''' Continuous integration runs exactly the test commands of README:
        the whole suite, and the MCP tests with the mcp SDK 1.x.
    '''
    readme = ( _root / 'README.rst' ).read_text( )
    lines = [
        line.strip( ) for line in readme.splitlines( )
        if 'pytest' in line and line.startswith( '    ' ) ]
    assert len( lines ) == 2
    suite, mcp1 = lines
    ci = ( _root / '.ci' / 'run' ).read_text( )
    assert suite in ci.splitlines( )
    # The mcp 1.x command is read from README and run as it stands there.
    assert mcp1.startswith( 'python3 -m venv .venv-mcp1 ' )
    assert "grep -m 1 -E '^ +python3 -m venv \\.venv-mcp1 ' README.rst" in ci
    assert 'bash -c "${mcp1_command}"' in ci.splitlines( )


def test_040_public_names( ):
    ''' Public surface offers the names of the design. '''
    for name in (
        'Invocable', 'Invoker', 'Ensemble', 'Context',
        'InvocationCanister', 'ResultCanister', 'Deduplicator',
        'ExactDeduplicator', 'produce_invoker', 'produce_ensemble',
        'execute_invocations', 'FailurePolicies',
    ): assert hasattr( invocables, name ), name
