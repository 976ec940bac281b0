# SPDX-License-Identifier: Apache-2.0

''' Calls and results in native histories of each provider, and the
    edits which replace them (for :py:mod:`invocables.history`).
'''


import invocables.__ as __
import invocables.processors._wire as _wire


Message: __.typx.TypeAlias = __.typx.Any

PLACEHOLDER_PREFIX = '[Tool result removed from history'

# Where each provider keeps calls and results (see _survey_*).
BLOCKS = __.types.MappingProxyType( {
    'anthropic': ( 'content', ( 'tool_use', ), ( 'tool_result', ) ),
    'bedrock': ( 'content', ( 'toolUse', ), ( 'toolResult', ) ),
    'gemini': (
        'parts', ( 'function_call', 'functionCall' ),
        ( 'function_response', 'functionResponse' ) ),
} )
_FIELDS = __.types.MappingProxyType( {
    # call id, call name, call arguments, result id, result content
    'anthropic': ( 'id', 'name', 'input', 'tool_use_id', 'content' ),
    'bedrock': ( 'toolUseId', 'name', 'input', 'toolUseId', 'content' ),
    'gemini': ( 'id', 'name', 'args', 'id', 'response' ),
} )


class Result:

    __slots__ = ( 'index', 'position', 'text', 'trimmed' )

    def __init__( self, index: int, position: int, content: object ):
        self.index = index
        self.position = position
        self.text = render( content ) # measured once, for every strategy
        # Placeholders stand alone, or in one wrapper of their provider.
        self.trimmed = PLACEHOLDER_PREFIX in self.text[ : 80 ]


@__.dcls.dataclass( slots = True, eq = False )
class Call:

    index: int
    position: int
    identifier: object
    name: str
    arguments: object
    order: int = __.dcls.field( default = 0, init = False )
    result: Result | None = __.dcls.field( default = None, init = False )

    @property
    def label( self ) -> str:
        ''' Id of call, or its position. '''
        if isinstance( self.identifier, str ) and self.identifier:
            return self.identifier
        return f"{self.index}:{self.position}"


def _access( value: object, names: __.cabc.Iterable[ str ] ) -> object:
    for name in names:
        found = _wire.access_field( value, name )
        if found is not None: return found
    return None


def _dump_object( value: object ) -> object:
    dumped = _wire.nativize_object( value )
    if dumped is value: return repr( value )
    return dumped


def render( value: object ) -> str:
    ''' Returns text of a result or message, as JSON unless text; what is
        nested too deeply for JSON, as its keys and leaves (measured
        alike, its nesting left out).
    '''
    if isinstance( value, str ): return value
    try:
        return __.json.dumps(
            value, ensure_ascii = False, default = _dump_object )
    except ( RecursionError, ValueError ): # circular too
        return _render_flat( value )


def _render_flat( value: object ) -> str:
    ''' Returns keys and leaves of value, for what JSON cannot render
        (nested too deeply, or circular): each container walked once.
    '''
    pieces: list[ str ] = [ ]
    stack = [ value ]
    seen: set[ int ] = set( )
    while stack:
        item = stack.pop( )
        identity = id( item )
        if isinstance( item, str ):
            pieces.append( item )
            continue
        if not isinstance( item, ( __.cabc.Mapping, list, tuple ) ):
            dumped = _dump_object( item )
            if isinstance( dumped, str ): pieces.append( dumped )
            else: stack.append( dumped )
            continue
        if identity in seen: continue
        seen.add( identity )
        if isinstance( item, __.cabc.Mapping ):
            mapping = __.typx.cast( __.cabc.Mapping[ object, object ], item )
            pieces.extend( str( key ) for key in mapping )
            stack.extend( mapping.values( ) )
        else: stack.extend( __.typx.cast( __.cabc.Sequence[ object ], item ) )
    return ' '.join( pieces )


