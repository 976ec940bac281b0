# SPDX-License-Identifier: Apache-2.0

''' Bedrock Converse processor: real captures through boto3, results. '''


import json

import boto3
import botocore.eventstream
import botocore.exceptions
import botocore.session
import botocore.validate
import pytest

import invocables

from invocables import exceptions
from invocables.canisters import (
    Fault, FaultGenera, ImageContent, ResultCanister, StructureContent,
    TextContent,
)
from invocables.processors import produce_processor

from . import replay


_LOCATION = replay.access_fixtures_location( )
_EXPECTATIONS = json.loads(
    ( _LOCATION / 'expected.json' ).read_text( encoding = 'utf-8' ) )
_NAMES = sorted(
    name for name in _EXPECTATIONS if name.startswith( 'bedrock/' ) )
_PNG = (
    b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01'
    b'\x08\x06\x00\x00\x00\x1f\x15\xc4\x89' )
_MODEL = 'us.amazon.nova-2-lite-v1:0'
_MESSAGES = [ { 'role': 'user', 'content': [ { 'text': 'Hello.' } ] } ]
_service = botocore.session.get_session( ).get_service_model(
    'bedrock-runtime' )


def get_weather( city: str ) -> str:
    ''' Returns weather in city. '''
    return f"Sunny in {city}."


def snapshot( ) -> bytes:
    ''' Returns a picture. '''
    return _PNG


def _produce_client( server ):
    return boto3.client(
        'bedrock-runtime', endpoint_url = server.url,
        region_name = 'us-east-1', aws_access_key_id = 'testing',
        aws_secret_access_key = 'testing' )


def _check( invocations, expected ):
    assert [ ( item.name, item.arguments ) for item in invocations ] == [
        ( call[ 'name' ], call[ 'arguments' ] ) for call in expected ]
    assert [ item.identifier for item in invocations ] == [
        call[ 'id' ] for call in expected ]


def _validate_request( **parameters ):
    ''' Validates Converse parameters against botocore's own model. '''
    shape = _service.operation_model( 'Converse' ).input_shape
    report = botocore.validate.ParamValidator( ).validate(
        { 'modelId': _MODEL, **parameters }, shape )
    assert not report.has_errors( ), report.generate_report( )


def _decode_raw( body ):
    ''' Returns (event type, payload) of each message of a raw event
        stream, decoded by botocore's own parser.
    '''
    buffer = botocore.eventstream.EventStreamBuffer( )
    buffer.add_data( body )
    return [
        ( message.headers[ ':event-type' ],
          json.loads( message.payload ) )
        for message in buffer ]


@pytest.mark.parametrize( 'name', _NAMES )
def test_100_captures_through_boto3( name ):
    ''' Every capture, replayed to boto3's own client (``converse`` or
        ``converse_stream``), gives exactly the expected calls; error
        captures make boto3 raise.
    '''
    expectation = _EXPECTATIONS[ name ]
    processor = produce_processor( 'bedrock' )
    with replay.ReplayServer( ) as server:
        server.respond(
            expectation[ 'http_status' ],
            expectation.get( 'content_type', 'application/json' ),
            ( _LOCATION / name ).read_bytes( ) )
        client = _produce_client( server )
        if expectation[ 'http_status' ] >= 400:
            with pytest.raises( botocore.exceptions.ClientError ):
                client.converse( modelId = _MODEL, messages = _MESSAGES )
            return
        if not expectation[ 'streaming' ]:
            response = client.converse( modelId = _MODEL, messages = _MESSAGES )
            _check(
                processor.normalize_invocations( response ),
                expectation[ 'expected' ] )
            return
        response = client.converse_stream(
            modelId = _MODEL, messages = _MESSAGES )
        accumulator = processor.produce_accumulator( )
        invocations = [ ]
        for event in response[ 'stream' ]:
            invocations.extend( accumulator.ingest( event ) )
        invocations.extend( accumulator.conclude( ) )
    _check( invocations, expectation[ 'expected' ] )
    message = accumulator.produce_message( )
    _validate_request( messages = [ *_MESSAGES, message ] )


