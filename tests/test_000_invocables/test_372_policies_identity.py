# SPDX-License-Identifier: Apache-2.0

''' Permission policies govern a tool by its identity, whatever the model
    calls it; resuming a suspended call keeps the policy and the record. '''


import json
import os
import subprocess
import sys

from pathlib import Path

import pytest

import invocables

from invocables import FaultGenera, exceptions
from invocables.toolsets import wrappers
from invocables.descriptors import prepare_ensembles
from invocables.toolsets.policies import (
    Actions,
    ApprovalRequest,
    Policy,
    Rule,
    resume_invocation,
    survey_suspensions,
)


_DENY_WRITES = Policy( rules = (
    Rule( action = Actions.Deny, tool = 'write_*', name = 'no writes' ), ) )


def _call( identifier, name, arguments ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name, arguments = arguments )


def _files( runs: list[ str ] ) -> invocables.Ensemble:

    def read_file( path: str ) -> str:
        ''' Reads a file. '''
        runs.append( 'read_file' )
        return f"contents of {path}"

    def write_file( path: str, text: str ) -> str:
        ''' Writes a file. '''
        runs.append( f"write_file {path}" )
        return f"wrote {path}"

    return invocables.produce_ensemble( 'files', [
        invocables.produce_invoker(
            read_file, annotations = { 'readOnlyHint': True } ),
        invocables.produce_invoker(
            write_file, annotations = { 'destructiveHint': True } ),
    ] )


def _configuration( folder: Path, **entry: str ) -> Path:
    options = ''.join(
        f"{key} = {json.dumps( value )}\n" for key, value in entry.items( ) )
    path = folder / 'invocables.toml'
    path.write_text(
        f"[[ensembles]]\nbuiltin = 'io'\n{options}\n"
        "[[roots]]\npath = 'out'\nwritable = true\n" )
    ( folder / 'out' ).mkdir( )
    return path


@pytest.mark.asyncio
@pytest.mark.parametrize( 'entry', [
    { 'prefix': 'fs_' },
    { 'prefix': 'x' },
] )
async def test_100_prefix_keeps_deny( tmp_path, entry ):
    ''' A deny rule on a tool's own name holds under any prefix. '''
    path = _configuration( tmp_path, **entry )
    ensembles = await prepare_ensembles( path )
    name = entry[ 'prefix' ] + 'write_file'
    try:
        results = await invocables.execute_invocations(
            [ _call( 'a', name, { 'path': 'x.txt', 'content': 'hi' } ) ],
            ensembles, policy = _DENY_WRITES )
    finally:
        for ensemble in ensembles: await ensemble.disconnect( )
    assert results[ 0 ].error.genus is FaultGenera.Refusal
    assert 'no writes' in results[ 0 ].error.message
    assert not ( tmp_path / 'out' / 'x.txt' ).exists( )


@pytest.mark.asyncio
async def test_110_rename_and_nesting_keep_deny( ):
    ''' Renames, prefixes and filters, nested, keep the tool's identity.

        A wrapper added around another is a new surface: the rule holds
        without any code for it.
    '''
    runs: list[ str ] = [ ]
    inner = _files( runs )
    renamed = wrappers.RenamedEnsemble(
        inner, rename = { 'write_file': 'save' } )
    filtered = wrappers.FilteredEnsemble( renamed, exclude = 'nothing' )
    outer = wrappers.RenamedEnsemble( filtered, prefix = 'p_' )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'p_save', { 'path': 'x', 'text': 't' } ),
          _call( 'b', 'p_read_file', { 'path': 'x' } ) ],
        [ outer ], policy = _DENY_WRITES )
    assert 'no writes' in results[ 0 ].error.message
    assert not results[ 1 ].is_error( )
    assert runs == [ 'read_file' ]


@pytest.mark.asyncio
async def test_120_offered_name_matches_too( ):
    ''' A rule written on the offered name still matches. '''
    runs: list[ str ] = [ ]
    ensemble = wrappers.RenamedEnsemble( _files( runs ), prefix = 'fs_' )
    policy = Policy( rules = (
        Rule( action = Actions.Deny, tool = 'fs_write_*' ), ) )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'fs_write_file', { 'path': 'x', 'text': 't' } ) ],
        [ ensemble ], policy = policy )
    assert results[ 0 ].error.genus is FaultGenera.Refusal
    assert runs == [ ]


def test_130_command_prefix_keeps_deny( tmp_path ):
    ''' The command's invoke keeps a deny rule under a prefix. '''
    path = _configuration( tmp_path, prefix = 'fs_' )
    policies = tmp_path / 'p.toml'
    policies.write_text(
        "[[policies]]\naction = 'deny'\ntool = 'write_*'\n" )
    environment = dict( os.environ )
    environment.pop( 'INVOCABLES_CONFIGURATION', None )
    environment[ 'XDG_CONFIG_HOME' ] = str( tmp_path / 'home' )
    process = subprocess.run(
        [ sys.executable, '-m', 'invocables', '--configuration', str( path ),
          'invoke', 'fs_write_file', '--arguments',
          '{"path": "x.txt", "content": "hi"}', '--policies',
          str( policies ) ],
        cwd = tmp_path, env = environment, capture_output = True,
        text = True, check = False )
    assert process.returncode == 1, process
    assert 'denied' in process.stderr
    assert not ( tmp_path / 'out' / 'x.txt' ).exists( )


