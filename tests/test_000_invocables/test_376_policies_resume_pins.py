# SPDX-License-Identifier: Apache-2.0

''' One tool identity under resumption and pins: an approval resumes the
    tool it was given for, or none (never another of its name); an
    approved call is not asked about again, whatever policy the options
    carry; a pin over a renaming wrapper keeps the source name, which
    policies, filters and records match.
'''


import pytest

import invocables

from invocables import InvocationCanister, naming
from invocables.toolsets import policies, wrappers


def _produce_deleter( label, ran, name = 'delete' ):
    async def delete( path: str ) -> str:
        ''' Deletes a path. '''
        ran.append( label )
        return f"{label} deleted {path}"
    return invocables.produce_invoker( delete, name = name )


async def _suspend( ensembles, policy, name = 'delete' ):
    ''' Calls a tool which the policy asks about; returns the record. '''
    namespace = { }
    results = await invocables.execute_invocations(
        [ InvocationCanister(
            identifier = 'c1', name = name,
            arguments = { 'path': '/tmp/x' } ) ],
        ensembles, policy = policy, namespace = namespace )
    assert 'approval' in results[ 0 ].error.message
    ( record, ) = policies.survey_suspensions( namespace )
    return record


async def _suspend_asked( ):
    ''' Suspends a call of ``fs``'s ``delete`` under a policy which asks
        about every call; returns what ran, the ensemble, the policy and
        the record. '''
    ran = [ ]
    fs = invocables.produce_ensemble(
        'fs', [ _produce_deleter( 'fs', ran ) ] )
    policy = policies.Policy( rules = (
        policies.Rule( action = policies.Actions.Ask ), ) )
    return ran, fs, policy, await _suspend( [ fs ], policy )


@pytest.mark.asyncio
async def test_100_resume_never_runs_another_tool( ):
    ''' A record of ``fs``'s tool, resumed where ``fs`` is gone and
        another ensemble offers a tool of the same name (which the policy
        denies), runs nothing: the tool is unknown now.
    '''
    ran = [ ]
    fs = invocables.produce_ensemble(
        'fs', [ _produce_deleter( 'fs', ran ) ] )
    policy = policies.Policy( rules = (
        policies.Rule( action = policies.Actions.Ask, ensemble = 'fs' ),
        policies.Rule( action = policies.Actions.Deny, ensemble = 'other' ),
    ) )
    record = await _suspend( [ fs ], policy )
    other = invocables.produce_ensemble(
        'other', [ _produce_deleter( 'other', ran ) ] )
    result = await policies.resume_invocation(
        record, [ other ], approval = True, policy = policy )
    assert ran == [ ]
    assert result.error.genus is invocables.FaultGenera.Absence
    assert "no longer offered" in result.error.message
    assert result.invocation_id == 'c1'


@pytest.mark.asyncio
async def test_110_resume_without_policy_runs_no_other_tool( ):
    ''' Without the policy given again, the record's tool no longer
        offered is unknown as well; the tool of the same name elsewhere
        does not run.
    '''
    ran, fs, policy, record = await _suspend_asked( )
    other = invocables.produce_ensemble(
        'other', [ _produce_deleter( 'other', ran ) ] )
    result = await policies.resume_invocation(
        record, [ other ], approval = True )
    assert ran == [ ]
    assert result.error.genus is invocables.FaultGenera.Absence


@pytest.mark.asyncio
async def test_115_impostor_wrapper_runs_nothing( ):
    ''' A wrapper which bears the record's ensemble's name (``fs``) over
        another ensemble offers another tool: resuming runs nothing, with
        the policy given again or without.
    '''
    ran, _, policy, record = await _suspend_asked( )
    other = invocables.produce_ensemble(
        'other', [ _produce_deleter( 'other', ran ) ] )
    impostor = wrappers.FilteredEnsemble( other, name = 'fs' )
    for given in ( { 'policy': policy }, { } ):
        result = await policies.resume_invocation(
            record, [ impostor ], approval = True, **given )
        assert result.error.genus is invocables.FaultGenera.Absence
    assert ran == [ ]


