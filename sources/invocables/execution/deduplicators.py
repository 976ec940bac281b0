# SPDX-License-Identifier: Apache-2.0

''' Deduplication of repeated invocations, and caching of their results.

    Opt-in per invoker, for tools which are safe to repeat. A deduplicator
    follows the design documents' protocol: ``is_duplicate( name,
    arguments )`` and ``record( name, arguments )``. The library's own
    strategies, all kinds of :py:class:`ResultCache`, also tell the
    execution engine how to key, keep and share results:

    * :py:class:`ExactDeduplicator`: same name and canonically equal
      arguments; results kept for the conversation.
    * :py:class:`TimeWindowDeduplicator`: the same, within a number of
      seconds; a repeat outside the window runs again.
    * :py:class:`ResultCache`: results kept for a time to live, at most a
      number of them, per conversation namespace or shared by all.
    * :py:class:`SemanticDeduplicator`: arguments compared through a key
      function of the user (case, whitespace, units, ...).

    Within one namespace, identical invocations in flight at the same
    moment run once: the later ones wait for the first, each within its own
    deadline (at which it ends with its own timeout error, while the first
    goes on). If the first is cancelled, which a later one was not, the
    later one runs (or waits for another one which does), with what is
    left of its timeout. A deduplicator of the user's own, with only
    ``is_duplicate`` and ``record``, is consulted before each call and told
    of each successful one; a duplicate reuses the result of an identical
    earlier call, or, if none is known, is answered that it repeats an
    earlier call.
'''


import invocables.__ as __
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions
import invocables.execution.deadlines as _deadlines


Clock: __.typx.TypeAlias = __.cabc.Callable[ [ ], float ]
Key: __.typx.TypeAlias = __.cabc.Callable[
    [ str, __.Arguments ], __.cabc.Hashable ]
Runner: __.typx.TypeAlias = __.cabc.Callable[
    [ ], __.cabc.Awaitable[ _canisters.ResultCanister ] ]
Handler: __.typx.TypeAlias = __.cabc.Callable[
    [ _canisters.InvocationCanister, Exception ], _canisters.ResultCanister ]
_Outcome: __.typx.TypeAlias = tuple[
    _canisters.ContentSequence, __.Absential[ _canisters.Fault ] ]

_STORES_KEY = 'invocables.deduplications'


class Deduplicator( __.typx.Protocol ):
    ''' Detects duplicate invocations (the design documents' protocol). '''

    def is_duplicate( self, name: str, arguments: __.Arguments ) -> bool:
        ''' Returns whether invocation duplicates an earlier one. '''
        raise NotImplementedError  # pragma: no cover

    def record( self, name: str, arguments: __.Arguments ) -> None:
        ''' Records invocation for future duplicate detection. '''
        raise NotImplementedError  # pragma: no cover


class ResultStore:
    ''' Results of invocations by signature, with time to live and bound.

        Least recently used entries go first when the bound is reached.
    '''

    __slots__ = ( 'clock', 'entries', 'maximum', 'seconds' )

    def __init__(
        self,
        seconds: __.Absential[ float ] = __.absent,
        maximum: __.Absential[ int ] = __.absent,
        clock: Clock = __.time.monotonic,
    ):
        self.seconds = seconds
        self.maximum = maximum
        self.clock = clock
        self.entries: __.collections.OrderedDict[
            __.cabc.Hashable,
            tuple[ float, __.asyncio.Future[ _Outcome ] | None ],
        ] = __.collections.OrderedDict( )

    def access(
        self, signature: __.cabc.Hashable
    ) -> tuple[ float, __.asyncio.Future[ _Outcome ] | None ] | None:
        ''' Returns live entry for signature, or None. '''
        entry = self.entries.get( signature )
        if entry is None: return None
        seconds = self.seconds
        if not __.is_absent( seconds ) and (
            self.clock( ) - entry[ 0 ] > seconds
        ):
            del self.entries[ signature ]
            return None
        self.entries.move_to_end( signature )
        return entry

    def assign(
        self,
        signature: __.cabc.Hashable,
        future: __.asyncio.Future[ _Outcome ] | None,
    ) -> None:
        ''' Records entry for signature, now; evicts beyond the bound. '''
        self.entries[ signature ] = ( self.clock( ), future )
        self.entries.move_to_end( signature )
        maximum = self.maximum
        if __.is_absent( maximum ): return
        while len( self.entries ) > maximum:
            self.entries.popitem( last = False )

    def discard(
        self,
        signature: __.cabc.Hashable,
        future: __.asyncio.Future[ _Outcome ],
    ) -> None:
        ''' Forgets entry for signature if it holds future. '''
        entry = self.entries.get( signature )
        if entry is not None and entry[ 1 ] is future:
            del self.entries[ signature ]


