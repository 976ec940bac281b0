# SPDX-License-Identifier: Apache-2.0

''' A bound on the bytes of a sandbox's private folder (``disk_maximum``).

    On Linux, the private folder is then a file system in memory of that
    size inside the sandbox (bubblewrap's ``--size`` and ``--tmpfs``): the
    server's writes beyond it fail inside the server, what it wrote never
    reaches the host's folder, and nothing is left when it ends. A value
    which is no size is refused when the sandbox is made.
'''


import json
import os

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import invocables
import invocables.mcp

from invocables import descriptors, exceptions
from invocables.descriptors import servers
from invocables.mcp import sandbox as sandboxes

from . import mcp_support, sandbox_support


_MAXIMUM = 1 << 20


def _produce_escape( **options: Any ) -> invocables.mcp.ServerEnsemble:
    return invocables.mcp.produce_ensemble(
        'disk',
        command = mcp_support.produce_server_command( 'escape_server.py' ),
        sandbox = invocables.mcp.Sandbox( **options ) )


def test_100_record( ):
    ''' The bound is kept in bytes, shown by ``as_dictionary`` (only when
        given) and read from a mapping; ``None`` is no bound.
    '''
    sandbox = sandboxes.validate_sandbox( { 'disk_maximum': _MAXIMUM } )
    assert isinstance( sandbox, invocables.mcp.Sandbox )
    assert sandbox.disk_maximum == _MAXIMUM
    assert sandbox.as_dictionary( )[ 'disk_maximum' ] == _MAXIMUM
    assert 'disk_maximum' not in invocables.mcp.Sandbox( ).as_dictionary( )
    nothing: Any = None
    unbounded = invocables.mcp.Sandbox( disk_maximum = nothing )
    assert unbounded == invocables.mcp.Sandbox( )


def test_110_refusals( ):
    ''' What is no whole number of bytes, is below 64 KiB or beyond an
        exbibyte (more than any machine's memory), is refused with the
        library's configuration error, naming the key.
    '''
    values: tuple[ Any, ... ] = (
        0, -1, 1024, True, '1M', 1.5e6, 10 ** 400, ( 1 << 60 ) + 1 )
    for value in values:
        with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
            invocables.mcp.Sandbox( disk_maximum = value )
        assert "'disk_maximum'" in str( caught.value ), value
    with pytest.raises( exceptions.ConfigurationInvalidity ) as caught:
        sandboxes.validate_sandbox( { 'disk_maximun': _MAXIMUM } )
    assert 'disk_maximum' in str( caught.value )


def test_130_descriptors( tmp_path: Path ):
    ''' ``disk_maximum`` of a descriptor's or of mcpServers JSON's
        ``sandbox`` bounds the ensemble's sandbox, and is described back as
        read; a value which is no integer is a descriptor error, one which
        is no size the sandbox's configuration error.
    '''
    path = tmp_path / 'server.toml'
    path.write_text(
        "[ensemble]\nname = 'files'\n\n[mcp]\n"
        "command = [ 'mcp-server-filesystem' ]\n"
        f"sandbox = {{ disk_maximum = {_MAXIMUM} }}\n" )
    ensemble = descriptors.produce_ensemble(
        descriptors.produce_ensemble_descriptor( path ) )
    assert isinstance( ensemble, invocables.mcp.ServerEnsemble )
    assert isinstance( ensemble.options.sandbox, invocables.mcp.Sandbox )
    assert ensemble.options.sandbox.disk_maximum == _MAXIMUM
    server = servers.access_server_descriptor( ensemble )
    assert isinstance( server, descriptors.ServerDescriptor )
    assert isinstance( server.sandbox, Mapping )
    assert server.sandbox[ 'disk_maximum' ] == _MAXIMUM
    ( tmp_path / 'mcp.json' ).write_text( json.dumps( { 'mcpServers': {
        'time': {
            'command': 'mcp-server-time',
            'sandbox': { 'disk_maximum': _MAXIMUM } } } } ) )
    ( tmp_path / 'invocables.toml' ).write_text(
        "[[ensembles]]\nmcp_servers = 'mcp.json'\n" )
    configuration = descriptors.produce_configuration(
        tmp_path / 'invocables.toml' )
    ( imported, ) = configuration.ensembles
    ensemble = descriptors.produce_ensemble( imported )
    assert isinstance( ensemble, invocables.mcp.ServerEnsemble )
    assert isinstance( ensemble.options.sandbox, invocables.mcp.Sandbox )
    assert ensemble.options.sandbox.disk_maximum == _MAXIMUM
    for value, error in (
        ( "'1M'", exceptions.DescriptorInvalidity ),
        ( 'true', exceptions.DescriptorInvalidity ),
        ( '1024', exceptions.ConfigurationInvalidity ),
    ):
        path.write_text(
            "[ensemble]\nname = 'files'\n\n[mcp]\n"
            "command = [ 'mcp-server-filesystem' ]\n"
            f"sandbox = {{ disk_maximum = {value} }}\n" )
        with pytest.raises( error ) as caught:
            descriptors.produce_ensemble(
                descriptors.produce_ensemble_descriptor( path ) )
        assert 'disk_maximum' in str( caught.value ), value


