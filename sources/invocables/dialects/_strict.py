# SPDX-License-Identifier: Apache-2.0

''' OpenAI strict mode: closed objects, all required, limited keywords.

    Strict mode requires every property, so an optional property is made
    nullable and the model sends ``null`` for it when it leaves it out.
    Adaptation records where it did so (:py:class:`Nullifications`, in a
    :py:class:`Record`), and :py:meth:`Record.strip` removes exactly those
    nulls, in objects at any depth (in arrays, in alternatives, through
    references), before the arguments are validated against the original
    schema.
'''


import invocables.dialects.__ as __
import invocables.dialects._core as _core
import invocables.dialects._roots as _roots


ENUM_TEXT_MAXIMUM = 15_000
ENUM_VALUES_LONG = 250
ENUM_VALUES_MAXIMUM = 1000
NESTING_MAXIMUM = 10
PROPERTIES_MAXIMUM = 5000
TEXT_MAXIMUM = 120_000

_DEFINITIONS = ( '$defs', 'definitions' )
_FORMATS = frozenset( (
    'date', 'date-time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6',
    'time', 'uuid' ) )
_KEYS = frozenset( (
    '$ref', 'additionalProperties', 'anyOf', 'const', 'description',
    'enum', 'exclusiveMaximum', 'exclusiveMinimum', 'format', 'items',
    'maxItems', 'maximum', 'minItems', 'minimum', 'multipleOf', 'pattern',
    'properties', 'required', 'title', 'type',
) )
# Keywords beside a $ref which may differ from its target's: they only
# describe the value.
_KEYS_ANNOTATION = frozenset( (
    '$comment', 'default', 'deprecated', 'description', 'examples',
    'readOnly', 'title', 'writeOnly',
) )
_NULL: _core.Node = { 'type': 'null' }
_RECORDS_MAXIMUM = 256
_STRIP_DEPTH_MAXIMUM = 2 * _core.DEPTH_MAXIMUM
_TYPES = frozenset( (
    'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' ) )
# Keyed by identity of original schemas; entries hold their schemas, so
# identities stay unique while cached.
_records: __.collections.OrderedDict[
    int, tuple[ object, 'Record | None' ] ] = __.collections.OrderedDict( )


class Nullifications:
    ''' Where strict mode made optional properties nullable, below a node.

        ``optionals`` maps each property made nullable to its schema before
        strict mode; ``properties``, ``items``, ``branches`` (adapted
        alternatives, to tell which one a value took) and ``reference`` lead
        to the records of nested nodes. A plain class: it is built while
        adapting and caches validators of alternatives.
    '''

    __slots__ = (
        'branches', 'items', 'optionals', 'properties', 'reference',
        'validators' )

    def __init__( self ) -> None:
        self.optionals: dict[ str, __.typx.Any ] = { }
        self.properties: dict[ str, Nullifications ] = { }
        self.items: Nullifications | None = None
        self.branches: list[ tuple[ _core.Node, Nullifications | None ] ] = [ ]
        self.reference: str | None = None
        self.validators: dict[ int, __.typx.Any ] = { }

    def is_empty( self ) -> bool:
        ''' Returns whether nothing below this node was made nullable. '''
        return not (
            self.optionals or self.properties or self.items is not None
            or self.branches or self.reference is not None )


