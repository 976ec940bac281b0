# SPDX-License-Identifier: Apache-2.0

''' Canisters and normalization of tool results into content. '''


import dataclasses

import pytest

import invocables

from invocables import canisters


_png = b'\x89PNG\r\n\x1a\n' + b'\x00' * 16


def test_200_invocation_fields( ):
    ''' Invocation canister carries identifier, name, arguments, timestamp. '''
    canister = invocables.InvocationCanister(
        identifier = 'c1', name = 'add', arguments = { 'a': 1 } )
    assert canister.identifier == 'c1'
    assert canister.arguments == { 'a': 1 }
    assert canister.timestamp.tzinfo is not None
    assert invocables.__.is_absent( canister.invalidity )


def test_210_canisters_frozen( ):
    ''' Canisters refuse assignment. '''
    canister = invocables.ResultCanister( invocation_id = 'c1' )
    with pytest.raises( dataclasses.FrozenInstanceError ):
        canister.invocation_id = 'c2'  # type: ignore[misc]


def test_300_text( ):
    ''' Strings become text content. '''
    assert canisters.produce_content( 'hi' ) == (
        invocables.TextContent( text = 'hi' ), )


def test_310_none( ):
    ''' None becomes no content. '''
    assert canisters.produce_content( None ) == ( )


def test_320_structure( ):
    ''' JSON values become structured content. '''
    content = canisters.produce_content( { 'a': [ 1, 2 ] } )
    assert content == ( invocables.StructureContent( data = { 'a': [ 1, 2 ] } ), )
    assert canisters.produce_content( 3 ) == (
        invocables.StructureContent( data = 3 ), )


def test_330_image_bytes( ):
    ''' Bytes with an image signature become image content. '''
    content = canisters.produce_content( _png )
    assert content == (
        invocables.ImageContent( data = _png, media_type = 'image/png' ), )
    jpeg = canisters.produce_content( b'\xff\xd8\xff\xe0' + b'\x00' * 8 )
    assert jpeg[ 0 ].media_type == 'image/jpeg'  # type: ignore[union-attr]
    webp = canisters.produce_content( b'RIFF\x00\x00\x00\x00WEBPVP8 ' )
    assert webp[ 0 ].media_type == 'image/webp'  # type: ignore[union-attr]


def test_340_other_bytes( ):
    ''' Other bytes become text, decoded leniently. '''
    assert canisters.produce_content( b'caf\xc3\xa9' ) == (
        invocables.TextContent( text = 'café' ), )


def test_350_content_sequences( ):
    ''' Sequences of content pass through; other sequences are data. '''
    items = [
        invocables.TextContent( text = 'a' ),
        invocables.ImageContent( data = _png, media_type = 'image/png' ) ]
    assert canisters.produce_content( items ) == tuple( items )
    assert canisters.produce_content( [ 1, 'a' ] ) == (
        invocables.StructureContent( data = [ 1, 'a' ] ), )


def test_360_models_and_dataclasses( ):
    ''' Pydantic models and dataclasses become structured content. '''
    import pydantic

    class Point( pydantic.BaseModel ):
        x: int
        y: int

    @dataclasses.dataclass
    class Pair:
        a: int
        b: str

    assert canisters.produce_content( Point( x = 1, y = 2 ) ) == (
        invocables.StructureContent( data = { 'x': 1, 'y': 2 } ), )
    assert canisters.produce_content( Pair( a = 1, b = 'z' ) ) == (
        invocables.StructureContent( data = { 'a': 1, 'b': 'z' } ), )


def test_400_as_text( ):
    ''' Text rendering joins content, with stand-ins for binary data. '''
    result = invocables.ResultCanister(
        invocation_id = 'c1',
        content = (
            invocables.TextContent( text = 'Here:' ),
            invocables.ImageContent( data = _png, media_type = 'image/png' ),
            invocables.StructureContent( data = { 'k': 'v' } ),
            invocables.ResourceContent( uri = 'file:///a', text = 'body' ),
            invocables.ResourceContent( uri = 'file:///b', data = b'\x00' ),
            invocables.ResourceLinkContent( uri = 'demo://x' ),
            invocables.AudioContent( data = b'abc', media_type = 'audio/wav' ),
        ) )
    text = result.as_text( )
    assert text.splitlines( ) == [
        'Here:',
        '[image: image/png, 24 bytes, not shown]',
        '{"k": "v"}',
        'body',
        '[resource file:///b: binary, not shown]',
        '[resource link: demo://x]',
        '[audio: audio/wav, 3 bytes, not shown]' ]
    assert not result.is_error( )


def test_410_error_text( ):
    ''' Error results render their message first. '''
    result = invocables.ResultCanister(
        invocation_id = 'c1',
        error = invocables.Fault(
            genus = invocables.FaultGenera.Timeout, message = 'Too slow.' ) )
    assert result.is_error( )
    assert result.as_text( ) == 'Error: Too slow.'


def test_220_results_and_contexts_made_quickly_equal_constructed( ):
    ''' The engine's quick makers give what the constructors give: every
        field, frozen, the same class; the timestamp is now and aware.
    '''
    from datetime import datetime, timezone
    from invocables import invokers
    content = ( canisters.TextContent( text = 'sunny' ), )
    before = datetime.now( timezone.utc )
    quick = canisters.produce_result( 'c1', content, 'forecast' )
    made = canisters.ResultCanister(
        invocation_id = 'c1', content = content, name = 'forecast',
        timestamp = quick.timestamp )
    assert type( quick ) is canisters.ResultCanister
    assert quick == made
    assert before <= quick.timestamp <= datetime.now( timezone.utc )
    assert not quick.is_error( )
    assert quick.as_text( ) == 'sunny'
    with pytest.raises( dataclasses.FrozenInstanceError ):
        quick.name = 'other' # type: ignore[misc]
    invoker = invocables.produce_invoker( lambda: None, name = 'nothing' )
    invocation = canisters.InvocationCanister(
        identifier = 'c1', name = 'nothing', arguments = { } )
    namespace: dict[ str, object ] = { }
    for auxdata in ( None, { 'user': 'ada' } ):
        quick_context = invokers.produce_context(
            auxdata, invoker, namespace, invocation, 12.5 )
        made_context = invokers.InvocationContext(
            auxdata = auxdata, invoker = invoker, namespace = namespace,
            invocation = invocation, deadline = 12.5 )
        assert type( quick_context ) is invokers.InvocationContext
        assert quick_context == made_context
        assert quick_context.auxdata == made_context.auxdata
