# SPDX-License-Identifier: Apache-2.0

''' Hostile text calls: numbers JSON lacks.

    Arguments with ``NaN`` or ``Infinity`` (which JSON lacks, and which
    Python's decoder takes) are refused, as the pythonic format refuses
    them.
'''


import pytest

from invocables.processors import textcalls


_NAMES = ( 'add', 'get_weather' )


@pytest.mark.parametrize( 'value', [
    'NaN', 'Infinity', '-Infinity', '1e999', '-1e400', '[ 1, NaN ]',
    '{ "b": Infinity }',
] )
def test_200_nonfinite_numbers_refused( value ):
    ''' A call whose JSON arguments hold NaN or an infinity is read as an
        invalid call (the engine answers it with an error), never run with
        a value JSON has no form for: tagged, bare, in a string.
    '''
    quoted = value.replace( '"', '\\"' )
    for text in (
        f'<tool_call>{{"name": "add", "arguments": {{"a": {value}}}}}'
        '</tool_call>',
        f'{{"name": "add", "arguments": {{"a": {value}}}}}',
        f'{{"name": "add", "arguments": "{{\\"a\\": {quoted}}}"}}',
    ):
        reading = textcalls.read_text_calls( text, _NAMES, unknown = True )
        ( call, ) = reading.invocations
        assert call.name == 'add'
        assert call.arguments == { }
        assert 'JSON' in call.invalidity
        assert reading.text == ''


def test_210_finite_numbers_read( ):
    ''' Finite numbers, large and small, are read as they are. '''
    text = (
        '{"name": "add", "arguments": {"a": 1e308, "b": -2.5e-300, '
        '"c": "NaN"}}' )
    reading = textcalls.read_text_calls( text, _NAMES )
    ( call, ) = reading.invocations
    assert call.arguments == { 'a': 1e308, 'b': -2.5e-300, 'c': 'NaN' }
