# SPDX-License-Identifier: Apache-2.0

''' Recall of the local ranker of tool search against plain BM25.

    Two public tool-retrieval sets from the PyPI package ``bfcl-eval``
    (``tests/data/toolsets/benchmark``: BFCL's single-turn Python
    categories; ``tests/data/toolsets/live``: its user-contributed live
    categories): every query which needs a function is searched among
    every definition of its set. The ranker of :py:mod:`invocables.toolsets.search`
    finds at least as many of the needed functions among its first five
    distinct names as plain BM25 (Okapi, k1 1.2, b 0.75, over the
    concatenated text of each tool), with plain words or with the
    library's own terms. Deterministic: counted, not timed.
'''


import collections
import json
import math
import re

from pathlib import Path

import pytest

from invocables.toolsets import search


_TOOLSETS = Path( __file__ ).resolve( ).parents[ 1 ] / 'data' / 'toolsets'
_LIMIT = 5
# Questions written for this test from the descriptions of the tools of 18
# real MCP servers (tests/data/toolsets/mcp), with the tools which answer.
_MCP_QUERIES = [
    ( 'search the web for recent news about electric cars',
      { 'brave_web_search' } ),
    ( 'find coffee shops near me',
      { 'brave_local_search', 'maps_search_places' } ),
    ( 'look up documentation for the react library',
      { 'resolve-library-id', 'query-docs' } ),
    ( 'download the contents of a web page as markdown',
      { 'fetch', 'firecrawl_scrape' } ),
    ( 'show the contents of config.yaml', { 'read_text_file', 'read_file' } ),
    ( 'save this text into a new file', { 'write_file' } ),
    ( 'make a new folder called build', { 'create_directory' } ),
    ( 'rename a file to a new name', { 'move_file' } ),
    ( 'list everything in the current folder', { 'list_directory' } ),
    ( 'show the folder structure recursively as a tree',
      { 'directory_tree' } ),
    ( 'what changed in my working tree that is not staged',
      { 'git_diff_unstaged' } ),
    ( 'record my staged changes with a message', { 'git_commit' } ),
    ( 'switch to another branch', { 'git_checkout' } ),
    ( 'show recent commit history', { 'git_log', 'list_commits' } ),
    ( 'open an issue on the github repository about a bug',
      { 'create_issue' } ),
    ( 'merge the pull request', { 'merge_pull_request' } ),
    ( 'fork a repository of another user into my account',
      { 'fork_repository' } ),
    ( 'convert an address to latitude and longitude coordinates',
      { 'maps_geocode' } ),
    ( 'driving directions from Paris to Lyon', { 'maps_directions' } ),
    ( 'how high above sea level is this location', { 'maps_elevation' } ),
    ( 'store a fact about a person in the knowledge graph',
      { 'create_entities', 'add_observations' } ),
    ( 'delete a relation between two entities', { 'delete_relations' } ),
    ( 'take a picture of the current browser page',
      { 'browser_take_screenshot', 'puppeteer_screenshot' } ),
    ( 'click the submit button on the page',
      { 'browser_click', 'puppeteer_click' } ),
    ( 'type text into an input field', { 'browser_type', 'puppeteer_fill' } ),
    ( 'go to a url in the browser',
      { 'browser_navigate', 'puppeteer_navigate' } ),
    ( 'run a read-only SQL query on the database', { 'query' } ),
    ( 'think step by step through a hard problem', { 'sequentialthinking' } ),
    ( 'post a message to a slack channel', { 'slack_post_message' } ),
    ( 'react with an emoji to a slack message', { 'slack_add_reaction' } ),
    ( 'what time is it in Tokyo right now', { 'get_current_time' } ),
    ( 'convert 3pm New York time to London time', { 'convert_time' } ),
    ( 'crawl an entire website and extract all pages', { 'firecrawl_crawl' } ),
    ( 'search notion pages by title', { 'API-post-search' } ),
    ( 'add a comment to a notion page', { 'API-create-a-comment' } ),
    ( 'add two numbers together', { 'get-sum' } ),
    ( 'get file size and modification time', { 'get_file_info' } ),
    ( 'replace some lines in a text file', { 'edit_file' } ),
    ( 'search for code across github repositories', { 'search_code' } ),
    ( 'read several files at once', { 'read_multiple_files' } ),
]


