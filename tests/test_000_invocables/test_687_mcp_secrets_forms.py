# SPDX-License-Identifier: Apache-2.0

''' Secrets of MCP servers in every form: resolved values never shown,
    secrets learned stripped, per part of Basic credentials and in their
    common encodings, and tools whose argument names a short secret would
    change left out.

    The secrets are given as ``env:`` references; servers quote them
    through their ``echo`` tool (``servers/echo_server.py``), as a server
    which quotes what it was given would.
'''


import invocables
import invocables.mcp


_SECRET = 'Zq9-hush-Hush-7731'
_VARIABLE = 'INVOCABLES_TEST_FORMS'


def test_100_resolution_shows_no_values( monkeypatch ):
    ''' The representation of a resolution shows keys of its environment
        and headers and its URL without credentials, query or secret path
        segments; no resolved value.

        Before, its representation was the dataclass's, with every value.
    '''
    monkeypatch.setenv( _VARIABLE, _SECRET )
    ensemble = invocables.mcp.produce_ensemble(
        'remote', url = f"https://u:env:{_VARIABLE}@api.example.com/mcp/"
        f"env:{_VARIABLE}?token=env:{_VARIABLE}",
        headers = {
            'Authorization': f"Bearer env:{_VARIABLE}", 'X-Other': 'lit' } )
    resolution = ensemble.parameters.resolve( 'remote' )
    assert resolution.headers[ 'Authorization' ] == f"Bearer {_SECRET}"
    for text in ( repr( resolution ), str( resolution ) ):
        assert _SECRET not in text
        assert 'lit' not in text
        assert "'https://api.example.com/mcp/***'" in text
        assert "headers = [ 'Authorization', 'X-Other' ]" in text
    local = invocables.mcp.produce_ensemble(
        'local', command = 'server',
        environment = { 'TOKEN': f"env:{_VARIABLE}" } )
    text = repr( local.parameters.resolve( 'local' ) )
    assert _SECRET not in text
    assert "environment = [ 'TOKEN' ]" in text
