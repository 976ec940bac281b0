# SPDX-License-Identifier: Apache-2.0

''' Ensembles which wrap ensembles: filtered, renamed, pinned.

    Each wrapper is an ensemble itself, so wrappers compose (a filtered
    view of a prefixed view of an MCP server). A wrapper keeps the
    lifecycle of its inner ensemble (``connect``, ``disconnect`` and
    ``async with`` go through to it) and follows its tool list: when the
    inner ensemble's tuple of invokers changes (for example, after an MCP
    server's ``tools/list_changed``), the wrapper derives its own anew, as
    a new tuple, so that nomenclatures made of it are made anew too. A
    pinned ensemble is the exception, on purpose: it offers the tools it
    was given, whatever the inner ensemble offers later (but its rules see
    the live annotations, when more cautious).
'''


import invocables.__ as __
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.naming as _naming
import invocables.toolsets._delegates as _delegates


Patterns: __.typx.TypeAlias = str | __.cabc.Iterable[ str ]
Predicate: __.typx.TypeAlias = __.cabc.Callable[
    [ _invokers.Invoker ], bool ]

_Annotations: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
_Name: __.typx.TypeAlias = __.typx.Annotated[
    __.Absential[ str ],
    __.ddoc.Doc( ''' Name of ensemble. Default: inner's. ''' ) ]

_HINT_KEYS = __.types.MappingProxyType( {
    name: key for key, ( wire, _ ) in _delegates.HINTS.items( )
    for name in ( key, wire ) } )
_MAPPING_EMPTY: __.cabc.Mapping[ str, __.typx.Any ] = (
    __.types.MappingProxyType( { } ) )
_scribe = __.produce_scribe( __name__ )

DelegateInvoker = _delegates.DelegateInvoker


