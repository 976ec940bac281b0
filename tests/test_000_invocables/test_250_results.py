# SPDX-License-Identifier: Apache-2.0

''' Results of any shape are serialized once, by the engine, within limits. '''


import dataclasses
import datetime
import decimal
import enum
import json
import types
import uuid

import frigid
import pydantic
import pytest

import invocables

from invocables import FailurePolicies, FaultGenera, canisters, exceptions


class Point( pydantic.BaseModel ):
    x: int
    when: datetime.date


class Color( enum.Enum ):
    Red = 'red'


@dataclasses.dataclass
class Holder:
    points: list
    amount: decimal.Decimal
    table: object
    tags: set


_WHEN = datetime.datetime( 2024, 5, 6, 7, 8, 9, tzinfo = datetime.timezone.utc )
_UUID = uuid.UUID( int = 7 )
_VALUES = {
    'datetime': ( _WHEN, '2024-05-06T07:08:09Z' ),
    'date': ( _WHEN.date( ), '2024-05-06' ),
    'decimal': ( decimal.Decimal( '1.50' ), '1.50' ),
    'uuid': ( _UUID, str( _UUID ) ),
    'set': ( { 3 }, [ 3 ] ),
    'models': (
        [ Point( x = 1, when = _WHEN.date( ) ) ],
        [ { 'x': 1, 'when': '2024-05-06' } ] ),
    'dataclass': (
        Holder(
            points = [ Point( x = 2, when = _WHEN.date( ) ) ],
            amount = decimal.Decimal( '2' ),
            table = frigid.Dictionary( a = _UUID ),
            tags = frozenset( ( 'x', ) ) ),
        {
            'points': [ { 'x': 2, 'when': '2024-05-06' } ],
            'amount': '2',
            'table': { 'a': str( _UUID ) },
            'tags': [ 'x' ],
        } ),
    'frigid': ( frigid.Dictionary( a = 1, b = ( 2, 3 ) ), { 'a': 1, 'b': [ 2, 3 ] } ),
    'proxy': (
        types.MappingProxyType( { 'k': { 'n': _WHEN.date( ) } } ),
        { 'k': { 'n': '2024-05-06' } } ),
    'enum': ( Color.Red, 'red' ),
    'keys': ( { 1: 'a', None: 'b' }, { '1': 'a', 'null': 'b' } ),
    'nan': ( [ float( 'nan' ) ], [ None ] ),
}


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


def _produce_ensemble( values ):
    async def give( context, arguments ):
        return values[ arguments[ 'key' ] ]
    invoker = invocables.produce_invoker(
        give, name = 'give', arguments_schema = {
            'type': 'object', 'properties': { 'key': { 'type': 'string' } } } )
    return invocables.produce_ensemble( 'tools', [ invoker ] )


@pytest.mark.asyncio
async def test_100_non_json_results_serialized( ):
    ''' Dates, decimals, UUIDs, sets, models, dataclasses and frigid
        dictionaries returned by tools become JSON; as_text never fails.
    '''
    ensemble = _produce_ensemble( { key: value for key, ( value, _ ) in _VALUES.items( ) } )
    invocations = [
        _call( f"c{index}", 'give', { 'key': key } )
        for index, key in enumerate( _VALUES ) ]
    results = await invocables.execute_invocations( invocations, [ ensemble ] )
    for key, result in zip( _VALUES, results ):
        assert not result.is_error( ), ( key, result.error )
        assert json.loads( result.as_text( ) ) == _VALUES[ key ][ 1 ], key


