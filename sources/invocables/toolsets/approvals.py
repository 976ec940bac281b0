# SPDX-License-Identifier: Apache-2.0

''' Approvals: what an approver answers, and the sealed record of a call
    which waits for one.

    A permission policy (:py:mod:`invocables.toolsets.policies`) asks its
    approver about the calls which an ``ask`` rule matches; a suspended
    call is recorded in the namespace as an :py:class:`ApprovalRequest`,
    which :py:func:`invocables.toolsets.policies.resume_invocation` runs
    later. The conversation loop's ``approver`` is such an approver too.
'''


import hashlib as _hashlib
import hmac as _hmac
import reprlib as _reprlib
import sys as _sys

import invocables.__ as __
import invocables.canisters as _canisters
import invocables.exceptions as _exceptions


SUSPENSIONS_KEY = 'invocables.suspensions'

_thaw = __.values.thaw_json


class Approvals( __.enum.Enum ):
    ''' What an approver answers. '''

    Allow = 'allow'
    Deny = 'deny'
    Suspend = 'suspend'     # decide later: see resume_invocation


class ApprovalRequest( __.immut.DataclassObject ):
    ''' Call which waits for approval; also its serialisable record.

        ``name`` is the name which the model used; ``ensemble`` and
        ``tool`` say what it stands for (the ensemble and the tool as
        their source names them, through any wrapper), so that the call
        can be resumed even if names were scoped differently since.
        ``seal`` authenticates the record: resuming checks it, so that an
        edited record runs nothing.
    '''

    invocation_id: str
    name: str
    ensemble: str
    tool: str
    arguments: __.cabc.Mapping[ str, __.typx.Any ]
    rule: str
    timestamp: float
    seal: str = ''

    def as_dictionary( self ) -> dict[ str, __.typx.Any ]:
        ''' Returns record as plain JSON-compatible dictionary. '''
        return {
            'invocation_id': self.invocation_id, 'name': self.name,
            'ensemble': self.ensemble, 'tool': self.tool,
            'arguments': _thaw( self.arguments ), 'rule': self.rule,
            'timestamp': self.timestamp, 'seal': self.seal }

    @classmethod
    def from_dictionary(
        cls, data: __.cabc.Mapping[ str, __.typx.Any ]
    ) -> __.typx.Self:
        ''' Returns request from its record (as :py:meth:`as_dictionary`).

            Raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
            for a record which lacks a field or has one of a wrong type.
        '''
        if not isinstance( data, __.cabc.Mapping ):
            raise _exceptions.ConfigurationInvalidity(
                "approval record", "expected a mapping, as as_dictionary "
                "returns." )
        fields = {
            'invocation_id': str, 'name': str, 'ensemble': str,
            'tool': str, 'arguments': dict, 'rule': str,
            'timestamp': ( int, float ) }
        for key, genus in fields.items( ):
            if not isinstance( data.get( key ), genus ):
                raise _exceptions.ConfigurationInvalidity(
                    f"approval record {key!r}", "missing or of wrong type." )
        seal = data.get( 'seal', '' )
        if not isinstance( seal, str ):
            raise _exceptions.ConfigurationInvalidity(
                "approval record 'seal'", "expected a string." )
        return cls(
            **{ key: data[ key ] for key in fields }, seal = seal )

    def is_sealed( self, key: bytes ) -> bool:
        ''' Returns whether record carries the seal of key.

            A record whose content has no JSON (arguments nested too
            deeply, values which are not JSON) carries none.
        '''
        if not self.seal: return False
        try: seal = _produce_seal( self, key )
        except ( RecursionError, TypeError, ValueError ): return False
        return _hmac.compare_digest( self.seal, seal )

    def with_seal( self, key: bytes ) -> __.typx.Self:
        ''' Returns copy of record sealed with key. '''
        return __.dcls.replace( self, seal = _produce_seal( self, key ) )


Approver: __.typx.TypeAlias = __.cabc.Callable[
    [ ApprovalRequest ],
    Approvals | bool | __.cabc.Awaitable[ Approvals | bool ] ]
InvocationApprover: __.typx.TypeAlias = __.cabc.Callable[
    [ _canisters.InvocationCanister ],
    Approvals | bool | __.cabc.Awaitable[ Approvals | bool ] ]


def adapt_invocation_approver( approver: InvocationApprover ) -> Approver:
    ''' Returns approver of requests which asks approver of invocations.

        The conversation loop's approver takes the tool call itself and
        returns whether it may run (a coroutine function too); it may raise
        :py:class:`invocables.exceptions.InvocationRefusal` with a message
        for the model.
    '''
    async def approve( request: ApprovalRequest ) -> Approvals:
        return await ask_approver( approver, _canisters.InvocationCanister(
            identifier = request.invocation_id, name = request.name,
            arguments = request.arguments ), 'approver' )

    return approve


