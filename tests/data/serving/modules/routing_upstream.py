# SPDX-License-Identifier: Apache-2.0

''' Upstream MCP server over stdio, written by hand (no SDK, so that
    either major runs it), for the tests of the gateway's memo of routes
    (``test_941_serving_gateway_routing.py``).

    Arguments: ``--label NAME``; ``--state PATH``, a JSON file read again
    at every request: ``resources`` (URIs), ``generate`` (so many more,
    ``<label>://item/<n>``), ``templates``; ``--log PATH``, to which each
    request appends a line ``<method> <uri>`` (its URI, if any); ``--page
    N``, the resources listed per page; ``--strict``: a URI read which it
    does not list (nor matches a template's part before its first ``{``)
    is the error ``-32002``, else any URI reads as ``<label>: <uri>``.
    It always lists ``<label>://announce``, whose reading first sends
    ``notifications/resources/list_changed``, and ``<label>://update``,
    whose reading first sends ``notifications/resources/updated`` of each
    resource of its state.
'''


import argparse
import json
import sys

from pathlib import Path


def _parse( ) -> argparse.Namespace:
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--label', default = 'routing' )
    parser.add_argument( '--state', required = True )
    parser.add_argument( '--log', required = True )
    parser.add_argument( '--page', type = int, default = 0 )
    parser.add_argument( '--strict', action = 'store_true' )
    return parser.parse_args( )


_OPTIONS = _parse( )
_ANNOUNCE = f"{_OPTIONS.label}://announce"
_UPDATE = f"{_OPTIONS.label}://update"


def _read_state( ) -> tuple[ list[ str ], list[ str ] ]:
    state = json.loads( Path( _OPTIONS.state ).read_text( ) )
    resources = [ *state.get( 'resources', ( ) ), _ANNOUNCE, _UPDATE ]
    resources.extend(
        f"{_OPTIONS.label}://item/{index}"
        for index in range( state.get( 'generate', 0 ) ) )
    return resources, list( state.get( 'templates', ( ) ) )


def _list_resources( parameters: dict ) -> dict:
    resources, _ = _read_state( )
    start = int( parameters.get( 'cursor' ) or 0 )
    size = _OPTIONS.page or len( resources )
    page = resources[ start : start + size ]
    result: dict = { 'resources': [
        { 'uri': uri, 'name': uri } for uri in page ] }
    if start + size < len( resources ):
        result[ 'nextCursor' ] = str( start + size )
    return result


def _read_resource( uri: str ) -> dict:
    resources, templates = _read_state( )
    if _OPTIONS.strict and uri not in resources and not any(
        uri.startswith( template.split( '{' )[ 0 ] )
        for template in templates
    ): return { 'error': { 'code': -32002, 'message': "Not found." } }
    return { 'result': { 'contents': [
        { 'uri': uri, 'text': f"{_OPTIONS.label}: {uri}" } ] } }


def _answer( method: str, parameters: dict ) -> dict:
    match method:
        case 'initialize':
            return { 'result': {
                'protocolVersion': parameters.get(
                    'protocolVersion', '2025-06-18' ),
                'capabilities': { 'resources': {
                    'subscribe': True, 'listChanged': True } },
                'serverInfo': { 'name': _OPTIONS.label, 'version': '1' } } }
        case 'tools/list': return { 'result': { 'tools': [ ] } }
        case 'prompts/list': return { 'result': { 'prompts': [ ] } }
        case 'resources/list':
            return { 'result': _list_resources( parameters ) }
        case 'resources/templates/list':
            _, templates = _read_state( )
            return { 'result': { 'resourceTemplates': [
                { 'uriTemplate': uri, 'name': uri } for uri in templates ] } }
        case 'resources/read': return _read_resource( parameters[ 'uri' ] )
        case _: return { 'result': { } }


def _write( output, message: dict ) -> None:
    output.write( json.dumps( message ).encode( ) + b'\n' )
    output.flush( )


def _notify( output, uri: str ) -> None:
    ''' Sends what reading a URI of control announces, if any. '''
    if uri == _ANNOUNCE:
        _write( output, {
            'jsonrpc': '2.0',
            'method': 'notifications/resources/list_changed' } )
    if uri != _UPDATE: return
    state = json.loads( Path( _OPTIONS.state ).read_text( ) )
    for resource in state.get( 'resources', ( ) ):
        _write( output, {
            'jsonrpc': '2.0', 'method': 'notifications/resources/updated',
            'params': { 'uri': resource } } )


def _serve( ) -> None:
    output = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads( line )
        if 'id' not in message: continue
        method = message.get( 'method' )
        parameters = message.get( 'params' ) or { }
        with open( _OPTIONS.log, 'a', encoding = 'utf-8' ) as log:
            log.write( f"{method} {parameters.get( 'uri', '' )}\n" )
        if method == 'resources/read': _notify( output, parameters[ 'uri' ] )
        _write( output, {
            'jsonrpc': '2.0', 'id': message[ 'id' ],
            **_answer( method, parameters ) } )


if __name__ == '__main__': _serve( )
