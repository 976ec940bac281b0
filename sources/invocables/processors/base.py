# SPDX-License-Identifier: Apache-2.0

''' Common core of processors: protocols and the processor base.

    Contract for a provider module (one small module per provider API,
    named by a row of :py:mod:`invocables.providers`):

    * A processor subclasses :py:class:`ProcessorBase`, sets
      ``accumulator_class`` (whose ``provider``, the name used in errors,
      it takes, with the ``dialect`` of that provider's row), and
      implements ``produce_tool`` (one tool in
      native format, from the recipe of ``adapt_tool``),
      ``produce_invocations`` (native message to canisters),
      ``nativize_results`` and ``prepare_message`` (assistant message of
      a whole response, pairing its calls with those of
      ``access_invocations``, and leaving out those it gives as ``None``:
      repetitions of an id, which are not run), with the helpers of
      :py:mod:`!invocables.processors._wire`. It names its native types as
      arguments of ``ProcessorBase[ Tool, Message, Assistant ]``.
    * An accumulator subclasses
      :py:class:`invocables.processors.streaming.AccumulatorBase`,
      parameterized with the assistant message its ``produce_message``
      returns.
    * Any exception other than the package's own, raised while reading
      malformed input, becomes
      :py:class:`invocables.exceptions.ResponseInvalidity`.
'''


import invocables.processors.__ as __
import invocables.processors.natives as _natives
import invocables.processors.streaming as _streaming
import invocables.processors._wire as _wire
import invocables.dialects as _dialects

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
# Calls of a whole response, one per call, a repeated id's as None.
Pairings: __.typx.TypeAlias = tuple[
    __.canisters.InvocationCanister | None, ... ]
# Arguments of a processor's ``produce_tool`` for one tool.
Recipe: __.typx.TypeAlias = tuple[ __.typx.Any, ... ]

# Protocols only return assistant messages.
_Assistant = __.typx.TypeVar(
    '_Assistant', covariant = True, default = __.typx.Any )


