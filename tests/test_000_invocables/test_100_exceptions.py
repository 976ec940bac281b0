# SPDX-License-Identifier: Apache-2.0

''' One exception hierarchy, each error also a fitting builtin. '''


import inspect

import pytest

from invocables import exceptions


def _classes( ):
    return [
        value for _, value in inspect.getmembers( exceptions, inspect.isclass )
        if value.__module__ == exceptions.__name__ ]


def test_100_single_base( ):
    ''' Every exception class derives from the package's one base. '''
    for class_ in _classes( ):
        assert issubclass( class_, exceptions.Omniexception ), class_


def test_110_errors_derive_from_builtins( ):
    ''' Every error class also derives from a builtin error besides Exception. '''
    builtins_ = (
        ValueError, LookupError, TypeError, RuntimeError, ConnectionError,
        TimeoutError, OSError, ImportError )
    for class_ in _classes( ):
        if class_ in ( exceptions.Omniexception, exceptions.Omnierror ):
            continue
        if not issubclass( class_, exceptions.Omnierror ): continue
        assert issubclass( class_, builtins_ ), class_


def test_120_invoker_absence( ):
    ''' Absence error names the tool and says what to do. '''
    error = exceptions.InvokerAbsence( 'frobnicate', 'tools' )
    assert isinstance( error, LookupError )
    assert "'frobnicate'" in str( error )
    assert "'tools'" in str( error )
    assert 'Use one of the tools' in str( error )


def test_130_arguments_invalidity( ):
    ''' Invalidity error names the tool and the reason. '''
    error = exceptions.ArgumentsInvalidity( 'add', "at 'a': wrong." )
    assert isinstance( error, ValueError )
    assert error.name == 'add'
    assert "at 'a': wrong." in str( error )


def test_140_provider_failure( ):
    ''' Provider failure carries status, type and message. '''
    error = exceptions.ProviderFailure(
        'anthropic', 400, 'invalid_request_error', 'Bad.' )
    assert error.status == 400
    assert error.genus == 'invalid_request_error'
    assert 'status 400' in str( error )
    assert "'invalid_request_error'" in str( error )


def test_150_notes_allowed( ):
    ''' Notes can be added to frozen exceptions. '''
    error = exceptions.SchemaInvalidity( 'tool', 'broken.' )
    error.__notes__ = [ 'first' ]
    add_note = getattr( error, 'add_note', None ) # Python 3.11 and later
    if add_note is None: error.__notes__.append( 'context' )
    else: add_note( 'context' )
    assert error.__notes__ == [ 'first', 'context' ]


def test_160_attributes_frozen( ):
    ''' Exception attributes cannot be reassigned after construction. '''
    error = exceptions.EnsembleAbsence( 'x' )
    with pytest.raises( AttributeError ): error.name = 'y'


def test_170_warnings_are_not_errors( ):
    ''' Warnings are exceptions of the package but not errors. '''
    for warning in (
        exceptions.SecretReferenceWarning, exceptions.ToolExclusionWarning,
    ):
        assert issubclass( warning, exceptions.Omniexception )
        assert not issubclass( warning, exceptions.Omnierror )
