# SPDX-License-Identifier: Apache-2.0

''' The mcp SDK's majors 1 and 2 behind one compatibility module. '''


import importlib.metadata
import inspect

import invocables.mcp

from invocables.mcp import _sdk as sdk


# The public surface of invocables.mcp, the same on both majors.
_NAMES = (
    'BearerAuthorization', 'CONNECT_TIMEOUT_DEFAULT',
    'ClientCredentialsAuthorization', 'CodeAuthorization',
    'DEBOUNCE_DEFAULT', 'ElicitationActions', 'ElicitationRequest',
    'ElicitationResponse', 'Elicitor', 'FileTokenStorage',
    'LIST_TIMEOUT_DEFAULT', 'MemoryTokenStorage', 'Omission',
    'Progress', 'PromptArgument', 'PromptDescription', 'PromptMessage',
    'RESULT_LIMIT_DEFAULT', 'Reporter', 'ResourceDescription',
    'ResourceTemplateDescription', 'Sampler', 'SamplingLimits',
    'SamplingMessage', 'SamplingRequest', 'SamplingResponse',
    'ServerEnsemble', 'ServerOptions', 'ServerParameters',
    'TIMEOUT_DEFAULT', 'TokenStorage', 'ToolDescription', 'Transports',
    'produce_ensemble', 'produce_loopback_authorization',
    'produce_sampler',
)
_SURVEYED = (
    'survey_invokers', 'survey_omissions', 'survey_tools',
    'survey_resources', 'survey_resource_templates', 'survey_prompts',
    'retrieve_resource', 'retrieve_prompt', 'configure_roots',
    'configure_logging', 'connect', 'disconnect', 'invoke_tool',
)


def test_100_major_detected( ):
    ''' Detected major is the installed distribution's. '''
    installed = importlib.metadata.version( 'mcp' )
    assert sdk.MAJOR == int( installed.split( '.' )[ 0 ] )
    assert sdk.MAJOR in ( 1, 2 )


def test_110_error_class( ):
    ''' Error class is the SDK's, and carries code and message. '''
    name = 'MCPError' if sdk.MAJOR == 2 else 'McpError'
    assert sdk.Error.__name__ == name
    error = sdk.produce_error( -32602, 'Unknown tool.' )
    assert isinstance( error, sdk.Error )
    assert error.error.code == -32602
    assert error.error.message == 'Unknown tool.'


def test_120_http_library( ):
    ''' HTTP client library is the one the SDK's transports use. '''
    name = 'httpx2' if sdk.MAJOR == 2 else 'httpx'
    assert sdk.http.__name__ == name
    assert sdk.HTTP_LOGGERS[ 0 ] == name


def test_200_fields_by_snake_names( ):
    ''' Models are built and read by snake_case names on both majors. '''
    tool = sdk.produce_model(
        sdk.types.Tool, name = 'echo',
        input_schema = { 'type': 'object' },
        output_schema = { 'type': 'object' } )
    assert sdk.access_field( tool, 'input_schema' ) == { 'type': 'object' }
    assert sdk.access_field( tool, 'output_schema' ) == { 'type': 'object' }
    wire = tool.model_dump( by_alias = True, exclude_none = True )
    assert wire[ 'inputSchema' ] == { 'type': 'object' }
    assert sdk.access_field( tool, 'no_such_field', None ) is None


def test_210_messages_wrapped_and_unwrapped( ):
    ''' A JSON-RPC line parses into what session messages hold. '''
    line = '{"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}'
    for parse in ( False, True ):
        message = sdk.validate_message( line, parse = parse )
        inner = sdk.access_message( message )
        assert isinstance( inner, sdk.types.JSONRPCResponse )
        assert inner.id == 1


def test_300_public_surface( ):
    ''' Public names of invocables.mcp are there on both majors. '''
    missing = [
        name for name in _NAMES if not hasattr( invocables.mcp, name ) ]
    assert missing == [ ]
    ensemble = invocables.mcp.ServerEnsemble
    absent = [ name for name in _SURVEYED if not hasattr( ensemble, name ) ]
    assert absent == [ ]


def test_310_signature_of_produce_ensemble( ):
    ''' produce_ensemble takes the same parameters on both majors. '''
    parameters = inspect.signature(
        invocables.mcp.produce_ensemble ).parameters
    for name in (
        'command', 'url', 'headers', 'transport', 'timeout', 'elicitor',
        'sampler', 'roots', 'authorization', 'log_level', 'result_limit',
    ): assert name in parameters
