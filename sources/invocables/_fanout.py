# SPDX-License-Identifier: Apache-2.0

''' The measure of a schema's fan-out: how many subschemas it applies to
    one value in place (see :py:mod:`invocables.schemata`).
'''


import invocables.__ as __


FANOUT_MAXIMUM = 10_000
''' Most subschemas which a schema may apply to one value (see
    :py:func:`access_fanout`). '''

_KEYWORDS_APPLYING = ( 'allOf', 'anyOf', 'oneOf' )
_KEYWORDS_APPLYING_ONE = ( 'else', 'if', 'not', 'then' )
_KEYWORDS_DATA = frozenset( ( 'const', 'default', 'enum', 'examples' ) )
_KEYWORDS_FANNING = frozenset( (
    '$dynamicRef', '$ref', 'allOf', 'anyOf', 'dependentSchemas', 'else',
    'if', 'not', 'oneOf', 'then' ) )
_KEYWORDS_NAMING = frozenset( (
    '$defs', 'definitions', 'dependentSchemas', 'properties' ) )
_KEYWORDS_REFERENCE = ( '$dynamicRef', '$ref' )
_KEYWORDS_REFERENCING = frozenset( _KEYWORDS_REFERENCE )
_TYPES_SCALAR = frozenset( ( bool, float, int, str, type( None ) ) )
_UNRESOLVED = object( ) # a reference which no plain pointer resolves


class _FanoutSurveyor:
    ''' Counts the subschemas which each subschema of one schema applies to
        its value, references followed as jsonschema resolves them (within
        the schema: nothing is retrieved). A plain class: it memoizes.

        Its resolvers are ``None`` until a reference or an ``$id`` needs
        one: most schemas need none.
    '''

    def __init__( self, schema: __.typx.Any ):
        self._counts: dict[ int, int ] = { }
        self._root: __.typx.Any = None
        self._schema = schema

    def survey( self ) -> int:
        ''' Returns the most subschemas applied to one value. '''
        return self._survey( self._schema, None )

    def _access_resolver( self, resolver: __.typx.Any ) -> __.typx.Any:
        if resolver is not None: return resolver
        if self._root is not None: return self._root
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012
        registry: __.typx.Any = __.typx.cast( __.typx.Any, Registry )( )
        self._root = registry.resolver_with_root(
            DRAFT202012.create_resource( self._schema ) )
        return self._root

    def _count( self, node: object, resolver: __.typx.Any ) -> int:
        if not _is_mapping( node ): return 1
        node_ = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], node )
        if _KEYWORDS_FANNING.isdisjoint( node_ ): return 1
        key = id( node_ )
        count = self._counts.get( key )
        if count is not None: return count
        # A cycle counts once: validation recurses out of it, or stops.
        self._counts[ key ] = 1
        resolver = self._enter( node_, resolver )
        count = 1 + sum(
            self._count( child, resolver )
            for child in _survey_applied( node_ ) )
        count += self._count_references( node_, resolver )
        count = min( count, FANOUT_MAXIMUM + 1 )
        self._counts[ key ] = count
        return count

    def _count_references(
        self, node: __.cabc.Mapping[ str, __.typx.Any ], resolver: __.typx.Any
    ) -> int:
        ''' Returns subschemas which the references of node apply. '''
        count = 0
        for keyword in _KEYWORDS_REFERENCE:
            reference = node.get( keyword )
            if not isinstance( reference, str ): continue
            if resolver is None:
                # Pointers into the root (pydantic's), resolved at once.
                local = self._point( reference )
                if local is not _UNRESOLVED:
                    count += self._count( local, None )
                    continue
            resolver_ = self._access_resolver( resolver )
            try: resolved = resolver_.lookup( reference )
            except Exception: continue # noqa: S112 # validation refuses it
            count += self._count( resolved.contents, resolved.resolver )
        return count

    def _enter(
        self, node: __.cabc.Mapping[ str, __.typx.Any ], resolver: __.typx.Any
    ) -> __.typx.Any:
        ''' Returns resolver within node, if node has an ``$id``. '''
        if not isinstance( node.get( '$id' ), str ): return resolver
        from referencing.jsonschema import DRAFT202012
        resolver = self._access_resolver( resolver )
        try: return resolver.in_subresource(
            DRAFT202012.create_resource( node ) )
        except Exception: return resolver

    def _point( self, reference: str ) -> object:
        ''' Returns node of a plain JSON pointer into the root schema
            (``#/$defs/name``), or a marker if reference is another kind.
        '''
        if not reference.startswith( '#/' ) or '%' in reference:
            return _UNRESOLVED
        node: object = self._schema
        for part in reference[ 2 : ].split( '/' ):
            part_ = part.replace( '~1', '/' ).replace( '~0', '~' )
            if isinstance( node, __.cabc.Mapping ) and part_ in node:
                node = __.typx.cast(
                    __.cabc.Mapping[ str, object ], node )[ part_ ]
            else: return _UNRESOLVED
        return node

    def _survey( self, value: object, resolver: __.typx.Any ) -> int:
        ''' Returns the most subschemas applied to one value, wherever a
            subschema may be in value. '''
        most = 0
        if isinstance( value, ( list, tuple ) ):
            for item in __.typx.cast( __.cabc.Sequence[ object ], value ):
                if type( item ) in _TYPES_SCALAR: continue
                most = max( most, self._survey( item, resolver ) )
            return most
        if not _is_mapping( value ): return most
        node = __.typx.cast( __.cabc.Mapping[ str, object ], value )
        most = self._count( node, resolver )
        if '$id' in node: resolver = self._enter( node, resolver )
        for key, item in node.items( ):
            if most > FANOUT_MAXIMUM: break
            if type( item ) in _TYPES_SCALAR or key in _KEYWORDS_DATA:
                continue
            subschemas = item
            if key in _KEYWORDS_NAMING and _is_mapping( item ):
                subschemas = tuple( __.typx.cast(
                    __.cabc.Mapping[ str, object ], item ).values( ) )
            most = max( most, self._survey( subschemas, resolver ) )
        return most