class ResultCache( __.immut.DataclassObject ):
    ''' Reuses results of repeated invocations, for a time, within a bound.

        The results live in the conversation namespace by default (each
        conversation has its own), or in the cache itself when ``shared``
        (every conversation which uses the invoker sees them: give it only
        to tools whose results do not depend on who asks). Error results
        are never kept.
    '''

    seconds: __.typx.Annotated[
        __.Absential[ float ],
        __.ddoc.Doc( ''' Time to live of a result, in seconds. Default:
            as long as the conversation (or, shared, the cache). ''' ),
    ] = __.absent
    maximum: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc( ''' Most results kept; the least recently used go
            first. Default: no bound. ''' ),
    ] = __.absent
    shared: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether results are shared by all namespaces. ''' ),
    ] = False
    key: __.typx.Annotated[
        __.Absential[ Key ],
        __.ddoc.Doc( ''' Function of name and arguments giving what makes
            calls equal. Default: name and canonical JSON of arguments. ''' ),
    ] = __.absent
    clock: __.typx.Annotated[
        Clock,
        __.ddoc.Doc( ''' Monotonic clock in seconds (for tests). ''' ),
    ] = __.time.monotonic
    _store: ResultStore = __.dcls.field(
        default_factory = ResultStore, init = False, repr = False,
        compare = False )
    _token: object = __.dcls.field(
        default_factory = object, init = False, repr = False,
        compare = False )

    def __post_init__( self ) -> None:
        _validate_positive( 'seconds', self.seconds, number = True )
        _validate_positive( 'maximum', self.maximum, number = False )
        # The store is made before its bounds are known.
        self._store.seconds = self.seconds
        self._store.maximum = self.maximum
        self._store.clock = self.clock

    def access_store( self, namespace: __.Namespace ) -> ResultStore:
        ''' Returns store of results for namespace (or shared store). '''
        if self.shared: return self._store
        stores: dict[ object, ResultStore ] = namespace.setdefault(
            _STORES_KEY, { } )
        store = stores.get( self._token )
        if store is None:
            store = stores[ self._token ] = ResultStore(
                self.seconds, self.maximum, self.clock )
        return store

    def is_duplicate( self, name: str, arguments: __.Arguments ) -> bool:
        ''' Returns whether invocation was recorded, within time to live.

            Uses the cache's own records, as the design documents do; the
            execution engine keeps records per namespace unless shared.
        '''
        signature = self.produce_signature( name, arguments )
        return self._store.access( signature ) is not None

    def produce_signature(
        self, name: str, arguments: __.Arguments
    ) -> __.cabc.Hashable:
        ''' Returns signature of invocation for comparison. '''
        key = self.key
        if __.is_absent( key ):
            return ( name, produce_canonical_json( arguments, name ) )
        return key( name, arguments )

    def record( self, name: str, arguments: __.Arguments ) -> None:
        ''' Records invocation in the cache's own records. '''
        signature = self.produce_signature( name, arguments )
        entry = self._store.access( signature )
        self._store.assign(
            signature, None if entry is None else entry[ 1 ] )


