# SPDX-License-Identifier: Apache-2.0

''' Tool search: recall, latency and tokens per round, on real tool sets.

    Run with ``python benchmarks/selection.py`` (``--quick`` for a smoke
    run). Prints:

    * recall at 1, 3 and 5 of the local BM25 ranker on the 450 BFCL
      queries which need a tool (``tests/data/toolsets/benchmark``): the
      share of the functions each query needs found among the first k
      distinct names, among all 1,362 definitions (982 distinct names);
      also the share of queries with at least one needed function in the
      first k;
    * search latency (median per query) and index build time for 100,
      1,000 and 10,000 tools (real definitions, repeated under new names
      past 1,551), with the ratio of each size's latency to the
      smallest's against the ratio of sizes: linear growth keeps the
      first at or below the second;
    * tokens of the tool list sent per round for a 500-tool set (the 189
      tools of 18 real MCP servers and 311 BFCL functions), for every
      provider: every tool every round, against deferred loading (the
      search tool alone, then with the 5 tools of one search, then with
      the 20 most recently found, the most ``ToolSearch`` offers by
      default). Counted as characters of the JSON of the tool list / 4:
      no provider SDK installed here counts tokens offline (Anthropic's
      and Gemini's counting are API calls; tiktoken is not installed).
'''


import argparse
import asyncio
import collections
import json
import logging
import os
import statistics
import sys
import time
import warnings

from pathlib import Path

import invocables

from invocables import processors
from invocables.toolsets import search, selection


_ROOT = Path( __file__ ).resolve( ).parents[ 1 ]
_TOOLSETS = _ROOT / 'tests' / 'data' / 'toolsets'
_BFCL_TYPES = {
    'dict': 'object', 'float': 'number', 'tuple': 'array', 'any': None }


def main( ) -> None:
    ''' Parses options; prints every measure. '''
    parser = argparse.ArgumentParser( description = __doc__.split( '\n' )[ 0 ] )
    parser.add_argument(
        '--quick', action = 'store_true',
        help = 'fewer queries and rounds (a smoke run)' )
    options = parser.parse_args( )
    functions = _read_jsonl( _TOOLSETS / 'benchmark' / 'functions.jsonl' )
    queries = _read_jsonl( _TOOLSETS / 'benchmark' / 'queries.jsonl' )
    print( f"python {sys.version.split( )[ 0 ]}, invocables "
           f"{invocables.__version__}, {os.cpu_count( )} cores, load "
           "average (1, 5, 15 min): {0:.2f} {1:.2f} {2:.2f}".format(
               *os.getloadavg( ) ) )
    _print_recall( functions, queries )
    _print_latency( functions, queries, quick = options.quick )
    _print_tokens( functions )


def _print_recall(
    functions: list[ dict ], queries: list[ dict ]
) -> None:
    documents = [ _produce_bfcl_document( entry ) for entry in functions ]
    index = search.Bm25Ranker( ).produce_index( documents )
    ks = ( 1, 3, 5 )
    recalls = dict.fromkeys( ks, 0.0 )
    hits = dict.fromkeys( ks, 0 )
    count = 0
    for query in queries:
        expected = set( query[ 'expected_names' ] )
        if not expected: continue
        count += 1
        names = _rank_names( index, _render_question( query ), max( ks ) )
        for k in ks:
            found = expected & set( names[ : k ] )
            recalls[ k ] += len( found ) / len( expected )
            hits[ k ] += bool( found )
    print( "\n## Recall of the local BM25 ranker (BFCL)\n" )
    print( f"{count} queries needing tools, among {len( documents )} "
           "definitions "
           f"({len( { d.name for d in documents } )} distinct names)\n" )
    print( "| k | recall@k | queries with a needed tool in first k |" )
    print( "| --- | --- | --- |" )
    for k in ks:
        print( "| {k} | {recall:.3f} | {hit:.3f} |".format(
            k = k, recall = recalls[ k ] / count, hit = hits[ k ] / count ) )


