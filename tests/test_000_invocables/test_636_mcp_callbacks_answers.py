# SPDX-License-Identifier: Apache-2.0

''' Answers of elicitors and samplers in every shape users return: the
    library's records, MCP wire mappings, the SDK's results; wrong ones
    are logged in full and reach the server as their class only.

    The server (``servers/callbacks_server.py``) returns exactly what it
    received: the answer as JSON, or ``error <code>: <message>``.
'''


import asyncio
import json
import logging

import pytest

import invocables
import invocables.mcp

from mcp import types as mcp_types

from invocables import exceptions
from invocables.mcp import callbacks
from invocables.mcp.callbacks import (
    ElicitationActions,
    ElicitationResponse,
    SamplingResponse,
)

from . import mcp_support


_BOUND = 30.0
_LOGGER = 'invocables.mcp.callbacks'
_INTERNAL = -32603


class _Secret:
    ''' Answer of a type no callback accepts; its repr is a secret. '''

    def __repr__( self ):
        return 'hunter2-secret'


def _produce( **options ):
    return invocables.mcp.produce_ensemble(
        'callbacks',
        command = mcp_support.produce_server_command( 'callbacks_server.py' ),
        **options )


def _serve( answers ):
    ''' Returns a callback which gives the answers in order, each one
        awaited or plain as the answer's position says (odd: plain).
    '''
    requests = [ ]

    async def answer_async( request ):
        requests.append( request )
        return answers.pop( 0 )

    def answer_plain( request ):
        requests.append( request )
        return answers.pop( 0 )

    def answer( request ):
        if len( requests ) % 2: return answer_plain( request )
        return answer_async( request )

    answer.requests = requests
    return answer


async def _call( ensemble, name, arguments ):
    contents = await asyncio.wait_for(
        ensemble.invoke( name, arguments ), _BOUND )
    return contents[ 0 ].text


@pytest.mark.asyncio
async def test_100_elicitation_shapes( ):
    ''' Records, wire mappings (with string or enum actions) and the SDK's
        ElicitResult, from coroutine and plain functions alike, reach the
        server as the same MCP answers.
    '''
    content = { 'name': 'Ada', 'age': 36 }
    answers = [
        ElicitationResponse(
            action = ElicitationActions.Accept, content = content ),
        { 'action': 'accept', 'content': content },
        { 'action': ElicitationActions.Accept, 'content': dict( content ) },
        mcp_types.ElicitResult( action = 'accept', content = content ),
        { 'action': 'decline' },
        mcp_types.ElicitResult( action = 'cancel' ),
        ElicitationResponse( action = ElicitationActions.Decline ),
        { 'action': 'cancel', 'content': { 'ignored': True }, '_meta': { } },
    ]
    expected = [ { 'action': 'accept', 'content': content } ] * 4 + [
        { 'action': 'decline' }, { 'action': 'cancel' },
        { 'action': 'decline' }, { 'action': 'cancel' } ]
    elicitor = _serve( answers )
    received = [ ]
    async with _produce( elicitor = elicitor ) as ensemble:
        for _ in expected:
            text = await _call( ensemble, 'ask', { 'message': 'Who?' } )
            received.append( json.loads( text ) )
    assert received == expected
    assert elicitor.requests[ 0 ].message == 'Who?'
    assert elicitor.requests[ 0 ].schema[ 'required' ] == [ 'name' ]


@pytest.mark.asyncio
async def test_110_elicitation_wrong_answers( caplog ):
    ''' A wrong answer is logged naming the shapes expected and the type
        received; the server gets an MCP error naming only the class, with
        no value and no Python exception text.
    '''
    caplog.set_level( logging.DEBUG, logger = _LOGGER )
    cases = [
        ( 'hunter2-secret', 'str' ),
        ( None, 'NoneType' ),
        ( _Secret( ), '_Secret' ),
        ( [ 'accept', 'hunter2-secret' ], 'list' ),
        ( { 'action': 'hunter2-secret' }, 'dict' ),
        ( { 'action': 'accept', 'content': 'hunter2-secret' }, 'dict' ),
        ( { 'action': 'accept', 'content': { 'name': _Secret( ) } }, 'dict' ),
        ( { 'action': 'accept', 'content': { 3: 'hunter2-secret' } }, 'dict' ),
    ]
    elicitor = _serve( [ answer for answer, _ in cases ] )
    texts = [ ]
    async with _produce( elicitor = elicitor ) as ensemble:
        for _ in cases:
            texts.append(
                await _call( ensemble, 'ask', { 'message': 'Who?' } ) )
        assert ensemble.is_connected( )
    for text, ( _, genus ) in zip( texts, cases ):
        assert text == (
            f"error {_INTERNAL}: The client's elicitor returned an invalid "
            f"answer ({genus})." )
    records = [
        record for record in caplog.records if record.name == _LOGGER ]
    assert len( records ) == len( cases )
    for record in records:
        assert record.levelno == logging.ERROR
        assert 'expected' in record.getMessage( )
        assert 'received' in record.getMessage( )
        assert 'hunter2' not in record.getMessage( )
    first = records[ 0 ].getMessage( )
    assert 'ElicitationResponse' in first and 'received str' in first
    assert 'received _Secret' in records[ 6 ].getMessage( )


