# SPDX-License-Identifier: Apache-2.0

''' Package-wide type aliases and names. '''


import base64 as _base64

import invocables.__.imports as __


package_name = __name__.split( '.', maxsplit = 1 )[ 0 ]

Arguments: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
Schema: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
Namespace: __.typx.TypeAlias = __.cabc.MutableMapping[ str, __.typx.Any ]

# A value written 'env:NAME' is read from the environment variable NAME, at
# connect time (MCP servers, and the descriptors which describe them).
ENVIRONMENT_PREFIX = 'env:'

# A compact JWT (three parts joined by dots, the first a JOSE header): a
# credential given as it is, not a file nor a reference.
_JWT = __.re.compile(
    r'([A-Za-z0-9_-]{1,4096})\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*' )

# A bearer token as an Authorization header carries it: visible ASCII
# (HTTP strips spaces around a value; headers are not UTF-8), bounded.
_TOKEN_SENDABLE = __.re.compile( r'[\x21-\x7e]{1,16384}' )

SlotSetter: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any, __.typx.Any ], None ]


def is_jwt( text: str ) -> bool:
    ''' Whether text (spaces around it aside) is a compact JWT: three parts
        of base64url joined by dots, the first a JSON object naming its
        algorithm (``alg``), so that a file name with dots (``sa.token.txt``)
        is no JWT.
    '''
    match = _JWT.fullmatch( text.strip( ) )
    if match is None: return False
    header = match.group( 1 )
    try:
        decoded = _base64.urlsafe_b64decode(
            header + '=' * ( -len( header ) % 4 ) )
        value: object = __.json.loads( decoded )
    except ValueError: return False
    return isinstance( value, dict ) and 'alg' in value


def is_sendable_token( token: str ) -> bool:
    ''' Whether a bearer token can go in an ``Authorization`` header as it
        is: visible ASCII only, at least one character, at most 16 KiB. '''
    return _TOKEN_SENDABLE.fullmatch( token ) is not None


def produce_scribe( name: str = package_name ) -> __.logging.Logger:
    ''' Returns logger for package or one of its modules. '''
    return __.logging.getLogger( name )


def produce_slot_setters(
    genus: type, names: __.cabc.Sequence[ str ]
) -> tuple[ SlotSetter, ... ]:
    ''' Returns setters of the named slots of a class, in order.

        For the constructors of frozen slotted classes made on the hot path:
        a slot's own setter costs about half as much as
        ``object.__setattr__``, and like it bypasses the class's refusal.
    '''
    slots = vars( genus )
    return tuple( slots[ name ].__set__ for name in names )
