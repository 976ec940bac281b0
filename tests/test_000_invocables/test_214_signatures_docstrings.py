# SPDX-License-Identifier: Apache-2.0

''' Descriptions of tools and parameters from docstrings of functions. '''


import functools
import os
import subprocess
import sys

from typing import Annotated

import pydantic
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

import invocables

from invocables import Doc
from invocables.signatures import parse_docstring


_FUZZ_EXAMPLES = int( os.environ.get( 'INVOCABLES_FUZZ_EXAMPLES', '200' ) )


def _describe( function ):
    invoker = invocables.produce_invoker( function )
    properties = invoker.arguments_schema[ 'properties' ]
    return invoker.description, {
        name: schema.get( 'description' )
        for name, schema in properties.items( ) }


def test_100_google( ):
    ''' Google style: continuation lines kept; result sections dropped. '''

    def scale( factor: float, offset: float = 0 ) -> float:
        ''' Scales a value.

            Applies the factor first.

            Args:
                factor (float): How much to scale, as a
                    ratio of the original.
                offset: Added after scaling.

            Returns:
                The scaled value.

            Raises:
                ValueError: Never.

            Yields:
                Nothing.

            Examples:
                >>> scale( 2 )
        '''
        return factor + offset

    description, parameters = _describe( scale )
    assert description == 'Scales a value.\n\nApplies the factor first.'
    assert parameters == {
        'factor': 'How much to scale, as a ratio of the original.',
        'offset': 'Added after scaling.' }


def test_110_numpy( ):
    ''' NumPy style parameters are read; Returns dropped, Notes kept. '''

    def scale( factor: float, offset: float = 0 ) -> float:
        ''' Scales a value.

            Parameters
            ----------
            factor : float
                How much to scale,
                as a ratio.
            offset : float, optional
                Added after scaling.

            Returns
            -------
            float
                The scaled value.

            Notes
            -----
            Rounds nothing.
        '''
        return factor + offset

    description, parameters = _describe( scale )
    assert description == 'Scales a value.\n\nRounds nothing.'
    assert parameters == {
        'factor': 'How much to scale, as a ratio.',
        'offset': 'Added after scaling.' }


def test_120_sphinx( ):
    ''' Sphinx fields are read, typed or not; result fields dropped. '''

    def scale( factor: float, offset: float = 0 ) -> float:
        ''' Scales a value.

            :param factor: How much to scale,
                as a ratio.
            :param float offset: Added after scaling.
            :returns: The scaled value.
            :raises ValueError: Never.
        '''
        return factor + offset

    description, parameters = _describe( scale )
    assert description == 'Scales a value.'
    assert parameters == {
        'factor': 'How much to scale, as a ratio.',
        'offset': 'Added after scaling.' }


def test_130_narrative( ):
    ''' Narrative docstrings are kept whole, colons and all. '''

    def fetch( url: str ) -> str:
        ''' Fetches a page.

            Note: only HTTPS is supported. Returns: the body, as text.
            Redirects are followed.
        '''
        return url

    description, parameters = _describe( fetch )
    assert description == (
        'Fetches a page.\n\nNote: only HTTPS is supported. Returns: the '
        'body, as text.\nRedirects are followed.' )
    assert parameters == { 'url': None }


def test_140_doc_annotations_win( ):
    ''' Doc and Field descriptions in annotations win over the docstring. '''

    def move(
        steps: Annotated[ int, Doc( 'Steps to take.' ) ],
        speed: Annotated[ float, pydantic.Field( description = 'Speed.' ) ],
        mode: str = 'walk',
    ) -> None:
        ''' Moves.

            Args:
                steps: Ignored in favour of the annotation.
                mode: How to move.
        '''

    _, parameters = _describe( move )
    assert parameters == {
        'steps': 'Steps to take.', 'speed': 'Speed.', 'mode': 'How to move.' }


def test_150_docstrings_of_other_callables( ):
    ''' Partials, callable objects and methods give their own docstring. '''

    def power( base: int, exponent: int = 2 ) -> int:
        ''' Raises base to exponent.

            Args:
                base: The base.
        '''
        return base ** exponent

    class Doubler:
        ''' Doubles numbers. '''

        def __call__( self, value: int ) -> int:
            return 2 * value

        def halve( self, value: int ) -> int:
            ''' Halves a number. '''
            return value // 2

    class Tripler:
        ''' Triples numbers (class). '''

        def __call__( self, value: int ) -> int:
            ''' Triples a number (call). '''
            return 3 * value

    cube = invocables.produce_invoker(
        functools.partial( power, exponent = 3 ), name = 'cube' )
    assert cube.description == 'Raises base to exponent.'
    properties = cube.arguments_schema[ 'properties' ]
    assert properties[ 'base' ][ 'description' ] == (
        'The base.' )
    doubler = invocables.produce_invoker( Doubler( ), name = 'double' )
    assert doubler.description == 'Doubles numbers.'
    tripler = invocables.produce_invoker( Tripler( ), name = 'triple' )
    assert tripler.description == 'Triples a number (call).'
    assert invocables.produce_invoker( Doubler( ).halve ).description == (
        'Halves a number.' )


