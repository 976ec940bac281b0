# SPDX-License-Identifier: Apache-2.0

''' Processor for OpenAI Chat Completions and the servers that speak it.

    Tools go out as ``{ type: 'function', function: { name, description,
    parameters } }`` (optionally strict); calls come back in
    ``message.tool_calls``, with arguments as JSON text or, from some
    compatible servers (Ollama, llama.cpp), as an object, and with ids
    synthesized where a server omits them; results go back as one
    ``{ role: 'tool', tool_call_id, content }`` message per result. Streams
    are read from chunks (``choices[].delta.tool_calls``, keyed by index and
    id) up to ``finish_reason`` or ``[DONE]``.
'''


from . import __
from . import base as _base
from . import natives as _natives
from .. import dialects as _dialects


PROVIDER = 'openai'

_DONE = '[DONE]'
_STOPS_TRUNCATING = frozenset( ( 'content_filter', 'length' ) )


class OpenaiAccumulator( _base.AccumulatorBase ):
    ''' Accumulates Chat Completions chunks into tool calls.

        Calls are keyed by choice index, tool call index and id: a new id at
        a used index is a new call; indexes need not start at 0. Calls of a
        choice are complete at its ``finish_reason`` (unless the reason
        truncates them, such as ``length``) or at ``[DONE]``.
    '''

    __slots__ = ( '_truncated', )

    provider = PROVIDER

    def __init__( self ) -> None:
        super( ).__init__( )
        self._truncated = False

    def ingest_event(
        self, event: object, label: __.Absential[ str ]
    ) -> _base.Invocations:
        ''' Maps one chunk (or ``[DONE]``) onto the accumulator. '''
        access = _base.access_field
        if isinstance( event, str ):
            if event.strip( ) != _DONE or self._truncated: return ( )
            return self.complete_calls( )
        # Typed chunks carry no error: the SDK raises on error payloads.
        if isinstance( event, dict ):
            payload = __.typx.cast( dict[ str, __.typx.Any ], event )
            error = payload.get( 'error' )
            if error is not None:
                raise _base.produce_failure( PROVIDER, error )
        choices = _base.access_items(
            access( __.typx.cast( object, event ), 'choices' ),
            PROVIDER, 'choices' )
        if len( choices ) == 1: return self._ingest_choice( choices[ 0 ] )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        for choice in choices:
            invocations.extend( self._ingest_choice( choice ) )
        return tuple( invocations )

    def _ingest_choice( self, choice: object ) -> _base.Invocations:
        access = _base.access_field
        ordinal = access( choice, 'index', 0 )
        calls = access( access( choice, 'delta' ), 'tool_calls' )
        invocations: list[ __.canisters.InvocationCanister ] = [ ]
        if calls is not None:
            calls = _base.access_items( calls, PROVIDER, 'tool_calls' )
            for position, call in enumerate( calls ):
                invocations.extend(
                    self._ingest_call( ordinal, position, call ) )
        stop = access( choice, 'finish_reason' )
        if stop is None: return tuple( invocations )
        if stop in _STOPS_TRUNCATING:
            self._truncated = True
            self.reason = f"the response stopped for reason {stop!r}."
            return tuple( invocations )
        invocations.extend( self.complete_calls(
            lambda index: _is_of_choice( index, ordinal ) ) )
        return tuple( invocations )

    def _ingest_call(
        self, ordinal: object, position: int, call: object
    ) -> _base.Invocations:
        access = _base.access_field
        index = access( call, 'index' )
        key = ( ordinal, position if index is None else index )
        tag = access( call, 'id' )
        function = access( call, 'function' )
        name = access( function, 'name' )
        arguments = access( function, 'arguments' )
        if (
            tag is None and name is None and isinstance( arguments, str )
            and self.is_open( key )
        ): # Hot path: a fragment of an open call.
            self.extend_call( key, arguments )
            return ( )
        fragmentary = arguments is None or isinstance( arguments, str )
        emitted = self.commence_call(
            key, tag if isinstance( tag, str ) and tag else None,
            _base.access_text( name, PROVIDER, 'name' ),
            initial = None if fragmentary else arguments )
        if fragmentary and arguments:
            self.extend_call( key, arguments )
        return emitted


class StrictProcessorBase(
    _base.ProcessorBase[ _natives.Tool, _natives.Message ]
):
    ''' OpenAI processors, with strict mode where schemas allow it. '''

    def __init__( self, *, strict: bool = False ):
        self.strict = strict

    def prepare_tool(
        self, name: str, description: str, schema: __.Schema
    ) -> _natives.Tool | None:
        ''' Returns one tool; strict when asked and the schema allows it.

            A schema which cannot be made strict is offered without strict
            mode (with a warning) rather than failing the request.
        '''
        if self.strict:
            schema_ = adapt_schema_strictly( self.provider, name, schema )
            if schema_ is not None:
                return self.produce_tool(
                    name, description, schema_, strict = True )
        return super( ).prepare_tool( name, description, schema )

    def produce_tool(
        self,
        name: str,
        description: str,
        schema: _base.NativeObject,
        strict: bool = False, # noqa: FBT001,FBT002
    ) -> _natives.Tool:
        ''' Hook: returns one tool in native format. '''
        raise NotImplementedError  # pragma: no cover

    async def execute_invocations(
        self,
        invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
        ensembles: _base.Ensembles,
        **options: __.typx.Any,
    ) -> tuple[ __.canisters.ResultCanister, ... ]:
        ''' Executes invocations with the engine; one result each, in order.

            In strict mode, first removes the ``null`` values which strict
            schemas make the model send for optional properties.
        '''
        if self.strict:
            invocations = normalize_strict_invocations(
                invocations, ensembles )
        return await super( ).execute_invocations(
            invocations, ensembles, **options )


