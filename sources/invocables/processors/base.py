# SPDX-License-Identifier: Apache-2.0

''' Common core of processors: protocols and the processor base.

    Contract for a provider module (one small module per provider API,
    named by a row of :py:mod:`invocables.providers`):

    * A processor subclasses :py:class:`ProcessorBase`, sets ``provider``
      (the name used in errors), ``dialect`` (from its row) and
      ``accumulator_class``, and implements ``produce_tool`` (one tool in
      native format), ``produce_invocations`` (native message to
      canisters), ``nativize_results`` and ``prepare_message`` (assistant
      message of a whole response, pairing its calls with those of
      ``access_invocations``), with the helpers of
      :py:mod:`invocables.processors._wire`. It names its native types as
      arguments of ``ProcessorBase[ Tool, Message, Assistant ]``.
    * An accumulator subclasses
      :py:class:`invocables.processors.streaming.AccumulatorBase`,
      parameterized with the assistant message its ``produce_message``
      returns.
    * Any exception other than the package's own, raised while reading
      malformed input, becomes
      :py:class:`invocables.exceptions.ResponseInvalidity`.
'''


from . import __
from . import _memos as _memos
from . import _natives as _natives
from . import streaming as _streaming
from . import _wire as _wire
from .. import dialects as _dialects

from .streaming import (
    REASON_DEFAULT as REASON_DEFAULT,
    AccumulatorBase as AccumulatorBase,
    PartialInvocation as PartialInvocation,
    StreamedInvocation as StreamedInvocation,
)
from ._wire import (
    Invocations as Invocations,
    NativeObject as NativeObject,
)


Ensembles: __.typx.TypeAlias = __.execution.Ensembles

_Product = __.typx.TypeVar( '_Product' )
# Protocols only return assistant messages.
_Assistant = __.typx.TypeVar(
    '_Assistant', covariant = True, default = __.typx.Any )


class InvocationsAccumulator( __.typx.Protocol[ _Assistant ] ):
    ''' Accumulates streamed events into complete tool calls.

        Generic in the native assistant message of the provider (see
        :py:mod:`invocables.processors._natives`); unparameterized, ``Any``.
    '''

    def ingest(
        self, event: object, label: __.Absential[ str ] = __.absent
    ) -> Invocations:
        ''' Ingests one stream event; returns calls completed by it.

            The event is an SDK typed event or the decoded JSON of one
            server-sent event; the label is the SSE event name, for
            providers which need it.
        '''
        raise NotImplementedError  # pragma: no cover

    def conclude( self ) -> Invocations:
        ''' Returns remaining calls at end of stream.

            Raises :py:class:`invocables.exceptions.InvocationInterruption`,
            naming the tools, if calls are still incomplete.
        '''
        raise NotImplementedError  # pragma: no cover

    def survey_partials( self ) -> tuple[ _streaming.PartialInvocation, ... ]:
        ''' Returns calls still being streamed, for display. '''
        raise NotImplementedError  # pragma: no cover

    def produce_message( self ) -> _Assistant:
        ''' Returns assistant message of the stream, for the next turn. '''
        raise NotImplementedError  # pragma: no cover


class InvocationsProcessor(
    __.typx.Protocol[ _natives.Tool, _natives.Message, _Assistant ]
):
    ''' Converts tools, calls and results for one provider API.

        Generic in the native tool, message of results and assistant
        message of the provider (see
        :py:mod:`invocables.processors._natives`); unparameterized, each is
        ``Any``.
    '''

    @property
    def provider( self ) -> str:
        ''' Name of provider API. '''
        raise NotImplementedError  # pragma: no cover

    def prepare_tools(
        self,
        ensembles: Ensembles,
        selection: __.Absential[ __.cabc.Iterable[ str ] ] = __.absent,
    ) -> list[ _natives.Tool ]:
        ''' Returns tool definitions in native format.

            With a selection (provider-facing names), only those tools,
            named as among all the tools of the ensembles.
        '''
        raise NotImplementedError  # pragma: no cover

    def normalize_invocations( self, native_message: object ) -> Invocations:
        ''' Returns tool calls of whole native response or message. '''
        raise NotImplementedError  # pragma: no cover

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.Message ]:
        ''' Returns native messages or items which carry results. '''
        raise NotImplementedError  # pragma: no cover

    async def execute_invocations(
        self,
        invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
        ensembles: Ensembles,
        **options: __.typx.Any,
    ) -> tuple[ __.canisters.ResultCanister, ... ]:
        ''' Executes invocations; returns one result per invocation. '''
        raise NotImplementedError  # pragma: no cover

    def prepare_message( self, native_message: object ) -> _Assistant:
        ''' Returns assistant message of whole native response, for the
            next request.
        '''
        raise NotImplementedError  # pragma: no cover

    def produce_accumulator( self ) -> InvocationsAccumulator[ _Assistant ]:
        ''' Produces accumulator for one streamed response. '''
        raise NotImplementedError  # pragma: no cover


