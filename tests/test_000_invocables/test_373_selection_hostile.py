# SPDX-License-Identifier: Apache-2.0

''' Selection and tool search against careless input: what a selector
    returns, patterns, ensembles, rankers and limits of the wrong kind are
    refused with errors of configuration, never raw TypeErrors later.
'''


import typing

import pytest

import invocables

from invocables import exceptions
from invocables.toolsets import search, selection


def _files( ) -> invocables.Ensemble:

    def read_file( path: str ) -> str:
        ''' Reads a file from the disk. '''
        return f"contents of {path}"

    def write_file( path: str, text: str ) -> str:
        ''' Writes a file to the disk. '''
        return f"wrote {path}"

    return invocables.produce_ensemble( 'fs', [
        invocables.produce_invoker( read_file ),
        invocables.produce_invoker( write_file ),
    ] )


class _Selector:

    def __init__( self, answer: object ):
        self.answer = answer

    def survey_names( self, situation: selection.Situation ) -> typing.Any:
        return self.answer


@pytest.mark.parametrize( 'answer', [
    None, 5, [ { 'a': 1 } ], [ 'read_file', None ], [ 'read_file', [ 'x' ] ],
] )
@pytest.mark.asyncio
async def test_100_selector_answers_checked( answer: object ):
    ''' A selector which returns no names, or names which are not strings,
        gets an error of configuration naming the selection.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        await selection.survey_selection(
            [ _files( ) ], _Selector( answer ), round = 1, messages = [ ],
            namespace = { } )
    assert 'selection' in str( caught.value )


@pytest.mark.parametrize( 'patterns', [ None, 5 ] )
def test_110_patterns_checked( patterns: object ):
    ''' Patterns of a selector, or the ``loaded`` of a tool search, which
        are not strings are refused at construction.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        selection.PatternsSelector( patterns ) # type: ignore[arg-type]
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        search.ToolSearch(
            [ _files( ) ], loaded = patterns ) # type: ignore[arg-type]


@pytest.mark.parametrize( 'ensembles', [ 5, [ 5 ], [ _files( ), 'fs' ] ] )
def test_200_search_ensembles_checked( ensembles: object ):
    ''' A tool search over something which is no ensemble is refused at
        construction, not with a raw error at the first search.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        search.ToolSearch( ensembles ) # type: ignore[arg-type]


def test_210_search_ranker_checked( ):
    ''' A ranker without ``produce_index`` is refused at construction. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        search.ToolSearch( [ _files( ) ], ranker = 5 ) # type: ignore[arg-type]


@pytest.mark.parametrize( 'limit', [ 0, -1, 2.5, None, True, '3' ] )
def test_220_search_limit_checked( limit: object ):
    ''' A limit of a search in code which is no whole number from 1 is
        refused (not a raw TypeError, nor silently nothing found).
    '''
    tools = search.ToolSearch( [ _files( ) ] )
    assert tools.query_matches( 'read file', 1 )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        tools.query_matches( 'read file', limit ) # type: ignore[arg-type]
