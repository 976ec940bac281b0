# SPDX-License-Identifier: Apache-2.0

''' Common processor core: decoding, ids, accumulation, dispatch. '''


import copy
import re
import types
import warnings

import pytest

import invocables

from invocables import exceptions
from invocables.processors import AccumulatorBase, PartialInvocation, ProcessorBase, base, produce_processor, _wire as wire


_PROVIDERS = (
    'anthropic', 'cohere', 'gemini', 'ollama', 'openai', 'openai-responses' )
_PROVIDERS_MINE = ( 'anthropic', 'openai', 'openai-responses' )
_ID_SAFE = re.compile( r'^[a-zA-Z0-9_-]{1,64}$' )


class _Accumulator( AccumulatorBase ):
    ''' Accumulator of tuples: ( 'start', index, tag, name ), ... '''

    __slots__ = ( )

    provider = 'test'

    def ingest_event( self, event, label ):
        match event:
            case ( 'start', index, tag, name ):
                return self.commence_call( index, tag, name )
            case ( 'start', index, tag, name, initial ):
                return self.commence_call( index, tag, name, initial = initial )
            case ( 'delta', index, fragment ):
                self.extend_call( index, fragment )
            case ( 'delta', index, fragment, tag ):
                self.extend_call( index, fragment, tag )
            case ( 'stop', index ):
                return self.complete_call( index )
            case ( 'stop', index, tag, arguments ):
                return self.complete_call( index, tag, arguments )
            case 'all':
                return self.complete_calls( )
            case 'boom':
                raise KeyError( 'boom' )
        return ( )


def _ingest_all( accumulator, events ):
    emitted = [ ]
    for event in events: emitted.extend( accumulator.ingest( event ) )
    return emitted


def test_100_decode_text_object( ):
    ''' JSON text of an object is decoded. '''
    arguments, invalidity = wire.decode_arguments( '{"a": [1, {"b": null}]}' )
    assert arguments == { 'a': [ 1, { 'b': None } ] }
    assert invocables.__.is_absent( invalidity )


@pytest.mark.parametrize(
    'value', [ '', '   ', 'null', ' null ', None, invocables.__.absent, '{}' ] )
def test_110_decode_empty( value ):
    ''' Empty text, null, None and absence decode to an empty object. '''
    arguments, invalidity = wire.decode_arguments( value )
    assert arguments == { }
    assert invocables.__.is_absent( invalidity )


def test_120_decode_object_as_is( ):
    ''' An object is taken as it is; other mappings are copied to dicts. '''
    value = { 'x': 1 }
    arguments, _ = wire.decode_arguments( value )
    assert arguments is value
    proxy = types.MappingProxyType( { 'y': 2 } )
    arguments, _ = wire.decode_arguments( proxy )
    assert arguments == { 'y': 2 }
    assert isinstance( arguments, dict )


@pytest.mark.parametrize( 'value, fragment', [
    ( '[1, 2]', 'array' ),
    ( '"text"', 'string' ),
    ( '3', 'number' ),
    ( 'true', 'boolean' ),
    ( [ 1 ], 'array' ),
    ( 7, 'number' ),
    ( '{"a": ', 'not valid JSON' ),
    ( '{"a": 1}{"b": 2}', 'not valid JSON' ),
    ( "{'a': 1}", 'not valid JSON' ),
] )
def test_130_decode_invalid( value, fragment ):
    ''' Non-object JSON or invalid JSON gives an empty object and reason. '''
    arguments, invalidity = wire.decode_arguments( value )
    assert arguments == { }
    assert fragment in invalidity


@pytest.mark.parametrize( 'value, fragment', [
    ( '{"a": NaN}', 'NaN' ),
    ( '{"a": [-Infinity]}', '-Infinity' ),
    ( '{"a": 1e999}', 'beyond the largest float' ),
] )
def test_135_decode_strictly( value, fragment ):
    ''' What JSON has no form for is refused as text calls refuse it: a
        provider would refuse the history which carried such arguments
        back. Whole and streamed alike. A repeated key takes its last
        value, as providers' own decoders take it.
    '''
    arguments, invalidity = wire.decode_arguments( value )
    assert arguments == { }
    assert fragment in invalidity
    openai = produce_processor( 'openai' )
    ( invocation, ) = openai.normalize_invocations( { 'choices': [ {
        'finish_reason': 'tool_calls',
        'message': { 'role': 'assistant', 'tool_calls': [ {
            'id': 'call_1', 'type': 'function',
            'function': { 'name': 'f', 'arguments': value } } ] } } ] } )
    assert fragment in invocation.invalidity
    accumulator = produce_processor( 'anthropic' ).produce_accumulator( )
    ( streamed, ) = [
        invocation for event in (
            { 'type': 'content_block_start', 'index': 0, 'content_block': {
                'type': 'tool_use', 'id': 'toolu_1', 'name': 'f',
                'input': { } } },
            { 'type': 'content_block_delta', 'index': 0, 'delta': {
                'type': 'input_json_delta', 'partial_json': value } },
            { 'type': 'content_block_stop', 'index': 0 } )
        for invocation in accumulator.ingest( event ) ]
    assert fragment in streamed.invalidity
    assert wire.decode_arguments( '{"a": 1, "a": 2}' )[ 0 ] == { 'a': 2 }


