# SPDX-License-Identifier: Apache-2.0

''' Provider-facing tool names, unique across ensembles and reversible.

    Every provider accepts names matching ``^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$``
    (Gemini wants a letter or an underscore first; the others take
    ``^[a-zA-Z0-9_-]{1,64}$``). A tool keeps its bare name when no other
    ensemble offers the same name; names which collide are scoped by
    ensemble (``ensemble__tool``). A name which is safe but for its first
    character gets a leading underscore (``2fa_verify`` becomes
    ``_2fa_verify``); other names which cannot be made safe are cleaned and
    shortened with a stable hash of the original. The result depends only
    on the names, never on the order of arrival, the process or the run.
'''


from . import __
from . import ensembles as _ensembles
from . import exceptions as _exceptions
from . import invokers as _invokers


NAME_LENGTH_MAXIMUM = 64
SCOPE_SEPARATOR = '__'

_CACHE_SIZE_MAXIMUM = 32
_DIGEST_LENGTH = 8
_name_safe = __.re.compile( r'^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$' )
_characters_unsafe = __.re.compile( r'[^a-zA-Z0-9_-]+' )
_initial_safe = __.re.compile( r'^[a-zA-Z_]' )
# Keyed by identities of ensembles; entries check their ensembles' tools.
_nomenclatures: dict[ tuple[ int, ... ], 'Nomenclature' ] = { }


@__.dcls.dataclass( frozen = True, slots = True )
class Designation:
    ''' Provider-facing name with the ensemble and invoker it stands for. '''

    name: str
    ensemble: _ensembles.Ensemble
    invoker: _invokers.Invoker


class Nomenclature( __.immut.Object ):
    ''' Exact two-way map between provider-facing names and invokers. '''

    def __init__(
        self,
        ensembles: tuple[ _ensembles.Ensemble, ... ],
        designations: tuple[ Designation, ... ],
    ):
        self.ensembles = ensembles
        self.invokerses = tuple(
            ensemble.survey_invokers( ) for ensemble in ensembles )
        self.designations = designations
        self._by_name = __.types.MappingProxyType(
            { designation.name: designation for designation in designations } )
        # Made at first use: most nomenclatures only ever map names.
        self._by_origin: dict[ tuple[ str, str ], str ] = { }

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
        if not origins and self.designations:
            origins.update( {
                ( designation.ensemble.name, designation.invoker.name ):
                    designation.name
                for designation in self.designations } )
        try: return origins[ ( ensemble, invoker ) ]
        except KeyError as exception:
            raise _exceptions.InvokerAbsence(
                invoker, ensemble ) from exception


def access_nomenclature(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ] | Nomenclature
) -> Nomenclature:
    ''' Returns nomenclature for ensembles, cached while tools are unchanged.

        The cache is keyed by the identity of each ensemble and of its tuple
        of invokers, so a change in an ensemble's tools (for example, an MCP
        server's ``tools/list_changed``) gives a new nomenclature.
    '''
    if isinstance( ensembles, Nomenclature ): return ensembles
    ensembles_ = tuple( ensembles )
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
    ensembles_ = tuple( ensembles )
    _validate_ensemble_names( ensembles_ )
    invokerses = tuple(
        ensemble.survey_invokers( ) for ensemble in ensembles_ )
    # No pair per tool: at thousands of tools, short-lived tuples which
    # outlive a young collection weigh on the next full one.
    counts = __.collections.Counter(
        invoker.name for invokers in invokerses for invoker in invokers )
    names = [
        produce_safe_name(
            invoker.name if counts[ invoker.name ] == 1
            else f"{ensemble.name}{SCOPE_SEPARATOR}{invoker.name}" )
        for ensemble, invokers in zip( ensembles_, invokerses )
        for invoker in invokers ]
    names = _resolve_collisions( names, ensembles_, invokerses )
    designations: list[ Designation ] = [ ]
    position = 0
    for ensemble, invokers in zip( ensembles_, invokerses ):
        for invoker in invokers:
            designations.append(
                Designation( names[ position ], ensemble, invoker ) )
            position += 1
    return Nomenclature( ensembles_, tuple( designations ) )


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
    digest = __.hashlib.sha256( name.encode( ) ).hexdigest( )
    cleaned = _characters_unsafe.sub( '_', name ).strip( '_' )
    if cleaned and not _initial_safe.match( cleaned ): cleaned = f"_{cleaned}"
    limit = NAME_LENGTH_MAXIMUM - _DIGEST_LENGTH - 1
    cleaned = cleaned[ : limit ] or 'tool'
    return f"{cleaned}_{digest[ : _DIGEST_LENGTH ]}"


def _resolve_collisions(
    names: list[ str ],
    ensembles: tuple[ _ensembles.Ensemble, ... ],
    invokerses: tuple[ tuple[ _invokers.Invoker, ... ], ... ],
) -> list[ str ]:
    ''' Gives distinct hashed names where cleaning made names collide. '''
    if len( set( names ) ) == len( names ): return names
    counts = __.collections.Counter( names )
    pairs = [
        ( ensemble, invoker )
        for ensemble, invokers in zip( ensembles, invokerses )
        for invoker in invokers ]
    resolved = [
        name if counts[ name ] == 1 else produce_safe_name(
            f"{ensemble.name}/{invoker.name}", force_digest = True )
        for name, ( ensemble, invoker ) in zip( names, pairs ) ]
    if len( set( resolved ) ) != len( resolved ):
        raise _exceptions.EnsemblesInvalidity( # pragma: no cover
            "tool names collide even after hashing; rename the tools." )
    return resolved


def _validate_ensemble_names(
    ensembles: tuple[ _ensembles.Ensemble, ... ]
) -> None:
    counts = __.collections.Counter( ensemble.name for ensemble in ensembles )
    duplicates = sorted( name for name, count in counts.items( ) if count > 1 )
    if duplicates:
        raise _exceptions.EnsemblesInvalidity(
            "several ensembles are named {names}; give each ensemble a "
            "distinct name.".format(
                names = ', '.join( repr( name ) for name in duplicates ) ) )
