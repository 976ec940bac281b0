# SPDX-License-Identifier: Apache-2.0

''' The search command of ``invocables``: tools ranked as the model's
    search tool would rank them.
'''


import argparse as _argparse
import sys as _sys

import invocables.cli.__ as __
import invocables.cli.commands as _commands
import invocables.naming as _naming
import invocables.toolsets.search as _search


def produce_parser(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
    ''' Adds parser of search. '''
    search = commands.add_parser(
        'search', parents = [ common ],
        help = "search the tools as the model's search tool would (BM25)" )
    search.add_argument( 'query', help = "words describing the tool wanted" )
    search.add_argument(
        '--limit', type = int, default = 5, choices = range( 1, 21 ),
        metavar = 'N', help = "most tools to list, 1 to 20 (default: 5)" )
    search.add_argument(
        '--json', action = 'store_true', help = "print JSON" )
    search.set_defaults( execute = _execute_search )


async def _execute_search( options: _argparse.Namespace ) -> int:
    configuration = _commands.produce_configuration( options )
    ensembles = await _commands.prepare_ensembles( configuration )
    try:
        tool_search = _search.ToolSearch( ensembles )
        matches = tool_search.query_matches( options.query, options.limit )
        nomenclature = _naming.access_nomenclature( tool_search.ensembles )
        found = [
            { 'name': match.name, 'score': round( match.score, 3 ),
              'description': _summarize( nomenclature.access_designation(
                  match.name ).invoker.description ) }
            for match in matches ]
    finally: await _commands.disconnect( ensembles )
    if options.json: text = __.json.dumps( found, indent = 2 )
    elif not found: text = f"No tool matches {options.query!r}."
    else:
        text = '\n'.join(
            "{name}  ({score})  {description}".format( **item )
            for item in found )
    _sys.stdout.write( text + '\n' )
    return 0


def _summarize( description: str ) -> str:
    ''' Returns first sentence of description, on one line. '''
    text = ' '.join( description.split( ) )
    sentence, separator, _ = text.partition( '. ' )
    return sentence + ( '.' if separator else '' )
