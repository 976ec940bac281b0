# SPDX-License-Identifier: Apache-2.0

''' Names of descriptors as real tool sets and MCP clients give them.

    TOML ensembles, local tools, ``mcpServers`` keys and renames take any
    printable name of 1 to 256 characters (``io.github.owner/server``,
    ``math.sum``, ``My Server``); the providers see safe names, and calls
    by them reach the right tool, local or on a server.
'''


import json
import re

import pytest

import invocables

from invocables import descriptors, exceptions, naming
from invocables.processors import produce_processor

from . import mcp_support

# As the test server names its tool (128 characters): not imported from it,
# which needs the mcp SDK 2.x to import (it runs as a program of its own).
LONG_NAME = 'api.v1.' + 'x' * 117 + '.get'


_rule = re.compile( r'^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$' )
MODULE = 'test_000_invocables.test_705_descriptors_names'
PROVIDERS = (
    'anthropic', 'openai', 'openai-responses', 'gemini', 'cohere', 'ollama',
    'bedrock', 'mistral' )


async def add( context, arguments ):
    ''' Adds two integers: the local math.sum. '''
    return f"local sum {arguments[ 'a' ] + arguments[ 'b' ]}"


async def multiply( context, arguments ):
    ''' Multiplies two integers: the local math_sum, a different tool. '''
    return f"local product {arguments[ 'a' ] * arguments[ 'b' ]}"


_ARGUMENTS = (
    "type = 'object'\nrequired = [ 'a', 'b' ]\n"
    "properties = { a = { type = 'integer' }, b = { type = 'integer' } }\n" )


def _write_local( folder, ensemble = 'io.github.owner/local' ):
    ''' Writes a local ensemble with dotted and plain tool names. '''
    ( folder / 'local.toml' ).write_text(
        f"[ensemble]\nname = {json.dumps( ensemble )}\n\n"
        "[[invokers]]\nname = 'math.sum'\n"
        f"implementation = '{MODULE}:add'\n"
        f"[invokers.arguments]\n{_ARGUMENTS}\n"
        "[[invokers]]\nname = 'math_sum'\n"
        f"implementation = '{MODULE}:multiply'\n"
        f"[invokers.arguments]\n{_ARGUMENTS}" )
    return folder / 'local.toml'


def test_100_local_names_accepted( tmp_path ):
    ''' A TOML ensemble named as a registry entry, with dotted tool names,
        loads under those names.
    '''
    descriptor = descriptors.produce_ensemble_descriptor(
        _write_local( tmp_path ) )
    assert descriptor.name == 'io.github.owner/local'
    assert [ item.name for item in descriptor.invokers ] == [
        'math.sum', 'math_sum' ]
    ensemble = descriptors.produce_ensemble( descriptor )
    assert set( ensemble.invokers ) == { 'math.sum', 'math_sum' }


@pytest.mark.parametrize(
    ( 'ensemble', 'tool', 'keypath' ),
    [ ( 'my\ttools', 'sum', 'ensemble.name' ),
      ( '', 'sum', 'ensemble.name' ),
      ( 'x' * 257, 'sum', 'ensemble.name' ),
      ( 'tools', 'sum\n', 'invokers[0].name' ),
      ( 'tools', '   ', 'invokers[0].name' ),
      ( 'tools', 'a\u200bb', 'invokers[0].name' ) ] )
def test_110_names_refused( tmp_path, ensemble, tool, keypath ):
    ''' Empty, blank, too long or unprintable names are refused at their
        key, saying what is allowed.
    '''
    ( tmp_path / 'local.toml' ).write_text(
        f"[ensemble]\nname = {json.dumps( ensemble )}\n\n"
        f"[[invokers]]\nname = {json.dumps( tool )}\n"
        f"implementation = '{MODULE}:add'\n"
        "[invokers.arguments]\ntype = 'object'\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_ensemble_descriptor( tmp_path / 'local.toml' )
    assert caught.value.keypath == keypath
    assert 'is not allowed' in caught.value.reason
    assert '1 to 256 printable characters' in caught.value.reason
    assert len( str( caught.value ) ) < 1000


def test_120_module_implementation_needs_identifier( tmp_path ):
    ''' A tool implemented by its module's function of the same name must
        be named as a Python identifier; the error says what to give.
    '''
    ( tmp_path / 'local.toml' ).write_text(
        "[ensemble]\nname = 'tools'\n"
        f"implementation = '{MODULE}'\n\n"
        "[[invokers]]\nname = 'math.sum'\n"
        "[invokers.arguments]\ntype = 'object'\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_ensemble_descriptor( tmp_path / 'local.toml' )
    assert caught.value.keypath == 'invokers[0].implementation'
    assert 'not a Python identifier' in caught.value.reason


def test_130_server_names_accepted( ):
    ''' mcpServers keys may be registry names, dotted or spaced. '''
    names = [ 'io.github.owner/server', 'My Server', 'files.v2', 'größe' ]
    ensembles = descriptors.produce_server_descriptors( { 'mcpServers': {
        name: { 'command': 'x' } for name in names } } )
    assert [ ensemble.name for ensemble in ensembles ] == names


@pytest.mark.parametrize( 'name', [ '', ' ', 'time\n', 'a\x00', 'x' * 257 ] )
def test_140_server_names_refused( name ):
    ''' mcpServers keys which are no names are refused at their key. '''
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_server_descriptors( { 'mcpServers': {
            name: { 'command': 'x' } } } )
    assert caught.value.keypath == f"mcpServers.{name}"
    assert 'is not allowed' in caught.value.reason


def test_150_renames_to_real_names( tmp_path ):
    ''' A configuration entry may rename tools to dotted names; a rename to
        an unprintable name is refused.
    '''
    _write_local( tmp_path )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nsource = 'local.toml'\n"
        "rename = { 'math_sum' = 'math.product' }\n" )
    configuration = descriptors.produce_configuration(
        tmp_path / 'invocables.toml' )
    ensemble = descriptors.produce_ensemble( configuration.ensembles[ 0 ] )
    assert set( ensemble.invokers ) == { 'math.sum', 'math.product' }
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nsource = 'local.toml'\n"
        "rename = { 'math_sum' = \"math\\nproduct\" }\n" )
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( tmp_path / 'invocables.toml' )
    assert caught.value.keypath == 'ensembles[0].rename.math_sum'


