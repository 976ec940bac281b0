# SPDX-License-Identifier: Apache-2.0

''' Runs of the official MCP conformance suite
    (``@modelcontextprotocol/conformance``, installed by
    ``.auxiliary/scripts/install-conformance`` with a Node 22 to run it),
    several at once.

    A run of one scenario spends most of its time waiting (on the
    processes it starts, on the delays of its scenario), so that the
    tests start the runs of a module together, a few at a time, and each
    test asserts on the result of its own run.
'''


import concurrent.futures
import shutil
import socket
import subprocess
import time

from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path

import pytest


PROJECT = Path( __file__ ).resolve( ).parents[ 2 ]
CACHE = PROJECT / '.auxiliary' / 'caches' / 'conformance' / 'node_modules'
SUITE = CACHE / '@modelcontextprotocol' / 'conformance' / 'dist' / 'index.js'
# The pre-release of MCP 2026-07-28 (0.2.0-alpha.12), in a folder of its own.
SUITE_2026 = (
    PROJECT / '.auxiliary' / 'caches' / 'conformance-2026' / 'node_modules'
    / '@modelcontextprotocol' / 'conformance' / 'dist' / 'index.js' )
# Runs at once: enough to fill the waits of two cores, few enough that a
# scenario's client or server is not starved past the suite's timeouts.
RUNS_MAXIMUM = 4

Completion = subprocess.CompletedProcess[ str ]


class Runs:
    ''' Runs of the suite by key, started on demand, at most
        ``RUNS_MAXIMUM`` at once, their results under a folder; each yields
        the completed process.
    '''

    def __init__( self, folder: Path, suite: Path = SUITE ):
        self.folder = folder
        self.suite = suite
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers = RUNS_MAXIMUM )
        self._runs: dict[
            Hashable, concurrent.futures.Future[ Completion ] ] = { }

    def start(
        self,
        key: Hashable,
        arguments: Sequence[ str ],
        environment: Mapping[ str, str ] | None = None,
    ) -> None:
        ''' Starts the suite with the arguments, unless started already. '''
        if key in self._runs: return
        self._runs[ key ] = self._executor.submit(
            run_suite, arguments, environment = environment,
            suite = self.suite )

    def access( self, key: Hashable ) -> Completion:
        ''' Returns the completed run, waiting for it. '''
        return self._runs[ key ].result( )

    def close( self ) -> None:
        ''' Cancels the runs not started; waits for the running ones. '''
        self._executor.shutdown( cancel_futures = True )


def locate_node( ) -> str:
    ''' Returns the Node 22 installed beside the suite (node-<os>-<arch>
        from the npm registry), else the machine's node (22 or later: the
        script installs none then).
    '''
    for node in sorted( CACHE.glob( 'node-*/bin/node' ) ): return str( node )
    found = shutil.which( 'node' )
    assert found, (
        "No Node to run the conformance suite: run "
        "'bash .auxiliary/scripts/install-conformance'." )
    return found


def run_suite(
    arguments: Sequence[ str ],
    timeout: float = 300,
    environment: Mapping[ str, str ] | None = None,
    suite: Path = SUITE,
) -> Completion:
    ''' Runs the suite's command line with the arguments (in the
        environment, else this one); returns the completed process, its
        output as text. The suite is the release, unless another is given.
    '''
    assert suite.exists( ), (
        "The conformance suite is not installed: run "
        "'bash .auxiliary/scripts/install-conformance'." )
    return subprocess.run(
        [ locate_node( ), str( suite ), *arguments ],
        capture_output = True, text = True, timeout = timeout,
        env = environment, check = False )


def select_items( request: pytest.FixtureRequest ) -> list[ pytest.Item ]:
    ''' Returns the selected tests of the requesting test's module. '''
    path = request.node.path
    return [ item for item in request.session.items if item.path == path ]


def wait_for_port(
    port: int, process: subprocess.Popen[ bytes ], log: Path
) -> None:
    ''' Waits until serve listens on port; fails if it exits or never does
        (one minute at most: a bound which proves no hang).
    '''
    deadline = time.monotonic( ) + 60
    while time.monotonic( ) < deadline:
        if process.poll( ) is not None:
            stderr = log.read_text( errors = 'replace' )
            pytest.fail( f"serve exited with {process.returncode}: {stderr}" )
        with socket.socket( ) as probe:
            if probe.connect_ex( ( '127.0.0.1', port ) ) == 0: return
        time.sleep( 0.05 )
    pytest.fail( f"serve did not open port {port} in 60 s." )
