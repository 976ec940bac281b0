# SPDX-License-Identifier: Apache-2.0

''' Telemetry: GenAI spans and metrics of tool executions (OpenTelemetry). '''


import asyncio
import json

import pytest

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

import invocables

from invocables.telemetry import Settings, configure_telemetry

from .mcp_support import produce_server_command


def _call( identifier, name, arguments = None ):
    return invocables.InvocationCanister(
        identifier = identifier, name = name,
        arguments = { } if arguments is None else arguments )


async def echo( text: str, token: str = '' ) -> str:
    ''' Echoes text. '''
    return text


async def nap( seconds: float ) -> str:
    ''' Sleeps. '''
    await asyncio.sleep( seconds )
    return 'rested'


def boom( ) -> str:
    ''' Raises. '''
    raise RuntimeError( 'boom' )


class _Recording:

    def __init__( self, content_recorded: bool = False ):
        self.spans = InMemorySpanExporter( )
        self.metrics = InMemoryMetricReader( )
        self.tracer_provider = TracerProvider( )
        self.tracer_provider.add_span_processor(
            SimpleSpanProcessor( self.spans ) )
        self.meter_provider = MeterProvider(
            metric_readers = [ self.metrics ] )
        configure_telemetry( Settings(
            tracer_provider = self.tracer_provider,
            meter_provider = self.meter_provider,
            content_recorded = content_recorded ) )

    def survey_points( self ) -> dict[ str, list[ object ] ]:
        data = self.metrics.get_metrics_data( )
        points: dict[ str, list[ object ] ] = { }
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    points[ metric.name ] = list( metric.data.data_points )
        return points


@pytest.fixture
def recording( ):
    recording = _Recording( )
    yield recording
    configure_telemetry( )


@pytest.mark.asyncio
async def test_100_span_per_execution( recording ):
    ''' Each tool execution has an execute_tool span with GenAI names. '''
    ensemble = invocables.produce_ensemble( 'tools', [ echo, boom, nap ] )
    results = await invocables.execute_invocations(
        [ _call( 'c1', 'echo', { 'text': 'hi' } ),
          _call( 'c2', 'nap', { 'seconds': 5 } ) ],
        [ ensemble ], timeout = 0.05 )
    assert not results[ 0 ].is_error( )
    spans = { span.name: span for span in recording.spans.get_finished_spans( ) }
    span = spans[ 'execute_tool echo' ]
    assert span.attributes[ 'gen_ai.operation.name' ] == 'execute_tool'
    assert span.attributes[ 'gen_ai.tool.name' ] == 'echo'
    assert span.attributes[ 'gen_ai.tool.call.id' ] == 'c1'
    assert 'error.type' not in span.attributes
    assert 'gen_ai.tool.call.arguments' not in span.attributes
    failed = spans[ 'execute_tool nap' ]
    assert failed.attributes[ 'error.type' ] == 'timeout'
    assert failed.status.status_code is trace.StatusCode.ERROR


@pytest.mark.asyncio
async def test_110_exception_recorded( recording ):
    ''' A tool which raises gives error.type of the exception's class. '''
    ensemble = invocables.produce_ensemble( 'tools', [ boom ] )
    with pytest.raises( invocables.exceptions.InvocationExecutionFailure ):
        await invocables.execute_invocations(
            [ _call( 'c1', 'boom' ) ], [ ensemble ] )
    span, = recording.spans.get_finished_spans( )
    assert span.attributes[ 'error.type' ] == 'InvocationExecutionFailure'


@pytest.mark.asyncio
async def test_200_metrics( recording ):
    ''' Calls, errors by kind and durations are counted. '''
    ensemble = invocables.produce_ensemble( 'tools', [ echo ] )
    await invocables.execute_invocations(
        [ _call( 'c1', 'echo', { 'text': 'a' } ),
          _call( 'c2', 'echo', { 'text': 'b' } ) ], [ ensemble ] )
    policy = invocables.toolsets.policies.Policy(
        default = invocables.toolsets.policies.Actions.Deny )
    await invocables.execute_invocations(
        [ _call( 'c3', 'echo', { 'text': 'c' } ) ], [ ensemble ],
        policy = policy )
    points = recording.survey_points( )
    calls = sum( point.value for point in points[ 'invocables.tool.calls' ] )
    assert calls == 3
    errors = points[ 'invocables.tool.errors' ]
    assert [ point.attributes[ 'error.type' ] for point in errors ] == [
        'refusal' ]
    durations = points[ 'invocables.tool.duration' ]
    assert sum( point.count for point in durations ) == 3


