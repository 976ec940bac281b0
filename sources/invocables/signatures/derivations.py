# SPDX-License-Identifier: Apache-2.0

''' JSON Schemas of common signatures, derived without pydantic.

    pydantic derives a schema from a model made per function, which costs
    about a millisecond and some 17 KB. Most tools take strings, numbers,
    flags, choices, enumerations, dates and lists of them: for those, the
    schema is derived here in microseconds, equal (keys in the same order)
    to the one pydantic makes once ``invocables.signatures`` has cleaned
    it; a pydantic model parameter takes the schema of its class. Whatever
    is not understood completely here (dataclasses, recursive models,
    unknown metadata, defaults which are not plain JSON, classes which
    share a name) gives ``None``, and pydantic derives the schema as before.
'''


import invocables.__ as __


# A parameter: name, evaluated annotation, default, description (or None).
Parameter: __.typx.TypeAlias = tuple[
    str, __.typx.Any, __.typx.Any, str | None ]
_Schema: __.typx.TypeAlias = dict[ str, __.typx.Any ]
# Definitions by name: each class (None for the models a model holds),
# and its schema.
_Definitions: __.typx.TypeAlias = dict[ str, tuple[ type | None, _Schema ] ]

_ARRAYS = frozenset( ( list, tuple, set, frozenset ) )
_CONSTRAINTS_ARRAY = { 'MinLen': 'minItems', 'MaxLen': 'maxItems' }
_CONSTRAINTS_ATTRIBUTES = {
    'Ge': 'ge', 'Gt': 'gt', 'Le': 'le', 'Lt': 'lt',
    'MultipleOf': 'multiple_of', 'MinLen': 'min_length',
    'MaxLen': 'max_length' }
_CONSTRAINTS_NUMBER = {
    'Ge': 'minimum', 'Gt': 'exclusiveMinimum', 'Le': 'maximum',
    'Lt': 'exclusiveMaximum', 'MultipleOf': 'multipleOf' }
_CONSTRAINTS_OBJECT = {
    'MinLen': 'minProperties', 'MaxLen': 'maxProperties' }
_CONSTRAINTS_STRING = {
    'MinLen': 'minLength', 'MaxLen': 'maxLength', 'pattern': 'pattern' }
_EMPTY = __.inspect.Parameter.empty
_ENUMERATION_KINDS = frozenset( ( str, int, float, bool ) )
# By module and name: so that neither module need be imported here.
_FORMATS: __.cabc.Mapping[ tuple[ str, str ], str ] = (
    __.types.MappingProxyType( {
        ( 'datetime', 'date' ): 'date',
        ( 'datetime', 'datetime' ): 'date-time',
        ( 'datetime', 'time' ): 'time',
        ( 'uuid', 'UUID' ): 'uuid' } ) )
_LITERAL_KINDS: frozenset[ type ] = frozenset( (
    str, int, bool, type( None ) ) )
_LITERAL_TYPES: __.cabc.Mapping[ type, str ] = __.types.MappingProxyType( {
    str: 'string', int: 'integer', bool: 'boolean', type( None ): 'null' } )
# Under these keys pydantic keeps the order of a mapping instead of sorting.
_ORDERED_KEYS = frozenset( ( 'properties', 'default' ) )
_SCALARS: __.cabc.Mapping[ type, str ] = __.types.MappingProxyType( {
    str: 'string', int: 'integer', float: 'number', bool: 'boolean',
    type( None ): 'null' } )
_UNIONS = ( __.typx.Union, __.types.UnionType )
_name_definition = __.re.compile( r'^[A-Za-z0-9_]+$' )


