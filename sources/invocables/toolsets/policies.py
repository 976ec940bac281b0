# SPDX-License-Identifier: Apache-2.0

''' Permission policies: which tools may run, which need approval.

    A policy is a sequence of rules, each ``allow``, ``ask`` or ``deny``,
    matching tools by ensemble, by name (glob patterns) and by the hints of
    their annotations (read-only, destructive, idempotent, open-world: MCP
    tools carry them; local tools get them from the application, as the
    ``annotations`` of their invokers). The first rule which matches
    decides; when none does, the policy's default does. ``deny`` gives the
    model an error result naming the rule; ``ask`` calls the application's
    approver, which may allow, deny or suspend the call: a suspended call
    gets a record (:py:class:`ApprovalRequest`, serialisable as JSON) from
    which :py:func:`resume_invocation` runs it later.
'''


import os as _os
import secrets as _secrets
import sys as _sys

import invocables.__ as __
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions
import invocables.execution as _execution
import invocables.execution.interception as _interception
import invocables.naming as _naming
import invocables.toolsets._delegates as _delegates
import invocables.toolsets._rules as _rules
import invocables.toolsets.approvals as _approvals
import invocables.toolsets.wrappers as _wrappers
from ._rules import Actions as Actions, Rule as Rule
from .approvals import (
    SUSPENSIONS_KEY as SUSPENSIONS_KEY,
    ApprovalRequest as ApprovalRequest,
    Approvals as Approvals,
    Approver as Approver,
    produce_terminal_approver as produce_terminal_approver,
    survey_suspensions as survey_suspensions,
)


Hints: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]

SEAL_KEY_VARIABLE = 'INVOCABLES_APPROVAL_KEY'

# Hint keys of MCP tool annotations, and their defaults by the MCP
# specification: one table, which pinned invokers read too.
_HINTS = _delegates.HINTS
_RULE_KEYS = frozenset( ( 'action', 'ensemble', 'tool', 'name', *_HINTS ) )
# Seals approval records of this process when no key is configured.
_seal_key_process = _secrets.token_bytes( 32 )