@pytest.mark.asyncio
async def test_300_content_opt_in_redacted( ):
    ''' Arguments and results are recorded only on opt-in, redacted. '''
    recording = _Recording( content_recorded = True )
    try:
        ensemble = invocables.produce_ensemble( 'tools', [ echo ] )
        await invocables.execute_invocations(
            [ _call( 'c1', 'echo', { 'text': 'hi', 'token': 'sekrit' } ) ],
            [ ensemble ] )
    finally: configure_telemetry( )
    span, = recording.spans.get_finished_spans( )
    arguments = json.loads( span.attributes[ 'gen_ai.tool.call.arguments' ] )
    assert arguments == { 'text': 'hi', 'token': '***' }
    assert json.loads( span.attributes[ 'gen_ai.tool.call.result' ] ) == [
        'hi' ]


@pytest.mark.asyncio
async def test_310_disabled( ):
    ''' Disabled telemetry records nothing. '''
    recording = _Recording( )
    configure_telemetry( Settings(
        enabled = False, tracer_provider = recording.tracer_provider ) )
    try:
        ensemble = invocables.produce_ensemble( 'tools', [ echo ] )
        await invocables.execute_invocations(
            [ _call( 'c1', 'echo', { 'text': 'hi' } ) ], [ ensemble ] )
    finally: configure_telemetry( )
    assert recording.spans.get_finished_spans( ) == ( )


# Spans of a process of its own, with the global tracer provider.
_SPANS_PRELUDE = """
import asyncio, json, os, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter )
import invocables
exporter = InMemorySpanExporter( )
provider = TracerProvider( )
provider.add_span_processor( SimpleSpanProcessor( exporter ) )
trace.set_tracer_provider( provider )
"""
_MCP_SPANS_SCRIPT = _SPANS_PRELUDE + """

async def main( ):
    ensemble = invocables.mcp.produce_ensemble(
        'echoes', command = json.loads( sys.argv[ 1 ] ) )
    async with ensemble:
        results = await invocables.execute_invocations(
            [ invocables.InvocationCanister(
                identifier = 'c1', name = 'echo',
                arguments = { 'message': 'hi' } ) ], [ ensemble ] )
    assert not results[ 0 ].is_error( )

asyncio.run( main( ) )
print( json.dumps( [
    [ span.name, span.context.span_id,
      span.parent.span_id if span.parent else None ]
    for span in exporter.get_finished_spans( ) ] ) )
"""


@pytest.mark.slow
def test_400_mcp_request_spans( ):
    ''' MCP requests get the SDK's spans, nested under the tool's span,
        with the global tracer provider (set in a process of its own).
    '''
    import subprocess
    import sys
    completed = subprocess.run(
        [ sys.executable, '-c', _MCP_SPANS_SCRIPT,
          json.dumps( produce_server_command( 'echo_server.py' ) ) ],
        capture_output = True, text = True, timeout = 120, check = True )
    spans = json.loads( completed.stdout.strip( ).splitlines( )[ -1 ] )
    tool = next( span for span in spans if span[ 0 ] == 'execute_tool echo' )
    requests = [
        span for span in spans if span[ 0 ].startswith( 'MCP send tools/call' ) ]
    assert requests, spans
    assert requests[ 0 ][ 2 ] == tool[ 1 ]



_MCP_ERROR_SPANS_SCRIPT = _SPANS_PRELUDE + """

async def main( ):
    ensemble = invocables.mcp.produce_ensemble(
        'hostile', command = json.loads( sys.argv[ 1 ] ),
        environment = {
            'HOSTILE_SECRET': 'env:INVOCABLES_TEST_HOSTILE_SECRET' } )
    async with ensemble:
        results = await invocables.execute_invocations(
            [ invocables.InvocationCanister(
                identifier = 'c1', name = 'refuse_huge',
                arguments = { } ) ], [ ensemble ] )
    assert results[ 0 ].is_error( )

asyncio.run( main( ) )
print( json.dumps( [
    [ span.name, span.to_json( ) ]
    for span in exporter.get_finished_spans( ) ] ) )
"""