def derive_schema(
    parameters: __.cabc.Sequence[ Parameter ]
) -> _Schema | None:
    ''' Returns arguments schema of parameters, or None if not sure.

        Equal to what pydantic generates for a model with one field per
        parameter (extra fields forbidden), after titles are removed and
        descriptions stripped.
    '''
    properties: _Schema = { }
    required: list[ str ] = [ ]
    definitions: _Definitions = { }
    for name, annotation, default, description in parameters:
        if name in _ORDERED_KEYS: return None
        schema = _derive_parameter(
            annotation, default, description, definitions )
        if schema is None: return None
        properties[ name ] = _sort( schema, name )
        if default is _EMPTY: required.append( name )
    schema_: _Schema = { }
    if definitions:
        schema_[ '$defs' ] = {
            name: _sort( definitions[ name ][ 1 ], name )
            for name in sorted( definitions ) }
    schema_[ 'additionalProperties' ] = False
    schema_[ 'properties' ] = properties
    if required: schema_[ 'required' ] = required
    schema_[ 'type' ] = 'object'
    return schema_


def _derive_parameter(
    annotation: __.typx.Any,
    default: __.typx.Any,
    description: str | None,
    definitions: _Definitions,
) -> _Schema | None:
    base, constraints, described = _unwrap_annotated( annotation )
    if constraints is None: return None
    schema = _derive( base, definitions )
    if schema is None: return None
    if constraints and not _constrain( schema, base, constraints ):
        return None
    if description is None: description = described
    if description is not None: schema[ 'description' ] = description.strip( )
    if default is not _EMPTY:
        encoded = _encode_default( default )
        if encoded is _EMPTY: return None
        schema[ 'default' ] = encoded
    return schema


def _derive( # noqa: PLR0911
    annotation: __.typx.Any, definitions: _Definitions
) -> _Schema | None:
    ''' Returns schema of annotation, or None if not sure. '''
    if annotation is None: return { 'type': 'null' }
    if annotation is __.typx.Any or annotation is object: return { }
    if _is_model( annotation ):
        return _refer( annotation, definitions, _define_model )
    if _is_class( annotation ):
        scalar = _SCALARS.get( annotation )
        if scalar is not None: return { 'type': scalar }
        formatted = _FORMATS.get(
            ( annotation.__module__, annotation.__qualname__ ) )
        if formatted is not None:
            return { 'format': formatted, 'type': 'string' }
        if issubclass( annotation, __.enum.Enum ):
            return _refer( annotation, definitions, _define_enumeration )
        return _derive_container( annotation, ( ), definitions )
    origin = __.typx.get_origin( annotation )
    if origin is None: return None
    arguments = __.typx.get_args( annotation )
    if origin in _UNIONS: return _derive_union( arguments, definitions )
    if origin is __.typx.Literal: return _derive_literal( arguments )
    if not arguments: return None # bare List, Tuple[ () ]: ambiguous
    return _derive_container( origin, arguments, definitions )


def _is_class( annotation: object ) -> bool:
    ''' Returns whether annotation is a class, not a generic alias (which
        Python 3.10 takes for a class too: ``list[ str ]``).
    '''
    return isinstance( annotation, type ) and not isinstance(
        annotation, __.types.GenericAlias )


def _derive_container(
    origin: __.typx.Any,
    arguments: tuple[ __.typx.Any, ... ],
    definitions: _Definitions,
) -> _Schema | None:
    if origin is dict: return _derive_mapping( arguments, definitions )
    if origin not in _ARRAYS: return None
    if origin is tuple and arguments:
        return _derive_tuple( arguments, definitions )
    if len( arguments ) > 1: return None
    items = _derive( arguments[ 0 ], definitions ) if arguments else { }
    if items is None: return None
    schema: _Schema = { 'items': items, 'type': 'array' }
    if origin is set or origin is frozenset: schema[ 'uniqueItems' ] = True
    return schema


