# SPDX-License-Identifier: Apache-2.0

''' Invocables, invokers and invocation contexts.

    An invocable is an async callable ``( context, arguments ) -> result``
    which implements a tool. An invoker wraps one invocable with its name,
    description, JSON Schema for its arguments (checked and compiled once)
    and options such as timeout and deduplicator.
'''


import contextvars as _contextvars

import invocables.__ as __
import invocables._callables as _callables
import invocables.canisters as _canisters
import invocables.execution.deduplicators as _deduplicators
import invocables.exceptions as _exceptions
import invocables.schemata as _schemata


Invocable: __.typx.TypeAlias = __.cabc.Callable[
    [ 'Context', __.Arguments ], __.cabc.Awaitable[ object ] ]
Annotations: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
_Function: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]
# An invocables.ensembles.Ensemble: not imported, not even to check types,
# so that ensembles (which produce invokers) import invokers without a
# circle.
EnsembleReference: __.typx.TypeAlias = __.typx.Any

NAME_LENGTH_MAXIMUM = _callables.NAME_LENGTH_MAXIMUM
RETRIES_MAXIMUM = 100

AUXDATA_EMPTY: __.cabc.Mapping[ str, __.typx.Any ] = (
    __.types.MappingProxyType( { } ) )

_ANNOTATIONS_EMPTY: Annotations = __.immut.Dictionary[ str, __.typx.Any ]( )
_CONTEXT_MEMBERS = ( 'auxdata', 'invoker', 'namespace' )
_INVOCATION_ARITY = 2 # context, arguments