@pytest.mark.asyncio
async def test_120_elicitation_record_refused_when_made( caplog ):
    ''' A record with a string action or content which is not a mapping is
        refused when made, with the library's invalidity; made inside an
        elicitor, the server gets the class of the failure only.
    '''
    for arguments in (
        { 'action': 'accept', 'content': { 'name': 'Ada' } },
        { 'action': 1 },
        { 'action': ElicitationActions.Accept, 'content': 'Ada' },
        { 'action': ElicitationActions.Accept, 'content': [ ( 'a', 1 ) ] },
        { 'action': ElicitationActions.Accept,
          'content': { 'name': { 'first': 'Ada' } } },
    ):
        with pytest.raises( exceptions.CallbackAnswerInvalidity ) as caught:
            ElicitationResponse( **arguments )
        assert isinstance( caught.value, ( TypeError, ValueError ) )
        assert caught.value.callback == 'elicitor'
    with pytest.raises( exceptions.CallbackAnswerInvalidity ) as caught:
        ElicitationResponse( action = 'accept' )
    assert 'ElicitationActions.Accept' in str( caught.value )
    assert caught.value.received == 'str'

    async def elicitor( request ):
        return ElicitationResponse( action = 'accept', content = { } )

    caplog.set_level( logging.DEBUG, logger = _LOGGER )
    async with _produce( elicitor = elicitor ) as ensemble:
        text = await _call( ensemble, 'ask', { 'message': 'Who?' } )
    assert text == (
        f"error {_INTERNAL}: The client failed to elicit input: "
        "CallbackAnswerInvalidity." )
    assert 'AttributeError' not in caplog.text
    assert 'ElicitationActions.Accept' in caplog.text


@pytest.mark.asyncio
async def test_130_elicitation_content_against_schema( caplog ):
    ''' Content which breaks the requested schema is not sent: the server
        learns the field and the rule, never the value; the log says all.
    '''
    caplog.set_level( logging.DEBUG, logger = _LOGGER )
    elicitor = _serve( [
        { 'action': 'accept', 'content': { 'name': 'Ada', 'age': 'hunter2' } },
        { 'action': 'accept', 'content': { 'age': 3 } },
        { 'action': 'accept', 'content': { 'name': 'Ada', 'age': 3.0 } },
    ] )
    async with _produce( elicitor = elicitor ) as ensemble:
        wrong = await _call( ensemble, 'ask', { 'message': 'Who?' } )
        missing = await _call( ensemble, 'ask', { 'message': 'Who?' } )
        whole = await _call( ensemble, 'ask', { 'message': 'Who?' } )
    assert wrong.startswith( 'error ' )
    assert 'at age' in wrong and "'type'" in wrong
    assert 'hunter2' not in wrong
    assert "'required'" in missing
    assert json.loads( whole ) == {
        'action': 'accept', 'content': { 'name': 'Ada', 'age': 3.0 } }
    assert "'hunter2' is not of type 'integer'" in caplog.text