class ExactDeduplicator( ResultCache ):
    ''' Duplicates have the same name and canonically equal arguments.

        Canonical JSON: keys sorted, no insignificant whitespace. Results
        are kept for the conversation.
    '''


class SemanticDeduplicator( ResultCache ):
    ''' Duplicates have equal keys, by a function of the user.

        For example, ``key = lambda name, arguments: ( name,
        arguments[ 'city' ].strip( ).casefold( ) )``.
    '''

    def __post_init__( self ) -> None:
        super( ).__post_init__( )
        if __.is_absent( self.key ) or not callable( self.key ):
            raise _exceptions.ConfigurationInvalidity(
                'SemanticDeduplicator',
                "give 'key', a function of name and arguments." )


class TimeWindowDeduplicator( ResultCache ):
    ''' Duplicates repeat an invocation within a number of seconds.

        ``TimeWindowDeduplicator( seconds = 30 )``: a repeat within 30
        seconds reuses the result; a repeat after them runs again.
    '''

    def __post_init__( self ) -> None:
        super( ).__post_init__( )
        if __.is_absent( self.seconds ):
            raise _exceptions.ConfigurationInvalidity(
                'TimeWindowDeduplicator',
                "give 'seconds', the length of the window." )


async def execute_deduplicated(
    deduplicator: object,
    namespace: __.Namespace,
    invocation: _canisters.InvocationCanister,
    name: str,
    arguments: __.Arguments,
    run: Runner,
    handle: Handler,
    deadline: float | None = None,
) -> _canisters.ResultCanister:
    ''' Runs invocation unless a duplicate result can be reused.

        For the execution engine. ``run`` runs the invocation; ``handle``
        turns an exception raised by the deduplicator into a result (or
        raises it). Waiting for an identical invocation in flight ends at
        deadline (loop time; ``None``: never), raising
        :py:class:`invocables.exceptions.InvocationExpiry`.
    '''
    try:
        if isinstance( deduplicator, ResultCache ):
            signature = deduplicator.produce_signature( name, arguments )
            hash( signature )
            store = deduplicator.access_store( namespace )
        elif callable( getattr( deduplicator, 'produce_signature', None ) ):
            signature = __.typx.cast(
                __.typx.Any, deduplicator ).produce_signature(
                    name, arguments )
            hash( signature )
            store = _access_store_default( namespace )
        else:
            return await _execute_protocol(
                __.typx.cast( Deduplicator, deduplicator ), namespace,
                invocation, name, arguments, run )
    except Exception as exception: return handle( invocation, exception )
    return await _execute_once(
        store, signature, invocation, run, deadline )


def produce_canonical_json( value: object, name: str = '' ) -> str:
    ''' Returns canonical JSON text of value (sorted keys, compact).

        Raises :py:class:`invocables.exceptions.ArgumentsInvalidity` (of
        tool ``name``) for a value which has none: one which is not JSON,
        holds a cycle, or nests deeper than the interpreter's recursion
        (arguments of a native history, which the engine never bounded).
    '''
    try:
        return __.json.dumps(
            value, sort_keys = True, separators = ( ',', ':' ),
            ensure_ascii = False, default = _serialize_default )
    except ( RecursionError, TypeError, ValueError ) as exception:
        reason = (
            "they nest too deeply." if isinstance( exception, RecursionError )
            else f"{exception}." )
        raise _exceptions.ArgumentsInvalidity( name, reason ) from None


def _access_store_default( namespace: __.Namespace ) -> ResultStore:
    ''' Returns store of namespace for deduplicators of the user. '''
    stores: dict[ object, ResultStore ] = namespace.setdefault(
        _STORES_KEY, { } )
    store = stores.get( _STORES_KEY )
    if store is None: store = stores[ _STORES_KEY ] = ResultStore( )
    return store


