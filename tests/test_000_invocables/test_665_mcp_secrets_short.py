# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers too short to redact.

    A secret shorter than four characters, or one which decodes to a
    shorter form (``ab%41`` is ``abA`` where the text escapes its other
    characters), cannot be sought without hiding common words: it is not
    redacted in that form, and a warning says so, naming no secret. A
    secret of four characters or more, and one of whitespace only (no
    secret), give no warning.
'''


import logging

import pytest

import invocables.mcp

from invocables.mcp import redaction


_LOGGER = 'invocables.mcp.redaction'


def _warnings( caplog ):
    return [
        record for record in caplog.records
        if record.name == _LOGGER and record.levelno == logging.WARNING ]


@pytest.mark.parametrize(
    'secrets, count',
    (
        ( ( 'abc', ), 1 ),
        ( ( ' xy\n', ), 1 ),
        ( ( 'ab%41', ), 1 ),
        ( ( '&lt;&gt;x', ), 1 ),
        ( ( 'ok', 'p%41s', 'long-enough' ), 2 ),
    ) )
def test_100_short_warned( secrets, count, caplog ):
    ''' A secret shorter than four characters, or which decodes to a
        shorter form, is counted in one warning which names none. '''
    caplog.set_level( logging.WARNING, logger = _LOGGER )
    redaction.Redactor( secrets )
    records = _warnings( caplog )
    assert len( records ) == 1
    message = records[ 0 ].getMessage( )
    assert message.startswith( f"{count} secret(s)" )
    assert 'four characters' in message
    for secret in secrets: assert secret.strip( ) not in message


@pytest.mark.parametrize(
    'secrets', ( ( ), ( 'abcd', ), ( '   ', '' ), ( 'p%41ss-long', ) ) )
def test_110_long_silent( secrets, caplog ):
    ''' Secrets of four characters or more (decoded too), and values of
        whitespace only, give no warning. '''
    caplog.set_level( logging.WARNING, logger = _LOGGER )
    redaction.Redactor( secrets )
    assert not _warnings( caplog )


def test_120_short_forms_kept( ):
    ''' What the warning says holds: a short secret, and the short
        decoding of a longer one, are not redacted (they would hide common
        words), while the longer one is, as it is. '''
    redactor = redaction.Redactor( ( 'abc', 'ab%41' ) )
    assert redactor.redact( 'abc abA' ) == 'abc abA'
    assert redactor.redact( 'key ab%41 end' ) == 'key *** end'


def test_130_ensemble_warns( monkeypatch, caplog ):
    ''' An ensemble whose header reads a short value from the environment
        warns as it resolves its parameters, naming no value. '''
    monkeypatch.setenv( 'INVOCABLES_TEST_SHORT', 'q7' )
    caplog.set_level( logging.WARNING, logger = _LOGGER )
    ensemble = invocables.mcp.produce_ensemble(
        'shorts', url = 'http://127.0.0.1:9/mcp',
        headers = { 'X-Key': 'env:INVOCABLES_TEST_SHORT' } )
    resolution = ensemble.parameters.resolve( 'shorts' )
    assert resolution.redactor.redact( 'q7 stays' ) == 'q7 stays'
    records = _warnings( caplog )
    assert len( records ) == 1
    assert 'q7' not in records[ 0 ].getMessage( )
