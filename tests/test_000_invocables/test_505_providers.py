# SPDX-License-Identifier: Apache-2.0

''' Registry of providers; ids which the library synthesized. '''


import importlib

import pytest

import invocables

from invocables import conversations, dialects, processors, providers
from invocables.processors import produce_processor


_NAMES = tuple( providers.PROVIDERS )
_SHAPED = 'call_1_0123456789abcdef' # the shape of a synthesized id


def _ensemble( ):

    def echo( text: str ) -> str:
        ''' Echoes text. '''
        return text

    return invocables.produce_ensemble(
        'tools', [ invocables.produce_invoker( echo ) ] )


@pytest.mark.parametrize( 'name', _NAMES )
def test_100_rows_resolve( name ):
    ''' Each row names modules which exist and agree on the provider. '''
    row = providers.PROVIDERS[ name ]
    assert row.name == name
    assert row.dialect in dialects.DIALECTS
    processor_module = importlib.import_module(
        f"invocables.processors.{row.processor}" )
    processor = processor_module.produce_processor( )
    assert processor.provider == name
    assert processor.dialect == row.dialect
    assert produce_processor( name ).provider == name
    conversation_module = importlib.import_module(
        f"invocables.conversations.{row.conversation}" )
    conversation_class = getattr( conversation_module, row.conversation_class )
    assert issubclass( conversation_class, conversations.ConversationBase )
    assert conversation_class.provider == name
    assert row.extra in (
        'anthropic', 'openai', 'gemini', 'cohere', 'bedrock', 'mistral' )
    assert row.method
    assert all( key.isupper( ) for key in row.keys )


def test_110_listings_read_registry( ):
    ''' Listings of processors, conversations and command read the rows. '''
    from invocables.cli import converse as _command
    assert set( processors.PROVIDERS ) == set( _NAMES )
    assert set( conversations.PROVIDERS ) == set( _NAMES )
    assert set( _command.KEYS_VARIABLES ) == set( _NAMES )
    assert set( _command.MODELS_DEFAULT ) <= set( _NAMES )


def test_120_unknown_provider( ):
    ''' An unknown name raises, listing the known providers. '''
    with pytest.raises( invocables.exceptions.ProviderNoSupport ) as caught:
        providers.access_provider( 'nobody' )
    for name in _NAMES: assert name in str( caught.value )


def test_200_gemini_keeps_id_of_synthesized_shape( ):
    ''' A Gemini id shaped like a synthesized one is kept and echoed. '''
    processor = produce_processor( 'gemini' )
    message = { 'candidates': [ { 'content': { 'parts': [ {
        'functionCall': {
            'id': _SHAPED, 'name': 'echo', 'args': { 'text': 'a' } } },
    ] } } ] }
    invocation, = processor.normalize_invocations( message )
    assert invocation.identifier == _SHAPED
    assert not invocation.identifier_synthesized
    result = invocables.ResultCanister(
        invocation_id = invocation.identifier, name = 'echo' )
    content, = processor.nativize_results( [ result ] )
    assert content[ 'parts' ][ 0 ][ 'function_response' ][ 'id' ] == _SHAPED


def test_210_ollama_keeps_id_of_synthesized_shape( ):
    ''' An Ollama id shaped like a synthesized one is kept and echoed. '''
    processor = produce_processor( 'ollama' )
    message = { 'message': { 'role': 'assistant', 'tool_calls': [ {
        'id': _SHAPED,
        'function': { 'name': 'echo', 'arguments': { 'text': 'a' } } } ] } }
    invocation, = processor.normalize_invocations( message )
    assert invocation.identifier == _SHAPED
    assert not invocation.identifier_synthesized
    result = invocables.ResultCanister(
        invocation_id = invocation.identifier, name = 'echo' )
    native, = processor.nativize_results( [ result ] )
    assert native[ 'tool_call_id' ] == _SHAPED


@pytest.mark.parametrize( 'name', ( 'gemini', 'ollama' ) )
def test_220_stream_keeps_id_of_synthesized_shape( name ):
    ''' A streamed id shaped like a synthesized one is echoed in the
        assistant message.
    '''
    accumulator = produce_processor( name ).produce_accumulator( )
    if name == 'gemini':
        event = { 'candidates': [ { 'content': { 'parts': [ {
            'functionCall': {
                'id': _SHAPED, 'name': 'echo', 'args': { } } } ] },
            'finishReason': 'STOP' } ] }
    else:
        event = { 'message': { 'role': 'assistant', 'content': '',
            'tool_calls': [ { 'id': _SHAPED, 'function': {
                'name': 'echo', 'arguments': { } } } ] }, 'done': True }
    invocations = [ *accumulator.ingest( event ), *accumulator.conclude( ) ]
    assert [ item.identifier for item in invocations ] == [ _SHAPED ]
    assert _SHAPED in str( accumulator.produce_message( ) )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'name', ( 'gemini', 'ollama' ) )
async def test_230_synthesized_ids_not_sent_back( name ):
    ''' Ids which the library made up are not sent back, and results
        which the processor executes know it.
    '''
    processor = produce_processor( name )
    if name == 'gemini':
        message = { 'candidates': [ { 'content': { 'parts': [ {
            'functionCall': { 'name': 'echo', 'args': { 'text': 'a' } } },
        ] } } ] }
    else:
        message = { 'message': { 'role': 'assistant', 'tool_calls': [ {
            'function': {
                'name': 'echo', 'arguments': { 'text': 'a' } } } ] } }
    invocation, = processor.normalize_invocations( message )
    assert invocation.identifier_synthesized
    async with _ensemble( ) as ensemble:
        result, = await processor.execute_invocations(
            [ invocation ], [ ensemble ] )
    assert result.invocation_id_synthesized
    native = str( processor.nativize_results( [ result ] ) )
    assert invocation.identifier not in native


@pytest.mark.asyncio
@pytest.mark.parametrize( 'count', ( 1, 2 ) )
async def test_240_engine_marks_synthesized_ids( count ):
    ''' Results of the engine itself (not only of a processor) know that
        the id of their invocation was synthesized, alone and in batches,
        so that Gemini does not send a made-up id back.
    '''
    processor = produce_processor( 'gemini' )
    message = { 'candidates': [ { 'content': { 'parts': [
        { 'functionCall': { 'name': 'echo', 'args': { 'text': str( i ) } } }
        for i in range( count ) ] } } ] }
    invocations = processor.normalize_invocations( message )
    assert all( item.identifier_synthesized for item in invocations )
    async with _ensemble( ) as ensemble:
        results = await invocables.execute_invocations(
            invocations, [ ensemble ] )
    assert all( result.invocation_id_synthesized for result in results )
    native = str( processor.nativize_results( results ) )
    assert all( item.identifier not in native for item in invocations )
