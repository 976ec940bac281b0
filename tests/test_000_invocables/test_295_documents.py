# SPDX-License-Identifier: Apache-2.0

''' The design documents, element by element, work as they are written.

    Each test names the document it follows (the five files of the user's
    design, by their number: 000 is the latest and most formal) and the
    element. The translation of each document's names to the library's is
    in ``documentation/seeds.rst``.
'''


import asyncio
import dataclasses
import datetime
import json

import frigid
import pytest

from absence import absent, is_absent

import invocables

from invocables import exceptions

from . import mcp_support


_SCHEMA_WEATHER = frigid.Dictionary( {
    'type': 'object',
    'properties': {
        'location': { 'type': 'string', 'description': 'City and state' },
    },
    'required': [ 'location' ],
} )


async def _get_weather( context, arguments ):
    ''' Fetches weather for specified location (000, Example 1). '''
    return frigid.Dictionary( {
        'temperature': 62,
        'conditions': 'Partly cloudy',
        'location': arguments[ 'location' ],
    } )


def _produce_weather_invoker( **extra ):
    return invocables.FunctionInvoker(
        name = 'get_weather',
        invocable = _get_weather,
        arguments_schema = _SCHEMA_WEATHER,
        **extra )


def _produce_context( invoker, auxdata = None ):
    return invocables.InvocationContext(
        auxdata = auxdata, invoker = invoker, namespace = { } )


