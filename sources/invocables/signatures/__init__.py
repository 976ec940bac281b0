# SPDX-License-Identifier: Apache-2.0

''' Tools from typed Python functions: :py:func:`produce_invoker`.

    The JSON Schema of arguments is derived from the signature (see
    ``invocables.signatures.derivations``, and pydantic for what it does not
    derive), descriptions from ``Doc( ... )`` annotations or the docstring
    (``docstring_parser``), imported only when a function-based invoker is
    produced, so that ``import invocables`` stays light.
'''


import invocables.__ as __
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.execution.deduplicators as _deduplicators
import invocables.execution.workers as _workers
from . import _functions
from . import derivations as derivations


_Function: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]
_P = __.typx.ParamSpec( '_P' )
_T = __.typx.TypeVar( '_T' )

Descriptions = _functions.Descriptions
parse_docstring = _functions.parse_docstring
produce_signature_invocable = _functions.produce_signature_invocable


class _Decorator( __.typx.Protocol ):
    ''' Decorator which produces an invoker from a function. '''

    def __call__(
        self, function: __.cabc.Callable[ _P, _T ], /
    ) -> _invokers.FunctionInvoker[ _P, _T ]:
        raise NotImplementedError  # pragma: no cover


class _Options( __.typx.TypedDict, total = False ):
    ''' Options of :py:func:`produce_invoker`, for type checkers. '''

    name: __.Absential[ str ]
    description: __.Absential[ str ]
    arguments_schema: __.Absential[ __.Schema ]
    timeout: __.Absential[ float | None ]
    max_retries: __.Absential[ int ]
    deduplicator: __.Absential[ _deduplicators.Deduplicator ]
    annotations: __.Absential[ _invokers.Annotations ]
    outschema: __.Absential[ __.Schema ]


def produce_explicit_invocable(
    function: _Function
) -> _invokers.Invocable:
    ''' Returns invocable of ( context, arguments ) callable, sync or async:
        a sync one runs in a worker thread. '''
    if __.inspect.iscoroutinefunction( function ):
        return __.typx.cast( _invokers.Invocable, function )

    async def invoke(
        context: _invokers.Context, arguments: __.Arguments
    ) -> object:
        result = await _workers.execute_in_thread(
            function, context, arguments )
        # Such as an object whose __call__ is a coroutine function.
        if __.inspect.isawaitable( result ): return await result
        return result

    return invoke


@__.typx.overload
def produce_invoker(
    function: __.cabc.Callable[ _P, _T ], /,
    **options: __.typx.Unpack[ _Options ],
) -> _invokers.FunctionInvoker[ _P, _T ]: ...
@__.typx.overload
def produce_invoker( # noqa: F811
    **options: __.typx.Unpack[ _Options ]
) -> _Decorator: ...
def produce_invoker( # noqa: F811, PLR0913
    function: __.Absential[ _Function ] = __.absent, /, *,
    name: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc(
            ''' Tool name: 1 to 256 printable characters, not only
                spaces (``math.sum`` is fine). Default: name of
                function. ''' ),
    ] = __.absent,
    description: __.typx.Annotated[
        __.Absential[ str ],
        __.ddoc.Doc( ''' Tool description. Default: from docstring. ''' ),
    ] = __.absent,
    arguments_schema: __.typx.Annotated[
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
    max_retries: __.typx.Annotated[
        __.Absential[ int ],
        __.ddoc.Doc(
            ''' Retries of a call which failed for a transient reason
                (timeout, lost connection, the tool's
                :py:class:`invocables.exceptions.InvocationTransience`),
                with backoff and jitter. Default: inherited from ensemble
                or call, else none. ''' ),
    ] = __.absent,
    deduplicator: __.typx.Annotated[
        __.Absential[ _deduplicators.Deduplicator ],
        __.ddoc.Doc(
            ''' Deduplicator; give one only for tools safe to repeat. ''' ),
    ] = __.absent,
    annotations: __.typx.Annotated[
        __.Absential[ _invokers.Annotations ],
        __.ddoc.Doc( ''' Metadata, such as read-only hints. ''' ),
    ] = __.absent,
    outschema: __.typx.Annotated[
        __.Absential[ __.Schema ],
        __.ddoc.Doc( ''' JSON Schema of structured results. ''' ),
    ] = __.absent,
) -> _invokers.FunctionInvoker[ ..., __.typx.Any ] | _Decorator:
    ''' Produces invoker from typed function or from explicit schema.

        Usable as a decorator, bare or with keyword arguments. Functions,
        bound methods, class and static methods, ``functools.partial``
        objects and callable objects are accepted (the last two need a
        ``name``). Sync functions run in a worker thread, off the event
        loop. A parameter named ``context`` receives the invocation context
        and is not part of the schema. Parameter descriptions come from
        ``Doc( ... )`` annotations or from the docstring (Google,
        NumPy or Sphinx style).

        The invoker stays callable as the function: ``add( 2, 3 )`` calls
        it, while ``await add( context, arguments )`` is the invocation.

        Raises :py:class:`invocables.exceptions.InvokerInvalidity` for a
        name which is not allowed (see
        :py:func:`invocables.invokers.validate_tool_name`), a function
        whose calls give no value (a generator function, sync or async,
        even behind partials, methods, decorators or ``__call__``: see
        :py:func:`invocables.invokers.validate_function`), if no schema can
        be derived (``*args``, ``**kwargs``, defaults which are not JSON,
        annotations which cannot be evaluated), or if, with an explicit
        schema, the function cannot be called as ``( context, arguments )``;
        :py:class:`invocables.exceptions.ConfigurationInvalidity` for an
        invalid option, such as a ``timeout`` which is not a positive
        number.
    '''
    options: dict[ str, __.typx.Any ] = {
        'name': name, 'description': description,
        'arguments_schema': arguments_schema,
        'timeout': timeout, 'max_retries': max_retries,
        'deduplicator': deduplicator,
        'annotations': annotations, 'outschema': outschema }
    if __.is_absent( function ):

        def decorate(
            function: __.cabc.Callable[ _P, _T ]
        ) -> _invokers.FunctionInvoker[ _P, _T ]:
            return _produce_invoker( function, ** options )

        return decorate
    return _produce_invoker( function, ** options )


