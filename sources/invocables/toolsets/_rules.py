# SPDX-License-Identifier: Apache-2.0

''' Rules of permission policies: an action, and what it matches.

    :py:mod:`invocables.toolsets.policies` orders them and re-exports
    them; each matches a tool by every name of its identity (see
    :py:mod:`invocables.toolsets.wrappers`) and by its hints.
'''


import invocables.__ as __
import invocables.exceptions as _exceptions
import invocables.naming as _naming
import invocables.toolsets._delegates as _delegates
import invocables.toolsets.wrappers as _wrappers


Hints: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]

_HINTS = _delegates.HINTS


class Actions( __.enum.Enum ):
    ''' What a rule does with the calls it matches. '''

    Allow = 'allow'
    Ask = 'ask'
    Deny = 'deny'


class Rule( __.immut.DataclassObject ):
    ''' One rule: an action and what it matches (all given must match).

        Patterns are globs (``*``, ``?``, ``[...]``) over the ensemble
        name and the tool name: the names as the tool's source names them
        (the innermost ensemble, the tool before any prefix or rename) or,
        as well, the names a wrapper offers them under. Whatever a
        provider or a wrapper calls a tool or its ensemble, a rule on the
        source names governs it. Hints match
        the tool's annotations, MCP defaults applying to a tool which says
        nothing (``destructive`` unless read-only, ``open_world``).
    '''

    action: Actions
    ensemble: __.Absential[ str ] = __.absent
    tool: __.Absential[ str ] = __.absent
    read_only: __.Absential[ bool ] = __.absent
    destructive: __.Absential[ bool ] = __.absent
    idempotent: __.Absential[ bool ] = __.absent
    open_world: __.Absential[ bool ] = __.absent
    name: __.Absential[ str ] = __.absent

    def __post_init__( self ) -> None:
        if not isinstance( self.action, Actions ):
            raise _exceptions.ConfigurationInvalidity(
                'rule action', f"{self.action!r} is not one of "
                "'allow', 'ask', 'deny'." )
        for key in ( 'ensemble', 'tool', 'name', *_HINTS ):
            value = getattr( self, key )
            if __.is_absent( value ): continue
            # Not 1 for True: a hint is matched by identity.
            if key in _HINTS: reason = (
                '' if type( value ) is bool else "expected a boolean." )
            elif key == 'name': reason = (
                '' if isinstance( value, str ) else "expected a text." )
            else: reason = _naming.describe_pattern_flaw( value )
            if reason: raise _exceptions.ConfigurationInvalidity(
                f"rule {key}", reason )

    def describe( self ) -> str:
        ''' Returns short description of rule, for messages. '''
        parts = [ self.action.value ]
        for key in ( 'ensemble', 'tool', *_HINTS ):
            value = getattr( self, key )
            if __.is_absent( value ): continue
            parts.append( f"{key} = {value!r}" )
        text = ' '.join( parts )
        if __.is_absent( self.name ): return text
        return f"{self.name!r} ({text})"

    def is_match(
        self, ensemble: str, tool: str, hints: Hints, alias: str = '',
        ensemble_alias: str = '', *,
        aliases: __.cabc.Sequence[ str ] = ( ),
        ensemble_aliases: __.cabc.Sequence[ str ] = ( ),
    ) -> bool:
        ''' Returns whether rule matches tool of ensemble.

            ``ensemble`` and ``tool`` are the names as the tool's source
            names them; ``ensemble_alias`` and ``alias``, if given, the
            names under which a wrapper offers them; ``ensemble_aliases``
            and ``aliases``, the names which wrappers between give them
            (as :py:func:`invocables.toolsets.wrappers.survey_ensemble_names`
            and ``survey_identity_names`` return them).
        '''
        return self.is_matching_names( *collect_names(
            ensemble, tool, alias, ensemble_alias, aliases,
            ensemble_aliases ), hints )

    def is_matching_names(
        self, ensembles: tuple[ str, ... ], tools: tuple[ str, ... ],
        hints: Hints,
    ) -> bool:
        ''' Returns whether rule matches tool by all names of ensemble
            and of tool (as :py:func:`collect_names` returns them). '''
        for pattern, names in ( ( self.ensemble, ensembles ), (
            self.tool, tools )
        ):
            if __.is_absent( pattern ): continue
            if not _wrappers.is_names_matching( names, ( pattern, ) ):
                return False
        for key in _HINTS:
            wanted = getattr( self, key )
            if __.is_absent( wanted ): continue
            if _delegates.access_hint( hints, key ) is not wanted: return False
        return True


def collect_names(
    ensemble: str, tool: str, alias: str, ensemble_alias: str,
    aliases: __.cabc.Sequence[ str ],
    ensemble_aliases: __.cabc.Sequence[ str ],
) -> tuple[ tuple[ str, ... ], tuple[ str, ... ] ]:
    ''' Returns every name of ensemble, then of tool, each once. '''
    return (
        tuple( dict.fromkeys( (
            ensemble_alias or ensemble, ensemble, *ensemble_aliases ) ) ),
        tuple( dict.fromkeys( ( alias or tool, tool, *aliases ) ) ) )
