# SPDX-License-Identifier: Apache-2.0

''' Input which a server requires during a call, a resource read or a
    prompt get, answered by the library's client: under MCP 2026-07-28
    (SDK 2.x), by ``input_required`` results (SEP-2322), against a small
    SDK 2.x server over stdio which refuses the legacy handshake; with
    1.x (no 2026-07-28), the same server speaks 2025-11-25 and asks by
    requests of its own, which the same callbacks answer. Elicitation,
    sampling and roots, over one round and several; the state echoed
    exactly, and left out when the server gave none; the rounds limit; a
    timeout during rounds; a refused input; the relay to the caller of the
    call (an application's liaison, a client of ``serve``).
'''


import asyncio
import json
import time

import pytest

import invocables
import invocables.mcp

from invocables import exceptions, invokers, serving
from invocables.mcp import _inputs, _sdk, callbacks

from . import mcp_support


pytestmark = pytest.mark.asyncio
_MODERN = _sdk.MAJOR >= 2 # the SDK speaks 2026-07-28
_SERVER = str( mcp_support.SERVERS / 'inputs_server.py' )
_STATE = ' round {} "é" \\n '
_WAIT = 30 # seconds: bounds which prove "does not hang"


class _Answers:
    ''' An application's elicitor and sampler, recorded. '''

    def __init__( self ):
        self.elicited = [ ]
        self.sampled = [ ]

    async def elicit( self, request ):
        self.elicited.append( request.message )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Accept,
            content = { 'word': f"word {len( self.elicited )}" } )

    async def sample( self, request ):
        self.sampled.append( request.messages[ 0 ].content[ 0 ].text )
        return callbacks.SamplingResponse(
            text = f"sampled {len( self.sampled )}", model = 'm1' )


def _produce( answers = None, **options ):
    arguments = [ ] if _MODERN else [ '--legacy' ]
    if answers is not None:
        options.setdefault( 'elicitor', answers.elicit )
        options.setdefault( 'sampler', answers.sample )
    command = [ mcp_support.SERVERS_PYTHON, _SERVER, *arguments ]
    return invocables.mcp.produce_ensemble(
        'inputs', command = command, **options )


async def _call( ensemble, name, arguments = None ):
    context = invocables.InvocationContext(
        auxdata = None, invoker = None, namespace = { } )
    contents = await asyncio.wait_for(
        ensemble.access_invoker( name )( context, arguments or { } ), _WAIT )
    return contents[ 0 ].text


def _verify_protocol( ensemble ):
    assert _sdk.is_modern( ensemble.connection ) is _MODERN


async def test_100_one_round( ):
    ''' Elicitation, sampling and roots asked in one round are answered by
        the elicitor, the sampler and the roots; the server gave no state,
        and is sent none.
    '''
    answers = _Answers( )
    async with _produce( answers, roots = [ 'file:///tmp/a' ] ) as ensemble:
        _verify_protocol( ensemble )
        text = await _call( ensemble, 'confer', {
            'kinds': 'elicit,sample,roots', 'rounds': 1, 'state': False } )
    seen = json.loads( text )
    assert seen[ 'answers' ] == {
        'elicit-1': { 'word': 'word 1' },
        'sample-1': 'sampled 1',
        'roots-1': [ 'file:///tmp/a' ] }
    assert answers.elicited == [ 'Say a word (elicit-1).' ]
    assert answers.sampled == [ 'Answer sample-1.' ]
    if not _MODERN:
        assert seen[ 'legs' ] == [ ]
        return
    assert seen[ 'legs' ] == [
        { 'state': None, 'keys': [ ] },
        { 'state': None,
          'keys': [ 'elicit-1', 'roots-1', 'sample-1' ] } ]


async def test_110_rounds_and_state( ):
    ''' Over several rounds, each request carries the answers of the round
        before alone (no answer leaks into another request), and exactly
        the state which the server gave last.
    '''
    answers = _Answers( )
    async with _produce( answers ) as ensemble:
        text = await _call( ensemble, 'confer', {
            'kinds': 'elicit,sample', 'rounds': 3, 'state': True } )
    seen = json.loads( text )
    if _MODERN:
        assert seen[ 'legs' ] == [
            { 'state': None, 'keys': [ ] },
            *( { 'state': _STATE.format( round_ ),
                 'keys': [ f"elicit-{round_}", f"sample-{round_}" ] }
               for round_ in ( 1, 2, 3 ) ) ]
        # The last request carries the last round's answers alone.
        assert seen[ 'answers' ] == {
            'elicit-3': { 'word': 'word 3' }, 'sample-3': 'sampled 3' }
    else:
        assert len( seen[ 'answers' ] ) == 6 # noqa: PLR2004
    assert answers.elicited == [
        f"Say a word (elicit-{round_})." for round_ in ( 1, 2, 3 ) ]
    assert answers.sampled == [
        f"Answer sample-{round_}." for round_ in ( 1, 2, 3 ) ]


