# SPDX-License-Identifier: Apache-2.0

''' Invokers which wrappers offer: delegates of the tools of inner
    ensembles, under other names or descriptions.
'''


import invocables.__ as __
import invocables.canisters as _canisters
import invocables.execution.deduplicators as _deduplicators
import invocables.ensembles as _ensembles
import invocables.invokers as _invokers


class DelegateInvoker( __.immut.Object ):
    ''' Invoker which runs another under another name or description.

        Validation and invocation go to the inner invoker, under its own
        name: an MCP tool is called by the name its server gave it.
    '''

    def __init__(
        self,
        inner: _invokers.Invoker,
        *,
        name: __.Absential[ str ] = __.absent,
        description: __.Absential[ str ] = __.absent,
        ensemble: __.Absential[ _ensembles.Ensemble ] = __.absent,
    ):
        self.inner = inner
        self.name = inner.name if __.is_absent( name ) else name
        self.description = (
            inner.description if __.is_absent( description )
            else description )
        self.ensemble = (
            inner.ensemble if __.is_absent( ensemble ) else ensemble )

    def __getattr__( self, name: str ) -> __.typx.Any:
        # Tools read attributes of their own invoker from the context (the
        # io tools, its roots): those of the inner invoker are given. Not
        # private ones: the immutability machinery keeps its state there,
        # and a delegate of a delegate would read the inner's as its own.
        if name == 'inner' or name.startswith( '_' ):
            raise AttributeError( name )
        return getattr( self.inner, name )

    def __repr__( self ) -> str:
        return "{cls}( name = {name!r}, inner = {inner!r} )".format(
            cls = type( self ).__name__, name = self.name,
            inner = self.inner )

    @property
    def arguments_schema( self ) -> __.Schema:
        ''' JSON Schema of arguments of inner invoker. '''
        return self.inner.arguments_schema

    @property
    def invocable( self ) -> _invokers.Invocable:
        ''' Invocable of inner invoker. '''
        return self.inner.invocable

    @property
    def timeout( self ) -> __.Absential[ float | None ]:
        ''' Timeout of inner invoker. '''
        return self.inner.timeout

    @property
    def deduplicator(
        self
    ) -> __.Absential[ _deduplicators.Deduplicator ]:
        ''' Deduplicator of inner invoker. '''
        return self.inner.deduplicator

    @property
    def annotations( self ) -> _invokers.Annotations:
        ''' Annotations of inner invoker. '''
        return self.inner.annotations

    @property
    def outschema( self ) -> __.Absential[ __.Schema ]:
        ''' JSON Schema of structured results of inner invoker. '''
        return self.inner.outschema

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid for inner invoker. '''
        return self.inner.validate_arguments( arguments )

    def with_ensemble( self, ensemble: _ensembles.Ensemble ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to named ensemble. '''
        return type( self )(
            self.inner, name = self.name, description = self.description,
            ensemble = ensemble )

    async def __call__(
        self, context: _invokers.Context, arguments: __.Arguments
    ) -> _canisters.ContentSequence:
        return await self.inner( context, arguments )