class Record:
    ''' What strict mode added to one schema; strips the nulls it forced.

        A null is removed where strict mode made an optional property
        nullable and the property's own schema (before strict mode) does not
        accept null; a null which the original schema accepts is kept. A
        plain class: it caches what it learns of the schema.
    '''

    def __init__(
        self,
        root: Nullifications | None,
        definitions: dict[ str, Nullifications | None ],
        originals: _core.Node,
        adapted: _core.Node,
        alternatives: __.cabc.Sequence[ frozenset[ str ] ] = ( ),
        original: _core.Node | None = None,
    ):
        self.root = root
        self.definitions = definitions
        self.originals = originals
        self.adapted = adapted
        self.alternatives = tuple( alternatives )
        self.original = original
        self._nullables: dict[ int, bool ] = { }
        self._validator: __.typx.Any = None

    def strip( self, arguments: __.typx.Any ) -> __.typx.Any:
        ''' Returns arguments without the nulls which strict mode forced.

            For a top-level ``anyOf`` or ``oneOf`` which strict mode merged
            into one object, the alternative the model meant decides: when
            the nulls kept for properties which accept null leave arguments
            which the original schema refuses (two ``oneOf`` alternatives
            match, say), the nulls of every property which that alternative
            does not require are removed too, trying each alternative in
            turn.
        '''
        stripped = self._strip( arguments, self.root, 0 )
        if not self.alternatives or not isinstance( arguments, dict ):
            return stripped
        return self._select_alternative(
            __.typx.cast( dict[ str, object ], arguments ),
            __.typx.cast( dict[ str, object ], stripped ) )

    def _select_alternative(
        self, arguments: dict[ str, object ], stripped: dict[ str, object ]
    ) -> dict[ str, object ]:
        if self._validator is None:
            self._validator = _produce_validator( self.original or { } )
        if self._validator is False: return stripped
        if _probe_validator( self._validator, stripped ): return stripped
        for required in self.alternatives:
            candidate = {
                key: stripped.get( key )
                for key, value in arguments.items( )
                if value is not None or key in required }
            if _probe_validator( self._validator, candidate ):
                return candidate
        return stripped

    def _accepts_null( self, schema: object ) -> bool:
        if not isinstance( schema, dict ): return schema is not False
        schema_ = __.typx.cast( _core.Node, schema )
        key = id( schema_ )
        accepts = self._nullables.get( key )
        if accepts is None:
            accepts = _probe_validity( { **self.originals, **schema_ }, None )
            self._nullables[ key ] = accepts
        return accepts

    def _select_branch(
        self, value: object, plan: Nullifications
    ) -> tuple[ bool, Nullifications | None ]:
        for index, ( branch, child ) in enumerate( plan.branches ):
            validator = plan.validators.get( index )
            if validator is None:
                validator = _produce_validator( { **self.adapted, **branch } )
                plan.validators[ index ] = validator
            if validator is not False and _probe_validator( validator, value ):
                return True, child
        return False, None

    def _strip(
        self, value: object, plan: Nullifications | None, depth: int
    ) -> __.typx.Any:
        if plan is None or depth > _STRIP_DEPTH_MAXIMUM: return value
        if plan.reference is not None:
            return self._strip(
                value, self.definitions.get( plan.reference ), depth + 1 )
        result: object = value
        if isinstance( value, dict ):
            result = self._strip_object(
                __.typx.cast( dict[ str, object ], value ), plan, depth )
        elif isinstance( value, list ) and plan.items is not None:
            items = plan.items
            result = [
                self._strip( item, items, depth + 1 )
                for item in __.typx.cast( list[ object ], value ) ]
        if plan.branches:
            found, child = self._select_branch( result, plan )
            if found: result = self._strip( result, child, depth + 1 )
        return result

    def _strip_object(
        self, value: dict[ str, object ], plan: Nullifications, depth: int
    ) -> dict[ str, object ]:
        stripped: dict[ str, object ] = { }
        for key, item in value.items( ):
            if item is None and key in plan.optionals and not (
                self._accepts_null( plan.optionals[ key ] )
            ): continue
            child = plan.properties.get( key )
            stripped[ key ] = (
                item if child is None
                else self._strip( item, child, depth + 1 ) )
        return stripped


def access_record( schema: __.Schema ) -> Record | None:
    ''' Returns record of strict mode for original schema, if it has one.

        ``None`` when strict mode cannot express the schema (the tool was
        then offered without strict mode, and nothing is to be stripped).
        Records are cached by identity of the schema, which is taken as
        immutable.
    '''
    key = id( schema )
    entry = _records.get( key )
    if entry is not None and entry[ 0 ] is schema:
        _records.move_to_end( key )
        return entry[ 1 ]
    try: record = adapt_strict( _core.copy_schema( schema ) )[ 1 ]
    except ( _core.Refusal, RecursionError ): record = None
    _records[ key ] = ( schema, record )
    while len( _records ) > _RECORDS_MAXIMUM: _records.popitem( last = False )
    return record


