# SPDX-License-Identifier: Apache-2.0

''' Tool search: deferred tools, found by the model with a search tool.

    With hundreds of tools, sending every schema each round costs tens of
    thousands of tokens and lowers the model's accuracy. A
    :py:class:`ToolSearch` offers a small always-loaded set plus one
    search tool (a real invoker, in an ensemble of its own); the tools
    which a search finds are offered from the next round on, and their
    calls are validated as usual. It is a selector
    (:py:mod:`invocables.toolsets.selection`): give ``search.ensembles`` and
    ``selector = search`` to a conversation.

    Ranking is local and offline: BM25F over the names, descriptions,
    parameter names and parameter descriptions of the tools. The
    :py:class:`Ranker` protocol lets an application rank otherwise (for
    example, with embeddings).
'''


from heapq import nsmallest as _nsmallest
from math import log as _log

import invocables.__ as __
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.naming as _naming
import invocables.toolsets.selection as _selection


if __.typx.TYPE_CHECKING:
    from ..processors import InvocationsProcessor as _InvocationsProcessor


NAMESPACE_PREFIX = 'invocables.search.'
NATIVE_SEARCH_TOOLS: __.cabc.Mapping[ str, __.cabc.Mapping[ str, str ] ] = (
    __.types.MappingProxyType( {
        'anthropic': __.types.MappingProxyType( {
            'type': 'tool_search_tool_bm25_20251119',
            'name': 'tool_search_tool_bm25' } ),
        'openai-responses': __.types.MappingProxyType( {
            'type': 'tool_search' } ),
    } ) )
''' Search tool of each provider which searches deferred tools on its
    servers. '''
LIMIT_DEFAULT = 5
FOUND_MAXIMUM_DEFAULT = 20
_LIMIT_MAXIMUM = 20
_NAME_WEIGHT = 3
_PARAMETER_WEIGHT = 2
# Name and title, description, parameter names, parameter descriptions.
_FIELD_WEIGHTS = ( _NAME_WEIGHT, 1, _PARAMETER_WEIGHT, 1 )
_stopwords = frozenset( (
    'a', 'an', 'and', 'any', 'are', 'as', 'at', 'be', 'by', 'can', 'do',
    'does', 'for', 'from', 'get', 'given', 'how', 'i', 'in', 'into', 'is',
    'it', 'its', 'me', 'my', 'of', 'on', 'or', 'please', 'should', 'than',
    'that', 'the', 'their', 'them', 'then', 'there', 'these', 'this', 'to',
    'use', 'using', 'what', 'when', 'which', 'will', 'with', 'would', 'you',
    'your',
) )
# Suffix, replacement, shortest word it is stripped from; first match wins.
_suffixes = (
    ( 'ies', 'y', 5 ), ( 'sses', 'ss', 5 ), ( 'ing', '', 6 ),
    ( 'ed', '', 5 ), ( 'es', 'e', 5 ), ( 'ss', 'ss', 3 ), ( 's', '', 4 ),
)
_words = __.re.compile( r'[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+' )


@__.dcls.dataclass( frozen = True, slots = True )
class Document:
    ''' Searchable text of one tool, by field. '''

    name: str
    title: str
    description: str
    parameters: tuple[ tuple[ str, str ], ... ]


@__.dcls.dataclass( frozen = True, slots = True )
class Match:
    ''' Tool found by a query, with its score (higher is better). '''

    name: str
    score: float


class RankerIndex( __.typx.Protocol ):
    ''' Index of documents, queried by text. '''

    def query_matches(
        self, query: str, limit: int
    ) -> __.cabc.Sequence[ Match ]:
        ''' Returns at most limit matches, best first; none below zero. '''
        raise NotImplementedError  # pragma: no cover


class Ranker( __.typx.Protocol ):
    ''' Makes indices of documents (BM25, embeddings, ...). '''

    def produce_index(
        self, documents: __.cabc.Sequence[ Document ]
    ) -> RankerIndex:
        ''' Produces index of documents. '''
        raise NotImplementedError  # pragma: no cover


