# SPDX-License-Identifier: Apache-2.0

''' TOML descriptors: configurations, ensembles, invokers, MCP servers.

    A configuration file (``invocables.toml``) lists ensemble descriptors
    and the roots which file tools may touch. An ensemble descriptor names
    its invoker descriptors (local tools, implemented by import path) or
    describes an MCP server. Every file is checked completely before any
    ensemble is produced: an error raises
    :py:class:`invocables.exceptions.DescriptorInvalidity`, naming the file,
    the key path and the fix, and nothing is half-loaded.
'''


from os import PathLike as _PathLike

from . import __
from . import ensembles as _ensembles
from . import exceptions as _exceptions
from . import invokers as _invokers
from . import schemata as _schemata
from . import workers as _workers
from ._documents import (
    DEPTH_MAXIMUM as DEPTH_MAXIMUM,
    SIZE_MAXIMUM as SIZE_MAXIMUM,
)
from ._documents import (
    read_json as _read_json,
    read_toml as _read_toml,
    validate_document as _validate_document,
)
from ._descriptors import (
    Configuration as Configuration,
    EnsembleDescriptor as EnsembleDescriptor,
    InvokerDescriptor as InvokerDescriptor,
    Root as Root,
    ServerDescriptor as ServerDescriptor,
    access_data_location as access_data_location,
)
from ._descriptors import (
    Table as _Table,
    expand_path as _expand_path,
    complete_function as _complete_function,
    import_function as _import_function,
    probe_folder as _probe_folder,
    produce_deduplicator as _produce_deduplicator,
    produce_mapping_frozen as _freeze,
    resolve_path as _resolve_path,
    resolve_source as _resolve_source,
)
from ._servers import PinnedEnsemble as PinnedEnsemble
from ._servers import (
    name_tool as _name_tool_server,
    produce_server_descriptor as _produce_server_descriptor,
    produce_server_ensemble as _produce_server_ensemble,
)


ConfigurationSource: __.typx.TypeAlias = (
    str | _PathLike[ str ] | __.cabc.Mapping[ str, __.typx.Any ] )

CONFIGURATION_NAME = 'invocables.toml'
LOCATION_MAPPING = '<mapping>'

# Matched whole (fullmatch): '$' would also accept a final newline.
_name_ensemble = __.re.compile( r'[a-zA-Z0-9_-]{1,64}' )
_name_invoker = __.re.compile( r'[a-zA-Z0-9_-]{1,64}' )
_name_builtin = __.re.compile( r'[a-z][a-z0-9_]*' )
_implementation_path = __.re.compile(
    r'[A-Za-z_][\w.]*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*' )
_CONFIGURATION_EMPTY: __.cabc.Mapping[ str, __.typx.Any ] = (
    __.types.MappingProxyType( { } ) )
_scribe = __.produce_scribe( __name__ )


class DescriptorInvoker( _invokers.FunctionInvoker ):
    ''' Invoker produced from a local invoker descriptor.

        Its invocable receives it as ``context.invoker``, and so reaches
        the configuration of its ensemble (``configuration``) and the roots
        of the configuration (``roots``).
    '''

    def __init__(
        self,
        descriptor: InvokerDescriptor, *,
        configuration: __.cabc.Mapping[ str, __.typx.Any ] = (
            _CONFIGURATION_EMPTY ),
        roots: tuple[ Root, ... ] = ( ),
        ensemble: __.Absential[ _ensembles.Ensemble ] = __.absent,
        validator: __.Absential[ _schemata.Validator ] = __.absent,
    ):
        self.descriptor = descriptor
        self.implementation = __.typx.cast( str, descriptor.implementation )
        self.configuration = configuration
        self.roots = roots
        function = __.typx.cast(
            __.cabc.Callable[ ..., __.typx.Any ], descriptor.function )
        super( ).__init__(
            name = descriptor.name,
            invocable = _produce_invocable( function ),
            argschema = descriptor.argschema,
            description = descriptor.description,
            ensemble = ensemble,
            timeout = descriptor.timeout,
            deduplicator = _produce_deduplicator( descriptor ),
            annotations = descriptor.annotations,
            outschema = descriptor.outschema,
            validator = validator )

    def with_ensemble( self, ensemble: _ensembles.Ensemble ) -> __.typx.Self:
        ''' Returns copy of invoker which belongs to ensemble. '''
        return type( self )(
            self.descriptor, configuration = self.configuration,
            roots = self.roots, ensemble = ensemble,
            validator = self.validator )