def adapt_strict( schema: _core.Node ) -> tuple[ _core.Node, Record ]:
    ''' Returns strict rendering of schema and record of nulls it forced. '''
    alternatives = _roots.survey_alternatives( schema )
    original = _core.copy_schema( schema ) if alternatives else None
    root = _roots.normalize_root( schema )
    adapter = _StrictAdapter( _core.access_definitions( root ) )
    adapted, nulls = adapter.adapt( root, '', 0 )
    plans: dict[ str, Nullifications | None ] = { }
    for key in _DEFINITIONS:
        value = root.get( key )
        if not isinstance( value, dict ): continue
        entries: _core.Node = { }
        for entry, item in __.typx.cast( _core.Node, value ).items( ):
            entries[ entry ], plans[ f"#/{key}/{entry}" ] = adapter.adapt(
                item, f"/{key}/{entry}", 1 )
        adapted[ key ] = entries
    if adapter.properties > PROPERTIES_MAXIMUM:
        raise _core.Refusal(
            "strict mode allows at most {count} properties in all".format(
                count = PROPERTIES_MAXIMUM ) )
    _verify_sizes( adapted )
    record = Record(
        nulls, plans, _core.select_keys( root, _DEFINITIONS ),
        _core.select_keys( adapted, _DEFINITIONS ),
        alternatives, original )
    return adapted, record


class _StrictAdapter:
    ''' Rewrites a JSON Schema for OpenAI strict mode. '''

    def __init__( self, definitions: __.cabc.Mapping[ str, __.typx.Any ] ):
        self.definitions = definitions
        self.budget = _core.Budget( )
        self.properties = 0

    def adapt(
        self, schema: object, path: str, depth: int
    ) -> tuple[ _core.Node, Nullifications | None ]:
        ''' Returns strict rendering of one (sub)schema, and its record. '''
        if not isinstance( schema, dict ):
            raise _core.Refusal(
                "boolean schemas are not allowed in strict mode", path )
        if depth > NESTING_MAXIMUM:
            raise _core.Refusal(
                "strict mode allows at most {count} levels of nesting".format(
                    count = NESTING_MAXIMUM ), path )
        self.budget.spend( path )
        node = self._inline( dict( __.typx.cast( _core.Node, schema ) ), path )
        node = _core.fold_all_of( node, path )
        _core.remove_malformed( node )
        _verify_keywords( node, path )
        plan = Nullifications( )
        if 'oneOf' in node: node[ 'anyOf' ] = node.pop( 'oneOf' )
        if 'anyOf' in node:
            node[ 'anyOf' ] = self._adapt_branches(
                node[ 'anyOf' ], plan, path, depth )
        elif not any(
            key in node for key in ( 'type', '$ref', 'enum', 'const' )
        ): _infer_type( node, path )
        reference = node.get( '$ref' )
        if isinstance( reference, str ): plan.reference = reference
        node = self._adapt_containers( node, plan, path, depth )
        if not _core.is_member( node.get( 'format' ), _FORMATS ):
            node.pop( 'format', None )
        return (
            _core.select_keys( node, _KEYS ),
            None if plan.is_empty( ) else plan )

    def _adapt_branches(
        self, branches: object, plan: Nullifications, path: str, depth: int
    ) -> list[ _core.Node ]:
        if not isinstance( branches, list ) or not branches:
            raise _core.Refusal( "'anyOf' must be a non-empty list", path )
        adapted: list[ tuple[ _core.Node, Nullifications | None ] ] = [
            self.adapt( branch, f"{path}/anyOf/{index}", depth )
            for index, branch in enumerate(
                __.typx.cast( list[ object ], branches ) ) ]
        if any( nulls is not None for _, nulls in adapted ):
            plan.branches = adapted
        return [ node for node, _ in adapted ]

    def _adapt_containers(
        self, node: _core.Node, plan: Nullifications, path: str, depth: int
    ) -> _core.Node:
        ''' Adapts properties of objects and items of arrays. '''
        if _core.is_object_schema( node ):
            node = self._adapt_object( node, plan, path, depth )
        else: # object keywords on other types mean nothing; strict refuses
            for key in ( 'properties', 'required', 'additionalProperties' ):
                node.pop( key, None )
        if 'items' in node or _core.has_type( node, 'array' ):
            items = node.get( 'items' )
            if not isinstance( items, dict ):
                raise _core.Refusal(
                    "arrays need one schema object in 'items' in strict "
                    "mode", path )
            node[ 'items' ], plan.items = self.adapt(
                __.typx.cast( object, items ), f"{path}/items", depth + 1 )
        return node

    def _adapt_object(
        self, node: _core.Node, plan: Nullifications, path: str, depth: int
    ) -> _core.Node:
        properties_ = _core.access_properties( node, path )
        _verify_closure( node, properties_, path )
        required = set(
            __.typx.cast( list[ str ], node.get( 'required', [ ] ) ) )
        adapted: _core.Node = { }
        for key, value in properties_.items( ):
            child, nulls = self.adapt(
                value, f"{path}/properties/{key}", depth + 1 )
            if nulls is not None: plan.properties[ key ] = nulls
            if key in required: adapted[ key ] = child
            else:
                adapted[ key ] = _nullify( child )
                plan.optionals[ key ] = value
        self.properties += len( adapted )
        node.setdefault( 'type', 'object' )
        node[ 'properties' ] = adapted
        node[ 'required' ] = list( adapted )
        node[ 'additionalProperties' ] = False
        return node

    def _inline( self, node: _core.Node, path: str ) -> _core.Node:
        ''' Inlines references which have sibling keywords. '''
        seen: set[ str ] = set( )
        while '$ref' in node and len( node ) > 1:
            reference = node.pop( '$ref' )
            target = self._resolve( reference, path )
            if reference in seen:
                raise _core.Refusal(
                    f"reference cycle at {reference!r}", path )
            seen.add( reference )
            merged = dict( target )
            for key, value in node.items( ):
                if key in merged and merged[ key ] != value and (
                    key not in _KEYS_ANNOTATION
                ): raise _core.Refusal(
                    f"conflicting values of {key!r} beside a reference",
                    path )
                merged[ key ] = value
            node = merged
        if '$ref' in node: self._resolve( node[ '$ref' ], path )
        return node

    def _resolve( self, reference: object, path: str ) -> _core.Node:
        target = (
            self.definitions.get( reference )
            if isinstance( reference, str ) else None )
        if target is None:
            raise _core.Refusal(
                f"unresolvable or non-local reference {reference!r}", path )
        if not isinstance( target, dict ):
            raise _core.Refusal(
                f"reference {reference!r} is not a schema object", path )
        return __.typx.cast( _core.Node, target )