def access_fanout( schema: __.typx.Any ) -> int:
    ''' Returns the most subschemas which schema applies to one value.

        In-place applicators (``allOf``, ``anyOf``, ``oneOf``, ``not``,
        ``if``, ``then``, ``else``, ``dependentSchemas``) and references
        (into ``$defs``, say) apply their subschemas to the value itself;
        counted with multiplicity wherever a subschema may be, these
        measure the work of validating one value, which definitions that
        each apply the next twice make exponential. Counts stop past
        :py:data:`FANOUT_MAXIMUM`. Raises ``RecursionError`` for a schema
        nested too deeply.
    '''
    if _is_surely_narrow( schema ): return 1
    return _FanoutSurveyor( schema ).survey( )


def _survey_applied(
    node: __.cabc.Mapping[ str, __.typx.Any ]
) -> list[ object ]:
    ''' Returns subschemas which node applies in place (not references).
    '''
    children: list[ object ] = [ ]
    for keyword in _KEYWORDS_APPLYING:
        value = node.get( keyword )
        if isinstance( value, ( list, tuple ) ):
            children.extend( __.typx.cast( list[ object ], value ) )
    children.extend(
        node[ keyword ] for keyword in _KEYWORDS_APPLYING_ONE
        if keyword in node )
    dependents = node.get( 'dependentSchemas' )
    if isinstance( dependents, __.cabc.Mapping ):
        children.extend( __.typx.cast(
            __.cabc.Mapping[ str, object ], dependents ).values( ) )
    return children


def _is_mapping( value: object ) -> bool:
    ''' Returns whether value is a mapping (a dict, at once). '''
    return type( value ) is dict or isinstance( value, __.cabc.Mapping )


def _is_surely_narrow( schema: object ) -> bool:
    ''' Returns whether schema surely applies at most
        :py:data:`FANOUT_MAXIMUM` subschemas to any value: it has no
        references and no more nodes than that, so that no subschema
        applies twice. One quick pass, which most schemas need alone.
    '''
    pending: list[ object ] = [ schema ]
    nodes = 0
    while pending:
        value = pending.pop( )
        if type( value ) in _TYPES_SCALAR: continue
        if isinstance( value, ( list, tuple ) ):
            pending.extend( __.typx.cast( __.cabc.Sequence[ object ], value ) )
        elif _is_mapping( value ):
            node = __.typx.cast( __.cabc.Mapping[ str, object ], value )
            nodes += 1
            if nodes > FANOUT_MAXIMUM or not _KEYWORDS_REFERENCING.isdisjoint(
                node
            ): return False
            pending.extend( node.values( ) )
    return True
