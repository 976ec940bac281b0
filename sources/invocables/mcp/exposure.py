# SPDX-License-Identifier: Apache-2.0

''' Resources of MCP servers offered to models as tools.

    With ``resources_as_tools``, an ensemble offers two more tools beside
    the server's own: one lists the server's resources and templates of
    resource URIs (every page), one reads a resource by URI. Their names
    are provider-safe and never collide with the server's tools
    (``list_resources`` and ``read_resource``, else ``mcp_`` prefixed, else
    numbered). Text resources come back as text, images as images, other
    binary data as a short summary; a URI the server does not know is an
    error result naming the server, which the model can act on.
'''


import invocables.mcp.__ as __
import invocables.mcp.catalog as _catalog
import invocables.mcp.records as _records
import invocables.canisters as _canisters
import invocables.ensembles as _ensembles
import invocables.exceptions as _exceptions
import invocables.invokers as _invokers


Entry: __.typx.TypeAlias = tuple[
    _invokers.Invoker, _records.ToolDescription ]

LISTING_NAME = 'list_resources'
READING_NAME = 'read_resource'

_ANNOTATIONS = __.types.MappingProxyType( {
    'readOnlyHint': True, 'destructiveHint': False,
    'idempotentHint': True, 'openWorldHint': False } )
_KEY_PREFIX = 'resources-as-tools:'
_MEDIA_TEXTUAL = frozenset( (
    'application/json', 'application/xml', 'application/yaml',
    'application/toml', 'application/javascript' ) )
_NAMES_MAXIMUM = 64
_SCHEMA_LISTING: __.Schema = __.types.MappingProxyType( {
    'type': 'object', 'properties': { }, 'additionalProperties': False } )
_SCHEMA_READING: __.Schema = __.types.MappingProxyType( {
    'type': 'object',
    'properties': {
        'uri': {
            'type': 'string',
            'description': (
                'URI of the resource, as listed, or made from a listed '
                'template by filling in its {placeholders}.' ) } },
    'required': [ 'uri' ],
    'additionalProperties': False } )


class Resourceful( __.typx.Protocol ):
    ''' Ensemble which reads resources (a server ensemble). '''

    name: str

    async def retrieve_resource(
        self, uri: str, *, context: __.typx.Any = None
    ) -> _canisters.ContentSequence: ...

    async def survey_resource_templates(
        self
    ) -> __.cabc.Sequence[ __.typx.Any ]: ...

    async def survey_resources( self ) -> __.cabc.Sequence[ __.typx.Any ]: ...


class ExposureCatalog( _catalog.Catalog ):
    ''' Catalog which offers the server's resources as two more tools. '''

    def _complete( self, entries: dict[ str, Entry ] ) -> dict[ str, Entry ]:
        ''' Returns entries with the two resource tools added. '''
        taken = { invoker.name for invoker, _ in entries.values( ) }
        listing = select_name( LISTING_NAME, taken )
        taken.add( listing )
        reading = select_name( READING_NAME, taken )
        entries = dict( entries )
        for kind, name in ( ( 'list', listing ), ( 'read', reading ) ):
            key = f"{_KEY_PREFIX}{kind}:{listing}:{reading}"
            entries[ key ] = self.entries.get( key ) or self._produce_tool(
                kind, name, listing = listing, reading = reading )
        return entries

    def _produce_tool(
        self, kind: str, name: str, *, listing: str, reading: str
    ) -> Entry:
        server = self.name
        ensemble = __.typx.cast( Resourceful, self.ensemble )
        if kind == 'list':
            invocable: _invokers.Invocable = __.funct.partial(
                _list_resources, ensemble )
            schema = _SCHEMA_LISTING
            description = (
                f"Lists the resources of MCP server {server!r} (URI, name, "
                "media type, description) and its templates of resource "
                f"URIs. Read one with {reading!r}." )
        else:
            invocable = __.funct.partial( _read_resource, ensemble )
            schema = _SCHEMA_READING
            description = (
                f"Reads a resource of MCP server {server!r} by URI. Find "
                f"URIs and URI templates with {listing!r}." )
        return self._produce_entry( invocable, _records.ToolDescription(
            name = name, description = description, argschema = schema,
            annotations = __.immut.Dictionary[ str, __.typx.Any ](
                _ANNOTATIONS ) ) )


def produce_catalog(
    name: str,
    options: _records.ServerOptions,
    producer: _catalog.InvocableProducer,
    ensemble: _ensembles.Ensemble,
) -> _catalog.Catalog:
    ''' Produces catalog of ensemble: with resource tools if asked. '''
    if options.resources_as_tools:
        return ExposureCatalog( name, options, producer, ensemble )
    return _catalog.Catalog( name, options, producer, ensemble )


