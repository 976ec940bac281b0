# SPDX-License-Identifier: Apache-2.0

''' Policies and filters against other spellings of a tool and careless
    configuration: every name a wrapper gives a tool or an ensemble
    governs it, and no answer of an approver nor a field of a rule of the
    wrong kind passes as an approval or a rule which never matches. '''


import typing

import pytest

import invocables

from invocables import exceptions
from invocables.toolsets import wrappers
from invocables.toolsets.policies import (
    Actions,
    Approvals,
    Policy,
    Rule,
    produce_approval_policy,
    produce_policy,
)

from . import test_374_policies_identity_wrapped as wrapped


# The tools of the tests of wrapped identities, and their names.
files_of = typing.cast(
    typing.Callable[ [ list[ str ] ], invocables.Ensemble ],
    vars( wrapped )[ '_files' ] )
names_of = typing.cast(
    typing.Callable[ [ invocables.Ensemble ], list[ str ] ],
    vars( wrapped )[ '_names' ] )


async def _run(
    ensembles: list[ invocables.Ensemble ], name: str, policy: typing.Any
) -> invocables.ResultCanister:
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = name, arguments = { 'path': '/x' } )
    results = await invocables.execute_invocations(
        [ invocation ], ensembles, policy = policy )
    return results[ 0 ]


def _stack( runs: list[ str ] ) -> invocables.Ensemble:
    ''' Renamed (delete_file to remove, ensemble 'middle'), then
        prefixed (ensemble 'outer'): offered as x_remove, in 'outer'. '''
    renamed = wrappers.RenamedEnsemble(
        files_of( runs ), rename = { 'delete_file': 'remove' },
        name = 'middle' )
    return wrappers.RenamedEnsemble( renamed, prefix = 'x_', name = 'outer' )


@pytest.mark.parametrize( 'rule', [
    Rule( action = Actions.Deny, tool = 'remove' ),
    Rule( action = Actions.Deny, tool = 'rem*' ),
    Rule( action = Actions.Deny, ensemble = 'middle' ),
] )
@pytest.mark.asyncio
async def test_100_names_between_govern( rule: Rule ):
    ''' A rule on the name which a wrapper between gives a tool (or its
        ensemble) governs it under the wrapper outside: a prefix over a
        rename does not lift a deny on the renamed name.
    '''
    runs: list[ str ] = [ ]
    stack = _stack( runs )
    assert 'x_remove' in names_of( stack )
    result = await _run( [ stack ], 'x_remove', Policy( rules = ( rule, ) ) )
    assert result.is_error( )
    genus = getattr( result.error, 'genus', None )
    assert genus is invocables.FaultGenera.Refusal
    assert runs == [ ]


@pytest.mark.asyncio
async def test_110_filters_match_names_between( ):
    ''' A filter outside a prefix leaves out, or keeps, a tool by the name
        a rename within gives it, as policies match it.
    '''
    runs: list[ str ] = [ ]
    excluded = wrappers.FilteredEnsemble( _stack( runs ), exclude = 'remove' )
    assert names_of( excluded ) == [ 'x_read_file' ]
    included = wrappers.FilteredEnsemble( _stack( runs ), include = 'remove' )
    assert names_of( included ) == [ 'x_remove' ]
    result = await _run( [ excluded ], 'x_remove', Policy( ) )
    assert result.is_error( )
    assert runs == [ ]


@pytest.mark.parametrize( ( 'annotations', 'kept' ), [
    ( { 'readOnlyHint': True }, [ 'read_file' ] ),
    ( { 'read_only': True }, [ 'read_file' ] ),
    ( { 'destructiveHint': False }, [ 'read_file' ] ),
    ( { 'readOnlyHint': False }, [ 'delete_file' ] ),
] )
def test_120_filter_hints_by_meaning(
    annotations: dict[ str, object ], kept: list[ str ]
):
    ''' A filter by a hint keeps the tools which have it as rules see
        them: under either name (``read_only`` or ``readOnlyHint``), and
        with the MCP default where a tool says nothing (a read-only tool
        is not destructive; a tool without hints is not read-only).
    '''
    def read_file( path: str ) -> str:
        ''' Reads a file. '''
        return path

    def delete_file( path: str ) -> str:
        ''' Deletes a file. '''
        return path

    files = invocables.produce_ensemble( 'fs', [
        invocables.produce_invoker( delete_file ),
        invocables.produce_invoker(
            read_file, annotations = { 'read_only': True } ),
    ] )
    filtered = wrappers.FilteredEnsemble( files, annotations = annotations )
    assert names_of( filtered ) == kept


