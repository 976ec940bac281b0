# SPDX-License-Identifier: Apache-2.0

''' JSON Schema dialects of providers: checks and safe transformations.

    Providers accept different subsets of JSON Schema for tool arguments.
    :py:func:`adapt_schema` returns a copy of a schema which the dialect
    accepts, or raises
    :py:class:`invocables.exceptions.SchemaDialectInvalidity` naming the
    rule which cannot be met. :py:func:`adapt_tool_schema` (one tool) and
    :py:func:`adapt_schemas` (a list of tools) leave out each tool which
    cannot be adapted with a warning, so that one bad schema never fails a
    whole request.

    Transformations only loosen a schema where they must change it (for
    example, dropping a ``pattern`` which a provider refuses): the library
    still validates arguments against the original schema before a tool
    runs, so the model receives an error result for arguments which the
    original schema refuses. Input schemas are never modified.
'''


import warnings as _warnings

from . import __
from . import exceptions as _exceptions
from . import schemata as _schemata


Dialect: __.typx.TypeAlias = __.typx.Literal[
    'anthropic', 'cohere', 'gemini', 'ollama', 'openai', 'openai-strict' ]
Node: __.typx.TypeAlias = dict[ str, __.typx.Any ]

DIALECTS: frozenset[ str ] = frozenset( (
    'anthropic', 'cohere', 'gemini', 'ollama', 'openai', 'openai-strict' ) )
STRICT_NESTING_MAXIMUM = 10
STRICT_PROPERTIES_MAXIMUM = 5000

_scribe = __.produce_scribe( __name__ )
_COMBINATORS_ROOT = ( 'allOf', 'anyOf', 'oneOf' )
_KEYS_ROOT_DROPPED = (
    '$schema', '$id', 'not', 'enum', 'const', 'if', 'then', 'else' )
_GEMINI_KEYS = frozenset( (
    'anyOf', 'default', 'description', 'enum', 'example', 'format', 'items',
    'maxItems', 'maxLength', 'maxProperties', 'maximum', 'minItems',
    'minLength', 'minProperties', 'minimum', 'nullable', 'pattern',
    'properties', 'propertyOrdering', 'required', 'title', 'type',
) )
_GEMINI_FORMATS = __.types.MappingProxyType( {
    'string': frozenset( ( 'enum', 'date-time' ) ),
    'integer': frozenset( ( 'int32', 'int64' ) ),
    'number': frozenset( ( 'float', 'double' ) ),
} )
_GEMINI_TYPES = frozenset( (
    'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' ) )
_STRICT_KEYS = frozenset( (
    '$ref', 'additionalProperties', 'anyOf', 'const', 'description',
    'enum', 'exclusiveMaximum', 'exclusiveMinimum', 'format', 'items',
    'maxItems', 'maximum',
    'minItems', 'minimum', 'multipleOf', 'pattern', 'properties',
    'required', 'title', 'type',
) )
_STRICT_FORMATS = frozenset( (
    'date', 'date-time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6',
    'time', 'uuid' ) )
_OLLAMA_PROPERTY_KEYS_MAPPING = ( 'items', 'properties' )


class _Refusal( Exception ):
    ''' Internal signal: schema breaks a rule of the dialect. '''

    def __init__( self, rule: str, path: str = '' ):
        self.rule = rule
        self.path = path
        super( ).__init__( rule )

    def describe( self ) -> str:
        ''' Returns rule with the location where it is broken. '''
        where = self.path or '/'
        return f"{self.rule} (at {where!r})."


def adapt_schema(
    schema: __.typx.Annotated[
        __.Schema, __.ddoc.Doc( ''' JSON Schema of tool arguments. ''' )
    ],
    dialect: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' One of 'anthropic', 'cohere', 'gemini', 'ollama',
            'openai', 'openai-strict'. ''' ),
    ],
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Name of tool, for error messages. ''' )
    ] = 'tool',
) -> Node:
    ''' Returns copy of schema which dialect accepts.

        Raises :py:class:`invocables.exceptions.SchemaDialectInvalidity`,
        naming the tool, the dialect and the rule, when the schema cannot be
        expressed in the dialect; raises
        :py:class:`invocables.exceptions.ProviderNoSupport` for an unknown
        dialect. The input schema is never modified and no partly
        transformed schema is ever returned.
    '''
    adapter = _adapters.get( dialect )
    if adapter is None:
        names = ', '.join( sorted( DIALECTS ) )
        raise _exceptions.ProviderNoSupport(
            dialect, "no JSON Schema dialect of that name; use one of "
            "{names}.".format( names = names ) )
    try: return adapter( _copy_schema( schema ) )
    except _Refusal as refusal:
        raise _exceptions.SchemaDialectInvalidity(
            name, dialect, refusal.describe( ) ) from None
    except RecursionError as exception:
        raise _exceptions.SchemaDialectInvalidity(
            name, dialect, "the schema is nested too deeply." ) from exception