def test_140_decode_bytes( ):
    ''' Bytes are decoded as UTF-8 text. '''
    arguments, _ = wire.decode_arguments( b'{"a": "\xc3\xa9"}' )
    assert arguments == { 'a': 'é' }


def test_150_decode_deep( ):
    ''' Deeply nested text gives a reason, not a crash. '''
    arguments, invalidity = wire.decode_arguments(
        '{"a":' + '[' * 100_000 + ']' * 100_000 + '}' )
    assert arguments == { }
    assert isinstance( invalidity, str )


def test_200_synthesize_identifier_stable( ):
    ''' Synthesized ids are stable and provider-safe. '''
    first = wire.synthesize_identifier( 0, 'f', { 'a': 1, 'b': 2 } )
    second = wire.synthesize_identifier( 0, 'f', { 'b': 2, 'a': 1 } )
    assert first == second
    assert _ID_SAFE.match( first )
    assert first == 'call_0_' + first.split( '_' )[ 2 ]


def test_210_synthesize_identifier_distinct( ):
    ''' Position, name and arguments each change the id. '''
    identifiers = {
        wire.synthesize_identifier( 0, 'f', { } ),
        wire.synthesize_identifier( 1, 'f', { } ),
        wire.synthesize_identifier( 0, 'g', { } ),
        wire.synthesize_identifier( 0, 'f', { 'a': 1 } ),
        wire.synthesize_identifier( 0, 'f', 'not json' ),
    }
    assert len( identifiers ) == 5


@pytest.mark.parametrize( 'identifier', [ None, '', 5, invocables.__.absent ] )
def test_220_produce_invocation_synthesizes( identifier ):
    ''' Missing or unusable ids are synthesized. '''
    invocation = wire.produce_invocation( identifier, 'f', '{"a":1}', 3 )
    assert invocation.identifier == wire.synthesize_identifier(
        3, 'f', { 'a': 1 } )
    assert invocation.arguments == { 'a': 1 }


def test_230_produce_invocation_invalid( ):
    ''' Undecodable arguments give a canister with invalidity set. '''
    invocation = wire.produce_invocation( 'c1', 'f', '{"a":', 0 )
    assert invocation.identifier == 'c1'
    assert invocation.arguments == { }
    assert 'not valid JSON' in invocation.invalidity


def test_300_accumulate_fragments( ):
    ''' Fragments are joined and parsed once, at completion. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 5, 't1', 'f' ),
        ( 'delta', 5, '' ), ( 'delta', 5, '{"a"' ), ( 'delta', 5, ': 1}' ),
    ] )
    assert emitted == [ ]
    emitted = accumulator.ingest( ( 'stop', 5 ) )
    assert [ ( i.identifier, i.name, i.arguments ) for i in emitted ] == [
        ( 't1', 'f', { 'a': 1 } ) ]
    assert accumulator.conclude( ) == ( )


def test_310_accumulate_new_tag_same_index( ):
    ''' A new tag at a used index is a new call; the open one completes. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, 't1', 'f' ), ( 'delta', 0, '{"a": 1}' ),
        ( 'start', 0, 't2', 'g' ), ( 'delta', 0, '{"b": 2}' ),
    ] )
    assert [ i.identifier for i in emitted ] == [ 't1' ]
    emitted = accumulator.ingest( ( 'stop', 0 ) )
    assert [ ( i.identifier, i.arguments ) for i in emitted ] == [
        ( 't2', { 'b': 2 } ) ]


def test_320_accumulate_interleaved( ):
    ''' Parallel calls may interleave; each is emitted when complete. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 7, 'a', 'f' ), ( 'start', 3, 'b', 'g' ),
        ( 'delta', 3, '{"y":' ), ( 'delta', 7, '{"x":' ),
        ( 'delta', 7, '1}' ), ( 'delta', 3, '2}' ),
        ( 'stop', 3 ),
    ] )
    assert [ ( i.identifier, i.arguments ) for i in emitted ] == [
        ( 'b', { 'y': 2 } ) ]
    emitted = accumulator.ingest( ( 'stop', 7 ) )
    assert [ ( i.identifier, i.arguments ) for i in emitted ] == [
        ( 'a', { 'x': 1 } ) ]


def test_330_accumulate_conclude_interrupts( ):
    ''' Calls open at conclusion raise an interruption naming the tools. '''
    accumulator = _Accumulator( )
    _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'make_file' ), ( 'delta', 0, '{"lines": [' ),
        ( 'start', 1, 'b', 'other' ),
    ] )
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'make_file', 'other' )
    assert 'make_file' in str( caught.value )
    assert accumulator.conclude( ) == ( )


def test_340_accumulate_reason( ):
    ''' The recorded reason appears in the interruption. '''
    accumulator = _Accumulator( )
    accumulator.ingest( ( 'start', 0, 'a', 'f' ) )
    accumulator.reason = "the response stopped for reason 'max_tokens'."
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert 'max_tokens' in caught.value.reason


def test_350_accumulate_partials( ):
    ''' Partial argument text is offered for display. '''
    accumulator = _Accumulator( )
    _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '{"x": "hel' ),
        ( 'start', 1, None, 'g' ),
    ] )
    assert accumulator.survey_partials( ) == (
        PartialInvocation( identifier = 'a', name = 'f', text = '{"x": "hel' ),
        PartialInvocation(
            identifier = invocables.__.absent, name = 'g', text = '' ),
    )


def test_360_accumulate_never_repairs( ):
    ''' Complete calls with broken JSON carry invalidity, not repairs. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '{"x": 1' ), ( 'stop', 0 ),
    ] )
    assert emitted[ 0 ].arguments == { }
    assert 'not valid JSON' in emitted[ 0 ].invalidity


