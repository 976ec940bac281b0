# SPDX-License-Identifier: Apache-2.0
''' Requests of an MCP server (elicitation, sampling, roots, logging) and its
    resources and prompts, against server-everything.

    Install the test servers first: ``bash .auxiliary/scripts/install-mcp-
    servers`` (or put ``mcp-server-everything`` on PATH).
'''

import asyncio
import logging
import shutil
import tempfile

from pathlib import Path

import invocables
import invocables.mcp

from invocables.mcp import (
    ElicitationActions,
    ElicitationRequest,
    ElicitationResponse,
    SamplingRequest,
    SamplingResponse,
)


_installed = (
    Path( __file__ ).resolve( ).parents[ 2 ] / '.auxiliary' / 'caches'
    / 'npm' / 'node_modules' / '.bin' / 'mcp-server-everything' )
PROGRAM = (
    str( _installed ) if _installed.exists( )
    else shutil.which( 'mcp-server-everything' ) or 'mcp-server-everything' )


async def elicit( request: ElicitationRequest ) -> ElicitationResponse:
    ''' Answers as a user would, for the fields this example knows. '''
    print( 'asked:', request.message )
    return ElicitationResponse(
        action = ElicitationActions.Accept,
        content = { 'name': 'Ada', 'check': True } )


async def sample( request: SamplingRequest ) -> SamplingResponse:
    ''' Stands in for a model (see produce_sampler for a real one). '''
    return SamplingResponse(
        text = f"{len( request.messages )} message(s) read.",
        model = 'stand-in' )


async def call( ensemble: invocables.mcp.ServerEnsemble, name: str ) -> str:
    ''' Calls tool directly; returns its first text. '''
    contents = await ensemble.invoke( name, { 'prompt': 'Hello' } )
    return getattr( contents[ 0 ], 'text', '' )


async def main( ) -> None:
    ''' Serves a server's requests, then reads its resources and prompts. '''
    logging.basicConfig( level = logging.WARNING )
    logging.getLogger( 'invocables.mcp.servers' ).setLevel( logging.INFO )
    with tempfile.TemporaryDirectory( ) as directory:
        everything = invocables.mcp.produce_ensemble(
            'everything', command = [ PROGRAM, 'stdio' ],
            elicitor = elicit, sampler = sample, roots = [ directory ] )
        async with everything:
            print( await call( everything, 'trigger-elicitation-request' ) )
            print( await call( everything, 'trigger-sampling-request' ) )
            await everything.configure_roots( [ directory, '/srv' ] )
            resources = await everything.survey_resources( )
            print( 'resources:', len( resources ) )
            content, = await everything.retrieve_resource(
                'demo://resource/dynamic/text/1' )
            print( content )
            prompts = await everything.survey_prompts( )
            print( 'prompts:', [ prompt.name for prompt in prompts ] )
            messages = await everything.retrieve_prompt(
                'args-prompt', { 'city': 'Lisbon' } )
            print( messages[ 0 ].content )


if __name__ == '__main__': asyncio.run( main( ) )
