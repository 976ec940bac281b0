# SPDX-License-Identifier: Apache-2.0

''' What goes out is sendable: one normaliser makes every text of every
    result valid Unicode, whatever the tool, so that each provider's SDK
    encodes it as UTF-8; names in listings are escaped on one line.
'''


import json

import pytest

import invocables

from invocables import FailurePolicies, canisters, exceptions
from invocables.processors import produce_processor

from . import replay


_PROVIDERS = (
    'anthropic', 'bedrock', 'cohere', 'gemini', 'mistral', 'ollama',
    'openai', 'openai-responses' )
_SURROGATE = 'bad\udcff.txt' # what os.fsdecode makes of b'bad\xff.txt'


def _assert_sendable( value ):
    ''' Every text in value encodes as UTF-8, as the SDKs encode it. '''
    json.dumps( value, ensure_ascii = False ).encode( 'utf-8' )


def _produce_ensemble( *functions ):
    return invocables.produce_ensemble( 'novel', [
        invocables.produce_invoker( function ) for function in functions ] )


async def _invoke( ensembles, name, **options ):
    invocation = invocables.InvocationCanister(
        identifier = 'call', name = name, arguments = { } )
    results = await invocables.execute_invocations(
        [ invocation ], ensembles, **options )
    return results[ 0 ]


def test_100_normalize_text( ):
    ''' Valid text is returned as it is; lone surrogates become escapes
        (a byte of surrogateescape as \\xff), pairs their character.
    '''
    for text in ( 'plain', 'caf\u00e9 \u65e5\u672c \U0001f600', 'a\nb\x00' ):
        assert canisters.normalize_text( text ) is text
    assert canisters.normalize_text( _SURROGATE ) == 'bad\\xff.txt'
    assert canisters.normalize_text( '\ud83d\ude00' ) == '\U0001f600'
    assert canisters.normalize_text( 'x\ud800y\udc00' ) == (
        'x\\ud800y\\udc00' )
    for text in ( _SURROGATE, '\ud800', '\udfff\ud800' ):
        canisters.normalize_text( text ).encode( 'utf-8' )


def test_110_render_name( ):
    ''' Names are returned as they are, unless they hold what could forge
        lines or is not Unicode: then each such character is escaped, and
        a backslash doubled, so that no two names look alike.
    '''
    for name in ( 'note.txt', 'caf\u00e9 (1).md', '\u65e5\u672c' ):
        assert canisters.render_name( name ) is name
    cases = {
        'evil\nforged (3 bytes)': 'evil\\nforged (3 bytes)',
        'a\rb\tc': 'a\\rb\\tc',
        'back\\slash': 'back\\\\slash',
        '\x1b[31mred': '\\x1b[31mred',
        'del\x7f': 'del\\x7f',
        'nel\x85': 'nel\\u0085',
        'line\u2028para\u2029': 'line\\u2028para\\u2029',
        'txt.\u202eexe': 'txt.\\u202eexe',
        _SURROGATE: 'bad\\xff.txt',
        'nul\x00': 'nul\\x00',
    }
    for name, rendered in cases.items( ):
        assert canisters.render_name( name ) == rendered
        assert len( rendered.splitlines( ) ) == 1
        rendered.encode( 'utf-8' )


