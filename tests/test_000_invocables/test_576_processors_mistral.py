# SPDX-License-Identifier: Apache-2.0

''' Mistral processor: real captures through the mistralai SDK, ids of
    Mistral's shape, results.
'''


import json
import re

import pytest

from mistralai.client import Mistral
from mistralai.client import errors as mistral_errors
from mistralai.client import models as mistral_models

import invocables

from invocables import exceptions
from invocables.canisters import (
    Fault, FaultGenera, ResultCanister, StructureContent, TextContent,
)
from invocables.processors import mistral as mistral_processors
from invocables.processors import produce_processor

from . import replay


_LOCATION = replay.access_fixtures_location( )
_EXPECTATIONS = json.loads(
    ( _LOCATION / 'expected.json' ).read_text( encoding = 'utf-8' ) )
_NAMES = sorted(
    name for name in _EXPECTATIONS if name.startswith( 'mistral/' ) )
_MESSAGES = [ { 'role': 'user', 'content': 'Hello.' } ]
_shape = re.compile( r'[A-Za-z0-9]{9}' )


def get_weather( city: str ) -> str:
    ''' Returns weather in city. '''
    return f"Sunny in {city}."


def _check( invocations, expected ):
    assert [ ( item.name, item.arguments ) for item in invocations ] == [
        ( call[ 'name' ], call[ 'arguments' ] ) for call in expected ]
    for invocation, call in zip( invocations, expected ):
        if call[ 'id' ] is not None:
            assert invocation.identifier == call[ 'id' ]
        assert invocation.identifier
    identifiers = [ item.identifier for item in invocations ]
    assert len( set( identifiers ) ) == len( identifiers )


def _read( processor, client, name, expectation ):
    ''' Returns calls and assistant message of a capture read through the
        SDK.
    '''
    if not expectation[ 'streaming' ]:
        response = client.chat.complete( model = 'm', messages = _MESSAGES )
        return (
            processor.normalize_invocations( response ),
            processor.prepare_message( response ) )
    accumulator = processor.produce_accumulator( )
    invocations = [ ]
    for event in client.chat.stream( model = 'm', messages = _MESSAGES ):
        invocations.extend( accumulator.ingest( event ) )
    invocations.extend( accumulator.conclude( ) )
    return invocations, accumulator.produce_message( )


@pytest.mark.parametrize( 'name', _NAMES )
def test_100_captures_through_sdk( name ):
    ''' Every capture, replayed to the mistralai client (``chat.complete``
        or ``chat.stream``), gives exactly the expected calls; the
        assistant message has ids of Mistral's shape and is a valid SDK
        message; error captures make the SDK raise.
    '''
    expectation = _EXPECTATIONS[ name ]
    processor = produce_processor( 'mistral' )
    content_type = (
        'text/event-stream' if expectation[ 'streaming' ]
        else 'application/json' )
    with replay.ReplayServer( ) as server:
        server.respond(
            expectation[ 'http_status' ], content_type,
            ( _LOCATION / name ).read_bytes( ) )
        client = Mistral( api_key = 'testing', server_url = server.url )
        if expectation[ 'http_status' ] >= 400:
            with pytest.raises( mistral_errors.SDKError ):
                client.chat.complete( model = 'm', messages = _MESSAGES )
            return
        invocations, message = _read( processor, client, name, expectation )
    _check( invocations, expectation[ 'expected' ] )
    mistral_models.AssistantMessage.model_validate( message )
    assert [ call[ 'id' ] for call in message[ 'tool_calls' ] ] == [
        mistral_processors.nativize_identifier( item.identifier )
        for item in invocations ]
    for call in message[ 'tool_calls' ]: assert _shape.fullmatch( call[ 'id' ] )


@pytest.mark.parametrize( 'name', _NAMES )
def test_110_captures_as_plain_data( name ):
    ''' Captures as plain dictionaries (whole) and decoded events
        (streamed) give the same calls; error bodies raise provider
        failure.
    '''
    expectation = _EXPECTATIONS[ name ]
    processor = produce_processor( 'mistral' )
    body = ( _LOCATION / name ).read_bytes( )
    if not expectation[ 'streaming' ]:
        document = json.loads( body )
        if expectation[ 'http_status' ] >= 400:
            with pytest.raises( exceptions.ProviderFailure ) as caught:
                processor.normalize_invocations( document )
            assert 'Invalid API Key' in str( caught.value )
            return
        _check(
            processor.normalize_invocations( document ),
            expectation[ 'expected' ] )
        return
    accumulator = processor.produce_accumulator( )
    invocations = [ ]
    for event in replay.parse_events( body, flush = True ):
        invocations.extend( accumulator.ingest( event.data ) )
    invocations.extend( accumulator.conclude( ) )
    _check( invocations, expectation[ 'expected' ] )


def test_200_identifiers( ):
    ''' Ids of nine letters and digits are kept; others map to that shape,
        deterministically and distinctly.
    '''
    nativize = mistral_processors.nativize_identifier
    assert nativize( 'bAyGEuxg1' ) == 'bAyGEuxg1'
    mapped = [
        nativize( identifier ) for identifier in (
            'chatcmpl-tool-9f149c74c42f265b', 'call_0_0123456789abcdef',
            'call_1_0123456789abcdef', 'short', '' ) ]
    for identifier in mapped: assert _shape.fullmatch( identifier )
    assert len( set( mapped ) ) == len( mapped )
    assert nativize( 'short' ) == nativize( 'short' )