def _write_configuration( folder ):
    ''' Writes a configuration: the named server under its registry name
        in an mcpServers file, again under another in a TOML descriptor,
        and a local ensemble.
    '''
    python, script = mcp_support.produce_server_command( 'named_server.py' )
    ( folder / 'servers.json' ).write_text( json.dumps( { 'mcpServers': {
        'io.github.owner/server': {
            'command': python, 'args': [ script ] } } } ) )
    ( folder / 'other.toml' ).write_text(
        "[ensemble]\nname = 'io.github.other/server'\n\n[mcp]\n"
        f"command = [ {json.dumps( python )}, {json.dumps( script )} ]\n"
        "startup_timeout = 30\n" )
    _write_local( folder )
    ( folder / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'servers.json'\n\n"
        "[[ensembles]]\nsource = 'other.toml'\n\n"
        "[[ensembles]]\nsource = 'local.toml'\n" )
    return folder / 'invocables.toml'


@pytest.mark.slow
@pytest.mark.asyncio
async def test_200_registry_named_servers_through_processors( tmp_path ):
    ''' Servers named as in a registry, from an mcpServers file and a TOML
        descriptor, offer dotted, OpenAPI and 128-character tool names
        beside local ones: every provider sees safe, unique names, and a
        call by each runs the right tool, its result naming the call.
    '''
    path = _write_configuration( tmp_path )
    async with descriptors.prepare_ensembles( path ) as ensembles:
        assert [ ensemble.name for ensemble in ensembles ] == [
            'io.github.owner/server', 'io.github.other/server',
            'io.github.owner/local' ]
        nomenclature = naming.produce_nomenclature( ensembles )
        calls = {
            ( 'io.github.owner/server', 'math.sum' ):
                ( { 'a': 1, 'b': 2 }, 'server sum 3' ),
            ( 'io.github.other/server', 'math.sum' ):
                ( { 'a': 2, 'b': 2 }, 'server sum 4' ),
            ( 'io.github.owner/server', 'get /users/{id}' ):
                ( { 'identifier': '7' }, 'server user 7' ),
            ( 'io.github.other/server', LONG_NAME ):
                ( { }, 'server long' ),
            ( 'io.github.owner/local', 'math.sum' ):
                ( { 'a': 3, 'b': 4 }, 'local sum 7' ),
            ( 'io.github.owner/local', 'math_sum' ):
                ( { 'a': 3, 'b': 4 }, 'local product 12' ),
        }
        for provider in PROVIDERS:
            processor = produce_processor( provider )
            text = json.dumps( processor.prepare_tools( ensembles ) )
            names = nomenclature.names
            assert len( set( names ) ) == len( names ) == 8
            for name in names:
                assert _rule.fullmatch( name )
                assert f'"{name}"' in text
            invocations = [
                invocables.InvocationCanister(
                    identifier = f"{provider}-{index}",
                    name = nomenclature.access_name( ensemble, tool ),
                    arguments = arguments )
                for index, ( ( ensemble, tool ), ( arguments, _ ) )
                in enumerate( calls.items( ) ) ]
            results = await processor.execute_invocations(
                invocations, ensembles )
            for index, ( result, ( _, expected ) ) in enumerate(
                zip( results, calls.values( ) )
            ):
                assert result.invocation_id == f"{provider}-{index}"
                assert not result.is_error( ), result.error
                assert result.as_text( ) == expected
