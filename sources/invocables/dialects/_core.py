# SPDX-License-Identifier: Apache-2.0

''' Shared parts of the dialects: refusals, safe copies, schema helpers.

    Schemas come from anywhere (MCP servers, descriptors, applications), so
    nothing here trusts their shape: every helper checks the JSON type of
    what it reads, and a schema which cannot be read raises
    :py:class:`Refusal`, which the public functions turn into the
    library's own exceptions.
'''


from math import isfinite as _isfinite

import invocables.dialects.__ as __


Node: __.typx.TypeAlias = dict[ str, __.typx.Any ]

DEPTH_MAXIMUM = 100
NODES_MAXIMUM = 20_000

# Well within the careful bound; shared with the check of validation.
_DEPTH_PLAIN_MAXIMUM = __.schemata.PLAIN_DEPTH_MAXIMUM
_TYPES_NAME: frozenset[ type ] = frozenset( ( str, ) )

_KEYS_ANNOTATION = frozenset( ( 'description', 'title' ) )
KINDS_KEYWORD = __.types.MappingProxyType( {
    'description': 'text', 'title': 'text', 'pattern': 'text',
    'minLength': 'count', 'maxLength': 'count', 'minItems': 'count',
    'maxItems': 'count', 'minProperties': 'count', 'maxProperties': 'count',
    'minimum': 'number', 'maximum': 'number', 'exclusiveMinimum': 'number',
    'exclusiveMaximum': 'number', 'multipleOf': 'positive',
    'propertyOrdering': 'names',
} )
_CONTAINERS = ( __.cabc.Mapping, list, tuple )
# Bounds which providers read as 64-bit integers (counts) or as doubles
# (numbers); a larger one is refused with the whole request.
_COUNT_MAXIMUM = 2 ** 63 - 1
_NUMBER_MAXIMUM = __.sys.float_info.max
_PATH_LENGTH_MAXIMUM = 120
# Keywords which apply their schemas to the same value (not to its parts).
_KEYS_INPLACE_SCHEMA = ( 'not', 'if', 'then', 'else' )
_KEYS_INPLACE_SCHEMAS = ( 'allOf', 'anyOf', 'oneOf' )


class Refusal( Exception ):
    ''' Internal signal: schema breaks a rule of the dialect. '''

    def __init__( self, rule: str, path: str = '' ):
        self.rule = rule
        self.path = path
        super( ).__init__( rule )

    def describe( self ) -> str:
        ''' Returns rule with the location where it is broken. '''
        where = self.path or '/'
        if len( where ) > _PATH_LENGTH_MAXIMUM:
            where = '...' + where[ - _PATH_LENGTH_MAXIMUM : ]
        return f"{self.rule} (at {where!r})."


class Budget:
    ''' Counts schema nodes produced, to refuse explosive schemas.

        References inlined at every use can make a small schema grow
        exponentially; the count stops that early.
    '''

    __slots__ = ( 'count', )

    def __init__( self ) -> None:
        self.count = 0

    def spend( self, path: str ) -> None:
        ''' Counts one node; refuses past the maximum. '''
        self.count += 1
        if self.count > NODES_MAXIMUM:
            raise Refusal(
                "the schema grows beyond {count} nodes when its references "
                "are expanded".format( count = NODES_MAXIMUM ), path )


def access_definitions( root: Node ) -> dict[ str, __.typx.Any ]:
    ''' Returns local definitions of root by reference text. '''
    definitions: dict[ str, __.typx.Any ] = { }
    for key in ( 'definitions', '$defs' ):
        value = root.get( key )
        if isinstance( value, dict ):
            for entry, schema in __.typx.cast( Node, value ).items( ):
                definitions[ f"#/{key}/{entry}" ] = schema
    return definitions


def access_properties( node: Node, path: str ) -> Node:
    ''' Returns 'properties' of object node, empty if none; refuses a
        value which is not an object. '''
    properties = node.get( 'properties', { } )
    if not isinstance( properties, dict ):
        raise Refusal( "'properties' must be an object", path )
    return __.typx.cast( Node, properties )


def copy_schema( schema: object ) -> Node:
    ''' Returns deep, plain copy of schema; refuses what is not JSON.

        Keys must be strings, numbers finite, values JSON values (mappings,
        sequences, text, numbers, booleans, null), and nesting at most
        :py:data:`DEPTH_MAXIMUM` levels deep (which also ends cycles).
    '''
    if type( schema ) is not dict and not isinstance(
        schema, __.cabc.Mapping
    ): raise Refusal( "the schema must be a JSON object" )
    # Most schemas are plain JSON: copied without paths for messages. At
    # the first doubt, the careful copy below decides, and says where.
    try: return __.values.copy_plain( schema, _DEPTH_PLAIN_MAXIMUM )
    except __.values.Flaw: pass
    return _copy_mapping(
        __.typx.cast( __.cabc.Mapping[ __.typx.Any, object ], schema ),
        '', 0 )


