# SPDX-License-Identifier: Apache-2.0

''' Calls of the built-in io ensemble over roots, for the tests of the
    io tools.
'''


import typing

from pathlib import Path

import invocables
from invocables import descriptors


async def prepare(
    *roots: tuple[ Path, bool ], **configuration: object
) -> typing.Sequence[ invocables.Ensemble ]:
    ''' Returns io ensembles over roots: ( path, writable ). '''
    entry: dict[ str, object ] = { 'builtin': 'io' }
    if configuration: entry[ 'configuration' ] = configuration
    return await descriptors.prepare_ensembles( {
        'ensembles': [ entry ],
        'roots': [
            { 'path': str( path ), 'writable': writable }
            for path, writable in roots ],
    }, connect = True )


async def invoke(
    ensembles: typing.Sequence[ invocables.Ensemble ],
    name: str,
    **arguments: object,
) -> invocables.ResultCanister:
    ''' Runs one call under the default (fail-fast) policy. '''
    invocation = invocables.InvocationCanister(
        identifier = 'call', name = name, arguments = arguments )
    results = await invocables.execute_invocations( [ invocation ], ensembles )
    return results[ 0 ]


def assert_refused(
    result: invocables.ResultCanister, fragment: str = ''
) -> None:
    ''' Asserts that result is a refusal whose message holds fragment. '''
    assert result.is_error( ), result
    error = result.error
    assert isinstance( error, invocables.Fault ), result
    assert error.genus is invocables.FaultGenera.Refusal, result
    assert fragment in error.message, error.message