class PlainBm25:
    ''' Plain BM25 (Okapi) over the whole text of each tool: the
        reference.
    '''

    def __init__( self, documents, split, k1 = 1.2, b = 0.75 ):
        self.names = [ document.name for document in documents ]
        frequencies = [ ]
        for document in documents:
            text = ' '.join( (
                document.name, document.title, document.description,
                *( f"{name} {description}"
                   for name, description in document.parameters ) ) )
            frequencies.append( collections.Counter( split( text ) ) )
        lengths = [ sum( counts.values( ) ) for counts in frequencies ]
        average = sum( lengths ) / len( lengths )
        self.postings = collections.defaultdict( list )
        for index, counts in enumerate( frequencies ):
            for term, count in counts.items( ):
                self.postings[ term ].append( ( index, count ) )
        total = len( documents )
        self.scores = { }
        for term, items in self.postings.items( ):
            idf = math.log( 1 + ( total - len( items ) + 0.5 ) / (
                len( items ) + 0.5 ) )
            self.scores[ term ] = [
                ( index, idf * count * ( k1 + 1 ) / ( count + k1 * (
                    1 - b + b * lengths[ index ] / average ) ) )
                for index, count in items ]
        self.split = split

    def query_matches( self, query, limit ):
        ''' Returns best matches, ties by order. '''
        scores = collections.defaultdict( float )
        for term in set( self.split( query ) ):
            for index, score in self.scores.get( term, ( ) ):
                scores[ index ] += score
        best = sorted(
            scores.items( ), key = lambda item: ( -item[ 1 ], item[ 0 ] ) )
        return [
            search.Match( name = self.names[ index ], score = score )
            for index, score in best[ : limit ] ]


def _split_plain( text ):
    return re.findall( r'[a-z0-9]+', text.lower( ) )


def _read_jsonl( path ):
    return [
        json.loads( line )
        for line in path.read_text( encoding = 'utf-8' ).splitlines( )
        if line.strip( ) ]


def _read_set( folder ):
    functions = _read_jsonl( _TOOLSETS / folder / 'functions.jsonl' )
    queries = _read_jsonl( _TOOLSETS / folder / 'queries.jsonl' )
    documents = [
        search.produce_document(
            entry[ 'function' ][ 'name' ],
            entry[ 'function' ].get( 'description' ) or '',
            entry[ 'function' ].get( 'parameters' ) )
        for entry in functions ]
    questions = [
        ( ' '.join(
            message[ 'content' ] for turn in query[ 'question' ]
            for message in turn if message[ 'role' ] == 'user' ),
          frozenset( query[ 'expected_names' ] ) )
        for query in queries if query[ 'expected_names' ] ]
    return documents, questions


def _measure_recall( index, questions, limit = _LIMIT ):
    ''' Returns recall at limit: share of needed names among the first
        distinct names, averaged over queries.
    '''
    total = 0.0
    for text, expected in questions:
        names = [ ]
        for match in index.query_matches( text, limit * 4 ):
            if match.name not in names: names.append( match.name )
        total += len( expected & set( names[ : limit ] ) ) / len( expected )
    return total / len( questions )


@pytest.mark.slow
@pytest.mark.parametrize( ( 'folder', 'least' ), [
    ( 'benchmark', 0.90 ), ( 'live', 0.845 ),
] )
def test_100_recall_at_least_plain_bm25( folder, least ):
    ''' On each set, the ranker's recall at 5 is at least plain BM25's,
        with plain words and with the library's terms, and at least the
        figure documented.
    '''
    documents, questions = _read_set( folder )
    ours = _measure_recall(
        search.Bm25Ranker( ).produce_index( documents ), questions )
    plain = _measure_recall( PlainBm25( documents, _split_plain ), questions )
    stemmed = _measure_recall(
        PlainBm25( documents, search.produce_terms ), questions )
    assert ours >= plain
    assert ours >= stemmed
    assert ours >= least



def test_200_recall_on_real_servers( ):
    ''' Among the 189 tools of 18 real MCP servers, with questions written
        from their descriptions, the ranker finds at least as many as plain
        BM25, at 3 and at 5.
    '''
    documents = [ ]
    for path in sorted( ( _TOOLSETS / 'mcp' ).glob( '*.json' ) ):
        listing = json.loads( path.read_text( encoding = 'utf-8' ) )
        documents.extend(
            search.produce_document(
                tool[ 'name' ], tool.get( 'description' ) or '',
                tool.get( 'inputSchema' ), tool.get( 'title' ) or '' )
            for tool in listing[ 'result' ][ 'tools' ] )
    questions = [
        ( text, frozenset( names ) ) for text, names in _MCP_QUERIES ]
    index = search.Bm25Ranker( ).produce_index( documents )
    for limit in ( 3, 5 ):
        ours = _measure_recall( index, questions, limit )
        for split in ( _split_plain, search.produce_terms ):
            assert ours >= _measure_recall(
                PlainBm25( documents, split ), questions, limit )
