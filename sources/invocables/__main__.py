# SPDX-License-Identifier: Apache-2.0

''' Runs the ``invocables`` command: ``python -m invocables``. '''


from .cli import main


if __name__ == '__main__': main( )
