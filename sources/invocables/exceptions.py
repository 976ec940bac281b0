# SPDX-License-Identifier: Apache-2.0

''' Family of exceptions for package API.

    Every exception raised by the package derives from
    :py:class:`Omniexception`; every error also derives from
    :py:class:`Omnierror` and from the fitting builtin exception, so that
    either may be caught. Classes follow in alphabetical order, except that
    a subclass follows its base; first come the private bases which make
    the messages of classes of one shape from their templates.

    This module imports no other module of the package (not even the
    ``__`` hub, whose validators raise these exceptions), so that every
    module may import it without a cycle.
'''


import collections.abc as _cabc

from typing import ClassVar as _ClassVar

import frigid as _immut

from absence import Absential as _Absential
from absence import absent as _absent
from absence import is_absent as _is_absent


class Omniexception(
    _immut.exceptions.Omniexception,
    instances_mutables = ( '__notes__', ),
):
    ''' Base for all exceptions raised by package API. '''


class Omnierror( Omniexception, Exception ):
    ''' Base for error exceptions raised by package API. '''


class _ReasonBase( Omniexception ):
    ''' For a reason, told by a template. '''

    _template: _ClassVar[ str ]

    def __init__( self, reason: str ):
        self.reason = reason
        super( ).__init__( self._template.format_map( vars( self ) ) )


class _RuleBase( Omniexception ):
    ''' Schema of a tool breaks a rule of a dialect, told by a template. '''

    _template: _ClassVar[ str ]

    def __init__( self, name: str, dialect: str, rule: str ):
        self.name = name
        self.dialect = dialect
        self.rule = rule
        super( ).__init__( self._template.format_map( vars( self ) ) )


class _ToolReasonBase( Omniexception ):
    ''' Of a tool, for a reason, told by a template. '''

    _template: _ClassVar[ str ]

    def __init__( self, name: str, reason: str ):
        self.name = name
        self.reason = reason
        super( ).__init__( self._template.format_map( vars( self ) ) )


class AccumulatorReuseInvalidity( Omnierror, RuntimeError ):
    ''' Accumulator of a concluded stream was given more events.

        An accumulator reads one streamed response: once concluded, it
        refuses events, so that no state of one stream leaks into another.
    '''

    def __init__( self, provider: str ):
        self.provider = provider
        super( ).__init__(
            f"The accumulator of provider {provider!r} was concluded and "
            "takes no more events. Produce a new accumulator (with "
            "'processor.produce_accumulator( )') for each streamed "
            "response." )


class ApprovalInvalidity( _ReasonBase, Omnierror, ValueError ):
    ''' Approval record was not issued by a policy, or was altered.

        A suspended call's record is sealed when the policy suspends it;
        resuming a record whose seal does not match (a record edited to
        name another tool or other arguments, or one made by hand) runs
        nothing.
    '''

    _template = (
        "The approval record cannot be resumed: {reason} Resume only "
        "records which a policy suspended, unchanged; across "
        "processes, give each the same seal key (Policy.seal_key or "
        "the INVOCABLES_APPROVAL_KEY environment variable)." )


class ArgumentsInvalidity( _ToolReasonBase, Omnierror, ValueError ):
    ''' Arguments of invocation do not satisfy schema of invoker. '''

    _template = (
        "Invalid arguments for tool {name!r}: {reason} "
        "Correct the arguments to match the tool's schema and retry." )


class CallbackAnswerInvalidity( Omnierror, TypeError, ValueError ):
    ''' Callback of the application gave an answer of a wrong shape.

        An elicitor or a sampler of an MCP ensemble returned (or built) an
        answer which is neither the library's record, nor the MCP wire
        shape, nor the SDK's result; or one whose fields have wrong types
        or values. ``expected`` names the accepted shapes, ``received``
        the type of what was given.
    '''

    def __init__(
        self, callback: str, expected: str, received: str, reason: str
    ):
        self.callback = callback
        self.expected = expected
        self.received = received
        self.reason = reason
        message = (
            f"Invalid answer of the {callback}: expected {expected}; "
            f"received {received}." )
        super( ).__init__( f"{message} {reason}" if reason else message )


class ConfigurationInvalidity( Omnierror, ValueError ):
    ''' Configuration value is invalid. '''

    def __init__( self, location: str, reason: str ):
        self.location = location
        self.reason = reason
        super( ).__init__( f"Invalid configuration at {location}: {reason}" )


class ConnectionFailure( Omnierror, ConnectionError ):
    ''' Connection to ensemble (such as an MCP server) failed or was lost. '''

    _template: _ClassVar[ str ] = (
        "Connection to ensemble {ensemble!r} failed: {reason}" )

    def __init__( self, ensemble: str, reason: str ):
        self.ensemble = ensemble
        self.reason = reason
        super( ).__init__( self._template.format_map( vars( self ) ) )


