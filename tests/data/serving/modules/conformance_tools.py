# SPDX-License-Identifier: Apache-2.0

''' Tools which the server scenarios of the official MCP conformance suite
    call, written with the library's public API (local tools served by
    ``invocables serve``).
'''


import asyncio
import base64

import invocables


# A 1x1 red pixel (PNG) and a short silent WAV, as the suite suggests.
_PNG = base64.b64decode(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQI'
    'AX8jx0gAAAABJRU5ErkJggg==' )
_WAV = base64.b64decode(
    'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=' )


def test_simple_text( context, arguments ):
    ''' Returns simple text. '''
    return 'This is a simple text response for testing.'


def test_image_content( context, arguments ):
    ''' Returns an image. '''
    return invocables.ImageContent( data = _PNG, media_type = 'image/png' )


def test_audio_content( context, arguments ):
    ''' Returns audio. '''
    return invocables.AudioContent( data = _WAV, media_type = 'audio/wav' )


def test_embedded_resource( context, arguments ):
    ''' Returns an embedded resource. '''
    return invocables.ResourceContent(
        uri = 'test://embedded-resource', media_type = 'text/plain',
        text = 'This is an embedded resource content.' )


def test_multiple_content_types( context, arguments ):
    ''' Returns text, an image and a resource. '''
    return [
        invocables.TextContent( text = 'Multiple content types test:' ),
        invocables.ImageContent( data = _PNG, media_type = 'image/png' ),
        invocables.ResourceContent(
            uri = 'test://mixed-content-resource',
            media_type = 'application/json',
            text = '{"test": "data", "value": 123}' ),
    ]


def test_error_handling( context, arguments ):
    ''' Fails: an error result. '''
    raise RuntimeError( 'This tool intentionally returns an error for '
        'testing' )


def json_schema_2020_12_tool( context, arguments ):
    ''' Accepts a name and an address (JSON Schema 2020-12). '''
    return f"Received: {arguments}"


def test_custom_header( context, arguments ):
    ''' Echoes the region, which the client mirrors into a header. '''
    return f"Region: {arguments[ 'region' ]}"


async def test_tool_with_logging( context, arguments ):
    ''' Logs three messages to the caller. '''
    await context.log( 'info', 'Tool execution started' )
    await asyncio.sleep( 0.05 )
    await context.log( 'info', 'Tool processing data' )
    await asyncio.sleep( 0.05 )
    await context.log( 'info', 'Tool execution completed' )
    return 'Logging completed.'


async def test_tool_with_progress( context, arguments ):
    ''' Reports progress 0, 50 and 100 of 100. '''
    for progress in ( 0, 50, 100 ):
        await context.report_progress( progress, 100 )
        if progress < 100: await asyncio.sleep( 0.05 )
    return 'Progress completed.'


async def test_sampling( context, arguments ):
    ''' Asks the caller's model; returns its answer. '''
    result = await context.sample(
        [ arguments[ 'prompt' ] ], max_tokens = 100 )
    return f"LLM response: {result.content.text}"


async def test_elicitation( context, arguments ):
    ''' Asks the caller's user for a name and an address. '''
    result = await context.elicit( arguments[ 'message' ], {
        'type': 'object',
        'properties': {
            'username': {
                'type': 'string', 'description': "User's response" },
            'email': {
                'type': 'string', 'description': "User's email address" },
        },
        'required': [ 'username', 'email' ],
    } )
    return f"User response: action={result.action}, content={result.content}"


async def test_elicitation_sep1034_defaults( context, arguments ):
    ''' Asks with defaults for every primitive type. '''
    result = await context.elicit( 'Please review and update the form.', {
        'type': 'object',
        'properties': {
            'name': { 'type': 'string', 'default': 'John Doe' },
            'age': { 'type': 'integer', 'default': 30 },
            'score': { 'type': 'number', 'default': 95.5 },
            'status': {
                'type': 'string',
                'enum': [ 'active', 'inactive', 'pending' ],
                'default': 'active' },
            'verified': { 'type': 'boolean', 'default': True },
        },
    } )
    return (
        f"Elicitation completed: action={result.action}, "
        f"content={result.content}" )


