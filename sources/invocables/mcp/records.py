# SPDX-License-Identifier: Apache-2.0

''' Records of MCP ensembles: options, tool descriptions, progress. '''


import os as _os

import invocables.mcp.__ as __
import invocables.mcp._processes as _processes
import invocables.mcp.sandbox as _sandbox
import invocables.exceptions as _exceptions
import invocables.execution.deadlines as _deadlines


CONNECT_TIMEOUT_DEFAULT = 30.0
DEBOUNCE_DEFAULT = 0.1
LIST_TIMEOUT_DEFAULT = 30.0
RESULT_LIMIT_DEFAULT = _processes.RESULT_LIMIT_DEFAULT
TIMEOUT_DEFAULT = _deadlines.TIMEOUT_DEFAULT
OPTIONS = (
    'connect_timeout', 'list_timeout', 'timeouts', 'include', 'exclude',
    'reporter', 'grace', 'result_limit', 'resources_as_tools', 'sandbox',
    'tasks', 'protocol' )
''' Names of the fields of server options. '''

_FIELDS_CHECKED = (
    'connect_timeout', 'list_timeout', 'timeouts', 'grace', 'debounce',
    'result_limit' )
_FIELDS_PAUSES = frozenset( ( 'debounce', 'grace' ) )
_REASON_PAUSE = (
    "must be zero or a positive, finite number of seconds, got {value!r} "
    "({kind})." )
_REASON_TIMEOUT = (
    "must be a positive, finite number of seconds, got {value!r} "
    "({kind})." )

_ChoiceT = __.typx.TypeVar( '_ChoiceT', bound = __.enum.Enum )


def _produce_timeouts( ) -> __.cabc.Mapping[ str, float | None ]:
    ''' Returns empty timeouts. Not a frigid dictionary: its get ignores an
        absent default. '''
    return __.types.MappingProxyType( { } )


class TaskUses( __.enum.Enum ):
    ''' Which tools are called as tasks.

        A task runs on the server beyond the request which started it: the
        ensemble polls it, fetches its result, cancels it when the call is
        cancelled or times out, and follows it across a reconnection. Under
        MCP 2025-11-25 the ensemble chooses which calls become tasks, by
        the tools' declared support; under MCP 2026-07-28 (the extension
        ``io.modelcontextprotocol/tasks``) the server chooses, and
        ``required`` and ``supported`` both declare the extension, while
        ``never`` declares nothing.
    '''

    Never = 'never'
    ''' No tool; tools which require tasks are left out. '''
    Required = 'required'
    ''' Tools which require tasks (``taskSupport: required``). '''
    Supported = 'supported'
    ''' Every tool which supports tasks (``required`` or ``optional``). '''


class Protocols( __.enum.Enum ):
    ''' Which handshake opens a session with the server.

        MCP 2026-07-28 opens with ``server/discover``; former revisions
        with ``initialize``. Under the mcp SDK 1.x, which speaks no
        2026-07-28, every choice opens with ``initialize``.
    '''

    Automatic = 'auto'
    ''' ``initialize``, then ``server/discover`` if the server refuses it
        (or answers 2026-07-28): no probe for a former server. '''
    Legacy = 'legacy'
    ''' ``initialize`` alone: the session never speaks 2026-07-28. '''
    Modern = 'modern'
    ''' ``server/discover``, then ``initialize`` if the server refuses it:
        a server of 2026-07-28 hears its own protocol from the first
        request. '''


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class Progress:
    ''' Progress notification from a server, for one running call. '''

    ensemble: str
    tool: str
    progress: float
    total: float | None = None
    message: str | None = None
    invocation_id: __.Absential[ str ] = __.absent


Reporter: __.typx.TypeAlias = __.cabc.Callable[
    [ Progress ], __.cabc.Awaitable[ None ] | None ]


class ToolDescription( __.immut.DataclassObject ):
    ''' What a server says of one of its tools.

        ``task_support`` says whether it runs as a task
        (``execution.taskSupport``): ``forbidden`` (also when the server
        says nothing), ``optional`` or ``required``.
    '''

    name: str
    title: __.Absential[ str ] = __.absent
    description: str = ''
    argschema: __.Schema = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )
    outschema: __.Absential[ __.Schema ] = __.absent
    annotations: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )
    # Whether the tool runs as a task (execution.taskSupport): forbidden
    # (also when the server says nothing), optional or required.
    task_support: str = 'forbidden'


