# SPDX-License-Identifier: Apache-2.0

''' MCP shapes of what serve gives: tools as listed, results of calls. '''


import invocables.serving.__ as __
import invocables.serving.gateway as _gateway
import invocables.serving.tasks as _tasks
import invocables.canisters as _canisters
import invocables.naming as _naming
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


_HINTS_WIRE = __.types.MappingProxyType( {
    'read_only': 'readOnlyHint', 'destructive': 'destructiveHint',
    'idempotent': 'idempotentHint', 'open_world': 'openWorldHint',
    'title': 'title',
} )


def produce_call_result(
    result: _canisters.ResultCanister, invoker: __.typx.Any
) -> _mcp_types.CallToolResult:
    ''' Produces MCP result of a result canister. '''
    if not __.is_absent( result.error ):
        return _sdk.produce_model(
            _mcp_types.CallToolResult,
            content = [ _mcp_types.TextContent(
                type = 'text', text = result.error.message ) ],
            is_error = True )
    blocks: list[ __.typx.Any ] = [ ]
    structure: __.typx.Any = None
    for item in result.content:
        if isinstance( item, _canisters.StructureContent ):
            data: __.typx.Any = item.data
            if structure is None and isinstance( data, dict ):
                structure = __.typx.cast( dict[ str, __.typx.Any ], data )
            blocks.append( _mcp_types.TextContent(
                type = 'text',
                text = __.json.dumps( data, ensure_ascii = False ) ) )
            continue
        blocks.append( _gateway.produce_block( item ) )
    outschema = getattr( invoker, 'outschema', __.absent )
    if structure is None and not __.is_absent( outschema ):
        structure = _derive_structure( result.content, outschema )
    return _sdk.produce_model(
        _mcp_types.CallToolResult,
        content = blocks, structured_content = structure )


def produce_tool(
    designation: _naming.Designation, *, tasks: bool = True
) -> _mcp_types.Tool:
    ''' Produces MCP tool description of a designation.

        With tasks, says whether the tool runs as a task: local tools as
        they declare (annotation ``task_support``), else they may
        (``optional``); upstream tools as their server said.
    '''
    invoker = designation.invoker
    outschema = invoker.outschema
    support = _tasks.access_task_support( designation ) if tasks else None
    return _sdk.produce_model(
        _mcp_types.Tool,
        execution = (
            None if support is None
            else _sdk.produce_model(
                _mcp_types.ToolExecution, task_support = support ) ),
        name = designation.name,
        description = invoker.description or None,
        input_schema = __.values.thaw_json( invoker.arguments_schema ),
        output_schema = (
            None if __.is_absent( outschema )
            else __.values.thaw_json( outschema ) ),
        annotations = _produce_annotations( invoker.annotations ) )


def _derive_structure(
    content: _canisters.ContentSequence, outschema: __.Schema
) -> __.typx.Any:
    ''' Returns structure which a declared output schema requires.

        Upstream results whose structure repeated their text come as text
        alone: the text is JSON of the structure, or its one field.
    '''
    texts = [
        item.text for item in content
        if isinstance( item, _canisters.TextContent ) ]
    if len( texts ) != 1: return None
    text = texts[ 0 ]
    try: data: __.typx.Any = __.json.loads( text )
    except ( ValueError, RecursionError ): data = None
    if isinstance( data, dict ): return __.typx.cast( __.typx.Any, data )
    properties: __.typx.Any = outschema.get( 'properties' )
    if not isinstance( properties, __.cabc.Mapping ): return None
    names = tuple( __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ],
        properties ) )
    if len( names ) == 1: return { names[ 0 ]: text }
    return None


def _produce_annotations(
    annotations: __.cabc.Mapping[ str, __.typx.Any ]
) -> _mcp_types.ToolAnnotations | None:
    data = {
        _HINTS_WIRE.get( key, key ): value
        for key, value in annotations.items( )
        if key not in _tasks.ANNOTATIONS }
    if not data: return None
    try: return _mcp_types.ToolAnnotations.model_validate( data )
    except ValueError: return None
