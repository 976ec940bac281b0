# SPDX-License-Identifier: Apache-2.0

''' Rules common to every dialect: the root is one plain object schema. '''


import invocables.dialects.__ as __
import invocables.dialects._core as _core


# A root with only these keys has nothing to resolve and nothing to drop.
KEYS_ROOT_PLAIN = __.schemata.KEYS_ROOT_PLAIN

_COMBINATORS_ROOT = ( 'allOf', 'anyOf', 'oneOf' )
_KEYS_BRANCH_LOOSE = frozenset( ( 'required', 'description', 'title' ) )
_TYPES_NAME: frozenset[ type ] = frozenset( ( str, ) )
_KEYS_ROOT_DROPPED = (
    '$schema', '$id', 'not', 'enum', 'const', 'if', 'then', 'else' )


def normalize_root( schema: _core.Node ) -> _core.Node:
    ''' Makes root a plain object schema: resolves combinators and $ref.

        Branches of a top-level ``anyOf`` or ``oneOf`` which accept only
        null are dropped: tool arguments are always an object (so the root
        of ``Optional[ Model ]`` is ``Model``).
    '''
    # The common root, told at once: an object, its properties.
    if is_root_plain( schema ): return schema
    _core.verify_references( schema )
    root = _resolve_root_reference( schema )
    for key in _COMBINATORS_ROOT:
        if key not in root: continue
        branches = root.pop( key )
        if not isinstance( branches, list ) or not branches:
            raise _core.Refusal(
                f"top-level {key!r} must be a non-empty list" )
        branches_ = __.typx.cast( list[ object ], branches )
        if key != 'allOf':
            branches_ = [
                branch for branch in branches_
                if not _core.is_null_schema( branch ) ]
            if not branches_:
                raise _core.Refusal(
                    "the top level must be of type 'object'" )
        root = _merge_branches( root, branches_, key )
    for key in _KEYS_ROOT_DROPPED: root.pop( key, None )
    genus = root.get( 'type', 'object' )
    if not _core.is_type_names( genus ) or 'object' not in (
        [ genus ] if isinstance( genus, str ) else genus
    ): raise _core.Refusal( "the top level must be of type 'object'" )
    root[ 'type' ] = 'object'
    properties = root.setdefault( 'properties', { } )
    if not isinstance( properties, dict ):
        raise _core.Refusal(
            "'properties' must be an object", '/properties' )
    if 'required' in root and not _core.is_names( root[ 'required' ] ):
        raise _core.Refusal(
            "'required' must be a list of names", '/required' )
    return root


def is_root_plain( schema: __.cabc.Mapping[ str, __.typx.Any ] ) -> bool:
    ''' Returns whether root is already a plain object schema: an object
        with properties, nothing to resolve and nothing to drop.
    '''
    if not (
        schema.keys( ) <= KEYS_ROOT_PLAIN
        and schema.get( 'type' ) == 'object'
        and type( schema.get( 'properties' ) ) is dict
    ): return False
    if 'required' not in schema: return True
    required = schema[ 'required' ]
    # A list of text, told in C; is_names decides anything else.
    if required.__class__ is list and _TYPES_NAME.issuperset(
        map( type, required )
    ): return True
    return _core.is_names( required )


def survey_alternatives( schema: _core.Node ) -> list[ frozenset[ str ] ]:
    ''' Returns required names of each object alternative at the root.

        Empty unless the root (or the definition it refers to) has a
        top-level ``anyOf`` or ``oneOf``; null alternatives are skipped.
        Reads the schema without changing it.
    '''
    definitions = _core.access_definitions( schema )
    root = schema
    reference = schema.get( '$ref' )
    if isinstance( reference, str ) and isinstance(
        definitions.get( reference ), dict
    ): root = __.typx.cast( _core.Node, definitions[ reference ] )
    alternatives: list[ frozenset[ str ] ] = [ ]
    for key in ( 'anyOf', 'oneOf' ):
        branches = root.get( key )
        if not isinstance( branches, list ): continue
        for branch in __.typx.cast( list[ object ], branches ):
            if _core.is_null_schema( branch ): continue
            alternatives.append( _survey_required( branch, definitions ) )
    return alternatives