class InvocationsAccumulator( __.typx.Protocol[ _Assistant ] ):
    ''' Accumulates streamed events into complete tool calls.

        Generic in the native assistant message of the provider (see
        :py:mod:`invocables.processors.natives`); unparameterized, ``Any``.
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
        :py:mod:`invocables.processors.natives`); unparameterized, each is
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
        parameter types (see :py:mod:`invocables.processors.natives`), so
        that type checkers see them in what ``prepare_tools``,
        ``nativize_results``, ``prepare_message`` and the accumulator's
        ``produce_message`` return.
    '''

    provider: __.typx.ClassVar[ str ] = 'unknown'
    dialect: __.typx.ClassVar[ str ] = ''
    accumulator_class: __.typx.ClassVar[
        type[ _streaming.AccumulatorBase[ __.typx.Any ] ] ]
    # Attributes which change the recipes: each list remembered per values.
    tool_options: __.typx.ClassVar[ tuple[ str, ... ] ] = ( )

    def __init_subclass__( cls, **arguments: __.typx.Any ) -> None:
        ''' Gives a subclass which does not name them the provider of its
            accumulator class and the dialect of that provider's row (see
            :py:data:`invocables.providers.PROVIDERS`).
        '''
        super( ).__init_subclass__( **arguments )
        members = vars( cls )
        if 'provider' not in members and 'accumulator_class' in members:
            cls.provider = cls.accumulator_class.provider
        row = __.providers.PROVIDERS.get( cls.provider )
        if 'dialect' not in members and row is not None:
            cls.dialect = row.dialect

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
            prepared, under the names they have among all the tools. The
            containers are fresh at every call; the schemas inside are
            adapted once per tool and shared between calls (see
            :py:func:`adapt_invoker_schema`).
        '''
        columns = self.survey_recipes( ensembles, selection )
        if not columns: return [ ]
        if is_defined_together(
            type( self ), 'produce_tool', 'produce_tools'
        ): return self.produce_tools( *columns )
        return list( map( self.produce_tool, *columns ) )

    def survey_recipes(
        self,
        ensembles: Ensembles,
        selection: __.Absential[ __.cabc.Iterable[ str ] ] = __.absent,
    ) -> tuple[ tuple[ __.typx.Any, ... ], ... ]:
        ''' Returns arguments of ``produce_tool`` for the tools offered, by
            column (names, descriptions, schemas ...; none if no tools),
            from ``adapt_tool``: one pass over the tools.

            Remembered on the nomenclature of the ensembles (until their
            tools change) per class and ``tool_options``, unless a tool was
            refused or the columns are not ``is_remembered``, so that their
            warnings are given at every call. Columns, not a tuple per
            tool: thousands of tools leave a few objects to the collector.
        '''
        self.observe_ensembles( ensembles )
        if not __.is_absent( selection ):
            import invocables.toolsets.selection as _selection
            ensembles = _selection.produce_selection( ensembles, selection )
        nomenclature = __.naming.access_nomenclature( ensembles )
        key = ( type( self ), *(
            getattr( self, name ) for name in self.tool_options ) )
        columns = nomenclature.recipes.get( key )
        if columns is not None: return columns
        invokers = nomenclature.invokers
        if is_defined_together( type( self ), 'adapt_tool', 'adapt_tools' ):
            columns = self.adapt_tools( nomenclature.names, invokers )
            count = len( columns[ 0 ] ) if columns else 0
        else:
            recipes = list( filter( None, map(
                self.adapt_tool, nomenclature.names,
                [ invoker.description for invoker in invokers ],
                invokers ) ) )
            columns = tuple( zip( *recipes ) )
            count = len( recipes )
        if count == len( invokers ) and self.is_remembered( columns ):
            nomenclature.recipes[ key ] = columns
        return columns

    def observe_ensembles( self, ensembles: Ensembles ) -> None:
        ''' Hook: notes the ensembles whose tools are being prepared.

            Processors reading calls written as text note the names of
            the tools they may read.
        '''

    def access_dialect( self ) -> str:
        ''' Hook: returns dialect of the schemas of ``adapt_tool`` and
            ``adapt_tools``, which options of a processor may change.
        '''
        return self.dialect

    def adapt_tool(
        self, name: str, description: str, invoker: __.invokers.Invoker
    ) -> Recipe | None:
        ''' Returns arguments of ``produce_tool`` for one tool, or ``None``
            if refused. Every recipe of a processor has the same length.
        '''
        schema = adapt_invoker_schema( invoker, name, self.access_dialect( ) )
        if schema is None: return None
        return ( name, description, schema )

    def adapt_tools(
        self,
        names: __.cabc.Sequence[ str ],
        invokers: __.cabc.Sequence[ __.invokers.Invoker ],
    ) -> tuple[ tuple[ __.typx.Any, ... ], ... ]:
        ''' Returns what ``adapt_tool`` gives for each tool, by column,
            refused tools left out (no tools: no columns), in one pass.

            Called instead of ``adapt_tool`` only where the class which
            defines ``adapt_tool`` defines this too: a subclass which
            overrides ``adapt_tool`` alone has it called for each tool.
        '''
        return compose_columns(
            names, [ invoker.description for invoker in invokers ],
            adapt_invoker_schemas( invokers, names, self.access_dialect( ) ) )

    def is_remembered(
        self, columns: tuple[ tuple[ __.typx.Any, ... ], ... ]
    ) -> bool:
        ''' Hook: returns whether recipes (by column) may be remembered:
            not where some tool is offered after a warning.
        '''
        return True

    def produce_tool(
        self, name: str, description: str, schema: NativeObject
    ) -> _natives.Tool:
        ''' Hook: returns one tool in native format. '''
        raise NotImplementedError  # pragma: no cover

    def produce_tools(
        self, *columns: __.cabc.Sequence[ __.typx.Any ]
    ) -> list[ _natives.Tool ]:
        ''' Returns what ``produce_tool`` gives for each recipe (by
            column), in fresh containers.

            A processor may build them in one pass instead. Called instead
            of ``produce_tool`` only where the class which defines
            ``produce_tool`` defines this too: a subclass which overrides
            ``produce_tool`` alone has it called for each tool.
        '''
        return list( map( self.produce_tool, *columns ) )

    def normalize_invocations( self, native_message: object ) -> Invocations:
        ''' Returns tool calls of whole native response or message.

            Accepts SDK typed objects and plain dictionaries alike. Error
            bodies raise :py:class:`invocables.exceptions.ProviderFailure`;
            malformed input raises
            :py:class:`invocables.exceptions.ResponseInvalidity`. An id
            names one call: a call which repeats the id of an earlier one
            is left out, with a warning (see ``access_invocations``).
        '''
        invocations = self._read_invocations( native_message )
        pairings = _wire.mark_repetitions( self.provider, invocations )
        if pairings is invocations: return invocations
        return tuple(
            invocation for invocation in pairings if invocation is not None )

    def access_invocations( self, native_message: object ) -> Pairings:
        ''' Returns tool calls of whole native response or message, one
            per call of the response, in order, for ``prepare_message``,
            which pairs them with the response's own calls: the canister of
            each call which ``normalize_invocations`` returns, ``None`` for
            each call which repeats the id of an earlier one.

            The one rule of repeated ids, whole and streamed alike (the
            accumulator's ``complete_call`` applies it to streams): only
            the first call under an id is run, and the assistant
            message holds only the calls which are run (a call of ``None``
            is left out of it), so that every call sent back has its one
            result.
        '''
        return _wire.mark_repetitions(
            self.provider, self._read_invocations( native_message ),
            report = False )

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

            Options go to :py:func:`invocables.execution.execute_invocations`:
            ``options = ExecutionOptions( ... )``
            (:py:class:`invocables.execution.ExecutionOptions`), and fields
            of it as shortcuts (``timeout = 5``). Results carry whether the
            id of their invocation was synthesized.
        '''
        return await __.execution.execute_invocations(
            invocations, ensembles, **options )

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

    def _read_invocations( self, native_message: object ) -> Invocations:
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


def adapt_invoker_schema(
    invoker: __.invokers.Invoker,
    name: str,
    dialect: str,
    provider: str = 'openai',
) -> NativeObject | None:
    ''' Returns schema of invoker in dialect; ``None`` to leave tool out.

        As :py:func:`adapt_schema`, remembered on the invoker (its
        ``adaptations``, by dialect): shared between calls and not to be
        changed. A refusal is not remembered, so that its warning is given
        at every call. Where the dialect takes a plain object root as it
        is, the root copied with the invoker's validator is offered
        (remembered there, not in ``adaptations``).
    '''
    invoker_: __.typx.Any = invoker # perhaps without memo or validator
    try: adaptations: dict[ str, NativeObject ] = invoker_.adaptations
    except AttributeError: adaptations = { }
    adapted = adaptations.get( dialect )
    if adapted is not None: return adapted
    schema = invoker_.arguments_schema
    try: root = invoker_.validator.root
    except AttributeError: root = None
    if root is None or invoker_.validator.schema is not schema:
        adapted = adapt_schema( provider, name, schema, dialect )
    # The validator's root is a plain copy of the schema: no need to read
    # the schema again to know it plain. Taken as it is, it is not
    # remembered again: each memo would then hold a container, which the
    # collector follows at every collection.
    elif dialect in _dialects.DIALECTS_ROOT_TAKEN: return root
    elif dialect and dialect != 'openai-strict':
        adapted = _dialects.adapt_plain_root( name, root, dialect )
    else: adapted = adapt_schema( provider, name, root, dialect, plain = True )
    if adapted is not None: adaptations[ dialect ] = adapted
    return adapted


def adapt_invoker_schemas(
    invokers: __.cabc.Sequence[ __.invokers.Invoker ],
    names: __.cabc.Sequence[ str ],
    dialect: str,
    provider: str = 'openai',
) -> list[ NativeObject | None ]:
    ''' Returns schemas of invokers in dialect, in order; ``None`` for each
        tool to leave out.

        What :py:func:`adapt_invoker_schema` gives for each (remembered
        alike), in one pass where no tool has an adaptation remembered and
        every one has a validator's root, plain, which the dialect adapts
        (see :py:func:`invocables.dialects.adapt_plain_roots`): a first
        list of many tools makes no call per tool.
    '''
    invokers_: __.cabc.Sequence[ __.typx.Any ] = invokers # perhaps bare
    if dialect in _dialects.DIALECTS_ROOT_TAKEN:
        # Nothing remembered: the roots are the validators' own.
        roots = _survey_plain_roots( invokers_ )
        if roots is not None: return roots
    elif dialect and dialect != 'openai-strict':
        try: memos = [ invoker.adaptations for invoker in invokers_ ]
        except AttributeError: memos = None
        if memos is not None:
            adapted = [ memo.get( dialect ) for memo in memos ]
            if all( adapted ) or None not in adapted: return adapted
            roots = _survey_plain_roots( invokers_ ) if all(
                value is None for value in adapted ) else None
            if roots is not None:
                adapted = _dialects.adapt_plain_roots( names, roots, dialect )
                for memo, value in zip( memos, adapted ):
                    if value is not None: memo[ dialect ] = value
                return adapted
    return [
        adapt_invoker_schema( invoker, name, dialect, provider )
        for invoker, name in zip( invokers, names ) ]


def compose_columns(
    names: __.cabc.Sequence[ str ],
    descriptions: __.cabc.Sequence[ str ],
    schemas: __.cabc.Sequence[ NativeObject | None ],
    *columns: __.cabc.Sequence[ __.typx.Any ],
) -> tuple[ tuple[ __.typx.Any, ... ], ... ]:
    ''' Returns recipes by column, leaving out each tool whose schema is
        ``None`` (refused). No tools: no columns.
    '''
    columns_ = ( names, descriptions, schemas, *columns )
    # Truth first, told faster than equality to None.
    if not all( schemas ) and None in schemas:
        kept = [
            index for index, schema in enumerate( schemas )
            if schema is not None ]
        columns_ = tuple(
            [ column[ index ] for index in kept ] for column in columns_ )
    if not columns_[ 0 ]: return ( )
    return tuple( map( tuple, columns_ ) )


def is_defined_together( genus: type, method: str, together: str ) -> bool:
    ''' Returns whether the class from which genus takes method also
        defines together, its one-pass counterpart: which a subclass that
        overrides method alone must not bypass. Told once per call, from
        the classes, not per tool.
    '''
    for base in genus.__mro__:
        members = vars( base )
        if method in members: return together in members
    return False


def adapt_schema(
    provider: str,
    name: str,
    schema: __.Schema,
    dialect: str,
    *,
    plain: bool = False,
) -> NativeObject | None:
    ''' Returns schema in dialect of provider; ``None`` to leave tool out.

        The one place where processors reach schema dialects: a tool whose
        schema the dialect cannot express is left out alone, with a
        :py:class:`invocables.exceptions.ToolExclusionWarning` (for
        'openai-strict', a
        :py:class:`invocables.exceptions.ToolStrictnessWarning` naming the
        provider: the caller then offers it without strict mode), so that
        one bad schema never fails a whole request. Without a dialect, a
        plain copy passes through. The result may share nested nodes with
        the schema: neither is to be changed.
    '''
    if not dialect: return __.schemata.thaw_json( schema )
    if dialect == 'openai-strict':
        return _dialects.adapt_tool_schema_strictly( name, schema, provider )
    return _dialects.adapt_tool_schema(
        name, schema, dialect, share = True, plain = plain )


def _survey_plain_roots(
    invokers: __.cabc.Sequence[ __.typx.Any ]
) -> list[ __.typx.Any ] | None:
    ''' Returns the validators' roots of invokers, plain copies of their
        schemas, where every one has one (its ``arguments_root``, which a
        function invoker notes when it is made); ``None`` otherwise.
    '''
    try: roots = [ invoker.arguments_root for invoker in invokers ]
    except AttributeError: return None
    # Truth is told faster than equality to None: a root is a dictionary,
    # never empty (its type, at least), or None.
    return roots if all( roots ) else None