class Omission( __.immut.DataclassObject ):
    ''' Tool which the server offers but the ensemble leaves out, and why. '''

    name: str
    reason: str


class ServerOptions( __.immut.DataclassObject ):
    ''' Deadlines, filters, callbacks and sandbox of an MCP ensemble. '''

    connect_timeout: float = CONNECT_TIMEOUT_DEFAULT
    list_timeout: float = LIST_TIMEOUT_DEFAULT
    timeouts: __.cabc.Mapping[ str, float | None ] = __.dcls.field(
        default_factory = _produce_timeouts )
    include: __.Absential[ frozenset[ str ] ] = __.absent
    exclude: frozenset[ str ] = frozenset( )
    reporter: __.Absential[ Reporter ] = __.absent
    grace: float = _processes.GRACE_DEFAULT
    debounce: float = DEBOUNCE_DEFAULT
    result_limit: int | None = RESULT_LIMIT_DEFAULT
    resources_as_tools: bool = False # expose: offer resources as tools
    sandbox: __.Absential[ _sandbox.Sandbox ] = __.absent
    tasks: TaskUses = TaskUses.Required
    protocol: Protocols = Protocols.Automatic

    def __post_init__( self ) -> None:
        # Checked when made, so that no ensemble waits without end.
        for field in _FIELDS_CHECKED:
            _validate_option(
                field, getattr( self, field ),
                f"MCP server options {field!r}" )


class ServerShortcuts( __.typx.TypedDict, total = False ):
    ''' Further keyword shortcuts of
        :py:func:`invocables.mcp.produce_ensemble`: fields of the server
        parameters (``arguments``, ``environment``, ``cwd``), of the server
        options (``connect_timeout`` to ``sandbox``), and the sampling limits
        offered to the server, given one by one.
    '''

    arguments: __.typx.Annotated[
        __.cabc.Sequence[ str ],
        __.ddoc.Doc( ''' Further arguments of the program. ''' ) ]
    environment: __.typx.Annotated[
        __.cabc.Mapping[ str, str ],
        __.ddoc.Doc( ''' Variables for the child, over a minimal
            inherited set (HOME, LOGNAME, PATH, SHELL, TERM, USER). A value
            ``env:NAME`` is read from the environment at connect time. ''' ) ]
    cwd: __.typx.Annotated[
        str | _os.PathLike[ str ],
        __.ddoc.Doc( ''' Working directory of the child. ''' ) ]
    connect_timeout: __.typx.Annotated[
        float,
        __.ddoc.Doc( ''' Seconds allowed to start, handshake and list
            tools. ''' ) ]
    list_timeout: __.typx.Annotated[
        float,
        __.ddoc.Doc( ''' Seconds allowed to a refresh of the tools. ''' ) ]
    timeouts: __.typx.Annotated[
        __.cabc.Mapping[ str, float | None ],
        __.ddoc.Doc( ''' Seconds allowed to calls, by tool name. ''' ) ]
    include: __.typx.Annotated[
        __.cabc.Iterable[ str ],
        __.ddoc.Doc( ''' Names (or globs) of the only tools to offer. ''' ) ]
    exclude: __.typx.Annotated[
        __.cabc.Iterable[ str ],
        __.ddoc.Doc( ''' Names (or globs) of tools never to offer. ''' ) ]
    reporter: __.typx.Annotated[
        Reporter,
        __.ddoc.Doc( ''' Called (sync or async) with each progress
            notification; giving it makes every call ask for progress. ''' ) ]
    grace: __.typx.Annotated[
        float,
        __.ddoc.Doc( ''' Seconds a child may take to exit after its stdin
            closes, and again after SIGTERM, before SIGKILL. ''' ) ]
    resources_as_tools: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Also offer the model two tools which list the
            server's resources and read one by URI (``list_resources``,
            ``read_resource``; renamed if the server has such tools). ''' ) ]
    sandbox: __.typx.Annotated[
        _sandbox.Sandbox | bool,
        __.ddoc.Doc( ''' Confinement of a stdio server: a ``Sandbox``, or
            ``True`` for the default profile. Connecting fails if no sandbox
            can be set up here. ''' ) ]
    tasks: __.typx.Annotated[
        TaskUses,
        __.ddoc.Doc( ''' Which tools are called as tasks (default: those
            which require them). ''' ) ]
    protocol: __.typx.Annotated[
        Protocols | str,
        __.ddoc.Doc( ''' Which handshake opens the session (a member or
            its value; default: ``auto``). ''' ) ]
    sampling_limits: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Most sampling requests per session and most
            tokens per request (default: 100 and 4096). ''' ) ]