def test_160_no_docstring( ):
    ''' A function without docstring has an empty description. '''

    def bare( value: int ) -> int:
        return value

    assert _describe( bare ) == ( '', { 'value': None } )


def test_165_unparsable_docstring( ):
    ''' Text which the parser cannot read becomes the whole description. '''

    def odd( value: int ) -> int:
        return value

    odd.__doc__ = '    :\n    :\nArgs:'
    assert parse_docstring( odd ) == ( ':\n    :\nArgs:', { } )


def test_170_parser_not_imported_by_package( ):
    ''' Importing the package imports neither the parser nor pydantic. '''
    script = (
        'import sys, invocables\n'
        "print( 'docstring_parser' in sys.modules, "
        "'pydantic' in sys.modules )" )
    completed = subprocess.run(
        [ sys.executable, '-c', script ], capture_output = True,
        text = True, check = True, timeout = 60 )
    assert completed.stdout.split( ) == [ 'False', 'False' ]


_lines = st.sampled_from( (
    'Args:', 'Returns:', 'Parameters', '----------', ':param x: text',
    ':returns:', '    x: text', '    x (int): more', 'x : int', 'Notes',
    '-----', '', 'Plain words: with colons.', '    indented', 'Raises:',
    'Examples:', '>>> x', ':param:', 'Yields:', '    :' ) )


@settings( max_examples = _FUZZ_EXAMPLES, deadline = None )
@given( st.lists(
    st.one_of( _lines, st.text( max_size = 30 ) ), max_size = 12 ) )
def test_900_any_docstring( lines ):
    ''' Any docstring gives a description and descriptions, never an error.

        Run with INVOCABLES_FUZZ_EXAMPLES=10000 for a thorough search.
    '''

    def probe( x: int ) -> int:
        return x

    probe.__doc__ = '\n'.join( lines )
    description, descriptions = parse_docstring( probe )
    assert isinstance( description, str )
    assert all(
        isinstance( key, str ) and isinstance( value, str )
        for key, value in descriptions.items( ) )


@pytest.mark.parametrize( 'style', [ 'google', 'numpy', 'sphinx' ] )
def test_910_styles_agree( style ):
    ''' The three styles give the same descriptions for the same text. '''
    sections = {
        'google': 'Args:\n    a: First\n        term.\n    b: Second.',
        'numpy': (
            'Parameters\n----------\na : int\n    First\n    term.\n'
            'b : int\n    Second.' ),
        'sphinx': ':param a: First\n    term.\n:param b: Second.',
    }

    def add( a: int, b: int ) -> int:
        return a + b

    add.__doc__ = f"Adds.\n\n{sections[ style ]}\n"
    assert parse_docstring( add ) == (
        'Adds.', { 'a': 'First term.', 'b': 'Second.' } )


def _parse_every_style( docstring ):
    ''' Returns what docstring_parser's own choice of style gives. '''
    import docstring_parser
    try: parsed = docstring_parser.parse( docstring )
    except Exception as exception: return type( exception )
    return (
        parsed.short_description, parsed.long_description,
        parsed.blank_after_short_description,
        [ ( meta.args, meta.description ) for meta in parsed.meta ] )


@settings( max_examples = _FUZZ_EXAMPLES, deadline = None )
@given( st.lists(
    st.one_of( _lines, st.text( max_size = 30 ) ), max_size = 12 ) )
def test_920_parsed_as_every_style( lines ):
    ''' Docstrings parse as docstring_parser's choice among its styles,
        also where Google style alone is parsed.
    '''
    from invocables import signatures
    docstring = '\n'.join( lines )
    try: parsed = signatures._functions._parse_docstring( docstring )
    except Exception as exception: result = type( exception )
    else:
        result = (
            parsed.short_description, parsed.long_description,
            parsed.blank_after_short_description,
            [ ( meta.args, meta.description ) for meta in parsed.meta ] )
    assert result == _parse_every_style( docstring )
