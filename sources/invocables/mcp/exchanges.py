# SPDX-License-Identifier: Apache-2.0

''' Requests of servers to the client, and the application's answers.

    The records which an elicitor or a sampler receives and returns, and the
    conversion of its answer (the library's record, the MCP wire shape as a
    mapping, or the SDK's result) into the record, once. Any other answer
    raises :py:class:`invocables.exceptions.ConfigurationInvalidity`,
    naming the shapes expected and the type received.
'''


import os as _os

from pydantic import BaseModel as _BaseModel

import invocables.mcp.__ as __
from ._sdk import types as _mcp_types
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions


SAMPLING_REQUESTS_DEFAULT = 100
SAMPLING_TOKENS_DEFAULT = 4096
SCHEMA_DEPTH_MAXIMUM = 256
''' Most levels of nesting (objects and arrays) of a schema which a
    server requests in an elicitation. MCP's are flat (an object of
    properties of primitive types: a few levels); a deeper one is refused
    before a recursive walk (a validator's, the redactor's, the
    application's) can exhaust Python's recursion. '''
SAMPLING_MODELS: tuple[ type[ __.typx.Any ], ... ] = (
    _mcp_types.CreateMessageResult, _mcp_types.CreateMessageResultWithTools )
''' The SDK's results of sampling, without and with tools. '''
_ACTIONS = frozenset( ( 'accept', 'decline', 'cancel' ) )
_CONTENT_EXPECTED = (
    "a mapping of the requested fields to strings, numbers, booleans, "
    "lists of strings or None as 'content'" )
_ELICITATION_EXPECTED = (
    "an ElicitationResponse, a mapping of MCP's ElicitResult "
    "({'action': 'accept', 'content': {...}}) or mcp.types.ElicitResult" )
_SAMPLING_CONTENT_EXPECTED = (
    "text content ({'type': 'text', 'text': ...}) as 'content'" )
_SAMPLING_EXPECTED = (
    "a SamplingResponse, a mapping of MCP's CreateMessageResult "
    "({'role': 'assistant', 'content': {'type': 'text', 'text': ...}, "
    "'model': ...}) or mcp.types.CreateMessageResult" )


class ElicitationActions( __.enum.Enum ):
    ''' Answers of the user to an elicitation. '''

    Accept = 'accept'       # content given, matching the requested schema
    Cancel = 'cancel'       # dismissed without a choice
    Decline = 'decline'     # refused explicitly


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ElicitationRequest:
    ''' Request of a server for input from the user.

        ``schema`` is the JSON schema of the requested content (a flat
        object). For a request to visit a URL (MCP's mode ``url``), ``url``
        and ``identifier`` (its ``elicitationId``) are given instead and
        ``schema`` is empty: the answer's action says whether the user
        agreed to visit it (``Decline`` if the application cannot show a
        URL); content is not sent.
    '''

    ensemble: str
    message: str
    schema: __.cabc.Mapping[ str, __.typx.Any ] = __.dcls.field(
        default_factory = lambda: __.types.MappingProxyType( { } ) )
    url: __.Absential[ str ] = __.absent
    identifier: __.Absential[ str ] = __.absent


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class ElicitationResponse:
    ''' Answer to an elicitation: action and, on accept, content.

        ``action`` is an :py:class:`ElicitationActions` member; ``content``
        maps the requested fields to strings, numbers, booleans, lists of
        strings or None. Anything else is refused when the record is made,
        with :py:class:`invocables.exceptions.CallbackAnswerInvalidity`.
    '''

    action: ElicitationActions
    content: __.cabc.Mapping[ str, __.typx.Any ] | None = None

    def __post_init__( self ) -> None:
        action: object = self.action
        if not isinstance( action, ElicitationActions ):
            raise _produce_invalidity(
                'elicitor', "an ElicitationActions member as 'action'",
                action, _advise_action( action ) )
        _validate_elicited_content( self.content )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingMessage:
    ''' One message of a sampling request, as neutral canisters. '''

    role: str
    content: _canisters.ContentSequence


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingRequest:
    ''' Request of a server for a completion by the application's model. '''

    ensemble: str
    messages: tuple[ SamplingMessage, ... ]
    max_tokens: int
    system: __.Absential[ str ] = __.absent
    temperature: __.Absential[ float ] = __.absent
    stop_sequences: tuple[ str, ... ] = ( )
    model_hints: tuple[ str, ... ] = ( )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingResponse:
    ''' Completion for a sampling request.

        ``text``, ``model`` (the name of the model which answered) and
        ``stop_reason`` (``'endTurn'``, ``'stopSequence'``, ``'maxTokens'``
        or another reason) are strings; anything else is refused when the
        record is made, with
        :py:class:`invocables.exceptions.CallbackAnswerInvalidity`.
    '''

    text: str
    model: str
    stop_reason: str = 'endTurn'

    def __post_init__( self ) -> None:
        for name in ( 'text', 'model', 'stop_reason' ):
            value: object = getattr( self, name )
            if isinstance( value, str ): continue
            raise _produce_invalidity(
                'sampler', f"a string as {name!r} of a SamplingResponse",
                value )


