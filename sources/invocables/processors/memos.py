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

    At most :py:data:`ADAPTATIONS_MAXIMUM` adaptations are remembered per
    dialect, the least recently used forgotten first. A schema which a
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
    adaptations = _adaptations.get( dialect )
    originals = _originals.get( dialect )
    if adaptations is None or originals is None:
        adaptations = _adaptations.setdefault(
            dialect, __.collections.OrderedDict( ) )
        originals = _originals.setdefault( dialect, { } )
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
    producer: __.cabc.Callable[ [ ], __.cabc.Iterable[ Recipe | None ] ],
) -> Recipes:
    ''' Returns recipes of tool list, by column, remembered if made before.

        Remembered per nomenclature (weakly: forgotten with it) and per
        processor options. The producer gives one recipe per tool (all of
        one length), ``None`` for a tool left out; they are kept as columns
        (the names, the descriptions, the schemas ...), so that thousands
        of tools leave a few tuples, not one each, for the collector. A
        list made while some adaptation was refused (a warning was given)
        is returned but not remembered. No tools: no columns.
    '''
    entries = _recipes.get( nomenclature )
    if entries is not None:
        recipes = entries.get( options )
        if recipes is not None: return recipes
    refusals = _refusals
    columns: list[ list[ __.typx.Any ] ] = [ ]
    for recipe in producer( ):
        if recipe is None: continue
        if not columns: columns = [ [ ] for _ in recipe ]
        for column, value in zip( columns, recipe, strict = True ):
            column.append( value )
    recipes = tuple( tuple( column ) for column in columns )
    if refusals != _refusals: return recipes
    if entries is None:
        entries = _recipes.setdefault( nomenclature, { } )
    entries[ options ] = recipes
    return recipes


def _count_refusal( ) -> None:
    global _refusals # noqa: PLW0603
    with _refusals_lock: _refusals += 1