class Policy( __.immut.DataclassObject ):
    ''' Rules, first match wins; the default when none matches. '''

    rules: __.typx.Annotated[
        __.cabc.Sequence[ Rule ],
        __.ddoc.Doc( ''' Rules, in order of precedence. ''' ),
    ] = ( )
    default: __.typx.Annotated[
        Actions,
        __.ddoc.Doc( ''' Action when no rule matches. ''' ),
    ] = Actions.Allow
    approver: __.typx.Annotated[
        __.Absential[ Approver ],
        __.ddoc.Doc( ''' Async callable deciding calls which a rule asks
            about. Without one, such calls are suspended. ''' ),
    ] = __.absent
    seal_key: __.typx.Annotated[
        __.Absential[ str | bytes ],
        __.ddoc.Doc( ''' Key sealing the records of suspended calls.
            Default: the ``INVOCABLES_APPROVAL_KEY`` environment variable,
            else a key of the process (records resume in the process which
            suspended them only). ''' ),
    ] = __.absent

    def __post_init__( self ) -> None:
        if not isinstance( self.rules, __.cabc.Iterable ):
            raise _exceptions.ConfigurationInvalidity(
                'policy rules', "expected a sequence of Rule." )
        if not isinstance( self.default, Actions ):
            raise _exceptions.ConfigurationInvalidity(
                'policy default', f"{self.default!r} is not an Actions "
                "member, such as Actions.Deny." )
        if not __.is_absent( self.approver ) and not callable(
            self.approver
        ): raise _exceptions.ConfigurationInvalidity(
            'policy approver', "expected an async callable." )
        if not __.is_absent( self.seal_key ) and not isinstance(
            self.seal_key, ( str, bytes )
        ): raise _exceptions.ConfigurationInvalidity(
            'policy seal_key', "expected a text or bytes." )
        rules = tuple( __.typx.cast(
            __.cabc.Iterable[ object ], self.rules ) )
        for index, rule in enumerate( rules ):
            if not isinstance( rule, Rule ):
                raise _exceptions.ConfigurationInvalidity(
                    f"policy rules[{index}]", "expected a Rule." )
        object.__setattr__( self, 'rules', rules )

    def access_action(
        self, ensemble: str, tool: str, hints: Hints, alias: str = '',
        ensemble_alias: str = '', *,
        aliases: __.cabc.Sequence[ str ] = ( ),
        ensemble_aliases: __.cabc.Sequence[ str ] = ( ),
    ) -> tuple[ Actions, Rule | None ]:
        ''' Returns action for tool, and the rule which decided it.

            Names as for :py:meth:`Rule.is_match`.
        '''
        ensembles, tools = _rules.collect_names(
            ensemble, tool, alias, ensemble_alias, aliases, ensemble_aliases )
        for rule in self.rules:
            if rule.is_matching_names( ensembles, tools, hints ):
                return rule.action, rule
        return self.default, None

    def access_seal_key( self ) -> bytes:
        ''' Returns key which seals approval records of policy. '''
        key = self.seal_key
        if __.is_absent( key ):
            variable = _os.environ.get( SEAL_KEY_VARIABLE )
            if not variable: return _seal_key_process
            key = variable
        return key.encode( ) if isinstance( key, str ) else bytes( key )

    def produce_interceptor(
        self, namespace: __.Namespace
    ) -> _interception.Interceptor:
        ''' Produces interceptor which applies policy in the engine.

            Suspended calls are recorded in the namespace (see
            :py:func:`survey_suspensions`).
        '''
        async def intercept(
            invocation: _canisters.InvocationCanister,
            designation: _naming.Designation,
            arguments: __.Arguments,
            continuation: _interception.Continuation,
        ) -> _canisters.ResultCanister:
            refusal = await self.adjudicate(
                invocation, designation, arguments, namespace )
            if refusal is not None: return refusal
            return await continuation( invocation, designation, arguments )

        return intercept

    def with_approver( self, approver: Approver ) -> __.typx.Self:
        ''' Returns copy of policy with approver. '''
        return __.dcls.replace( self, approver = approver )

    async def adjudicate(
        self,
        invocation: _canisters.InvocationCanister,
        designation: _naming.Designation,
        arguments: __.Arguments,
        namespace: __.Namespace,
    ) -> _canisters.ResultCanister | None:
        ''' Returns refusal result, or ``None`` if the call may run. '''
        invoker = designation.invoker
        ensemble, tool = _access_identity( designation )
        action, label = _access_designation_action( self, designation )
        if action is Actions.Allow: return None
        if action is Actions.Deny:
            return _approvals.produce_denial( invocation, label )
        # Nobody should be asked about a call which cannot run.
        try: arguments = invoker.validate_arguments( _thaw( arguments ) )
        except _exceptions.ArgumentsInvalidity as exception:
            return _approvals.produce_refusal(
                invocation, str( exception ),
                _canisters.FaultGenera.Invalidity )
        request = ApprovalRequest(
            invocation_id = invocation.identifier, name = invocation.name,
            ensemble = ensemble, tool = tool,
            arguments = _thaw( arguments ), rule = label,
            timestamp = __.time.time( ) ).with_seal( self.access_seal_key( ) )
        denial = (
            f"The user did not approve the call of tool {invocation.name!r} "
            f"({label}). Do not repeat it unless the user asks." )
        try: approval = await self._ask( request )
        except _exceptions.InvocationRefusal as exception:
            approval, denial = Approvals.Deny, exception.message
        if approval is Approvals.Allow: return None
        if approval is Approvals.Deny:
            return _approvals.produce_refusal( invocation, denial )
        namespace.setdefault( SUSPENSIONS_KEY, [ ] ).append( request )
        return _approvals.produce_refusal(
            invocation, f"The call of tool {invocation.name!r} awaits the "
            f"user's approval ({label}); its result will follow when the "
            "user decides." )

    async def _ask( self, request: ApprovalRequest ) -> Approvals:
        approver = self.approver
        if __.is_absent( approver ): return Approvals.Suspend
        return await _approvals.ask_approver(
            approver, request, 'policy approver' )


