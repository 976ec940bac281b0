# SPDX-License-Identifier: Apache-2.0

''' Escapes of characters of secrets, for the fuzzing of redaction. '''


import random


def produce_percent_escape(
    chooser: random.Random, character: str
) -> str:
    ''' Returns character percent-encoded as UTF-8, each digit of hex in
        a case which chooser picks. '''
    hexes = ''.join(
        digit.lower( ) if chooser.random( ) < 0.5 else digit
        for digit in character.encode( ).hex( ).upper( ) )
    return ''.join(
        f"%{hexes[ index : index + 2 ]}"
        for index in range( 0, len( hexes ), 2 ) )