@pytest.mark.parametrize( 'name', _NAMES )
def test_110_captures_as_plain_data( name ):
    ''' Whole captures as plain dictionaries, and raw event streams as
        payloads labelled with their event type, give the same calls; error
        bodies raise provider failure.
    '''
    expectation = _EXPECTATIONS[ name ]
    processor = produce_processor( 'bedrock' )
    body = ( _LOCATION / name ).read_bytes( )
    if not expectation[ 'streaming' ]:
        document = json.loads( body )
        if expectation[ 'http_status' ] >= 400:
            with pytest.raises( exceptions.ProviderFailure ):
                processor.normalize_invocations( document )
            return
        _check(
            processor.normalize_invocations( document ),
            expectation[ 'expected' ] )
        message = document[ 'output' ][ 'message' ]
        _check(
            processor.normalize_invocations( message ),
            expectation[ 'expected' ] )
        return
    accumulator = processor.produce_accumulator( )
    invocations = [ ]
    for label, payload in _decode_raw( body ):
        invocations.extend( accumulator.ingest( payload, label ) )
    invocations.extend( accumulator.conclude( ) )
    _check( invocations, expectation[ 'expected' ] )


def test_200_prepare_tools( ):
    ''' Tools go out as ``toolSpec`` with ``inputSchema.json``, which
        botocore's model of Converse accepts.
    '''
    processor = produce_processor( 'bedrock' )
    ensembles = [ invocables.produce_ensemble(
        'weather', [ get_weather, snapshot ] ) ]
    tools = processor.prepare_tools( ensembles )
    assert tools[ 0 ][ 'toolSpec' ][ 'name' ] == 'get_weather'
    assert tools[ 0 ][ 'toolSpec' ][ 'inputSchema' ][ 'json' ][
        'properties' ][ 'city' ] == { 'type': 'string' }
    _validate_request(
        messages = _MESSAGES, toolConfig = { 'tools': tools } )


def test_210_nativize_results( ):
    ''' Results go back as one user message of ``toolResult`` blocks:
        text, JSON, PNG images as bytes, errors with status; botocore's
        model of Converse accepts them after the assistant's calls.
    '''
    processor = produce_processor( 'bedrock' )
    results = [
        ResultCanister(
            invocation_id = 'tooluse_a', name = 'get_weather',
            content = ( TextContent( text = 'Sunny.' ), ) ),
        ResultCanister(
            invocation_id = 'tooluse_b', name = 'snapshot',
            content = (
                ImageContent( data = _PNG, media_type = 'image/png' ),
                StructureContent( data = { 'a': [ 1, 2 ] } ) ) ),
        ResultCanister(
            invocation_id = 'tooluse_c', name = 'get_weather',
            error = Fault( genus = FaultGenera.Timeout, message = 'Slow.' ) ),
        ResultCanister( invocation_id = 'tooluse_d', name = 'snapshot' ),
    ]
    messages = processor.nativize_results( results )
    assert len( messages ) == 1
    blocks = [ block[ 'toolResult' ] for block in messages[ 0 ][ 'content' ] ]
    assert blocks[ 0 ] == {
        'toolUseId': 'tooluse_a', 'content': [ { 'text': 'Sunny.' } ] }
    assert blocks[ 1 ][ 'content' ][ 0 ][ 'image' ][ 'source' ][
        'bytes' ] == _PNG
    assert blocks[ 1 ][ 'content' ][ 1 ] == { 'json': { 'a': [ 1, 2 ] } }
    assert blocks[ 2 ][ 'status' ] == 'error'
    assert blocks[ 3 ][ 'content' ] == [ { 'text': '(no output)' } ]
    calls = {
        'role': 'assistant', 'content': [
            { 'toolUse': {
                'toolUseId': block[ 'toolUseId' ], 'name': 'get_weather',
                'input': { } } } for block in blocks ] }
    _validate_request( messages = [ *_MESSAGES, calls, *messages ] )
    assert processor.nativize_results( [ ] ) == [ ]


