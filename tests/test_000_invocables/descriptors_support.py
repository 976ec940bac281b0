# SPDX-License-Identifier: Apache-2.0

''' Helpers for tests of descriptors: implementations and descriptor trees.

    Descriptors name the implementations here by import path,
    ``test_000_invocables.descriptors_support:echo``; subprocesses find
    them with ``TESTS`` on their ``PYTHONPATH``.
'''


import textwrap

from pathlib import Path


TESTS = Path( __file__ ).resolve( ).parent.parent
MODULE = 'test_000_invocables.descriptors_support'


def echo( context, arguments ):
    ''' Returns text argument (a sync implementation). '''
    return arguments.get( 'text', '' )


async def shout( context, arguments ):
    ''' Returns text argument in capitals (an async implementation). '''
    return arguments[ 'text' ].upper( )


async def show_configuration( context, arguments ):
    ''' Returns configuration which reached invoker. '''
    return dict( context.invoker.configuration )


class _Whisper:
    ''' Callable object whose call returns a coroutine. '''

    def __call__( self, context, arguments ):
        return self.lower( arguments[ 'text' ] )

    async def lower( self, text ):
        return text.lower( )


whisper = _Whisper( )


def explode( context, arguments ):
    ''' Raises, as a broken tool does. '''
    raise RuntimeError( 'boom' )


ECHO = f'''
    [invoker]
    name = 'echo'
    description = """
    Echoes text back."""
    implementation = '{MODULE}:echo'

    [arguments]
    type = 'object'
    required = [ 'text' ]
    additionalProperties = false

    [arguments.properties.text]
    type = 'string'
    description = 'Text to echo.'
    '''

SHOUT = f'''
    [invoker]
    name = 'shout'
    description = 'Shouts text.'
    implementation = '{MODULE}:shout'
    timeout = 5
    deduplicate = true
    annotations = {{ readOnlyHint = true }}

    [arguments]
    type = 'object'
    required = [ 'text' ]

    [arguments.properties.text]
    type = 'string'

    [results]
    type = 'object'
    properties = {{ }}
    '''

SHOW = f'''
    [invoker]
    name = 'show_configuration'
    implementation = '{MODULE}:show_configuration'
    '''

SAMPLE = '''
    [ensemble]
    name = 'sample'
    description = 'Sample tools.'

    [defaults]
    timeout = 12.5

    [configuration]
    greeting = 'hello'
    limit = 3

    [[invokers]]
    source = 'sample/echo.toml'

    [[invokers]]
    source = 'sample/shout.toml'

    [[invokers]]
    source = 'sample/show.toml'
    '''

CONFIGURATION = '''
    [[ensembles]]
    source = 'sample.toml'
    '''


def write_tree( folder: Path, files: dict[ str, str ] ) -> None:
    ''' Writes files (dedented) below folder. '''
    for relative, text in files.items( ):
        path = folder / relative
        path.parent.mkdir( parents = True, exist_ok = True )
        path.write_text( textwrap.dedent( text ) )


def write_sample(
    folder: Path, configuration: str = CONFIGURATION, **extra: str
) -> Path:
    ''' Writes sample configuration; returns its path. '''
    files = {
        'invocables.toml': configuration,
        'sample.toml': SAMPLE,
        'sample/echo.toml': ECHO,
        'sample/shout.toml': SHOUT,
        'sample/show.toml': SHOW,
        **extra,
    }
    write_tree( folder, files )
    return folder / 'invocables.toml'