def validate_invocable(
    name: str, invocable: _Function
) -> _Function:
    ''' Returns invocable if callable as ``( context, arguments )``.

        Raises :py:class:`invocables.exceptions.InvokerInvalidity`,
        naming the tool, otherwise. Callables whose signature Python cannot
        inspect (some builtins) are accepted as they are.
    '''
    if not callable( invocable ):
        raise _exceptions.InvokerInvalidity(
            name, f"the invocable {invocable!r} is not callable." )
    try: signature = __.inspect.signature( invocable )
    except ( TypeError, ValueError ): return invocable
    try: signature.bind( None, None )
    except TypeError as exception:
        raise _exceptions.InvokerInvalidity(
            name, f"with an explicit schema, {invocable!r} must accept "
            f"( context, arguments ), but its signature is {signature} "
            f"({exception}). Drop the schema to derive it from the "
            "signature, or change the signature." ) from exception
    return invocable


def _access_name( function: _Function ) -> str:
    name = getattr( function, '__name__', None )
    label = repr( function )
    if isinstance( function, __.funct.partial ):
        reason = "a functools.partial object has no name of its own"
    elif not isinstance( name, str ): reason = "it has no __name__"
    elif name == '<lambda>': reason = "it is a lambda"
    else: return _invokers.validate_tool_name( name )
    raise _exceptions.InvokerInvalidity(
        label,
        f"cannot derive a tool name ({reason}); pass 'name' explicitly." )


def _expose_coroutine( function: _Function ) -> _Function:
    ''' Returns bound ``__call__`` of object whose ``__call__`` is async.

        So that such objects are awaited, not sent to a thread.
    '''
    subject: object = function # narrowed instead of function
    ordinary = __.inspect.isroutine( subject ) or isinstance(
        subject, ( type, __.funct.partial ) )
    if not ordinary and __.inspect.iscoroutinefunction( function.__call__ ):
        return function.__call__
    return function


def _produce_invoker( # noqa: PLR0913
    function: __.cabc.Callable[ _P, _T ], *,
    name: __.Absential[ str ],
    description: __.Absential[ str ],
    arguments_schema: __.Absential[ __.Schema ],
    timeout: __.Absential[ float | None ],
    max_retries: __.Absential[ int ],
    deduplicator: __.Absential[ _deduplicators.Deduplicator ],
    annotations: __.Absential[ _invokers.Annotations ],
    outschema: __.Absential[ __.Schema ],
) -> _invokers.FunctionInvoker[ _P, _T ]:
    if not callable( function ):
        raise _exceptions.InvokerInvalidity(
            str( name or function ), "the tool must be callable." )
    name_ = (
        _access_name( function ) if __.is_absent( name )
        else _invokers.validate_tool_name( name ) )
    _invokers.validate_function( name_, function )
    target = _expose_coroutine( function )
    summary, descriptions = _functions.parse_docstring( function )
    if __.is_absent( arguments_schema ):
        arguments_schema, invocable = (
            _functions.produce_signature_invocable(
                name_, target, descriptions ) )
    else:
        invocable = produce_explicit_invocable(
            validate_invocable( name_, target ) )
    invoker = _invokers.FunctionInvoker(
        name = name_,
        invocable = invocable,
        arguments_schema = arguments_schema,
        description = summary if __.is_absent( description ) else description,
        timeout = timeout,
        max_retries = max_retries,
        deduplicator = deduplicator,
        annotations = annotations,
        outschema = outschema,
        function = function )
    # The constructor takes any function (see FunctionInvoker.__init__), so
    # it cannot infer the parameters; they are those of function.
    return __.typx.cast( '_invokers.FunctionInvoker[ _P, _T ]', invoker )
