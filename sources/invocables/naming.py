# SPDX-License-Identifier: Apache-2.0

''' Provider-facing tool names, unique across ensembles and reversible.

    Tools and ensembles have the names which their sources give them
    (``math.sum``, ``get /users/{id}``, ``io.github.owner/server``); every
    provider accepts names matching ``^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$``
    (Gemini wants a letter or an underscore first; the others take
    ``^[a-zA-Z0-9_-]{1,64}$``). A tool keeps its bare name when no other
    ensemble offers the same name; names which collide are scoped by
    ensemble (``ensemble__tool``). A name which is safe but for its first
    character gets a leading underscore (``2fa_verify`` becomes
    ``_2fa_verify``); other names which cannot be made safe are cleaned and
    shortened with a stable hash of the original (``math.sum`` becomes
    ``math_sum_`` and 8 hex digits, apart from a ``math_sum`` beside it).
    Names which are still equal get a hash of their ensemble and tool. The
    result depends only on the names, never on the order of arrival, the
    process or the run.
'''


import threading as _threading
import weakref as _weakref

from fnmatch import fnmatchcase as _fnmatchcase
from itertools import chain as _chain

import invocables.__ as __
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers


Invokerses: __.typx.TypeAlias = tuple[ tuple[ _invokers.Invoker, ... ], ... ]

NAME_LENGTH_MAXIMUM = 64
SCOPE_SEPARATOR = '__'

_CACHE_SIZE_MAXIMUM = 32
_DIGEST_LENGTH = 8
_DIGEST_LENGTHS = ( _DIGEST_LENGTH, 16, 32 )
_name_safe = __.re.compile( r'^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$' )
_characters_unsafe = __.re.compile( r'[^a-zA-Z0-9_-]+' )
_initial_safe = __.re.compile( r'^[a-zA-Z_]' )
_designations_lock = _threading.RLock( )
# Keyed by identities of ensembles; entries check their ensembles' tools.
_nomenclatures: dict[ tuple[ int, ... ], 'Nomenclature' ] = { }


@__.dcls.dataclass( frozen = True, slots = True )
class Designation:
    ''' Provider-facing name with the ensemble and invoker it stands for. '''

    name: str
    ensemble: _ensembles.Ensemble
    invoker: _invokers.Invoker


