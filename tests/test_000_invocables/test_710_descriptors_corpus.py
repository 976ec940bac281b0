# SPDX-License-Identifier: Apache-2.0

''' Corpus of broken descriptors: each raises its own precise error.

    A case may name a folder of modules (``path``) which its
    implementations import, put first on the module search path.
'''


from pathlib import Path

import pytest

try: import tomllib
except ModuleNotFoundError: import tomli as tomllib # Python 3.10

from invocables import descriptors

from invocables import exceptions


_corpus = Path( __file__ ).parent.parent / 'data' / 'descriptors' / 'broken'
_cases = tomllib.loads(
    ( _corpus / 'cases.toml' ).read_text( ) )[ 'cases' ]


def _prepare_path( case, monkeypatch ):
    if 'path' in case:
        monkeypatch.syspath_prepend(
            str( _corpus / case[ 'folder' ] / case[ 'path' ] ) )


def test_100_corpus_size( ):
    ''' Corpus holds at least a hundred cases, each in its own folder. '''
    assert len( _cases ) >= 100
    folders = { case[ 'folder' ] for case in _cases }
    assert len( folders ) == len( _cases )
    assert folders == {
        path.name for path in _corpus.iterdir( ) if path.is_dir( ) }


@pytest.mark.parametrize(
    'case', _cases, ids = [ case[ 'folder' ] for case in _cases ] )
def test_110_configuration_error( case, monkeypatch ):
    ''' Loading broken configuration names file, key path and fix. '''
    _prepare_path( case, monkeypatch )
    folder = _corpus / case[ 'folder' ]
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        descriptors.produce_configuration( folder / case[ 'entry' ] )
    error = caught.value
    assert Path( error.location ) == ( folder / case[ 'file' ] ).resolve( )
    assert error.keypath == case[ 'keypath' ]
    assert case[ 'fragment' ] in error.reason
    assert case[ 'fragment' ] in str( error )
    assert isinstance( error, ValueError )


@pytest.mark.asyncio
@pytest.mark.parametrize(
    'case', _cases[ : 5 ], ids = [ case[ 'folder' ] for case in _cases[ : 5 ] ] )
async def test_120_prepare_raises( case ):
    ''' Preparing ensembles raises the same error; nothing is produced. '''
    folder = _corpus / case[ 'folder' ]
    with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
        await descriptors.prepare_ensembles(
            folder / case[ 'entry' ], connect = True )
    assert caught.value.keypath == case[ 'keypath' ]


def test_130_reasons_say_what_to_do( monkeypatch ):
    ''' Every reason ends a sentence and suggests a correction, and names
        no internal name.
    '''
    for case in _cases:
        _prepare_path( case, monkeypatch )
        folder = _corpus / case[ 'folder' ]
        with pytest.raises( exceptions.DescriptorInvalidity ) as caught:
            descriptors.produce_configuration( folder / case[ 'entry' ] )
        reason = caught.value.reason
        assert reason.rstrip( ).endswith( ( '.', ')', '?' ) ), reason
        assert len( reason ) > 30, reason
        assert '_frigid' not in str( caught.value ), reason
