# SPDX-License-Identifier: Apache-2.0

''' Small MCP server for tests: asks its client for input during calls.

    Speaks MCP 2026-07-28 alone over stdio (it refuses the legacy
    handshake, ``initialize``, as a server of that protocol alone does),
    unless run with ``--legacy``: then it speaks 2025-11-25 too, and asks
    by requests of its own during the call (``elicitation/create``,
    ``sampling/createMessage``, ``roots/list``) what it asks otherwise by
    ``input_required`` results (SEP-2322).

    ``confer( kinds, rounds, state )`` asks, in each of rounds rounds, for
    each kind of ``kinds`` (comma separated: ``elicit``, ``sample``,
    ``roots``), keyed ``<kind>-<round>``; with state, each
    ``input_required`` result carries a ``requestState`` (with characters
    to spoil); it returns, as JSON, the legs it saw (the state and the keys
    of the answers each carried) and the answers. ``endless( )`` asks for
    ever (by requests: twelve times); ``stall( )`` asks once, then waits a
    minute; ``busy( )`` answers with a state alone, then with the legs it
    saw. The resource
    ``inputs://note/{topic}`` and the prompt ``note`` ask for a word first.
'''


import json
import sys

from typing import Any

import anyio

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    ErrorData,
    InputRequiredResult,
    JSONRPCError,
    ListRootsRequest,
    SamplingMessage,
    TextContent,
)


server = MCPServer( 'inputs' )
_LEGS: list[ dict[ str, object ] ] = [ ]
_SCHEMA = {
    'type': 'object',
    'properties': { 'word': { 'type': 'string' } },
    'required': [ 'word' ] }


def _is_modern( context: Context ) -> bool:
    return context.protocol_version in MODERN_PROTOCOL_VERSIONS


def _produce_request( kind: str, key: str ) -> Any:
    if kind == 'elicit':
        return ElicitRequest( params = ElicitRequestFormParams(
            message = f"Say a word ({key}).",
            requested_schema = _SCHEMA ) )
    if kind == 'sample':
        return CreateMessageRequest( params = CreateMessageRequestParams(
            messages = [ SamplingMessage(
                role = 'user', content = TextContent(
                    type = 'text', text = f"Answer {key}." ) ) ],
            max_tokens = 20 ) )
    return ListRootsRequest( )


def _summarize( kind: str, answer: object ) -> object:
    dump = getattr( answer, 'model_dump', None )
    if dump is None: return answer
    data = dump( by_alias = True, mode = 'json', exclude_none = True )
    if kind == 'elicit': return data.get( 'content' )
    if kind == 'sample': return data.get( 'content', { } ).get( 'text' )
    return [ root[ 'uri' ] for root in data.get( 'roots', [ ] ) ]


async def _ask_legacy(
    context: Context, kind: str, key: str
) -> object:
    session = context.session
    if kind == 'elicit':
        return await session.elicit_form(
            f"Say a word ({key}).", _SCHEMA,
            related_request_id = context.request_id )
    if kind == 'sample':
        return await session.create_message(
            [ SamplingMessage(
                role = 'user', content = TextContent(
                    type = 'text', text = f"Answer {key}." ) ) ],
            max_tokens = 20, related_request_id = context.request_id )
    return await session.list_roots( )


@server.tool( structured_output = False )
async def confer(
    kinds: str, rounds: int, state: bool, context: Context
) -> str | InputRequiredResult:
    ''' Asks for kinds of input, rounds times; returns what it saw. '''
    names = kinds.split( ',' )
    if not _is_modern( context ):
        answers: dict[ str, object ] = { }
        for round_ in range( 1, rounds + 1 ):
            for kind in names:
                key = f"{kind}-{round_}"
                answers[ key ] = _summarize(
                    kind, await _ask_legacy( context, kind, key ) )
        return json.dumps( { 'legs': [ ], 'answers': answers } )
    responses = context.input_responses or { }
    _LEGS.append( {
        'state': context.request_state,
        'keys': sorted( responses ) } )
    done = max(
        ( int( key.rsplit( '-', 1 )[ 1 ] ) for key in responses ),
        default = 0 )
    answers = {
        key: _summarize( key.split( '-' )[ 0 ], answer )
        for key, answer in responses.items( ) }
    if done < rounds:
        round_ = done + 1
        requests = {
            f"{kind}-{round_}": _produce_request( kind, f"{kind}-{round_}" )
            for kind in names }
        return InputRequiredResult(
            input_requests = requests,
            request_state = (
                f" round {round_} \"é\" \\n " if state else None ) )
    legs = list( _LEGS )
    _LEGS.clear( )
    return json.dumps( { 'legs': legs, 'answers': answers } )