class Bm25Index( __.immut.Object ):
    ''' BM25F index: inverted lists of weighted term frequencies.

        Each field of a document (name and title, description, parameter
        names, parameter descriptions) has its own weight and is
        normalized by its own length against the average of that field;
        the weighted frequencies are added before saturation (BM25F), so
        a long parameter list does not drown a name which matches.
    '''

    def __init__(
        self,
        documents: __.cabc.Sequence[ Document ],
        *,
        k1: float = 2.0,
        b: float = 0.75,
    ):
        self.names = tuple( document.name for document in documents )
        fieldses = [
            produce_document_fields( document ) for document in documents ]
        total = len( fieldses )
        averages = [
            ( sum( len( fields[ which ] ) for fields in fieldses ) / total )
            if total else 1.0 for which in range( len( _FIELD_WEIGHTS ) ) ]
        postings: dict[ str, list[ tuple[ int, float ] ] ] = { }
        for index, fields in enumerate( fieldses ):
            frequencies: dict[ str, float ] = { }
            for terms, weight, average in zip(
                fields, _FIELD_WEIGHTS, averages
            ):
                if not terms: continue
                share = weight / ( 1 - b + b * len( terms ) / average )
                for term in terms:
                    frequencies[ term ] = frequencies.get( term, 0.0 ) + share
            for term, frequency in frequencies.items( ):
                postings.setdefault( term, [ ] ).append( ( index, frequency ) )
        # Each posting holds its whole contribution to a score: a query
        # only adds them up, in time linear in the postings it touches.
        self._postings = __.types.MappingProxyType( {
            term: _score_postings( items, total, k1 )
            for term, items in postings.items( ) } )

    def query_matches(
        self, query: str, limit: int
    ) -> tuple[ Match, ... ]:
        ''' Returns at most limit matches, best first (ties by order). '''
        scores: dict[ int, float ] = { }
        for term in set( produce_terms( query ) ):
            items = self._postings.get( term )
            if items is None: continue
            for index, contribution in items:
                scores[ index ] = scores.get( index, 0.0 ) + contribution
        best = _nsmallest(
            limit, scores.items( ),
            key = lambda item: ( -item[ 1 ], item[ 0 ] ) )
        return tuple(
            Match( name = self.names[ index ], score = score )
            for index, score in best if score > 0 )


class Bm25Ranker( __.immut.DataclassObject ):
    ''' Ranks tools with BM25F, offline, in pure Python.

        Tool names weigh three times, parameter names twice, descriptions
        once, each field normalized by its own length; words are split at
        case changes, digits and punctuation, lower-cased, stripped of
        common English suffixes and stop words. ``k1`` and ``b`` were
        tuned on two public tool sets (see the documentation of search).
    '''

    k1: float = 2.0
    b: float = 0.75

    def produce_index(
        self, documents: __.cabc.Sequence[ Document ]
    ) -> Bm25Index:
        ''' Produces BM25 index of documents. '''
        return Bm25Index( documents, k1 = self.k1, b = self.b )


