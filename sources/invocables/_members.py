# SPDX-License-Identifier: Apache-2.0

''' Members of ensembles: invokers from what an application gives.

    An ensemble takes invokers, objects written after the design documents'
    invoker protocol (a name, an invocable and an argument schema), and
    typed functions, of which :py:func:`invocables.produce_invoker` makes
    invokers.
'''


import invocables.__ as __
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.signatures as _signatures


_INVOKER_MEMBERS = ( 'name', 'validate_arguments', 'with_ensemble' )
_INVOKER_MEMBERS_DOCUMENTED = ( 'name', 'invocable', 'arguments_schema' )


def produce_member( item: object ) -> _invokers.Invoker:
    ''' Returns item if an invoker, else invoker of item if callable. '''
    if _is_invoker( item ):
        # Members checked above; protocols have no complete runtime check.
        return __.typx.cast( _invokers.Invoker, item )
    if _is_invoker_documented( item ):
        return _produce_invoker_documented( item )
    if callable( item ): return _signatures.produce_invoker( item )
    raise _exceptions.InvokerInvalidity(
        repr( item ), "an ensemble takes invokers or callables only." )


def survey_members(
    name: str,
    invokers: __.cabc.Iterable[ _invokers.Invoker ]
    | __.cabc.Mapping[ str, _invokers.Invoker ],
) -> tuple[ _invokers.Invoker, ... ]:
    ''' Returns invokers; those of a mapping must be under their names. '''
    if not isinstance( invokers, __.cabc.Mapping ):
        return tuple( produce_member( item ) for item in invokers )
    mapping = __.typx.cast( __.cabc.Mapping[ str, object ], invokers )
    members: list[ _invokers.Invoker ] = [ ]
    for key, item in mapping.items( ):
        invoker = produce_member( item )
        members.append( invoker )
        if key == invoker.name: continue
        raise _exceptions.EnsemblesInvalidity(
            f"ensemble {name!r} holds tool {invoker.name!r} under the key "
            f"{key!r}; use the tool's name as its key." )
    return tuple( members )


def _is_invoker( value: object ) -> bool:
    return all( hasattr( value, name ) for name in _INVOKER_MEMBERS ) and (
        hasattr( value, 'arguments_schema' ) )


def _is_invoker_documented( value: object ) -> bool:
    ''' Returns whether value has the members of the documents' invoker. '''
    return all(
        hasattr( value, name ) for name in _INVOKER_MEMBERS_DOCUMENTED )


def _produce_invoker_documented( value: __.typx.Any ) -> _invokers.Invoker:
    ''' Returns invoker of object written after the documents' protocol.

        Such an object has a name, an invocable and an argument schema
        (perhaps a description and a deduplicator), and none of the
        library's further members; its invocable is what runs.
    '''
    deduplicator = getattr( value, 'deduplicator', None )
    description = getattr( value, 'description', '' )
    return _invokers.FunctionInvoker(
        name = value.name, invocable = value.invocable,
        arguments_schema = value.arguments_schema,
        description = description if isinstance( description, str ) else '',
        deduplicator = __.absent if deduplicator is None else deduplicator )
