# SPDX-License-Identifier: Apache-2.0

''' Permission policies: allow, ask, deny; suspension and resumption. '''


import asyncio
import json

from pathlib import Path

import pytest

import invocables

from invocables import FaultGenera, exceptions
from invocables.toolsets.policies import (
    POLICY_CAUTIOUS,
    Actions,
    ApprovalRequest,
    Approvals,
    Policy,
    Rule,
    load_policy,
    produce_policy,
    resume_invocation,
    survey_suspensions,
)


_DATA = Path( __file__ ).parent.parent / 'data' / 'policies'


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _ensembles( ):
    runs: list[ str ] = [ ]

    def read_file( path: str ) -> str:
        ''' Reads a file. '''
        runs.append( 'read_file' )
        return f"contents of {path}"

    def write_file( path: str, text: str ) -> str:
        ''' Writes a file. '''
        runs.append( 'write_file' )
        return f"wrote {path}"

    def delete_file( path: str ) -> str:
        ''' Deletes a file. '''
        runs.append( 'delete_file' )
        return f"deleted {path}"

    files = invocables.produce_ensemble( 'files', [
        invocables.produce_invoker(
            read_file, annotations = { 'readOnlyHint': True } ),
        invocables.produce_invoker(
            write_file, annotations = { 'destructiveHint': True } ),
        invocables.produce_invoker(
            delete_file, annotations = { 'destructiveHint': True } ),
    ] )
    return [ files ], runs


@pytest.mark.asyncio
async def test_100_deny_names_rule( ):
    ''' A denied call is an error result naming the rule; it never runs. '''
    ensembles, runs = _ensembles( )
    policy = Policy( rules = (
        Rule( action = Actions.Deny, tool = 'delete_*', name = 'no dels' ),
    ) )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'delete_file', { 'path': 'x' } ),
          _call( 'b', 'read_file', { 'path': 'x' } ) ],
        ensembles, policy = policy )
    assert results[ 0 ].error.genus is FaultGenera.Refusal
    assert 'no dels' in results[ 0 ].error.message
    assert 'delete_*' in results[ 0 ].error.message
    assert not results[ 1 ].is_error( )
    assert runs == [ 'read_file' ]


@pytest.mark.asyncio
async def test_110_first_match_wins( ):
    ''' Rules are tried in order; the first which matches decides. '''
    ensembles, runs = _ensembles( )
    policy = Policy( rules = (
        Rule( action = Actions.Allow, tool = 'delete_file' ),
        Rule( action = Actions.Deny, ensemble = 'fil?s' ),
    ) )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'delete_file', { 'path': 'x' } ),
          _call( 'b', 'write_file', { 'path': 'x', 'text': 't' } ) ],
        ensembles, policy = policy )
    assert not results[ 0 ].is_error( )
    assert results[ 1 ].is_error( )
    assert runs == [ 'delete_file' ]


@pytest.mark.asyncio
async def test_120_default_action( ):
    ''' With no rule matching, the policy's default decides. '''
    ensembles, runs = _ensembles( )
    policy = Policy( default = Actions.Deny )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'read_file', { 'path': 'x' } ) ],
        ensembles, policy = policy )
    assert 'the default' in results[ 0 ].error.message
    assert runs == [ ]


@pytest.mark.asyncio
async def test_130_invalid_arguments_before_policy( ):
    ''' Invalid arguments are refused before the approver is asked. '''
    ensembles, _ = _ensembles( )
    asked: list[ ApprovalRequest ] = [ ]

    async def approver( request: ApprovalRequest ) -> bool:
        asked.append( request )
        return True

    results = await invocables.execute_invocations(
        [ _call( 'a', 'delete_file', { 'path': 3 } ) ], ensembles,
        policy = POLICY_CAUTIOUS.with_approver( approver ) )
    assert results[ 0 ].error.genus is FaultGenera.Invalidity
    assert asked == [ ]


