# SPDX-License-Identifier: Apache-2.0
''' Telemetry: spans and metrics of tool executions, in memory. '''

import asyncio

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

import invocables

from invocables.telemetry import Settings, configure_telemetry


def add( a: int, b: int ) -> int:
    ''' Adds two integers. '''
    return a + b


async def main( ) -> None:
    ''' Executes two calls and prints what telemetry recorded. '''
    spans = InMemorySpanExporter( )
    tracer_provider = TracerProvider( )
    tracer_provider.add_span_processor( SimpleSpanProcessor( spans ) )
    metrics = InMemoryMetricReader( )
    configure_telemetry( Settings(
        tracer_provider = tracer_provider,
        meter_provider = MeterProvider( metric_readers = [ metrics ] ),
        content_recorded = True ) )
    calls = [
        invocables.InvocationCanister(
            identifier = 'call-1', name = 'add',
            arguments = { 'a': 2, 'b': 3 } ),
        invocables.InvocationCanister(
            identifier = 'call-2', name = 'add',
            arguments = { 'a': 'two', 'b': 3 } ),
    ]
    async with invocables.produce_ensemble( 'math', [ add ] ) as math:
        await invocables.execute_invocations( calls, [ math ] )
    for span in spans.get_finished_spans( ):
        attributes = span.attributes or { }
        print(
            span.name, attributes.get( 'gen_ai.tool.call.id' ),
            attributes.get( 'error.type', 'ok' ),
            attributes.get( 'gen_ai.tool.call.arguments' ) )
    data = metrics.get_metrics_data( )
    names: list[ str ] = [ ]
    if data is not None:
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                names.extend( metric.name for metric in scope.metrics )
    print( sorted( names ) )


if __name__ == '__main__': asyncio.run( main( ) )
