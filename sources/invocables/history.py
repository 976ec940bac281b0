# SPDX-License-Identifier: Apache-2.0

''' Trimming of stale tool results from native histories.

    :py:func:`trim_history` takes the native messages of a conversation
    (as the application keeps them, for any provider of
    :py:data:`invocables.providers.PROVIDERS`, plain dictionaries or SDK
    typed objects) and returns them with old tool results replaced by a
    short placeholder which says that they were removed and why. Calls
    keep their results, ids, order and roles, so that every provider
    still takes the history. Strategies, combinable:

    * superseded: a later call makes an earlier result stale: by default,
      the same tool with the same arguments; or a relation of the
      application (:py:class:`Staleness`, such as
      :py:class:`KeyedStaleness`: a ``write_file`` of a path makes the
      earlier ``read_file`` results of that path stale), or a deduplicator
      of the design documents' protocol;
    * recency (``keep``): the last results are kept, older ones trimmed;
    * budget: nothing is trimmed until the history passes a size
      (characters, or tokens by the application's counter); then at least
      ``clear_at_least`` at once, oldest first, so that a prompt cache
      keeps its prefix between trims.

    Tools may be excluded by name (glob patterns) or by ensemble; the
    arguments of the calls whose results are trimmed may be cleared too.
    Trimming is deterministic, linear in the size of the history, and
    never changes a message it does not trim: those are returned as they
    were given (the same objects). A message which it trims is returned
    as a plain dictionary (SDK typed objects are dumped to the wire
    format, which the SDKs take).
'''


import reprlib as _reprlib

import invocables.__ as __
import invocables.execution.deduplicators as _deduplicators
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.naming as _naming
import invocables.providers as _providers
import invocables._transcripts as _transcripts
import invocables.processors._wire as _wire


Counter: __.typx.TypeAlias = __.cabc.Callable[ [ str ], int ]
Message: __.typx.TypeAlias = __.typx.Any
_Keys = __.immut.Dictionary[ str, __.cabc.Sequence[ str ] ]

PLACEHOLDER_PREFIX: str = _transcripts.PLACEHOLDER_PREFIX
''' How each placeholder starts; a result which starts so is taken as
    trimmed already. '''
_REASON_BUDGET = 'the history passed its size budget'
_REASON_RECENCY = 'only the {keep} most recent tool results are kept'
_REASON_SUPERSEDED = 'a later call of {name} superseded it'


class Staleness( __.typx.Protocol ):
    ''' Tells which later calls make the result of a call stale.

        The result of a call is stale when a later call reads or writes a
        key which it reads (a later read shows newer state; a write
        changes it).
    '''

    def survey_reads(
        self, name: str, arguments: __.Arguments
    ) -> __.cabc.Iterable[ __.cabc.Hashable ]:
        ''' Returns keys of the state which the call's result shows. '''
        raise NotImplementedError  # pragma: no cover

    def survey_writes(
        self, name: str, arguments: __.Arguments
    ) -> __.cabc.Iterable[ __.cabc.Hashable ]:
        ''' Returns keys of the state which the call changes. '''
        raise NotImplementedError  # pragma: no cover


class ExactStaleness( __.immut.DataclassObject ):
    ''' A later call of the same tool with the same arguments (canonical
        JSON) makes the result of an earlier one stale: the design
        documents' exact deduplicator, applied to a history.
    '''

    def survey_reads(
        self, name: str, arguments: __.Arguments
    ) -> tuple[ __.cabc.Hashable, ... ]:
        ''' Returns the call's identity: name and canonical arguments. '''
        return ( ( name, _deduplicators.produce_canonical_json(
            arguments, name ) ), )

    def survey_writes(
        self, name: str, arguments: __.Arguments
    ) -> tuple[ __.cabc.Hashable, ... ]:
        ''' Returns nothing: a call changes no state of its own. '''
        return ( )