class _PoliciesChain( __.immut.DataclassObject ):
    ''' Two policies, the outer asked first. '''

    outer: _interception.InterceptorProducer
    inner: _interception.InterceptorProducer

    def produce_interceptor(
        self, namespace: __.Namespace
    ) -> _interception.Interceptor:
        return __.typx.cast(
            _interception.Interceptor, _interception.chain_interceptors(
                self.outer.produce_interceptor( namespace ),
                self.inner.produce_interceptor( namespace ) ) )


_RULE_APPROVER = Rule( action = Actions.Ask, name = 'approver' )
# Policy which asks before tools that may destroy (per their hints); offered,
# never imposed. (A comment, not a docstring: its value would show absences.)
POLICY_CAUTIOUS = Policy(
    rules = ( Rule(
        action = Actions.Ask, destructive = True,
        name = 'ask before destructive tools' ), ) )


def access_hint( hints: Hints, key: str ) -> bool:
    ''' Returns hint of annotations, with the MCP default if not given.

        Keys are ``read_only``, ``destructive``, ``idempotent``,
        ``open_world``; annotations may use them or MCP's names
        (``readOnlyHint`` ...). A read-only tool is never destructive.
    '''
    return _delegates.access_hint( hints, key )


def load_policy(
    path: __.typx.Annotated[
        str | __.Path, __.ddoc.Doc( ''' TOML file with policies. ''' )
    ],
    *,
    approver: __.typx.Annotated[
        __.Absential[ Approver ],
        __.ddoc.Doc( ''' Approver for rules which ask. ''' ),
    ] = __.absent,
) -> Policy:
    ''' Loads policy from the ``[[policies]]`` tables of a TOML file.

        Each table has ``action`` (``allow``, ``ask``, ``deny``) and
        optionally ``name``, ``ensemble``, ``tool`` (globs) and hints
        ``read_only``, ``destructive``, ``idempotent``, ``open_world``
        (booleans). An optional ``[policy]`` table sets ``default``. Raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity` naming
        the file and key of anything not valid; nothing is half-loaded.
    '''
    if _sys.version_info >= ( 3, 11 ): import tomllib as _tomllib
    else: import tomli as _tomllib # pyright: ignore[reportMissingModuleSource]
    path_ = __.Path( path )
    try: text = path_.read_text( encoding = 'utf-8' )
    except OSError as exception:
        raise _exceptions.ConfigurationInvalidity(
            str( path_ ), f"cannot read: {exception}." ) from exception
    try: document = _tomllib.loads( text )
    except _tomllib.TOMLDecodeError as exception:
        raise _exceptions.ConfigurationInvalidity(
            str( path_ ), f"not valid TOML: {exception}." ) from exception
    return produce_policy( document, str( path_ ), approver = approver )


def produce_approval_policy(
    approver: __.typx.Annotated[
        _approvals.InvocationApprover,
        __.ddoc.Doc( ''' Called with each tool call which can run;
            returns whether it may (a coroutine function too), or raises
            :py:class:`invocables.exceptions.InvocationRefusal` with a
            message for the model. ''' ),
    ],
    policy: __.typx.Annotated[
        __.Absential[ _interception.InterceptorProducer ],
        __.ddoc.Doc( ''' Policy applied after the approver allowed. ''' ),
    ] = __.absent,
) -> _interception.InterceptorProducer:
    ''' Produces policy which asks approver about every call, then policy.

        What the conversation loop's ``approver`` becomes: a policy whose
        one rule asks (named ``approver``), so that approvals have one
        mechanism.
    '''
    asking = Policy(
        rules = ( _RULE_APPROVER, ),
        approver = _approvals.adapt_invocation_approver( approver ) )
    if __.is_absent( policy ): return asking
    return _PoliciesChain( outer = asking, inner = policy )


def produce_unattended_policy(
    policy: __.Absential[ _interception.InterceptorProducer ]
) -> __.Absential[ _interception.InterceptorProducer ]:
    ''' Returns policy whose asking rules refuse where nobody can be
        asked (a server): those of every policy without an approver, also
        within a chain (:py:func:`produce_approval_policy`). A suspended
        call would never end there.
    '''
    if __.is_absent( policy ): return policy
    return _produce_unattended( policy )


