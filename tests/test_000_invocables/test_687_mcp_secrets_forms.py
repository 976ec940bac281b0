# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers in every form: resolved values never shown,
    secrets learned stripped, per part of Basic credentials and in their
    common encodings, and tools whose argument names a short secret would
    change left out.

    The secrets are given as ``env:`` references; servers quote them
    through their ``echo`` tool (``servers/echo_server.py``), as a server
    which quotes what it was given would; ``mcp-server-time`` lists the
    tools whose names a short secret would change.
'''


import base64
import json
import urllib.parse

import pytest

import invocables
import invocables.mcp

from invocables.mcp import redaction

from . import mcp_support


_SECRET = 'Zq9-hush-Hush-7731'
_VARIABLE = 'INVOCABLES_TEST_FORMS'


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _produce_echo( monkeypatch, secret ):
    monkeypatch.setenv( _VARIABLE, secret )
    return invocables.mcp.produce_ensemble(
        'echo', command = mcp_support.produce_server_command(
            'echo_server.py' ),
        environment = { 'APP_KEY': f"env:{_VARIABLE}" } )


async def _echo( ensemble, *messages ):
    calls = [
        _call( f"c{index}", 'echo', { 'message': message } )
        for index, message in enumerate( messages ) ]
    results = await invocables.execute_invocations( calls, [ ensemble ] )
    return [ result.as_text( ) for result in results ]


def test_100_resolution_shows_no_values( monkeypatch ):
    ''' The representation of a resolution shows keys of its environment
        and headers and its URL without credentials, query or secret path
        segments; no resolved value.

        Before, its representation was the dataclass's, with every value.
    '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    ensemble = invocables.mcp.produce_ensemble(
        'remote', url = f"https://u:env:{_VARIABLE}@api.example.com/mcp/"
        f"env:{_VARIABLE}?token=env:{_VARIABLE}",
        headers = {
            'Authorization': f"Bearer env:{_VARIABLE}", 'X-Other': 'lit' } )
    resolution = ensemble.parameters.resolve( 'remote' )
    assert resolution.headers[ 'Authorization' ] == f"Bearer {_SECRET}"
    for text in ( repr( resolution ), str( resolution ) ):
        assert _SECRET not in text
        assert 'lit' not in text
        assert "'https://api.example.com/mcp/***'" in text
        assert "headers = [ 'Authorization', 'X-Other' ]" in text
    local = invocables.mcp.produce_ensemble(
        'local', command = 'server',
        environment = { 'TOKEN': f"env:{_VARIABLE}" } )
    text = repr( local.parameters.resolve( 'local' ) )
    assert _SECRET not in text
    assert "environment = [ 'TOKEN' ]" in text


@pytest.mark.slow
@pytest.mark.asyncio
async def test_200_basic_user_name_learned( monkeypatch ):
    ''' An API key sent as the user name of Basic credentials (with an
        empty password) is a secret by itself: a server which quotes it
        sends it to no model.

        Before, the redactor learned the encoded credentials, the pair and
        the empty password, but not the key alone.
    '''
    key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'
    monkeypatch.setenv(
        _VARIABLE, base64.b64encode( f"{key}:".encode( ) ).decode( ) )
    port = mcp_support.select_port( )
    command = mcp_support.produce_server_command(
        'echo_server.py', '--http', str( port ) )
    with mcp_support.serve_http( command, port ) as url:
        ensemble = invocables.mcp.produce_ensemble(
            'billing', url = url,
            headers = { 'Authorization': f"Basic env:{_VARIABLE}" } )
        async with ensemble:
            texts = await _echo( ensemble, f"key {key} has no access" )
    assert texts == [ 'key *** has no access' ]


@pytest.mark.asyncio
async def test_300_secret_learned_stripped( monkeypatch ):
    ''' A secret read with surrounding whitespace (from a file, with its
        newline) is a secret without it too: a server which strips it and
        quotes it sends it to no model. A value long enough only with its
        whitespace leaves its core alone (it would hide too much).

        Before, the redactor knew the value only with its newline.
    '''
    async with _produce_echo( monkeypatch, f" {_SECRET}\n" ) as ensemble:
        texts = await _echo( ensemble, f"using token {_SECRET}" )
    assert texts == [ 'using token ***' ]
    assert redaction.Redactor( [ 'abc\n\n' ] ).redact( 'abc' ) == 'abc'


