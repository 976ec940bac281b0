# SPDX-License-Identifier: Apache-2.0

''' The MCP page tells the whole truth: every required argument of what it
    names, installation from a clone, examples which compile and run.
'''


import ast
import enum
import importlib
import inspect
import os
import re
import subprocess
import sys

from pathlib import Path

from . import mcp_support


_root = Path( __file__ ).parents[ 2 ]
_page = _root / 'documentation' / 'mcp.rst'
_named = re.compile( r'\binvocables(?:\.[a-z_]+)*\.[A-Za-z_]+\b' )
_imported = re.compile(
    r'from (invocables[\w.]*) import (\([^)]*\)|[^\n]+)' )


def _access_text( ) -> str:
    return _page.read_text( encoding = 'utf-8' )


def _resolve( dotted: str ) -> object:
    ''' Returns object named by dotted path, or None. '''
    parts = dotted.split( '.' )
    for index in range( len( parts ), 0, -1 ):
        try: target = importlib.import_module( '.'.join( parts[ : index ] ) )
        except ImportError: continue
        for part in parts[ index : ]:
            target = getattr( target, part, None )
            if target is None: return None
        return target
    return None


def _survey_named( text: str ) -> set[ str ]:
    ''' Returns dotted names of what the page names or imports. '''
    names = set( _named.findall( text ) )
    for match in _imported.finditer( text ):
        for name in re.findall( r'\w+', match.group( 2 ) ):
            names.add( f"{match.group( 1 )}.{name}" )
    return names


def _survey_blocks( text: str ) -> list[ str ]:
    ''' Returns the Python code blocks of the page, dedented. '''
    blocks = [ ]
    for part in text.split( '.. code-block:: python' )[ 1 : ]:
        lines = [ ]
        for line in part.splitlines( )[ 1 : ]:
            if line and not line.startswith( '    ' ): break
            lines.append( line[ 4 : ] )
        blocks.append( '\n'.join( lines ) )
    return blocks


def test_100_required_arguments_documented( ):
    ''' Each required parameter of each class or function the page names
        appears on the page (exceptions, raised not made, and enums
        aside).
    '''
    import invocables.mcp # noqa: F401
    text = _access_text( )
    words = set( re.findall( r'\w+', text ) )
    checked = 0
    missing = [ ]
    for dotted in sorted( _survey_named( text ) ):
        # The SDK's own classes, behind invocables.mcp._sdk, are its to
        # document; their signatures differ between its majors.
        if dotted.startswith( 'invocables.mcp._sdk.' ): continue
        target = _resolve( dotted )
        if not callable( target ) or inspect.ismodule( target ): continue
        if inspect.isclass( target ) and issubclass(
            target, ( BaseException, enum.Enum )
        ): continue
        try: signature = inspect.signature( target )
        except ( TypeError, ValueError ): continue
        checked += 1
        missing.extend(
            f"{dotted}: {parameter.name}"
            for parameter in signature.parameters.values( )
            if parameter.default is inspect.Parameter.empty
            and parameter.kind in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                inspect.Parameter.KEYWORD_ONLY )
            and parameter.name not in words )
    assert checked >= 20
    assert not missing, missing


def test_110_code_authorization_complete( ):
    ''' The code grant's three required arguments are named, and its
        example builds one with them.
    '''
    from invocables.mcp import CodeAuthorization
    text = _access_text( )
    required = [
        name for name, parameter in inspect.signature(
            CodeAuthorization ).parameters.items( )
        if parameter.default is inspect.Parameter.empty ]
    assert 'redirect_uri' in required
    example = next(
        block for block in _survey_blocks( text )
        if 'CodeAuthorization(' in block )
    call = next(
        node for node in ast.walk( ast.parse( example ) )
        if isinstance( node, ast.Call )
        and getattr( node.func, 'id', None ) == 'CodeAuthorization' )
    assert set( required ) <= { keyword.arg for keyword in call.keywords }


def test_120_installation_from_clone( ):
    ''' The page installs the extra from a clone, not from the index. '''
    text = _access_text( )
    assert "pip install --editable '.[mcp]'" in text
    assert "pip install 'invocables[mcp]'" not in text


def test_130_code_blocks_compile( ):
    ''' Every Python block of the page is valid Python (top-level await
        allowed, as fragments of an async function).
    '''
    blocks = _survey_blocks( _access_text( ) )
    assert len( blocks ) >= 10
    for block in blocks:
        compile(
            block, str( _page ), 'exec',
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT )


def test_140_answers_example_runs( ):
    ''' The example of the callbacks' answers runs against
        server-everything: the elicitor's wire mapping and the sampler's
        SDK result reach the server.
    '''
    text = _access_text( )
    section = text.split( 'Answers of elicitors and samplers\n', 1 )[ 1 ]
    example = _survey_blocks( section )[ 0 ]
    mcp_support.locate_npm_server( 'mcp-server-everything' )
    environment = dict( os.environ )
    environment[ 'PATH' ] = os.pathsep.join( (
        str( mcp_support.NPM_BINS ), environment.get( 'PATH', '' ) ) )
    completed = subprocess.run(
        [ sys.executable, '-c', example ], env = environment,
        capture_output = True, text = True, timeout = 120, check = False )
    assert completed.returncode == 0, completed.stderr
    assert 'asked:' in completed.stdout
    assert '"name": "Ada"' in completed.stdout
    assert '"text": "Hello."' in completed.stdout
    assert '"model": "stand-in"' in completed.stdout