@pytest.mark.asyncio
async def test_110_sync_function_results_serialized( ):
    ''' Typed sync and async functions may return such values too. '''
    def stamp( ) -> datetime.date:
        ''' Returns a date. '''
        return _WHEN.date( )

    async def stamps( ) -> list[ Point ]:
        ''' Returns models. '''
        return [ Point( x = 3, when = _WHEN.date( ) ) ]

    ensemble = invocables.produce_ensemble( 'tools', [ stamp, stamps ] )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'stamp' ), _call( 'b', 'stamps' ) ], [ ensemble ] )
    assert results[ 0 ].as_text( ) == '"2024-05-06"'
    assert json.loads( results[ 1 ].as_text( ) ) == [
        { 'x': 3, 'when': '2024-05-06' } ]


@pytest.mark.asyncio
async def test_120_unserializable_result_is_error_result( ):
    ''' A value which cannot be serialized is an error result for its call
        only, under the fail-fast policy too; the batch goes on.
    '''
    cyclic = [ ]
    cyclic.append( cyclic )
    ensemble = _produce_ensemble( {
        'object': { 'deep': [ object( ) ] },
        'cyclic': cyclic,
        'fine': 'ok',
        'generator': ( item for item in range( 3 ) ),
    } )
    results = await invocables.execute_invocations( [
        _call( 'a', 'give', { 'key': 'object' } ),
        _call( 'b', 'give', { 'key': 'cyclic' } ),
        _call( 'c', 'give', { 'key': 'fine' } ),
        _call( 'd', 'give', { 'key': 'generator' } ),
    ], [ ensemble ], failure_policy = FailurePolicies.Raise )
    assert results[ 0 ].error.genus is FaultGenera.Failure
    assert "deep[0]" in results[ 0 ].error.message
    assert 'cannot be sent' in results[ 0 ].error.message
    assert results[ 1 ].error.genus is FaultGenera.Failure
    assert 'nested deeper' in results[ 1 ].error.message
    assert results[ 2 ].as_text( ) == 'ok'
    assert results[ 3 ].error.genus is FaultGenera.Failure


@pytest.mark.asyncio
async def test_130_oversized_result_is_error_result( ):
    ''' A result past the size limit is a clear error result, whatever its
        form: text, bytes or structure.
    '''
    big = 'x' * ( invocables.execution.LIMITS_DEFAULT.results_size_maximum + 1 )
    ensemble = _produce_ensemble( {
        'text': big,
        'image': b'\x89PNG\r\n\x1a\n' + b'\x00' * 2000,
        'structure': { 'items': [ 'y' * 100 ] * 100 },
        'small': { 'items': [ 'y' ] },
    } )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'give', { 'key': 'text' } ) ], [ ensemble ] )
    assert results[ 0 ].error.genus is FaultGenera.Failure
    assert 'larger than the limit' in results[ 0 ].error.message
    limits = invocables.execution.Limits( results_size_maximum = 1000 )
    results = await invocables.execute_invocations( [
        _call( 'b', 'give', { 'key': 'image' } ),
        _call( 'c', 'give', { 'key': 'structure' } ),
        _call( 'd', 'give', { 'key': 'small' } ),
    ], [ ensemble ], limits = limits )
    assert [ result.is_error( ) for result in results ] == [ True, True, False ]
    assert '1000 characters' in results[ 1 ].error.message


@pytest.mark.asyncio
async def test_135_oversized_fault_abbreviated( ):
    ''' A tool which fails or refuses with a message past the size limit
        of a result gives an error result whose message is abbreviated to
        the limit, with its length; a short message stays whole.
    '''
    async def fail( context, arguments ):
        raise ValueError( 'v' * 50_000 )

    async def refuse( context, arguments ):
        if arguments.get( 'short' ): raise exceptions.InvocationRefusal( 'no' )
        raise exceptions.InvocationRefusal( 'r' * 50_000 )

    schema = { 'type': 'object', 'properties': {
        'short': { 'type': 'boolean' } } }
    ensemble = invocables.produce_ensemble( 'tools', [
        invocables.produce_invoker(
            fail, name = 'fail', arguments_schema = schema ),
        invocables.produce_invoker(
            refuse, name = 'refuse', arguments_schema = schema ) ] )
    limits = invocables.execution.Limits( results_size_maximum = 1000 )
    results = await invocables.execute_invocations( [
        _call( 'a', 'fail' ), _call( 'b', 'refuse' ),
        _call( 'c', 'refuse', { 'short': True } ),
    ], [ ensemble ], limits = limits,
        failure_policy = FailurePolicies.Report )
    failed, refused, short = ( result.error for result in results )
    assert failed.genus is FaultGenera.Failure
    assert refused.genus is FaultGenera.Refusal
    for fault in ( failed, refused ):
        assert len( fault.message ) < 1100 # noqa: PLR2004
        assert fault.message.endswith( 'characters)' )
    assert '(50000 characters)' in refused.message
    assert short.message == 'no'


