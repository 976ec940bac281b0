# SPDX-License-Identifier: Apache-2.0

''' Routes of the gateway: which upstream server a URI as served reaches.

    A URI goes to the server which listed it (as served: its own, or
    scoped by ensemble), else to the first server, in the order of the
    ensembles, whose template it matches, else to the only server with
    resources; else to none. Templates match as RFC 6570 expands them,
    loosely: each expression takes any run of the characters its operator
    allows (a simple one, no ``/``, ``?`` nor ``#``), matched without
    backtracking, in time proportional to the URI by the template.

    What the servers list is remembered (:py:class:`RoutesMemo`), so that
    a URI listed before reaches its server without listing again.
'''


import weakref as _weakref

import invocables.serving.__ as __
import invocables.exceptions as _exceptions


Route: __.typx.TypeAlias = tuple[ __.typx.Any, str ]
''' Ensemble of an upstream server, and the URI which the server knows. '''
Scoped: __.typx.TypeAlias = tuple[ str, __.typx.Any, __.typx.Any ]
''' Listed item as served (its URI, perhaps scoped), ensemble, item. '''
_T = __.typx.TypeVar( '_T' )

ROUTES_MAXIMUM = 4096
''' Most URIs remembered of one upstream server: the last it listed (a
    server may list millions); a URI beyond is routed by listing again. '''

_EXPRESSION = __.re.compile( r'\{([^{}]*)\}' )
_OPERATORS = __.types.MappingProxyType( {
    # operator: ( character which leads its expansion, characters barred )
    '': ( '', '/?#' ), '+': ( '', '?#' ), '#': ( '#', '' ),
    '.': ( '.', '/?#' ), '/': ( '/', '?#' ), ';': ( ';', '/?#' ),
    '?': ( '?', '#' ), '&': ( '&', '#' ),
} )
_SCHEME_UNSAFE = __.re.compile( r'[^A-Za-z0-9.-]' )
_URI_MAXIMUM = 65536 # longest URI matched against templates

# Steps of a template: a literal character; a character which may be
# absent (an operator's lead); any run of characters but those barred.
_Step: __.typx.TypeAlias = tuple[ str, str ]
_LITERAL, _OPTIONAL, _RUN = 'literal', 'optional', 'run'


class RoutesMemo:
    ''' URIs as served, each with the upstream server which listed it and
        the URI which that server knows: learnt from the latest listing of
        every server (replaced by the next), forgotten when a server
        announces new resources (any: a URI is scoped by what the others
        list), or when the session to a server is replaced. Holds at
        most :py:data:`ROUTES_MAXIMUM` URIs of each server.
    '''

    def __init__( self, maximum: int = ROUTES_MAXIMUM ) -> None:
        self.generation = 0
        self.maximum = maximum
        self._routes: dict[ str, Route ] = { }
        self._sessions: dict[ str, _weakref.ReferenceType[ __.typx.Any ] ] = (
            { } )

    def access_route( self, uri: str ) -> Route | None:
        ''' Returns the server remembered for a URI as served, with the
            URI which it knows; none if unknown, or if the session to the
            server was replaced since it listed (all is forgotten then).
        '''
        route = self._routes.get( uri )
        if route is None: return None
        ensemble = route[ 0 ]
        known = self._sessions.get( ensemble.name )
        if known is None or known( ) is not _access_session( ensemble ):
            self.forget_routes( )
            return None
        return route

    def forget_route( self, uri: str ) -> None:
        ''' Forgets the server of a URI as served. '''
        self._routes.pop( uri, None )

    def forget_routes( self ) -> None:
        ''' Forgets every route; a listing begun before is not learnt. '''
        self.generation += 1
        self._routes = { }
        self._sessions = { }

    def record_listing(
        self,
        featured: __.cabc.Sequence[ __.typx.Any ],
        found: __.cabc.Sequence[ Scoped ],
        generation: int,
    ) -> None:
        ''' Remembers the resources which servers listed (as
            :py:func:`survey_scoped` gives them), in place of what was
            remembered, unless routes were forgotten since the listing
            began (its generation): the last of each server's, up to the
            most.
        '''
        if generation != self.generation: return
        listed: dict[ str, list[ Scoped ] ] = { }
        for entry in found:
            listed.setdefault( entry[ 1 ].name, [ ] ).append( entry )
        sessions: dict[ str, _weakref.ReferenceType[ __.typx.Any ] ] = { }
        for ensemble in featured:
            session = _access_session( ensemble )
            if session is not None:
                sessions[ ensemble.name ] = _weakref.ref( session )
        self._routes = {
            served: ( ensemble, item.uri )
            for entries in listed.values( )
            for served, ensemble, item in entries[ - self.maximum : ]
            if ensemble.name in sessions }
        self._sessions = sessions