def _infer_type( node: _core.Node, path: str ) -> None:
    if 'properties' in node or 'additionalProperties' in node:
        node[ 'type' ] = 'object'
    elif 'items' in node: node[ 'type' ] = 'array'
    else:
        raise _core.Refusal(
            "schemas without a type (any value) are not allowed in strict "
            "mode", path )


def _measure( node: object, tally: list[ int ], path: str ) -> None:
    ''' Counts enum values and text of names and values (tally). '''
    if not isinstance( node, dict ): return
    node_ = __.typx.cast( _core.Node, node )
    values = node_.get( 'enum' )
    if isinstance( values, list ):
        values_ = __.typx.cast( list[ object ], values )
        texts = [ value for value in values_ if isinstance( value, str ) ]
        size = sum( map( len, texts ) )
        if len( texts ) > ENUM_VALUES_LONG and size > ENUM_TEXT_MAXIMUM:
            raise _core.Refusal(
                "strict mode allows at most {count} characters in an enum "
                "of more than {values} strings".format(
                    count = ENUM_TEXT_MAXIMUM, values = ENUM_VALUES_LONG ),
                path )
        tally[ 0 ] += len( values_ )
        tally[ 1 ] += size
    constant = node_.get( 'const' )
    if isinstance( constant, str ): tally[ 1 ] += len( constant )
    properties = node_.get( 'properties' )
    if isinstance( properties, dict ):
        for key, value in __.typx.cast( _core.Node, properties ).items( ):
            tally[ 1 ] += len( key )
            _measure( value, tally, f"{path}/properties/{key}" )
    _measure( node_.get( 'items' ), tally, f"{path}/items" )
    branches = node_.get( 'anyOf' )
    if isinstance( branches, list ):
        branches_ = __.typx.cast( list[ object ], branches )
        for index, branch in enumerate( branches_ ):
            _measure( branch, tally, f"{path}/anyOf/{index}" )