def create_descriptors(
    ensemble: _ensembles.Ensemble,
    folder: __.typx.Annotated[
        str | _PathLike[ str ],
        __.ddoc.Doc( ''' Folder which receives the descriptors. ''' ),
    ],
    *,
    server: __.typx.Annotated[
        __.Absential[ ServerDescriptor ],
        __.ddoc.Doc(
            ''' How to reach the MCP server of the ensemble; needed for an
                MCP ensemble not loaded from descriptors. ''' ),
    ] = __.absent,
    replace: __.typx.Annotated[
        bool,
        __.ddoc.Doc( ''' Whether to replace existing descriptors. ''' ),
    ] = False,
) -> __.Path:
    ''' Writes descriptors of ensemble; returns path of ensemble file.

        Writes ``<name>.toml`` and ``<name>/invokers/<tool>.toml`` into
        the folder, each file atomically. Loading the ensemble file gives
        the same ensemble: for an MCP server, its tools are then pinned.
    '''
    from . import _writers
    return _writers.create_descriptors(
        ensemble, __.Path( folder ), server = server, replace = replace )


async def prepare_ensembles(
    configuration: __.typx.Annotated[
        ConfigurationSource | Configuration,
        __.ddoc.Doc(
            ''' Path of a configuration file, a mapping with the same
                structure, or a configuration already produced. ''' ),
    ],
    *,
    connect: __.typx.Annotated[
        bool,
        __.ddoc.Doc(
            ''' Whether to connect the ensembles before returning them. If
                one fails, those already connected are disconnected and the
                failure is raised. ''' ),
    ] = False,
) -> tuple[ _ensembles.Ensemble, ... ]:
    ''' Loads every enabled ensemble of a configuration.

        Raises :py:class:`invocables.exceptions.DescriptorInvalidity` for
        any invalid file, before anything is produced or connected.
    '''
    if not isinstance( configuration, Configuration ):
        configuration = produce_configuration( configuration )
    ensembles = tuple(
        produce_ensemble( descriptor, configuration.roots )
        for descriptor in configuration.ensembles if descriptor.enabled )
    if connect: await _connect_ensembles( ensembles )
    return ensembles


def produce_configuration(
    source: ConfigurationSource,
    location: __.Absential[ str ] = __.absent,
) -> Configuration:
    ''' Produces validated configuration from file or mapping.

        Relative paths in a file are relative to its folder; in a mapping,
        relative to the current directory.
    '''
    if isinstance( source, __.cabc.Mapping ):
        location_ = LOCATION_MAPPING if __.is_absent( location ) else location
        folder = __.Path.cwd( )
        document = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], source )
        _validate_document( location_, '', document )
    else:
        path = _locate_file( source )
        location_ = str( path )
        folder = path.parent
        document = _read_toml( path )
    table = _Table( location_, '', document )
    ensembles = _produce_ensembles_entries(
        table, folder, confined = not isinstance( source, __.cabc.Mapping ) )
    roots = _produce_roots( table, folder )
    table.finish( )
    _validate_ensemble_names( location_, ensembles )
    return Configuration(
        location = location_, ensembles = ensembles, roots = roots )


def produce_documents(
    ensemble: _ensembles.Ensemble,
    *,
    server: __.Absential[ ServerDescriptor ] = __.absent,
) -> dict[ str, dict[ str, __.typx.Any ] ]:
    ''' Returns descriptors of ensemble as TOML documents, by file path.

        Paths are relative to the folder which would hold them; the first
        is the ensemble descriptor.
    '''
    from . import _writers
    return _writers.produce_documents( ensemble, server = server )


def produce_ensemble(
    descriptor: EnsembleDescriptor,
    roots: __.cabc.Sequence[ Root ] = ( ),
) -> _ensembles.Ensemble:
    ''' Produces unconnected ensemble from validated descriptor.

        Without roots, file tools may read the current directory only.
    '''
    configuration = _ensembles.EnsembleConfiguration(
        timeout = descriptor.timeout, description = descriptor.description )
    if not __.is_absent( descriptor.server ):
        inner = _produce_server_ensemble( descriptor )
        if not descriptor.invokers: return inner
        return PinnedEnsemble(
            descriptor.name, inner,
            tuple( item for item in descriptor.invokers if item.enabled ),
            configuration,
            descriptor.server, descriptor.location )
    roots_ = tuple( roots ) or ( Root( path = __.Path.cwd( ) ), )
    invokers = tuple(
        DescriptorInvoker(
            _complete_function( invoker ),
            configuration = descriptor.configuration, roots = roots_ )
        for invoker in descriptor.invokers if invoker.enabled )
    return _ensembles.LocalEnsemble(
        descriptor.name, invokers, configuration )


