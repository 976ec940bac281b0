# SPDX-License-Identifier: Apache-2.0

''' Invocables, invokers and invocation contexts.

    An invocable is an async callable ``( context, arguments ) -> result``
    which implements a tool. An invoker wraps one invocable with its name,
    description, JSON Schema for its arguments (checked and compiled once)
    and options such as timeout and deduplicator.
'''


from . import __
from . import canisters as _canisters
from . import deduplicators as _deduplicators
from . import exceptions as _exceptions
from . import schemata as _schemata
from . import workers as _workers


Invocable: __.typx.TypeAlias = __.cabc.Callable[
    [ 'Context', __.Arguments ], __.cabc.Awaitable[ object ] ]
Annotations: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]


class Context( __.typx.Protocol ):
    ''' What an invocable receives besides its arguments. '''

    @property
    def auxdata( self ) -> __.typx.Any:
        ''' Data from the application, passed through unchanged. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def invoker( self ) -> 'Invoker':
        ''' Invoker which is running. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def namespace( self ) -> __.Namespace:
        ''' Per-conversation state, shared by invocations. '''
        raise NotImplementedError  # pragma: no cover


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class InvocationContext:
    ''' Concrete context, made by the execution engine per invocation. '''

    auxdata: __.typx.Any
    invoker: 'Invoker'
    namespace: __.Namespace
    invocation: __.Absential[ _canisters.InvocationCanister ] = __.absent


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
    def argschema( self ) -> __.Schema:
        ''' JSON Schema (Draft 2020-12) of arguments. '''
        raise NotImplementedError  # pragma: no cover

    @property
    def ensemble( self ) -> __.Absential[ str ]:
        ''' Name of ensemble which holds the invoker, if grouped. '''
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

    def with_ensemble( self, ensemble: str ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to named ensemble. '''
        raise NotImplementedError  # pragma: no cover

    async def __call__(
        self, context: Context, arguments: __.Arguments
    ) -> _canisters.ContentSequence:
        raise NotImplementedError  # pragma: no cover


class FunctionInvoker( __.immut.Object ):
    ''' Invoker which wraps an invocable function.

        Used for Python functions, TOML descriptors and MCP tools alike: the
        invocable is whatever runs the tool. The argument schema is checked
        and its validator compiled once, here.
    '''

    def __init__( # noqa: PLR0913
        self, *,
        name: str,
        invocable: Invocable,
        argschema: __.Absential[ __.Schema ] = __.absent,
        description: str = '',
        ensemble: __.Absential[ str ] = __.absent,
        timeout: __.Absential[ float | None ] = __.absent,
        deduplicator: __.Absential[ _deduplicators.Deduplicator ] = __.absent,
        annotations: __.Absential[ Annotations ] = __.absent,
        outschema: __.Absential[ __.Schema ] = __.absent,
        validator: __.Absential[ _schemata.Validator ] = __.absent,
    ):
        if __.is_absent( argschema ):
            argschema = _schemata.access_schema_empty( )
        self.name = name
        self.invocable = invocable
        self.argschema = argschema
        self.description = description
        self.ensemble = ensemble
        self.timeout = timeout
        self.deduplicator = deduplicator
        self.annotations: Annotations = __.immut.Dictionary(
            { } if __.is_absent( annotations ) else annotations )
        self.outschema = outschema
        self.validator = (
            _schemata.produce_validator( name, argschema )
            if __.is_absent( validator ) else validator )

    def __repr__( self ) -> str:
        return "{cls}( name = {name!r}, ensemble = {ensemble!r} )".format(
            cls = type( self ).__name__, name = self.name,
            ensemble = self.ensemble )

    async def __call__(
        self, context: Context, arguments: __.Arguments
    ) -> _canisters.ContentSequence:
        arguments = self.validator.validate_arguments( arguments )
        return _canisters.produce_content(
            await self.invocable( context, arguments ) )

    def validate_arguments( self, arguments: object ) -> __.Arguments:
        ''' Returns arguments if valid. Raises invalidity error otherwise. '''
        return self.validator.validate_arguments( arguments )

    def with_ensemble( self, ensemble: str ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to named ensemble. '''
        return type( self )(
            name = self.name, invocable = self.invocable,
            argschema = self.argschema, description = self.description,
            ensemble = ensemble, timeout = self.timeout,
            deduplicator = self.deduplicator,
            annotations = self.annotations, outschema = self.outschema,
            validator = self.validator )


_Function: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]
_Decorator: __.typx.TypeAlias = __.cabc.Callable[
    [ _Function ], FunctionInvoker ]


