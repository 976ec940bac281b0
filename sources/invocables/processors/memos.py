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

    At most :py:data:`ADAPTATIONS_MAXIMUM` adaptations are remembered, the
    least recently used forgotten first. A schema which a dialect cannot
    take is not remembered, so that its warning is given at every call.
'''


from . import __


ADAPTATIONS_MAXIMUM = 65_536

_Adaptation: __.typx.TypeAlias = tuple[ object, __.typx.Any ]

_adaptations: __.collections.OrderedDict[
    tuple[ int, str ], _Adaptation ] = __.collections.OrderedDict( )


def adapt_schema_once(
    schema: __.Schema,
    dialect: str,
    adapter: __.cabc.Callable[ [ ], __.typx.Any ],
) -> __.typx.Any:
    ''' Returns adaptation of schema to dialect, remembered if made before.

        The adapter makes the adaptation when none is remembered; ``None``
        from it (the tool is left out) is never remembered.
    '''
    key = ( id( schema ), dialect )
    entry = _adaptations.get( key )
    if entry is not None and entry[ 0 ] is schema:
        _adaptations.move_to_end( key )
        return entry[ 1 ]
    adapted = adapter( )
    if adapted is None: return None
    _adaptations[ key ] = ( schema, adapted )
    if len( _adaptations ) > ADAPTATIONS_MAXIMUM:
        _adaptations.popitem( last = False )
    return adapted