def _define_enumeration(
    enumeration: type[ __.enum.Enum ], definitions: _Definitions
) -> bool:
    ''' Adds definition of enumeration (titled, as pydantic makes it);
        returns whether it could.
    '''
    if issubclass( enumeration, __.enum.Flag ): return False
    values = [ member.value for member in enumeration.__members__.values( ) ]
    if not values or not all(
        type( value ) in _ENUMERATION_KINDS for value in values
    ): return False
    name = enumeration.__name__
    schema: _Schema = { 'enum': values, 'title': name }
    documentation = enumeration.__doc__
    if documentation:
        description = __.inspect.cleandoc( documentation )
        if description != 'An enumeration.':
            schema[ 'description' ] = description
    kinds: set[ type ] = { type( value ) for value in values }
    if len( kinds ) == 1: schema[ 'type' ] = _SCALARS[ kinds.pop( ) ]
    definitions[ name ] = ( enumeration, schema )
    return True


def _define_model(
    model: type[ __.typx.Any ], definitions: _Definitions
) -> bool:
    ''' Adds definition of pydantic model with the models it holds (as
        pydantic's schema of the model gives them); returns whether it
        could.
    '''
    try: schema: _Schema = model.model_json_schema( )
    except Exception: return False
    # A recursive model refers to itself: left to pydantic.
    if '$ref' in schema: return False
    name = model.__name__
    held: _Schema = schema.pop( '$defs', { } )
    if name in held or any( key in definitions for key in held ):
        return False
    for key, body in held.items( ): definitions[ key ] = ( None, body )
    definitions[ name ] = ( model, schema )
    return True


def _refer(
    kind: type[ __.typx.Any ],
    definitions: _Definitions,
    define: __.cabc.Callable[ [ type[ __.typx.Any ], _Definitions ], bool ],
) -> _Schema | None:
    ''' Returns reference to definition of class, which define adds
        unless definitions hold it; None if not sure.
    '''
    name = kind.__name__
    # pydantic rewrites other characters in the names of definitions.
    if not _name_definition.match( name ): return None
    known = definitions.get( name )
    if known is None:
        if not define( kind, definitions ): return None
    elif known[ 0 ] is not kind: return None
    return { '$ref': f"#/$defs/{name}" }


def _derive_literal(
    values: tuple[ __.typx.Any, ... ]
) -> _Schema | None:
    kinds: set[ type ] = { type( value ) for value in values }
    if not values or not kinds <= _LITERAL_KINDS: return None
    expected = list( values )
    schema: _Schema = (
        { 'const': expected[ 0 ] } if len( expected ) == 1
        else { 'enum': expected } )
    if len( kinds ) == 1: schema[ 'type' ] = _LITERAL_TYPES[ kinds.pop( ) ]
    return schema


def _derive_mapping(
    arguments: tuple[ __.typx.Any, ... ], definitions: _Definitions
) -> _Schema | None:
    if not arguments:
        return { 'additionalProperties': True, 'type': 'object' }
    if len( arguments ) != 2 or arguments[ 0 ] is not str: return None # noqa: PLR2004
    values = _derive( arguments[ 1 ], definitions )
    if values is None: return None
    return { 'additionalProperties': values or True, 'type': 'object' }


def _derive_tuple(
    arguments: tuple[ __.typx.Any, ... ], definitions: _Definitions
) -> _Schema | None:
    if len( arguments ) == 2 and arguments[ 1 ] is Ellipsis: # noqa: PLR2004
        items = _derive( arguments[ 0 ], definitions )
        if items is None: return None
        return { 'items': items, 'type': 'array' }
    if Ellipsis in arguments: return None
    prefix: list[ _Schema ] = [ ]
    for argument in arguments:
        item = _derive( argument, definitions )
        if item is None: return None
        prefix.append( item )
    return {
        'maxItems': len( prefix ), 'minItems': len( prefix ),
        'prefixItems': prefix, 'type': 'array' }