def test_300_stream_exception_event( ):
    ''' An exception event of the stream raises provider failure naming
        its type.
    '''
    accumulator = produce_processor( 'bedrock' ).produce_accumulator( )
    with pytest.raises( exceptions.ProviderFailure ) as caught:
        accumulator.ingest( {
            'throttlingException': { 'message': 'Too many requests.' } } )
    assert caught.value.genus == 'ThrottlingException'
    assert 'Too many requests.' in str( caught.value )


def test_310_stream_cut_off( ):
    ''' A call left open by a ``max_tokens`` stop is never emitted: the end
        of the stream reports it interrupted.
    '''
    accumulator = produce_processor( 'bedrock' ).produce_accumulator( )
    events = [
        { 'contentBlockStart': {
            'contentBlockIndex': 0, 'start': { 'toolUse': {
                'toolUseId': 'tooluse_a', 'name': 'get_weather' } } } },
        { 'contentBlockDelta': {
            'contentBlockIndex': 0,
            'delta': { 'toolUse': { 'input': '{"city": "Li' } } } },
        { 'messageStop': { 'stopReason': 'max_tokens' } },
    ]
    for event in events: assert accumulator.ingest( event ) == ( )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'get_weather', )


def test_320_other_shapes_refused( ):
    ''' Payloads of another provider raise response invalidity. '''
    processor = produce_processor( 'bedrock' )
    with pytest.raises( exceptions.ResponseInvalidity ):
        processor.normalize_invocations( { 'choices': [ ] } )
    with pytest.raises( exceptions.ResponseInvalidity ):
        processor.produce_accumulator( ).ingest( { 'choices': [ ] } )


@pytest.mark.asyncio
async def test_400_round_trip( ):
    ''' Prepare, read a reply, execute and nativize, with ids matched; the
        whole conversation goes to boto3's client, which accepts it.
    '''
    processor = produce_processor( 'bedrock' )
    ensembles = [ invocables.produce_ensemble(
        'weather', [ get_weather, snapshot ] ) ]
    tools = processor.prepare_tools( ensembles )
    reply = { 'output': { 'message': { 'role': 'assistant', 'content': [
        { 'text': 'Checking.' },
        { 'toolUse': {
            'toolUseId': 'tooluse_1', 'name': 'get_weather',
            'input': { 'city': 'Lima' } } },
        { 'toolUse': {
            'toolUseId': 'tooluse_2', 'name': 'snapshot', 'input': { } } },
    ] } }, 'stopReason': 'tool_use' }
    invocations = processor.normalize_invocations( reply )
    async with ensembles[ 0 ]:
        results = await processor.execute_invocations(
            invocations, ensembles )
    messages = processor.nativize_results( results )
    blocks = [ block[ 'toolResult' ] for block in messages[ 0 ][ 'content' ] ]
    assert [ block[ 'toolUseId' ] for block in blocks ] == [
        'tooluse_1', 'tooluse_2' ]
    assert blocks[ 0 ][ 'content' ] == [ { 'text': 'Sunny in Lima.' } ]
    assert 'image' in blocks[ 1 ][ 'content' ][ 0 ]
    final = ( _LOCATION / 'bedrock' / 'text-then-tool-use.json' ).read_bytes( )
    with replay.ReplayServer( ) as server:
        server.respond( 200, 'application/json', final )
        client = _produce_client( server )
        client.converse(
            modelId = _MODEL, toolConfig = { 'tools': tools },
            messages = [
                *_MESSAGES, reply[ 'output' ][ 'message' ], *messages ] )
        sent = server.requests[ -1 ]
    assert sent[ 'messages' ][ 2 ][ 'content' ][ 0 ][ 'toolResult' ][
        'toolUseId' ] == 'tooluse_1'
