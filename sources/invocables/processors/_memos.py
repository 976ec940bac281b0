# SPDX-License-Identifier: Apache-2.0

''' Memory of schemas adapted to provider dialects.

    Adapting a schema to a dialect copies it whole (and, for some dialects,
    rewrites it): the main cost of ``prepare_tools``, which applications
    call before every request. Each adaptation is remembered, by identity of
    the original schema (schemas of invokers are immutable) and the dialect,
    so that a repeated ``prepare_tools`` on the same tools only assembles
    fresh tool containers around the remembered schemas.

    The adapted schemas are therefore shared between calls: callers may
    change the tool containers which ``prepare_tools`` returns (add
    ``cache_control``, say) but must copy a schema before changing it.

    Where every adaptation of a list would be a copy of a plain root, the
    processors take the root copies made when the tools were made
    (:py:func:`invocables.dialects.share_plain_roots`), shared the same
    way, and remember nothing here.

    The adaptations of a whole tool list are looked up, made and remembered
    in bulk (:py:func:`adapt_schemas_once`): a first list costs a few passes
    over the tools, not a call per tool. At most
    :py:data:`ADAPTATIONS_MAXIMUM` adaptations are remembered per dialect,
    the least recently used forgotten first. A schema which a
    dialect cannot take is not remembered, so that its warning is given at
    every call.

    Above the schemas, each processor's recipes for a whole tool list (the
    arguments of its ``produce_tool`` for each tool) are remembered per
    nomenclature (see :py:mod:`invocables.naming`: a new one whenever an
    ensemble's tools change) and per processor options: a repeated
    ``prepare_tools`` on unchanged ensembles only assembles the list. A list
    in which some tool was refused, or offered without strict mode, is not
    remembered, so that its warnings are given at every call.
'''


import threading as _threading
import weakref as _weakref

from . import __


Recipe: __.typx.TypeAlias = tuple[ __.typx.Any, ... ]
Recipes: __.typx.TypeAlias = tuple[ tuple[ __.typx.Any, ... ], ... ]

ADAPTATIONS_MAXIMUM = 65_536

# Per dialect, by identity of schema, the adaptation (least recently used
# first) and the original (which keeps its identity): integer keys and no
# pair per schema, so nothing more for the collector to scan.
_adaptations: dict[
    str, __.collections.OrderedDict[ int, __.typx.Any ] ] = { }
_originals: dict[ str, dict[ int, object ] ] = { }
_recipes: _weakref.WeakKeyDictionary[
    object, dict[ __.cabc.Hashable, Recipes ] ] = (
        _weakref.WeakKeyDictionary( ) )
_refusals_lock = _threading.Lock( )
_refusals = 0


def adapt_schema_once(
    schema: __.Schema,
    dialect: str,
    adapter: __.cabc.Callable[ [ ], __.typx.Any ],
) -> __.typx.Any:
    ''' Returns adaptation of schema to dialect, remembered if made before.

        The adapter makes the adaptation when none is remembered; ``None``
        from it (the tool is left out) is never remembered.
    '''
    adaptations, originals = _access_memory( dialect )
    key = id( schema )
    if originals.get( key ) is schema:
        adapted = adaptations.get( key )
        if adapted is not None:
            adaptations.move_to_end( key )
            return adapted
    adapted = adapter( )
    if adapted is None:
        _count_refusal( )
        return None
    originals[ key ] = schema
    adaptations[ key ] = adapted
    if len( adaptations ) > ADAPTATIONS_MAXIMUM:
        forgotten, _ = adaptations.popitem( last = False )
        originals.pop( forgotten, None )
    return adapted


def access_recipes(
    nomenclature: object,
    options: __.cabc.Hashable,
    producer: __.cabc.Callable[ [ ], Recipes ],
) -> Recipes:
    ''' Returns recipes of tool list, by column, remembered if made before.

        Remembered per nomenclature (weakly: forgotten with it) and per
        processor options. The producer gives the recipes as columns (the
        names, the descriptions, the schemas ...), so that thousands of
        tools leave a few tuples, not one each, for the collector. A list
        made while some adaptation was refused (a warning was given) is
        returned but not remembered. No tools: no columns.
    '''
    entries = _recipes.get( nomenclature )
    if entries is not None:
        recipes = entries.get( options )
        if recipes is not None: return recipes
    refusals = _refusals
    recipes = producer( )
    if refusals != _refusals: return recipes
    if entries is None:
        entries = _recipes.setdefault( nomenclature, { } )
    entries[ options ] = recipes
    return recipes