class ConnectionAbsence( ConnectionFailure ):
    ''' Ensemble is not connected (never, or no longer), so it offers no
        tools; connect it first.
    '''

    _template = (
        "Ensemble {ensemble!r} is not connected; use 'async with "
        "ensemble:' or 'await ensemble.connect( )' before offering or "
        "calling its tools." )

    def __init__( self, ensemble: str ):
        super( ).__init__( ensemble, 'it is not connected' )


class CredentialsAbsence( Omnierror, LookupError ):
    ''' No credentials (such as an API key) are available for provider. '''

    def __init__( self, provider: str, remedy: str ):
        self.provider = provider
        self.remedy = remedy
        super( ).__init__(
            f"No credentials for provider {provider!r}: {remedy}" )


class DescriptorInvalidity( Omnierror, ValueError ):
    ''' Descriptor file is invalid; names file, key path and fix. '''

    def __init__( self, location: str, keypath: str, reason: str ):
        self.location = location
        self.keypath = keypath
        self.reason = reason
        where = f"{location} at {keypath}" if keypath else location
        super( ).__init__( f"Invalid descriptor {where}: {reason}" )


class EnsembleAbsence( Omnierror, LookupError ):
    ''' No ensemble is known under requested name. '''

    def __init__( self, name: str ):
        self.name = name
        super( ).__init__(
            f"No ensemble named {name!r}. "
            "Check the ensemble names of the configuration." )


class EnsemblesInvalidity( _ReasonBase, Omnierror, ValueError ):
    ''' Sequence of ensembles cannot be used together. '''

    _template = "Invalid ensembles: {reason}"


class ExtraAbsence( Omnierror, ImportError ):
    ''' Optional dependencies (an extra of the package) are not installed.

        Says which extra to install, from the package index and from a
        clone of the repository.
    '''

    def __init__( self, extra: str, user: str ):
        self.extra = extra
        self.user = user
        super( ).__init__(
            f"{user} needs the {extra} extra: pip install "
            f"'invocables[{extra}]' (from a clone: pip install --editable "
            f"'.[{extra}]')." )


class InvocationExecutionFailure( Omnierror, RuntimeError ):
    ''' Tool raised an exception while executing (fail-fast policy).

        The original exception is chained as the cause. To report such
        failures to the model instead, execute with the report policy.
    '''

    def __init__( self, name: str, identifier: str ):
        self.name = name
        self.identifier = identifier
        super( ).__init__(
            f"Tool {name!r} failed while executing invocation "
            f"{identifier!r}; see the chained cause. To send tool failures "
            "to the model instead, execute with "
            "'failure_policy = FailurePolicies.Report'." )


class InvocationExpiry( Omnierror, TimeoutError ):
    ''' Invocation did not finish within its timeout and was cancelled.

        Raised by direct invocations (``await ensemble.invoke( ... )``);
        the execution engine reports timeouts to the model instead.
    '''

    def __init__( self, name: str, timeout: float ):
        self.name = name
        self.timeout = timeout
        super( ).__init__(
            f"Tool {name!r} did not finish within {timeout} seconds and "
            "was cancelled. Give the tool or its ensemble a longer "
            "'timeout' (None for no limit) if it needs more time." )


class InvocationInterruption( Omnierror, ValueError ):
    ''' Streamed tool call was cut off before it was complete.

        Such a call is never dispatched: its arguments are incomplete.
    '''

    _template: _ClassVar[ str ] = (
        "Incomplete tool call(s) {names} at end of stream: {reason} "
        "The calls were not run; raise the output token limit or ask "
        "the model to retry." )

    def __init__( self, names: _cabc.Sequence[ str ], reason: str ):
        self.names = tuple( names )
        self.reason = reason
        super( ).__init__( self._template.format(
            names = ', '.join( repr( name ) for name in names ),
            reason = reason ) )


class InvocationRefusal( Omnierror, RuntimeError ):
    ''' Raised by a tool to send an error result to the model.

        Unlike other exceptions from tools, this one never fails the
        execution: its message reaches the model as an error result, so
        that the model can correct itself.
    '''

    def __init__( self, message: str ):
        self.message = message
        super( ).__init__( message )


class InvocationTransience( InvocationRefusal ):
    ''' Raised by a tool for a failure which may pass if tried again.

        The call is retried, with backoff and jitter, up to the
        ``max_retries`` of its invoker, ensemble or execution; if every try
        fails, the message reaches the model as an error result, as for
        :py:class:`InvocationRefusal`.
    '''