def produce_policy(
    document: __.typx.Annotated[
        __.cabc.Mapping[ str, __.typx.Any ],
        __.ddoc.Doc( ''' Data as in a TOML file: ``policies`` (a list of
            tables) and optionally ``policy``, a table with
            ``default``. ''' ),
    ],
    location: __.typx.Annotated[
        str, __.ddoc.Doc( ''' Where the data came from, for errors. ''' )
    ] = '<policy>',
    *,
    approver: __.Absential[ Approver ] = __.absent,
) -> Policy:
    ''' Produces policy from data of a TOML document.

        Raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
        naming location and key of anything which is not valid.
    '''
    tables = document.get( 'policies', [ ] )
    if not isinstance( tables, list ):
        raise _exceptions.ConfigurationInvalidity(
            f"{location} at policies", "expected an array of tables." )
    rules = tuple(
        _produce_rule( table, f"{location} at policies[{index}]" )
        for index, table in enumerate(
            __.typx.cast( list[ __.typx.Any ], tables ) ) )
    settings: __.typx.Any = document.get( 'policy', { } )
    if not isinstance( settings, dict ):
        raise _exceptions.ConfigurationInvalidity(
            f"{location} at policy", "expected a table." )
    default = _produce_action(
        __.typx.cast( dict[ str, __.typx.Any ], settings ).get(
            'default', 'allow' ),
        f"{location} at policy.default" )
    return Policy( rules = rules, default = default, approver = approver )