class ProcessorBase(
    __.immut.Object,
    __.typx.Generic[ _natives.Tool, _natives.Message, _natives.Assistant ],
):
    ''' Common behavior of processors: tools, execution, error handling.

        Generic in the native tool, message of results and assistant
        message of the provider: a provider module names its SDK's
        parameter types (see :py:mod:`invocables.processors._natives`), so
        that type checkers see them in what ``prepare_tools``,
        ``nativize_results``, ``prepare_message`` and the accumulator's
        ``produce_message`` return.
    '''

    provider: __.typx.ClassVar[ str ] = 'unknown'
    dialect: __.typx.ClassVar[ str ] = ''
    accumulator_class: __.typx.ClassVar[
        type[ _streaming.AccumulatorBase[ __.typx.Any ] ] ]
    # Attributes which change the tools produced: recipes per their values.
    tool_options: __.typx.ClassVar[ tuple[ str, ... ] ] = ( )

    def prepare_tools(
        self,
        ensembles: Ensembles,
        selection: __.Absential[ __.cabc.Iterable[ str ] ] = __.absent,
    ) -> list[ _natives.Tool ]:
        ''' Returns tool definitions in native format.

            Provider-facing names come from the nomenclature of the
            ensembles. A tool whose schema the provider cannot take is left
            out, with a warning, rather than failing the whole request.
            With a selection (provider-facing names; see
            :py:mod:`~invocables.toolsets.selection`), only those tools are
            prepared,
            under the names they have among all the tools. The containers
            are fresh at every call; the schemas inside are shared between
            calls (see :py:mod:`invocables.processors._memos`).
        '''
        self.observe_ensembles( ensembles )
        if not __.is_absent( selection ):
            return produce_tools( ensembles, self.prepare_tool, selection )
        recipes = self.access_recipes( ensembles )
        if not recipes: return [ ]
        if _is_defined_together(
            type( self ), 'produce_tool', 'produce_tool_list'
        ): return self.produce_tool_list( recipes )
        return list( map( self.produce_tool, *recipes ) )

    def access_recipes( self, ensembles: Ensembles ) -> _memos.Recipes:
        ''' Returns arguments of ``produce_tool`` for the tools, by column.

            Each column (the names, the descriptions, the schemas ...) has
            one value per tool, in order; no tools, no columns. Remembered
            per nomenclature and per the options named by
            ``tool_options``, so that a repeated call on unchanged
            ensembles does no work per tool but assembling its container.
        '''
        nomenclature = __.naming.access_nomenclature( ensembles )
        options = ( type( self ), *(
            getattr( self, name ) for name in self.tool_options ) )
        together = _is_defined_together(
            type( self ), 'adapt_tool', 'produce_recipes' )
        return _memos.access_recipes(
            nomenclature, options,
            lambda: self.produce_recipes( nomenclature ) if together
            else self.adapt_tools( nomenclature ) )

    def adapt_tools(
        self, nomenclature: __.naming.Nomenclature
    ) -> _memos.Recipes:
        ''' Returns arguments of ``produce_tool`` for the tools of
            nomenclature, by column, from ``adapt_tool`` called for each.
        '''
        adapt = self.adapt_tool
        return _memos.transpose_recipes(
            adapt( name, invoker.description, invoker.arguments_schema )
            for name, invoker in zip(
                nomenclature.names, nomenclature.invokers ) )

    def produce_recipes(
        self, nomenclature: __.naming.Nomenclature
    ) -> _memos.Recipes:
        ''' Returns arguments of ``produce_tool`` for the tools of
            nomenclature, by column, leaving out refused tools: what
            ``adapt_tool`` gives, in one pass (see :py:func:`adapt_schemas`).

            Used only when the class which defines ``adapt_tool`` defines
            this too: a subclass which overrides ``adapt_tool`` alone has it
            called for each tool (``adapt_tools``).
        '''
        return produce_recipes( nomenclature, self.dialect )

    def observe_ensembles( self, ensembles: Ensembles ) -> None:
        ''' Hook: notes the ensembles whose tools are being prepared.

            Processors reading calls written as text note the names of
            the tools they may read.
        '''

    def adapt_tool(
        self, name: str, description: str, schema: __.Schema
    ) -> _memos.Recipe | None:
        ''' Returns arguments of ``produce_tool`` for one tool, or ``None``
            if refused. Every recipe of a processor has the same length.
        '''
        schema_ = adapt_schema( self.provider, name, schema, self.dialect )
        if schema_ is None: return None
        return ( name, description, schema_ )

    def prepare_tool(
        self, name: str, description: str, schema: __.Schema
    ) -> _natives.Tool | None:
        ''' Returns one tool in native format, or ``None`` if refused. '''
        recipe = self.adapt_tool( name, description, schema )
        if recipe is None: return None
        return self.produce_tool( *recipe )

    def produce_tool(
        self, name: str, description: str, schema: NativeObject
    ) -> _natives.Tool:
        ''' Hook: returns one tool in native format. '''
        raise NotImplementedError  # pragma: no cover

    def produce_tool_list(
        self, recipes: _memos.Recipes
    ) -> list[ _natives.Tool ]:
        ''' Returns the tools of recipes (columns, as from
            ``access_recipes``) in native format, in fresh containers: what
            ``produce_tool`` gives for each.

            Processors may build the containers in one pass instead. Used
            only when the class which defines ``produce_tool`` defines this
            too: a subclass which overrides ``produce_tool`` alone has it
            called for each tool.
        '''
        return list( map( self.produce_tool, *recipes ) )

    def normalize_invocations( self, native_message: object ) -> Invocations:
        ''' Returns tool calls of whole native response or message.

            Accepts SDK typed objects and plain dictionaries alike. Error
            bodies raise :py:class:`invocables.exceptions.ProviderFailure`;
            malformed input raises
            :py:class:`invocables.exceptions.ResponseInvalidity`.
        '''
        return _wire.deduplicate_invocations(
            self.provider, self.access_invocations( native_message ) )

    def access_invocations( self, native_message: object ) -> Invocations:
        ''' Returns tool calls of whole native response or message, in
            order, each as its response has it: as
            ``normalize_invocations`` reads them, with repetitions of an id
            kept (for ``prepare_message``, which pairs calls with the
            response's own).
        '''
        if native_message is None or isinstance(
            native_message, ( str, bytes, int, float )
        ):
            raise __.exceptions.ResponseInvalidity(
                self.provider, "the response is not a JSON object." )
        try: return tuple( self.produce_invocations( native_message ) )
        except __.exceptions.Omnierror: raise
        except Exception as exception:
            raise _wire.produce_invalidity(
                self.provider, exception ) from exception

    def produce_invocations(
        self, native_message: object
    ) -> __.cabc.Sequence[ __.canisters.InvocationCanister ]:
        ''' Hook: returns tool calls of native message. '''
        raise NotImplementedError  # pragma: no cover

    def nativize_results(
        self, results: __.cabc.Sequence[ __.canisters.ResultCanister ]
    ) -> list[ _natives.Message ]:
        ''' Returns native messages or items which carry results. '''
        raise NotImplementedError  # pragma: no cover

    async def execute_invocations(
        self,
        invocations: __.cabc.Iterable[ __.canisters.InvocationCanister ],
        ensembles: Ensembles,
        **options: __.typx.Any,
    ) -> tuple[ __.canisters.ResultCanister, ... ]:
        ''' Executes invocations with the engine; one result each, in order.

            Options go to :py:func:`invocables.execution.execute_invocations`
            (``auxdata``, ``namespace``, ``timeout``, ``concurrency``,
            ``failure_policy``, ``alerter``). Results carry whether the id
            of their invocation was synthesized.
        '''
        invocations = tuple( invocations )
        results = await __.execution.execute_invocations(
            invocations, ensembles, **options )
        return tuple(
            __.dcls.replace( result, invocation_id_synthesized = True )
            if invocation.identifier_synthesized
            and not result.invocation_id_synthesized else result
            for invocation, result in zip(
                invocations, results, strict = True ) )

    def prepare_message( self, native_message: object ) -> _natives.Assistant:
        ''' Returns assistant message of whole native response (SDK typed
            object or plain dictionary), for the next request: what the
            model said, with each tool call under the id of its canister
            (synthesized ids included), so that its result matches it.

            Reads the response as ``normalize_invocations`` does, and raises
            as it does. Raises
            :py:class:`invocables.exceptions.ProviderNoSupport` for
            providers whose processor does not assemble messages.
        '''
        raise __.exceptions.ProviderNoSupport(
            self.provider, "its processor does not assemble messages." )

    def produce_accumulator(
        self
    ) -> _streaming.AccumulatorBase[ _natives.Assistant ]:
        ''' Produces accumulator for one streamed response. '''
        return self.accumulator_class( )


