# SPDX-License-Identifier: Apache-2.0

''' Redaction scans a server's text in linear time.

    Before, the pattern of URLs began with an unbounded scheme: in text such
    as ``'a.' * 200_000``, every start of a word scanned to the end of the
    text, and redacting a result of 400 kB held the event loop for minutes.
'''


import pytest

from invocables.mcp import redaction


# A frozen event loop cannot end a test: the thread method can.
_unfrozen = pytest.mark.timeout( 120, method = 'thread' )


@_unfrozen
@pytest.mark.parametrize( 'noise', [ 'a.', 'a-', 'a+b.', 'a:', 'a://' ] )
def test_100_long_text_redacted( noise ):
    ''' URLs of a secret host are redacted after long noise, at once. '''
    redactor = redaction.Redactor(
        secrets = ( 'hunter2-token', ), hosts = ( 'example.com', ) )
    url = 'https://user:hunter2@example.com/path?key=value'
    text = noise * 200_000 + ' ' + url + ' hunter2-token'
    redacted = redactor.redact( text )
    assert redacted.endswith(
        ' https://***@example.com/path?key=*** ***' )


def test_200_long_schemes_kept( ):
    ''' Schemes of up to 32 characters are still recognized. '''
    redactor = redaction.Redactor( hosts = ( 'example.com', ) )
    scheme = 'a' + 'b' * 31
    assert redactor.redact( f"{scheme}://u:p@example.com/" ) == (
        f"{scheme}://***@example.com/" )