def edit_message(
    message: Message, provider: str, changes: dict[ tuple[ str, int ], object ]
) -> dict[ str, __.typx.Any ]:
    ''' Returns copy of message (plain) with results and calls replaced. '''
    copy = __.typx.cast(
        dict[ str, __.typx.Any ], _wire.nativize_object( message ) )
    if provider in BLOCKS:
        container, calls, results = BLOCKS[ provider ]
        blocks = list( __.typx.cast(
            list[ object ], _wire.nativize_object( copy[ container ] ) ) )
        for ( kind, position ), value in changes.items( ):
            keys = calls if kind == 'call' else results
            blocks[ position ] = _edit_block(
                blocks[ position ], provider, keys, kind, value )
        copy[ container ] = blocks
        return copy
    items: list[ object ] | None = None # copied once, for all its calls
    for ( kind, position ), value in changes.items( ):
        if kind == 'result':
            field = 'output' if provider == 'openai-responses' else 'content'
            copy[ field ] = value
        elif provider == 'openai-responses':
            copy[ 'arguments' ] = _empty_arguments( value )
        else:
            if items is None:
                items = list( __.typx.cast(
                    list[ object ],
                    _wire.nativize_object( copy[ 'tool_calls' ] ) ) )
                copy[ 'tool_calls' ] = items
            items[ position ] = _edit_chat_call( items[ position ], value )
    return copy


def _edit_chat_call( call: object, arguments: object ) -> dict[ str, object ]:
    call_ = __.typx.cast(
        dict[ str, __.typx.Any ], _wire.nativize_object( call ) )
    function = __.typx.cast(
        dict[ str, __.typx.Any ],
        _wire.nativize_object( call_[ 'function' ] ) )
    function[ 'arguments' ] = _empty_arguments( arguments )
    call_[ 'function' ] = function
    return call_


def _edit_block(
    block: object,
    provider: str,
    keys: tuple[ str, ... ],
    kind: str,
    value: object,
) -> dict[ str, __.typx.Any ]:
    copy = __.typx.cast(
        dict[ str, __.typx.Any ], _wire.nativize_object( block ) )
    fields = _FIELDS[ provider ]
    if provider == 'anthropic': inner, key = copy, None
    else:
        key = next( k for k in keys if copy.get( k ) is not None )
        inner = __.typx.cast(
            dict[ str, __.typx.Any ], _wire.nativize_object( copy[ key ] ) )
    if kind == 'call': inner[ fields[ 2 ] ] = _empty_arguments( value )
    elif provider == 'bedrock': inner[ fields[ 4 ] ] = [ { 'text': value } ]
    elif provider == 'gemini': inner[ fields[ 4 ] ] = { 'result': value }
    else: inner[ fields[ 4 ] ] = value
    if key is not None: copy[ key ] = inner
    return copy


def _empty_arguments( original: object ) -> object:
    return '{}' if isinstance( original, str ) else { }


def survey_calls(
    messages: tuple[ Message, ... ], provider: str
) -> list[ Call ]:
    ''' Returns calls of history, in order, each with its result (if any).

        Results name their calls by id; results without id (Gemini,
        Ollama) take the first call of the round not yet answered, of the
        same name if there is one.
    '''
    survey = _survey_blocks if provider in BLOCKS else (
        _survey_items if provider == 'openai-responses' else _survey_chat )
    calls: list[ Call ] = [ ]
    by_id: dict[ object, Call ] = { }
    pending = _Pending( )
    for index, message in enumerate( messages ):
        found, results = survey( message, index, provider )
        if found:
            if provider != 'openai-responses': pending = _Pending( )
            for call in found:
                call.order = len( calls )
                calls.append( call )
                pending.add( call )
                if isinstance( call.identifier, str ):
                    by_id[ call.identifier ] = call
        for identifier, name, result in results:
            call = (
                by_id.pop( identifier, None )
                if isinstance( identifier, str ) and identifier else None )
            if call is None: call = pending.pair( name )
            if call is None or call.result is not None: continue
            call.result = result
    return calls


