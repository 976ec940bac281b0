# SPDX-License-Identifier: Apache-2.0

''' Exits the program when imported, as a broken module may. '''


import sys


sys.exit( 3 )