class InvocationTruncation( InvocationInterruption ):
    ''' Tool calls of a whole response were cut off by its stop reason.

        Names only the calls whose arguments were cut off; no call of the
        response is run. A kind of
        :py:class:`InvocationInterruption`, so that either may be caught.
    '''

    _template = (
        "Tool call(s) {names} cut off before their arguments were "
        "complete: {reason} No call of the response was run; raise the "
        "output token limit or ask the model to retry." )


class InvokerAbsence( Omnierror, LookupError ):
    ''' No invoker is registered under requested name. '''

    def __init__( self, name: str, ensemble: _Absential[ str ] = _absent ):
        self.name = name
        self.ensemble = ensemble
        where = (
            'any ensemble' if _is_absent( ensemble )
            else f"ensemble {ensemble!r}" )
        super( ).__init__(
            f"No tool named {name!r} in {where}. "
            "Use one of the tools that were offered." )


class InvokerInvalidity( _ToolReasonBase, Omnierror, TypeError ):
    ''' Invoker cannot be produced from given object. '''

    _template = "Cannot produce invoker {name!r}: {reason}"


class LiaisonAbsence( Omnierror, LookupError ):
    ''' Tool asked its caller (elicitation, sampling) and none answers. '''

    def __init__( self, request: str ):
        self.request = request
        super( ).__init__(
            f"Nobody answers the tool's {request}: serve it to a client "
            "which supports it, or run it within invokers.liaise( ... ) "
            "with an application's liaison." )


class PatternInterruption( Omnierror, TimeoutError ):
    ''' Matching of regular expression was stopped at its deadline.

        Only expressions which RE2 cannot run (lookarounds, backreferences)
        have deadlines; RE2 matches in linear time.
    '''

    def __init__( self, pattern: str ):
        self.pattern = pattern
        super( ).__init__(
            f"Matching of regular expression {pattern!r} took too long and "
            "was stopped. Simplify the expression, or match shorter text." )


class PatternInvalidity( Omnierror, ValueError ):
    ''' Regular expression can be compiled neither by RE2 nor by regex. '''

    def __init__( self, pattern: str, reason: str ):
        self.pattern = pattern
        self.reason = reason
        super( ).__init__(
            f"Invalid regular expression {pattern!r}: {reason}. Fix the "
            "expression." )


class PromptAbsence( Omnierror, LookupError ):
    ''' MCP server offers no prompt by requested name, or refused it. '''

    def __init__( self, ensemble: str, name: str, reason: str ):
        self.ensemble = ensemble
        self.name = name
        self.reason = reason
        super( ).__init__(
            f"MCP server {ensemble!r} returned no prompt {name!r}: "
            f"{reason}" )


class ProviderFailure( Omnierror, RuntimeError ):
    ''' Provider returned an error body instead of a response. '''

    def __init__(
        self,
        provider: str,
        status: _Absential[ int ],
        genus: _Absential[ str ],
        message: str,
    ):
        self.provider = provider
        self.status = status
        self.genus = genus
        self.message = message
        details = ', '.join(
            part for part in (
                '' if _is_absent( status ) else f"status {status}",
                '' if _is_absent( genus ) else f"type {genus!r}",
            ) if part )
        suffix = f" ({details})" if details else ''
        super( ).__init__(
            f"Provider {provider!r} returned an error{suffix}: {message}" )


class ProviderInaccessibility( Omnierror, ConnectionError ):
    ''' Provider's server cannot be reached (refused, unknown host). '''

    def __init__( self, provider: str, url: str, reason: str ):
        self.provider = provider
        self.url = url
        self.reason = reason
        super( ).__init__(
            f"cannot reach {url}: {reason} (provider {provider!r})." )


class ProviderNoSupport( Omnierror, ValueError ):
    ''' Requested provider or provider feature is not supported. '''

    def __init__( self, provider: str, reason: str ):
        self.provider = provider
        self.reason = reason
        super( ).__init__( f"Provider {provider!r} not supported: {reason}" )


class ResourceAbsence( Omnierror, LookupError ):
    ''' MCP server knows no resource at requested URI, or refused it. '''

    def __init__( self, ensemble: str, uri: str, reason: str ):
        self.ensemble = ensemble
        self.uri = uri
        self.reason = reason
        super( ).__init__(
            f"MCP server {ensemble!r} returned no resource at {uri!r}: "
            f"{reason}" )


class ResponseInvalidity( Omnierror, ValueError ):
    ''' Provider response or stream event has an unexpected shape. '''

    def __init__( self, provider: str, reason: str ):
        self.provider = provider
        self.reason = reason
        super( ).__init__(
            f"Unexpected response shape from provider {provider!r}: "
            f"{reason}" )