def _merge_branches(
    root: _core.Node, branches: list[ object ], key: str
) -> _core.Node:
    ''' Hoists top-level combinator into one object schema.

        ``allOf`` branches are merged (conflicts refused); ``anyOf`` and
        ``oneOf`` branches give the union of their properties, requiring only
        what every branch requires.
    '''
    definitions = _core.access_definitions( root )
    objects: list[ _core.Node ] = [ ]
    for index, branch in enumerate( branches ):
        path = f"/{key}/{index}"
        node = _resolve_branch( branch, definitions, path )
        if not _core.is_object_schema( node ) and (
            set( node ) - _KEYS_BRANCH_LOOSE
        ): raise _core.Refusal(
            f"top-level {key!r} has an alternative which is not an "
            "object", path )
        objects.append( node )
    if key == 'allOf':
        merged: _core.Node = { }
        for index, node in enumerate( objects ):
            merged = _core.merge_nodes( merged, node, f"/{key}/{index}" )
    else: merged = _unite_branches( objects, key )
    merged.pop( 'type', None )
    return _core.merge_nodes( root, merged, '' )


def _resolve_branch(
    branch: object,
    definitions: __.cabc.Mapping[ str, __.typx.Any ],
    path: str,
) -> _core.Node:
    if not isinstance( branch, dict ):
        raise _core.Refusal( "alternatives must be schema objects", path )
    node = dict( __.typx.cast( _core.Node, branch ) )
    if '$ref' not in node: return node
    reference = node.pop( '$ref' )
    target = definitions.get( reference ) if isinstance(
        reference, str ) else None
    if not isinstance( target, dict ):
        raise _core.Refusal( f"unresolvable reference {reference!r}", path )
    return _core.merge_nodes(
        dict( __.typx.cast( _core.Node, target ) ), node, path )


def _resolve_root_reference( schema: _core.Node ) -> _core.Node:
    if '$ref' not in schema: return schema
    reference = schema[ '$ref' ]
    definitions = _core.access_definitions( schema )
    target = definitions.get( reference ) if isinstance(
        reference, str ) else None
    if not isinstance( target, dict ):
        raise _core.Refusal(
            f"unresolvable top-level reference {reference!r}" )
    schema.pop( '$ref' )
    target_ = dict( __.typx.cast( _core.Node, target ) )
    if '$ref' in target_:
        raise _core.Refusal( "top-level reference to another reference" )
    return _core.merge_nodes( schema, target_, '' )


def _survey_required(
    branch: object, definitions: __.cabc.Mapping[ str, __.typx.Any ]
) -> frozenset[ str ]:
    if not isinstance( branch, dict ): return frozenset( )
    node = __.typx.cast( _core.Node, branch )
    reference = node.get( '$ref' )
    target = (
        definitions.get( reference ) if isinstance( reference, str )
        else None )
    required = node.get( 'required', (
        __.typx.cast( _core.Node, target ).get( 'required' )
        if isinstance( target, dict ) else None ) )
    if not _core.is_names( required ): return frozenset( )
    return frozenset( __.typx.cast( list[ str ], required ) )


def _unite_branches( objects: list[ _core.Node ], key: str ) -> _core.Node:
    ''' Returns union of properties; requires what every branch requires.

        A property defined differently by several branches becomes the
        ``anyOf`` of its distinct definitions.
    '''
    variants: dict[ str, dict[ str, __.typx.Any ] ] = { }
    requireds: list[ list[ str ] ] = [ ]
    for index, node in enumerate( objects ):
        path = f"/{key}/{index}"
        properties = _core.access_properties( node, path )
        for name, value in properties.items( ):
            known = variants.setdefault( name, { } )
            for item in _flatten_alternatives( value ):
                known.setdefault(
                    __.json.dumps( item, sort_keys = True ), item )
        required = node.get( 'required', [ ] )
        if not _core.is_names( required ):
            raise _core.Refusal( "'required' must be a list of names", path )
        requireds.append( __.typx.cast( list[ str ], required ) )
    merged: _core.Node = { 'properties': {
        name: _produce_alternatives( list( known.values( ) ) )
        for name, known in variants.items( ) } }
    common = set( requireds[ 0 ] )
    for required in requireds[ 1 : ]: common &= set( required )
    order = [ name for name in variants if name in common ]
    order.extend( dict.fromkeys(
        name for name in requireds[ 0 ]
        if name in common and name not in variants ) )
    if order: merged[ 'required' ] = order
    return merged


def _flatten_alternatives( value: object ) -> list[ __.typx.Any ]:
    if isinstance( value, dict ):
        node = __.typx.cast( _core.Node, value )
        branches = node.get( 'anyOf' )
        if list( node ) == [ 'anyOf' ] and isinstance( branches, list ) and (
            branches
        ): return list( __.typx.cast( list[ __.typx.Any ], branches ) )
    return [ value ]


def _produce_alternatives( alternatives: list[ __.typx.Any ] ) -> __.typx.Any:
    if len( alternatives ) == 1: return alternatives[ 0 ]
    return { 'anyOf': alternatives }