def test_370_accumulate_completed_tag_ignored( ):
    ''' A completed call is not reopened by a repeated start or stop. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'stop', 0 ),
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '' ), ( 'stop', 0 ),
    ] )
    assert [ i.identifier for i in emitted ] == [ 'a' ]


def test_371_accumulate_fragment_after_completion( ):
    ''' Arguments for a call already emitted raise, rather than vanish. '''
    accumulator = _Accumulator( )
    _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '{"x": 1}' ), ( 'stop', 0 ) ] )
    with pytest.raises( exceptions.ResponseInvalidity ) as caught:
        accumulator.ingest( ( 'delta', 0, ', "y": 2}' ) )
    assert 'after the call was complete' in str( caught.value )


def test_372_accumulate_tagless_restart( ):
    ''' A start without tag at a completed index raises, not duplicates. '''
    accumulator = _Accumulator( )
    _ingest_all( accumulator, [
        ( 'start', 0, None, 'f' ), ( 'delta', 0, '{}' ), ( 'stop', 0 ) ] )
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.ingest( ( 'start', 0, None, 'f' ) )
    emitted = accumulator.ingest( ( 'start', 0, 'b', 'g' ) )
    assert emitted == ( )
    assert accumulator.is_open( 0 )


def test_373_accumulate_object_patches_merged( ):
    ''' Object fragments are merged key by key, never dropped. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '' ),
        ( 'delta', 0, { 'x': 1 } ), ( 'delta', 0, None ),
        ( 'delta', 0, { 'y': [ 2 ] } ), ( 'stop', 0 ) ] )
    assert [ ( i.arguments, i.invalidity ) for i in emitted ] == [
        ( { 'x': 1, 'y': [ 2 ] }, invocables.__.absent ) ]


def test_374_accumulate_mixed_arguments_invalid( ):
    ''' Text and object fragments together make an invalid call. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '{"x": 1}' ),
        ( 'delta', 0, { 'y': 2 } ), ( 'stop', 0 ) ] )
    assert emitted[ 0 ].arguments == { }
    assert 'both as JSON text and as an object' in emitted[ 0 ].invalidity


def test_380_accumulate_tagless( ):
    ''' Without tags, ids are synthesized and a new name is a new call. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, None, 'f' ), ( 'delta', 0, '{}' ),
        ( 'start', 0, None, None ), ( 'start', 0, None, 'f' ),
        ( 'start', 0, None, 'g' ), ( 'delta', 0, '{"k": 1}' ),
        'all',
    ] )
    assert [ i.name for i in emitted ] == [ 'f', 'g' ]
    assert emitted[ 0 ].identifier == wire.synthesize_identifier( 0, 'f', { } )
    assert emitted[ 1 ].identifier == wire.synthesize_identifier(
        1, 'g', { 'k': 1 } )


