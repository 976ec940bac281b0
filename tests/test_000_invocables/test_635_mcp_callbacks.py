# SPDX-License-Identifier: Apache-2.0

''' Requests of server-everything to the client: elicitation, sampling,
    roots, logging.
'''


import asyncio
import logging

import pytest

import invocables
import invocables.mcp

from invocables import exceptions
from invocables.mcp import callbacks

from . import mcp_support


pytestmark = pytest.mark.asyncio
_BOUND = 30.0


def _produce( **options ):
    program = mcp_support.locate_npm_server( 'mcp-server-everything' )
    return invocables.mcp.produce_ensemble(
        'everything', command = [ program, 'stdio' ], **options )


async def _call( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    invoker = ensemble.access_invoker( name )
    contents = await asyncio.wait_for(
        invoker( context, arguments or { } ), _BOUND )
    return '\n'.join( getattr( item, 'text', '' ) for item in contents )


class _Catcher( logging.Handler ):
    ''' Keeps records; sets an event when a record holds a text. '''

    def __init__( self, text ):
        super( ).__init__( logging.DEBUG )
        self.text = text
        self.records = [ ]
        self.event = asyncio.Event( )

    def emit( self, record ):
        self.records.append( record )
        if self.text in record.getMessage( ): self.event.set( )


async def test_100_elicitation_accepted( ):
    ''' An elicitor's accepted content reaches the server, which was told
        the schema of what it asked.
    '''
    requests = [ ]

    async def elicitor( request ):
        requests.append( request )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'name': 'Ada', 'check': True, 'email': 'a@b.io' } )

    async with _produce( elicitor = elicitor ) as ensemble:
        text = await _call( ensemble, 'trigger-elicitation-request' )
    assert 'Name: Ada' in text
    request, = requests
    assert request.ensemble == 'everything'
    assert 'name' in request.schema[ 'properties' ]


async def test_110_elicitation_declined_and_cancelled( ):
    ''' Declining and cancelling reach the server as such. '''
    actions = [
        callbacks.ElicitationActions.Decline,
        callbacks.ElicitationActions.Cancel ]

    async def elicitor( request ):
        return callbacks.ElicitationResponse( action = actions.pop( 0 ) )

    async with _produce( elicitor = elicitor ) as ensemble:
        declined = await _call( ensemble, 'trigger-elicitation-request' )
        cancelled = await _call( ensemble, 'trigger-elicitation-request' )
    assert '"decline"' in declined
    assert '"cancel"' in cancelled


