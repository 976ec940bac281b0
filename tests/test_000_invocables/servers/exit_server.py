# SPDX-License-Identifier: Apache-2.0

''' Server which fails at start: writes to stderr, exits with status 3. '''


import sys


print( 'exit_server: cannot start, no configuration', file = sys.stderr )
sys.exit( 3 )
