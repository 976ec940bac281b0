# SPDX-License-Identifier: Apache-2.0

''' Tasks as the protocol shows them: the fields of MCP 2025-11-25 (the
    SDK's models, by snake_case names) and those of MCP 2026-07-28 (wire
    names), with its result or error once it ended (``tasks/result`` of
    2025-11-25, ``tasks/get`` of 2026-07-28). The tasks are records
    of :py:class:`invocables.serving.tasks.TaskRecord` (typed loosely:
    that module imports this one).
'''


import invocables.serving.__ as __
import invocables.serving._continuations as _continuations
import invocables.mcp._sdk as _sdk
from ..mcp._sdk import types as _mcp_types


_RELATED_TASK = 'io.modelcontextprotocol/related-task'


def produce_task_detailed(
    task: __.typx.Any,
    continuation: _continuations.Continuation | None = None,
) -> dict[ str, __.typx.Any ]:
    ''' Returns the task of ``tasks/get`` (MCP 2026-07-28): with its result
        when completed, its error when failed; ``input_required``, with
        its requests, while its call waits for the client's answers.
    '''
    detailed = produce_task_wire( task )
    requests = _continuations.produce_requests_wire( continuation )
    if requests and not task.is_terminal( ):
        detailed.update( status = 'input_required', inputRequests = requests )
    if task.state.value == 'completed' and task.result is not None:
        detailed[ 'result' ] = dict( task.result )
    if task.state.value == 'failed':
        detailed[ 'error' ] = dict( task.error or {
            'code': _mcp_types.INTERNAL_ERROR,
            'message': "The call failed." } )
    return detailed


def produce_task_failure( task: __.typx.Any ) -> BaseException:
    ''' Produces the error of ``tasks/result`` (MCP 2025-11-25) of an
        ended task without result: its error, or that of a cancelled task.
    '''
    error = task.error or {
        'code': _mcp_types.INTERNAL_ERROR,
        'message': "The task was cancelled: it has no result." }
    return _sdk.produce_error(
        int( error[ 'code' ] ), str( error[ 'message' ] ),
        error.get( 'data' ) )


def produce_task_fields(
    task: __.typx.Any
) -> dict[ str, __.typx.Any ]:
    ''' Returns fields of the protocol's task (snake_case names). '''
    return {
        'task_id': task.identifier,
        'status': task.state.value,
        'status_message': task.message,
        'created_at': task.created.isoformat( ),
        'last_updated_at': task.updated.isoformat( ),
        'ttl': task.ttl,
        'poll_interval': task.poll_interval,
    }


def produce_task_model(
    task: __.typx.Any, model: type[ __.typx.Any ] = _mcp_types.Task
) -> __.typx.Any:
    ''' Returns the task as a model of MCP 2025-11-25 which holds the
        fields of a task (``Task``, ``GetTaskResult``, ``CancelTaskResult``).
    '''
    return _sdk.produce_model( model, **produce_task_fields( task ) )


def produce_task_payload(
    task: __.typx.Any
) -> _mcp_types.CallToolResult | None:
    ''' Returns the result of ``tasks/result`` (MCP 2025-11-25) of an
        ended task: its call's result, naming the task; ``None`` if it
        has none (it failed, or was cancelled).
    '''
    if task.result is None: return None
    meta = { _RELATED_TASK: { 'taskId': task.identifier } }
    return _mcp_types.CallToolResult.model_validate(
        { **task.result, '_meta': meta } )


def produce_task_wire( task: __.typx.Any ) -> dict[ str, __.typx.Any ]:
    ''' Returns fields of the task of MCP 2026-07-28 (wire names). '''
    fields: dict[ str, __.typx.Any ] = {
        'taskId': task.identifier,
        'status': task.state.value,
        'createdAt': task.created.isoformat( ),
        'lastUpdatedAt': task.updated.isoformat( ),
        'ttlMs': task.ttl,
        'pollIntervalMs': task.poll_interval,
    }
    if task.message is not None: fields[ 'statusMessage' ] = task.message
    return fields