class ToolSearch(
    __.immut.Object, instances_mutables = ( '_cache', )
):
    ''' Deferred tools, a search tool, and the selector which offers both.

        ``ensembles`` are the given ensembles followed by the ensemble of
        the search tool: give them to the conversation (or to
        ``prepare_tools`` and the engine) with ``selector = search``. Each
        round offers the always-loaded tools (``loaded``: glob patterns of
        provider-facing names), the search tool, and the tools which
        searches of this conversation found (the most recent
        ``found_maximum``), recorded in the conversation's namespace.
    '''

    def __init__(
        self,
        ensembles: __.typx.Annotated[
            __.cabc.Iterable[ _ensembles.Ensemble ],
            __.ddoc.Doc( ''' Ensembles whose tools are deferred. ''' ),
        ],
        *,
        loaded: __.typx.Annotated[
            str | __.cabc.Iterable[ str ],
            __.ddoc.Doc( ''' Glob patterns of provider-facing names of
                tools offered in every round. ''' ),
        ] = ( ),
        ranker: __.typx.Annotated[
            __.Absential[ Ranker ],
            __.ddoc.Doc( ''' Ranker of tools. Default: BM25. ''' ),
        ] = __.absent,
        limit: __.typx.Annotated[
            int, __.ddoc.Doc( ''' Most tools found per search. ''' )
        ] = LIMIT_DEFAULT,
        found_maximum: __.typx.Annotated[
            int,
            __.ddoc.Doc( ''' Most found tools offered at once (the most
                recently found). ''' ),
        ] = FOUND_MAXIMUM_DEFAULT,
        name: __.typx.Annotated[
            str, __.ddoc.Doc( ''' Name of the search tool. ''' )
        ] = 'search_tools',
    ):
        self.deferred = _validate_ensembles( ensembles )
        self.loaded = _selection.PatternsSelector( loaded ).patterns
        if not __.is_absent( ranker ) and not callable(
            getattr( ranker, 'produce_index', None )
        ): raise _exceptions.ConfigurationInvalidity(
            "tool search option 'ranker'",
            "expected a ranker, with a method produce_index." )
        self.ranker: Ranker = (
            Bm25Ranker( ) if __.is_absent( ranker ) else ranker )
        self.limit = _validate_count( limit, 'limit', _LIMIT_MAXIMUM )
        self.found_maximum = _validate_count(
            found_maximum, 'found_maximum', 10_000 )
        self.invoker = _produce_search_invoker( self, name )
        self.ensemble = _ensembles.produce_ensemble(
            'tool_search', [ self.invoker ] )
        self.ensembles = ( *self.deferred, self.ensemble )
        self.key = f"{NAMESPACE_PREFIX}{name}"
        self._cache: tuple[
            _naming.Nomenclature | None, RankerIndex, frozenset[ str ]
        ] = ( None, Bm25Index( ( ) ), frozenset( ) )

    def query_matches(
        self,
        query: __.typx.Annotated[
            str, __.ddoc.Doc( ''' Words describing the tool wanted. ''' )
        ],
        limit: __.Absential[ int ] = __.absent,
    ) -> tuple[ Match, ... ]:
        ''' Returns deferred tools which match query, best first.

            Always-loaded tools and the search tool are not searched: they
            are offered anyway.
        '''
        limit_ = self.limit if __.is_absent( limit ) else _validate_count(
            limit, 'limit', None )
        return tuple( self._access_index( ).query_matches( query, limit_ ) )

    def survey_found( self, namespace: __.Namespace ) -> tuple[ str, ... ]:
        ''' Returns names found by searches in conversation, oldest first.
        '''
        found = namespace.get( self.key, ( ) )
        return tuple( found )[ -self.found_maximum : ]

    def survey_names( self, situation: _selection.Situation ) -> list[ str ]:
        ''' Returns loaded names, the search tool and the found names. '''
        _, _, loaded = self._access_cache( )
        nomenclature = situation.nomenclature
        search = nomenclature.access_name(
            self.ensemble.name, self.invoker.name )
        return [
            *loaded, search, *self.survey_found( situation.namespace ) ]

    def _access_cache( self ) -> tuple[
        _naming.Nomenclature | None, RankerIndex, frozenset[ str ]
    ]:
        nomenclature = _naming.access_nomenclature( self.ensembles )
        cache = self._cache
        if cache[ 0 ] is nomenclature: return cache
        loaded = frozenset( _selection.survey_matching_names(
            nomenclature, self.loaded ) )
        documents = [
            produce_invoker_document( designation.name, designation.invoker )
            for designation in nomenclature.designations
            if designation.ensemble is not self.ensemble
            and designation.name not in loaded ]
        self._cache = cache = (
            nomenclature, self.ranker.produce_index( documents ), loaded )
        return cache

    def _access_index( self ) -> RankerIndex:
        return self._access_cache( )[ 1 ]

    def record_found(
        self, namespace: __.Namespace, names: __.cabc.Sequence[ str ]
    ) -> None:
        ''' Records names as found in conversation, most recent last. '''
        found = [
            name for name in namespace.get( self.key, ( ) )
            if name not in names ]
        namespace[ self.key ] = [ *found, *names ][ -self.found_maximum : ]