class KeyedStaleness( __.immut.DataclassObject ):
    ''' Keys from chosen arguments of the tools which read and write.

        ``KeyedStaleness( reads = { 'read_file': ( 'path', ) }, writes = {
        'write_file': ( 'path', ), 'edit_file': ( 'path', ) } )``: a later
        ``read_file``, ``write_file`` or ``edit_file`` of a path makes the
        results of earlier ``read_file`` calls of that path stale. A key is
        the values of the chosen arguments, in order (as canonical JSON),
        so tools which name the same thing share keys (one string names
        one argument). Tools named in neither mapping are compared exactly
        (same name and arguments), unless ``exact`` is false.
    '''

    reads: __.typx.Annotated[
        __.cabc.Mapping[ str, __.cabc.Sequence[ str ] ],
        __.ddoc.Doc( ''' Arguments which key the state that each tool's
            results show, by tool name. ''' ),
    ] = __.dcls.field( default_factory = _Keys )
    writes: __.typx.Annotated[
        __.cabc.Mapping[ str, __.cabc.Sequence[ str ] ],
        __.ddoc.Doc( ''' Arguments which key the state that each tool
            changes, by tool name. ''' ),
    ] = __.dcls.field( default_factory = _Keys )
    exact: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether other tools are compared exactly. ''' ),
    ] = True

    def __post_init__( self ) -> None:
        # One string is one argument, never an argument per character
        # (whose keys, all absent, would make every call stale).
        for label in ( 'reads', 'writes' ):
            object.__setattr__( self, label, _validate_keys(
                getattr( self, label ), f"staleness option {label!r}" ) )

    def survey_reads(
        self, name: str, arguments: __.Arguments
    ) -> tuple[ __.cabc.Hashable, ... ]:
        ''' Returns key of the state which the call's result shows. '''
        chosen = self.reads.get( name )
        if chosen is not None: return ( _produce_key( chosen, arguments ), )
        if self.exact and name not in self.writes:
            return ExactStaleness( ).survey_reads( name, arguments )
        return ( )

    def survey_writes(
        self, name: str, arguments: __.Arguments
    ) -> tuple[ __.cabc.Hashable, ... ]:
        ''' Returns key of the state which the call changes. '''
        chosen = self.writes.get( name )
        if chosen is None: return ( )
        return ( _produce_key( chosen, arguments ), )


class TrimmedHistory( __.immut.DataclassObject ):
    ''' Native messages after trimming, with what was trimmed. '''

    messages: __.typx.Annotated[
        list[ Message ],
        __.ddoc.Doc( ''' Messages in the shape given; untouched ones are
            the objects given, trimmed ones plain dictionaries. ''' ),
    ]
    trimmed: __.typx.Annotated[
        tuple[ str, ... ],
        __.ddoc.Doc( ''' Ids of the calls whose results were trimmed, in
            order; a call without id is named by position: index of its
            message, a colon, index of the call in it. ''' ),
    ]
    saved: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Characters of results removed. ''' ) ]


class Trimming( __.immut.DataclassObject ):
    ''' Options of :py:func:`trim_history`, as one record (for the
        conversation loop and the command's ``converse``).
    '''

    superseded: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' False; true (exact: same tool, same arguments); a
            :py:class:`Staleness`; or a deduplicator of the design
            documents' protocol (or a function producing one). ''' ),
    ] = True
    keep: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc( ''' Most recent tool results kept. Alone: older ones
            are trimmed. With a budget: they are never trimmed for it. ''' ),
    ] = __.absent
    budget: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc( ''' Size of the history (by ``counter``) past which
            results are trimmed, oldest first. ''' ),
    ] = __.absent
    clear_at_least: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc( ''' Least amount (by ``counter``) trimmed at once
            for the budget. Default: just enough. ''' ),
    ] = __.absent
    exclude: __.typx.Annotated[
        __.cabc.Sequence[ str | _ensembles.Ensemble ],
        __.ddoc.Doc( ''' Tools never trimmed: glob patterns of names as
            the provider sees them, or ensembles (names of their tools,
            plain or scoped by the ensemble). ''' ),
    ] = ( )
    clear_arguments: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether arguments of the calls whose results are
            trimmed become empty too. ''' ),
    ] = False
    counter: __.typx.Annotated[
        Counter,
        __.ddoc.Doc( ''' Size of a text for the budget: characters by
            default, or tokens by the application's tokenizer. ''' ),
    ] = len

    def __post_init__( self ) -> None:
        for label in ( 'keep', 'budget', 'clear_at_least' ):
            value = getattr( self, label )
            if __.is_absent( value ): continue
            if not isinstance( value, int ) or isinstance( value, bool ) or (
                value < ( 0 if label == 'keep' else 1 )
            ):
                raise _exceptions.ConfigurationInvalidity(
                    f"trimming option {label!r}",
                    f"expected a whole number, got {value!r}." )
        if not callable( self.counter ):
            raise _exceptions.ConfigurationInvalidity(
                "trimming option 'counter'",
                "expected a function of a text returning its size." )
        # One pattern, as filters take it; never a pattern per character.
        exclude: object = self.exclude
        if isinstance( exclude, str ): exclude = ( exclude, )
        items: tuple[ object, ... ] = (
            tuple( __.typx.cast( __.cabc.Iterable[ object ], exclude ) )
            if isinstance( exclude, __.cabc.Iterable ) else ( None, ) )
        if not all(
            isinstance( item, str ) or _is_ensemble( item ) for item in items
        ): raise _exceptions.ConfigurationInvalidity(
            "trimming option 'exclude'",
            "expected glob patterns of tool names or ensembles." )
        object.__setattr__( self, 'exclude', items )

    def trim_history(
        self, messages: __.cabc.Sequence[ Message ], provider: str
    ) -> TrimmedHistory:
        ''' Returns messages of provider trimmed with these options. '''
        _providers.access_provider( provider, 'providers of histories' )
        calls = _transcripts.survey_calls( tuple( messages ), provider )
        excluded = _produce_exclusion( self.exclude )
        answered = [ call for call in calls if call.result is not None ]
        live = [
            call for call in answered
            if not _result_of( call ).trimmed and not excluded( call.name ) ]
        reasons: dict[ int, str ] = { }
        _mark_superseded( self.superseded, answered, live, reasons )
        _mark_recency( self, live, reasons )
        _mark_budget( self, messages, live, reasons )
        return _rebuild( self, messages, provider, live, reasons )


