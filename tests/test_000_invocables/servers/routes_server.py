# SPDX-License-Identifier: Apache-2.0

''' MCP server over stdio, written by hand (no SDK, so that either major
    runs it), which lists the resources and templates given and reads any
    URI as ``<label>: <uri>``, to show which server a gateway asked.

    Arguments: ``--label NAME``, ``--resources URI,URI``, ``--templates
    TEMPLATE,TEMPLATE``; with ``--stall``, it lists a prompt ``greet`` and
    never answers ``completion/complete``, ``resources/subscribe`` nor
    ``resources/unsubscribe`` (it answers all else at once). Without, it
    completes with its label and accepts subscriptions.
'''


import argparse
import json
import sys


def _parse( ) -> argparse.Namespace:
    parser = argparse.ArgumentParser( )
    parser.add_argument( '--label', default = 'routes' )
    parser.add_argument( '--resources', default = '' )
    parser.add_argument( '--templates', default = '' )
    parser.add_argument( '--stall', action = 'store_true' )
    return parser.parse_args( )


_OPTIONS = _parse( )
_RESOURCES = [ uri for uri in _OPTIONS.resources.split( ',' ) if uri ]
_TEMPLATES = [ uri for uri in _OPTIONS.templates.split( ',' ) if uri ]
_STALLED = frozenset( (
    'completion/complete', 'resources/subscribe', 'resources/unsubscribe' ) )


def _answer( method: str, parameters: dict ) -> dict:
    label = _OPTIONS.label
    match method:
        case 'initialize':
            return {
                'protocolVersion': parameters.get(
                    'protocolVersion', '2025-06-18' ),
                'capabilities': {
                    'tools': { }, 'prompts': { }, 'completions': { },
                    'resources': { 'subscribe': True } },
                'serverInfo': { 'name': label, 'version': '1' } }
        case 'tools/list':
            return { 'tools': [ {
                'name': f"{label}_noop",
                'inputSchema': { 'type': 'object' } } ] }
        case 'prompts/list':
            prompts = [ {
                'name': 'greet',
                'arguments': [ { 'name': 'who', 'required': True } ] } ]
            return { 'prompts': prompts if _OPTIONS.stall else [ ] }
        case 'resources/list':
            return { 'resources': [
                { 'uri': uri, 'name': uri } for uri in _RESOURCES ] }
        case 'resources/templates/list':
            return { 'resourceTemplates': [
                { 'uriTemplate': uri, 'name': uri } for uri in _TEMPLATES ] }
        case 'resources/read':
            uri = parameters[ 'uri' ]
            return { 'contents': [
                { 'uri': uri, 'text': f"{label}: {uri}" } ] }
        case 'completion/complete':
            return { 'completion': { 'values': [ label ] } }
        case _: return { }


def _serve( ) -> None:
    output = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads( line )
        if 'id' not in message: continue
        method = message.get( 'method' )
        if _OPTIONS.stall and method in _STALLED: continue # never answers
        answer = {
            'jsonrpc': '2.0', 'id': message[ 'id' ],
            'result': _answer( method, message.get( 'params' ) or { } ) }
        output.write( json.dumps( answer ).encode( ) + b'\n' )
        output.flush( )


if __name__ == '__main__': _serve( )