class Context( __.typx.Protocol ):
    ''' What an invocable receives besides its arguments. '''

    @property
    def auxdata( self ) -> __.cabc.Mapping[ str, __.typx.Any ]:
        ''' Data from the application; an empty mapping when none. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def invoker( self ) -> 'Invoker':
        ''' Invoker which is running. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def namespace( self ) -> __.Namespace:
        ''' Per-conversation state, shared by invocations. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def deadline( self ) -> __.Absential[ float | None ]:
        ''' Loop time at which the caller cancels the invocation (``None``:
            never); absent when the caller enforces no timeout. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def invocation( self ) -> __.Absential[ _canisters.InvocationCanister ]:
        ''' Tool call which runs, when the execution engine runs it. '''
        raise NotImplementedError  # pragma: no cover

    async def log(
        self, level: str, data: object, logger: str | None = None
    ) -> None:
        ''' Logs to the caller (see :py:func:`liaise`). '''
        raise NotImplementedError  # pragma: no cover

    async def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        ''' Reports progress to the caller, if it listens. '''
        raise NotImplementedError  # pragma: no cover

    async def elicit(
        self, message: str, schema: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> __.typx.Any:
        ''' Asks the caller's user for data of a schema. '''
        raise NotImplementedError  # pragma: no cover

    async def sample(
        self, messages: __.cabc.Sequence[ __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Asks the caller's model for a completion of messages. '''
        raise NotImplementedError  # pragma: no cover


@__.dcls.dataclass(
    frozen = True, slots = True, kw_only = True, init = False )
class InvocationContext:
    ''' Concrete context, made by the execution engine per invocation.

        ``auxdata`` is what the application gave, unchanged; ``None`` (the
        default of every entry point) becomes an empty read-only mapping.
    '''

    auxdata: __.typx.Any
    invoker: 'Invoker'
    namespace: __.Namespace
    invocation: __.Absential[ _canisters.InvocationCanister ]
    deadline: __.Absential[ float | None ]

    def __init__(
        self, *,
        auxdata: __.typx.Any,
        invoker: 'Invoker',
        namespace: __.Namespace,
        invocation: __.Absential[ _canisters.InvocationCanister ] = (
            __.absent ),
        deadline: __.Absential[ float | None ] = __.absent,
    ):
        # By hand, as ResultCanister: one per invocation, on the hot path.
        _fill_context(
            self, auxdata, invoker, namespace, invocation, deadline )

    async def log(
        self, level: str, data: object, logger: str | None = None
    ) -> None:
        ''' Logs to the caller (the client, under ``serve``: a
            ``notifications/message``); levels are MCP's (``debug`` to
            ``emergency``). Without a liaison, to the Python logger.
        '''
        await _log( level, data, logger )

    async def report_progress(
        self,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> None:
        ''' Reports progress to the caller, if it listens. '''
        await _report_progress( progress, total, message )

    async def elicit(
        self,
        message: str,
        schema: __.cabc.Mapping[ str, __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Asks the caller's user for data of a (flat) schema; returns
            the answer (MCP's ``ElicitResult`` under ``serve``). Options
            go to the liaison (under ``serve``: ``key``, the key of the
            request among the input requests of MCP 2026-07-28).
        '''
        return await _ask_liaison( 'elicit', message, schema, **options )

    async def elicit_url(
        self, message: str, url: str, identifier: str
    ) -> __.typx.Any:
        ''' Asks the caller's user to visit a URL (MCP's elicitation of
            mode ``url``, identified by ``elicitationId``); returns the
            answer (MCP's ``ElicitResult`` under ``serve``).
        '''
        return await _ask_liaison( 'elicit_url', message, url, identifier )

    async def sample(
        self, messages: __.cabc.Sequence[ __.typx.Any ],
        **options: __.typx.Any,
    ) -> __.typx.Any:
        ''' Asks the caller's model for a completion of messages
            (``max_tokens``, ``system_prompt``, ... as MCP's sampling);
            returns its answer (MCP's ``CreateMessageResult`` under
            ``serve``).
        '''
        return await _ask_liaison( 'sample', messages, **options )

    async def survey_roots( self, **options: __.typx.Any ) -> __.typx.Any:
        ''' Asks the caller for its roots (MCP's ``roots/list``); returns
            its answer (MCP's ``ListRootsResult`` under ``serve``).
        '''
        return await _ask_liaison( 'survey_roots', **options )


def liaise( liaison: object ) -> __.typx.ContextManager[ None ]:
    ''' Makes liaison answer the tools run within the block (and tasks
        started in it): its ``log( level, data, logger )``,
        ``report_progress( progress, total, message )``, ``elicit(
        message, schema, **options )``, ``elicit_url( message, url,
        identifier )``, ``sample( messages, **options )`` and
        ``survey_roots( **options )``, coroutines, answer
        :py:class:`InvocationContext`'s methods of the same names (asking
        a liaison without the method raises ``LiaisonAbsence``).
    '''
    @__.ctxl.contextmanager
    def manage( ) -> __.cabc.Generator[ None, None, None ]:
        token = _liaisons.set( liaison )
        try: yield
        finally: _liaisons.reset( token )
    return manage( )


async def _ask_liaison(
    request: str, *arguments: __.typx.Any, **keywords: __.typx.Any
) -> __.typx.Any:
    method = getattr( _liaisons.get( ), request, None )
    if method is None: raise _exceptions.LiaisonAbsence( request )
    return await method( *arguments, **keywords )


async def _log( level: str, data: object, logger: str | None ) -> None:
    method = getattr( _liaisons.get( ), 'log', None )
    if method is not None:
        await method( level, data, logger )
        return
    number = _LOG_LEVELS.get( level, __.logging.INFO )
    __.logging.getLogger( logger or __.package_name ).log(
        number, "%s", data )


async def _report_progress(
    progress: float, total: float | None, message: str | None
) -> None:
    method = getattr( _liaisons.get( ), 'report_progress', None )
    if method is not None: await method( progress, total, message )


# MCP's levels, as Python's.
_LOG_LEVELS = __.types.MappingProxyType( {
    'debug': 10, 'info': 20, 'notice': 25, 'warning': 30, 'error': 40,
    'critical': 50, 'alert': 50, 'emergency': 50 } )
_liaisons: _contextvars.ContextVar[ object ] = _contextvars.ContextVar(
    'invocables_liaison', default = None )
_CONTEXT_SETTERS = __.produce_slot_setters(
    InvocationContext,
    ( 'auxdata', 'invoker', 'namespace', 'invocation', 'deadline' ) )


def produce_context(
    auxdata: __.typx.Any,
    invoker: 'Invoker',
    namespace: __.Namespace,
    invocation: __.Absential[ _canisters.InvocationCanister ],
    deadline: float | None,
) -> InvocationContext:
    ''' Returns context of one invocation, as the constructor does.

        Positional, for the execution engine's one context per call, at
        about two thirds of the constructor's cost.
    '''
    context = _new( InvocationContext )
    _fill_context( context, auxdata, invoker, namespace, invocation, deadline )
    return context


def _fill_context(
    context: InvocationContext,
    auxdata: __.typx.Any,
    invoker: 'Invoker',
    namespace: __.Namespace,
    invocation: __.Absential[ _canisters.InvocationCanister ],
    deadline: __.Absential[ float | None ],
) -> None:
    ( set_auxdata, set_invoker, set_namespace, set_invocation,
      set_deadline ) = _CONTEXT_SETTERS
    set_auxdata( context, AUXDATA_EMPTY if auxdata is None else auxdata )
    set_invoker( context, invoker )
    set_namespace( context, namespace )
    set_invocation( context, invocation )
    set_deadline( context, deadline )


_new = object.__new__


class Invoker( __.typx.Protocol ):
    ''' Tool: invocable with name, description and argument schema.

        ``await invoker( context, arguments )`` validates the arguments, then
        runs the invocable and returns its result as content canisters.
    '''

    @property
    def name( self ) -> str:
        ''' Name of tool, unique within its ensemble. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def description( self ) -> str:
        ''' Description of tool for the model. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def invocable( self ) -> Invocable:
        ''' Async callable implementing the tool. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def arguments_schema( self ) -> __.Schema:
        ''' JSON Schema (Draft 2020-12) of arguments. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def ensemble( self ) -> __.Absential[ EnsembleReference ]:
        ''' Parent ensemble, providing lifecycle and configuration.

            Absent until the invoker is grouped in an ensemble.
        '''
        raise NotImplementedError  # pragma: no cover

    @property
    def timeout( self ) -> __.Absential[ float | None ]:
        ''' Timeout in seconds (``None``: unbounded); absent: inherited. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def deduplicator(
        self
    ) -> __.Absential[ _deduplicators.Deduplicator ]:
        ''' Deduplicator, present only for tools safe to repeat. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def annotations( self ) -> Annotations:
        ''' Metadata, such as MCP annotations (read-only, destructive). '''
        raise NotImplementedError  # pragma: no cover

    @property
    def outschema( self ) -> __.Absential[ __.Schema ]:
        ''' JSON Schema of structured results, if declared. '''
        raise NotImplementedError  # pragma: no cover

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid. Raises invalidity error otherwise. '''
        raise NotImplementedError  # pragma: no cover

    def with_ensemble(
        self, ensemble: EnsembleReference
    ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to ensemble. '''
        raise NotImplementedError  # pragma: no cover

    async def __call__(
        self, context: Context, arguments: __.Arguments
    ) -> _canisters.ContentSequence:
        raise NotImplementedError  # pragma: no cover


# Parameters and result of the function which an invoker wraps. Defaults
# (for invokers of descriptors and MCP tools, which wrap no function) make
# the plain call the same as the invocation.
_Parameters = __.typx.ParamSpec(
    '_Parameters', default = [ Context, __.Arguments ] )
_Result = __.typx.TypeVar(
    '_Result',
    default = __.cabc.Coroutine[
        __.typx.Any, __.typx.Any, _canisters.ContentSequence ] )


class FunctionInvoker(
    __.immut.Object, __.typx.Generic[ _Parameters, _Result ]
):
    ''' Invoker which wraps an invocable function.

        Used for Python functions, TOML descriptors and MCP tools alike: the
        invocable is whatever runs the tool. The argument schema is checked
        and its validator compiled once, here, and an invocable which is a
        generator function (sync or async, also behind partials, methods,
        decorators or ``__call__``) is refused (see
        :py:func:`invocables.invokers.validate_function`). The constructor
        takes any name, as MCP servers may send names which the naming
        layer must make safe; :py:func:`produce_invoker` holds Python-side
        names to the rule of
        :py:func:`invocables.invokers.validate_tool_name`.

        An invoker made from a Python function (``produce_invoker``) stays
        callable as that function: ``add( 2, 3 )`` calls ``add`` itself,
        while ``await add( context, arguments )`` (a context and a mapping)
        is the invocation which validates the arguments and returns content
        canisters. The function is also available as ``function``.
    '''

    def __init__( # noqa: PLR0913
        self, *,
        name: str,
        invocable: Invocable,
        arguments_schema: __.Absential[ __.Schema ] = __.absent,
        ensemble: __.Absential[ EnsembleReference ] = __.absent,
        description: str = '',
        timeout: __.Absential[ float | None ] = __.absent,
        max_retries: __.Absential[ int ] = __.absent,
        deduplicator: __.Absential[ _deduplicators.Deduplicator ] = __.absent,
        annotations: __.Absential[ Annotations ] = __.absent,
        outschema: __.Absential[ __.Schema ] = __.absent,
        validator: __.Absential[ _schemata.Validator ] = __.absent,
        function: __.Absential[ _Function ] = __.absent,
    ):
        _validate_fields( name, invocable, description, annotations )
        if __.is_absent( arguments_schema ):
            arguments_schema = _schemata.access_schema_empty( )
        if __.typx.TYPE_CHECKING:
            # Declared here, not in the class, where type checkers would
            # take the callables for methods; the function is typed by the
            # class parameters (which dynadoc cannot document).
            self.name: str
            self.invocable: Invocable
            self.arguments_schema: __.Schema
            self.description: str
            self.ensemble = ensemble
            self.timeout: __.Absential[ float | None ]
            self.max_retries: __.Absential[ int ]
            self.deduplicator: __.Absential[ _deduplicators.Deduplicator ]
            self.annotations: Annotations
            self.outschema: __.Absential[ __.Schema ]
            self.validator: _schemata.Validator
            self.adaptations: dict[ str, __.typx.Any ]
            self.arguments_root: dict[ str, __.typx.Any ] | None
            self.function: __.Absential[
                __.cabc.Callable[ _Parameters, _Result ] ]
        validator_ = (
            _schemata.produce_validator( name, arguments_schema )
            if __.is_absent( validator ) else validator )
        # All attributes in one pass: frigid would check each assignment
        # (some 7 µs apiece) only to allow it, as it allows any during
        # __init__. The instance is frozen after __init__ all the same.
        vars( self ).update(
            name = name,
            invocable = invocable,
            arguments_schema = arguments_schema,
            description = description,
            ensemble = ensemble,
            timeout = validate_timeout(
                timeout, f"tool {name!r} option 'timeout'" ),
            max_retries = validate_retries(
                max_retries, f"tool {name!r} option 'max_retries'" ),
            deduplicator = deduplicator,
            annotations = _freeze_annotations( annotations ),
            outschema = outschema,
            validator = validator_,
            function = function,
            # Memo of processors: the schema adapted to each dialect.
            adaptations = { },
            # Memo of processors: the validator's root where it is the
            # schema's (None otherwise), read with one lookup per tool.
            arguments_root = (
                validator_.root if validator_.schema is arguments_schema
                else None ) )

    def __repr__( self ) -> str:
        ensemble = self.ensemble
        label = ensemble if __.is_absent( ensemble ) else ensemble.name
        return "{cls}( name = {name!r}, ensemble = {ensemble!r} )".format(
            cls = type( self ).__name__, name = self.name, ensemble = label )

    @__.typx.overload
    async def __call__(
        self, context: Context, arguments: __.Arguments
    ) -> _canisters.ContentSequence: ...
    @__.typx.overload
    def __call__( # noqa: F811
        self, *posargs: _Parameters.args, **nomargs: _Parameters.kwargs
    ) -> _Result: ...
    def __call__( # noqa: F811
        self, *posargs: __.typx.Any, **nomargs: __.typx.Any
    ) -> __.typx.Any:
        # A context and a mapping make an invocation, as the Invoker
        # protocol requires; any other call goes to the wrapped function.
        # The overloads above give type checkers the same rule.
        values = posargs # the checks narrow this alias, not posargs
        if ( # the engine's call, told quickly
            not nomargs and len( values ) == _INVOCATION_ARITY
            and type( values[ 0 ] ) is InvocationContext
            and type( values[ 1 ] ) is dict
        ): return self._invoke( posargs[ 0 ], posargs[ 1 ] )
        function = self.function
        if __.is_absent( function ) or _is_invocation( posargs, nomargs ):
            return self._invoke( *posargs, **nomargs )
        return function( *posargs, **nomargs )

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid. Raises invalidity error otherwise. '''
        return self.validator.validate_arguments( arguments )

    def with_ensemble(
        self, ensemble: EnsembleReference
    ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to ensemble. '''
        return type( self )(
            name = self.name, invocable = self.invocable,
            arguments_schema = self.arguments_schema,
            description = self.description,
            ensemble = ensemble, timeout = self.timeout,
            max_retries = self.max_retries, deduplicator = self.deduplicator,
            annotations = self.annotations, outschema = self.outschema,
            validator = self.validator, function = self.function )

    async def _invoke(
        self, context: Context, arguments: __.Arguments
    ) -> _canisters.ContentSequence:
        arguments = self.validator.validate_arguments( arguments )
        return _canisters.produce_content(
            await self.invocable( context, arguments ) )


def validate_retries(
    retries: __.Absential[ object ], location: str
) -> __.Absential[ int ]:
    ''' Returns number of retries if a whole number from 0; absent passes.

        Raises :py:class:`invocables.exceptions.ConfigurationInvalidity` at
        location otherwise.
    '''
    return __.values.validate_count(
        retries, location, minimum = 0, maximum = RETRIES_MAXIMUM,
        reason = "expected a whole number of retries from 0 to {maximum}, "
        "got {value!r}." )


validate_timeout = __.values.validate_timeout
access_name_flaw = _callables.access_name_flaw
produce_name_label = _callables.produce_name_label
validate_function = _callables.validate_function
validate_tool_name = _callables.validate_tool_name


def _is_invocation(
    posargs: tuple[ object, ... ], nomargs: __.cabc.Mapping[ str, object ]
) -> bool:
    ''' Returns whether call is ( context, arguments ), not a plain call. '''
    if len( posargs ) + len( nomargs ) != _INVOCATION_ARITY: return False
    if not nomargs: context, arguments = posargs
    elif 'arguments' in nomargs:
        context = posargs[ 0 ] if posargs else nomargs.get( 'context' )
        arguments = nomargs[ 'arguments' ]
    else: return False
    # Exact types first: the engine's calls take this path.
    if type( context ) is InvocationContext and type( arguments ) is dict:
        return True
    return _is_context( context ) and isinstance(
        arguments, __.cabc.Mapping )


def _validate_fields(
    name: object,
    invocable: object,
    description: object,
    annotations: object,
) -> None:
    ''' Refuses fields of wrong types, before anything is compiled. '''
    if not isinstance( name, str ):
        raise _exceptions.InvokerInvalidity(
            repr( name ), "the name must be a string." )
    if not callable( invocable ):
        raise _exceptions.InvokerInvalidity(
            name, f"the invocable {invocable!r} is not callable." )
    validate_function( name, invocable )
    if not isinstance( description, str ):
        raise _exceptions.InvokerInvalidity(
            name, "the description must be a string, got "
            f"{type( description ).__name__}." )
    if not __.is_absent( annotations ) and not isinstance(
        annotations, __.cabc.Mapping
    ):
        raise _exceptions.InvokerInvalidity(
            name, "the annotations must be a mapping, got "
            f"{type( annotations ).__name__}." )


def _freeze_annotations(
    annotations: __.Absential[ Annotations ]
) -> Annotations:
    ''' Returns read-only annotations; shares the frozen and the empty. '''
    if __.is_absent( annotations ) or not annotations:
        return _ANNOTATIONS_EMPTY
    if isinstance( annotations, __.immut.Dictionary ): return annotations
    return __.immut.Dictionary( annotations )


def _is_context( value: object ) -> bool:
    ''' Returns whether value has the members of an invocation context. '''
    return isinstance( value, InvocationContext ) or all(
        hasattr( value, name ) for name in _CONTEXT_MEMBERS )