class _Pending:
    ''' Calls of a round not yet answered, in order, by name too.

        Answered calls leave the queues when they reach the front, so that
        pairing every result of a round costs time linear in the round,
        whatever the order of the results.
    '''

    __slots__ = ( 'calls', 'named' )

    def __init__( self ) -> None:
        self.calls: __.collections.deque[ Call ] = __.collections.deque( )
        self.named: dict[ str, __.collections.deque[ Call ] ] = { }

    def add( self, call: Call ) -> None:
        ''' Adds call, last of the round. '''
        self.calls.append( call )
        self.named.setdefault(
            call.name, __.collections.deque( ) ).append( call )

    def pair( self, name: object ) -> Call | None:
        ''' Returns first unanswered call of name, else of any name. '''
        named = self.named.get( name ) if isinstance( name, str ) else None
        if named:
            _drop_answered( named )
            if named: return named[ 0 ]
        _drop_answered( self.calls )
        return self.calls[ 0 ] if self.calls else None


def _drop_answered( calls: __.collections.deque[ Call ] ) -> None:
    while calls and calls[ 0 ].result is not None: calls.popleft( )


Survey: __.typx.TypeAlias = tuple[
    list[ Call ], list[ tuple[ object, object, Result ] ] ]


def _survey_blocks( message: Message, index: int, provider: str ) -> Survey:
    access = _wire.access_field
    container, calls_keys, results_keys = BLOCKS[ provider ]
    fields = _FIELDS[ provider ]
    blocks = access( message, container )
    calls: list[ Call ] = [ ]
    results: list[ tuple[ object, object, Result ] ] = [ ]
    if not isinstance( blocks, ( list, tuple ) ): return calls, results
    for position, block in enumerate( __.typx.cast(
        __.cabc.Sequence[ object ], blocks
    ) ):
        genus = access( block, 'type' )
        if provider == 'anthropic':
            call = block if genus == calls_keys[ 0 ] else None
            result = block if genus == results_keys[ 0 ] else None
        else:
            call = _access( block, calls_keys )
            result = _access( block, results_keys )
            if access( call, 'type' ) == 'server_tool_use': call = None
        if call is not None:
            calls.append( Call(
                index, position, access( call, fields[ 0 ] ),
                str( access( call, fields[ 1 ] ) ),
                access( call, fields[ 2 ] ) ) )
        elif result is not None:
            results.append( (
                access( result, fields[ 3 ] ), access( result, 'name' ),
                Result( index, position, access( result, fields[ 4 ] ) ) ) )
    return calls, results


def _survey_chat( message: Message, index: int, provider: str ) -> Survey:
    access = _wire.access_field
    role = access( message, 'role' )
    if role == 'tool':
        name = access( message, 'tool_name' ) or access( message, 'name' )
        return [ ], [ (
            access( message, 'tool_call_id' ), name,
            Result( index, 0, access( message, 'content' ) ) ) ]
    items = access( message, 'tool_calls' )
    if role != 'assistant' or not isinstance( items, ( list, tuple ) ):
        return [ ], [ ]
    calls: list[ Call ] = [ ]
    for position, item in enumerate( __.typx.cast(
        __.cabc.Sequence[ object ], items
    ) ):
        function = access( item, 'function' )
        calls.append( Call(
            index, position, access( item, 'id' ),
            str( access( function, 'name' ) ),
            access( function, 'arguments' ) ) )
    return calls, [ ]


def _survey_items( message: Message, index: int, provider: str ) -> Survey:
    access = _wire.access_field
    genus = access( message, 'type' )
    if genus == 'function_call':
        return [ Call(
            index, 0, access( message, 'call_id' ),
            str( access( message, 'name' ) ),
            access( message, 'arguments' ) ) ], [ ]
    if genus == 'function_call_output':
        return [ ], [ (
            access( message, 'call_id' ), None,
            Result( index, 0, access( message, 'output' ) ) ) ]
    return [ ], [ ]
