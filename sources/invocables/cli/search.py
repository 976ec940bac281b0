# SPDX-License-Identifier: Apache-2.0

''' The search command of ``invocables``: tools ranked as the model's
    search tool would rank them.
'''


import argparse as _argparse
import sys as _sys

import invocables.cli.__ as __
import invocables.cli._escapes as _escapes
import invocables.cli.commands as _commands
import invocables.naming as _naming
import invocables.toolsets.search as _search


def produce_parser(
    commands: __.typx.Any, common: _argparse.ArgumentParser
) -> None:
    ''' Adds parser of search. '''
    search = _commands.add_command(
        commands, common, 'search', _execute_search,
        "search the tools as the model's search tool would (BM25)" )
    search.add_argument( 'query', help = "words describing the tool wanted" )
    search.add_argument(
        '--limit', type = int, default = 5, choices = range( 1, 21 ),
        metavar = 'N', help = "most tools to list, 1 to 20 (default: 5)" )
    search.add_argument(
        '--json', action = 'store_true', help = "print JSON" )


async def _execute_search( options: _argparse.Namespace ) -> int:
    async with _commands.connect_configuration( options ) as ensembles:
        tool_search = _search.ToolSearch( ensembles )
        matches = tool_search.query_matches( options.query, options.limit )
        nomenclature = _naming.access_nomenclature( tool_search.ensembles )
        found = [
            { 'name': match.name, 'score': round( match.score, 3 ),
              'description': _commands.summarize_description(
                  nomenclature.access_designation(
                      match.name ).invoker.description ) }
            for match in matches ]
    if options.json: text = __.json.dumps( found, indent = 2 )
    elif not found: text = f"No tool matches {options.query!r}."
    else:
        text = _escapes.escape_text( '\n'.join(
            "{name}  ({score})  {description}".format( **item )
            for item in found ) )
    _sys.stdout.write( text + '\n' )
    return 0