class ResultInvalidity( _ReasonBase, Omnierror, ValueError ):
    ''' Result of tool cannot be sent: not serializable, or too large.

        The execution engine turns it into an error result for the model.
    '''

    _template = (
        "Tool result cannot be sent as JSON: {reason}. Return text, "
        "content canisters or JSON-compatible values, within the "
        "limits of execution." )


class SandboxNoSupport( ConnectionFailure ):
    ''' Sandbox of an MCP server cannot be set up here.

        The server is not started: never without its sandbox. The message
        says why and what to install or allow.
    '''

    def __init__( self, ensemble: str, reason: str ):
        super( ).__init__(
            ensemble, f"the sandbox cannot be set up: {reason}" )


class SchemaDialectInvalidity( _RuleBase, Omnierror, ValueError ):
    ''' JSON Schema of tool cannot be expressed in dialect of provider.

        Names the tool, the dialect and the rule which the schema breaks.
    '''

    _template = (
        "Schema of tool {name!r} cannot be expressed in dialect "
        "{dialect!r}: {rule} Simplify the schema of the tool, or use "
        "another dialect." )


class SchemaInvalidity( _ToolReasonBase, Omnierror, ValueError ):
    ''' JSON Schema of invoker is not valid JSON Schema Draft 2020-12. '''

    _template = (
        "Invalid JSON Schema for tool {name!r}: {reason} "
        "Fix the schema so that it is valid JSON Schema Draft 2020-12." )


class AuthorizationFailure( ConnectionFailure ):
    ''' Authorization with an MCP server (OAuth, tokens) failed.

        The message names the server and never holds a token or secret.
    '''

    _template = "Authorization with MCP server {ensemble!r} failed: {reason}"


class SecretReferenceWarning( Omniexception, UserWarning ):
    ''' Literal secret of server was written as ``env:`` reference.

        Descriptors never hold secrets literally: the value is written as a
        reference to an environment variable, which must then hold it.
    '''

    def __init__( self, ensemble: str, references: _cabc.Sequence[ str ] ):
        self.ensemble = ensemble
        self.references = tuple( references )
        super( ).__init__(
            "Descriptors of ensemble {ensemble!r} name secrets which were "
            "given literally as environment variables instead: {names}. "
            "Set them to the values before loading the descriptors.".format(
                ensemble = ensemble,
                names = ', '.join( self.references ) ) )


class ServerActivateFailure( _ReasonBase, Omnierror, OSError ):
    ''' Server cannot start serving (port in use, address unknown). '''

    _template = "{reason}"


class TaskAbsence( Omnierror, LookupError ):
    ''' No task, or no cursor of tasks, is known by requested identifier.
    '''

    def __init__( self, identifier: str ):
        self.identifier = identifier
        super( ).__init__( f"No task known as {identifier!r}." )


class ToolExclusionWarning( _RuleBase, UserWarning ):
    ''' Tool was left out of request, because provider cannot take it.

        The other tools are still offered; names the tool, the dialect and
        the rule which its schema breaks.
    '''

    _template = (
        "Tool {name!r} left out of request for dialect {dialect!r}: {rule}" )


class ToolStrictnessWarning( ToolExclusionWarning ):
    ''' Tool was offered without strict mode, because its schema cannot be
        made strict.

        The tool is still offered, with its schema as the provider's
        non-strict dialect takes it; names the tool, the provider and the
        rule which its schema breaks (``dialect`` is ``'openai-strict'``).
        Being a :py:class:`ToolExclusionWarning`, it is caught and filtered
        with exclusions from the request.
    '''

    _template = (
        "Tool {name!r} offered to {provider!r} without strict mode: {rule}" )

    def __init__( self, name: str, provider: str, rule: str ):
        self.provider = provider
        super( ).__init__( name, 'openai-strict', rule )


class UsageInvalidity( Omnierror, ValueError ):
    ''' Command was used wrongly (exit status 2). '''


# The design documents' name of the execution failure (000).
ToolExecutionFailure = InvocationExecutionFailure


class ValidationExhaustion( Omnierror, RuntimeError ):
    ''' Validation of a value against a schema was stopped: it checked one
        part of the value by one subschema more than
        :py:data:`invocables.schemata.VISITS_MAXIMUM` times.

        Parts of a schema which apply each other at every level of the value
        would otherwise make its validation exponentially long in the depth
        of the value. Raised within :py:func:`invocables.schemata.bound_steps`
        only; the library's own validations turn it into their refusals.
    '''

    def __init__( self ) -> None:
        super( ).__init__(
            "Validation checked one part of the value by one subschema too "
            "often and was stopped. Send a value nested less deeply, or "
            "simplify the schema." )
