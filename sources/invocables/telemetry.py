# SPDX-License-Identifier: Apache-2.0

''' OpenTelemetry spans and metrics of tool executions.

    When ``opentelemetry-api`` is installed (the ``telemetry`` extra), the
    execution engine opens one span per tool execution, following the
    OpenTelemetry semantic conventions for generative AI: name
    ``execute_tool <tool>``, attributes ``gen_ai.operation.name``,
    ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type``,
    ``gen_ai.tool.description``, and ``error.type`` when the call failed
    (the kind of fault, such as ``timeout`` or ``refusal``, or the class of
    the exception). It records metrics: ``invocables.tool.calls``,
    ``invocables.tool.errors`` (by ``error.type``) and
    ``invocables.tool.duration`` (seconds, a histogram), and the sessions
    opened with MCP servers, ``invocables.mcp.connections`` (by
    ``invocables.mcp.reconnection``).

    Requests to MCP servers get their spans from the ``mcp`` SDK itself
    (``MCP send tools/call`` ...), nested under the tool's span, with the
    trace context passed to the server in ``_meta``.

    Arguments and results are recorded (``gen_ai.tool.call.arguments``,
    ``gen_ai.tool.call.result``) only if the application opts in, and then
    with the secrets of open MCP connections (``env:`` references) and the
    values of secret-named keys redacted. Without ``opentelemetry-api``,
    or with it but no provider set (by the application here or globally),
    nothing is recorded and the engine pays one check per execution.
'''


import importlib.util as _importlib_util
import sys as _sys

import invocables.__ as __
import invocables.canisters as _canisters
import invocables.execution.interception as _interception
import invocables.naming as _naming


_RECHECK_INTERVAL = 1.0 # seconds between checks of unset providers
_REDACTION = '***'
_SCOPE = 'invocables'
_key_secret = __.re.compile(
    r'auth|token|secret|passw|credential|cookie|signature|apikey'
    r'|api[-_]key|(?:private|access|client)[-_]?key|(?:^|[-_])key$',
    __.re.IGNORECASE )


class Settings( __.immut.DataclassObject ):
    ''' What telemetry records, and where. '''

    enabled: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether to record, when OpenTelemetry is
            installed. ''' ),
    ] = True
    content_recorded: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether to record arguments and results (with
            secrets redacted). Off by default. ''' ),
    ] = False
    tracer_provider: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Tracer provider; default: the global one. ''' ),
    ] = None
    meter_provider: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Meter provider; default: the global one. ''' ),
    ] = None


_SETTINGS_DEFAULT = Settings( )


class _Recorder:
    ''' Tracer and instruments, made once per settings. '''

    def __init__( self, settings: Settings ):
        from opentelemetry import metrics, trace
        self.settings = settings
        self.kind = trace.SpanKind.INTERNAL
        self.status_error = trace.StatusCode.ERROR
        self.status = trace.Status
        self.tracer = trace.get_tracer(
            _SCOPE, tracer_provider = settings.tracer_provider )
        meter = metrics.get_meter(
            _SCOPE, meter_provider = settings.meter_provider )
        self.calls = meter.create_counter(
            'invocables.tool.calls', unit = '{call}',
            description = "Tool executions." )
        self.errors = meter.create_counter(
            'invocables.tool.errors', unit = '{call}',
            description = "Tool executions which failed, by error.type." )
        self.duration = meter.create_histogram(
            'invocables.tool.duration', unit = 's',
            description = "Duration of tool executions." )
        self.connections = meter.create_counter(
            'invocables.mcp.connections', unit = '{connection}',
            description = "Sessions opened with MCP servers, by "
            "invocables.mcp.reconnection." )

    async def intercept(
        self,
        invocation: _canisters.InvocationCanister,
        designation: _naming.Designation,
        arguments: __.Arguments,
        continuation: _interception.Continuation,
    ) -> _canisters.ResultCanister:
        ''' Runs invocation within its span; records metrics. '''
        invoker = designation.invoker
        attributes: dict[ str, __.typx.Any ] = {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': invoker.name,
            'gen_ai.tool.call.id': invocation.identifier,
            'gen_ai.tool.type': 'function',
            'invocables.ensemble': designation.ensemble.name }
        if invoker.description:
            attributes[ 'gen_ai.tool.description' ] = invoker.description
        if self.settings.content_recorded:
            attributes[ 'gen_ai.tool.call.arguments' ] = _render( arguments )
        labels = {
            'gen_ai.tool.name': invoker.name,
            'invocables.ensemble': designation.ensemble.name }
        start = __.time.perf_counter( )
        recorded = self.settings.content_recorded
        # Exception messages may quote arguments: recorded only with them.
        with self.tracer.start_as_current_span(
            f"execute_tool {invoker.name}", kind = self.kind,
            attributes = attributes, record_exception = recorded,
            set_status_on_exception = recorded,
        ) as span:
            try:
                result = await continuation(
                    invocation, designation, arguments )
            except BaseException as exception:
                genus = type( exception ).__qualname__
                if not recorded:
                    span.set_status( self.status( self.status_error, genus ) )
                self._record_failure( span, labels, genus, start )
                raise
            if __.is_absent( result.error ):
                if self.settings.content_recorded:
                    span.set_attribute(
                        'gen_ai.tool.call.result', _render( [
                            _canisters.render_content_text( item )
                            for item in result.content ] ) )
                self._record( labels, start )
                return result
            genus = result.error.genus.value
            # The message may quote arguments (a validator's, a tool's).
            span.set_status( self.status(
                self.status_error,
                redact_content( result.error.message ) if recorded
                else genus ) )
            self._record_failure( span, labels, genus, start )
        return result

    def _record(
        self, labels: dict[ str, str ], start: float
    ) -> None:
        self.calls.add( 1, labels )
        self.duration.record( __.time.perf_counter( ) - start, labels )

    def _record_failure(
        self,
        span: __.typx.Any,
        labels: dict[ str, str ],
        genus: str,
        start: float,
    ) -> None:
        span.set_attribute( 'error.type', genus )
        labels_ = { **labels, 'error.type': genus }
        self.calls.add( 1, labels_ )
        self.errors.add( 1, labels_ )
        self.duration.record( __.time.perf_counter( ) - start, labels_ )