@__.typx.overload
def produce_invoker(
    function: _Function, /, *,
    name: __.Absential[ str ] = ...,
    description: __.Absential[ str ] = ...,
    argschema: __.Absential[ __.Schema ] = ...,
    timeout: __.Absential[ float | None ] = ...,
    deduplicator: __.Absential[ _deduplicators.Deduplicator ] = ...,
    annotations: __.Absential[ Annotations ] = ...,
    outschema: __.Absential[ __.Schema ] = ...,
) -> FunctionInvoker: ...
@__.typx.overload
def produce_invoker( # noqa: F811
    *,
    name: __.Absential[ str ] = ...,
    description: __.Absential[ str ] = ...,
    argschema: __.Absential[ __.Schema ] = ...,
    timeout: __.Absential[ float | None ] = ...,
    deduplicator: __.Absential[ _deduplicators.Deduplicator ] = ...,
    annotations: __.Absential[ Annotations ] = ...,
    outschema: __.Absential[ __.Schema ] = ...,
) -> _Decorator: ...
def produce_invoker( # noqa: F811
    function: __.Absential[ _Function ] = __.absent, /, *,
    name: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Tool name. Default: name of function. ''' ),
    ] = __.absent,
    description: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Tool description. Default: from docstring. ''' ),
    ] = __.absent,
    argschema: __.typx.Annotated[
        __.Absential[ __.Schema ],
        __.ddoc.Doc(
            ''' Explicit JSON Schema of arguments. When given, function is
                an invocable taking ``( context, arguments )``. Default:
                derived from the signature of the function. ''' ),
    ] = __.absent,
    timeout: __.typx.Annotated[
        __.Absential[ float | None ],
        __.ddoc.Doc(
            ''' Seconds before invocation is cancelled; ``None`` for no
                limit. Default: inherited from ensemble or call. ''' ),
    ] = __.absent,
    deduplicator: __.typx.Annotated[
        __.Absential[ _deduplicators.Deduplicator ],
        __.ddoc.Doc(
            ''' Deduplicator; give one only for tools safe to repeat. ''' ),
    ] = __.absent,
    annotations: __.typx.Annotated[
        __.Absential[ Annotations ],
        __.ddoc.Doc( ''' Metadata, such as read-only hints. ''' ),
    ] = __.absent,
    outschema: __.typx.Annotated[
        __.Absential[ __.Schema ],
        __.ddoc.Doc( ''' JSON Schema of structured results. ''' ),
    ] = __.absent,
) -> FunctionInvoker | _Decorator:
    ''' Produces invoker from typed function or from explicit schema.

        Sync functions run in a worker thread, off the event loop. Usable as
        a decorator, bare or with keyword arguments. A parameter named
        ``context`` receives the invocation context and is not part of the
        schema.
    '''
    options: dict[ str, __.typx.Any ] = {
        'name': name, 'description': description, 'argschema': argschema,
        'timeout': timeout, 'deduplicator': deduplicator,
        'annotations': annotations, 'outschema': outschema }
    if __.is_absent( function ):
        return __.funct.partial( _produce_invoker, ** options )
    return _produce_invoker( function, ** options )


def _produce_invoker(
    function: _Function, *,
    name: __.Absential[ str ],
    description: __.Absential[ str ],
    argschema: __.Absential[ __.Schema ],
    timeout: __.Absential[ float | None ],
    deduplicator: __.Absential[ _deduplicators.Deduplicator ],
    annotations: __.Absential[ Annotations ],
    outschema: __.Absential[ __.Schema ],
) -> FunctionInvoker:
    from . import signatures as _signatures
    if not callable( function ):
        raise _exceptions.InvokerInvalidity(
            str( name or function ), "the tool must be callable." )
    name_ = name if not __.is_absent( name ) else _access_name( function )
    summary, descriptions = _signatures.parse_docstring( function )
    if __.is_absent( argschema ):
        argschema, invocable = _signatures.produce_signature_invocable(
            name_, function, descriptions )
    else: invocable = _produce_explicit_invocable( function )
    return FunctionInvoker(
        name = name_,
        invocable = invocable,
        argschema = argschema,
        description = summary if __.is_absent( description ) else description,
        timeout = timeout,
        deduplicator = deduplicator,
        annotations = annotations,
        outschema = outschema )


def _access_name( function: _Function ) -> str:
    name = getattr( function, '__name__', None )
    if not isinstance( name, str ) or name == '<lambda>':
        raise _exceptions.InvokerInvalidity(
            repr( function ),
            "cannot derive a tool name; pass 'name' explicitly." )
    return name


def _produce_explicit_invocable( function: _Function ) -> Invocable:
    ''' Wraps ( context, arguments ) callable, sync or async. '''
    if __.inspect.iscoroutinefunction( function ):
        return __.typx.cast( Invocable, function )

    async def invoke( context: Context, arguments: __.Arguments ) -> object:
        return await _workers.execute_in_thread(
            function, context, arguments )

    return invoke