@pytest.mark.asyncio
async def test_120_approved_call_not_asked_again_by_options( ):
    ''' An approved call runs once, even when the options record given to
        the resumption carries the policy which asked.
    '''
    ran, fs, policy, record = await _suspend_asked( )
    result = await policies.resume_invocation(
        record, [ fs ], approval = True, policy = policy,
        options = invocables.ExecutionOptions( policy = policy, timeout = 5 ) )
    assert ran == [ 'fs' ]
    assert not result.is_error( )


@pytest.mark.asyncio
async def test_130_denied_still_denied_on_resume( ):
    ''' The policy given again still denies what it denies now. '''
    ran, fs, asking, record = await _suspend_asked( )
    denying = policies.Policy(
        rules = ( policies.Rule(
            action = policies.Actions.Deny, tool = 'delete' ), ),
        seal_key = asking.access_seal_key( ) )
    result = await policies.resume_invocation(
        record, [ fs ], approval = True, policy = denying )
    assert ran == [ ]
    assert 'denied' in result.error.message


async def _produce_pinned_prefixed( ran ):
    fs = invocables.produce_ensemble(
        'fs', [ _produce_deleter( 'fs', ran, 'delete_file' ) ] )
    prefixed = wrappers.RenamedEnsemble( fs, prefix = 'x_' )
    await prefixed.connect( )
    return wrappers.produce_pinned_ensemble( prefixed )


@pytest.mark.asyncio
async def test_200_pin_over_rename_keeps_source_name( ):
    ''' A pin over a prefixing wrapper: the tool offered as
        ``x_delete_file`` keeps its source name ``delete_file``, in
        ensemble ``fs``.
    '''
    pinned = await _produce_pinned_prefixed( [ ] )
    async with pinned:
        invoker = pinned.access_invoker( 'x_delete_file' )
        assert wrappers.access_source_name( invoker ) == 'delete_file'
        assert wrappers.access_source_ensemble( pinned ).name == 'fs'


@pytest.mark.asyncio
async def test_210_pin_over_rename_governed( ):
    ''' A rule and a filter on the source name govern the tool offered
        under a pin over a prefixing wrapper: denied, and left out.
    '''
    ran = [ ]
    pinned = await _produce_pinned_prefixed( ran )
    policy = policies.Policy( rules = ( policies.Rule(
        action = policies.Actions.Deny, tool = 'delete_*' ), ) )
    async with pinned:
        results = await invocables.execute_invocations(
            [ InvocationCanister(
                identifier = 'c1', name = 'x_delete_file',
                arguments = { 'path': '/tmp/x' } ) ],
            [ pinned ], policy = policy )
        assert 'denied' in results[ 0 ].error.message
        filtered = wrappers.FilteredEnsemble( pinned, exclude = 'delete_*' )
        assert [ invoker.name for invoker in filtered.survey_invokers( ) ] == [ ]
    assert ran == [ ]


@pytest.mark.asyncio
async def test_220_pin_over_rename_records_source_identity( ):
    ''' A call suspended under a pin over a prefixing wrapper is recorded
        with the tool's source identity, and resumes it.
    '''
    ran = [ ]
    pinned = await _produce_pinned_prefixed( ran )
    policy = policies.Policy( rules = ( policies.Rule(
        action = policies.Actions.Ask, tool = 'delete_file' ), ) )
    async with pinned:
        record = await _suspend( [ pinned ], policy, 'x_delete_file' )
        assert ( record.ensemble, record.tool ) == ( 'fs', 'delete_file' )
        result = await policies.resume_invocation(
            record, [ pinned ], approval = True, policy = policy )
    assert not result.is_error( )
    assert ran == [ 'fs' ]


def test_300_pattern_flaws_named_once( ):
    ''' The one description of a pattern's flaw (naming's) names
        unbalanced brackets and non-text; a policy rule refuses them. '''
    assert 'unbalanced' in naming.describe_pattern_flaw( 'read_[a' )
    assert naming.describe_pattern_flaw( 'read_[ab]*' ) == ''
    assert 'text' in naming.describe_pattern_flaw( 3 )
    with pytest.raises( invocables.exceptions.ConfigurationInvalidity ):
        policies.Rule( action = policies.Actions.Deny, tool = 'read_[a' )