async def _suspend(
    ensembles: list[ invocables.Ensemble ], policy: Policy
) -> dict[ str, object ]:
    namespace: dict[ str, object ] = { }
    results = await invocables.execute_invocations(
        [ _call( 'a', 'p_write_file', { 'path': 'x', 'text': 't' } ) ],
        ensembles, policy = policy, namespace = namespace )
    assert 'awaits' in results[ 0 ].error.message
    request, = survey_suspensions( namespace )
    return json.loads( json.dumps( request.as_dictionary( ) ) )


_ASK_WRITES = Policy( rules = (
    Rule( action = Actions.Ask, tool = 'write_*' ), ) )


@pytest.mark.asyncio
async def test_200_record_names_identity( ):
    ''' A suspended call's record names the tool as its source does. '''
    runs: list[ str ] = [ ]
    ensembles = [ wrappers.RenamedEnsemble( _files( runs ), prefix = 'p_' ) ]
    record = await _suspend( ensembles, _ASK_WRITES )
    assert record[ 'tool' ] == 'write_file'
    assert record[ 'name' ] == 'p_write_file'
    result = await resume_invocation(
        record, ensembles, approval = True, policy = _ASK_WRITES )
    assert not result.is_error( ), result
    assert runs == [ 'write_file x' ]


@pytest.mark.asyncio
@pytest.mark.parametrize( ( 'key', 'value' ), [
    ( 'tool', 'read_file' ),
    ( 'arguments', { 'path': '/etc/passwd', 'text': 't' } ),
    ( 'ensemble', 'other' ),
    ( 'seal', '' ),
] )
async def test_210_edited_record_refused( key, value ):
    ''' A record edited to name another call runs nothing. '''
    runs: list[ str ] = [ ]
    ensembles = [ wrappers.RenamedEnsemble( _files( runs ), prefix = 'p_' ) ]
    record = await _suspend( ensembles, _ASK_WRITES )
    record[ key ] = value
    with pytest.raises( exceptions.ApprovalInvalidity ):
        await resume_invocation(
            record, ensembles, approval = True, policy = _ASK_WRITES )
    assert runs == [ ]


@pytest.mark.asyncio
async def test_220_record_by_hand_refused( ):
    ''' A record which no policy suspended runs nothing. '''
    runs: list[ str ] = [ ]
    ensembles = [ _files( runs ) ]
    request = ApprovalRequest(
        invocation_id = 'a', name = 'write_file', ensemble = 'files',
        tool = 'write_file', arguments = { 'path': 'x', 'text': 't' },
        rule = 'made up', timestamp = 1.0 )
    with pytest.raises( exceptions.ApprovalInvalidity ):
        await resume_invocation( request, ensembles, approval = True )
    forged = request.with_seal( b'a key of the attacker' )
    with pytest.raises( exceptions.ApprovalInvalidity ):
        await resume_invocation( forged, ensembles, approval = True )
    assert runs == [ ]


@pytest.mark.asyncio
async def test_230_denied_stays_denied( ):
    ''' Resuming under a policy which now denies the tool runs nothing. '''
    runs: list[ str ] = [ ]
    ensembles = [ wrappers.RenamedEnsemble( _files( runs ), prefix = 'p_' ) ]
    record = await _suspend( ensembles, _ASK_WRITES )
    policy = Policy( rules = (
        Rule( action = Actions.Deny, tool = 'write_*', name = 'no' ),
        *_ASK_WRITES.rules ) )
    result = await resume_invocation(
        record, ensembles, approval = True, policy = policy )
    assert result.error.genus is FaultGenera.Refusal
    assert 'denied' in result.error.message
    assert runs == [ ]


@pytest.mark.asyncio
async def test_240_seal_key_across_processes( monkeypatch ):
    ''' A configured seal key lets another process resume the record. '''
    runs: list[ str ] = [ ]
    ensembles = [ wrappers.RenamedEnsemble( _files( runs ), prefix = 'p_' ) ]
    policy = Policy( rules = _ASK_WRITES.rules, seal_key = 'shared key' )
    record = await _suspend( ensembles, policy )
    with pytest.raises( exceptions.ApprovalInvalidity ):
        await resume_invocation( record, ensembles, approval = True )
    monkeypatch.setenv( 'INVOCABLES_APPROVAL_KEY', 'shared key' )
    result = await resume_invocation( record, ensembles, approval = True )
    assert not result.is_error( ), result
    assert runs == [ 'write_file x' ]


@pytest.mark.asyncio
async def test_300_patterns_of_real_names( ):
    ''' Rules match names as real tool sets give them (spaces, braces). '''
    runs: list[ str ] = [ ]

    async def get_user( identifier: str ) -> str:
        ''' Gets a user. '''
        runs.append( identifier )
        return identifier

    ensemble = invocables.produce_ensemble( 'My Server', [
        invocables.produce_invoker( get_user, name = 'get /users/{id}' ) ] )
    policy = Policy( rules = ( Rule(
        action = Actions.Deny, ensemble = 'My *', tool = 'get /users/*' ), ) )
    nomenclature = invocables.naming.produce_nomenclature( [ ensemble ] )
    name = nomenclature.access_name( 'My Server', 'get /users/{id}' )
    results = await invocables.execute_invocations(
        [ _call( 'a', name, { 'identifier': 'u1' } ) ], nomenclature,
        policy = policy )
    assert results[ 0 ].error.genus is FaultGenera.Refusal
    assert runs == [ ]
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        Rule( action = Actions.Deny, tool = 'bad\npattern' )


def test_310_renames_to_names_refused( ):
    ''' A prefix or rename which would make names not allowed is refused
        when the wrapper is made. '''
    ensemble = _files( [ ] )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.RenamedEnsemble( ensemble, prefix = 'bad\n' )
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        wrappers.RenamedEnsemble( ensemble, rename = { 'read_file': 'x' * 300 } )
