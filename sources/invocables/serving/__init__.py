# SPDX-License-Identifier: Apache-2.0

''' Ensembles served as one MCP server, over stdio or streamable HTTP.

    Any ensembles (Python functions, TOML descriptors, other MCP servers:
    aggregation) become the tools of one server built on the ``mcp`` SDK's
    low-level server. Names are those a provider would see (scoped by
    ensemble when two ensembles offer the same name); descriptions, input
    and output schemas and annotations are passed through, and so are
    structured, image, audio and resource contents of results. Every call
    goes through the execution engine: arguments are validated before
    anything runs, the permission policy applies, and a failing tool
    becomes an error result. A client's cancellation cancels the call,
    which cancels the call to an upstream server in turn; what an upstream
    server asks and tells during a call (elicitation, sampling, log
    messages, progress) reaches the client, whose answers go back up, and
    so do its changes of resources. A client which asks gets a task
    (MCP 2025-11-25) instead of waiting for the call. Importing this
    package imports the ``mcp`` SDK (the ``mcp`` extra).

    The parts: ``servers`` (:py:class:`ToolServer` and its options; the
    MCP shapes of its tools and results, ``_shapes``; the streams of
    ``subscriptions/listen``, ``_subscriptions``),
    ``gateway`` (upstream resources, prompts and completion),
    ``applications`` (streamable HTTP and its guards; uvicorn's HTTP with
    its timeouts, ``protocols``), ``stdio`` (over
    bounded lines of its own, ``_stdio``),
    ``tasks`` (tool calls run as tasks, and their store), how a served
    tool asks its client (``_liaisons``), and the server side of the SDK
    (``_sdk``).
'''


from . import applications as _applications
from .applications import (
    BODY_TIMEOUT_DEFAULT as BODY_TIMEOUT_DEFAULT,
    CONNECTIONS_MAXIMUM_DEFAULT as CONNECTIONS_MAXIMUM_DEFAULT,
    EVENTS_MAXIMUM_DEFAULT as EVENTS_MAXIMUM_DEFAULT,
    EVENTS_SIZE_MAXIMUM_DEFAULT as EVENTS_SIZE_MAXIMUM_DEFAULT,
    HEADER_TIMEOUT_DEFAULT as HEADER_TIMEOUT_DEFAULT,
    IDLE_TIMEOUT_DEFAULT as IDLE_TIMEOUT_DEFAULT,
    OPTIONS_VARIABLE as OPTIONS_VARIABLE,
    PATH_DEFAULT as PATH_DEFAULT,
    PORT_DEFAULT as PORT_DEFAULT,
    SESSION_IDLE_TIMEOUT_DEFAULT as SESSION_IDLE_TIMEOUT_DEFAULT,
    SESSIONS_MAXIMUM_DEFAULT as SESSIONS_MAXIMUM_DEFAULT,
    HeaderTimeoutProtocol as HeaderTimeoutProtocol,
    MemoryEventStore as MemoryEventStore,
    is_loopback as is_loopback,
    produce_application as produce_application,
    produce_event_store as produce_event_store,
    produce_protocol as produce_protocol,
)
from .servers import (
    NAME_DEFAULT as NAME_DEFAULT,
    SAMPLING_TOKENS_DEFAULT as SAMPLING_TOKENS_DEFAULT,
    WATCH_INTERVAL_DEFAULT as WATCH_INTERVAL_DEFAULT,
    ToolServer as ToolServer,
    prepare_server as prepare_server,
    produce_call_result as produce_call_result,
    produce_tool as produce_tool,
)
from .stdio import serve_stdio as serve_stdio
from .tasks import (
    PAGE_SIZE_DEFAULT as PAGE_SIZE_DEFAULT,
    POLL_INTERVAL_DEFAULT as POLL_INTERVAL_DEFAULT,
    RUNNING_MAXIMUM_DEFAULT as RUNNING_MAXIMUM_DEFAULT,
    TASK_SUPPORT_ANNOTATION as TASK_SUPPORT_ANNOTATION,
    TASK_SUPPORTS as TASK_SUPPORTS,
    TASKS_EXTENSION as TASKS_EXTENSION,
    TASKS_MAXIMUM_DEFAULT as TASKS_MAXIMUM_DEFAULT,
    TTL_DEFAULT as TTL_DEFAULT,
    TTL_MAXIMUM as TTL_MAXIMUM,
    TTL_MINIMUM as TTL_MINIMUM,
    MemoryTaskStore as MemoryTaskStore,
    TaskRecord as TaskRecord,
    TaskStates as TaskStates,
    TaskStore as TaskStore,
)


produce_application_from_environment = (
    _applications.produce_application_from_environment )