@pytest.mark.asyncio
async def test_400_encoded_forms_redacted( monkeypatch ):
    ''' A server which quotes a secret of its environment encoded sends no
        form of it: percent-encoded (as in a path, as in a query), in
        base64 (standard and URL-safe, with and without padding), escaped
        for JSON, every character a ``\\u`` escape, in upper or lower case.

        Before, only the value itself (and, of a URL's references, their
        percent-encoded form) was known.
    '''
    secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY "ü~?'
    data = secret.encode( )
    forms = {
        'percent': urllib.parse.quote( secret, safe = '' ),
        'path': urllib.parse.quote( secret ),
        'query': urllib.parse.quote_plus( secret ),
        'base64': base64.b64encode( data ).decode( ),
        'base64 unpadded': base64.b64encode( data ).decode( ).rstrip( '=' ),
        'base64 URL-safe': base64.urlsafe_b64encode( data ).decode( ),
        'base64 URL-safe unpadded':
            base64.urlsafe_b64encode( data ).decode( ).rstrip( '=' ),
        'JSON': json.dumps( secret )[ 1 : -1 ],
        'JSON unescaped':
            json.dumps( secret, ensure_ascii = False )[ 1 : -1 ],
        'escapes': ''.join(
            "\\u{code:04x}".format( code = ord( character ) )
            for character in secret ),
        'upper': secret.upper( ),
        'lower': secret.lower( ),
    }
    async with _produce_echo( monkeypatch, secret ) as ensemble:
        texts = await _echo( ensemble, *(
            f"{name}: {form}." for name, form in forms.items( ) ) )
    assert texts == [ f"{name}: ***." for name in forms ]


@pytest.mark.asyncio
async def test_410_mixed_case_kept( monkeypatch ):
    ''' Case is not ignored beyond upper and lower case: a word which
        matches a short secret in another mixture of cases stays. '''
    async with _produce_echo( monkeypatch, 'hunter' ) as ensemble:
        texts = await _echo( ensemble, 'Hunter HUNTER hunter' )
    assert texts == [ 'Hunter *** ***' ]


def test_420_forms_of_references_in_url( monkeypatch ):
    ''' Resolved values of a URL are secrets in every form, as those of
        environments and headers: the percent-encoded one which the URL
        sends among them. '''
    monkeypatch.setenv( _VARIABLE, 'p@ss/word' )
    ensemble = invocables.mcp.produce_ensemble(
        'remote', url = f"https://api.example.com/mcp?key=env:{_VARIABLE}" )
    resolution = ensemble.parameters.resolve( 'remote' )
    redactor = resolution.redactor
    assert redactor.redact( 'sent p%40ss%2Fword' ) == 'sent ***'
    assert redactor.redact( 'sent cEBzcy93b3Jk' ) == 'sent ***'


def _produce_clock( monkeypatch, secret ):
    monkeypatch.setenv( _VARIABLE, secret )
    return invocables.mcp.produce_ensemble(
        'clock', command = [
            mcp_support.locate_time_server( ), '--local-timezone', 'UTC' ],
        environment = { 'APP_MODE': f"env:{_VARIABLE}" } )


_REASON_NAME = (
    "its name holds a secret of the connection, which no provider may see" )
_REASON = (
    'its schema holds a secret of the connection in the name of an '
    'argument or keyword, which redaction changes; calls by the names '
    'listed would fail' )


@pytest.mark.asyncio
async def test_500_tools_of_disfigured_arguments_left_out(
    monkeypatch, caplog
):
    ''' A secret which is a common word (``time``) would change the names
        of tools (``get_current_time``) and of arguments (``timezone``
        into ``***zone``): the tools concerned are left out, under their
        names redacted, with a reason which quotes no secret, and one
        warning says to use a longer secret. A secret in a description
        only is redacted there, and its tool stays.

        Before, the tools were offered with the changed names, and a call
        by them failed ("Field required").
    '''
    caplog.set_level( 'WARNING' )
    async with _produce_clock( monkeypatch, 'time' ) as ensemble:
        omissions = ensemble.survey_omissions( )
        assert not ensemble.invokers
        for name in invocables.processors.PROVIDERS:
            processor = invocables.produce_processor( name )
            assert processor.prepare_tools( [ ensemble ] ) == [ ]
    assert { omission.name for omission in omissions } == {
        'get_current_***', 'convert_***' }
    assert { omission.reason for omission in omissions } == {
        _REASON_NAME }
    warnings = [
        record for record in caplog.records
        if 'use a longer one.' in record.getMessage( ) ]
    assert len( warnings ) == 1
    async with _produce_echo( monkeypatch, 'unchanged' ) as ensemble:
        invoker = ensemble.access_invoker( 'echo' )
        assert invoker.description.strip( ) == 'Returns the message ***.'
        assert await _echo( ensemble, 'unchanged' ) == [ '***' ]


@pytest.mark.asyncio
async def test_510_tools_of_disfigured_types_left_out( monkeypatch ):
    ''' A secret which is a word of JSON Schema (``string``) would change
        types: the tools concerned are left out with the same reason.

        Before, they were left out as invalid JSON Schema, which blamed
        the server.
    '''
    async with _produce_clock( monkeypatch, 'string' ) as ensemble:
        omissions = ensemble.survey_omissions( )
    assert { omission.name for omission in omissions } == {
        'get_current_time', 'convert_time' }
    assert { omission.reason for omission in omissions } == { _REASON }
