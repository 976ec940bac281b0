# SPDX-License-Identifier: Apache-2.0

''' The redactor of an MCP ensemble covers what its server lists besides
    tools: prompts, resources and templates (for the application, a model
    which lists resources as tools, and the clients of ``serve``), the
    errors of those listings, the resources and links of results, and the
    errors of tasks.

    The secret is given as an ``env:`` reference in the environment of a
    server which repeats it everywhere (``servers/confiding_server.py``).
'''


import asyncio
import dataclasses
import json

import pytest

import invocables
import invocables.mcp

from invocables import exceptions, serving
from invocables.mcp import _sdk as sdk

from . import mcp_support


_SECRET = 'sk-confided-7373'
_VARIABLE = 'INVOCABLES_TEST_CONFIDED'
_WAIT = 30 # seconds: bounds which prove "does not hang"


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _invoke( ensemble, name, arguments ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return ensemble.access_invoker( name )( context, arguments )


def _produce_ensemble( monkeypatch, *arguments, **options ):
    monkeypatch.setenv( _VARIABLE, _SECRET )
    return invocables.mcp.produce_ensemble(
        'confiding', command = mcp_support.produce_server_command(
            'confiding_server.py', *arguments ),
        environment = { 'CONFIDING_SECRET': f"env:{_VARIABLE}" },
        **options )


@pytest.mark.asyncio
async def test_100_prompts_listed_redacted( monkeypatch ):
    ''' The title, description and argument descriptions of a listed
        prompt are redacted; its name and its arguments' names, which
        retrieving needs, stay. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        ( prompt, ) = await ensemble.survey_prompts( )
    assert prompt.name == 'brief'
    assert prompt.title == 'Brief ***'
    assert prompt.description == 'Briefs with ***.'
    ( argument, ) = prompt.arguments
    assert argument.name == 'topic'
    assert argument.description == 'Topic, not ***.'
    assert _SECRET not in repr( prompt )


@pytest.mark.asyncio
async def test_110_resources_and_templates_listed_redacted( monkeypatch ):
    ''' The name, title and description of a listed resource and of a
        listed template are redacted; their URIs, which reading needs,
        stay. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        ( resource, ) = await ensemble.survey_resources( )
        ( template, ) = await ensemble.survey_resource_templates( )
    assert resource.uri == 'test://confiding/note'
    assert ( resource.name, resource.title, resource.description ) == (
        'note-***', 'Note ***', 'Holds ***.' )
    assert template.uri_template == 'test://confiding/topics/{topic}'
    assert ( template.name, template.title, template.description ) == (
        'topic-***', 'Topic ***', 'About ***.' )
    assert _SECRET not in repr( ( resource, template ) )


@pytest.mark.asyncio
async def test_120_prompt_and_resources_retrieved_redacted( monkeypatch ):
    ''' The messages of a prompt and the texts of resources read (one
        listed, one of a template) are redacted. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        ( message, ) = await ensemble.retrieve_prompt(
            'brief', { 'topic': 'tea' } )
        ( note, ) = await ensemble.retrieve_resource(
            'test://confiding/note' )
        ( topic, ) = await ensemble.retrieve_resource(
            'test://confiding/topics/tea' )
    assert message.content[ 0 ].text == 'Brief on tea with ***.'
    assert note.text == 'Note: ***.'
    assert topic.text == 'tea: ***.'


@pytest.mark.asyncio
async def test_130_resources_of_results_redacted( monkeypatch ):
    ''' A binary resource in a tool's result loses the secret of its URI,
        and a resource link that of its URI and of its name. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        blob, link = await _invoke( ensemble, 'embed', { } )
    assert blob.uri == 'test://confiding/blob?key=***'
    assert blob.data == b'\x00\x01\x02'
    assert link.uri == 'test://confiding/link/***'
    assert link.name == 'link-***'


@pytest.mark.asyncio
async def test_140_listing_errors_redacted( monkeypatch ):
    ''' A server which refuses to list its prompts or templates, quoting
        the secret, raises the SDK's error (same code) with its message
        and data redacted; the other listings work. '''
    async with _produce_ensemble( monkeypatch, '--refuse' ) as ensemble:
        with pytest.raises( sdk.Error ) as prompts:
            await ensemble.survey_prompts( )
        with pytest.raises( sdk.Error ) as templates:
            await ensemble.survey_resource_templates( )
        ( resource, ) = await ensemble.survey_resources( )
    assert prompts.value.error.code == -32603
    assert prompts.value.error.message == 'No prompts for ***.'
    assert templates.value.error.message == 'No templates for ***.'
    assert templates.value.error.data == { 'key': '***' }
    assert resource.title == 'Note ***'


@pytest.mark.asyncio
async def test_150_resources_as_tools_redacted( monkeypatch ):
    ''' A model which lists the server's resources as a tool sees the
        listing redacted. '''
    ensemble = _produce_ensemble( monkeypatch, resources_as_tools = True )
    async with ensemble:
        ( result, ) = await invocables.execute_invocations(
            [ _call( 'a', 'list_resources' ) ], [ ensemble ] )
    text = result.as_text( )
    assert 'Note ***' in text
    assert 'About ***.' in text
    assert _SECRET not in text


@pytest.mark.asyncio
async def test_160_gateway_lists_redacted( monkeypatch ):
    ''' serve, as a gateway, lists the upstream server's prompts,
        resources and templates redacted to its clients, and the
        description of a prompt it gives. '''
    server = serving.ToolServer( [ _produce_ensemble( monkeypatch ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            listings = [
                await client.list_prompts( ),
                await client.list_resources( ),
                await client.list_resource_templates( ),
                await client.get_prompt( 'brief', { 'topic': 'tea' } ) ]
    texts = [
        json.dumps( listing.model_dump( mode = 'json' ) )
        for listing in listings ]
    for text in texts: assert _SECRET not in text
    ( prompt, ) = listings[ 0 ].prompts
    assert prompt.description == 'Briefs with ***.'
    assert prompt.arguments[ 0 ].description == 'Topic, not ***.'
    ( resource, ) = listings[ 1 ].resources
    assert ( resource.name, resource.title ) == ( 'note-***', 'Note ***' )
    ( template, ) = sdk.access_field( listings[ 2 ], 'resource_templates' )
    assert template.description == 'About ***.'
    assert listings[ 3 ].description == 'Briefs with ***.'


async def _wait_started( reports ):
    async def wait( ) -> None:
        while not any(
            report.message == 'started' for report in reports
        ):
            reports.arrival.clear( )
            await reports.arrival.wait( )
    await asyncio.wait_for( wait( ), _WAIT )


@pytest.mark.asyncio
async def test_170_task_error_redacted( monkeypatch ):
    ''' A tool which runs as a task and fails with the secret in its error
        fails the call with the error redacted. '''
    release = asyncio.Event( )

    async def slow( context ) -> str:
        ''' Waits until released. '''
        await context.report_progress( 1, 2, 'started' )
        await release.wait( )
        return 'done'

    store = serving.MemoryTaskStore( )
    server = serving.ToolServer( [ invocables.produce_ensemble( 'local', [
        invocables.produce_invoker(
            slow, annotations = { 'task_support': 'required' } ) ] ) ],
        task_store = store )
    monkeypatch.setenv( _VARIABLE, _SECRET )
    reports = mcp_support.Reports( )
    async with mcp_support.serve_in_loop( server ) as url:
        client = invocables.mcp.produce_ensemble(
            'remote', url = url, reporter = reports.append,
            headers = { 'X-Service-Key': f"env:{_VARIABLE}" } )
        async with client:
            call = asyncio.ensure_future( _invoke( client, 'slow', { } ) )
            await _wait_started( reports )
            ( record, ), _ = await store.survey_tasks( None )
            await store.store_task( dataclasses.replace(
                record, state = serving.TaskStates.Failed,
                error = {
                    'code': -32603,
                    'message': f"The worker lost {_SECRET}." } ) )
            with pytest.raises( exceptions.InvocationRefusal ) as refusal:
                await asyncio.wait_for( call, _WAIT )
            release.set( )
    assert 'The worker lost ***' in str( refusal.value )
    assert _SECRET not in str( refusal.value )


@pytest.mark.asyncio
async def test_180_input_rounds_redacted( monkeypatch ):
    ''' What a server requires before it gives a prompt, a resource or a
        tool's result (rounds of input under MCP 2026-07-28; its requests
        with 1.x) reaches the elicitor and the sampler redacted (here the
        secrets are phrases of its questions). '''
    monkeypatch.setenv( _VARIABLE, 'Say a word' )
    monkeypatch.setenv( f"{_VARIABLE}_SAMPLE", 'Answer' )
    elicited = [ ]
    sampled = [ ]

    async def elicit( request ):
        elicited.append( request.message )
        return invocables.mcp.callbacks.ElicitationResponse(
            action = invocables.mcp.callbacks.ElicitationActions.Accept,
            content = { 'word': 'tea' } )

    async def sample( request ):
        sampled.append( request.messages[ 0 ].content[ 0 ].text )
        return invocables.mcp.callbacks.SamplingResponse(
            text = 'sampled', model = 'm1' )

    arguments = [ ] if sdk.MAJOR >= 2 else [ '--legacy' ] # noqa: PLR2004
    ensemble = invocables.mcp.produce_ensemble(
        'inputs', command = mcp_support.produce_server_command(
            'inputs_server.py', *arguments ),
        environment = {
            'PHRASE': f"env:{_VARIABLE}",
            'PHRASE_SAMPLE': f"env:{_VARIABLE}_SAMPLE" },
        elicitor = elicit, sampler = sample )
    async with ensemble:
        await ensemble.retrieve_prompt( 'note' )
        await ensemble.retrieve_resource( 'inputs://note/x' )
        await _invoke( ensemble, 'confer', {
            'kinds': 'elicit,sample', 'rounds': 1, 'state': False } )
    assert elicited == [ '*** (note).', '*** (note).', '*** (elicit-1).' ]
    assert sampled == [ '*** sample-1.' ]


@pytest.mark.asyncio
async def test_190_names_holding_secret_left_out( monkeypatch, caplog ):
    ''' A tool whose name holds the secret is left out (no provider may
        see it; calls need the name as it is), its omission named
        redacted; so is a prompt whose name, or an argument's, holds it,
        from the application and the clients of serve; the rest stays.
    '''
    ensemble = _produce_ensemble( monkeypatch, '--named' )
    with caplog.at_level( 'WARNING' ):
        async with ensemble:
            names = [ invoker.name for invoker in ensemble.survey_invokers( ) ]
            omissions = ensemble.survey_omissions( )
            prompts = await ensemble.survey_prompts( )
            tools = invocables.produce_processor( 'openai' ).prepare_tools(
                [ ensemble ] )
            server = serving.ToolServer( [ ensemble ] )
            async with mcp_support.open_memory_client(
                server.produce_server( ) ) as client:
                served = [
                    await client.list_tools( ),
                    await client.list_prompts( ) ]
    assert 'peek_***' not in names and 'echo' not in names
    assert { 'embed', 'reject', 'halves' } <= set( names )
    ( omission, ) = omissions
    assert omission.name == 'peek_***'
    assert 'its name holds a secret' in omission.reason
    assert [ prompt.name for prompt in prompts ] == [ 'brief' ]
    texts = [ json.dumps( tools ), repr( omissions ), caplog.text ] + [
        json.dumps( listing.model_dump( mode = 'json' ) )
        for listing in served ]
    for text in texts: assert _SECRET not in text
    assert [ prompt.name for prompt in served[ 1 ].prompts ] == [ 'brief' ]
    assert 'peek' not in texts[ 3 ]