def adapt_schemas(
    schemas: __.typx.Annotated[
        __.cabc.Mapping[ str, __.Schema ]
        | __.cabc.Iterable[ tuple[ str, __.Schema ] ],
        __.ddoc.Doc( ''' Schemas by provider-facing tool name. ''' ),
    ],
    dialect: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Target dialect (see adapt_schema). ''' )
    ],
) -> dict[ str, Node ]:
    ''' Returns adapted schemas by tool name, leaving out unfit tools.

        Each tool whose schema cannot be expressed in the dialect is left
        out alone, as by :py:func:`adapt_tool_schema`; the other tools are
        kept, in their order.
    '''
    items = __.typx.cast(
        __.cabc.Iterable[ tuple[ str, __.Schema ] ],
        schemas.items( ) if isinstance( schemas, __.cabc.Mapping )
        else schemas )
    adapted: dict[ str, Node ] = { }
    for name, schema in items:
        result = _adapt_or_warn( name, schema, dialect, 3 )
        if result is not None: adapted[ name ] = result
    return adapted


def adapt_tool_schema(
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Provider-facing name of tool. ''' )
    ],
    schema: __.typx.Annotated[
        __.Schema, __.ddoc.Doc( ''' JSON Schema of tool arguments. ''' )
    ],
    dialect: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Target dialect (see adapt_schema). ''' )
    ],
) -> Node | None:
    ''' Returns adapted schema of one tool, or ``None`` to leave it out.

        When the schema cannot be expressed in the dialect, issues a
        :py:class:`invocables.exceptions.ToolExclusionWarning` naming the
        tool and the rule, logs it, and returns ``None``, so that the tool
        is left out alone rather than failing the whole request.
    '''
    return _adapt_or_warn( name, schema, dialect, 3 )


def normalize_strict_arguments(
    schema: __.typx.Annotated[
        __.Schema,
        __.ddoc.Doc( ''' Original schema (before 'openai-strict'). ''' ),
    ],
    arguments: __.typx.Annotated[
        __.typx.Any, __.ddoc.Doc( ''' Arguments sent by the model. ''' )
    ],
) -> __.typx.Any:
    ''' Returns arguments without nulls which strict mode introduced.

        In OpenAI strict mode every property is required, so optional
        properties are made nullable and the model sends ``null`` for those
        it leaves out. This removes such ``null`` values where the original
        schema declares the property optional and does not accept ``null``,
        so that the arguments validate against the original schema.
    '''
    if not isinstance( arguments, __.cabc.Mapping ): return arguments
    node = _copy_schema( schema )
    definitions = _access_definitions( node )
    return _strip_nulls(
        __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], arguments ),
        node, definitions, 0 )


def _adapt_or_warn(
    name: str, schema: __.Schema, dialect: str, level: int
) -> Node | None:
    try: return adapt_schema( schema, dialect, name )
    except _exceptions.SchemaDialectInvalidity as exception:
        warning = _exceptions.ToolExclusionWarning(
            name, dialect, exception.rule )
        _scribe.warning( str( warning ) )
        _warnings.warn( warning, stacklevel = level )
    return None


def _access_definitions( root: Node ) -> dict[ str, __.typx.Any ]:
    definitions: dict[ str, __.typx.Any ] = { }
    for key in ( 'definitions', '$defs' ):
        value = root.get( key )
        if isinstance( value, dict ):
            for entry, schema in __.typx.cast(
                dict[ str, __.typx.Any ], value
            ).items( ):
                definitions[ f"#/{key}/{entry}" ] = schema
    return definitions


def _adapt_anthropic( schema: Node ) -> Node:
    ''' Anthropic: object root, no top-level combinators or enum. '''
    return _normalize_root( schema )


def _adapt_cohere( schema: Node ) -> Node:
    ''' Cohere v2: like OpenAI (non-strict); object root. '''
    return _normalize_root( schema )


def _adapt_gemini( schema: Node ) -> Node:
    ''' Gemini: OpenAPI 3 subset, no references, no open objects. '''
    root = _normalize_root( schema )
    definitions = _access_definitions( root )
    adapted = _GeminiAdapter( definitions ).adapt( root, '', ( ) )
    adapted[ 'type' ] = 'object'
    adapted.setdefault( 'properties', { } )
    return adapted


def _adapt_ollama( schema: Node ) -> Node:
    ''' Ollama: object root; each property an object with string type. '''
    root = _normalize_root( schema )
    properties = __.typx.cast( dict[ str, __.typx.Any ], root[ 'properties' ] )
    for key, value in properties.items( ):
        path = f"/properties/{key}"
        if not isinstance( value, dict ):
            raise _Refusal(
                "each property must be a schema object, not a boolean", path )
        genus = __.typx.cast( Node, value ).get( 'type' )
        if genus is not None and not _is_type_names( genus ):
            raise _Refusal(
                "property 'type' must be a string or a list of strings",
                path )
    return root


def _adapt_openai( schema: Node ) -> Node:
    ''' OpenAI (non-strict): object root, anything else is accepted. '''
    return _normalize_root( schema )


def _adapt_openai_strict( schema: Node ) -> Node:
    ''' OpenAI strict: closed objects, all required, limited keywords. '''
    root = _normalize_root( schema )
    definitions = _access_definitions( root )
    adapter = _StrictAdapter( definitions )
    adapted = adapter.adapt( root, '', 0 )
    for key in ( '$defs', 'definitions' ):
        value = root.get( key )
        if not isinstance( value, dict ): continue
        adapted[ key ] = {
            entry: adapter.adapt( item, f"/{key}/{entry}", 1 )
            for entry, item in __.typx.cast( Node, value ).items( ) }
    if adapter.properties > STRICT_PROPERTIES_MAXIMUM:
        raise _Refusal(
            "strict mode allows at most {count} properties in all".format(
                count = STRICT_PROPERTIES_MAXIMUM ) )
    return adapted


_adapters: __.cabc.Mapping[ str, __.cabc.Callable[ [ Node ], Node ] ] = (
    __.types.MappingProxyType( {
        'anthropic': _adapt_anthropic,
        'cohere': _adapt_cohere,
        'gemini': _adapt_gemini,
        'ollama': _adapt_ollama,
        'openai': _adapt_openai,
        'openai-strict': _adapt_openai_strict,
    } ) )


def _copy_schema( schema: object ) -> Node:
    ''' Returns deep, plain copy of schema; refuses non-objects. '''
    if not isinstance( schema, __.cabc.Mapping ):
        raise _Refusal( "the schema must be a JSON object" )
    return __.typx.cast( Node, _schemata.thaw_json( schema ) )


def _is_object_schema( node: Node ) -> bool:
    genus = node.get( 'type' )
    if genus == 'object': return True
    if isinstance( genus, list ):
        return 'object' in __.typx.cast( list[ object ], genus )
    return genus is None and (
        'properties' in node or 'additionalProperties' in node )


def _is_names( value: object ) -> bool:
    if not isinstance( value, list ): return False
    return all(
        isinstance( item, str )
        for item in __.typx.cast( list[ object ], value ) )


def _is_type_names( value: object ) -> bool:
    if isinstance( value, str ): return True
    if not isinstance( value, list ): return False
    return all(
        isinstance( item, str )
        for item in __.typx.cast( list[ object ], value ) )


def _merge_nodes( target: Node, source: Node, path: str ) -> Node:
    ''' Merges keys of source into target; refuses conflicting keys. '''
    for key, value in source.items( ):
        if key == 'required' and 'required' in target:
            target[ key ] = _unite_required( target[ key ], value )
        elif key == 'properties' and 'properties' in target:
            target[ key ] = _merge_properties(
                target[ key ], value, path, unite = False )
        elif key in target and target[ key ] != value:
            if key in ( 'description', 'title' ): continue
            raise _Refusal(
                f"conflicting values of {key!r} in merged schemas", path )
        else: target[ key ] = value
    return target


def _merge_properties(
    target: object, source: object, path: str, *, unite: bool
) -> Node:
    if not isinstance( target, dict ) or not isinstance( source, dict ):
        raise _Refusal( "'properties' must be an object", path )
    merged = dict( __.typx.cast( Node, target ) )
    for key, value in __.typx.cast( Node, source ).items( ):
        if key not in merged or merged[ key ] == value:
            merged[ key ] = value
            continue
        if not unite:
            raise _Refusal(
                f"conflicting definitions of property {key!r}", path )
        earlier: __.typx.Any = merged[ key ]
        alternatives: list[ __.typx.Any ] = [ earlier ]
        if isinstance( earlier, dict ) and list(
            __.typx.cast( Node, earlier ) ) == [ 'anyOf' ]:
            alternatives = list(
                __.typx.cast( list[ __.typx.Any ], earlier[ 'anyOf' ] ) )
        if value not in alternatives: alternatives.append( value )
        merged[ key ] = { 'anyOf': alternatives }
    return merged


def _normalize_root( schema: Node ) -> Node:
    ''' Makes root a plain object schema: resolves combinators and $ref. '''
    root = _resolve_root_reference( schema )
    for key in _COMBINATORS_ROOT:
        if key not in root: continue
        branches = root.pop( key )
        if not isinstance( branches, list ) or not branches:
            raise _Refusal( f"top-level {key!r} must be a non-empty list" )
        root = _merge_branches(
            root, __.typx.cast( list[ object ], branches ), key )
    for key in _KEYS_ROOT_DROPPED: root.pop( key, None )
    genus = root.get( 'type', 'object' )
    if not _is_type_names( genus ) or 'object' not in (
        [ genus ] if isinstance( genus, str ) else genus
    ): raise _Refusal( "the top level must be of type 'object'" )
    root[ 'type' ] = 'object'
    properties = root.setdefault( 'properties', { } )
    if not isinstance( properties, dict ):
        raise _Refusal( "'properties' must be an object", '/properties' )
    if 'required' in root and not _is_names( root[ 'required' ] ):
        raise _Refusal( "'required' must be a list of names", '/required' )
    return root


def _merge_branches( root: Node, branches: list[ object ], key: str ) -> Node:
    ''' Hoists top-level combinator into one object schema.

        ``allOf`` branches are merged (conflicts refused); ``anyOf`` and
        ``oneOf`` branches give the union of their properties, requiring only
        what every branch requires.
    '''
    definitions = _access_definitions( root )
    objects: list[ Node ] = [ ]
    for index, branch in enumerate( branches ):
        path = f"/{key}/{index}"
        node = _resolve_branch( branch, definitions, path )
        if not _is_object_schema( node ) and set( node ) - {
            'required', 'description', 'title'
        }: raise _Refusal(
            f"top-level {key!r} has an alternative which is not an "
            "object", path )
        objects.append( node )
    if key == 'allOf':
        merged: Node = { }
        for index, node in enumerate( objects ):
            merged = _merge_nodes( merged, node, f"/{key}/{index}" )
    else: merged = _unite_branches( objects, key )
    merged.pop( 'type', None )
    return _merge_nodes( root, merged, '' )


def _resolve_branch(
    branch: object, definitions: __.cabc.Mapping[ str, __.typx.Any ], path: str
) -> Node:
    if not isinstance( branch, dict ):
        raise _Refusal( "alternatives must be schema objects", path )
    node = dict( __.typx.cast( Node, branch ) )
    reference = node.pop( '$ref', None )
    if reference is None: return node
    target = definitions.get( reference ) if isinstance(
        reference, str ) else None
    if not isinstance( target, dict ):
        raise _Refusal( f"unresolvable reference {reference!r}", path )
    return _merge_nodes( dict( __.typx.cast( Node, target ) ), node, path )


def _resolve_root_reference( schema: Node ) -> Node:
    reference = schema.get( '$ref' )
    if reference is None: return schema
    definitions = _access_definitions( schema )
    target = definitions.get( reference ) if isinstance(
        reference, str ) else None
    if not isinstance( target, dict ):
        raise _Refusal( f"unresolvable top-level reference {reference!r}" )
    schema.pop( '$ref' )
    target_ = dict( __.typx.cast( Node, target ) )
    if '$ref' in target_:
        raise _Refusal( "top-level reference to another reference" )
    return _merge_nodes( schema, target_, '' )


def _strip_nulls(
    arguments: __.cabc.Mapping[ str, __.typx.Any ],
    schema: __.typx.Any,
    definitions: __.cabc.Mapping[ str, __.typx.Any ],
    depth: int,
) -> __.typx.Any:
    if not isinstance( schema, dict ) or depth > STRICT_NESTING_MAXIMUM * 2:
        return dict( arguments )
    node = __.typx.cast( Node, schema )
    reference = node.get( '$ref' )
    if isinstance( reference, str ) and reference in definitions:
        return _strip_nulls(
            arguments, definitions[ reference ], definitions, depth + 1 )
    properties = node.get( 'properties' )
    if not isinstance( properties, dict ): return dict( arguments )
    properties_ = __.typx.cast( Node, properties )
    required = node.get( 'required' )
    required_: set[ object ] = (
        set( __.typx.cast( list[ object ], required ) )
        if isinstance( required, list ) else set( ) )
    result: dict[ str, __.typx.Any ] = { }
    for key, value in arguments.items( ):
        subschema = properties_.get( key )
        if value is None and key not in required_ and not _accepts_null(
            subschema, definitions
        ): continue
        result[ key ] = value
        if isinstance( value, __.cabc.Mapping ):
            result[ key ] = _strip_nulls(
                __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], value ),
                subschema, definitions, depth + 1 )
    return result


def _accepts_null(
    schema: __.typx.Any, definitions: __.cabc.Mapping[ str, __.typx.Any ]
) -> bool:
    if not isinstance( schema, dict ): return schema is not False
    node = __.typx.cast( Node, schema )
    reference = node.get( '$ref' )
    if isinstance( reference, str ) and reference in definitions:
        node = definitions[ reference ]
        if not isinstance( node, dict ): return True
        node = __.typx.cast( Node, node )
    genus = node.get( 'type' )
    if genus == 'null' or (
        isinstance( genus, list )
        and 'null' in __.typx.cast( list[ object ], genus )
    ): return True
    if 'enum' in node or 'const' in node:
        values = node.get( 'enum' )
        return ( isinstance( values, list ) and None in values ) or (
            'const' in node and node[ 'const' ] is None )
    branches = node.get( 'anyOf', node.get( 'oneOf' ) )
    if isinstance( branches, list ):
        return any(
            _accepts_null( branch, definitions )
            for branch in __.typx.cast( list[ object ], branches ) )
    return genus is None


def _unite_branches( objects: list[ Node ], key: str ) -> Node:
    merged: Node = { }
    requireds: list[ set[ str ] ] = [ ]
    for index, node in enumerate( objects ):
        path = f"/{key}/{index}"
        properties = node.get( 'properties', { } )
        merged[ 'properties' ] = _merge_properties(
            merged.get( 'properties', { } ), properties, path, unite = True )
        required = node.get( 'required', [ ] )
        if not _is_names( required ):
            raise _Refusal( "'required' must be a list of names", path )
        requireds.append( set( __.typx.cast( list[ str ], required ) ) )
    common: set[ str ] = set( requireds[ 0 ] ) if requireds else set( )
    for required_ in requireds[ 1 : ]: common &= required_
    order = [ name for name in merged[ 'properties' ] if name in common ]
    if order: merged[ 'required' ] = order
    return merged


def _unite_required( first: object, second: object ) -> list[ str ]:
    if not _is_names( first ) or not _is_names( second ):
        raise _Refusal( "'required' must be a list of names" )
    first_ = __.typx.cast( list[ str ], first )
    second_ = __.typx.cast( list[ str ], second )
    return first_ + [ name for name in second_ if name not in first_ ]


class _GeminiAdapter:
    ''' Rewrites a JSON Schema into Gemini's OpenAPI 3 subset. '''

    def __init__( self, definitions: __.cabc.Mapping[ str, __.typx.Any ] ):
        self.definitions = definitions

    def adapt(
        self, schema: object, path: str, stack: tuple[ str, ... ]
    ) -> Node:
        ''' Returns Gemini rendering of one (sub)schema. '''
        if not isinstance( schema, dict ):
            raise _Refusal(
                "boolean schemas cannot be expressed (use a typed schema)",
                path )
        node = dict( __.typx.cast( Node, schema ) )
        node, stack = self._inline( node, path, stack )
        node = _fold_all_of( node, path )
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
        self, node: Node, path: str, stack: tuple[ str, ... ]
    ) -> Node:
        branches = node.pop( 'anyOf' )
        if not isinstance( branches, list ) or not branches:
            raise _Refusal( "'anyOf' must be a non-empty list", path )
        kept: list[ Node ] = [ ]
        branches_ = __.typx.cast( list[ object ], branches )
        for index, branch in enumerate( branches_ ):
            adapted = self.adapt( branch, f"{path}/anyOf/{index}", stack )
            if adapted.get( 'type' ) == 'null' and len( adapted ) == 1:
                node[ 'nullable' ] = True
            else: kept.append( adapted )
        outer = _select_keys( node, ( 'description', 'title', 'nullable' ) )
        if not kept:
            return {
                **_select_keys( outer, ( 'description', 'title' ) ),
                'type': 'null' }
        if len( kept ) == 1:
            return { **kept[ 0 ], **outer }
        return { **outer, 'anyOf': kept }

    def _adapt_enum( self, node: Node ) -> None:
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
        self, node: Node, path: str, stack: tuple[ str, ... ]
    ) -> Node:
        properties = node.get( 'properties', { } )
        if not isinstance( properties, dict ):
            raise _Refusal( "'properties' must be an object", path )
        properties_ = __.typx.cast( Node, properties )
        if not properties_ and path:
            raise _Refusal(
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
        return node

    def _adapt_type_list( self, node: Node ) -> None:
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
        self, node: Node, path: str, stack: tuple[ str, ... ]
    ) -> Node:
        genus = node[ 'type' ]
        if not _is_member( genus, _GEMINI_TYPES ):
            raise _Refusal( f"unknown type {genus!r}", path )
        _convert_exclusive_bounds( node, genus )
        formats = _GEMINI_FORMATS.get( genus, frozenset( ) )
        if not _is_member( node.get( 'format' ), formats ):
            node.pop( 'format', None )
        examples = node.get( 'examples' )
        if isinstance( examples, list ) and examples and 'example' not in node:
            node[ 'example' ] = __.typx.cast( list[ object ], examples )[ 0 ]
        if genus == 'object': node = self._adapt_object( node, path, stack )
        elif genus == 'array':
            items = node.get( 'items' )
            if not isinstance( items, dict ):
                raise _Refusal(
                    "arrays need one schema object in 'items' (tuples and "
                    "untyped arrays cannot be expressed)", path )
            node[ 'items' ] = self.adapt(
                __.typx.cast( object, items ), f"{path}/items", stack )
        else:
            for key in ( 'properties', 'required', 'items' ):
                node.pop( key, None )
        if 'nullable' in node and node[ 'nullable' ] is not True:
            del node[ 'nullable' ]
        return _select_keys( node, _GEMINI_KEYS )

    def _infer_type( self, node: Node, path: str ) -> None:
        if 'type' in node: return
        if 'properties' in node or 'additionalProperties' in node:
            node[ 'type' ] = 'object'
        elif 'items' in node or 'prefixItems' in node:
            node[ 'type' ] = 'array'
        elif 'enum' in node: node[ 'type' ] = 'string'
        else:
            raise _Refusal(
                "schemas without a type (any value) cannot be expressed",
                path )

    def _inline(
        self, node: Node, path: str, stack: tuple[ str, ... ]
    ) -> tuple[ Node, tuple[ str, ... ] ]:
        for key in ( '$defs', 'definitions' ): node.pop( key, None )
        while '$ref' in node:
            reference = node.pop( '$ref' )
            if not isinstance( reference, str ) or (
                reference not in self.definitions
            ): raise _Refusal(
                f"unresolvable or non-local reference {reference!r}", path )
            if reference in stack:
                raise _Refusal(
                    f"recursive reference {reference!r} cannot be "
                    "expressed", path )
            stack = ( *stack, reference )
            target = self.definitions[ reference ]
            if not isinstance( target, dict ):
                raise _Refusal(
                    f"reference {reference!r} is not a schema object", path )
            merged = dict( __.typx.cast( Node, target ) )
            for key in ( '$defs', 'definitions' ): merged.pop( key, None )
            for key, value in node.items( ):
                if key in ( 'description', 'title', 'default' ) or (
                    key not in merged
                ): merged[ key ] = value
            node = merged
        return node, stack