def test_120_bwrap_arguments( tmp_path: Path ):
    ''' With a bound, the private folder is a tmpfs of that size, mode
        0700, mounted before what lies inside it; without, a bind.
    '''
    folder = str( tmp_path / 'private' )
    inner = os.path.join( folder, '.proxy' )
    options = sandboxes.produce_bwrap_arguments(
        invocables.mcp.Sandbox( disk_maximum = _MAXIMUM ), ( inner, ),
        folder, str( tmp_path ) )
    index = options.index( '--tmpfs' )
    assert options[ index - 4 : index + 2 ] == [
        '--perms', '0700', '--size', str( _MAXIMUM ), '--tmpfs', folder ]
    assert index < options.index( inner )
    assert folder not in options[ : index ]
    options = sandboxes.produce_bwrap_arguments(
        invocables.mcp.Sandbox( ), ( ), folder, str( tmp_path ) )
    assert '--tmpfs' not in options
    assert options[ options.index( folder ) - 1 ] == '--bind'


@pytest.mark.slow
@pytest.mark.asyncio
async def test_200_writes_bounded( ):
    ''' A server writes its private folder up to the bound, and no byte
        beyond: the write which would pass it fails in the server (no
        space left). Its files never reach the host's folder, which is
        gone once the ensemble has disconnected.
    '''
    ensemble = _produce_escape( disk_maximum = _MAXIMUM )
    async with ensemble:
        folder = await sandbox_support.access_private_folder( ensemble )
        small = os.path.join( folder, 'small.txt' )
        answer = await sandbox_support.retrieve_text(
            ensemble, 'write_file', path = small, text = 'x' * ( 1 << 19 ) )
        assert answer.startswith( 'ok: ' ), answer
        answer = await sandbox_support.retrieve_text(
            ensemble, 'write_file', path = os.path.join( folder, 'big.txt' ),
            text = 'x' * _MAXIMUM )
        assert answer.startswith( 'refused: ' ), answer
        assert 'No space left' in answer
        answer = await sandbox_support.retrieve_text(
            ensemble, 'read_file', path = small )
        assert answer.startswith( 'ok: xxxx' ), answer[ : 200 ]
        assert not os.path.lexists( small )
    assert not os.path.lexists( folder )


@pytest.mark.slow
@pytest.mark.asyncio
async def test_210_proxy_inside_bound( ):
    ''' With a list of hosts too, the proxy's socket is reached inside the
        bounded folder: the server's environment names the proxy.
    '''
    ensemble = _produce_escape(
        disk_maximum = _MAXIMUM, network = [ 'example.com' ] )
    async with ensemble:
        folder = await sandbox_support.access_private_folder( ensemble )
        answer = await sandbox_support.retrieve_text(
            ensemble, 'list_folder', path = folder )
        assert answer == 'ok: .proxy'
        environment = await sandbox_support.retrieve_text(
            ensemble, 'read_environment' )
        assert 'HTTPS_PROXY=http://127.0.0.1:' in environment
    assert not os.path.lexists( folder )