async def test_elicitation_sep1330_enums( context, arguments ):
    ''' Asks with the five kinds of enumerations. '''
    result = await context.elicit( 'Please choose.', {
        'type': 'object',
        'properties': {
            'untitledSingle': {
                'type': 'string',
                'enum': [ 'option1', 'option2', 'option3' ] },
            'titledSingle': {
                'type': 'string',
                'oneOf': [
                    { 'const': 'value1', 'title': 'First Option' },
                    { 'const': 'value2', 'title': 'Second Option' },
                    { 'const': 'value3', 'title': 'Third Option' } ] },
            'legacyEnum': {
                'type': 'string', 'enum': [ 'opt1', 'opt2', 'opt3' ],
                'enumNames': [
                    'Option One', 'Option Two', 'Option Three' ] },
            'untitledMulti': {
                'type': 'array',
                'items': {
                    'type': 'string',
                    'enum': [ 'option1', 'option2', 'option3' ] } },
            'titledMulti': {
                'type': 'array',
                'items': { 'anyOf': [
                    { 'const': 'value1', 'title': 'First Choice' },
                    { 'const': 'value2', 'title': 'Second Choice' },
                    { 'const': 'value3', 'title': 'Third Choice' } ] } },
        },
    } )
    return (
        f"Elicitation completed: action={result.action}, "
        f"content={result.content}" )


# Tools of the tasks scenarios (MCP 2026-07-28, the tasks extension): their
# task support is declared in conformance.toml (annotation task_support).


def greet( context, arguments ):
    ''' Greets, at once (never a task). '''
    return f"Hello, {arguments.get( 'name', 'World' )}!"


async def slow_compute( context, arguments ):
    ''' Sleeps the given seconds, then answers (a task's cancellation
        cancels the sleep).
    '''
    seconds = arguments.get( 'seconds', 1 )
    label = arguments.get( 'label', '' )
    await asyncio.sleep( seconds )
    return f"Computed {label} after {seconds} s."


async def failing_job( context, arguments ):
    ''' Fails after a second: an error result. '''
    await asyncio.sleep( 1 )
    raise RuntimeError( 'The job failed, as it always does.' )


async def protocol_error_job( context, arguments ):
    ''' Fails at once, as a broken tool does. '''
    raise RuntimeError( 'The job broke.' )


async def confirm_delete( context, arguments ):
    ''' Asks the caller's user to confirm the deletion of a file. '''
    filename = arguments.get( 'filename', 'a file' )
    result = await context.elicit( f"Delete {filename}?", {
        'type': 'object',
        'properties': { 'confirm': { 'type': 'boolean' } },
        'required': [ 'confirm' ],
    } )
    return f"Deletion of {filename}: action={result.action}"


async def multi_input( context, arguments ):
    ''' Asks the caller's user two questions at once. '''
    schema = {
        'type': 'object', 'properties': { 'answer': { 'type': 'string' } } }
    first, second = await asyncio.gather(
        context.elicit( 'First question?', schema ),
        context.elicit( 'Second question?', schema ) )
    return f"Answers: {first.content}, {second.content}"


async def test_tool_with_task( context, arguments ):
    ''' Asks the caller's user's name (in rounds, before its call becomes a
        task), then greets in a task.
    '''
    result = await context.elicit(
        'What is your name?', _NAME_SCHEMA, key = 'user_name' )
    await asyncio.sleep( 0.1 ) # a task's work
    return f"Hello, {( result.content or { } ).get( 'name' )}!"


# Tools of the input_required scenarios (MCP 2026-07-28, SEP-2322): they
# ask as every tool does; under serve, their requests become the input
# requests of their calls' results, under the keys they choose.

_NAME_SCHEMA = {
    'type': 'object',
    'properties': { 'name': { 'type': 'string' } },
    'required': [ 'name' ],
}
_CONFIRM_SCHEMA = {
    'type': 'object',
    'properties': { 'ok': { 'type': 'boolean' } },
    'required': [ 'ok' ],
}