def prepare_native_tools(
    processor: __.typx.Annotated[
        '_InvocationsProcessor[ __.typx.Any, __.typx.Any ]',
        __.ddoc.Doc( ''' Processor of a provider with native search. ''' ),
    ],
    ensembles: __.typx.Annotated[
        _selection.Ensembles,
        __.ddoc.Doc( ''' Ensembles (or nomenclature) of every tool. ''' ),
    ],
    *,
    loaded: __.typx.Annotated[
        str | __.cabc.Iterable[ str ],
        __.ddoc.Doc( ''' Glob patterns of provider-facing names of tools
            which are not deferred. ''' ),
    ] = ( ),
) -> list[ dict[ str, __.typx.Any ] ]:
    ''' Returns every tool, deferred but for the loaded ones, after the
        provider's own search tool.

        For the providers which search deferred tools on their servers
        (:py:data:`NATIVE_SEARCH_TOOLS`: Anthropic's BM25 tool search,
        OpenAI Responses' hosted tool search): each tool is marked
        ``defer_loading``, and the model's calls of the tools it found are
        ordinary tool calls, which the processor reads and the engine runs
        against the same ensembles. For an application's own loop; the
        conversation loop uses :py:class:`ToolSearch`, which works alike
        with every provider. Raises
        :py:class:`invocables.exceptions.ProviderNoSupport` for another
        provider.
    '''
    provider = processor.provider
    search = NATIVE_SEARCH_TOOLS.get( provider )
    if search is None:
        raise _exceptions.ProviderNoSupport(
            provider, "no native tool search; use "
            "invocables.toolsets.search.ToolSearch, which works with every "
            "provider." )
    nomenclature = _naming.access_nomenclature( ensembles )
    loaded_ = frozenset( _selection.survey_matching_names(
        nomenclature, _selection.PatternsSelector( loaded ).patterns ) )
    tools: list[ dict[ str, __.typx.Any ] ] = [ dict( search ) ]
    for tool in processor.prepare_tools( nomenclature ):
        tool_: dict[ str, __.typx.Any ] = dict( tool )
        if tool_.get( 'name' ) not in loaded_: tool_[ 'defer_loading' ] = True
        tools.append( tool_ )
    return tools