class Nomenclature(
    __.immut.Object, instances_mutables = ( '_by_name', '_designations' )
):
    ''' Exact two-way map between provider-facing names and invokers.

        ``names`` and ``invokers`` hold the tools in order, one column
        each: what preparing tool lists reads. Designations (and the map by
        name) are made at their first use, so that a first tool list pays
        for no object per tool which only calls need.
    '''

    def __init__(
        self,
        ensembles: tuple[ _ensembles.Ensemble, ... ],
        designations: __.Absential[
            __.cabc.Sequence[ Designation ] ] = __.absent,
        *,
        invokerses: __.Absential[ Invokerses ] = __.absent,
        names: __.cabc.Sequence[ str ] = ( ),
    ):
        ''' Takes the designations; or, instead, the invokers of each
            ensemble (as surveyed once) and one name per invoker, in order.
        '''
        if __.is_absent( invokerses ):
            invokerses = tuple(
                ensemble.survey_invokers( ) for ensemble in ensembles )
        self.ensembles = ensembles
        self.invokerses = invokerses
        if __.is_absent( designations ):
            self.names = tuple( names )
            self.invokers = tuple( _chain.from_iterable( invokerses ) )
            self._designations: tuple[ Designation, ... ] | None = None
        else:
            designations_ = tuple( designations )
            self.names = tuple( item.name for item in designations_ )
            self.invokers = tuple( item.invoker for item in designations_ )
            self._designations = designations_
        self._by_name: __.cabc.Mapping[ str, Designation ] = (
            _DesignationsPending( self ) )
        # Made at first use: most nomenclatures only ever map names.
        self._by_origin: dict[ tuple[ str, str ], str ] = { }
        # Memo of processors: their recipes of these tools, by options.
        self.recipes: dict[ __.cabc.Hashable, __.typx.Any ] = { }

    @property
    def designations( self ) -> tuple[ Designation, ... ]:
        ''' Designations of the tools, in order. '''
        designations = self._designations
        if designations is None: designations = self._produce_designations( )
        return designations

    def access_designation( self, name: str ) -> Designation:
        ''' Returns designation for provider-facing name.

            Raises :py:class:`invocables.exceptions.InvokerAbsence` if the
            name is not known.
        '''
        try: return self._by_name[ name ]
        except KeyError as exception:
            raise _exceptions.InvokerAbsence( name ) from exception

    def query_designation( self, name: object ) -> Designation | None:
        ''' Returns designation for provider-facing name, if known. '''
        if type( name ) is not str: return None
        return self._by_name.get( name )

    def access_name( self, ensemble: str, invoker: str ) -> str:
        ''' Returns provider-facing name of invoker in ensemble. '''
        origins = self._by_origin
        if not origins and self.names:
            origins.update( {
                ( designation.ensemble.name, designation.invoker.name ):
                    designation.name
                for designation in self.designations } )
        try: return origins[ ( ensemble, invoker ) ]
        except KeyError as exception:
            raise _exceptions.InvokerAbsence(
                invoker, ensemble ) from exception

    def access_designations_by_name(
        self
    ) -> __.cabc.Mapping[ str, Designation ]:
        ''' Returns designations by provider-facing name, made once. '''
        by_name = self._by_name
        if type( by_name ) is not _DesignationsPending: return by_name
        with _designations_lock:
            by_name = self._by_name
            if type( by_name ) is _DesignationsPending:
                by_name = __.types.MappingProxyType( dict( zip(
                    self.names, self.designations ) ) )
                self._by_name = by_name
        return by_name

    def _produce_designations( self ) -> tuple[ Designation, ... ]:
        with _designations_lock:
            designations = self._designations
            if designations is None:
                members = [
                    ensemble for ensemble, invokers
                    in zip( self.ensembles, self.invokerses )
                    for _ in invokers ]
                designations = tuple( map(
                    Designation, self.names, members, self.invokers ) )
                self._designations = designations
        return designations


def access_nomenclature(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ] | Nomenclature
) -> Nomenclature:
    ''' Returns nomenclature for ensembles, cached while tools are unchanged.

        The cache is keyed by the identity of each ensemble and of its tuple
        of invokers, so a change in an ensemble's tools (for example, an MCP
        server's ``tools/list_changed``) gives a new nomenclature.
    '''
    if isinstance( ensembles, Nomenclature ): return ensembles
    # Checked when the nomenclature is made; a cached one's were.
    try: ensembles_ = tuple( ensembles )
    except TypeError: ensembles_ = _survey_ensembles( ensembles )
    key = tuple( map( id, ensembles_ ) )
    nomenclature = _nomenclatures.get( key )
    # A cached entry holds its ensembles, so their identities stay unique.
    if nomenclature is not None:
        for ensemble, invokers in zip( ensembles_, nomenclature.invokerses ):
            if ensemble.survey_invokers( ) is not invokers: break
        else: return nomenclature
    nomenclature = produce_nomenclature( ensembles_ )
    if len( _nomenclatures ) >= _CACHE_SIZE_MAXIMUM: _nomenclatures.clear( )
    _nomenclatures[ key ] = nomenclature
    return nomenclature


def is_glob( pattern: str ) -> bool:
    ''' Returns whether pattern holds glob characters (``*?[``). '''
    return any( character in pattern for character in '*?[' )


def describe_pattern_flaw( value: object ) -> str:
    ''' Returns why value is not a pattern of names (a name with the
        wildcards of :py:func:`is_name_matching`); empty if it is one.
    '''
    if not isinstance( value, str ): return "expected a glob pattern text."
    flaw = _invokers.access_name_flaw( value )
    if flaw is not None:
        return (
            f"{value!r} is not a valid pattern: {flaw}; a pattern is a "
            "name with the wildcards '*', '?', '[...]'." )
    depth = 0
    for character in value:
        if character == '[': depth += 1
        elif character == ']': depth -= 1
        if depth not in ( 0, 1 ):
            return f"{value!r} is not a valid pattern: unbalanced brackets."
    if depth:
        return f"{value!r} is not a valid pattern: unbalanced brackets."
    return ''


