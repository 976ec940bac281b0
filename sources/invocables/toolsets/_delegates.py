# SPDX-License-Identifier: Apache-2.0

''' Invokers which wrappers offer: delegates of the tools of inner
    ensembles, under other names or descriptions, and the invokers of
    pinned snapshots, with the annotations which rules must see.
'''


import invocables.__ as __
import invocables.canisters as _canisters
import invocables.execution.deduplicators as _deduplicators
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
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
    def annotations( # pyright: ignore[reportIncompatibleVariableOverride]
        self
    ) -> _invokers.Annotations:
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


# Hints of MCP tool annotations: wire name and default, by the MCP
# specification (a tool which says nothing may destroy and reach out). The
# defaults are also the cautious values: what a rule must assume.
HINTS = __.types.MappingProxyType( {
    'read_only': ( 'readOnlyHint', False ),
    'destructive': ( 'destructiveHint', True ),
    'idempotent': ( 'idempotentHint', False ),
    'open_world': ( 'openWorldHint', True ),
} )


class PinnedInvoker( _invokers.FunctionInvoker ):
    ''' Invoker of a pinned snapshot, which calls the inner tool.

        Name, description and schemas are the pinned ones: a pin guards
        what the model is offered against drift. Annotations are not the
        server's to relax behind the pin, nor to hide: while the inner
        ensemble offers the tool, each hint is the more cautious of the
        pinned and the live one (destructive if either says so, read-only
        only if both do), so that rules see a tool which its server has
        made destructive since, and a pin which marks a tool more
        cautiously than its server keeps doing so.
    '''

    def __init__(
        self,
        *,
        source: _ensembles.Ensemble,
        origin: __.Absential[ str ] = __.absent,
        **arguments: __.typx.Any,
    ):
        self.source = source
        # The name which the innermost source gives the tool: its identity.
        self.origin: str = (
            arguments[ 'name' ] if __.is_absent( origin ) else origin )
        # Memo: the live annotations last merged, and the merge.
        self.merger: list[ __.typx.Any ] = [ None, None ]
        super( ).__init__( **arguments )

    @property
    def annotations( # pyright: ignore[reportIncompatibleVariableOverride]
        self
    ) -> _invokers.Annotations:
        ''' Annotations pinned, as cautious as the live tool's. '''
        pinned: _invokers.Annotations = vars( self )[ 'annotations' ]
        live = self._access_live_annotations( )
        if live is None: return pinned
        merger = self.merger
        if merger[ 0 ] is not live:
            merger[ 1 ] = __.immut.Dictionary[ str, __.typx.Any ](
                merge_annotations( pinned, live ) )
            merger[ 0 ] = live
        return merger[ 1 ]

    def with_ensemble( self, ensemble: _ensembles.Ensemble ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to ensemble. '''
        return type( self )(
            source = self.source, origin = self.origin, name = self.name,
            invocable = self.invocable,
            arguments_schema = self.arguments_schema,
            description = self.description, ensemble = ensemble,
            timeout = self.timeout, max_retries = self.max_retries,
            deduplicator = self.deduplicator,
            annotations = vars( self )[ 'annotations' ],
            outschema = self.outschema, validator = self.validator )

    def _access_live_annotations( self ) -> _invokers.Annotations | None:
        # Not connected (an MCP server), or no longer offered: the pinned.
        try: return self.source.access_invoker( self.name ).annotations
        except (
            _exceptions.ConnectionAbsence, _exceptions.InvokerAbsence
        ): return None


def access_source_name( invoker: _invokers.Invoker ) -> str:
    ''' Returns name of tool as its innermost source names it, through
        every rename, prefix and pin.
    '''
    while isinstance( invoker, DelegateInvoker ): invoker = invoker.inner
    if isinstance( invoker, PinnedInvoker ): return invoker.origin
    return invoker.name


def survey_identity_names( invoker: _invokers.Invoker ) -> tuple[ str, ... ]:
    ''' Returns every name of tool, offered name first: through every
        rename, prefix and pin, each name a wrapper gives it, and the name
        of its source last.
    '''
    names = [ invoker.name ]
    while isinstance( invoker, DelegateInvoker ):
        invoker = invoker.inner
        names.append( invoker.name )
    if isinstance( invoker, PinnedInvoker ): names.append( invoker.origin )
    return tuple( dict.fromkeys( names ) )


def access_hint(
    hints: __.cabc.Mapping[ str, __.typx.Any ], key: str
) -> bool:
    ''' Returns hint of annotations, with the MCP default if not given.

        Keys are ``read_only``, ``destructive``, ``idempotent``,
        ``open_world``; annotations may use them or MCP's names
        (``readOnlyHint`` ...). A read-only tool is never destructive.
    '''
    wire, default = HINTS[ key ]
    value = hints.get( wire, hints.get( key ) )
    if isinstance( value, bool ): return value
    if key == 'destructive' and access_hint( hints, 'read_only' ):
        return False
    return default


def merge_annotations(
    pinned: __.cabc.Mapping[ str, __.typx.Any ],
    live: __.cabc.Mapping[ str, __.typx.Any ],
) -> dict[ str, __.typx.Any ]:
    ''' Returns pinned annotations with each hint the more cautious.

        A hint which either says something about is given, under its MCP
        name, as the cautious value (the MCP default) if either side's
        value is it; other keys are the pinned ones, else the live ones.
    '''
    merged = { **live, **pinned }
    for key, ( wire, cautious ) in HINTS.items( ):
        said = [
            hints for hints in ( pinned, live )
            if wire in hints or key in hints ]
        if not said: continue
        merged.pop( key, None )
        values = ( access_hint( pinned, key ), access_hint( live, key ) )
        merged[ wire ] = cautious if cautious in values else not cautious
    return merged


def produce_pinned_invoker(
    source: _ensembles.Ensemble,
    invoker: _invokers.Invoker,
    ensemble: _ensembles.Ensemble,
) -> PinnedInvoker:
    ''' Produces invoker of snapshot which calls source tool of its name.
    '''
    name = invoker.name
    # Not a member of the Invoker protocol; function invokers have it.
    retries: object = getattr( invoker, 'max_retries', __.absent )

    async def invoke(
        context: _invokers.Context, arguments: __.Arguments
    ) -> object:
        inner = source.access_invoker( name )
        return list( await inner( context, arguments ) ) or None

    return PinnedInvoker(
        source = source, origin = access_source_name( invoker ),
        name = name, invocable = invoke,
        arguments_schema = invoker.arguments_schema,
        description = invoker.description, ensemble = ensemble,
        timeout = invoker.timeout,
        max_retries = retries if isinstance( retries, int ) else __.absent,
        deduplicator = invoker.deduplicator,
        annotations = invoker.annotations, outschema = invoker.outschema )
