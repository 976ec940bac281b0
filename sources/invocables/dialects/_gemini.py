# SPDX-License-Identifier: Apache-2.0

''' Gemini: the OpenAPI 3 subset of ``FunctionDeclaration.parameters``. '''


import invocables.dialects.__ as __
import invocables.dialects._core as _core
import invocables.dialects._roots as _roots


# The adapter drops these keys of the root (the last unless it refuses).
KEYS_ROOT_DROPPED = ( '$schema', 'additionalProperties' )

_FORMATS = __.types.MappingProxyType( {
    'string': frozenset( ( 'enum', 'date-time' ) ),
    'integer': frozenset( ( 'int32', 'int64' ) ),
    'number': frozenset( ( 'float', 'double' ) ),
} )
_KEYS = frozenset( (
    'anyOf', 'default', 'description', 'enum', 'example', 'format', 'items',
    'maxItems', 'maxLength', 'maxProperties', 'maximum', 'minItems',
    'minLength', 'minProperties', 'minimum', 'nullable', 'pattern',
    'properties', 'propertyOrdering', 'required', 'title', 'type',
) )
_TYPES = frozenset( (
    'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' ) )
# What a node may hold to be taken as it is (alternatives and orderings
# are rewritten or checked by the adapter).
_KEYS_READY = _KEYS - { 'anyOf', 'propertyOrdering' }
_KEYS_READY_ROOT = frozenset( (
    *KEYS_ROOT_DROPPED,
    'description', 'properties', 'required', 'title', 'type' ) )
_KEYS_CHILDREN = frozenset( ( 'properties', 'required', 'items' ) )
_FORMATS_NONE: frozenset[ str ] = frozenset( )
_TYPES_NAME: frozenset[ type ] = frozenset( ( str, ) )
_KINDS_READY = __.types.MappingProxyType( {
    key: kind for key, kind in _core.KINDS_KEYWORD.items( )
    if key in _KEYS_READY } )
_KEYS_TEXT = frozenset( (
    key for key, kind in _KINDS_READY.items( ) if kind == 'text' ) )


def adapt_gemini( schema: _core.Node ) -> _core.Node:
    ''' Gemini: OpenAPI 3 subset, no references, no open objects. '''
    root = _roots.normalize_root( schema )
    extra = root.get( 'additionalProperties', False )
    if extra is not False and not root[ 'properties' ]:
        raise _core.Refusal(
            "open-ended objects (free-form dictionaries) cannot be "
            "expressed" )
    definitions = _core.access_definitions( root )
    adapted = _GeminiAdapter( definitions ).adapt( root, '', ( ) )
    adapted[ 'type' ] = 'object'
    adapted.setdefault( 'properties', { } )
    return adapted


def is_ready( schema: __.cabc.Mapping[ str, __.typx.Any ] ) -> bool:
    ''' Returns whether plain schema is already in Gemini's subset, so
        that the adapter would return an equal schema once the keys of
        :py:data:`KEYS_ROOT_DROPPED` are dropped from the root: a root
        object with typed, well-formed properties, without references or
        alternatives. Reads without copying; a false answer only means
        that the adapter decides. The schema must be plain (see
        :py:func:`invocables.schemata.is_plain`): of JSON's own classes,
        and not deeply nested.
    '''
    if not schema.keys( ) <= _KEYS_READY_ROOT: return False
    if schema.get( 'type' ) != 'object': return False
    if not _is_annotation_ready( schema ): return False
    properties = schema.get( 'properties' )
    if properties.__class__ is not dict: return False
    if not properties and schema.get( 'additionalProperties', False ) is not (
        False
    ): return False
    counter = [ 1 ]
    return _is_object_ready( schema, properties, counter )