def test_210_arguments_as_object( ):
    ''' Arguments sent as an object (the SDK allows it) are read as they
        are, whole and streamed.
    '''
    processor = produce_processor( 'mistral' )
    call = {
        'id': 'abcDEF123', 'type': 'function',
        'function': { 'name': 'get_weather', 'arguments': { 'city': 'Oslo' } },
    }
    body = { 'choices': [ {
        'index': 0, 'finish_reason': 'tool_calls',
        'message': { 'role': 'assistant', 'content': '',
                     'tool_calls': [ call ] } } ] }
    invocations = processor.normalize_invocations( body )
    assert [ ( item.name, item.arguments ) for item in invocations ] == [
        ( 'get_weather', { 'city': 'Oslo' } ) ]
    accumulator = processor.produce_accumulator( )
    emitted = accumulator.ingest( { 'choices': [ {
        'index': 0, 'finish_reason': 'tool_calls',
        'delta': { 'tool_calls': [ { **call, 'index': 0 } ] } } ] } )
    assert [ item.arguments for item in emitted ] == [ { 'city': 'Oslo' } ]


def test_220_nativize_results( ):
    ''' Results go back as one tool message each, with ids of Mistral's
        shape and the tool's name, valid as the SDK's ``ToolMessage``.
    '''
    processor = produce_processor( 'mistral' )
    results = [
        ResultCanister(
            invocation_id = 'bAyGEuxg1', name = 'get_weather',
            content = ( TextContent( text = 'Sunny.' ), ) ),
        ResultCanister(
            invocation_id = 'call_0_0123456789abcdef', name = 'get_weather',
            content = ( StructureContent( data = { 'a': 1 } ), ) ),
        ResultCanister(
            invocation_id = 'chatcmpl-tool-9f149c74c42f265b',
            name = 'get_weather',
            error = Fault( genus = FaultGenera.Timeout, message = 'Slow.' ) ),
    ]
    messages = processor.nativize_results( results )
    for message in messages:
        mistral_models.ToolMessage.model_validate( message )
        assert _shape.fullmatch( message[ 'tool_call_id' ] )
    assert messages[ 0 ] == {
        'role': 'tool', 'tool_call_id': 'bAyGEuxg1', 'name': 'get_weather',
        'content': 'Sunny.' }
    assert '"a": 1' in messages[ 1 ][ 'content' ]
    assert messages[ 2 ][ 'content' ] == 'Error: Slow.'


def test_230_options_and_shapes( ):
    ''' Unknown options raise configuration invalidity; payloads of other
        providers raise response invalidity naming Mistral.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        produce_processor( 'mistral', strict = True )
    processor = produce_processor( 'mistral' )
    with pytest.raises( exceptions.ResponseInvalidity ) as caught:
        processor.normalize_invocations( { 'output': [ ] } )
    assert caught.value.provider == 'mistral'
    with pytest.raises( exceptions.ProviderFailure ):
        processor.normalize_invocations( {
            'object': 'error', 'message': 'Bad.', 'type': 'invalid' } )


@pytest.mark.asyncio
async def test_400_round_trip( ):
    ''' A call without id (as the 2024 API streamed them) runs, and its
        assistant message and result agree on an id of Mistral's shape; the
        SDK accepts the whole conversation.
    '''
    processor = produce_processor( 'mistral' )
    ensembles = [ invocables.produce_ensemble( 'weather', [ get_weather ] ) ]
    tools = processor.prepare_tools( ensembles )
    for tool in tools: mistral_models.Tool.model_validate( tool )
    capture = ( _LOCATION / 'mistral' / 'no-id-tool-call-stream.sse' )
    accumulator = processor.produce_accumulator( )
    body = capture.read_bytes( ).replace(
        b'WeatherPlugin-GetWeather', b'get_weather' ).replace(
        b'\\"location\\"', b'\\"city\\"' ).replace(
        b', \\"unit\\": \\"celsius\\"', b'' )
    invocations = [ ]
    for event in replay.parse_events( body, flush = True ):
        invocations.extend( accumulator.ingest( event.data ) )
    async with ensembles[ 0 ]:
        results = await processor.execute_invocations(
            invocations, ensembles )
    messages = processor.nativize_results( results )
    assistant = accumulator.produce_message( )
    assert assistant[ 'tool_calls' ][ 0 ][ 'id' ] == messages[ 0 ][
        'tool_call_id' ]
    assert messages[ 0 ][ 'content' ] == 'Sunny in Paris.'
    final = ( _LOCATION / 'mistral' / 'single-tool-call.json' ).read_bytes( )
    with replay.ReplayServer( ) as server:
        server.respond( 200, 'application/json', final )
        client = Mistral( api_key = 'testing', server_url = server.url )
        client.chat.complete(
            model = 'm', tools = tools,
            messages = [ *_MESSAGES, assistant, *messages ] )
        sent = server.requests[ -1 ]
    assert sent[ 'messages' ][ 2 ][ 'tool_call_id' ] == messages[ 0 ][
        'tool_call_id' ]
