# SPDX-License-Identifier: Apache-2.0

''' One tool identity under wrappers: filters and policies match a tool by
    its source names (ensemble, tool) as well as by the names a wrapper
    offers; pinned tools are judged by the annotations their server gives
    them now. '''


import asyncio
import json

import pytest

import invocables
import invocables.mcp

from invocables import descriptors
from invocables.toolsets import wrappers
from invocables.toolsets.policies import (
    POLICY_CAUTIOUS,
    Actions,
    Policy,
    Rule,
    access_hint,
    resume_invocation,
    survey_suspensions,
)

from . import mcp_support


def _files( runs: list[ str ] ) -> invocables.Ensemble:

    def delete_file( path: str ) -> str:
        ''' Deletes a file. '''
        runs.append( f"delete_file {path}" )
        return f"deleted {path}"

    def read_file( path: str ) -> str:
        ''' Reads a file. '''
        runs.append( f"read_file {path}" )
        return f"contents of {path}"

    return invocables.produce_ensemble( 'fs', [
        invocables.produce_invoker( delete_file ),
        invocables.produce_invoker(
            read_file, annotations = { 'readOnlyHint': True } ),
    ] )


def _names( ensemble ) -> list[ str ]:
    return [ invoker.name for invoker in ensemble.survey_invokers( ) ]


async def _run( ensembles, name, policy = None, namespace = None ):
    invocation = invocables.InvocationCanister(
        identifier = 'c1', name = name, arguments = { 'path': '/x' } )
    options = { } if policy is None else { 'policy': policy }
    if namespace is not None: options[ 'namespace' ] = namespace
    results = await invocables.execute_invocations(
        [ invocation ], ensembles, **options )
    return results[ 0 ]


@pytest.mark.parametrize( ( 'wrap', 'offered' ), [
    ( lambda fs: wrappers.RenamedEnsemble( fs, prefix = 'x_' ),
      [ 'x_read_file' ] ),
    ( lambda fs: wrappers.RenamedEnsemble(
        fs, rename = { 'delete_file': 'remove' } ), [ 'read_file' ] ),
    ( lambda fs: wrappers.RenamedEnsemble(
        fs, rename = { 'delete_file': 'remove' }, prefix = 'x_' ),
      [ 'x_read_file' ] ),
] )
@pytest.mark.asyncio
async def test_100_exclude_matches_source_name( wrap, offered ):
    ''' An exclude pattern on a tool's source name hides it under any
        prefix or rename: it is neither offered nor callable. '''
    runs: list[ str ] = [ ]
    renamed = wrap( _files( runs ) )
    hidden = [ name for name in _names( renamed ) if name not in offered ]
    filtered = wrappers.FilteredEnsemble( renamed, exclude = 'delete_*' )
    assert _names( filtered ) == offered
    result = await _run( [ filtered ], hidden[ 0 ] )
    assert result.is_error( )
    assert runs == [ ]


@pytest.mark.asyncio
async def test_110_exclude_matches_either_name( ):
    ''' A tool is left out if an exclude pattern matches its offered name
        or its source name. '''
    runs: list[ str ] = [ ]
    renamed = wrappers.RenamedEnsemble(
        _files( runs ), rename = { 'delete_file': 'remove' } )
    for pattern in ( 'remove', 'delete_file', 'rem*', 'del*' ):
        filtered = wrappers.FilteredEnsemble( renamed, exclude = pattern )
        assert _names( filtered ) == [ 'read_file' ], pattern
    kept = wrappers.FilteredEnsemble( renamed, exclude = 'read' )
    assert _names( kept ) == [ 'remove', 'read_file' ]


@pytest.mark.asyncio
async def test_120_include_matches_source_name( ):
    ''' An include pattern on a source name keeps the prefixed tool; one
        on the offered name keeps it too; others are left out. '''
    runs: list[ str ] = [ ]
    renamed = wrappers.RenamedEnsemble( _files( runs ), prefix = 'x_' )
    by_source = wrappers.FilteredEnsemble( renamed, include = 'read_*' )
    assert _names( by_source ) == [ 'x_read_file' ]
    by_offered = wrappers.FilteredEnsemble( renamed, include = 'x_read_*' )
    assert _names( by_offered ) == [ 'x_read_file' ]
    result = await _run( [ by_source ], 'x_read_file' )
    assert result.content[ 0 ].text == 'contents of /x'
    assert runs == [ 'read_file /x' ]


@pytest.mark.asyncio
async def test_130_filter_over_filter_and_rename( ):
    ''' Filters stacked over renames and filters see the source names. '''
    runs: list[ str ] = [ ]
    inner = wrappers.FilteredEnsemble(
        wrappers.RenamedEnsemble( _files( runs ), prefix = 'a_' ),
        include = '*_file' )
    outer = wrappers.FilteredEnsemble(
        wrappers.RenamedEnsemble( inner, prefix = 'b_' ),
        exclude = 'delete_file' )
    assert _names( outer ) == [ 'b_a_read_file' ]