class _GeminiAdapter:
    ''' Rewrites a JSON Schema into Gemini's OpenAPI 3 subset. '''

    def __init__( self, definitions: __.cabc.Mapping[ str, __.typx.Any ] ):
        self.definitions = definitions
        self.budget = _core.Budget( )

    def adapt(
        self, schema: object, path: str, stack: tuple[ str, ... ]
    ) -> _core.Node:
        ''' Returns Gemini rendering of one (sub)schema. '''
        if not isinstance( schema, dict ):
            raise _core.Refusal(
                "boolean schemas cannot be expressed (use a typed schema)",
                path )
        self.budget.spend( path )
        node = dict( __.typx.cast( _core.Node, schema ) )
        node, stack = self._inline( node, path, stack )
        node = _core.fold_all_of( node, path )
        _core.remove_malformed( node )
        if 'oneOf' in node:
            node[ 'anyOf' ] = node.pop( 'oneOf' )
        if 'const' in node: node[ 'enum' ] = [ node.pop( 'const' ) ]
        self._adapt_type_list( node )
        if 'anyOf' in node:
            return self._adapt_alternatives( node, path, stack )
        self._adapt_enum( node )
        self._infer_type( node, path )
        return self._adapt_typed( node, path, stack )

    def _adapt_alternatives(
        self, node: _core.Node, path: str, stack: tuple[ str, ... ]
    ) -> _core.Node:
        branches = node.pop( 'anyOf' )
        if not isinstance( branches, list ) or not branches:
            raise _core.Refusal( "'anyOf' must be a non-empty list", path )
        kept: list[ _core.Node ] = [ ]
        branches_ = __.typx.cast( list[ object ], branches )
        for index, branch in enumerate( branches_ ):
            adapted = self.adapt( branch, f"{path}/anyOf/{index}", stack )
            if adapted.get( 'type' ) == 'null' and len( adapted ) == 1:
                node[ 'nullable' ] = True
            else: kept.append( adapted )
        outer = _core.select_keys(
            node, ( 'description', 'title', 'nullable' ) )
        if not kept:
            return {
                **_core.select_keys( outer, ( 'description', 'title' ) ),
                'type': 'null' }
        if len( kept ) == 1:
            return { **kept[ 0 ], **outer }
        return { **outer, 'anyOf': kept }

    def _adapt_enum( self, node: _core.Node ) -> None:
        if 'enum' not in node: return
        values = node[ 'enum' ]
        if not isinstance( values, list ):
            del node[ 'enum' ]
            return
        values_ = __.typx.cast( list[ object ], values )
        if None in values_:
            node[ 'nullable' ] = True
            values_ = [ value for value in values_ if value is not None ]
        if values_ and all( isinstance( value, str ) for value in values_ ):
            node[ 'enum' ] = values_
            if node.get( 'type', 'string' ) != 'string': del node[ 'enum' ]
            else: node[ 'type' ] = 'string'
        else:
            # Gemini takes enums of strings only; others are validated later.
            del node[ 'enum' ]
            if 'type' not in node and values_:
                node[ 'type' ] = _infer_values_type( values_ )

    def _adapt_object(
        self, node: _core.Node, path: str, stack: tuple[ str, ... ]
    ) -> _core.Node:
        properties_ = _core.access_properties( node, path )
        if not properties_ and path:
            raise _core.Refusal(
                "objects without declared properties (open-ended or empty "
                "objects) cannot be expressed", path )
        node[ 'properties' ] = {
            key: self.adapt( value, f"{path}/properties/{key}", stack )
            for key, value in properties_.items( ) }
        required = node.get( 'required' )
        if isinstance( required, list ):
            names = [
                name for name in __.typx.cast( list[ object ], required )
                if isinstance( name, str ) and name in properties_ ]
            if names: node[ 'required' ] = list( dict.fromkeys( names ) )
            else: del node[ 'required' ]
        elif 'required' in node: del node[ 'required' ]
        ordering = node.get( 'propertyOrdering' )
        if ordering is not None and set( ordering ) != set( properties_ ):
            del node[ 'propertyOrdering' ]
        return node

    def _adapt_type_list( self, node: _core.Node ) -> None:
        genus = node.get( 'type' )
        if not isinstance( genus, list ): return
        names = [
            name for name in __.typx.cast( list[ object ], genus )
            if name != 'null' ]
        if len( names ) < len( __.typx.cast( list[ object ], genus ) ):
            node[ 'nullable' ] = True
        if len( names ) == 1: node[ 'type' ] = names[ 0 ]
        elif not names: node[ 'type' ] = 'null'
        else:
            del node[ 'type' ]
            node[ 'anyOf' ] = [ { 'type': name } for name in names ]

    def _adapt_typed(
        self, node: _core.Node, path: str, stack: tuple[ str, ... ]
    ) -> _core.Node:
        genus = node[ 'type' ]
        if not _core.is_member( genus, _TYPES ):
            raise _core.Refusal( f"unknown type {genus!r}", path )
        _convert_exclusive_bounds( node, genus )
        formats = _FORMATS.get( genus, frozenset( ) )
        if not _core.is_member( node.get( 'format' ), formats ):
            node.pop( 'format', None )
        examples = node.get( 'examples' )
        if isinstance( examples, list ) and examples and 'example' not in node:
            node[ 'example' ] = __.typx.cast( list[ object ], examples )[ 0 ]
        if genus == 'object': node = self._adapt_object( node, path, stack )
        elif genus == 'array':
            items = node.get( 'items' )
            if not isinstance( items, dict ):
                raise _core.Refusal(
                    "arrays need one schema object in 'items' (tuples and "
                    "untyped arrays cannot be expressed)", path )
            node[ 'items' ] = self.adapt(
                __.typx.cast( object, items ), f"{path}/items", stack )
        else:
            for key in ( 'properties', 'required', 'items' ):
                node.pop( key, None )
        if 'nullable' in node and node[ 'nullable' ] is not True:
            del node[ 'nullable' ]
        return _core.select_keys( node, _KEYS )

    def _infer_type( self, node: _core.Node, path: str ) -> None:
        if 'type' in node: return
        if 'properties' in node or 'additionalProperties' in node:
            node[ 'type' ] = 'object'
        elif 'items' in node or 'prefixItems' in node:
            node[ 'type' ] = 'array'
        elif 'enum' in node: node[ 'type' ] = 'string'
        else:
            raise _core.Refusal(
                "schemas without a type (any value) cannot be expressed",
                path )

    def _inline(
        self, node: _core.Node, path: str, stack: tuple[ str, ... ]
    ) -> tuple[ _core.Node, tuple[ str, ... ] ]:
        for key in ( '$defs', 'definitions' ): node.pop( key, None )
        while '$ref' in node:
            reference = node.pop( '$ref' )
            if not isinstance( reference, str ) or (
                reference not in self.definitions
            ): raise _core.Refusal(
                f"unresolvable or non-local reference {reference!r}", path )
            if reference in stack:
                raise _core.Refusal(
                    f"recursive reference {reference!r} cannot be "
                    "expressed", path )
            stack = ( *stack, reference )
            target = self.definitions[ reference ]
            if not isinstance( target, dict ):
                raise _core.Refusal(
                    f"reference {reference!r} is not a schema object", path )
            merged = dict( __.typx.cast( _core.Node, target ) )
            for key in ( '$defs', 'definitions' ): merged.pop( key, None )
            for key, value in node.items( ):
                if key in ( 'description', 'title', 'default' ) or (
                    key not in merged
                ): merged[ key ] = value
            node = merged
        return node, stack


