# SPDX-License-Identifier: Apache-2.0

''' Per-round selection of the tools offered to the model.

    A selector chooses, before each call of the model, which tools are
    offered, from the conversation so far. Names are those of the
    nomenclature of *all* the ensembles, never of the selected ones alone:
    a tool keeps its provider-facing name whatever else is offered, so
    names map back exactly even when the offered set changes from round to
    round. A selection is itself a :py:class:`invocables.Nomenclature`
    (the chosen designations, with their names), which every processor's
    ``prepare_tools`` and the engine take in place of ensembles.
'''


import invocables.__ as __
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.naming as _naming


Names: __.typx.TypeAlias = __.cabc.Iterable[ str ]
Ensembles: __.typx.TypeAlias = (
    __.cabc.Sequence[ _ensembles.Ensemble ] | _naming.Nomenclature )

_names_valid = object( )
_scribe = __.produce_scribe( __name__ )


class Situation( __.immut.DataclassObject ):
    ''' What a selector sees before a call of the model. '''

    round: __.typx.Annotated[
        int, __.ddoc.Doc( ''' Number of the coming round, from 1. ''' ) ]
    messages: __.typx.Annotated[
        __.cabc.Sequence[ __.cabc.Mapping[ str, __.typx.Any ] ],
        __.ddoc.Doc( ''' Native messages of the conversation so far. ''' ),
    ]
    nomenclature: __.typx.Annotated[
        _naming.Nomenclature,
        __.ddoc.Doc( ''' Names of every tool of every ensemble. ''' ),
    ]
    namespace: __.typx.Annotated[
        __.Namespace,
        __.ddoc.Doc( ''' State of the conversation (where tool search
            records the tools it found). ''' ),
    ]


class Selector( __.typx.Protocol ):
    ''' Chooses the tools offered in a round. '''

    def survey_names(
        self, situation: Situation
    ) -> Names | __.cabc.Awaitable[ Names ]:
        ''' Returns provider-facing names of the tools to offer.

            Names which the nomenclature does not know are ignored (a tool
            may have left its server). May be a coroutine function.
        '''
        raise NotImplementedError  # pragma: no cover


class PatternsSelector( __.immut.Object ):
    ''' Offers the tools whose provider-facing names match glob patterns.
    '''

    def __init__(
        self,
        patterns: __.typx.Annotated[
            str | __.cabc.Iterable[ str ],
            __.ddoc.Doc( ''' Glob patterns, such as ``'git_*'``. ''' ),
        ],
    ):
        self.patterns = _validate_names( patterns, 'selector patterns' )

    def survey_names( self, situation: Situation ) -> Names:
        ''' Returns names of the nomenclature which match a pattern. '''
        return survey_matching_names(
            situation.nomenclature, self.patterns )


def produce_selection(
    ensembles: __.typx.Annotated[
        Ensembles,
        __.ddoc.Doc( ''' Every ensemble (or their nomenclature). ''' ),
    ],
    names: __.typx.Annotated[
        Names,
        __.ddoc.Doc( ''' Provider-facing names of the tools to offer. ''' ),
    ],
) -> _naming.Nomenclature:
    ''' Produces nomenclature of the named tools only, names unchanged.

        The designations keep the order of the full nomenclature (which
        helps providers' prompt caches); unknown names are ignored. Give
        the result to ``prepare_tools`` and to the engine in place of the
        ensembles.
    '''
    nomenclature = _naming.access_nomenclature( ensembles )
    if isinstance( names, str ):
        raise _exceptions.ConfigurationInvalidity(
            'selection', "expected several names, got one string; wrap "
            "it in a list." )
    wanted = set( _validate_names( names, 'selection' ) )
    designations = tuple(
        designation for designation in nomenclature.designations
        if designation.name in wanted )
    if len( designations ) < len( wanted ):
        known = { designation.name for designation in designations }
        _scribe.debug(
            "Selection ignores unknown tool names: %s.",
            ', '.join( sorted( wanted - known ) ) )
    return _naming.Nomenclature( nomenclature.ensembles, designations )


async def survey_selection(
    ensembles: __.typx.Annotated[
        Ensembles,
        __.ddoc.Doc( ''' Every ensemble (or their nomenclature). ''' ),
    ],
    selector: __.typx.Annotated[
        Selector, __.ddoc.Doc( ''' Chooses the tools of the round. ''' )
    ],
    *,
    round: int, # noqa: A002
    messages: __.cabc.Sequence[ __.cabc.Mapping[ str, __.typx.Any ] ],
    namespace: __.Namespace,
) -> _naming.Nomenclature:
    ''' Returns nomenclature of the tools which selector offers in round.

        What the conversation loop does before each call of the model.
    '''
    nomenclature = _naming.access_nomenclature( ensembles )
    situation = Situation(
        round = round, messages = messages, nomenclature = nomenclature,
        namespace = namespace )
    names = selector.survey_names( situation )
    if __.inspect.isawaitable( names ): names = await names
    return produce_selection( nomenclature, names )


def survey_matching_names(
    ensembles: Ensembles, patterns: __.cabc.Iterable[ str ]
) -> tuple[ str, ... ]:
    ''' Returns provider-facing names which match any glob pattern. '''
    nomenclature = _naming.access_nomenclature( ensembles )
    patterns_ = tuple( patterns )
    return tuple(
        designation.name for designation in nomenclature.designations
        if _naming.is_name_matching( designation.name, patterns_ ) )


def _validate_names( names: object, location: str ) -> tuple[ str, ... ]:
    ''' Returns names (or patterns) as a tuple; one string is one.

        Raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
        for anything but strings (what a selector returned, too).
    '''
    if isinstance( names, str ): return ( names, )
    flaw: object = names
    if isinstance( names, __.cabc.Iterable ):
        items = tuple( __.typx.cast( __.cabc.Iterable[ object ], names ) )
        flaw = next(
            ( item for item in items if not isinstance( item, str ) ),
            _names_valid )
        if flaw is _names_valid:
            return __.typx.cast( tuple[ str, ... ], items )
    raise _exceptions.ConfigurationInvalidity(
        location, "expected names of tools (strings), got {genus}.".format(
            genus = type( flaw ).__name__ ) )
