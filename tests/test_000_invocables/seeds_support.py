# SPDX-License-Identifier: Apache-2.0

''' Implementations of the design documents' io tools, for descriptors.

    Named after the tools, as an ensemble-level ``implementation`` asks:
    ``test_000_invocables.seeds_support`` implements ``read_file`` and
    ``write_file``.
'''


from pathlib import Path


MODULE = 'test_000_invocables.seeds_support'


async def read_file( context, arguments ):
    ''' Returns text of file. '''
    return Path( arguments[ 'path' ] ).read_text(
        encoding = arguments.get( 'encoding', 'utf-8' ) )


async def write_file( context, arguments ):
    ''' Writes text to file. '''
    Path( arguments[ 'path' ] ).write_text( arguments[ 'content' ] )
    return 'written'