_DENY_FS = Policy( rules = (
    Rule( action = Actions.Deny, ensemble = 'fs', name = 'no fs' ), ) )


@pytest.mark.parametrize( 'wrap', [
    lambda fs: wrappers.RenamedEnsemble( fs, prefix = 'x_', name = 'tools' ),
    lambda fs: wrappers.RenamedEnsemble(
        fs, rename = { 'delete_file': 'remove' }, name = 'tools' ),
    lambda fs: wrappers.FilteredEnsemble(
        fs, exclude = 'nothing', name = 'tools' ),
    lambda fs: wrappers.PinnedEnsemble(
        fs, fs.survey_invokers( ), name = 'tools' ),
    lambda fs: wrappers.FilteredEnsemble( wrappers.RenamedEnsemble(
        fs, prefix = 'x_', name = 'middle' ), name = 'tools' ),
] )
@pytest.mark.asyncio
async def test_200_ensemble_rule_matches_source( wrap ):
    ''' A rule on the source ensemble's name governs its tools whatever
        name a wrapper gives the ensemble. '''
    runs: list[ str ] = [ ]
    wrapped = wrap( _files( runs ) )
    assert wrapped.name == 'tools'
    for name in _names( wrapped ):
        result = await _run( [ wrapped ], name, _DENY_FS )
        assert result.is_error( )
        assert "'no fs'" in result.error.message
    assert runs == [ ]


@pytest.mark.asyncio
async def test_210_ensemble_rule_matches_either_name( ):
    ''' A rule matches the name a wrapper gives the ensemble as well as
        the source's; with a tool pattern, both names of each. '''
    runs: list[ str ] = [ ]
    wrapped = wrappers.RenamedEnsemble(
        _files( runs ), rename = { 'delete_file': 'remove' },
        name = 'tools' )
    for ensemble in ( 'tools', 'fs', 't*', 'f?' ):
        for tool in ( 'remove', 'delete_*' ):
            policy = Policy( rules = ( Rule(
                action = Actions.Deny, ensemble = ensemble,
                tool = tool ), ) )
            result = await _run( [ wrapped ], 'remove', policy )
            assert result.is_error( ), ( ensemble, tool )
    other = Policy( rules = (
        Rule( action = Actions.Deny, ensemble = 'other' ), ) )
    result = await _run( [ wrapped ], 'remove', other )
    assert result.content[ 0 ].text == 'deleted /x'
    assert runs == [ 'delete_file /x' ]


@pytest.mark.asyncio
async def test_220_suspension_records_source_identity( ):
    ''' A call suspended under a wrapper is recorded with the source
        ensemble and tool; resuming finds the offer of the record's name
        among two wrappers of the same source, and a policy which now
        denies the source ensemble refuses it. '''
    runs: list[ str ] = [ ]
    files = _files( runs )
    first = wrappers.RenamedEnsemble( files, prefix = 'a_', name = 'a' )
    second = wrappers.RenamedEnsemble( files, prefix = 'b_', name = 'b' )
    asking = Policy( rules = (
        Rule( action = Actions.Ask, ensemble = 'fs', tool = 'delete_*' ), ) )
    namespace: dict = { }
    result = await _run(
        [ first, second ], 'b_delete_file', asking, namespace )
    assert result.is_error( )
    assert runs == [ ]
    request, = survey_suspensions( namespace )
    assert ( request.ensemble, request.tool, request.name ) == (
        'fs', 'delete_file', 'b_delete_file' )
    record = request.as_dictionary( )
    refused = await resume_invocation(
        record, [ first, second ], approval = True, policy = Policy(
            rules = ( Rule( action = Actions.Deny, ensemble = 'fs' ), ) ) )
    assert refused.is_error( )
    assert runs == [ ]
    resumed = await resume_invocation(
        record, [ first, second ], approval = True, policy = asking )
    assert resumed.name == 'b_delete_file'
    assert resumed.content[ 0 ].text == 'deleted /x'
    assert runs == [ 'delete_file /x' ]


def _snapshot( ensemble, name, annotations ):
    ''' Returns invoker as a snapshot would pin it, with annotations. '''
    invoker = ensemble.access_invoker( name )
    return invocables.FunctionInvoker(
        name = name, invocable = invoker.invocable,
        arguments_schema = invoker.arguments_schema,
        description = invoker.description, annotations = annotations )


def _flipping( ) -> invocables.Ensemble:
    return invocables.mcp.produce_ensemble(
        'srv', command = mcp_support.produce_server_command(
            'flipping_server.py' ), timeout = 10 )