def is_name_matching( name: str, patterns: __.cabc.Iterable[ str ] ) -> bool:
    ''' Returns whether name equals a pattern or matches it as a glob.

        The one match of names, which filters, selectors, policies, MCP's
        ``include`` and ``exclude`` and the trimming of histories share.
        Globs are case-sensitive (``*``, ``?``, ``[seq]``); a name equal to
        a pattern matches even when it holds glob characters itself.
    '''
    return any(
        name == pattern or _fnmatchcase( name, pattern )
        for pattern in patterns )


def is_name_safe( name: str ) -> bool:
    ''' Returns whether every provider accepts name as tool name. '''
    return _name_safe.fullmatch( name ) is not None


def produce_nomenclature(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ]
) -> Nomenclature:
    ''' Produces provider-facing names for invokers of ensembles.

        Raises :py:class:`invocables.exceptions.EnsemblesInvalidity` if two
        ensembles share a name.
    '''
    ensembles_ = _survey_ensembles( ensembles )
    _validate_ensemble_names( ensembles_ )
    invokerses = tuple(
        ensemble.survey_invokers( ) for ensemble in ensembles_ )
    names = [
        invoker.name for invokers in invokerses for invoker in invokers ]
    # Mostly, tools' names are already distinct and safe: kept as they are.
    if not _is_final( names ):
        names = _produce_names( names, ensembles_, invokerses )
    return Nomenclature( ensembles_, invokerses = invokerses, names = names )


def produce_safe_name( name: str, *, force_digest: bool = False ) -> str:
    ''' Returns name which every provider accepts, stable for given name.

        Safe names are returned unchanged (unless a digest is forced); a
        name safe but for its first character (a digit or a hyphen) gets a
        leading underscore; others are cleaned (unsafe runs become ``_``,
        an underscore leads where a letter does not) and suffixed with a
        hash of the original, shortened to fit 64 characters.
    '''
    if not force_digest:
        if is_name_safe( name ): return name
        if name and is_name_safe( f"_{name}" ): return f"_{name}"
    return _produce_hashed_name( name, name, _DIGEST_LENGTH )


def _is_final( names: list[ str ] ) -> bool:
    ''' Returns whether names are distinct and safe, in passes in C
        rather than steps per name.
    '''
    try: safe = all( map( _name_safe.fullmatch, names ) )
    except TypeError: return False # not text: produce_safe_name decides
    return safe and len( set( names ) ) == len( names )


def _produce_names(
    names: list[ str ],
    ensembles: tuple[ _ensembles.Ensemble, ... ],
    invokerses: Invokerses,
) -> list[ str ]:
    ''' Scopes repeated names by ensemble, makes them safe, and resolves
        what collides after that.
    '''
    counts = __.collections.Counter( names )
    # No pair per tool: at thousands of tools, short-lived tuples which
    # outlive a young collection weigh on the next full one.
    names = [
        produce_safe_name(
            invoker.name if counts[ invoker.name ] == 1
            else f"{ensemble.name}{SCOPE_SEPARATOR}{invoker.name}" )
        for ensemble, invokers in zip( ensembles, invokerses )
        for invoker in invokers ]
    return _resolve_collisions( names, ensembles, invokerses )


def _resolve_collisions(
    names: list[ str ],
    ensembles: tuple[ _ensembles.Ensemble, ... ],
    invokerses: Invokerses,
) -> list[ str ]:
    ''' Gives distinct hashed names where cleaning made names collide. '''
    if len( set( names ) ) == len( names ): return names
    counts = __.collections.Counter( names )
    pairs = [
        ( ensemble, invoker )
        for ensemble, invokers in zip( ensembles, invokerses )
        for invoker in invokers ]
    # Hashed from the pair encoded without ambiguity: names may hold any
    # separator ('a/b' and 'c' against 'a' and 'b/c'). A longer digest
    # settles what a short one does not (a chance in billions).
    for length in _DIGEST_LENGTHS:
        resolved = [
            name if counts[ name ] == 1 else _produce_hashed_name(
                f"{ensemble.name}/{invoker.name}",
                __.json.dumps( [ ensemble.name, invoker.name ] ), length )
            for name, ( ensemble, invoker ) in zip( names, pairs ) ]
        if len( set( resolved ) ) == len( resolved ): return resolved
    raise _exceptions.EnsemblesInvalidity( # pragma: no cover
        "tool names collide even after hashing; rename the tools." )