class _SignatureStaleness( __.immut.DataclassObject ):
    ''' Calls of equal signature by a deduplicator of the library (its
        key function, without its records: trimming stays deterministic).
    '''

    cache: _deduplicators.ResultCache

    def survey_reads(
        self, name: str, arguments: __.Arguments
    ) -> tuple[ __.cabc.Hashable, ... ]:
        return ( self.cache.produce_signature( name, arguments ), )

    def survey_writes(
        self, name: str, arguments: __.Arguments
    ) -> tuple[ __.cabc.Hashable, ... ]:
        return ( )


def trim_history(
    messages: __.typx.Annotated[
        __.cabc.Sequence[ Message ],
        __.ddoc.Doc( ''' Native messages (for OpenAI Responses: input
            items), dictionaries or SDK typed objects. ''' ),
    ],
    provider: __.typx.Annotated[
        str,
        __.ddoc.Doc( ''' Provider whose shapes the messages have: one of
            :py:data:`invocables.providers.PROVIDERS`. ''' ),
    ] = 'anthropic',
    **options: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Options of :py:class:`Trimming`: ``superseded``,
            ``keep``, ``budget``, ``clear_at_least``, ``exclude``,
            ``clear_arguments``, ``counter``. ''' ),
    ],
) -> TrimmedHistory:
    ''' Returns messages with stale tool results replaced by placeholders.

        Results are trimmed when a later call supersedes them (by default,
        the same tool with the same arguments), when they are older than
        the ``keep`` most recent, or, with a ``budget``, oldest first while
        the history is over it. Raises
        :py:class:`invocables.exceptions.ProviderNoSupport` for an unknown
        provider and
        :py:class:`invocables.exceptions.ConfigurationInvalidity` for an
        invalid option.
    '''
    return Trimming( **options ).trim_history( messages, provider )


def _mark_budget(
    trimming: Trimming,
    messages: __.cabc.Sequence[ Message ],
    live: list[ _transcripts.Call ],
    reasons: dict[ int, str ],
) -> None:
    ''' Trims oldest results while the history is over its budget.

        The amount trimmed is a multiple of ``clear_at_least``: the
        history stays the same while it grows by less than that.
    '''
    budget = trimming.budget
    if __.is_absent( budget ): return
    counter = trimming.counter

    def count( text: str ) -> int:
        size = counter( text )
        if type( size ) is int and size >= 0: return size
        raise _exceptions.ConfigurationInvalidity(
            "trimming option 'counter'", "returned {size}; expected a "
            "whole number.".format( size = _reprlib.repr( size ) ) )

    placeholder = count( _produce_placeholder( _REASON_BUDGET ) )
    sizes = { id( call ): count( _result_of( call ).text ) for call in live }
    render = _transcripts.render
    total = sum( count( render( message ) ) for message in messages )
    total -= sum(
        max( sizes[ key ] - placeholder, 0 )
        for key in reasons if key in sizes )
    if total <= budget: return
    step = 1 if __.is_absent( trimming.clear_at_least ) else (
        trimming.clear_at_least )
    target = -( -( total - budget ) // step ) * step
    keep = 0 if __.is_absent( trimming.keep ) else trimming.keep
    protected = frozenset(
        id( call ) for call in live[ len( live ) - keep : ] )
    cleared = 0
    for call in live:
        if cleared >= target: break
        if id( call ) in reasons or id( call ) in protected: continue
        if sizes[ id( call ) ] <= placeholder: continue
        cleared += sizes[ id( call ) ] - placeholder
        reasons[ id( call ) ] = _REASON_BUDGET


def _mark_duplicates(
    deduplicator: _deduplicators.Deduplicator,
    answered: list[ _transcripts.Call ],
    markable: frozenset[ int ],
    reasons: dict[ int, str ],
) -> None:
    ''' Marks results of calls which a later one duplicates. '''
    for call in reversed( answered ):
        arguments = _decode( call )
        if arguments is None: continue
        try: duplicate = deduplicator.is_duplicate( call.name, arguments )
        except _exceptions.ArgumentsInvalidity: continue
        if not duplicate: deduplicator.record( call.name, arguments )
        elif id( call ) in markable:
            reasons[ id( call ) ] = _REASON_SUPERSEDED.format(
                name = call.name )


def _mark_recency(
    trimming: Trimming,
    live: list[ _transcripts.Call ],
    reasons: dict[ int, str ],
) -> None:
    keep = trimming.keep
    if __.is_absent( keep ) or not __.is_absent( trimming.budget ): return
    reason = _REASON_RECENCY.format( keep = keep )
    for call in live[ : max( len( live ) - keep, 0 ) ]:
        reasons.setdefault( id( call ), reason )


def _mark_superseded(
    superseded: object,
    answered: list[ _transcripts.Call ],
    live: list[ _transcripts.Call ],
    reasons: dict[ int, str ],
) -> None:
    ''' Marks results made stale by later calls, newest first.

        Every answered call may supersede (excluded tools too); only the
        live ones are marked.
    '''
    if superseded is False or superseded is None: return
    staleness = _produce_staleness( superseded )
    markable = frozenset( id( call ) for call in live )
    if staleness is None:
        _mark_duplicates(
            _produce_deduplicator( superseded ), answered, markable,
            reasons )
        return
    seen: dict[ __.cabc.Hashable, str ] = { }
    for call in reversed( answered ):
        arguments = _decode( call )
        if arguments is None: continue
        try:
            reads = tuple( staleness.survey_reads( call.name, arguments ) )
            writes = tuple( staleness.survey_writes( call.name, arguments ) )
        except _exceptions.ArgumentsInvalidity: continue
        later = next( ( seen[ key ] for key in reads if key in seen ), None )
        if later is not None and id( call ) in markable:
            reasons[ id( call ) ] = _REASON_SUPERSEDED.format( name = later )
        for key in ( *reads, *writes ): seen.setdefault( key, call.name )


def _decode( call: _transcripts.Call ) -> __.Arguments | None:
    ''' Returns arguments of call, or ``None`` for text which is not a
        JSON object: such a call is compared with no other (nor is one
        whose arguments have no canonical JSON, too deep or cyclic). '''
    decoded, invalidity = _wire.decode_arguments(
        _wire.nativize_object( call.arguments ) )
    return decoded if __.is_absent( invalidity ) else None


def _is_ensemble( value: object ) -> bool:
    return isinstance( getattr( value, 'name', None ), str ) and hasattr(
        value, 'invokers' )


def _validate_keys( keys: object, location: str ) -> _Keys:
    if isinstance( keys, __.cabc.Mapping ):
        items = __.typx.cast( __.cabc.Mapping[ object, object ], keys )
        chosen: dict[ str, tuple[ str, ... ] ] = { }
        for name, value in items.items( ):
            arguments = ( value, ) if isinstance( value, str ) else value
            if not isinstance( name, str ) or not isinstance(
                arguments, __.cabc.Iterable ): break
            names = tuple(
                __.typx.cast( __.cabc.Iterable[ object ], arguments ) )
            if not all(
                isinstance( item, str ) for item in names ): break
            chosen[ name ] = __.typx.cast( tuple[ str, ... ], names )
        else: return _Keys( chosen )
    raise _exceptions.ConfigurationInvalidity(
        location, "expected a table of tool names to names of arguments, "
        "such as { 'read_file': ( 'path', ) }." )


def _produce_deduplicator(
    superseded: object
) -> _deduplicators.Deduplicator:
    if not isinstance( superseded, type ) and callable(
        getattr( superseded, 'is_duplicate', None )
    ): return __.typx.cast( _deduplicators.Deduplicator, superseded )
    if callable( superseded ):
        produced = superseded( )
        if callable( getattr( produced, 'is_duplicate', None ) ):
            return __.typx.cast( _deduplicators.Deduplicator, produced )
    raise _exceptions.ConfigurationInvalidity(
        "trimming option 'superseded'",
        "expected a boolean, a staleness (survey_reads, survey_writes) or "
        "a deduplicator (is_duplicate, record), or a function producing "
        "one." )


def _produce_exclusion(
    exclude: __.cabc.Iterable[ str | _ensembles.Ensemble ]
) -> __.cabc.Callable[ [ str ], bool ]:
    patterns: list[ str ] = [ ]
    for item in exclude:
        if isinstance( item, str ):
            patterns.append( item )
            continue
        for name in item.invokers:
            # A name repeated across ensembles is scoped by its ensemble.
            scoped = f"{item.name}{_naming.SCOPE_SEPARATOR}{name}"
            patterns.extend( (
                _naming.produce_safe_name( name ),
                _naming.produce_safe_name( scoped ) ) )
    names = frozenset( patterns )
    globs = tuple( p for p in patterns if _naming.is_glob( p ) )
    return lambda name: name in names or _naming.is_name_matching(
        name, globs )


def _produce_key(
    chosen: __.cabc.Sequence[ str ], arguments: __.Arguments
) -> __.cabc.Hashable:
    return tuple(
        _deduplicators.produce_canonical_json( arguments.get( name ) )
        for name in chosen )


def _produce_placeholder( reason: str ) -> str:
    return (
        f"{PLACEHOLDER_PREFIX}: {reason}. Call the tool again if its result "
        "is needed.]" )


def _produce_staleness( superseded: object ) -> Staleness | None:
    if superseded is True: return ExactStaleness( )
    if not isinstance( superseded, type ) and isinstance(
        superseded, _deduplicators.ResultCache
    ): return _SignatureStaleness( cache = superseded )
    if callable( getattr( superseded, 'survey_reads', None ) ):
        return __.typx.cast( Staleness, superseded )
    return None


def _rebuild(
    trimming: Trimming,
    messages: __.cabc.Sequence[ Message ],
    provider: str,
    live: list[ _transcripts.Call ],
    reasons: dict[ int, str ],
) -> TrimmedHistory:
    ''' Returns history with the marked results (and arguments) replaced.
    '''
    edits: dict[ int, dict[ tuple[ str, int ], object ] ] = { }
    trimmed: list[ _transcripts.Call ] = [ ]
    saved = 0
    for call in live:
        reason = reasons.get( id( call ) )
        if reason is None: continue
        result = _result_of( call )
        text = _produce_placeholder( reason )
        length = len( result.text )
        if length <= len( text ): continue # shorter than its placeholder
        saved += length - len( text )
        trimmed.append( call )
        edits.setdefault( result.index, { } )[
            ( 'result', result.position ) ] = text
        if trimming.clear_arguments:
            edits.setdefault( call.index, { } )[
                ( 'call', call.position ) ] = call.arguments
    messages_ = list( messages )
    for index, changes in edits.items( ):
        messages_[ index ] = _transcripts.edit_message(
            messages_[ index ], provider, changes )
    trimmed.sort( key = lambda call: call.order )
    return TrimmedHistory(
        messages = messages_,
        trimmed = tuple( call.label for call in trimmed ), saved = saved )


def _result_of( call: _transcripts.Call ) -> _transcripts.Result:
    return __.typx.cast( _transcripts.Result, call.result )
