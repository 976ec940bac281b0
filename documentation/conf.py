# SPDX-License-Identifier: Apache-2.0
''' Sphinx configuration.

    The API reference reads parameters as users see them: the prose of each
    ``Doc( ... )`` annotation becomes the parameter's description, types
    lose their ``Annotated`` wrappers and the ``AbsentSingleton`` which only
    marks "not given", and defaults read as a user would write them (an
    absent default, which means "leave it out", shows as ``...``).
'''

import enum
import functools
import importlib
import inspect
import operator
import re
import sys
import types
import typing

from pathlib import Path


_root = Path( __file__ ).parent.parent
sys.path.insert( 0, str( _root / 'sources' ) )

project = 'invocables'
author = 'The invocables developers'
copyright = '2026, The invocables developers'  # noqa: A001
extensions = [
    'sphinx.ext.autodoc',
    'sphinx.ext.doctest',
    'sphinx.ext.intersphinx',
    'sphinx.ext.viewcode',
]
templates_path = [ ]
exclude_patterns = [ '_build' ]
html_theme = 'furo'
html_static_path = [ ]
autodoc_default_options = {
    'members': True,
    'show-inheritance': True,
    'member-order': 'bysource',
}
# Types are written by the hooks below, cleaned of absence and Annotated.
autodoc_typehints = 'none'
autodoc_type_aliases = { }
nitpicky = False
suppress_warnings = [ 'ref.python' ]
intersphinx_mapping = { }

_absent_type_name = 'absence.objects.AbsentSingleton'
_field_name = re.compile(
    r'^:(?:ivar|param|argument|arg|type|vartype) (\w+):' )
_instance_argument = re.compile(
    r'^:(?:argument|param) (?:self|cls):\s*$' )
_typing_field = re.compile( r'^(:(?:vartype \w+|type \w+|rtype): )(.*)$' )
_VARIADIC = (
    inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD )


class _Text:
    ''' Default shown as written text. '''

    def __init__( self, text: str ) -> None: self.text = text

    def __repr__( self ) -> str: return self.text


def _clean_annotation( annotation: typing.Any ) -> typing.Any:
    ''' Returns annotation without Annotated wrappers and absence. '''
    origin = typing.get_origin( annotation )
    arguments = typing.get_args( annotation )
    if origin is typing.Annotated:
        return _clean_annotation( arguments[ 0 ] )
    if origin in ( typing.Union, types.UnionType ):
        kept = [
            _clean_annotation( argument ) for argument in arguments
            if not _is_absent_type( argument ) ]
        if not kept: return annotation
        return functools.reduce( operator.or_, kept )
    if origin is None or not arguments: return annotation
    return _clean_generic( annotation, origin, arguments )


def _clean_generic(
    annotation: typing.Any,
    origin: typing.Any,
    arguments: tuple[ typing.Any, ... ],
) -> typing.Any:
    ''' Returns generic annotation with its arguments cleaned. '''
    cleaned = tuple(
        [ _clean_annotation( item ) for item in argument ]
        if isinstance( argument, list ) else _clean_annotation( argument )
        for argument in arguments )
    try:
        if isinstance( annotation, types.GenericAlias ):
            return origin[ cleaned ]
        return annotation.copy_with( cleaned )
    except ( AttributeError, TypeError ): return annotation


def _describe_default( value: object ) -> str:
    ''' Returns default as a user would write it. '''
    if _is_absent_type( type( value ) ): return '...'
    if isinstance( value, enum.Enum ):
        return f"{type( value ).__name__}.{value.name}"
    if isinstance( value, ( str, bytes, int, float, bool, type( None ) ) ):
        return repr( value )
    if isinstance( value, typing.Mapping ) and not value: return '{}'
    if isinstance( value, ( tuple, list, frozenset, set ) ) and not value:
        return repr( value )
    return '...'


def _extract_doc( annotation: typing.Any ) -> str:
    ''' Returns prose of Doc annotation, if any. '''
    if typing.get_origin( annotation ) is not typing.Annotated: return ''
    for metadata in annotation.__metadata__:
        documentation = getattr( metadata, 'documentation', None )
        if isinstance( documentation, str ):
            return inspect.cleandoc( documentation )
    return ''


def _is_absent_type( genus: object ) -> bool:
    return (
        isinstance( genus, type )
        and f"{genus.__module__}.{genus.__qualname__}" == _absent_type_name )


def _produce_signature( obj: object ) -> inspect.Signature | None:
    if not callable( obj ): return None
    try: return inspect.signature( obj )
    except ( TypeError, ValueError ): return None


def _render_annotation( annotation: typing.Any ) -> str:
    from sphinx.util.typing import stringify_annotation
    return stringify_annotation(
        _clean_annotation( annotation ), 'smart' )