def match_template( template: str, uri: str ) -> bool:
    ''' Returns whether URI is an expansion of a URI template (RFC 6570,
        loosely), such as ``test://items/7`` of ``test://items/{id}``.
        A template with an operator RFC 6570 reserves matches nothing, nor
        does a URI of more than 65536 characters.
    '''
    if len( uri ) > _URI_MAXIMUM: return False
    steps = _compile_template( template )
    if steps is None: return False
    states = _advance_empty( steps, { 0 } )
    for character in uri:
        following: set[ int ] = set( )
        for state in states:
            if state == len( steps ): continue
            kind, characters = steps[ state ]
            if kind == _RUN:
                if character not in characters: following.add( state )
            elif character == characters: following.add( state + 1 )
        if not following: return False
        states = _advance_empty( steps, following )
    return len( steps ) in states


async def retrieve_routed(
    featured: __.cabc.Sequence[ __.typx.Any ],
    memo: RoutesMemo,
    uri: str,
    retrieve: __.cabc.Callable[ [ Route ], __.cabc.Awaitable[ _T ] ],
) -> tuple[ _T, str ] | None:
    ''' Returns what retrieve gives from the server of a URI as served
        (see :py:func:`route_uri`), with the URI which the server knows;
        none if no server has it. A server remembered for the URI which
        finds no such resource (retrieve raises
        :py:class:`invocables.exceptions.ResourceAbsence`) is forgotten,
        and the URI routed afresh, once.
    '''
    route = memo.access_route( uri )
    if route is not None:
        try: return await retrieve( route ), route[ 1 ]
        except _exceptions.ResourceAbsence: memo.forget_route( uri )
    fresh = await route_uri( featured, uri, memo )
    if fresh is None or fresh == route: return None
    try: return await retrieve( fresh ), fresh[ 1 ]
    except _exceptions.ResourceAbsence: return None


async def route_uri(
    featured: __.cabc.Sequence[ __.typx.Any ],
    uri: str,
    memo: RoutesMemo | None = None,
) -> Route | None:
    ''' Returns the upstream server to ask for a URI as served, with the
        URI which it knows: the server which listed the URI (as the memo,
        if any, remembers, else as listing finds); else the first whose
        template matches it; else the only server which lists resources
        or templates (or the only server); else none. The only server
        gets every URI at once, unlisted. The memo learns the listing.
    '''
    return ( await route_uris( featured, ( uri, ), memo ) ).get( uri )


async def route_uris(
    featured: __.cabc.Sequence[ __.typx.Any ],
    uris: __.cabc.Collection[ str ],
    memo: RoutesMemo | None = None,
) -> dict[ str, Route ]:
    ''' Returns the routes of URIs as served, by URI, each as
        :py:func:`route_uri` finds it (a URI of no server left out): the
        servers list their resources once for them all, and their
        templates once if a URI is not listed.
    '''
    if len( featured ) == 1:
        return { uri: ( featured[ 0 ], uri ) for uri in uris }
    routes: dict[ str, Route ] = { }
    for uri in uris:
        route = None if memo is None else memo.access_route( uri )
        if route is not None: routes[ uri ] = route
    unknown = [ uri for uri in uris if uri not in routes ]
    if not unknown: return routes
    resources = await survey_resources( featured, memo )
    wanted = frozenset( unknown )
    for served, ensemble, resource in resources:
        if served in wanted and served not in routes:
            routes[ served ] = ( ensemble, resource.uri )
    unknown = [ uri for uri in unknown if uri not in routes ]
    if not unknown: return routes
    templates = await survey_scoped(
        featured, 'survey_resource_templates', 'uri_template' )
    owners = tuple( { id( ensemble ): ensemble
                      for _, ensemble, _ in ( *resources, *templates )
                    }.values( ) ) or tuple( featured )
    for uri in unknown:
        route = _match_templates( templates, uri )
        if route is None and len( owners ) == 1: route = owners[ 0 ], uri
        if route is not None: routes[ uri ] = route
    return routes


