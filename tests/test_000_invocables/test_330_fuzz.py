# SPDX-License-Identifier: Apache-2.0

''' Fuzzing of the engine: hostile arguments, schemas and results.

    Every execution gives exactly one result per invocation, in order, or
    raises one of the library's two failures under the fail-fast policy;
    every result renders as text and its structured content is JSON;
    nothing is left running. The suite runs 50 examples; to run more, set
    ``INVOCABLES_FUZZ_EXAMPLES`` and lift the per-test timeout::

        INVOCABLES_FUZZ_EXAMPLES=10000 python -m pytest --timeout 0 \
            tests/test_000_invocables/test_330_fuzz.py
'''


import asyncio
import json
import os
import threading
import types

import frigid
import pytest

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import invocables

from invocables import FailurePolicies, exceptions


_EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '50' ) )
_SCHEMAS = {
    'open': { 'type': 'object' },
    'pattern': {
        'type': 'object',
        'properties': { 'text': { 'type': 'string', 'pattern': '^(a+)+$' } },
    },
    'keys': {
        'type': 'object',
        'patternProperties': { '^(a|a)+$': { 'type': 'integer' } },
        'additionalProperties': False,
    },
    'look': {
        'type': 'object',
        'properties': { 'text': { 'type': 'string', 'pattern': '^(?!x)' } },
        'unevaluatedProperties': { 'type': 'string' },
    },
    'tree': {
        'type': 'object',
        'properties': { 'node': { '$ref': '#/$defs/node' } },
        '$defs': { 'node': {
            'type': 'object',
            'properties': { 'node': { '$ref': '#/$defs/node' } } } },
    },
    'strict': {
        'type': 'object',
        'properties': { 'text': { 'type': 'string' } },
        'required': [ 'text' ],
        'additionalProperties': False,
    },
}
_LIMITS = invocables.execution.Limits(
    arguments_size_maximum = 20_000, results_size_maximum = 50_000 )
_TIMEOUT = 0.05


class _Census:
    ''' Counts sync tools running, so that a test can wait for none. '''

    def __init__( self ):
        self.condition = threading.Condition( )
        self.running = 0

    def enter( self ):
        with self.condition: self.running += 1

    def leave( self ):
        with self.condition:
            self.running -= 1
            self.condition.notify_all( )

    def wait_idle( self, timeout ):
        with self.condition:
            return self.condition.wait_for(
                lambda: self.running == 0, timeout )


_census = _Census( )


def _behave( context ):
    behaviour = context.auxdata[ context.invocation.identifier ]
    match behaviour[ 0 ]:
        case 'return': return behaviour[ 1 ]
        case 'refuse': raise exceptions.InvocationRefusal( 'refused' )
        case 'invalid':
            raise exceptions.ArgumentsInvalidity( 'tool', 'invalid.' )
        case 'raise': raise RuntimeError( 'tool failed' )
        case _: return None


async def _act_async( context, arguments ):
    behaviour = context.auxdata[ context.invocation.identifier ]
    match behaviour[ 0 ]:
        case 'sleep': await asyncio.sleep( 10 )
        case 'cancel': raise asyncio.CancelledError
        case _: await asyncio.sleep( 0 )
    return _behave( context )


def _act_sync( context, arguments ):
    _census.enter( )
    try: return _behave( context )
    finally: _census.leave( )


def _produce_ensembles( ):
    invokers = [ ]
    for schema_name, schema in _SCHEMAS.items( ):
        for mode, act in ( ( 'a', _act_async ), ( 's', _act_sync ) ):
            for deduplicate in ( False, True ):
                name = f"{mode}_{schema_name}_{int( deduplicate )}"
                invokers.append( invocables.produce_invoker(
                    act, name = name, arguments_schema = schema, timeout = (
                        _TIMEOUT if mode == 'a' else invocables.__.absent ),
                    deduplicator = (
                        invocables.ExactDeduplicator( ) if deduplicate
                        else invocables.__.absent ) ) )
    return [ invocables.produce_ensemble( 'fuzz', invokers ) ]


_ENSEMBLES = _produce_ensembles( )
_NAMES = tuple(
    invoker.name for invoker in _ENSEMBLES[ 0 ].survey_invokers( ) )


def _nest( depth ):
    node = { }
    for _ in range( depth ): node = { 'node': node }
    return node