def _produce_hashed_name( name: str, key: str, length: int ) -> str:
    ''' Returns name cleaned and suffixed with a digest of key. '''
    # Lone surrogates, which MCP servers may send, are hashed as they are.
    digest = __.hashlib.sha256(
        key.encode( 'utf-8', 'surrogatepass' ) ).hexdigest( )
    cleaned = _characters_unsafe.sub( '_', name ).strip( '_' )
    if cleaned and not _initial_safe.match( cleaned ): cleaned = f"_{cleaned}"
    cleaned = cleaned[ : NAME_LENGTH_MAXIMUM - length - 1 ] or 'tool'
    return f"{cleaned}_{digest[ : length ]}"


def _survey_ensembles( ensembles: object ) -> tuple[ __.typx.Any, ... ]:
    ''' Returns ensembles as a tuple; refuses what is not a sequence of
        ensembles (a careless argument: one ensemble alone, None, a name).
    '''
    kind = type( ensembles ).__name__
    ensembles_: tuple[ object, ... ] = ( ensembles, )
    if not isinstance( ensembles, ( str, bytes, __.cabc.Mapping ) ) and (
        isinstance( ensembles, __.cabc.Iterable )
    ):
        iterable = __.typx.cast( __.cabc.Iterable[ object ], ensembles )
        ensembles_ = tuple( iterable )
        if all( map( _is_ensemble, ensembles_ ) ): return ensembles_
    strays = ', '.join( sorted( {
        type( ensemble ).__name__
        for ensemble in ensembles_ if not _is_ensemble( ensemble ) } ) )
    raise _exceptions.EnsemblesInvalidity(
        "expected a sequence of ensembles, such as [ ensemble ]; got "
        f"{strays or kind}." )


def _is_ensemble( value: object ) -> bool:
    return isinstance( getattr( value, 'name', None ), str ) and callable(
        getattr( value, 'survey_invokers', None ) )


def _validate_ensemble_names(
    ensembles: tuple[ _ensembles.Ensemble, ... ]
) -> None:
    names = [ ensemble.name for ensemble in ensembles ]
    if len( set( names ) ) == len( names ): return
    counts = __.collections.Counter( names )
    duplicates = sorted( name for name, count in counts.items( ) if count > 1 )
    if duplicates:
        raise _exceptions.EnsemblesInvalidity(
            "several ensembles are named {names}; give each ensemble a "
            "distinct name.".format(
                names = ', '.join( repr( name ) for name in duplicates ) ) )


class _DesignationsPending( __.cabc.Mapping[ str, Designation ] ):
    ''' Stands for the designations by name until they are first read.

        Its nomenclature then holds the map itself: reading a name costs
        the same as if the map had been made with the nomenclature. Held
        weakly, so that a nomenclature never read by name makes no cycle
        and goes as soon as it is dropped.
    '''

    __slots__ = ( '_nomenclature', )

    def __init__( self, nomenclature: Nomenclature ):
        self._nomenclature = _weakref.ref( nomenclature )

    def __getitem__( self, name: str ) -> Designation:
        return self._access( )[ name ]

    def __iter__( self ) -> __.cabc.Iterator[ str ]:
        return iter( self._access( ) )

    def __len__( self ) -> int:
        return len( self._access( ) )

    def _access( self ) -> __.cabc.Mapping[ str, Designation ]:
        nomenclature = self._nomenclature( )
        # Only its nomenclature holds this stand-in: it lives while read.
        if nomenclature is None: return { } # pragma: no cover
        return nomenclature.access_designations_by_name( )