def scope_uri( ensemble: str, uri: str ) -> str:
    ''' Returns URI (or URI template) scoped by ensemble, as served when
        several servers offer it: ``<ensemble>+<uri>``
        (``docs+file:///readme.md``), the ensemble's name in the letters a
        URI's scheme allows (others become ``-``).
    '''
    name = _SCHEME_UNSAFE.sub( '-', ensemble )
    if not name[ : 1 ].isalpha( ): name = f"mcp-{name}"
    return f"{name}+{uri}"


async def survey_scoped(
    featured: __.cabc.Sequence[ __.typx.Any ], method: str, field: str
) -> list[ Scoped ]:
    ''' Returns what servers list (asked together, each within its list
        timeout; a server which fails lists nothing), in the order of the
        ensembles, each with its URI as served: its own, or scoped by
        ensemble when several servers list it or when its own is another's
        scoped (``bank+secret://statement`` listed by ``evil`` is served
        ``evil+bank+secret://statement`` if ``bank`` lists
        ``secret://statement`` scoped).
    '''
    async def survey( ensemble: __.typx.Any ) -> tuple[ __.typx.Any, ... ]:
        try: return tuple( await getattr( ensemble, method )( ) )
        except _exceptions.Omnierror: return ( )
    surveys = await __.asyncio.gather( *map( survey, featured ) )
    found = [
        ( ensemble, item )
        for ensemble, items in zip( featured, surveys ) for item in items ]
    owns = [ getattr( item, field ) for _, item in found ]
    counts = __.collections.Counter( owns )
    served = [
        uri if counts[ uri ] == 1 else scope_uri( ensemble.name, uri )
        for ( ensemble, _ ), uri in zip( found, owns ) ]
    counts = __.collections.Counter( served )
    return [
        ( ( scope_uri( ensemble.name, uri )
            if counts[ uri ] > 1 and uri == own else uri ),
          ensemble, item )
        for ( ensemble, item ), own, uri in zip( found, owns, served ) ]


async def survey_resources(
    featured: __.cabc.Sequence[ __.typx.Any ], memo: RoutesMemo | None
) -> list[ Scoped ]:
    ''' Returns the resources which servers list, as
        :py:func:`survey_scoped` gives them; the memo, if any, learns them.
    '''
    generation = 0 if memo is None else memo.generation
    resources = await survey_scoped( featured, 'survey_resources', 'uri' )
    if memo is not None:
        memo.record_listing( featured, resources, generation )
    return resources


def _access_session( ensemble: __.typx.Any ) -> __.typx.Any:
    ''' Returns the live session of an ensemble; none if not connected. '''
    try: session, _ = ensemble.access_session_for_features( )
    except _exceptions.Omnierror: return None
    return session


def _advance_empty(
    steps: __.cabc.Sequence[ _Step ], states: __.cabc.Iterable[ int ]
) -> set[ int ]:
    ''' Returns states with those reached past steps which may match no
        character (runs and optional characters).
    '''
    reached = set( states )
    for start in sorted( reached ):
        state = start
        while state < len( steps ) and steps[ state ][ 0 ] != _LITERAL:
            state += 1
            reached.add( state )
    return reached


def _compile_template( template: str ) -> tuple[ _Step, ... ] | None:
    ''' Returns steps of a URI template; none if an operator is unknown.
    '''
    steps: list[ _Step ] = [ ]
    position = 0
    for expression in _EXPRESSION.finditer( template ):
        steps.extend(
            ( _LITERAL, character )
            for character in template[ position : expression.start( ) ] )
        position = expression.end( )
        body = expression.group( 1 )
        operator = body[ : 1 ] if body[ : 1 ] in _OPERATORS else ''
        if operator == '' and body[ : 1 ] in tuple( '=,!@|' ): return None
        lead, barred = _OPERATORS[ operator ]
        if lead: steps.append( ( _OPTIONAL, lead ) )
        steps.append( ( _RUN, barred ) )
    steps.extend(
        ( _LITERAL, character ) for character in template[ position : ] )
    return tuple( steps )


def _match_templates(
    templates: __.cabc.Sequence[ Scoped ], uri: str
) -> Route | None:
    ''' Returns route of a URI by the first template which it matches
        (scoped as served); none if it matches none.
    '''
    for served, ensemble, template in templates:
        if match_template( served, uri ):
            scope = len( served ) - len( template.uri_template )
            return ensemble, uri[ scope : ]
    return None