def _invocation( name, arguments, identifier = 'call_abc123' ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


# 000, Invoker Architecture: the Invoker protocol.


def test_100_invoker_protocol_members( ):
    ''' 000 Invoker: name, invocable, arguments_schema and ensemble, the
        parent ensemble object (``invoker.ensemble.name``).
    '''
    ensemble = invocables.LocalEnsemble(
        name = 'weather', invokers = [ _produce_weather_invoker( ) ] )
    invoker = ensemble.access_invoker( 'get_weather' )
    assert invoker.name == 'get_weather'
    assert invoker.invocable is _get_weather
    assert invoker.arguments_schema == _SCHEMA_WEATHER
    assert invoker.ensemble is ensemble
    assert invoker.ensemble.name == 'weather'
    members = set( dir( invocables.Invoker ) )
    assert { 'name', 'invocable', 'arguments_schema', 'ensemble' } <= members


@pytest.mark.asyncio
async def test_120_example_1_invoker_with_frigid_dictionaries( ):
    ''' 000 Example 1: an invoker made with ``arguments_schema`` and
        ``ensemble`` keywords takes frigid Dictionary arguments, and the
        frigid Dictionary its invocable returns becomes JSON for the model.
    '''
    io_ensemble = invocables.LocalEnsemble( name = 'io', invokers = ( ) )
    invoker = _produce_weather_invoker( ensemble = io_ensemble )
    assert invoker.ensemble is io_ensemble
    arguments = frigid.Dictionary( { 'location': 'San Francisco, CA' } )
    content = await invoker( _produce_context( invoker ), arguments )
    assert content[ 0 ].data[ 'temperature' ] == 62
    processor = invocables.produce_processor( 'openai' )
    result = invocables.ResultCanister(
        invocation_id = 'call_abc123', content = content )
    message = processor.nativize_results( [ result ] )[ 0 ]
    assert json.loads( message[ 'content' ] )[ 'temperature' ] == 62


@pytest.mark.asyncio
async def test_130_engine_takes_frigid_arguments( ):
    ''' 000 Complete Conversation Example: an invocation canister whose
        arguments are a frigid Dictionary runs, and its frigid result
        serialises.
    '''
    ensemble = invocables.produce_ensemble(
        'weather', [ _produce_weather_invoker( ) ] )
    results = await invocables.execute_invocations(
        [ _invocation( 'get_weather', frigid.Dictionary(
            { 'location': 'San Francisco, CA' } ) ) ], [ ensemble ] )
    assert not results[ 0 ].is_error( ), results[ 0 ]
    assert json.loads( results[ 0 ].as_text( ) )[ 'conditions' ] == (
        'Partly cloudy' )


# 000, Context.


@pytest.mark.asyncio
async def test_200_context_auxdata_mapping( ):
    ''' 000 Context: ``auxdata`` is a mapping, empty when the application
        gives none; ``invoker`` and ``namespace`` are there too.
    '''
    seen = [ ]

    async def peek( context, arguments ):
        seen.append( context )
        return 'ok'

    invoker = invocables.FunctionInvoker(
        name = 'peek', invocable = peek,
        arguments_schema = { 'type': 'object' } )
    ensemble = invocables.produce_ensemble( 'tools', [ invoker ] )
    await invocables.execute_invocations(
        [ _invocation( 'peek', { } ) ], [ ensemble ] )
    await invocables.execute_invocations(
        [ _invocation( 'peek', { } ) ], [ ensemble ],
        auxdata = frigid.Dictionary( { 'user': 'u' } ) )
    assert dict( seen[ 0 ].auxdata ) == { }
    assert seen[ 1 ].auxdata[ 'user' ] == 'u'
    assert seen[ 0 ].invoker.name == 'peek'
    assert isinstance( seen[ 0 ].namespace, dict )
    assert dict( _produce_context( invoker ).auxdata ) == { }


# 000, Ensemble Architecture and Example 2.


def test_300_ensemble_protocol_members( ):
    ''' 000 Ensemble: name, invokers (name to invoker), configuration (a
        mapping: ``configuration[ 'timeout' ]``), connection (absent for
        local tools), access_invoker.
    '''
    ensemble = invocables.produce_ensemble(
        'io', [ _produce_weather_invoker( ) ],
        configuration = { 'timeout': 30, 'max_retries': 3 } )
    assert ensemble.name == 'io'
    assert list( ensemble.invokers ) == [ 'get_weather' ]
    assert ensemble.invokers[ 'get_weather' ] is (
        ensemble.access_invoker( 'get_weather' ) )
    assert ensemble.configuration[ 'timeout' ] == 30
    assert ensemble.configuration[ 'max_retries' ] == 3
    assert ensemble.configuration.get( 'nothing', 'none' ) == 'none'
    assert 'timeout' in ensemble.configuration
    assert dict( ensemble.configuration ) == {
        'timeout': 30, 'max_retries': 3, 'description': '' }
    assert is_absent( ensemble.connection )
    members = set( dir( invocables.Ensemble ) )
    assert {
        'name', 'invokers', 'configuration', 'connection', 'connect',
        'disconnect', 'access_invoker' } <= members


@pytest.mark.asyncio
async def test_310_example_2_ensemble_from_mapping( ):
    ''' 000 Example 2: an ensemble made from a frigid mapping of invokers,
        a frigid configuration and an absent connection; connected; its
        invoker accessed and run within the configured timeout.
    '''
    async def read_file( context, arguments ): return 'contents'

    async def write_file( context, arguments ): return 'written'

    def produce( name, invocable ):
        return invocables.FunctionInvoker(
            name = name, invocable = invocable,
            arguments_schema = { 'type': 'object' } )

    io_ensemble = invocables.LocalEnsemble(
        name = 'io',
        invokers = frigid.Dictionary( {
            'read_file': produce( 'read_file', read_file ),
            'write_file': produce( 'write_file', write_file ),
        } ),
        configuration = frigid.Dictionary( { 'timeout': 30 } ),
        connection = absent,
    )
    await io_ensemble.connect( )
    invoker = io_ensemble.access_invoker( 'read_file' )
    assert invoker.ensemble is io_ensemble
    assert io_ensemble.configuration[ 'timeout' ] == 30
    content = await io_ensemble.invoke( 'read_file', { } )
    assert content[ 0 ].text == 'contents'
    await io_ensemble.disconnect( )
    with pytest.raises( exceptions.EnsemblesInvalidity ):
        invocables.LocalEnsemble(
            name = 'io', invokers = { 'other': invoker } )


@pytest.mark.asyncio
async def test_320_dataclass_invoker_of_document_001( ):
    ''' 001 Invoker (``@dataclass`` with name, invocable, arguments_schema,
        ensemble, deduplicator): an object written so joins an ensemble and
        runs.
    '''
    @dataclasses.dataclass
    class Invoker:
        name: str
        invocable: object
        arguments_schema: dict
        ensemble: object = None
        deduplicator: object = None

    ensemble = invocables.produce_ensemble( 'weather', [
        Invoker( 'get_weather', _get_weather, dict( _SCHEMA_WEATHER ) ) ] )
    results = await invocables.execute_invocations(
        [ _invocation( 'get_weather', { 'location': 'SF' } ) ],
        [ ensemble ] )
    assert json.loads( results[ 0 ].as_text( ) )[ 'location' ] == 'SF'
    assert ensemble.invokers[ 'get_weather' ].ensemble is ensemble


@pytest.mark.asyncio
async def test_330_connection_lifecycle_of_document_004( ):
    ''' 004 Ensemble: ``connect`` and ``disconnect`` of an ensemble reach
        its connection, when it has such methods.
    '''
    events = [ ]

    class Connection:
        async def connect( self ): events.append( 'connect' )
        async def disconnect( self ): events.append( 'disconnect' )

    connection = Connection( )
    ensemble = invocables.LocalEnsemble(
        name = 'local-tools', invokers = [ ], connection = connection )
    assert ensemble.connection is connection
    async with ensemble: pass
    assert events == [ 'connect', 'disconnect' ]


@pytest.mark.asyncio
async def test_340_mcp_connection_is_session( ):
    ''' 000 Ensemble: ``connection`` of an MCP ensemble is its MCP client
        session while connected, absent otherwise; its invokers' parent is
        the ensemble.
    '''
    import invocables.mcp
    ensemble = invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ) )
    assert is_absent( ensemble.connection )
    async with ensemble:
        session = ensemble.connection
        assert not is_absent( session )
        listed = await session.list_tools( )
        assert 'echo' in [ tool.name for tool in listed.tools ]
        assert ensemble.invokers[ 'echo' ].ensemble is ensemble
    assert is_absent( ensemble.connection )


