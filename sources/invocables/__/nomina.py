# SPDX-License-Identifier: Apache-2.0

''' Package-wide type aliases and names. '''


import invocables.__.imports as __


package_name = __name__.split( '.', maxsplit = 1 )[ 0 ]

Arguments: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
Schema: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
Namespace: __.typx.TypeAlias = __.cabc.MutableMapping[ str, __.typx.Any ]

# A value written 'env:NAME' is read from the environment variable NAME, at
# connect time (MCP servers, and the descriptors which describe them).
ENVIRONMENT_PREFIX = 'env:'

# A compact JWT (three parts joined by dots): a credential given as it is,
# not a file nor a reference.
_JWT = __.re.compile( r'[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*' )

SlotSetter: __.typx.TypeAlias = __.cabc.Callable[
    [ __.typx.Any, __.typx.Any ], None ]


def is_jwt( text: str ) -> bool:
    ''' Whether text (spaces around it aside) is a compact JWT. '''
    return _JWT.fullmatch( text.strip( ) ) is not None


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
