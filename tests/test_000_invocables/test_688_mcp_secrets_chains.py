# SPDX-License-Identifier: Apache-2.0

''' The redactor of an MCP ensemble covers what rides along with its
    results and errors: the causes and contexts of the errors it raises
    (a traceback prints them), the media types of contents, and a secret
    split over two text blocks (a processor which joins them gives it
    whole).

    The secret is given as an ``env:`` reference in the environment of a
    server which repeats it (``servers/confiding_server.py``), speaking
    MCP 2025-11-25 and (SDK 2.x) 2026-07-28.
'''


import json
import re
import traceback

import pytest

import invocables
import invocables.mcp

from invocables import exceptions, serving
from invocables.mcp import _inputs, redaction
from invocables.mcp import _sdk as sdk

from . import mcp_support


_SECRET = 'sk-chained-6161-secret'
_VARIABLE = 'INVOCABLES_TEST_CHAINED'
_VERSIONS = ( 'legacy', 'modern' )
_whitespace = re.compile( r'\s+' )


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _invoke( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    return ensemble.access_invoker( name )( context, arguments or { } )


def _produce_ensemble( monkeypatch, version = 'legacy' ):
    monkeypatch.setenv( _VARIABLE, _SECRET )
    # SDK 1.x speaks 2025-11-25 alone: both versions are the legacy one.
    flags = ( '--modern', ) if (
        version == 'modern' and sdk.MAJOR >= 2 ) else ( ) # noqa: PLR2004
    return invocables.mcp.produce_ensemble(
        'confiding', command = mcp_support.produce_server_command(
            'confiding_server.py', *flags ),
        environment = { 'CONFIDING_SECRET': f"env:{_VARIABLE}" } )


def _survey_chain( exception ):
    ''' Returns exception and every cause and context below it, whether
        suppressed or not. '''
    chain = [ ]
    pending = [ exception ]
    while pending:
        item = pending.pop( )
        if item is None or any( item is known for known in chain ): continue
        chain.append( item )
        pending.extend( ( item.__cause__, item.__context__ ) )
    return chain


def _verify_chain( exception ):
    ''' Asserts that neither a traceback of exception nor any exception
        of its chain shows the secret; returns the traceback. '''
    text = ''.join( traceback.format_exception( exception ) )
    assert _SECRET not in text
    for item in _survey_chain( exception ):
        shown = ( str( item ), repr( item ), repr( item.args ),
                  repr( getattr( item, 'error', None ) ) )
        assert not any( _SECRET in part for part in shown ), repr( item )
    return text


def _verify_processors( results ):
    ''' Asserts that no processor's native results show the secret, not
        even once whitespace is taken out (texts joined by newlines). '''
    for name in invocables.processors.PROVIDERS:
        processor = invocables.produce_processor( name )
        text = json.dumps(
            processor.nativize_results( results ), default = str )
        assert _SECRET not in text, name
        decoded = json.loads( text )
        for string in _survey_strings( decoded ):
            assert _SECRET not in _whitespace.sub( '', string ), name


def _survey_strings( value ):
    if isinstance( value, str ): yield value
    elif isinstance( value, dict ):
        for item in value.values( ): yield from _survey_strings( item )
    elif isinstance( value, list ):
        for item in value: yield from _survey_strings( item )


@pytest.mark.asyncio
@pytest.mark.parametrize( 'version', _VERSIONS )
async def test_100_refusal_chain_redacted( monkeypatch, version ):
    ''' A server which refuses a call with the secret in the message and
        data of its error raises a refusal whose traceback (cause printed,
        redacted) and whole chain of causes and contexts, even suppressed,
        show no secret. '''
    async with _produce_ensemble( monkeypatch, version ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as raised:
            await _invoke( ensemble, 'reject' )
    refusal = raised.value
    assert str( refusal ) == (
        "Server 'confiding' refused the call of tool 'reject': "
        "Bad token ***. (code -32602)." )
    text = _verify_chain( refusal )
    cause = refusal.__cause__
    assert isinstance( cause, sdk.Error )
    assert cause.error.code == -32602
    assert cause.error.message == 'Bad token ***.'
    assert cause.error.data == { 'token': '***' }
    assert 'Bad token ***.' in text


@pytest.mark.asyncio
@pytest.mark.parametrize( 'version', _VERSIONS )
@pytest.mark.parametrize( 'count', ( 1, 200 ) )
async def test_110_flaw_chain_redacted( monkeypatch, version, count ):
    ''' A result out of shape quoting the secret (pydantic's account shows
        its input) raises a refusal whose traceback and chain show no
        secret; its cause, a stand-in of pydantic's error, carries the
        account redacted. The engine's error result is clean too. '''
    async with _produce_ensemble( monkeypatch, version ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as raised:
            await _invoke( ensemble, 'garble', { 'count': count } )
        ( result, ) = await invocables.execute_invocations(
            [ _call( 'a', 'garble', { 'count': count } ) ], [ ensemble ] )
    refusal = raised.value
    assert 'not a valid MCP result' in str( refusal )
    _verify_chain( refusal )
    assert type( refusal.__cause__ ) is ValueError
    assert 'input_value' in str( refusal.__cause__ )
    assert _SECRET not in repr( result )


@pytest.mark.asyncio
async def test_120_resource_error_chain_redacted( monkeypatch ):
    ''' A server which refuses to read a resource whose URI holds the
        secret, quoting the URI, raises an absence whose chain (even the
        suppressed contexts) shows no secret. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        with pytest.raises( exceptions.ResourceAbsence ) as raised:
            await ensemble.retrieve_resource(
                f"test://elsewhere/{_SECRET}" )
    _verify_chain( raised.value )


@pytest.mark.asyncio
async def test_130_confined_failures_redacted( ):
    ''' A request which fails with the SDK's error or with pydantic's
        account of a result out of shape, quoting the secret, raises a
        stand-in of the same kind (same code for the SDK's error) with
        the text redacted, and a chain which shows no secret; input
        requests out of shape (as a task carries them, SDK 2.x) too. '''
    redactor = redaction.Redactor( [ _SECRET ] )

    async def refuse( ):
        raise sdk.produce_error(
            -32000, f"No {_SECRET}.", { 'key': [ _SECRET ] } )

    async def garble( ):
        return sdk.types.CallToolResult.model_validate( { 'content': [
            { 'type': 'text', 'text': { 'token': _SECRET } } ] } )

    with pytest.raises( sdk.Error ) as refused:
        await _inputs.confine( refuse( ), redactor.redact )
    assert refused.value.error.code == -32000
    assert refused.value.error.data == { 'key': [ '***' ] }
    _verify_chain( refused.value )
    with pytest.raises( ValueError, match = r'\*\*\*' ) as garbled:
        await _inputs.confine( garble( ), redactor.redact )
    _verify_chain( garbled.value )
    if sdk.MAJOR < 2: return # noqa: PLR2004 # no input requests in 1.x
    requests = { 'k': { 'method': 'elicitation/create', 'params': {
        'message': 7, 'requestedSchema': _SECRET } } }
    with pytest.raises( ValueError, match = r'\*\*\*' ) as raised:
        _inputs.produce_requests( requests, "tool 'x'", redactor.redact )
    _verify_chain( raised.value )


@pytest.mark.asyncio
async def test_200_media_types_redacted( monkeypatch ):
    ''' The media types of an image, an audio clip, a text and a binary
        resource and a resource link are redacted: in the canisters, and
        in every processor's native results. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        contents = await _invoke( ensemble, 'typed' )
        results = await invocables.execute_invocations(
            [ _call( 'a', 'typed' ) ], [ ensemble ] )
    assert [ content.media_type for content in contents ] == [
        'image/png; x=***', 'audio/***', 'text/plain; charset=***',
        'application/***', 'text/***' ]
    assert _SECRET not in repr( contents )
    _verify_processors( results )


@pytest.mark.asyncio
async def test_210_media_types_served_redacted( monkeypatch ):
    ''' serve, as a gateway, gives its clients the contents of a result
        with their media types redacted. '''
    server = serving.ToolServer( [ _produce_ensemble( monkeypatch ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            result = await client.call_tool( 'typed', { } )
    text = json.dumps( result.model_dump( mode = 'json', by_alias = True ) )
    assert _SECRET not in text
    assert 'audio/***' in text


@pytest.mark.asyncio
@pytest.mark.parametrize( 'gap', ( '', '\n', ' \n\t' ) )
async def test_300_split_secret_redacted( monkeypatch, gap ):
    ''' A secret split over two text blocks (the second led by
        whitespace, or not) is redacted in both: no processor gives it
        whole, not even once whitespace is taken out. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        contents = await _invoke( ensemble, 'halves', { 'gap': gap } )
        results = await invocables.execute_invocations(
            [ _call( 'a', 'halves', { 'gap': gap } ) ], [ ensemble ] )
    assert [ content.text for content in contents ] == [
        'key ***', f"{gap}*** ends" ]
    _verify_processors( results )


@pytest.mark.asyncio
async def test_310_split_secret_of_error_redacted( monkeypatch ):
    ''' A secret split over two text blocks of an error result is
        redacted in the refusal (which joins them by a newline) and in
        the error result the model gets. '''
    async with _produce_ensemble( monkeypatch ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as raised:
            await _invoke( ensemble, 'halves', { 'error': True } )
        results = await invocables.execute_invocations(
            [ _call( 'a', 'halves', { 'error': True } ) ], [ ensemble ] )
    assert str( raised.value ) == 'key ***\n*** ends'
    assert results[ 0 ].error
    _verify_processors( results )


@pytest.mark.asyncio
async def test_320_split_secret_served_redacted( monkeypatch ):
    ''' serve, as a gateway, gives its clients the two texts redacted. '''
    server = serving.ToolServer( [ _produce_ensemble( monkeypatch ) ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ) ) as client:
            result = await client.call_tool( 'halves', { 'gap': '\n' } )
    texts = [ block.text for block in result.content ]
    assert texts == [ 'key ***', '\n*** ends' ]


def test_330_straddles_redacted( ):
    ''' redact_straddles replaces a secret which two neighbouring texts
        share (at any cut, whitespace between, whitespace within the
        secret at the cut), and leaves texts which only look alike. '''
    secret = 'abcd efgh'
    redactor = redaction.Redactor( [ secret, 'wxyz' ] )
    straddle = redaction.redact_straddles
    assert straddle( redactor, [ 'x a', 'bcd efgh y' ] ) == [
        'x ***', '*** y' ]
    assert straddle( redactor, [ 'x abcd ', '\n efgh' ] ) == [
        'x *** ', '\n***' ]
    assert straddle( redactor, [ 'abcd efg', ' h', 'w', 'xyz' ] ) == [
        '***', ' ***', '***', '***' ]
    for texts in (
        [ 'x abc', 'efgh' ], [ 'abcd', 'fgh' ], [ 'abcd e', 'fg' ],
        [ 'abcd x', 'efgh' ], [ 'wxyz' ], [ ],
    ): assert straddle( redactor, texts ) == texts
    long = 'q' * 100_000
    assert straddle( redactor, [ long + 'abc', 'd efgh' + long ] ) == [
        long + '***', '***' + long ]