async def ask_approver(
    approver: __.typx.Any, question: __.typx.Any, location: str
) -> Approvals:
    ''' Returns what approver (a coroutine function too) answers.

        ``True`` allows, ``False`` denies, an :py:class:`Approvals` member
        is itself. Anything else (``None`` of an approver which forgot to
        answer, ``'no'``, ``1``) raises
        :py:class:`invocables.exceptions.ConfigurationInvalidity`, naming
        location: no answer of another kind counts as an approval.
    '''
    answer = approver( question )
    if __.inspect.isawaitable( answer ): answer = await answer
    return interpret_answer( answer, location, "returned" )


def confirm_decision( approval: object ) -> bool:
    ''' Returns whether the user's decision approves: a boolean, or
        ``Approvals.Allow`` or ``Approvals.Deny``.

        Raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
        for anything else (a truthy ``'no'``, ``Approvals.Suspend``).
    '''
    verdict = interpret_answer( approval, 'resume approval' )
    if verdict is Approvals.Suspend:
        raise _exceptions.ConfigurationInvalidity(
            'resume approval', "expected the user's decision, not Suspend." )
    return verdict is Approvals.Allow


def interpret_answer(
    answer: object, location: str, verb: str = "is"
) -> Approvals:
    ''' Returns approval which answer stands for: ``True`` allows,
        ``False`` denies, an :py:class:`Approvals` member is itself.

        Raises :py:class:`invocables.exceptions.ConfigurationInvalidity`
        at location for anything else: no truthy value approves.
    '''
    if answer is True: return Approvals.Allow
    if answer is False: return Approvals.Deny
    if isinstance( answer, Approvals ): return answer
    raise _exceptions.ConfigurationInvalidity(
        location, "{verb} {answer}; expected an Approvals member or a "
        "boolean.".format( verb = verb, answer = _reprlib.repr( answer ) ) )


def produce_terminal_approver(
    reader: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Text stream of answers. Default: stdin. ''' ),
    ] = None,
    writer: __.typx.Annotated[
        __.typx.Any,
        __.ddoc.Doc( ''' Text stream of questions. Default: stderr. ''' ),
    ] = None,
) -> __.cabc.Callable[ [ ApprovalRequest ], __.cabc.Awaitable[ Approvals ] ]:
    ''' Produces approver which asks the user in the terminal.

        Shows the tool, its ensemble, the rule and the arguments, and
        allows the call only on an answer of ``y`` or ``yes``; anything
        else (also the end of input) denies it. Used by the ``invocables``
        command.
    '''
    async def approve( request: ApprovalRequest ) -> Approvals:
        reader_ = _sys.stdin if reader is None else reader
        writer_ = _sys.stderr if writer is None else writer
        arguments = __.json.dumps(
            _thaw( request.arguments ), ensure_ascii = False )
        # Nothing which a terminal would not show as it is (controls,
        # bidirectional overrides, line separators) reaches it unescaped.
        writer_.write( _escape_invisible(
            f"Allow tool {request.tool!r} of ensemble {request.ensemble!r} "
            f"({request.rule}) with arguments {arguments}? [y/N] " ) )
        writer_.flush( )
        answer = await __.asyncio.to_thread( reader_.readline )
        if answer.strip( ).lower( ) in ( 'y', 'yes' ): return Approvals.Allow
        return Approvals.Deny

    return approve


def produce_denial(
    invocation: _canisters.InvocationCanister, label: str
) -> _canisters.ResultCanister:
    ''' Returns result of call which a policy denies, naming what decided
        (``label``). '''
    return produce_refusal(
        invocation, f"Tool {invocation.name!r} is denied by the permission "
        f"policy ({label}). Do not call it again; use another tool or ask "
        "the user." )


def produce_refusal(
    invocation: _canisters.InvocationCanister,
    message: str,
    genus: _canisters.FaultGenera = _canisters.FaultGenera.Refusal,
) -> _canisters.ResultCanister:
    ''' Returns error result of call which runs not, with message. '''
    return _canisters.ResultCanister(
        invocation_id = invocation.identifier, name = invocation.name,
        error = _canisters.Fault( genus = genus, message = message ) )


def survey_suspensions(
    namespace: __.Namespace, *, clear: bool = False
) -> tuple[ ApprovalRequest, ... ]:
    ''' Returns calls suspended within namespace; forgets them if clear. '''
    requests = tuple( namespace.get( SUSPENSIONS_KEY, ( ) ) )
    if clear: namespace.pop( SUSPENSIONS_KEY, None )
    return requests


def _escape_invisible( text: str ) -> str:
    if text.isprintable( ): return text
    return ''.join(
        character if character.isprintable( )
        else character.encode( 'unicode_escape' ).decode( 'ascii' )
        for character in text )


def _produce_seal( request: ApprovalRequest, key: bytes ) -> str:
    content = __.json.dumps( [
        request.invocation_id, request.name, request.ensemble, request.tool,
        _thaw( request.arguments ), request.rule, request.timestamp,
    ], sort_keys = True, separators = ( ',', ':' ) )
    return _hmac.new(
        key, content.encode( 'utf-8', 'surrogatepass' ),
        _hashlib.sha256 ).hexdigest( )