def _print_latency(
    functions: list[ dict ], queries: list[ dict ], *, quick: bool
) -> None:
    base = [ _produce_bfcl_document( entry ) for entry in functions ]
    base.extend( _produce_mcp_documents( ) )
    texts = [
        _render_question( query ) for query in queries
        if query[ 'expected_names' ] ][ : 50 if quick else 450 ]
    sizes = ( 100, 1_000, 10_000 )
    rows = [ ]
    for size in sizes:
        documents = _repeat_documents( base, size )
        start = time.perf_counter( )
        index = search.Bm25Ranker( ).produce_index( documents )
        build = time.perf_counter( ) - start
        timings = [ ]
        for text in texts:
            # Least of three: the machine is shared; noise only adds.
            samples = [ ]
            for _ in range( 3 ):
                start = time.perf_counter( )
                index.query_matches( text, 5 )
                samples.append( time.perf_counter( ) - start )
            timings.append( min( samples ) )
        work = _count_postings( documents, texts )
        rows.append( ( size, build, statistics.median( timings ), work ) )
    print( "\n## Search latency (BM25, median per query)\n" )
    print( f"{len( texts )} BFCL queries per size, each the least of 3 "
           "runs; postings: (document, term) pairs a query adds up, the "
           "work of a query\n" )
    print( "| tools | index build | query | query / smallest's | "
           "postings per query | size / smallest |" )
    print( "| --- | --- | --- | --- | --- | --- |" )
    first = rows[ 0 ]
    for size, build, latency, work in rows:
        print( "| {size:,} | {build:.1f} ms | {latency:.3f} ms | "
               "{ratio:.1f} | {work:,.0f} | {sizes:.0f} |".format(
                   size = size, build = build * 1e3,
                   latency = latency * 1e3, ratio = latency / first[ 2 ],
                   work = work, sizes = size / first[ 0 ] ) )


def _count_postings(
    documents: list[ search.Document ], texts: list[ str ]
) -> float:
    ''' Returns mean number of postings the queries touch. '''
    frequencies: collections.Counter[ str ] = collections.Counter( )
    for document in documents:
        frequencies.update( set( search.produce_document_terms( document ) ) )
    return statistics.mean(
        sum( frequencies[ term ] for term in set(
            search.produce_terms( text ) ) )
        for text in texts )


def _print_tokens( functions: list[ dict ] ) -> None:
    mcp = _produce_mcp_ensembles( )
    count = sum( len( ensemble.survey_invokers( ) ) for ensemble in mcp )
    ensembles = [ *mcp, _produce_bfcl_ensemble( functions, 500 - count ) ]
    # Tools a provider cannot take are left out, with a logged warning.
    logging.getLogger( 'invocables' ).setLevel( logging.ERROR )
    tool_search = search.ToolSearch( ensembles )
    namespace: dict = { }
    situation = selection.Situation(
        round = 1, messages = ( ), namespace = namespace,
        nomenclature = invocables.naming.access_nomenclature(
            tool_search.ensembles ) )
    nomenclature = situation.nomenclature
    total = len( nomenclature.designations ) - 1
    first = selection.produce_selection(
        nomenclature, tool_search.survey_names( situation ) )
    context = invocables.InvocationContext(
        auxdata = None, invoker = tool_search.invoker,
        namespace = namespace )
    asyncio.run( tool_search.invoker(
        context, { 'query': 'create a pull request' } ) )
    second = selection.produce_selection(
        nomenclature, tool_search.survey_names( situation ) )
    for query in (
        'take a screenshot', 'read a file', 'calculate the area',
        'weather forecast', 'send a message to a channel',
    ): asyncio.run( tool_search.invoker( context, { 'query': query } ) )
    third = selection.produce_selection(
        nomenclature, tool_search.survey_names( situation ) )
    print( "\n## Tokens of the tool list per round (characters / 4)\n" )
    print( f"{total} tools (189 of 18 real MCP servers, "
           f"{total - 189} of BFCL); deferred: the search tool, then "
           "with the tools found\n" )
    print( "| provider | every tool | deferred, before a search | "
           "after one search (5 found) | 20 found | saved per round |" )
    print( "| --- | --- | --- | --- | --- | --- |" )
    for provider in sorted( processors.PROVIDERS ):
        processor = processors.produce_processor( provider )
        with warnings.catch_warnings( ):
            # Tools a provider cannot take are left out, with a warning.
            warnings.simplefilter( 'ignore' )
            counts = [
                _count_tokens( processor.prepare_tools( offered ) )
                for offered in ( tool_search.ensembles, first, second, third ) ]
        print( "| {provider} | {0:,} | {1:,} | {2:,} | {3:,} | "
               "{saved:.1%} |".format(
                   *counts, provider = provider,
                   saved = 1 - counts[ 2 ] / counts[ 0 ] ) )