@pytest.mark.asyncio
async def test_200_new_local_tool_gets_sendable_results( ):
    ''' A brand-new local tool, with no code of its own for it, returning
        lone surrogates in text, in keys and values of structured data, in
        nested lists, or in a content canister's fields, gets a result
        which every text of encodes as UTF-8.
    '''
    def text( ) -> str:
        ''' Returns a name which is not UTF-8. '''
        return f"found {_SURROGATE}\nnext line"

    def keyed( ) -> dict[ str, object ]:
        ''' Returns structured data with such names. '''
        return { _SURROGATE: [ _SURROGATE, { 'k': _SURROGATE } ], 'n': 1 }

    def canister( ) -> list[ object ]:
        ''' Returns content canisters with such names. '''
        return [
            canisters.TextContent( text = _SURROGATE ),
            canisters.ResourceLinkContent(
                uri = f"file:///{_SURROGATE}", name = _SURROGATE ),
            canisters.ResourceContent(
                uri = 'file:///x', text = _SURROGATE ) ]

    ensembles = [ _produce_ensemble( text, keyed, canister ) ]
    result = await _invoke( ensembles, 'text' )
    assert result.as_text( ) == 'found bad\\xff.txt\nnext line'
    result = await _invoke( ensembles, 'keyed' )
    assert result.content[ 0 ].data == {
        'bad\\xff.txt': [ 'bad\\xff.txt', { 'k': 'bad\\xff.txt' } ], 'n': 1 }
    _assert_sendable( result.content[ 0 ].data )
    result = await _invoke( ensembles, 'canister' )
    for item in result.content:
        for name in ( 'text', 'uri', 'name' ):
            value = getattr( item, name, None )
            if isinstance( value, str ): value.encode( 'utf-8' )
    assert result.content[ 1 ].name == 'bad\\xff.txt'
    result.as_text( ).encode( 'utf-8' )


@pytest.mark.asyncio
async def test_210_error_messages_sendable( ):
    ''' Error results are sendable too: a refusal's message, a failure
        reported to the model, a name from the model which is not Unicode.
    '''
    def refuse( ) -> str:
        ''' Refuses, naming a file which is not UTF-8. '''
        raise exceptions.InvocationRefusal( f"No file {_SURROGATE} here." )

    def fail( ) -> str:
        ''' Fails, naming a file which is not UTF-8. '''
        raise ValueError( _SURROGATE )

    ensembles = [ _produce_ensemble( refuse, fail ) ]
    result = await _invoke( ensembles, 'refuse' )
    assert result.error.message == 'No file bad\\xff.txt here.'
    result = await _invoke(
        ensembles, 'fail', failure_policy = FailurePolicies.Report )
    assert 'bad\\xff.txt' in result.error.message
    result.error.message.encode( 'utf-8' )
    result = await _invoke( ensembles, '\udcff' )
    assert result.error.genus is invocables.FaultGenera.Absence
    result.as_text( ).encode( 'utf-8' )


def test_220_results_made_by_hand_sendable( ):
    ''' A result made by hand (as a policy or an application makes one)
        is made sendable by its constructor; sendable ones are kept as
        they are.
    '''
    content = ( canisters.TextContent( text = 'fine \u00e9' ), )
    result = canisters.ResultCanister( invocation_id = 'c', content = content )
    assert result.content is content
    result = canisters.ResultCanister(
        invocation_id = 'c',
        content = canisters.StructureContent( data = { _SURROGATE: 1 } ),
        error = canisters.Fault(
            genus = canisters.FaultGenera.Refusal, message = _SURROGATE ) )
    assert result.content[ 0 ].data == { 'bad\\xff.txt': 1 }
    assert result.error.message == 'bad\\xff.txt'


def test_230_deep_data_refused_not_walked( ):
    ''' Structured data deeper than the limit is refused by the engine's
        validation, never walked into recursion.
    '''
    data: object = _SURROGATE
    for _ in range( 10_000 ): data = [ data ]
    with pytest.raises( exceptions.ResultInvalidity ):
        canisters.validate_content( canisters.StructureContent( data = data ) )
    canisters.ResultCanister(
        invocation_id = 'c',
        content = canisters.StructureContent( data = data ) )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', _PROVIDERS )