async def _execute_once(
    store: ResultStore,
    signature: __.cabc.Hashable,
    invocation: _canisters.InvocationCanister,
    run: Runner,
    deadline: float | None,
) -> _canisters.ResultCanister:
    ''' Runs invocation unless an identical one ran or is running.

        Waits for one running until deadline; runs if it was cancelled.
    '''
    while True:
        entry = store.access( signature )
        earlier = None if entry is None else entry[ 1 ]
        if earlier is None: break
        result = await _deadlines.await_within(
            _reuse( earlier, invocation ),
            _deadlines.access_remainder( deadline ), invocation.name )
        if result is not None: return result
        store.discard( signature, earlier ) # cancelled: never reused
    future: __.asyncio.Future[ _Outcome ] = (
        __.asyncio.get_running_loop( ).create_future( ) )
    store.assign( signature, future )
    try: result = await run( )
    except __.asyncio.CancelledError:
        store.discard( signature, future )
        future.cancel( ) # waiters report cancellation too
        raise
    except Exception as exception:
        store.discard( signature, future )
        future.set_exception( exception )
        future.exception( ) # retrieved: waiters re-raise it themselves
        raise
    future.set_result( ( result.content, result.error ) )
    if result.is_error( ): store.discard( signature, future )
    return result


async def _execute_protocol(
    deduplicator: Deduplicator,
    namespace: __.Namespace,
    invocation: _canisters.InvocationCanister,
    name: str,
    arguments: __.Arguments,
    run: Runner,
) -> _canisters.ResultCanister:
    ''' Runs invocation under a deduplicator with the documents' protocol.
    '''
    signature = ( name, produce_canonical_json( arguments, name ) )
    store = _access_store_default( namespace )
    if deduplicator.is_duplicate( name, arguments ):
        entry = store.access( signature )
        earlier = None if entry is None else entry[ 1 ]
        if earlier is not None and earlier.done( ) and not (
            earlier.cancelled( ) or earlier.exception( ) is not None
        ):
            content, error = earlier.result( )
            return _canisters.ResultCanister(
                invocation_id = invocation.identifier, content = content,
                error = error, name = invocation.name )
        return _canisters.ResultCanister(
            invocation_id = invocation.identifier, name = invocation.name,
            content = _canisters.TextContent(
                text = f"Tool {name!r} was already called with these "
                "arguments in this conversation; use that result." ) )
    future: __.asyncio.Future[ _Outcome ] = (
        __.asyncio.get_running_loop( ).create_future( ) )
    result = await run( )
    if not result.is_error( ):
        future.set_result( ( result.content, result.error ) )
        store.assign( signature, future )
        deduplicator.record( name, arguments )
    return result


async def _reuse(
    earlier: __.asyncio.Future[ _Outcome ],
    invocation: _canisters.InvocationCanister,
) -> _canisters.ResultCanister | None:
    ''' Returns result of invocation from an identical earlier one, once it
        has ended; ``None`` if it was cancelled. Raises what it raised.

        A cancellation of the earlier one is not this one's, nor does a
        cancellation of this one reach the earlier one.
    '''
    if not earlier.done( ): await __.asyncio.wait( ( earlier, ) )
    if earlier.cancelled( ): return None
    content, error = earlier.result( )
    return _canisters.ResultCanister(
        invocation_id = invocation.identifier, content = content,
        error = error, name = invocation.name )


def _serialize_default( value: object ) -> object:
    if isinstance( value, __.cabc.Mapping ):
        return dict( __.typx.cast( __.cabc.Mapping[ str, object ], value ) )
    if isinstance( value, ( tuple, set, frozenset ) ):
        return list( __.typx.cast( __.cabc.Iterable[ object ], value ) )
    raise TypeError(
        f"Value of type {type( value ).__name__} is not JSON-compatible." )


def _validate_positive(
    label: str, value: object, *, number: bool
) -> None:
    ''' Refuses a bound which is not a positive number (or integer). '''
    location = f"deduplicator {label!r}"
    if number:
        __.values.validate_timeout(
            value, location, nullable = False,
            reason = "expected a positive number, got {value!r}." )
    else:
        __.values.validate_count(
            value, location, reason = "expected a positive integer, got "
            "{value!r}." )
