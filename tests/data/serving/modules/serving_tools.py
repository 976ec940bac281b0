# SPDX-License-Identifier: Apache-2.0

''' Implementations of the descriptor tools served by the serving tests. '''


import os


def greet( context, arguments ):
    ''' Greets a person. '''
    return f"Hello, {arguments[ 'name' ]}!"


def worker( context, arguments ):
    ''' Returns the process id of the worker. '''
    return str( os.getpid( ) )