def fold_all_of( node: Node, path: str ) -> Node:
    ''' Merges a one-branch ``allOf`` into its node; refuses longer ones. '''
    if 'allOf' not in node: return node
    branches = node.pop( 'allOf' )
    if not isinstance( branches, list ):
        raise Refusal( "'allOf' must be a list", path )
    branches_ = __.typx.cast( list[ object ], branches )
    if len( branches_ ) != 1 or not isinstance( branches_[ 0 ], dict ):
        raise Refusal(
            "'allOf' with several schemas cannot be expressed", path )
    return merge_nodes(
        node, dict( __.typx.cast( Node, branches_[ 0 ] ) ),
        f"{path}/allOf/0" )


def has_type( node: Node, name: str ) -> bool:
    ''' Returns whether node's type is name or a list holding it. '''
    genus = node.get( 'type' )
    if isinstance( genus, list ):
        return name in __.typx.cast( list[ object ], genus )
    return genus == name


# Plain JSON, as validation tells it (which notes the schemas it found so).
is_plain = __.values.is_plain


def is_kind( value: object, kind: str ) -> bool:
    ''' Returns whether value is of the kind of a keyword (see
        :py:data:`KINDS_KEYWORD`): 'text', 'count', 'number', 'positive'
        or 'names'. Counts fit 64 bits and numbers a double, as providers
        read them.
    '''
    if isinstance( value, bool ): return False
    match kind:
        case 'text': return isinstance( value, str )
        case 'count':
            return isinstance( value, int ) and 0 <= value <= _COUNT_MAXIMUM
        case 'number':
            return isinstance( value, ( int, float ) ) and (
                -_NUMBER_MAXIMUM <= value <= _NUMBER_MAXIMUM )
        case 'positive':
            return isinstance( value, ( int, float ) ) and (
                0 < value <= _NUMBER_MAXIMUM )
        case _: return is_names( value )


def is_member( value: object, members: frozenset[ str ] ) -> bool:
    ''' Returns whether value is text among members. '''
    return isinstance( value, str ) and value in members


def is_names( value: object ) -> bool:
    ''' Returns whether value is a list of strings. '''
    if not isinstance( value, list ): return False
    items = __.typx.cast( list[ object ], value )
    # Types in C first: no Python step per item in the common case.
    if not items or _TYPES_NAME.issuperset( map( type, items ) ):
        return True
    return all( isinstance( item, str ) for item in items )


def is_null_schema( value: object ) -> bool:
    ''' Returns whether value is a schema which accepts only null. '''
    if not isinstance( value, dict ): return False
    node = __.typx.cast( Node, value )
    keys = set( node ) - _KEYS_ANNOTATION
    if keys == { 'type' }: return node[ 'type' ] in ( 'null', [ 'null' ] )
    if keys == { 'const' }: return node[ 'const' ] is None
    if keys == { 'enum' }: return node[ 'enum' ] == [ None ]
    return False


def is_object_schema( node: Node ) -> bool:
    ''' Returns whether node describes objects (by type or keywords). '''
    genus = node.get( 'type' )
    if genus == 'object': return True
    if isinstance( genus, list ):
        return 'object' in __.typx.cast( list[ object ], genus )
    return genus is None and (
        'properties' in node or 'additionalProperties' in node )


def is_type_names( value: object ) -> bool:
    ''' Returns whether value is a type name or a list of them. '''
    return isinstance( value, str ) or is_names( value )


def merge_nodes( target: Node, source: Node, path: str ) -> Node:
    ''' Merges keys of source into target; refuses conflicting keys. '''
    for key, value in source.items( ):
        if key == 'required' and 'required' in target:
            target[ key ] = unite_required( target[ key ], value, path )
        elif key == 'properties' and 'properties' in target:
            target[ key ] = merge_properties( target[ key ], value, path )
        elif key in target and target[ key ] != value:
            if key in _KEYS_ANNOTATION: continue
            raise Refusal(
                f"conflicting values of {key!r} in merged schemas", path )
        else: target[ key ] = value
    return target


def merge_properties( target: object, source: object, path: str ) -> Node:
    ''' Merges two 'properties' objects; refuses differing definitions. '''
    if not isinstance( target, dict ) or not isinstance( source, dict ):
        raise Refusal( "'properties' must be an object", path )
    merged = dict( __.typx.cast( Node, target ) )
    for key, value in __.typx.cast( Node, source ).items( ):
        if key in merged and merged[ key ] != value:
            raise Refusal(
                f"conflicting definitions of property {key!r}", path )
        merged[ key ] = value
    return merged