def produce_listing_text(
    server: str,
    resources: __.cabc.Sequence[ __.typx.Any ],
    templates: __.cabc.Sequence[ __.typx.Any ],
) -> str:
    ''' Returns listing of resources and templates, one per line. '''
    lines = [ f"Resources of MCP server {server!r}: {len( resources )}." ]
    lines.extend(
        '- ' + _describe_item( resource.uri, resource ) +
        ( '' if __.is_absent( resource.size )
          else f" ({resource.size} bytes)" )
        for resource in resources )
    if templates:
        lines.append(
            f"Templates of resource URIs ({len( templates )}); fill in "
            "each {placeholder} to read a resource:" )
        lines.extend(
            '- ' + _describe_item( template.uri_template, template )
            for template in templates )
    return '\n'.join( lines )


def select_name( name: str, taken: __.cabc.Set[ str ] ) -> str:
    ''' Returns name, or a variant of it which no tool has taken. '''
    if name not in taken: return name
    prefixed = f"mcp_{name}"
    if prefixed not in taken: return prefixed
    index = 2
    while f"{prefixed}_{index}" in taken: index += 1
    return f"{prefixed}_{index}"[ : _NAMES_MAXIMUM ]


def summarize_contents(
    contents: __.cabc.Sequence[ _canisters.Content ]
) -> _canisters.ContentSequence:
    ''' Returns contents a model can take: text and images as they are,
        binary data of a textual media type as text, other binary data as
        a summary.

        The contents are an ensemble's (``retrieve_resource``), redacted
        where they entered, their binary data too (as text: see
        :py:func:`invocables.mcp.results.redact_content`), so that the
        text decoded here holds no secret of the server.
    '''
    summaries: list[ _canisters.Content ] = [ ]
    for content in contents:
        if not isinstance( content, _canisters.ResourceContent ) or (
            __.is_absent( content.data )
        ):
            summaries.append( content )
            continue
        media_type = (
            'application/octet-stream' if __.is_absent( content.media_type )
            else content.media_type )
        if media_type.startswith( 'image/' ):
            summaries.append( _canisters.ImageContent(
                data = content.data, media_type = media_type ) )
            continue
        text = _decode_text( content.data, media_type )
        if text is not None:
            summaries.append( __.dcls.replace(
                content, text = text, data = __.absent ) )
            continue
        summaries.append( _canisters.TextContent(
            text = "[resource {uri}: {media_type}, {size} bytes of binary "
            "data, not shown]".format(
                uri = content.uri, media_type = media_type,
                size = len( content.data ) ) ) )
    return tuple( summaries )


def _decode_text( data: bytes, media_type: str ) -> str | None:
    ''' Returns data as text if its media type is textual, else None. '''
    if not (
        media_type.startswith( 'text/' ) or media_type in _MEDIA_TEXTUAL
    ): return None
    try: return data.decode( 'utf-8' )
    except UnicodeDecodeError: return None


def _describe_item( uri: str, item: __.typx.Any ) -> str:
    parts = [ uri ]
    title = item.name if __.is_absent( item.title ) else item.title
    if title: parts.append( f"- {title}" )
    if not __.is_absent( item.media_type ):
        parts.append( f"[{item.media_type}]" )
    if item.description: parts.append( f": {item.description}" )
    return ' '.join( parts )


async def _list_resources(
    ensemble: Resourceful,
    context: _invokers.Context,
    arguments: __.Arguments,
) -> _canisters.ContentSequence:
    ''' Lists resources and templates of the server of ensemble. '''
    try:
        resources = await ensemble.survey_resources( )
        templates = await ensemble.survey_resource_templates( )
    except _exceptions.ConnectionFailure: raise
    except Exception as exception:
        raise _exceptions.InvocationRefusal(
            f"MCP server {ensemble.name!r} did not list its resources "
            f"({type( exception ).__name__}); it may offer none."
        ) from exception
    return ( _canisters.TextContent( text = produce_listing_text(
        ensemble.name, resources, templates ) ), )


async def _read_resource(
    ensemble: Resourceful,
    context: _invokers.Context,
    arguments: __.Arguments,
) -> _canisters.ContentSequence:
    ''' Reads one resource of the server of ensemble. '''
    uri = str( arguments[ 'uri' ] )
    # The server's requests while it reads go to the caller of the tool.
    try: contents = await ensemble.retrieve_resource( uri, context = context )
    except _exceptions.ResourceAbsence as exception:
        reason = str( exception ).rstrip( '.' )
        raise _exceptions.InvocationRefusal(
            f"{reason}. List the resources to find a URI it "
            "knows." ) from exception
    if not contents:
        return ( _canisters.TextContent(
            text = f"Resource {uri!r} of MCP server {ensemble.name!r} "
            "is empty." ), )
    return summarize_contents( contents )
