# SPDX-License-Identifier: Apache-2.0

''' Text from outside, made safe to write to a terminal. '''


import invocables.cli.__ as __


_CONTROLS = __.re.compile(
    '[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]' )


def escape_text( text: str ) -> str:
    ''' Returns text with control characters escaped (``\x1b``, ...),
        but line feeds and tabs: safe to write to a terminal.

        Every text from outside (tools' names, descriptions, results,
        errors; a model's words) goes through it on its way out.
    '''
    return _CONTROLS.sub( _escape_character, text )


def escape_json_text( text: str ) -> str:
    ''' Returns JSON text with the controls which JSON leaves as they are
        (C1, bidirectional) written as JSON escapes (``\\u009b``).
    '''
    return _CONTROLS.sub(
        lambda match: f"\\u{ord( match.group( ) ):04x}", text )


def _escape_character( match: __.re.Match[ str ] ) -> str:
    code = ord( match.group( ) )
    if code > 0xff: return f"\\u{code:04x}" # noqa: PLR2004
    return f"\\x{code:02x}"