def _derive_union(
    arguments: tuple[ __.typx.Any, ... ], definitions: _Definitions
) -> _Schema | None:
    ''' Returns schema of union as pydantic makes it: ``None`` members
        become one null schema at the end; equal schemas appear once.
    '''
    choices: list[ _Schema ] = [ ]
    nullable = False
    for argument in arguments:
        if argument is None or argument is type( None ):
            nullable = True
            continue
        choice = _derive( argument, definitions )
        if choice is None: return None
        choices.append( choice )
    if nullable:
        if len( choices ) == 1 and choices[ 0 ] == { 'type': 'null' }:
            return choices[ 0 ]
        choices.append( { 'type': 'null' } )
    members: list[ _Schema ] = [ ]
    for choice in choices:
        if len( choice ) == 1 and 'anyOf' in choice:
            members.extend( choice[ 'anyOf' ] )
        else: members.append( choice )
    unique = list( {
        _hash_json( member ): member for member in members }.values( ) )
    if len( unique ) == 1: return unique[ 0 ]
    return { 'anyOf': unique }


def _constrain(
    schema: _Schema,
    base: __.typx.Any,
    constraints: __.cabc.Sequence[ tuple[ str, object ] ],
) -> bool:
    ''' Adds constraints to schema of base; False if not sure how. '''
    kind = __.typx.get_origin( base ) or base
    if base is int or base is float: keywords = _CONSTRAINTS_NUMBER
    elif base is str: keywords = _CONSTRAINTS_STRING
    elif kind is dict: keywords = _CONSTRAINTS_OBJECT
    elif kind in _ARRAYS and 'prefixItems' not in schema:
        keywords = _CONSTRAINTS_ARRAY
    else: return False
    for label, value in constraints:
        keyword = keywords.get( label )
        if keyword is None: return False
        if base is int and type( value ) is float: return False
        schema[ keyword ] = value
    return True


def _encode_default( value: __.typx.Any ) -> __.typx.Any: # noqa: PLR0911
    ''' Returns default as pydantic writes it in JSON Schema; ``_EMPTY``
        if not plain JSON (pydantic then encodes it).
    '''
    kind: type[ object ] = type( __.typx.cast( object, value ) )
    if value is None or kind is str or kind is int or kind is bool:
        return value
    if kind is float:
        return value if __.math.isfinite( value ) else _EMPTY
    if kind is list or kind is tuple:
        return _encode_items( value )
    if kind is set or kind is frozenset:
        if len( value ) < 2: return _encode_items( value ) # noqa: PLR2004
        try: ordered = sorted( value )
        except TypeError: return _EMPTY
        return _encode_items( ordered )
    if isinstance( value, __.enum.Enum ) and not isinstance(
        value, __.enum.Flag
    ):
        member = __.typx.cast( __.enum.Enum, value )
        if type( member.value ) in _ENUMERATION_KINDS:
            return _encode_default( member.value )
        return _EMPTY
    if kind is dict:
        return _encode_mapping(
            __.typx.cast( dict[ __.typx.Any, __.typx.Any ], value ) )
    return _EMPTY


def _encode_mapping( value: dict[ __.typx.Any, __.typx.Any ] ) -> __.typx.Any:
    encoded: dict[ str, __.typx.Any ] = { }
    for key, item in value.items( ):
        if type( key ) is not str: return _EMPTY
        encoded[ key ] = _encode_default( item )
        if encoded[ key ] is _EMPTY: return _EMPTY
    return encoded


def _encode_items( items: __.cabc.Iterable[ __.typx.Any ] ) -> __.typx.Any:
    encoded: list[ __.typx.Any ] = [ ]
    for item in items:
        item_ = _encode_default( item )
        if item_ is _EMPTY: return _EMPTY
        encoded.append( item_ )
    return encoded


def _is_model( annotation: object ) -> __.typx.TypeIs[ type[ __.typx.Any ] ]:
    ''' Returns whether annotation is a pydantic model class. '''
    # No pydantic model can exist before pydantic is imported.
    main = __.sys.modules.get( 'pydantic.main' )
    return (
        main is not None and isinstance( annotation, type )
        and issubclass( annotation, main.BaseModel ) )