@pytest.mark.asyncio
async def test_200_ask_by_hints( ):
    ''' The cautious policy asks before destructive tools only. '''
    ensembles, runs = _ensembles( )
    asked: list[ ApprovalRequest ] = [ ]

    async def approver( request: ApprovalRequest ) -> Approvals:
        asked.append( request )
        return (
            Approvals.Allow if request.tool == 'write_file'
            else Approvals.Deny )

    results = await invocables.execute_invocations(
        [ _call( 'a', 'read_file', { 'path': 'x' } ),
          _call( 'b', 'write_file', { 'path': 'x', 'text': 't' } ),
          _call( 'c', 'delete_file', { 'path': 'x' } ) ],
        ensembles, policy = POLICY_CAUTIOUS.with_approver( approver ) )
    assert [ request.tool for request in asked ] == [
        'write_file', 'delete_file' ]
    assert not results[ 0 ].is_error( )
    assert not results[ 1 ].is_error( )
    assert 'did not approve' in results[ 2 ].error.message
    assert sorted( runs ) == [ 'read_file', 'write_file' ]


def test_210_hints_defaults( ):
    ''' Unannotated tools count as destructive and open-world (MCP). '''
    access = invocables.toolsets.policies.access_hint
    assert access( { }, 'destructive' ) is True
    assert access( { 'readOnlyHint': True }, 'destructive' ) is False
    assert access( { 'read_only': True }, 'read_only' ) is True
    assert access( { }, 'open_world' ) is True
    assert access( { }, 'idempotent' ) is False


@pytest.mark.asyncio
async def test_220_approver_bad_answer( ):
    ''' An approver answering neither a boolean nor an approval fails. '''
    ensembles, _ = _ensembles( )

    async def approver( request: ApprovalRequest ) -> object:
        return 'yes'

    with pytest.raises( exceptions.ConfigurationInvalidity ):
        await invocables.execute_invocations(
            [ _call( 'a', 'delete_file', { 'path': 'x' } ) ], ensembles,
            policy = POLICY_CAUTIOUS.with_approver(
                approver ) ) # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_300_suspend_and_resume( ):
    ''' A suspended call is recorded as JSON and resumed from the record. '''
    ensembles, runs = _ensembles( )
    namespace: dict[ str, object ] = { }
    results = await invocables.execute_invocations(
        [ _call( 'a', 'delete_file', { 'path': 'x' } ) ], ensembles,
        policy = POLICY_CAUTIOUS, namespace = namespace )
    assert 'awaits' in results[ 0 ].error.message
    assert runs == [ ]
    requests = survey_suspensions( namespace, clear = True )
    assert len( requests ) == 1
    assert survey_suspensions( namespace ) == ( )
    record = json.loads( json.dumps( requests[ 0 ].as_dictionary( ) ) )
    result = await resume_invocation( record, ensembles, approval = True )
    assert result.invocation_id == 'a'
    assert not result.is_error( )
    assert runs == [ 'delete_file' ]
    refused = await resume_invocation( record, ensembles, approval = False )
    assert 'did not approve' in refused.error.message
    assert runs == [ 'delete_file' ]


@pytest.mark.asyncio
async def test_310_resume_bad_record( ):
    ''' A record which lacks fields is refused, naming the field. '''
    ensembles, _ = _ensembles( )
    with pytest.raises(
        exceptions.ConfigurationInvalidity, match = 'arguments'
    ):
        await resume_invocation(
            { 'invocation_id': 'a', 'name': 'x', 'ensemble': 'files',
              'tool': 'x', 'rule': 'r', 'timestamp': 1.0 },
            ensembles, approval = True )


@pytest.mark.asyncio
async def test_320_approver_waits( ):
    ''' The call runs after the approver answers, whenever it does. '''
    ensembles, runs = _ensembles( )
    decision: asyncio.Future[ bool ] = (
        asyncio.get_running_loop( ).create_future( ) )
    asked = asyncio.Event( )

    async def approver( request: ApprovalRequest ) -> bool:
        asked.set( )
        return await decision

    task = asyncio.ensure_future( invocables.execute_invocations(
        [ _call( 'a', 'write_file', { 'path': 'x', 'text': 't' } ) ],
        ensembles, policy = POLICY_CAUTIOUS.with_approver( approver ) ) )
    await asked.wait( )
    assert runs == [ ]
    decision.set_result( True )
    results = await asyncio.wait_for( task, 10 )
    assert not results[ 0 ].is_error( )
    assert runs == [ 'write_file' ]


def test_400_load_valid( ):
    ''' A policy file loads into rules, in order, with the default. '''
    policy = load_policy( _DATA / 'valid.toml' )
    assert policy.default is Actions.Allow
    assert [ rule.action for rule in policy.rules ] == [
        Actions.Deny, Actions.Ask, Actions.Allow ]
    action, rule = policy.access_action(
        'files', 'delete_file', { 'readOnlyHint': False } )
    assert action is Actions.Deny and rule is policy.rules[ 0 ]
    action, _ = policy.access_action(
        'safe', 'list', { 'readOnlyHint': True } )
    assert action is Actions.Allow


