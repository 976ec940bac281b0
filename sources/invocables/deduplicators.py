# SPDX-License-Identifier: Apache-2.0

''' Deduplication of repeated invocations.

    Opt-in per invoker, for tools which are safe to repeat: an invocation
    whose signature equals that of an earlier successful invocation in the
    same conversation namespace reuses its result, and identical invocations
    in flight at the same moment run once.
'''


from . import __


class Deduplicator( __.typx.Protocol ):
    ''' Decides which invocations repeat one another.

        Two invocations are duplicates when their signatures are equal.
    '''

    def produce_signature(
        self, name: str, arguments: __.Arguments
    ) -> __.cabc.Hashable:
        ''' Returns signature of invocation for comparison. '''
        raise NotImplementedError  # pragma: no cover


class ExactDeduplicator( __.immut.DataclassObject ):
    ''' Duplicates have the same name and canonically equal arguments.

        Canonical JSON: keys sorted, no insignificant whitespace.
    '''

    def produce_signature(
        self, name: str, arguments: __.Arguments
    ) -> __.cabc.Hashable:
        ''' Returns name and canonical JSON of arguments. '''
        return ( name, produce_canonical_json( arguments ) )


def produce_canonical_json( value: object ) -> str:
    ''' Returns canonical JSON text of value (sorted keys, compact). '''
    return __.json.dumps(
        value, sort_keys = True, separators = ( ',', ':' ),
        ensure_ascii = False, default = _serialize_default )


def _serialize_default( value: object ) -> object:
    if isinstance( value, __.cabc.Mapping ):
        return dict( __.typx.cast( __.cabc.Mapping[ str, object ], value ) )
    if isinstance( value, ( tuple, set, frozenset ) ):
        return list( __.typx.cast( __.cabc.Iterable[ object ], value ) )
    raise TypeError(
        f"Value of type {type( value ).__name__} is not JSON-compatible." )
