# SPDX-License-Identifier: Apache-2.0

''' Real schemas: those of real MCP servers, and those pydantic writes.

    Every dialect adapts each of them, and a call of each tool, with only
    its required arguments and with all of them, runs through every
    processor (strict mode with the nulls it forces).
'''


import collections
import json
import typing

from pathlib import Path

import pydantic
import pytest

from jsonschema import Draft202012Validator

from invocables import dialects

from . import schemas_support
from .test_400_dialects import verify_dialect


_SCHEMAS = Path( __file__ ).resolve( ).parents[ 1 ] / 'data' / 'schemas'


def _survey_corpus( ):
    corpus = [ ]
    for path in sorted( _SCHEMAS.glob( '*.json' ) ):
        schemas = json.loads( path.read_text( encoding = 'utf-8' ) )
        corpus.extend(
            ( f"{path.stem}/{name}", schema )
            for name, schema in sorted( schemas.items( ) ) )
    return corpus


_CORPUS = _survey_corpus( )


def _sample( schema, complete ):
    ''' Returns a simple value valid under schema (all or required keys). '''
    branches = schema.get( 'anyOf' )
    if branches:
        return _sample( next(
            branch for branch in branches
            if branch.get( 'type' ) != 'null' ), complete )
    if 'enum' in schema: return schema[ 'enum' ][ 0 ]
    match schema.get( 'type' ):
        case 'string': return 'x'
        case 'integer' | 'number':
            return max( schema.get( 'minimum', 1 ), 1 )
        case 'boolean': return True
        case 'array': return [ _sample( schema[ 'items' ], complete ) ]
        case _:
            required = schema.get( 'required', [ ] )
            return {
                name: _sample( value, complete )
                for name, value in schema.get( 'properties', { } ).items( )
                if complete or name in required }


def test_000_corpus_present( ):
    ''' The corpus holds the schemas of three real servers. '''
    assert len( _CORPUS ) >= 25 # noqa: PLR2004
    assert { name.split( '/' )[ 0 ] for name, _ in _CORPUS } == {
        'mcp-server-time', 'server-everything', 'server-filesystem' }


@pytest.mark.parametrize( 'dialect', sorted( dialects.DIALECTS ) )
def test_100_real_schemas_fit_every_dialect( dialect ):
    ''' Every real schema is adapted, never left out, and fits the rules. '''
    for name, schema in _CORPUS:
        adapted = dialects.adapt_schema( schema, dialect, name )
        assert verify_dialect( adapted, dialect ) == [ ], name


def test_110_real_calls_round_trip( ):
    ''' A call of each real tool runs through every processor. '''
    verify, loop = schemas_support.produce_round_trip( )
    outcomes = collections.Counter( )
    try:
        for _, schema in _CORPUS:
            for complete in ( False, True ):
                arguments = _sample( schema, complete )
                assert Draft202012Validator( schema ).is_valid( arguments )
                verify( schema, arguments, outcomes )
    finally: loop.close( )
    assert not any(
        count for ( _, outcome ), count in outcomes.items( )
        if outcome == 'refused' ), dict( outcomes )


class _Item( pydantic.BaseModel ):
    id: int
    label: str | None = None
    tags: list[ str ] = [ ]


class _Query( pydantic.BaseModel ):
    items: list[ _Item ]
    mode: typing.Literal[ 'fast', 'exact' ] = 'fast'
    limit: int | None = None


class _Annotate( pydantic.BaseModel ):
    target: str
    meta: dict[ str, typing.Any ] = { }


_PYDANTIC = (
    ( pydantic.TypeAdapter( _Query ).json_schema( ), [
        { 'items': [ { 'id': 1 } ] },
        { 'items': [ { 'id': 1, 'label': 'a', 'tags': [ 'x' ] },
                     { 'id': 2, 'label': None } ],
          'mode': 'exact', 'limit': None } ] ),
    ( pydantic.TypeAdapter( _Item | None ).json_schema( ), [
        { 'id': 3 }, { 'id': 3, 'label': 'b' } ] ),
    ( pydantic.TypeAdapter( _Annotate ).json_schema( ), [
        { 'target': 't' }, { 'target': 't', 'meta': { 'k': [ 1 ] } } ] ),
)


def test_200_pydantic_schemas_round_trip( ):
    ''' Schemas pydantic writes (optional fields, lists of models, an
        Optional root, a free-form dictionary) keep their calls: strict
        mode strips the nulls it forces, or is not used for the tool.
    '''
    verify, loop = schemas_support.produce_round_trip( )
    outcomes = collections.Counter( )
    try:
        for schema, samples in _PYDANTIC:
            for arguments in samples:
                assert Draft202012Validator( schema ).is_valid( arguments )
                verify( schema, arguments, outcomes )
    finally: loop.close( )
    # Only the free-form dictionary is refused, by strict mode and Gemini.
    assert outcomes[ 'openai-strict', 'refused' ] == 2 # noqa: PLR2004
    assert outcomes[ 'openai-strict', 'adapted' ] == 4 # noqa: PLR2004
    assert outcomes[ 'gemini', 'refused' ] == 2 # noqa: PLR2004