@server.tool( structured_output = False )
async def endless( context: Context ) -> str | InputRequiredResult:
    ''' Asks for a word, for ever (twelve times, legacy). '''
    if not _is_modern( context ):
        for _ in range( 12 ): await _ask_legacy( context, 'elicit', 'e' )
        return 'asked 12 times'
    return InputRequiredResult(
        input_requests = {
            'elicit': _produce_request( 'elicit', 'e' ) },
        request_state = 'again' )


@server.tool( structured_output = False )
async def stall( context: Context ) -> str | InputRequiredResult:
    ''' Asks for a word once, then waits a minute. '''
    if not _is_modern( context ):
        await _ask_legacy( context, 'elicit', 's' )
        await anyio.sleep( 60 )
        return 'late'
    if not context.input_responses:
        return InputRequiredResult( input_requests = {
            'elicit': _produce_request( 'elicit', 's' ) } )
    await anyio.sleep( 60 )
    return 'late'


@server.tool( structured_output = False )
async def busy( context: Context ) -> str | InputRequiredResult:
    ''' Answers with a state alone first (busy), then with the states it
        got, as JSON. '''
    if not _is_modern( context ): return json.dumps( [ ] )
    _LEGS.append( {
        'state': context.request_state,
        'keys': sorted( context.input_responses or { } ) } )
    if context.request_state is None:
        return InputRequiredResult( request_state = 'busy' )
    legs = list( _LEGS )
    _LEGS.clear( )
    return json.dumps( legs )


@server.resource( 'inputs://note/{topic}' )
async def note( topic: str, context: Context ) -> str | InputRequiredResult:
    ''' A note which names the word of the user. '''
    return await _note( context )


@server.prompt( 'note' )
async def note_prompt( context: Context ) -> str | InputRequiredResult:
    ''' A prompt which names the word of the user. '''
    return await _note( context )


async def _note( context: Context ) -> str | InputRequiredResult:
    if not _is_modern( context ):
        answer = await _ask_legacy( context, 'elicit', 'note' )
        return f"note {_summarize( 'elicit', answer )}"
    responses = context.input_responses or { }
    if 'note' not in responses:
        return InputRequiredResult(
            input_requests = {
                'note': _produce_request( 'elicit', 'note' ) },
            request_state = 'note-state' )
    return f"note {_summarize( 'elicit', responses[ 'note' ] )}"


async def _serve_modern( ) -> None:
    ''' Serves over stdio, refusing the legacy handshake. '''
    lowlevel: Any = getattr( server, '_lowlevel_server' )
    async with stdio_server( ) as ( reading, writing ):
        sending, receiving = anyio.create_memory_object_stream[
            SessionMessage | Exception ]( 0 )

        async def pump( ) -> None:
            async with sending:
                async for item in reading:
                    message = getattr( item, 'message', None )
                    if getattr( message, 'method', None ) == 'initialize':
                        await writing.send( SessionMessage( JSONRPCError(
                            jsonrpc = '2.0',
                            id = message.id,
                            error = ErrorData(
                                code = -32022,
                                message = 'Unsupported protocol version.',
                                data = {
                                    'supported': [ '2026-07-28' ],
                                    'requested': '2025-11-25' } ) ) ) )
                        continue
                    await sending.send( item )

        async with anyio.create_task_group( ) as group:
            group.start_soon( pump )
            await lowlevel.run(
                receiving, writing,
                lowlevel.create_initialization_options( ) )
            group.cancel_scope.cancel( )


if __name__ == '__main__':
    if '--legacy' in sys.argv: server.run( )
    else: anyio.run( _serve_modern )
