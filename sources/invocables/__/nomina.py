# SPDX-License-Identifier: Apache-2.0

''' Package-wide type aliases and names. '''


from . import imports as __


package_name = __name__.split( '.', maxsplit = 1 )[ 0 ]

Arguments: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
Schema: __.typx.TypeAlias = __.cabc.Mapping[ str, __.typx.Any ]
Namespace: __.typx.TypeAlias = __.cabc.MutableMapping[ str, __.typx.Any ]

# A value written 'env:NAME' is read from the environment variable NAME, at
# connect time (MCP servers, and the descriptors which describe them).
ENVIRONMENT_PREFIX = 'env:'


def produce_scribe( name: str = package_name ) -> __.logging.Logger:
    ''' Returns logger for package or one of its modules. '''
    return __.logging.getLogger( name )