_keys = st.one_of(
    st.text( max_size = 6 ), st.sampled_from( [ 'a' * 30 + 'b', 'text' ] ),
    st.integers( -3, 3 ), st.none( ), st.tuples( st.integers( 0, 2 ) ) )
_scalars = st.one_of(
    st.none( ), st.booleans( ), st.integers( ), st.floats( ),
    st.text( max_size = 12 ), st.just( 'a' * 30 + 'b' ) )
_exotics = st.one_of(
    st.datetimes( ), st.dates( ), st.decimals( allow_nan = False ),
    st.uuids( ), st.binary( max_size = 8 ), st.just( object( ) ),
    st.builds( lambda: ( item for item in range( 2 ) ) ),
    st.frozensets( st.integers( ), max_size = 3 ) )


def _extend( children ):
    return st.one_of(
        st.lists( children, max_size = 4 ),
        st.tuples( children, children ),
        st.dictionaries( _keys, children, max_size = 4 ),
        st.dictionaries( st.text( max_size = 4 ), children, max_size = 3 )
        .map( frigid.Dictionary ),
        st.dictionaries( st.text( max_size = 4 ), children, max_size = 3 )
        .map( types.MappingProxyType ) )


_values = st.one_of(
    st.recursive( st.one_of( _scalars, _exotics ), _extend, max_leaves = 12 ),
    st.integers( 0, 400 ).map( _nest ),
    st.integers( 1, 3 ).map( lambda size: 'x' * size * 30_000 ) )
_arguments = st.one_of(
    st.dictionaries( _keys, _values, max_size = 4 ),
    st.dictionaries( st.sampled_from( [ 'text', 'node', 'aaa', 'x' ] ),
        _values, max_size = 3 ),
    st.integers( 0, 300 ).map( _nest ),
    _values, st.none( ) )
_behaviours = st.one_of(
    st.tuples( st.just( 'return' ), _values ),
    st.sampled_from( [
        ( 'refuse', ), ( 'invalid', ), ( 'raise', ), ( 'sleep', ),
        ( 'cancel', ), ( 'none', ) ] ) )
_invocations = st.lists(
    st.tuples(
        st.one_of( st.sampled_from( _NAMES ), st.just( 'unknown' ) ),
        _arguments, _behaviours,
        st.sampled_from( [ '', 'not json' ] ) ),
    min_size = 1, max_size = 6 )


async def _execute( specifications, policy ):
    invocations = [ ]
    behaviours = { }
    for index, ( name, arguments, behaviour, invalidity ) in enumerate(
        specifications
    ):
        identifier = f"call{index}"
        behaviours[ identifier ] = behaviour
        invocations.append( invocables.InvocationCanister(
            identifier = identifier, name = name, arguments = arguments,
            invalidity = invalidity or invocables.__.absent ) )
    try:
        results = await invocables.execute_invocations(
            invocations, _ENSEMBLES, auxdata = behaviours,
            namespace = { }, failure_policy = policy, limits = _LIMITS )
    except (
        exceptions.InvocationExecutionFailure, exceptions.ConnectionFailure
    ):
        assert policy is FailurePolicies.Raise
        assert any( behaviour[ 0 ] == 'raise' for behaviour in behaviours.values( ) )
        event( 'outcome: execution failure raised' )
        return None
    finally:
        assert asyncio.all_tasks( ) == { asyncio.current_task( ) }
    assert [ result.invocation_id for result in results ] == [
        invocation.identifier for invocation in invocations ]
    event( 'outcome: results returned' )
    for result in results:
        event( "result: {genus}".format( genus = (
            result.error.genus.value if result.is_error( ) else 'success' ) ) )
        assert isinstance( result.as_text( ), str )
        for item in result.content:
            if isinstance( item, invocables.StructureContent ):
                json.dumps( item.data, allow_nan = False )
    return results


@pytest.fixture( scope = 'module' )
def loop( ):
    ''' One event loop for every example. '''
    loop = asyncio.new_event_loop( )
    yield loop
    loop.close( )


@settings(
    max_examples = _EXAMPLES, deadline = None,
    suppress_health_check = [
        HealthCheck.too_slow, HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture ] )
@given(
    specifications = _invocations,
    policy = st.sampled_from( list( FailurePolicies ) ) )
def test_100_one_result_per_invocation( loop, specifications, policy ):
    ''' Hostile arguments, schemas and results: one result per invocation,
        in order, or the library's failure; nothing left running.
    '''
    loop.run_until_complete( _execute( specifications, policy ) )
    assert _census.wait_idle( 10 )

