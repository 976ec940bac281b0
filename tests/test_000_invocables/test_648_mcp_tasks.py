# SPDX-License-Identifier: Apache-2.0

''' Tools which run as tasks (MCP 2025-11-25), on the reference
    server-everything: its ``simulate-research-query`` requires them.
'''


import asyncio
import logging

import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.mcp import _sdk
from invocables.mcp import callbacks

from . import mcp_support


pytestmark = pytest.mark.asyncio
_BOUND = 60.0
_TOOL = 'simulate-research-query'


def _produce( transport = 'stdio', **options ):
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    return invocables.mcp.produce_ensemble(
        'everything', command = [ program, transport ], **options )


def _invoke( ensemble, arguments ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return ensemble.access_invoker( _TOOL )( context, arguments )


def _survey_supports( ensemble ):
    return {
        tool.name: tool.task_support for tool in ensemble.survey_tools( ) }


class _Catcher( logging.Handler ):
    ''' Keeps the identifiers of the tasks which calls start. '''

    def __init__( self ):
        super( ).__init__( logging.DEBUG )
        self.identifiers = [ ]

    def emit( self, record ):
        if 'as task' in record.getMessage( ):
            self.identifiers.append( record.args[ -1 ] )


@pytest.fixture
def catcher( ):
    ''' Catches the identifiers of started tasks. '''
    scribe = logging.getLogger( 'invocables.mcp._tasks' )
    handler = _Catcher( )
    level = scribe.level
    scribe.setLevel( logging.DEBUG )
    scribe.addHandler( handler )
    yield handler
    scribe.removeHandler( handler )
    scribe.setLevel( level )


@pytest.mark.slow
@pytest.mark.parametrize( 'transport', [ 'stdio', 'http' ] )
async def test_100_task_result_and_progress( transport ):
    ''' A tool which requires tasks is offered and called as a task: its
        result arrives, and each status message of the task reaches the
        reporter as progress, in order.
    '''
    reports = mcp_support.Reports( )
    if transport == 'stdio':
        ensemble = _produce( reporter = reports.append )
        async with ensemble:
            supports = _survey_supports( ensemble )
            contents = await asyncio.wait_for(
                _invoke( ensemble, { 'topic': 'cats' } ), _BOUND )
    else:
        program = mcp_support.locate_npm_server( 'mcp-server-everything' )
        port = mcp_support.select_port( )
        with mcp_support.serve_http(
            [ program, 'streamableHttp' ], port
        ) as url:
            ensemble = invocables.mcp.produce_ensemble(
                'everything', url = url, reporter = reports.append )
            async with ensemble:
                supports = _survey_supports( ensemble )
                contents = await asyncio.wait_for(
                    _invoke( ensemble, { 'topic': 'cats' } ), _BOUND )
    assert supports[ _TOOL ] == 'required'
    assert supports[ 'echo' ] == 'forbidden'
    assert 'Research Report: cats' in contents[ 0 ].text
    messages = [ report.message for report in reports ]
    assert messages[ 0 ] == 'Gathering sources...'
    assert 'Generating report...' in messages
    assert [ report.progress for report in reports ] == list(
        range( 1, len( reports ) + 1 ) )
    assert { report.tool for report in reports } == { _TOOL }


@pytest.mark.slow
async def test_110_task_asks_user( ):
    ''' A task which needs input asks through the elicitor (the request
        arrives while the result is fetched); the answer shapes the result.
    '''
    requests = [ ]

    async def elicitor( request ):
        requests.append( request )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'interpretation': 'technical' } )

    async with _produce( elicitor = elicitor ) as ensemble:
        contents = await asyncio.wait_for(
            _invoke( ensemble, { 'topic': 'rust', 'ambiguous': True } ),
            _BOUND )
    request, = requests
    assert 'interpretations' in request.message
    assert 'Research Report: rust (technical)' in contents[ 0 ].text


async def test_120_cancel_cancels_task( catcher ):
    ''' A call cancelled midway cancels its task on the server. '''
    reports = mcp_support.Reports( )
    async with _produce( reporter = reports.append ) as ensemble:
        call = asyncio.ensure_future(
            _invoke( ensemble, { 'topic': 'dogs' } ) )
        await reports.wait_count( 1, _BOUND )
        call.cancel( )
        with pytest.raises( asyncio.CancelledError ): await call
        identifier, = catcher.identifiers
        state = await _sdk.survey_task(
            ensemble.connection, identifier )
        assert _sdk.access_field( state, 'status' ) == 'cancelled'


async def test_130_timeout_cancels_task( catcher ):
    ''' A call whose time is up is refused, and its task cancelled. '''
    reports = mcp_support.Reports( )
    async with _produce(
        reporter = reports.append, timeouts = { _TOOL: 0.3 }
    ) as ensemble:
        with pytest.raises(
            exceptions.InvocationRefusal, match = 'did not answer within'
        ):
            await _invoke( ensemble, { 'topic': 'owls' } )
        identifier, = catcher.identifiers
        state = await _sdk.survey_task(
            ensemble.connection, identifier )
        assert _sdk.access_field( state, 'status' ) == 'cancelled'


async def test_140_tasks_never( ):
    ''' With tasks refused, a tool which requires them is left out and
        says why; a bad value of the option is a configuration error.
    '''
    async with _produce( tasks = 'never' ) as ensemble:
        names = { invoker.name for invoker in ensemble.survey_invokers( ) }
        assert _TOOL not in names
        omission, = ensemble.survey_omissions( )
    assert omission.name == _TOOL
    assert "option 'tasks'" in omission.reason
    with pytest.raises(
        exceptions.ConfigurationInvalidity, match = "'supported'"
    ): _produce( tasks = 'sometimes' )


async def test_150_tasks_enum( ):
    ''' The option takes the enumeration's members as well. '''
    ensemble = _produce( tasks = invocables.mcp.TaskUses.Supported )
    assert ensemble.options.tasks is invocables.mcp.TaskUses.Supported


async def test_160_descriptor( tmp_path ):
    ''' A descriptor chooses the tools called as tasks (``tasks``); the
        choice survives writing the descriptor back; a bad value is named.
    '''
    from invocables import descriptors
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    path = tmp_path / 'research.toml'
    path.write_text(
        "[ensemble]\nname = 'research'\n\n[mcp]\n"
        f"command = [ {str( program )!r}, 'stdio' ]\n"
        "tasks = 'supported'\n" )
    descriptor = descriptors.produce_ensemble_descriptor( path )
    assert descriptor.server.tasks == 'supported'
    ensemble = descriptors.produce_ensemble( descriptor )
    assert ensemble.options.tasks is invocables.mcp.TaskUses.Supported
    async with ensemble:
        documents = descriptors.produce_documents( ensemble )
    assert documents[ 'research.toml' ][ 'mcp' ][ 'tasks' ] == 'supported'
    path.write_text(
        "[ensemble]\nname = 'research'\n\n[mcp]\n"
        "command = [ 'mcp-server-everything', 'stdio' ]\n"
        "tasks = 'always'\n" )
    with pytest.raises(
        exceptions.DescriptorInvalidity, match = 'unknown use of tasks'
    ): descriptors.produce_ensemble_descriptor( path )