@__.dcls.dataclass( frozen = True, slots = True, kw_only = True )
class SamplingLimits:
    ''' Bounds on the sampling requests of one ensemble.

        ``requests`` is the number of requests served per connection;
        ``tokens`` the largest ``maxTokens`` a request may ask for. A request
        beyond either is refused with an error which the server sees.
        ``None`` for no bound.
    '''

    requests: int | None = SAMPLING_REQUESTS_DEFAULT
    tokens: int | None = SAMPLING_TOKENS_DEFAULT


ElicitationAnswer: __.typx.TypeAlias = (
    ElicitationResponse
    | __.cabc.Mapping[ str, __.typx.Any ]
    | _mcp_types.ElicitResult )


SamplingAnswer: __.typx.TypeAlias = (
    SamplingResponse
    | __.cabc.Mapping[ str, __.typx.Any ]
    | _mcp_types.CreateMessageResult )


Elicitor: __.typx.TypeAlias = __.cabc.Callable[
    [ ElicitationRequest ],
    __.cabc.Awaitable[ ElicitationAnswer ] | ElicitationAnswer ]


Sampler: __.typx.TypeAlias = __.cabc.Callable[
    [ SamplingRequest ],
    __.cabc.Awaitable[ SamplingAnswer ] | SamplingAnswer ]


Root: __.typx.TypeAlias = (
    str
    | _os.PathLike[ str ]
    | __.cabc.Mapping[ str, __.typx.Any ]
    | _mcp_types.Root )


LoggingLevels: __.typx.TypeAlias = __.typx.Literal[
    'debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert',
    'emergency' ]


def produce_elicitation_response(
    answer: __.typx.Annotated[
        object,
        __.ddoc.Doc(
            ''' What an elicitor returned: an ``ElicitationResponse``, a
                mapping of MCP's ``ElicitResult`` (``{'action': 'accept',
                'content': {...}}``) or ``mcp.types.ElicitResult``. ''' ),
    ],
) -> ElicitationResponse:
    ''' Produces the record of an elicitor's answer, from any shape the
        library accepts.

        Raises :py:class:`invocables.exceptions.CallbackAnswerInvalidity`,
        naming the shapes expected and the type received, for anything
        else (and for a wrong action or content).
    '''
    if isinstance( answer, ElicitationResponse ): return answer
    wire = _access_wire( 'elicitor', _ELICITATION_EXPECTED, answer, (
        _mcp_types.ElicitResult, ) )
    action: object = wire.get( 'action' )
    if isinstance( action, str ) and action in _ACTIONS:
        action = ElicitationActions( action )
    if not isinstance( action, ElicitationActions ):
        raise _produce_invalidity(
            'elicitor', "'accept', 'decline' or 'cancel' as 'action'",
            action, "The action is none of these." )
    if action is not ElicitationActions.Accept:
        return ElicitationResponse( action = action )
    return ElicitationResponse(
        action = action, content = wire.get( 'content' ) )