class _StrictAdapter:
    ''' Rewrites a JSON Schema for OpenAI strict mode. '''

    def __init__( self, definitions: __.cabc.Mapping[ str, __.typx.Any ] ):
        self.definitions = definitions
        self.properties = 0

    def adapt( self, schema: object, path: str, depth: int ) -> Node:
        ''' Returns strict rendering of one (sub)schema. '''
        if not isinstance( schema, dict ):
            raise _Refusal(
                "boolean schemas are not allowed in strict mode", path )
        if depth > STRICT_NESTING_MAXIMUM:
            raise _Refusal(
                "strict mode allows at most {count} levels of nesting".format(
                    count = STRICT_NESTING_MAXIMUM ), path )
        node = self._inline( dict( __.typx.cast( Node, schema ) ), path )
        node = _fold_all_of( node, path )
        if 'oneOf' in node: node[ 'anyOf' ] = node.pop( 'oneOf' )
        if 'patternProperties' in node:
            raise _Refusal(
                "'patternProperties' cannot be expressed in strict mode",
                path )
        if 'anyOf' in node:
            branches = node[ 'anyOf' ]
            if not isinstance( branches, list ) or not branches:
                raise _Refusal( "'anyOf' must be a non-empty list", path )
            node[ 'anyOf' ] = [
                self.adapt( branch, f"{path}/anyOf/{index}", depth )
                for index, branch in enumerate(
                    __.typx.cast( list[ object ], branches ) ) ]
        elif not any( key in node for key in (
            'type', '$ref', 'enum', 'const' )
        ): node = self._infer_type( node, path )
        node = self._adapt_containers( node, path, depth )
        if not _is_member( node.get( 'format' ), _STRICT_FORMATS ):
            node.pop( 'format', None )
        return _select_keys( node, _STRICT_KEYS )

    def _adapt_containers( self, node: Node, path: str, depth: int ) -> Node:
        ''' Adapts properties of objects and items of arrays. '''
        if _is_object_schema( node ):
            node = self._adapt_object( node, path, depth )
        else: # object keywords on other types mean nothing; strict refuses
            for key in ( 'properties', 'required', 'additionalProperties' ):
                node.pop( key, None )
        if 'items' in node or _has_type( node, 'array' ):
            items = node.get( 'items' )
            if not isinstance( items, dict ):
                raise _Refusal(
                    "arrays need one schema object in 'items' in strict "
                    "mode", path )
            node[ 'items' ] = self.adapt(
                __.typx.cast( object, items ), f"{path}/items", depth + 1 )
        return node

    def _adapt_object( self, node: Node, path: str, depth: int ) -> Node:
        properties = node.get( 'properties', { } )
        if not isinstance( properties, dict ):
            raise _Refusal( "'properties' must be an object", path )
        properties_ = __.typx.cast( Node, properties )
        extra = node.get( 'additionalProperties' )
        if extra is True or ( isinstance( extra, dict ) and extra ) or (
            extra is None and path and not properties_
        ): raise _Refusal(
            "open-ended objects (additional properties) cannot be "
            "expressed in strict mode", path )
        required = node.get( 'required', [ ] )
        required_: set[ str ] = (
            set( __.typx.cast( list[ str ], required ) )
            if _is_names( required ) else set( ) )
        adapted: Node = { }
        for key, value in properties_.items( ):
            child = self.adapt( value, f"{path}/properties/{key}", depth + 1 )
            adapted[ key ] = child if key in required_ else _nullify( child )
        self.properties += len( adapted )
        node.setdefault( 'type', 'object' )
        node[ 'properties' ] = adapted
        node[ 'required' ] = list( adapted )
        node[ 'additionalProperties' ] = False
        return node

    def _infer_type( self, node: Node, path: str ) -> Node:
        if 'properties' in node or 'additionalProperties' in node:
            node[ 'type' ] = 'object'
        elif 'items' in node: node[ 'type' ] = 'array'
        else:
            raise _Refusal(
                "schemas without a type (any value) are not allowed in "
                "strict mode", path )
        return node

    def _inline( self, node: Node, path: str ) -> Node:
        ''' Inlines references which have sibling keywords. '''
        seen: set[ str ] = set( )
        while '$ref' in node and len( node ) > 1:
            reference = node.pop( '$ref' )
            if not isinstance( reference, str ) or (
                reference not in self.definitions
            ): raise _Refusal(
                f"unresolvable or non-local reference {reference!r}", path )
            if reference in seen:
                raise _Refusal( f"reference cycle at {reference!r}", path )
            seen.add( reference )
            target = self.definitions[ reference ]
            if not isinstance( target, dict ):
                raise _Refusal(
                    f"reference {reference!r} is not a schema object", path )
            merged = dict( __.typx.cast( Node, target ) )
            merged.update( node )
            node = merged
        if '$ref' in node and node[ '$ref' ] not in self.definitions:
            raise _Refusal(
                "unresolvable or non-local reference {reference!r}".format(
                    reference = node[ '$ref' ] ), path )
        return node


