# SPDX-License-Identifier: Apache-2.0

''' serve's tasks at scale and between principals: a gateway lists many
    upstream tools at a cost linear in their number; each principal runs
    at most its share of the running tasks; a full store forgets its
    oldest ended task without a scan; a task of MCP 2026-07-28 which
    waits for input ends once the client's answer is overdue.
'''


import contextlib

import pytest

from mcp import ClientSession

import invocables

from invocables import serving
from invocables.mcp import _http as sdk_http
from invocables.mcp import _sdk as sdk
from invocables.mcp import ensembles as mcp_ensembles

from . import mcp_support


_SUPPORTS = ( 'forbidden', 'optional', 'required' )
_TOOLS_MANY = 3000


class _Descriptions( tuple ):
    ''' Descriptions of an upstream's tools which count their scans. '''

    __slots__ = ( )
    scans = 0

    def __iter__( self ):
        type( self ).scans += 1
        return super( ).__iter__( )


class _CountingEnsemble( mcp_ensembles.ServerEnsemble ):
    ''' Ensemble of an upstream server which counts the scans of its
        descriptions (the same tuple until its tools change).
    '''

    def survey_tools( self ):
        descriptions = super( ).survey_tools( )
        known, counted = _counted.get( 'last', ( None, None ) )
        if known is not descriptions:
            counted = _Descriptions( descriptions )
            _counted[ 'last' ] = ( descriptions, counted )
        return counted


_counted = { } # the descriptions last counted, and their counting copy


@contextlib.asynccontextmanager
async def _connect( url, token = None ):
    ''' Yields an initialized session of the SDK's client, which sends
        token (if any).
    '''
    headers = { } if token is None else {
        'Authorization': f"Bearer {token}" }
    async with (
        sdk.http.AsyncClient( headers = headers ) as http,
        sdk_http.open_streamable_http( url, http, None ) as streams,
        ClientSession( *streams ) as session,
    ):
        await session.initialize( )
        yield session


def _produce_many_tools( count ):
    ''' Produces an ensemble of count tools, of each task support in turn.
    '''
    def produce( index ):
        def tool( ) -> str:
            ''' Says its number. '''
            return str( index )
        return invocables.produce_invoker(
            tool, name = f"tool_{index}", annotations = {
                'task_support': _SUPPORTS[ index % len( _SUPPORTS ) ] } )
    return invocables.produce_ensemble(
        'many', [ produce( index ) for index in range( count ) ] )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_100_gateway_lists_many_tools_linearly( ):
    ''' A gateway over an upstream of thousands of tools lists them all,
        each with the task support its upstream declares, scanning the
        upstream's descriptions a bounded number of times (not once per
        tool).
    '''
    upstream = serving.ToolServer( [ _produce_many_tools( _TOOLS_MANY ) ] )
    async with mcp_support.serve_in_loop( upstream ) as url:
        model = invocables.mcp.produce_ensemble(
            'up', url = url, tasks = 'supported' )
        ensemble = _CountingEnsemble(
            model.name, model.parameters, model.configuration,
            model.options, model.features )
        gateway = serving.ToolServer( [ ensemble ] )
        async with invocables.connect_ensembles( gateway.ensembles ):
            assert len( ensemble.survey_tools( ) ) == _TOOLS_MANY
            _Descriptions.scans = 0
            async with (
                mcp_support.serve_in_loop( gateway ) as front,
                _connect( front ) as client,
            ):
                listing = await client.list_tools( )
    supports = {
        tool.name: sdk.access_field( tool.execution, 'task_support', None )
        for tool in listing.tools }
    assert supports == {
        f"tool_{index}": _SUPPORTS[ index % len( _SUPPORTS ) ]
        for index in range( _TOOLS_MANY ) }
    assert _Descriptions.scans < 10 # noqa: PLR2004
