# SPDX-License-Identifier: Apache-2.0
''' Permission policies: deny, ask an approver, suspend and resume. '''

import asyncio
import json

import invocables

from invocables.toolsets.policies import (
    ApprovalRequest,
    Approvals,
    produce_policy,
    resume_invocation,
    survey_suspensions,
)


def read_note( title: str ) -> str:
    ''' Reads a note. '''
    return f"The note {title!r} says hello."


def delete_note( title: str ) -> str:
    ''' Deletes a note. '''
    return f"Deleted {title!r}."


POLICY = produce_policy( {
    'policies': [
        { 'name': 'keep drafts', 'action': 'deny', 'tool': 'delete_*',
          'ensemble': 'drafts' },
        { 'action': 'ask', 'destructive': True },
    ] } )


async def approve( request: ApprovalRequest ) -> Approvals:
    ''' Approves deletions of notes whose title starts with 'old'. '''
    if request.arguments[ 'title' ].startswith( 'old' ):
        return Approvals.Allow
    return Approvals.Suspend # the user decides later


async def main( ) -> None:
    ''' Executes calls as a model would send them, under the policy. '''
    notes = invocables.produce_ensemble( 'notes', [
        invocables.produce_invoker(
            read_note, annotations = { 'readOnlyHint': True } ),
        invocables.produce_invoker(
            delete_note, annotations = { 'destructiveHint': True } ),
    ] )
    namespace: dict[ str, object ] = { }
    calls = [
        invocables.InvocationCanister(
            identifier = 'call-1', name = 'read_note',
            arguments = { 'title': 'todo' } ),
        invocables.InvocationCanister(
            identifier = 'call-2', name = 'delete_note',
            arguments = { 'title': 'old list' } ),
        invocables.InvocationCanister(
            identifier = 'call-3', name = 'delete_note',
            arguments = { 'title': 'diary' } ),
    ]
    async with notes:
        results = await invocables.execute_invocations(
            calls, [ notes ], namespace = namespace,
            policy = POLICY.with_approver( approve ) )
        for result in results:
            print( result.invocation_id, result.as_text( ) )
        # Later, perhaps in another request: the user approves call-3.
        for request in survey_suspensions( namespace, clear = True ):
            record = json.dumps( request.as_dictionary( ) )
            result = await resume_invocation(
                json.loads( record ), [ notes ], approval = True,
                policy = POLICY )
            print( result.invocation_id, result.as_text( ) )


if __name__ == '__main__': asyncio.run( main( ) )