def produce_options(
    name: str,
    options: __.Absential[ ServerOptions ],
    given: __.cabc.Mapping[ str, __.typx.Any ],
    url: __.Absential[ str ],
) -> ServerOptions:
    ''' Returns server options, with the fields given as keywords. '''
    fields = { key: given[ key ] for key in OPTIONS if key in given }
    if 'timeouts' in fields:
        fields[ 'timeouts' ] = __.types.MappingProxyType(
            dict( fields[ 'timeouts' ] ) )
    if 'include' in fields:
        fields[ 'include' ] = frozenset( fields[ 'include' ] )
    if 'exclude' in fields:
        fields[ 'exclude' ] = frozenset( fields[ 'exclude' ] )
    if 'tasks' in fields:
        fields[ 'tasks' ] = _validate_choice(
            name, 'tasks', TaskUses, fields[ 'tasks' ] )
    if 'protocol' in fields:
        fields[ 'protocol' ] = _validate_choice(
            name, 'protocol', Protocols, fields[ 'protocol' ] )
    if 'sandbox' in fields:
        fields[ 'sandbox' ] = _sandbox.validate_sandbox(
            fields[ 'sandbox' ], f"MCP ensemble {name!r} 'sandbox'" )
    for field in _FIELDS_CHECKED: # named by ensemble, before the record
        if field in fields:
            _validate_option(
                field, fields[ field ], f"MCP ensemble {name!r} {field!r}" )
    options = (
        ServerOptions( **fields ) if __.is_absent( options )
        else __.dcls.replace( options, **fields ) )
    if not __.is_absent( options.sandbox ) and not __.is_absent( url ):
        raise _exceptions.ConfigurationInvalidity(
            f"MCP ensemble {name!r} 'sandbox'", "applies to stdio servers "
            "only (give 'command'); an HTTP server runs where it is "
            "hosted." )
    return options


def _validate_choice(
    name: str, option: str, choices: type[ _ChoiceT ], value: object
) -> _ChoiceT:
    ''' Returns member of choices of a value (member or its string);
        raises if not.
    '''
    if isinstance( value, choices ): return value
    if isinstance( value, str ):
        for member in choices:
            if member.value == value: return member
    known = ', '.join( repr( member.value ) for member in choices )
    raise _exceptions.ConfigurationInvalidity(
        f"MCP ensemble {name!r} '{option}'", f"must be one of {known}." )


def _validate_option( field: str, value: object, location: str ) -> None:
    ''' Raises configuration invalidity at location unless value is valid
        for a checked field of server options.
    '''
    if field == 'timeouts':
        timeouts = __.typx.cast( __.cabc.Mapping[ str, object ], value )
        for label, timeout in timeouts.items( ):
            __.values.validate_timeout(
                timeout, f"{location}[{label!r}]",
                reason = "must be a positive number of seconds or None." )
        return
    if field == 'result_limit':
        if value is None or (
            isinstance( value, int ) and not isinstance( value, bool )
            and value > 0
        ): return
        raise _exceptions.ConfigurationInvalidity(
            location, "must be a positive number of bytes or None." )
    reason = _REASON_TIMEOUT
    if field in _FIELDS_PAUSES:
        if type( value ) in ( int, float ) and value == 0: return
        reason = _REASON_PAUSE
    __.values.validate_timeout(
        value, location, nullable = False, reason = reason )


def validate_timeout( name: str, label: str, value: object ) -> None:
    ''' Raises configuration invalidity unless value is a timeout of a call
        (positive seconds, or None). '''
    __.values.validate_timeout(
        value, f"MCP ensemble {name!r} timeout {label!r}",
        reason = "must be a positive number of seconds or None." )