async def resume_invocation(
    request: __.typx.Annotated[
        ApprovalRequest | __.cabc.Mapping[ str, __.typx.Any ],
        __.ddoc.Doc( ''' Suspended call, or its record. ''' ),
    ],
    ensembles: __.typx.Annotated[
        __.cabc.Sequence[ __.typx.Any ] | _naming.Nomenclature,
        __.ddoc.Doc( ''' Ensembles (connected) which offer the tool. ''' ),
    ],
    approval: __.typx.Annotated[
        bool | Approvals,
        __.ddoc.Doc( ''' Whether the user approved the call: a boolean,
            or ``Approvals.Allow`` or ``Approvals.Deny``. ''' ),
    ],
    *,
    policy: __.typx.Annotated[
        __.Absential[ Policy ],
        __.ddoc.Doc( ''' Policy which suspended the call: checked again
            (a tool it denies stays denied) and its seal key checks the
            record. Without it, the record is checked with the key of the
            environment or of the process. ''' ),
    ] = __.absent,
    **options: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' ``options``, an
            :py:class:`invocables.execution.ExecutionOptions`, and fields of
            it as shortcuts (auxdata, namespace, timeout, ...), except
            ``policy``. ''' ),
    ],
) -> _canisters.ResultCanister:
    ''' Runs a suspended call if approved; returns its result.

        The result answers the invocation of the record: send it to the
        model in place of the interim result. A call not approved, or one
        which the policy now denies, gets an error result saying so; an
        approved call runs without asking again, under the other options
        given. Raises :py:class:`invocables.exceptions.ApprovalInvalidity`
        for a record which no policy sealed (edited, or made by hand): it
        runs nothing.
    '''
    request_ = (
        request if isinstance( request, ApprovalRequest )
        else ApprovalRequest.from_dictionary( request ) )
    approved = _approvals.confirm_decision( approval )
    key = (
        Policy( ).access_seal_key( ) if __.is_absent( policy )
        else policy.access_seal_key( ) )
    if not request_.is_sealed( key ):
        raise _exceptions.ApprovalInvalidity(
            "its seal is missing or does not match its content." )
    nomenclature = _naming.access_nomenclature( ensembles )
    designation = _find_designation( nomenclature, request_ )
    name = request_.name if designation is None else designation.name
    invocation = _canisters.InvocationCanister(
        identifier = request_.invocation_id, name = name,
        arguments = request_.arguments )
    if not approved:
        return _approvals.produce_refusal(
            invocation, f"The user did not approve the call of tool "
            f"{name!r}. Do not repeat it unless the user asks." )
    if not __.is_absent( policy ) and designation is not None:
        action, label = _access_designation_action( policy, designation )
        if action is Actions.Deny:
            return _approvals.produce_denial( invocation, label )
    if designation is None: # no longer offered: never another of its name
        return _approvals.produce_refusal(
            invocation, f"Unknown tool {name!r}: it is no longer offered. "
            "Use one of the tools that are offered now.",
            _canisters.FaultGenera.Absence )
    record = options.pop( 'options', _execution.OPTIONS_DEFAULT )
    if options: record = __.dcls.replace( record, **options )
    # Approved: asked no more, whatever policy the options carry.
    record = __.dcls.replace( record, policy = __.absent )
    return await _execution.execute_invoker(
        designation.invoker, request_.arguments, options = record,
        designation = designation, identifier = request_.invocation_id )


def _access_designation_action(
    policy: Policy, designation: _naming.Designation
) -> tuple[ Actions, str ]:
    ''' Returns action of policy for designated tool, by every name of
        its identity (the source's, the offered and those between), and
        what decided it. '''
    ensemble, tool = _access_identity( designation )
    invoker = designation.invoker
    action, rule = policy.access_action(
        ensemble, tool, invoker.annotations,
        aliases = _wrappers.survey_identity_names( invoker ),
        ensemble_aliases = _wrappers.survey_ensemble_names(
            designation.ensemble ) )
    return action, (
        'the default' if rule is None else f"rule {rule.describe( )}" )


def _access_identity(
    designation: _naming.Designation
) -> tuple[ str, str ]:
    ''' Returns source ensemble and tool names. '''
    source = _wrappers.access_source_ensemble( designation.ensemble )
    return source.name, _wrappers.access_source_name( designation.invoker )


def _produce_action( value: object, location: str ) -> Actions:
    try: return Actions( value )
    except ValueError:
        raise _exceptions.ConfigurationInvalidity(
            location, f"{value!r} is not one of 'allow', 'ask', "
            "'deny'." ) from None


def _produce_unattended(
    policy: _interception.InterceptorProducer
) -> _interception.InterceptorProducer:
    if isinstance( policy, _PoliciesChain ):
        return _PoliciesChain(
            outer = _produce_unattended( policy.outer ),
            inner = _produce_unattended( policy.inner ) )
    if not isinstance( policy, Policy ) or not __.is_absent(
        policy.approver
    ): return policy
    return policy.with_approver( _refuse )


async def _refuse( request: ApprovalRequest ) -> Approvals:
    return Approvals.Deny


def _produce_rule( table: object, location: str ) -> Rule:
    if not isinstance( table, dict ):
        raise _exceptions.ConfigurationInvalidity(
            location, "expected a table." )
    table_ = __.typx.cast( dict[ str, __.typx.Any ], table )
    for key in table_:
        if key not in _RULE_KEYS:
            raise _exceptions.ConfigurationInvalidity(
                f"{location}.{key}", "unknown key; expected one of "
                "{keys}.".format( keys = ', '.join( sorted( _RULE_KEYS ) ) ) )
    if 'action' not in table_:
        raise _exceptions.ConfigurationInvalidity(
            f"{location}.action", "missing; expected 'allow', 'ask' or "
            "'deny'." )
    action = _produce_action( table_[ 'action' ], f"{location}.action" )
    fields: dict[ str, __.typx.Any ] = { **table_, 'action': action }
    try: return Rule( **fields )
    except _exceptions.ConfigurationInvalidity as exception:
        key = exception.location.removeprefix( 'rule ' )
        raise _exceptions.ConfigurationInvalidity(
            f"{location}.{key}", exception.reason ) from None


_thaw = __.values.thaw_json


def _find_designation(
    nomenclature: _naming.Nomenclature, request: ApprovalRequest
) -> _naming.Designation | None:
    ''' Returns designation of the tool a record names, if offered.

        The record's ensemble is the source's, whatever wrapper offers the
        tool (a wrapper which takes that name for another ensemble's tools
        offers another tool). Of several offers of the tool, the one of the
        record's name.
    '''
    found = None
    for designation in nomenclature.designations:
        ensemble, tool = _access_identity( designation )
        if ( ensemble, tool ) != ( request.ensemble, request.tool ): continue
        if designation.name == request.name: return designation
        if found is None: found = designation
    return found
