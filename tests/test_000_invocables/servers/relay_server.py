# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: asks and tells its client during a call.

    ``consult( topic )`` logs, reports progress, elicits (a required string
    ``view``) and samples, then returns what the client answered as JSON
    (an MCP error as ``error <code>: <message>``). ``block( )`` logs
    ``blocking`` and waits until cancelled; ``cancellations( )`` waits
    until a block was cancelled, then returns how many were. ``touch(
    uri )`` announces that a resource was updated, ``renew( )`` that the
    list of resources changed (resource ``test://relay/one``, whose text
    is ``one`` or the ``--label`` given). ``confide( )`` elicits and
    samples with the value of ``RELAY_SECRET`` in every text field. Flag: ``--http PORT`` serves
    streamable HTTP on 127.0.0.1 instead of stdio.
'''


import argparse
import asyncio
import json
import os

from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ModelHint, ModelPreferences, SamplingMessage, TextContent )


server = MCPServer( 'relay' )

_SCHEMA = {
    'type': 'object',
    'properties': { 'view': { 'type': 'string' } },
    'required': [ 'view' ],
}
_cancellations: list[ str ] = [ ]
_cancelled = asyncio.Event( )
_labels = [ 'one' ]


@server.tool( structured_output = False )
async def consult( topic: str, context: Context ) -> str:
    ''' Logs, reports progress, elicits and samples about a topic. '''
    await context.log(
        'info', { 'consulting': topic }, logger_name = 'relay' )
    await context.report_progress( 1, 3, f"asking about {topic}" )
    answers: dict[ str, object ] = { }
    try:
        elicited = await context.session.elicit_form(
            f"Your view on {topic}?", _SCHEMA,
            related_request_id = context.request_id )
        answers[ 'elicited' ] = elicited.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    except MCPError as error:
        answers[ 'elicited' ] = (
            f"error {error.error.code}: {error.error.message}" )
    await context.report_progress( 2, 3, 'sampling' )
    try:
        sampled = await context.session.create_message(
            [ SamplingMessage(
                role = 'user',
                content = TextContent(
                    type = 'text', text = f"Summarize {topic}." ) ) ],
            max_tokens = 50, system_prompt = 'Be brief.',
            related_request_id = context.request_id )
        answers[ 'sampled' ] = sampled.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    except MCPError as error:
        answers[ 'sampled' ] = (
            f"error {error.error.code}: {error.error.message}" )
    await context.report_progress( 3, 3, 'done' )
    return json.dumps( answers )


@server.tool( structured_output = False )
async def confide( context: Context ) -> str:
    ''' Elicits and samples with the secret in every text field. '''
    secret = os.environ[ 'RELAY_SECRET' ]
    schema = {
        'type': 'object', 'title': f"Form {secret}",
        'properties': { 'view': {
            'type': 'string', 'description': f"Not {secret}.",
            'default': secret } } }
    elicited = await context.session.elicit_form(
        f"Confirm {secret}?", schema,
        related_request_id = context.request_id )
    sampled = await context.session.create_message(
        [ SamplingMessage(
            role = 'user',
            content = TextContent( type = 'text', text = f"Use {secret}." ) )
        ],
        max_tokens = 50, system_prompt = f"Key {secret}.",
        stop_sequences = [ secret ], metadata = { 'key': secret },
        model_preferences = ModelPreferences(
            hints = [ ModelHint( name = secret ) ] ),
        related_request_id = context.request_id )
    return json.dumps( {
        'elicited': elicited.action,
        'sampled': sampled.model_dump( mode = 'json' )[ 'content' ] } )


@server.tool( structured_output = False )
async def block( context: Context ) -> str:
    ''' Logs, then waits until cancelled. '''
    await context.log( 'info', 'blocking' )
    try: await asyncio.Event( ).wait( )
    except asyncio.CancelledError:
        _cancellations.append( context.request_id )
        _cancelled.set( )
        raise
    return 'never'


@server.tool( structured_output = False )
async def cancellations( ) -> str:
    ''' Waits (10 s at most) until a block was cancelled; returns count. '''
    try: await asyncio.wait_for( _cancelled.wait( ), 10 )
    except TimeoutError: pass
    return str( len( _cancellations ) )


@server.resource( 'test://relay/one', name = 'one', mime_type = 'text/plain' )
def one( ) -> str:
    ''' A resource which changes. '''
    return _labels[ -1 ]


@server.tool( structured_output = False )
async def touch( uri: str, context: Context ) -> str:
    ''' Announces that a resource was updated. '''
    await context.session.send_resource_updated( uri )
    return 'touched'


@server.tool( structured_output = False )
async def renew( context: Context ) -> str:
    ''' Announces that the list of resources changed. '''
    await context.session.send_resource_list_changed( )
    return 'renewed'


def main( ) -> None:
    ''' Serves on stdio, or streamable HTTP with ``--http PORT``. '''
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--http', type = int )
    parser.add_argument( '--label', default = 'one' )
    arguments = parser.parse_args( )
    _labels.append( arguments.label )
    if arguments.http:
        server.settings.log_level = 'WARNING'
        server.run(
            'streamable-http', host = '127.0.0.1', port = arguments.http )
    else: server.run( )


if __name__ == '__main__': main( )