def adapt_schemas_once(
    names: __.cabc.Sequence[ str ],
    schemas: __.cabc.Sequence[ __.Schema ],
    dialect: str,
    adapter: __.cabc.Callable[
        [ __.cabc.Sequence[ str ], __.cabc.Sequence[ __.Schema ] ],
        __.cabc.Sequence[ __.typx.Any ],
    ],
) -> list[ __.typx.Any ]:
    ''' Returns adaptations of schemas to dialect, in order, each
        remembered if made before.

        As :py:func:`adapt_schema_once`, for many schemas: the adapter
        takes the names and schemas of those with no adaptation
        remembered and returns theirs (``None`` for each refused), in one
        pass.
    '''
    adaptations, originals = _access_memory( dialect )
    keys = list( map( id, schemas ) )
    if originals.keys( ).isdisjoint( keys ): # none to recall: made at once
        made = list( adapter( names, schemas ) )
        _remember_adaptations( adaptations, originals, keys, schemas, made )
        return made
    adapted: list[ __.typx.Any ] = [ None ] * len( keys )
    missing = _recall_adaptations(
        adaptations, originals, keys, schemas, adapted )
    if not missing: return adapted
    schemas_ = [ schemas[ index ] for index in missing ]
    made = list( adapter( [ names[ index ] for index in missing ], schemas_ ) )
    for index, value in zip( missing, made ): adapted[ index ] = value
    _remember_adaptations(
        adaptations, originals,
        [ keys[ index ] for index in missing ], schemas_, made )
    return adapted


def compose_recipes(
    names: __.cabc.Sequence[ str ],
    descriptions: __.cabc.Sequence[ str ],
    schemas: __.cabc.Sequence[ __.typx.Any ],
    *columns: __.cabc.Sequence[ __.typx.Any ],
) -> Recipes:
    ''' Returns recipes from their columns, leaving out each tool whose
        schema is ``None`` (refused). No tools: no columns.
    '''
    columns_ = ( names, descriptions, schemas, *columns )
    if None in schemas:
        kept = [
            index for index, schema in enumerate( schemas )
            if schema is not None ]
        columns_ = tuple(
            [ column[ index ] for index in kept ] for column in columns_ )
    if not columns_[ 0 ]: return ( )
    return tuple( map( tuple, columns_ ) )


def transpose_recipes(
    recipes: __.cabc.Iterable[ Recipe | None ]
) -> Recipes:
    ''' Returns recipes of tools (one tuple per tool, all of one length,
        ``None`` for a tool left out) as columns. No tools: no columns.
    '''
    columns: list[ list[ __.typx.Any ] ] = [ ]
    for recipe in recipes:
        if recipe is None: continue
        if not columns: columns = [ [ ] for _ in recipe ]
        for column, value in zip( columns, recipe, strict = True ):
            column.append( value )
    return tuple( tuple( column ) for column in columns )


def _access_memory( dialect: str ) -> tuple[
    __.collections.OrderedDict[ int, __.typx.Any ], dict[ int, object ]
]:
    adaptations = _adaptations.get( dialect )
    originals = _originals.get( dialect )
    if adaptations is None or originals is None:
        adaptations = _adaptations.setdefault(
            dialect, __.collections.OrderedDict( ) )
        originals = _originals.setdefault( dialect, { } )
    return adaptations, originals


def _count_refusal( ) -> None:
    global _refusals # noqa: PLW0603
    with _refusals_lock: _refusals += 1


def _recall_adaptations(
    adaptations: __.collections.OrderedDict[ int, __.typx.Any ],
    originals: dict[ int, object ],
    keys: list[ int ],
    schemas: __.cabc.Sequence[ __.Schema ],
    adapted: list[ __.typx.Any ],
) -> list[ int ]:
    ''' Fills in remembered adaptations; returns positions of others. '''
    missing: list[ int ] = [ ]
    for index, key in enumerate( keys ):
        if originals.get( key ) is schemas[ index ]:
            value = adaptations.get( key )
            if value is not None:
                adaptations.move_to_end( key )
                adapted[ index ] = value
                continue
        missing.append( index )
    return missing


def _remember_adaptations(
    adaptations: __.collections.OrderedDict[ int, __.typx.Any ],
    originals: dict[ int, object ],
    keys: __.cabc.Sequence[ int ],
    schemas: __.cabc.Sequence[ __.Schema ],
    adapted: list[ __.typx.Any ],
) -> None:
    ''' Remembers adaptations made, in bulk; counts the refused ones. '''
    if None in adapted:
        kept = [
            index for index, value in enumerate( adapted )
            if value is not None ]
        for _ in range( len( adapted ) - len( kept ) ): _count_refusal( )
        keys = [ keys[ index ] for index in kept ]
        schemas = [ schemas[ index ] for index in kept ]
        adapted = [ adapted[ index ] for index in kept ]
    originals.update( zip( keys, schemas ) )
    adaptations.update( zip( keys, adapted ) )
    while len( adaptations ) > ADAPTATIONS_MAXIMUM:
        forgotten, _ = adaptations.popitem( last = False )
        originals.pop( forgotten, None )