async def test_input_required_result_elicitation( context, arguments ):
    ''' Asks the caller's user's name; greets. '''
    result = await context.elicit(
        'What is your name?', _NAME_SCHEMA, key = 'user_name' )
    return f"Hello, {( result.content or { } ).get( 'name' )}!"


async def test_input_required_result_sampling( context, arguments ):
    ''' Asks the caller's model for the capital of France. '''
    result = await context.sample(
        [ 'What is the capital of France?' ], max_tokens = 100,
        key = 'capital_question' )
    return f"LLM response: {result.content.text}"


async def test_input_required_result_list_roots( context, arguments ):
    ''' Asks the caller for its roots; lists them. '''
    result = await context.survey_roots( key = 'client_roots' )
    uris = ', '.join( str( root.uri ) for root in result.roots )
    return f"Roots: {uris}"


async def test_input_required_result_request_state( context, arguments ):
    ''' Asks the caller's user to confirm; its answer resumes this very
        call (the state which the client echoed, checked).
    '''
    result = await context.elicit(
        'Please confirm', _CONFIRM_SCHEMA, key = 'confirm' )
    return f"state-ok: action={result.action}, content={result.content}"


async def test_input_required_result_multiple_inputs( context, arguments ):
    ''' Asks the caller's user, model and roots at once. '''
    name, greeting, roots = await asyncio.gather(
        context.elicit(
            'What is your name?', _NAME_SCHEMA, key = 'user_name' ),
        context.sample(
            [ 'Generate a greeting' ], max_tokens = 50, key = 'greeting' ),
        context.survey_roots( key = 'client_roots' ) )
    return (
        f"Name: {( name.content or { } ).get( 'name' )}; "
        f"greeting: {greeting.content.text}; "
        f"roots: {len( roots.roots )}" )


async def test_input_required_result_multi_round( context, arguments ):
    ''' Asks the caller's user two questions, one after the other. '''
    name = await context.elicit(
        'Step 1: What is your name?', _NAME_SCHEMA, key = 'step1' )
    color = await context.elicit(
        'Step 2: What is your favorite color?', {
            'type': 'object',
            'properties': { 'color': { 'type': 'string' } },
            'required': [ 'color' ],
        }, key = 'step2' )
    return (
        f"Name: {( name.content or { } ).get( 'name' )}, "
        f"color: {( color.content or { } ).get( 'color' )}" )


async def test_input_required_result_tampered_state( context, arguments ):
    ''' Asks the caller's user to confirm (a state which a tampering
        client breaks).
    '''
    result = await context.elicit(
        'Please confirm', _CONFIRM_SCHEMA, key = 'confirm' )
    return f"Confirmed: action={result.action}"


async def test_input_required_result_capabilities( context, arguments ):
    ''' Asks the caller's user if it can (its client declared
        elicitation), then its model.
    '''
    try:
        await context.elicit(
            'What is your name?', _NAME_SCHEMA, key = 'user_name' )
    except Exception: # noqa: BLE001, S110
        pass # the client cannot: not asked
    result = await context.sample(
        [ 'Say hello.' ], max_tokens = 50, key = 'hello' )
    return f"LLM response: {result.content.text}"


# Tools of the stateless scenario (MCP 2026-07-28, SEP-2575).

async def test_missing_capability( context, arguments ):
    ''' Needs the caller's model: a client which did not declare sampling
        gets the error of a missing capability.
    '''
    result = await context.sample( [ 'Say hello.' ], max_tokens = 20 )
    return f"LLM response: {result.content.text}"


async def test_streaming_elicitation( context, arguments ):
    ''' Asks the caller's user (an input request, never a request of the
        server on the call's stream).
    '''
    result = await context.elicit( 'What is your name?', _NAME_SCHEMA )
    return f"Hello, {( result.content or { } ).get( 'name' )}!"


async def test_logging_tool( context, arguments ):
    ''' Logs, which reaches only a client which asked for a level. '''
    await context.log( 'info', 'A message of the logging tool.' )
    return 'Logged.'