def remove_malformed( node: Node ) -> None:
    ''' Removes keywords whose values have the wrong JSON type, or numbers
        beyond what providers read (a bound of ``10 ** 400``).

        Providers refuse a whole request for one such value (a numeric
        ``description``, a negative ``minLength``); each of these keywords
        only describes or restricts values, so dropping it is safe.
    '''
    for key in [ key for key in node if key in KINDS_KEYWORD ]:
        if not is_kind( node[ key ], KINDS_KEYWORD[ key ] ): del node[ key ]


def select_keys( node: Node, keys: __.cabc.Iterable[ str ] ) -> Node:
    ''' Returns copy of node with only the given keys. '''
    keys_ = frozenset( keys )
    return { key: value for key, value in node.items( ) if key in keys_ }


def unite_required(
    first: object, second: object, path: str = ''
) -> list[ str ]:
    ''' Returns names of both lists, in order, without repeats. '''
    if not is_names( first ) or not is_names( second ):
        raise Refusal( "'required' must be a list of names", path )
    return list( dict.fromkeys( [
        *__.typx.cast( list[ str ], first ),
        *__.typx.cast( list[ str ], second ) ] ) )


def verify_references( root: Node ) -> None:
    ''' Refuses local references which lead back to themselves in place.

        A definition which is, through ``$ref`` and in-place combinators
        only, its own schema never reaches a value: validators recurse
        forever on it, and providers refuse it.
    '''
    definitions = access_definitions( root )
    states: dict[ str, int ] = { }
    for reference in definitions:
        _walk_references( reference, definitions, states )


def _is_container( value: object ) -> bool:
    genus = type( value )
    if genus is dict or genus is list: return True
    if genus is str or genus is int or genus is bool: return False
    return isinstance( value, _CONTAINERS )


def _copy_json( value: object, path: str, depth: int ) -> __.typx.Any:
    genus = type( value )
    if genus is str or genus is bool or genus is int or value is None:
        return value
    if genus is dict or (
        genus is not list and isinstance( value, __.cabc.Mapping )
    ):
        return _copy_mapping(
            __.typx.cast( __.cabc.Mapping[ __.typx.Any, object ], value ),
            path, depth + 1 )
    if isinstance( value, ( list, tuple ) ):
        if depth >= DEPTH_MAXIMUM: _refuse_depth( path )
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return [
            _copy_json( item, f"{path}/{index}", depth + 1 )
            if _is_container( item )
            else _copy_json( item, path, depth + 1 )
            for index, item in enumerate( items ) ]
    return _copy_scalar( value, path )


def _copy_mapping(
    value: __.cabc.Mapping[ __.typx.Any, object ], path: str, depth: int
) -> Node:
    if depth > DEPTH_MAXIMUM: _refuse_depth( path )
    copied: Node = { }
    for key, item in value.items( ):
        if not isinstance( key, str ):
            raise Refusal(
                "keys of objects must be strings, not {genus}".format(
                    genus = type( key ).__name__ ), path )
        copied[ key ] = _copy_json(
            item,
            f"{path}/{key}" if _is_container( item ) else path,
            depth )
    return copied


def _copy_scalar( value: object, path: str ) -> __.typx.Any:
    if isinstance( value, ( str, bool ) ): return value
    if isinstance( value, int ): return int( value )
    if isinstance( value, float ):
        if not _isfinite( value ):
            raise Refusal( "numbers must be finite", path )
        return float( value )
    raise Refusal(
        "values must be JSON values, not {genus}".format(
            genus = type( value ).__name__ ), path )


def _refuse_depth( path: str ) -> __.typx.NoReturn:
    raise Refusal(
        "the schema is nested more than {count} levels deep".format(
            count = DEPTH_MAXIMUM ), path )


def _survey_inplace_references( node: object ) -> list[ str ]:
    ''' Returns references which apply to the same value as node. '''
    if not isinstance( node, dict ): return [ ]
    node_ = __.typx.cast( Node, node )
    found: list[ str ] = [ ]
    reference = node_.get( '$ref' )
    if isinstance( reference, str ): found.append( reference )
    for key in _KEYS_INPLACE_SCHEMA:
        found.extend( _survey_inplace_references( node_.get( key ) ) )
    for key in _KEYS_INPLACE_SCHEMAS:
        branches = node_.get( key )
        if not isinstance( branches, list ): continue
        for branch in __.typx.cast( list[ object ], branches ):
            found.extend( _survey_inplace_references( branch ) )
    return found


def _walk_references(
    reference: str,
    definitions: __.cabc.Mapping[ str, __.typx.Any ],
    states: dict[ str, int ],
) -> None:
    ''' Depth-first walk; state 1 is "on the path", 2 is "done". '''
    state = states.get( reference )
    if state == 2 or reference not in definitions: return # noqa: PLR2004
    if state == 1:
        raise Refusal(
            f"reference {reference!r} refers back to itself without "
            "describing any value", reference[ 1 : ] )
    states[ reference ] = 1
    for target in _survey_inplace_references( definitions[ reference ] ):
        _walk_references( target, definitions, states )
    states[ reference ] = 2