def produce_ensemble_descriptor(
    path: str | _PathLike[ str ],
) -> EnsembleDescriptor:
    ''' Produces validated ensemble descriptor from file. '''
    path_ = __.Path( path ).absolute( )
    return _produce_ensemble_descriptor( path_, _read_toml( path_ ) )


def produce_invoker_descriptor(
    path: str | _PathLike[ str ], *, local: bool = True
) -> InvokerDescriptor:
    ''' Produces validated invoker descriptor from file.

        A local invoker needs an implementation; an invoker pinned to an
        MCP server must have none.
    '''
    path_ = __.Path( path ).absolute( )
    return _produce_invoker_descriptor(
        path_, _read_toml( path_ ), local = local )


def produce_server_descriptors(
    source: str | _PathLike[ str ] | __.cabc.Mapping[ str, __.typx.Any ],
    location: __.Absential[ str ] = __.absent,
) -> tuple[ EnsembleDescriptor, ... ]:
    ''' Produces ensemble descriptors from the common ``mcpServers`` JSON.

        Understands ``command``, ``args``, ``env``, ``cwd``, ``url``,
        ``headers``, ``type`` (or ``transport``) and ``disabled`` of each
        server; ``${NAME}`` and ``${env:NAME}`` values become ``env:NAME``.
    '''
    from . import _servers
    if isinstance( source, __.cabc.Mapping ):
        location_ = LOCATION_MAPPING if __.is_absent( location ) else location
        folder = __.Path.cwd( )
        document = __.typx.cast( __.cabc.Mapping[ str, __.typx.Any ], source )
        _validate_document( location_, '', document )
    else:
        path = _locate_file( source, expand = False )
        location_, folder = str( path ), path.parent
        document = _read_json( path )
    return tuple(
        _servers.produce_server_ensemble_descriptor(
            name, location_, _Table( location_, keypath, table ), folder )
        for name, keypath, table in _servers.survey_servers(
            location_, document ) )


async def _connect_ensembles(
    ensembles: __.cabc.Sequence[ _ensembles.Ensemble ]
) -> None:
    ''' Connects ensembles in order; on failure, disconnects those done. '''
    connected: list[ _ensembles.Ensemble ] = [ ]
    try:
        for ensemble in ensembles:
            await ensemble.connect( )
            connected.append( ensemble )
    except BaseException:
        for ensemble in reversed( connected ):
            await _disconnect_quietly( ensemble )
        raise


async def _disconnect_quietly( ensemble: _ensembles.Ensemble ) -> None:
    try: await ensemble.disconnect( )
    except Exception: # the first failure matters more
        _scribe.exception( "Failed to disconnect ensemble %r.", ensemble.name )


def _produce_ensembles_entries(
    table: _Table, folder: __.Path, *, confined: bool
) -> tuple[ EnsembleDescriptor, ... ]:
    entries = table.access_tables( 'ensembles', default = ( ) )
    descriptors: list[ EnsembleDescriptor ] = [ ]
    for entry in entries:
        descriptors.extend(
            _produce_ensembles_entry( entry, folder, confined = confined ) )
        entry.finish( )
    return tuple( descriptors )


def _produce_ensembles_entry(
    entry: _Table, folder: __.Path, *, confined: bool
) -> tuple[ EnsembleDescriptor, ... ]:
    enabled = entry.access( 'enabled', bool, default = __.absent )
    configuration = entry.access( 'configuration', dict, default = { } )
    kinds = [
        key for key in ( 'source', 'builtin', 'mcp_servers' )
        if key in entry.table ]
    if len( kinds ) != 1:
        entry.fail(
            '', "give exactly one of 'source' (an ensemble descriptor), "
            "'builtin' (such as 'io') or 'mcp_servers' (an mcpServers JSON "
            "file)." )
    if kinds[ 0 ] == 'mcp_servers':
        path = _resolve_source(
            entry, 'mcp_servers', folder, confined = confined )
        descriptors = produce_server_descriptors( path )
    else:
        if kinds[ 0 ] == 'source':
            path = _resolve_source(
                entry, 'source', folder, confined = confined )
        else: path = _resolve_builtin( entry )
        descriptors = ( _produce_ensemble_descriptor(
            path, _read_toml( path ), enabled = enabled ), )
    if configuration:
        if any( not __.is_absent( item.server ) for item in descriptors ):
            entry.fail(
                'configuration', "MCP servers take no configuration table; "
                "remove it." )
        descriptors = tuple(
            __.dcls.replace(
                item, configuration = __.immut.Dictionary(
                    { ** item.configuration, ** _freeze( configuration ) } ) )
            for item in descriptors )
    if not __.is_absent( enabled ):
        descriptors = tuple(
            __.dcls.replace( item, enabled = enabled )
            for item in descriptors )
    return descriptors