def test_390_accumulate_initial_and_override( ):
    ''' Initial arguments apply without fragments; given ones replace. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f', { 'x': 1 } ), ( 'delta', 0, '' ),
        ( 'stop', 0 ),
        ( 'start', 1, 'b', 'g' ), ( 'delta', 1, '{"partial' ),
        ( 'stop', 1, 'b', '{"whole": true}' ),
    ] )
    assert [ i.arguments for i in emitted ] == [
        { 'x': 1 }, { 'whole': True } ]


def test_395_accumulate_tag_mismatch( ):
    ''' Fragments and stops naming another tag are ignored. '''
    accumulator = _Accumulator( )
    emitted = _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '{}' ),
        ( 'delta', 0, 'junk', 'z' ), ( 'stop', 0, 'z', '[]' ),
        ( 'stop', 0 ),
    ] )
    assert [ ( i.identifier, i.arguments ) for i in emitted ] == [
        ( 'a', { } ) ]


def test_396_accumulate_foreign_errors( ):
    ''' Foreign exceptions become invalidities; fragments of another JSON
        kind make the call invalid.
    '''
    accumulator = _Accumulator( )
    with pytest.raises( exceptions.ResponseInvalidity ) as caught:
        accumulator.ingest( 'boom' )
    assert isinstance( caught.value.__cause__, KeyError )
    accumulator.ingest( ( 'start', 0, 'a', 'f' ) )
    accumulator.ingest( ( 'delta', 0, 5 ) )
    emitted = accumulator.ingest( ( 'stop', 0 ) )
    assert 'JSON number, not an object' in emitted[ 0 ].invalidity
    with pytest.raises( exceptions.ResponseInvalidity ):
        accumulator.ingest( ( 'start', [ 0 ], 'a', 'f' ) )


def test_397_accumulate_refuses_reuse( ):
    ''' A concluded accumulator refuses events, so that no state leaks. '''
    accumulator = _Accumulator( )
    accumulator.ingest( ( 'start', 0, 'a', 'f' ) )
    accumulator.reason = "the response stopped for reason 'length'."
    with pytest.raises( exceptions.InvocationInterruption ):
        accumulator.conclude( )
    with pytest.raises( exceptions.AccumulatorReuseInvalidity ) as caught:
        accumulator.ingest( ( 'start', 0, 'b', 'g' ) )
    assert 'produce_accumulator' in str( caught.value )
    assert accumulator.conclude( ) == ( )


def test_398_accumulate_survey_invocations( ):
    ''' Emitted calls are kept with their index and arguments as sent. '''
    accumulator = _Accumulator( )
    _ingest_all( accumulator, [
        ( 'start', 4, 'a', 'f' ), ( 'delta', 4, '{"x":' ),
        ( 'delta', 4, ' 1}' ), ( 'stop', 4 ),
        ( 'start', 5, 'b', 'g' ), ( 'delta', 5, { 'y': 2 } ),
    ] )
    emitted = accumulator.ingest( 'all' )
    assert [ i.identifier for i in emitted ] == [ 'b' ]
    assert [ ( e.index, e.arguments, e.invocation.identifier )
             for e in accumulator.survey_invocations( ) ] == [
        ( 4, '{"x": 1}', 'a' ), ( 5, { 'y': 2 }, 'b' ) ]
    with pytest.raises( exceptions.ProviderNoSupport ):
        accumulator.produce_message( )


def test_399_accumulate_truncated_keeps_cut_calls( ):
    ''' Under truncation, only calls with whole arguments complete. '''
    accumulator = _Accumulator( )
    _ingest_all( accumulator, [
        ( 'start', 0, 'a', 'f' ), ( 'delta', 0, '{"x": 1}' ),
        ( 'start', 1, 'b', 'g' ), ( 'delta', 1, '{"y": [' ),
        ( 'start', 2, 'c', 'h' ),
    ] )
    emitted = accumulator.complete_calls( truncated = True )
    assert [ i.identifier for i in emitted ] == [ 'a' ]
    with pytest.raises( exceptions.InvocationInterruption ) as caught:
        accumulator.conclude( )
    assert caught.value.names == ( 'g', 'h' )


@pytest.mark.parametrize( 'provider', _PROVIDERS_MINE )
def test_400_produce_processor( provider ):
    ''' Known providers give processors on the common base. '''
    processor = produce_processor( provider )
    assert isinstance( processor, ProcessorBase )
    assert processor.provider == provider
    assert isinstance( processor.produce_accumulator( ), AccumulatorBase )


def test_410_produce_processor_unknown( ):
    ''' Unknown providers are refused, listing the known ones. '''
    with pytest.raises( exceptions.ProviderNoSupport ) as caught:
        produce_processor( 'nonesuch' )
    for provider in _PROVIDERS: assert provider in str( caught.value )


@pytest.mark.parametrize( 'provider', _PROVIDERS_MINE )
def test_420_produce_processor_options( provider ):
    ''' Unknown options are refused, naming them. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        produce_processor( provider, colour = 'blue' )
    assert 'colour' in str( caught.value )


def test_430_processors_immutable( ):
    ''' Processors refuse assignment. '''
    processor = produce_processor( 'openai', strict = True )
    with pytest.raises( AttributeError ):
        processor.strict = False


def test_500_produce_failure( ):
    ''' Error objects give failures with status, type and message. '''
    failure = wire.produce_failure(
        'p', { 'type': 'invalid_request_error', 'message': 'bad' }, 400 )
    assert ( failure.status, failure.genus, failure.message ) == (
        400, 'invalid_request_error', 'bad' )
    failure = wire.produce_failure( 'p', { 'code': 429, 'message': 'slow' } )
    assert failure.status == 429
    failure = wire.produce_failure( 'p', { 'code': 'quota' } )
    assert failure.genus == 'quota'
    assert 'quota' in failure.message
    failure = wire.produce_failure( 'p', 'model does not support tools' )
    assert failure.message == 'model does not support tools'
    assert invocables.__.is_absent( failure.status )
    failure = wire.produce_failure( 'p', [ 1 ] )
    assert failure.message == '[1]'


def test_600_access_field( ):
    ''' Fields are read from dicts, mappings and objects alike. '''
    assert wire.access_field( { 'a': 1 }, 'a' ) == 1
    assert wire.access_field( types.MappingProxyType( { 'a': 1 } ), 'a' ) == 1
    assert wire.access_field( types.SimpleNamespace( a = 1 ), 'a' ) == 1
    assert wire.access_field( [ 1 ], 'a' ) is None
    assert wire.access_field( 'text', 'upper', 0 ) == 0
    assert wire.access_field( None, 'a' ) is None


