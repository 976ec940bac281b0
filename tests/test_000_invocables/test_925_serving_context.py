# SPDX-License-Identifier: Apache-2.0

''' A local tool's context asks its caller: logs, progress, elicitation
    and sampling, answered by the client's session under serve and by the
    application's liaison in its own loop.
'''


import logging

import pytest

from mcp import types

import invocables

from invocables import invokers, serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


async def ask( context, topic: str ) -> str:
    ''' Logs, reports progress, elicits and samples about a topic. '''
    await context.log( 'info', f"asking about {topic}" )
    await context.report_progress( 1, 2, 'half' )
    answer = await context.elicit(
        f"Your view on {topic}?", {
            'type': 'object',
            'properties': { 'view': { 'type': 'string' } },
            'required': [ 'view' ] } )
    sample = await context.sample( [ f"Summarize {topic}." ] )
    await context.report_progress( 2, 2, 'done' )
    return f"{_access_view( answer )} / {_access_text( sample )}"


def _access_view( answer ):
    content = getattr( answer, 'content', answer )
    return content[ 'view' ]


def _access_text( sample ):
    if isinstance( sample, str ): return sample
    return sample.content.text


def _call( name, arguments ):
    return invocables.InvocationCanister(
        identifier = 'c1', name = name, arguments = arguments )


class _Liaison:
    ''' An application's answers, recorded. '''

    def __init__( self ):
        self.records = [ ]

    async def log( self, level, data, logger ):
        self.records.append( ( 'log', level, data ) )

    async def report_progress( self, progress, total, message ):
        self.records.append( ( 'progress', progress, total, message ) )

    async def elicit( self, message, schema ):
        self.records.append( ( 'elicit', message ) )
        return { 'view': 'fine' }

    async def sample( self, messages, **options ):
        self.records.append( ( 'sample', tuple( messages ) ) )
        return 'a summary'


@pytest.mark.asyncio
async def test_100_application_liaison( ):
    ''' In the application's own loop, its liaison answers every request
        of the tool, in order.
    '''
    ensemble = invocables.produce_ensemble( 'local', [ ask ] )
    liaison = _Liaison( )
    with invokers.liaise( liaison ):
        results = await invocables.execute_invocations(
            [ _call( 'ask', { 'topic': 'tea' } ) ], [ ensemble ] )
    assert not results[ 0 ].is_error( ), results[ 0 ]
    assert results[ 0 ].content[ 0 ].text == 'fine / a summary'
    assert liaison.records == [
        ( 'log', 'info', 'asking about tea' ),
        ( 'progress', 1, 2, 'half' ),
        ( 'elicit', 'Your view on tea?' ),
        ( 'sample', ( 'Summarize tea.', ) ),
        ( 'progress', 2, 2, 'done' ),
    ]


@pytest.mark.asyncio
async def test_110_no_liaison( caplog ):
    ''' Without a liaison, logs go to the Python logger, progress nowhere,
        and elicitation is an error result naming the absent liaison.
    '''
    ensemble = invocables.produce_ensemble( 'local', [ ask ] )
    with (
        caplog.at_level( logging.INFO ),
        pytest.raises( invocables.exceptions.InvocationExecutionFailure ) as (
            information ),
    ):
        await invocables.execute_invocations(
            [ _call( 'ask', { 'topic': 'tea' } ) ], [ ensemble ] )
    cause = information.value.__cause__
    assert isinstance( cause, invocables.exceptions.LiaisonAbsence )
    assert cause.request == 'elicit'
    assert any(
        record.getMessage( ) == 'asking about tea'
        for record in caplog.records )


@pytest.mark.asyncio
@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
@pytest.mark.filterwarnings( 'ignore::UserWarning' )
async def test_200_served_through_session( ):
    ''' Under serve, the client's session answers: log messages at or
        above its level, progress, elicitation and sampling.
    '''
    ensemble = invocables.produce_ensemble( 'local', [ ask ] )
    server = serving.ToolServer( [ ensemble ] )
    logs = [ ]
    progress = [ ]

    async def on_log( parameters ):
        logs.append( ( parameters.level, parameters.data ) )

    async def on_elicit( context, parameters ):
        assert parameters.message.startswith( 'Your view on ' )
        return types.ElicitResult(
            action = 'accept', content = { 'view': 'fine' } )

    async def on_sample( context, parameters ):
        assert parameters.messages[ 0 ].content.text.startswith(
            'Summarize ' )
        return types.CreateMessageResult(
            role = 'assistant', model = 'test',
            content = types.TextContent( type = 'text', text = 'a summary' ) )

    async def on_progress( value, total, message ):
        progress.append( ( value, total, message ) )

    async with invocables.connect_ensembles( [ ensemble ] ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), logging_callback = on_log,
            elicitation_callback = on_elicit, sampling_callback = on_sample,
            mode = 'legacy', # logging/setLevel: the handshake's versions
        ) as client:
            await client.set_logging_level( 'debug' )
            result = await client.call_tool(
                'ask', { 'topic': 'tea' }, progress_callback = on_progress )
            assert not sdk.access_field( result, 'is_error' ), result
            assert result.content[ 0 ].text == 'fine / a summary'
            await client.set_logging_level( 'error' )
            result = await client.call_tool( 'ask', { 'topic': 'milk' } )
            assert not sdk.access_field( result, 'is_error' ), result
    assert logs == [ ( 'info', 'asking about tea' ) ]
    assert progress == [ ( 1, 2, 'half' ), ( 2, 2, 'done' ) ]
