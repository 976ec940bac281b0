# SPDX-License-Identifier: Apache-2.0

''' Tool catalog of an MCP ensemble: from a listing to invokers.

    Sessions hand each ``tools/list`` answer (and the tools which the
    listing screen refused) to the catalog. It leaves out the tools which
    the options exclude or which cannot be served, builds one invoker and
    one description per remaining tool, and keeps them until the listing
    changes: an unchanged listing (by fingerprint) keeps the same tuple
    of invokers, and an unchanged tool keeps its invoker.
'''


import invocables.mcp.__ as __
import invocables.mcp.records as _records
import invocables.mcp.redaction as _redaction
import invocables.mcp._sdk as _sdk
from ._sdk import types as _mcp_types
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers
import invocables.naming as _naming


InvocableProducer: __.typx.TypeAlias = __.cabc.Callable[
    [ str, __.Absential[ float | None ] ], _invokers.Invocable ]
''' Produces the invocable of a tool from its name and timeout. '''

_Entry: __.typx.TypeAlias = tuple[
    _invokers.Invoker, _records.ToolDescription ]

_REASON_NAME_CONCEALED = (
    "its name holds a secret of the connection, which no provider may see" )
_REASON_DISFIGURED = (
    "its schema holds a secret of the connection in the name of an "
    "argument or keyword, which redaction changes; calls by the names "
    "listed would fail" )

_scribe = __.produce_scribe( __name__ )


class Catalog:
    ''' Invokers, descriptions and omissions of the tools of one server. '''

    def __init__(
        self,
        name: str,
        options: _records.ServerOptions,
        producer: InvocableProducer,
        ensemble: __.Absential[ _ensembles.Ensemble ] = __.absent,
    ):
        self.name = name
        self.ensemble = ensemble
        self.options = options
        self.producer = producer
        self.invokers: tuple[ _invokers.Invoker, ... ] = ( )
        self.invokers_by_name: __.cabc.Mapping[ str, _invokers.Invoker ] = (
            __.types.MappingProxyType( { } ) )
        self.descriptions: tuple[ _records.ToolDescription, ... ] = ( )
        self.omissions: tuple[ _records.Omission, ... ] = ( )
        # None until a first listing: one without tools still completes.
        self.fingerprints: tuple[ str, ... ] | None = None
        self.entries: dict[ str, _Entry ] = { }
        self.tasked: __.cabc.Mapping[ str, str ] = (
            __.types.MappingProxyType( { } ) )
        ''' Task support (``required``, ``optional``) of the tools which
            are called as tasks, by name. '''
        self.disfigured = False # a tool was left out for a short secret

    def absorb(
        self,
        tools: __.cabc.Sequence[ _mcp_types.Tool ],
        refusals: __.cabc.Sequence[ _records.Omission ] = ( ),
    ) -> None:
        ''' Builds invokers from listed tools, unless the list is unchanged.

            Refusals are tools which the SDK refused, already left out.
        '''
        fingerprints = tuple(
            tool.model_dump_json( by_alias = True, exclude_none = True )
            for tool in tools ) + tuple(
                f"refused:{refusal.name}" for refusal in refusals )
        if fingerprints == self.fingerprints: return
        entries: dict[ str, _Entry ] = { }
        names: set[ str ] = set( )
        omissions: list[ _records.Omission ] = list( refusals )
        tasked: dict[ str, str ] = { }
        for tool, fingerprint in zip( tools, fingerprints ):
            reason = self._access_omission_reason( tool, names )
            if reason is not None:
                omissions.append( _records.Omission(
                    name = tool.name, reason = reason ) )
                continue
            support = _access_task_support( tool )
            if support == 'required' or (
                support == 'optional'
                and self.options.tasks is _records.TaskUses.Supported
            ): tasked[ tool.name ] = support
            earlier = self.entries.get( fingerprint )
            try: entries[ fingerprint ] = earlier or self._produce( tool )
            except _exceptions.SchemaInvalidity as exception:
                _scribe.warning(
                    "MCP server %r: tool %r left out: %s",
                    self.name, tool.name, exception )
                omissions.append( _records.Omission(
                    name = tool.name, reason = str( exception ) ) )
            else: names.add( tool.name )
        self._warn_missing( tools )
        self.tasked = __.types.MappingProxyType( tasked )
        self._replace( fingerprints, self._complete( entries ), omissions )

    def _access_omission_reason(
        self,
        tool: _mcp_types.Tool,
        names: __.cabc.Set[ str ],
    ) -> str | None:
        options = self.options
        name = tool.name
        if not __.is_absent( options.include ) and not (
            _naming.is_name_matching( name, options.include )
        ): return 'not in include list'
        if _naming.is_name_matching( name, options.exclude ):
            return 'in exclude list'
        if options.tasks is _records.TaskUses.Never and (
            _access_task_support( tool ) == 'required'
        ):
            _scribe.info(
                "MCP server %r: tool %r left out: it requires tasks, which "
                "the ensemble's option 'tasks' refuses.", self.name, name )
            return "requires tasks, which option 'tasks' refuses"
        if name in names:
            _scribe.warning(
                "MCP server %r lists tool %r twice; the first is kept.",
                self.name, name )
            return 'listed twice by server'
        disfigurement = _access_disfigurement( tool )
        if disfigurement is not None: self._warn_disfigured( )
        return disfigurement

    def _complete(
        self, entries: dict[ str, _Entry ]
    ) -> dict[ str, _Entry ]:
        ''' Returns entries with the catalog's own tools (none here). '''
        return entries

    def _produce( self, tool: _mcp_types.Tool ) -> _Entry:
        ''' Produces invoker and description; checks schema of arguments. '''
        argschema = __.types.MappingProxyType(
            dict( _sdk.access_field( tool, 'input_schema' ) ) )
        output_schema = _sdk.access_field( tool, 'output_schema' )
        outschema = (
            __.absent if output_schema is None
            else __.types.MappingProxyType( dict( output_schema ) ) )
        annotations = __.immut.Dictionary[ str, __.typx.Any ](
            { } if tool.annotations is None
            else tool.annotations.model_dump(
                by_alias = True, exclude_none = True ) )
        timeout = self.options.timeouts.get( tool.name, __.absent )
        description = _records.ToolDescription(
            name = tool.name,
            title = __.absent if tool.title is None else tool.title,
            description = tool.description or '',
            argschema = argschema,
            outschema = outschema,
            annotations = annotations,
            task_support = _access_task_support( tool ) )
        return self._produce_entry(
            self.producer( tool.name, timeout ), description, timeout )

    def _produce_entry(
        self,
        invocable: _invokers.Invocable,
        description: _records.ToolDescription,
        timeout: __.Absential[ float | None ] = __.absent,
    ) -> _Entry:
        ''' Produces invoker of a tool as its description says; checks
            schema of arguments.
        '''
        invoker = _invokers.FunctionInvoker(
            name = description.name, invocable = invocable,
            arguments_schema = description.argschema,
            description = description.description, ensemble = self.ensemble,
            timeout = timeout, annotations = description.annotations,
            outschema = description.outschema )
        return invoker, description

    def _replace(
        self,
        fingerprints: tuple[ str, ... ],
        entries: dict[ str, _Entry ],
        omissions: __.cabc.Sequence[ _records.Omission ],
    ) -> None:
        self.entries = entries
        self.fingerprints = fingerprints
        self.invokers = tuple( invoker for invoker, _ in entries.values( ) )
        self.invokers_by_name = __.types.MappingProxyType( {
            invoker.name: invoker for invoker in self.invokers } )
        self.descriptions = tuple(
            description for _, description in entries.values( ) )
        self.omissions = tuple( omissions )

    def _warn_disfigured( self ) -> None:
        if self.disfigured: return
        self.disfigured = True
        _scribe.warning(
            "MCP server %r: a secret of the connection appears in tool "
            "names, or in names in tool schemas (of arguments or keywords), "
            "which redaction would change; the tools concerned are left out "
            "(see survey_omissions). If the secret is short or a common "
            "word, use a longer one.", self.name )

    def _warn_missing(
        self, tools: __.cabc.Sequence[ _mcp_types.Tool ]
    ) -> None:
        include = self.options.include
        if __.is_absent( include ): return
        names = { tool.name for tool in tools }
        for pattern in sorted( include ):
            if pattern in names: continue
            if _naming.is_glob( pattern ) and any(
                _naming.is_name_matching( name, ( pattern, ) )
                for name in names
            ): continue
            _scribe.warning(
                "MCP server %r offers no tool matching %r from the include "
                "list.", self.name, pattern )