def produce_sampling_response(
    answer: __.typx.Annotated[
        object,
        __.ddoc.Doc(
            ''' What a sampler returned: a ``SamplingResponse``, a mapping
                of MCP's ``CreateMessageResult`` (``{'role': 'assistant',
                'content': {'type': 'text', 'text': ...}, 'model': ...}``,
                ``stopReason`` or ``stop_reason``) or
                ``mcp.types.CreateMessageResult``. ''' ),
    ],
) -> SamplingResponse:
    ''' Produces the record of a sampler's answer, from any shape the
        library accepts.

        Only text content is accepted (a block or a list of blocks).
        Raises :py:class:`invocables.exceptions.CallbackAnswerInvalidity`,
        naming the shapes expected and the type received, for anything
        else.
    '''
    if isinstance( answer, SamplingResponse ): return answer
    wire = _access_wire(
        'sampler', _SAMPLING_EXPECTED, answer, SAMPLING_MODELS )
    role: object = wire.get( 'role', 'assistant' )
    if role != 'assistant':
        raise _produce_invalidity( 'sampler', "'assistant' as 'role'", role )
    if 'model' not in wire:
        raise _produce_invalidity(
            'sampler', "the name of the model as 'model'", None,
            "The key 'model' is missing." )
    reason: object = wire.get( 'stopReason', wire.get( 'stop_reason' ) )
    return SamplingResponse(
        text = _produce_sampled_text( wire.get( 'content' ) ),
        model = wire[ 'model' ],
        # The record refuses a reason which is not a string.
        stop_reason = __.typx.cast(
            str, 'endTurn' if reason is None else reason ) )


def _access_wire(
    callback: str,
    expected: str,
    answer: object,
    models: tuple[ type[ __.typx.Any ], ... ],
) -> __.cabc.Mapping[ str, __.typx.Any ]:
    ''' Returns answer as a mapping of its wire shape, or raises. '''
    if isinstance( answer, models ):
        model = __.typx.cast( _BaseModel, answer )
        return model.model_dump(
            by_alias = True, mode = 'json', exclude_none = True )
    if isinstance( answer, __.cabc.Mapping ):
        return __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], answer )
    raise _produce_invalidity( callback, expected, answer )


def _access_text( block: object ) -> str | None:
    ''' Returns text of a text block; None for any other block. '''
    if not isinstance( block, __.cabc.Mapping ): return None
    block_ = __.typx.cast( __.cabc.Mapping[ str, object ], block )
    text = block_.get( 'text' )
    if block_.get( 'type' ) != 'text' or not isinstance( text, str ):
        return None
    return text


def _advise_action( action: object ) -> str:
    if isinstance( action, str ) and action in _ACTIONS:
        return (
            f"Write ElicitationActions.{action.capitalize( )}, or return "
            f"the MCP wire mapping {{'action': {action!r}, ...}}." )
    return "Write ElicitationActions.Accept, .Decline or .Cancel."


def _is_elicited_value( value: object ) -> bool:
    if value is None or isinstance( value, ( str, int, float ) ):
        return True
    if isinstance( value, ( list, tuple ) ):
        items = __.typx.cast( __.cabc.Sequence[ object ], value )
        return all( isinstance( item, str ) for item in items )
    return False


def _produce_invalidity(
    callback: str, expected: str, received: object, reason: str = ''
) -> _exceptions.CallbackAnswerInvalidity:
    ''' Returns invalidity naming the type received, never its value. '''
    return _exceptions.CallbackAnswerInvalidity(
        callback, expected, type( received ).__name__, reason )


def _produce_sampled_text( content: object ) -> str:
    ''' Returns text of the content of a sampling answer, or raises. '''
    blocks = _survey_blocks( content )
    texts: list[ str ] = [ ]
    for block in blocks:
        text = _access_text( block )
        if text is None:
            raise _produce_invalidity(
                'sampler', _SAMPLING_CONTENT_EXPECTED, block,
                "Only text content is served (a block or a list of "
                "blocks)." )
        texts.append( text )
    if not texts:
        raise _produce_invalidity(
            'sampler', _SAMPLING_CONTENT_EXPECTED, content,
            "The content holds no block." )
    return '\n'.join( texts )