def adapt_schema(
    provider: str, name: str, schema: __.Schema, dialect: str
) -> NativeObject | None:
    ''' Returns schema in dialect of provider; ``None`` to leave tool out.

        The one place where processors reach schema dialects: a tool whose
        schema the dialect cannot express is left out alone, with a
        :py:class:`invocables.exceptions.ToolExclusionWarning`, so that one
        bad schema never fails a whole request. Without a dialect, a plain
        copy passes through. ``provider`` names the caller in logs.
    '''
    if not dialect: return __.schemata.thaw_json( schema )
    return _memos.adapt_schema_once( # shared between calls: see memos
        schema, dialect,
        lambda: _dialects.adapt_tool_schema(
            name, schema, dialect, share = True ) )


def adapt_schemas(
    names: __.cabc.Sequence[ str ],
    schemas: __.cabc.Sequence[ __.Schema ],
    dialect: str,
) -> list[ NativeObject | None ]:
    ''' Returns schemas in dialect, in order; ``None`` for each tool to
        leave out (with its warning, which names the tool).

        As :py:func:`adapt_schema`, for many tools in one pass.
    '''
    if not dialect: return list( map( __.schemata.thaw_json, schemas ) )
    roots = _dialects.share_plain_roots( schemas, dialect )
    if roots is not None: return list( roots )
    return _memos.adapt_schemas_once( # shared between calls: see memos
        names, schemas, dialect,
        lambda names_, schemas_: _dialects.adapt_tool_schemas(
            names_, schemas_, dialect, share = True ) )