def _count_tokens( tools: list ) -> int:
    return len( json.dumps( tools, ensure_ascii = False ) ) // 4


def _convert_bfcl_schema( schema: object ) -> object:
    ''' Returns BFCL's schema as JSON Schema ('dict' is 'object', ...). '''
    if isinstance( schema, list ):
        return [ _convert_bfcl_schema( item ) for item in schema ]
    if not isinstance( schema, dict ): return schema
    result = { }
    for key, value in schema.items( ):
        if key == 'optional': continue
        if key == 'type' and isinstance( value, str ):
            value = _BFCL_TYPES.get( value, value )
            if value is None: continue
        elif key == 'properties' and isinstance( value, dict ):
            value = {
                name: _convert_bfcl_schema( item )
                for name, item in value.items( ) }
        else: value = _convert_bfcl_schema( value )
        result[ key ] = value
    return result


def _produce_bfcl_document( entry: dict ) -> search.Document:
    function = entry[ 'function' ]
    return search.produce_document(
        function[ 'name' ], function.get( 'description', '' ),
        function.get( 'parameters' ) )


def _produce_bfcl_ensemble( entries: list[ dict ], count: int ):
    ''' Returns ensemble of the first count distinct BFCL functions. '''
    invokers = { }
    for entry in entries:
        function = entry[ 'function' ]
        if len( invokers ) >= count: break
        if function[ 'name' ] in invokers: continue
        invokers[ function[ 'name' ] ] = _produce_invoker(
            function[ 'name' ], function.get( 'description', '' ),
            _convert_bfcl_schema( function[ 'parameters' ] ) )
    return invocables.produce_ensemble( 'bfcl', invokers.values( ) )


def _produce_invoker( name: str, description: str, schema: object ):

    async def invoke( context, arguments ) -> str:
        return f"ran {name}"

    return invocables.FunctionInvoker(
        name = name, invocable = invoke, arguments_schema = schema,
        description = description )


def _produce_mcp_ensembles( ) -> list:
    ensembles = [ ]
    for path in sorted( ( _TOOLSETS / 'mcp' ).glob( '*.json' ) ):
        answer = json.loads( path.read_text( encoding = 'utf-8' ) )
        ensembles.append( invocables.produce_ensemble( path.stem, [
            _produce_invoker(
                tool[ 'name' ], tool.get( 'description' ) or '',
                tool[ 'inputSchema' ] )
            for tool in answer[ 'result' ][ 'tools' ] ] ) )
    return ensembles


def _produce_mcp_documents( ) -> list[ search.Document ]:
    return [
        search.produce_invoker_document( invoker.name, invoker )
        for ensemble in _produce_mcp_ensembles( )
        for invoker in ensemble.survey_invokers( ) ]


def _rank_names( index, text: str, limit: int ) -> list[ str ]:
    ''' Returns the first limit distinct names which index ranks. '''
    names: list[ str ] = [ ]
    for match in index.query_matches( text, limit * 4 ):
        if match.name not in names: names.append( match.name )
    return names[ : limit ]


def _read_jsonl( path: Path ) -> list[ dict ]:
    return [
        json.loads( line )
        for line in path.read_text( encoding = 'utf-8' ).splitlines( )
        if line.strip( ) ]


def _render_question( query: dict ) -> str:
    return ' '.join(
        message[ 'content' ] for turn in query[ 'question' ]
        for message in turn if message[ 'role' ] == 'user' )


def _repeat_documents(
    documents: list[ search.Document ], size: int
) -> list[ search.Document ]:
    ''' Returns size documents: the real ones, then copies renamed. '''
    result = [ ]
    copy = 0
    while len( result ) < size:
        for document in documents:
            if len( result ) >= size: break
            name = document.name if not copy else f"{document.name}_{copy}"
            result.append( search.Document(
                name = name, title = document.title,
                description = document.description,
                parameters = document.parameters ) )
        copy += 1
    return result


if __name__ == '__main__': main( )