def is_schema_deep(
    schema: object, maximum: int = SCHEMA_DEPTH_MAXIMUM
) -> bool:
    ''' Tells whether schema nests objects and arrays deeper than
        maximum levels; in one pass without recursion, which stops at the
        first level too deep. '''
    pending: list[ tuple[ object, int ] ] = [ ( schema, 1 ) ]
    while pending:
        value, depth = pending.pop( )
        if isinstance( value, __.cabc.Mapping ):
            values = __.typx.cast(
                __.cabc.Mapping[ object, object ], value ).values( )
        elif isinstance( value, ( list, tuple ) ):
            values = __.typx.cast( __.cabc.Sequence[ object ], value )
        else: continue
        if depth > maximum: return True
        pending.extend( ( item, depth + 1 ) for item in values )
    return False


def validate_content(
    schema: __.cabc.Mapping[ str, __.typx.Any ],
    content: __.cabc.Mapping[ str, __.typx.Any ],
) -> tuple[ str, str, str ] | None:
    ''' Returns where content breaks schema, the keyword it breaks and
        why, or None if it matches. A schema nested deeper than
        :py:data:`SCHEMA_DEPTH_MAXIMUM` levels is not walked: any content
        breaks it (keyword ``depth``); nor is one which applies too many
        subschemas to one value (keyword ``fanout``, see
        :py:func:`invocables.schemata.is_schema_fanned`).
    '''
    if is_schema_deep( schema ):
        return '(top)', 'depth', (
            f"the schema is nested deeper than {SCHEMA_DEPTH_MAXIMUM} "
            "levels" )
    # A server's patterns never run on Python's backtracking re.
    import invocables.schemata as schemata
    if schemata.is_schema_fanned( schema ):
        return '(top)', 'fanout', (
            "the schema applies more than "
            f"{schemata.FANOUT_MAXIMUM} subschemas to one value" )
    validator = schemata.produce_instance_validator( schema )
    try:
        with schemata.bound_steps( ):
            errors: list[ __.typx.Any ] = sorted(
                validator.iter_errors( dict( content ) ),
                key = lambda error: tuple(
                    str( part ) for part in error.path ) )
    except _exceptions.PatternInterruption as exception:
        return '(unknown)', 'pattern', (
            f"the pattern {exception.pattern!r} took too long to match" )
    except _exceptions.ValidationExhaustion:
        return '(unknown)', 'steps', schemata.describe_exhaustion( 'content' )
    if not errors: return None
    error = errors[ 0 ]
    where = '/'.join( str( part ) for part in error.path ) or '(top)'
    return where, str( error.validator ), str( error.message )


def _survey_blocks( content: object ) -> tuple[ object, ... ]:
    ''' Returns blocks of content: a list of blocks, or one block. '''
    if isinstance( content, ( list, tuple ) ):
        return tuple( __.typx.cast( __.cabc.Sequence[ object ], content ) )
    return ( content, )


def thaw_value( value: object ) -> object:
    ''' Returns a list for a tuple of strings; else value unchanged. '''
    if isinstance( value, tuple ):
        return list( __.typx.cast( tuple[ object, ... ], value ) )
    return value


def _validate_elicited_content( content: object ) -> None:
    ''' Raises invalidity unless content maps names to primitive values. '''
    if content is None: return
    if not isinstance( content, __.cabc.Mapping ):
        raise _produce_invalidity(
            'elicitor', _CONTENT_EXPECTED, content,
            "Give the answers as a mapping of the requested fields." )
    for name, value in __.typx.cast(
        __.cabc.Mapping[ object, object ], content
    ).items( ):
        if not isinstance( name, str ):
            raise _produce_invalidity(
                'elicitor', "names (strings) as keys of 'content'", name )
        if _is_elicited_value( value ): continue
        raise _produce_invalidity(
            'elicitor', _CONTENT_EXPECTED, value,
            f"The value of field {name!r} has a type MCP does not "
            "carry in an elicitation." )