def produce_recipes(
    nomenclature: __.naming.Nomenclature, dialect: str
) -> _memos.Recipes:
    ''' Returns names, descriptions and adapted schemas of the tools of
        nomenclature, one column each, leaving out refused tools.
    '''
    names = nomenclature.names
    invokers = nomenclature.invokers
    # Roots made with the tools, where the dialect takes them: no schema
    # is read at all.
    schemas = (
        __.invokers.survey_arguments_roots( invokers )
        if _dialects.takes_plain_roots( dialect ) else None )
    if schemas is None:
        schemas = adapt_schemas( names, [
            invoker.arguments_schema for invoker in invokers ], dialect )
    descriptions = [ invoker.description for invoker in invokers ]
    return _memos.compose_recipes( names, descriptions, schemas )


def produce_tools(
    ensembles: Ensembles,
    producer: __.cabc.Callable[ [ str, str, __.Schema ], _Product | None ],
    selection: __.Absential[ __.cabc.Iterable[ str ] ] = __.absent,
) -> list[ _Product ]:
    ''' Returns what producer makes of each tool of ensembles, in order.

        The producer takes the provider-facing name, the description and
        the schema of a tool, and returns ``None`` to leave it out. With a
        selection of provider-facing names, only those tools.
    '''
    if not __.is_absent( selection ):
        from ..toolsets import selection as _selection
        ensembles = _selection.produce_selection( ensembles, selection )
    nomenclature = __.naming.access_nomenclature( ensembles )
    products: list[ _Product ] = [ ]
    for name, invoker in zip( nomenclature.names, nomenclature.invokers ):
        product = producer(
            name, invoker.description, invoker.arguments_schema )
        if product is not None: products.append( product )
    return products


def _is_defined_together( genus: type, method: str, together: str ) -> bool:
    ''' Returns whether the class from which genus takes method also
        defines together, its one-pass counterpart: which a subclass that
        overrides method alone must not bypass.
    '''
    for base in genus.__mro__:
        members = vars( base )
        if method in members: return together in members
    return False