def _produce_ensemble_descriptor(
    path: __.Path,
    document: __.cabc.Mapping[ str, __.typx.Any ],
    *,
    enabled: __.Absential[ bool ] = __.absent,
) -> EnsembleDescriptor:
    ''' Produces ensemble descriptor; imports implementations if enabled.

        The entry of a configuration may enable or disable the ensemble
        (``enabled``), over its own descriptor.
    '''
    location = str( path )
    table = _Table( location, '', document )
    header = table.access_table( 'ensemble' )
    name = header.access_name( 'name', _name_ensemble )
    enabled_ = header.access( 'enabled', bool, default = True )
    description = header.access( 'description', str, default = '' )
    header.finish( )
    timeout = _produce_defaults( table )
    server_table = table.access_table( 'mcp', default = __.absent )
    server = (
        __.absent if __.is_absent( server_table )
        else _produce_server_descriptor( server_table, path.parent ) )
    configuration = table.access( 'configuration', dict, default = { } )
    if configuration and not __.is_absent( server ):
        table.fail(
            'configuration', "an MCP server ensemble takes no "
            "configuration table; remove it." )
    invokers = _produce_invokers_entries(
        table, path.parent, local = __.is_absent( server ),
        importing = enabled_ if __.is_absent( enabled ) else enabled )
    table.finish( )
    if not __.is_absent( server ) and not (
        __.is_absent( timeout ) or __.is_absent( server.tool_timeout )
    ):
        table.fail(
            'mcp.tool_timeout', "the per-call timeout is given twice (also "
            "as defaults.timeout); keep one of them." )
    if __.is_absent( server ) and not invokers:
        table.fail(
            'invokers', "the ensemble has no tools: add [[invokers]] "
            "entries with a 'source', or an [mcp] table." )
    return EnsembleDescriptor(
        name = name, location = location, enabled = enabled_,
        description = description, timeout = timeout,
        configuration = _freeze( configuration ), invokers = invokers,
        server = server )


def _produce_defaults( table: _Table ) -> __.Absential[ float | None ]:
    defaults = table.access_table( 'defaults', default = __.absent )
    if __.is_absent( defaults ): return __.absent
    timeout = defaults.access_timeout( 'timeout', unbounded = True )
    defaults.finish( )
    return timeout


def _produce_invokers_entries(
    table: _Table, folder: __.Path, *, local: bool, importing: bool
) -> tuple[ InvokerDescriptor, ... ]:
    entries = table.access_tables( 'invokers', default = ( ) )
    descriptors: list[ InvokerDescriptor ] = [ ]
    sources: dict[ str, str ] = { }
    for entry in entries:
        path = _resolve_source( entry, 'source', folder )
        entry.finish( )
        descriptor = _produce_invoker_descriptor(
            path, _read_toml( path ), local = local, importing = importing )
        if descriptor.name in sources:
            entry.fail(
                'source', "tool name {name!r} is also given by {other}; "
                "rename one of the tools or remove one entry.".format(
                    name = descriptor.name,
                    other = sources[ descriptor.name ] ) )
        sources[ descriptor.name ] = f"{entry.keypath} ({path})"
        descriptors.append( descriptor )
    return tuple( descriptors )


def _produce_invoker_descriptor(
    path: __.Path,
    document: __.cabc.Mapping[ str, __.typx.Any ],
    *,
    local: bool,
    importing: bool = True,
) -> InvokerDescriptor:
    ''' Produces invoker descriptor; imports implementation if enabled. '''
    location = str( path )
    table = _Table( location, '', document )
    header = table.access_table( 'invoker' )
    name = header.access_name(
        'name', _name_invoker if local else _name_tool_server )
    enabled = header.access( 'enabled', bool, default = True )
    description = header.access( 'description', str, default = '' )
    implementation, function = _produce_implementation(
        header, local = local, importing = importing and enabled )
    timeout = header.access_timeout( 'timeout', unbounded = True )
    deduplicate = header.access( 'deduplicate', bool, default = False )
    annotations = header.access( 'annotations', dict, default = { } )
    header.finish( )
    argschema = table.access_schema( 'arguments', name )
    outschema = table.access_schema( 'results', name, required = False )
    table.finish( )
    return InvokerDescriptor(
        name = name, location = location, enabled = enabled,
        description = description,
        argschema = __.typx.cast( __.Schema, argschema ),
        outschema = outschema, implementation = implementation,
        function = function, timeout = timeout, deduplicate = deduplicate,
        annotations = _freeze( annotations ) )