def test_130_filter_async_predicate_refused( ):
    ''' A coroutine function as a filter's predicate (whose coroutine is
        truthy, so that every tool was kept) is refused when the tools are
        surveyed, not taken as keeping every tool.
    '''
    async def keep( invoker: invocables.Invoker ) -> bool:
        return False

    filtered = wrappers.FilteredEnsemble(
        files_of( [ ] ), predicate = keep ) # type: ignore[arg-type]
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        filtered.survey_invokers( )
    assert 'predicate' in str( caught.value )


@pytest.mark.parametrize( 'answer', [
    Approvals.Deny, 'no', None, 0, 1, [ ] ] )
@pytest.mark.asyncio
async def test_200_loop_approver_answers_checked( answer: object ):
    ''' The conversation loop's approver denies with ``Approvals.Deny``;
        an answer which is neither a boolean nor an approval (a truthy
        ``'no'``, ``None`` of an approver which forgot to answer) is an
        error of configuration, never an approval: the tool never runs.
    '''
    runs: list[ str ] = [ ]
    def approve( invocation: invocables.InvocationCanister ) -> typing.Any:
        return answer

    policy = produce_approval_policy( approve )
    if isinstance( answer, Approvals ):
        result = await _run( [ files_of( runs ) ], 'delete_file', policy )
        assert result.is_error( )
        assert 'did not approve' in getattr( result.error, 'message', '' )
    else:
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            await _run( [ files_of( runs ) ], 'delete_file', policy )
        assert 'approver' in str( caught.value )
    assert runs == [ ]


@pytest.mark.asyncio
async def test_210_policy_approver_sync( ):
    ''' A policy's approver may be a plain function, as the loop's may:
        its answer counts (no raw error of awaiting a boolean).
    '''
    runs: list[ str ] = [ ]
    rules = ( Rule( action = Actions.Ask ), )
    allowing = Policy( rules = rules, approver = lambda request: True )
    result = await _run( [ files_of( runs ) ], 'delete_file', allowing )
    assert not result.is_error( )
    denying = Policy(
        rules = rules, approver = lambda request: Approvals.Deny )
    result = await _run( [ files_of( runs ) ], 'read_file', denying )
    assert result.is_error( )
    assert runs == [ 'delete_file /x' ]


@pytest.mark.parametrize( 'fields', [
    { 'read_only': 'yes' }, { 'destructive': 1 }, { 'open_world': None },
    { 'name': 5 },
] )
def test_300_rule_fields_checked( fields: dict[ str, object ] ):
    ''' A rule made in code with a hint which is not a boolean (which would
        never match, so that a deny would never apply) or a name which is
        not text is refused, as in a policy file.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        Rule( action = Actions.Deny, **fields ) # type: ignore[arg-type]
    table = { 'action': 'deny', **fields }
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        produce_policy( { 'policies': [ table ] }, 'f.toml' )
    key = next( iter( fields ) )
    assert f"f.toml at policies[0].{key}" in str( caught.value )


@pytest.mark.parametrize( 'fields', [
    { 'default': 'deny' }, { 'default': 'allow' },
    { 'approver': 5 }, { 'seal_key': 5 },
    { 'rules': Rule( action = Actions.Deny ) },
] )
def test_310_policy_fields_checked( fields: dict[ str, object ] ):
    ''' A policy made in code with a default which is not an action (once
        taken as 'ask'), an approver which cannot be called, a seal key
        which is neither text nor bytes, or one rule in place of a
        sequence, is refused with an error of configuration.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        Policy( **fields ) # type: ignore[arg-type]