async def test_120_elicitation_content_invalid( ):
    ''' Content which breaks the requested schema is not sent: the server
        gets an error naming the field, the call an error result.
    '''
    async def elicitor( request ):
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'name': 'Ada', 'check': 'yes' } )

    async with _produce( elicitor = elicitor ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as caught:
            await _call( ensemble, 'trigger-elicitation-request' )
    assert 'does not match the requested schema' in str( caught.value )
    assert 'check' in str( caught.value )


async def test_130_elicitation_absent( ):
    ''' Without an elicitor, elicitation is not advertised: the server
        offers none of its elicitation tools.
    '''
    async with _produce( ) as ensemble:
        names = { invoker.name for invoker in ensemble.survey_invokers( ) }
    assert 'trigger-elicitation-request' not in names
    assert 'trigger-sampling-request' not in names
    assert 'get-roots-list' not in names


async def test_200_sampling( ):
    ''' A sampler answers a server's sampling request; the request comes
        as neutral canisters with the server's system prompt.
    '''
    requests = [ ]

    async def sampler( request ):
        requests.append( request )
        return callbacks.SamplingResponse( text = 'sampled', model = 'm1' )

    async with _produce( sampler = sampler ) as ensemble:
        text = await _call(
            ensemble, 'trigger-sampling-request', { 'prompt': 'Hello' } )
    assert '"sampled"' in text and '"m1"' in text
    request, = requests
    assert request.system == 'You are a helpful test server.'
    message, = request.messages
    assert message.role == 'user'
    assert 'Hello' in message.content[ 0 ].text


async def test_210_sampling_limits( ):
    ''' Requests beyond the count or the token limit are refused, and the
        sampler never sees them.
    '''
    requests = [ ]

    async def sampler( request ):
        requests.append( request )
        return callbacks.SamplingResponse( text = 'ok', model = 'm1' )

    limits = callbacks.SamplingLimits( requests = 1, tokens = 50 )
    async with _produce(
        sampler = sampler, sampling_limits = limits
    ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as large:
            await _call(
                ensemble, 'trigger-sampling-request',
                { 'prompt': 'x', 'maxTokens': 100 } )
        await _call(
            ensemble, 'trigger-sampling-request',
            { 'prompt': 'x', 'maxTokens': 10 } )
        with pytest.raises( exceptions.InvocationRefusal ) as many:
            await _call(
                ensemble, 'trigger-sampling-request',
                { 'prompt': 'x', 'maxTokens': 10 } )
    assert 'at most 50' in str( large.value )
    assert 'at most 1 sampling' in str( many.value )
    assert len( requests ) == 1


async def test_220_sampler_raises( ):
    ''' A sampler which raises gives the server an error, not a crash. '''
    async def sampler( request ):
        raise RuntimeError( 'secret detail' )

    async with _produce( sampler = sampler ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as caught:
            await _call(
                ensemble, 'trigger-sampling-request', { 'prompt': 'x' } )
        assert ensemble.is_connected( )
    assert 'failed to sample' in str( caught.value )
    assert 'secret detail' not in str( caught.value )


async def test_300_roots_and_logging( tmp_path ):
    ''' Roots reach the server; changed roots are announced and listed
        again; the server's log messages reach the ensemble's logger.
    '''
    logger = logging.getLogger( 'invocables.mcp.servers.everything' )
    catcher = _Catcher( 'Roots updated: 2 root(s)' )
    logger.addHandler( catcher )
    logger.setLevel( logging.DEBUG )
    try:
        async with _produce( roots = [ tmp_path ] ) as ensemble:
            text = await _call( ensemble, 'get-roots-list' )
            assert tmp_path.as_uri( ) in text
            await ensemble.configure_roots(
                [ tmp_path / 'a', 'file:///srv/b' ] )
            await asyncio.wait_for( catcher.event.wait( ), _BOUND )
            text = await _call( ensemble, 'get-roots-list' )
    finally: logger.removeHandler( catcher )
    assert ( tmp_path / 'a' ).as_uri( ) in text
    assert 'file:///srv/b' in text
    record = next(
        record for record in catcher.records
        if 'Roots updated: 2' in record.getMessage( ) )
    assert record.levelno == logging.INFO
    assert record.mcp_level == 'info'


async def test_310_roots_unset( ):
    ''' Roots cannot be changed on an ensemble produced without them. '''
    async with _produce( ) as ensemble:
        with pytest.raises( exceptions.ConfigurationInvalidity ):
            await ensemble.configure_roots( [ '/tmp' ] )


async def test_320_log_level( ):
    ''' The log level is asked at connect and may be changed later. '''
    async with _produce( log_level = 'error' ) as ensemble:
        await ensemble.configure_logging( 'debug' )
        assert ensemble.features.log_level == 'debug'
        assert ensemble.is_connected( )


async def test_330_features_need_connection( ):
    ''' Without a connection, features raise the connection absence. '''
    ensemble = _produce( roots = [ '/tmp' ] )
    with pytest.raises( exceptions.ConnectionAbsence ):
        await ensemble.configure_roots( [ '/srv' ] )
    with pytest.raises( exceptions.ConnectionAbsence ):
        await ensemble.survey_resources( )


@pytest.mark.slow
async def test_400_sampler_from_provider( ):
    ''' A sampler built from a provider and the application's client
        serves a server's sampling request through the real SDK client,
        with the system prompt and token bound of the request.
    '''
    import openai

    from . import scripted
    with scripted.ScriptedServer(
        [ scripted.openai_text( 'From the model.' ) ]
    ) as server:
        client = openai.AsyncOpenAI(
            base_url = f"{server.url}/v1", api_key = 'test',
            max_retries = 0 )
        sampler = invocables.mcp.produce_sampler(
            'openai', client, model = 'gpt-4o' )
        async with _produce( sampler = sampler ) as ensemble:
            text = await _call(
                ensemble, 'trigger-sampling-request',
                { 'prompt': 'Hi', 'maxTokens': 42 } )
        request, = server.requests
    assert 'From the model.' in text
    assert '"gpt-4o"' in text
    body = request.body
    assert body[ 'model' ] == 'gpt-4o'
    assert body[ 'messages' ][ 0 ] == {
        'role': 'system', 'content': 'You are a helpful test server.' }
    assert 'Hi' in body[ 'messages' ][ 1 ][ 'content' ]
    assert 42 in (
        body.get( 'max_tokens' ), body.get( 'max_completion_tokens' ) )