def _nullify( schema: _core.Node ) -> _core.Node:
    ''' Returns schema which also accepts null. '''
    keys = set( schema ) - { 'description', 'title' }
    if keys == { 'anyOf' }:
        branches = __.typx.cast( list[ _core.Node ], schema[ 'anyOf' ] )
        if _NULL not in branches:
            schema[ 'anyOf' ] = [ *branches, dict( _NULL ) ]
        return schema
    genus: object = schema.get( 'type' )
    if _core.is_type_names( genus ) and not (
        keys & { 'anyOf', 'const', '$ref' }
    ):
        names = (
            [ genus ] if isinstance( genus, str )
            else __.typx.cast( list[ str ], genus ) )
        if 'null' not in names: schema[ 'type' ] = [ *names, 'null' ]
        values = schema.get( 'enum' )
        if isinstance( values, list ) and None not in values:
            values_ = __.typx.cast( list[ object ], values )
            schema[ 'enum' ] = [ *values_, None ]
        return schema
    outer = _core.select_keys( schema, ( 'description', 'title' ) )
    inner = {
        key: value for key, value in schema.items( ) if key not in outer }
    return { 'anyOf': [ inner, dict( _NULL ) ], **outer }


def _probe_validator( validator: __.typx.Any, value: object ) -> bool:
    ''' Returns whether value is valid; false if validation fails itself. '''
    try:
        with __.schemata.bound_steps( ):
            return bool( validator.is_valid( value ) )
    except Exception: return False # hostile schemas: treat as not valid


def _probe_validity( schema: _core.Node, value: object ) -> bool:
    validator = _produce_validator( schema )
    return validator is not False and _probe_validator( validator, value )


def _produce_validator( schema: _core.Node ) -> __.typx.Any:
    ''' Returns jsonschema validator, or ``False`` if it cannot be built.

        The library's validator: patterns never run on Python's
        backtracking ``re`` (see :py:mod:`invocables.schemata`).
    '''
    try: return __.schemata.produce_instance_validator( schema )
    except Exception: return False # hostile schemas: nothing validates


def _verify_closure(
    node: _core.Node, properties: _core.Node, path: str
) -> None:
    ''' Refuses objects which strict mode would close against their use. '''
    if 'additionalProperties' in node:
        if node[ 'additionalProperties' ] is not False:
            raise _core.Refusal(
                "open-ended objects ('additionalProperties' true, {} or a "
                "schema) cannot be expressed in strict mode",
                path )
    elif path and not properties:
        raise _core.Refusal(
            "open-ended objects (no declared properties) cannot be "
            "expressed in strict mode", path )
    required = node.get( 'required', [ ] )
    if not _core.is_names( required ):
        raise _core.Refusal( "'required' must be a list of names", path )
    unknown = [
        name for name in __.typx.cast( list[ str ], required )
        if name not in properties ]
    if unknown:
        raise _core.Refusal(
            "required names without a declared property ({names}) cannot "
            "be sent in strict mode".format(
                names = ', '.join( map( repr, unknown ) ) ), path )


def _verify_keywords( node: _core.Node, path: str ) -> None:
    if 'patternProperties' in node:
        raise _core.Refusal(
            "'patternProperties' cannot be expressed in strict mode", path )
    if 'oneOf' in node and 'anyOf' in node:
        raise _core.Refusal(
            "'oneOf' beside 'anyOf' cannot be expressed in strict mode",
            path )
    genus = node.get( 'type' )
    if genus is None: return
    names = [ genus ] if isinstance( genus, str ) else genus
    if not _core.is_names( names ) or not names or not all(
        name in _TYPES for name in __.typx.cast( list[ str ], names )
    ): raise _core.Refusal( f"unknown type {genus!r}", path )
    if 'enum' in node and not isinstance( node[ 'enum' ], list ):
        raise _core.Refusal( "'enum' must be a list", path )


def _verify_sizes( adapted: _core.Node ) -> None:
    tally = [ 0, 0 ]
    _measure( adapted, tally, '' )
    for key in _DEFINITIONS:
        entries = adapted.get( key )
        if not isinstance( entries, dict ): continue
        for entry, item in __.typx.cast( _core.Node, entries ).items( ):
            tally[ 1 ] += len( entry )
            _measure( item, tally, f"/{key}/{entry}" )
    if tally[ 0 ] > ENUM_VALUES_MAXIMUM:
        raise _core.Refusal(
            "strict mode allows at most {count} enum values in all".format(
                count = ENUM_VALUES_MAXIMUM ) )
    if tally[ 1 ] > TEXT_MAXIMUM:
        raise _core.Refusal(
            "strict mode allows at most {count} characters of names and "
            "enum values in all".format( count = TEXT_MAXIMUM ) )
