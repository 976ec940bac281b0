# SPDX-License-Identifier: Apache-2.0

''' What may become a tool: a name, and a callable which gives one value
    per call.

    Checks shared by every source of tools (functions, descriptors, MCP
    servers, wrappers); :py:mod:`invocables.invokers` offers them.
'''


import invocables.__ as __
import invocables.exceptions as _exceptions


_Function: __.typx.TypeAlias = __.cabc.Callable[ ..., __.typx.Any ]

NAME_LENGTH_MAXIMUM = 256

_NAME_RULE = (
    "a name has 1 to {maximum} printable characters, not only spaces, such "
    "as 'math.sum', 'get /users/{{id}}' or 'io.github.owner/server' (the "
    "model sees a safe name made from it)".format(
        maximum = NAME_LENGTH_MAXIMUM ) )
_NAME_SHOWN_MAXIMUM = 80 # characters of a name repeated in a message
# Results which are iterated, not sent whole: no tool may return them.
_RESULTS_ITERATED = frozenset( (
    __.cabc.AsyncGenerator, __.cabc.AsyncIterable, __.cabc.AsyncIterator,
    __.cabc.Generator, __.cabc.Iterator ) )
_UNWRAPPING_DEPTH_MAXIMUM = 32
_CALLABLES_FINAL = (
    type, __.types.FunctionType, __.types.BuiltinFunctionType,
    __.types.MethodDescriptorType, __.types.WrapperDescriptorType,
    __.types.MethodWrapperType, __.types.ClassMethodDescriptorType )
_name_plain = __.re.compile( r'[a-zA-Z0-9_.-]{1,64}' )


def validate_tool_name( name: object ) -> str:
    ''' Returns tool name if 1 to 256 printable characters, not only spaces.

        Any script and any punctuation: names as real tool sets give them
        (``math.sum``, ``get /users/{id}``, an MCP tool's name). The naming
        layer gives the model a safe name for each. Raises
        :py:class:`invocables.exceptions.InvokerInvalidity` otherwise.
    '''
    flaw = access_name_flaw( name )
    if flaw is None: return __.typx.cast( str, name )
    raise _exceptions.InvokerInvalidity(
        produce_name_label( name ),
        f"the tool name is not allowed: {flaw}." )


def access_name_flaw( name: object ) -> str | None:
    ''' Returns why name cannot name a tool or an ensemble, and the rule;
        ``None`` if it can.

        A name has 1 to ``NAME_LENGTH_MAXIMUM`` (256) characters, each
        printable (no control, format or surrogate characters, no line or
        paragraph separators, no blank but the space), and is not only
        spaces.
    '''
    if type( name ) is str and _name_plain.fullmatch( name ): return None
    flaw = _describe_name_flaw( name )
    if flaw is None: return None
    return f"{flaw}; {_NAME_RULE}"


def produce_name_label( name: object ) -> str:
    ''' Returns name for a message, shortened if long. '''
    text = name if isinstance( name, str ) else repr( name )
    return __.values.abbreviate( text, _NAME_SHOWN_MAXIMUM )


def validate_function( name: str, function: _Function ) -> _Function:
    ''' Returns function if each call gives one value, at once or awaited.

        Refuses generator functions, sync or async, also behind
        ``functools.partial``, methods, decorators which keep
        ``__wrapped__`` (``functools.wraps``) and the ``__call__`` of
        callable objects; and functions annotated to return an iterator. A
        tool's result is sent whole: such a tool would fail at every call.
        Raises :py:class:`invocables.exceptions.InvokerInvalidity`, naming
        the tool, otherwise.
    '''
    flaw = _describe_iteration( function )
    if flaw is None: return function
    raise _exceptions.InvokerInvalidity(
        name, f"{function!r} {flaw}, but a tool returns one result, sent "
        "whole (with return, not yield); collect the items into a list, or "
        "join them into text, and return that." )


