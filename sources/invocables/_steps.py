# SPDX-License-Identifier: Apache-2.0

''' The bound of repeated work of a validation against a schema.

    A schema whose every part is small may still validate one value
    exponentially long: definitions which each apply the next twice to a
    property, or a recursive definition whose branches each descend,
    double the work at each level of the value, checking the same part of
    the value against the same subschema again and again. Within
    :py:func:`bound`, each keyword which descends into subschemas
    (``$ref``, ``allOf``, ``properties``, ``items`` ...) counts how often
    it checks the same part of the value; past :py:data:`VISITS_MAXIMUM`,
    validation stops with
    :py:class:`invocables.exceptions.ValidationExhaustion`. The work of a
    validation is then at most polynomial in the sizes of value and
    schema. Validations outside a bound are not counted.
'''


import contextlib as _contextlib
import contextvars as _contextvars

import invocables.__ as __
import invocables.exceptions as _exceptions


VISITS_MAXIMUM = 100
''' Most checks of one part of a value by one subschema in one validation:
    alternatives which share definitions repeat a few (a ``oneOf`` of two
    models which each extend a base checks the base twice); work which
    multiplies with the depth of the value repeats thousands. '''

SEPARATED_MAXIMUM = 1_048_576
''' Most dicts, lists and items, counted at every place, of a value whose
    parts stand in several places: past it, a validation which repeats
    itself is refused rather than checked again on copies. '''

# Keywords of Draft 2020-12 which apply subschemas.
_KEYWORDS_DESCENDING = frozenset( (
    '$dynamicRef', '$ref', 'additionalProperties', 'allOf', 'anyOf',
    'contains', 'dependentSchemas', 'if', 'items', 'not', 'oneOf',
    'patternProperties', 'prefixItems', 'properties', 'propertyNames',
    'unevaluatedItems', 'unevaluatedProperties',
) )

# Checks so far of the validation under way, by part of value and schema.
_Visits: __.typx.TypeAlias = dict[ tuple[ int, int, str ], int ]
_visits: _contextvars.ContextVar[ _Visits | None ] = (
    _contextvars.ContextVar( 'invocables.schemata.visits', default = None ) )

_Check: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]


@_contextlib.contextmanager
def bound( ) -> __.cabc.Generator[ None, None, None ]:
    ''' Bounds the repeated work of the validations within: past
        :py:data:`VISITS_MAXIMUM` checks of one part of a value by one
        subschema, they raise
        :py:class:`invocables.exceptions.ValidationExhaustion`.
    '''
    token = _visits.set( { } )
    try: yield
    finally: _visits.reset( token )


def count_steps(
    checks: __.cabc.Mapping[ str, _Check ]
) -> dict[ str, _Check ]:
    ''' Returns keyword checks (of a jsonschema validator), those which
        descend into subschemas counting their checks of each part of the
        value.
    '''
    return {
        keyword: _count( keyword, check )
        if keyword in _KEYWORDS_DESCENDING else check
        for keyword, check in checks.items( ) }


def _count( keyword: str, check: _Check ) -> _Check:
    ''' Returns keyword check which counts its checks of each part of the
        value (both live throughout the validation: their identities
        hold).
    '''

    def check_counted(
        validator: __.typx.Any, value: __.typx.Any,
        instance: __.typx.Any, schema: __.typx.Any,
    ) -> __.typx.Any:
        visits = _visits.get( )
        # Scalars share identities; work repeats through containers.
        if visits is not None and type( instance ) in ( dict, list ):
            key = ( id( instance ), id( schema ), keyword )
            count = visits[ key ] = visits.get( key, 0 ) + 1
            if count > VISITS_MAXIMUM:
                raise _exceptions.ValidationExhaustion
        return check( validator, value, instance, schema )

    return check_counted


def separate(
    value: __.typx.Any, size_maximum: int = SEPARATED_MAXIMUM
) -> __.typx.Any:
    ''' Returns value with a copy of each dict or list for every place past
        the first where it stands; the same value when none stands twice.

        A part which a caller gives in several places (``[ item ] * 300``)
        is checked once for each place, which the bound would take for
        repeated work. Raises
        :py:class:`invocables.exceptions.ValidationExhaustion` when the
        value, with its parts counted at every place, holds more than
        size_maximum dicts, lists and items.
    '''
    seen: set[ int ] = set( )
    size = 0

    def copy( item: __.typx.Any, *, fresh: bool ) -> __.typx.Any:
        nonlocal size
        size += 1
        if size > size_maximum: raise _exceptions.ValidationExhaustion
        genus: type = type( __.typx.cast( object, item ) )
        if genus is not dict and genus is not list: return item
        fresh = fresh or id( item ) in seen
        if not fresh: seen.add( id( item ) )
        if genus is dict:
            mapping = __.typx.cast( dict[ str, __.typx.Any ], item )
            copied = { key: copy( part, fresh = fresh )
                for key, part in mapping.items( ) }
            changed = fresh or any(
                copied[ key ] is not part for key, part in mapping.items( ) )
            return copied if changed else item
        sequence = __.typx.cast( list[ __.typx.Any ], item )
        copied_ = [ copy( part, fresh = fresh ) for part in sequence ]
        changed = fresh or any(
            part_ is not part for part_, part in zip( copied_, sequence ) )
        return copied_ if changed else item

    return copy( value, fresh = False )