def _hash_json( value: __.typx.Any ) -> __.typx.Any:
    ''' Returns hashable form of JSON value, for comparisons. '''
    if isinstance( value, dict ):
        items = __.typx.cast( dict[ str, __.typx.Any ], value )
        return tuple( sorted(
            ( key, _hash_json( item ) ) for key, item in items.items( ) ) )
    if isinstance( value, list ):
        return tuple(
            _hash_json( item )
            for item in __.typx.cast( list[ __.typx.Any ], value ) )
    return value


def _sort( value: __.typx.Any, parent: str | None ) -> __.typx.Any:
    ''' Returns value with keys sorted as pydantic sorts them. '''
    if isinstance( value, dict ):
        items = __.typx.cast( dict[ str, __.typx.Any ], value )
        keys = items.keys( ) if parent in _ORDERED_KEYS else sorted( items )
        return { key: _sort( items[ key ], key ) for key in keys }
    if isinstance( value, list ):
        return [
            _sort( item, parent )
            for item in __.typx.cast( list[ __.typx.Any ], value ) ]
    return value


def _unwrap_annotated(
    annotation: __.typx.Any
) -> tuple[
    __.typx.Any, list[ tuple[ str, object ] ] | None, str | None
]:
    ''' Returns annotation without ``Annotated``, the constraints of its
        pydantic fields (None if some metadata is not understood) and
        their description.
    '''
    if annotation is _EMPTY: return __.typx.Any, [ ], None
    if __.typx.get_origin( annotation ) is not __.typx.Annotated:
        return annotation, [ ], None
    base, *metadata = __.typx.get_args( annotation )
    constraints: list[ tuple[ str, object ] ] = [ ]
    description: str | None = None
    for item in metadata:
        if isinstance( item, __.ddoc.Doc ): continue
        field = _survey_field( item )
        if field is None: return base, None, None
        constraints_, description_ = field
        constraints.extend( constraints_ )
        if description_ is not None: description = description_
    return base, constraints, description


def _survey_field(
    item: object
) -> tuple[ list[ tuple[ str, object ] ], str | None ] | None:
    ''' Returns constraints and description of a pydantic field (None if
        not a field, or one with more than these).
    '''
    # No pydantic field can exist before pydantic is imported.
    fields = __.sys.modules.get( 'pydantic.fields' )
    if fields is None or type( item ) is not fields.FieldInfo: return None
    attributes: dict[ str, object ] = getattr( item, '_attributes_set', { } )
    if not set( attributes ) <= { 'description' }: return None
    description = attributes.get( 'description' )
    if description is not None and type( description ) is not str:
        return None
    constraints: list[ tuple[ str, object ] ] = [ ]
    for constraint in getattr( item, 'metadata', ( ) ):
        surveyed = _survey_constraint( constraint )
        if surveyed is None: return None
        constraints.append( surveyed )
    return constraints, __.typx.cast( str | None, description )


def _survey_constraint( constraint: object ) -> tuple[ str, object ] | None:
    ''' Returns label and value of a constraint which pydantic writes as
        one JSON Schema keyword, or None.
    '''
    label = type( constraint ).__name__
    module = type( constraint ).__module__
    if module == 'annotated_types' and label in _CONSTRAINTS_ATTRIBUTES:
        value = getattr( constraint, _CONSTRAINTS_ATTRIBUTES[ label ] )
        if label not in _CONSTRAINTS_NUMBER:
            valid = type( value ) is int and value >= 0
        else:
            valid = type( value ) is int or (
                type( value ) is float and __.math.isfinite( value ) )
        return ( label, value ) if valid else None
    if label == '_PydanticGeneralMetadata':
        values: dict[ str, object ] = dict( vars( constraint ) )
        pattern = values.get( 'pattern' )
        if set( values ) == { 'pattern' } and type( pattern ) is str:
            return 'pattern', pattern
    return None