@pytest.mark.parametrize( ( 'name', 'key' ), [
    ( 'unknown-action.toml', 'policies[1].action' ),
    ( 'invalid-pattern.toml', 'policies[0].tool' ),
    ( 'unknown-key.toml', 'policies[0].tools' ),
] )
def test_410_load_refuses( name, key ):
    ''' A bad policy file is refused at load, naming file and key. '''
    path = _DATA / name
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        load_policy( path )
    assert str( path ) in str( caught.value )
    assert key in str( caught.value )


def test_420_refusals_in_code( ):
    ''' Rules in code are checked too: actions and patterns. '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        Rule( action = 'allow' ) # type: ignore[arg-type]
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        Rule( action = Actions.Deny, tool = 'a]b[' )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        Rule( action = Actions.Deny, ensemble = '' )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        produce_policy( { 'policies': [ { 'action': 'deny', 'read_only':
            'yes' } ] } )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        produce_policy( { 'policy': { 'default': 'sometimes' } } )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        load_policy( _DATA / 'absent.toml' )


@pytest.mark.asyncio
async def test_500_conversation_loop( ):
    ''' The conversation loop applies the policy: the model gets the
        refusal naming the rule, and the tool never runs.
    '''
    import anthropic

    from invocables import conversations

    from . import scripted
    ensembles, runs = _ensembles( )
    policy = Policy( rules = (
        Rule( action = Actions.Deny, tool = 'delete_*', name = 'no dels' ),
    ) )
    answers = [
        scripted.anthropic_tool_uses( [ (
            'toolu_01', 'delete_file', { 'path': 'notes.txt' } ) ] ),
        scripted.anthropic_text( 'I may not delete it.' ),
    ]
    with scripted.ScriptedServer( answers ) as server:
        client = anthropic.AsyncAnthropic(
            base_url = server.url, api_key = 'test', max_retries = 0 )
        conversation = conversations.produce_conversation(
            'anthropic', client, ensembles, model = 'claude-haiku-4-5',
            policy = policy )
        transcript = await conversation.converse( 'Delete notes.txt.' )
    assert runs == [ ]
    result = transcript.messages[ 2 ][ 'content' ][ 0 ]
    assert result[ 'is_error' ] is True
    assert 'no dels' in json.dumps( result[ 'content' ] )


@pytest.mark.asyncio
async def test_330_terminal_approver( ):
    ''' The terminal approver asks, and allows only on yes. '''
    import io
    ensembles, runs = _ensembles( )
    questions = io.StringIO( )
    approver = invocables.toolsets.policies.produce_terminal_approver(
        io.StringIO( 'yes\nno\n' ), questions )
    policy = POLICY_CAUTIOUS.with_approver( approver )
    first = await invocables.execute_invocations(
        [ _call( 'a', 'delete_file', { 'path': 'x' } ) ], ensembles,
        policy = policy )
    second = await invocables.execute_invocations(
        [ _call( 'b', 'delete_file', { 'path': 'y' } ) ], ensembles,
        policy = policy )
    assert not first[ 0 ].is_error( )
    assert second[ 0 ].is_error( )
    assert runs == [ 'delete_file' ]
    assert questions.getvalue( ).count( "Allow tool 'delete_file'" ) == 2


@pytest.mark.asyncio
@pytest.mark.slow
async def test_510_mcp_annotations( ):
    ''' MCP tools are matched by the hints their server declares. '''
    from . import mcp_support
    ensemble = invocables.mcp.produce_ensemble(
        'echoes', command = mcp_support.produce_server_command(
            'echo_server.py' ) )
    asked: list[ str ] = [ ]

    async def approver( request: ApprovalRequest ) -> bool:
        asked.append( request.tool )
        return False

    async with ensemble:
        results = await invocables.execute_invocations(
            [ _call( 'a', 'echo', { 'message': 'hi' } ),
              _call( 'b', 'pid' ) ],
            [ ensemble ], policy = POLICY_CAUTIOUS.with_approver( approver ) )
    assert not results[ 0 ].is_error( ) # read-only: never asked
    assert results[ 1 ].is_error( )     # says nothing: may destroy
    assert asked == [ 'pid' ]
