# SPDX-License-Identifier: Apache-2.0

''' What a server lists and gives besides tools, and what it asks and
    tells during a call, is made sendable where it enters or leaves the
    session (lone surrogates, JSON escapes of UTF-16 halves, escaped by the
    one normaliser), redacted first: prompts, resources and templates
    listed, prompt messages and resource texts, and the log messages,
    progress, elicitations and sampling requests relayed to a caller. A
    name or URI which retrieving needs as it is, and which is not
    sendable, is left out. The server is ``servers/spilling_server.py``.
'''


import json

import pytest

import invocables

from invocables import invokers

from . import mcp_support


_SECRET = 'Zq9-spill-Spill-4417'
_SENDABLE = 'a\\ud800b ***'


class _Liaison:
    ''' An application's caller, recorded. '''

    def __init__( self ):
        self.records = [ ]

    async def log( self, level, data, logger ):
        self.records.append( ( 'log', data, logger ) )

    async def report_progress( self, progress, total, message ):
        self.records.append( ( 'progress', progress, total, message ) )

    async def elicit( self, message, schema, **options ):
        self.records.append( ( 'elicit', message, schema ) )
        return { 'action': 'decline' }

    async def sample( self, messages, **options ):
        self.records.append( ( 'sample', messages, options ) )
        return { 'role': 'assistant', 'model': 'local', 'content': {
            'type': 'text', 'text': 'fine' } }


def _produce_ensemble( monkeypatch ):
    monkeypatch.setenv( 'INVOCABLES_TEST_SPILL', _SECRET )
    return invocables.mcp.produce_ensemble(
        'spilling',
        command = mcp_support.produce_server_command( 'spilling_server.py' ),
        environment = { 'SPILL': 'env:INVOCABLES_TEST_SPILL' } )


def _encode( value ):
    ''' Returns value as UTF-8 JSON: raises if it is not sendable. '''
    text = json.dumps( value, ensure_ascii = False, default = repr )
    assert _SECRET not in text, text
    return text.encode( 'utf-8' )


@pytest.mark.asyncio
async def test_100_listings_sendable( monkeypatch ):
    ''' The texts of prompts, resources and templates are sendable and
        redacted; a prompt whose argument's name, and a template whose
        URI, is not sendable is left out. Before, they came as the server
        gave them, and ``serve`` could not send them.
    '''
    ensemble = _produce_ensemble( monkeypatch )
    async with ensemble:
        prompts = await ensemble.survey_prompts( )
        resources = await ensemble.survey_resources( )
        templates = await ensemble.survey_resource_templates( )
    _encode( repr( ( prompts, resources, templates ) ) )
    prompt, = prompts
    assert ( prompt.name, prompt.title, prompt.description ) == (
        'p', _SENDABLE, _SENDABLE )
    assert prompt.arguments[ 0 ].description == _SENDABLE
    assert [ resource.uri for resource in resources ] == [
        'file:///r.txt', 'file:///config.json' ]
    assert ( resources[ 0 ].name, resources[ 0 ].title ) == (
        _SENDABLE, _SENDABLE )
    assert [ template.uri_template for template in templates ] == [
        'file:///t/{x}' ]
    assert templates[ 0 ].description == _SENDABLE


@pytest.mark.asyncio
async def test_110_contents_sendable( monkeypatch ):
    ''' The messages of a prompt and the text of a resource are sendable
        and redacted.
    '''
    ensemble = _produce_ensemble( monkeypatch )
    async with ensemble:
        messages = await ensemble.retrieve_prompt( 'p', { 'who': 'x' } )
        contents = await ensemble.retrieve_resource( 'file:///r.txt' )
    assert messages[ 0 ].content[ 0 ].text == _SENDABLE
    assert contents[ 0 ].text == _SENDABLE


@pytest.mark.asyncio
async def test_200_relayed_sendable( monkeypatch ):
    ''' What a server asks and tells during a call reaches the caller
        sendable and redacted: the data and logger of a log message, the
        message of progress (not a total which JSON cannot carry), the
        message and schema of an elicitation, the messages, system prompt
        and metadata of a sampling request.
    '''
    ensemble = _produce_ensemble( monkeypatch )
    ensemble.configure_relay( )
    liaison = _Liaison( )
    async with ensemble:
        with invokers.liaise( liaison ):
            for name in ( 'log', 'progress', 'elicit', 'sample' ):
                results = await invocables.execute_invocations(
                    [ invocables.InvocationCanister(
                        identifier = 'c1', name = name, arguments = { } ) ],
                    [ ensemble ] )
                assert not results[ 0 ].is_error( ), results[ 0 ]
    records = { record[ 0 ]: record[ 1 : ] for record in liaison.records }
    _encode( records )
    assert records[ 'log' ] == ( { 'said': _SENDABLE }, 'lg-***' )
    assert records[ 'progress' ] == ( 1, None, _SENDABLE )
    message, schema = records[ 'elicit' ]
    assert message == _SENDABLE
    assert schema[ 'properties' ][ 'a' ][ 'description' ] == _SENDABLE
    messages, options = records[ 'sample' ]
    assert messages[ 0 ][ 'content' ][ 'text' ] == _SENDABLE
    assert options[ 'system_prompt' ] == _SENDABLE
    assert options[ 'metadata' ] == { 'note': _SENDABLE }


def test_400_redactor_prepares_what_goes_out( ):
    ''' The redactor's one way out: secrets replaced, then lone
        surrogates escaped, in texts and in JSON-like data alike. '''
    from invocables.mcp import redaction
    redactor = redaction.Redactor( ( 'hush-Hush-7731', ) )
    text = 'key hush-Hush-7731 \ud800'
    prepared = redactor.prepare( text )
    assert 'hush-Hush-7731' not in prepared
    prepared.encode( 'utf-8' ) # sendable: no lone surrogate left
    data = redactor.prepare_data( { 'a': [ text ], 'b': 1 } )
    assert data[ 'a' ] == [ prepared ] and data[ 'b' ] == 1