def _rectify_docstring(
    app: object,
    what: str,
    name: str,
    obj: object,
    options: object,
    lines: list[ str ],
) -> None:
    ''' Adds parameters with their prose and cleaned types; cleans types
        of variables which the package's classes describe.
    '''
    lines[ : ] = [
        line for line in lines if not _instance_argument.match( line ) ]
    for index, line in enumerate( lines ):
        match = _typing_field.match( line )
        if match:
            lines[ index ] = match[ 1 ] + _remove_absent_text( match[ 2 ] )
    if what not in ( 'function', 'method', 'class', 'exception' ): return
    signature = _produce_signature( obj )
    if signature is None: return
    named = {
        match[ 1 ] for match in map( _field_name.match, lines ) if match }
    fields: list[ str ] = [ ]
    for parameter in signature.parameters.values( ):
        if parameter.name in named or parameter.name in ( 'self', 'cls' ):
            continue
        annotation = parameter.annotation
        prose = _extract_doc( annotation ).replace( '\n', '\n   ' )
        if not prose and parameter.kind in _VARIADIC: continue
        fields.append( f":param {parameter.name}: {prose}".rstrip( ) )
        if annotation is not inspect.Parameter.empty:
            fields.append(
                f":type {parameter.name}: "
                + _render_annotation( annotation ) )
    returns = signature.return_annotation
    if what in ( 'function', 'method' ) and returns not in (
        inspect.Signature.empty, None, type( None ), 'None'
    ) and not any( line.startswith( ':rtype:' ) for line in lines ):
        fields.append( ':rtype: ' + _render_annotation( returns ) )
    if fields:
        if lines and lines[ -1 ]: lines.append( '' )
        lines.extend( fields )


def _rectify_signature(
    app: object,
    what: str,
    name: str,
    obj: object,
    options: object,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[ str, str | None ] | None:
    ''' Returns signature with defaults as a user would write them. '''
    if signature is None: return None
    signature_ = _produce_signature( obj )
    if signature_ is None: return None
    parameters = [
        parameter.replace(
            annotation = inspect.Parameter.empty,
            default = (
                parameter.default
                if parameter.default is inspect.Parameter.empty
                else _Text( _describe_default( parameter.default ) ) ) )
        for parameter in signature_.parameters.values( )
        if not ( what in ( 'method', 'class' )
                 and parameter.name in ( 'self', 'cls' ) ) ]
    try: rendered = str( inspect.Signature( parameters ) )
    except ValueError: return None
    return rendered, return_annotation


def _remove_absent_text( text: str ) -> str:
    for absent in ( f" | {_absent_type_name}", f"{_absent_type_name} | " ):
        text = text.replace( absent, '' )
    return text


def _resolve_reexport(
    app: typing.Any, env: typing.Any, node: typing.Any, contnode: typing.Any
) -> typing.Any:
    ''' Resolves a reference to a name as a package re-exports it (such
        as ``invocables.InvocationCanister``) to where it is documented:
        its defining module, else the one documented object of that name
        within the package.
    '''
    if node.get( 'refdomain' ) != 'py': return None
    target = node.get( 'reftarget', '' )
    if not target.startswith( 'invocables.' ): return None
    domain = env.get_domain( 'py' )
    for canonical in _survey_homes( domain, target ):
        resolved = domain.resolve_xref(
            env, node[ 'refdoc' ], app.builder, node[ 'reftype' ],
            canonical, node, contnode )
        if resolved is not None: return resolved
    return None


def _survey_homes( domain: typing.Any, target: str ) -> list[ str ]:
    ''' Returns names under which target may be documented. '''
    homes: list[ str ] = [ ]
    package, _, attribute = target.rpartition( '.' )
    try: obj = getattr( importlib.import_module( package ), attribute )
    except ( ImportError, AttributeError ): obj = None
    module = getattr( obj, '__module__', None )
    qualname = getattr( obj, '__qualname__', None )
    if isinstance( module, str ) and isinstance( qualname, str ):
        homes.append( f"{module}.{qualname}" )
    suffix = f".{attribute}"
    matches = [
        name for name in domain.objects
        if name.startswith( f"{package}." ) and name.endswith( suffix )
        and name.count( '.' ) == target.count( '.' ) + 1 ]
    if len( matches ) == 1: homes.extend( matches )
    return [ home for home in homes if home != target ]


def setup( app: typing.Any ) -> None:
    ''' Connects the hooks which render parameters for users, and the
        resolver of re-exported names.
    '''
    app.connect( 'autodoc-process-signature', _rectify_signature )
    app.connect( 'autodoc-process-docstring', _rectify_docstring )
    app.connect( 'missing-reference', _resolve_reexport )