@pytest.mark.asyncio
async def test_140_deep_result_is_error_result( ):
    ''' A result nested past the depth limit is an error result. '''
    deep = [ ]
    for _ in range( 200 ): deep = [ deep ]
    ensemble = _produce_ensemble( { 'deep': deep, 'shallow': [ [ [ ] ] ] } )
    results = await invocables.execute_invocations( [
        _call( 'a', 'give', { 'key': 'deep' } ),
        _call( 'b', 'give', { 'key': 'shallow' } ),
    ], [ ensemble ], limits = invocables.execution.Limits(
        results_depth_maximum = 100 ) )
    assert 'nested deeper than the limit of 100' in results[ 0 ].error.message
    assert results[ 1 ].as_text( ) == '[[[]]]'


@pytest.mark.asyncio
async def test_150_content_of_other_invokers_serialized( ):
    ''' Structured content made by any invoker is serialized by the engine. '''
    class Stamper:
        name = 'stamp'
        description = 'Stamps.'
        arguments_schema = { 'type': 'object', 'properties': { } }
        ensemble = 'tools'
        timeout = invocables.__.absent
        deduplicator = invocables.__.absent
        annotations = { }
        outschema = invocables.__.absent

        def validate_arguments( self, arguments ): return arguments

        def with_ensemble( self, ensemble ): return self

        async def __call__( self, context, arguments ):
            return ( invocables.StructureContent(
                data = { 'when': _WHEN.date( ), 'tags': { 1 } } ), )

    ensemble = invocables.produce_ensemble( 'tools', [ Stamper( ) ] )
    results = await invocables.execute_invocations(
        [ _call( 'a', 'stamp' ) ], [ ensemble ] )
    assert results[ 0 ].content[ 0 ].data == {
        'when': '2024-05-06', 'tags': [ 1 ] }


def test_160_as_text_never_raises( ):
    ''' Text rendering of canisters built by hand shows any data. '''
    result = invocables.ResultCanister(
        invocation_id = 'c', content = (
            invocables.StructureContent( data = { 'when': _WHEN.date( ) } ),
            invocables.StructureContent( data = { 'what': object( ) } ),
            invocables.StructureContent( data = float( 'inf' ) ) ) )
    lines = result.as_text( ).splitlines( )
    assert lines[ 0 ] == '{"when": "2024-05-06"}'
    assert lines[ 1 ].startswith( '[structured content which cannot be shown' )
    assert lines[ 2 ] == 'null'


def test_170_produce_json( ):
    ''' Plain JSON is returned as it is; the rest becomes plain JSON. '''
    plain = { 'a': [ 1, 2.5, 'x', None, True ] }
    assert canisters.produce_json( plain ) is plain
    assert canisters.produce_json( ( 1, { 'b': b'caf\xc3\xa9' } ) ) == [
        1, { 'b': 'café' } ]
    with pytest.raises( exceptions.ResultInvalidity ):
        canisters.produce_json( { ( 1, 2 ): 'tuple key' } )
    with pytest.raises( exceptions.ResultInvalidity ):
        canisters.produce_json( 'x' * 11, size_maximum = 10 )
