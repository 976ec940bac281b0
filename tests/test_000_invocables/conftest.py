# SPDX-License-Identifier: Apache-2.0

''' How the tests spread over pytest-xdist's workers.

    The tests of one ``xdist_group`` share a costly fixture (a server, the
    runs of the MCP conformance suite started together): one worker runs
    them all, as under ``--dist loadgroup``, which replaces the default
    ``load`` (the ungrouped tests spread as under ``load``; the biggest
    groups start first, so that the workers finish together).
'''


import pytest

from xdist.workermanage import WorkerController


def pytest_configure( config: pytest.Config ) -> None:
    ''' Schedules by group, unless another distribution was asked for. '''
    if getattr( config.option, 'dist', 'no' ) == 'load':
        config.option.dist = 'loadgroup'
    workerinput = getattr( config, 'workerinput', None )
    if workerinput and workerinput.get( 'dist' ) == 'loadgroup':
        # What a worker reads from '--dist loadgroup' on the command line.
        config.option.loadgroup = True


@pytest.hookimpl( optionalhook = True )
def pytest_configure_node( node: WorkerController ) -> None:
    ''' Tells a worker the distribution of the controller. '''
    node.workerinput[ 'dist' ] = node.config.option.dist