async def test_115_state_alone( ):
    ''' A result with a state and no input requests (the server is busy)
        is sent again, after a short wait, with the state alone.
    '''
    async with _produce( _Answers( ) ) as ensemble:
        legs = json.loads( await _call( ensemble, 'busy' ) )
    if not _MODERN:
        assert legs == [ ]
        return
    assert legs == [
        { 'state': None, 'keys': [ ] }, { 'state': 'busy', 'keys': [ ] } ]


async def test_120_resource_and_prompt( ):
    ''' A resource read and a prompt get which require input are answered
        by the elicitor as a call is.
    '''
    answers = _Answers( )
    async with _produce( answers ) as ensemble:
        contents = await ensemble.retrieve_resource( 'inputs://note/x' )
        messages = await ensemble.retrieve_prompt( 'note' )
    assert contents[ 0 ].text == "note {'word': 'word 1'}"
    assert messages[ 0 ].content[ 0 ].text == "note {'word': 'word 2'}"
    assert answers.elicited == [ 'Say a word (note).' ] * 2


async def test_130_rounds_limit( ):
    ''' A server which requires input round after round is given up after
        the rounds limit, with a refusal which says so (2025-11-25: its
        requests are answered, unbounded).
    '''
    answers = _Answers( )
    async with _produce( answers ) as ensemble:
        if not _MODERN:
            assert await _call( ensemble, 'endless' ) == 'asked 12 times'
            return
        with pytest.raises( exceptions.InvocationRefusal ) as refusal:
            await _call( ensemble, 'endless' )
    assert f"more than {_inputs.ROUNDS_MAXIMUM} rounds" in str(
        refusal.value )
    assert "tool 'endless'" in str( refusal.value )
    assert len( answers.elicited ) == _inputs.ROUNDS_MAXIMUM


async def test_140_timeout_during_rounds( ):
    ''' The call's timeout covers its rounds: a server which stalls after
        the first round is given up in time.
    '''
    answers = _Answers( )
    async with _produce( answers, timeout = 1.0 ) as ensemble:
        start = time.monotonic( )
        with pytest.raises( exceptions.InvocationRefusal ) as refusal:
            await _call( ensemble, 'stall' )
        elapsed = time.monotonic( ) - start
        # The session is still usable.
        text = await _call( ensemble, 'confer', {
            'kinds': 'sample', 'rounds': 1, 'state': False } )
    assert 'did not answer within 1.0 seconds' in str( refusal.value )
    assert elapsed < 10 # noqa: PLR2004
    assert answers.elicited == [ 'Say a word (s).' ]
    assert 'sample-1' in json.loads( text )[ 'answers' ]


async def test_150_cancellation_during_rounds( ):
    ''' A call cancelled while its user answers ends at once; the session
        serves the next call (once the user is done: the 1.x session
        answers the server's requests one after the other).
    '''
    started = asyncio.Event( )
    released = asyncio.Event( )

    async def elicit( request ):
        started.set( )
        await released.wait( )
        return callbacks.ElicitationResponse(
            action = callbacks.ElicitationActions.Cancel )

    async with _produce(
        elicitor = elicit, roots = [ 'file:///tmp/a' ]
    ) as ensemble:
        call = asyncio.ensure_future( _call( ensemble, 'confer', {
            'kinds': 'elicit', 'rounds': 1, 'state': False } ) )
        await asyncio.wait_for( started.wait( ), _WAIT )
        call.cancel( )
        with pytest.raises( asyncio.CancelledError ):
            await asyncio.wait_for( call, _WAIT )
        released.set( )
        text = await _call( ensemble, 'confer', {
            'kinds': 'roots', 'rounds': 1, 'state': False } )
    assert 'roots-1' in json.loads( text )[ 'answers' ]


