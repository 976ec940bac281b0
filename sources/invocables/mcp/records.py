# SPDX-License-Identifier: Apache-2.0

''' Records of MCP ensembles: options, tool descriptions, progress. '''


from . import __
from . import _processes as _processes
from . import sandbox as _sandbox
from ..execution import deadlines as _deadlines


CONNECT_TIMEOUT_DEFAULT = 30.0
DEBOUNCE_DEFAULT = 0.1
LIST_TIMEOUT_DEFAULT = 30.0
RESULT_LIMIT_DEFAULT = _processes.RESULT_LIMIT_DEFAULT
TIMEOUT_DEFAULT = _deadlines.TIMEOUT_DEFAULT


def _produce_timeouts( ) -> __.cabc.Mapping[ str, float | None ]:
    ''' Returns empty timeouts. Not a frigid dictionary: its get ignores an
        absent default. '''
    return __.types.MappingProxyType( { } )


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
    ''' What a server says of one of its tools. '''

    name: str
    title: __.Absential[ str ] = __.absent
    description: str = ''
    argschema: __.Schema = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )
    outschema: __.Absential[ __.Schema ] = __.absent
    annotations: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = __.immut.Dictionary[ str, __.typx.Any ] )


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
