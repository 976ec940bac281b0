# SPDX-License-Identifier: Apache-2.0

''' Recall of the local ranker of tool search against plain BM25.

    Two public tool-retrieval sets from the PyPI package ``bfcl-eval``
    (``tests/data/toolsets/benchmark``: BFCL's single-turn Python
    categories; ``tests/data/toolsets/live``: its user-contributed live
    categories): every query which needs a function is searched among
    every definition of its set. The ranker of :py:mod:`invocables.search`
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

from invocables import search


_TOOLSETS = Path( __file__ ).resolve( ).parents[ 1 ] / 'data' / 'toolsets'
_LIMIT = 5


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


def _measure_recall( index, questions ):
    ''' Returns recall at 5: share of needed names among the first five
        distinct names, averaged over queries.
    '''
    total = 0.0
    for text, expected in questions:
        names = [ ]
        for match in index.query_matches( text, _LIMIT * 4 ):
            if match.name not in names: names.append( match.name )
        total += len( expected & set( names[ : _LIMIT ] ) ) / len( expected )
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

