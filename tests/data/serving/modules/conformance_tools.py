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
