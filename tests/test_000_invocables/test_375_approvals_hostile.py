# SPDX-License-Identifier: Apache-2.0

''' Approvals against careless and hostile input: decisions which are not
    booleans, records of the wrong shape or without JSON, and arguments
    which would hide themselves in the terminal's question.
'''


import io
import typing

import pytest

import invocables

from invocables import exceptions
from invocables.toolsets.policies import (
    POLICY_CAUTIOUS,
    ApprovalRequest,
    Approvals,
    produce_terminal_approver,
    resume_invocation,
    survey_suspensions,
)


def _files( runs: list[ str ] ) -> list[ invocables.Ensemble ]:

    def delete_file( path: str ) -> str:
        ''' Deletes a file. '''
        runs.append( f"delete_file {path}" )
        return f"deleted {path}"

    return [ invocables.produce_ensemble( 'fs', [
        invocables.produce_invoker(
            delete_file, annotations = { 'destructiveHint': True } ),
    ] ) ]


async def _suspend(
    ensembles: list[ invocables.Ensemble ], path: str = '/x'
) -> ApprovalRequest:
    namespace: dict[ str, typing.Any ] = { }
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = 'delete_file',
        arguments = { 'path': path } )
    await invocables.execute_invocations(
        [ invocation ], ensembles, policy = POLICY_CAUTIOUS,
        namespace = namespace )
    requests = survey_suspensions( namespace )
    assert len( requests ) == 1
    return requests[ 0 ]


@pytest.mark.parametrize( 'approval', [
    'no', 'false', 1, None, [ ], Approvals.Suspend ] )
@pytest.mark.asyncio
async def test_100_decision_of_other_kind_refused( approval: object ):
    ''' Resuming with a decision which is neither a boolean nor
        ``Approvals.Allow`` or ``Approvals.Deny`` raises an error of
        configuration and runs nothing: a truthy ``'no'`` never approves.
    '''
    runs: list[ str ] = [ ]
    ensembles = _files( runs )
    request = await _suspend( ensembles )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        await resume_invocation(
            request, ensembles, approval ) # type: ignore[arg-type]
    assert runs == [ ]


@pytest.mark.asyncio
async def test_110_decision_as_approvals( ):
    ''' ``Approvals.Deny`` refuses the call (it is truthy, and once ran
        it); ``Approvals.Allow`` runs it.
    '''
    runs: list[ str ] = [ ]
    ensembles = _files( runs )
    request = await _suspend( ensembles )
    refused = await resume_invocation( request, ensembles, Approvals.Deny )
    assert refused.is_error( )
    assert runs == [ ]
    approved = await resume_invocation( request, ensembles, Approvals.Allow )
    assert not approved.is_error( )
    assert runs == [ 'delete_file /x' ]


@pytest.mark.parametrize( 'record', [ None, 5, 'record', [ ] ] )
@pytest.mark.asyncio
async def test_200_record_of_wrong_shape_refused( record: object ):
    ''' A record which is not a mapping is refused with an error of
        configuration, not a raw AttributeError.
    '''
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        await resume_invocation(
            record, _files( [ ] ), True ) # type: ignore[arg-type]


def _nest( depth: int ) -> list[ typing.Any ]:
    value: list[ typing.Any ] = [ ]
    for _ in range( depth ): value = [ value ]
    return value


@pytest.mark.parametrize( 'arguments', [
    { 'path': _nest( 50_000 ) }, { 'path': { 1, 2 } }, { 'path': b'/x' },
] )
@pytest.mark.asyncio
async def test_210_record_without_json_refused( arguments: object ):
    ''' A record whose arguments have no JSON (nested deeper than the
        interpreter recurses, sets, bytes) carries no seal: resuming it
        raises the error of an unsealed record and runs nothing.
    '''
    runs: list[ str ] = [ ]
    ensembles = _files( runs )
    record = ( await _suspend( ensembles ) ).as_dictionary( )
    record[ 'arguments' ] = arguments
    with pytest.raises( exceptions.ApprovalInvalidity ):
        await resume_invocation( record, ensembles, True )
    assert runs == [ ]


@pytest.mark.asyncio
async def test_300_terminal_question_shows_invisibles_escaped( ):
    ''' The terminal's question shows characters which a terminal would
        not show as they are (C1 controls such as CSI, bidirectional
        overrides, line separators) escaped: arguments cannot rewrite or
        reorder the question the user answers.
    '''
    questions = io.StringIO( )
    approver = produce_terminal_approver( io.StringIO( 'n\n' ), questions )
    path = 'safe.txt\u202e\x9b2K\u2028\x85evil'
    request = ApprovalRequest(
        invocation_id = 'c1', name = 'delete_file', ensemble = 'fs',
        tool = 'delete_file', arguments = { 'path': path },
        rule = 'the default', timestamp = 0.0 )
    assert await approver( request ) is Approvals.Deny
    question = questions.getvalue( )
    assert question.isprintable( )
    for escape in ( '\\u202e', '\\x9b', '\\u2028', '\\x85' ):
        assert escape in question
    assert 'évité' in await _ask_plain( 'évité' )


async def _ask_plain( text: str ) -> str:
    questions = io.StringIO( )
    approver = produce_terminal_approver( io.StringIO( 'n\n' ), questions )
    await approver( ApprovalRequest(
        invocation_id = 'c1', name = 'delete_file', ensemble = 'fs',
        tool = 'delete_file', arguments = { 'path': text },
        rule = 'the default', timestamp = 0.0 ) )
    return questions.getvalue( )