_settings = _SETTINGS_DEFAULT
_interceptor: __.Absential[ _interception.Interceptor | None ] = __.absent
_recorder: '_Recorder | None' = None
_unconfigured_until = 0.0 # monotonic time of the next check of providers


def access_interceptor( ) -> _interception.Interceptor | None:
    ''' Returns interceptor which records telemetry, or ``None`` if off.

        Off when ``opentelemetry-api`` is not installed, or when the
        application disabled telemetry. Decided once, until
        :py:func:`configure_telemetry` is called again.
    '''
    if not __.is_absent( _interceptor ): return _interceptor
    if __.time.monotonic( ) < _unconfigured_until: return None
    return _prepare_interceptor( )


def configure_telemetry(
    settings: __.typx.Annotated[
        Settings, __.ddoc.Doc( ''' What to record, and where. ''' )
    ] = _SETTINGS_DEFAULT,
) -> None:
    ''' Configures telemetry of tool executions (for the whole process).

        Pass ``Settings( enabled = False )`` to record nothing even when
        OpenTelemetry is installed, or ``Settings( content_recorded =
        True )`` to record arguments and results.
    '''
    global _settings, _interceptor, _recorder # noqa: PLW0603
    global _unconfigured_until # noqa: PLW0603
    _settings = settings
    _interceptor = __.absent
    _recorder = None
    _unconfigured_until = 0.0


def is_available( ) -> bool:
    ''' Returns whether ``opentelemetry-api`` is installed. '''
    if 'opentelemetry.trace' in _sys.modules: return True
    return _importlib_util.find_spec( 'opentelemetry' ) is not None


def record_connection(
    ensemble: str, *, reconnection: bool = False
) -> None:
    ''' Counts a session opened with an MCP server, if telemetry records.

        Called by MCP ensembles on connect and on reconnect.
    '''
    access_interceptor( )
    recorder = _recorder
    if recorder is None: return
    recorder.connections.add( 1, {
        'invocables.ensemble': ensemble,
        'invocables.mcp.reconnection': reconnection } )


def redact_content( data: __.typx.Any ) -> __.typx.Any:
    ''' Returns JSON-like data with secrets redacted.

        Values under secret-named keys (``token``, ``api_key`` ...) become
        ``***``, and so do the ``env:`` secrets of open MCP connections,
        wherever they appear in texts.
    '''
    redaction = _sys.modules.get( 'invocables.mcp.redaction' )
    return _redact( data, redaction )


def _is_unconfigured( settings: Settings ) -> bool:
    ''' Returns whether nothing would receive spans or metrics.

        True while the application has set neither providers here nor
        global ones: then every span and instrument would be a no-op, and
        skipping them costs nothing. Checked again at most once a second
        (global providers set later are picked up within a second, or at
        once by calling :py:func:`configure_telemetry`).
    '''
    if settings.tracer_provider is not None: return False
    if settings.meter_provider is not None: return False
    from opentelemetry import metrics, trace
    provider = trace.get_tracer_provider( )
    if not isinstance( provider, trace.ProxyTracerProvider ): return False
    return type( metrics.get_meter_provider( ) ).__name__ in (
        '_ProxyMeterProvider', 'NoOpMeterProvider' )


def _prepare_interceptor( ) -> _interception.Interceptor | None:
    global _interceptor, _recorder, _unconfigured_until # noqa: PLW0603
    if not _settings.enabled or not is_available( ):
        _interceptor = None
        return None
    if _is_unconfigured( _settings ):
        _unconfigured_until = __.time.monotonic( ) + _RECHECK_INTERVAL
        return None
    recorder = _recorder = _Recorder( _settings )
    _interceptor = recorder.intercept
    return _interceptor


def _redact(
    data: __.typx.Any, redaction: __.types.ModuleType | None
) -> __.typx.Any:
    if isinstance( data, str ):
        if redaction is None: return data
        return redaction.redact_everywhere( data )
    if isinstance( data, __.cabc.Mapping ):
        mapping = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], data )
        return {
            key: _REDACTION if _key_secret.search( str( key ) )
            else _redact( value, redaction )
            for key, value in mapping.items( ) }
    if isinstance( data, ( list, tuple ) ):
        sequence = __.typx.cast( __.cabc.Sequence[ __.typx.Any ], data )
        return [ _redact( item, redaction ) for item in sequence ]
    return data


def _render( data: __.typx.Any ) -> str:
    return __.json.dumps(
        redact_content( data ), ensure_ascii = False, default = str )


# The engine imports no telemetry: it reaches calls as an interceptor.
_interception.register_interceptor_accessor( access_interceptor )