def _convert_exclusive_bounds( node: Node, genus: str ) -> None:
    ''' Rewrites exclusive bounds as inclusive ones (exact for integers). '''
    for key, inclusive, step in (
        ( 'exclusiveMinimum', 'minimum', 1 ),
        ( 'exclusiveMaximum', 'maximum', -1 ),
    ):
        bound = node.pop( key, None )
        if isinstance( bound, bool ): continue
        if not isinstance( bound, ( int, float ) ): continue
        if 'integer' == genus and float( bound ).is_integer( ):
            bound = int( bound ) + step
        if inclusive not in node: node[ inclusive ] = bound


def _fold_all_of( node: Node, path: str ) -> Node:
    ''' Merges a one-branch ``allOf`` into its node; refuses longer ones. '''
    if 'allOf' not in node: return node
    branches = node.pop( 'allOf' )
    if not isinstance( branches, list ):
        raise _Refusal( "'allOf' must be a list", path )
    branches_ = __.typx.cast( list[ object ], branches )
    if len( branches_ ) != 1 or not isinstance( branches_[ 0 ], dict ):
        raise _Refusal(
            "'allOf' with several schemas cannot be expressed", path )
    return _merge_nodes(
        node, dict( __.typx.cast( Node, branches_[ 0 ] ) ), f"{path}/allOf/0" )


