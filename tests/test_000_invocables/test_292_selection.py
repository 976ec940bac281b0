# SPDX-License-Identifier: Apache-2.0

''' Per-round selection: offered sets change, names stay the same. '''


import pytest

import invocables

from invocables import exceptions, processors
from invocables.toolsets import selection

from . import toolsets_support


def _produce_pair( ):
    ''' Two ensembles which both have a tool named 'search'. '''

    def search( query: str ) -> str:
        ''' Searches the web. '''
        return f"web {query}"

    def fetch( url: str ) -> str:
        ''' Fetches a page. '''
        return f"page {url}"

    def search_code( query: str ) -> str:
        ''' Searches code. '''
        return f"code {query}"

    web = invocables.produce_ensemble( 'web', [ search, fetch ] )
    code = invocables.produce_ensemble( 'code', [
        invocables.produce_invoker( search_code, name = 'search' ) ] )
    return web, code


def _names( nomenclature ):
    return [ designation.name for designation in nomenclature.designations ]


def test_100_names_stable_across_selections( ):
    ''' A scoped name stays scoped when its twin is not offered, and maps
        back to the same invoker.
    '''
    ensembles = _produce_pair( )
    full = invocables.naming.access_nomenclature( ensembles )
    assert _names( full ) == [ 'web__search', 'fetch', 'code__search' ]
    first = selection.produce_selection( ensembles, [ 'fetch' ] )
    second = selection.produce_selection(
        ensembles, [ 'code__search', 'fetch' ] )
    assert _names( first ) == [ 'fetch' ]
    assert _names( second ) == [ 'fetch', 'code__search' ]
    designation = second.access_designation( 'code__search' )
    assert designation.ensemble is ensembles[ 1 ]
    assert designation.invoker is full.access_designation(
        'code__search' ).invoker
    with pytest.raises( exceptions.InvokerAbsence ):
        first.access_designation( 'code__search' )


def test_110_unknown_names_ignored_string_refused( ):
    ''' Unknown names are ignored; one string is not taken as names. '''
    ensembles = _produce_pair( )
    chosen = selection.produce_selection( ensembles, [ 'fetch', 'gone' ] )
    assert _names( chosen ) == [ 'fetch' ]
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        selection.produce_selection( ensembles, 'fetch' )


def test_120_patterns_selector( ):
    ''' A patterns selector offers the provider names which match. '''
    ensembles = _produce_pair( )
    selector = selection.PatternsSelector( '*search' )
    situation = selection.Situation(
        round = 1, messages = ( ),
        nomenclature = invocables.naming.access_nomenclature( ensembles ),
        namespace = { } )
    assert list( selector.survey_names( situation ) ) == [
        'web__search', 'code__search' ]
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        selection.PatternsSelector( [ 1 ] )


class _RoundSelector:
    ''' Offers a different tool each round, asynchronously. '''

    def __init__( self ):
        self.situations = [ ]

    async def survey_names( self, situation ):
        self.situations.append( situation )
        return [ 'fetch' ] if situation.round == 1 else [ 'code__search' ]


@pytest.mark.asyncio
async def test_200_survey_selection_each_round( ):
    ''' An asynchronous selector sees the round, messages and namespace. '''
    ensembles = _produce_pair( )
    selector = _RoundSelector( )
    namespace = { 'k': 1 }
    messages = ( { 'role': 'user', 'content': 'hi' }, )
    first = await selection.survey_selection(
        ensembles, selector, round = 1, messages = messages,
        namespace = namespace )
    second = await selection.survey_selection(
        ensembles, selector, round = 2, messages = messages,
        namespace = namespace )
    assert _names( first ) == [ 'fetch' ]
    assert _names( second ) == [ 'code__search' ]
    situation = selector.situations[ 1 ]
    assert situation.round == 2
    assert situation.namespace is namespace
    assert situation.messages == messages


@pytest.mark.asyncio
async def test_300_engine_runs_offered_only( ):
    ''' The engine runs calls of offered tools; others are unknown tools.
    '''
    ensembles = _produce_pair( )
    offered = selection.produce_selection( ensembles, [ 'code__search' ] )
    calls = [
        invocables.InvocationCanister(
            identifier = 'a', name = 'code__search',
            arguments = { 'query': 'x' } ),
        invocables.InvocationCanister(
            identifier = 'b', name = 'web__search',
            arguments = { 'query': 'x' } ) ]
    results = await invocables.execute_invocations( calls, offered )
    assert results[ 0 ].content[ 0 ].text == 'code x'
    assert results[ 1 ].error is not None
    assert 'web__search' in results[ 1 ].error.message


@pytest.mark.parametrize( 'provider', sorted( processors.PROVIDERS ) )
def test_400_processors_prepare_selection( provider ):
    ''' Every processor prepares the offered tools of real MCP servers
        under the names of the full set, whatever is offered.
    '''
    processor = processors.produce_processor( provider )
    ensembles = toolsets_support.produce_mcp_ensembles( )
    full = invocables.naming.access_nomenclature( ensembles )
    assert 'github__create_issue' in _names( full )
    chosen = selection.produce_selection(
        ensembles, [ 'github__create_issue', 'read_file' ] )
    text = repr( processor.prepare_tools( chosen ) )
    assert 'github__create_issue' in text
    assert 'read_file' in text
    assert 'gitlab__create_issue' not in text
    assert 'create_pull_request' not in text
    assert processor.prepare_tools(
        ensembles, selection = [ 'github__create_issue', 'read_file' ]
    ) == processor.prepare_tools( chosen )