async def test_300_every_provider_encodes_results( provider ):
    ''' A result of a new tool with lone surrogates in text, keys, values
        and error message, turned into each provider's messages by
        ``nativize_results``, encodes as UTF-8.
    '''
    def names( ) -> dict[ str, object ]:
        ''' Returns names which are not UTF-8. '''
        return { _SURROGATE: [ _SURROGATE ] }

    def text( ) -> str:
        ''' Returns a name which is not UTF-8. '''
        return _SURROGATE

    def refuse( ) -> str:
        ''' Refuses, naming a file which is not UTF-8. '''
        raise exceptions.InvocationRefusal( _SURROGATE )

    ensembles = [ _produce_ensemble( names, text, refuse ) ]
    invocations = [
        invocables.InvocationCanister(
            identifier = f"call{index}", name = name, arguments = { } )
        for index, name in enumerate( ( 'names', 'text', 'refuse' ) ) ]
    results = await invocables.execute_invocations( invocations, ensembles )
    processor = produce_processor( provider )
    _assert_sendable( processor.nativize_results( results ) )


@pytest.mark.asyncio
async def test_310_sdks_send_requests_with_results( ):
    ''' The real Anthropic and OpenAI clients build and send requests
        holding such results (to a server on the loopback).
    '''
    import anthropic
    import openai

    def text( ) -> str:
        ''' Returns a name which is not UTF-8. '''
        return f"{_SURROGATE} (3 bytes)"

    ensembles = [ _produce_ensemble( text ) ]
    invocation = invocables.InvocationCanister(
        identifier = 'toolu_1', name = 'text', arguments = { } )
    results = await invocables.execute_invocations( [ invocation ], ensembles )
    anthropic_messages = [
        { 'role': 'user', 'content': 'list' },
        { 'role': 'assistant', 'content': [ {
            'type': 'tool_use', 'id': 'toolu_1', 'name': 'text',
            'input': { } } ] },
        produce_processor( 'anthropic' ).nativize_results( results ) ]
    openai_messages = [
        { 'role': 'user', 'content': 'list' },
        { 'role': 'assistant', 'tool_calls': [ {
            'id': 'toolu_1', 'type': 'function',
            'function': { 'name': 'text', 'arguments': '{}' } } ] },
        *produce_processor( 'openai' ).nativize_results( results ) ]
    with replay.ReplayServer( ) as server:
        server.respond( 400, 'application/json', json.dumps( { 'error': {
            'type': 'invalid_request_error', 'message': 'stop' } } ).encode( ) )
        client = anthropic.AsyncAnthropic(
            base_url = server.url, api_key = 'test', max_retries = 0 )
        with pytest.raises( anthropic.BadRequestError ):
            await client.messages.create(
                model = 'claude', max_tokens = 16,
                messages = anthropic_messages )
        client = openai.AsyncOpenAI(
            base_url = server.url, api_key = 'test', max_retries = 0 )
        with pytest.raises( openai.BadRequestError ):
            await client.chat.completions.create(
                model = 'gpt', messages = openai_messages )
    assert len( server.requests ) == 2
    sent = json.dumps( server.requests )
    assert sent.count( 'bad\\\\xff.txt (3 bytes)' ) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize( 'provider', _PROVIDERS )
async def test_320_ids_and_names_from_model_sendable( provider ):
    ''' Ids and names of calls come from the model, and may hold lone
        surrogates (JSON's escapes): results of such calls, known tools or
        not, are sendable through every provider, which sends them back.
    '''
    def text( ) -> str:
        ''' Returns a text. '''
        return 'fine'

    ensembles = [ _produce_ensemble( text ) ]
    invocations = [
        invocables.InvocationCanister(
            identifier = 'call\udcff', name = 'text', arguments = { } ),
        invocables.InvocationCanister(
            identifier = 'call\ud800', name = 'te\udcffxt', arguments = { } ),
    ]
    results = await invocables.execute_invocations( invocations, ensembles )
    assert results[ 0 ].invocation_id == 'call\\xff'
    assert results[ 1 ].name == 'te\\xffxt'
    processor = produce_processor( provider )
    _assert_sendable( processor.nativize_results( results ) )
