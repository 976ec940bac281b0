# SPDX-License-Identifier: Apache-2.0

''' Fails when any attribute is read, as a broken module may. '''


def __getattr__( name: str ) -> object:
    raise RuntimeError( name )