def test_610_access_items_and_text( ):
    ''' Arrays and strings are checked; other shapes are invalid. '''
    assert wire.access_items( None, 'p', 'x' ) == ( )
    assert wire.access_items( 'text', 'p', 'x' ) == ( )
    assert wire.access_items( [ 1 ], 'p', 'x' ) == [ 1 ]
    with pytest.raises( exceptions.ResponseInvalidity ):
        wire.access_items( { }, 'p', 'x' )
    assert wire.access_text( None, 'p', 'x' ) == ''
    with pytest.raises( exceptions.ResponseInvalidity ):
        wire.access_text( 1, 'p', 'x' )


def test_620_access_index( ):
    ''' Indexes must be integers (not booleans), or the event is invalid.
    '''
    assert wire.access_index( { 'index': 3 }, 'p', 'event' ) == 3
    assert wire.access_index(
        { 'output_index': 0 }, 'p', 'event', 'output_index' ) == 0
    for event in ( { }, { 'index': None }, { 'index': True },
                   { 'index': '1' } ):
        with pytest.raises( exceptions.ResponseInvalidity ) as caught:
            wire.access_index( event, 'p', 'the event' )
        assert "the event has no integer 'index'" in str( caught.value )


def test_630_validate_shape( ):
    ''' Payloads without any expected field raise, naming what they have.
    '''
    payload = { 'b': 1 }
    assert wire.validate_shape( 'p', payload, ( 'a', 'b' ), 'x' ) is payload
    assert wire.validate_shape(
        'p', types.SimpleNamespace( a = None ), ( 'a', ), 'x' ) is not None
    with pytest.raises( exceptions.ResponseInvalidity ) as caught:
        wire.validate_shape(
            'p', { 'choices': [ ] }, ( 'content', ), 'a message' )
    assert 'expected a message' in str( caught.value )
    assert 'got fields choices' in str( caught.value )
    for value in ( { }, [ ], types.SimpleNamespace( ) ):
        with pytest.raises( exceptions.ResponseInvalidity ):
            wire.validate_shape( 'p', value, ( 'content', ), 'a message' )


@pytest.mark.parametrize( 'value, whole', [
    ( '{"a": 1}', True ), ( '[1]', True ), ( '3', True ), ( 'null', True ),
    ( '{"a": ', False ), ( '', False ), ( '  ', False ), ( None, False ),
    ( { 'a': 1 }, True ), ( [ 1 ], True ), ( b'{}', True ),
    ( '[' * 100_000, False ),
] )
def test_640_is_complete_arguments( value, whole ):
    ''' Arguments are whole when their text parses, or they are objects. '''
    assert wire.is_complete_arguments( value ) is whole


def test_650_validate_whole_calls( ):
    ''' Only calls whose arguments were cut off are named. '''
    wire.validate_whole_calls( 'p', [ ( 'f', '{}' ), ( 'g', { } ) ], 'x' )
    with pytest.raises( exceptions.InvocationTruncation ) as caught:
        wire.validate_whole_calls(
            'p', [ ( 'f', '{}' ), ( 'g', '{"a' ), ( 'h', '' ) ], 'length' )
    assert caught.value.names == ( 'g', 'h' )
    assert isinstance( caught.value, exceptions.InvocationInterruption )
    assert "stopped for reason 'length'" in str( caught.value )


def test_660_render_arguments( ):
    ''' Arguments go back as sent: text kept, objects encoded. '''
    assert wire.render_arguments( '{"b": 1, "a": 2}' ) == '{"b": 1, "a": 2}'
    assert wire.render_arguments( { 'é': [ 1 ] } ) == '{"é": [1]}'
    for value in ( None, '', ' ' ):
        assert wire.render_arguments( value ) == '{}'


def test_670_nativize_object( ):
    ''' SDK objects become plain values; mappings and lists are copied. '''
    import anthropic.types
    block = anthropic.types.TextBlock( type = 'text', text = 'hi' )
    assert wire.nativize_object( block ) == { 'type': 'text', 'text': 'hi' }
    mapping = { 'a': [ 1 ] }
    copied = wire.nativize_object( mapping )
    assert copied == mapping and copied is not mapping
    assert wire.nativize_object( ( 1, 2 ) ) == [ 1, 2 ]
    assert wire.nativize_object( 'text' ) == 'text'


def test_700_adapt_schema_plain( ):
    ''' Without dialect, schemas pass as plain copies. '''
    schema = invocables.__.immut.Dictionary(
        type = 'object', properties = ( ) )
    adapted = base.adapt_schema( 'p', 't', schema, '' )
    assert adapted == { 'type': 'object', 'properties': [ ] }
    assert isinstance( adapted, dict )


def test_710_adapt_schema_refused( ):
    ''' A schema the dialect refuses leaves that tool out, with warning. '''
    schema = {
        'type': 'object', 'properties': { 'a': { 'type': 'string' } },
        'anyOf': [ { 'required': [ 'a' ] }, { 'type': 'string' } ] }
    with pytest.warns( exceptions.ToolExclusionWarning ):
        assert base.adapt_schema( 'p', 't', schema, 'anthropic' ) is None


