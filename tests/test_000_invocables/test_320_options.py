# SPDX-License-Identifier: Apache-2.0

''' The engine under odd options, names and invokers: only its own errors. '''


import pytest

import invocables

from invocables import FaultGenera, exceptions


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def echo( text: str ) -> str:
    ''' Echoes. '''
    return text


@pytest.mark.asyncio
async def test_100_options_checked( ):
    ''' Options which cannot work raise configuration invalidity, before
        anything runs.
    '''
    ensembles = [ invocables.produce_ensemble( 'tools', [ echo ] ) ]
    invocations = [ _call( 'a', 'echo', { 'text': 'x' } ) ]
    for options in (
        { 'timeout': float( 'nan' ) },
        { 'timeout': -1 },
        { 'timeout': 'soon' },
        { 'concurrency': 0 },
        { 'concurrency': 1.5 },
        { 'namespace': invocables.__.immut.Dictionary( ) },
        { 'limits': { 'results_size_maximum': 10 } },
    ):
        with pytest.raises( exceptions.ConfigurationInvalidity ):
            await invocables.execute_invocations(
                invocations, ensembles, **options )


@pytest.mark.asyncio
async def test_110_names_which_are_not_text( ):
    ''' A name which is not text (unhashable even) is an unknown tool. '''
    ensembles = [ invocables.produce_ensemble( 'tools', [ echo ] ) ]
    results = await invocables.execute_invocations(
        [ _call( 'a', [ 'echo' ] ), _call( 'b', None ) ], ensembles )
    assert [ result.error.genus for result in results ] == [
        FaultGenera.Absence, FaultGenera.Absence ]


@pytest.mark.asyncio
async def test_120_invokers_which_return_no_canisters( ):
    ''' An invoker which returns something else than content canisters has
        its value normalized as a tool's return value is.
    '''
    class Loose:
        name = 'loose'
        description = 'Returns loosely.'
        arguments_schema = { 'type': 'object', 'properties': { } }
        ensemble = 'tools'
        timeout = invocables.__.absent
        deduplicator = invocables.__.absent
        annotations = { }
        outschema = invocables.__.absent

        def validate_arguments( self, arguments ): return arguments

        def with_ensemble( self, ensemble ): return self

        async def __call__( self, context, arguments ):
            return arguments[ 'value' ]

    ensembles = [ invocables.produce_ensemble( 'tools', [ Loose( ) ] ) ]
    results = await invocables.execute_invocations( [
        _call( 'a', 'loose', { 'value': 'text' } ),
        _call( 'b', 'loose', { 'value': [ 1, 2 ] } ),
        _call( 'c', 'loose', { 'value': None } ),
    ], ensembles )
    assert [ result.as_text( ) for result in results ] == [
        'text', '[1, 2]', '' ]


@pytest.mark.asyncio
async def test_130_options_record( ):
    ''' The options are one record, checked when made; keywords are
        shortcuts into it, and its typed keywords name its fields alone.
    '''
    from invocables import execution
    fields = {
        field.name for field in invocables.__.dcls.fields(
            invocables.ExecutionOptions ) if not field.name.startswith( '_' ) }
    assert set( execution.ExecutionShortcuts.__annotations__ ) == fields
    assert execution.ExecutionOptions is invocables.ExecutionOptions
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        invocables.ExecutionOptions( concurrency = 0 )
    ensembles = [ invocables.produce_ensemble( 'tools', [ echo ] ) ]
    options = invocables.ExecutionOptions(
        failure_policy = invocables.FailurePolicies.Report )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'echo', { 'text': 'x' } ) ], ensembles, options,
        timeout = 5 )
    assert results[ 0 ].as_text( ) == 'x'
    with pytest.raises( exceptions.ConfigurationInvalidity ):
        await invocables.execute_invocations(
            [ _call( 'a', 'echo', { 'text': 'x' } ) ], ensembles,
            { 'timeout': 5 } )