@pytest.mark.asyncio
async def test_200_sampling_shapes( ):
    ''' Records, wire mappings (camelCase or snake_case, one block or a
        list of text blocks) and the SDK's CreateMessageResult, from
        coroutine and plain functions alike, reach the server.
    '''
    block = { 'type': 'text', 'text': 'Hi.' }
    answers = [
        SamplingResponse( text = 'Hi.', model = 'm1' ),
        { 'role': 'assistant', 'content': block, 'model': 'm1',
          'stopReason': 'maxTokens' },
        { 'content': [ block, block ], 'model': 'm1',
          'stop_reason': 'stopSequence' },
        mcp_types.CreateMessageResult(
            role = 'assistant',
            content = mcp_types.TextContent( type = 'text', text = 'Hi.' ),
            model = 'm1', stopReason = 'endTurn' ),
    ]
    sampler = _serve( answers )
    received = [ ]
    async with _produce( sampler = sampler ) as ensemble:
        for _ in range( 4 ):
            text = await _call( ensemble, 'sample', { 'prompt': 'Hello' } )
            received.append( json.loads( text ) )
    assert [ item[ 'content' ][ 'text' ] for item in received ] == [
        'Hi.', 'Hi.', 'Hi.\nHi.', 'Hi.' ]
    assert [ item[ 'stopReason' ] for item in received ] == [
        'endTurn', 'maxTokens', 'stopSequence', 'endTurn' ]
    assert { item[ 'model' ] for item in received } == { 'm1' }
    assert { item[ 'role' ] for item in received } == { 'assistant' }
    assert sampler.requests[ 0 ].messages[ 0 ].content[ 0 ].text == 'Hello'


@pytest.mark.asyncio
async def test_210_sampling_wrong_answers( caplog ):
    ''' A wrong sampling answer is logged naming the shapes expected and
        the type received; the server gets the class only. A record made
        with a wrongly typed field is refused when made.
    '''
    caplog.set_level( logging.DEBUG, logger = _LOGGER )
    cases = [
        ( 'hunter2-secret', 'str' ),
        ( { 'content': { 'type': 'text', 'text': 'hunter2' } }, 'dict' ),
        ( { 'content': { 'type': 'image', 'data': 'aGk=',
                         'mimeType': 'image/png' }, 'model': 'm1' },
          'dict' ),
        ( { 'content': [ ], 'model': 'm1' }, 'dict' ),
        ( { 'role': 'user', 'content': { 'type': 'text', 'text': 'x' },
            'model': 'm1' }, 'dict' ),
        ( { 'content': { 'type': 'text', 'text': 'x' }, 'model': 7 },
          'dict' ),
        ( ElicitationResponse( action = ElicitationActions.Cancel ),
          'ElicitationResponse' ),
    ]
    sampler = _serve( [ answer for answer, _ in cases ] )
    texts = [ ]
    async with _produce( sampler = sampler ) as ensemble:
        for _ in cases:
            texts.append(
                await _call( ensemble, 'sample', { 'prompt': 'Hello' } ) )
    for text, ( _, genus ) in zip( texts, cases ):
        assert text == (
            f"error {_INTERNAL}: The client's sampler returned an invalid "
            f"answer ({genus})." )
    records = [
        record for record in caplog.records if record.name == _LOGGER ]
    assert len( records ) == len( cases )
    assert all( record.levelno == logging.ERROR for record in records )
    assert 'SamplingResponse' in records[ 0 ].getMessage( )
    assert 'received str' in records[ 0 ].getMessage( )
    assert "'model'" in records[ 1 ].getMessage( )
    assert 'text content' in records[ 2 ].getMessage( )
    assert 'hunter2' not in caplog.text
    for arguments in (
        { 'text': 3, 'model': 'm1' },
        { 'text': 'x', 'model': None },
        { 'text': 'x', 'model': 'm1', 'stop_reason': 1 },
    ):
        with pytest.raises( exceptions.CallbackAnswerInvalidity ):
            SamplingResponse( **arguments )


@pytest.mark.asyncio
async def test_300_roots_shapes( tmp_path ):
    ''' Roots may be paths, file URIs, wire mappings or the SDK's Root;
        other URIs and other types are refused when the ensemble is made.
    '''
    roots = [
        tmp_path, { 'uri': ( tmp_path / 'a' ).as_uri( ), 'name': 'a' },
        mcp_types.Root( uri = ( tmp_path / 'b' ).as_uri( ) ),
    ]
    assert callbacks.produce_root_uris( roots ) == tuple(
        path.as_uri( ) for path in (
            tmp_path, tmp_path / 'a', tmp_path / 'b' ) )
    assert callbacks.produce_root_uris( tmp_path ) == ( tmp_path.as_uri( ), )
    for wrong in (
        [ 'https://example.com/' ], [ 3 ], [ { 'name': 'a' } ], [ b'/tmp' ]
    ):
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            _produce( roots = wrong )
        assert "'callbacks'" in str( caught.value )


def test_310_callbacks_not_callable( ):
    ''' An elicitor or a sampler which cannot be called is refused when
        the ensemble is produced, naming which and the type given.
    '''
    for option in ( 'elicitor', 'sampler' ):
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            _produce( **{ option: { 'action': 'accept' } } )
        assert repr( option ) in str( caught.value )
        assert 'not dict' in str( caught.value )