def _describe_name_flaw( name: object ) -> str | None:
    if not isinstance( name, str ):
        return "expected text, got {kind}".format(
            kind = type( name ).__name__ )
    if len( name ) > NAME_LENGTH_MAXIMUM:
        return "it has {length} characters, more than {maximum}".format(
            length = len( name ), maximum = NAME_LENGTH_MAXIMUM )
    if not name.isprintable( ):
        index, character = next(
            ( index, character ) for index, character in enumerate( name )
            if not character.isprintable( ) )
        return (
            "it holds the unprintable character U+{code:04X} at index "
            "{index}".format( code = ord( character ), index = index ) )
    if not name.strip( ): return "it is only spaces" if name else "it is empty"
    return None


def _describe_iteration( function: object ) -> str | None:
    ''' Returns how function gives iterated results; ``None`` if each
        call gives one value, at once or awaited.

        Follows partials, methods, ``__wrapped__`` and the ``__call__`` of
        objects down to the first function which is a coroutine or a
        generator function, or which has nothing behind it.
    '''
    subject = function
    for _ in range( _UNWRAPPING_DEPTH_MAXIMUM ):
        subject = _unwrap_binding( subject )
        flags = 0
        if isinstance( subject, __.types.FunctionType ):
            flags = subject.__code__.co_flags
            flaw = _describe_function_flaw( subject, flags )
            if flaw is not None:
                if subject is function: return f"is {flaw}"
                return f"runs {subject.__qualname__}, {flaw}"
        if flags & __.inspect.CO_COROUTINE: return None
        behind = _access_behind( subject )
        if behind is None: return None
        subject = behind
    return None


def _describe_function_flaw(
    function: __.types.FunctionType, flags: int
) -> str | None:
    ''' Returns what makes function give iterated results, if anything. '''
    if flags & __.inspect.CO_ASYNC_GENERATOR:
        return "an async generator function"
    if flags & __.inspect.CO_GENERATOR and not (
        flags & __.inspect.CO_ITERABLE_COROUTINE # types.coroutine: awaited
    ): return "a generator function"
    annotation: object = function.__annotations__.get( 'return' )
    if annotation is None: return None
    if isinstance( annotation, str ):
        holder = __.types.SimpleNamespace(
            __annotations__ = { 'value': annotation } )
        try:
            annotation = __.typx.get_type_hints(
                holder, globalns = function.__globals__ )[ 'value' ]
        except Exception: return None # the signature's checks tell
    origin = __.typx.get_origin( annotation ) or annotation
    try: iterated = origin in _RESULTS_ITERATED
    except TypeError: return None # not hashable: no such class
    return f"annotated to return {annotation!r}" if iterated else None


def _access_behind( subject: object ) -> object | None:
    ''' Returns what a decorated function wraps, or the ``__call__`` of a
        callable object; ``None`` when nothing is behind.
    '''
    if isinstance( subject, __.types.FunctionType ):
        wrapped = subject.__dict__.get( '__wrapped__' )
    else:
        # Proxies may answer any attribute, or fail on any: only a
        # callable __wrapped__ counts.
        try: wrapped = getattr( subject, '__wrapped__', None )
        except Exception: wrapped = None
    if wrapped is not None and wrapped is not subject and callable( wrapped ):
        return wrapped
    # A class makes an instance, a value; routines of C have nothing behind.
    if isinstance( subject, _CALLABLES_FINAL ): return None
    try: return type( subject ).__call__
    except AttributeError: return None
def _unwrap_binding( function: object ) -> object:
    ''' Returns function behind partials, methods, static and class
        methods.
    '''
    subject = function
    for _ in range( _UNWRAPPING_DEPTH_MAXIMUM ):
        if isinstance( subject, __.funct.partial ):
            subject = __.typx.cast( __.funct.partial[ object ], subject ).func
        elif isinstance(
            subject, ( __.types.MethodType, staticmethod, classmethod )
        ):
            # Their functions are typed loosely: read as untyped.
            subject = __.typx.cast( __.typx.Any, subject ).__func__
        else: break
    return subject
