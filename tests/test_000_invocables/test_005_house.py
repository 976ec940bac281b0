# SPDX-License-Identifier: Apache-2.0

''' The house: no import circle, arrows from features to the model and the
    engine only, no module reading another's private names, modules of a
    readable size. Read from the sources, every import statement counted
    (inside functions and ``TYPE_CHECKING`` blocks too).
'''


import ast

from pathlib import Path

import pytest


_SOURCES = Path( __file__ ).parents[ 2 ] / 'sources' / 'invocables'
# What everything speaks, and the one engine: they import nothing else.
_MODEL = frozenset( (
    'invocables.__', 'invocables.__.imports', 'invocables.__.nomina',
    'invocables.__.values', 'invocables.__.logs', 'invocables.exceptions',
    'invocables.canisters',
    'invocables._texts', 'invocables.invokers', 'invocables._callables',
    'invocables.ensembles', 'invocables._members', 'invocables.naming',
    'invocables.schemata', 'invocables._patterns', 'invocables._steps',
    'invocables._fanout' ) )
# Ensembles make invokers of typed functions (the design documents' local
# ensembles take functions): the model may import signatures.
_SIGNATURES = 'invocables.signatures'
_LINES_MAXIMUM = 600


def _survey_modules( ) -> dict[ str, tuple[ Path, bool ] ]:
    modules: dict[ str, tuple[ Path, bool ] ] = { }
    for path in sorted( _SOURCES.rglob( '*.py' ) ):
        parts = path.relative_to( _SOURCES.parent ).with_suffix( '' ).parts
        is_package = parts[ -1 ] == '__init__'
        name = '.'.join( parts[ : -1 ] if is_package else parts )
        modules[ name ] = ( path, is_package )
    return modules


_MODULES = _survey_modules( )


def _read_imports(
    name: str, packages_too: bool
) -> tuple[ set[ str ], list[ str ] ]:
    ''' Returns modules one module imports, and private names it reads
        from others. With ``packages_too``, ``from . import x`` also counts
        and ``from .p import x`` as imports of the package too (as
        pyright's cycle check counts them).
    '''
    path, is_package = _MODULES[ name ]
    package = name if is_package else name.rsplit( '.', 1 )[ 0 ]
    tree = ast.parse( path.read_text( ) )
    imported: set[ str ] = set( )
    privates: list[ str ] = [ ]
    aliases: dict[ str, str ] = { }
    for node in ast.walk( tree ):
        if isinstance( node, ast.Import ):
            for alias in node.names:
                if not alias.name.startswith( 'invocables' ): continue
                imported.add( alias.name )
                if alias.asname: aliases[ alias.asname ] = alias.name
        elif isinstance( node, ast.ImportFrom ):
            if node.level:
                parts = package.split( '.' )
                parts = parts[ : len( parts ) - node.level + 1 ]
                if node.module: parts.append( node.module )
                base = '.'.join( parts )
            elif ( node.module or '' ).startswith( 'invocables' ):
                base = node.module or ''
            else: continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in _MODULES:
                    imported.add( full )
                    aliases[ alias.asname or alias.name ] = full
                    if packages_too: imported.add( base )
                    continue
                imported.add( base )
                if _is_private( alias.name ):
                    privates.append( f"{name} imports {full}" )
    for node in ast.walk( tree ):
        if not isinstance( node, ast.Attribute ): continue
        if not isinstance( node.value, ast.Name ): continue
        if node.value.id not in aliases or not _is_private( node.attr ):
            continue
        privates.append( f"{name} reads {aliases[ node.value.id ]}.{node.attr}" )
    imported.discard( name )
    return { module for module in imported if module in _MODULES }, privates


def _is_private( name: str ) -> bool:
    return name.startswith( '_' ) and not name.startswith( '__' )


def _survey_circles( packages_too: bool ) -> list[ list[ str ] ]:
    graph = {
        name: _read_imports( name, packages_too )[ 0 ] for name in _MODULES }
    # Tarjan's strongly connected components, without recursion.
    index: dict[ str, int ] = { }
    low: dict[ str, int ] = { }
    stack: list[ str ] = [ ]
    circles: list[ list[ str ] ] = [ ]
    for root in graph:
        if root in index: continue
        work = [ ( root, iter( sorted( graph[ root ] ) ) ) ]
        index[ root ] = low[ root ] = len( index )
        stack.append( root )
        while work:
            node, successors = work[ -1 ]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[ successor ] = low[ successor ] = len( index )
                    stack.append( successor )
                    work.append(
                        ( successor, iter( sorted( graph[ successor ] ) ) ) )
                    advanced = True
                    break
                if successor in stack:
                    low[ node ] = min( low[ node ], index[ successor ] )
            if advanced: continue
            work.pop( )
            if work:
                parent = work[ -1 ][ 0 ]
                low[ parent ] = min( low[ parent ], low[ node ] )
            if low[ node ] == index[ node ]:
                component: list[ str ] = [ ]
                while True:
                    member = stack.pop( )
                    component.append( member )
                    if member == node: break
                if len( component ) > 1: circles.append( sorted( component ) )
    return circles


@pytest.mark.parametrize( 'packages_too', [ False, True ] )
def test_100_no_import_circle( packages_too ):
    ''' No module reaches itself through imports: neither by the modules
        the statements name, nor counting ``from . import x`` as an import
        of the package too, as pyright's cycle check does.
    '''
    assert _survey_circles( packages_too ) == [ ]


def test_110_model_and_engine_import_no_feature( ):
    ''' The model and the engine import only each other: features (policies,
        telemetry, search, processors, MCP, front ends) reach a call
        through the engine's interceptors.
    '''
    inward = { name for name in _MODULES if name in _MODEL
        or name == 'invocables.execution'
        or name.startswith( 'invocables.execution.' ) }
    allowed = inward | { _SIGNATURES }
    strays = sorted(
        f"{name} imports {module}" for name in inward
        for module in _read_imports( name, False )[ 0 ]
        if module not in allowed )
    assert strays == [ ]


def test_120_no_private_reads( ):
    ''' No module imports or reads another module's private names. '''
    privates = [
        private for name in _MODULES
        for private in _read_imports( name, False )[ 1 ] ]
    assert privates == [ ]


def test_130_modules_of_readable_size( ):
    ''' Every module is under 600 lines. '''
    long = sorted(
        f"{name}: {len( path.read_text( ).splitlines( ) )}"
        for name, ( path, _ ) in _MODULES.items( )
        if len( path.read_text( ).splitlines( ) ) >= _LINES_MAXIMUM )
    assert long == [ ]