@pytest.mark.slow
def test_410_mcp_error_spans_redacted( ):
    ''' A server's JSON-RPC error which quotes a secret of the ensemble
        reaches no span, the SDK's own (whose status quotes the error)
        included: errors are redacted where they enter, before the SDK
        reads them (set in a process of its own, with the global tracer
        provider).
    '''
    import os
    import subprocess
    import sys
    from . import mcp_support
    secret = 'Zq9-span-secret-4417'
    command = [
        mcp_support.SERVERS_PYTHON,
        str( mcp_support.SERVERS / 'hostile_rounds_server.py' ),
        '--no-tasks', '--legacy' ]
    completed = subprocess.run(
        [ sys.executable, '-c', _MCP_ERROR_SPANS_SCRIPT,
          json.dumps( command ) ],
        capture_output = True, text = True, timeout = 120, check = True,
        env = { **os.environ, 'INVOCABLES_TEST_HOSTILE_SECRET': secret } )
    spans = json.loads( completed.stdout.strip( ).splitlines( )[ -1 ] )
    requests = [
        text for name, text in spans
        if name.startswith( 'MCP send tools/call' ) ]
    assert requests, [ name for name, _ in spans ]
    assert '*** refused.' in requests[ 0 ]
    assert not any( secret in text for _, text in spans )


def test_500_import_light( ):
    ''' Importing invocables imports no OpenTelemetry. '''
    import subprocess
    import sys
    completed = subprocess.run(
        [ sys.executable, '-c',
          'import sys, invocables; '
          'print( any( name.startswith( "opentelemetry" ) '
          'for name in sys.modules ) )' ],
        capture_output = True, text = True, timeout = 60, check = True )
    assert completed.stdout.strip( ) == 'False'


@pytest.mark.asyncio
@pytest.mark.slow
async def test_510_env_secrets_redacted( monkeypatch ):
    ''' Recorded content loses the env: secrets of open MCP connections. '''
    secret = 'sk-served-secret-value'
    monkeypatch.setenv( 'INVOCABLES_TEST_SECRET', secret )
    recording = _Recording( content_recorded = True )
    ensemble = invocables.mcp.produce_ensemble(
        'echoes', command = produce_server_command( 'echo_server.py' ),
        environment = { 'SECRET': 'env:INVOCABLES_TEST_SECRET' } )
    try:
        async with ensemble:
            results = await invocables.execute_invocations(
                [ _call( 'c1', 'echo', { 'message': f"say {secret}" } ) ],
                [ ensemble ] )
    finally: configure_telemetry( )
    assert not results[ 0 ].is_error( )
    span = next(
        span for span in recording.spans.get_finished_spans( )
        if span.name == 'execute_tool echo' )
    recorded = span.attributes[ 'gen_ai.tool.call.arguments' ]
    assert secret not in recorded
    assert '***' in recorded
    assert secret not in span.attributes[ 'gen_ai.tool.call.result' ]


@pytest.mark.asyncio
@pytest.mark.slow
async def test_520_mcp_connections( recording ):
    ''' Connects and reconnects of MCP ensembles are counted. '''
    import os
    import signal

    from . import mcp_support
    ensemble = invocables.mcp.produce_ensemble(
        'echoes', command = produce_server_command( 'echo_server.py' ) )
    async with ensemble:
        results = await invocables.execute_invocations(
            [ _call( 'c1', 'pid' ) ], [ ensemble ] )
        pid = int( results[ 0 ].content[ 0 ].text )
        os.kill( pid, signal.SIGKILL )
        assert not mcp_support.wait_until_dead( { pid } )
        await invocables.execute_invocations(
            [ _call( 'c2', 'echo', { 'message': 'a' } ) ], [ ensemble ],
            failure_policy = invocables.FailurePolicies.Report )
        results = await invocables.execute_invocations(
            [ _call( 'c3', 'echo', { 'message': 'b' } ) ], [ ensemble ] )
        assert not results[ 0 ].is_error( )
    points = recording.survey_points( )[ 'invocables.mcp.connections' ]
    counts = {
        point.attributes[ 'invocables.mcp.reconnection' ]: point.value
        for point in points }
    assert counts == { False: 1, True: 1 }