async def test_160_elicitor_refuses( ):
    ''' An elicitor which raises refuses the input: under 2026-07-28 the
        call is refused, naming why; under 2025-11-25 the server gets the
        error (the tool fails).
    '''
    async def elicit( request ):
        raise RuntimeError( 'no user here' )

    async with _produce( elicitor = elicit ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as refusal:
            await _call( ensemble, 'confer', {
                'kinds': 'elicit', 'rounds': 1, 'state': False } )
    if _MODERN:
        assert 'could not be given' in str( refusal.value )
    assert 'failed to elicit input: RuntimeError' in str( refusal.value )


async def test_170_sampling_limits( ):
    ''' The sampling limits apply to the requests of rounds as to those of
        2025-11-25: a request beyond them is refused, the sampler never
        sees it.
    '''
    answers = _Answers( )
    limits = callbacks.SamplingLimits( requests = 1, tokens = 50 )
    async with _produce( answers, sampling_limits = limits ) as ensemble:
        with pytest.raises( exceptions.InvocationRefusal ) as refusal:
            await _call( ensemble, 'confer', {
                'kinds': 'sample', 'rounds': 2, 'state': False } )
    assert 'at most 1 sampling' in str( refusal.value )
    assert answers.sampled == [ 'Answer sample-1.' ]


class _Liaison:
    ''' An application's answers, recorded. '''

    def __init__( self ):
        self.records = [ ]

    async def log( self, level, data, logger ): pass

    async def report_progress( self, progress, total, message ): pass

    async def elicit( self, message, schema ):
        self.records.append( ( 'elicit', message ) )
        return { 'action': 'accept', 'content': { 'word': 'mine' } }

    async def sample( self, messages, **options ):
        self.records.append( ( 'sample', options[ 'max_tokens' ] ) )
        return { 'role': 'assistant', 'model': 'local', 'content': {
            'type': 'text', 'text': 'my answer' } }


async def test_200_relayed_to_liaison( ):
    ''' A relaying ensemble gives the input its server requires to the
        caller of the call (an application's liaison), not to its own
        callbacks.
    '''
    answers = _Answers( )
    upstream = _produce( answers )
    upstream.configure_relay( )
    liaison = _Liaison( )
    async with upstream:
        with invokers.liaise( liaison ):
            results = await invocables.execute_invocations(
                [ invocables.InvocationCanister(
                    identifier = 'c1', name = 'confer',
                    arguments = {
                        'kinds': 'elicit,sample', 'rounds': 2,
                        'state': True } ) ],
                [ upstream ] )
    assert not results[ 0 ].is_error( ), results[ 0 ]
    seen = json.loads( results[ 0 ].content[ 0 ].text )
    assert seen[ 'answers' ][ 'elicit-2' ] == { 'word': 'mine' }
    assert seen[ 'answers' ][ 'sample-2' ] == 'my answer'
    assert sorted( liaison.records ) == [
        ( 'elicit', 'Say a word (elicit-1).' ),
        ( 'elicit', 'Say a word (elicit-2).' ),
        ( 'sample', 20 ), ( 'sample', 20 ) ]
    assert answers.elicited == [ ]
    assert answers.sampled == [ ]


@pytest.mark.filterwarnings( 'ignore::DeprecationWarning' )
async def test_210_relayed_under_serve( ):
    ''' Under serve, the input an upstream server requires goes to the
        client which made the call.
    '''
    from mcp import types
    elicited = [ ]

    async def on_elicit( context, parameters ):
        elicited.append( parameters.message )
        return types.ElicitResult(
            action = 'accept', content = { 'word': 'downstream' } )

    upstream = _produce( )
    server = serving.ToolServer( [ upstream ] )
    async with invocables.connect_ensembles( server.ensembles ):
        async with mcp_support.open_memory_client(
            server.produce_server( ), elicitation_callback = on_elicit,
            **( { 'mode': 'legacy' } if _MODERN else { } )
        ) as client:
            result = await asyncio.wait_for( client.call_tool( 'confer', {
                'kinds': 'elicit', 'rounds': 2, 'state': True } ), _WAIT )
    assert not _sdk.access_field( result, 'is_error' ), result
    seen = json.loads( result.content[ 0 ].text )
    assert seen[ 'answers' ][ 'elicit-2' ] == { 'word': 'downstream' }
    assert elicited == [
        'Say a word (elicit-1).', 'Say a word (elicit-2).' ]