def produce_document(
    name: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Provider-facing name of tool. ''' ) ],
    description: str,
    arguments_schema: __.typx.Annotated[
        object, __.ddoc.Doc( ''' Schema of arguments (any JSON). ''' )
    ],
    title: str = '',
) -> Document:
    ''' Produces searchable document of a tool's name, description and
        parameters (names and descriptions, nested ones included).
    '''
    return Document(
        name = name, title = title, description = description,
        parameters = tuple( _survey_parameters( arguments_schema ) ) )


def produce_invoker_document(
    name: str, invoker: _invokers.Invoker
) -> Document:
    ''' Produces searchable document of invoker under provider name. '''
    title = invoker.annotations.get( 'title', '' )
    return produce_document(
        name, invoker.description, invoker.arguments_schema,
        title if isinstance( title, str ) else '' )


def produce_document_fields(
    document: Document
) -> tuple[ list[ str ], list[ str ], list[ str ], list[ str ] ]:
    ''' Returns terms of document by field: name and title, description,
        parameter names, parameter descriptions.
    '''
    names: list[ str ] = [ ]
    descriptions: list[ str ] = [ ]
    for name, description in document.parameters:
        names.extend( produce_terms( name ) )
        descriptions.extend( produce_terms( description ) )
    return (
        produce_terms( f"{document.name} {document.title}" ),
        produce_terms( document.description ), names, descriptions )


def produce_document_terms( document: Document ) -> list[ str ]:
    ''' Returns terms of document, repeated by the weight of their field.
    '''
    terms = produce_terms( f"{document.name} {document.title}" )
    terms *= _NAME_WEIGHT
    terms.extend( produce_terms( document.description ) )
    for name, description in document.parameters:
        terms.extend( produce_terms( name ) * _PARAMETER_WEIGHT )
        terms.extend( produce_terms( description ) )
    return terms


def produce_terms( text: str ) -> list[ str ]:
    ''' Returns search terms of text: words split at case changes, digits
        and punctuation, lower-cased and stemmed, without stop words.
    '''
    terms: list[ str ] = [ ]
    for word in _words.findall( text ):
        term = _stem( word.lower( ) )
        if term and term not in _stopwords: terms.append( term )
    return terms


def _produce_search_invoker(
    search: ToolSearch, name: str
) -> _invokers.FunctionInvoker:
    async def invoke(
        context: _invokers.Context, arguments: __.Arguments
    ) -> str:
        limit = arguments.get( 'limit', search.limit )
        matches = search.query_matches( arguments[ 'query' ], limit )
        if not matches:
            return (
                "No tool matches {query!r}. Try other words (what the tool "
                "does, or the kind of thing it works on).".format(
                    query = arguments[ 'query' ] ) )
        names = [ match.name for match in matches ]
        search.record_found( context.namespace, names )
        return _render_matches( search, names )

    arguments_schema = {
        'type': 'object',
        'properties': {
            'query': {
                'type': 'string',
                'description': 'Words describing the tool wanted: what it '
                'does, or what it works on.' },
            'limit': {
                'type': 'integer', 'minimum': 1,
                'maximum': _LIMIT_MAXIMUM,
                'description': 'Most tools to find (default '
                f"{search.limit})." },
        },
        'required': [ 'query' ],
        'additionalProperties': False,
    }
    return _invokers.FunctionInvoker(
        name = _invokers.validate_tool_name( name ), invocable = invoke,
        arguments_schema = arguments_schema,
        description = (
            "Searches the tools which are not loaded yet. The tools found "
            "become callable from your next step on; search when no loaded "
            "tool fits the task." ),
        annotations = { 'readOnlyHint': True } )


def _render_matches( search: ToolSearch, names: list[ str ] ) -> str:
    nomenclature = _naming.access_nomenclature( search.ensembles )
    lines = [
        "Found {count} tool(s); they can be called from your next step "
        "on:".format( count = len( names ) ) ]
    for name in names:
        invoker = nomenclature.access_designation( name ).invoker
        parameters = ', '.join(
            parameter for parameter, _ in _survey_parameters(
                invoker.arguments_schema, depth = 1 ) )
        summary = invoker.description.strip( ).split( '\n', 1 )[ 0 ][ : 200 ]
        lines.append( f"- {name}({parameters}): {summary}" )
    return '\n'.join( lines )


def _score_postings(
    items: list[ tuple[ int, float ] ], total: int, k1: float
) -> tuple[ tuple[ int, float ], ... ]:
    ''' Returns postings with the BM25F contribution of each. '''
    idf = _log( 1 + ( total - len( items ) + 0.5 ) / ( len( items ) + 0.5 ) )
    return tuple(
        ( index, idf * frequency * ( k1 + 1 ) / ( frequency + k1 ) )
        for index, frequency in items )


def _stem( word: str ) -> str:
    ''' Strips common English suffixes (a light Porter-like stemmer). '''
    for suffix, replacement, shortest in _suffixes:
        if word.endswith( suffix ) and len( word ) >= shortest:
            return word[ : len( word ) - len( suffix ) ] + replacement
    return word



def _survey_parameters(
    schema: object, depth: int = 3
) -> __.cabc.Iterator[ tuple[ str, str ] ]:
    ''' Yields names and descriptions of properties, nested ones too. '''
    if depth < 1 or not isinstance( schema, __.cabc.Mapping ): return
    schema_ = __.typx.cast( __.cabc.Mapping[ str, object ], schema )
    properties = schema_.get( 'properties' )
    if not isinstance( properties, __.cabc.Mapping ): return
    properties_ = __.typx.cast( __.cabc.Mapping[ str, object ], properties )
    for name, value in properties_.items( ):
        description = ''
        if isinstance( value, __.cabc.Mapping ):
            value_ = __.typx.cast( __.cabc.Mapping[ str, object ], value )
            text = value_.get( 'description' )
            if isinstance( text, str ): description = text
            items = value_.get( 'items' )
            yield from _survey_parameters( value_, depth - 1 )
            yield from _survey_parameters( items, depth - 1 )
        yield name, description


def _validate_count(
    value: object, option: str, maximum: int | None
) -> int:
    bound = '' if maximum is None else f" to {maximum}"
    return __.values.validate_count(
        value, f"tool search option {option!r}", maximum = maximum,
        reason = f"expected a whole number from 1{bound}, got {{value!r}}." )


def _validate_ensembles(
    ensembles: object
) -> tuple[ _ensembles.Ensemble, ... ]:
    items = (
        tuple( __.typx.cast( __.cabc.Iterable[ object ], ensembles ) )
        if isinstance( ensembles, __.cabc.Iterable )
        and not isinstance( ensembles, str ) else ( ensembles, ) )
    for item in items:
        if isinstance( getattr( item, 'name', None ), str ) and callable(
            getattr( item, 'survey_invokers', None )
        ): continue
        raise _exceptions.ConfigurationInvalidity(
            "tool search ensembles", "expected ensembles, got {genus}; "
            "wrap one ensemble in a list.".format(
                genus = type( item ).__name__ ) )
    return __.typx.cast( tuple[ _ensembles.Ensemble, ... ], items )
