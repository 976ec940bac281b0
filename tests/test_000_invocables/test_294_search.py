# SPDX-License-Identifier: Apache-2.0

''' Tool search: the BM25 ranker, the search tool, found tools offered. '''


import pytest

import invocables

from invocables import exceptions
from invocables.toolsets import search, selection

from . import toolsets_support


def _situation( tool_search, namespace, round_ = 1 ):
    return selection.Situation(
        round = round_, messages = ( ),
        nomenclature = invocables.naming.access_nomenclature(
            tool_search.ensembles ),
        namespace = namespace )


def _context( namespace ):
    return invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = namespace )


def test_100_terms( ):
    ''' Words split at case changes and punctuation, stemmed, no stop
        words.
    '''
    assert search.produce_terms( 'getWeatherForecasts' ) == [
        'weather', 'forecast' ]
    assert search.produce_terms( 'maps.search_places for the city' ) == [
        'map', 'search', 'place', 'city' ]
    assert search.produce_terms( 'HTTPRequest v2' ) == [
        'http', 'request', 'v', '2' ]


@pytest.mark.parametrize( ( 'query', 'expected' ), [
    ( 'create a pull request on github', 'create_pull_request' ),
    ( 'take a screenshot of the browser page', 'browser_take_screenshot' ),
    ( 'driving directions between two places', 'maps_directions' ),
    ( 'current time in Tokyo', 'get_current_time' ),
    ( 'read a file from disk', 'read_file' ),
] )
def test_110_bm25_on_real_servers( query, expected ):
    ''' Among the 189 tools of 18 real MCP servers, the tool wanted is
        among the first three.
    '''
    tool_search = search.ToolSearch(
        toolsets_support.produce_mcp_ensembles( ) )
    names = [ match.name for match in tool_search.query_matches( query, 3 ) ]
    assert expected in names


def test_120_bm25_order_and_limits( ):
    ''' Matches come best first, at most limit, none without a term. '''
    documents = [
        search.produce_document( 'alpha', 'Reads weather.', { } ),
        search.produce_document( 'beta', 'Weather weather forecast.', { } ),
        search.produce_document( 'gamma', 'Sends mail.', {
            'type': 'object',
            'properties': { 'forecast': { 'description': 'Nested.' } } } ),
    ]
    index = search.Bm25Ranker( ).produce_index( documents )
    matches = index.query_matches( 'weather forecast', 5 )
    assert [ match.name for match in matches ][ 0 ] == 'beta'
    assert { match.name for match in matches } == {
        'alpha', 'beta', 'gamma' }
    assert len( index.query_matches( 'weather', 1 ) ) == 1
    assert index.query_matches( 'nothing here', 5 ) == ( )
    assert search.Bm25Ranker( ).produce_index( [ ] ).query_matches(
        'x', 3 ) == ( )


@pytest.mark.asyncio
async def test_200_found_tools_offered_next( ):
    ''' Before a search: loaded tools and the search tool; after: also
        what it found, most recent last.
    '''
    tool_search = search.ToolSearch(
        toolsets_support.produce_mcp_ensembles( ),
        loaded = [ 'get_current_time' ], found_maximum = 4 )
    namespace = { }
    assert tool_search.survey_names( _situation( tool_search, namespace ) ) == [
        'get_current_time', 'search_tools' ]
    invoker = tool_search.invoker
    text = ( await invoker(
        _context( namespace ),
        { 'query': 'driving directions', 'limit': 2 } ) )[ 0 ].text
    assert 'maps_directions(' in text
    assert 'next step' in text
    names = tool_search.survey_names( _situation( tool_search, namespace, 2 ) )
    assert names[ : 2 ] == [ 'get_current_time', 'search_tools' ]
    assert 'maps_directions' in names[ 2 : ]
    assert len( names ) == 4
    await invoker( _context( namespace ), { 'query': 'screenshot page' } )
    found = tool_search.survey_found( namespace )
    assert len( found ) == 4
    assert 'maps_directions' not in found


@pytest.mark.asyncio
async def test_210_loaded_and_search_not_searched( ):
    ''' Loaded tools and the search tool are never search results. '''
    tool_search = search.ToolSearch(
        toolsets_support.produce_mcp_ensembles( ),
        loaded = 'get_current_time' )
    names = [
        match.name
        for match in tool_search.query_matches( 'current time tools', 20 ) ]
    assert 'get_current_time' not in names
    assert 'search_tools' not in names
    text = ( await tool_search.invoker(
        _context( { } ), { 'query': 'zzzz qqqq' } ) )[ 0 ].text
    assert 'No tool matches' in text


@pytest.mark.asyncio
async def test_220_arguments_validated( ):
    ''' Search arguments are validated as any tool's. '''
    tool_search = search.ToolSearch(
        toolsets_support.produce_mcp_ensembles( ) )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await tool_search.invoker( _context( { } ), { 'limit': 3 } )
    with pytest.raises( exceptions.ArgumentsInvalidity ):
        await tool_search.invoker(
            _context( { } ), { 'query': 'x', 'limit': 500 } )


def test_230_options_checked( ):
    ''' Bad limits and names are refused, saying what is expected. '''
    ensembles = toolsets_support.produce_mcp_ensembles( )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        search.ToolSearch( ensembles, limit = 0 )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        search.ToolSearch( ensembles, found_maximum = True )
    with pytest.raises( exceptions.InvokerInvalidity ):
        search.ToolSearch( ensembles, name = 'has\ttab' )


class _PrefixIndex:
    ''' Ranks by shared leading letters of names: an application's own. '''

    def __init__( self, documents ):
        self.names = [ document.name for document in documents ]

    def query_matches( self, query, limit ):
        return [
            search.Match( name = name, score = 1.0 )
            for name in self.names if name.startswith( query ) ][ : limit ]


class _PrefixRanker:

    def produce_index( self, documents ):
        return _PrefixIndex( documents )


def test_300_pluggable_ranker( ):
    ''' An application's ranker replaces BM25. '''
    tool_search = search.ToolSearch(
        toolsets_support.produce_mcp_ensembles( ), ranker = _PrefixRanker( ) )
    names = [ match.name for match in tool_search.query_matches( 'git_' ) ]
    assert names == [
        'git_status', 'git_diff_unstaged', 'git_diff_staged', 'git_diff',
        'git_commit' ]