def _produce_implementation(
    header: _Table, *, local: bool, importing: bool
) -> tuple[
    __.Absential[ str ],
    __.Absential[ __.cabc.Callable[ ..., __.typx.Any ] ],
]:
    if not local:
        if 'implementation' in header.table:
            header.fail(
                'implementation', "tools of an MCP server run on the "
                "server; remove 'implementation'." )
        return __.absent, __.absent
    implementation = header.access( 'implementation', str )
    if not _implementation_path.fullmatch( implementation ):
        header.fail(
            'implementation', f"{implementation!r} is not an import path; "
            "write 'package.module:function'." )
    # Disabled tools are not imported: their modules' code does not run.
    if not importing: return implementation, __.absent
    return implementation, _import_function( header, implementation )


def _produce_roots(
    table: _Table, folder: __.Path
) -> tuple[ Root, ... ]:
    roots: list[ Root ] = [ ]
    for entry in table.access_tables( 'roots', default = ( ) ):
        path_ = _expand_path( entry, 'path', entry.access( 'path', str ) )
        path = _resolve_path( entry, 'path', folder / path_ )
        if not _probe_folder( path ):
            entry.fail(
                'path', f"folder '{path}' does not exist; create it "
                "or correct the path (relative paths start at the folder "
                "of the configuration file)." )
        writable = entry.access( 'writable', bool, default = False )
        hard_links = entry.access( 'hard_links', bool, default = False )
        entry.finish( )
        roots.append( Root(
            path = path, writable = writable, hard_links = hard_links ) )
    return tuple( roots )


def _produce_invocable(
    function: __.cabc.Callable[ ..., __.typx.Any ]
) -> _invokers.Invocable:
    ''' Wraps ( context, arguments ) callable, sync or async. '''
    if __.inspect.iscoroutinefunction( function ):
        return __.typx.cast( _invokers.Invocable, function )

    async def invoke(
        context: _invokers.Context, arguments: __.Arguments
    ) -> object:
        result = await _workers.execute_in_thread(
            function, context, arguments )
        # Such as an object whose __call__ is a coroutine function.
        if __.inspect.isawaitable( result ): return await result
        return result

    return invoke


def _locate_file(
    source: str | _PathLike[ str ], *, expand: bool = True
) -> __.Path:
    ''' Returns absolute path of descriptor file named by application. '''
    try: path = __.Path( source )
    except TypeError as exception:
        raise _exceptions.DescriptorInvalidity(
            repr( source ), '', "expected the path of a descriptor file, "
            "or a mapping." ) from exception
    if expand:
        try: path = path.expanduser( )
        except RuntimeError as exception: # no such user, no home
            raise _exceptions.DescriptorInvalidity(
                str( path ), '', f"cannot expand the path ({exception}); "
                "give a full path." ) from exception
    return path.absolute( )


def _resolve_builtin( entry: _Table ) -> __.Path:
    name = entry.access( 'builtin', str )
    folder = access_data_location( ) / 'ensembles'
    available = sorted( path.stem for path in folder.glob( '*.toml' ) )
    if not _name_builtin.fullmatch( name ) or name not in available:
        entry.fail(
            'builtin', "no built-in ensemble {name!r}; use one of "
            "{available}.".format(
                name = name, available = ', '.join( available ) ) )
    return folder / f"{name}.toml"


def _validate_ensemble_names(
    location: str, ensembles: tuple[ EnsembleDescriptor, ... ]
) -> None:
    seen: dict[ str, str ] = { }
    for ensemble in ensembles:
        if ensemble.name in seen:
            raise _exceptions.DescriptorInvalidity(
                ensemble.location, ensemble.keypath,
                "ensemble name {name!r} is also used by {other} (listed in "
                "{location}); give each ensemble a distinct name.".format(
                    name = ensemble.name, other = seen[ ensemble.name ],
                    location = location ) )
        seen[ ensemble.name ] = ensemble.location