# 000, Complete Conversation Example: canisters.


def test_400_canisters_timestamps_aware( ):
    ''' 000 Complete Conversation Example: timestamps are timezone-aware
        datetimes, by default and as given.
    '''
    now = datetime.datetime.now( datetime.timezone.utc )
    invocation = invocables.InvocationCanister(
        identifier = 'call_abc123', name = 'get_weather',
        arguments = frigid.Dictionary( { 'location': 'San Francisco, CA' } ),
        timestamp = now )
    assert invocation.timestamp is now
    result = invocables.ResultCanister( invocation_id = 'call_abc123' )
    assert isinstance( result.timestamp, datetime.datetime )
    assert result.timestamp.tzinfo is not None
    assert result.timestamp >= now


def test_410_result_canister_single_content( ):
    ''' 000 Complete Conversation Example: ``ResultCanister( content =
        TextContent( ... ), error = absent )`` holds one content.
    '''
    text = '{"temperature": 62, "conditions": "Partly cloudy"}'
    result = invocables.ResultCanister(
        invocation_id = 'call_abc123',
        content = invocables.TextContent( text = text ),
        error = absent,
        timestamp = datetime.datetime.now( datetime.timezone.utc ) )
    assert result.content == ( invocables.TextContent( text = text ), )
    assert result.as_text( ) == text
    assert not result.is_error( )
    processor = invocables.produce_processor( 'anthropic' )
    message = processor.nativize_results( [ result ] )[ 0 ]
    block = message[ 'content' ][ 0 ]
    assert block[ 'content' ] == [ { 'type': 'text', 'text': text } ]


# 000, Error Handling and Example 3.


@pytest.mark.asyncio
async def test_500_execute_invoker_example_3( ):
    ''' 000 Example 3: execute_invoker( invoker, arguments, context )
        gives a result whose error is absent on success and set for
        invalid arguments; a tool which raises raises ToolExecutionFailure.
    '''
    invoker = _produce_weather_invoker( )
    context = _produce_context( invoker )
    result = await invocables.execute_invoker(
        invoker, frigid.Dictionary( { 'location': 'SF' } ), context )
    assert is_absent( result.error )
    assert json.loads( result.as_text( ) )[ 'location' ] == 'SF'
    result = await invocables.execute_invoker(
        invoker, frigid.Dictionary( { 'place': 'SF' } ), context )
    assert result.error.genus is invocables.FaultGenera.Invalidity

    async def explode( context, arguments ): raise ValueError( 'broken' )

    exploding = invocables.FunctionInvoker(
        name = 'explode', invocable = explode,
        arguments_schema = { 'type': 'object' } )
    with pytest.raises( exceptions.ToolExecutionFailure ) as caught:
        await invocables.execute_invoker( exploding, { } )
    assert isinstance( caught.value.__cause__, ValueError )
    assert exceptions.ToolExecutionFailure is (
        exceptions.InvocationExecutionFailure )


@pytest.mark.asyncio
async def test_510_error_categories( ):
    ''' 000 Error categories: schema validation, timeout, permission (a
        tool's refusal) and network (a lost connection, reported by
        policy) become error results of their own kinds; other execution
        errors fail fast.
    '''
    async def wait( context, arguments ):
        await asyncio.Event( ).wait( )

    async def refuse( context, arguments ):
        raise exceptions.InvocationRefusal( 'Permission denied: /etc.' )

    async def disconnect( context, arguments ):
        raise exceptions.ConnectionFailure( 'remote', 'it went away.' )

    def produce( name, invocable, **options ):
        return invocables.FunctionInvoker(
            name = name, invocable = invocable,
            arguments_schema = {
                'type': 'object',
                'properties': { 'n': { 'type': 'integer' } } },
            **options )

    ensemble = invocables.produce_ensemble( 'tools', [
        produce( 'wait', wait, timeout = 0.05 ),
        produce( 'refuse', refuse ),
        produce( 'disconnect', disconnect ) ] )
    results = await invocables.execute_invocations( [
        _invocation( 'wait', { 'n': 'x' }, '1' ),
        _invocation( 'wait', { }, '2' ),
        _invocation( 'refuse', { }, '3' ),
        _invocation( 'disconnect', { }, '4' ),
    ], [ ensemble ], failure_policy = invocables.FailurePolicies.Report )
    genera = [ result.error.genus for result in results ]
    assert genera == [
        invocables.FaultGenera.Invalidity, invocables.FaultGenera.Timeout,
        invocables.FaultGenera.Refusal, invocables.FaultGenera.Connection ]