def _convert_exclusive_bounds( node: _core.Node, genus: str ) -> None:
    ''' Rewrites exclusive bounds as inclusive ones (exact for integers). '''
    for key, inclusive, step in (
        ( 'exclusiveMinimum', 'minimum', 1 ),
        ( 'exclusiveMaximum', 'maximum', -1 ),
    ):
        bound = node.pop( key, None )
        if isinstance( bound, bool ) or not isinstance(
            bound, ( int, float )
        ): continue
        if 'integer' == genus:
            if isinstance( bound, int ): bound += step
            elif bound.is_integer( ): bound = int( bound ) + step
        if inclusive not in node and _core.is_kind( bound, 'number' ):
            node[ inclusive ] = bound


def _infer_values_type( values: list[ object ] ) -> str:
    if all( isinstance( value, bool ) for value in values ): return 'boolean'
    if all( isinstance( value, int ) and not isinstance( value, bool )
            for value in values ): return 'integer'
    if all( isinstance( value, ( int, float ) ) and not isinstance(
        value, bool ) for value in values ): return 'number'
    raise _core.Refusal( "enumerations of mixed or structured values" )


def _is_annotation_ready(
    node: __.cabc.Mapping[ str, __.typx.Any ]
) -> bool:
    ''' Returns whether keywords checked for form are well formed. '''
    for key in node.keys( ) & _KINDS_READY.keys( ): # mostly, a description
        value = node[ key ]
        if key in _KEYS_TEXT:
            if value.__class__ is not str: return False
        elif not _core.is_kind( value, _KINDS_READY[ key ] ): return False
    return True


def _is_names( value: __.typx.Any ) -> bool:
    ''' Returns whether plain value is a list of text, told in C. '''
    return value.__class__ is list and _TYPES_NAME.issuperset(
        map( type, value ) )


def _is_node_ready( node: __.typx.Any, counter: list[ int ] ) -> bool:
    # Typed Any: a plain value, read without casts (each a call).
    if node.__class__ is not dict: return False
    counter[ 0 ] += 1
    genus = node.get( 'type' )
    if not (
        counter[ 0 ] <= _core.NODES_MAXIMUM
        and node.keys( ) <= _KEYS_READY
        and genus.__class__ is str and genus in _TYPES
        and node.get( 'nullable', True ) is True
        and _is_annotation_ready( node )
    ): return False
    if 'format' in node and not _core.is_member(
        node[ 'format' ], _FORMATS.get( genus, _FORMATS_NONE )
    ): return False
    if 'enum' in node and not (
        genus == 'string' and _is_names( node[ 'enum' ] )
    ): return False
    return _is_typed_ready( node, genus, counter )


def _is_object_ready(
    node: __.cabc.Mapping[ str, __.typx.Any ],
    properties: __.typx.Any,
    counter: list[ int ],
) -> bool:
    if 'required' in node:
        required = node[ 'required' ]
        if not _is_names( required ) or not required: return False
        if len( set( required ) ) != len( required ): return False
        if not properties.keys( ) >= set( required ): return False
    return all(
        _is_node_ready( value, counter ) for value in properties.values( ) )


def _is_typed_ready(
    node: __.typx.Any, genus: str, counter: list[ int ]
) -> bool:
    if genus == 'object':
        properties = node.get( 'properties' )
        return properties.__class__ is dict and bool( properties ) and (
            _is_object_ready( node, properties, counter ) )
    if genus == 'array':
        if 'properties' in node or 'required' in node: return False
        return _is_node_ready( node.get( 'items' ), counter )
    return node.keys( ).isdisjoint( _KEYS_CHILDREN )