async def _flip( server ) -> None:
    ''' Has the server make act destructive; waits for the new listing. '''
    result = await _run( [ server ], 'flip' )
    assert result.content[ 0 ].text == 'flipped'
    await asyncio.wait_for( server.wait_listings( ), 10 )
    assert server.access_invoker( 'act' ).annotations[ 'destructiveHint' ]


@pytest.mark.asyncio
async def test_300_pinned_sees_live_annotations( ):
    ''' A pinned MCP tool which its server makes destructive (and
        announces so) is judged by the live annotations: a cautious policy
        asks, and the pin keeps the pinned name, description and schema.
    '''
    server = _flipping( )
    async with server:
        pinned = wrappers.produce_pinned_ensemble( server, name = 'pin' )
        before = pinned.access_invoker( 'act' )
        assert not access_hint( before.annotations, 'destructive' )
        result = await _run( [ pinned ], 'act', POLICY_CAUTIOUS )
        assert result.content[ 0 ].text == 'read'
        reading = wrappers.FilteredEnsemble(
            pinned, annotations = { 'readOnlyHint': True } )
        assert _names( reading ) == [ 'act', 'flip' ]
        await _flip( server )
        assert _names( reading ) == [ 'flip' ]
        assert _names( pinned ) == [ 'act', 'flip' ]
        invoker = pinned.access_invoker( 'act' )
        assert access_hint( invoker.annotations, 'destructive' )
        assert not access_hint( invoker.annotations, 'read_only' )
        assert ( invoker.description, invoker.arguments_schema ) == (
            before.description, before.arguments_schema )
        namespace: dict = { }
        result = await _run( [ pinned ], 'act', POLICY_CAUTIOUS, namespace )
        assert result.is_error( )
        assert 'awaits' in result.error.message
        request, = survey_suspensions( namespace )
        assert ( request.ensemble, request.tool ) == ( 'srv', 'act' )
        wrapped = wrappers.RenamedEnsemble( pinned, prefix = 'x_' )
        result = await _run( [ wrapped ], 'x_act', POLICY_CAUTIOUS )
        assert 'awaits' in result.error.message


@pytest.mark.asyncio
async def test_310_descriptors_pinning_sees_live_annotations( tmp_path ):
    ''' Tools pinned by descriptors ([[invokers]] beside [mcp]) are judged
        by the live annotations too. '''
    command = mcp_support.produce_server_command( 'flipping_server.py' )
    ( tmp_path / 'srv.toml' ).write_text(
        "[ensemble]\nname = 'srv'\n\n[mcp]\n"
        f"command = {json.dumps( command )}\n" )
    discovered = descriptors.produce_ensemble(
        descriptors.produce_ensemble_descriptor( tmp_path / 'srv.toml' ) )
    async with discovered:
        written = descriptors.create_descriptors(
            discovered, tmp_path / 'pinned' )
    pinned, = await descriptors.prepare_ensembles(
        { 'ensembles': [ { 'source': written } ] } )
    assert isinstance( pinned, descriptors.PinnedEnsemble )
    async with pinned:
        result = await _run( [ pinned ], 'act', POLICY_CAUTIOUS )
        assert result.content[ 0 ].text == 'read'
        await _flip( pinned.inner )
        result = await _run( [ pinned ], 'act', POLICY_CAUTIOUS )
        assert result.is_error( )
        assert 'awaits' in result.error.message


@pytest.mark.asyncio
async def test_320_pinned_hints_most_cautious( ):
    ''' Each hint of a pinned tool is the more cautious of the pinned and
        the live one: a pin cannot relax what the source says, and a pin
        more cautious than the source stays so. '''
    runs: list[ str ] = [ ]
    files = _files( runs ) # delete_file says nothing: destructive
    relaxed = _snapshot( files, 'delete_file', { 'readOnlyHint': True } )
    pinned = wrappers.PinnedEnsemble( files, ( relaxed, ) )
    annotations = pinned.access_invoker( 'delete_file' ).annotations
    assert access_hint( annotations, 'destructive' )
    result = await _run( [ pinned ], 'delete_file', POLICY_CAUTIOUS )
    assert 'awaits' in result.error.message
    assert runs == [ ]
    cautious = _snapshot( files, 'read_file', {
        'destructiveHint': True, 'idempotentHint': False,
        'title': 'Reader' } )
    pinned = wrappers.PinnedEnsemble( files, ( cautious, ) )
    annotations = pinned.access_invoker( 'read_file' ).annotations
    assert dict( annotations ) == {
        'readOnlyHint': False, 'destructiveHint': True,
        'idempotentHint': False, 'title': 'Reader' }