class OpenaiProcessor(
    StrictProcessorBase[ _natives.OpenaiTool, _natives.OpenaiMessage ]
):
    ''' Processor for OpenAI Chat Completions (and compatible servers). '''

    provider = PROVIDER
    dialect = 'openai'
    accumulator_class = OpenaiAccumulator

    def produce_tool(
        self,
        name: str,
        description: str,
        schema: _base.NativeObject,
        strict: bool = False, # noqa: FBT001,FBT002
    ) -> _natives.OpenaiTool:
        ''' Returns tool as ``{ type: 'function', function: ... }``. '''
        return _base.produce_function_tool(
            name, description, schema, strict = strict )

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Returns tool calls of completion, choice or message.

            Takes the first choice of a completion. Error bodies raise
            provider failure; calls cut off by the token limit raise
            invocation interruption.
        '''
        access = _base.access_field
        error = access( native_message, 'error' )
        if error is not None: raise _base.produce_failure( PROVIDER, error )
        message, stop = _access_message( native_message )
        calls = [
            call for call in _base.access_items(
                access( message, 'tool_calls' ), PROVIDER, 'tool_calls' )
            if access( call, 'type' ) in ( None, 'function' ) ]
        if calls and stop in _STOPS_TRUNCATING:
            raise __.exceptions.InvocationInterruption(
                [ str( access( access( call, 'function' ), 'name' ) )
                  for call in calls ],
                f"the response stopped for reason {stop!r}." )
        return tuple(
            _produce_invocation( call, position )
            for position, call in enumerate( calls ) )

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.OpenaiMessage ]:
        ''' Returns one ``{ role: 'tool', tool_call_id, content }`` each.

            Content is text: structured data as JSON, binary content as a
            textual stand-in, errors prefixed with ``Error:``.
        '''
        return [
            {
                'role': 'tool',
                'tool_call_id': result.invocation_id,
                'content': result.as_text( ),
            }
            for result in results ]


def adapt_schema_strictly(
    provider: str, name: str, schema: __.Schema
) -> _base.NativeObject | None:
    ''' Returns schema in OpenAI strict dialect, or ``None`` if it has none.

        The caller then offers the tool without strict mode, after a
        :py:class:`invocables.exceptions.ToolStrictnessWarning`: a schema
        which cannot be made strict never fails the request, and no partly
        converted schema is ever sent.
    '''
    return _dialects.adapt_tool_schema_strictly( name, schema, provider )


def normalize_strict_invocations(
    invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
    ensembles: _base.Ensembles,
) -> tuple[ __.canisters.InvocationCanister, ... ]:
    ''' Returns invocations without nulls added by strict mode.

        Unknown names and undecodable arguments pass unchanged, for the
        engine to report.
    '''
    nomenclature = __.naming.access_nomenclature( ensembles )
    normalized: list[ __.canisters.InvocationCanister ] = [ ]
    for invocation in invocations:
        try: designation = nomenclature.access_designation( invocation.name )
        except __.exceptions.InvokerAbsence:
            normalized.append( invocation )
            continue
        arguments = _dialects.normalize_strict_arguments(
            designation.invoker.argschema, invocation.arguments )
        normalized.append(
            __.dcls.replace( invocation, arguments = arguments ) )
    return tuple( normalized )


def produce_processor( **options: __.typx.Any ) -> OpenaiProcessor:
    ''' Produces processor for Chat Completions; option ``strict``. '''
    _base.validate_options( PROVIDER, options, ( 'strict', ) )
    return OpenaiProcessor( **options )


def _access_message( native_message: object ) -> tuple[ object, object ]:
    ''' Returns message and finish reason of completion or choice. '''
    access = _base.access_field
    choices = access( native_message, 'choices' )
    if choices is not None:
        items = _base.access_items( choices, PROVIDER, 'choices' )
        if not items: return None, None
        choice = items[ 0 ]
        return access( choice, 'message' ), access( choice, 'finish_reason' )
    message = access( native_message, 'message' )
    if message is not None:
        return message, access( native_message, 'finish_reason' )
    return native_message, None


def _is_of_choice( index: __.cabc.Hashable, ordinal: object ) -> bool:
    if not isinstance( index, tuple ): return False
    key = __.typx.cast( tuple[ object, object ], index )
    return key[ 0 ] == ordinal


def _produce_invocation(
    call: object, position: int
) -> __.canisters.InvocationCanister:
    access = _base.access_field
    function = access( call, 'function' )
    return _base.produce_invocation(
        access( call, 'id' ),
        _base.access_text( access( function, 'name' ), PROVIDER, 'name' ),
        access( function, 'arguments' ), position )