def _has_type( node: Node, name: str ) -> bool:
    genus = node.get( 'type' )
    if isinstance( genus, list ):
        return name in __.typx.cast( list[ object ], genus )
    return genus == name


def _infer_values_type( values: list[ object ] ) -> str:
    if all( isinstance( value, bool ) for value in values ): return 'boolean'
    if all( isinstance( value, int ) and not isinstance( value, bool )
            for value in values ): return 'integer'
    if all( isinstance( value, ( int, float ) ) and not isinstance(
        value, bool ) for value in values ): return 'number'
    raise _Refusal( "enumerations of mixed or structured values" )


def _is_member( value: object, members: frozenset[ str ] ) -> bool:
    return isinstance( value, str ) and value in members


def _nullify( schema: Node ) -> Node:
    ''' Returns schema which also accepts null. '''
    genus = schema.get( 'type' )
    if 'anyOf' in schema:
        branches = __.typx.cast( list[ Node ], schema[ 'anyOf' ] )
        if { 'type': 'null' } not in branches:
            schema[ 'anyOf' ] = [ *branches, { 'type': 'null' } ]
        return schema
    if isinstance( genus, str ) and 'const' not in schema:
        if genus != 'null': schema[ 'type' ] = [ genus, 'null' ]
    elif isinstance( genus, list ) and 'const' not in schema:
        if 'null' not in genus: schema[ 'type' ] = [ *genus, 'null' ]
    else:
        outer = _select_keys( schema, ( 'description', 'title' ) )
        inner = { key: value for key, value in schema.items( )
                  if key not in outer }
        return { 'anyOf': [ inner, { 'type': 'null' } ], **outer }
    if 'enum' in schema and None not in schema[ 'enum' ]:
        schema[ 'enum' ] = [ *schema[ 'enum' ], None ]
    return schema


def _select_keys( node: Node, keys: __.cabc.Iterable[ str ] ) -> Node:
    keys_ = frozenset( keys )
    return { key: value for key, value in node.items( ) if key in keys_ }