def test_720_validate_options( ):
    ''' Known options pass; unknown ones are named with the known. '''
    wire.validate_options( 'p', { 'strict': True }, ( 'strict', ) )
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        wire.validate_options( 'p', { 'x': 1 }, ( ) )
    assert 'none' in str( caught.value )


def test_800_import_light( ):
    ''' Importing processors imports no provider SDK. '''
    import subprocess
    import sys
    code = (
        'import sys, invocables.processors; '
        'print( [ m for m in ( "anthropic", "openai", "google.genai", '
        '"cohere" ) if m in sys.modules ] )' )
    output = subprocess.run(
        [ sys.executable, '-c', code ], capture_output = True, text = True,
        check = True ).stdout
    assert output.strip( ) == '[]'


def test_810_prepare_tools_quiet( ):
    ''' Processors warn about nothing on good schemas. '''
    def echo( text: str ) -> str:
        ''' Echoes text. '''
        return text
    ensemble = invocables.produce_ensemble( 'e', [ echo ] )
    with warnings.catch_warnings( ):
        warnings.simplefilter( 'error' )
        for provider in _PROVIDERS_MINE:
            tools = produce_processor( provider ).prepare_tools( [ ensemble ] )
            assert len( tools ) == 1


def test_820_prepare_tools_remembered( ):
    ''' Repeated preparation reuses adapted schemas in fresh containers.

        Containers may be changed by the caller without effect on later
        calls; the schemas inside are shared between calls.
    '''
    def echo( text: str ) -> str:
        ''' Echoes text. '''
        return text
    ensemble = invocables.produce_ensemble( 'e', [ echo ] )
    processor = produce_processor( 'anthropic' )
    first = processor.prepare_tools( [ ensemble ] )
    first[ 0 ][ 'cache_control' ] = { 'type': 'ephemeral' }
    first.append( { 'name': 'other' } )
    second = produce_processor( 'anthropic' ).prepare_tools( [ ensemble ] )
    assert len( second ) == 1
    assert 'cache_control' not in second[ 0 ]
    assert second[ 0 ] is not first[ 0 ]
    assert second[ 0 ][ 'input_schema' ] is first[ 0 ][ 'input_schema' ]
    assert second[ 0 ][ 'input_schema' ][ 'properties' ] == {
        'text': { 'type': 'string' } }


class _ChangingEnsemble( invocables.ensembles.EnsembleBase ):
    ''' Local ensemble whose tools change, as an MCP server's may. '''

    def __init__( self, name, invokers ):
        self.name = name
        self.configuration = invocables.EnsembleConfiguration( )
        self._invokerses = [ tuple( invokers ) ]

    def replace_invokers( self, invokers ):
        ''' Replaces the tools, as a tools/list_changed would. '''
        self._invokerses.append( tuple( invokers ) )

    def access_invoker( self, name ):
        ''' Returns invoker by name. '''
        return { item.name: item for item in self.survey_invokers( ) }[ name ]

    def survey_invokers( self ):
        ''' Returns current invokers. '''
        return self._invokerses[ -1 ]


def _produce_invoker( name, schema = None ):
    return invocables.FunctionInvoker(
        name = name, invocable = lambda context, arguments: name,
        description = f"Tool {name}.",
        arguments_schema = schema or {
            'type': 'object',
            'properties': { 'text': { 'type': 'string' } } } )


def test_830_prepare_tools_follows_tool_changes( ):
    ''' A change of an ensemble's tools shows in the next preparation;
        the schemas of the tools which stayed are reused, not re-adapted;
        a plain root is the copy made with its tool, offered by every
        processor which takes it as it is.
    '''
    kept = _produce_invoker( 'kept', {
        'type': 'object', '$defs': { 'text': { 'type': 'string' } },
        'properties': { 'text': { '$ref': '#/$defs/text' } } } )
    plain = _produce_invoker( 'plain' )
    ensemble = _ChangingEnsemble(
        'e', [ kept, plain, _produce_invoker( 'gone' ) ] )
    for provider in _PROVIDERS:
        first = produce_processor( provider ).prepare_tools( [ ensemble ] )
        assert first == produce_processor( provider ).prepare_tools(
            [ ensemble ] )
    first = produce_processor( 'anthropic' ).prepare_tools( [ ensemble ] )
    assert [ tool[ 'name' ] for tool in first ] == [ 'kept', 'plain', 'gone' ]
    ensemble.replace_invokers( [ kept, plain, _produce_invoker( 'new' ) ] )
    second = produce_processor( 'anthropic' ).prepare_tools( [ ensemble ] )
    assert [ tool[ 'name' ] for tool in second ] == [ 'kept', 'plain', 'new' ]
    assert second[ 0 ][ 'input_schema' ] is first[ 0 ][ 'input_schema' ]
    assert second[ 1 ][ 'input_schema' ] is first[ 1 ][ 'input_schema' ]
    assert second[ 1 ][ 'input_schema' ] is not plain.arguments_schema
    plains = _ChangingEnsemble( 'p', [ plain, _produce_invoker( 'gone' ) ] )
    first = produce_processor( 'anthropic' ).prepare_tools( [ plains ] )
    plains.replace_invokers( [ plain, _produce_invoker( 'new' ) ] )
    second = produce_processor( 'anthropic' ).prepare_tools( [ plains ] )
    assert [ tool[ 'name' ] for tool in second ] == [ 'plain', 'new' ]
    assert second[ 0 ][ 'input_schema' ] is first[ 0 ][ 'input_schema' ]
    schema = plain.arguments_schema
    assert second[ 0 ][ 'input_schema' ] is not schema
    assert second[ 0 ][ 'input_schema' ][ 'properties' ] is (
        schema[ 'properties' ] )
    offered = produce_processor( 'openai' ).prepare_tools( [ plains ] )
    assert offered[ 0 ][ 'function' ][ 'parameters' ] is (
        first[ 0 ][ 'input_schema' ] )
    assert first[ 0 ][ 'input_schema' ] is plain.validator.root
    ensemble.replace_invokers( [ ] )
    assert produce_processor( 'anthropic' ).prepare_tools( [ ensemble ] ) == [ ]
    assert produce_processor( 'gemini' ).prepare_tools( [ ensemble ] ) == [ ]