class WrapperBase(
    _ensembles.EnsembleBase, instances_mutables = ( '_derivation', )
):
    ''' Ensemble over an inner ensemble: its lifecycle, derived tools.

        Subclasses implement ``derive_invokers``, which makes this
        ensemble's invokers from the inner ensemble's; the result is
        cached until the inner tuple of invokers changes.
    '''

    inner: _ensembles.Ensemble

    def __init__(
        self,
        inner: _ensembles.Ensemble,
        *,
        name: __.Absential[ str ] = __.absent,
    ):
        if not _is_ensemble( inner ):
            raise _exceptions.ConfigurationInvalidity(
                "inner ensemble of wrapper",
                "expected an ensemble, got {kind}.".format(
                    kind = type( inner ).__name__ ) )
        self.inner = inner
        self.name = (
            inner.name if __.is_absent( name )
            else _ensembles.validate_ensemble_name( name ) )
        self.configuration = inner.configuration
        self._derivation: tuple[
            tuple[ _invokers.Invoker, ... ] | None,
            tuple[ _invokers.Invoker, ... ],
            __.cabc.Mapping[ str, _invokers.Invoker ],
        ] = ( None, ( ), { } )

    def __repr__( self ) -> str:
        return "{cls}( name = {name!r}, inner = {inner!r} )".format(
            cls = type( self ).__name__, name = self.name,
            inner = self.inner )

    def access_invoker( self, name: str ) -> _invokers.Invoker:
        ''' Returns invoker by name. Raises absence error if unknown. '''
        _, _, invokers = self._derive( )
        try: return invokers[ name ]
        except KeyError as exception:
            raise _exceptions.InvokerAbsence(
                name, self.name ) from exception

    def derive_invokers(
        self, invokers: tuple[ _invokers.Invoker, ... ]
    ) -> __.cabc.Iterable[ _invokers.Invoker ]:
        ''' Hook: returns invokers of wrapper from those of inner. '''
        raise NotImplementedError  # pragma: no cover

    def survey_source( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns invokers which the derivation starts from: inner's. '''
        return self.inner.survey_invokers( )

    def is_connected( self ) -> bool:
        ''' Returns whether inner ensemble is connected. '''
        return self.inner.is_connected( )

    def survey_invokers( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns invokers derived from inner ensemble's, in its order.

            The same tuple is returned until the inner ensemble's tuple
            changes.
        '''
        _, invokers, _ = self._derive( )
        return invokers

    async def connect( self ) -> None:
        ''' Connects inner ensemble. '''
        await self.inner.connect( )

    async def disconnect( self ) -> None:
        ''' Disconnects inner ensemble. '''
        await self.inner.disconnect( )

    def _derive( self ) -> tuple[
        tuple[ _invokers.Invoker, ... ] | None,
        tuple[ _invokers.Invoker, ... ],
        __.cabc.Mapping[ str, _invokers.Invoker ],
    ]:
        source = self.survey_source( )
        derivation = self._derivation
        if derivation[ 0 ] is source: return derivation
        invokers = tuple( self._bind( self.derive_invokers( source ) ) )
        by_name: dict[ str, _invokers.Invoker ] = { }
        for invoker in invokers:
            if invoker.name in by_name:
                raise _exceptions.EnsemblesInvalidity(
                    f"ensemble {self.name!r} has two tools named "
                    f"{invoker.name!r}; rename one of them." )
            by_name[ invoker.name ] = invoker
        self._derivation = derivation = (
            source, invokers, __.types.MappingProxyType( by_name ) )
        return derivation

    def _bind(
        self, invokers: __.cabc.Iterable[ _invokers.Invoker ]
    ) -> __.cabc.Iterator[ _invokers.Invoker ]:
        for invoker in invokers:
            if invoker.ensemble is self: yield invoker
            else: yield invoker.with_ensemble( self )


class FilteredEnsemble( WrapperBase ):
    ''' Ensemble offering those tools of its inner ensemble which pass.

        A tool passes when its name matches an ``include`` pattern (if any
        are given), matches no ``exclude`` pattern, has every annotation
        given (such as ``{ 'readOnlyHint': True }``; a boolean hint by its
        meaning, as rules match it: under either name, the MCP default
        where the tool says nothing) and satisfies the predicate (if
        given). Patterns are shell-style globs, matched
        case-sensitively against the tool's identity, as policies match
        it: a pattern matches a tool if it matches the name the inner
        ensemble offers it under, the name its source gives it (before
        any prefix or rename of wrappers within) or a name a wrapper
        between gives it. So ``exclude = 'delete_*'`` leaves out
        ``x_delete_file``, a prefixed ``delete_file``, and ``include =
        'read_*'`` keeps ``x_read_file``.
    '''

    def __init__(
        self,
        inner: __.typx.Annotated[
            _ensembles.Ensemble,
            __.ddoc.Doc( ''' Ensemble whose tools are filtered. ''' ),
        ],
        *,
        include: __.typx.Annotated[
            Patterns,
            __.ddoc.Doc( ''' Glob patterns of names to keep; none: all. ''' ),
        ] = ( ),
        exclude: __.typx.Annotated[
            Patterns,
            __.ddoc.Doc( ''' Glob patterns of names to leave out. ''' ),
        ] = ( ),
        annotations: __.typx.Annotated[
            __.cabc.Mapping[ str, __.typx.Any ],
            __.ddoc.Doc( ''' Annotations a tool must carry, with these
                values (MCP names, such as ``readOnlyHint``). ''' ),
        ] = _MAPPING_EMPTY,
        predicate: __.typx.Annotated[
            __.Absential[ Predicate ],
            __.ddoc.Doc( ''' Returns whether an invoker is kept. ''' ),
        ] = __.absent,
        name: _Name = __.absent,
    ):
        super( ).__init__( inner, name = name )
        self.include = _validate_patterns( include, 'include' )
        self.exclude = _validate_patterns( exclude, 'exclude' )
        if not isinstance( annotations, __.cabc.Mapping ):
            raise _exceptions.ConfigurationInvalidity(
                "filter option 'annotations'",
                "expected a mapping of annotation names to values." )
        self.annotations = __.immut.Dictionary[ str, __.typx.Any ](
            annotations )
        if not __.is_absent( predicate ) and not callable( predicate ):
            raise _exceptions.ConfigurationInvalidity(
                "filter option 'predicate'",
                "expected a callable taking an invoker." )
        self.predicate = predicate

    def derive_invokers(
        self, invokers: tuple[ _invokers.Invoker, ... ]
    ) -> __.cabc.Iterable[ _invokers.Invoker ]:
        ''' Returns invokers which pass the filter, in order. '''
        return [ invoker for invoker in invokers if self.is_kept( invoker ) ]

    def is_kept( self, invoker: _invokers.Invoker ) -> bool:
        ''' Returns whether invoker passes the filter. '''
        names = _delegates.survey_identity_names( invoker )
        if self.include and not is_names_matching( names, self.include ):
            return False
        if is_names_matching( names, self.exclude ): return False
        annotations = invoker.annotations
        for key, value in self.annotations.items( ):
            hint = _HINT_KEYS.get( key )
            if hint is not None and isinstance( value, bool ):
                # A hint by its meaning, as rules match it: either name,
                # the MCP default where the tool says nothing.
                if _delegates.access_hint( annotations, hint ) is not value:
                    return False
            elif key not in annotations or annotations[ key ] != value:
                return False
        if __.is_absent( self.predicate ): return True
        kept = self.predicate( invoker )
        if __.inspect.isawaitable( kept ):
            # A coroutine is truthy: it would keep every tool.
            if __.inspect.iscoroutine( kept ): kept.close( )
            raise _exceptions.ConfigurationInvalidity(
                "filter option 'predicate'",
                "expected a plain function returning whether an invoker "
                "is kept; it returned an awaitable." )
        return bool( kept )


class RenamedEnsemble( WrapperBase ):
    ''' Ensemble offering the tools of its inner ensemble under new names.

        ``rename`` maps inner names to new names; then ``prefix`` is put
        before every name (renamed or not). Calls go to the inner tools
        under their own names. Names which would collide raise
        :py:class:`invocables.exceptions.EnsemblesInvalidity` when the
        tools are surveyed.
    '''

    def __init__(
        self,
        inner: __.typx.Annotated[
            _ensembles.Ensemble,
            __.ddoc.Doc( ''' Ensemble whose tools are renamed. ''' ),
        ],
        *,
        prefix: __.typx.Annotated[
            str, __.ddoc.Doc( ''' Put before every tool name. ''' )
        ] = '',
        rename: __.typx.Annotated[
            __.cabc.Mapping[ str, str ],
            __.ddoc.Doc( ''' New names of tools, by inner name. ''' ),
        ] = _MAPPING_EMPTY,
        descriptions: __.typx.Annotated[
            __.cabc.Mapping[ str, str ],
            __.ddoc.Doc( ''' New descriptions of tools, by inner name. ''' ),
        ] = _MAPPING_EMPTY,
        name: _Name = __.absent,
    ):
        super( ).__init__( inner, name = name )
        if not isinstance( prefix, str ):
            raise _exceptions.ConfigurationInvalidity(
                "rename option 'prefix'", "expected a string." )
        self.prefix = prefix
        self.rename = _validate_strings_mapping( rename, 'rename' )
        _validate_new_names( prefix, self.rename )
        self.descriptions = _validate_strings_mapping(
            descriptions, 'descriptions' )

    def derive_invokers(
        self, invokers: tuple[ _invokers.Invoker, ... ]
    ) -> __.cabc.Iterable[ _invokers.Invoker ]:
        ''' Returns delegates of invokers under their new names. '''
        names = { invoker.name for invoker in invokers }
        unknown = sorted( set( self.rename ) - names )
        if unknown and invokers:
            _scribe.warning(
                "Ensemble %r renames tools which its inner ensemble does "
                "not offer: %s.", self.name, ', '.join( unknown ) )
        return [ self._delegate( invoker ) for invoker in invokers ]

    def _delegate( self, invoker: _invokers.Invoker ) -> _invokers.Invoker:
        name = self.prefix + self.rename.get( invoker.name, invoker.name )
        description = self.descriptions.get( invoker.name, __.absent )
        if name == invoker.name and __.is_absent( description ):
            return invoker
        return DelegateInvoker(
            invoker, name = name, description = description,
            ensemble = self )


class PinnedEnsemble( WrapperBase ):
    ''' Ensemble offering a fixed snapshot of tools of its inner ensemble.

        The snapshot (names, descriptions, schemas) is offered even before
        the inner ensemble is connected and whatever it offers later; calls
        go to the inner tools of the same names. Annotations are not
        pinned against the server: while the inner ensemble offers a tool,
        each hint is the more cautious of the pinned and the live one, so
        that policies see a tool which its server made destructive since.
        Connecting checks that the inner ensemble still offers every
        pinned tool, and raises
        :py:class:`invocables.exceptions.ConnectionFailure` (after
        disconnecting it) otherwise. The ``descriptors`` pinning of MCP
        servers (``[[invokers]]`` beside ``[mcp]``) is this, made from TOML.
    '''

    def __init__(
        self,
        inner: __.typx.Annotated[
            _ensembles.Ensemble,
            __.ddoc.Doc( ''' Ensemble whose tools run the calls. ''' ),
        ],
        invokers: __.typx.Annotated[
            __.cabc.Iterable[ _invokers.Invoker ],
            __.ddoc.Doc( ''' The snapshot: invokers as they are to be
                offered (name, description, schema). ''' ),
        ],
        *,
        name: _Name = __.absent,
    ):
        super( ).__init__( inner, name = name )
        self.snapshot = tuple( invokers )
        # Memo: the inner tuple last seen, and the snapshot for it.
        self._sources: list[ __.typx.Any ] = [ None, self.snapshot ]

    def derive_invokers(
        self, invokers: tuple[ _invokers.Invoker, ... ]
    ) -> __.cabc.Iterable[ _invokers.Invoker ]:
        ''' Returns invokers of the snapshot which call the inner tools. '''
        return [
            _delegates.produce_pinned_invoker( self.inner, invoker, self )
            for invoker in invokers ]

    def survey_source( self ) -> tuple[ _invokers.Invoker, ... ]:
        ''' Returns the snapshot, whatever the inner ensemble offers.

            An equal tuple, anew, when the inner ensemble's tools change:
            wrappers over this one (a filter by annotations) then judge
            the tools by their live annotations.
        '''
        try: live = self.inner.survey_invokers( )
        except _exceptions.ConnectionAbsence: live = None
        sources = self._sources
        if sources[ 0 ] is not live:
            sources[ : ] = [ live, ( *self.snapshot, ) ] # a new tuple
        return sources[ 1 ]

    async def connect( self ) -> None:
        ''' Connects inner ensemble; checks that it offers every tool. '''
        await self.inner.connect( )
        offered = { invoker.name for invoker in self.inner.survey_invokers( ) }
        missing = [
            invoker.name for invoker in self.snapshot
            if invoker.name not in offered ]
        if not missing: return
        await self.inner.disconnect( )
        raise self.produce_absence_failure( missing )

    def produce_absence_failure(
        self, missing: __.cabc.Sequence[ str ]
    ) -> _exceptions.Omnierror:
        ''' Returns error to raise when pinned tools are no longer offered.
        '''
        return _exceptions.ConnectionFailure(
            self.name, "the inner ensemble no longer offers pinned tool(s) "
            "{names}; take a new snapshot or unpin them.".format(
                names = ', '.join( map( repr, missing ) ) ) )


def access_source_ensemble(
    ensemble: _ensembles.Ensemble
) -> _ensembles.Ensemble:
    ''' Returns ensemble which the tools of a wrapper come from.

        Through every wrapper (filter, rename, pin), the innermost
        ensemble, whatever name a wrapper gives it: its name is the
        ensemble of a tool's identity, which policies and approvals match.
    '''
    while isinstance( ensemble, WrapperBase ): ensemble = ensemble.inner
    return ensemble


def survey_ensemble_names(
    ensemble: _ensembles.Ensemble
) -> tuple[ str, ... ]:
    ''' Returns every name of ensemble: its own, then the name of each
        wrapper within, through to the source ensemble's, last.
    '''
    names = [ ensemble.name ]
    while isinstance( ensemble, WrapperBase ):
        ensemble = ensemble.inner
        names.append( ensemble.name )
    return tuple( dict.fromkeys( names ) )


def survey_identity_names( invoker: _invokers.Invoker ) -> tuple[ str, ... ]:
    ''' Returns every name of tool: the offered one first, each name
        which a wrapper within gives it (rename, prefix, pin), and the
        name its source gives it, last.
    '''
    return _delegates.survey_identity_names( invoker )


def access_source_name( invoker: _invokers.Invoker ) -> str:
    ''' Returns name of tool as its source names it.

        Through every rename, prefix and pin of wrappers, the name of the
        innermost tool: with the ensemble's name, the tool's identity,
        which policies and approvals match whatever the model calls it.
    '''
    return _delegates.access_source_name( invoker )


def is_identity_matching(
    name: str, source: str, patterns: __.cabc.Iterable[ str ]
) -> bool:
    ''' Returns whether a glob matches the offered or the source name.

        The one match of a tool's (or an ensemble's) identity, which
        filters and policies share: ``name`` is what a wrapper offers,
        ``source`` what the source calls it.
    '''
    return is_names_matching( ( name, source ), patterns )


def is_names_matching(
    names: __.cabc.Iterable[ str ], patterns: __.cabc.Iterable[ str ]
) -> bool:
    ''' Returns whether a glob matches any name of a tool's (or an
        ensemble's) identity, as :py:func:`survey_identity_names` (or
        :py:func:`survey_ensemble_names`) gives them.
    '''
    patterns = tuple( patterns )
    return any( is_name_matching( name, patterns ) for name in names )


is_name_matching = _naming.is_name_matching


def produce_pinned_ensemble(
    inner: __.typx.Annotated[
        _ensembles.Ensemble,
        __.ddoc.Doc( ''' Connected ensemble whose tools are pinned. ''' ),
    ],
    *,
    name: __.Absential[ str ] = __.absent,
) -> PinnedEnsemble:
    ''' Produces ensemble pinned to the tools the inner offers now.

        The inner ensemble must be connected (an MCP server's tools are
        known only then). Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity`
        otherwise.
    '''
    if not inner.is_connected( ):
        raise _exceptions.ConfigurationInvalidity(
            f"ensemble {inner.name!r}",
            "connect it before pinning its tools (async with ensemble:)." )
    return PinnedEnsemble( inner, inner.survey_invokers( ), name = name )


def produce_wrapped_ensemble(
    inner: __.typx.Annotated[
        _ensembles.Ensemble, __.ddoc.Doc( ''' Ensemble to wrap. ''' )
    ],
    *,
    include: Patterns = ( ),
    exclude: Patterns = ( ),
    annotations: _Annotations = _MAPPING_EMPTY,
    predicate: __.Absential[ Predicate ] = __.absent,
    prefix: str = '',
    rename: __.cabc.Mapping[ str, str ] = _MAPPING_EMPTY,
) -> _ensembles.Ensemble:
    ''' Produces ensemble filtered, then renamed, as the options ask.

        Filters match the inner names (before renaming), as they match
        every tool: by offered or source name. Returns the inner
        ensemble itself when no option is given. These are the ``include``,
        ``exclude``, ``prefix`` and ``rename`` keys of ensemble entries in
        TOML descriptors.
    '''
    ensemble = inner
    if include or exclude or annotations or not __.is_absent( predicate ):
        ensemble = FilteredEnsemble(
            ensemble, include = include, exclude = exclude,
            annotations = annotations, predicate = predicate )
    if prefix or rename:
        ensemble = RenamedEnsemble(
            ensemble, prefix = prefix, rename = rename )
    return ensemble


def _is_ensemble( value: object ) -> bool:
    return all(
        hasattr( value, name ) for name in (
            'name', 'configuration', 'survey_invokers', 'access_invoker',
            'connect', 'disconnect', 'is_connected' ) )


def _validate_new_names(
    prefix: str, rename: __.cabc.Mapping[ str, str ]
) -> None:
    ''' Refuses a prefix or new names which make names not allowed. '''
    options = [ ( f"rename option 'rename' value {new!r}", new )
        for new in rename.values( ) ]
    if prefix: options.append( ( "rename option 'prefix'", 'x' ) )
    for location, new in options:
        flaw = _invokers.access_name_flaw( prefix + new )
        if flaw is None: continue
        raise _exceptions.ConfigurationInvalidity(
            location, f"the new tool names would not be allowed: {flaw}." )


def _validate_patterns( patterns: object, option: str ) -> tuple[ str, ... ]:
    if isinstance( patterns, str ): return ( patterns, )
    if isinstance( patterns, __.cabc.Iterable ):
        items = tuple( __.typx.cast( __.cabc.Iterable[ object ], patterns ) )
        if all( isinstance( item, str ) for item in items ):
            return __.typx.cast( tuple[ str, ... ], items )
    raise _exceptions.ConfigurationInvalidity(
        f"filter option {option!r}",
        "expected a glob pattern or a list of them, such as "
        "[ 'read_*', 'list_*' ]." )


def _validate_strings_mapping(
    mapping: object, option: str
) -> __.cabc.Mapping[ str, str ]:
    if isinstance( mapping, __.cabc.Mapping ):
        items = __.typx.cast( __.cabc.Mapping[ object, object ], mapping )
        if all(
            isinstance( key, str ) and isinstance( value, str ) and value
            for key, value in items.items( )
        ):
            # Not a frigid Dictionary: its get gives None for a falsy
            # default, such as absent.
            return __.types.MappingProxyType(
                dict( __.typx.cast( __.cabc.Mapping[ str, str ], items ) ) )
    raise _exceptions.ConfigurationInvalidity(
        f"rename option {option!r}",
        "expected a table of tool names to non-empty strings, such as "
        "{ read_file = 'read' }." )