def _access_disfigurement( tool: _mcp_types.Tool ) -> str | None:
    ''' Returns why redaction changed names of a (redacted) tool, if it
        did: its own name, or names in its schemas (property names or
        other keys, or types).

        The values of a schema (descriptions, defaults, examples, enums)
        may lose their secrets; its names are what calls send back.
    '''
    if _redaction.REDACTION in tool.name: return _REASON_NAME_CONCEALED
    if _is_disfigured( tool ): return _REASON_DISFIGURED
    return None


def _is_disfigured( tool: _mcp_types.Tool ) -> bool:
    pending: list[ __.typx.Any ] = [
        _sdk.access_field( tool, 'input_schema' ),
        _sdk.access_field( tool, 'output_schema' ) ]
    while pending:
        node = pending.pop( )
        if isinstance( node, list ):
            pending.extend( __.typx.cast( list[ __.typx.Any ], node ) )
            continue
        if not isinstance( node, dict ): continue
        mapping = __.typx.cast( dict[ str, __.typx.Any ], node )
        if any( _redaction.REDACTION in key for key in mapping ): return True
        kind: __.typx.Any = mapping.get( 'type' )
        kinds = __.typx.cast(
            list[ __.typx.Any ],
            kind if isinstance( kind, list ) else [ kind ] )
        if any(
            isinstance( item, str ) and _redaction.REDACTION in item
            for item in kinds
        ): return True
        pending.extend( mapping.values( ) )
    return False


def _access_task_support( tool: _mcp_types.Tool ) -> str:
    ''' Returns task support of tool: ``forbidden`` unless it says. '''
    # Older 1.x SDKs know no execution properties.
    execution = getattr( tool, 'execution', None )
    if execution is None: return 'forbidden'
    return _sdk.access_field( execution, 'task_support' ) or 'forbidden'