def test_840_prepare_tools_warns_at_every_call( ):
    ''' A tool left out (or offered without strict mode) is warned about at
        every preparation: such a list is never remembered.
    '''
    free = _produce_invoker(
        'free', { 'type': 'object', 'additionalProperties': True } )
    loose = _produce_invoker( 'loose', {
        'type': 'object', 'patternProperties': {
            '^x': { 'type': 'string' } } } )
    ensemble = _ChangingEnsemble( 'e', [ _produce_invoker( 'good' ), free ] )
    for _ in range( 2 ):
        with pytest.warns( exceptions.ToolExclusionWarning ):
            tools = produce_processor( 'gemini' ).prepare_tools( [ ensemble ] )
        names = [
            item[ 'name' ] for item in tools[ 0 ][ 'function_declarations' ] ]
        assert names == [ 'good' ]
    ensemble = _ChangingEnsemble( 'f', [ _produce_invoker( 'good' ), loose ] )
    for _ in range( 2 ):
        with pytest.warns( exceptions.ToolStrictnessWarning ):
            tools = produce_processor( 'openai', strict = True ).prepare_tools(
                [ ensemble ] )
        assert [ tool[ 'function' ].get( 'strict', False ) for tool in tools ] \
            == [ True, False ]


def test_850_prepare_tools_per_options( ):
    ''' Processors with different options on the same ensembles each get
        their own form; names and contents are stable across calls, and the
        containers are fresh at every call.
    '''
    ensemble = _ChangingEnsemble(
        'e', [ _produce_invoker( 'one' ), _produce_invoker( '2two' ) ] )
    loose = produce_processor( 'openai' ).prepare_tools( [ ensemble ] )
    strict = produce_processor( 'openai', strict = True ).prepare_tools(
        [ ensemble ] )
    assert [ tool[ 'function' ][ 'name' ] for tool in strict ] == [
        'one', '_2two' ]
    assert all( tool[ 'function' ][ 'strict' ] for tool in strict )
    assert not any( 'strict' in tool[ 'function' ] for tool in loose )
    assert strict[ 0 ][ 'function' ][ 'parameters' ][ 'required' ] == [
        'text' ]
    again = produce_processor( 'openai' ).prepare_tools( [ ensemble ] )
    assert again == loose
    assert again[ 0 ] is not loose[ 0 ]
    assert again[ 0 ][ 'function' ] is not loose[ 0 ][ 'function' ]
    plain = produce_processor( 'gemini' ).prepare_tools( [ ensemble ] )
    schemas = produce_processor( 'gemini', json_schema = True ).prepare_tools(
        [ ensemble ] )
    assert 'parameters' in plain[ 0 ][ 'function_declarations' ][ 0 ]
    assert 'parameters_json_schema' in (
        schemas[ 0 ][ 'function_declarations' ][ 0 ] )


def _mutate_containers( tools ):
    ''' Changes every container of a tool list above the schemas. '''
    for tool in tools:
        for key, value in list( tool.items( ) ):
            if isinstance( value, dict ) and 'name' in value:
                value[ 'name' ] = 'changed'
                value.pop( 'description', None )
            if isinstance( value, list ):
                for item in value: item[ 'name' ] = 'changed'
                value.append( { 'name': 'added' } )
            if key in ( 'name', 'description' ): tool[ key ] = 'changed'
        tool[ 'cache_control' ] = { 'type': 'ephemeral' }
    tools.append( { 'name': 'added' } )


