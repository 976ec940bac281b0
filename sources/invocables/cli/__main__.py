# SPDX-License-Identifier: Apache-2.0

''' Runs the ``invocables`` command: ``python -m invocables.cli``. '''


from . import main


if __name__ == '__main__': main( )