def test_860_first_list_changed_leaves_later_ones( ):
    ''' Changing the containers of a first tool list (the list, each tool,
        its function or declarations) changes no later list, for every
        provider, with and without options.
    '''
    for provider, options in (
        *( ( provider, { } ) for provider in _PROVIDERS ),
        ( 'openai', { 'strict': True } ), ( 'gemini', { 'json_schema': True } ),
    ):
        ensemble = _ChangingEnsemble(
            'e', [ _produce_invoker( 'one' ), _produce_invoker( 'two' ) ] )
        first = produce_processor( provider, **options ).prepare_tools(
            [ ensemble ] )
        expected = copy.deepcopy( first )
        _mutate_containers( first )
        second = produce_processor( provider, **options ).prepare_tools(
            [ ensemble ] )
        assert second == expected, provider
        _mutate_containers( second )
        third = produce_processor( provider, **options ).prepare_tools(
            [ ensemble ] )
        assert third == expected, provider


def test_870_subclass_hooks_honoured( ):
    ''' A processor subclass which produces each tool, or adapts each
        tool, its own way still has its hook called for every tool.
    '''
    from invocables.processors import anthropic, gemini, ollama, openai

    class Tagged( anthropic.AnthropicProcessor ):
        def produce_tool( self, name, description, schema ):
            tool = super( ).produce_tool( name, description, schema )
            tool[ 'cache_control' ] = { 'type': 'ephemeral' }
            return tool

    class Described( openai.OpenaiProcessor ):
        def adapt_tool( self, name, description, schema ):
            return super( ).adapt_tool( name, 'Adapted.', schema )

    class Named( ollama.OllamaProcessor ):
        def produce_tool( self, name, description, schema ):
            return super( ).produce_tool( f"x_{name}", description, schema )

    class Declared( gemini.GeminiProcessor ):
        def adapt_tool( self, name, description, schema ):
            return super( ).adapt_tool( name, 'Adapted.', schema )

    ensemble = _ChangingEnsemble(
        'e', [ _produce_invoker( 'one' ), _produce_invoker( 'two' ) ] )
    tagged = Tagged( ).prepare_tools( [ ensemble ] )
    assert all( 'cache_control' in tool for tool in tagged )
    described = Described( ).prepare_tools( [ ensemble ] )
    assert all(
        tool[ 'function' ][ 'description' ] == 'Adapted.'
        for tool in described )
    named = Named( ).prepare_tools( [ ensemble ] )
    assert [ tool[ 'function' ][ 'name' ] for tool in named ] == [
        'x_one', 'x_two' ]
    declared = Declared( ).prepare_tools( [ ensemble ] )
    assert all(
        item[ 'description' ] == 'Adapted.'
        for item in declared[ 0 ][ 'function_declarations' ] )


_SCHEMAS_VARIED = (
    None,
    { 'type': 'object', 'properties': {
        'when': { 'type': 'string', 'format': 'date-time' },
        'count': { 'type': 'integer', 'minimum': 0 } },
      'required': [ 'count' ] },
    { 'type': 'object', 'properties': { 'a': { 'type': 'string' } },
      'anyOf': [ { 'required': [ 'a' ] }, { 'type': 'string' } ] },
    { 'type': 'object', 'properties': {
        'item': { '$ref': '#/$defs/item' } },
      '$defs': { 'item': { 'type': 'object', 'properties': {
          'name': { 'type': 'string' } } } } },
    { 'type': 'object', 'additionalProperties': False },
)


@pytest.mark.parametrize( 'options', [
    ( 'anthropic', { } ), ( 'cohere', { } ), ( 'gemini', { } ),
    ( 'ollama', { } ), ( 'openai', { } ), ( 'openai', { 'strict': True } ),
    ( 'openai-responses', { } ),
    ( 'openai-responses', { 'strict': True } ),
] )
def test_880_one_pass_equals_per_tool( options ):
    ''' A processor's list made in one pass equals the list which its
        per-tool hooks make (a subclass which overrides them alone), with
        the same tools refused and the same warnings, in order; a repeated
        list is equal too.
    '''
    provider, settings = options
    model = type( produce_processor( provider ) )

    class PerTool( model ):
        def adapt_tool( self, name, description, schema ):
            return super( ).adapt_tool( name, description, schema )

        def produce_tool( self, *arguments ):
            return super( ).produce_tool( *arguments )

    def prepare( processor ):
        # Fresh invokers: no adaptation remembered from the other list.
        ensemble = _ChangingEnsemble( 'e', [
            _produce_invoker( f"tool{index}", schema )
            for index, schema in enumerate( _SCHEMAS_VARIED ) ] )
        with warnings.catch_warnings( record = True ) as caught:
            warnings.simplefilter( 'always' )
            first = processor.prepare_tools( [ ensemble ] )
            second = processor.prepare_tools( [ ensemble ] )
        return first, second, [ str( item.message ) for item in caught ]

    one_pass = prepare( model( **settings ) )
    per_tool = prepare( PerTool( **settings ) )
    assert one_pass == per_tool
    assert one_pass[ 0 ] == one_pass[ 1 ]


@pytest.mark.parametrize( 'provider', [ 'openai', 'openai-responses' ] )
def test_885_strict_without_tools( provider ):
    ''' Strict mode gives an empty list for ensembles without tools. '''
    processor = produce_processor( provider, strict = True )
    assert processor.prepare_tools( [ _ChangingEnsemble( 'e', [ ] ) ] ) == [ ]
